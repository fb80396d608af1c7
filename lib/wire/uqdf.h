/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * UQDF, the UTP Quotation Data Feed (UTP Data Feed Services 3.0c, binary
 * since v1.5): the message header, lengths and field offsets (from the
 * message's version byte) and the trailing parts of a quote. Big-endian;
 * one message per MoldUDP64 block (moldudp64.h). Facts and sources:
 * docs/specs/cqs-uqdf-notes.md (UQDF).
 */
#ifndef WIREBOOK_WIRE_UQDF_H
#define WIREBOOK_WIRE_UQDF_H

/* Message header */
#define UQDF_VERSION_BYTE 0		/* UQDF_VERSION */
#define UQDF_CATEGORY 1			/* Q, A, C */
#define UQDF_TYPE 2
#define UQDF_ORIGINATOR 3		/* Market Center Originator ID */
#define UQDF_SUB_MARKET 4
#define UQDF_SIP_TIME 5			/* u64 epoch ns */
#define UQDF_TIMESTAMP1 13		/* u64 epoch ns: the participant's */
#define UQDF_PART_TOKEN 21		/* u64 */
#define UQDF_HEADER_LEN 29
#define UQDF_VERSION '1'

/* Lengths (the body before any trailing part) */
#define UQDF_QE_LEN 48		/* Quote Short Form */
#define UQDF_QF_LEN 79		/* Quote Long Form */
#define UQDF_QC_LEN 52		/* Combined Quote Short */
#define UQDF_QD_LEN 83		/* Combined Quote Long */
#define UQDF_QA_LEN 39		/* Odd Lot Quote Short */
#define UQDF_QB_LEN 53		/* Odd Lot Quote Long */
#define UQDF_QM_LEN 77		/* FINRA ADF Market Participant Quote */
#define UQDF_AA_LEN 31		/* General Administrative, + textLen */
#define UQDF_AH_LEN 59		/* Cross-SRO Trading Action */
#define UQDF_AK_LEN 50		/* Market Center Trading Action */
#define UQDF_AB_LEN 90		/* Issue Symbol Directory */
#define UQDF_AV_LEN 41		/* Reg SHO Restriction */
#define UQDF_AP_LEN 65		/* LULD Price Band */
#define UQDF_AC_LEN 53		/* MWCB Decline Level */
#define UQDF_AD_LEN 30		/* MWCB Status */
#define UQDF_AE_LEN 69		/* Auction Collar */
#define UQDF_AR_LEN 77		/* Session Close Recap, + 33 per market center */
#define UQDF_AR_CENTER_LEN 33
#define UQDF_CONTROL_LEN 29	/* C I J O C Z P: the header only */

#define UQDF_SHORT_SYMBOL_LEN 5
#define UQDF_SYMBOL_LEN 11

/* QE Quote Short Form; QC Combined Quote Short the same up to 47 */
#define UQDF_QE_SYMBOL 29
#define UQDF_QE_BID_PRICE 34		/* u16, 2 dp */
#define UQDF_QE_BID_SIZE 36		/* u16 */
#define UQDF_QE_ASK_PRICE 38
#define UQDF_QE_ASK_SIZE 40
#define UQDF_QE_CONDITION 42
#define UQDF_QE_SIP_GENERATED 43
#define UQDF_QE_LULD 44
#define UQDF_QE_RETAIL_INTEREST 45
#define UQDF_QE_NBBO 46
#define UQDF_QE_NBBO_LULD 47
#define UQDF_QC_BOLO 48
#define UQDF_QC_ODD_LOT_TYPE 49
#define UQDF_QC_ODD_LOT_COUNT 50	/* u16 */

/* QF Quote Long Form; QD Combined Quote Long and QM the same up to 72 */
#define UQDF_QF_TIMESTAMP2 29		/* u64 ns */
#define UQDF_QF_SYMBOL 37
#define UQDF_QF_BID_PRICE 48		/* u64, 6 dp */
#define UQDF_QF_BID_SIZE 56		/* u32 */
#define UQDF_QF_ASK_PRICE 60
#define UQDF_QF_ASK_SIZE 68
#define UQDF_QF_CONDITION 72
#define UQDF_QF_SIP_GENERATED 73
#define UQDF_QF_LULD 74
#define UQDF_QF_RETAIL_INTEREST 75
#define UQDF_QF_NBBO 76
#define UQDF_QF_NBBO_LULD 77
#define UQDF_QF_ADF_MPID 78		/* finraAdfMpidIndicator */
#define UQDF_QD_BOLO 79
#define UQDF_QD_ODD_LOT_TYPE 80
#define UQDF_QD_ODD_LOT_COUNT 81
#define UQDF_QM_MPID 73

/* QA Odd Lot Quote Short; QB Odd Lot Quote Long */
#define UQDF_QA_SYMBOL 29
#define UQDF_QA_SIP_GENERATED 34
#define UQDF_QA_BOLO 35
#define UQDF_QA_ODD_LOT_TYPE 36
#define UQDF_QA_ODD_LOT_COUNT 37
#define UQDF_QB_TIMESTAMP2 29
#define UQDF_QB_SYMBOL 37
#define UQDF_QB_SIP_GENERATED 48
#define UQDF_QB_BOLO 49
#define UQDF_QB_ODD_LOT_TYPE 50
#define UQDF_QB_ODD_LOT_COUNT 51

/* Trailing parts, in this order: NBBO, ADF MPID, BOLO, odd-lot attachments */
#define UQDF_NBBO_SHORT_LEN 11		/* nbboIndicator '2' */
#define UQDF_NBBO_LONG_LEN 27		/* nbboIndicator '3' */
#define UQDF_ADF_MPID_LEN 8		/* finraAdfMpidIndicator '2' */
#define UQDF_BOLO_SHORT_LEN 10		/* boloIndicator '2' */
#define UQDF_BOLO_LONG_LEN 22		/* '3' */
#define UQDF_BOLO_MPID_LEN 30		/* '5' */
#define UQDF_ODD_LOT_SHORT_LEN 6	/* olAttachmentType '2' */
#define UQDF_ODD_LOT_LONG_LEN 12	/* '3' */
#define UQDF_ODD_LOT_MPID_LEN 16	/* '5' */

/* NBBO appendage */
#define UQDF_NBBO_CONDITION 0
#define UQDF_NBBO_BID_CENTER 1
#define UQDF_NBBO_BID_PRICE 2			/* short u16 2 dp; long u64 6 dp */
#define UQDF_NBBO_SHORT_BID_SIZE 4		/* u16 */
#define UQDF_NBBO_SHORT_ASK_CENTER 6
#define UQDF_NBBO_SHORT_ASK_PRICE 7
#define UQDF_NBBO_SHORT_ASK_SIZE 9
#define UQDF_NBBO_LONG_BID_SIZE 10		/* u32 */
#define UQDF_NBBO_LONG_ASK_CENTER 14
#define UQDF_NBBO_LONG_ASK_PRICE 15
#define UQDF_NBBO_LONG_ASK_SIZE 23

/* Administrative messages with a symbol have it right after the header */
#define UQDF_ADMIN_SYMBOL 29
/* A A General Administrative */
#define UQDF_AA_TEXT_LEN 29		/* u16 */
/* A H Cross-SRO Trading Action */
#define UQDF_AH_ACTION 40
#define UQDF_AH_SEQUENCE 41		/* u32 */
#define UQDF_AH_TIME 45			/* u64 ns */
#define UQDF_AH_REASON 53		/* 6 bytes */
/* A K Market Center Trading Action */
#define UQDF_AK_ACTION 40
#define UQDF_AK_TIME 41			/* u64 ns */
#define UQDF_AK_MARKET_CENTER 49
/* A B Issue Symbol Directory */
#define UQDF_AB_OLD_SYMBOL 40
#define UQDF_AB_NAME 51			/* 30 bytes */
#define UQDF_AB_TYPE 81
#define UQDF_AB_SUBTYPE 82		/* 2 bytes */
#define UQDF_AB_MARKET_TIER 84
#define UQDF_AB_AUTHENTICITY 85
#define UQDF_AB_SST 86
#define UQDF_AB_ROUND_LOT 87		/* u16 */
#define UQDF_AB_FSI 89
/* A P LULD Price Band */
#define UQDF_AP_INDICATOR 40
#define UQDF_AP_TIME 41			/* u64 ns */
#define UQDF_AP_LIMIT_DOWN 49		/* u64, 6 dp */
#define UQDF_AP_LIMIT_UP 57
/* A D MWCB Status */
#define UQDF_AD_STATUS 29
/* A V Reg SHO Restriction */
#define UQDF_AV_ACTION 40
/* A C MWCB Decline Level (u64, 6 dp each) */
#define UQDF_AC_LEVEL1 29
#define UQDF_AC_LEVEL2 37
#define UQDF_AC_LEVEL3 45
/* A E Auction Collar */
#define UQDF_AE_SEQUENCE 40		/* u32 */
#define UQDF_AE_REFERENCE 44		/* u64, 6 dp */
#define UQDF_AE_UP 52
#define UQDF_AE_DOWN 60
#define UQDF_AE_EXTENSION 68		/* u8 */
/* A R Session Close Recap */
#define UQDF_AR_BID_CENTER 40
#define UQDF_AR_BID_PRICE 41		/* u64, 6 dp */
#define UQDF_AR_BID_SIZE 49		/* u64 */
#define UQDF_AR_ASK_CENTER 57
#define UQDF_AR_ASK_PRICE 58
#define UQDF_AR_ASK_SIZE 66
#define UQDF_AR_SPECIAL 74
#define UQDF_AR_CENTERS 75		/* u16 */

#endif /* WIREBOOK_WIRE_UQDF_H */
