/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-export: a capture or a Nasdaq BinaryFILE to tables for research.
 *
 * The input goes through the feed engine (as wirebookd's), its events are
 * read back through the event API (wb_events_attach) and applied to the
 * venue books, and every table is written as the events go:
 *
 *   events.csv  every order event (add, execute, reduce, delete, replace,
 *               modify, trade, trade break), in decode order
 *   trades.csv  every execution and trade print
 *   bbo.csv     each venue's best bid and offer, at every change
 *   nbbo.csv    the consolidated best bid and offer over the direct books,
 *               at every change (the Super-Book's top, as wb_nbbo gives it)
 *   status.csv  trading status changes
 *   gaps.csv    sequence gaps
 *   book.csv    (--depth N) the consolidated book N levels a side at every
 *               change of a symbol's levels
 *
 * Every row keeps the exchange and receive timestamps (ns) and, where an
 * event is behind it, the source sequence number. Prices are dollars.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "book/venue_book.h"
#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "common/options.h"
#include "common/source.h"
#include "feed/feed.h"
#include "wirebook/book.h"
#include "wirebook/events.h"

#define EXPORT_RING_SLOTS (1u << 17)
#define EXPORT_BATCH 256u
#define PUMP_BUDGET 32u	/* packets per pump: far fewer events than the ring holds */
#define MAX_DEPTH WB_BOOK_DEPTH
#define VENUES WB_VENUE_COUNT

enum table { T_EVENTS, T_TRADES, T_BBO, T_NBBO, T_STATUS, T_GAPS, T_BOOK, T_COUNT };

static const char *const table_name[T_COUNT] = {
	"events", "trades", "bbo", "nbbo", "status", "gaps", "book",
};

struct top {
	int64_t bid, ask;
	uint64_t bid_qty, ask_qty;
	uint32_t bid_orders, ask_orders;
};

struct consolidated {
	int64_t bid, ask;
	uint64_t bid_qty, ask_qty;
	uint32_t bid_venues, ask_venues;
};

/* The last book row written of an instrument. */
struct snapshot {
	struct venue_level bid[MAX_DEPTH], ask[MAX_DEPTH];
	uint8_t bids, asks;
};

struct exporter {
	struct feed_engine *engine;
	struct venue_books *vb;
	void *ring;
	struct wb_ring_producer prod;
	struct wb_events *events;
	FILE *out[T_COUNT];
	uint64_t rows[T_COUNT];
	unsigned depth;
	char ticker[FEED_MAX_INSTRUMENTS][9];
	struct top (*vtop)[VENUES];		/* [instrument][venue]: last BBO written */
	struct consolidated *nbbo;		/* [instrument]: last NBBO written */
	uint8_t *touched;			/* [instrument]: levels changed by this event */
	uint32_t *venues;			/* [instrument]: bit v, venue v has had levels */
	struct snapshot *snap;			/* [instrument], with --depth */
	uint64_t events_seen;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: wb-export [options] CAPTURE OUTDIR\n"
"       wb-export [options] --itch-file FILE[.gz] OUTDIR\n"
"\n"
"Export a capture (pcap) or a Nasdaq BinaryFILE to tables for research, one\n"
"CSV file each in OUTDIR (created if missing): events.csv (every order event),\n"
"trades.csv, bbo.csv (each venue's best bid and offer at every change),\n"
"nbbo.csv (the consolidated best at every change), status.csv, gaps.csv and,\n"
"with --depth, book.csv. Timestamps are ns (exchange time and receive time),\n"
"prices dollars; a side without a price is an empty field.\n"
"\n"
"  --format csv        the output format (csv is the only one so far)\n"
"  --itch-file FILE    the input is a Nasdaq BinaryFILE, plain or gzip\n"
"  --feeds FILE        feed map (default: ./feeds.conf, then the installed one)\n"
"  --subscribe LIST    symbols to export, comma separated, or '*' (default '*')\n"
"  --depth N           also book.csv: N levels a side (1-%d) at every change\n"
"  --quiet             no summary on stderr\n"
"  -h, --help          this text\n", MAX_DEPTH);
}

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

static const char *px(int64_t p, char *buf, size_t n)
{
	if (!p) {
		buf[0] = 0;
		return buf;
	}
	wb_price_format(p, buf, n);
	return buf;
}

/* The venue as libwirebook names it (NASDAQ, BZX, ...); a SIP as the feed layer does. */
static const char *venue(int v)
{
	return v > 0 && v < WB_VENUE_COUNT ? wb_venue_name(v) : feed_venue_name(v);
}

static const char *sym(const struct exporter *x, uint16_t instrument)
{
	return x->ticker[instrument];
}

/* ---- tables ------------------------------------------------------------ */

static int open_tables(struct exporter *x, const char *dir)
{
	static const char *const header[T_COUNT] = {
		"recv_ts,exch_ts,seq,venue,line,symbol,kind,side,order_id,price,qty,ref,mpid,flags",
		"recv_ts,exch_ts,seq,venue,symbol,price,qty,match_id,flags",
		"recv_ts,exch_ts,seq,venue,symbol,bid,bid_qty,bid_orders,ask,ask_qty,ask_orders",
		"recv_ts,exch_ts,seq,symbol,bid,bid_qty,ask,ask_qty,bid_venues,ask_venues",
		"recv_ts,exch_ts,seq,venue,symbol,state,raw_state,reason",
		"recv_ts,exch_ts,venue,line,symbol,first,count,channel,unit,reason",
		NULL,
	};
	char path[4096];
	int t;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "wb-export: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (t = 0; t < T_COUNT; t++) {
		if (t == T_BOOK && !x->depth)
			continue;
		snprintf(path, sizeof(path), "%s/%s.csv", dir, table_name[t]);
		x->out[t] = fopen(path, "w");
		if (!x->out[t]) {
			fprintf(stderr, "wb-export: %s: %s\n", path, strerror(errno));
			return -1;
		}
		setvbuf(x->out[t], NULL, _IOFBF, 1 << 20);
		if (t != T_BOOK) {
			fprintf(x->out[t], "%s\n", header[t]);
			continue;
		}
		fputs("recv_ts,exch_ts,seq,symbol", x->out[t]);
		for (unsigned i = 1; i <= x->depth; i++)
			fprintf(x->out[t], ",bid_%u,bid_qty_%u", i, i);
		for (unsigned i = 1; i <= x->depth; i++)
			fprintf(x->out[t], ",ask_%u,ask_qty_%u", i, i);
		fputc('\n', x->out[t]);
	}
	return 0;
}

static int close_tables(struct exporter *x)
{
	int rc = 0;

	for (int t = 0; t < T_COUNT; t++)
		if (x->out[t] && fclose(x->out[t]) != 0) {
			fprintf(stderr, "wb-export: writing %s.csv: %s\n", table_name[t], strerror(errno));
			rc = -1;
		}
	return rc;
}

static void write_event(struct exporter *x, const struct wb_event *ev)
{
	char p[32], mpid[5] = "";
	uint64_t order_id, ref, qty;
	int64_t price;

	if (ev->kind == WB_EV_TRADE || ev->kind == WB_EV_TRADE_BREAK) {
		order_id = ev->u.trade.order_id;
		price = ev->u.trade.price;
		qty = ev->u.trade.qty;
		ref = ev->u.trade.match_id;
	} else {
		order_id = ev->u.order.order_id;
		price = ev->u.order.price;
		qty = ev->u.order.qty;
		ref = ev->u.order.ref;
		if (ev->kind == WB_EV_ADD && ev->u.order.mpid[0])
			memcpy(mpid, ev->u.order.mpid, 4);
	}
	fprintf(x->out[T_EVENTS], "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%u,%s,%s,%c,%" PRIu64
		",%s,%" PRIu64 ",%" PRIu64 ",%s,%u\n",
		ev->recv_ts, ev->exch_ts, ev->seq, venue(ev->venue), ev->line,
		sym(x, ev->instrument), wb_event_kind_name(ev->kind),
		ev->side == WB_SIDE_BUY ? 'B' : ev->side == WB_SIDE_SELL ? 'S' : ' ',
		order_id, px(price, p, sizeof(p)), qty, ref, mpid, ev->flags);
	x->rows[T_EVENTS]++;
}

static void write_gap(struct exporter *x, const struct wb_event *ev)
{
	fprintf(x->out[T_GAPS], "%" PRIu64 ",%" PRIu64 ",%s,%u,%s,%" PRIu64 ",%" PRIu64 ",%u,%u,%u\n",
		ev->recv_ts, ev->exch_ts, venue(ev->venue), ev->line,
		sym(x, ev->instrument), ev->u.gap.first, ev->u.gap.count, ev->u.gap.channel,
		ev->u.gap.unit, ev->u.gap.reason);
	x->rows[T_GAPS]++;
}

static void write_status(struct exporter *x, const struct wb_event *ev)
{
	char reason[5];

	memcpy(reason, ev->u.status.reason, 4);
	reason[4] = 0;
	for (int i = 3; i >= 0 && (reason[i] == ' ' || !reason[i]); i--)
		reason[i] = 0;
	fprintf(x->out[T_STATUS], "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%s,%c,%s\n",
		ev->recv_ts, ev->exch_ts, ev->seq, venue(ev->venue), sym(x, ev->instrument),
		wb_state_name(ev->u.status.state),
		ev->u.status.raw_state > ' ' && ev->u.status.raw_state != ',' ? ev->u.status.raw_state : ' ',
		reason);
	x->rows[T_STATUS]++;
}

static void write_trade(struct exporter *x, const struct wb_event *ev, const struct book_update *u)
{
	char p[32];

	fprintf(x->out[T_TRADES], "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%" PRIu64
		",%u\n", u->recv_ts, u->exch_ts, ev->seq, venue(u->venue),
		sym(x, u->instrument), px(u->price, p, sizeof(p)), u->qty, u->u.match_id, u->flags);
	x->rows[T_TRADES]++;
}

static void venue_names(uint32_t mask, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int v = 0; v < VENUES && used + 1 < n; v++)
		if (mask >> v & 1)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " " : "",
						 venue(v));
}

/* A venue's top after a level change: a bbo row when it moved. */
static void check_bbo(struct exporter *x, const struct wb_event *ev, uint8_t v, uint16_t inst)
{
	struct venue_level bid, ask;
	struct top now, *last = &x->vtop[inst][v];
	char b[32], a[32];

	if (venue_books_bbo(x->vb, v, inst, &bid, &ask) < 0)
		return;
	x->venues[inst] |= 1u << v;
	now = (struct top){ .bid = bid.qty ? bid.price : 0, .ask = ask.qty ? ask.price : 0,
			    .bid_qty = bid.qty, .ask_qty = ask.qty,
			    .bid_orders = bid.orders, .ask_orders = ask.orders };
	if (!memcmp(&now, last, sizeof(now)))
		return;
	*last = now;
	x->touched[inst] = 1;
	fprintf(x->out[T_BBO], "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%u,%s,%"
		PRIu64 ",%u\n", ev->recv_ts, ev->exch_ts, ev->seq, venue(v),
		sym(x, inst), px(now.bid, b, sizeof(b)), now.bid_qty, now.bid_orders,
		px(now.ask, a, sizeof(a)), now.ask_qty, now.ask_orders);
	x->rows[T_BBO]++;
}

/* The consolidated top of an instrument from the venues' tops. */
static void consolidate(const struct exporter *x, uint16_t inst, struct consolidated *c)
{
	memset(c, 0, sizeof(*c));
	for (int v = 1; v < VENUES; v++) {
		const struct top *t = &x->vtop[inst][v];

		if (t->bid_qty && (!c->bid_qty || t->bid > c->bid)) {
			c->bid = t->bid;
			c->bid_qty = 0;
			c->bid_venues = 0;
		}
		if (t->bid_qty && t->bid == c->bid) {
			c->bid_qty += t->bid_qty;
			c->bid_venues |= 1u << v;
		}
		if (t->ask_qty && (!c->ask_qty || t->ask < c->ask)) {
			c->ask = t->ask;
			c->ask_qty = 0;
			c->ask_venues = 0;
		}
		if (t->ask_qty && t->ask == c->ask) {
			c->ask_qty += t->ask_qty;
			c->ask_venues |= 1u << v;
		}
	}
}

static void check_nbbo(struct exporter *x, const struct wb_event *ev, uint16_t inst)
{
	struct consolidated now;
	char b[32], a[32], bv[128], av[128];

	consolidate(x, inst, &now);
	if (!memcmp(&now, &x->nbbo[inst], sizeof(now)))
		return;
	x->nbbo[inst] = now;
	venue_names(now.bid_venues, bv, sizeof(bv));
	venue_names(now.ask_venues, av, sizeof(av));
	fprintf(x->out[T_NBBO], "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%" PRIu64 ",%s,%" PRIu64
		",%s,%s\n", ev->recv_ts, ev->exch_ts, ev->seq, sym(x, inst),
		px(now.bid, b, sizeof(b)), now.bid_qty, px(now.ask, a, sizeof(a)), now.ask_qty, bv, av);
	x->rows[T_NBBO]++;
}

/* Levels of every venue on one side merged by price, best first. */
static unsigned merged_side(const struct exporter *x, uint16_t inst, uint8_t side,
			    struct venue_level *out, unsigned max)
{
	struct venue_level lv[MAX_DEPTH];
	unsigned n = 0;

	/* only the venues that ever had levels of the instrument */
	for (uint32_t m = x->venues[inst]; m; m &= m - 1) {
		int v = __builtin_ctz(m);
		unsigned k = venue_books_depth(x->vb, (uint8_t)v, inst, side, lv, max);

		for (unsigned i = 0; i < k; i++) {
			unsigned j;

			for (j = 0; j < n && out[j].price != lv[i].price; j++)
				;
			if (j < n) {
				out[j].qty += lv[i].qty;
				continue;
			}
			/* insert in order; past max only if better than the worst */
			for (j = n; j > 0; j--) {
				int better = side == WB_SIDE_BUY ? lv[i].price > out[j - 1].price
								 : lv[i].price < out[j - 1].price;
				if (!better)
					break;
				if (j < max)
					out[j] = out[j - 1];
			}
			if (j < max) {
				out[j] = lv[i];
				if (n < max)
					n++;
			}
		}
	}
	return n;
}

/* Can a level change at PRICE on SIDE alter the last N-level row? */
static int in_snapshot(const struct exporter *x, uint16_t inst, uint8_t side, int64_t price)
{
	const struct snapshot *sn = &x->snap[inst];

	if (side == WB_SIDE_BUY)
		return sn->bids < x->depth || price >= sn->bid[sn->bids - 1].price;
	return sn->asks < x->depth || price <= sn->ask[sn->asks - 1].price;
}

static int same_levels(const struct venue_level *a, unsigned na, const struct venue_level *b,
		       unsigned nb)
{
	if (na != nb)
		return 0;
	for (unsigned i = 0; i < na; i++)
		if (a[i].price != b[i].price || a[i].qty != b[i].qty)
			return 0;
	return 1;
}

/* A book row when the consolidated N levels changed. */
static void check_book(struct exporter *x, const struct wb_event *ev, uint16_t inst)
{
	struct snapshot now, *last = &x->snap[inst];
	FILE *f = x->out[T_BOOK];
	char p[32];

	now.bids = (uint8_t)merged_side(x, inst, WB_SIDE_BUY, now.bid, x->depth);
	now.asks = (uint8_t)merged_side(x, inst, WB_SIDE_SELL, now.ask, x->depth);
	if (same_levels(now.bid, now.bids, last->bid, last->bids) &&
	    same_levels(now.ask, now.asks, last->ask, last->asks))
		return;
	*last = now;
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s", ev->recv_ts, ev->exch_ts, ev->seq,
		sym(x, inst));
	for (unsigned i = 0; i < x->depth; i++) {
		if (i < now.bids)
			fprintf(f, ",%s,%" PRIu64, px(now.bid[i].price, p, sizeof(p)), now.bid[i].qty);
		else
			fputs(",,", f);
	}
	for (unsigned i = 0; i < x->depth; i++) {
		if (i < now.asks)
			fprintf(f, ",%s,%" PRIu64, px(now.ask[i].price, p, sizeof(p)), now.ask[i].qty);
		else
			fputs(",,", f);
	}
	fputc('\n', f);
	x->rows[T_BOOK]++;
}

/* ---- one event ----------------------------------------------------------- */

static void export_event(struct exporter *x, const struct wb_event *ev)
{
	struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];
	unsigned n, i;

	x->events_seen++;
	if (ev->kind == WB_EV_SYMBOL && ev->instrument && !x->ticker[ev->instrument][0]) {
		memcpy(x->ticker[ev->instrument], ev->u.symbol.ticker, 8);
		for (i = 8; i > 0 && x->ticker[ev->instrument][i - 1] == ' '; i--)
			x->ticker[ev->instrument][i - 1] = 0;
	}
	if (ev->kind >= WB_EV_ADD && ev->kind <= WB_EV_TRADE_BREAK)
		write_event(x, ev);
	else if (ev->kind == WB_EV_GAP)
		write_gap(x, ev);
	else if (ev->kind == WB_EV_STATUS && !(ev->flags & WB_EVF_SIP) && ev->instrument)
		write_status(x, ev);

	n = venue_books_apply(x->vb, ev, up);
	for (i = 0; i < n; i++) {
		const struct book_update *u = &up[i];

		if (u->kind == BOOK_UP_TRADE)
			write_trade(x, ev, u);
		else if ((u->kind == BOOK_UP_LEVEL || u->kind == BOOK_UP_CLEAR) &&
			 u->venue < VENUES && u->instrument)
			check_bbo(x, ev, u->venue, u->instrument);
	}
	/* Then, once per instrument whose levels changed: the NBBO when a
	 * venue's top moved, the book snapshot at any level change. */
	for (i = 0; i < n; i++) {
		uint16_t inst = up[i].instrument;
		unsigned j;

		if ((up[i].kind != BOOK_UP_LEVEL && up[i].kind != BOOK_UP_CLEAR) || !inst ||
		    up[i].venue >= VENUES)
			continue;
		for (j = 0; j < i && up[j].instrument != inst; j++)
			;
		if (j < i)
			continue;	/* done with this instrument */
		if (x->touched[inst]) {
			check_nbbo(x, ev, inst);
			x->touched[inst] = 0;
		}
		if (!x->depth)
			continue;
		for (j = i; j < n; j++)	/* only a change within the N levels shows */
			if (up[j].instrument == inst && (up[j].kind == BOOK_UP_CLEAR ||
			    in_snapshot(x, inst, up[j].side, up[j].price)))
				break;
		if (j < n)
			check_book(x, ev, inst);
	}
}

static void drain(struct exporter *x)
{
	const struct wb_event *batch[EXPORT_BATCH];
	unsigned n;

	wb_ring_producer_publish_no_wakeup(&x->prod);
	while ((n = wb_events_peek(x->events, batch, EXPORT_BATCH)) != 0) {
		for (unsigned i = 0; i < n; i++)
			export_event(x, batch[i]);
		wb_events_release(x->events);
	}
}

/* ---- setup --------------------------------------------------------------- */

static int subscribe(struct exporter *x, const char *list)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int id = feed_subscribe(x->engine, tok, strlen(tok));

		if (id < 0) {
			fprintf(stderr, "wb-export: cannot subscribe '%s'\n", tok);
			return -1;
		}
		if (id > 0 && strcmp(tok, "*"))
			snprintf(x->ticker[id], sizeof(x->ticker[id]), "%s", tok);
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct exporter *exporter_create(unsigned depth)
{
	struct exporter *x = calloc(1, sizeof(*x));
	struct feed_engine_config ecfg = { .alloc = zalloc, .free = free };
	struct venue_books_config vbc = { .numa_node = -1, .max_instruments = FEED_MAX_INSTRUMENTS };

	if (!x)
		return NULL;
	x->depth = depth;
	x->engine = calloc(1, sizeof(*x->engine));
	x->vtop = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->vtop));
	x->nbbo = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->nbbo));
	x->touched = calloc(FEED_MAX_INSTRUMENTS, 1);
	x->venues = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->venues));
	x->snap = depth ? calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->snap)) : NULL;
	if (posix_memalign(&x->ring, WB_RING_PAGE, wb_ring_bytes(EXPORT_RING_SLOTS)))
		x->ring = NULL;
	if (!x->engine || !x->vtop || !x->nbbo || !x->touched || !x->venues || !x->ring ||
	    (depth && !x->snap) ||
	    feed_engine_init(x->engine, &ecfg) < 0)
		return NULL;
	x->vb = venue_books_create(&vbc);
	memset(x->ring, 0, wb_ring_bytes(EXPORT_RING_SLOTS));
	wb_ring_format(x->ring, EXPORT_RING_SLOTS, 0);
	wb_ring_producer_init(&x->prod, x->ring);
	x->events = wb_events_attach(&x->ring, 1, wb_ring_bytes(EXPORT_RING_SLOTS), NULL);
	if (!x->vb || !x->events)
		return NULL;
	return x;
}

static void exporter_destroy(struct exporter *x)
{
	wb_events_close(x->events);
	if (x->vb)
		venue_books_destroy(x->vb);
	if (x->engine)
		feed_engine_destroy(x->engine);
	free(x->engine);
	free(x->ring);
	free(x->vtop);
	free(x->nbbo);
	free(x->touched);
	free(x->venues);
	free(x->snap);
	free(x);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "itch-file", no_argument, NULL, 'I' },
		{ "feeds", required_argument, NULL, 'F' },
		{ "subscribe", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "csv", *feeds = NULL, *subs = "*";
	struct source_options sopt;
	struct source src;
	struct exporter *x;
	int itch = 0, quiet = 0, c, rc = 0, st;
	uint64_t depth = 0;
	char err[512];
	double t0;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'I': itch = 1; break;
		case 'F': feeds = optarg; break;
		case 's': subs = optarg; break;
		case 'd':
			if (opt_u64("wb-export", "--depth", optarg, 1, MAX_DEPTH, &depth))
				return 2;
			break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(format, "csv")) {
		fprintf(stderr, "wb-export: --format %s: only csv is written so far\n", format);
		return 2;
	}
	x = exporter_create((unsigned)depth);
	if (!x) {
		fprintf(stderr, "wb-export: out of memory\n");
		return 1;
	}
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (feeds && feeds_conf_load(x->engine, feeds, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		exporter_destroy(x);
		return 1;
	}
	if (!feeds && !itch) {
		fprintf(stderr, "wb-export: no feed map found (looked in %s); give --feeds FILE\n",
			feeds_conf_searched());
		exporter_destroy(x);
		return 2;
	}
	if (!feeds && feed_map_add(x->engine, 0xe9360c6fu /* 233.54.12.111 */, 26477,
				   FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A") < 0) {
		fprintf(stderr, "wb-export: cannot add the default itch nasdaq line\n");
		exporter_destroy(x);
		return 1;
	}
	if (subscribe(x, subs) < 0) {
		exporter_destroy(x);
		return 2;
	}
	memset(&sopt, 0, sizeof(sopt));
	sopt.path = argv[optind];
	sopt.engine = x->engine;
	if (itch)
		sopt.line = source_find_line(x->engine, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ);
	memset(&src, 0, sizeof(src));
	if (source_open(&src, itch ? &source_itch_file_ops : &source_pcap_ops, &sopt) < 0) {
		fprintf(stderr, "wb-export: %s\n", src.err);
		exporter_destroy(x);
		return 1;
	}
	if (open_tables(x, argv[optind + 1]) < 0) {
		source_close(&src);
		close_tables(x);
		exporter_destroy(x);
		return 1;
	}

	t0 = now_s();
	do {
		st = source_pump(&src, x->engine, &x->prod, PUMP_BUDGET);
		drain(x);
	} while (st == SOURCE_MORE || st == SOURCE_IDLE);
	if (st == SOURCE_ERROR) {
		fprintf(stderr, "wb-export: %s\n", src.err);
		rc = 1;
	}
	for (unsigned i = 0; i < x->engine->line_count; i++)
		if (x->engine->lines[i].counters.ring_drops) {
			fprintf(stderr, "wb-export: line %u lost %" PRIu64 " events to a full ring\n", i,
				x->engine->lines[i].counters.ring_drops);
			rc = 1;
		}
	if (close_tables(x) < 0)
		rc = 1;
	if (!quiet) {
		double s = now_s() - t0;

		fprintf(stderr, "wb-export: %" PRIu64 " packets, %" PRIu64 " events in %.2f s (%.0f events/s) ->",
			src.ctr.packets, x->events_seen, s, s > 0 ? (double)x->events_seen / s : 0.0);
		for (int t = 0; t < T_COUNT; t++)
			if (t != T_BOOK || x->depth)
				fprintf(stderr, " %s %" PRIu64, table_name[t], x->rows[t]);
		fprintf(stderr, "\n");
	}
	source_close(&src);
	exporter_destroy(x);
	return rc;
}
