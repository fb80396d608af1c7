/*
 * Venue books: see venue_book.h for the contract.
 *
 * Layout, chosen for the ~2-4 cache misses an event can afford:
 *  - orders and the (venue, id) index: order_index.h;
 *  - price levels: a pool of 32-byte struct book_level (stable indices, so
 *    an order reaches its level in one load, without a price search); a
 *    level holds its totals, the head and tail of its FIFO (an intrusive
 *    doubly linked list through the orders) and what an update needs
 *    (price, instrument, venue, side), so a delete or execute emits its
 *    update from the level alone;
 *  - one struct book_side per (instrument, venue, side), directly indexed,
 *    bid and ask of one (instrument, venue) sharing a cache line; it holds
 *    a sorted array of sort keys (price for bids, ~price for asks, so both
 *    sides sort ascending with the best price last) and, beside it, the
 *    level index of each key. Activity is at the top of the book, which is
 *    the end of the array: a new best level is an append, a level near the
 *    top moves only the few entries above it, and a price lookup scans a
 *    handful of keys backwards from the top (8 keys a cache line) before
 *    falling back to a binary search deep in the book;
 *  - those arrays live in a size-class arena (power-of-two capacities,
 *    free list per class) carved from large NUMA-placed chunks: a side
 *    outgrowing its array moves to the next class; nothing is malloc'd
 *    after create unless a chunk runs out (counted in level_grows).
 */
#include "book/venue_book.h"
#include "book/order_index.h"
#include "book/venue_mem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct book_level {
	int64_t price;
	uint64_t qty;		/* total displayed shares */
	uint32_t orders;	/* also the free-list link while the level is free */
	uint32_t head, tail;	/* FIFO of order slots: head = first in priority */
	uint16_t instrument;
	uint8_t venue, side;
};

_Static_assert(sizeof(struct book_level) == 32, "two levels per cache line");

struct book_side {
	int64_t *keys;		/* ascending; best price at [count - 1] */
	uint32_t *levels;	/* level pool index of keys[i] */
	uint32_t count;
	uint32_t cap;		/* power of two, 0 before the first level */
	uint64_t reserved;
};

_Static_assert(sizeof(struct book_side) == 32, "bid and ask share a cache line");

#define ARENA_MIN_CAP 8u
#define ARENA_CLASSES 24u			/* capacities 8 .. 8 << 23 levels */
#define ARENA_CHUNK_BYTES ((size_t)4 << 20)
#define LEVEL_LINEAR_SCAN 16u			/* keys scanned from the top before bisecting */

struct arena_chunk {
	struct arena_chunk *next;
	size_t bytes;
	uint8_t pad[48];			/* blocks start 64-byte aligned */
};

struct level_arena {
	void *free_blocks[ARENA_CLASSES];	/* singly linked through the first word */
	char *bump, *end;
	struct arena_chunk *chunks;
};

struct venue_books {
	struct order_index ix;
	struct book_level *levels;		/* [level_cap], index 0 unused */
	uint32_t level_cap;
	uint32_t level_bump;
	uint32_t level_free;
	uint32_t max_instruments;
	struct book_side *sides;		/* [max_instruments][WB_VENUE_COUNT][2] */
	struct level_arena arena;
	int numa_node;				/* resolved: -1 = plain allocation */
	struct venue_books_counters c;
};

/* ---------------------------------------------------------------- memory */

static size_t side_array_bytes(uint32_t cap)
{
	return ((size_t)cap * (sizeof(int64_t) + sizeof(uint32_t)) + 63) & ~(size_t)63;
}

static int arena_add_chunk(struct venue_books *vb, size_t min_bytes)
{
	size_t bytes = ARENA_CHUNK_BYTES;
	struct arena_chunk *ch;

	if (bytes < min_bytes + sizeof(*ch))
		bytes = min_bytes + sizeof(*ch);
	ch = venue_mem_alloc(bytes, vb->numa_node);
	if (!ch)
		return -1;
	ch->next = vb->arena.chunks;
	ch->bytes = bytes;
	vb->arena.chunks = ch;
	vb->arena.bump = (char *)(ch + 1);
	vb->arena.end = (char *)ch + bytes;
	return 0;
}

static void *arena_alloc(struct venue_books *vb, uint32_t cap)
{
	struct level_arena *a = &vb->arena;
	unsigned k = (unsigned)__builtin_ctz(cap / ARENA_MIN_CAP);
	size_t bytes = side_array_bytes(cap);
	void *p;

	if (k >= ARENA_CLASSES)
		return NULL;
	p = a->free_blocks[k];
	if (p) {
		a->free_blocks[k] = *(void **)p;
		return p;
	}
	if ((size_t)(a->end - a->bump) < bytes) {
		if (arena_add_chunk(vb, bytes) < 0)
			return NULL;
		vb->c.level_grows++;
	}
	p = a->bump;
	a->bump += bytes;
	return p;
}

static void arena_free(struct venue_books *vb, void *p, uint32_t cap)
{
	unsigned k = (unsigned)__builtin_ctz(cap / ARENA_MIN_CAP);

	*(void **)p = vb->arena.free_blocks[k];
	vb->arena.free_blocks[k] = p;
}

/* Move a side to the next capacity class; 0 ok, -1 (side unchanged). */
static int side_grow(struct venue_books *vb, struct book_side *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : ARENA_MIN_CAP;
	char *block = arena_alloc(vb, cap);
	int64_t *keys;
	uint32_t *levels;

	if (!block)
		return -1;
	keys = (int64_t *)block;
	levels = (uint32_t *)(block + (size_t)cap * sizeof(int64_t));
	if (s->count) {
		memcpy(keys, s->keys, (size_t)s->count * sizeof(*keys));
		memcpy(levels, s->levels, (size_t)s->count * sizeof(*levels));
	}
	if (s->cap)
		arena_free(vb, s->keys, s->cap);
	s->keys = keys;
	s->levels = levels;
	s->cap = cap;
	return 0;
}

static int level_pool_grow(struct venue_books *vb)
{
	uint32_t cap = vb->level_cap * 2;
	struct book_level *bigger;

	if (vb->level_cap >= (1u << 30)) {
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
	if (order_index_init(&vb->ix, orders, vb->numa_node) < 0)
		goto fail;
	vb->level_cap = orders / 2 > 1024 ? orders / 2 : 1024;
	vb->level_bump = 1;
	vb->levels = venue_mem_alloc((size_t)vb->level_cap * sizeof(struct book_level), vb->numa_node);
	if (!vb->levels)
		goto fail;
	vb->sides = venue_mem_alloc((size_t)instruments * WB_VENUE_COUNT * 2 * sizeof(struct book_side),
				    vb->numa_node);
	if (!vb->sides)
		goto fail;
	if (arena_add_chunk(vb, 0) < 0)
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
	struct arena_chunk *ch, *next;

	if (!vb)
		return;
	for (ch = vb->arena.chunks; ch; ch = next) {
		next = ch->next;
		venue_mem_free(ch, ch->bytes, vb->numa_node);
	}
	venue_mem_free(vb->sides, (size_t)vb->max_instruments * WB_VENUE_COUNT * 2 * sizeof(struct book_side),
		       vb->numa_node);
	venue_mem_free(vb->levels, (size_t)vb->level_cap * sizeof(struct book_level), vb->numa_node);
	if (vb->ix.orders)
		order_index_fini(&vb->ix);
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

static inline struct book_side *side_of(const struct venue_books *vb, uint16_t instrument,
					uint8_t venue, uint8_t side)
{
	size_t i = ((size_t)instrument * WB_VENUE_COUNT + venue) * 2 + (side - 1u);

	return &vb->sides[i];
}

/* Number of keys <= key: a match, if any, is at the returned index - 1. */
static inline uint32_t side_upper_bound(const struct book_side *s, int64_t key)
{
	const int64_t *keys = s->keys;
	uint32_t i = s->count;
	uint32_t stop = i > LEVEL_LINEAR_SCAN ? i - LEVEL_LINEAR_SCAN : 0;
	uint32_t lo = 0, hi;

	while (i > stop && keys[i - 1] > key)
		i--;
	if (i > stop || i == 0)
		return i;
	/* Deep in the book: bisect [0, stop]. */
	hi = stop;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (keys[mid] > key)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The level at (instrument, venue, side, price), created empty if absent; 0 when out of memory. */
static uint32_t level_get(struct venue_books *vb, uint16_t instrument, uint8_t venue, uint8_t side,
			  int64_t price)
{
	struct book_side *s = side_of(vb, instrument, venue, side);
	int64_t key = sort_key(side, price);
	uint32_t pos = side_upper_bound(s, key);
	uint32_t li;
	struct book_level *L;

	if (pos && s->keys[pos - 1] == key)
		return s->levels[pos - 1];

	if (__builtin_expect(s->count == s->cap, 0) && side_grow(vb, s) < 0)
		return 0;
	li = vb->level_free;
	if (li) {
		vb->level_free = vb->levels[li].orders;
	} else {
		if (__builtin_expect(vb->level_bump >= vb->level_cap, 0) && level_pool_grow(vb) < 0)
			return 0;
		li = vb->level_bump++;
	}
	L = &vb->levels[li];
	*L = (struct book_level){ .price = price, .instrument = instrument, .venue = venue, .side = side };
	if (pos < s->count) {
		memmove(&s->keys[pos + 1], &s->keys[pos], (size_t)(s->count - pos) * sizeof(*s->keys));
		memmove(&s->levels[pos + 1], &s->levels[pos], (size_t)(s->count - pos) * sizeof(*s->levels));
	}
	s->keys[pos] = key;
	s->levels[pos] = li;
	s->count++;
	vb->c.levels++;
	return li;
}

/* Drop an empty level from its side and free it. */
static void level_release(struct venue_books *vb, uint32_t li)
{
	struct book_level *L = &vb->levels[li];
	struct book_side *s = side_of(vb, L->instrument, L->venue, L->side);
	uint32_t pos = side_upper_bound(s, sort_key(L->side, L->price)) - 1;

	if (pos + 1 < s->count) {
		memmove(&s->keys[pos], &s->keys[pos + 1], (size_t)(s->count - pos - 1) * sizeof(*s->keys));
		memmove(&s->levels[pos], &s->levels[pos + 1], (size_t)(s->count - pos - 1) * sizeof(*s->levels));
	}
	s->count--;
	L->orders = vb->level_free;
	vb->level_free = li;
	vb->c.levels--;
}

/* -------------------------------------------------------------- the FIFO */

static inline void fifo_append(struct venue_books *vb, uint32_t slot, uint32_t li)
{
	struct book_level *L = &vb->levels[li];
	struct order *o = order_at(&vb->ix, slot);

	o->level = li;
	o->prev = L->tail;
	o->next = 0;
	if (L->tail)
		order_at(&vb->ix, L->tail)->next = slot;
	else
		L->head = slot;
	L->tail = slot;
	L->orders++;
	L->qty += o->qty;
}

static inline void fifo_unlink(struct venue_books *vb, uint32_t slot)
{
	struct order *o = order_at(&vb->ix, slot);
	struct book_level *L = &vb->levels[o->level];

	if (o->prev)
		order_at(&vb->ix, o->prev)->next = o->next;
	else
		L->head = o->next;
	if (o->next)
		order_at(&vb->ix, o->next)->prev = o->prev;
	else
		L->tail = o->prev;
	L->orders--;
	L->qty -= o->qty;
}

/* ------------------------------------------------------------ the orders */

static inline void note_live(struct venue_books *vb)
{
	vb->c.live_orders = vb->ix.live;
	if (vb->c.live_orders > vb->c.peak_live_orders) {
		vb->c.peak_live_orders = vb->c.live_orders;
		/* The index can only have doubled when the peak moved. */
		vb->c.pool_grows = vb->ix.pool_grows;
		vb->c.index_grows = vb->ix.index_grows;
	}
}

/*
 * Add a new order resting at (instrument, venue, side, price) at the tail
 * of its level; returns its level, or 0 when out of memory (counted, no
 * order added).
 */
static uint32_t order_add(struct venue_books *vb, uint8_t venue, uint64_t id, uint16_t instrument,
			  uint8_t side, int64_t price, uint32_t qty)
{
	uint32_t slot = order_index_insert(&vb->ix, venue, id);
	uint32_t li;

	if (!slot) {
		vb->c.alloc_failures++;
		return 0;
	}
	li = level_get(vb, instrument, venue, side, price);
	if (!li) {
		order_index_erase(&vb->ix, slot);
		vb->c.alloc_failures++;
		return 0;
	}
	order_at(&vb->ix, slot)->qty = qty;
	fifo_append(vb, slot, li);
	note_live(vb);
	return li;
}

/* Take a live order out of its level and out of the index. */
static inline void order_remove(struct venue_books *vb, uint32_t slot)
{
	fifo_unlink(vb, slot);
	order_index_erase(&vb->ix, slot);
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
		level_release(vb, li);
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

static unsigned apply_add(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	uint32_t li;

	if (__builtin_expect(!instrument_ok(vb, ev->instrument), 0)) {
		vb->c.bad_instrument++;
		return 0;
	}
	if (__builtin_expect(!side_ok(ev->side) || e->qty == 0, 0)) {
		vb->c.bad_field++;
		return 0;
	}
	if (__builtin_expect(order_index_find(&vb->ix, ev->venue, e->order_id) != 0, 0)) {
		vb->c.duplicate_order++;
		return 0;
	}
	li = order_add(vb, ev->venue, e->order_id, ev->instrument, ev->side, e->price, e->qty);
	if (!li)
		return 0;
	emit_level(out, ev, &vb->levels[li]);
	return 1;
}

/* EXECUTE, EXECUTE_AT_PRICE, REDUCE: take shares off a live order. */
static unsigned apply_take(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	uint32_t slot = order_index_find(&vb->ix, ev->venue, e->order_id);
	struct order *o;
	struct book_level *L;
	uint32_t li, take;
	int64_t resting_price;
	unsigned n;

	if (__builtin_expect(!slot, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	o = order_at(&vb->ix, slot);
	li = o->level;
	L = &vb->levels[li];
	take = e->qty;
	if (__builtin_expect(take > o->qty, 0)) {
		vb->c.overfill++;
		take = o->qty;
	}
	resting_price = L->price;
	if (take == o->qty) {
		order_remove(vb, slot);
	} else {
		o->qty -= take;
		L->qty -= take;
	}
	/* The trade record needs the level's identity; copy it before the
	 * level may be freed. */
	n = 0;
	if (ev->kind == WB_EV_EXECUTE)
		n = emit_trade(&out[1], ev, L, resting_price, e->qty, e->ref);
	else if (ev->kind == WB_EV_EXECUTE_AT_PRICE && (ev->flags & WB_EVF_PRINTABLE))
		n = emit_trade(&out[1], ev, L, e->price, e->qty, e->ref);
	return emit_level_and_settle(vb, out, ev, li) + n;
}

static unsigned apply_delete(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	uint32_t slot = order_index_find(&vb->ix, ev->venue, ev->u.order.order_id);
	uint32_t li;

	if (__builtin_expect(!slot, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_at(&vb->ix, slot)->level;
	order_remove(vb, slot);
	return emit_level_and_settle(vb, out, ev, li);
}

static unsigned apply_replace(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	uint32_t slot = order_index_find(&vb->ix, ev->venue, e->order_id);
	uint32_t li, new_li;
	uint16_t instrument;
	uint8_t side;
	bool new_id_live;
	unsigned n;

	if (__builtin_expect(!slot, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	li = order_at(&vb->ix, slot)->level;
	instrument = vb->levels[li].instrument;
	side = vb->levels[li].side;
	new_id_live = e->ref != e->order_id && order_index_find(&vb->ix, ev->venue, e->ref) != 0;

	if (!new_id_live && e->qty != 0 && vb->levels[li].price == e->price) {
		/* Same price: the level stays (even if the old order was its
		 * only one), the new order joins at the back, one update. */
		order_remove(vb, slot);
		slot = order_index_insert(&vb->ix, ev->venue, e->ref);
		if (slot) {
			order_at(&vb->ix, slot)->qty = e->qty;
			fifo_append(vb, slot, li);
			note_live(vb);
		} else {
			vb->c.alloc_failures++;
		}
		return emit_level_and_settle(vb, out, ev, li);
	}

	order_remove(vb, slot);
	n = emit_level_and_settle(vb, out, ev, li);
	if (new_id_live) {
		vb->c.duplicate_order++;
		return n;
	}
	if (e->qty == 0) {
		vb->c.bad_field++;
		return n;
	}
	new_li = order_add(vb, ev->venue, e->ref, instrument, side, e->price, e->qty);
	if (!new_li)
		return n;
	emit_level(&out[n], ev, &vb->levels[new_li]);
	return n + 1;
}

static unsigned apply_modify(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	const struct wb_ev_order *e = &ev->u.order;
	uint32_t slot = order_index_find(&vb->ix, ev->venue, e->order_id);
	struct order *o;
	struct book_level *L;
	uint32_t li, new_li;
	uint16_t instrument;
	uint8_t side;
	unsigned n;

	if (__builtin_expect(!slot, 0)) {
		vb->c.unknown_order++;
		return 0;
	}
	o = order_at(&vb->ix, slot);
	li = o->level;
	L = &vb->levels[li];
	if (e->qty == 0) {
		/* Nothing left displayed: the order is gone. */
		order_remove(vb, slot);
		return emit_level_and_settle(vb, out, ev, li);
	}
	if (L->price == e->price) {
		if (ev->flags & WB_EVF_KEEPS_PRIORITY) {
			L->qty = L->qty - o->qty + e->qty;
			o->qty = e->qty;
		} else {
			fifo_unlink(vb, slot);
			o->qty = e->qty;
			fifo_append(vb, slot, li);
		}
		emit_level(out, ev, L);
		return 1;
	}
	/* New price: leave the old level, join the new one at its back. */
	instrument = L->instrument;
	side = L->side;
	fifo_unlink(vb, slot);
	n = emit_level_and_settle(vb, out, ev, li);
	new_li = level_get(vb, instrument, ev->venue, side, e->price);
	if (!new_li) {
		order_index_erase(&vb->ix, slot);
		vb->c.live_orders = vb->ix.live;
		vb->c.alloc_failures++;
		return n;
	}
	order_at(&vb->ix, slot)->qty = e->qty;
	fifo_append(vb, slot, new_li);
	emit_level(&out[n], ev, &vb->levels[new_li]);
	return n + 1;
}

/* Drop every order and level of one side. */
static void side_clear(struct venue_books *vb, struct book_side *s)
{
	for (uint32_t i = 0; i < s->count; i++) {
		uint32_t li = s->levels[i];
		uint32_t slot = vb->levels[li].head;

		while (slot) {
			uint32_t next = order_at(&vb->ix, slot)->next;

			order_index_erase(&vb->ix, slot);
			slot = next;
		}
		vb->levels[li].orders = vb->level_free;
		vb->level_free = li;
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
		side_clear(vb, side_of(vb, (uint16_t)i, ev->venue, WB_SIDE_BUY));
		side_clear(vb, side_of(vb, (uint16_t)i, ev->venue, WB_SIDE_SELL));
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

	if (ev->instrument >= vb->max_instruments) {
		vb->c.bad_instrument++;
		return 0;
	}
	u = emit_plain(out, ev, BOOK_UP_GAP);
	u->qty = ev->u.gap.count;
	u->u.seq = ev->u.gap.first;
	return 1;
}

unsigned venue_books_apply(struct venue_books *vb, const struct wb_event *ev, struct book_update *out)
{
	vb->c.events++;
	if (__builtin_expect(ev->venue == WB_VENUE_NONE || ev->venue >= WB_VENUE_COUNT, 0)) {
		vb->c.bad_venue++;
		return 0;
	}
	switch (ev->kind) {
	case WB_EV_ADD:
		vb->c.adds++;
		return apply_add(vb, ev, out);
	case WB_EV_DELETE:
		vb->c.deletes++;
		return apply_delete(vb, ev, out);
	case WB_EV_REPLACE:
		vb->c.replaces++;
		return apply_replace(vb, ev, out);
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
		vb->c.executes++;
		return apply_take(vb, ev, out);
	case WB_EV_REDUCE:
		vb->c.reduces++;
		return apply_take(vb, ev, out);
	case WB_EV_MODIFY:
		vb->c.modifies++;
		return apply_modify(vb, ev, out);
	case WB_EV_TRADE:
		vb->c.trades++;
		return apply_trade(vb, ev, out);
	case WB_EV_STATUS:
		vb->c.statuses++;
		return apply_status(vb, ev, out);
	case WB_EV_CLEAR:
		vb->c.clears++;
		return apply_clear(vb, ev, out);
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

void venue_books_prefetch(const struct venue_books *vb, const struct wb_event *ev)
{
	switch (ev->kind) {
	case WB_EV_ADD:
		if (instrument_ok(vb, ev->instrument) && side_ok(ev->side) && ev->venue < WB_VENUE_COUNT)
			__builtin_prefetch(side_of(vb, ev->instrument, ev->venue, ev->side), 0, 3);
		order_index_prefetch(&vb->ix, ev->venue, ev->u.order.order_id);
		break;
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
	case WB_EV_REDUCE:
	case WB_EV_DELETE:
	case WB_EV_REPLACE:
	case WB_EV_MODIFY:
		order_index_prefetch(&vb->ix, ev->venue, ev->u.order.order_id);
		break;
	default:
		break;
	}
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
	L = &vb->levels[s->levels[s->count - 1]];
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
	for (uint32_t i = s->count; i > 0 && n < max_levels; i--, n++) {
		const struct book_level *L = &vb->levels[s->levels[i - 1]];

		out[n] = (struct venue_level){ .price = L->price, .qty = L->qty, .orders = L->orders };
	}
	return n;
}

int venue_books_queue_position(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
			       uint64_t *shares_ahead, uint32_t *orders_ahead)
{
	uint32_t slot = order_index_find(&vb->ix, venue, order_id);
	uint64_t shares = 0;
	uint32_t orders = 0;

	if (!slot)
		return -1;
	for (uint32_t s = vb->levels[order_at(&vb->ix, slot)->level].head; s != slot;
	     s = order_at(&vb->ix, s)->next) {
		shares += order_at(&vb->ix, s)->qty;
		orders++;
	}
	if (shares_ahead)
		*shares_ahead = shares;
	if (orders_ahead)
		*orders_ahead = orders;
	return 0;
}

int venue_books_order(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
		      struct venue_order_info *info)
{
	uint32_t slot = order_index_find(&vb->ix, venue, order_id);
	const struct order *o;
	const struct book_level *L;

	if (!slot)
		return -1;
	o = order_at(&vb->ix, slot);
	L = &vb->levels[o->level];
	if (info)
		*info = (struct venue_order_info){
			.instrument = L->instrument, .side = L->side, .price = L->price, .qty = o->qty,
		};
	return 0;
}
