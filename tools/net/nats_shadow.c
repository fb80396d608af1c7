/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The publisher's shadow books, for book snapshots; see nats_shadow.h. */
#include <stdlib.h>
#include <string.h>

#include "book/update.h"
#include "book/venue_book.h"
#include "net/nats_shadow.h"
#include "wirebook/book.h"

/* The shadow's order tables start small and grow (off the path: a
 * doubling is the publisher's stall, never the books'). */
#define SHADOW_EXPECTED_ORDERS (1u << 16)

/* An event that states something by itself (a status, a SIP quote, NBBO,
 * band): the last of each key, and when it came. */
struct kept {
	uint64_t arrival;
	uint32_t key;
	uint8_t feed;		/* a SIP quote: the NBBO's SIP when it came (sipview.c) */
	struct wb_event ev;
};

struct shadow_sym {
	struct wb_event symbol;
	int has_symbol;
	uint64_t trades, volume;	/* as the Super-Book counts them */
	struct book_update last_trade;
	uint32_t gaps[WB_BOOK_VENUES];
	uint32_t gap_marked;		/* venues (bits) whose GAP mark stands */
	uint32_t venues_present;	/* venues (bits) that ever had a level: the Super-Book's */
	uint8_t nbbo_feed;		/* the SIP of the last NBBO, 0: none yet */
	uint8_t sip_active;		/* the SIP view has the symbol */
	uint8_t sip_stale;		/* a CQS gap marked its SIP view stale since its last quote */
	struct kept *kept;
	uint32_t n_kept, cap_kept;
};

struct nats_shadow {
	struct venue_books *vb;
	uint32_t max_instruments;
	uint32_t max_seen;		/* the Super-Book's highest instrument seen */
	uint64_t arrival;
	struct shadow_sym **sym;
	struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];
};

struct nats_shadow *nats_shadow_create(uint32_t max_instruments)
{
	struct nats_shadow *sh = calloc(1, sizeof(*sh));
	struct venue_books_config c = { .max_instruments = max_instruments,
					.expected_orders = SHADOW_EXPECTED_ORDERS, .numa_node = -1 };

	if (!sh)
		return NULL;
	sh->max_instruments = max_instruments ? max_instruments : VENUE_BOOKS_DEFAULT_INSTRUMENTS;
	c.max_instruments = sh->max_instruments;
	sh->vb = venue_books_create(&c);
	sh->sym = calloc(sh->max_instruments, sizeof(*sh->sym));
	if (!sh->vb || !sh->sym) {
		nats_shadow_destroy(sh);
		return NULL;
	}
	return sh;
}

void nats_shadow_destroy(struct nats_shadow *sh)
{
	uint32_t i;

	if (!sh)
		return;
	if (sh->sym)
		for (i = 0; i < sh->max_instruments; i++)
			if (sh->sym[i]) {
				free(sh->sym[i]->kept);
				free(sh->sym[i]);
			}
	free(sh->sym);
	if (sh->vb)
		venue_books_destroy(sh->vb);
	free(sh);
}

/* NULL for an instrument outside the books, or out of memory (then the
 * snapshot misses it: snapshots are an optimization, the stream is whole). */
static struct shadow_sym *sym_of(struct nats_shadow *sh, uint32_t inst)
{
	if (inst == 0 || inst >= sh->max_instruments)
		return NULL;
	if (!sh->sym[inst])
		sh->sym[inst] = calloc(1, sizeof(*sh->sym[inst]));
	if (inst > sh->max_seen)
		sh->max_seen = inst;
	return sh->sym[inst];
}

static uint32_t key_of(const struct wb_event *ev)
{
	/* One NBBO and one band per symbol, whichever SIP said it. */
	uint32_t venue = ev->kind == WB_EV_NBBO || ev->kind == WB_EV_LULD ? 0 : ev->venue;

	return (uint32_t)ev->kind | venue << 8 | (uint32_t)(ev->flags & WB_EVF_SIP) << 16;
}

static void keep(struct nats_shadow *sh, struct shadow_sym *s, const struct wb_event *ev)
{
	uint32_t key = key_of(ev), i;

	for (i = 0; i < s->n_kept; i++)
		if (s->kept[i].key == key)
			break;
	if (i == s->n_kept) {
		if (s->n_kept == s->cap_kept) {
			uint32_t cap = s->cap_kept ? 2 * s->cap_kept : 4;
			struct kept *k = realloc(s->kept, cap * sizeof(*k));

			if (!k)
				return;
			s->kept = k;
			s->cap_kept = cap;
		}
		s->n_kept++;
	}
	s->kept[i].arrival = sh->arrival;
	s->kept[i].key = key;
	s->kept[i].feed = s->nbbo_feed;
	s->kept[i].ev = *ev;
}

static void drop_kept(struct shadow_sym *s, uint32_t i)
{
	s->kept[i] = s->kept[--s->n_kept];
}

/* The SIP's quotes of a venue gone (sipview.c's sv_clear_quotes): a SIP's
 * own clear takes every quote it carried and its NBBO. */
static void sip_clear(struct shadow_sym *s, uint8_t venue)
{
	int sip = venue >= WB_VENUE_SIP_CQS;
	uint32_t i, nbbo_feed = 0;

	for (i = 0; i < s->n_kept; i++)
		if (s->kept[i].ev.kind == WB_EV_NBBO)
			nbbo_feed = s->kept[i].ev.venue;
	for (i = 0; i < s->n_kept;) {
		const struct wb_event *e = &s->kept[i].ev;

		if ((e->kind == WB_EV_QUOTE &&
		     (sip ? nbbo_feed == venue || nbbo_feed == 0 : e->venue == venue)) ||
		    (e->kind == WB_EV_NBBO && sip && e->venue == venue))
			drop_kept(s, i);
		else
			i++;
	}
	if (sip && s->nbbo_feed == venue)
		s->nbbo_feed = 0;
}

static void apply_sip(struct nats_shadow *sh, const struct wb_event *ev)
{
	struct shadow_sym *s;
	uint32_t i;

	switch (ev->kind) {
	case WB_EV_QUOTE:
	case WB_EV_NBBO:
	case WB_EV_LULD:
	case WB_EV_STATUS:
		if ((s = sym_of(sh, ev->instrument))) {
			keep(sh, s, ev);
			s->sip_active = 1;
			if (ev->kind == WB_EV_NBBO)
				s->nbbo_feed = ev->venue;
			if (ev->kind == WB_EV_NBBO || ev->kind == WB_EV_QUOTE)
				s->sip_stale = 0;	/* current again */
		}
		return;
	case WB_EV_CLEAR:
		if (ev->instrument) {
			if ((s = sym_of(sh, ev->instrument)))
				sip_clear(s, ev->venue);
			return;
		}
		for (i = 1; i < sh->max_instruments; i++)
			if (sh->sym[i])
				sip_clear(sh->sym[i], ev->venue);
		return;
	default:
		return;
	}
}

static int has_quote(const struct shadow_sym *s)
{
	uint32_t i;

	for (i = 0; i < s->n_kept; i++)
		if (s->kept[i].ev.kind == WB_EV_QUOTE)
			return 1;
	return 0;
}

/* A CQS gap (sipview.c's sv_sip_gap): the symbols quoted through that SIP
 * are stale until their next quote. */
static void sip_gap(struct nats_shadow *sh, const struct book_update *u)
{
	struct shadow_sym *s;
	uint32_t i;

	if (u->instrument) {
		if (u->instrument < sh->max_instruments && (s = sh->sym[u->instrument]) && s->sip_active)
			s->sip_stale = 1;
		return;
	}
	for (i = 1; i < sh->max_instruments; i++)
		if ((s = sh->sym[i]) && s->sip_active &&
		    (s->nbbo_feed == u->venue || (!s->nbbo_feed && has_quote(s))))
			s->sip_stale = 1;
}

/* What the Super-Book makes of an update (superbook.c), as far as a
 * snapshot must say it. */
static void apply_update(struct nats_shadow *sh, const struct wb_event *ev,
			 const struct book_update *u)
{
	struct shadow_sym *s;
	uint32_t i;

	if (u->venue >= WB_BOOK_VENUES && u->kind != BOOK_UP_SYMBOL)
		return;
	switch (u->kind) {
	case BOOK_UP_LEVEL:
		if ((s = sym_of(sh, u->instrument)))
			s->venues_present |= 1u << u->venue;
		return;
	case BOOK_UP_TRADE:
		if (!(s = sym_of(sh, u->instrument)))
			return;
		s->trades++;
		if (u->flags & WB_EVF_PRINTABLE)
			s->volume += u->qty;
		s->last_trade = *u;
		return;
	case BOOK_UP_STATUS:
		if (u->instrument && (s = sym_of(sh, u->instrument)))
			keep(sh, s, ev);
		return;
	case BOOK_UP_CLEAR:
		if (u->instrument) {
			if (u->instrument < sh->max_instruments && sh->sym[u->instrument])
				sh->sym[u->instrument]->gap_marked &= ~(1u << u->venue);
			return;
		}
		for (i = 1; i <= sh->max_seen; i++)
			if (sh->sym[i])
				sh->sym[i]->gap_marked &= ~(1u << u->venue);
		return;
	case BOOK_UP_GAP:
		if (u->instrument) {
			if (!(s = sym_of(sh, u->instrument)))
				return;
			s->gaps[u->venue]++;
			s->gap_marked |= 1u << u->venue;
			return;
		}
		for (i = 1; i <= sh->max_seen; i++)
			if ((s = sym_of(sh, i))) {
				s->gaps[u->venue]++;
				s->gap_marked |= 1u << u->venue;
			}
		return;
	case BOOK_UP_SIP_GAP:
		sip_gap(sh, u);
		return;
	case BOOK_UP_SYMBOL:
		if ((s = sym_of(sh, u->instrument))) {
			s->symbol = *ev;
			s->has_symbol = 1;
		}
		return;
	default:
		return;
	}
}

void nats_shadow_apply(struct nats_shadow *sh, const struct wb_event *ev)
{
	unsigned n = venue_books_apply(sh->vb, ev, sh->up), i;

	sh->arrival++;
	if (ev->flags & WB_EVF_SIP) {
		apply_sip(sh, ev);
		return;
	}
	for (i = 0; i < n; i++)
		apply_update(sh, ev, &sh->up[i]);
}

/* ---- the snapshot's records ---------------------------------------------------------- */

struct order_emit {
	struct nats_snap_writer *w;
	struct wb_event ev;
};

static void emit_order(void *ctx, int64_t price, uint64_t order_id, uint32_t qty)
{
	struct order_emit *o = ctx;

	o->ev.u.order.order_id = order_id;
	o->ev.u.order.price = price;
	o->ev.u.order.qty = qty;
	nats_snap_writer_add(o->w, 1, &o->ev);
}

/*
 * The trade totals and the last trade: the Super-Book counts every trade
 * update and adds the printable ones' shares. So: the printable shares
 * before the last trade in as few trades as fit (shares are 32-bit in an
 * event), empty non-printable ones for the rest of the count, then the
 * last trade as it was.
 */
static void emit_trades(struct nats_snap_writer *w, uint16_t inst, const struct shadow_sym *s)
{
	const struct book_update *l = &s->last_trade;
	uint64_t before = s->volume - (l->flags & WB_EVF_PRINTABLE ? l->qty : 0), n = 1;
	struct wb_event ev;

	if (!s->trades)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = WB_EV_TRADE;
	ev.venue = l->venue;
	ev.side = l->side;
	ev.instrument = inst;
	ev.exch_ts = l->exch_ts;
	ev.recv_ts = l->recv_ts;
	ev.flags = WB_EVF_PRINTABLE;
	while (before) {
		uint32_t q = before > UINT32_MAX ? UINT32_MAX : (uint32_t)before;

		ev.u.trade.qty = q;
		nats_snap_writer_add(w, 1, &ev);
		before -= q;
		n++;
	}
	if (n < s->trades) {
		ev.flags = 0;
		ev.u.trade.qty = 0;
		nats_snap_writer_add(w, (uint32_t)(s->trades - n), &ev);
	}
	ev.flags = l->flags;
	ev.u.trade.price = l->price;
	ev.u.trade.qty = (uint32_t)l->qty;
	ev.u.trade.match_id = l->u.match_id;
	nats_snap_writer_add(w, 1, &ev);
}

static int by_arrival(const void *a, const void *b)
{
	uint64_t x = ((const struct kept *)a)->arrival, y = ((const struct kept *)b)->arrival;

	return x < y ? -1 : x > y;
}

static void emit_symbol(const struct nats_shadow *sh, struct nats_snap_writer *w, uint16_t inst,
			const struct shadow_sym *s, uint64_t taken_ns)
{
	struct order_emit o;
	struct kept *k;
	uint32_t v, i;

	if (s->has_symbol)
		nats_snap_writer_add(w, 1, &s->symbol);
	for (v = 1; v < WB_BOOK_VENUES; v++) {
		struct wb_event ev;

		if (!s->gaps[v])
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.kind = WB_EV_GAP;
		ev.venue = (uint8_t)v;
		ev.instrument = inst;
		ev.recv_ts = taken_ns;
		ev.u.gap.reason = WB_GAP_SEQUENCE;
		nats_snap_writer_add(w, s->gaps[v], &ev);
		if (!(s->gap_marked >> v & 1)) {	/* cleared since: a clear lifts the mark */
			ev.kind = WB_EV_CLEAR;
			memset(&ev.u, 0, sizeof(ev.u));
			nats_snap_writer_add(w, 1, &ev);
		}
	}
	memset(&o, 0, sizeof(o));
	o.w = w;
	o.ev.kind = WB_EV_ADD;
	o.ev.instrument = inst;
	o.ev.recv_ts = taken_ns;
	o.ev.exch_ts = taken_ns;
	for (v = 1; v < WB_VENUE_COUNT; v++) {
		o.ev.venue = (uint8_t)v;
		if (s->venues_present >> v & 1) {
			/* A venue that had levels stays one of the symbol's
			 * venues when they are gone: an order that comes and
			 * goes says so (an id no feed gives out; ids are per
			 * venue, and this one is never left live). */
			struct wb_event gone = o.ev;

			gone.side = WB_SIDE_BUY;
			gone.u.order.order_id = UINT64_MAX;
			gone.u.order.price = 1;
			gone.u.order.qty = 1;
			nats_snap_writer_add(w, 1, &gone);
			gone.kind = WB_EV_DELETE;
			nats_snap_writer_add(w, 1, &gone);
		}
		o.ev.side = WB_SIDE_BUY;
		venue_books_each_order(sh->vb, (uint8_t)v, inst, WB_SIDE_BUY, emit_order, &o);
		o.ev.side = WB_SIDE_SELL;
		venue_books_each_order(sh->vb, (uint8_t)v, inst, WB_SIDE_SELL, emit_order, &o);
	}
	emit_trades(w, inst, s);
	if (!s->n_kept && !s->sip_stale)
		return;
	/* The statuses and the SIP's last word, in the order they came: the
	 * symbol's state follows the order of its venues' statuses. */
	k = s->n_kept ? malloc(s->n_kept * sizeof(*k)) : NULL;
	if (s->n_kept && !k) {
		w->failed = 1;
		return;
	}
	if (k) {
		memcpy(k, s->kept, s->n_kept * sizeof(*k));
		qsort(k, s->n_kept, sizeof(*k), by_arrival);
	}
	/* A SIP quote takes the SIP of the NBBO before it (none: 0): the
	 * quotes that came before any NBBO first, then the last NBBO, then
	 * the rest (that NBBO again in its place). */
	for (i = 0; i < s->n_kept; i++)
		if (k[i].ev.kind == WB_EV_QUOTE && !k[i].feed)
			nats_snap_writer_add(w, 1, &k[i].ev);
	for (i = 0; i < s->n_kept; i++)
		if (k[i].ev.kind == WB_EV_NBBO) {
			nats_snap_writer_add(w, 1, &k[i].ev);
			break;
		}
	for (i = 0; i < s->n_kept; i++)
		if (k[i].ev.kind != WB_EV_QUOTE || k[i].feed)
			nats_snap_writer_add(w, 1, &k[i].ev);
	free(k);
	if (s->sip_stale) {	/* a CQS gap of this symbol alone marks it again */
		struct wb_event gap;

		memset(&gap, 0, sizeof(gap));
		gap.kind = WB_EV_GAP;
		gap.venue = WB_VENUE_SIP_CQS;
		gap.instrument = inst;
		gap.recv_ts = taken_ns;
		gap.u.gap.reason = WB_GAP_SEQUENCE;
		nats_snap_writer_add(w, 1, &gap);
	}
}

void nats_shadow_snapshot(const struct nats_shadow *sh, struct nats_snap_writer *w,
			  uint64_t taken_ns)
{
	uint32_t i;

	for (i = 1; i < sh->max_instruments; i++)
		if (sh->sym[i])
			emit_symbol(sh, w, (uint16_t)i, sh->sym[i], taken_ns);
}
