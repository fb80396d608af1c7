/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The locked and crossed episodes wb-gen writes (see gen_truth.h). */
#include "gen/gen_truth.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wirebook/book.h"

static void venue_list(uint32_t mask, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int v = 1; v < WB_VENUE_COUNT; v++)
		if (mask & (1u << v))
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
						 used ? "," : "", wb_venue_name(v));
	if (!used)
		snprintf(buf, n, "-");
}

static void write_episode(struct gen_truth *t, uint32_t symbol, const struct gen_truth_symbol *y,
			  uint64_t end)
{
	char ticker[GEN_TICKER_LEN + 1], bv[128], av[128];
	int n;

	memcpy(ticker, t->flow->symbols[symbol].ticker, GEN_TICKER_LEN);
	ticker[GEN_TICKER_LEN] = 0;
	for (n = GEN_TICKER_LEN; n > 0 && ticker[n - 1] == ' '; n--)
		ticker[n - 1] = 0;
	venue_list(y->bid_venues, bv, sizeof(bv));
	venue_list(y->ask_venues, av, sizeof(av));
	if (fprintf(t->out, "lock %s %" PRIu64 " %" PRIu64 " %s %.4f %.4f %s %s\n", ticker,
		    t->midnight_ns + y->start, end ? t->midnight_ns + end : 0,
		    y->crossed ? "crossed" : "locked", (double)y->bid / WB_PRICE_SCALE,
		    (double)y->ask / WB_PRICE_SCALE, bv, av) < 0)
		t->error = true;
	t->episodes++;
	t->crossed += y->crossed;
}

/* After a change of symbol at ts: does its NBBO lock or cross now? */
static void evaluate(struct gen_truth *t, uint32_t symbol, uint64_t ts)
{
	struct gen_truth_symbol *y = &t->sym[symbol];
	uint32_t venues = t->flow->symbols[symbol].venues & ((1u << WB_VENUE_COUNT) - 1);
	int64_t bid[WB_VENUE_COUNT] = { 0 }, ask[WB_VENUE_COUNT] = { 0 }, nbb = 0, nbo = 0;
	uint32_t bv = 0, av = 0;

	for (uint32_t m = venues; m; m &= m - 1) {
		uint8_t v = (uint8_t)__builtin_ctz(m);
		struct gen_sip_bbo q;

		gen_sip_venue_bbo(&t->book, symbol, v, &q);
		bid[v] = q.bid.qty ? q.bid.price : 0;
		ask[v] = q.ask.qty ? q.ask.price : 0;
	}
	for (uint32_t i = 0; i < t->own_count; i++) {
		const struct gen_truth_own *o = &t->own[i];

		if (o->symbol != symbol || o->venue >= WB_VENUE_COUNT)
			continue;
		if (o->side == WB_SIDE_BUY && o->price > bid[o->venue])
			bid[o->venue] = o->price;
		if (o->side == WB_SIDE_SELL && (!ask[o->venue] || o->price < ask[o->venue]))
			ask[o->venue] = o->price;
		venues |= 1u << o->venue;
	}
	for (uint32_t m = venues; m; m &= m - 1) {
		uint8_t v = (uint8_t)__builtin_ctz(m);

		if (bid[v] > nbb)
			nbb = bid[v];
		if (ask[v] && (!nbo || ask[v] < nbo))
			nbo = ask[v];
	}
	if (nbb && nbo && nbb >= nbo) {
		for (uint32_t m = venues; m; m &= m - 1) {
			uint8_t v = (uint8_t)__builtin_ctz(m);

			if (bid[v] && bid[v] >= nbo)
				bv |= 1u << v;
			if (ask[v] && ask[v] <= nbb)
				av |= 1u << v;
		}
		if (!y->open) {
			*y = (struct gen_truth_symbol){ ts, nbb, nbo, bv, av, true, nbb > nbo };
		} else {
			y->crossed |= nbb > nbo;
			y->bid_venues |= bv;
			y->ask_venues |= av;
		}
		return;
	}
	if (!y->open)
		return;
	y->open = false;
	if (ts != y->start)
		write_episode(t, symbol, y, ts);
}

static void own_order(void *ctx, uint8_t venue, uint32_t symbol, uint8_t side, int64_t price,
		      uint32_t qty, uint64_t id, uint64_t ts, bool add)
{
	struct gen_truth *t = ctx;

	(void)qty;
	if (!t->flow || symbol >= t->flow->symbol_count)
		return;
	if (add) {
		if (t->own_count == GEN_TRUTH_MAX_OWN) {
			t->own_dropped++;
			return;
		}
		t->own[t->own_count++] = (struct gen_truth_own){ id, price, symbol, venue, side };
	} else {
		for (uint32_t i = 0; i < t->own_count; i++)
			if (t->own[i].id == id && t->own[i].venue == venue) {
				t->own[i] = t->own[--t->own_count];
				break;
			}
	}
	evaluate(t, symbol, ts);
}

int gen_truth_open(struct gen_truth *t, const char *path, uint64_t midnight_ns, const char *comment)
{
	memset(t, 0, sizeof(*t));
	t->out = fopen(path, "w");
	if (!t->out)
		return -1;
	t->midnight_ns = midnight_ns;
	t->observer = (struct gen_order_observer){ own_order, t };
	fprintf(t->out, "# wb-gen truth: locked and crossed episodes of the NBBO across the direct feeds\n"
			"# (exchange time, ns since the epoch; see tools/gen/gen_truth.h)\n");
	if (comment)
		fprintf(t->out, "# %s\n", comment);
	fprintf(t->out, "# lock SYMBOL START_NS END_NS locked|crossed NBB NBO BID_VENUES ASK_VENUES\n");
	return 0;
}

int gen_truth_action(struct gen_truth *t, const struct gen_flow *flow, const struct gen_action *a)
{
	int changed;

	if (!t->flow) {
		t->flow = flow;
		t->sym = calloc(flow->symbol_count, sizeof(*t->sym));
		if (!t->sym || gen_sip_book_init(&t->book, flow->symbol_count))
			return -1;
	}
	if (a->venue >= WB_VENUE_COUNT || a->symbol >= flow->symbol_count)
		return 0;
	changed = gen_sip_book_apply(&t->book, flow, a);
	if (changed < 0)
		return -1;
	if (changed)
		evaluate(t, a->symbol, a->ts);
	return 0;
}

void gen_truth_note(struct gen_truth *t, const char *text)
{
	if (t->out && fprintf(t->out, "# %s\n", text) < 0)
		t->error = true;
}

int gen_truth_close(struct gen_truth *t)
{
	int rc = 0;

	if (!t->out)
		return 0;
	for (uint32_t i = 0; t->sym && i < t->flow->symbol_count; i++)
		if (t->sym[i].open)
			write_episode(t, i, &t->sym[i], 0);
	fprintf(t->out, "# %" PRIu64 " episodes, %" PRIu64 " of them crossed%s\n", t->episodes, t->crossed,
		t->own_dropped ? "; some encoder orders were not modelled (too many alive)" : "");
	if (t->error || fclose(t->out))
		rc = -1;
	t->out = NULL;
	if (t->flow)
		gen_sip_book_destroy(&t->book);
	free(t->sym);
	t->sym = NULL;
	return rc;
}
