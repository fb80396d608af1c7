/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Nasdaq TotalView-ITCH 5.0 messages: type codes, lengths and field
 * offsets (from the message's first byte, its type). Big-endian. Facts and
 * sources: docs/specs/itch50-notes.md. Each message rides
 * in one MoldUDP64 block (moldudp64.h).
 */
#ifndef WIREBOOK_WIRE_ITCH50_H
#define WIREBOOK_WIRE_ITCH50_H

/* Message types */
#define ITCH_SYSTEM_EVENT 'S'
#define ITCH_STOCK_DIRECTORY 'R'
#define ITCH_TRADING_ACTION 'H'
#define ITCH_REG_SHO 'Y'
#define ITCH_PARTICIPANT_POSITION 'L'
#define ITCH_MWCB_DECLINE 'V'
#define ITCH_MWCB_STATUS 'W'
#define ITCH_IPO_QUOTING 'K'
#define ITCH_LULD_COLLAR 'J'
#define ITCH_OPERATIONAL_HALT 'h'
#define ITCH_ADD 'A'
#define ITCH_ADD_MPID 'F'
#define ITCH_EXECUTED 'E'
#define ITCH_EXECUTED_PRICE 'C'
#define ITCH_CANCEL 'X'
#define ITCH_DELETE 'D'
#define ITCH_REPLACE 'U'
#define ITCH_TRADE 'P'
#define ITCH_CROSS_TRADE 'Q'
#define ITCH_BROKEN_TRADE 'B'
#define ITCH_NOII 'I'
#define ITCH_RPII 'N'
#define ITCH_DLCR 'O'

/* Lengths (each fixed; the MoldUDP64 block length) */
#define ITCH_SYSTEM_EVENT_LEN 12
#define ITCH_STOCK_DIRECTORY_LEN 39
#define ITCH_TRADING_ACTION_LEN 25
#define ITCH_REG_SHO_LEN 20
#define ITCH_PARTICIPANT_POSITION_LEN 26
#define ITCH_MWCB_DECLINE_LEN 35
#define ITCH_MWCB_STATUS_LEN 12
#define ITCH_IPO_QUOTING_LEN 28
#define ITCH_LULD_COLLAR_LEN 35
#define ITCH_OPERATIONAL_HALT_LEN 21
#define ITCH_ADD_LEN 36
#define ITCH_ADD_MPID_LEN 40
#define ITCH_EXECUTED_LEN 31
#define ITCH_EXECUTED_PRICE_LEN 36
#define ITCH_CANCEL_LEN 23
#define ITCH_DELETE_LEN 19
#define ITCH_REPLACE_LEN 35
#define ITCH_TRADE_LEN 44
#define ITCH_CROSS_TRADE_LEN 40
#define ITCH_BROKEN_TRADE_LEN 19
#define ITCH_NOII_LEN 50
#define ITCH_RPII_LEN 20
#define ITCH_DLCR_LEN 48
/* The shortest message (S, W): every message holds its header. */
#define ITCH_MIN_LEN 12

/* Every message's header */
#define ITCH_TYPE 0		/* ASCII */
#define ITCH_LOCATE 1		/* u16 Stock Locate; 0: no stock */
#define ITCH_TRACKING 3		/* u16 */
#define ITCH_TIMESTAMP 5	/* u48 ns since midnight */
#define ITCH_TIMESTAMP_LEN 6
#define ITCH_BODY 11		/* the first field after the header */
#define ITCH_STOCK_LEN 8

/* S System Event */
#define ITCH_SYSTEM_EVENT_CODE 11

/* R Stock Directory */
#define ITCH_DIRECTORY_STOCK 11
#define ITCH_DIRECTORY_MARKET 19
#define ITCH_DIRECTORY_FSI 20
#define ITCH_DIRECTORY_ROUND_LOT 21	/* u32 */
#define ITCH_DIRECTORY_LOTS_ONLY 25
#define ITCH_DIRECTORY_CLASS 26
#define ITCH_DIRECTORY_SUBTYPE 27	/* 2 bytes */
#define ITCH_DIRECTORY_AUTHENTICITY 29
#define ITCH_DIRECTORY_SSTI 30
#define ITCH_DIRECTORY_IPO 31
#define ITCH_DIRECTORY_LULD_TIER 32
#define ITCH_DIRECTORY_ETP 33
#define ITCH_DIRECTORY_LEVERAGE 34	/* u32 */
#define ITCH_DIRECTORY_INVERSE 38

/* H Stock Trading Action */
#define ITCH_ACTION_STOCK 11
#define ITCH_ACTION_STATE 19
#define ITCH_ACTION_RESERVED 20
#define ITCH_ACTION_REASON 21		/* 4 bytes */
#define ITCH_REASON_LEN 4

/* h Operational Halt */
#define ITCH_HALT_STOCK 11
#define ITCH_HALT_MARKET 19
#define ITCH_HALT_ACTION 20

/* A Add Order, F Add Order with MPID, P Trade (non-cross): the same prefix */
#define ITCH_ORDER_REF 11		/* u64; P: always 0 */
#define ITCH_ADD_SIDE 19
#define ITCH_ADD_SHARES 20		/* u32 */
#define ITCH_ADD_STOCK 24
#define ITCH_ADD_PRICE 32		/* Price(4) */
#define ITCH_ADD_MPID_ATTRIBUTION 36	/* F: 4 bytes */
#define ITCH_TRADE_MATCH 36		/* P: u64 */
#define ITCH_MPID_LEN 4

/* E Order Executed, C Order Executed With Price, X Order Cancel: after ITCH_ORDER_REF */
#define ITCH_EXECUTED_SHARES 19		/* u32; X: Cancelled Shares */
#define ITCH_EXECUTED_MATCH 23		/* u64 */
#define ITCH_EXECUTED_PRINTABLE 31	/* C */
#define ITCH_EXECUTED_PRICE_PRICE 32	/* C: Price(4) */
#define ITCH_CANCEL_SHARES 19

/* U Order Replace */
#define ITCH_REPLACE_NEW_REF 19		/* u64 */
#define ITCH_REPLACE_SHARES 27		/* u32 */
#define ITCH_REPLACE_PRICE 31		/* Price(4) */

/* Q Cross Trade */
#define ITCH_CROSS_SHARES 11		/* u64 */
#define ITCH_CROSS_STOCK 19
#define ITCH_CROSS_PRICE 27		/* Price(4) */
#define ITCH_CROSS_MATCH 31		/* u64 */
#define ITCH_CROSS_TYPE 39

/* B Broken Trade */
#define ITCH_BROKEN_MATCH 11		/* u64 */

/* Y Reg SHO Restriction; N Retail Price Improvement Indicator */
#define ITCH_REG_SHO_STOCK 11
#define ITCH_REG_SHO_ACTION 19
#define ITCH_RPII_STOCK 11
#define ITCH_RPII_INTEREST 19

/* L Market Participant Position */
#define ITCH_POSITION_MPID 11
#define ITCH_POSITION_STOCK 15
#define ITCH_POSITION_PRIMARY 23
#define ITCH_POSITION_MODE 24
#define ITCH_POSITION_STATE 25

/* V MWCB Decline Level (Price(8) each); W MWCB Status */
#define ITCH_MWCB_LEVEL1 11
#define ITCH_MWCB_LEVEL2 19
#define ITCH_MWCB_LEVEL3 27
#define ITCH_MWCB_BREACHED 11

/* K IPO Quoting Period Update */
#define ITCH_IPO_STOCK 11
#define ITCH_IPO_RELEASE_TIME 19	/* u32 s since midnight */
#define ITCH_IPO_QUALIFIER 23
#define ITCH_IPO_PRICE 24		/* Price(4) */

/* J LULD Auction Collar (Price(4) each) */
#define ITCH_COLLAR_STOCK 11
#define ITCH_COLLAR_REFERENCE 19
#define ITCH_COLLAR_UPPER 23
#define ITCH_COLLAR_LOWER 27
#define ITCH_COLLAR_EXTENSION 31	/* u32 */

/* I NOII */
#define ITCH_NOII_PAIRED 11		/* u64 */
#define ITCH_NOII_IMBALANCE 19		/* u64 */
#define ITCH_NOII_DIRECTION 27
#define ITCH_NOII_STOCK 28
#define ITCH_NOII_FAR 36		/* Price(4) */
#define ITCH_NOII_NEAR 40
#define ITCH_NOII_REFERENCE 44
#define ITCH_NOII_CROSS_TYPE 48
#define ITCH_NOII_VARIATION 49

/* O DLCR Price Discovery */
#define ITCH_DLCR_STOCK 11
#define ITCH_DLCR_ELIGIBLE 19
#define ITCH_DLCR_MIN 20		/* Price(4) */
#define ITCH_DLCR_MAX 24
#define ITCH_DLCR_NEAR 28
#define ITCH_DLCR_NEAR_TIME 32		/* u64 */
#define ITCH_DLCR_LOWER_COLLAR 40
#define ITCH_DLCR_UPPER_COLLAR 44

#endif /* WIREBOOK_WIRE_ITCH50_H */
