/*
 * The live orders of every venue, keyed by (venue, order id).
 *
 * The index *is* the order store: an open-addressing table (linear
 * probing, power-of-two size, load kept at or below 1/2) whose 16-byte
 * buckets hold the order itself: id, remaining shares, and its price level
 * packed with its venue. Finding an order is one cache miss, not a bucket
 * miss followed by an order-pool miss; on this class of machine a
 * dependent DRAM miss costs ~100-200 ns, so that hop was most of an
 * event's cost. Nothing points at a bucket (price levels list their
 * orders by id), so deletion can shift the cluster back instead of
 * leaving tombstones, and probe lengths never degrade over a day of adds
 * and deletes. Memory follows the live orders: 32 bytes per live order at
 * the fullest, 64 right after a doubling, never a function of the ids.
 *
 * ITCH refs (dense, increasing) and PITCH/XDP ids (sparse 64-bit) go
 * through the same multiplicative (Fibonacci) hash, whose top bits pick
 * the bucket: consecutive ids land evenly spread, closer to one probe
 * than random placement would (the mixers compared: docs/benchmarks.md).
 *
 * Allocation: sized from the expected number of live orders at init;
 * when the live orders outgrow it the table doubles (a rehash of every
 * live order) inside the insert that crosses the limit. Size
 * expected_orders for the day's peak to keep that off the trading hours;
 * every doubling is counted (grows).
 *
 * One writer thread, no locks. The fast path is inline here; growth,
 * init and teardown are in order_index.c.
 */
#ifndef WIREBOOK_ORDER_INDEX_H
#define WIREBOOK_ORDER_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feed/prefetch.h"

#define ORDER_LEVEL_SHIFT 8		/* order.level_venue = level << 8 | venue */
#define ORDER_MAX_LEVELS (1u << 24)	/* level indices that fit beside the venue */

struct order {
	uint64_t id;			/* the venue's order id */
	uint32_t qty;			/* remaining displayed shares */
	uint32_t level_venue;		/* price level << 8 | venue; 0: empty bucket */
};

_Static_assert(sizeof(struct order) == 16, "four orders per cache line");

static inline uint32_t order_level(const struct order *o)
{
	return o->level_venue >> ORDER_LEVEL_SHIFT;
}

static inline uint8_t order_venue(const struct order *o)
{
	return (uint8_t)o->level_venue;
}

struct order_index {
	struct order *buckets;		/* [mask + 1] */
	uint32_t mask;
	uint32_t shift;			/* a hash's home bucket is hash >> shift */
	uint32_t live;
	uint32_t grow_at;		/* live count that doubles the table */
	int numa_node;			/* resolved: -1 = plain allocation */
	uint64_t grows;
};

/* 0 ok, -1 + errno. expected_orders 0 means a small default. */
int order_index_init(struct order_index *ix, uint32_t expected_orders, int numa_node);
void order_index_fini(struct order_index *ix);

/* Slow path of order_index_insert; 0 ok, -1 + errno (nothing changed). */
int order_index_grow(struct order_index *ix);

/*
 * The hash of (venue, id), of which a table of any size takes the top
 * bits: a hash worked out ahead (the venue books' look-ahead carries it
 * to the apply) stays good across a doubling.
 */
static inline uint32_t order_index_hash(uint8_t venue, uint64_t id)
{
	/* The venue goes in spread over every bit, so equal ids on two
	 * venues land apart. */
	uint64_t h = (id ^ (uint64_t)venue * 0xd6e8feb86659fd93ull) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static inline uint32_t order_index_home_of(const struct order_index *ix, uint32_t hash)
{
	return hash >> ix->shift;
}

static inline uint32_t order_index_home(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	return order_index_home_of(ix, order_index_hash(venue, id));
}

/*
 * The live order (venue, id), whose order_index_hash() is hash, or NULL.
 * The pointer stays valid until the next insert or erase.
 */
static inline struct order *order_index_find_hashed(const struct order_index *ix, uint8_t venue, uint64_t id,
						    uint32_t hash)
{
	uint32_t mask = ix->mask;
	uint32_t b = order_index_home_of(ix, hash);

	for (;;) {
		struct order *o = &ix->buckets[b];

		if (o->level_venue == 0)
			return NULL;
		if (o->id == id && order_venue(o) == venue)
			return o;
		b = (b + 1) & mask;
	}
}

/* The live order (venue, id), or NULL (see order_index_find_hashed). */
static inline struct order *order_index_find(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	return order_index_find_hashed(ix, venue, id, order_index_hash(venue, id));
}

/*
 * Warm the bucket an upcoming lookup of (venue, id) starts at, and the
 * bucket two on: an insert probes on from the home bucket to a free one,
 * an erase on from the order to the cluster's end, and from the last two
 * buckets of a line (four a line) both usually reach into the next line,
 * which would otherwise be a miss of its own. Otherwise both addresses
 * are in one line and the second prefetch costs an instruction.
 */
WB_PREFETCH_FN void order_index_prefetch_hashed(const struct order_index *ix, uint32_t hash)
{
	uint32_t home = order_index_home_of(ix, hash);

	__builtin_prefetch(&ix->buckets[home], 1, 3);
	__builtin_prefetch(&ix->buckets[(home + 2) & ix->mask], 1, 3);
}

WB_PREFETCH_FN void order_index_prefetch(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	order_index_prefetch_hashed(ix, order_index_hash(venue, id));
}

/*
 * Make room for one more order, doubling the table if it is at its load
 * limit: 0 ok, -1 + errno (nothing changed). Invalidates order pointers.
 */
static inline int order_index_reserve(struct order_index *ix)
{
	if (__builtin_expect(ix->live >= ix->grow_at, 0))
		return order_index_grow(ix);
	return 0;
}

/*
 * One probe for a lookup that may turn into an insert: the live order
 * (venue, id) if there is one, else the empty bucket it would go to
 * (level_venue == 0), to be filled with order_index_fill() before any
 * other insert, erase or reserve.
 */
static inline struct order *order_index_slot_hashed(const struct order_index *ix, uint8_t venue, uint64_t id,
						    uint32_t hash)
{
	uint32_t mask = ix->mask;
	uint32_t b = order_index_home_of(ix, hash);

	for (;;) {
		struct order *o = &ix->buckets[b];

		if (o->level_venue == 0 || (o->id == id && order_venue(o) == venue))
			return o;
		b = (b + 1) & mask;
	}
}

static inline struct order *order_index_slot(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	return order_index_slot_hashed(ix, venue, id, order_index_hash(venue, id));
}

/* Store a new order in the empty bucket order_index_slot() returned (after a reserve). */
static inline struct order *order_index_fill(struct order_index *ix, struct order *slot, uint8_t venue,
					     uint64_t id, uint32_t qty, uint32_t level)
{
	*slot = (struct order){ .id = id, .qty = qty, .level_venue = level << ORDER_LEVEL_SHIFT | venue };
	ix->live++;
	return slot;
}

/*
 * Add (venue, id), which the caller knows is not live, resting on level
 * (1 .. ORDER_MAX_LEVELS-1) with qty shares: the new order, or NULL when
 * the table had to double and could not (errno set, nothing changed).
 * Invalidates earlier order pointers.
 */
static inline struct order *order_index_insert(struct order_index *ix, uint8_t venue, uint64_t id,
					       uint32_t qty, uint32_t level)
{
	if (order_index_reserve(ix) < 0)
		return NULL;
	return order_index_fill(ix, order_index_slot(ix, venue, id), venue, id, qty, level);
}

/* Remove a live order. Invalidates earlier order pointers. */
static inline void order_index_erase(struct order_index *ix, struct order *o)
{
	uint32_t mask = ix->mask;
	uint32_t hole = (uint32_t)(o - ix->buckets);
	uint32_t b = hole;

	/* Backward-shift deletion: pull later members of the cluster into
	 * the hole unless their home lies after the hole. */
	for (;;) {
		struct order *next;
		uint32_t home;

		b = (b + 1) & mask;
		next = &ix->buckets[b];
		if (next->level_venue == 0)
			break;
		home = order_index_home(ix, order_venue(next), next->id);
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			ix->buckets[hole] = *next;
			hole = b;
		}
	}
	ix->buckets[hole] = (struct order){ 0 };
	ix->live--;
}

#endif /* WIREBOOK_ORDER_INDEX_H */
