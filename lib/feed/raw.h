/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The raw view of a packet: its framing (where the sequence is, how many
 * messages) and every wire field of each message, as each protocol's
 * layout tables describe them. wb-dump --raw prints it; tests compare
 * decoded events against it. Freestanding data; the lookups by protocol
 * id (feed_raw_*) are user space only (lib/feedtext/raw.c).
 */
#ifndef WIREBOOK_FEED_RAW_H
#define WIREBOOK_FEED_RAW_H

#include "feed.h"

/* ---- framing --------------------------------------------------------- */

/* What a protocol's framing says about one packet (struct feed_proto.frame). */
enum feed_frame_kind {
	FEED_FRAME_DATA = 0,	/* count messages, the first at seq */
	FEED_FRAME_HEARTBEAT,	/* no messages; seq = the next the stream will send (0: unknown) */
	FEED_FRAME_END,		/* end of session; seq = the next (0: unknown) */
	FEED_FRAME_RESET,	/* the stream restarts at seq, no gap: a data packet
				 * (XDP Sequence Number Reset, CQS Reset, a PITCH unit's new day) */
	FEED_FRAME_UNSEQUENCED,	/* said with a frame error: data whose sequence number is 0,
				 * which no stream can place (MoldUDP64 of an anonymized
				 * capture); a --proto line decodes its messages anyway */
};

#define FEED_SESSION_LEN 10

struct feed_frame {
	uint64_t seq;
	uint32_t count;		/* messages in the packet */
	uint32_t offset;	/* of the first message */
	uint32_t length;	/* bytes the header covers: less than the datagram is
				 * counted (bad_length) and the rest ignored */
	uint8_t kind;		/* enum feed_frame_kind */
	uint8_t unit;		/* sequence stream within the channel (PITCH unit), else 0 */
	bool has_session;	/* session names the session (MoldUDP64) */
	uint64_t session;	/* its 10 bytes: 8 here (little-endian load) ... */
	uint16_t session_tail;	/* ... and 2 here */
	/* FEED_FRAME_RESET: what tells this reset from another (the packet's
	 * time), so the copy of it on the other line is not a second reset */
	uint64_t reset_token;
};

/* ---- raw view: every wire field of a message --------------------------- */

enum feed_field_type {
	FEED_FIELD_UINT = 0,	/* unsigned, width 1, 2, 4 or 8 */
	FEED_FIELD_INT,		/* signed, width 4 or 8 */
	FEED_FIELD_CHAR,	/* one ASCII code */
	FEED_FIELD_TEXT,	/* width ASCII, space or NUL padded */
	FEED_FIELD_PRICE,	/* fixed point with `decimals` places (signed when `sign`) */
	FEED_FIELD_TIME,	/* ns since midnight, width 6 or 8 */
	FEED_FIELD_EPOCH_S,	/* seconds since the epoch, width 4 */
	FEED_FIELD_EPOCH_NS,	/* ns since the epoch, width 8 */
	FEED_FIELD_HEX,		/* width bytes shown in hex */
};

/* What a field names, for filtering the raw view by symbol. */
enum feed_field_role {
	FEED_ROLE_NONE = 0,
	FEED_ROLE_TICKER,	/* the symbol's text */
	FEED_ROLE_SYMBOL_KEY,	/* the feed's symbol key (directory entry) */
};

struct feed_field {
	const char *name;
	uint16_t offset;
	uint8_t width;
	uint8_t type;		/* enum feed_field_type */
	uint8_t decimals;	/* FEED_FIELD_PRICE */
	uint8_t role;		/* enum feed_field_role */
	bool sign;		/* FEED_FIELD_PRICE: two's complement */
};

struct feed_msg_layout {
	const char *name;	/* the spec's message name */
	uint16_t min_len;	/* bytes the fields below need */
	uint8_t nfields;
	const struct feed_field *fields;
};

/*
 * Field constructors for the layout tables. A field named "" prints its
 * value alone; "@" prints "@ value"; others "name=value".
 */
#define FEED_F_UINT(n, o, w) { n, o, w, FEED_FIELD_UINT, 0, FEED_ROLE_NONE, false }
#define FEED_F_KEY(n, o, w) { n, o, w, FEED_FIELD_UINT, 0, FEED_ROLE_SYMBOL_KEY, false }
#define FEED_F_CHAR(n, o) { n, o, 1, FEED_FIELD_CHAR, 0, FEED_ROLE_NONE, false }
#define FEED_F_TEXT(n, o, w) { n, o, w, FEED_FIELD_TEXT, 0, FEED_ROLE_NONE, false }
#define FEED_F_TICKER(n, o, w) { n, o, w, FEED_FIELD_TEXT, 0, FEED_ROLE_TICKER, false }
#define FEED_F_PRICE(n, o, w, d) { n, o, w, FEED_FIELD_PRICE, d, FEED_ROLE_NONE, false }
#define FEED_F_SPRICE(n, o, w, d) { n, o, w, FEED_FIELD_PRICE, d, FEED_ROLE_NONE, true }
#define FEED_F_INT(n, o, w) { n, o, w, FEED_FIELD_INT, 0, FEED_ROLE_NONE, true }
#define FEED_F_TIME(n, o, w) { n, o, w, FEED_FIELD_TIME, 0, FEED_ROLE_NONE, false }
#define FEED_F_EPOCH_S(n, o) { n, o, 4, FEED_FIELD_EPOCH_S, 0, FEED_ROLE_NONE, false }
#define FEED_F_EPOCH_NS(n, o) { n, o, 8, FEED_FIELD_EPOCH_NS, 0, FEED_ROLE_NONE, false }
#define FEED_F_HEX(n, o, w) { n, o, w, FEED_FIELD_HEX, 0, FEED_ROLE_NONE, false }
#define FEED_LAYOUT(name, len, fields) \
	{ name, len, (uint8_t)(sizeof(fields) / sizeof(fields[0])), fields }

/*
 * A trailing part of a message that its indicators announce (a SIP quote's
 * NBBO appendage): its fields' offsets count from offset, the part's first
 * byte in the message; layout->min_len is the part's length.
 */
struct feed_raw_part {
	const struct feed_msg_layout *layout;
	uint32_t offset;
};

#define FEED_RAW_MAX_PARTS 4

/* ---- lookups by protocol id (enum feed_protocol) ------------------------ */

/* A frame() failure carrying its enum feed_error, and back. */
#define FEED_FRAME_ERROR(err) (-(int)(err) - 1)
#define FEED_FRAME_ERROR_OF(rc) ((enum feed_error)(-(rc) - 1))

/* Frame a payload: 0, or FEED_FRAME_ERROR(enum feed_error). */
int feed_raw_frame(int protocol, const uint8_t *p, uint32_t len, struct feed_frame *f);
/* The message at *off of a framed packet (*off advanced past it): 0, or
 * -1 when the framing is broken there. */
int feed_raw_next(int protocol, const uint8_t *p, uint32_t len, uint32_t *off,
		  const uint8_t **msg, uint32_t *mlen);
/* A message's type code (its type field), for naming unknown types. */
uint32_t feed_raw_type(int protocol, const uint8_t *msg, uint32_t len);
/* The layout of a message, or NULL for a type the spec does not list. */
const struct feed_msg_layout *feed_raw_layout(int protocol, const uint8_t *msg, uint32_t len);
/* The trailing parts of a message, in wire order, into parts (at most max):
 * how many. A part that runs past len is left out, and the ones after it. */
int feed_raw_parts(int protocol, const uint8_t *msg, uint32_t len, struct feed_raw_part *parts,
		   int max);
/* Whether an unmapped payload looks like the protocol (wb-dump --auto). */
bool feed_raw_looks_like(int protocol, const uint8_t *p, uint32_t len);
/* Byte order of the protocol's fields. */
bool feed_raw_big_endian(int protocol);

#endif /* WIREBOOK_FEED_RAW_H */
