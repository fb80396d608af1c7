/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The order-level formats' common half (sink.h): an event as order
 * actions, packets as groups of records, and the dispatch to the writer of
 * the format asked for (dbn.c, hftbacktest.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/dbn.h"
#include "export/hftbacktest.h"
#include "export/sink.h"

#define INSTRUMENTS 65536u	/* instrument ids are uint16_t */

struct export_sink {
	struct dbn_writer *dbn;
	struct hbt_writer *hbt;
	struct sink_event pending;	/* between before and after */
	int have_group;
	uint16_t group_line;
	uint64_t group_recv;
	uint32_t *venues;		/* [instrument]: bit v, venue v has had orders */
};

static char side_char(uint8_t side)
{
	return side == WB_SIDE_BUY ? 'B' : side == WB_SIDE_SELL ? 'A' : 'N';
}

static char opposite(char side)
{
	return side == 'B' ? 'A' : side == 'A' ? 'B' : 'N';
}

static struct order_action *act(struct order_action *a, char action, char side, uint16_t inst,
				uint32_t size, int64_t price, uint64_t order_id)
{
	memset(a, 0, sizeof(*a));
	a->action = action;
	a->side = side;
	a->instrument = inst;
	a->size = size;
	a->price = price;
	a->order_id = order_id;
	return a;
}

unsigned order_actions(const struct venue_books *vb, const struct wb_event *ev,
		       struct order_action *out)
{
	const struct wb_ev_order *o = &ev->u.order;
	struct venue_order_info info;
	int known = 0;
	char side = side_char(ev->side);
	int64_t rest = SINK_PRICE_NONE;
	uint32_t left = 0, q = o->qty;

	if (ev->flags & WB_EVF_SIP)
		return 0;
	switch (ev->kind) {
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
	case WB_EV_REDUCE:
	case WB_EV_DELETE:
	case WB_EV_REPLACE:
	case WB_EV_MODIFY:
		known = venue_books_order(vb, ev->venue, o->order_id, &info) == 0;
		if (known) {
			side = side_char(info.side);
			rest = info.price;
			left = info.qty;
		} else if ((ev->kind == WB_EV_EXECUTE || ev->kind == WB_EV_REDUCE ||
			    ev->kind == WB_EV_DELETE) && o->price) {
			rest = o->price;	/* a feed that states the resting price */
		}			/* (a replace's or modify's price is the new one) */
		break;
	default:
		break;
	}
	switch (ev->kind) {
	case WB_EV_ADD:
		act(out, 'A', side, ev->instrument, q, o->price, o->order_id);
		return 1;
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE: {
		int64_t px = ev->kind == WB_EV_EXECUTE_AT_PRICE ? o->price : rest;

		/* Databento's order: the print, the resting order's fill, then the
		 * cancel that takes the size off the book (T and F change no book). */
		act(&out[0], 'T', opposite(side), ev->instrument, q, px, 0);
		act(&out[1], 'F', side, ev->instrument, q, px, o->order_id);
		act(&out[2], 'C', side, ev->instrument, q, rest, o->order_id)->remaining =
			left > q ? left - q : 0;
		return 3;
	}
	case WB_EV_REDUCE:
		act(out, 'C', side, ev->instrument, q, rest, o->order_id)->remaining =
			left > q ? left - q : 0;
		return 1;
	case WB_EV_DELETE:
		act(out, 'C', side, ev->instrument, left, rest, o->order_id);
		return 1;
	case WB_EV_REPLACE:
		act(&out[0], 'C', side, ev->instrument, left, rest, o->order_id);
		act(&out[1], 'A', side, ev->instrument, q, o->price, o->ref);
		return 2;
	case WB_EV_MODIFY:
		act(out, 'M', side, ev->instrument, q, o->price, o->order_id);
		return 1;
	case WB_EV_TRADE:
		act(out, 'T', side_char(ev->side), ev->instrument, ev->u.trade.qty,
		    ev->u.trade.price, 0);
		return 1;
	case WB_EV_CLEAR:
		if (!ev->instrument)
			return 0;	/* the caller's: it knows the venue's instruments */
		act(out, 'R', 'N', ev->instrument, 0, SINK_PRICE_NONE, 0);
		return 1;
	default:
		return 0;	/* TRADE_BREAK has no order action */
	}
}

int export_sink_format(const char *format)
{
	return !strcmp(format, "dbn") || !strcmp(format, "hftbacktest");
}

int export_sink_schemas_known(const char *list)
{
	return dbn_schemas(list) != 0;
}

struct export_sink *export_sink_open(const char *format, const char *path, const char *schemas,
				     char *err, size_t errlen)
{
	struct export_sink *s = calloc(1, sizeof(*s));
	unsigned want = DBN_WANT_ALL;

	if (!s || !(s->venues = calloc(INSTRUMENTS, sizeof(*s->venues)))) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!strcmp(format, "dbn")) {
		if (schemas && !(want = dbn_schemas(schemas))) {
			snprintf(err, errlen, "--schema %s: expected a list of mbo, mbp-1, mbp-10, trades",
				 schemas);
			goto fail;
		}
		s->dbn = dbn_writer_open(path, want, err, errlen);
		if (!s->dbn)
			goto fail;
	} else {
		if (schemas) {
			snprintf(err, errlen, "--schema applies to --format dbn");
			goto fail;
		}
		s->hbt = hbt_writer_open(path, err, errlen);
		if (!s->hbt)
			goto fail;
	}
	return s;
fail:
	free(s->venues);
	free(s);
	return NULL;
}

static int order_level(const struct wb_event *ev)
{
	return !(ev->flags & WB_EVF_SIP) &&
	       ((ev->kind >= WB_EV_ADD && ev->kind <= WB_EV_TRADE_BREAK) || ev->kind == WB_EV_CLEAR);
}

static void flush(struct export_sink *s)
{
	if (s->dbn)
		dbn_writer_flush(s->dbn);
}

void export_sink_before(struct export_sink *s, const struct venue_books *vb,
			const struct wb_event *ev)
{
	struct sink_event *se = &s->pending;

	memset(se, 0, sizeof(*se));
	if (!order_level(ev))
		return;
	/* A packet's records are one book change: its events share the line
	 * and the receive time (two packets of one line in the same ns become
	 * one group, which only makes fewer records F_LAST). */
	if (s->have_group && (ev->line != s->group_line || ev->recv_ts != s->group_recv))
		flush(s);
	s->have_group = 1;
	s->group_line = ev->line;
	s->group_recv = ev->recv_ts;
	se->ev = ev;
	se->n = order_actions(vb, ev, se->act);
	if (ev->kind == WB_EV_ADD && ev->venue < 32)
		s->venues[ev->instrument] |= 1u << ev->venue;
	if (s->dbn)
		dbn_writer_before(s->dbn, vb, se);
}

static void after(struct export_sink *s, const struct venue_books *vb, struct sink_event *se)
{
	if (s->dbn)
		dbn_writer_after(s->dbn, vb, se);
	if (s->hbt)
		hbt_writer_after(s->hbt, se);
}

void export_sink_after(struct export_sink *s, const struct venue_books *vb,
		       const struct wb_event *ev, const struct book_update *up, unsigned nup)
{
	struct sink_event *se = &s->pending;

	if (se->ev != ev)
		return;
	se->up = up;
	se->nup = nup;
	if (ev->kind == WB_EV_CLEAR && !ev->instrument) {
		/* a whole line's clear: a cleaR of each instrument the venue had */
		for (uint32_t i = 1; i < INSTRUMENTS; i++)
			if (ev->venue < 32 && (s->venues[i] & 1u << ev->venue)) {
				se->n = 1;
				act(se->act, 'R', 'N', (uint16_t)i, 0, SINK_PRICE_NONE, 0);
				after(s, vb, se);
			}
	} else {
		after(s, vb, se);
	}
	se->ev = NULL;
}

int export_sink_close(struct export_sink *s, const char (*ticker)[9], char *err, size_t errlen)
{
	int rc = 0;

	flush(s);
	if (s->dbn)
		rc = dbn_writer_close(s->dbn, ticker, err, errlen);
	if (s->hbt)
		rc = hbt_writer_close(s->hbt, ticker, err, errlen);
	free(s->venues);
	free(s);
	return rc;
}

uint64_t export_sink_rows(const struct export_sink *s)
{
	return s->dbn ? dbn_writer_records(s->dbn) : hbt_writer_rows(s->hbt);
}
