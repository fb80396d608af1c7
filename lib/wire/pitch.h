/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Cboe US Equities Multicast PITCH 2.x: the Sequenced Unit Header and the
 * multicast messages' type codes, lengths and field offsets (from the
 * message's length byte). Little-endian. Facts and sources:
 * docs/specs/cboe-pitch-notes.md. The GRP and Spin session messages ride in
 * the same header (their layouts belong to the session layer).
 */
#ifndef WIREBOOK_WIRE_PITCH_H
#define WIREBOOK_WIRE_PITCH_H

/* Sequenced Unit Header */
#define PITCH_HDR_LENGTH 0	/* u16: the whole block, this header included */
#define PITCH_HDR_COUNT 2	/* u8: messages; 0 a heartbeat */
#define PITCH_HDR_UNIT 3	/* u8: 0 on the TCP sessions */
#define PITCH_HDR_SEQUENCE 4	/* u32: the first message's; 0 unsequenced */
#define PITCH_HEADER_LEN 8

/* Every message's header: a length byte that counts itself, then the type */
#define PITCH_MSG_LENGTH 0
#define PITCH_MSG_TYPE 1
#define PITCH_MSG_HEADER_LEN 2

enum pitch_type {
	PITCH_TIME = 0x20,
	PITCH_ADD_LONG = 0x21,
	PITCH_ADD_SHORT = 0x22,
	PITCH_EXECUTED = 0x23,
	PITCH_EXECUTED_AT_PRICE = 0x24,
	PITCH_REDUCE_LONG = 0x25,
	PITCH_REDUCE_SHORT = 0x26,
	PITCH_MODIFY_LONG = 0x27,
	PITCH_MODIFY_SHORT = 0x28,
	PITCH_DELETE = 0x29,
	PITCH_TRADE_LONG = 0x2A,
	PITCH_TRADE_SHORT = 0x2B,
	PITCH_TRADE_BREAK = 0x2C,
	PITCH_END_OF_SESSION = 0x2D,
	PITCH_SYMBOL_MAPPING = 0x2E,	/* options feeds only */
	PITCH_ADD_EXPANDED = 0x2F,
	PITCH_TRADE_EXPANDED = 0x30,
	PITCH_TRADING_STATUS = 0x31,
	PITCH_AUCTION_UPDATE = 0x95,
	PITCH_AUCTION_SUMMARY = 0x96,
	PITCH_UNIT_CLEAR = 0x97,
	PITCH_RPI = 0x98,
};

/* Lengths: the known prefix of each type (a message may be longer) */
#define PITCH_TIME_LEN 6
#define PITCH_ADD_LONG_LEN 34
#define PITCH_ADD_SHORT_LEN 26
#define PITCH_EXECUTED_LEN 26
#define PITCH_EXECUTED_AT_PRICE_LEN 38
#define PITCH_REDUCE_LONG_LEN 18
#define PITCH_REDUCE_SHORT_LEN 16
#define PITCH_MODIFY_LONG_LEN 27
#define PITCH_MODIFY_SHORT_LEN 19
#define PITCH_DELETE_LEN 14
#define PITCH_TRADE_LONG_LEN 41
#define PITCH_TRADE_SHORT_LEN 33
#define PITCH_TRADE_BREAK_LEN 14
#define PITCH_END_OF_SESSION_LEN 6
#define PITCH_SYMBOL_MAPPING_LEN 2	/* options only: nothing of it is read */
#define PITCH_ADD_EXPANDED_LEN 36	/* up to Add Flags (the 2015 length) */
#define PITCH_ADD_EXPANDED_PARTICIPANT_LEN 40	/* v2.41: up to Participant ID */
#define PITCH_ADD_EXPANDED_V241_LEN 41	/* v2.41: Customer Indicator too */
#define PITCH_TRADE_EXPANDED_LEN 43
#define PITCH_TRADING_STATUS_LEN 18
#define PITCH_AUCTION_UPDATE_LEN 47
#define PITCH_AUCTION_SUMMARY_LEN 27
#define PITCH_UNIT_CLEAR_LEN 6
#define PITCH_RPI_LEN 15

/* Time: seconds since midnight; every other message: ns since the unit's last Time */
#define PITCH_TIME_SECONDS 2	/* u32 */
#define PITCH_TIME_OFFSET 2	/* u32 */

/* Order messages: the Order ID follows the time offset */
#define PITCH_ORDER_ID 6	/* u64 */
#define PITCH_SIDE 14		/* Add, Trade: B or S */
#define PITCH_SYMBOL_SHORT_LEN 6	/* Long and Short forms */
#define PITCH_SYMBOL_LEN 8		/* Expanded forms, status, auctions, RPI */

/* Add Order Long; Trade Long: the same up to the price */
#define PITCH_ADD_LONG_QTY 15		/* u32 */
#define PITCH_ADD_LONG_SYMBOL 19
#define PITCH_ADD_LONG_PRICE 25		/* Long Price (u64, 4 dp) */
#define PITCH_ADD_LONG_FLAGS 33
#define PITCH_TRADE_LONG_EXECUTION 33	/* u64 */

/* Add Order Short; Trade Short */
#define PITCH_ADD_SHORT_QTY 15		/* u16 */
#define PITCH_ADD_SHORT_SYMBOL 17
#define PITCH_ADD_SHORT_PRICE 23	/* Short Price (u16, 2 dp) */
#define PITCH_ADD_SHORT_FLAGS 25
#define PITCH_TRADE_SHORT_EXECUTION 25	/* u64 */

/* Add Order Expanded; Trade Expanded */
#define PITCH_ADD_EXPANDED_QTY 15	/* u32 */
#define PITCH_ADD_EXPANDED_SYMBOL 19
#define PITCH_ADD_EXPANDED_PRICE 27	/* Long Price */
#define PITCH_ADD_EXPANDED_FLAGS 35
#define PITCH_ADD_EXPANDED_PARTICIPANT 36	/* 4 bytes: MPID, RTAL or spaces */
#define PITCH_ADD_EXPANDED_CUSTOMER 40
#define PITCH_TRADE_EXPANDED_EXECUTION 35	/* u64 */
#define PITCH_PARTICIPANT_LEN 4

/* Order Executed */
#define PITCH_EXECUTED_QTY 14		/* u32 */
#define PITCH_EXECUTED_EXECUTION 18	/* u64 */

/* Order Executed at Price/Size */
#define PITCH_EXECUTED_AT_PRICE_QTY 14		/* u32 */
#define PITCH_EXECUTED_AT_PRICE_REMAINING 18	/* u32 */
#define PITCH_EXECUTED_AT_PRICE_EXECUTION 22	/* u64 */
#define PITCH_EXECUTED_AT_PRICE_PRICE 30	/* Long Price */

/* Reduce Size Long (u32) and Short (u16) */
#define PITCH_REDUCE_QTY 14

/* Modify Order Long */
#define PITCH_MODIFY_LONG_QTY 14	/* u32 */
#define PITCH_MODIFY_LONG_PRICE 18	/* Long Price */
#define PITCH_MODIFY_LONG_FLAGS 26
/* Modify Order Short */
#define PITCH_MODIFY_SHORT_QTY 14	/* u16 */
#define PITCH_MODIFY_SHORT_PRICE 16	/* Short Price */
#define PITCH_MODIFY_SHORT_FLAGS 18
#define PITCH_MODIFY_MAINTAIN_PRIORITY 0x02	/* Modify Flags bit 1 */

/* Trade Break */
#define PITCH_TRADE_BREAK_EXECUTION 6	/* u64 */

/* Trading Status, Auction Update and Summary, RPI: the symbol after the time offset */
#define PITCH_STATUS_SYMBOL 6
#define PITCH_STATUS_STATUS 14
#define PITCH_STATUS_REG_SHO 15
#define PITCH_AUCTION_TYPE 14
#define PITCH_AUCTION_SUMMARY_PRICE 15	/* Long Price */
#define PITCH_AUCTION_SUMMARY_SHARES 23	/* u32 */
#define PITCH_AUCTION_UPDATE_REFERENCE 15	/* Long Price */
#define PITCH_AUCTION_UPDATE_BUY 23		/* u32 shares */
#define PITCH_AUCTION_UPDATE_SELL 27		/* u32 shares */
#define PITCH_AUCTION_UPDATE_INDICATIVE 31	/* Long Price */
#define PITCH_AUCTION_UPDATE_AUCTION_ONLY 39	/* Long Price */
#define PITCH_RPI_INDICATOR 14

#endif /* WIREBOOK_WIRE_PITCH_H */
