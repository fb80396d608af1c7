/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the layers share inside lib/feed: the wire readers (wire/bytes.h), the
 * event emitter, the protocol descriptor each decoder fills in, and the
 * sequencing, directory and time layers every protocol uses. Not part of
 * any public ABI.
 */
#ifndef WIREBOOK_FEED_INTERNAL_H
#define WIREBOOK_FEED_INTERNAL_H

#include "feed.h"
#include "wire/bytes.h"
#include "raw.h"

/* Per-packet context handed to a protocol decoder. */
struct feed_packet {
	struct feed_engine *engine;
	const struct feed_proto *proto;
	struct feed_line *line;
	struct feed_counters *counters;
	struct feed_venue *v;		/* the venue's shared state (instrument cache) */
	struct feed_group *group;	/* the line's sequence streams */
	void *state;			/* the venue's protocol state */
	struct wb_ring_producer *out;
	uint64_t recv_ts;
	uint64_t midnight_ns;		/* exch_ts of a time since midnight: add this */
	uint16_t line_index;
	uint8_t venue;
};

/* The context of a packet of line (a mapped line index). */
void feed_packet_init(struct feed_packet *pk, struct feed_engine *e, int line,
		      uint64_t recv_ts, struct wb_ring_producer *out);

/* An 8-byte space-padded symbol as a ticker key (little-endian load). */
static inline uint64_t feed_symbol8_key(const uint8_t *p)
{
	return wire_le64(p);
}

/* A 6-byte symbol (PITCH short forms) padded to 8 with spaces. */
static inline uint64_t feed_symbol6_key(const uint8_t *p)
{
	return (uint64_t)wire_le32(p) | (uint64_t)wire_le16(p + 4) << 32 |
	       0x2020000000000000ull;
}

static inline void feed_count_error(struct feed_packet *pk, enum feed_error err)
{
	pk->counters->errors[err]++;
}

/*
 * The next ring slot with the header filled in, or NULL when the ring is
 * full (the drop is counted). The caller fills the payload; the event is
 * committed by feed_commit().
 */
static inline struct wb_event *feed_emit(struct feed_packet *pk, uint8_t kind,
					 uint16_t instrument, uint64_t seq, uint64_t exch_ts)
{
	struct wb_event *restrict ev = wb_ring_producer_slot(pk->out);

	if (wb_unlikely(!ev)) {
		/* Counted per line by feed_process_payload from the ring's total. */
		wb_ring_producer_drop(pk->out);
		return 0;
	}
	ev->kind = kind;
	ev->venue = pk->venue;
	ev->side = 0;
	ev->flags = 0;
	ev->line = pk->line_index;
	ev->instrument = instrument;
	ev->seq = seq;
	ev->exch_ts = exch_ts;
	ev->recv_ts = pk->recv_ts;
	return ev;
}

/*
 * Events and ring drops are counted once per packet from the producer's
 * indices, so the per-event path has no counter to update.
 */
static inline void feed_commit(struct feed_packet *pk)
{
	wb_ring_producer_commit(pk->out);
}

/*
 * A run of ring slots that a decoder fills without a check per event:
 * from the producer's head, the slots the cached tail says are free, up to
 * where the ring wraps. Through pk->out the compiler must reload and store
 * the head around every event (an event store could alias it); a run is a
 * pointer that stays in a register. Everything that emits through pk->out
 * (feed_emit and the directory) sees the ring only between feed_run_end()
 * and the next feed_run_begin().
 */
struct feed_run {
	uint8_t *next;		/* the next event's slot */
	uint8_t *start;
	uint64_t slots;		/* in the run, from start */
};

/* A run from the producer's head; the tail is re-read when the cached one says full. */
static inline void feed_run_begin(struct feed_run *r, struct wb_ring_producer *p)
{
	uint64_t at = p->head & p->mask, used = p->head - p->cached_tail;

	if (wb_unlikely(used > p->mask)) {
		(void)wb_ring_producer_slot(p);
		used = p->head - p->cached_tail;
	}
	r->start = r->next = (uint8_t *)&p->slots[at];
	/* The free slots before the wrap. The same test as
	 * wb_ring_producer_slot's: a bogus tail only makes the ring look full. */
	r->slots = used <= p->mask ? p->mask + 1 - (used > at ? used : at) : 0;
}

/* The events written in the run so far. */
static inline uint64_t feed_run_events(const struct feed_run *r)
{
	return (uint64_t)(r->next - r->start) / sizeof(struct wb_event);
}

/* Commit the run's events (they are published with the ring's next publish). */
static inline void feed_run_end(const struct feed_run *r, struct wb_ring_producer *p)
{
	p->head += feed_run_events(r);
}

/* The slot of the run's next event, as bytes; feed_run_commit() once it is written whole. */
static inline uint8_t *feed_run_slot(const struct feed_run *r)
{
	return r->next;
}

static inline void feed_run_commit(struct feed_run *r)
{
	r->next += sizeof(struct wb_event);
}

/*
 * The first 8 bytes of an event (kind, venue, side, flags, line,
 * instrument) as one word, so that an event is written as eight 8-byte
 * stores filling its cache line, none of them a partial store. The macro
 * is for constant tables: parts of the word ORed together make the word.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FEED_EVENT_WORD0(kind, venue, side, flags, line, instrument)				\
	((uint64_t)(kind) << 56 | (uint64_t)(venue) << 48 | (uint64_t)(side) << 40 |		\
	 (uint64_t)(flags) << 32 | (uint64_t)(line) << 16 | (uint64_t)(instrument))
#else
#define FEED_EVENT_WORD0(kind, venue, side, flags, line, instrument)				\
	((uint64_t)(kind) | (uint64_t)(venue) << 8 | (uint64_t)(side) << 16 |			\
	 (uint64_t)(flags) << 24 | (uint64_t)(line) << 32 | (uint64_t)(instrument) << 48)
#endif

static inline uint64_t feed_event_word0(uint8_t kind, uint8_t venue, uint8_t side, uint8_t flags,
					uint16_t line, uint16_t instrument)
{
	return FEED_EVENT_WORD0(kind, venue, side, flags, line, instrument);
}

/* Two 4-byte fields that share a word (qty and mpid), as one word; the macro for constant tables. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FEED_EVENT_PAIR32(first, second) ((uint64_t)(first) << 32 | (uint64_t)(second))
#else
#define FEED_EVENT_PAIR32(first, second) ((uint64_t)(first) | (uint64_t)(second) << 32)
#endif

static inline uint64_t feed_event_pair32(uint32_t first, uint32_t second)
{
	return FEED_EVENT_PAIR32(first, second);
}

/* ---- protocols --------------------------------------------------------- */

/* Why a stream starts over (struct feed_proto.stream_event). */
enum feed_stream_event {
	FEED_STREAM_GAP = 0,	/* messages were lost (a GAP was emitted) */
	FEED_STREAM_NEW_SESSION, /* a new session id: yesterday's state is gone */
	FEED_STREAM_RESET,	/* sequence reset: the stream's books start over */
	FEED_STREAM_NEW_DAY,	/* the stream began again after its end of session */
	FEED_STREAM_SNAPSHOT,	/* a snapshot replaces the stream's state: forget it */
};

/*
 * A protocol (one row of protocols.h). Framing and decoding are split so
 * that the shared sequencing layer (stream.c) owns arbitration, gaps,
 * resets and sessions for every protocol: frame() only says where a
 * packet's sequence is, decode() turns its messages into events.
 */
struct feed_proto {
	const char *name;		/* the feeds.conf word, e.g. "itch" */
	const char *title;		/* "Nasdaq TotalView-ITCH 5.0 over MoldUDP64" */
	uint32_t venues;		/* bit v: the protocol can serve venue v */
	uint16_t units;			/* sequence streams per channel (PITCH: 256); 0 = 1 */
	uint8_t first_seq;		/* a session's first sequence number */
	bool big_endian;		/* byte order of every field (raw view) */
	uint8_t type_offset;		/* where a message's type is (raw view) */
	uint8_t type_width;		/* 1 or 2 bytes */
	uint32_t directory_keys;	/* symbol keys the directory holds densely (0: none) */
	const char *sample_tickers;	/* comma-separated: symbols of pcaps/<stem>, for fuzzing */

	/* Bytes of per-venue protocol state; allocated zeroed by the engine. */
	size_t (*state_size)(const struct feed_engine_config *cfg);
	void (*state_init)(void *state, const struct feed_engine_config *cfg);
	/* Forget directory-independent decoder state (orders, times). */
	void (*state_reset)(void *state);

	/* Where the packet's sequence is: 0, or FEED_FRAME_ERROR(enum feed_error). */
	int (*frame)(const uint8_t *p, uint32_t len, struct feed_frame *f);
	/*
	 * Frame a packet of snapshot messages (feed_snapshot_packet): the
	 * protocol's own framing, whatever its sequence and unit say (a spin's
	 * are 0). NULL: the protocol has no snapshot.
	 */
	int (*snapshot_frame)(const uint8_t *p, uint32_t len, struct feed_frame *f);
	/*
	 * Decode messages skip..f->count-1. Returns how many messages were
	 * framed (f->count unless the packet ends early: the rest is lost and
	 * reported when the stream moves on).
	 */
	uint32_t (*decode)(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			   const struct feed_frame *f, uint32_t skip);
	/* A stream (unit) of the venue lost messages or started over (NULL: nothing to do). */
	void (*stream_event)(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev);

	/* Raw view. next_message: the message at *off (*off advanced past
	 * it): 0, or -1 when the framing is broken there. */
	int (*next_message)(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			    uint32_t *mlen);
	/* The layout of a message, or NULL for an unknown type. */
	const struct feed_msg_layout *(*layout)(const uint8_t *msg, uint32_t len);
	/* Its trailing parts (feed_raw_parts); NULL: the protocol has none. */
	int (*parts)(const uint8_t *msg, uint32_t len, struct feed_raw_part *parts, int max);
	/* Does an unmapped payload look like this protocol (wb-dump --auto)? */
	bool (*looks_like)(const uint8_t *p, uint32_t len);
};

#define FEED_PROTOCOL_DECLARE(id, stem) extern const struct feed_proto feed_proto_##stem;
FEED_PROTOCOLS(FEED_PROTOCOL_DECLARE)
#undef FEED_PROTOCOL_DECLARE

/* The descriptor of a protocol id, or NULL. */
const struct feed_proto *feed_protocol_get(int protocol);

/* ---- per-venue shared state: the instrument cache ------------------------- */

struct feed_symbol {
	uint64_t ticker;	/* ticker key; 0 = no directory entry */
	uint32_t round_lot;
	uint8_t price_scale;	/* decimal places of the feed's prices (XDP), else 0 */
	char market;		/* listing market code, 0 if unknown */
	uint16_t stream;	/* the stream it was last defined on (feed_stream_id) */
};

#define FEED_DIR_OVERFLOW 4096	/* keys above directory_keys, per venue */

struct feed_directory {
	uint32_t dense;			/* keys 0..dense-1 live in the arrays below */
	uint32_t dense_end;		/* one past the highest dense key defined */
	uint16_t *instrument;		/* [dense] key -> instrument id if it passes the filter */
	struct feed_symbol *symbol;	/* [dense] */
	uint32_t *overflow_key;		/* [FEED_DIR_OVERFLOW] keys >= dense, open addressing (0: free) */
	uint16_t *overflow_instrument;
	struct feed_symbol *overflow_symbol;
	uint32_t overflow_used;
};

struct feed_venue {
	uint8_t protocol;
	bool session_seen;		/* sequenced data came: a new subscription missed some */
	bool was_all;
	uint32_t subs_generation;
	uint32_t holes;			/* streams of its groups with a hole open (its lock) */
	uint64_t midnight_ns;		/* ET midnight of the trading day, or FEED_MIDNIGHT_UNKNOWN */
	void *state;			/* the protocol's own state */
	struct feed_directory dir;
	uint8_t announced[FEED_MAX_INSTRUMENTS / 8];	/* SYMBOL emitted on this venue */
	uint8_t was_subscribed[FEED_MAX_INSTRUMENTS / 8];
	uint16_t stream_of[FEED_MAX_INSTRUMENTS];	/* instrument -> its stream (0: none) */
};

/* ---- sequence streams (stream.c) ----------------------------------------- */

/*
 * A packet kept while a hole before it may still be filled: by another
 * line, or (recovery mode) by recovered packets. Each stream keeps its
 * held packets in a list in sequence order; free slots are listed too.
 * List links are slot index + 1, so 0 is "none" and zeroed state is empty.
 */
#define FEED_HOLD_BYTES 1472	/* the largest UDP payload of a 1500-byte MTU */

struct feed_hold {
	struct feed_frame frame;
	uint64_t recv_ts;
	uint32_t next;		/* next held packet of the stream (or free slot), +1; 0: none */
	uint16_t len;
	uint8_t line;		/* engine line index */
	bool recovered;		/* came through feed_recover_packet */
	uint8_t data[FEED_HOLD_BYTES];
};

struct feed_stream {
	uint64_t next_seq;	/* next expected, when started */
	uint64_t hole_since;	/* receive time the current hole opened; 0: none. Also set
				 * while the stream recovers, so the fast path stays away */
	uint64_t hole_end;	/* a heartbeat or end says the stream reached here */
	uint64_t line_next[FEED_STREAM_MAX_LINES]; /* per line: next after its newest packet */
	uint64_t reset_token;	/* the last reset's token: its copy on another line is no new reset */
	uint64_t restart_seq;	/* where the last reset or new day began */
	uint32_t hold_head, hold_tail;	/* its held packets, in sequence order (+1; 0: none) */
	uint32_t held;		/* how many */
	uint16_t hole_line;	/* engine line index whose packet opened the hole */
	uint8_t epoch;		/* bumped by every reset and new day */
	uint8_t line_epoch[FEED_STREAM_MAX_LINES]; /* a line still in an older epoch lags behind it */
	bool started;
	bool ended;		/* end of session seen: a lower sequence starts a new day */
	bool has_session, has_prev_session;
	uint16_t session_tail, prev_session_tail;
	uint64_t session, prev_session;	/* as in struct feed_frame */
	/* recovery mode (enum feed_rec_state) */
	uint8_t rec;
	uint32_t rec_episode;
	uint64_t rec_first, rec_end;	/* the range announced RECOVERING; rec_end 0: a snapshot */
	uint64_t rec_since;		/* receive time it began */
	uint64_t rec_lost;		/* messages of it declared lost so far */
	uint64_t rc_gaps, rc_filled, rc_unrecoverable, rc_messages, rc_lost, rc_snapshots;
};

/* The streams of one (venue, channel): its lines share them. */
struct feed_group {
	uint8_t venue;
	uint8_t protocol;
	uint16_t channel;
	uint8_t id;		/* index in engine->group */
	uint8_t nlines;
	uint8_t line[FEED_STREAM_MAX_LINES];	/* engine line indexes, by group_line */
	uint16_t units;
	uint16_t holes;		/* streams with a hole open */
	bool recovery;		/* recovery mode: holes are recovered, not declared */
	uint16_t recovering;	/* streams with a recovery in progress */
	uint32_t hold_slots;
	uint32_t hold_free;	/* free slots, a list (+1; 0: none) */
	uint32_t hold_used;
	struct feed_hold *hold;	/* [hold_slots] */
	struct feed_fill_hist fill;	/* fill times of its recoveries */
	struct feed_stream stream[];	/* [units] */
};

/* Put every slot of g's hold buffer on its free list (streams hold nothing). */
void feed_hold_init(struct feed_group *g);

/* The 16-bit stream id of (group, unit) kept in feed_venue.stream_of. */
static inline uint16_t feed_stream_id(const struct feed_group *g, uint8_t unit)
{
	return (uint16_t)(((uint16_t)g->id + 1) << 8 | unit);
}

/* Sequence a framed packet and decode what is new in it, in order. */
void feed_stream_packet(struct feed_packet *pk, const struct feed_frame *f, const uint8_t *p,
			uint32_t len);
/* The stream's session ended (a message said so): a lower sequence starts a new day. */
void feed_stream_ended(struct feed_packet *pk, uint8_t unit);
/* Declare the holes of g older than now - hold_ns (all of them when flush). */
void feed_group_release(struct feed_engine *e, struct feed_group *g, uint64_t now, bool flush,
			struct wb_ring_producer *out);

/* ---- the instrument cache (directory.c) ---------------------------------- */

int feed_directory_init(struct feed_directory *d, uint32_t dense, const struct feed_engine_config *cfg);
void feed_directory_free(struct feed_directory *d, const struct feed_engine_config *cfg);
void feed_directory_clear(struct feed_directory *d);

/* The instrument of a symbol key if subscribed, else 0: one load for dense keys. */
uint16_t feed_dir_instrument_slow(const struct feed_directory *d, uint32_t key);
static inline uint16_t feed_dir_instrument(const struct feed_directory *d, uint32_t key)
{
	if (wb_likely(key < d->dense))
		return d->instrument[key];
	return feed_dir_instrument_slow(d, key);
}
/* The directory entry of key, or NULL (never defined, or no room). */
struct feed_symbol *feed_dir_symbol(struct feed_directory *d, uint32_t key);

/*
 * A directory message defined key: store it, resolve its instrument, and
 * announce it (SYMBOL) when it passes the filter. Returns the instrument (0:
 * filtered). sym->stream is set from the packet's stream.
 */
uint16_t feed_dir_define(struct feed_packet *pk, uint32_t key, const struct feed_symbol *sym,
			 uint64_t seq, uint64_t ts);
/*
 * A message names key, which has no directory entry, and carries its
 * ticker: counted as FEED_ERR_UNKNOWN_SYMBOL and learned with defaults, so
 * a capture that starts after the directory still decodes.
 */
uint16_t feed_dir_learn(struct feed_packet *pk, uint32_t key, uint64_t ticker, uint32_t round_lot,
			uint64_t seq, uint64_t ts);

/* Name inst on this venue (SYMBOL) unless done; note the stream (unit) it is on. */
void feed_announce(struct feed_packet *pk, uint16_t inst, uint8_t unit, uint64_t seq, uint64_t ts);
static inline bool feed_announced(const struct feed_venue *v, uint16_t inst)
{
	return v->announced[inst >> 3] & (1u << (inst & 7));
}
/* The subscriptions changed since the venue last looked (called per packet). */
void feed_venue_refresh(struct feed_packet *pk);
static inline bool feed_subscribed(const struct feed_engine *e, uint16_t inst)
{
	return e->subs.all || e->subs.subscribed[inst];
}
/*
 * Instrument ids handed out: '*' may hand out more on another venue's CPU
 * meanwhile (engine.c), whose tickers are stored before the count.
 */
static inline uint32_t feed_subs_count(const struct feed_engine *e)
{
	return wb_load_acquire(&e->subs.count);
}

/* A recovery began, moved or ended (venues bump it under their own locks). */
static inline void feed_recovery_changed(struct feed_engine *e)
{
	wb_fetch_add_relaxed(&e->recovery_changes, 1);
}

/* ---- time (feed_time.c) -------------------------------------------------- */

/* The venue's trading day, learned from the packet's receive time when unknown. */
uint64_t feed_venue_learn_midnight(struct feed_packet *pk);
/*
 * A venue's trading day not learned yet. Not 0: a receive clock that is no
 * wall clock (a capture's times since midnight) gives midnight 0, and that
 * must be learned once, not again for every packet.
 */
#define FEED_MIDNIGHT_UNKNOWN (~0ull)

/* Set pk->midnight_ns from the venue's trading day. */
static inline void feed_packet_midnight(struct feed_packet *pk)
{
	uint64_t m = pk->v->midnight_ns;

	pk->midnight_ns = wb_likely(m != FEED_MIDNIGHT_UNKNOWN) ? m : feed_venue_learn_midnight(pk);
}

/* ---- events -------------------------------------------------------------- */

/* A gap event: messages [first, first + count) of the packet's stream (instrument 0). */
void feed_emit_gap(struct feed_packet *pk, uint64_t first, uint64_t count, uint8_t unit);
/* A gap of one instrument only (enum wb_gap_reason). */
void feed_emit_instrument_gap(struct feed_packet *pk, uint16_t inst, uint64_t first,
			      uint64_t count, uint8_t unit, uint8_t reason);
/* A CLEAR event for one instrument, or the whole venue (instrument 0). */
void feed_emit_clear(struct feed_packet *pk, uint16_t inst, uint64_t seq, uint64_t exch_ts,
		     uint8_t flags);
/* A CLEAR of every announced instrument on the packet's stream (unit). */
void feed_clear_stream(struct feed_packet *pk, uint8_t unit, uint64_t seq, uint64_t exch_ts,
		       uint8_t flags);

#endif /* WIREBOOK_FEED_INTERNAL_H */
