/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The order-id filter: the live orders of subscribed instruments, keyed by
 * the feed's 64-bit order id. Feeds whose executes, reduces, modifies and
 * deletes name only an order id (Cboe PITCH) look the id up here to learn
 * the instrument, and drop the message when the id is not found.
 *
 * Freestanding (compiled into the module): a fixed-capacity open-addressing
 * table with linear probing in memory the caller provides, so nothing is
 * allocated on the packet path. Deletion shifts the following entries back
 * (no tombstones), so a day of add/delete churn leaves probe lengths as
 * they would be in a freshly built table.
 *
 * Capacity is a hard bound on live entries; the table has at least 1.5x as
 * many slots (a power of two), so linear probing stays short even when full.
 * An insert beyond capacity fails and the caller counts it: the filter never
 * grows, never evicts, never overwrites a live entry of another order.
 *
 * Each entry also keeps the order's remaining displayed quantity, because
 * an execution that takes the last share is the order's only removal
 * message, and its unit, so that a unit's orders can be dropped at once.
 *
 * Most lookups miss when few symbols are subscribed (the executes and
 * deletes of every other symbol), and a miss in a table sized for a full
 * day would be a cache miss. A small summary answers most misses instead:
 * one byte per group of 2^ORDER_FILTER_GROUP_SHIFT slots counts the live
 * entries whose home slot is in the group (1/128 of the table's memory, so
 * it stays in cache). A zero count proves the id absent without touching
 * the table. Groups of 8 slots: with 100 symbols subscribed on a full day
 * about 4% of the misses still reach the table (9% with groups of 16, at
 * half the summary's memory). Counts saturate at 255 and then stay there (a saturated group is
 * always searched), so the summary can be wrong only towards searching.
 */
#ifndef WIREBOOK_FEED_ORDER_FILTER_H
#define WIREBOOK_FEED_ORDER_FILTER_H

#include "feed/prefetch.h"
#include "feed.h"

#define ORDER_FILTER_DEFAULT_CAPACITY (1u << 20)
#define ORDER_FILTER_MAX_CAPACITY (1u << 28)
#define ORDER_FILTER_UNITS 256
#define ORDER_FILTER_GROUP_SHIFT 3	/* 8 slots (two cache lines) per summary byte */
#define ORDER_FILTER_COUNT_STUCK 255

struct order_filter_entry {
	uint64_t order_id;
	uint32_t qty;		/* remaining displayed quantity */
	uint16_t instrument;	/* 0 marks an empty slot */
	uint8_t unit;		/* PITCH matching unit */
	uint8_t side;		/* enum wb_side, for the caller's events */
};

WB_STATIC_ASSERT(sizeof(struct order_filter_entry) == 16, "four entries per cache line");

struct order_filter {
	struct order_filter_entry *slots;
	uint8_t *home_count;	/* per group of slots: live entries whose home is there */
	uint32_t mask;		/* slot count - 1 */
	uint32_t shift;		/* 64 - log2(slot count): hash -> home slot */
	uint32_t capacity;	/* most live entries allowed */
	uint32_t live;
	uint32_t live_in_unit[ORDER_FILTER_UNITS];
};

/* Slots for a capacity (0 = default): a power of two >= 1.5 x capacity. */
uint32_t order_filter_slot_count(uint32_t capacity);

/* Bytes of memory order_filter_init needs for a capacity (slots + summary). */
static inline size_t order_filter_bytes(uint32_t capacity)
{
	size_t slots = order_filter_slot_count(capacity);

	return slots * sizeof(struct order_filter_entry) + (slots >> ORDER_FILTER_GROUP_SHIFT);
}

/*
 * Set up f over mem (zeroed, order_filter_bytes(capacity) long, 8-byte
 * aligned). A NULL mem gives a filter that holds nothing: every insert
 * fails and is counted by the caller, so a missing table is visible, not
 * fatal.
 */
void order_filter_init(struct order_filter *f, void *mem, uint32_t capacity);

/* Forget every entry (keeps the memory and the capacity). */
void order_filter_clear(struct order_filter *f);

static inline uint32_t order_filter_home(const struct order_filter *f, uint64_t order_id)
{
	/* Fibonacci hashing: order ids are sequential, the product's top bits are not. */
	return (uint32_t)((order_id * 0x9E3779B97F4A7C15ull) >> f->shift);
}

/* The live entry of order_id, or NULL. */
static inline struct order_filter_entry *order_filter_find(const struct order_filter *f,
							   uint64_t order_id)
{
	uint32_t i;

	if (wb_unlikely(!f->slots))
		return 0;
	i = order_filter_home(f, order_id);
	if (!f->home_count[i >> ORDER_FILTER_GROUP_SHIFT])
		return 0;
	for (;;) {
		struct order_filter_entry *e = &f->slots[i];

		if (!e->instrument)
			return 0;
		if (e->order_id == order_id)
			return e;
		i = (i + 1) & f->mask;
	}
}

/*
 * Start loading the slot a lookup of order_id begins at, when the summary
 * says it may be there (or always, for an insert). A packet's lookups are
 * independent cache misses; prefetching them all first overlaps them.
 */
WB_PREFETCH_FN void order_filter_prefetch(const struct order_filter *f, uint64_t order_id,
					 bool for_insert)
{
	uint32_t i;

	if (wb_unlikely(!f->slots))
		return;
	i = order_filter_home(f, order_id);
	if (for_insert)
		__builtin_prefetch(&f->slots[i], 1);
	else if (f->home_count[i >> ORDER_FILTER_GROUP_SHIFT])
		__builtin_prefetch(&f->slots[i], 0);
}

/*
 * Track an order. An id that is already live is overwritten (an Add for a
 * live id means a delete was missed). Returns the entry, or NULL when the
 * filter holds capacity entries already (or instrument is 0).
 */
struct order_filter_entry *order_filter_insert(struct order_filter *f, uint64_t order_id,
					       uint16_t instrument, uint8_t unit, uint32_t qty);

/* Remove an entry returned by find or insert; the pointer is invalid after. */
void order_filter_erase(struct order_filter *f, struct order_filter_entry *e);

/* Remove every entry of a unit; returns how many went. */
uint32_t order_filter_clear_unit(struct order_filter *f, uint8_t unit);

/*
 * Sum and maximum of (slot - home slot) over live entries: the extra
 * probes a lookup of each live id costs. Walks the whole table; for tests
 * and diagnostics, not the packet path.
 */
void order_filter_displacement(const struct order_filter *f, uint64_t *sum, uint32_t *max);

#endif /* WIREBOOK_FEED_ORDER_FILTER_H */
