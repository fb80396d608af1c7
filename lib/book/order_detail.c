/*
 * Order detail: see order_detail.h for the contract, orders_layout.h for
 * what readers see.
 *
 * The writer's own tables, never shared: an order index (venue, id) ->
 * order slot (order_index.h, its level field holding the slot and its
 * qty field the slot's level, so both are fetched at once), and a
 * price index (book side, price) -> level slot, open addressing like the
 * venue books'. The shared arrays are flat and never move; free slots are
 * listed through their next field.
 */
#include "book/futex.h"
#include "book/order_detail.h"
#include "book/order_index.h"
#include "book/venue_mem.h"
#include "shm/orders_layout.h"
#include "wirebook/barrier.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define DEFAULT_ORDER_SLOTS (1u << 20)
#define DEFAULT_TRACK_SLOTS 4096u	/* the 1,000 virtual orders, and room for tracked ones */
#define MAX_WATCH 65536u

struct price_slot {
	int64_t price;
	uint32_t book;		/* book_of() */
	uint32_t level;		/* level slot; 0: empty */
};

struct lookahead;
static struct lookahead *lookahead_create(void);

struct order_detail {
	struct order_detail_fast fast;	/* first: order_detail_fast() */
	uint8_t *on;
	struct wb_ord_header *hdr;
	size_t size;
	struct wb_ord_symbol *sym;
	uint32_t *heads;
	struct wb_ord_level *lv;
	struct wb_ord_order *ord;
	struct wb_ord_track *trk;
	struct wb_ord_requests *req;
	size_t req_size;
	uint32_t order_slots, level_slots, track_slots;
	uint32_t free_order, free_level, bump_order, bump_level;
	struct order_index ix;
	struct price_slot *prices;
	uint32_t prices_mask;
	uint64_t req_seen;
	uint32_t unknown_tracked;	/* tracked, not seen yet */
	uint32_t *unknown;		/* [track_slots]: their tracking slots, unknown_tracked of them */
	uint32_t *virt_anchor;		/* [track_slots]: a virtual order's last real order ahead; 0: none */
	uint16_t *virt_on;		/* [capacity]: live virtual orders of the instrument */
	/* The live virtual orders of each instrument, linked by tracking slot + 1 (0: end): an
	 * event walks its instrument's, not every slot. */
	uint32_t *virt_first;		/* [capacity] */
	uint32_t *virt_next;		/* [track_slots] */
	uint32_t virt_live;
	struct lookahead *lookahead;	/* order_detail_lookahead()'s history: hints, not state */
	uint64_t *watch;		/* ticker keys whose ids are not learned yet */
	uint32_t watch_count;
	char name[256], req_name[256];
};

/* ---------------------------------------------------------------- shm */

static uint64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *map_new(const char *name, size_t size, int *err)
{
	int fd;
	void *p;

	shm_unlink(name);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		*err = -errno;
		close(fd);
		shm_unlink(name);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		*err = -errno;
		shm_unlink(name);
		return NULL;
	}
	/* Fault it all in now: a page first written on the path is a
	 * fault and a clear (measured: most of the detail's cost on a
	 * generated day without this). */
	venue_mem_prefault(p, size);
	return p;
}

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static int layout(struct order_detail *od, uint32_t capacity, int all, int *err)
{
	size_t off = sizeof(struct wb_ord_header);
	struct wb_ord_header *h;
	char *base;
	uint64_t symbols_off, heads_off, levels_off, orders_off, track_off;

	symbols_off = off;
	off += round64((size_t)capacity * sizeof(struct wb_ord_symbol));
	heads_off = off;
	off += round64((size_t)capacity * WB_BOOK_VENUES * 2 * sizeof(uint32_t));
	levels_off = off;
	off += round64((size_t)od->level_slots * sizeof(struct wb_ord_level));
	orders_off = off;
	off += (size_t)od->order_slots * sizeof(struct wb_ord_order);
	track_off = off;
	off += (size_t)od->track_slots * sizeof(struct wb_ord_track);
	base = map_new(od->name, off, err);
	if (!base)
		return -1;
	od->hdr = h = (struct wb_ord_header *)base;
	od->size = off;
	od->sym = (struct wb_ord_symbol *)(base + symbols_off);
	od->heads = (uint32_t *)(base + heads_off);
	od->lv = (struct wb_ord_level *)(base + levels_off);
	od->ord = (struct wb_ord_order *)(base + orders_off);
	od->trk = (struct wb_ord_track *)(base + track_off);
	*h = (struct wb_ord_header){
		.abi_version = WB_ORD_ABI_VERSION,
		.header_size = sizeof(*h),
		.capacity = capacity,
		.order_slots = od->order_slots,
		.level_slots = od->level_slots,
		.track_slots = od->track_slots,
		.total_size = off,
		.symbols_offset = symbols_off,
		.heads_offset = heads_off,
		.levels_offset = levels_off,
		.orders_offset = orders_off,
		.track_offset = track_off,
		.instance_id = now_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32),
		.builder_pid = (uint32_t)getpid(),
		.state = WB_SHM_LIVE,
		.detail_all = (uint32_t)!!all,
	};
	od->req_size = sizeof(struct wb_ord_requests) + (size_t)od->track_slots * sizeof(uint32_t);
	od->req = map_new(od->req_name, od->req_size, err);
	if (!od->req)
		return -1;
	/* Readers post requests: the object is theirs to write. */
	{
		int fd = shm_open(od->req_name, O_RDWR, 0);

		if (fd >= 0) {
			if (fchmod(fd, 0666) < 0)
				*err = 0;	/* only other users' readers are refused */
			close(fd);
		}
	}
	od->req->instance_id = h->instance_id;
	od->req->track_slots = od->track_slots;
	wb_store_release(&od->req->magic, WB_ORD_REQ_MAGIC);
	wb_store_release(&h->magic, WB_ORD_MAGIC);
	return 0;
}

struct order_detail *order_detail_create(const struct order_detail_config *cfg, int *err)
{
	struct order_detail *od = calloc(1, sizeof(*od));
	const char *name = cfg->shm_name ? cfg->shm_name : "wirebook";
	int e = 0;

	if (!od) {
		*err = -ENOMEM;
		return NULL;
	}
	while (*name == '/')
		name++;
	od->order_slots = cfg->order_slots ? cfg->order_slots : DEFAULT_ORDER_SLOTS;
	if (od->order_slots >= ORDER_MAX_LEVELS)
		od->order_slots = ORDER_MAX_LEVELS - 1;
	od->level_slots = od->order_slots / 2 > 1024 ? od->order_slots / 2 : 1024;
	od->track_slots = cfg->track_slots ? cfg->track_slots : DEFAULT_TRACK_SLOTS;
	od->fast.capacity = cfg->capacity ? cfg->capacity : VENUE_BOOKS_DEFAULT_INSTRUMENTS;
	if (snprintf(od->name, sizeof(od->name), "/%s.orders", name) >= (int)sizeof(od->name) ||
	    snprintf(od->req_name, sizeof(od->req_name), "/%s.orders-req", name) >= (int)sizeof(od->req_name)) {
		e = -ENAMETOOLONG;
		goto fail;
	}
	od->on = calloc(od->fast.capacity, 1);
	od->watch = calloc(MAX_WATCH, sizeof(uint64_t));
	od->virt_on = calloc(od->fast.capacity, sizeof(uint16_t));
	od->virt_anchor = calloc(od->track_slots, sizeof(uint32_t));
	od->unknown = calloc(od->track_slots, sizeof(uint32_t));
	od->virt_first = calloc(od->fast.capacity, sizeof(uint32_t));
	od->virt_next = calloc(od->track_slots, sizeof(uint32_t));
	od->lookahead = lookahead_create();
	for (od->prices_mask = 2047; od->prices_mask / 2 < od->level_slots; od->prices_mask = od->prices_mask * 2 + 1)
		;
	od->prices = venue_mem_alloc(((size_t)od->prices_mask + 1) * sizeof(struct price_slot), -1);
	if (!od->on || !od->watch || !od->prices || !od->virt_on || !od->virt_anchor || !od->unknown ||
	    !od->virt_first || !od->virt_next || !od->lookahead) {
		e = -ENOMEM;
		goto fail;
	}
	od->fast.on = od->on;
	if (order_index_init(&od->ix, od->order_slots, -1) < 0) {
		e = -errno;
		goto fail;
	}
	od->bump_order = od->bump_level = 1;
	if (layout(od, od->fast.capacity, cfg->all, &e) < 0)
		goto fail;
	if (cfg->all) {
		memset(od->on, 1, od->fast.capacity);
		od->on[0] = 0;
		od->fast.symbols_on = od->fast.capacity - 1;
		for (uint32_t i = 1; i < od->fast.capacity; i++)
			od->sym[i].flags = WB_ORDF_DETAIL;
	}
	return od;
fail:
	order_detail_destroy(od);
	*err = e ? e : -ENOMEM;
	return NULL;
}

void order_detail_set_state(struct order_detail *od, uint32_t state)
{
	wb_store_release(&od->hdr->state, state);
}

void order_detail_destroy(struct order_detail *od)
{
	if (!od)
		return;
	if (od->hdr) {
		order_detail_set_state(od, WB_SHM_RETIRED);
		munmap(od->hdr, od->size);
		shm_unlink(od->name);
	}
	if (od->req) {
		munmap(od->req, od->req_size);
		shm_unlink(od->req_name);
	}
	if (od->ix.buckets)
		order_index_fini(&od->ix);
	if (od->prices)
		venue_mem_free(od->prices, ((size_t)od->prices_mask + 1) * sizeof(struct price_slot), -1);
	free(od->watch);
	free(od->virt_on);
	free(od->virt_anchor);
	free(od->unknown);
	free(od->virt_first);
	free(od->virt_next);
	free(od->lookahead);
	free(od->on);
	free(od);
}

/* ------------------------------------------------------- the seqlock */

static void sym_begin(struct order_detail *od, uint16_t i)
{
	struct wb_ord_symbol *s = &od->sym[i];

	/* The odd sequence is visible before any change (the release of the
	 * next even one orders the changes before it; this fence, the
	 * changes after the odd one). */
	wb_store_relaxed(&s->seq, s->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void sym_end(struct order_detail *od, uint16_t i)
{
	struct wb_ord_symbol *s = &od->sym[i];

	s->updates++;
	wb_store_release(&s->seq, s->seq + 1);
}

/* ------------------------------------------------------- price index */

static uint32_t book_of(uint16_t instrument, uint8_t venue, uint8_t side)
{
	return ((uint32_t)instrument * WB_BOOK_VENUES + venue) * 2 + (side - 1u);
}

static uint32_t price_home(const struct order_detail *od, uint32_t book, int64_t price)
{
	uint64_t h = ((uint64_t)price + (uint64_t)book * 0xc2b2ae3d27d4eb4full) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & od->prices_mask;
}

static struct price_slot *price_find(const struct order_detail *od, uint32_t book, int64_t price)
{
	for (uint32_t b = price_home(od, book, price);; b = (b + 1) & od->prices_mask) {
		struct price_slot *ps = &od->prices[b];

		if (!ps->level || (ps->price == price && ps->book == book))
			return ps;
	}
}

static void price_erase(struct order_detail *od, struct price_slot *ps)
{
	uint32_t mask = od->prices_mask, hole = (uint32_t)(ps - od->prices), b = hole;

	for (;;) {
		struct price_slot *next;
		uint32_t home;

		b = (b + 1) & mask;
		next = &od->prices[b];
		if (!next->level)
			break;
		home = price_home(od, next->book, next->price);
		if (((b - home) & mask) >= ((b - hole) & mask)) {
			od->prices[hole] = *next;
			hole = b;
		}
	}
	od->prices[hole] = (struct price_slot){ 0 };
}

/* ------------------------------------------------------------ levels */

/* The level of (book, price), made if new; 0 when out of slots. */
static uint32_t level_get(struct order_detail *od, uint16_t instrument, uint8_t venue, uint8_t side, int64_t price)
{
	uint32_t book = book_of(instrument, venue, side), li;
	struct price_slot *ps = price_find(od, book, price);
	struct wb_ord_level *L;

	if (ps->level)
		return ps->level;
	if (od->free_level) {
		li = od->free_level;
		od->free_level = od->lv[li].next;
	} else if (od->bump_level < od->level_slots) {
		li = od->bump_level++;
	} else {
		return 0;
	}
	L = &od->lv[li];
	*L = (struct wb_ord_level){
		.price = price, .instrument = instrument, .venue = venue, .side = side, .next = od->heads[book],
	};
	if (L->next)
		od->lv[L->next].prev = li;
	od->heads[book] = li;
	*ps = (struct price_slot){ .price = price, .book = book, .level = li };
	return li;
}

static void level_drop(struct order_detail *od, uint32_t li)
{
	struct wb_ord_level *L = &od->lv[li];
	uint32_t book = book_of(L->instrument, L->venue, L->side);

	if (L->prev)
		od->lv[L->prev].next = L->next;
	else
		od->heads[book] = L->next;
	if (L->next)
		od->lv[L->next].prev = L->prev;
	price_erase(od, price_find(od, book, L->price));
	L->orders = 0;
	L->next = od->free_level;
	od->free_level = li;
}

/* ------------------------------------------------------------ tracking */

/* Tracking slot t waits for its order (state WB_QUEUE_UNKNOWN), or no longer does. */
static void unknown_add(struct order_detail *od, uint32_t t)
{
	od->unknown[od->unknown_tracked++] = t;
	od->fast.pending = od->unknown_tracked;
}

static void unknown_drop(struct order_detail *od, uint32_t t)
{
	for (uint32_t k = 0; k < od->unknown_tracked; k++)
		if (od->unknown[k] == t) {
			od->unknown[k] = od->unknown[--od->unknown_tracked];
			break;
		}
	od->fast.pending = od->unknown_tracked;
}

/* The tracking slot waiting for (venue, id), or -1. */
static int unknown_find(const struct order_detail *od, uint8_t venue, uint64_t id)
{
	for (uint32_t k = 0; k < od->unknown_tracked; k++) {
		const struct wb_ord_track *T = &od->trk[od->unknown[k]];

		if (T->order_id == id && T->venue == venue)
			return (int)od->unknown[k];
	}
	return -1;
}

/* Publish a tracking slot's new state (tmp), if it changed. */
static void track_store(struct order_detail *od, uint32_t t, const struct wb_ord_track *tmp, const struct wb_event *ev)
{
	struct wb_ord_track *T = &od->trk[t];
	uint32_t seq = T->seq;

	if (tmp->state == WB_QUEUE_UNKNOWN && T->state != WB_QUEUE_UNKNOWN && !T->is_virtual)
		unknown_add(od, t);	/* its symbol's detail went: it waits to be seen again */
	if (T->state == tmp->state && T->qty == tmp->qty && T->shares_ahead == tmp->shares_ahead &&
	    T->orders_ahead == tmp->orders_ahead && T->shares_behind == tmp->shares_behind &&
	    T->level_qty == tmp->level_qty && T->level_orders == tmp->level_orders && T->price == tmp->price &&
	    T->filled_qty == tmp->filled_qty && T->fills == tmp->fills)
		return;
	wb_store_relaxed(&T->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	T->state = tmp->state;
	T->side = tmp->side;
	T->instrument = tmp->instrument;
	T->price = tmp->price;
	T->qty = tmp->qty;
	T->filled_qty = tmp->filled_qty;
	T->shares_ahead = tmp->shares_ahead;
	T->orders_ahead = tmp->orders_ahead;
	T->shares_behind = tmp->shares_behind;
	T->orders_behind = tmp->orders_behind;
	T->level_qty = tmp->level_qty;
	T->level_orders = tmp->level_orders;
	T->exch_ts = ev ? ev->exch_ts : 0;
	T->recv_ts = ev ? ev->recv_ts : 0;
	T->fills = tmp->fills;
	T->last_fill_qty = tmp->last_fill_qty;
	T->fill_exch_ts = tmp->fill_exch_ts;
	T->fill_recv_ts = tmp->fill_recv_ts;
	T->fill_seq = tmp->fill_seq;
	T->changes++;
	wb_store_release(&T->seq, seq + 2);
	/* Against wb_queue_wait's count-then-look: a waiter that counted
	 * itself after this fence sees the new sequence and does not sleep. */
	wb_full_fence();
	if (wb_load_relaxed(&od->req->waiters[t]))
		futex_wake_shared_all(&T->seq);
}

/* Every tracked order of level li: where it stands now. */
static void level_positions(struct order_detail *od, uint32_t li, const struct wb_event *ev)
{
	const struct wb_ord_level *L = &od->lv[li];
	uint64_t ahead = 0;
	uint32_t n = 0;

	for (uint32_t s = L->head; s; s = od->ord[s].next, n++) {
		const struct wb_ord_order *o = &od->ord[s];

		if (o->track) {
			struct wb_ord_track tmp = od->trk[o->track - 1];

			tmp.state = tmp.filled_qty ? WB_QUEUE_PARTLY_FILLED : WB_QUEUE_RESTING;
			tmp.side = L->side;
			tmp.instrument = L->instrument;
			tmp.price = L->price;
			tmp.qty = o->qty;
			tmp.shares_ahead = ahead;
			tmp.orders_ahead = n;
			tmp.shares_behind = L->qty - ahead - o->qty;
			tmp.orders_behind = L->orders - n - 1;
			tmp.level_qty = L->qty;
			tmp.level_orders = L->orders;
			track_store(od, o->track - 1, &tmp, ev);
		}
		ahead += o->qty;
	}
}

/* A tracked order left the book (state FILLED or CANCELLED). */
static void track_gone(struct order_detail *od, uint32_t t, uint8_t state, const struct wb_event *ev)
{
	struct wb_ord_track tmp = od->trk[t];

	tmp.state = state;
	tmp.qty = 0;
	tmp.shares_ahead = tmp.shares_behind = tmp.level_qty = 0;
	tmp.orders_ahead = tmp.orders_behind = tmp.level_orders = 0;
	track_store(od, t, &tmp, ev);
}

/* A new order slot s: the tracking slot waiting for it, if any. */
static void track_attach(struct order_detail *od, uint32_t s, uint8_t venue)
{
	struct wb_ord_order *o = &od->ord[s];
	int t = unknown_find(od, venue, o->id);

	if (t < 0)
		return;
	o->track = (uint32_t)t + 1;
	od->lv[o->level].tracked++;
	unknown_drop(od, (uint32_t)t);
}

/* -------------------------------------------------------------- orders */

static void virt_reanchor(struct order_detail *od, uint32_t s);

/* Inlined (two or three calls an event): a call cost as much as the links. */
static inline __attribute__((always_inline)) void fifo_unlink(struct order_detail *od, uint32_t s)
{
	struct wb_ord_order *o = &od->ord[s];
	struct wb_ord_level *L = &od->lv[o->level];

	if (__builtin_expect(o->virt_anchors != 0, 0))
		virt_reanchor(od, s);
	if (o->prev)
		od->ord[o->prev].next = o->next;
	else
		L->head = o->next;
	if (o->next)
		od->ord[o->next].prev = o->prev;
	else
		L->tail = o->prev;
	L->qty -= o->qty;
	L->orders--;
}

static inline __attribute__((always_inline)) void fifo_append(struct order_detail *od, uint32_t s, uint32_t li)
{
	struct wb_ord_order *o = &od->ord[s];
	struct wb_ord_level *L = &od->lv[li];

	o->level = li;
	o->next = 0;
	o->prev = L->tail;
	if (L->tail)
		od->ord[L->tail].next = s;
	else
		L->head = s;
	L->tail = s;
	L->qty += o->qty;
	L->orders++;
}

static void virt_level(struct order_detail *od, uint32_t li, uint64_t executed, const struct wb_event *ev);

/*
 * After an order left level li (or changed on it; executed: the shares an
 * execution took there): positions, and the level freed when empty.
 */
static inline void level_settle(struct order_detail *od, uint32_t li, uint64_t executed, const struct wb_event *ev)
{
	const struct wb_ord_level *L = &od->lv[li];

	if (__builtin_expect(L->tracked != 0, 0))
		level_positions(od, li, ev);
	if (__builtin_expect(od->virt_live != 0, 0) && od->virt_on[L->instrument])
		virt_level(od, li, executed, ev);
	if (!L->orders)
		level_drop(od, li);
}

/* A new order at the back of its price; 0 when out of slots (counted, the symbol marked). */
static uint32_t order_new(struct order_detail *od, uint16_t instrument, uint8_t venue, uint8_t side, int64_t price,
			  uint64_t id, uint32_t qty, const struct wb_event *ev)
{
	uint32_t s, li;
	struct wb_ord_order *o;

	if (order_index_reserve(&od->ix) < 0)
		goto full;
	if (od->free_order) {
		s = od->free_order;
		od->free_order = od->ord[s].next;
	} else if (od->bump_order < od->order_slots) {
		s = od->bump_order++;
	} else {
		goto full;
	}
	li = level_get(od, instrument, venue, side, price);
	if (!li) {
		od->ord[s].next = od->free_order;
		od->free_order = s;
		goto full;
	}
	o = &od->ord[s];
	*o = (struct wb_ord_order){
		.id = id, .qty = qty, .join_ts = ev ? ev->exch_ts : 0, .join_recv_ts = ev ? ev->recv_ts : 0,
	};
	if (ev && ev->kind == WB_EV_ADD)
		memcpy(o->mpid, ev->u.order.mpid, sizeof(o->mpid));
	fifo_append(od, s, li);
	/* Reserved above: the index cannot double between. */
	order_index_fill(&od->ix, order_index_slot(&od->ix, venue, id), venue, id, li, s);
	od->sym[instrument].orders++;
	if (od->unknown_tracked)
		track_attach(od, s, venue);
	return s;
full:
	wb_store_relaxed(&od->hdr->slot_overflows, od->hdr->slot_overflows + 1);
	od->sym[instrument].flags |= WB_ORDF_INCOMPLETE;
	return 0;
}

static inline __attribute__((always_inline)) void order_free(struct order_detail *od, struct order *ix_slot,
							   uint32_t s, uint16_t instrument)
{
	order_index_erase(&od->ix, ix_slot);
	od->ord[s].next = od->free_order;
	od->ord[s].track = 0;
	od->free_order = s;
	od->sym[instrument].orders--;
}

static bool fills(const struct wb_event *ev)
{
	return ev && (ev->kind == WB_EV_EXECUTE || ev->kind == WB_EV_EXECUTE_AT_PRICE);
}

/* Remove (venue, id) from the detail, if there; state for its tracking. */
static void order_gone(struct order_detail *od, uint8_t venue, uint64_t id, uint8_t state, const struct wb_event *ev)
{
	struct order *x = order_index_find(&od->ix, venue, id);
	uint32_t s, li, track;
	uint16_t instrument;
	uint64_t executed;

	if (!x)
		return;
	/* The bucket names both the slot and its level: two misses side by
	 * side, not one after the other. */
	s = order_level(x);
	li = x->qty;
	instrument = od->lv[li].instrument;
	track = od->ord[s].track;
	executed = fills(ev) ? od->ord[s].qty : 0;
	if (track && fills(ev))
		od->trk[track - 1].filled_qty += od->ord[s].qty;
	fifo_unlink(od, s);
	if (track) {
		od->lv[li].tracked--;
		track_gone(od, track - 1, state, ev);
	}
	order_free(od, x, s, instrument);
	level_settle(od, li, executed, ev);
}

/*
 * Make the detail of (venue, id) what the venue books now hold after ev:
 * gone, new at the back, moved to another price's back, requeued, or
 * with fewer shares in place.
 */
static void order_sync(struct order_detail *od, const struct venue_books *vb, uint8_t venue, uint64_t id,
		       const struct wb_event *ev)
{
	struct venue_order_info info;
	struct order *x;
	struct wb_ord_order *o;
	uint32_t s, li;

	if (venue_books_order(vb, venue, id, &info) < 0) {
		order_gone(od, venue, id, fills(ev) ? WB_QUEUE_FILLED : WB_QUEUE_CANCELLED, ev);
		return;
	}
	if (info.instrument >= od->fast.capacity || !od->on[info.instrument])
		return;
	x = order_index_find(&od->ix, venue, id);
	if (!x) {
		s = order_new(od, info.instrument, venue, info.side, info.price, id, info.qty, ev);
		if (s)
			level_settle(od, od->ord[s].level, 0, ev);
		return;
	}
	s = order_level(x);
	o = &od->ord[s];
	li = x->qty;
	if (od->lv[li].price != info.price ||
	    (ev->kind == WB_EV_MODIFY && !(ev->flags & WB_EVF_KEEPS_PRIORITY))) {
		/* Lost its place: to the back of its (maybe new) price. */
		uint32_t nli = level_get(od, info.instrument, venue, info.side, info.price);
		uint32_t track = o->track;

		if (!nli) {
			order_gone(od, venue, id, WB_QUEUE_CANCELLED, ev);
			wb_store_relaxed(&od->hdr->slot_overflows, od->hdr->slot_overflows + 1);
			od->sym[info.instrument].flags |= WB_ORDF_INCOMPLETE;
			return;
		}
		fifo_unlink(od, s);
		if (track)
			od->lv[li].tracked--;
		o->qty = info.qty;
		o->join_ts = ev->exch_ts;
		o->join_recv_ts = ev->recv_ts;
		fifo_append(od, s, nli);
		x->qty = nli;
		if (track)
			od->lv[nli].tracked++;
		if (li != nli)
			level_settle(od, li, 0, ev);
		level_settle(od, nli, 0, ev);
		return;
	}
	uint64_t executed = 0;

	if (o->qty != info.qty) {
		uint32_t taken = o->qty - info.qty;

		if (fills(ev))
			executed = taken;
		if (o->track && fills(ev))
			od->trk[o->track - 1].filled_qty += taken;
		od->lv[li].qty -= taken;
		o->qty = info.qty;
	}
	level_settle(od, li, executed, ev);
}

/*
 * The kinds whose outcome the event and the books' updates say without
 * asking the books (venue_books_order, a second index probe), as
 * venue_book.h specifies them. The detail holds an order only while the
 * books do, so an id it does not hold is not in the books either.
 *
 * An ADD the books took (an update: they refuse a bad field, a live id,
 * or find no memory, with none) rests at the back of its price, as the
 * event says; one they refused changed nothing.
 */
static void order_added(struct order_detail *od, const struct wb_event *ev, const struct book_update *ups,
			unsigned k)
{
	uint32_t s;

	if (!k || ups[0].kind != BOOK_UP_LEVEL)
		return;
	s = order_new(od, ev->instrument, ev->venue, ev->side, ev->u.order.price, ev->u.order.order_id,
		      ev->u.order.qty, ev);
	if (s)
		level_settle(od, od->ord[s].level, 0, ev);
}

/* EXECUTE, EXECUTE_AT_PRICE, REDUCE: shares off in place, the order gone when none is left (overfill clamped). */
static void order_taken(struct order_detail *od, uint8_t venue, const struct wb_event *ev)
{
	struct order *x = order_index_find(&od->ix, venue, ev->u.order.order_id);
	struct wb_ord_order *o;
	uint64_t take;
	uint32_t li;

	if (!x)
		return;
	o = &od->ord[order_level(x)];
	take = ev->u.order.qty;
	if (take >= o->qty) {
		order_gone(od, venue, ev->u.order.order_id, fills(ev) ? WB_QUEUE_FILLED : WB_QUEUE_CANCELLED, ev);
		return;
	}
	li = x->qty;
	if (take) {
		if (o->track && fills(ev))
			od->trk[o->track - 1].filled_qty += take;
		od->lv[li].qty -= take;
		o->qty -= (uint32_t)take;
	}
	level_settle(od, li, fills(ev) ? take : 0, ev);
}


/* ------------------------------------------------------ virtual orders */

/*
 * A virtual order stands right behind its anchor, the last real order
 * ahead of it at its price (0: none ahead), and is never in the FIFO
 * readers walk. Orders joining later go behind it by construction; when
 * the anchor leaves the queue, the one before it becomes the anchor.
 */

static bool virt_live_slot(const struct wb_ord_track *T)
{
	return T->in_use && T->is_virtual && (T->state == WB_QUEUE_RESTING || T->state == WB_QUEUE_PARTLY_FILLED);
}

/* Virtual order t joins (rests) or leaves its instrument's list. */
static void virt_link(struct order_detail *od, uint32_t t, uint16_t instrument)
{
	od->virt_next[t] = od->virt_first[instrument];
	od->virt_first[instrument] = t + 1;
	od->virt_on[instrument]++;
	od->virt_live++;
}

static void virt_unlink(struct order_detail *od, uint32_t t, uint16_t instrument)
{
	for (uint32_t *p = &od->virt_first[instrument]; *p; p = &od->virt_next[*p - 1])
		if (*p == t + 1) {
			*p = od->virt_next[t];
			break;
		}
	od->virt_on[instrument]--;
	od->virt_live--;
}

static void virt_reanchor(struct order_detail *od, uint32_t s)
{
	struct wb_ord_order *o = &od->ord[s];

	for (uint32_t t1 = od->virt_first[od->lv[o->level].instrument], t; t1; t1 = od->virt_next[t]) {
		t = t1 - 1;
		if (od->virt_anchor[t] == s && virt_live_slot(&od->trk[t])) {
			od->virt_anchor[t] = o->prev;
			if (o->prev)
				od->ord[o->prev].virt_anchors++;
		}
	}
	o->virt_anchors = 0;
}

/* Where virtual order t stands in level li (0: no real order at its price). */
static void virt_position(const struct order_detail *od, uint32_t t, uint32_t li, struct wb_ord_track *tmp)
{
	uint32_t anchor = od->virt_anchor[t], na = 0, nb = 0;
	uint64_t ahead = 0, behind = 0;
	bool passed = !anchor;

	for (uint32_t s = li ? od->lv[li].head : 0; s; s = od->ord[s].next) {
		if (passed) {
			behind += od->ord[s].qty;
			nb++;
		} else {
			ahead += od->ord[s].qty;
			na++;
		}
		if (s == anchor)
			passed = true;
	}
	tmp->shares_ahead = ahead;
	tmp->orders_ahead = na;
	tmp->shares_behind = behind;
	tmp->orders_behind = nb;
	tmp->level_qty = ahead + behind;
	tmp->level_orders = na + nb;
}

/* Virtual order t leaves the queue (filled or cancelled). */
static void virt_release(struct order_detail *od, uint32_t t, struct wb_ord_track *tmp, uint8_t state)
{
	uint32_t anchor = od->virt_anchor[t];

	if (anchor)
		od->ord[anchor].virt_anchors--;
	od->virt_anchor[t] = 0;
	virt_unlink(od, t, od->trk[t].instrument);
	tmp->state = state;
	tmp->shares_ahead = tmp->shares_behind = tmp->level_qty = 0;
	tmp->orders_ahead = tmp->orders_behind = tmp->level_orders = 0;
}

/*
 * Level li changed (an execution took executed shares there): the
 * virtual orders of its book side that it fills or moves.
 */
static void virt_level(struct order_detail *od, uint32_t li, uint64_t executed, const struct wb_event *ev)
{
	const struct wb_ord_level *L = &od->lv[li];

	for (uint32_t t1 = od->virt_first[L->instrument], t; t1; t1 = od->virt_next[t]) {
		const struct wb_ord_track *T = &od->trk[t1 - 1];
		struct wb_ord_track tmp;
		uint64_t fill = 0;

		t = t1 - 1;	/* virt_release below unlinks t, whose link stays readable */
		if (!virt_live_slot(T) || T->instrument != L->instrument || T->venue != L->venue || T->side != L->side)
			continue;
		if (executed) {
			if (L->price == T->price)
				fill = executed > T->shares_ahead ? executed - T->shares_ahead : 0;
			else if (T->side == WB_SIDE_BUY ? L->price < T->price : L->price > T->price)
				fill = T->qty;
		}
		if (!fill && L->price != T->price)
			continue;
		tmp = *T;
		if (fill) {
			if (fill > tmp.qty)
				fill = tmp.qty;
			tmp.qty -= fill;
			tmp.filled_qty += fill;
			tmp.fills++;
			tmp.last_fill_qty = fill;
			tmp.fill_exch_ts = ev->exch_ts;
			tmp.fill_recv_ts = ev->recv_ts;
			tmp.fill_seq = ev->seq;
		}
		if (!tmp.qty) {
			virt_release(od, t, &tmp, WB_QUEUE_FILLED);
		} else {
			tmp.state = tmp.filled_qty ? WB_QUEUE_PARTLY_FILLED : WB_QUEUE_RESTING;
			virt_position(od, t, li, &tmp);
		}
		track_store(od, t, &tmp, ev);
	}
}

static int virt_find(const struct order_detail *od, uint64_t id)
{
	for (uint32_t t = 0; t < od->track_slots; t++)
		if (od->trk[t].in_use && od->trk[t].is_virtual && od->trk[t].order_id == id)
			return (int)t;
	return -1;
}

/* Would a buy (sell) at price trade against the venue's real asks (bids)? */
static bool virt_marketable(const struct order_detail *od, uint16_t instrument, uint8_t venue, uint8_t side,
			    int64_t price)
{
	uint8_t opposite = side == WB_SIDE_BUY ? WB_SIDE_SELL : WB_SIDE_BUY;

	for (uint32_t li = od->heads[book_of(instrument, venue, opposite)]; li; li = od->lv[li].next)
		if (side == WB_SIDE_BUY ? od->lv[li].price <= price : od->lv[li].price >= price)
			return true;
	return false;
}

int order_detail_virtual_place(struct order_detail *od, const struct venue_books *vb, uint64_t id,
			       uint16_t instrument, uint8_t venue, uint8_t side, int64_t price, uint32_t qty)
{
	uint32_t free_t = UINT32_MAX;
	struct wb_ord_track tmp;
	struct wb_ord_track *T;
	uint32_t seq, li;

	if (!instrument || instrument >= od->fast.capacity || !venue || venue >= WB_VENUE_COUNT ||
	    (side != WB_SIDE_BUY && side != WB_SIDE_SELL) || !qty || virt_find(od, id) >= 0)
		return -1;
	for (uint32_t t = 0; t < od->track_slots && free_t == UINT32_MAX; t++)
		if (!od->trk[t].in_use)
			free_t = t;
	if (free_t == UINT32_MAX)
		return -1;
	if (!od->on[instrument])
		order_detail_set(od, vb, instrument, 1);
	T = &od->trk[free_t];
	seq = T->seq;
	wb_store_relaxed(&T->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*T = (struct wb_ord_track){ .seq = seq + 1, .in_use = 1, .is_virtual = 1, .order_id = id, .venue = venue,
				    .side = side, .instrument = instrument, .price = price, .qty = qty,
				    .state = WB_QUEUE_UNKNOWN };
	wb_store_release(&T->seq, seq + 2);
	tmp = *T;
	if (virt_marketable(od, instrument, venue, side, price)) {
		tmp.state = WB_QUEUE_REFUSED;
		tmp.qty = 0;
	} else {
		li = price_find(od, book_of(instrument, venue, side), price)->level;
		od->virt_anchor[free_t] = li ? od->lv[li].tail : 0;
		if (od->virt_anchor[free_t])
			od->ord[od->virt_anchor[free_t]].virt_anchors++;
		virt_link(od, free_t, instrument);
		tmp.state = WB_QUEUE_RESTING;
		virt_position(od, free_t, li, &tmp);
	}
	track_store(od, free_t, &tmp, NULL);
	return 0;
}

int order_detail_virtual_cancel(struct order_detail *od, uint64_t id)
{
	int t = virt_find(od, id);
	struct wb_ord_track *T;

	if (t < 0)
		return -1;
	T = &od->trk[t];
	if (virt_live_slot(T)) {
		struct wb_ord_track tmp = *T;

		virt_release(od, (uint32_t)t, &tmp, WB_QUEUE_CANCELLED);
		track_store(od, (uint32_t)t, &tmp, NULL);
		return 0;
	}
	/* Done already: the reader has read it, the slot is free again. */
	wb_store_relaxed(&T->seq, T->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	T->in_use = 0;
	T->is_virtual = 0;
	wb_store_release(&T->seq, T->seq + 1);
	if (wb_load_relaxed(&od->req->waiters[t]))
		futex_wake_shared_all(&T->seq);
	return 0;
}

/* The instrument's detail goes: its virtual orders cannot be kept. */
static void virt_cancel_instrument(struct order_detail *od, uint16_t instrument)
{
	for (uint32_t t1 = od->virt_first[instrument], t; t1; t1 = od->virt_next[t]) {
		t = t1 - 1;
		if (virt_live_slot(&od->trk[t]))
			order_detail_virtual_cancel(od, od->trk[t].order_id);
	}
}

/* ------------------------------------------------------------ symbols */

struct seed {
	struct order_detail *od;
	uint16_t instrument;
	uint8_t venue, side;
};

static void seed_order(void *ctx, int64_t price, uint64_t id, uint32_t qty)
{
	struct seed *sd = ctx;

	order_new(sd->od, sd->instrument, sd->venue, sd->side, price, id, qty, NULL);
}

/* Drop every order of (venue, instrument)'s books. */
static void books_clear(struct order_detail *od, uint8_t venue, uint16_t instrument, uint8_t state,
			const struct wb_event *ev)
{
	for (uint8_t side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
		uint32_t book = book_of(instrument, venue, side);

		while (od->heads[book]) {
			uint32_t li = od->heads[book];

			while (od->lv[li].head)
				order_gone(od, venue, od->ord[od->lv[li].head].id, state, ev);
			/* order_gone dropped the level with its last order */
		}
	}
}

int order_detail_set(struct order_detail *od, const struct venue_books *vb, uint16_t instrument, int on)
{
	if (instrument == 0 || instrument >= od->fast.capacity)
		return -1;
	if (!!on == od->on[instrument])
		return 0;
	sym_begin(od, instrument);
	if (on) {
		od->on[instrument] = 1;
		od->fast.symbols_on++;
		for (uint8_t v = 1; v < WB_VENUE_COUNT; v++)
			for (uint8_t side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
				struct seed sd = { od, instrument, v, side };
				uint32_t book = book_of(instrument, v, side);

				venue_books_each_order(vb, v, instrument, side, seed_order, &sd);
				for (uint32_t li = od->heads[book]; li; li = od->lv[li].next)
					if (od->lv[li].tracked)
						level_positions(od, li, NULL);
			}
		od->sym[instrument].flags |= WB_ORDF_DETAIL;
	} else {
		virt_cancel_instrument(od, instrument);
		for (uint8_t v = 1; v < WB_VENUE_COUNT; v++)
			books_clear(od, v, instrument, WB_QUEUE_UNKNOWN, NULL);
		od->on[instrument] = 0;
		od->fast.symbols_on--;
		od->sym[instrument].flags = 0;
	}
	sym_end(od, instrument);
	return 0;
}

static uint64_t ticker_key(const char *t, size_t len)
{
	char padded[8];
	uint64_t k;

	memset(padded, ' ', sizeof(padded));
	memcpy(padded, t, len);
	memcpy(&k, padded, sizeof(k));
	return k;
}

int order_detail_watch(struct order_detail *od, const char *tickers)
{
	const char *p = tickers;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == 0 || len > 8 || od->watch_count >= MAX_WATCH)
			return -1;
		od->watch[od->watch_count++] = ticker_key(p, len);
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int order_detail_watches(const struct order_detail *od, const char ticker[8])
{
	uint64_t key;

	memcpy(&key, ticker, sizeof(key));
	for (uint32_t w = 0; w < od->watch_count; w++)
		if (od->watch[w] == key)
			return 1;
	return 0;
}

static void learn_symbol(struct order_detail *od, const struct venue_books *vb, const struct book_update *u)
{
	uint64_t key;

	if (!od->watch_count)
		return;
	memcpy(&key, u->u.ticker, sizeof(key));
	for (uint32_t w = 0; w < od->watch_count; w++)
		if (od->watch[w] == key) {
			order_detail_set(od, vb, u->instrument, 1);
			return;
		}
}

/* ------------------------------------------------------------ tracking */

int order_detail_track(struct order_detail *od, const struct venue_books *vb, uint8_t venue, uint64_t id)
{
	struct venue_order_info info;
	uint32_t free_t = UINT32_MAX;

	if (venue == 0 || venue >= WB_VENUE_COUNT)
		return -1;
	for (uint32_t t = 0; t < od->track_slots; t++) {
		if (od->trk[t].in_use && !od->trk[t].is_virtual && od->trk[t].order_id == id &&
		    od->trk[t].venue == venue)
			return 0;
		if (!od->trk[t].in_use && free_t == UINT32_MAX)
			free_t = t;
	}
	if (free_t == UINT32_MAX)
		return -1;
	{
		struct wb_ord_track *T = &od->trk[free_t];
		uint32_t seq = T->seq;

		wb_store_relaxed(&T->seq, seq + 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		*T = (struct wb_ord_track){ .seq = seq + 1, .in_use = 1, .order_id = id, .venue = venue };
		wb_store_release(&T->seq, seq + 2);
	}
	unknown_add(od, free_t);
	if (venue_books_order(vb, venue, id, &info) == 0 && info.instrument < od->fast.capacity) {
		struct order *x;

		if (!od->on[info.instrument]) {
			order_detail_set(od, vb, info.instrument, 1);	/* attaches it as it seeds */
		} else if ((x = order_index_find(&od->ix, venue, id)) != NULL) {
			sym_begin(od, info.instrument);
			track_attach(od, order_level(x), venue);
			level_positions(od, od->ord[order_level(x)].level, NULL);
			sym_end(od, info.instrument);
		}
	}
	return 0;
}

void order_detail_untrack(struct order_detail *od, uint8_t venue, uint64_t id)
{
	for (uint32_t t = 0; t < od->track_slots; t++) {
		struct wb_ord_track *T = &od->trk[t];

		if (!T->in_use || T->is_virtual || T->order_id != id || T->venue != venue)
			continue;
		if (T->state == WB_QUEUE_UNKNOWN) {
			unknown_drop(od, t);
		} else {
			struct order *x = order_index_find(&od->ix, venue, id);

			if (x && od->ord[order_level(x)].track == t + 1) {
				od->ord[order_level(x)].track = 0;
				od->lv[od->ord[order_level(x)].level].tracked--;
			}
		}
		wb_store_relaxed(&T->seq, T->seq + 1);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		T->in_use = 0;
		wb_store_release(&T->seq, T->seq + 1);
		if (wb_load_relaxed(&od->req->waiters[t]))
			futex_wake_shared_all(&T->seq);
	}
}

void order_detail_poll(struct order_detail *od, const struct venue_books *vb)
{
	uint64_t posted = wb_load_acquire(&od->req->posted);

	if (posted == od->req_seen)
		return;
	od->req_seen = posted;
	for (uint32_t r = 0; r < WB_ORD_REQUESTS; r++) {
		struct wb_ord_request *q = &od->req->req[r];
		struct wb_ord_request copy;
		int ok = -1;

		if (wb_load_acquire(&q->state) != WB_ORD_REQ_READY)
			continue;
		/* Copied once, then checked: a reader may scribble on it. */
		copy = *q;
		switch (copy.op) {
		case WB_ORD_OP_DETAIL_ON:
		case WB_ORD_OP_DETAIL_OFF:
			ok = order_detail_set(od, vb, copy.sym, copy.op == WB_ORD_OP_DETAIL_ON);
			break;
		case WB_ORD_OP_TRACK:
			ok = order_detail_track(od, vb, copy.venue, copy.order_id);
			break;
		case WB_ORD_OP_UNTRACK:
			if (copy.venue && copy.venue < WB_VENUE_COUNT) {
				order_detail_untrack(od, copy.venue, copy.order_id);
				ok = 0;
			}
			break;
		case WB_ORD_OP_VIRTUAL_PLACE:
			ok = order_detail_virtual_place(od, vb, copy.order_id, copy.sym, copy.venue, copy.side,
							copy.price, copy.qty);
			break;
		case WB_ORD_OP_VIRTUAL_CANCEL:
			ok = order_detail_virtual_cancel(od, copy.order_id);
			break;
		default:
			break;
		}
		if (ok < 0)
			wb_store_relaxed(&od->hdr->requests_refused, od->hdr->requests_refused + 1);
		wb_store_relaxed(&od->hdr->requests_done, od->hdr->requests_done + 1);
		wb_store_release(&q->state, WB_ORD_REQ_FREE);
	}
}

/* ------------------------------------------------------------ events */

static bool order_kind(uint8_t kind)
{
	return kind == WB_EV_ADD || (kind >= WB_EV_EXECUTE && kind <= WB_EV_MODIFY);
}

void order_detail_apply(struct order_detail *od, const struct venue_books *vb, const struct wb_event *ev,
			const struct book_update *ups, unsigned k)
{
	uint16_t i = ups[0].instrument;
	uint8_t venue = ev->venue;

	if (ups[0].kind == BOOK_UP_SYMBOL) {
		if (i && i < od->fast.capacity)
			learn_symbol(od, vb, &ups[0]);
		return;
	}
	if (ups[0].kind == BOOK_UP_CLEAR) {
		uint32_t first = i ? i : 1, last = i ? i : od->fast.capacity - 1;

		for (uint32_t s = first; s <= last && s < od->fast.capacity; s++) {
			if (!od->on[s])
				continue;
			sym_begin(od, (uint16_t)s);
			books_clear(od, venue, (uint16_t)s, WB_QUEUE_CANCELLED, ev);
			sym_end(od, (uint16_t)s);
		}
		return;
	}
	if (!order_kind(ev->kind) || i >= od->fast.capacity)
		return;
	if (!od->on[i]) {
		/* A tracked order not seen yet may be this one: its symbol
		 * takes detail (seeded from the books, which have it now). */
		uint64_t id = ev->kind == WB_EV_REPLACE ? ev->u.order.ref : ev->u.order.order_id;

		if (!od->unknown_tracked || (ev->kind != WB_EV_ADD && ev->kind != WB_EV_REPLACE))
			return;
		if (unknown_find(od, venue, id) >= 0)
			order_detail_set(od, vb, i, 1);
		return;
	}
	sym_begin(od, i);
	switch (ev->kind) {
	case WB_EV_ADD:
		order_added(od, ev, ups, k);
		break;
	case WB_EV_DELETE:
		/* Whatever the books did, the id is not live after it. */
		order_gone(od, venue, ev->u.order.order_id, WB_QUEUE_CANCELLED, ev);
		break;
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
	case WB_EV_REDUCE:
		order_taken(od, venue, ev);
		break;
	case WB_EV_REPLACE:
		order_gone(od, venue, ev->u.order.order_id, WB_QUEUE_CANCELLED, ev);
		order_sync(od, vb, venue, ev->u.order.ref, ev);
		break;
	default:
		order_sync(od, vb, venue, ev->u.order.order_id, ev);
		break;
	}
	sym_end(od, i);
}

/* ------------------------------------------------------------ prefetch */

#define LOOKAHEAD_SLOTS 16u	/* a power of two >= ORDER_DETAIL_PREFETCH_AHEAD */

_Static_assert(ORDER_DETAIL_PREFETCH_AHEAD <= LOOKAHEAD_SLOTS &&
		       ORDER_DETAIL_PREFETCH_AHEAD > ORDER_DETAIL_PREFETCH_AHEAD1 &&
		       ORDER_DETAIL_PREFETCH_AHEAD1 > ORDER_DETAIL_PREFETCH_AHEAD2,
	       "the stages run in order, each on an event still in the history");

/* What stage 0 kept of an event for the later stages. */
struct lookahead_slot {
	uint8_t kind;		/* 0: nothing to warm (filtered out) */
	uint8_t venue;
	uint32_t hash;		/* order_index_hash(venue, id) */
	uint32_t book;		/* ADD: book_of() */
	uint32_t found;		/* stage 1: the order's slot, an ADD's level; 0: none */
	uint64_t id;
	int64_t price;		/* ADD */
};

struct lookahead {
	struct lookahead_slot s[LOOKAHEAD_SLOTS];
	uint32_t calls;
};

static struct lookahead *lookahead_create(void)
{
	return calloc(1, sizeof(struct lookahead));
}

/* Stage 0: filter, hash, and warm the order's bucket (an ADD's: its price's too). */
static void lookahead_keys(const struct order_detail *od, struct lookahead_slot *p, const struct wb_event *ev)
{
	uint8_t kind;

	p->kind = 0;
	p->found = 0;
	if (!ev)
		return;
	kind = ev->kind;
	if ((kind != WB_EV_ADD && (kind < WB_EV_EXECUTE || kind > WB_EV_MODIFY)) || (ev->flags & WB_EVF_SIP) ||
	    ev->venue == 0 || ev->venue >= WB_VENUE_COUNT)
		return;
	/* Feeds that name the instrument on every order event (ITCH, XDP)
	 * say at once whether it is worth warming anything. */
	if (ev->instrument && (ev->instrument >= od->fast.capacity || !od->on[ev->instrument]))
		return;
	p->venue = ev->venue;
	p->id = ev->u.order.order_id;
	p->hash = order_index_hash(p->venue, p->id);
	if (kind == WB_EV_ADD) {
		if (!ev->instrument || ev->side < WB_SIDE_BUY || ev->side > WB_SIDE_SELL)
			return;
		p->book = book_of(ev->instrument, p->venue, ev->side);
		p->price = ev->u.order.price;
		__builtin_prefetch(&od->prices[price_home(od, p->book, p->price)], 0, 3);
	}
	order_index_prefetch_hashed(&od->ix, p->hash);
	p->kind = kind;
}

/* Stage 1: the order's slot and level; an ADD's level. */
static void lookahead_level(const struct order_detail *od, struct lookahead_slot *p)
{
	const struct order *x;

	if (p->kind == WB_EV_ADD) {
		const struct price_slot *ps = price_find(od, p->book, p->price);

		p->found = ps->level;
		if (ps->level)
			__builtin_prefetch(&od->lv[ps->level], 1, 3);
		return;
	}
	x = order_index_find_hashed(&od->ix, p->venue, p->id, p->hash);
	if (!x)
		return;
	p->found = order_level(x);
	__builtin_prefetch(&od->ord[p->found], 1, 3);
	__builtin_prefetch(&od->lv[x->qty], 1, 3);
}

/*
 * Stage 2, from what stage 1 found (by now maybe reused: a useless
 * prefetch, nothing else; slots and levels are never unmapped): the
 * order's neighbours in the queue; the level's last order (an ADD links
 * behind it) and the slot an ADD takes.
 */
static void lookahead_queue(const struct order_detail *od, const struct lookahead_slot *p)
{
	if (p->kind == WB_EV_ADD) {
		uint32_t tail = od->lv[p->found].tail;

		if (tail)
			__builtin_prefetch(&od->ord[tail], 1, 3);
		if (od->free_order)
			__builtin_prefetch(&od->ord[od->free_order], 1, 3);
		return;
	}
	if (od->ord[p->found].prev)
		__builtin_prefetch(&od->ord[od->ord[p->found].prev], 1, 3);
	if (od->ord[p->found].next)
		__builtin_prefetch(&od->ord[od->ord[p->found].next], 1, 3);
}

void order_detail_lookahead_detail(const struct order_detail *od, const struct wb_event *ev)
{
	struct lookahead *la = od->lookahead;
	uint32_t n = la->calls++;
	struct lookahead_slot *p;

	p = &la->s[(n - (ORDER_DETAIL_PREFETCH_AHEAD - ORDER_DETAIL_PREFETCH_AHEAD2)) % LOOKAHEAD_SLOTS];
	if (p->kind && p->found)
		lookahead_queue(od, p);
	p = &la->s[(n - (ORDER_DETAIL_PREFETCH_AHEAD - ORDER_DETAIL_PREFETCH_AHEAD1)) % LOOKAHEAD_SLOTS];
	if (p->kind)
		lookahead_level(od, p);
	lookahead_keys(od, &la->s[n % LOOKAHEAD_SLOTS], ev);
}
