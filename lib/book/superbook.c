/*
 * The Super-Book (builder thread 2); see superbook.h.
 *
 * Per symbol and venue each side is a sorted array of levels keyed so the
 * best level is the last element (key = price for bids, -price for asks):
 * nearly every change lands near the top, so inserts and removals move a
 * few elements and the search starts from the end. The consolidated depth
 * is not stored: at publish time the top WB_BOOK_DEPTH distinct prices are
 * merged from the venues' tops, which is exact because any price among
 * the best ten consolidated prices is among the best ten of every venue
 * quoting it.
 *
 * The shared-memory object it publishes into (create, retire, unlink) is
 * book_shm.c's; this file writes the records.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "book/book_shm.h"
#include "book/checksum.h"
#include "book/sipview.h"
#include "book/spsc.h"
#include "book/superbook.h"
#include "book/venue_mem.h"
#include "feed/prefetch.h"
#include "wirebook/barrier.h"

#define SB_DEFAULT_CAPACITY 16384u
#define SB_MIN_LEVEL_CAP 16u

/* Dirty bits per symbol: what superbook_publish must rewrite. */
#define SB_D_LEVELS	0x1u	/* some venue side changed in its top WB_BOOK_DEPTH */
#define SB_D_TRADE	0x4u
#define SB_D_STATUS	0x8u
#define SB_D_META	0x10u	/* venue flags/state, presence */

/*
 * Which published levels are stale: a bit per level from the top. A new
 * or vanished price at a venue's level k moves that venue's levels k..
 * (bits k and below); a new size at an existing price changes level k
 * alone, the common case (orders joining, leaving or trading at a price
 * that stays). Consolidated levels: a price's consolidated rank is at
 * least its rank on any venue quoting it, so a change at venue level k
 * marks consolidated levels k..; when the venue is the symbol's only one,
 * the ranks are equal and the venue's bits serve. Zeroed memory is clean.
 */
#define SB_ALL_LEVELS ((uint16_t)((1u << WB_BOOK_DEPTH) - 1))

static inline uint16_t sb_levels_from(uint32_t k)
{
	return (uint16_t)(SB_ALL_LEVELS & ~((1u << k) - 1));
}

struct sb_level {
	int64_t key;		/* price (bid) or -price (ask): best is the largest */
	uint64_t qty;
	uint32_t orders;
};

struct sb_side {
	struct sb_level *lv;	/* ascending key, best last */
	uint32_t count;
	uint32_t cap;
};

/* One cache line per venue: an update touches its venue's line only. */
struct sb_venue {
	struct sb_side side[2];	/* 0 bid, 1 ask */
	uint64_t exch_ts;
	uint32_t gaps;
	uint8_t flags;		/* WB_VENF_PRESENT, WB_VENF_GAP */
	uint8_t state;
	uint16_t stale[2];	/* per side: published levels to rewrite (SB_ALL_LEVELS) */
} __attribute__((aligned(64)));

struct sb_symbol {
	/* line 0: what every update touches besides its venue's line */
	uint32_t dirty;
	uint32_t changes;	/* changes since the last publish (> 0: in the dirty
				 * list); the published counter counts changes, not
				 * publishes, so it is the same on every run of an input */
	uint64_t exch_ts;
	uint64_t recv_ts;
	uint32_t venues_present;
	uint32_t venues_known;	/* venues with levels, a gap or a status: published per venue */
	uint32_t cols[2];	/* venues whose breakdown column may be nonzero in shm */
	uint16_t cons_stale[2];	/* consolidated levels to rewrite, per side */
	uint8_t state;
	char raw_state;
	char reason[4];
	uint8_t state_venue;
	uint8_t sip;		/* has a SIP view: report top-of-book changes to it */
	struct wb_trade trade;
	struct sb_venue venue[WB_BOOK_VENUES];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct sb_venue) == 64, "a venue's book state is one line");
WB_STATIC_ASSERT(offsetof(struct sb_symbol, trade) < 64, "hot symbol fields in line 0");

struct superbook {
	/* The mapping's regions (from shm, kept here for the hot path). */
	struct wb_shm_header *hdr;
	uint64_t *dir;
	char *records;
	uint32_t capacity;
	uint32_t max_instrument;	/* highest instrument id seen */
	uint8_t venue_gap[WB_BOOK_VENUES]; /* venue-wide gap since its last venue-wide clear */
	uint64_t venue_recv[WB_BOOK_VENUES]; /* newest recv_ts per venue, published with the batch */
	uint32_t venue_recv_dirty;	/* venues whose venue_recv moved since the last publish */
	uint64_t publish_changes;	/* changes written by the publish under way */
	struct sb_symbol *sym;
	struct sipview *sv;		/* the SIP view beside the Super-Book */
	struct book_queue *sipq;	/* to the SIP view's thread; NULL: applied here */
	uint64_t *sip_started;		/* bit i: instrument i's SIP view has started (a SIP
					 * update need not touch the symbol's line to know) */
	struct wb_shm_sipstats *sipstats;
	/* The venue sides' level arrays: on the builder's node, on huge pages. */
	struct venue_arena arena;
	uint16_t *dirty_list;
	uint32_t dirty_count;
	int numa_node;
	struct superbook_counters ctr;
	struct book_shm shm;		/* the shared-memory object's lifetime */
};

static inline struct wb_shm_symbol *sb_record(struct superbook *sb, uint32_t i)
{
	return (struct wb_shm_symbol *)(sb->records + (size_t)i * sizeof(struct wb_shm_symbol));
}

/* ---- creation --------------------------------------------------------- */

struct superbook *superbook_create(const struct superbook_config *cfg, int *err)
{
	struct superbook *sb;
	const char *name = cfg && cfg->shm_name ? cfg->shm_name : WB_SHM_DEFAULT_NAME;
	uint32_t cap = cfg && cfg->capacity ? cfg->capacity : SB_DEFAULT_CAPACITY;
	int rc;

	if (cap < 2 || cap > 65536 || !*name || strlen(name) > 200 ||
	    strchr(name + (name[0] == '/'), '/')) {
		rc = WB_EINVAL;
		goto fail;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		rc = WB_ESYS;
		goto fail;
	}
	sb->capacity = cap;
	sb->numa_node = venue_mem_node(cfg ? cfg->numa_node : -1);

	rc = book_shm_create(&sb->shm, name, cap, sb->numa_node, cfg && cfg->force);
	if (rc)
		goto fail_sb;
	sb->hdr = sb->shm.hdr;
	sb->dir = sb->shm.dir;
	sb->records = sb->shm.records;
	sb->sipstats = sb->shm.sipstats;

	/* 64-byte aligned (the compiler may store whole lines) and on the
	 * builder's node. */
	sb->sym = venue_mem_alloc((size_t)cap * sizeof(*sb->sym), sb->numa_node);
	sb->dirty_list = calloc(cap, sizeof(*sb->dirty_list));
	sb->sip_started = calloc((cap + 63) / 64, sizeof(*sb->sip_started));
	sb->sv = sipview_create(sb->shm.sip, sb->sipstats, cap, sb->numa_node);
	if (!sb->sym || !sb->dirty_list || !sb->sip_started || !sb->sv ||
	    venue_arena_init(&sb->arena, sb->numa_node) < 0) {
		rc = WB_ESYS;
		superbook_destroy(sb);
		goto fail;
	}
	if (err)
		*err = 0;
	return sb;

fail_sb:
	free(sb);
fail:
	if (err)
		*err = rc;
	return NULL;
}

uint64_t superbook_prefault(struct superbook *sb)
{
	uint64_t bytes = 0;

	if (book_shm_prefault(&sb->shm, sb->shm.hdr, sb->shm.size) == 0)
		bytes += sb->shm.size;
	else
		sb->ctr.prefault_failures++;
	bytes += venue_mem_prefault(sb->dirty_list, (size_t)sb->capacity * sizeof(*sb->dirty_list));
	bytes += venue_mem_prefault(sb->sip_started,
				    (size_t)(sb->capacity + 63) / 64 * sizeof(*sb->sip_started));
	return bytes;
}

void superbook_destroy(struct superbook *sb)
{
	if (!sb)
		return;
	book_shm_destroy(&sb->shm);
	venue_arena_destroy(&sb->arena);
	if (sb->sym)
		venue_mem_free(sb->sym, (size_t)sb->capacity * sizeof(*sb->sym), sb->numa_node);
	free(sb->dirty_list);
	free(sb->sip_started);
	sipview_destroy(sb->sv);
	free(sb);
}

void superbook_set_sip_queue(struct superbook *sb, struct book_queue *q)
{
	sb->sipq = q;
}

struct sipview *superbook_sipview(struct superbook *sb)
{
	return sb->sv;
}

const struct superbook_counters *superbook_counters(const struct superbook *sb)
{
	return &sb->ctr;
}

const struct wb_shm_header *superbook_header(const struct superbook *sb)
{
	return sb->hdr;
}

struct book_shm *superbook_shm(struct superbook *sb)
{
	return &sb->shm;
}

const char *superbook_shm_name(const struct superbook *sb)
{
	return sb->shm.name;
}

void superbook_set_state(struct superbook *sb, int state)
{
	wb_store_release(&sb->hdr->state, (uint32_t)state);
}

void superbook_heartbeat(struct superbook *sb, uint64_t now_ns)
{
	wb_store_relaxed(&sb->hdr->heartbeat_ns, now_ns);
}

void superbook_set_heartbeat_period(struct superbook *sb, uint64_t period_ns)
{
	wb_store_relaxed(&sb->hdr->heartbeat_period_ns, period_ns);
}

void superbook_set_recovering(struct superbook *sb, uint32_t venues)
{
	wb_store_release(&sb->hdr->recovering_venues, venues);
}

/* A symbol whose venues_known is one venue: the common case, published
 * and warmed without a merge. */
static inline bool sb_one_venue(uint32_t known)
{
	return known && !(known & (known - 1));
}

/* ---- applying updates -------------------------------------------------- */

static inline void sb_mark(struct superbook *sb, uint32_t inst, uint32_t bits)
{
	struct sb_symbol *y = &sb->sym[inst];

	y->dirty |= bits;
	if (!y->changes++) {
		sb->dirty_list[sb->dirty_count++] = (uint16_t)inst;
	}
}

static inline void sb_seen(struct superbook *sb, uint32_t inst)
{
	if (wb_unlikely(inst > sb->max_instrument)) {
		sb->max_instrument = inst;
		/* Readers iterate (and a retirement marks) records below
		 * header.symbols: cover records with data but no ticker yet. */
		if (sb->hdr->symbols < (uint64_t)inst + 1)
			wb_store_release(&sb->hdr->symbols, (uint64_t)inst + 1);
	}
}

/*
 * Index of key in the side, or where it would go (first element > key).
 * Galloping down from the top (probes 1, 2, 4, 8, ... levels below the
 * last bracket), then a branch-free binary search inside the bracket: a
 * change d levels deep costs about 2 log2(d) probes, so a change at the
 * touch (most of a normal day) stays one or two probes while one anywhere
 * in a deep book (a hostile day, ~30 levels a side) no longer walks eight
 * levels one by one before bisecting the rest.
 */
static inline uint32_t sb_search(const struct sb_side *sd, int64_t key, int *found)
{
	const struct sb_level *lv = sd->lv, *base;
	uint32_t hi = sd->count, lo = 0, step = 1, len;

	/* lv[hi..] >= key throughout; lv[lo - 1] < key once lo > 0. */
	while (step <= hi) {
		uint32_t probe = hi - step;
		int64_t k = lv[probe].key;

		if (k == key) {
			*found = 1;
			return probe;
		}
		if (k < key) {
			lo = probe + 1;
			break;
		}
		hi = probe;
		step *= 2;
	}
	len = hi - lo;
	if (!len) {
		*found = 0;
		return lo;
	}
	base = lv + lo;
	while (len > 1) {
		uint32_t half = len / 2;

		base = base[half].key < key ? base + half : base;
		len -= half;
	}
	lo = (uint32_t)(base - lv) + (base->key < key);
	*found = lo < sd->count && lv[lo].key == key;
	return lo;
}

static int sb_grow(struct superbook *sb, struct sb_side *sd)
{
	uint32_t cap = sd->cap ? sd->cap * 2 : SB_MIN_LEVEL_CAP;
	struct sb_level *lv = venue_arena_alloc(&sb->arena, cap * sizeof(*lv));

	if (!lv)
		return -ENOMEM;
	if (sd->cap) {
		memcpy(lv, sd->lv, sd->count * sizeof(*lv));
		venue_arena_free(&sb->arena, sd->lv, sd->cap * sizeof(*lv));
	}
	sd->lv = lv;
	sd->cap = cap;
	return 0;
}

/* ---- the SIP view's window on the direct books ------------------------- */

static inline int64_t sb_top_price(const struct sb_side *sd, int si)
{
	int64_t k = sd->lv[sd->count - 1].key;

	return si ? -k : k;
}

/* An update for the SIP view: into its queue (thread 3), or applied here. */
static inline void sb_sip_forward(struct superbook *sb, const struct book_update *u)
{
	if (!sb->sipq) {
		sipview_apply(sb->sv, u);
		return;
	}
	if (wb_unlikely(book_queue_space(sb->sipq, 1) < 1)) {
		/* the SIP view is behind: it loses this, the Super-Book waits for nothing */
		sb->ctr.sip_dropped++;
		wb_store_relaxed(&sb->sipstats->summary.dropped, sb->ctr.sip_dropped);
		return;
	}
	book_queue_push(sb->sipq, u);
}

/* A venue's top of one side, for the SIP view of a symbol. */
static void sb_sip_side(struct superbook *sb, uint16_t inst, uint8_t venue, int si, uint64_t exch_ts,
			uint64_t recv_ts)
{
	const struct sb_side *sd = &sb->sym[inst].venue[venue].side[si];
	struct book_update t = {
		.kind = BOOK_UP_SIP_TOP, .venue = venue, .side = si ? WB_SIDE_SELL : WB_SIDE_BUY,
		.instrument = inst, .exch_ts = exch_ts, .recv_ts = recv_ts,
	};

	if (sd->count) {
		t.price = sb_top_price(sd, si);
		t.qty = sd->lv[sd->count - 1].qty;
	}
	sb_sip_forward(sb, &t);
}

static void sb_apply_sip(struct superbook *sb, const struct book_update *u)
{
	struct sb_symbol *y;

	sb->ctr.sip++;
	if (wb_unlikely(u->instrument >= sb->capacity)) {
		sb->ctr.bad_instrument++;
		return;
	}
	if (u->instrument && !(sb->sip_started[u->instrument / 64] >> (u->instrument % 64) & 1)) {
		/* the view starts from the direct books as they stand */
		sb_seen(sb, u->instrument);
		sb->sip_started[u->instrument / 64] |= 1ull << (u->instrument % 64);
		y = &sb->sym[u->instrument];
		y->sip = 1;
		for (uint32_t m = y->venues_present; m; m &= m - 1)
			for (int si = 0; si < 2; si++)
				if (y->venue[__builtin_ctz(m)].side[si].count)
					sb_sip_side(sb, u->instrument, (uint8_t)__builtin_ctz(m), si,
						    u->exch_ts, u->recv_ts);
	}
	sb_sip_forward(sb, u);
}

static void sb_apply_level(struct superbook *sb, const struct book_update *u)
{
	struct sb_symbol *y = &sb->sym[u->instrument];
	struct sb_venue *vn = &y->venue[u->venue];
	int si = u->side == WB_SIDE_SELL;
	struct sb_side *sd = &vn->side[si];
	int64_t key = si ? -u->price : u->price;
	uint32_t idx, from_top;
	int found, in_place = 0;

	sb->ctr.levels++;
	idx = sb_search(sd, key, &found);
	if (u->qty == 0) {
		if (!found) {
			sb->ctr.level_missing++;
			return;
		}
		from_top = sd->count - 1 - idx;
		memmove(&sd->lv[idx], &sd->lv[idx + 1], (sd->count - idx - 1) * sizeof(sd->lv[0]));
		sd->count--;
	} else if (found) {
		sd->lv[idx].qty = u->qty;
		sd->lv[idx].orders = u->order_count;
		from_top = sd->count - 1 - idx;
		in_place = 1;
	} else {
		if (sd->count == sd->cap && sb_grow(sb, sd) < 0) {
			sb->ctr.alloc_failures++;
			return;
		}
		memmove(&sd->lv[idx + 1], &sd->lv[idx], (sd->count - idx) * sizeof(sd->lv[0]));
		sd->lv[idx].key = key;
		sd->lv[idx].qty = u->qty;
		sd->lv[idx].orders = u->order_count;
		sd->count++;
		from_top = sd->count - 1 - idx;
		if (sd->count > sb->ctr.max_depth)
			sb->ctr.max_depth = sd->count;
	}
	vn->exch_ts = u->exch_ts;
	y->exch_ts = u->exch_ts;
	y->recv_ts = u->recv_ts;
	if (!(vn->flags & WB_VENF_PRESENT)) {
		vn->flags |= WB_VENF_PRESENT;
		/* A symbol first seen after a venue-wide gap may have lost
		 * messages in it like every other. */
		if (sb->venue_gap[u->venue])
			vn->flags |= WB_VENF_GAP;
		y->venues_present |= (uint32_t)(1u << u->venue);
		y->venues_known |= (uint32_t)(1u << u->venue);
		/* One change, counted once: with the level below, or alone. */
		if (from_top < WB_BOOK_DEPTH)
			y->dirty |= SB_D_META;
		else
			sb_mark(sb, u->instrument, SB_D_META);
	}
	/* A change below the venue's tenth level changes nothing published. */
	if (from_top < WB_BOOK_DEPTH) {
		uint16_t moved = sb_levels_from(from_top);
		uint16_t changed = in_place ? (uint16_t)(1u << from_top) : moved;

		vn->stale[si] |= changed;
		y->cons_stale[si] |= (y->venues_known & ~(1u << u->venue)) == 0 ? changed : moved;
		sb_mark(sb, u->instrument, SB_D_LEVELS);
	}
	if (wb_unlikely(y->sip) && from_top == 0)
		sb_sip_side(sb, u->instrument, u->venue, si, u->exch_ts, u->recv_ts);
}

static void sb_clear_venue(struct superbook *sb, uint32_t inst, uint32_t venue)
{
	struct sb_venue *vn = &sb->sym[inst].venue[venue];

	if (!vn->side[0].count && !vn->side[1].count && !(vn->flags & WB_VENF_GAP))
		return;
	vn->side[0].count = vn->side[1].count = 0;
	/* A clear starts the venue's book afresh (new session or snapshot):
	 * whatever a gap lost is gone with it. */
	vn->flags &= (uint8_t)~WB_VENF_GAP;
	vn->stale[0] = vn->stale[1] = SB_ALL_LEVELS;
	sb->sym[inst].cons_stale[0] = sb->sym[inst].cons_stale[1] = SB_ALL_LEVELS;
	sb_mark(sb, inst, SB_D_LEVELS | SB_D_META);
}

/* A clear, told to the SIP view of a symbol that has one (its tops went). */
static void sb_clear_venue_seen(struct superbook *sb, uint32_t inst, const struct book_update *u)
{
	const struct sb_venue *vn = &sb->sym[inst].venue[u->venue];
	int had = vn->side[0].count || vn->side[1].count;

	sb_clear_venue(sb, inst, u->venue);
	if (wb_unlikely(sb->sym[inst].sip) && had) {
		sb_sip_side(sb, (uint16_t)inst, u->venue, 0, u->exch_ts, u->recv_ts);
		sb_sip_side(sb, (uint16_t)inst, u->venue, 1, u->exch_ts, u->recv_ts);
	}
}

static void sb_gap_venue(struct superbook *sb, uint32_t inst, uint32_t venue)
{
	struct sb_venue *vn = &sb->sym[inst].venue[venue];

	vn->flags |= WB_VENF_GAP;
	vn->gaps++;
	sb->sym[inst].venues_known |= (uint32_t)(1u << venue);
	sb_mark(sb, inst, SB_D_META);
}

static inline int sb_is_halt(uint8_t state)
{
	return state == WB_STATE_HALTED || state == WB_STATE_PAUSED;
}

/* A venue whose last status for the symbol halts or pauses it, or -1. */
static int sb_halting_venue(const struct sb_symbol *y)
{
	uint32_t m;

	for (m = y->venues_known; m; m &= m - 1)
		if (sb_is_halt(y->venue[__builtin_ctz(m)].state))
			return __builtin_ctz(m);
	return -1;
}

static int sb_valid_instrument(struct superbook *sb, const struct book_update *u)
{
	if (wb_unlikely(u->instrument == 0 || u->instrument >= sb->capacity)) {
		sb->ctr.bad_instrument++;
		return 0;
	}
	return 1;
}

static void sb_apply_other(struct superbook *sb, const struct book_update *u);

/* The venue's newest receive time, published with the batch. */
static inline void sb_note_recv(struct superbook *sb, uint32_t v, uint64_t recv_ts)
{
	if (recv_ts > sb->venue_recv[v]) {
		sb->venue_recv[v] = recv_ts;
		sb->venue_recv_dirty |= 1u << v;
	}
}

/*
 * A LEVEL update with a venue, instrument and side in range (nearly every
 * update) goes straight to its book; anything else, errors included, takes
 * the general path, which checks and counts in the order below.
 */
static inline __attribute__((always_inline)) void sb_apply_one(struct superbook *sb,
							     const struct book_update *u)
{
	uint32_t v = u->venue;

	if (wb_likely(u->kind == BOOK_UP_LEVEL && v - 1u < WB_BOOK_VENUES - 1u &&
		      u->instrument - 1u < sb->capacity - 1u &&
		      (u->side == WB_SIDE_BUY || u->side == WB_SIDE_SELL))) {
		sb->ctr.updates++;
		sb_note_recv(sb, v, u->recv_ts);
		sb_seen(sb, u->instrument);
		sb_apply_level(sb, u);
		return;
	}
	sb_apply_other(sb, u);
}

void superbook_apply(struct superbook *sb, const struct book_update *u)
{
	sb_apply_one(sb, u);
}

static void sb_apply_other(struct superbook *sb, const struct book_update *u)
{
	struct sb_symbol *y;
	uint32_t i;

	sb->ctr.updates++;
	if (wb_unlikely(book_update_is_sip(u->kind))) {
		/* the SIP's view: no venue book, no venue freshness */
		sb_apply_sip(sb, u);
		return;
	}
	if (wb_unlikely(u->venue >= WB_BOOK_VENUES) && u->kind != BOOK_UP_BATCH_END &&
	    u->kind != BOOK_UP_SYMBOL && u->kind != BOOK_UP_PACKET) {
		sb->ctr.bad_venue++;
		return;
	}
	if (u->venue < WB_BOOK_VENUES && u->kind != BOOK_UP_BATCH_END && u->kind != BOOK_UP_PACKET)
		sb_note_recv(sb, u->venue, u->recv_ts);
	switch (u->kind) {
	case BOOK_UP_LEVEL:
		if (!sb_valid_instrument(sb, u))
			return;
		if (wb_unlikely(u->venue == 0)) {
			sb->ctr.bad_venue++;
			return;
		}
		if (wb_unlikely(u->side != WB_SIDE_BUY && u->side != WB_SIDE_SELL)) {
			sb->ctr.bad_side++;
			return;
		}
		sb_seen(sb, u->instrument);
		sb_apply_level(sb, u);
		return;
	case BOOK_UP_PACKET:
		return; /* a latency mark for the builder, nothing in the book */
	case BOOK_UP_BATCH_END:
		sb->ctr.batches++;
		superbook_publish(sb);
		return;
	case BOOK_UP_TRADE:
		if (!sb_valid_instrument(sb, u))
			return;
		sb->ctr.trades++;
		sb_seen(sb, u->instrument);
		y = &sb->sym[u->instrument];
		y->trade.price = u->price;
		y->trade.qty = u->qty;
		y->trade.exch_ts = u->exch_ts;
		y->trade.match_id = u->u.match_id;
		y->trade.venue = u->venue;
		y->trade.flags = u->flags;
		y->trade.count++;
		if (u->flags & WB_EVF_PRINTABLE)
			y->trade.volume += u->qty;
		y->exch_ts = u->exch_ts;
		y->recv_ts = u->recv_ts;
		sb_mark(sb, u->instrument, SB_D_TRADE);
		return;
	case BOOK_UP_STATUS:
		sb->ctr.statuses++;
		if (u->instrument == 0)
			return; /* venue-wide (system events): nothing per symbol */
		if (!sb_valid_instrument(sb, u))
			return;
		sb_seen(sb, u->instrument);
		y = &sb->sym[u->instrument];
		y->venue[u->venue].state = u->u.status.state;
		y->venues_known |= (uint32_t)(1u << u->venue);
		/* A halt or pause on any venue (a regulatory halt reaches every
		 * feed, not all at once) is not lifted by another venue still
		 * saying trading; otherwise the latest status stands. */
		if (sb_halting_venue(y) >= 0 && !sb_is_halt(u->u.status.state) &&
		    y->state_venue != u->venue) {
			sb_mark(sb, u->instrument, SB_D_META);
			return;
		}
		y->state = u->u.status.state;
		y->raw_state = u->u.status.raw_state;
		memcpy(y->reason, u->u.status.reason, sizeof(y->reason));
		y->state_venue = u->venue;
		if (!sb_is_halt(y->state) && sb_halting_venue(y) >= 0) {
			/* the venue that set the halt lifted it; another still halts */
			int hv = sb_halting_venue(y);

			y->state = y->venue[hv].state;
			y->raw_state = 0;
			memset(y->reason, 0, sizeof(y->reason));
			y->state_venue = (uint8_t)hv;
		}
		sb_mark(sb, u->instrument, SB_D_STATUS | SB_D_META);
		return;
	case BOOK_UP_CLEAR:
		sb->ctr.clears++;
		if (u->instrument == 0) {
			sb->venue_gap[u->venue] = 0;
			for (i = 1; i <= sb->max_instrument; i++)
				sb_clear_venue_seen(sb, i, u);
			return;
		}
		if (!sb_valid_instrument(sb, u))
			return;
		sb_clear_venue_seen(sb, u->instrument, u);
		return;
	case BOOK_UP_GAP:
		sb->ctr.gaps++;
		if (u->venue < WB_BOOK_VENUES)
			wb_store_relaxed(&sb->hdr->venue_gaps[u->venue], sb->hdr->venue_gaps[u->venue] + 1);
		if (u->instrument == 0) {
			/* Unknown which symbols lost messages: all of them may. */
			sb->venue_gap[u->venue] = 1;
			for (i = 1; i <= sb->max_instrument; i++)
				sb_gap_venue(sb, i, u->venue);
			return;
		}
		if (!sb_valid_instrument(sb, u))
			return;
		sb_gap_venue(sb, u->instrument, u->venue);
		return;
	case BOOK_UP_SYMBOL:
		sb->ctr.symbols++;
		if (!sb_valid_instrument(sb, u))
			return;
		superbook_add_symbol(sb, u->instrument, u->u.ticker);
		return;
	default:
		sb->ctr.bad_kind++;
		return;
	}
}

int superbook_add_symbol(struct superbook *sb, uint16_t instrument, const char ticker[8])
{
	struct wb_shm_symbol *r;
	uint64_t key;

	if (instrument == 0 || instrument >= sb->capacity)
		return WB_EINVAL;
	memcpy(&key, ticker, 8);
	r = sb_record(sb, instrument);
	if (sb->dir[instrument] == key)
		return 0;
	/* A symbol is announced before it trades: fault its record in now,
	 * not in the publish of its first book change. */
	if (!sb->dir[instrument] && book_shm_prefault(&sb->shm, r, sizeof(*r)) < 0)
		sb->ctr.prefault_failures++;
	/* The ticker lives outside the seqlocked part readers copy, but set
	 * it under the lock anyway so a snapshot never pairs two tickers. */
	wb_store_relaxed(&r->seq, r->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->ticker = key;
	wb_store_release(&r->seq, r->seq + 1);
	/* Directory entry before the count that makes it visible. */
	wb_store_release(&sb->dir[instrument], key);
	sb_seen(sb, instrument);
	return 0;
}

/* ---- publishing -------------------------------------------------------- */

static void sb_write_venue_side(struct wb_level *out, uint8_t *count, const struct sb_side *sd,
				int ask, uint16_t stale)
{
	uint32_t n = sd->count < WB_BOOK_DEPTH ? sd->count : WB_BOOK_DEPTH;

	for (uint32_t m = stale & ((1u << n) - 1); m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		const struct sb_level *l = &sd->lv[sd->count - 1 - i];

		out[i].price = ask ? -l->key : l->key;
		out[i].qty = l->qty;
		out[i].orders = l->orders;
		out[i].venues = 0;
	}
	*count = (uint8_t)n;
}

/*
 * Merge the venues' tops into the best WB_BOOK_DEPTH consolidated levels,
 * writing the stale ones; present: the venues with levels on this side.
 * Breakdown columns are written for present venues from the first stale
 * level (one venue: the stale levels), and cleared whole for venues that
 * left (their leaving made every level stale).
 */
static uint8_t sb_write_consolidated(struct wb_level *out, uint64_t (*vq)[WB_BOOK_DEPTH],
				     struct sb_symbol *y, int si, uint32_t present, uint16_t stale)
{
	const struct sb_side *sd[WB_BOOK_VENUES];
	uint8_t vid[WB_BOOK_VENUES];
	int32_t head[WB_BOOK_VENUES];
	uint32_t n = 0, nv = 0, i, m, from = (uint32_t)__builtin_ctz(stale);

	for (m = y->cols[si] & ~present; m; m &= m - 1)
		memset(vq[__builtin_ctz(m)], 0, sizeof(vq[0]));
	y->cols[si] = present;
	for (m = present; m; m &= m - 1) {
		uint32_t v = (uint32_t)__builtin_ctz(m);

		sd[nv] = &y->venue[v].side[si];
		head[nv] = (int32_t)sd[nv]->count - 1;
		vid[nv++] = (uint8_t)v;
	}
	if (nv == 1) {
		/* One venue quoting (the common case): its top is the
		 * consolidated top, no merge. */
		uint32_t cnt = sd[0]->count < WB_BOOK_DEPTH ? sd[0]->count : WB_BOOK_DEPTH;
		uint64_t *col = vq[vid[0]];

		for (m = stale & ((1u << cnt) - 1); m; m &= m - 1) {
			const struct sb_level *l;

			i = (uint32_t)__builtin_ctz(m);
			l = &sd[0]->lv[sd[0]->count - 1 - i];

			out[i].price = si ? -l->key : l->key;
			out[i].qty = l->qty;
			out[i].orders = l->orders;
			out[i].venues = 1u << vid[0];
			col[i] = l->qty;
		}
		return (uint8_t)cnt;
	}
	while (n < WB_BOOK_DEPTH) {
		int64_t best = INT64_MIN;
		uint64_t qty = 0;
		uint32_t orders = 0;
		uint32_t venues = 0;
		int any = 0;

		for (i = 0; i < nv; i++)
			if (head[i] >= 0 && (!any || sd[i]->lv[head[i]].key > best)) {
				best = sd[i]->lv[head[i]].key;
				any = 1;
			}
		if (!any)
			break;
		for (i = 0; i < nv; i++) {
			const struct sb_level *l;
			uint64_t q = 0;

			if (head[i] >= 0 && (l = &sd[i]->lv[head[i]])->key == best) {
				q = l->qty;
				qty += q;
				orders += l->orders;
				venues |= 1u << vid[i];
				head[i]--;
			}
			if (n >= from)
				vq[vid[i]][n] = q;
		}
		if (n >= from) {
			out[n].price = si ? -best : best;
			out[n].qty = qty;
			out[n].orders = orders;
			out[n].venues = venues;
		}
		n++;
	}
	return (uint8_t)n;
}

/*
 * One side of a symbol that a single venue v quotes (the common case),
 * written in one pass: the venue's levels, the consolidated levels (the
 * same levels, naming v) and v's breakdown column, from the same source
 * lines, instead of the venue pass and the merge reading them twice. The
 * levels stale in either view are written in both (same values).
 */
static void sb_write_single_venue_side(struct wb_shm_symbol *r, struct sb_symbol *y, uint32_t v, int si)
{
	const struct sb_side *sd = &y->venue[v].side[si];
	struct wb_shm_venue *rv = &r->venue[v];
	struct wb_level *vout = si ? rv->ask : rv->bid, *cout = si ? r->ask : r->bid;
	uint64_t *col = si ? r->ask_venue_qty[v] : r->bid_venue_qty[v];
	uint32_t n = sd->count < WB_BOOK_DEPTH ? sd->count : WB_BOOK_DEPTH, m;
	uint32_t present = n ? 1u << v : 0;
	uint16_t stale = (uint16_t)(y->venue[v].stale[si] | y->cons_stale[si]);

	if (y->cols[si] & ~present)
		__builtin_memset(col, 0, sizeof(r->bid_venue_qty[0]));
	y->cols[si] = present;
	for (m = stale & ((1u << n) - 1); m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		const struct sb_level *l = &sd->lv[sd->count - 1 - i];
		int64_t price = si ? -l->key : l->key;

		vout[i] = (struct wb_level){ .price = price, .qty = l->qty, .orders = l->orders };
		cout[i] = (struct wb_level){ .price = price, .qty = l->qty, .orders = l->orders,
					     .venues = 1u << v };
		col[i] = l->qty;
	}
	if (si) {
		rv->ask_count = r->ask_count = (uint8_t)n;
		r->ask_price = n ? cout[0].price : 0;
		r->ask_qty = n ? cout[0].qty : 0;
		r->ask_venues = n ? cout[0].venues : 0;
	} else {
		rv->bid_count = r->bid_count = (uint8_t)n;
		r->bid_price = n ? cout[0].price : 0;
		r->bid_qty = n ? cout[0].qty : 0;
		r->bid_venues = n ? cout[0].venues : 0;
	}
}

/*
 * A venue's state in its record once its sides are written; its staleness
 * is spent. Returns the symbol flags it adds (WB_SYMF_GAP). Its flags,
 * state and gaps change only with SB_D_META, and whether it is crossed
 * only when a side's top level (stale bit 0: a new best, or the side
 * emptied or filled) changed: otherwise the record holds them already, and
 * the other side's top, a line no other write of this publish touches,
 * is not read.
 */
static inline uint16_t sb_finish_venue(struct wb_shm_venue *rv, struct sb_venue *vn, uint32_t d)
{
	uint16_t stale = (uint16_t)(vn->stale[0] | vn->stale[1]);

	if ((d & SB_D_META) || (stale & 1u)) {
		uint8_t vf = vn->flags;

		if (rv->bid_count && rv->ask_count && rv->bid[0].price >= rv->ask[0].price)
			vf |= WB_VENF_CROSSED;
		rv->flags = vf;
		rv->state = vn->state;
		rv->gaps = vn->gaps;
	}
	if ((d & SB_D_META) || stale)
		rv->exch_ts = vn->exch_ts;
	vn->stale[0] = vn->stale[1] = 0;
	return vn->flags & WB_VENF_GAP ? WB_SYMF_GAP : 0;
}

static void sb_publish_symbol(struct superbook *sb, uint32_t inst)
{
	struct sb_symbol *y = &sb->sym[inst];
	struct wb_shm_symbol *r = sb_record(sb, inst);
	uint32_t d = y->dirty, known = y->venues_known, m, side_present[2] = { 0, 0 };
	uint64_t seq = r->seq;
	uint16_t flags = 0;
	int v;

	/* Seqlock write: odd, then a release fence so no data store below
	 * becomes visible before the odd sequence. */
	wb_store_relaxed(&r->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);

	if (sb_one_venue(known)) {
		/* One venue: its sides and the consolidated ones in one pass. */
		v = __builtin_ctz(known);
		for (int si = 0; si < 2; si++)
			if (y->venue[v].stale[si] | y->cons_stale[si])
				sb_write_single_venue_side(r, y, (uint32_t)v, si);
		flags |= sb_finish_venue(&r->venue[v], &y->venue[v], d);
	} else {
		for (m = known; m; m &= m - 1) {
			struct sb_venue *vn;
			struct wb_shm_venue *rv;

			v = __builtin_ctz(m);
			vn = &y->venue[v];
			rv = &r->venue[v];
			if (vn->side[0].count)
				side_present[0] |= 1u << v;
			if (vn->side[1].count)
				side_present[1] |= 1u << v;
			if (vn->stale[0])
				sb_write_venue_side(rv->bid, &rv->bid_count, &vn->side[0], 0, vn->stale[0]);
			if (vn->stale[1])
				sb_write_venue_side(rv->ask, &rv->ask_count, &vn->side[1], 1, vn->stale[1]);
			flags |= sb_finish_venue(rv, vn, d);
		}
		if (y->cons_stale[0]) {
			r->bid_count = sb_write_consolidated(r->bid, r->bid_venue_qty, y, 0, side_present[0],
							     y->cons_stale[0]);
			r->bid_price = r->bid_count ? r->bid[0].price : 0;
			r->bid_qty = r->bid_count ? r->bid[0].qty : 0;
			r->bid_venues = r->bid_count ? r->bid[0].venues : 0;
		}
		if (y->cons_stale[1]) {
			r->ask_count = sb_write_consolidated(r->ask, r->ask_venue_qty, y, 1, side_present[1],
							     y->cons_stale[1]);
			r->ask_price = r->ask_count ? r->ask[0].price : 0;
			r->ask_qty = r->ask_count ? r->ask[0].qty : 0;
			r->ask_venues = r->ask_count ? r->ask[0].venues : 0;
		}
	}
	y->cons_stale[0] = y->cons_stale[1] = 0;
	if (d & SB_D_TRADE)
		r->last_trade = y->trade;
	if (d & SB_D_STATUS) {
		r->state = y->state;
		r->raw_state = y->raw_state;
		memcpy(r->reason, y->reason, sizeof(r->reason));
		r->state_venue = y->state_venue;
	}
	if (r->bid_count && r->ask_count) {
		if (r->bid_price == r->ask_price)
			flags |= WB_SYMF_LOCKED;
		else if (r->bid_price > r->ask_price)
			flags |= WB_SYMF_CROSSED;
	}
	if (y->state == WB_STATE_HALTED || y->state == WB_STATE_PAUSED)
		flags |= WB_SYMF_HALTED;
	r->flags = flags;
	if (d & (SB_D_META | SB_D_LEVELS | SB_D_TRADE)) {
		r->venues_present = y->venues_present;
		r->exch_ts = y->exch_ts;
		r->recv_ts = y->recv_ts;
	}
	r->updates += y->changes;
	sb->publish_changes += y->changes;
	y->changes = 0;
	wb_store_release(&r->seq, seq + 2);

	y->dirty = 0;
}

WB_PREFETCH_FN void sb_prefetch_update(const struct superbook *sb, const struct book_update *u, int stage)
{
	const struct sb_venue *vn;

	if (wb_unlikely(u->kind != BOOK_UP_LEVEL)) {
		if (book_update_is_sip(u->kind) && !sb->sipq)
			sipview_prefetch_update(sb->sv, u, stage);
		return;
	}
	if (u->instrument >= sb->capacity || u->venue >= WB_BOOK_VENUES)
		return;
	vn = &sb->sym[u->instrument].venue[u->venue];
	if (stage == 0) {
		__builtin_prefetch(&sb->sym[u->instrument], 1);
		__builtin_prefetch(vn, 1);
	} else {
		const struct sb_side *sd = &vn->side[u->side == WB_SIDE_SELL];

		if (sd->count)
			__builtin_prefetch(&sd->lv[sd->count - 1]);
		/* the symbol's line was warmed at stage 0 */
		if (wb_unlikely(sb->sym[u->instrument].sip) && !sb->sipq)
			sipview_prefetch(sb->sv, u->instrument, u->venue);
	}
}

void superbook_prefetch(const struct superbook *sb, const struct book_update *u, int stage)
{
	sb_prefetch_update(sb, u, stage);
}


void superbook_apply_run(struct superbook *sb, const struct book_update *u, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (i + SUPERBOOK_AHEAD_STATE < n)
			sb_prefetch_update(sb, &u[i + SUPERBOOK_AHEAD_STATE], 0);
		if (i + SUPERBOOK_AHEAD_LEVEL < n)
			sb_prefetch_update(sb, &u[i + SUPERBOOK_AHEAD_LEVEL], 1);
		sb_apply_one(sb, &u[i]);
	}
}

uint64_t superbook_apply_ring(struct superbook *sb, const struct book_update *slots, uint64_t mask,
			      uint64_t first, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		const struct book_update *u = &slots[(first + i) & mask];

		if (i + SUPERBOOK_AHEAD_STATE < n)
			sb_prefetch_update(sb, &slots[(first + i + SUPERBOOK_AHEAD_STATE) & mask], 0);
		if (i + SUPERBOOK_AHEAD_LEVEL < n)
			sb_prefetch_update(sb, &slots[(first + i + SUPERBOOK_AHEAD_LEVEL) & mask], 1);
		if (u->kind == BOOK_UP_PACKET || u->kind == BOOK_UP_BATCH_END)
			break;
		sb_apply_one(sb, u);
	}
	return i;
}

/*
 * Warm the record lines sb_publish_symbol(inst) will write, a few symbols
 * ahead: the records are far apart in a 4 KiB-page shared mapping, so
 * each publish is a TLB miss and a chain of line misses unless started
 * early. Lines 0 and 1, the first stale consolidated level of each side
 * and, for a symbol quoted on one venue (the common case), that venue's
 * header, its first stale level of each side (its tops when one changed:
 * sb_finish_venue reads them) and its breakdown column. The symbol's own
 * state (venues_known, cons_stale, the venue's stale bits) was touched by
 * the updates that made it dirty: in cache.
 */
WB_PREFETCH_FN void sb_prefetch_record(struct superbook *sb, uint32_t inst)
{
	const struct sb_symbol *y = &sb->sym[inst];
	struct wb_shm_symbol *r = sb_record(sb, inst);
	uint32_t known = y->venues_known;
	uint16_t bid = y->cons_stale[0], ask = y->cons_stale[1];

	__builtin_prefetch(r, 1);
	__builtin_prefetch(&r->exch_ts, 1);
	if (bid)
		__builtin_prefetch(&r->bid[__builtin_ctz(bid)], 1);
	if (ask)
		__builtin_prefetch(&r->ask[__builtin_ctz(ask)], 1);
	if (sb_one_venue(known)) {
		uint32_t v = (uint32_t)__builtin_ctz(known);

		const struct sb_venue *vn = &y->venue[v];
		uint16_t vbid = (uint16_t)(vn->stale[0] | bid), vask = (uint16_t)(vn->stale[1] | ask);

		__builtin_prefetch(&r->venue[v], 1);
		if (vbid)
			__builtin_prefetch(&r->venue[v].bid[__builtin_ctz(vbid)], 1);
		if (vask)
			__builtin_prefetch(&r->venue[v].ask[__builtin_ctz(vask)], 1);
		/* a new top: the crossed check reads both tops */
		if ((vbid | vask) & 1u) {
			__builtin_prefetch(&r->venue[v].bid[0], 1);
			__builtin_prefetch(&r->venue[v].ask[0], 1);
		}
		if (bid)
			__builtin_prefetch(&r->bid_venue_qty[v][__builtin_ctz(bid)], 1);
		if (ask)
			__builtin_prefetch(&r->ask_venue_qty[v][__builtin_ctz(ask)], 1);
	}
}

/* Records warmed ahead of the one being written. */
#define SB_PUBLISH_AHEAD 4u

unsigned superbook_publish(struct superbook *sb)
{
	uint32_t i, n = sb->dirty_count, m;

	if (sb->sipq)
		book_queue_publish(sb->sipq);
	for (m = sb->venue_recv_dirty; m; m &= m - 1)
		wb_store_relaxed(&sb->hdr->venue_recv_ns[__builtin_ctz(m)],
				 sb->venue_recv[__builtin_ctz(m)]);
	sb->venue_recv_dirty = 0;
	if (!n)
		return 0;
	for (i = 0; i < n && i < SB_PUBLISH_AHEAD; i++)
		sb_prefetch_record(sb, sb->dirty_list[i]);
	for (i = 0; i < n; i++) {
		if (i + SB_PUBLISH_AHEAD < n)
			sb_prefetch_record(sb, sb->dirty_list[i + SB_PUBLISH_AHEAD]);
		sb_publish_symbol(sb, sb->dirty_list[i]);
	}
	sb->dirty_count = 0;
	sb->ctr.publishes += n;
	wb_store_release(&sb->hdr->updates, sb->hdr->updates + sb->publish_changes);
	sb->publish_changes = 0;
	return n;
}

static uint64_t sb_checksum_levels(uint64_t h, const struct wb_level *lv, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		h = book_checksum_mix(h, (uint64_t)lv[i].price);
		h = book_checksum_mix(h, lv[i].qty);
		h = book_checksum_mix(h, (uint64_t)lv[i].orders << 32 | lv[i].venues);
	}
	return h;
}

struct book_tickers superbook_tickers(const struct superbook *sb)
{
	return (struct book_tickers){ .key = sb->dir, .count = sb->capacity };
}

uint64_t superbook_checksum(const struct superbook *sb)
{
	const struct book_tickers tk = superbook_tickers(sb);
	uint64_t sum = 0, parts = 0, symbols = sb->hdr->symbols;

	for (uint32_t i = 1; i < symbols && i < sb->capacity; i++) {
		const struct wb_shm_symbol *r =
			(const struct wb_shm_symbol *)(sb->records + (size_t)i * sizeof(*r));
		const struct wb_trade *t = &r->last_trade;

		/* The part of symbol i, from its ticker, not its index. */
		uint64_t h = book_checksum_part(&tk, i);

		h = book_checksum_mix(h, r->ticker);
		h = book_checksum_mix(h, (uint64_t)r->flags << 48 | (uint64_t)r->state << 40 |
					 (uint64_t)(uint8_t)r->raw_state << 32 | r->state_venue);
		h = book_checksum_mix(h, (uint64_t)r->bid_venues << 32 | r->ask_venues);
		h = book_checksum_mix(h, r->venues_present);
		h = book_checksum_mix(h, (uint64_t)r->bid_price);
		h = book_checksum_mix(h, r->bid_qty);
		h = book_checksum_mix(h, (uint64_t)r->ask_price);
		h = book_checksum_mix(h, r->ask_qty);
		h = book_checksum_mix(h, (uint64_t)t->price);
		h = book_checksum_mix(h, t->qty);
		h = book_checksum_mix(h, t->exch_ts);
		h = book_checksum_mix(h, t->match_id);
		h = book_checksum_mix(h, t->volume);
		h = book_checksum_mix(h, (uint64_t)t->count << 16 | (uint64_t)t->venue << 8 | t->flags);
		h = book_checksum_mix(h, (uint64_t)r->bid_count << 8 | r->ask_count);
		h = sb_checksum_levels(h, r->bid, r->bid_count);
		h = sb_checksum_levels(h, r->ask, r->ask_count);
		for (uint32_t v = 0; v < WB_BOOK_VENUES; v++) {
			const struct wb_shm_venue *rv = &r->venue[v];

			for (uint32_t k = 0; k < r->bid_count; k++)
				h = book_checksum_mix(h, r->bid_venue_qty[v][k]);
			for (uint32_t k = 0; k < r->ask_count; k++)
				h = book_checksum_mix(h, r->ask_venue_qty[v][k]);
			h = book_checksum_mix(h, (uint64_t)rv->flags << 24 | (uint64_t)rv->state << 16 |
						 (uint64_t)rv->bid_count << 8 | rv->ask_count);
			h = book_checksum_mix(h, rv->gaps);
			h = sb_checksum_levels(h, rv->bid, rv->bid_count);
			h = sb_checksum_levels(h, rv->ask, rv->ask_count);
		}
		sum += h;
		parts++;
	}
	return book_checksum_final(sum, parts);
}
