/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * NYSE XDP framing and the Pillar Integrated Feed messages: the packet
 * header, message types, lengths and field offsets (from the message's
 * MsgSize). Little-endian. Facts and sources:
 * docs/specs/nyse-xdp-notes.md (the Request Server's messages share the message header).
 */
#ifndef WIREBOOK_WIRE_XDP_H
#define WIREBOOK_WIRE_XDP_H

/* Packet header */
#define XDP_PKT_SIZE 0		/* u16: the whole packet, header included */
#define XDP_PKT_DELIVERY_FLAG 2	/* u8 */
#define XDP_PKT_NUMBER_MSGS 3	/* u8: 0 a heartbeat */
#define XDP_PKT_SEQ_NUM 4	/* u32: the first message's */
#define XDP_PKT_SEND_TIME 8	/* u32 epoch s */
#define XDP_PKT_SEND_TIME_NS 12	/* u32 */
#define XDP_HEADER_LEN 16

/* DeliveryFlag values */
#define XDP_DELIVERY_HEARTBEAT 1
#define XDP_DELIVERY_FAILOVER 10
#define XDP_DELIVERY_ORIGINAL 11
#define XDP_DELIVERY_SEQUENCE_RESET 12
#define XDP_DELIVERY_RETRANS_ONE 13
#define XDP_DELIVERY_RETRANS_PART 15
#define XDP_DELIVERY_REFRESH_ONE 17
#define XDP_DELIVERY_REFRESH_START 18
#define XDP_DELIVERY_REFRESH_PART 19
#define XDP_DELIVERY_REFRESH_END 20
#define XDP_DELIVERY_UNAVAILABLE 21

/* Every message's header */
#define XDP_MSG_SIZE 0		/* u16: the whole message, this header included */
#define XDP_MSG_TYPE 2		/* u16 */
#define XDP_MSG_HEADER_LEN 4

enum xdp_type {
	XDP_SEQUENCE_RESET = 1,
	XDP_TIME_REFERENCE = 2,
	XDP_SYMBOL_MAPPING = 3,
	XDP_RETRANSMISSION_REQUEST = 10,
	XDP_REQUEST_RESPONSE = 11,
	XDP_HEARTBEAT_RESPONSE = 12,
	XDP_MAPPING_REQUEST = 13,
	XDP_REFRESH_REQUEST = 15,
	XDP_MESSAGE_UNAVAILABLE = 31,
	XDP_SYMBOL_CLEAR = 32,
	XDP_SECURITY_STATUS = 34,
	XDP_REFRESH_HEADER = 35,
	XDP_ADD_ORDER = 100,
	XDP_MODIFY_ORDER = 101,
	XDP_DELETE_ORDER = 102,
	XDP_ORDER_EXECUTION = 103,
	XDP_REPLACE_ORDER = 104,
	XDP_IMBALANCE = 105,
	XDP_ADD_ORDER_REFRESH = 106,
	XDP_NON_DISPLAYED_TRADE = 110,
	XDP_CROSS_TRADE = 111,
	XDP_TRADE_CANCEL = 112,
	XDP_CROSS_CORRECTION = 113,
	XDP_RPI = 114,
	XDP_STOCK_SUMMARY = 223,
	XDP_TYPE_LIMIT = 256,
};

/* Lengths: the known prefix of each type (a message may be longer) */
#define XDP_SEQUENCE_RESET_LEN 14
#define XDP_TIME_REFERENCE_LEN 16
#define XDP_SYMBOL_MAPPING_LEN 44
#define XDP_MESSAGE_UNAVAILABLE_LEN 14
#define XDP_SYMBOL_CLEAR_LEN 20
#define XDP_SECURITY_STATUS_LEN 46
#define XDP_REFRESH_HEADER_LEN 8	/* a symbol's later refresh packets */
#define XDP_REFRESH_HEADER_FIRST_LEN 16	/* its first: + LastSeqNum, LastSymbolSeqNum */
#define XDP_ADD_ORDER_LEN 39
#define XDP_MODIFY_ORDER_LEN 35
#define XDP_DELETE_ORDER_LEN 25
#define XDP_ORDER_EXECUTION_LEN 42
#define XDP_REPLACE_ORDER_LEN 42
#define XDP_IMBALANCE_V21_LEN 67	/* XDP 2.1/2.3: ends at NumExtensions */
#define XDP_IMBALANCE_PILLAR_LEN 73	/* Pillar 2.5: + UnpairedQty, UnpairedSide, Reserved */
#define XDP_ADD_ORDER_REFRESH_LEN 43
#define XDP_NON_DISPLAYED_TRADE_LEN 33
#define XDP_CROSS_TRADE_LEN 29
#define XDP_TRADE_CANCEL_LEN 20
#define XDP_CROSS_CORRECTION_LEN 24
#define XDP_RPI_LEN 17
#define XDP_STOCK_SUMMARY_LEN 36

/* The common prefix of the book and trade messages (100-104, 110-114) */
#define XDP_SOURCE_TIME_NS 4	/* u32, within the channel's Source Time Reference */
#define XDP_SYMBOL_INDEX 8	/* u32 */
#define XDP_SYMBOL_SEQ_NUM 12	/* u32 */

/* Messages with a full SourceTime of their own (1, 32, 34, 105, 106, 223) */
#define XDP_TIMED_SOURCE_TIME 4		/* u32 epoch s */
#define XDP_TIMED_SOURCE_TIME_NS 8	/* u32 */
#define XDP_TIMED_SYMBOL_INDEX 12	/* u32 (not type 1) */
#define XDP_TIMED_SYMBOL_SEQ_NUM 16	/* u32 (32: NextSourceSeqNum) */

/* 1 Sequence Number Reset: SourceTime, SourceTimeNS as above */
#define XDP_RESET_PRODUCT_ID 12
#define XDP_RESET_CHANNEL_ID 13

/* 31 Message Unavailable */
#define XDP_UNAVAILABLE_BEGIN 4		/* u32 BeginSeqNum */
#define XDP_UNAVAILABLE_END 8		/* u32 EndSeqNum */
#define XDP_UNAVAILABLE_PRODUCT_ID 12
#define XDP_UNAVAILABLE_CHANNEL_ID 13

/* 2 Source Time Reference */
#define XDP_TIME_REFERENCE_ID 4		/* u32 */
#define XDP_TIME_REFERENCE_SYMBOL_SEQ 8	/* u32 */
#define XDP_TIME_REFERENCE_TIME 12	/* u32 epoch s */

/* 3 Symbol Index Mapping */
#define XDP_MAPPING_INDEX 4		/* u32 */
#define XDP_MAPPING_SYMBOL 8		/* XDP_SYMBOL_LEN, NUL-terminated */
#define XDP_MAPPING_RESERVED 19
#define XDP_MAPPING_MARKET_ID 20	/* u16 */
#define XDP_MAPPING_SYSTEM_ID 22
#define XDP_MAPPING_EXCHANGE 23
#define XDP_MAPPING_SCALE 24		/* PriceScaleCode */
#define XDP_MAPPING_SECURITY_TYPE 25
#define XDP_MAPPING_LOT_SIZE 26		/* u16 */
#define XDP_MAPPING_PREV_CLOSE 28	/* price */
#define XDP_MAPPING_PREV_VOLUME 32	/* u32 */
#define XDP_MAPPING_RESOLUTION 36
#define XDP_MAPPING_ROUND_LOT 37
#define XDP_MAPPING_MPV 38		/* u16 */
#define XDP_MAPPING_UNIT_OF_TRADE 40	/* u16 */
#define XDP_MAPPING_RESERVED2 42	/* 2 bytes */
#define XDP_SYMBOL_LEN 11

/* 34 Security Status (after the timed prefix) */
#define XDP_STATUS_STATUS 20
#define XDP_STATUS_HALT_CONDITION 21
#define XDP_STATUS_RESERVED 22		/* 4 bytes */
#define XDP_STATUS_PRICE1 26
#define XDP_STATUS_PRICE2 30
#define XDP_STATUS_SSR_EXCHANGE 34
#define XDP_STATUS_SSR_VOLUME 35	/* u32 */
#define XDP_STATUS_SSR_TIME 39		/* u32 */
#define XDP_STATUS_SSR_STATE 43
#define XDP_STATUS_MARKET_STATE 44
#define XDP_STATUS_SESSION_STATE 45

/* 35 Refresh Header */
#define XDP_REFRESH_CURRENT_PKT 4	/* u16 */
#define XDP_REFRESH_TOTAL_PKTS 6	/* u16 */
#define XDP_REFRESH_LAST_SEQ_NUM 8	/* u32: first packet of a symbol only */
#define XDP_REFRESH_LAST_SYMBOL_SEQ_NUM 12

/* 100-104: OrderID first */
#define XDP_ORDER_ID 16			/* u64 */
/* 100 Add Order */
#define XDP_ADD_PRICE 24		/* i32, scaled */
#define XDP_ADD_VOLUME 28		/* u32 */
#define XDP_ADD_SIDE 32
#define XDP_ADD_FIRM 33			/* XDP_FIRM_LEN, blank unless attributed */
#define XDP_FIRM_LEN 5
#define XDP_ADD_RESERVED 38		/* NumParitySplits before 2.4a */
/* 101 Modify Order */
#define XDP_MODIFY_PRICE 24
#define XDP_MODIFY_VOLUME 28
#define XDP_MODIFY_POSITION_CHANGE 32
#define XDP_MODIFY_SIDE 33		/* since Pillar 2.5 (2.1: parity splits) */
#define XDP_MODIFY_RESERVED 34
#define XDP_MODIFY_PREV_PARITY_SPLITS 33	/* XDP 2.1 */
#define XDP_MODIFY_NEW_PARITY_SPLITS 34		/* XDP 2.1 */
/* 102 Delete Order */
#define XDP_DELETE_RESERVED 24
/* 103 Order Execution */
#define XDP_EXECUTION_TRADE_ID 24	/* u32 */
#define XDP_EXECUTION_PRICE 28
#define XDP_EXECUTION_VOLUME 32
#define XDP_EXECUTION_PRINTABLE 36	/* 1 printed to the SIP */
#define XDP_EXECUTION_RESERVED 37	/* XDP 2.1: NumParitySplits */
#define XDP_EXECUTION_CONDITIONS 38	/* 4 bytes (2.1: DBExecID) */
#define XDP_EXECUTION_PARITY_SPLITS 37	/* XDP 2.1 */
#define XDP_EXECUTION_DB_EXEC_ID 38	/* XDP 2.1 */
/* 104 Replace Order */
#define XDP_REPLACE_NEW_ORDER_ID 24	/* u64 */
#define XDP_REPLACE_PRICE 32
#define XDP_REPLACE_VOLUME 36
#define XDP_REPLACE_SIDE 40		/* since Pillar 2.5 */
#define XDP_REPLACE_RESERVED 41
#define XDP_REPLACE_PREV_PARITY_SPLITS 40	/* XDP 2.1 */
#define XDP_REPLACE_NEW_PARITY_SPLITS 41	/* XDP 2.1 */

/* 105 Imbalance (after the timed prefix and SymbolSeqNum) */
#define XDP_IMBALANCE_REFERENCE 20
#define XDP_IMBALANCE_PAIRED 24			/* u32 */
#define XDP_IMBALANCE_TOTAL 28			/* u32 */
#define XDP_IMBALANCE_MARKET 32			/* u32 */
#define XDP_IMBALANCE_AUCTION_TIME 36		/* u16 hhmm */
#define XDP_IMBALANCE_AUCTION_TYPE 38
#define XDP_IMBALANCE_SIDE 39
#define XDP_IMBALANCE_BOOK_CLEARING 40
#define XDP_IMBALANCE_AUCTION_CLEARING 44
#define XDP_IMBALANCE_SSR_FILING 48
#define XDP_IMBALANCE_INDICATIVE_MATCH 52
#define XDP_IMBALANCE_UPPER_COLLAR 56
#define XDP_IMBALANCE_LOWER_COLLAR 60
#define XDP_IMBALANCE_AUCTION_STATUS 64
#define XDP_IMBALANCE_FREEZE 65
#define XDP_IMBALANCE_EXTENSIONS 66
#define XDP_IMBALANCE_UNPAIRED 67		/* Pillar 2.5: u32 */
#define XDP_IMBALANCE_UNPAIRED_SIDE 71
#define XDP_IMBALANCE_RESERVED 72

/* 106 Add Order Refresh (after the timed prefix) */
#define XDP_REFRESH_ORDER_ID 20		/* u64 */
#define XDP_REFRESH_PRICE 28
#define XDP_REFRESH_VOLUME 32
#define XDP_REFRESH_SIDE 36
#define XDP_REFRESH_FIRM 37
#define XDP_REFRESH_RESERVED 42

/* 110 Non-Displayed Trade, 111 Cross Trade, 112 Trade Cancel, 113 Cross Correction */
#define XDP_TRADE_ID 16			/* u32: TradeID or CrossID */
#define XDP_TRADE_PRICE 20
#define XDP_TRADE_VOLUME 24
#define XDP_TRADE_PRINTABLE 28		/* 110 */
#define XDP_TRADE_CROSS_TYPE 28		/* 111 */
#define XDP_TRADE_CONDITIONS 29		/* 110: 4 bytes (2.1: DBExecID) */
#define XDP_TRADE_DB_EXEC_ID 29		/* 110, XDP 2.1 */
#define XDP_CORRECTION_VOLUME 20	/* 113 */
#define XDP_CONDITIONS_LEN 4

/* 114 Retail Price Improvement */
#define XDP_RPI_INDICATOR 16

/* 223 Stock Summary (after the timed prefix) */
#define XDP_SUMMARY_HIGH 16
#define XDP_SUMMARY_LOW 20
#define XDP_SUMMARY_OPEN 24
#define XDP_SUMMARY_CLOSE 28
#define XDP_SUMMARY_VOLUME 32

#endif /* WIREBOOK_WIRE_XDP_H */
