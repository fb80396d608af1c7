/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The NYSE XDP (Pillar) Request Server and the retransmission channel:
 * wire facts only (shared/specs/nyse-xdp.md section 5; what the spec
 * leaves open: docs/specs/nyse-xdp-recovery-notes.md). Little-endian;
 * packets are framed like the feed (its 16-byte packet header: lib/wire/
 * xdp.h's), and every message starts with MsgSize (u16) and MsgType (u16).
 * Offsets are from the start of the message. Sequence ranges are inclusive.
 * The packet and message headers, the DeliveryFlag values, the message
 * types and the Message Unavailable (31) are the feed's: lib/wire/xdp.h.
 */
#ifndef WIREBOOK_WIRE_XDP_REQUEST_H
#define WIREBOOK_WIRE_XDP_REQUEST_H

#include "wire/xdp.h"

#define XDP_SOURCE_ID_LEN 10		/* NUL padded */
#define XDP_MAX_RETRANS 1000		/* messages per Retransmission Request */

/* Retransmission Request: BeginSeqNum, EndSeqNum, SourceID, ProductID, ChannelID. */
#define XDP_RETRANS_REQUEST_LEN 24
#define XDP_RETRANS_BEGIN_OFF 4
#define XDP_RETRANS_END_OFF 8
#define XDP_RETRANS_SOURCE_OFF 12
#define XDP_RETRANS_PRODUCT_OFF 22
#define XDP_RETRANS_CHANNEL_OFF 23

/* Request Response: RequestSeqNum, BeginSeqNum, EndSeqNum, SourceID, ProductID,
 * ChannelID, Status. */
#define XDP_REQUEST_RESPONSE_LEN 29
#define XDP_RESPONSE_REQUEST_SEQ_OFF 4
#define XDP_RESPONSE_BEGIN_OFF 8
#define XDP_RESPONSE_END_OFF 12
#define XDP_RESPONSE_SOURCE_OFF 16
#define XDP_RESPONSE_PRODUCT_OFF 26
#define XDP_RESPONSE_CHANNEL_OFF 27
#define XDP_RESPONSE_STATUS_OFF 28

/* Heartbeat Response: SourceID. */
#define XDP_HEARTBEAT_RESPONSE_LEN 14
#define XDP_HEARTBEAT_SOURCE_OFF 4

/* Refresh Request: SymbolIndex (0: every symbol), SourceID, ProductID, ChannelID. */
#define XDP_REFRESH_REQUEST_LEN 20
#define XDP_REFRESH_SYMBOL_OFF 4
#define XDP_REFRESH_SOURCE_OFF 8
#define XDP_REFRESH_PRODUCT_OFF 18
#define XDP_REFRESH_CHANNEL_OFF 19

/* Request Response status (ASCII on the wire, docs/specs/nyse-xdp-recovery-notes.md). */
enum xdp_status {
	XDP_ST_ACCEPTED = '0',
	XDP_ST_BAD_SOURCE = '1',
	XDP_ST_RANGE_TOO_LARGE = '3',
	XDP_ST_DAILY_LIMIT = '4',
	XDP_ST_REFRESH_LIMIT = '5',
	XDP_ST_TOO_OLD = '6',
	XDP_ST_BAD_CHANNEL = '7',
	XDP_ST_BAD_PRODUCT = '8',
	XDP_ST_BAD_TYPE = '9',
};

#endif /* WIREBOOK_WIRE_XDP_REQUEST_H */
