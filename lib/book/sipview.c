/*
 * The SIP view and the SIP-vs-direct comparison (builder thread 2); see
 * sipview.h and "The SIP view" in wirebook/book.h.
 *
 * Shared memory holds what readers see: a seqlocked record per symbol and
 * the book-wide statistics (single-word counters stored relaxed, episode
 * rings with a seqlock per entry). What only the comparison needs (each
 * venue's recent direct BBOs, the episodes under way) stays here, per
 * symbol, allocated at the symbol's first SIP update.
 */
#include <stdlib.h>
#include <string.h>

#include "book/checksum.h"
#include "book/sipview.h"
#include "book/venue_mem.h"
#include "wirebook/barrier.h"

#define SV_DIRECT 0	/* who changed: the direct books */
#define SV_SIP 1	/* the SIP */

/* One direct BBO of a venue, as the direct feed delivered it (40 bytes). */
struct sv_entry {
	int64_t bid, ask;
	uint32_t bid_qty, ask_qty;
	uint64_t exch_ts, recv_ts;
};

/*
 * A venue's recent direct BBOs of a symbol: entry n (absolute) at
 * e[n % WB_SIP_BBO_HISTORY]. The head is one cache line at an address
 * computed from (symbol, venue), so the Super-Book can warm it ahead
 * (sipview_prefetch); it holds the newest entry, all a push compares with.
 */
struct sv_hist {
	uint64_t written;	/* entries ever pushed */
	uint64_t unshown;	/* the first the SIP has not shown (nor skipped) */
	struct sv_entry last;	/* the newest entry (also in e[]) */
	struct sv_entry *e;	/* WB_SIP_BBO_HISTORY entries, allocated at the first push */
} __attribute__((aligned(64)));

/* A locked/crossed episode under way. */
struct sv_lock {
	uint64_t start_recv, start_exch;
	int64_t bid, ask;
	uint32_t bid_venues, ask_venues;
	uint8_t open, crossed;
};

/*
 * A symbol's comparison state. The direct side is kept here as each
 * venue's top prices (told by the Super-Book at every top change), so the
 * direct NBBO is a pass over a few lines of this struct, not over the
 * Super-Book's level arrays.
 */
struct sv_symbol {
	/* line 0: what every direct top change reads */
	uint8_t active;			/* has a SIP view */
	uint8_t dis_open;		/* a disagreement under way */
	uint8_t dis_who;		/* who began it: SV_DIRECT or SV_SIP */
	uint32_t present;		/* venues with a direct top (a bid or an ask) */
	int64_t direct_bid, direct_ask;	/* the direct NBBO last compared */
	uint32_t direct_present;	/* and the venues present then */
	/* each venue's direct top, 0: none (the low venue ids, the busy
	 * ones, share the first line of each array) */
	int64_t top_bid[WB_BOOK_VENUES] __attribute__((aligned(64)));
	int64_t top_ask[WB_BOOK_VENUES];
	struct sv_lock lc[2];		/* WB_VIEW_DIRECT, WB_VIEW_SIP */
	/* the disagreement under way */
	uint64_t dis_recv, dis_exch;
	int64_t dis_bid, dis_ask;	/* the direct NBBO at its start */
	int64_t dis_diff;		/* its largest price difference so far */
} __attribute__((aligned(64)));

struct sipview {
	struct wb_shm_sip *rec;
	struct wb_shm_sipstats *st;
	uint32_t capacity;
	int numa_node;
	struct sv_symbol *sym;		/* [capacity] */
	struct sv_hist *hist;		/* [capacity][WB_BOOK_VENUES] */
	uint64_t symbols;
};

/* A counter readers load without locks: one relaxed store per change. */
static inline void sv_add(uint64_t *p, uint64_t v)
{
	wb_store_relaxed(p, *p + v);
}

static inline void sv_max(uint64_t *p, uint64_t v)
{
	if (v > *p)
		wb_store_relaxed(p, v);
}

static inline int64_t sv_abs(int64_t v)
{
	return v < 0 ? -v : v;
}

static inline void sv_begin(struct wb_shm_sip *r)
{
	wb_store_relaxed(&r->seq, r->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void sv_end(struct wb_shm_sip *r)
{
	wb_store_release(&r->seq, r->seq + 1);
}

struct sipview *sipview_create(struct wb_shm_sip *records, struct wb_shm_sipstats *stats,
			       uint32_t capacity, int numa_node)
{
	struct sipview *sv = calloc(1, sizeof(*sv));

	if (!sv)
		return NULL;
	sv->rec = records;
	sv->st = stats;
	sv->capacity = capacity;
	sv->numa_node = numa_node;
	/* Zeroed and touched only where a symbol has a SIP view: the pages
	 * of the others are never faulted in. */
	sv->sym = venue_mem_alloc((size_t)capacity * sizeof(*sv->sym), numa_node);
	sv->hist = venue_mem_alloc((size_t)capacity * WB_BOOK_VENUES * sizeof(*sv->hist), numa_node);
	if (!sv->sym || !sv->hist) {
		sipview_destroy(sv);
		return NULL;
	}
	return sv;
}

void sipview_destroy(struct sipview *sv)
{
	if (!sv)
		return;
	if (sv->hist) {
		for (uint32_t i = 0; i < sv->capacity; i++) {
			if (!sv->sym || !sv->sym[i].active)
				continue;
			for (int v = 0; v < WB_BOOK_VENUES; v++)
				free(sv->hist[(size_t)i * WB_BOOK_VENUES + v].e);
		}
		venue_mem_free(sv->hist, (size_t)sv->capacity * WB_BOOK_VENUES * sizeof(*sv->hist),
			       sv->numa_node);
	}
	if (sv->sym)
		venue_mem_free(sv->sym, (size_t)sv->capacity * sizeof(*sv->sym), sv->numa_node);
	free(sv);
}

void sipview_prefetch(const struct sipview *sv, uint16_t instrument, uint8_t venue)
{
	const struct sv_symbol *s;

	if (instrument >= sv->capacity || venue >= WB_BOOK_VENUES)
		return;
	s = &sv->sym[instrument];
	__builtin_prefetch(s, 1);
	__builtin_prefetch(&s->top_bid[venue], 1);
	__builtin_prefetch(&s->top_ask[venue], 1);
	__builtin_prefetch(&sv->hist[(size_t)instrument * WB_BOOK_VENUES + venue], 1);
}

void sipview_prefetch_update(const struct sipview *sv, const struct book_update *u, int stage)
{
	const struct wb_shm_sip *r;
	const struct sv_hist *h;

	if (u->instrument == 0 || u->instrument >= sv->capacity || u->venue >= WB_BOOK_VENUES)
		return;
	r = &sv->rec[u->instrument];
	h = &sv->hist[(size_t)u->instrument * WB_BOOK_VENUES + u->venue];
	if (stage == 0) {
		sipview_prefetch(sv, u->instrument, u->venue);
		if (u->kind == BOOK_UP_SIP_TOP)
			return;
		__builtin_prefetch(r, 1);
		if (u->kind == BOOK_UP_SIP_QUOTE)
			__builtin_prefetch(&r->v.quote[u->venue], 1);
		else if (u->kind == BOOK_UP_SIP_NBBO)
			__builtin_prefetch(&r->v.nbbo, 1);
	} else if (u->kind == BOOK_UP_SIP_QUOTE && h->e && h->written > h->unshown) {
		/* the direct BBO a quote most likely shows: the oldest not shown */
		__builtin_prefetch(&h->e[h->unshown % WB_SIP_BBO_HISTORY]);
	}
}

/* ---- statistics ------------------------------------------------------------ */

static void sv_delay(struct wb_sip_delay *d, uint64_t ns)
{
	if (!d->count || ns < d->min_ns)
		wb_store_relaxed(&d->min_ns, ns);
	sv_max(&d->max_ns, ns);
	sv_add(&d->sum_ns, ns);
	sv_add(&d->hist[wb_delay_bucket(ns)], 1);
	sv_add(&d->count, 1);
}

/* Append an ended episode to its ring (entry seqlock: 2 x the times written). */
static void sv_episode(struct sipview *sv, const struct wb_sip_episode *e)
{
	struct wb_sip_summary *sum = &sv->st->summary;
	int dis = e->kind == WB_EPI_DISAGREE;
	uint64_t *written = dis ? &sum->disagree_written : &sum->lock_written;
	struct wb_sip_episode *slot = &(dis ? sv->st->disagree : sv->st->lock)[*written & (WB_SIP_EPISODES - 1)];
	uint64_t seq = slot->seq;

	wb_store_relaxed(&slot->seq, seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy((char *)slot + sizeof(slot->seq), (const char *)e + sizeof(e->seq),
	       sizeof(*e) - sizeof(e->seq));
	wb_store_release(&slot->seq, seq + 2);
	wb_store_release(written, *written + 1);
}

/* ---- the symbol's state ------------------------------------------------------ */

static inline struct sv_hist *sv_hist(struct sipview *sv, uint16_t inst, uint8_t venue)
{
	return &sv->hist[(size_t)inst * WB_BOOK_VENUES + venue];
}

/* The direct NBBO from the venues' tops, and who locks or crosses it. */
static void sv_direct(const struct sv_symbol *s, struct sip_direct *d)
{
	uint32_t m;

	memset(d, 0, sizeof(*d));
	d->present = s->present;
	for (m = s->present; m; m &= m - 1) {
		int v = __builtin_ctz(m);

		if (s->top_bid[v] > d->bid)
			d->bid = s->top_bid[v];
		if (s->top_ask[v] && (!d->ask || s->top_ask[v] < d->ask))
			d->ask = s->top_ask[v];
	}
	if (!d->bid || !d->ask || d->bid < d->ask)
		return;
	for (m = s->present; m; m &= m - 1) {
		int v = __builtin_ctz(m);

		if (s->top_bid[v] && s->top_bid[v] >= d->ask)
			d->lock_bid_venues |= 1u << v;
		if (s->top_ask[v] && s->top_ask[v] <= d->bid)
			d->lock_ask_venues |= 1u << v;
	}
}

/* Remember a venue's new direct BBO; one message's updates are one BBO. */
static void sv_push(struct sipview *sv, struct sv_hist *h, uint8_t venue, struct sv_entry n)
{
	struct sv_entry *last = &h->last;
	uint64_t exch_ts = n.exch_ts, recv_ts = n.recv_ts;

	if (h->written) {
		if (last->bid == n.bid && last->ask == n.ask && last->bid_qty == n.bid_qty &&
		    last->ask_qty == n.ask_qty)
			return; /* no visible change (the order count moved) */
		if (h->written > h->unshown && last->exch_ts == exch_ts && last->recv_ts == recv_ts) {
			/* the same message's next update: it replaces the state between */
			*last = n;
			h->e[(h->written - 1) % WB_SIP_BBO_HISTORY] = n;
			return;
		}
	} else if (!h->e) {
		h->e = calloc(WB_SIP_BBO_HISTORY, sizeof(*h->e));
		if (!h->e)
			return;
	}
	if (h->written - h->unshown == WB_SIP_BBO_HISTORY) {
		/* the oldest unshown falls out of the history: the SIP never showed it in time */
		h->unshown++;
		sv_add(&sv->st->venue[venue].never_shown, 1);
	}
	h->e[h->written % WB_SIP_BBO_HISTORY] = n;
	*last = n;
	h->written++;
	sv_add(&sv->st->venue[venue].direct_changes, 1);
}

static inline int sv_same_prices(const struct sv_entry *e, const struct wb_sip_quote *q)
{
	return e->bid == q->bid_price && e->ask == q->ask_price;
}

/* A SIP quote of a venue with a direct book: which direct BBO does it show? */
static void sv_match(struct sipview *sv, struct sv_hist *h, uint8_t venue, const struct wb_sip_quote *q)
{
	struct wb_sip_venue_stats *vs = &sv->st->venue[venue];
	uint64_t i, found = UINT64_MAX;
	int exact = 0;

	sv_add(&vs->compared, 1);
	if (h->written == 0 || !h->e) {
		sv_add(&vs->unmatched, 1);
		return;
	}
	for (i = h->unshown; i < h->written; i++) {
		const struct sv_entry *e = &h->e[i % WB_SIP_BBO_HISTORY];

		if (sv_same_prices(e, q) && e->bid_qty == q->bid_qty && e->ask_qty == q->ask_qty) {
			found = i;
			exact = 1;
			break;
		}
	}
	for (i = h->unshown; found == UINT64_MAX && i < h->written; i++)
		if (sv_same_prices(&h->e[i % WB_SIP_BBO_HISTORY], q))
			found = i;
	if (found == UINT64_MAX) {
		/* the SIP repeating what it showed last is no news */
		if (h->unshown && h->written - h->unshown < WB_SIP_BBO_HISTORY &&
		    sv_same_prices(&h->e[(h->unshown - 1) % WB_SIP_BBO_HISTORY], q))
			return;
		sv_add(&vs->unmatched, 1);
		return;
	}
	const struct sv_entry *e = &h->e[found % WB_SIP_BBO_HISTORY];

	sv_add(&vs->never_shown, found - h->unshown);
	h->unshown = found + 1;
	sv_add(exact ? &vs->matched : &vs->size_differs, 1);
	if (q->recv_ts >= e->recv_ts)
		sv_delay(&vs->delay, q->recv_ts - e->recv_ts);
	else
		sv_add(&vs->sip_first, 1);
}

/* ---- the two NBBOs ------------------------------------------------------------ */

static void sv_compare(struct sipview *sv, uint16_t inst, struct sv_symbol *s, struct wb_sip_view *v,
		       const struct sip_direct *d, int who, uint64_t exch_ts, uint64_t recv_ts)
{
	const struct wb_sip_nbbo *n = &v->nbbo;
	struct wb_sip_compare *tot = &sv->st->summary.total;
	int64_t diff = 0;
	uint64_t dur;
	int covered = n->feed && n->bid_venue < 32 && n->ask_venue < 32 &&
		      (!n->bid_venue || (d->present >> n->bid_venue & 1)) &&
		      (!n->ask_venue || (d->present >> n->ask_venue & 1));

	if (!covered) {
		v->flags &= ~(uint32_t)(WB_SIPF_COVERED | WB_SIPF_DISAGREE);
		if (who == SV_SIP) {
			v->cmp.uncovered++;
			sv_add(&tot->uncovered, 1);
		}
		/* not comparable: an episode under way is dropped, not counted */
		s->dis_open = 0;
		v->cmp.open_recv_ts = v->cmp.open_exch_ts = 0;
		return;
	}
	v->flags |= WB_SIPF_COVERED;
	v->cmp.compared++;
	sv_add(&tot->compared, 1);
	if (d->bid && n->bid_price)
		diff = sv_abs(d->bid - n->bid_price);
	if (d->ask && n->ask_price && sv_abs(d->ask - n->ask_price) > diff)
		diff = sv_abs(d->ask - n->ask_price);
	if (d->bid != n->bid_price || d->ask != n->ask_price) {
		if (!s->dis_open) {
			s->dis_open = 1;
			s->dis_who = (uint8_t)who;
			s->dis_recv = recv_ts;
			s->dis_exch = exch_ts;
			s->dis_bid = d->bid;
			s->dis_ask = d->ask;
			s->dis_diff = diff;
			v->cmp.open_recv_ts = recv_ts;
			v->cmp.open_exch_ts = exch_ts;
			v->flags |= WB_SIPF_DISAGREE;
		} else if (diff > s->dis_diff) {
			s->dis_diff = diff;
		}
		return;
	}
	if (!s->dis_open)
		return;
	s->dis_open = 0;
	v->flags &= ~(uint32_t)WB_SIPF_DISAGREE;
	v->cmp.open_recv_ts = v->cmp.open_exch_ts = 0;
	if (recv_ts == s->dis_recv && exch_ts == s->dis_exch)
		return; /* a state between two updates of one message */
	dur = recv_ts > s->dis_recv ? recv_ts - s->dis_recv : 0;

	struct wb_sip_episode e = {
		.start_recv_ts = s->dis_recv, .start_exch_ts = s->dis_exch,
		.end_recv_ts = recv_ts, .end_exch_ts = exch_ts,
		.bid_price = s->dis_bid, .ask_price = s->dis_ask, .price_diff = s->dis_diff,
		.instrument = inst, .kind = WB_EPI_DISAGREE,
	};
	uint64_t *cnt, *ns, *tcnt, *tns;

	v->cmp.episodes++;
	v->cmp.disagree_ns += dur;
	if (dur > v->cmp.max_ns)
		v->cmp.max_ns = dur;
	v->cmp.price_diff_sum += (uint64_t)s->dis_diff;
	if (s->dis_diff > v->cmp.max_price_diff)
		v->cmp.max_price_diff = s->dis_diff;
	if (s->dis_who == SV_DIRECT && who == SV_SIP) {
		e.flags = WB_EPF_DIRECT_AHEAD;
		cnt = &v->cmp.direct_ahead, ns = &v->cmp.direct_ahead_ns;
		tcnt = &tot->direct_ahead, tns = &tot->direct_ahead_ns;
	} else if (s->dis_who == SV_SIP && who == SV_DIRECT) {
		e.flags = WB_EPF_SIP_AHEAD;
		cnt = &v->cmp.sip_ahead, ns = &v->cmp.sip_ahead_ns;
		tcnt = &tot->sip_ahead, tns = &tot->sip_ahead_ns;
	} else if (who == SV_DIRECT) {
		e.flags = WB_EPF_DIRECT_ONLY;
		cnt = &v->cmp.direct_only, ns = &v->cmp.direct_only_ns;
		tcnt = &tot->direct_only, tns = &tot->direct_only_ns;
	} else {
		e.flags = WB_EPF_SIP_ONLY;
		cnt = &v->cmp.sip_only, ns = &v->cmp.sip_only_ns;
		tcnt = &tot->sip_only, tns = &tot->sip_only_ns;
	}
	++*cnt;
	*ns += dur;
	sv_add(tcnt, 1);
	sv_add(tns, dur);
	sv_add(&tot->episodes, 1);
	sv_add(&tot->disagree_ns, dur);
	sv_max(&tot->max_ns, dur);
	sv_add(&tot->price_diff_sum, (uint64_t)s->dis_diff);
	if (s->dis_diff > tot->max_price_diff)
		wb_store_relaxed(&tot->max_price_diff, s->dis_diff);
	sv_episode(sv, &e);
}

/* One view's NBBO after a change: a locked/crossed episode starts, goes on or ends. */
static void sv_lock(struct sipview *sv, uint16_t inst, struct sv_symbol *s, struct wb_sip_view *v,
		    int view, int64_t bid, int64_t ask, uint32_t bid_venues, uint32_t ask_venues,
		    uint64_t exch_ts, uint64_t recv_ts)
{
	struct sv_lock *l = &s->lc[view];
	struct wb_sip_lockcross *pl = &v->lc[view], *tl = &sv->st->summary.lc[view];
	uint64_t dur;

	if (bid > 0 && ask > 0 && bid >= ask) {
		if (!l->open) {
			*l = (struct sv_lock){ recv_ts, exch_ts, bid, ask, bid_venues, ask_venues, 1, bid > ask };
			pl->open_recv_ts = recv_ts;
			pl->open_exch_ts = exch_ts;
		} else {
			l->crossed |= bid > ask;
			l->bid_venues |= bid_venues;
			l->ask_venues |= ask_venues;
		}
		pl->bid_venues = l->bid_venues;
		pl->ask_venues = l->ask_venues;
		return;
	}
	if (!l->open)
		return;
	l->open = 0;
	pl->open_recv_ts = pl->open_exch_ts = 0;
	pl->bid_venues = pl->ask_venues = 0;
	if (recv_ts == l->start_recv && exch_ts == l->start_exch)
		return; /* a state between two updates of one message */
	dur = recv_ts > l->start_recv ? recv_ts - l->start_recv : 0;

	struct wb_sip_episode e = {
		.start_recv_ts = l->start_recv, .start_exch_ts = l->start_exch,
		.end_recv_ts = recv_ts, .end_exch_ts = exch_ts,
		.bid_price = l->bid, .ask_price = l->ask,
		.bid_venues = l->bid_venues, .ask_venues = l->ask_venues,
		.instrument = inst, .kind = view == WB_VIEW_DIRECT ? WB_EPI_DIRECT_LOCK : WB_EPI_SIP_LOCK,
		.flags = l->crossed ? WB_EPF_CROSSED : 0,
	};

	pl->episodes++;
	pl->crossed += l->crossed;
	pl->total_ns += dur;
	if (dur > pl->max_ns)
		pl->max_ns = dur;
	sv_add(&tl->episodes, 1);
	sv_add(&tl->crossed, l->crossed);
	sv_add(&tl->total_ns, dur);
	sv_max(&tl->max_ns, dur);
	sv_episode(sv, &e);
}

/* The SIP's view after an NBBO: its flags and the participants that lock or cross it. */
static void sv_sip_nbbo_changed(struct sipview *sv, uint16_t inst, struct sv_symbol *s,
				struct wb_sip_view *v, const struct sip_direct *d, uint64_t exch_ts,
				uint64_t recv_ts)
{
	const struct wb_sip_nbbo *n = &v->nbbo;
	uint32_t bv = 0, av = 0, m;

	v->flags &= ~(uint32_t)(WB_SIPF_LOCKED | WB_SIPF_CROSSED);
	if (n->bid_price > 0 && n->ask_price > 0 && n->bid_price >= n->ask_price) {
		v->flags |= n->bid_price == n->ask_price ? WB_SIPF_LOCKED : WB_SIPF_CROSSED;
		for (m = v->quotes_present; m; m &= m - 1) {
			const struct wb_sip_quote *q = &v->quote[__builtin_ctz(m)];

			if (q->bid_price > 0 && q->bid_price >= n->ask_price)
				bv |= 1u << __builtin_ctz(m);
			if (q->ask_price > 0 && q->ask_price <= n->bid_price)
				av |= 1u << __builtin_ctz(m);
		}
	}
	sv_compare(sv, inst, s, v, d, SV_SIP, exch_ts, recv_ts);
	sv_lock(sv, inst, s, v, WB_VIEW_SIP, n->bid_price, n->ask_price, bv, av, exch_ts, recv_ts);
}

/* ---- applying -------------------------------------------------------------------- */

static void sv_clear_quotes(struct wb_shm_sip *r, uint8_t venue)
{
	int sip = venue >= WB_VENUE_SIP_CQS;

	sv_begin(r);
	for (uint32_t m = r->v.quotes_present; m; m &= m - 1) {
		uint32_t p = (uint32_t)__builtin_ctz(m);
		struct wb_sip_quote *q = &r->v.quote[p];

		if (sip ? q->feed == venue || q->feed == 0 : p == venue) {
			memset(q, 0, sizeof(*q));
			r->v.quotes_present &= ~(1u << p);
		}
	}
	if (sip && r->v.nbbo.feed == venue) {
		memset(&r->v.nbbo, 0, sizeof(r->v.nbbo));
		r->v.flags &= ~(uint32_t)(WB_SIPF_LOCKED | WB_SIPF_CROSSED);
	}
	sv_end(r);
}

static void sv_status(struct sipview *sv, const struct book_update *u)
{
	struct wb_sip_status st = {
		.sip_ts = u->exch_ts, .recv_ts = u->recv_ts, .state = u->u.status.state,
		.raw_state = u->u.status.raw_state, .venue = u->venue,
	};
	struct wb_shm_sip *r;

	memcpy(st.reason, u->u.status.reason, sizeof(st.reason));
	if (u->instrument == 0) {
		/* market-wide (MWCB levels, a line's end of day): one writer, a few
		 * fields: readers copy it under no lock, like the counters */
		struct wb_sip_status *m = &sv->st->summary.mwcb;

		wb_store_relaxed(&m->sip_ts, 0);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		m->recv_ts = st.recv_ts;
		m->state = st.state;
		m->raw_state = st.raw_state;
		memcpy(m->reason, st.reason, sizeof(m->reason));
		m->venue = st.venue;
		wb_store_release(&m->sip_ts, st.sip_ts ? st.sip_ts : 1);
		return;
	}
	r = &sv->rec[u->instrument];
	sv_begin(r);
	r->v.status = st;
	r->v.updates++;
	r->v.recv_ts = st.recv_ts;
	if (u->venue < WB_BOOK_VENUES && u->venue != WB_VENUE_SIP_CQS && u->venue != WB_VENUE_SIP_UQDF)
		r->v.quote[u->venue].state = st.state;
	if (st.state == WB_STATE_HALTED || st.state == WB_STATE_PAUSED)
		r->v.flags |= WB_SIPF_HALTED;
	else
		r->v.flags &= ~(uint32_t)WB_SIPF_HALTED;
	sv_end(r);
}

/* A direct venue's top of one side changed (BOOK_UP_SIP_TOP). */
static void sv_direct_top(struct sipview *sv, uint16_t inst, struct sv_symbol *s,
			  const struct book_update *u)
{
	struct sv_hist *h;
	struct wb_shm_sip *r;
	struct sip_direct d;
	struct sv_entry n;
	uint8_t venue = u->venue;
	uint32_t qty = u->qty > UINT32_MAX ? UINT32_MAX : (uint32_t)u->qty;

	if (venue == 0 || venue >= WB_VENUE_COUNT)
		return;
	h = sv_hist(sv, inst, venue);
	n = h->written ? h->last : (struct sv_entry){ s->top_bid[venue], s->top_ask[venue], 0, 0, 0, 0 };
	if (u->side == WB_SIDE_SELL) {
		s->top_ask[venue] = u->price;
		n.ask = u->price;
		n.ask_qty = qty;
	} else {
		s->top_bid[venue] = u->price;
		n.bid = u->price;
		n.bid_qty = qty;
	}
	if (s->top_bid[venue] || s->top_ask[venue])
		s->present |= 1u << venue;
	else
		s->present &= ~(1u << venue);
	n.exch_ts = u->exch_ts;
	n.recv_ts = u->recv_ts;
	sv_push(sv, h, venue, n);
	sv_direct(s, &d);
	/* Most top changes leave the direct NBBO's prices as they were (a size
	 * changes, a venue behind the best moves): nothing to compare, and the
	 * shared record is not touched. A locked/crossed episode under way
	 * still learns of every change (its venues). */
	if (d.bid == s->direct_bid && d.ask == s->direct_ask && d.present == s->direct_present &&
	    !s->lc[WB_VIEW_DIRECT].open)
		return;
	s->direct_bid = d.bid;
	s->direct_ask = d.ask;
	s->direct_present = d.present;
	r = &sv->rec[inst];
	sv_begin(r);
	sv_compare(sv, inst, s, &r->v, &d, SV_DIRECT, u->exch_ts, u->recv_ts);
	sv_lock(sv, inst, s, &r->v, WB_VIEW_DIRECT, d.bid, d.ask, d.lock_bid_venues,
		d.lock_ask_venues, u->exch_ts, u->recv_ts);
	sv_end(r);
}

/* Whether the symbol's view comes through the SIP (a symbol is quoted
 * through one; before its first NBBO, through either). */
static inline int sv_through(const struct wb_shm_sip *r, uint8_t sip)
{
	return r->v.nbbo.feed == sip || (r->v.nbbo.feed == 0 && r->v.quotes_present);
}

static void sv_mark_stale(struct sipview *sv, struct wb_shm_sip *r)
{
	if (r->v.flags & WB_SIPF_STALE)
		return;
	sv_begin(r);
	r->v.flags |= WB_SIPF_STALE;
	sv_end(r);
	sv_add(&sv->st->summary.total.stale_marked, 1);
}

/*
 * A gap of a SIP line without retransmission (CQS): the quotes it lost
 * will not come, so the view of each symbol quoted through it is stale
 * until the symbol's next quote. The SIP view does not know which of the
 * SIP's channels carries a symbol: a gap of one marks every symbol of it.
 */
static void sv_sip_gap(struct sipview *sv, const struct book_update *u)
{
	sv_add(&sv->st->summary.total.sip_gaps, 1);
	if (u->instrument) {
		if (u->instrument < sv->capacity && sv->sym[u->instrument].active)
			sv_mark_stale(sv, &sv->rec[u->instrument]);
		return;
	}
	for (uint32_t i = 1; i < sv->capacity; i++)
		if (sv->sym[i].active && sv_through(&sv->rec[i], u->venue))
			sv_mark_stale(sv, &sv->rec[i]);
}

int sipview_apply(struct sipview *sv, const struct book_update *u)
{
	uint16_t inst = u->instrument;
	struct sv_symbol *s;
	struct wb_shm_sip *r;
	struct wb_sip_view *v;
	struct sip_direct dd, *d = &dd;

	if (u->kind != BOOK_UP_SIP_TOP)
		sv_add(&sv->st->summary.sip_events, 1);
	if (u->kind == BOOK_UP_SIP_STATUS && inst == 0) {
		sv_status(sv, u);
		return 0;
	}
	if (u->kind == BOOK_UP_SIP_GAP) {
		sv_sip_gap(sv, u);
		return inst && inst < sv->capacity && sv->sym[inst].active;
	}
	if (u->kind == BOOK_UP_SIP_CLEAR && inst == 0) {
		for (uint32_t i = 1; i < sv->capacity; i++)
			if (sv->sym[i].active)
				sv_clear_quotes(&sv->rec[i], u->venue);
		return 0;
	}
	if (inst == 0 || inst >= sv->capacity)
		return 0;
	s = &sv->sym[inst];
	if (!s->active) {
		/* the Super-Book sends the direct tops as they stand first */
		s->active = 1;
		sv->symbols++;
		sv_add(&sv->st->summary.symbols, 1);
	}
	if (u->kind == BOOK_UP_SIP_TOP) {
		sv_direct_top(sv, inst, s, u);
		return 1;
	}
	sv_direct(s, d);
	r = &sv->rec[inst];
	v = &r->v;
	switch (u->kind) {
	case BOOK_UP_SIP_QUOTE: {
		struct wb_sip_quote *q;
		struct wb_sip_venue_stats *vs;

		if (u->venue == 0 || u->venue >= WB_VENUE_COUNT)
			return 1;
		vs = &sv->st->venue[u->venue];
		sv_begin(r);
		q = &v->quote[u->venue];
		q->bid_price = u->price;
		q->ask_price = u->u.ask_price;
		q->bid_qty = u->order_count;
		q->ask_qty = u->round_lot;
		q->exch_ts = u->exch_ts;
		q->sip_ts = u->qty;
		q->recv_ts = u->recv_ts;
		q->quotes++;
		q->condition = (char)u->side;
		q->flags = u->flags;
		/* a symbol is quoted through one SIP: its NBBO's (unknown before one) */
		q->feed = v->nbbo.feed;
		v->quotes_present |= 1u << u->venue;
		v->flags &= ~(uint32_t)WB_SIPF_STALE;	/* a quote after a CQS gap: current again */
		v->updates++;
		v->recv_ts = u->recv_ts;
		sv_end(r);
		sv_add(&vs->sip_quotes, 1);
		if (u->qty >= u->exch_ts && u->exch_ts)
			sv_delay(&vs->sip_latency, u->qty - u->exch_ts);
		if (d->present >> u->venue & 1)
			sv_match(sv, sv_hist(sv, inst, u->venue), u->venue, q);
		return 1;
	}
	case BOOK_UP_SIP_NBBO: {
		struct wb_ev_nbbo n;

		book_sip_nbbo_unpack(u->qty, &n);
		sv_begin(r);
		v->nbbo.bid_price = u->price;
		v->nbbo.ask_price = u->u.ask_price;
		v->nbbo.bid_qty = u->order_count;
		v->nbbo.ask_qty = u->round_lot;
		v->nbbo.bid_venue = n.bid_venue;
		v->nbbo.ask_venue = n.ask_venue;
		v->nbbo.indicator = n.indicator;
		v->nbbo.condition = n.condition;
		v->nbbo.sides = n.sides;
		v->nbbo.luld = n.luld;
		v->nbbo.feed = u->venue;
		v->nbbo.sip_ts = u->exch_ts;
		v->nbbo.recv_ts = u->recv_ts;
		v->flags &= ~(uint32_t)WB_SIPF_STALE;
		v->updates++;
		v->recv_ts = u->recv_ts;
		sv_sip_nbbo_changed(sv, inst, s, v, d, u->exch_ts, u->recv_ts);
		sv_end(r);
		return 1;
	}
	case BOOK_UP_SIP_LULD:
		sv_begin(r);
		v->luld.lower = u->price;
		v->luld.upper = u->u.ask_price;
		v->luld.sip_ts = u->exch_ts ? u->exch_ts : 1;
		v->luld.indicator = (char)u->side;
		v->luld.feed = u->venue;
		v->updates++;
		v->recv_ts = u->recv_ts;
		sv_end(r);
		return 1;
	case BOOK_UP_SIP_STATUS:
		sv_status(sv, u);
		return 1;
	case BOOK_UP_SIP_CLEAR:
		sv_clear_quotes(r, u->venue);
		return 1;
	default:
		return 1;
	}
}


/* ---- checksum ------------------------------------------------------------------------- */

static uint64_t sv_checksum_quote(uint64_t h, const struct wb_sip_quote *q, int with_counts)
{
	h = book_checksum_mix(h, (uint64_t)q->bid_price);
	h = book_checksum_mix(h, (uint64_t)q->ask_price);
	h = book_checksum_mix(h, (uint64_t)q->bid_qty << 32 | q->ask_qty);
	h = book_checksum_mix(h, q->exch_ts);
	h = book_checksum_mix(h, q->sip_ts);
	if (with_counts)
		h = book_checksum_mix(h, q->quotes);
	return book_checksum_mix(h, (uint64_t)(uint8_t)q->condition << 24 | (uint64_t)q->flags << 16 |
				    (uint64_t)q->feed << 8 | q->state);
}

static uint64_t sv_sum(const struct sipview *sv, const struct book_tickers *t, int with_updates)
{
	/* What the SIP said, not what was measured against it: the
	 * comparison (COVERED, DISAGREE, episodes, delays) and the receive
	 * times depend on how the direct and SIP streams interleaved. */
	const uint32_t said = WB_SIPF_LOCKED | WB_SIPF_CROSSED | WB_SIPF_HALTED | WB_SIPF_STALE;
	uint64_t sum = 0, parts = 0;

	for (uint32_t i = 1; i < sv->capacity; i++) {
		const struct wb_sip_view *v = &sv->rec[i].v;
		const struct wb_sip_nbbo *n = &v->nbbo;
		uint64_t h;

		if (!sv->sym[i].active)
			continue;
		h = book_checksum_part(t, i);	/* from the ticker, not the index */
		if (with_updates)
			h = book_checksum_mix(h, v->updates);
		h = book_checksum_mix(h, (uint64_t)v->quotes_present << 32 | (v->flags & said));
		h = book_checksum_mix(h, (uint64_t)n->bid_price);
		h = book_checksum_mix(h, (uint64_t)n->ask_price);
		h = book_checksum_mix(h, (uint64_t)n->bid_qty << 32 | n->ask_qty);
		h = book_checksum_mix(h, (uint64_t)n->bid_venue << 56 | (uint64_t)n->ask_venue << 48 |
					 (uint64_t)(uint8_t)n->indicator << 40 |
					 (uint64_t)(uint8_t)n->condition << 32 | (uint64_t)n->sides << 24 |
					 (uint64_t)(uint8_t)n->luld << 16 | n->feed);
		h = book_checksum_mix(h, n->sip_ts);
		h = book_checksum_mix(h, (uint64_t)v->luld.lower);
		h = book_checksum_mix(h, (uint64_t)v->luld.upper);
		h = book_checksum_mix(h, v->luld.sip_ts);
		h = book_checksum_mix(h, (uint64_t)(uint8_t)v->luld.indicator << 8 | v->luld.feed);
		h = book_checksum_mix(h, v->status.sip_ts);
		h = book_checksum_mix(h, (uint64_t)v->status.state << 24 |
					 (uint64_t)(uint8_t)v->status.raw_state << 16 | v->status.venue);
		for (uint32_t m = v->quotes_present; m; m &= m - 1)
			h = sv_checksum_quote(h, &v->quote[__builtin_ctz(m)], with_updates);
		sum += h;
		parts++;
	}
	return book_checksum_final(sum, parts);
}

uint64_t sipview_checksum(const struct sipview *sv, const struct book_tickers *t)
{
	return sv_sum(sv, t, 1);
}

uint64_t sipview_state_checksum(const struct sipview *sv, const struct book_tickers *t)
{
	return sv_sum(sv, t, 0);
}
