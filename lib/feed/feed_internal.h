/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the protocol decoders share inside lib/feed: bounds-checked field
 * readers, the event emitter, and the hooks each protocol implements.
 * Not part of any public ABI.
 */
#ifndef WIREBOOK_FEED_INTERNAL_H
#define WIREBOOK_FEED_INTERNAL_H

#include "feed.h"

/*
 * Field readers. Callers check the message length once against the
 * type's fixed size, then read fields at constant offsets: that one check
 * is what bounds every read below it.
 */
static inline uint16_t feed_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t feed_be32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static inline uint64_t feed_be64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline uint16_t feed_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t feed_le32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

static inline uint64_t feed_le64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

/* An 8-byte space-padded symbol as a ticker key (little-endian load). */
static inline uint64_t feed_symbol8_key(const uint8_t *p)
{
	return feed_le64(p);
}

/* A 6-byte symbol (PITCH short forms) padded to 8 with spaces. */
static inline uint64_t feed_symbol6_key(const uint8_t *p)
{
	return (uint64_t)feed_le32(p) | (uint64_t)feed_le16(p + 4) << 32 |
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

/* A gap event: messages [first, first + count) on this venue (and unit). */
void feed_emit_gap(struct feed_packet *pk, uint64_t first, uint64_t count, uint8_t unit);
/* A CLEAR event for the whole venue (instrument 0). */
void feed_emit_clear(struct feed_packet *pk, uint64_t seq, uint64_t exch_ts, uint8_t flags);

/* ---- protocol hooks (one set per enum feed_protocol) ------------------- */

struct feed_protocol_ops {
	/* Bytes of per-venue state; allocated zeroed by the engine. */
	size_t (*state_size)(const struct feed_engine_config *cfg);
	void (*state_init)(void *state, const struct feed_engine_config *cfg);
	/* Forget sequence, directory and order state. */
	void (*state_reset)(void *state);
	void (*packet)(struct feed_packet *pk, const uint8_t *payload, uint32_t len);
};

extern const struct feed_protocol_ops feed_itch50_ops;
extern const struct feed_protocol_ops feed_pitch_ops;

#endif /* WIREBOOK_FEED_INTERNAL_H */
