/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The feed engine: feed map, subscriptions, sequence tracking and the
 * protocol decoders, turning UDP payloads into normalized events in a ring.
 *
 * Freestanding: compiled into the kernel module and into user space. No
 * libc, no floating point, no allocation on the packet path (the engine
 * allocates per-venue state through the caller's allocator when a feed-map
 * entry is added, which is a control-path operation).
 *
 * Concurrency: one engine is driven by one thread at a time. The module
 * serializes control calls against the packet path itself.
 */
#ifndef WIREBOOK_FEED_H
#define WIREBOOK_FEED_H

#include "wirebook/event.h"
#include "wirebook/ring.h"

#ifndef __KERNEL__
#include <stddef.h>
#include <stdbool.h>
#endif

#define FEED_MAX_LINES 64		/* feed-map entries */
#define FEED_MAX_INSTRUMENTS 16384	/* instrument ids are 1..FEED_MAX_INSTRUMENTS-1 */
#define FEED_LINE_NAME_LEN 8

enum feed_protocol {
	FEED_PROTO_NONE = 0,
	FEED_PROTO_ITCH50 = 1,	/* Nasdaq TotalView-ITCH 5.0 over MoldUDP64 */
	FEED_PROTO_PITCH = 2,	/* Cboe Multicast PITCH, Sequenced Unit Header */
	FEED_PROTO_COUNT
};

/* Decode errors, each counted per line. */
enum feed_error {
	FEED_ERR_TRUNCATED = 0,	/* header or message runs past the packet end */
	FEED_ERR_BAD_LENGTH,	/* message length shorter than its type needs */
	FEED_ERR_UNKNOWN_TYPE,	/* message type not in the spec: skipped by length */
	FEED_ERR_BAD_FIELD,	/* a field outside its domain (side, count) */
	FEED_ERR_UNKNOWN_LOCATE, /* ITCH: a locate with no Stock Directory entry */
	FEED_ERR_NOT_MULTICAST,	/* PITCH: a GRP/Spin TCP session, not a multicast feed */
	FEED_ERR_BAD_FRAME,	/* frame to a mapped address that is not clean IPv4/UDP */
	FEED_ERR_COUNT
};

struct feed_counters {
	uint64_t packets;
	uint64_t bytes;
	uint64_t messages;	/* source messages decoded (duplicates excluded) */
	uint64_t events;	/* events written to the ring */
	uint64_t filtered;	/* messages of unsubscribed instruments */
	uint64_t ignored;	/* messages nothing in the book needs */
	uint64_t heartbeats;
	uint64_t gaps;		/* gap events */
	uint64_t gap_messages;	/* messages lost in gaps */
	uint64_t duplicates;	/* whole packets already seen (A/B copies) */
	uint64_t duplicate_messages; /* messages skipped in duplicate or overlapping packets */
	uint64_t session_changes;
	uint64_t end_of_session;
	uint64_t ring_drops;	/* events lost because the ring was full */
	uint64_t order_filter_full; /* PITCH: subscribed orders not tracked, filter full */
	uint64_t gso_packets;	/* module only: merged super-packets seen */
	uint64_t errors[FEED_ERR_COUNT];
};

struct feed_line {
	uint32_t ip;		/* destination IPv4, host byte order; 0 = free entry */
	uint16_t port;		/* destination UDP port */
	uint8_t protocol;	/* enum feed_protocol */
	uint8_t venue;		/* enum wb_venue */
	char name[FEED_LINE_NAME_LEN]; /* NUL padded, e.g. "A" */
	struct feed_counters counters;
};

struct feed_subs {
	bool all;		/* '*' subscribed: every instrument passes */
	uint32_t count;		/* instrument ids handed out */
	uint32_t generation;	/* bumped on every change; decoders refresh caches */
	uint64_t ticker[FEED_MAX_INSTRUMENTS];	 /* id -> ticker key (feed_ticker_key) */
	uint8_t subscribed[FEED_MAX_INSTRUMENTS]; /* id -> explicitly subscribed */
	uint16_t hash[2 * FEED_MAX_INSTRUMENTS]; /* open addressing: ticker key -> id */
};

typedef void *(*feed_alloc_fn)(size_t bytes);	/* must return zeroed memory */
typedef void (*feed_free_fn)(void *ptr);

struct feed_engine_config {
	feed_alloc_fn alloc;
	feed_free_fn free;
	uint32_t order_filter_capacity; /* PITCH live subscribed orders per venue (0: default) */
};

struct feed_engine {
	struct feed_engine_config cfg;
	struct feed_line lines[FEED_MAX_LINES];
	uint32_t line_count;	/* highest used index + 1 */
	int last_line;		/* cache for the map lookup */
	void *venue_state[WB_VENUE_COUNT];
	uint8_t venue_protocol[WB_VENUE_COUNT];
	struct feed_subs subs;
};

/* Per-packet context handed to a protocol decoder. */
struct feed_packet {
	struct feed_engine *engine;
	struct feed_line *line;
	struct feed_counters *counters;
	void *state;		/* the venue's protocol state */
	struct wb_ring_producer *out;
	uint64_t recv_ts;
	uint16_t line_index;
	uint8_t venue;
};

/* ---- engine lifetime ------------------------------------------------ */
int feed_engine_init(struct feed_engine *e, const struct feed_engine_config *cfg);
void feed_engine_destroy(struct feed_engine *e);
/* Forget all sequence, directory and order state (not map or subscriptions). */
void feed_engine_reset_state(struct feed_engine *e);

/* ---- feed map --------------------------------------------------------- */
/* Returns the line index, or a negative FEED_E* code. */
int feed_map_add(struct feed_engine *e, uint32_t ip, uint16_t port, int protocol, int venue,
		 const char *name);
int feed_map_remove(struct feed_engine *e, uint32_t ip, uint16_t port);
int feed_map_lookup(struct feed_engine *e, uint32_t ip, uint16_t port);

/*
 * Parse one feeds.conf line: "ADDR:PORT PROTOCOL VENUE LINE" with '#'
 * comments and blank lines allowed. Returns 1 for an entry, 0 for a blank
 * or comment line, negative FEED_E* for an error.
 */
int feed_map_parse_line(const char *text, size_t len, uint32_t *ip, uint16_t *port,
			int *protocol, int *venue, char name[FEED_LINE_NAME_LEN]);

int feed_protocol_parse(const char *s, size_t len);
int feed_venue_parse(const char *s, size_t len);
const char *feed_protocol_name(int protocol);
const char *feed_venue_name(int venue);
const char *feed_error_name(int err);
const char *wb_event_kind_name(int kind);

/* ---- subscriptions ---------------------------------------------------- */
/* Ticker keys: the 8-byte space-padded symbol read as a little-endian u64. */
uint64_t feed_ticker_key(const char *ticker, size_t len);
void feed_ticker_text(uint64_t key, char out[9]);
/* Returns the instrument id (>0), or a negative FEED_E* code. "*" subscribes all. */
int feed_subscribe(struct feed_engine *e, const char *ticker, size_t len);
int feed_unsubscribe(struct feed_engine *e, const char *ticker, size_t len);
/*
 * The instrument id of a ticker if it passes the filter, else 0. With '*'
 * an unknown ticker gets a new id (0 when the table is full).
 */
uint16_t feed_instrument_for_key(struct feed_engine *e, uint64_t key);

/* ---- packet path ------------------------------------------------------ */
/* A UDP payload for a known line. Events are committed, not published. */
void feed_process_payload(struct feed_engine *e, int line, const uint8_t *payload,
			  uint32_t len, uint64_t recv_ts, struct wb_ring_producer *out);
/*
 * An Ethernet frame (optionally 802.1Q tagged): IPv4/UDP to a mapped
 * address is decoded and its line index returned; anything else returns
 * -1 and is not counted.
 */
int feed_process_frame(struct feed_engine *e, const uint8_t *frame, uint32_t len,
		       uint64_t recv_ts, struct wb_ring_producer *out);

/* Error codes (negative returns). */
#define FEED_EINVAL	1
#define FEED_ENOSPC	2
#define FEED_EEXIST	3
#define FEED_ENOENT	4
#define FEED_ENOMEM	5
#define FEED_EPROTO	6	/* venue already used by another protocol */

#endif /* WIREBOOK_FEED_H */
