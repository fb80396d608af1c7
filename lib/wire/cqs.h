/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * CQS, CTA Pillar binary output (block versions 0-2): the block header, the
 * message header, the messages' lengths and field offsets (from the
 * message's Message Length) and the NBBO appendages. Big-endian. Facts and
 * sources: docs/specs/cqs-uqdf-notes.md (CQS).
 */
#ifndef WIREBOOK_WIRE_CQS_H
#define WIREBOOK_WIRE_CQS_H

/* Block header */
#define CQS_BLOCK_VERSION 0		/* u8: 0, 1, 2; snapshot lines 11 */
#define CQS_BLOCK_SIZE 1		/* u16: the whole block, pad included */
#define CQS_BLOCK_FEED 3		/* 'Q' */
#define CQS_BLOCK_RETRANSMISSION 4	/* 'O' original, 'V' retransmission */
#define CQS_BLOCK_SEQUENCE 5		/* u32: the first message's */
#define CQS_BLOCK_MESSAGES 9		/* u8 */
#define CQS_BLOCK_SIP_TIME 10		/* u32 epoch s, then u32 ns */
#define CQS_BLOCK_CHECKSUM 18		/* u16: the sum of every other byte */
#define CQS_BLOCK_HEADER_LEN 20

#define CQS_MAX_VERSION 2
#define CQS_SNAPSHOT_VERSION 11
#define CQS_FEED_INDICATOR 'Q'
#define CQS_ORIGINAL 'O'
#define CQS_RETRANSMISSION 'V'

/* Message header */
#define CQS_MSG_LENGTH 0		/* u16: header, body and appendages */
#define CQS_MSG_CATEGORY 2
#define CQS_MSG_TYPE 3
#define CQS_MSG_PARTICIPANT 4
#define CQS_MSG_TIMESTAMP1 5		/* u32 epoch s, then u32 ns */
#define CQS_MSG_ID 13
#define CQS_MSG_TRANSACTION_ID 14	/* u32 */
#define CQS_MSG_REFERENCE 18		/* i64 */
#define CQS_MSG_HEADER_LEN 26
#define CQS_TIME_LEN 8			/* a timestamp: two u32 */

/* Lengths: the body before any appendage */
#define CQS_CONTROL_LEN 26
#define CQS_LONG_QUOTE_LEN 87
#define CQS_SHORT_QUOTE_LEN 41
#define CQS_FINRA_QUOTE_LEN 120
#define CQS_SYMBOL_REFERENCE_LEN 209
#define CQS_MWCB_DECLINE_LEN 51
#define CQS_MWCB_STATUS_LEN 28
#define CQS_AUCTION_STATUS_LEN 128

/* Every message with a symbol has it right after the header */
#define CQS_SYMBOL 26
#define CQS_SYMBOL_LEN 11
#define CQS_SHORT_SYMBOL_LEN 5

/* Q L Long Quote; Q S Special Long Quote (FINRA) shares it up to 70 */
#define CQS_LONG_INSTRUMENT_TYPE 37
#define CQS_LONG_CONDITION 38
#define CQS_LONG_STATUS 39		/* Security Status Indicator */
#define CQS_LONG_BID_PRICE 40		/* u64, 6 dp */
#define CQS_LONG_BID_SIZE 48		/* u32 */
#define CQS_LONG_ASK_PRICE 52
#define CQS_LONG_ASK_SIZE 60
#define CQS_LONG_RETAIL_INTEREST 64
#define CQS_LONG_SETTLEMENT 65
#define CQS_LONG_MARKET_CONDITION 66
#define CQS_LONG_FINRA_MMID 67		/* 4 bytes */
#define CQS_LONG_FINRA_BBO 71
#define CQS_LONG_TIMESTAMP2 72
#define CQS_LONG_SSR 80
#define CQS_LONG_LISTING 81
#define CQS_LONG_FSI 82
#define CQS_LONG_SIP_GENERATED 83
#define CQS_LONG_LULD 84
#define CQS_LONG_NBBO_LULD 85
#define CQS_LONG_NBBO 86		/* National BBO Indicator */

/* Q Q Short Quote */
#define CQS_SHORT_BID_PRICE 31		/* u16, 2 dp */
#define CQS_SHORT_BID_SIZE 33		/* u16 */
#define CQS_SHORT_ASK_PRICE 35
#define CQS_SHORT_ASK_SIZE 37
#define CQS_SHORT_LISTING 39
#define CQS_SHORT_NBBO 40

/* Q S Special Long Quote with the FINRA BBO, after the Long Quote's 38-70 */
#define CQS_FINRA_BID_CONDITION 71
#define CQS_FINRA_BID_PRICE 72
#define CQS_FINRA_BID_SIZE 80
#define CQS_FINRA_BID_MMID 84
#define CQS_FINRA_ASK_CONDITION 88
#define CQS_FINRA_ASK_PRICE 89
#define CQS_FINRA_ASK_SIZE 97
#define CQS_FINRA_ASK_MMID 101
#define CQS_FINRA_TIMESTAMP2 105
#define CQS_FINRA_SSR 113
#define CQS_FINRA_LISTING 114
#define CQS_FINRA_FSI 115
#define CQS_FINRA_SIP_GENERATED 116
#define CQS_FINRA_LULD 117
#define CQS_FINRA_NBBO_LULD 118
#define CQS_FINRA_NBBO 119

/* NBBO appendages, after the quote body (bid first) */
#define CQS_SHORT_APPENDAGE_LEN 5
#define CQS_LONG_APPENDAGE_LEN 18
#define CQS_APPENDAGE_PARTICIPANT 0
#define CQS_SHORT_APPENDAGE_PRICE 1	/* u16, 2 dp */
#define CQS_SHORT_APPENDAGE_SIZE 3	/* u16 */
#define CQS_LONG_APPENDAGE_CONDITION 1
#define CQS_LONG_APPENDAGE_PRICE 2	/* u64, 6 dp */
#define CQS_LONG_APPENDAGE_SIZE 10	/* u32 */
#define CQS_LONG_APPENDAGE_MMID 14	/* 4 bytes */

/* A S Symbol Reference Data */
#define CQS_REFERENCE_PRIOR_SYMBOL 37
#define CQS_REFERENCE_LISTING 48
#define CQS_REFERENCE_PREV_CLOSE 49	/* u64, 6 dp */
#define CQS_REFERENCE_CLOSE 57
#define CQS_REFERENCE_ROUND_LOT 65	/* u16 */
#define CQS_REFERENCE_LULD_TIER 68
#define CQS_REFERENCE_LEVERAGE 69	/* u32 */
#define CQS_REFERENCE_TEST 73
#define CQS_REFERENCE_IPO 74
#define CQS_REFERENCE_FSI 75
#define CQS_REFERENCE_SSR 76
#define CQS_REFERENCE_HALT_REASON 77
#define CQS_REFERENCE_INSTRUMENT_TYPE 78

/* Q A Auction Status */
#define CQS_AUCTION_INSTRUMENT_TYPE 37
#define CQS_AUCTION_REFERENCE 38	/* u64, 6 dp */
#define CQS_AUCTION_UPPER 46
#define CQS_AUCTION_LOWER 54
#define CQS_AUCTION_EXTENSIONS 62
#define CQS_AUCTION_SSR 63
#define CQS_AUCTION_LISTING 64
#define CQS_AUCTION_FSI 65

/* M L MWCB Status; M K MWCB Decline Level Status */
#define CQS_MWCB_LEVEL 26
#define CQS_MWCB_DECLINE_LEVEL1 26	/* i64, 6 dp */
#define CQS_MWCB_DECLINE_LEVEL2 34
#define CQS_MWCB_DECLINE_LEVEL3 42

#endif /* WIREBOOK_WIRE_CQS_H */
