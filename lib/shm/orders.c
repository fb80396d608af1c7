/*
 * libwirebook's order detail reader (include/wirebook/orders.h) over the
 * objects lib/shm/orders_layout.h describes.
 *
 * Everything read from the builder's object is distrusted as a walk goes:
 * an index may be mid-update (the seqlock then says so), so every index
 * is bounds-checked and every walk bounded before the sequence is looked
 * at again.
 */
#include "shm/orders_layout.h"
#include "shm/relax.h"
#include "wirebook/barrier.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define READ_SPINS 100000u
#define SLOT_CACHE 4096u		/* remembered tracking slots (a power of two) */

/*
 * Which tracking slot holds an order, remembered: finding it otherwise
 * reads every slot (4096, a cache line each), and a strategy reads its
 * orders after every event. Direct-mapped; a hit is verified against
 * the slot itself, so a stale or torn entry (readers of one handle may
 * run on several threads) only costs the scan it would have cost anyway.
 */
struct slot_cache_entry {
	uint64_t key;		/* the order id; a tracked one's mixed with its venue */
	uint32_t slot;		/* tracking slot + 1; 0: empty */
	uint32_t is_virtual;
};

#define WALK_LEVELS_MAX 100000u		/* a side's levels a reader follows at most */

struct wb_orders {
	const struct wb_ord_header *hdr;
	size_t size;
	struct wb_ord_requests *req;
	size_t req_size;
	const struct wb_ord_symbol *sym;
	const uint32_t *heads;
	const struct wb_ord_level *lv;
	const struct wb_ord_order *ord;
	const struct wb_ord_track *trk;
	uint32_t capacity, order_slots, level_slots, track_slots;
	struct slot_cache_entry *cache;	/* [SLOT_CACHE]: hints, written by const reads */
};

static void *map_object(const char *name, int writable, size_t *size, int *err)
{
	struct stat st;
	void *p;
	int fd = shm_open(name, writable ? O_RDWR : O_RDONLY, 0);

	if (fd < 0) {
		*err = errno == ENOENT ? WB_ENOSHM : errno == EACCES ? WB_EACCES : WB_ESYS;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(uint64_t)) {
		close(fd);
		*err = WB_EBADMAGIC;
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		*err = WB_ESYS;
		return NULL;
	}
	*size = (size_t)st.st_size;
	return p;
}

static int check_layout(struct wb_orders *o)
{
	const struct wb_ord_header *h = o->hdr;

	if (o->size < sizeof(*h) || wb_load_acquire(&h->magic) != WB_ORD_MAGIC)
		return WB_EBADMAGIC;
	if (h->abi_version != WB_ORD_ABI_VERSION || h->header_size != sizeof(*h))
		return WB_EABI;
	if (h->total_size > o->size || h->capacity == 0 || h->capacity > 65536 ||
	    h->symbols_offset + (uint64_t)h->capacity * sizeof(struct wb_ord_symbol) > o->size ||
	    h->heads_offset + (uint64_t)h->capacity * WB_BOOK_VENUES * 2 * sizeof(uint32_t) > o->size ||
	    h->levels_offset + (uint64_t)h->level_slots * sizeof(struct wb_ord_level) > o->size ||
	    h->orders_offset + (uint64_t)h->order_slots * sizeof(struct wb_ord_order) > o->size ||
	    h->track_offset + (uint64_t)h->track_slots * sizeof(struct wb_ord_track) > o->size)
		return WB_EBADMAGIC;
	if (o->req_size < sizeof(*o->req) + (size_t)h->track_slots * sizeof(uint32_t) ||
	    wb_load_acquire(&o->req->magic) != WB_ORD_REQ_MAGIC)
		return WB_EBADMAGIC;
	o->capacity = h->capacity;
	o->order_slots = h->order_slots;
	o->level_slots = h->level_slots;
	o->track_slots = h->track_slots;
	o->sym = (const void *)((const char *)h + h->symbols_offset);
	o->heads = (const void *)((const char *)h + h->heads_offset);
	o->lv = (const void *)((const char *)h + h->levels_offset);
	o->ord = (const void *)((const char *)h + h->orders_offset);
	o->trk = (const void *)((const char *)h + h->track_offset);
	return WB_OK;
}

struct wb_orders *wb_orders_open(const char *name, int *err)
{
	char path[256], req_path[256];
	struct wb_orders *o;
	int e = WB_OK, dummy;

	if (!err)
		err = &dummy;
	if (!name)
		name = WB_SHM_DEFAULT_NAME;
	while (*name == '/')
		name++;
	if (snprintf(path, sizeof(path), "/%s.orders", name) >= (int)sizeof(path) ||
	    snprintf(req_path, sizeof(req_path), "/%s.orders-req", name) >= (int)sizeof(req_path)) {
		*err = WB_EINVAL;
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o)
		o->cache = calloc(SLOT_CACHE, sizeof(*o->cache));
	if (!o || !o->cache) {
		free(o);
		*err = WB_ESYS;
		return NULL;
	}
	o->hdr = map_object(path, 0, &o->size, &e);
	if (o->hdr)
		o->req = map_object(req_path, 1, &o->req_size, &e);
	if (o->hdr && o->req)
		e = check_layout(o);
	if (e != WB_OK) {
		wb_orders_close(o);
		*err = e;
		return NULL;
	}
	*err = WB_OK;
	return o;
}

void wb_orders_close(struct wb_orders *o)
{
	if (!o)
		return;
	if (o->hdr)
		munmap((void *)o->hdr, o->size);
	if (o->req)
		munmap(o->req, o->req_size);
	free(o->cache);
	free(o);
}

/* ------------------------------------------------------------- reading */

/* An even sequence to read under, or an error (retired, stuck writer). */
static int read_begin(const uint64_t *seq, uint64_t *s, unsigned *spins)
{
	while ((*s = wb_load_acquire(seq)) & 1) {
		if (*s == WB_SEQ_RETIRED)
			return WB_ESTALE;
		if (++*spins > READ_SPINS)
			return WB_EBUSY;
		cpu_relax();
	}
	return WB_OK;
}

/* 1: copy again; 0: the copy is whole; WB_EBUSY: the writer kept changing it. */
static int read_torn(const uint64_t *seq, uint64_t s, unsigned *spins)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (wb_load_relaxed(seq) == s)
		return 0;
	return ++*spins > READ_SPINS ? WB_EBUSY : 1;
}

static int sym_ok(const struct wb_orders *o, int sym)
{
	if (!o || sym <= 0 || (uint32_t)sym >= o->capacity)
		return WB_EINVAL;
	if (wb_load_acquire(&o->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	return WB_OK;
}

int wb_orders_has_detail(const struct wb_orders *o, int sym)
{
	int rc = sym_ok(o, sym);

	if (rc)
		return rc;
	return (wb_load_acquire(&o->sym[sym].flags) & WB_ORDF_DETAIL) != 0;
}

static uint32_t head_of(const struct wb_orders *o, int sym, int venue, int side)
{
	return wb_load_relaxed(&o->heads[((uint32_t)sym * WB_BOOK_VENUES + (uint32_t)venue) * 2 + (uint32_t)(side - 1)]);
}

static int book_args(const struct wb_orders *o, int sym, int venue, int side)
{
	int rc = sym_ok(o, sym);

	if (rc)
		return rc;
	if (venue <= 0 || venue >= WB_BOOK_VENUES || (side != WB_SIDE_BUY && side != WB_SIDE_SELL))
		return WB_EINVAL;
	return WB_OK;
}

static int better(int side, int64_t a, int64_t b)
{
	return side == WB_SIDE_BUY ? a > b : a < b;
}

int wb_order_levels(const struct wb_orders *o, int sym, int venue, int side, struct wb_order_level *levels,
		    unsigned max)
{
	const struct wb_ord_symbol *S;
	unsigned spins = 0, n;
	uint64_t seq;
	int rc = book_args(o, sym, venue, side);

	if (rc)
		return rc;
	if (!levels && max)
		return WB_EINVAL;
	S = &o->sym[sym];
	do {
		uint32_t li, walked = 0;

		rc = read_begin(&S->seq, &seq, &spins);
		if (rc)
			return rc;
		if (!(wb_load_relaxed(&S->flags) & WB_ORDF_DETAIL))
			return WB_ENOSYM;
		n = 0;
		for (li = head_of(o, sym, venue, side); li && li < o->level_slots && walked < WALK_LEVELS_MAX;
		     walked++) {
			const struct wb_ord_level *L = &o->lv[li];
			struct wb_order_level x = {
				.price = wb_load_relaxed(&L->price),
				.qty = wb_load_relaxed(&L->qty),
				.orders = wb_load_relaxed(&L->orders),
			};
			unsigned k;

			li = wb_load_relaxed(&L->next);
			/* Insertion into the best max, best first (the list is unsorted). */
			for (k = n < max ? n : max; k > 0 && better(side, x.price, levels[k - 1].price); k--)
				if (k < max)
					levels[k] = levels[k - 1];
			if (k < max) {
				levels[k] = x;
				if (n < max)
					n++;
			}
		}
	} while ((rc = read_torn(&S->seq, seq, &spins)) == 1);
	return rc ? rc : (int)n;
}

int wb_orders_at(const struct wb_orders *o, int sym, int venue, int side, int64_t price, struct wb_order *out,
		 unsigned max, struct wb_order_level *level)
{
	const struct wb_ord_symbol *S;
	unsigned spins = 0, n;
	uint64_t seq;
	int rc = book_args(o, sym, venue, side);

	if (rc)
		return rc;
	if (!out && max)
		return WB_EINVAL;
	S = &o->sym[sym];
	do {
		uint32_t li, walked = 0, s;
		struct wb_order_level lvl = { .price = price };

		rc = read_begin(&S->seq, &seq, &spins);
		if (rc)
			return rc;
		if (!(wb_load_relaxed(&S->flags) & WB_ORDF_DETAIL))
			return WB_ENOSYM;
		n = 0;
		for (li = head_of(o, sym, venue, side); li && li < o->level_slots && walked < WALK_LEVELS_MAX;
		     walked++, li = wb_load_relaxed(&o->lv[li].next))
			if (wb_load_relaxed(&o->lv[li].price) == price)
				break;
		if (li && li < o->level_slots && walked < WALK_LEVELS_MAX) {
			const struct wb_ord_level *L = &o->lv[li];

			lvl.qty = wb_load_relaxed(&L->qty);
			lvl.orders = wb_load_relaxed(&L->orders);
			walked = 0;
			for (s = wb_load_relaxed(&L->head); s && s < o->order_slots && n < max && walked <= lvl.orders;
			     walked++) {
				const struct wb_ord_order *r = &o->ord[s];

				out[n] = (struct wb_order){
					.order_id = wb_load_relaxed(&r->id),
					.qty = wb_load_relaxed(&r->qty),
					.join_ts = wb_load_relaxed(&r->join_ts),
					.join_recv_ts = wb_load_relaxed(&r->join_recv_ts),
				};
				memcpy(out[n].mpid, r->mpid, sizeof(out[n].mpid));
				n++;
				s = wb_load_relaxed(&r->next);
			}
		}
		if (level)
			*level = lvl;
	} while ((rc = read_torn(&S->seq, seq, &spins)) == 1);
	return rc ? rc : (int)n;
}

/* ------------------------------------------------------------ requests */

static int post(struct wb_orders *o, const struct wb_ord_request *want)
{
	if (!o)
		return WB_EINVAL;
	if (wb_load_acquire(&o->hdr->state) == WB_SHM_RETIRED)
		return WB_ESTALE;
	for (uint32_t r = 0; r < WB_ORD_REQUESTS; r++) {
		struct wb_ord_request *q = &o->req->req[r];
		uint32_t free_state = WB_ORD_REQ_FREE;

		if (!__atomic_compare_exchange_n(&q->state, &free_state, WB_ORD_REQ_CLAIMED, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		q->op = want->op;
		q->sym = want->sym;
		q->venue = want->venue;
		q->side = want->side;
		q->order_id = want->order_id;
		q->price = want->price;
		q->qty = want->qty;
		wb_store_release(&q->state, WB_ORD_REQ_READY);
		__atomic_fetch_add(&o->req->posted, 1, __ATOMIC_RELEASE);
		return WB_OK;
	}
	return WB_EBUSY;
}

int wb_orders_detail(struct wb_orders *o, int sym, int on)
{
	int rc = sym_ok(o, sym);

	if (rc)
		return rc;
	return post(o, &(struct wb_ord_request){ .op = on ? WB_ORD_OP_DETAIL_ON : WB_ORD_OP_DETAIL_OFF,
						 .sym = (uint16_t)sym });
}

int wb_queue_track(struct wb_orders *o, int venue, uint64_t order_id)
{
	if (venue <= 0 || venue >= WB_VENUE_COUNT)
		return WB_EINVAL;
	return post(o, &(struct wb_ord_request){ .op = WB_ORD_OP_TRACK, .venue = (uint8_t)venue, .order_id = order_id });
}

int wb_queue_untrack(struct wb_orders *o, int venue, uint64_t order_id)
{
	if (venue <= 0 || venue >= WB_VENUE_COUNT)
		return WB_EINVAL;
	return post(o, &(struct wb_ord_request){ .op = WB_ORD_OP_UNTRACK, .venue = (uint8_t)venue,
						 .order_id = order_id });
}

/* ------------------------------------------------------ queue positions */

/* Slot t holds (venue, order_id), tracked (is_virtual 0) or virtual (1; venue not compared). */
static int slot_holds(const struct wb_orders *o, uint32_t t, int is_virtual, int venue, uint64_t order_id)
{
	const struct wb_ord_track *T = &o->trk[t];

	return wb_load_relaxed(&T->in_use) && wb_load_relaxed(&T->is_virtual) == is_virtual &&
	       wb_load_relaxed(&T->order_id) == order_id && (is_virtual || wb_load_relaxed(&T->venue) == venue);
}

/* The tracking slot of (venue, order_id), or WB_ENOSYM. */
static int slot_find(const struct wb_orders *o, int is_virtual, int venue, uint64_t order_id)
{
	uint64_t key = is_virtual ? order_id : order_id ^ (uint64_t)venue * 0x9e3779b97f4a7c15ull;
	struct slot_cache_entry *c = &o->cache[(key * 0xff51afd7ed558ccdull) >> 52 & (SLOT_CACHE - 1)];
	uint32_t hint = wb_load_relaxed(&c->slot);

	if (hint && hint <= o->track_slots && wb_load_relaxed(&c->key) == key &&
	    wb_load_relaxed(&c->is_virtual) == (uint32_t)is_virtual && slot_holds(o, hint - 1, is_virtual, venue, order_id))
		return (int)hint - 1;
	for (uint32_t t = 0; t < o->track_slots; t++)
		if (slot_holds(o, t, is_virtual, venue, order_id)) {
			wb_store_relaxed(&c->slot, 0);
			wb_store_relaxed(&c->key, key);
			wb_store_relaxed(&c->is_virtual, (uint32_t)is_virtual);
			wb_store_relaxed(&c->slot, t + 1);
			return (int)t;
		}
	return WB_ENOSYM;
}

static int track_find(const struct wb_orders *o, int venue, uint64_t order_id)
{
	return slot_find(o, 0, venue, order_id);
}

/* A tracking slot's position, read inside its seqlock (seq: the version read). */
static struct wb_queue_pos track_position(const struct wb_ord_track *T, uint32_t seq)
{
	return (struct wb_queue_pos){
		.order_id = T->order_id,
		.venue = T->venue,
		.side = T->side,
		.state = T->state,
		.sym = T->instrument,
		.price = T->price,
		.qty = T->qty,
		.filled_qty = T->filled_qty,
		.shares_ahead = T->shares_ahead,
		.orders_ahead = T->orders_ahead,
		.orders_behind = T->orders_behind,
		.shares_behind = T->shares_behind,
		.level_qty = T->level_qty,
		.level_orders = T->level_orders,
		.version = seq,
		.exch_ts = T->exch_ts,
		.recv_ts = T->recv_ts,
		.changes = T->changes,
	};
}

int wb_queue_position(const struct wb_orders *o, int venue, uint64_t order_id, struct wb_queue_pos *out)
{
	const struct wb_ord_track *T;
	unsigned spins = 0;
	uint32_t seq;
	int t;

	if (!o || !out)
		return WB_EINVAL;
	t = track_find(o, venue, order_id);
	if (t < 0)
		return t;
	T = &o->trk[t];
	do {
		while ((seq = wb_load_acquire(&T->seq)) & 1) {
			if (++spins > READ_SPINS)
				return WB_EBUSY;
			cpu_relax();
		}
		if (!wb_load_relaxed(&T->in_use) || T->order_id != order_id || T->venue != venue)
			return WB_ENOSYM;
		*out = track_position(T, seq);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (wb_load_relaxed(&T->seq) == seq)
			return WB_OK;
	} while (++spins <= READ_SPINS);
	return WB_EBUSY;
}

int wb_queue_wait(struct wb_orders *o, int venue, uint64_t order_id, uint32_t version, int64_t timeout_ns)
{
	const struct wb_ord_track *T;
	struct timespec ts, *tsp = NULL;
	uint32_t *waiters;
	uint32_t now;
	int t;

	if (!o)
		return WB_EINVAL;
	t = track_find(o, venue, order_id);
	if (t < 0)
		return t;
	T = &o->trk[t];
	if (timeout_ns >= 0) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		tsp = &ts;
	}
	waiters = &o->req->waiters[t];
	/* Say we wait before looking again, so the builder's check of the
	 * count after its change cannot miss us (both sides fence). */
	__atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
	now = wb_load_acquire(&T->seq);
	if ((now & ~1u) == (version & ~1u) || (now & 1))
		syscall(SYS_futex, &T->seq, FUTEX_WAIT, now, tsp, NULL, 0);
	__atomic_fetch_sub(waiters, 1, __ATOMIC_RELAXED);
	now = wb_load_acquire(&T->seq);
	return (now & ~1u) != (version & ~1u) ? WB_OK : WB_EBUSY;
}

const char *wb_queue_state_name(int state)
{
	switch (state) {
	case WB_QUEUE_UNKNOWN: return "unknown";
	case WB_QUEUE_RESTING: return "resting";
	case WB_QUEUE_PARTLY_FILLED: return "partly-filled";
	case WB_QUEUE_FILLED: return "filled";
	case WB_QUEUE_CANCELLED: return "cancelled";
	case WB_QUEUE_REFUSED: return "refused";
	default: return "?";
	}
}

/* ------------------------------------------------------- virtual orders */

/* The process's virtual orders so far, over all its handles (their ids must differ). */
static uint32_t virtual_count;

int wb_virtual_place(struct wb_orders *o, int sym, int venue, int side, int64_t price, uint64_t qty, uint64_t *id)
{
	uint64_t vid;
	int rc;

	if (!o || !id || venue <= 0 || venue >= WB_VENUE_COUNT || (side != WB_SIDE_BUY && side != WB_SIDE_SELL) ||
	    qty == 0 || qty > UINT32_MAX)
		return WB_EINVAL;
	rc = sym_ok(o, sym);
	if (rc)
		return rc;
	/* Unique among readers without asking the builder: the top bit
	 * (no venue id is that large), the pid, the process's count. */
	vid = (1ull << 63) | ((uint64_t)((uint32_t)getpid() & 0x7fffffffu) << 32) |
	      (uint64_t)__atomic_add_fetch(&virtual_count, 1, __ATOMIC_RELAXED);
	rc = post(o, &(struct wb_ord_request){ .op = WB_ORD_OP_VIRTUAL_PLACE, .sym = (uint16_t)sym,
					       .venue = (uint8_t)venue, .side = (uint8_t)side, .order_id = vid,
					       .price = price, .qty = (uint32_t)qty });
	if (rc == WB_OK)
		*id = vid;
	return rc;
}

int wb_virtual_cancel(struct wb_orders *o, uint64_t id)
{
	return post(o, &(struct wb_ord_request){ .op = WB_ORD_OP_VIRTUAL_CANCEL, .order_id = id });
}

int wb_virtual_state(const struct wb_orders *o, uint64_t id, struct wb_virtual_order *out)
{
	const struct wb_ord_track *T;
	unsigned spins = 0;
	uint32_t seq;
	int t;

	if (!o || !out)
		return WB_EINVAL;
	t = slot_find(o, 1, 0, id);
	if (t < 0)
		return t;
	T = &o->trk[t];
	do {
		while ((seq = wb_load_acquire(&T->seq)) & 1) {
			if (++spins > READ_SPINS)
				return WB_EBUSY;
			cpu_relax();
		}
		if (!wb_load_relaxed(&T->in_use) || !T->is_virtual || T->order_id != id || T->state == WB_QUEUE_UNKNOWN)
			return WB_ENOSYM;
		*out = (struct wb_virtual_order){
			.pos = track_position(T, seq),
			.fills = T->fills,
			.last_fill_qty = T->last_fill_qty,
			.fill_exch_ts = T->fill_exch_ts,
			.fill_recv_ts = T->fill_recv_ts,
			.fill_seq = T->fill_seq,
		};
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (wb_load_relaxed(&T->seq) == seq)
			return WB_OK;
	} while (++spins <= READ_SPINS);
	return WB_EBUSY;
}
