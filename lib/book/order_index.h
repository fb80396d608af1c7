/*
 * The live orders of every venue, keyed by (venue, order id).
 *
 * Two flat arrays:
 *  - the order pool: one 32-byte struct order per live order, addressed by
 *    a 32-bit slot (0 is never used, so 0 means "none"). Freed slots go on
 *    a LIFO free list threaded through order.next, so a delete followed by
 *    an add reuses a slot that is still in cache, and the pool holds as many
 *    slots as the peak number of live orders, not the largest id seen.
 *  - the index: open addressing, linear probing, power-of-two buckets, load
 *    kept at or below 1/2. A bucket is 8 bytes (32-bit hash tag, 32-bit
 *    slot), eight per cache line; a hit is confirmed against the order
 *    itself, which the caller reads next anyway. Deletion shifts the
 *    cluster back (no tombstones), so probe lengths never degrade over a
 *    trading day of adds and deletes.
 * ITCH refs (dense, increasing) and PITCH/XDP ids (sparse 64-bit) go
 * through the same mixer, so neither pattern can cluster the table.
 *
 * Allocation: both arrays are sized from the expected number of live
 * orders at init. When the live count outgrows them they double; that
 * copy (pool) or rehash (index, from the tags alone: no order is read)
 * happens inside the insert that crosses the limit, so size
 * expected_orders for the day's peak to keep it off the trading hours.
 * Every doubling is counted (pool_grows, index_grows).
 *
 * One writer thread, no locks. The fast path is inline here; growth,
 * init and teardown are in order_index.c.
 */
#ifndef WIREBOOK_ORDER_INDEX_H
#define WIREBOOK_ORDER_INDEX_H

#include <stdbool.h>
#include <stdint.h>

struct order {
	uint64_t id;		/* the venue's order id */
	uint32_t qty;		/* remaining displayed shares */
	uint32_t prev;		/* FIFO neighbours at the price level (slots, 0 = none) */
	uint32_t next;		/* also the free-list link while the slot is free */
	uint32_t level;		/* the price level it rests on (level pool index) */
	uint8_t venue;
	uint8_t reserved[7];
};

_Static_assert(sizeof(struct order) == 32, "two orders per cache line");

struct order_index_bucket {
	uint32_t tag;		/* low 32 bits of the key's hash; home bucket = tag & mask */
	uint32_t slot;		/* 0: empty */
};

struct order_index {
	struct order *orders;		/* [order_cap], slot 0 unused */
	struct order_index_bucket *buckets; /* [mask + 1] */
	uint32_t order_cap;
	uint32_t order_bump;		/* slots [1, order_bump) have been handed out at least once */
	uint32_t free_head;		/* LIFO free list of slots */
	uint32_t live;
	uint32_t mask;
	uint32_t grow_at;		/* live count that doubles the index */
	int numa_node;			/* resolved: -1 = plain allocation */
	uint64_t pool_grows;
	uint64_t index_grows;
};

/* 0 ok, -1 + errno. expected_orders 0 means a small default. */
int order_index_init(struct order_index *ix, uint32_t expected_orders, int numa_node);
void order_index_fini(struct order_index *ix);

/* Slow paths of order_index_insert; 0 ok, -1 + errno (nothing changed). */
int order_index_grow_pool(struct order_index *ix);
int order_index_grow_buckets(struct order_index *ix);


static inline uint64_t order_index_hash(uint8_t venue, uint64_t id)
{
	/* Two multiply/xor-shift rounds: sequential and strided ids alike
	 * spread over every bucket; the venue goes in before the first round
	 * so equal ids on two venues land apart. */
	uint64_t h = id ^ ((uint64_t)venue << 56);

	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

static inline struct order *order_at(const struct order_index *ix, uint32_t slot)
{
	return &ix->orders[slot];
}

/* Slot of the live order (venue, id), or 0. */
static inline uint32_t order_index_find(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	uint32_t tag = (uint32_t)order_index_hash(venue, id);
	uint32_t mask = ix->mask;
	uint32_t b = tag & mask;

	for (;;) {
		const struct order_index_bucket *bk = &ix->buckets[b];

		if (bk->slot == 0)
			return 0;
		if (bk->tag == tag) {
			const struct order *o = &ix->orders[bk->slot];

			if (o->id == id && o->venue == venue)
				return bk->slot;
		}
		b = (b + 1) & mask;
	}
}

/* Warm the bucket an upcoming lookup of (venue, id) will read. */
static inline void order_index_prefetch(const struct order_index *ix, uint8_t venue, uint64_t id)
{
	uint32_t tag = (uint32_t)order_index_hash(venue, id);

	__builtin_prefetch(&ix->buckets[tag & ix->mask], 0, 3);
}

/*
 * Add (venue, id), which the caller knows is not live: returns its new slot
 * with id and venue set and every other field zero, or 0 when a needed
 * doubling failed (errno set, nothing changed).
 */
static inline uint32_t order_index_insert(struct order_index *ix, uint8_t venue, uint64_t id)
{
	uint32_t tag, b, slot;
	struct order *o;

	if (__builtin_expect(ix->live >= ix->grow_at, 0) && order_index_grow_buckets(ix) < 0)
		return 0;
	slot = ix->free_head;
	if (slot) {
		ix->free_head = ix->orders[slot].next;
	} else {
		if (__builtin_expect(ix->order_bump >= ix->order_cap, 0) && order_index_grow_pool(ix) < 0)
			return 0;
		slot = ix->order_bump++;
	}
	o = &ix->orders[slot];
	*o = (struct order){ .id = id, .venue = venue };

	tag = (uint32_t)order_index_hash(venue, id);
	b = tag & ix->mask;
	while (ix->buckets[b].slot)
		b = (b + 1) & ix->mask;
	ix->buckets[b].tag = tag;
	ix->buckets[b].slot = slot;
	ix->live++;
	return slot;
}

/* Remove a live order and free its slot. */
static inline void order_index_erase(struct order_index *ix, uint32_t slot)
{
	struct order *o = &ix->orders[slot];
	uint32_t mask = ix->mask;
	uint32_t tag = (uint32_t)order_index_hash(o->venue, o->id);
	uint32_t hole = tag & mask;
	uint32_t b;

	while (ix->buckets[hole].slot != slot)
		hole = (hole + 1) & mask;
	/* Backward-shift deletion: pull later members of the cluster into the
	 * hole when their home bucket is not between the hole and them. */
	b = hole;
	for (;;) {
		uint32_t home;

		b = (b + 1) & mask;
		if (ix->buckets[b].slot == 0)
			break;
		home = ix->buckets[b].tag & mask;
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			ix->buckets[hole] = ix->buckets[b];
			hole = b;
		}
	}
	ix->buckets[hole].slot = 0;
	ix->buckets[hole].tag = 0;

	o->next = ix->free_head;
	o->id = 0;
	ix->free_head = slot;
	ix->live--;
}

#endif /* WIREBOOK_ORDER_INDEX_H */
