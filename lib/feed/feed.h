/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The feed engine: feed map, subscriptions, sequence streams and the
 * protocol decoders, turning UDP payloads into normalized events in a ring.
 *
 * Freestanding: compiled into the kernel module and into user space. No
 * libc, no floating point, no allocation on the packet path (the engine
 * allocates per-venue and per-stream state through the caller's allocator
 * when a feed-map entry is added, which is a control-path operation).
 *
 * Layers, each in one place:
 *   engine.c     feed map, subscriptions, frame parsing, dispatch
 *   stream.c     sequence streams: A/B arbitration, duplicates, gaps,
 *                resets, sessions, heartbeats (every protocol)
 *   directory.c  the instrument cache fed by directory messages, SYMBOL
 *                announcements, late-subscription gaps (every protocol)
 *   feed_time.c  the one time convention (event.h): trading-day midnight
 *   <stem>.c     a protocol: framing, messages, raw field layouts
 *                (protocols.h lists them)
 * and, in user space only (lib/feedtext, never in the module): the names
 * and feeds.conf lines below (feed_venue_name, feed_error_name and
 * feed_protocol_venues excepted: the module's /proc shows them) and the
 * raw view's lookups (raw.h).
 *
 * Concurrency: one engine is driven by one thread at a time, or (the
 * module) by one thread per feed-map venue at a time, each under that
 * venue's lock, with the control path taking every venue's: the locks are
 * the caller's, given in struct feed_engine_config. A venue's groups share
 * its directory and protocol state, so a venue is the smallest unit whose
 * packets need no second lock. What venues share is the feed map (changed
 * only under every venue lock, read by feed_route_frame without one), the
 * subscription table (written by the control path under every venue lock,
 * and by '*' handing a new ticker an id under the intern lock; read
 * lock-free, its stores ordered) and two engine-wide words (an atomic
 * counter, recovery_changes, and the trading date, set under every lock).
 */
#ifndef WIREBOOK_FEED_H
#define WIREBOOK_FEED_H

#include "wirebook/event.h"
#include "wirebook/ring.h"
#include "protocols.h"

#ifndef __KERNEL__
#include <stddef.h>
#include <stdbool.h>
#endif

#define FEED_MAX_LINES 64		/* feed-map entries */
#define FEED_MAX_INSTRUMENTS 16384	/* instrument ids are 1..FEED_MAX_INSTRUMENTS-1 */
#define FEED_LINE_NAME_LEN 8
#define FEED_STREAM_MAX_LINES 4		/* lines arbitrated as one stream (A, B, ...) */
#define FEED_MAX_CHANNEL 65535

/*
 * What a feed-map line names as its VENUE: a venue (enum wb_venue), or a
 * SIP, whose lines carry the quotes of every venue (their events name each
 * quote's own venue). The SIPs are sources of data, never venues.
 */
enum feed_source {
	FEED_SOURCE_CQS = WB_VENUE_SIP_CQS,	/* CTA Consolidated Quotation System */
	FEED_SOURCE_UQDF,			/* UTP Quotation Data Feed */
	FEED_SOURCE_COUNT
};

WB_STATIC_ASSERT(FEED_SOURCE_UQDF == WB_VENUE_SIP_UQDF, "a SIP's events name it by its source id");

WB_STATIC_ASSERT(FEED_SOURCE_COUNT <= 32, "a protocol's venues are a 32-bit mask");

/* Decode errors, each counted per line. */
enum feed_error {
	FEED_ERR_TRUNCATED = 0,	/* header or message runs past the packet end */
	FEED_ERR_BAD_LENGTH,	/* a length field disagrees with the bytes */
	FEED_ERR_UNKNOWN_TYPE,	/* message type not in the spec: skipped by length */
	FEED_ERR_BAD_FIELD,	/* a field outside its domain (side, price, scale) */
	FEED_ERR_UNKNOWN_SYMBOL, /* a symbol key (ITCH locate, XDP index) with no directory entry */
	FEED_ERR_NOT_MULTICAST,	/* a TCP/recovery session, not a multicast feed */
	FEED_ERR_BAD_FRAME,	/* frame to a mapped address that is not clean IPv4/UDP */
	FEED_ERR_BAD_COUNT,	/* a packet's message count disagrees with its messages */
	FEED_ERR_BAD_CHECKSUM,	/* a block checksum that does not match: block dropped */
	FEED_ERR_RECOVERY,	/* recovery traffic nobody here asked for (a CQS retransmitted
				 * or snapshot block): not decoded */
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
	uint64_t gaps;		/* gap events (one per lost range) */
	uint64_t gap_messages;	/* messages lost in gaps */
	uint64_t duplicates;	/* whole packets already seen (A/B copies) */
	uint64_t duplicate_messages; /* messages skipped in duplicate or overlapping packets */
	uint64_t session_changes; /* new sessions, days and sequence resets */
	uint64_t end_of_session;
	uint64_t ring_drops;	/* events lost because the ring was full */
	uint64_t order_filter_full; /* PITCH: subscribed orders not tracked, filter full */
	uint64_t gso_packets;	/* module only: merged super-packets seen */
	uint64_t held;		/* packets held until a hole before them was filled or lost */
	uint64_t hold_full;	/* holes declared lost early: the hold buffer was full */
	uint64_t stale_session;	/* packets of a session already replaced: dropped */
	/* gap recovery (stream.c), on the line whose packet or request moved it */
	uint64_t rec_gaps;	/* recoveries begun: holes recovered instead of declared, late joins */
	uint64_t rec_filled;	/* recoveries that ended with every message recovered */
	uint64_t rec_unrecoverable; /* recoveries that ended with messages lost */
	uint64_t rec_messages;	/* messages decoded from recovered packets */
	uint64_t rec_lost;	/* messages given up while recovering (refused, too old, full) */
	uint64_t snapshots;	/* snapshots applied */
	uint64_t rec_buffer_full; /* the recovery buffer was full: a stream gave up its holes */
	uint64_t rec_rejected;	/* recovery input refused (wrong state, stream or session) */
	/* --proto lines (any): packets of sequence 0 decoded outside any stream */
	uint64_t unsequenced;
	uint64_t errors[FEED_ERR_COUNT];
};

struct feed_line {
	uint32_t ip;		/* destination IPv4, host byte order; 0: free unless any */
	uint16_t port;		/* destination UDP port */
	uint8_t protocol;	/* enum feed_protocol */
	uint8_t venue;		/* enum wb_venue, or a SIP (enum feed_source) */
	char name[FEED_LINE_NAME_LEN]; /* NUL padded, e.g. "A" */
	uint16_t channel;	/* the feed map's channel; 0 = the venue's default stream */
	uint8_t group;		/* internal: its sequence-stream group */
	uint8_t group_line;	/* internal: its index among the group's lines */
	bool any;		/* matches every address (wb-dump/wirebookd --proto) */
	struct feed_counters counters;
};

/* A line of the feed map, not a free entry. */
static inline bool feed_line_in_use(const struct feed_line *l)
{
	return l->ip || l->any;
}

/* One feed-map entry: a line of the feed map, as feeds.conf writes it. */
struct feed_map_entry {
	uint32_t ip;		/* host byte order */
	uint16_t port;
	uint16_t channel;	/* 0: none (the venue's lines form one stream) */
	uint8_t protocol;	/* enum feed_protocol */
	uint8_t venue;		/* enum wb_venue, or a SIP (enum feed_source) */
	bool any;		/* match every address (ip and port 0): user space only */
	char name[FEED_LINE_NAME_LEN];
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
	/*
	 * A packet that arrives after a hole in its stream is held while another
	 * line of the stream may still deliver the missing packets, at most
	 * hold_ns of receive time (0: 1 ms) and hold_packets per stream group
	 * (0: 16). Then the hole is a GAP.
	 */
	uint64_t hold_ns;
	uint32_t hold_packets;
	bool no_hold;		/* never hold: a hole is a GAP at once (timing-free replays) */
	/*
	 * Gap recovery (feed_recovery_enable): the buffer a group in recovery
	 * mode keeps its streams' packets in while a hole is recovered, in
	 * packets of up to FEED_HOLD_BYTES (0: FEED_RECOVERY_DEFAULT_SLOTS).
	 */
	uint32_t recovery_slots;
	/*
	 * Optional locks, for a caller whose packet path runs on several CPUs
	 * at once (the module); a single-threaded caller sets none and pays
	 * nothing. The caller decodes a venue's packets under that venue's
	 * lock (feed_route_frame without a lock, then feed_process_route under
	 * it); the engine itself takes:
	 *   lock/unlock      every venue's lock, around the few stores that
	 *                    publish a feed-map change (every allocation is
	 *                    made before, outside them);
	 *   lock_venue/unlock_venue  one venue's (enum wb_venue or feed_source),
	 *                    to swap a group's hold buffer (feed_recovery_enable,
	 *                    feed_recovery_disable), allocated outside it;
	 *   lock_intern/unlock_intern  with a venue's lock held, when '*' hands
	 *                    a ticker new to the engine an instrument id: the
	 *                    subscription table is every venue's.
	 */
	void (*lock)(void);
	void (*unlock)(void);
	void (*lock_venue)(int venue);
	void (*unlock_venue)(int venue);
	void (*lock_intern)(void);
	void (*unlock_intern)(void);
};

struct feed_venue;
struct feed_group;

struct feed_engine {
	struct feed_engine_config cfg;
	struct feed_line lines[FEED_MAX_LINES];
	uint32_t line_count;	/* highest used index + 1 */
	int last_line;		/* feed_process_frame's lookup cache (one thread; see feed_route_frame) */
	int any_line;		/* the line matching every address, or -1 */
	struct feed_venue *venue[FEED_SOURCE_COUNT];
	struct feed_group *group[FEED_MAX_LINES];
	uint64_t trading_day_ns; /* producer-set ET midnight (exch_ts base); 0: receive clock */
	/*
	 * Bumped (atomically: venues bump it under their own locks) when a
	 * recovery begins, moves or ends; readers compare it with the value
	 * they last saw (wb_load_relaxed).
	 */
	uint32_t recovery_changes;
	struct feed_subs subs;
};

/* ---- engine lifetime ------------------------------------------------ */
int feed_engine_init(struct feed_engine *e, const struct feed_engine_config *cfg);
void feed_engine_destroy(struct feed_engine *e);
/* Forget all sequence, directory and order state (not map or subscriptions). */
void feed_engine_reset_state(struct feed_engine *e);
/*
 * The trading day for feeds that give time since midnight (ITCH, PITCH),
 * when the receive clock cannot tell it (a BinaryFILE, a replay of another
 * day). 0 on success, -FEED_EINVAL for an impossible date; year 0 goes
 * back to the receive clock.
 */
int feed_engine_set_trading_date(struct feed_engine *e, int year, int month, int day);
/*
 * The trading day (US/Eastern) that the epoch time utc_ns falls on: a
 * replay's receive clock is now, its capture's clock gives the day. 0, or
 * -FEED_EINVAL when utc_ns is no wall clock (before 1970-01-02).
 */
int feed_engine_set_trading_day_of(struct feed_engine *e, uint64_t utc_ns);

/* ---- time (feed_time.c): the convention of event.h ------------------ */
/* Epoch ns of the US/Eastern midnight that starts the day of utc_ns; 0 before 1970-01-02. */
uint64_t feed_et_midnight_ns(uint64_t utc_ns);
/* Epoch ns of US/Eastern midnight of a civil date; 0 if impossible. */
uint64_t feed_et_midnight_of_date(int year, int month, int day);
/* US/Eastern offset from UTC at utc_ns, in seconds (-18000 or -14400). */
int32_t feed_et_offset_s(uint64_t utc_ns);

/* ---- feed map --------------------------------------------------------- */
/* Returns the line index, or a negative FEED_E* code. */
int feed_map_add_entry(struct feed_engine *e, const struct feed_map_entry *m);
/* A line of the venue's default stream (channel 0). */
int feed_map_add(struct feed_engine *e, uint32_t ip, uint16_t port, int protocol, int venue,
		 const char *name);
int feed_map_remove(struct feed_engine *e, uint32_t ip, uint16_t port);
int feed_map_lookup(const struct feed_engine *e, uint32_t ip, uint16_t port);

/* What was wrong with a feed-map line (feed_map_parse_line's *problem). */
enum feed_map_problem {
	FEED_MAP_OK = 0,
	FEED_MAP_FEW_COLUMNS,	/* fewer than ADDR:PORT PROTOCOL VENUE LINE */
	FEED_MAP_BAD_ADDRESS,
	FEED_MAP_BAD_PROTOCOL,
	FEED_MAP_BAD_VENUE,
	FEED_MAP_VENUE_NOT_SERVED, /* the protocol cannot serve the venue */
	FEED_MAP_BAD_LINE_NAME,
	FEED_MAP_BAD_OPTION,	/* a trailing token other than channel=N (1..65535) */
	FEED_MAP_PROBLEM_COUNT
};

/*
 * (lib/feedtext) Parse one feeds.conf line: "ADDR:PORT PROTOCOL VENUE LINE [channel=N]"
 * with '#' comments and blank lines allowed. Returns 1 for an entry, 0 for
 * a blank or comment line, -FEED_EINVAL with *problem set otherwise.
 */
int feed_map_parse_line(const char *text, size_t len, struct feed_map_entry *out,
			int *problem);
const char *feed_map_problem_text(int problem);

/* ---- names (lib/feedtext, but for the three the module uses) ---------- */
int feed_protocol_parse(const char *s, size_t len);
/* A venue or SIP source name ("nasdaq", "cqs"). */
int feed_venue_parse(const char *s, size_t len);
const char *feed_protocol_name(int protocol);
const char *feed_protocol_title(int protocol);
/* Bit v set: the protocol can serve venue (or SIP source) v. */
uint32_t feed_protocol_venues(int protocol);
/* The venues of a protocol as "a, b, c" into buf (always terminated). */
void feed_protocol_venue_list(int protocol, char *buf, size_t len);
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
 * -1 and is not counted. One thread: feed_route_frame says why.
 */
int feed_process_frame(struct feed_engine *e, const uint8_t *frame, uint32_t len,
		       uint64_t recv_ts, struct wb_ring_producer *out);

/*
 * The same in two steps, for a caller that decodes on several CPUs at once
 * with a lock per venue: feed_route_frame finds the frame's line and
 * venue without a lock and without writing to the engine; the caller takes
 * that venue's lock, checks the route is still current (the map may have
 * changed in between: route again when not) and decodes it with
 * feed_process_route. While any venue's lock is held the feed map cannot
 * change (a change takes them all).
 */
struct feed_route {
	int line;		/* the line, or -1: not to a mapped address */
	uint8_t venue;		/* the line's venue: whose lock to take */
	bool bad_frame;		/* to a mapped address, not clean IPv4/UDP: counted, not decoded */
	uint16_t port;		/* the frame's destination (host byte order) */
	uint32_t ip;
	uint32_t len;		/* the UDP payload */
	const uint8_t *payload;
};
/*
 * The line of (ip, port), or -1, into r (payload empty). hint: the caller's
 * cache of the last line found, one per thread or CPU (start it at -1).
 */
int feed_route_addr(const struct feed_engine *e, uint32_t ip, uint16_t port, int *hint,
		    struct feed_route *r);
/* A frame's route (as feed_process_frame reads it): the line, or -1. */
int feed_route_frame(const struct feed_engine *e, const uint8_t *frame, uint32_t len, int *hint,
		     struct feed_route *r);
/* Under r->venue's lock: does the feed map still send r's address to r->line? */
bool feed_route_current(const struct feed_engine *e, const struct feed_route *r);
/* Under r->venue's lock, r current: decode the payload, or count the bad frame. */
void feed_process_route(struct feed_engine *e, const struct feed_route *r, uint64_t recv_ts,
			struct wb_ring_producer *out);
/*
 * Holes older than hold_ns at receive time now become GAPs and the packets
 * held behind them are decoded. Call it when the input is idle, so a lost
 * packet with nothing after it is reported.
 */
void feed_engine_poll(struct feed_engine *e, uint64_t now, struct wb_ring_producer *out);
/* The same for one venue's groups, under its lock (the module's hole timer). */
void feed_venue_poll(struct feed_engine *e, int venue, uint64_t now,
		     struct wb_ring_producer *out);
/*
 * Streams with a hole open (feed_engine_poll has work): of one venue (read
 * under its lock, or without one as a hint), or of every venue.
 */
uint32_t feed_venue_holes(const struct feed_engine *e, int venue);
uint32_t feed_engine_holes(const struct feed_engine *e);
/* The input ended: every hole is a GAP, every held packet is decoded. */
void feed_engine_flush(struct feed_engine *e, struct wb_ring_producer *out);

/* ---- gap recovery and snapshots (stream.c) -----------------------------
 *
 * A group of streams (a feed map's venue and channel) in recovery mode
 * does not turn a hole into a GAP: it announces it (a GAP with reason
 * WB_GAP_RECOVERING), keeps every later packet of that stream in its
 * recovery buffer and waits for the missing packets through
 * feed_recover_packet(). Once they are in, it decodes everything in
 * sequence and says so (WB_GAP_FILLED). The stream's books are behind
 * meanwhile, never wrong; other streams go on untouched. What cannot come
 * (feed_recover_lost, or the buffer full) becomes an ordinary GAP.
 *
 * A snapshot (late join, or a hole too large to fill) replaces a
 * stream's books: feed_snapshot_begin() clears them and buffers real time,
 * feed_snapshot_packet() applies the snapshot's messages through the
 * protocol's decoder, feed_snapshot_end() says which sequence the
 * snapshot reached, and the buffered packets after it are then decoded in
 * order (those before it dropped).
 *
 * Streams are named by a line of their group and the unit (PITCH). The
 * calls return 0 or a negative FEED_E* code; input refused is counted
 * (rec_rejected).
 */
#define FEED_RECOVERY_DEFAULT_SLOTS 4096	/* packets: about 6 MiB a group */
#define FEED_RECOVERY_MAX_SLOTS (1u << 20)

enum feed_rec_state {
	FEED_REC_NONE = 0,	/* in sequence (or not in recovery mode) */
	FEED_REC_GAP,		/* a hole is being filled */
	FEED_REC_SNAPSHOT,	/* a snapshot is being taken: real time is buffered */
};

/* One stream's recovery, as feed_recovery_list() reports it. */
struct feed_recovery_stream {
	uint8_t venue;
	uint8_t protocol;
	uint8_t unit;
	uint8_t state;		/* enum feed_rec_state */
	uint16_t channel;
	uint16_t line;		/* a line of the stream's group (to name it in the calls) */
	uint32_t episode;	/* bumped by every recovery of the stream */
	uint32_t held;		/* packets buffered */
	uint64_t next_seq;	/* the stream's next expected sequence (0: not started) */
	uint64_t missing_first;	/* FEED_REC_GAP: ask for [first, first + count) now */
	uint64_t missing_count;
	uint64_t rec_first;	/* the recovery's range as announced (end 0: a snapshot) */
	uint64_t rec_end;
	uint64_t since;		/* receive time the recovery began */
	char session[10];	/* MoldUDP64 session of the stream, if it has one */
	uint8_t has_session;
	uint8_t reserved[5];
	/* since the engine started: per stream */
	uint64_t gaps, filled, unrecoverable, messages, lost, snapshots;
};

/*
 * Fill times (receive-clock ns from WB_GAP_RECOVERING to WB_GAP_FILLED) of
 * a group, in a log-linear histogram: 4 buckets per power of two.
 */
#define FEED_FILL_BUCKETS 256
struct feed_fill_hist {
	uint32_t bucket[FEED_FILL_BUCKETS];
	uint64_t count;
	uint64_t max_ns;
};
/* The value below which q permille of the samples lie (an upper bound of its bucket). */
uint64_t feed_fill_quantile(const struct feed_fill_hist *h, uint32_t permille);

/*
 * Recovery mode for the group of (venue, channel): allocates its recovery
 * buffer (slots packets; 0: the engine's recovery_slots). Control path:
 * allocates outside any lock, then takes the venue's (lock_venue) to swap
 * buffers. Enabling again resizes.
 */
int feed_recovery_enable(struct feed_engine *e, int venue, uint16_t channel, uint32_t slots);
/* Back to GAPs: open recoveries end as lost (events into out). */
int feed_recovery_disable(struct feed_engine *e, int venue, uint16_t channel, uint64_t now,
			  struct wb_ring_producer *out);
/*
 * Streams with a recovery in progress (all started streams of groups in
 * recovery mode when all), up to max into out. Returns how many there are.
 */
int feed_recovery_list(const struct feed_engine *e, struct feed_recovery_stream *out, int max,
		       bool all);
/* The same for one venue's groups (under its lock). */
int feed_recovery_list_venue(const struct feed_engine *e, int venue,
			     struct feed_recovery_stream *out, int max, bool all);
/*
 * Which stream a symbol is on, for readers who ask whether its book is
 * recovering: the key of the stream instrument inst of venue was last
 * announced on (0: not known yet), and the key of a listed stream (its
 * line and unit, as feed_recovery_list gives them). Equal keys: the same
 * stream.
 */
uint16_t feed_instrument_stream(const struct feed_engine *e, int venue, uint16_t inst);
uint16_t feed_stream_key(const struct feed_engine *e, int line, uint8_t unit);
/* A group's fill times, by the index of a line of it; NULL when none. */
const struct feed_fill_hist *feed_recovery_fill_times(const struct feed_engine *e, int line);
/*
 * A recovered packet (a re-request reply, a gap-response or retransmission
 * packet) in the line's framing. It fills its stream's hole and what was
 * buffered behind it is decoded in order.
 */
int feed_recover_packet(struct feed_engine *e, int line, const uint8_t *payload, uint32_t len,
			uint64_t recv_ts, struct wb_ring_producer *out);
/* Messages [first, first + count) of the stream will not come: they are a GAP. */
int feed_recover_lost(struct feed_engine *e, int line, uint8_t unit, uint64_t first,
		      uint64_t count, uint64_t now, struct wb_ring_producer *out);
int feed_snapshot_begin(struct feed_engine *e, int line, uint8_t unit, uint64_t now,
			struct wb_ring_producer *out);
/* Snapshot messages in the protocol's framing (its snapshot_frame): decoded as they are. */
int feed_snapshot_packet(struct feed_engine *e, int line, uint8_t unit, const uint8_t *payload,
			 uint32_t len, uint64_t now, struct wb_ring_producer *out);
/* The snapshot holds every message before next_seq. */
int feed_snapshot_end(struct feed_engine *e, int line, uint8_t unit, uint64_t next_seq,
		      uint64_t now, struct wb_ring_producer *out);
/* No snapshot will come: what it should have covered is a GAP. */
int feed_snapshot_abort(struct feed_engine *e, int line, uint8_t unit, uint64_t now,
			struct wb_ring_producer *out);

/* Error codes (negative returns). */
#define FEED_EINVAL	1
#define FEED_ENOSPC	2
#define FEED_EEXIST	3
#define FEED_ENOENT	4
#define FEED_ENOMEM	5
#define FEED_EPROTO	6	/* venue already used by another protocol */
#define FEED_EVENUE	7	/* the protocol cannot serve the venue */

#endif /* WIREBOOK_FEED_H */
