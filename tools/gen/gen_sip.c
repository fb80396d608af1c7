/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The venues' books as a SIP sees them, for the SIP encoders (see gen_sip.h). */
#include "gen/gen_sip.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_pitch.h"

int gen_sip_book_init(struct gen_sip_book *b, uint32_t symbols)
{
	memset(b, 0, sizeof(*b));
	b->symbols = symbols;
	b->side = calloc((size_t)symbols * WB_VENUE_COUNT * 2, sizeof(*b->side));
	b->order_cap = 1u << 16;
	b->order = calloc(b->order_cap, sizeof(*b->order));
	return b->side && b->order ? 0 : -1;
}

void gen_sip_book_destroy(struct gen_sip_book *b)
{
	if (b->side)
		for (size_t i = 0; i < (size_t)b->symbols * WB_VENUE_COUNT * 2; i++)
			free(b->side[i].level);
	free(b->side);
	free(b->order);
	memset(b, 0, sizeof(*b));
}

static struct gen_sip_side *side_of(const struct gen_sip_book *b, uint32_t symbol, uint8_t venue,
				    uint8_t side)
{
	return &b->side[((size_t)symbol * WB_VENUE_COUNT + venue) * 2 + (side == WB_SIDE_SELL)];
}

/* ---- orders ------------------------------------------------------------------ */

static uint64_t order_key(uint8_t venue, uint64_t id)
{
	return (uint64_t)venue << 56 | (id & 0x00ffffffffffffffull);
}

static size_t order_home(const struct gen_sip_book *b, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (b->order_cap - 1);
}

static struct gen_sip_order *order_find(const struct gen_sip_book *b, uint64_t key)
{
	for (size_t i = order_home(b, key);; i = (i + 1) & (b->order_cap - 1)) {
		if (b->order[i].key == key)
			return &b->order[i];
		if (!b->order[i].key)
			return NULL;
	}
}

static void order_place(struct gen_sip_book *b, const struct gen_sip_order *o)
{
	size_t i = order_home(b, o->key);

	while (b->order[i].key)
		i = (i + 1) & (b->order_cap - 1);
	b->order[i] = *o;
}

static int order_put(struct gen_sip_book *b, const struct gen_sip_order *o)
{
	if ((b->order_count + 1) * 2 > b->order_cap) {
		struct gen_sip_order *old = b->order;
		uint64_t old_cap = b->order_cap;

		b->order = calloc(old_cap * 2, sizeof(*b->order));
		if (!b->order) {
			b->order = old;
			return -1;
		}
		b->order_cap = old_cap * 2;
		for (uint64_t i = 0; i < old_cap; i++)
			if (old[i].key)
				order_place(b, &old[i]);
		free(old);
	}
	order_place(b, o);
	b->order_count++;
	return 0;
}

/* Remove without tombstones: re-place the entries of the cluster after it. */
static void order_remove(struct gen_sip_book *b, struct gen_sip_order *o)
{
	size_t i = (size_t)(o - b->order), j = i;

	b->order[i].key = 0;
	b->order_count--;
	for (;;) {
		j = (j + 1) & (b->order_cap - 1);
		if (!b->order[j].key)
			return;
		struct gen_sip_order moved = b->order[j];

		b->order[j].key = 0;
		order_place(b, &moved);
	}
}

/* ---- levels --------------------------------------------------------------------- */

static bool better(uint8_t side, int64_t a, int64_t b)
{
	return side == WB_SIDE_BUY ? a > b : a < b;
}

/* Add qty (negative: take) at price; 0, or -1 when out of memory. */
static int level_add(struct gen_sip_side *s, uint8_t side, int64_t price, int64_t qty)
{
	uint32_t i = 0;

	while (i < s->n && better(side, s->level[i].price, price))
		i++;
	if (i < s->n && s->level[i].price == price) {
		int64_t left = (int64_t)s->level[i].qty + qty;

		if (left > 0) {
			s->level[i].qty = (uint32_t)left;
			return 0;
		}
		memmove(&s->level[i], &s->level[i + 1], (s->n - i - 1) * sizeof(s->level[0]));
		s->n--;
		return 0;
	}
	if (qty <= 0)
		return 0;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 8;
		struct gen_sip_level *l = realloc(s->level, cap * sizeof(*l));

		if (!l)
			return -1;
		s->level = l;
		s->cap = cap;
	}
	memmove(&s->level[i + 1], &s->level[i], (s->n - i) * sizeof(s->level[0]));
	s->level[i] = (struct gen_sip_level){ price, (uint32_t)qty };
	s->n++;
	return 0;
}

static struct gen_sip_level top(const struct gen_sip_side *s)
{
	return s->n ? s->level[0] : (struct gen_sip_level){ 0, 0 };
}

/* The venue's wire price of a flow price: Cboe venues shade as gen_pitch does,
 * and the XDP venues the same way (gen_xdp's venue_price). */
static int64_t wire_price(const struct gen_flow *flow, uint8_t venue, uint32_t symbol, uint8_t side,
			  int64_t price)
{
	const struct gen_symbol *s = &flow->symbols[symbol];
	int64_t shade;

	switch (venue) {
	case WB_VENUE_BZX: case WB_VENUE_BYX: case WB_VENUE_EDGX: case WB_VENUE_EDGA:
	case WB_VENUE_NYSE: case WB_VENUE_ARCA: case WB_VENUE_AMERICAN: case WB_VENUE_NATIONAL:
	case WB_VENUE_TEXAS:
		break;
	default:
		return price;
	}
	shade = (int64_t)gen_pitch_shade(venue, symbol, side) * s->tick;
	if (side == WB_SIDE_BUY)
		return price - shade >= s->tick ? price - shade : price;
	return price + shade;
}

int gen_sip_book_apply(struct gen_sip_book *b, const struct gen_flow *flow,
		       const struct gen_action *a)
{
	struct gen_sip_order *o = NULL, added;
	struct gen_sip_level before, after;
	struct gen_sip_side *s;
	uint32_t symbol;
	uint8_t side;

	switch (a->kind) {
	case GEN_ADD:
		if (a->venue >= WB_VENUE_COUNT || a->symbol >= b->symbols)
			return 0;
		added = (struct gen_sip_order){ order_key(a->venue, a->order_id),
			wire_price(flow, a->venue, a->symbol, a->side, a->price), a->qty, a->symbol,
			a->side };
		s = side_of(b, a->symbol, a->venue, a->side);
		before = top(s);
		if (order_put(b, &added) || level_add(s, a->side, added.price, a->qty))
			return -1;
		after = top(s);
		break;
	case GEN_EXECUTE:
	case GEN_EXECUTE_AT_PRICE:
	case GEN_CANCEL:
	case GEN_DELETE:
	case GEN_REPLACE:
		o = order_find(b, order_key(a->venue, a->order_id));
		if (!o)
			return 0;
		symbol = o->symbol;
		side = o->side;
		s = side_of(b, symbol, a->venue, side);
		before = top(s);
		if (a->kind == GEN_DELETE || a->kind == GEN_REPLACE || a->qty >= o->qty) {
			level_add(s, side, o->price, -(int64_t)o->qty);
			order_remove(b, o);
		} else {
			level_add(s, side, o->price, -(int64_t)a->qty);
			o->qty -= a->qty;
		}
		if (a->kind == GEN_REPLACE) {
			added = (struct gen_sip_order){ order_key(a->venue, a->new_order_id),
				wire_price(flow, a->venue, symbol, side, a->price), a->qty, symbol, side };
			if (order_put(b, &added) || level_add(s, side, added.price, a->qty))
				return -1;
		}
		after = top(s);
		break;
	default:
		return 0;
	}
	return before.price != after.price || before.qty != after.qty;
}

void gen_sip_venue_bbo(const struct gen_sip_book *b, uint32_t symbol, uint8_t venue,
		       struct gen_sip_bbo *out)
{
	struct gen_sip_level bid = top(side_of(b, symbol, venue, WB_SIDE_BUY));
	struct gen_sip_level ask = top(side_of(b, symbol, venue, WB_SIDE_SELL));

	out->bid = (struct gen_sip_best){ bid.price, bid.qty, venue };
	out->ask = (struct gen_sip_best){ ask.price, ask.qty, venue };
}

static void consider(struct gen_sip_best *best, struct gen_sip_level l, uint8_t venue, uint8_t side)
{
	if (!l.qty)
		return;
	if (!best->qty || better(side, l.price, best->price) ||
	    (l.price == best->price && l.qty > best->qty))
		*best = (struct gen_sip_best){ l.price, l.qty, venue };
}

void gen_sip_nbbo(const struct gen_sip_book *b, uint32_t symbol, uint32_t venue_mask,
		  struct gen_sip_bbo *out)
{
	memset(out, 0, sizeof(*out));
	for (uint8_t v = 1; v < WB_VENUE_COUNT; v++) {
		if (!(venue_mask & (1u << v)))
			continue;
		consider(&out->bid, top(side_of(b, symbol, v, WB_SIDE_BUY)), v, WB_SIDE_BUY);
		consider(&out->ask, top(side_of(b, symbol, v, WB_SIDE_SELL)), v, WB_SIDE_SELL);
	}
}

bool gen_sip_nasdaq_listed(const struct gen_symbol *s)
{
	return s->market == 'Q' || s->market == 'G' || s->market == 'S';
}

uint32_t gen_sip_ticker_len(const struct gen_symbol *s)
{
	uint32_t n = GEN_TICKER_LEN;

	while (n && s->ticker[n - 1] == ' ')
		n--;
	return n;
}

int gen_sip_view_open(struct gen_sip_view *v, const struct gen_flow *flow)
{
	if (v->published)
		return 0;
	v->venues = flow->cfg.venues;
	v->published = calloc(flow->symbol_count, sizeof(*v->published));
	v->listed = calloc(flow->symbol_count, 1);
	if (!v->published || !v->listed || gen_sip_book_init(&v->book, flow->symbol_count)) {
		gen_sip_view_close(v);
		return -1;
	}
	return 0;
}

void gen_sip_view_close(struct gen_sip_view *v)
{
	gen_sip_book_destroy(&v->book);
	free(v->published);
	free(v->listed);
	memset(v, 0, sizeof(*v));
}

bool gen_sip_same(const struct gen_sip_best *a, const struct gen_sip_best *b)
{
	return a->price == b->price && a->qty == b->qty && (a->venue == b->venue || !a->qty);
}

bool gen_sip_fits_short(int64_t price, uint32_t qty)
{
	return price % (WB_PRICE_SCALE / 100) == 0 && price / (WB_PRICE_SCALE / 100) <= 0xffff &&
	       qty <= 0xffff;
}

/* ---- the SIP's lag ------------------------------------------------------------ */

/* Microseconds with up to three decimals, as ns; -1 when not a number. */
static int64_t parse_us(const char *s, const char **end)
{
	uint64_t whole = 0, frac = 0;
	int digits = 0, fd = 0;

	while (*s >= '0' && *s <= '9' && digits < 12) {
		whole = whole * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9') {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				fd++;
			}
			s++;
		}
	}
	if (!digits && !fd)
		return -1;
	while (fd++ < 3)
		frac *= 10;
	*end = s;
	return (int64_t)(whole * 1000 + frac);
}

int gen_lag_parse(const char *text, struct gen_lag *out)
{
	const char *p = text;
	int64_t a, b;

	memset(out, 0, sizeof(*out));
	if (strncmp(p, "uniform:", 8) == 0) {
		p += 8;
		if ((a = parse_us(p, &p)) < 0 || *p++ != ':' || (b = parse_us(p, &p)) < 0 || *p || b < a)
			return -1;
		*out = (struct gen_lag){ GEN_LAG_UNIFORM, (uint64_t)a, (uint64_t)b };
		return 0;
	}
	if (strncmp(p, "exp:", 4) == 0) {
		p += 4;
		if ((a = parse_us(p, &p)) <= 0 || *p)
			return -1;
		*out = (struct gen_lag){ GEN_LAG_EXP, (uint64_t)a, 0 };
		return 0;
	}
	if ((a = parse_us(p, &p)) < 0 || *p)
		return -1;
	*out = (struct gen_lag){ GEN_LAG_FIXED, (uint64_t)a, 0 };
	return 0;
}

const char *gen_lag_format(const struct gen_lag *lag, char *buf, size_t n)
{
	if (lag->kind == GEN_LAG_UNIFORM)
		snprintf(buf, n, "uniform:%.3f:%.3f", lag->a_ns / 1e3, lag->b_ns / 1e3);
	else if (lag->kind == GEN_LAG_EXP)
		snprintf(buf, n, "exp:%.3f", lag->a_ns / 1e3);
	else
		snprintf(buf, n, "%.3f", lag->a_ns / 1e3);
	return buf;
}

void gen_sip_clock_init(struct gen_sip_clock *c, const struct gen_lag *lag, uint64_t seed,
			struct gen_lag_record *rec)
{
	memset(c, 0, sizeof(*c));
	c->rec = rec;
	if (lag)
		c->lag = *lag;
	else
		c->lag = (struct gen_lag){ GEN_LAG_FIXED, GEN_SIP_LATENCY_NS, 0 };
	gen_rng_seed(&c->rng, seed ^ 0x5157u);
}

uint64_t gen_sip_clock_time(struct gen_sip_clock *c, uint64_t ts)
{
	uint64_t lag = c->lag.a_ns, t;

	if (c->lag.kind == GEN_LAG_UNIFORM && c->lag.b_ns > c->lag.a_ns) {
		lag += gen_rng_next(&c->rng) % (c->lag.b_ns - c->lag.a_ns + 1);
	} else if (c->lag.kind == GEN_LAG_EXP) {
		/* inverse transform of a uniform in (0, 1] */
		double u = ((double)(gen_rng_next(&c->rng) >> 11) + 1.0) / 9007199254740992.0;

		lag = (uint64_t)(-log(u) * (double)c->lag.a_ns);
	}
	t = ts + lag;
	if (t < c->last)
		t = c->last;
	c->last = t;
	if (c->rec && !c->rec->error) {
		struct gen_lag_record *r = c->rec;

		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 4096;
			uint64_t *p = realloc(r->lag, cap * sizeof(*p));

			if (!p) {
				r->error = true;
				return t;
			}
			r->lag = p;
			r->cap = cap;
		}
		r->lag[r->n++] = t - ts;
		r->sum += t - ts;
	}
	return t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t gen_lag_record_median(struct gen_lag_record *r)
{
	if (!r->n)
		return 0;
	qsort(r->lag, r->n, sizeof(*r->lag), cmp_u64);
	return r->lag[(r->n - 1) / 2];
}
