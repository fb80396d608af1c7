/*
 * Venue books: see venue_book.h for the contract.
 *
 * Layout, chosen so an event costs as few DRAM misses as possible (a
 * dependent miss is ~100-200 ns on the machines we measured, an event's
 * budget is 50), and so that the misses it does cost can be started
 * early by venue_books_prefetch_stage() (each hop's address is in the
 * line the previous hop brought in):
 *  - orders live in the (venue, id) index itself (order_index.h): finding
 *    an order is one miss, and the order holds its remaining shares and
 *    its price level;
 *  - price levels: a pool of 64-byte struct book_level with stable
 *    indices. A level holds its totals, what an update needs (price,
 *    instrument, venue, side) and its FIFO: the ids of its orders in
 *    priority order, the first four inline in the same cache line, more in
 *    an arena vector. A delete or execute thus touches the order's bucket
 *    and its level and nothing else (a linked FIFO would also touch both
 *    neighbours: two more random misses). An order leaving a long queue
 *    leaves its id there, stale, rather than pay a scan for it and a
 *    memmove behind it (see fifo_each): the queue's order is read only by
 *    queue positions, checksums and clears, and a full queue drops its
 *    stale ids before it grows;
 *  - a price index, (book side, price) -> level, hashed like the order
 *    index: an ADD's level is one miss whose address the event gives,
 *    prefetched with the order's bucket; the sorted side arrays below are
 *    walked only when a price gains its first order or loses its last;
 *  - one 16-byte struct book_side per (venue, instrument, side), directly
 *    indexed, venue-major so the books of a venue are contiguous (bid and
 *    ask side by side, two instruments a cache line); it holds a sorted
 *    array of (sort key, level index) pairs, the key being the price for
 *    bids and ~price for asks, so both sides sort ascending with the best
 *    price last. Activity is at the top of the book, which is the end of
 *    the array: a new best level is an append, a level near the top moves
 *    only the few entries above it, and a price lookup scans a handful of
 *    entries backwards from the top (4 a cache line, key and level index
 *    in the same line) before falling back to a binary search deep in the
 *    book. A price that empties below the top keeps its entry (level 0)
 *    until an order returns to it or the array needs the room, so deep
 *    levels coming and going move nothing (see level_emptied);
 *  - side arrays and spilled FIFOs come from a power-of-two block arena
 *    (a free list per size) carved from large NUMA-placed chunks; nothing
 *    is malloc'd after create unless a chunk runs out (counted in
 *    level_grows).
 */
#include "book/venue_book.h"
#include "book/checksum.h"
#include "book/order_index.h"
#include "feed/prefetch.h"
#include "book/venue_mem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL_INLINE_ORDERS 4u

struct book_level {
	int64_t price;
	uint64_t qty;		/* total displayed shares */
	uint32_t orders;	/* live orders; also the free-list link while the level is free */
	uint32_t cap;		/* FIFO capacity: LEVEL_INLINE_ORDERS while inline */
	uint16_t instrument;
	uint8_t venue, side;
	uint32_t used;		/* spilled: ids[0 .. used) hold the queue, stale ids included (fifo_remove) */
	union {
		uint64_t inline_ids[LEVEL_INLINE_ORDERS];
		uint64_t *ids;	/* cap > LEVEL_INLINE_ORDERS: arena vector */
	} fifo;
};

_Static_assert(sizeof(struct book_level) == 64, "a level is one cache line");

struct side_entry {
	int64_t key;		/* sort_key(side, price) */
	uint32_t level;		/* level pool index; 0: no orders at this price (see level_emptied) */
	uint32_t reserved;
};

/*
 * The price index: (book side, price) -> level, open addressing like the
 * order index (linear probing, load at most 1/2, backward-shift erase).
 * Its bucket's address follows from the event alone, so an ADD's level is
 * one prefetchable miss away instead of a walk from the book side to its
 * sorted array; the sorted array is touched only when a price gains its
 * first order or loses its last.
 */
struct level_slot {
	int64_t price;
	uint32_t book;		/* side_of() index of the book side */
	uint32_t level;		/* level pool index; 0: empty bucket */
};

_Static_assert(sizeof(struct level_slot) == 16, "four price buckets a cache line");

struct book_side {
	struct side_entry *e;	/* ascending keys; best price at [count - 1] */
	uint32_t count;
	uint32_t cap;		/* 0 before the first level */
};

_Static_assert(sizeof(struct book_side) == 16, "two books' sides a cache line");

#define LEVEL_LINEAR_SCAN 16u			/* keys scanned from the top before bisecting */
#define SIDE_WINDOW 8u				/* keys compared at once, without a branch each */

/* venue_books_prefetch()'s events in flight (see there). */
struct prefetch_history;
static struct prefetch_history *prefetch_history_create(void);

struct venue_books {
	struct order_index ix;
	struct book_level *levels;		/* [level_cap], index 0 unused */
	uint32_t level_cap;
	uint32_t level_bump;
	uint32_t level_free;
	uint32_t max_instruments;
	struct book_side *sides;		/* [WB_VENUE_COUNT][max_instruments][2] */
	struct level_slot *prices;		/* the price index, [prices_mask + 1] */
	uint32_t prices_mask;
	uint32_t prices_shift;			/* a price_hash()'s home bucket is hash >> prices_shift */
	uint32_t prices_live;
	struct venue_arena arena;		/* side arrays and spilled queues */
	int numa_node;				/* resolved: -1 = plain allocation */
	struct prefetch_history *prefetch_history;
	struct venue_books_counters c;
};

/* ---------------------------------------------------------------- memory */

/* A block of the arena; a new chunk is a one-off stall, counted. */
static void *arena_alloc(struct venue_books *vb, size_t bytes)
{
	uint64_t chunks = vb->arena.chunks_added;
	void *p = venue_arena_alloc(&vb->arena, bytes);

	vb->c.level_grows += vb->arena.chunks_added - chunks;
	return p;
}

static void arena_free(struct venue_books *vb, void *p, size_t bytes)
{
	venue_arena_free(&vb->arena, p, bytes);
}

/* Move a side's array to a block twice the size; 0 ok, -1 (side unchanged). */
static int side_grow(struct venue_books *vb, struct book_side *s)
{
	uint32_t cap = s->cap ? 2 * s->cap : SIDE_WINDOW;
	struct side_entry *e = arena_alloc(vb, (size_t)cap * sizeof(*e));

	if (!e)
		return -1;
	if (s->count)
		memcpy(e, s->e, (size_t)s->count * sizeof(*e));
	if (s->cap)
		arena_free(vb, s->e, (size_t)s->cap * sizeof(*e));
	s->e = e;
	s->cap = cap;
	return 0;
}

static int level_pool_grow(struct venue_books *vb)
{
	uint32_t cap = vb->level_cap * 2;
	struct book_level *bigger;

	if (cap > ORDER_MAX_LEVELS) {
		errno = ENOSPC;
		return -1;
	}
	bigger = venue_mem_alloc((size_t)cap * sizeof(*bigger), vb->numa_node);
	if (!bigger)
		return -1;
	memcpy(bigger, vb->levels, (size_t)vb->level_bump * sizeof(*bigger));
	venue_mem_free(vb->levels, (size_t)vb->level_cap * sizeof(*bigger), vb->numa_node);
	vb->levels = bigger;
	vb->level_cap = cap;
	vb->c.level_grows++;
	return 0;
}

/* ------------------------------------------------------------- lifecycle */

struct venue_books *venue_books_create(const struct venue_books_config *cfg)
{
	struct venue_books *vb;
	uint32_t instruments = VENUE_BOOKS_DEFAULT_INSTRUMENTS;
	uint32_t orders = VENUE_BOOKS_DEFAULT_ORDERS;
	int node = -1;
	int err;

	if (cfg) {
		if (cfg->max_instruments)
			instruments = cfg->max_instruments;
		if (cfg->expected_orders)
			orders = cfg->expected_orders;
		node = cfg->numa_node;
	}
	if (instruments > 65536u || orders > (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	vb = calloc(1, sizeof(*vb));
	if (!vb)
		return NULL;
	vb->numa_node = venue_mem_node(node);
	vb->max_instruments = instruments;
	vb->prefetch_history = prefetch_history_create();
	if (!vb->prefetch_history)
		goto fail;
	if (order_index_init(&vb->ix, orders, vb->numa_node) < 0)
		goto fail;
	vb->level_cap = orders / 2 > 1024 ? orders / 2 : 1024;
	if (vb->level_cap > ORDER_MAX_LEVELS / 2)
		vb->level_cap = ORDER_MAX_LEVELS / 2;
	vb->level_bump = 1;
	vb->levels = venue_mem_alloc((size_t)vb->level_cap * sizeof(struct book_level), vb->numa_node);
	if (!vb->levels)
		goto fail;
	vb->sides = venue_mem_alloc((size_t)instruments * WB_VENUE_COUNT * 2 * sizeof(struct book_side),
				    vb->numa_node);
	if (!vb->sides)
		goto fail;
	vb->prices_mask = 2048 - 1;
	while (vb->prices_mask / 2 < vb->level_cap)
		vb->prices_mask = vb->prices_mask * 2 + 1;
	vb->prices_shift = 32u - (uint32_t)__builtin_popcount(vb->prices_mask);
	vb->prices = venue_mem_alloc(((size_t)vb->prices_mask + 1) * sizeof(struct level_slot), vb->numa_node);
	if (!vb->prices)
		goto fail;
	if (venue_arena_init(&vb->arena, vb->numa_node) < 0)
		goto fail;
	return vb;
fail:
	err = errno;
	venue_books_destroy(vb);
	errno = err;
	return NULL;
}

void venue_books_destroy(struct venue_books *vb)
{
	if (!vb)
		return;
	venue_arena_destroy(&vb->arena);
	venue_mem_free(vb->sides, (size_t)vb->max_instruments * WB_VENUE_COUNT * 2 * sizeof(struct book_side),
		       vb->numa_node);
	venue_mem_free(vb->levels, (size_t)vb->level_cap * sizeof(struct book_level), vb->numa_node);
	venue_mem_free(vb->prices, ((size_t)vb->prices_mask + 1) * sizeof(struct level_slot), vb->numa_node);
	if (vb->ix.buckets)
		order_index_fini(&vb->ix);
	free(vb->prefetch_history);
	free(vb);
}

const struct venue_books_counters *venue_books_counters(const struct venue_books *vb)
{
	return &vb->c;
}

/* ------------------------------------------------------------ book sides */

static inline int64_t sort_key(uint8_t side, int64_t price)
{
	/* ~price reverses the order without the overflow of -INT64_MIN. */
	return side == WB_SIDE_BUY ? price : ~price;
}

static inline uint32_t book_of(const struct venue_books *vb, uint16_t instrument, uint8_t venue, uint8_t side)
{
	return ((uint32_t)venue * vb->max_instruments + instrument) * 2 + (side - 1u);
}

static inline struct book_side *side_of(const struct venue_books *vb, uint16_t instrument,
					uint8_t venue, uint8_t side)
{
	return &vb->sides[book_of(vb, instrument, venue, side)];
}

/* ------------------------------------------------------------ price index */

/*
 * Of which the index takes the top bits, as order_index_hash(): a
 * multiplicative hash, under which the prices of one book, a tick apart,
 * land evenly spread; the book goes in as an offset spread over every bit.
 */
static inline uint32_t price_hash(uint32_t book, int64_t price)
{
	uint64_t h = ((uint64_t)price + (uint64_t)book * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static inline uint32_t price_home(const struct venue_books *vb, uint32_t book, int64_t price)
{
	return price_hash(book, price) >> vb->prices_shift;
}

/* The bucket of (book, price), whose price_hash() is hash: its level, or the empty bucket it would go in. */
static inline struct level_slot *price_slot_hashed(const struct venue_books *vb, uint32_t book, int64_t price,
						   uint32_t hash)
{
	uint32_t b = hash >> vb->prices_shift;

	for (;;) {
		struct level_slot *ls = &vb->prices[b];

		if (ls->level == 0 || (ls->price == price && ls->book == book))
			return ls;
		b = (b + 1) & vb->prices_mask;
	}
}

static inline struct level_slot *price_slot(const struct venue_books *vb, uint32_t book, int64_t price)
{
	return price_slot_hashed(vb, book, price, price_hash(book, price));
}

/* Its home bucket, and the one two on, for the probes past it (as order_index_prefetch). */
WB_PREFETCH_FN void price_prefetch_hashed(const struct venue_books *vb, uint32_t hash)
{
	uint32_t home = hash >> vb->prices_shift;

	__builtin_prefetch(&vb->prices[home], 1, 3);
	__builtin_prefetch(&vb->prices[(home + 2) & vb->prices_mask], 1, 3);
}

WB_PREFETCH_FN void price_prefetch(const struct venue_books *vb, uint32_t book, int64_t price)
{
	price_prefetch_hashed(vb, price_hash(book, price));
}

/* Double the price index when it is half full; 0 ok, 1 doubled, -1 (unchanged). */
static int prices_reserve(struct venue_books *vb)
{
	size_t old_n = (size_t)vb->prices_mask + 1, n = 2 * old_n;
	struct level_slot *old = vb->prices, *bigger;

	if (__builtin_expect(vb->prices_live < old_n / 2, 1))
		return 0;
	if (n > ((size_t)1 << 31))
		return -1;
	bigger = venue_mem_alloc(n * sizeof(*bigger), vb->numa_node);
	if (!bigger)
		return -1;
	vb->prices = bigger;
	vb->prices_mask = (uint32_t)(n - 1);
	vb->prices_shift--;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].level)
			*price_slot(vb, old[i].book, old[i].price) = old[i];
	venue_mem_free(old, old_n * sizeof(*old), vb->numa_node);
	vb->c.level_grows++;
	return 1;
}

/* Remove (book, price), which is in the index. */
static void price_erase(struct venue_books *vb, uint32_t book, int64_t price)
{
	uint32_t mask = vb->prices_mask;
	uint32_t hole = (uint32_t)(price_slot(vb, book, price) - vb->prices), b = hole;

	/* Backward-shift deletion, as in order_index_erase. */
	for (;;) {
		struct level_slot *next;
		uint32_t home;

		b = (b + 1) & mask;
		next = &vb->prices[b];
		if (next->level == 0)
			break;
		home = price_home(vb, next->book, next->price);
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			vb->prices[hole] = *next;
			hole = b;
		}
	}
	vb->prices[hole] = (struct level_slot){ 0 };
	vb->prices_live--;
}

/*
 * Number of keys <= key: a match, if any, is at the returned index - 1.
 *
 * Scans windows of SIDE_WINDOW entries from the top without a branch per
 * entry (counting the keys above the target): how far down a price sits
 * is random, so a loop that stops at it mispredicts on nearly every call,
 * ~20 cycles each. Past LEVEL_LINEAR_SCAN entries it bisects.
 */
static inline uint32_t window_count_above(const struct side_entry *w, int64_t key)
{
	uint32_t above = 0;

	for (uint32_t k = 0; k < SIDE_WINDOW; k++)
		above += w[k].key > key;
	return above;
}

_Static_assert(SIDE_WINDOW == 8, "side_upper_bound bisects a window in steps of 4, 2, 1");

/* One step of the bisection of a first window of top < SIDE_WINDOW keys. */
static inline uint32_t window_probe(const struct side_entry *e, uint32_t top, int64_t key, uint32_t lo,
				    uint32_t step)
{
	uint32_t k = lo + step - 1;

	return lo + (step & (0u - (uint32_t)((k < top) & (e[k].key <= key))));
}

static inline uint32_t side_upper_bound(const struct book_side *s, int64_t key)
{
	const struct side_entry *e = s->e;
	uint32_t top = s->count, above, lo = 0;

	while (top >= SIDE_WINDOW) {
		above = window_count_above(&e[top - SIDE_WINDOW], key);
		if (above < SIDE_WINDOW)
			return top - above;
		top -= SIDE_WINDOW;
		if (s->count - top >= LEVEL_LINEAR_SCAN)
			goto bisect;
	}
	/* Fewer than a window left: a branch-free bisection of the first
	 * window, what lies past top counting as above every key (a side
	 * array always has room for a window, see side_grow): three probes
	 * instead of eight compares. */
	if (top == 0)
		return 0;
	lo = window_probe(e, top, key, 0, 4);
	lo = window_probe(e, top, key, lo, 2);
	return window_probe(e, top, key, lo, 1);
bisect:
	/* Deep in the book: the answer is in [0, top]. */
	while (lo < top) {
		uint32_t mid = (lo + top) / 2;

		if (e[mid].key > key)
			top = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* A fresh level with no orders yet; 0 when the pool could not grow. */
static uint32_t level_alloc(struct venue_books *vb, uint16_t instrument, uint8_t venue, uint8_t side,
			    int64_t price)
{
	uint32_t li = vb->level_free;

	if (li) {
		vb->level_free = vb->levels[li].orders;
		/* The next allocation reads the new head's link: fetch it now. */
		__builtin_prefetch(&vb->levels[vb->level_free], 1, 3);
	} else {
		if (__builtin_expect(vb->level_bump >= vb->level_cap, 0) && level_pool_grow(vb) < 0)
			return 0;
		li = vb->level_bump++;
	}
	vb->levels[li] = (struct book_level){
		.price = price, .cap = LEVEL_INLINE_ORDERS, .instrument = instrument, .venue = venue, .side = side,
	};
	return li;
}

static void fifo_free(struct venue_books *vb, struct book_level *L)
{
	if (L->cap > LEVEL_INLINE_ORDERS)
		arena_free(vb, L->fifo.ids, (size_t)L->cap * sizeof(uint64_t));
}

/* Return a level, known to be off its side's array, to the pool. */
static void level_free(struct venue_books *vb, uint32_t li)
{
	struct book_level *L = &vb->levels[li];

	price_erase(vb, book_of(vb, L->instrument, L->venue, L->side), L->price);
	fifo_free(vb, L);
	L->orders = vb->level_free;
	vb->level_free = li;
}

/* Drop the entries of emptied prices (level 0) from a side. */
static void side_compact(struct book_side *s)
{
	uint32_t w = 0;

	for (uint32_t r = 0; r < s->count; r++)
		if (s->e[r].level)
			s->e[w++] = s->e[r];
	s->count = w;
}

/* Where a price's level is: its book side (book_of()) and price_hash(book, price). */
struct price_key {
	uint32_t book, hash;
};

static inline struct price_key price_key_of(const struct venue_books *vb, uint16_t instrument, uint8_t venue,
					    uint8_t side, int64_t price)
{
	uint32_t book = book_of(vb, instrument, venue, side);

	return (struct price_key){ .book = book, .hash = price_hash(book, price) };
}

/*
 * level_get() for a price new to its book, whose empty bucket in the price
 * index is ls: a level, in the index and in the side's sorted array.
 */
static uint32_t level_new(struct venue_books *vb, struct level_slot *ls, struct price_key pk, uint16_t instrument,
			  uint8_t venue, uint8_t side, int64_t price)
{
	uint32_t book = pk.book;
	struct book_side *s;
	int64_t key;
	uint32_t pos, li;

	/* The slot moves if the index doubles. */
	switch (prices_reserve(vb)) {
	case 0:
		break;
	case 1:
		ls = price_slot_hashed(vb, book, price, pk.hash);
		break;
	default:
		return 0;
	}
	s = &vb->sides[book];
	key = sort_key(side, price);
	pos = side_upper_bound(s, key);
	if (pos && s->e[pos - 1].key == key) {
		/* The price's entry outlived its last level: refill it in place. */
		li = level_alloc(vb, instrument, venue, side, price);
		if (li) {
			s->e[pos - 1].level = li;
			*ls = (struct level_slot){ .price = price, .book = book, .level = li };
			vb->prices_live++;
			vb->c.levels++;
		}
		return li;
	}
	if (__builtin_expect(s->count == s->cap, 0)) {
		/* Reclaim the entries of emptied prices before growing. */
		side_compact(s);
		pos = side_upper_bound(s, key);
		if (s->count == s->cap && side_grow(vb, s) < 0)
			return 0;
	}
	li = level_alloc(vb, instrument, venue, side, price);
	if (!li)
		return 0;
	if (pos < s->count)
		memmove(&s->e[pos + 1], &s->e[pos], (size_t)(s->count - pos) * sizeof(*s->e));
	s->e[pos] = (struct side_entry){ .key = key, .level = li };
	s->count++;
	*ls = (struct level_slot){ .price = price, .book = book, .level = li };
	vb->prices_live++;
	vb->c.levels++;
	return li;
}

/*
 * The level at (instrument, venue, side, price), found at pk; if there is
 * none, a new level with no orders yet, which the caller fills or hands
 * back to level_emptied(). 0 when out of memory. Inline for the common
 * case, a price that has its level (three adds in four on the generated
 * day): the call cost as much as the lookup.
 */
static inline uint32_t level_get(struct venue_books *vb, struct price_key pk, uint16_t instrument, uint8_t venue,
				 uint8_t side, int64_t price)
{
	struct level_slot *ls = price_slot_hashed(vb, pk.book, price, pk.hash);

	if (__builtin_expect(ls->level != 0, 1))
		return ls->level;
	return level_new(vb, ls, pk, instrument, venue, side, price);
}

/*
 * A level lost its last order: free it. At the top of the book (where
 * most levels come and go) its entry goes, with any emptied entries just
 * under it, so the top entry always has orders. Deeper, the entry stays
 * with level 0: no array move now, and an order arriving at that price
 * again (prices oscillate) refills it in place; level_get reclaims such
 * entries when the array fills up.
 */
static void level_emptied(struct venue_books *vb, uint32_t li)
{
	const struct book_level *L = &vb->levels[li];
	struct book_side *s = side_of(vb, L->instrument, L->venue, L->side);
	uint32_t pos = side_upper_bound(s, sort_key(L->side, L->price)) - 1;

	vb->c.levels--;
	level_free(vb, li);
	if (pos + 1 < s->count) {
		s->e[pos].level = 0;
		return;
	}
	do
		s->count--;
	while (s->count && s->e[s->count - 1].level == 0);
}

/* -------------------------------------------------------------- the FIFO */

/*
 * A spilled queue leaves an order's id where it is when the order goes
 * (fifo_remove): finding it meant a scan of the queue and closing the gap
 * a memmove of what followed, on the generated day 27 ids compared and
 * 26 moved per event, most of it cache misses on queue lines. The ids
 * left behind are stale: an id is the queue's only while the index has
 * its order on this level, and an order pushed again (it lost priority,
 * or left and came back) counts at its last place. Nothing on the hot
 * path reads the queue's order; the reads that do (queue position,
 * checksum, clear) skip stale ids, and a queue that runs out of room
 * drops them first (fifo_compact).
 */

/* The index says (venue, id) is live on level li. */
static inline const struct order *order_on(const struct venue_books *vb, uint8_t venue, uint64_t id, uint32_t li)
{
	const struct order *o = order_index_find(&vb->ix, venue, id);

	return o && order_level(o) == li ? o : NULL;
}

/* Whether an id of a spilled queue comes again later on (a stale place of an order pushed again). */
static bool pushed_again(const struct book_level *L, uint32_t at)
{
	for (uint32_t k = at + 1; k < L->used; k++)
		if (L->fifo.ids[k] == L->fifo.ids[at])
			return true;
	return false;
}

/*
 * fn on each live order of level li, in priority order, until it returns
 * nonzero. Off the hot path: an index lookup per id. Only a queue with
 * an order pushed again (more live places than live orders) pays for
 * finding which places are the last.
 */
static void fifo_each(const struct venue_books *vb, const struct book_level *L, uint32_t li,
		      int (*fn)(void *ctx, const struct order *o), void *ctx)
{
	uint32_t places = 0;

	if (L->cap == LEVEL_INLINE_ORDERS) {
		for (uint32_t k = 0; k < L->orders; k++) {
			const struct order *o = order_on(vb, L->venue, L->fifo.inline_ids[k], li);

			if (o && fn(ctx, o))
				return;
		}
		return;
	}
	for (uint32_t k = 0; k < L->used; k++)
		places += order_on(vb, L->venue, L->fifo.ids[k], li) != NULL;
	for (uint32_t k = 0; k < L->used; k++) {
		const struct order *o = order_on(vb, L->venue, L->fifo.ids[k], li);

		if (!o || (places > L->orders && pushed_again(L, k)))
			continue;
		if (fn(ctx, o))
			return;
	}
}

/* Spilled orders are marked in their venue byte while fifo_compact runs (see there). */
#define ORDER_COMPACT_MARK 0x80u
_Static_assert(WB_VENUE_COUNT <= ORDER_COMPACT_MARK, "the compaction mark is above every venue");

#define COMPACT_PREFETCH_AHEAD 24u	/* index lookups warmed ahead while compacting (8 left it waiting) */

/*
 * Drop a spilled queue's stale ids: an index lookup for each. From the
 * back, so an order pushed again is met at its last place first; that
 * place is kept and its order marked (ORDER_COMPACT_MARK in its venue
 * byte, which no venue has), so that the lookup of any earlier place of
 * the same order finds nothing. The marks go after.
 */
static void fifo_compact(struct venue_books *vb, struct book_level *L, uint32_t li)
{
	uint64_t *ids = L->fifo.ids;
	uint8_t venue = L->venue;
	uint32_t keep = L->used, n;

	for (uint32_t r = L->used; r-- > 0;) {
		struct order *o;

		if (r >= COMPACT_PREFETCH_AHEAD)
			order_index_prefetch(&vb->ix, venue, ids[r - COMPACT_PREFETCH_AHEAD]);
		o = order_index_find(&vb->ix, venue, ids[r]);
		if (o && order_level(o) == li) {
			o->level_venue |= ORDER_COMPACT_MARK;
			ids[--keep] = ids[r];
		}
	}
	n = L->used - keep;
	memmove(ids, ids + keep, (size_t)n * sizeof(uint64_t));
	L->used = n;
	for (uint32_t k = 0; k < n; k++) {
		struct order *o = order_index_find_hashed(&vb->ix, venue | ORDER_COMPACT_MARK, ids[k],
							  order_index_hash(venue, ids[k]));

		if (o)
			o->level_venue &= ~ORDER_COMPACT_MARK;
	}
}

/*
 * The queue is full (used == cap). Inline, it spills to the arena. A
 * spilled queue at most a quarter live drops its stale ids (at most 4/3
 * index lookups per push, amortized: the compaction leaves three
 * quarters of the vector free); else its vector doubles, stale ids and
 * all, or, if that fails, it compacts anyway when it has stale ids. -1:
 * still full. (Compacting at half live cost 2-4 ns/event more on the
 * generated day, for 8 MiB less peak RSS.)
 */
static int fifo_make_room(struct venue_books *vb, struct book_level *L, uint32_t li)
{
	uint32_t cap = L->cap * 2;
	bool spilled = L->cap > LEVEL_INLINE_ORDERS;
	uint32_t used = spilled ? L->used : L->orders;
	uint64_t *ids;

	if (spilled && L->orders <= L->cap / 4) {
		fifo_compact(vb, L, li);
		return 0;
	}
	ids = arena_alloc(vb, (size_t)cap * sizeof(uint64_t));
	if (!ids) {
		if (!spilled || L->used == L->orders)
			return -1;
		fifo_compact(vb, L, li);
		return L->used < L->cap ? 0 : -1;
	}
	memcpy(ids, spilled ? L->fifo.ids : L->fifo.inline_ids, (size_t)used * sizeof(uint64_t));
	fifo_free(vb, L);
	L->fifo.ids = ids;
	L->cap = cap;
	L->used = used;
	return 0;
}

/* Queue id at the back of level li (L), which takes a live order more. 0 ok, -1 out of memory (nothing changed). */
static inline int fifo_push(struct venue_books *vb, struct book_level *L, uint32_t li, uint64_t id)
{
	if (L->cap == LEVEL_INLINE_ORDERS && L->orders < LEVEL_INLINE_ORDERS) {
		L->fifo.inline_ids[L->orders++] = id;
		return 0;
	}
	if (__builtin_expect((L->cap == LEVEL_INLINE_ORDERS ? L->orders : L->used) == L->cap, 0) &&
	    fifo_make_room(vb, L, li) < 0)
		return -1;
	L->fifo.ids[L->used++] = id;
	L->orders++;
	return 0;
}

/*
 * A live order of level li goes to the back of its queue (it lost
 * priority). 0 ok, -1 out of memory (it kept its place).
 */
static int fifo_requeue(struct venue_books *vb, struct book_level *L, uint32_t li, uint64_t id);

/*
 * Take id out of the level's queue. Inline, the orders behind it move
 * up; spilled, its id stays, stale (see fifo_each).
 */
static inline void fifo_remove(struct book_level *L, uint64_t id)
{
	uint64_t *ids;
	uint32_t n = L->orders, i;

	if (L->cap == LEVEL_INLINE_ORDERS) {
		/* Inline: find and close the gap with selects, no data branches. */
		ids = L->fifo.inline_ids;
		i = LEVEL_INLINE_ORDERS;
		for (uint32_t k = 0; k < LEVEL_INLINE_ORDERS; k++)
			i = (k < n && ids[k] == id) ? k : i;
		if (__builtin_expect(i == LEVEL_INLINE_ORDERS, 0))
			return;	/* not queued here: cannot happen while the index and levels agree */
		for (uint32_t k = 0; k + 1 < LEVEL_INLINE_ORDERS; k++)
			ids[k] = k >= i ? ids[k + 1] : ids[k];
	}
	L->orders = n - 1;
}

static int fifo_requeue(struct venue_books *vb, struct book_level *L, uint32_t li, uint64_t id)
{
	if (L->cap == LEVEL_INLINE_ORDERS) {
		/* Cannot fail: the removal makes room. */
		fifo_remove(L, id);
		return fifo_push(vb, L, li, id);
	}
	/* Its new place is the last; the old one turns stale. */
	if (L->used == L->cap && fifo_make_room(vb, L, li) < 0)
		return -1;
	L->fifo.ids[L->used++] = id;
	return 0;
}

/* ------------------------------------------------------------ the orders */

static inline void note_live(struct venue_books *vb)
{
	vb->c.live_orders = vb->ix.live;
	if (vb->c.live_orders > vb->c.peak_live_orders) {
		vb->c.peak_live_orders = vb->c.live_orders;
		/* The index can only have doubled when the peak moved. */
		vb->c.index_grows = vb->ix.grows;
	}
}

/*
 * Queue a new order at the back of (instrument, venue, side, price), found
 * at pk, into the empty index bucket slot (order_index_slot() after a reserve);
 * returns its level, or 0 when out of memory (counted, nothing added).
 */
static uint32_t order_add(struct venue_books *vb, struct order *slot, uint8_t venue, uint64_t id,
			  uint16_t instrument, uint8_t side, int64_t price, uint32_t qty, struct price_key pk)
{
	uint32_t li = level_get(vb, pk, instrument, venue, side, price);
	struct book_level *L;

	if (!li)
		goto fail;
	L = &vb->levels[li];
	if (fifo_push(vb, L, li, id) < 0) {
		if (L->orders == 0)
			level_emptied(vb, li);
		goto fail;
	}
	/* Nothing touched the index since the slot was found. */
	order_index_fill(&vb->ix, slot, venue, id, qty, li);
	L->qty += qty;
	note_live(vb);
	return li;
fail:
	vb->c.alloc_failures++;
	return 0;
}

/* Take a live order off its level and out of the index. */
static inline void order_remove(struct venue_books *vb, struct order *o, struct book_level *L)
{
	L->qty -= o->qty;
	fifo_remove(L, o->id);
	order_index_erase(&vb->ix, o);
	vb->c.live_orders = vb->ix.live;
}

/* ---------------------------------------------------------------- updates */

static inline void emit_level(struct book_update *u, const struct wb_event *ev, const struct book_level *L)
{
	*u = (struct book_update){
		.kind = BOOK_UP_LEVEL,
		.venue = L->venue,
		.side = L->side,
		.flags = ev->flags,
		.instrument = L->instrument,
		.order_count = L->orders,
		.price = L->price,
		.qty = L->qty,
		.exch_ts = ev->exch_ts,
		.recv_ts = ev->recv_ts,
	};
}

/* Emit the level's state, then free it if no order is left on it. */
static inline unsigned emit_level_and_settle(struct venue_books *vb, struct book_update *u,
					     const struct wb_event *ev, uint32_t li)
{
	const struct book_level *L = &vb->levels[li];

	emit_level(u, ev, L);
	if (L->orders == 0)
		level_emptied(vb, li);
	return 1;
}

static inline struct book_update *emit_plain(struct book_update *u, const struct wb_event *ev, uint8_t kind)
{
	*u = (struct book_update){
		.kind = kind,
		.venue = ev->venue,
		.side = ev->side,
		.flags = ev->flags,
		.instrument = ev->instrument,
		.exch_ts = ev->exch_ts,
		.recv_ts = ev->recv_ts,
	};
	return u;
}

static inline unsigned emit_trade(struct book_update *u, const struct wb_event *ev, const struct book_level *L,
				  int64_t price, uint64_t qty, uint64_t match_id)
{
	*u = (struct book_update){
		.kind = BOOK_UP_TRADE,
		.venue = L->venue,
		.side = L->side,
		.flags = ev->flags,
		.instrument = L->instrument,
		.price = price,
		.qty = qty,
		.exch_ts = ev->exch_ts,
		.recv_ts = ev->recv_ts,
		.u.match_id = match_id,
	};
	return 1;
}

/* ----------------------------------------------------------------- events */

static inline bool instrument_ok(const struct venue_books *vb, uint16_t instrument)
{
	return instrument != 0 && instrument < vb->max_instruments;
}

static inline bool side_ok(uint8_t side)
{
	return side == WB_SIDE_BUY || side == WB_SIDE_SELL;
}

/*
 * The hashes an event's apply needs, worked out once: by the first stage
 * of the look-ahead (apply_pipelined), which carries them on to the later
 * stages and the apply, or by venue_books_apply(). Hashes, not buckets:
 * a table that doubles in between takes other bits of the same hash.
 */
struct event_keys {
	uint32_t order;		/* order_index_hash(venue, order id) */
	uint32_t ref;		/* REPLACE: of the new id */
	struct price_key add;	/* ADD: its level's; meaningful only for a valid ADD */
};

static inline void event_keys_of(const struct venue_books *vb, const struct wb_event *ev, struct event_keys *k)
{
	k->order = order_index_hash(ev->venue, ev->u.order.order_id);
	if (ev->kind == WB_EV_REPLACE)
		k->ref = order_index_hash(ev->venue, ev->u.order.ref);
	else if (ev->kind == WB_EV_ADD)
		k->add = price_key_of(vb, ev->instrument, ev->venue, ev->side, ev->u.order.price);
}

static unsigned apply_add(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k,
			  struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	struct order *slot;
	uint32_t li;

	if (__builtin_expect(!instrument_ok(vb, ev->instrument), 0)) {
		vb->c.bad_instrument++;
		return 0;
	}
	if (__builtin_expect(!side_ok(ev->side) || e->qty == 0, 0)) {
		vb->c.bad_field++;
		return 0;
	}
	if (__builtin_expect(order_index_reserve(&vb->ix) < 0, 0)) {
		vb->c.alloc_failures++;
		return 0;
	}
	slot = order_index_slot_hashed(&vb->ix, ev->venue, e->order_id, k->order);
	if (__builtin_expect(slot->level_venue != 0, 0)) {
		vb->c.duplicate_order++;
		return 0;
	}
	li = order_add(vb, slot, ev->venue, e->order_id, ev->instrument, ev->side, e->price, e->qty, k->add);
	if (!li)
		return 0;
	emit_level(out, ev, &vb->levels[li]);
	return 1;
}

/* EXECUTE, EXECUTE_AT_PRICE, REDUCE: take shares off a live order. */
static unsigned apply_take(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k,
			   struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	struct order *o = order_index_find_hashed(&vb->ix, ev->venue, e->order_id, k->order);
	struct book_level *L;
	uint32_t li, take;
	unsigned n = 0;

	if (__builtin_expect(!o, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_level(o);
	L = &vb->levels[li];
	take = e->qty;
	if (__builtin_expect(take > o->qty, 0)) {
		vb->c.overfill++;
		take = o->qty;
	}
	if (take == o->qty) {
		order_remove(vb, o, L);
	} else {
		o->qty -= take;
		L->qty -= take;
	}
	/* The trade goes after the level update but reads the level now,
	 * before an emptied level is freed. */
	if (ev->kind == WB_EV_EXECUTE)
		n = emit_trade(&out[1], ev, L, L->price, e->qty, e->ref);
	else if (ev->kind == WB_EV_EXECUTE_AT_PRICE && (ev->flags & WB_EVF_PRINTABLE))
		n = emit_trade(&out[1], ev, L, e->price, e->qty, e->ref);
	return emit_level_and_settle(vb, out, ev, li) + n;
}

static unsigned apply_delete(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k,
			     struct book_update *out)
{
	struct order *o = order_index_find_hashed(&vb->ix, ev->venue, ev->u.order.order_id, k->order);
	uint32_t li;

	if (__builtin_expect(!o, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_level(o);
	order_remove(vb, o, &vb->levels[li]);
	return emit_level_and_settle(vb, out, ev, li);
}

static unsigned apply_replace(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k,
			      struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	struct order *o = order_index_find_hashed(&vb->ix, ev->venue, e->order_id, k->order);
	struct book_level *L;
	uint32_t li, new_li;
	bool new_id_live;
	unsigned n;

	if (__builtin_expect(!o, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_level(o);
	L = &vb->levels[li];
	new_id_live = e->ref != e->order_id && order_index_find_hashed(&vb->ix, ev->venue, e->ref, k->ref) != NULL;
	order_remove(vb, o, L);

	if (!new_id_live && e->qty != 0 && L->price == e->price) {
		/* Same price: the level stays (even if the old order was its
		 * only one), the new order joins at the back, one update. */
		if (fifo_push(vb, L, li, e->ref) == 0) {
			if (order_index_reserve(&vb->ix) == 0) {
				order_index_fill(&vb->ix, order_index_slot_hashed(&vb->ix, ev->venue, e->ref, k->ref),
						 ev->venue, e->ref, e->qty, li);
				L->qty += e->qty;
				note_live(vb);
			} else {
				fifo_remove(L, e->ref);
				vb->c.alloc_failures++;
			}
		} else {
			vb->c.alloc_failures++;
		}
		return emit_level_and_settle(vb, out, ev, li);
	}

	{
		uint16_t instrument = L->instrument;
		uint8_t side = L->side;

		n = emit_level_and_settle(vb, out, ev, li);
		if (new_id_live) {
			vb->c.duplicate_order++;
			return n;
		}
		if (e->qty == 0) {
			vb->c.bad_field++;
			return n;
		}
		if (order_index_reserve(&vb->ix) < 0) {
			vb->c.alloc_failures++;
			return n;
		}
		new_li = order_add(vb, order_index_slot_hashed(&vb->ix, ev->venue, e->ref, k->ref), ev->venue,
				   e->ref, instrument, side, e->price, e->qty,
				   price_key_of(vb, instrument, ev->venue, side, e->price));
	}
	if (!new_li)
		return n;
	emit_level(&out[n], ev, &vb->levels[new_li]);
	return n + 1;
}

static unsigned apply_modify(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k,
			     struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	struct order *o = order_index_find_hashed(&vb->ix, ev->venue, e->order_id, k->order);
	struct book_level *L, *NL;
	uint32_t li, new_li;
	uint16_t instrument;
	uint8_t side;
	unsigned n;

	if (__builtin_expect(!o, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_level(o);
	L = &vb->levels[li];
	if (e->qty == 0) {
		/* Nothing left displayed: the order is gone. */
		order_remove(vb, o, L);
		return emit_level_and_settle(vb, out, ev, li);
	}
	if (L->price == e->price) {
		L->qty = L->qty - o->qty + e->qty;
		o->qty = e->qty;
		if (!(ev->flags & WB_EVF_KEEPS_PRIORITY) && fifo_requeue(vb, L, li, e->order_id) < 0)
			vb->c.alloc_failures++;
		emit_level(out, ev, L);
		return 1;
	}
	/* New price: leave the old level, join the new one at its back. The
	 * order's bucket does not move: no index insert or erase until the
	 * failure path. */
	instrument = L->instrument;
	side = L->side;
	L->qty -= o->qty;
	fifo_remove(L, e->order_id);
	n = emit_level_and_settle(vb, out, ev, li);
	new_li = level_get(vb, price_key_of(vb, instrument, ev->venue, side, e->price), instrument, ev->venue, side,
			   e->price);
	if (!new_li)
		goto fail;
	NL = &vb->levels[new_li];
	if (fifo_push(vb, NL, new_li, e->order_id) < 0) {
		if (NL->orders == 0)
			level_emptied(vb, new_li);
		goto fail;
	}
	o->qty = e->qty;
	o->level_venue = new_li << ORDER_LEVEL_SHIFT | ev->venue;
	NL->qty += e->qty;
	emit_level(&out[n], ev, NL);
	return n + 1;
fail:
	order_index_erase(&vb->ix, o);
	vb->c.live_orders = vb->ix.live;
	vb->c.alloc_failures++;
	return n;
}

/* Drop every order and level of one side. */
static void side_clear(struct venue_books *vb, struct book_side *s, uint8_t venue)
{
	for (uint32_t i = 0; i < s->count; i++) {
		uint32_t li = s->e[i].level;
		const struct book_level *L = &vb->levels[li];
		bool spilled;

		if (!li)
			continue;
		/* Each id whose order the index has here (a stale id's has gone
		 * or is elsewhere; an order pushed again goes at its first place). */
		spilled = L->cap > LEVEL_INLINE_ORDERS;
		for (uint32_t k = 0; k < (spilled ? L->used : L->orders); k++) {
			struct order *o = order_index_find(&vb->ix, venue, spilled ? L->fifo.ids[k] : L->fifo.inline_ids[k]);

			if (o && order_level(o) == li)
				order_index_erase(&vb->ix, o);
		}
		level_free(vb, li);
		vb->c.levels--;
	}
	s->count = 0;
}

static unsigned apply_clear(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	uint32_t first = ev->instrument, last = ev->instrument;

	if (ev->instrument == 0) {
		first = 1;
		last = vb->max_instruments - 1;
	} else if (ev->instrument >= vb->max_instruments) {
		vb->c.bad_instrument++;
		return 0;
	}
	for (uint32_t i = first; i <= last; i++) {
		side_clear(vb, side_of(vb, (uint16_t)i, ev->venue, WB_SIDE_BUY), ev->venue);
		side_clear(vb, side_of(vb, (uint16_t)i, ev->venue, WB_SIDE_SELL), ev->venue);
	}
	vb->c.live_orders = vb->ix.live;
	emit_plain(out, ev, BOOK_UP_CLEAR);
	return 1;
}

static unsigned apply_trade(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct book_update *u;

	if (!instrument_ok(vb, ev->instrument)) {
		vb->c.bad_instrument++;
		return 0;
	}
	u = emit_plain(out, ev, BOOK_UP_TRADE);
	u->price = ev->u.trade.price;
	u->qty = ev->u.trade.qty;
	u->u.match_id = ev->u.trade.match_id;
	return 1;
}

static unsigned apply_status(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct book_update *u;

	if (ev->instrument >= vb->max_instruments) {	/* 0: the whole venue */
		vb->c.bad_instrument++;
		return 0;
	}
	u = emit_plain(out, ev, BOOK_UP_STATUS);
	u->u.status.state = ev->u.status.state;
	u->u.status.raw_state = ev->u.status.raw_state;
	memcpy(u->u.status.reason, ev->u.status.reason, sizeof(u->u.status.reason));
	return 1;
}

static unsigned apply_symbol(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct book_update *u;

	if (!instrument_ok(vb, ev->instrument)) {
		vb->c.bad_instrument++;
		return 0;
	}
	u = emit_plain(out, ev, BOOK_UP_SYMBOL);
	memcpy(u->u.ticker, ev->u.symbol.ticker, sizeof(u->u.ticker));
	u->round_lot = ev->u.symbol.round_lot;
	return 1;
}

static unsigned apply_gap(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct book_update *u;

	/*
	 * A gap being recovered, and its end, leave the book as it is: its
	 * stream's later messages wait until the missing ones came (the book is
	 * behind, not wrong). What could not be recovered comes as a
	 * sequence gap of its own, which does mark the venue.
	 */
	if (ev->u.gap.reason == WB_GAP_RECOVERING || ev->u.gap.reason == WB_GAP_FILLED) {
		vb->c.recoveries += ev->u.gap.reason == WB_GAP_RECOVERING;
		return 0;
	}
	if (ev->instrument >= vb->max_instruments) {
		vb->c.bad_instrument++;
		return 0;
	}
	u = emit_plain(out, ev, BOOK_UP_GAP);
	u->qty = ev->u.gap.count;
	u->u.seq = ev->u.gap.first;
	return 1;
}

/* A SIP event (the SIP's view of a venue, event.h) changes no direct book:
 * it goes on to thread 2's SIP view as it is. */
static unsigned apply_sip(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct book_update *u;

	switch (ev->kind) {
	case WB_EV_QUOTE:
		u = emit_plain(out, ev, BOOK_UP_SIP_QUOTE);
		u->price = ev->u.quote.bid_price;
		u->u.ask_price = ev->u.quote.ask_price;
		u->order_count = ev->u.quote.bid_qty;
		u->round_lot = ev->u.quote.ask_qty;
		u->qty = ev->u.quote.sip_ts;
		break;
	case WB_EV_NBBO:
		u = emit_plain(out, ev, BOOK_UP_SIP_NBBO);
		u->price = ev->u.nbbo.bid_price;
		u->u.ask_price = ev->u.nbbo.ask_price;
		u->order_count = ev->u.nbbo.bid_qty;
		u->round_lot = ev->u.nbbo.ask_qty;
		u->qty = book_sip_nbbo_pack(&ev->u.nbbo);
		break;
	case WB_EV_LULD:
		u = emit_plain(out, ev, BOOK_UP_SIP_LULD);
		u->price = ev->u.luld.lower;
		u->u.ask_price = ev->u.luld.upper;
		u->side = (uint8_t)ev->u.luld.indicator;
		break;
	case WB_EV_STATUS:
		u = emit_plain(out, ev, BOOK_UP_SIP_STATUS);
		u->u.status.state = ev->u.status.state;
		u->u.status.raw_state = ev->u.status.raw_state;
		memcpy(u->u.status.reason, ev->u.status.reason, sizeof(u->u.status.reason));
		break;
	case WB_EV_CLEAR:
		emit_plain(out, ev, BOOK_UP_SIP_CLEAR);
		break;
	default:
		vb->c.ignored++;
		return 0;
	}
	vb->c.sip++;
	return 1;
}

/*
 * Inlined into the batch loop (and venue_books_apply): a call per event
 * cost its register saves and restores, 16 instructions an event.
 */
static inline __attribute__((always_inline)) unsigned
apply_event(struct venue_books *vb, const struct wb_event *ev, const struct event_keys *k, struct book_update *out)
{
	vb->c.events++;
	if (__builtin_expect(ev->flags & WB_EVF_SIP, 0))
		return apply_sip(vb, ev, out);
	if (__builtin_expect(ev->venue == WB_VENUE_NONE || ev->venue >= WB_VENUE_COUNT, 0)) {
		/* What a SIP line says of itself (its gaps, symbols, clears, NBBO)
		 * is no book's; an order event from it would be a bad venue. */
		if (ev->venue == WB_VENUE_SIP_CQS && ev->kind == WB_EV_GAP &&
		    ev->u.gap.reason != WB_GAP_RECOVERING && ev->u.gap.reason != WB_GAP_FILLED) {
			/* CQS has no retransmission: the SIP view marks the
			 * symbols stale until their next quote. */
			struct book_update *u = emit_plain(out, ev, BOOK_UP_SIP_GAP);

			u->qty = ev->u.gap.count;
			vb->c.sip++;
			return 1;
		}
		if ((ev->venue == WB_VENUE_SIP_CQS || ev->venue == WB_VENUE_SIP_UQDF) &&
		    ev->kind >= WB_EV_QUOTE)
			vb->c.ignored++;
		else
			vb->c.bad_venue++;
		return 0;
	}
	switch (ev->kind) {
	case WB_EV_ADD:
		vb->c.adds++;
		return apply_add(vb, ev, k, out);
	case WB_EV_DELETE:
		vb->c.deletes++;
		return apply_delete(vb, ev, k, out);
	case WB_EV_REPLACE:
		vb->c.replaces++;
		return apply_replace(vb, ev, k, out);
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
		vb->c.executes++;
		return apply_take(vb, ev, k, out);
	case WB_EV_REDUCE:
		vb->c.reduces++;
		return apply_take(vb, ev, k, out);
	case WB_EV_MODIFY:
		vb->c.modifies++;
		return apply_modify(vb, ev, k, out);
	case WB_EV_TRADE:
		vb->c.trades++;
		return apply_trade(vb, ev, out);
	case WB_EV_STATUS:
	case WB_EV_CLEAR:
		/* The SIP's view of a venue (event.h) never changes its direct book. */
		if (__builtin_expect(ev->flags & WB_EVF_SIP, 0)) {
			vb->c.ignored++;
			return 0;
		}
		if (ev->kind == WB_EV_CLEAR) {
			vb->c.clears++;
			return apply_clear(vb, ev, out);
		}
		vb->c.statuses++;
		return apply_status(vb, ev, out);
	case WB_EV_SYMBOL:
		vb->c.symbols++;
		return apply_symbol(vb, ev, out);
	case WB_EV_GAP:
		vb->c.gaps++;
		return apply_gap(vb, ev, out);
	default:
		vb->c.ignored++;
		return 0;
	}
}

/* ------------------------------------------------------------ look-ahead */

/*
 * One event in the look-ahead: what its first stage worked out (the
 * hashes the apply needs too, whether there is anything to warm) and
 * what each later stage found for the next.
 */
struct pipe_slot {
	const struct wb_event *ev;
	struct event_keys k;
	uint32_t level;			/* stage 1: the order's level, an ADD's level; 0: none */
	const struct book_side *side;	/* stage 2: a side whose top stage 3 warms */
	uint8_t kind;			/* an ADD or order event that stages 1-3 follow; 0: none */
} __attribute__((aligned(64)));	/* a slot's address is a shift of its number */

/*
 * Stage 0, from the event alone: its hashes, and the order's index
 * bucket; for an ADD its price bucket and book side; for a REPLACE the
 * new id's bucket. An event of another kind, a SIP event, a bad venue or
 * an ADD the apply will refuse (bad instrument or side) warms nothing
 * further (kind 0), so the later stages never index a table with a field
 * the apply has not checked.
 */
WB_PREFETCH_FN void stage_keys(const struct venue_books *vb, struct pipe_slot *p, const struct wb_event *ev)
{
	uint8_t kind = ev->kind;

	p->ev = ev;
	p->level = 0;
	p->side = NULL;
	p->kind = 0;
	if ((kind != WB_EV_ADD && !(kind >= WB_EV_EXECUTE && kind <= WB_EV_MODIFY)) ||
	    (ev->flags & WB_EVF_SIP) || ev->venue >= WB_VENUE_COUNT)
		return;
	p->k.order = order_index_hash(ev->venue, ev->u.order.order_id);
	order_index_prefetch_hashed(&vb->ix, p->k.order);
	if (kind == WB_EV_ADD) {
		if (!instrument_ok(vb, ev->instrument) || !side_ok(ev->side))
			return;
		p->k.add = price_key_of(vb, ev->instrument, ev->venue, ev->side, ev->u.order.price);
		price_prefetch_hashed(vb, p->k.add.hash);
		__builtin_prefetch(&vb->sides[p->k.add.book], 0, 3);
	} else if (kind == WB_EV_REPLACE) {
		p->k.ref = order_index_hash(ev->venue, ev->u.order.ref);
		order_index_prefetch_hashed(&vb->ix, p->k.ref);
	}
	p->kind = kind;
}

/*
 * A spilled queue's line an event will touch: where an add, a replace at
 * the same price or a modify that loses priority pushes. A removal
 * touches no queue (fifo_remove).
 */
WB_PREFETCH_FN void prefetch_queue(const struct book_level *L, uint8_t kind)
{
	if (kind == WB_EV_ADD || kind == WB_EV_REPLACE || kind == WB_EV_MODIFY)
		__builtin_prefetch(&L->fifo.ids[L->used], 1, 3);
}

/* Warm the top of a side's sorted array, where a search starts (four entries a line). */
WB_PREFETCH_FN void prefetch_side_top(const struct book_side *s)
{
	for (uint32_t k = 1; k <= LEVEL_LINEAR_SCAN && k <= s->count; k += 4)
		__builtin_prefetch(&s->e[s->count - k], 0, 3);
}

/*
 * Stage 1, from the buckets stage 0 warmed: the order's level; for an ADD
 * its level, or the side's top if the price is new.
 */
WB_PREFETCH_FN void stage_level(const struct venue_books *vb, struct pipe_slot *p)
{
	const struct wb_event *ev = p->ev;

	if (p->kind == WB_EV_ADD) {
		const struct level_slot *ls = price_slot_hashed(vb, p->k.add.book, ev->u.order.price, p->k.add.hash);

		if (ls->level) {
			__builtin_prefetch(&vb->levels[ls->level], 1, 3);
			p->level = ls->level;
		} else {
			/* A new price: its place in the side's array is searched from the top. */
			prefetch_side_top(&vb->sides[p->k.add.book]);
		}
	} else if (p->kind) {
		const struct order *o = order_index_find_hashed(&vb->ix, ev->venue, ev->u.order.order_id, p->k.order);

		if (o) {
			__builtin_prefetch(&vb->levels[order_level(o)], 1, 3);
			p->level = order_level(o);
		}
	}
}

/*
 * Stage 2, from the level stage 1 found (a hint: by now the level may be
 * gone or reused, which costs a useless prefetch, nothing else): a
 * spilled queue's lines, the price bucket a replace or modify moves the
 * order to, and the side and price bucket when the level may lose its
 * last order, whose top stage 3 warms. A level's instrument, venue and
 * side need no check: every level was made from a checked event, and a
 * freed one keeps them (a level index stays below level_bump, whose
 * levels survive a pool doubling).
 */
WB_PREFETCH_FN void stage_queue(const struct venue_books *vb, struct pipe_slot *p)
{
	const struct book_level *L = &vb->levels[p->level];
	const struct wb_event *ev = p->ev;
	uint8_t kind = p->kind;
	uint32_t book;

	if (L->cap > LEVEL_INLINE_ORDERS)
		prefetch_queue(L, kind);
	if (kind == WB_EV_ADD)
		return;
	book = book_of(vb, L->instrument, L->venue, L->side);
	/* A replace or modify to another price joins that price's level:
	 * its bucket, which only the level's book side locates. */
	if ((kind == WB_EV_REPLACE || kind == WB_EV_MODIFY) && ev->u.order.price != L->price)
		price_prefetch(vb, book, ev->u.order.price);
	if (L->orders != 1)
		return;
	/* The level may go: its price bucket is erased, its side's array may move. */
	price_prefetch(vb, book, L->price);
	p->side = &vb->sides[book];
	__builtin_prefetch(p->side, 1, 3);
}

/*
 * venue_books_prefetch_stage(): the stages before the one asked for run
 * again on the spot (their lines should be warm by now: the caller ran
 * them earlier), as they find what it starts from; stage 2 includes
 * apply_pipelined's stage 3.
 */
void venue_books_prefetch_stage(const struct venue_books *vb, const struct wb_event *ev, unsigned stage)
{
	struct pipe_slot p;

	stage_keys(vb, &p, ev);
	if (stage < 1 || !p.kind)
		return;
	stage_level(vb, &p);
	if (stage < 2 || !p.level)
		return;
	stage_queue(vb, &p);
	if (p.side)
		prefetch_side_top(p.side);
}

/*
 * venue_books_prefetch() runs stage 1 on the event it was given
 * PREFETCH_LAG calls earlier, from a copy (that event's ring slot may be
 * gone by then): state of the hints, not of the books, so it lives behind
 * a pointer the const prefetch may write through.
 */
#define PREFETCH_LAG 2u

struct prefetch_history {
	struct wb_event ev[PREFETCH_LAG];
	struct pipe_slot p[PREFETCH_LAG];
	unsigned next;
};

static struct prefetch_history *prefetch_history_create(void)
{
	return calloc(1, sizeof(struct prefetch_history));
}

void venue_books_prefetch(const struct venue_books *vb, const struct wb_event *ev)
{
	struct prefetch_history *ph = vb->prefetch_history;
	struct pipe_slot *p = &ph->p[ph->next];

	/* Second hop of the event hinted PREFETCH_LAG calls ago, whose bucket
	 * has had time to arrive. Then the first hop of this one. */
	if (p->ev)
		stage_level(vb, p);
	ph->ev[ph->next] = *ev;
	stage_keys(vb, p, &ph->ev[ph->next]);
	ph->next = (ph->next + 1) % PREFETCH_LAG;
}

/* Distances ahead of the event being applied, in events (see apply_pipelined). */
#define BATCH_STAGE0_AHEAD 12u
#define BATCH_STAGE1_AHEAD 8u
#define BATCH_STAGE2_AHEAD 4u
#define BATCH_STAGE3_AHEAD 2u
#define PIPE_SLOTS 16u		/* a power of two > BATCH_STAGE0_AHEAD */

/* Where the events of a batch are: a ring's slots, or a list of pointers. */
struct event_run {
	const struct wb_event *slots;
	uint64_t mask, first;
	const struct wb_event *const *list;
};

static inline const struct wb_event *ring_event(const struct event_run *r, uint64_t i)
{
	return &r->slots[(r->first + i) & r->mask];
}

static inline const struct wb_event *list_event(const struct event_run *r, uint64_t i)
{
	return r->list[i];
}

/*
 * Apply event i after warming what the events ahead of it need: stage 0
 * (buckets) 12 ahead, stage 1 (the level) 8 ahead, stage 2 (a spilled
 * queue, the side of a level about to empty) 4 ahead, stage 3 (that
 * side's sorted array) 2 ahead: four events (about 350 ns here) for each
 * hop's miss. At 8, 4, 2 and 1 perf found stage 2 waiting on the level
 * stage 1 had warmed two events earlier, and the books took 5 ns/event
 * more; at 16 ahead, more. Each event's slot in a small ring carries
 * what one stage found to the next, and its hashes, worked out once in
 * stage 0, to the apply: stages 1-3 and the apply neither rehash nor
 * probe again for what an earlier stage found. Inlined with its
 * accessor, so neither form pays for the other.
 */
/* The stages of one step, on the events ahead of event i; bounded: some may lie past avail. */
static inline __attribute__((always_inline)) void
pipeline_step(const struct venue_books *vb, struct pipe_slot *pipe, const struct event_run *run,
	      const struct wb_event *(*at)(const struct event_run *, uint64_t), uint64_t i, uint64_t avail,
	      bool bounded)
{
	struct pipe_slot *p;

	if (!bounded || i + BATCH_STAGE0_AHEAD < avail)
		stage_keys(vb, &pipe[(i + BATCH_STAGE0_AHEAD) % PIPE_SLOTS], at(run, i + BATCH_STAGE0_AHEAD));
	if (!bounded || i + BATCH_STAGE1_AHEAD < avail)
		stage_level(vb, &pipe[(i + BATCH_STAGE1_AHEAD) % PIPE_SLOTS]);
	p = &pipe[(i + BATCH_STAGE2_AHEAD) % PIPE_SLOTS];
	if ((!bounded || i + BATCH_STAGE2_AHEAD < avail) && p->level)
		stage_queue(vb, p);
	p = &pipe[(i + BATCH_STAGE3_AHEAD) % PIPE_SLOTS];
	if ((!bounded || i + BATCH_STAGE3_AHEAD < avail) && p->side)
		prefetch_side_top(p->side);
}

static inline __attribute__((always_inline)) void
apply_pipelined(struct venue_books *vb, const struct event_run *run, uint64_t n, uint64_t avail,
		const struct wb_event *(*at)(const struct event_run *, uint64_t), struct book_update *out,
		venue_books_emit_fn emit, void *ctx)
{
	struct pipe_slot pipe[PIPE_SLOTS];
	uint64_t warm = avail < BATCH_STAGE0_AHEAD ? avail : BATCH_STAGE0_AHEAD;
	/* Up to here every stage's event is readable: no bounds to check. */
	uint64_t unbounded = avail > BATCH_STAGE0_AHEAD ? avail - BATCH_STAGE0_AHEAD : 0;
	uint64_t i = 0;

	if (unbounded > n)
		unbounded = n;
	/* The first events' stage 0 (the apply needs their hashes); their
	 * later stages, too late to help, are left out. */
	for (uint64_t j = 0; j < warm; j++)
		stage_keys(vb, &pipe[j], at(run, j));
	for (; i < unbounded; i++) {
		const struct pipe_slot *p = &pipe[i % PIPE_SLOTS];

		pipeline_step(vb, pipe, run, at, i, avail, false);
		out = emit(ctx, p->ev, out, apply_event(vb, p->ev, &p->k, out));
	}
	for (; i < n; i++) {
		const struct pipe_slot *p = &pipe[i % PIPE_SLOTS];

		pipeline_step(vb, pipe, run, at, i, avail, true);
		out = emit(ctx, p->ev, out, apply_event(vb, p->ev, &p->k, out));
	}
}

void venue_books_apply_batch(struct venue_books *vb, const struct wb_event *slots, uint64_t mask,
			     uint64_t first, uint64_t n, uint64_t avail, struct book_update *out,
			     venue_books_emit_fn emit, void *ctx)
{
	const struct event_run run = { .slots = slots, .mask = mask, .first = first };

	apply_pipelined(vb, &run, n, avail, ring_event, out, emit, ctx);
}

void venue_books_apply_list(struct venue_books *vb, const struct wb_event *const *evs, uint64_t n,
			    struct book_update *out, venue_books_emit_fn emit, void *ctx)
{
	const struct event_run run = { .list = evs };

	apply_pipelined(vb, &run, n, n, list_event, out, emit, ctx);
}

unsigned venue_books_apply(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	struct event_keys k;

	event_keys_of(vb, ev, &k);
	return apply_event(vb, ev, &k, out);
}

/* ------------------------------------------------------------------ reads */

static bool book_ok(const struct venue_books *vb, uint8_t venue, uint16_t instrument)
{
	return venue != WB_VENUE_NONE && venue < WB_VENUE_COUNT && instrument_ok(vb, instrument);
}

static void read_top(const struct venue_books *vb, const struct book_side *s, struct venue_level *out)
{
	const struct book_level *L;

	if (!s->count) {
		*out = (struct venue_level){ 0 };
		return;
	}
	L = &vb->levels[s->e[s->count - 1].level];
	*out = (struct venue_level){ .price = L->price, .qty = L->qty, .orders = L->orders };
}

int venue_books_bbo(const struct venue_books *vb, uint8_t venue, uint16_t instrument,
		    struct venue_level *bid, struct venue_level *ask)
{
	if (!book_ok(vb, venue, instrument))
		return -1;
	if (bid)
		read_top(vb, side_of(vb, instrument, venue, WB_SIDE_BUY), bid);
	if (ask)
		read_top(vb, side_of(vb, instrument, venue, WB_SIDE_SELL), ask);
	return 0;
}

unsigned venue_books_depth(const struct venue_books *vb, uint8_t venue, uint16_t instrument,
			   uint8_t side, struct venue_level *out, unsigned max_levels)
{
	const struct book_side *s;
	unsigned n = 0;

	if (!book_ok(vb, venue, instrument) || !side_ok(side))
		return 0;
	s = side_of(vb, instrument, venue, side);
	for (uint32_t i = s->count; i > 0 && n < max_levels; i--) {
		const struct book_level *L;

		if (!s->e[i - 1].level)
			continue;
		L = &vb->levels[s->e[i - 1].level];
		out[n++] = (struct venue_level){ .price = L->price, .qty = L->qty, .orders = L->orders };
	}
	return n;
}

struct queue_ahead {
	const struct order *target;
	uint64_t shares;
	uint32_t orders;
};

static int count_ahead(void *ctx, const struct order *o)
{
	struct queue_ahead *q = ctx;

	if (o == q->target)
		return 1;
	q->shares += o->qty;
	q->orders++;
	return 0;
}

int venue_books_queue_position(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
			       uint64_t *shares_ahead, uint32_t *orders_ahead)
{
	const struct order *o = order_index_find(&vb->ix, venue, order_id);
	struct queue_ahead q = { .target = o };

	if (!o)
		return -1;
	fifo_each(vb, &vb->levels[order_level(o)], order_level(o), count_ahead, &q);
	if (shares_ahead)
		*shares_ahead = q.shares;
	if (orders_ahead)
		*orders_ahead = q.orders;
	return 0;
}

int venue_books_order(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
		      struct venue_order_info *info)
{
	const struct order *o = order_index_find(&vb->ix, venue, order_id);
	const struct book_level *L;

	if (!o)
		return -1;
	L = &vb->levels[order_level(o)];
	if (info)
		*info = (struct venue_order_info){
			.instrument = L->instrument, .side = L->side, .price = L->price, .qty = o->qty,
		};
	return 0;
}

struct each_order {
	venue_books_order_fn fn;
	void *ctx;
	int64_t price;
};

static int each_order_call(void *ctx, const struct order *o)
{
	struct each_order *e = ctx;

	e->fn(e->ctx, e->price, o->id, o->qty);
	return 0;
}

void venue_books_each_order(const struct venue_books *vb, uint8_t venue, uint16_t instrument, uint8_t side,
			    venue_books_order_fn fn, void *ctx)
{
	const struct book_side *s;
	struct each_order e = { .fn = fn, .ctx = ctx };

	if (!book_ok(vb, venue, instrument) || !side_ok(side))
		return;
	s = side_of(vb, instrument, venue, side);
	for (uint32_t k = 0; k < s->count; k++) {
		uint32_t li = s->e[k].level;

		if (!li)
			continue;
		e.price = vb->levels[li].price;
		fifo_each(vb, &vb->levels[li], li, each_order_call, &e);
	}
}

static int checksum_order(void *ctx, const struct order *o)
{
	uint64_t *h = ctx;

	*h = book_checksum_mix(*h, o->id);
	*h = book_checksum_mix(*h, o->qty);
	return 0;
}

uint64_t venue_books_checksum(const struct venue_books *vb, const struct book_tickers *t)
{
	uint64_t sum = 0, parts = 0;

	for (uint32_t v = 1; v < WB_VENUE_COUNT; v++)
		for (uint32_t i = 1; i < vb->max_instruments; i++) {
			/* One part per venue and instrument with levels: from the
			 * ticker, so the instrument's id does not count. */
			uint64_t h = book_checksum_mix(book_checksum_part(t, i), v);
			int levels = 0;

			for (uint8_t side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
				const struct book_side *s = side_of(vb, (uint16_t)i, (uint8_t)v, side);

				for (uint32_t k = s->count; k > 0; k--) {
					uint32_t li = s->e[k - 1].level;
					const struct book_level *L = &vb->levels[li];

					if (!li)
						continue;
					levels = 1;
					h = book_checksum_mix(h, side);
					h = book_checksum_mix(h, (uint64_t)L->price);
					h = book_checksum_mix(h, L->qty);
					h = book_checksum_mix(h, L->orders);
					fifo_each(vb, L, li, checksum_order, &h);
				}
			}
			if (levels) {
				sum += h;
				parts++;
			}
		}
	return book_checksum_mix(book_checksum_final(sum, parts), vb->ix.live);
}
