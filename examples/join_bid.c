/* join_bid [--book NAME] [--qty N] [--max N] [--fills FILE.csv] [--queue FILE.csv] [--trace]:
 * an example strategy on libwirebook's live API (event stream, order
 * detail, virtual orders) that runs unchanged live (shadow trading) and
 * against a replayed day (wirebookd --lockstep: docs/simulate.md).
 *
 * On each event of a symbol that carries order detail it reads the
 * venue's best bid and ask (wb_venue_bbo, the Super-Book's per-venue BBO). Signal: the bid holds at
 * least twice the ask's shares; then it joins the bid with a virtual buy
 * of --qty shares (one order per symbol, --max in all). It cancels when
 * the bid moves above its price or the imbalance turns (the ask holds
 * twice the bid's shares). At the end it prints its report: every order
 * with its queue position at placement, its state and fills, and totals;
 * --fills writes every fill as a CSV row, --queue every change of an
 * order's place in the queue (shares and orders ahead and behind, the
 * level's totals); --trace prints each event's
 * stream position (for tests/sim: the reference check).
 *
 * Links only libwirebook: cc join_bid.c $(pkg-config --cflags --libs wirebook) */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wirebook/book.h"
#include "wirebook/events.h"
#include "wirebook/orders.h"

#define MAX_SYMS 65536
#define MAX_ORDERS 100000

struct mine {
	uint64_t id, placed_at, ended_at;	/* stream positions */
	int sym, venue;
	int64_t price;
	uint64_t ahead_at_place;		/* shares ahead once placed, -1 before */
	struct wb_virtual_order last;
	int seen;				/* placed (state read once) */
	int done;				/* filled, cancelled or refused */
};

static struct mine orders[MAX_ORDERS];
static int live_of[MAX_SYMS];		/* the symbol's live order + 1, or 0 */
static int cancelling_of[MAX_SYMS];	/* its order being cancelled + 1, or 0 */
static int trace;
static char tickers[MAX_SYMS][9];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The strategy proper: join the bid on an imbalance, cancel when it is gone. */
static void on_event(const struct wb_book *book, struct wb_orders *o, const struct wb_event *ev, uint64_t pos,
		     unsigned *n, unsigned max, uint64_t qty)
{
	struct wb_venue_bbo bbo;
	struct { int64_t price; uint64_t qty; } bid, ask;
	int sym = ev->instrument, k = live_of[sym] - 1;

	if (wb_venue_bbo(book, sym, ev->venue, &bbo) < 0 || !bbo.bid_qty || !bbo.ask_qty)
		return;
	bid.price = bbo.bid_price;
	bid.qty = bbo.bid_qty;
	ask.price = bbo.ask_price;
	ask.qty = bbo.ask_qty;
	if (k < 0 && *n < max && bid.qty >= 2 * ask.qty) {
		struct mine *m = &orders[*n];

		if (wb_virtual_place(o, sym, ev->venue, WB_SIDE_BUY, bid.price, qty, &m->id) < 0)
			return;
		m->sym = sym;
		m->venue = ev->venue;
		m->price = bid.price;
		m->placed_at = pos;
		m->ahead_at_place = UINT64_MAX;
		live_of[sym] = (int)++*n;
	} else if (k >= 0 && orders[k].seen && !orders[k].done && !cancelling_of[sym] && orders[k].venue == ev->venue &&
		   (bid.price > orders[k].price || ask.qty >= 2 * bid.qty)) {
		if (wb_virtual_cancel(o, orders[k].id) < 0)
			return;
		if (trace)
			printf("C %" PRIu64 " %d\n", pos, k);
		cancelling_of[sym] = k + 1;	/* followed until the cancel lands */
		live_of[sym] = 0;
	}
}

/* wirebook prices are 1e-8 dollars: "12.34" */
static void price_text(int64_t price, char *buf, size_t n)
{
	uint64_t a = price < 0 ? (uint64_t)-price : (uint64_t)price;
	int len = snprintf(buf, n, "%s%" PRIu64 ".%08" PRIu64, price < 0 ? "-" : "", a / 100000000u, a % 100000000u);

	while (len > 0 && (size_t)len < n && buf[len - 1] == '0' && buf[len - 2] != '.')
		buf[--len] = 0;
}

static void csv_fill(FILE *f, const struct mine *m, uint64_t pos, uint64_t qty)
{
	char price[32];

	if (!f)
		return;
	price_text(m->price, price, sizeof(price));
	fprintf(f, "%d,%" PRIu64 ",%" PRIu64 ",%s,%s,B,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%s\n", (int)(m - orders), m->id, pos, tickers[m->sym], wb_venue_name(m->venue), price, qty,
		m->last.pos.filled_qty, m->last.pos.qty, m->last.fill_exch_ts, m->last.fill_recv_ts, m->last.fill_seq,
		wb_queue_state_name(m->last.pos.state));
}

/* Follow the order's state: its place in the queue once placed, and each fill. */
static FILE *queue_csv;

static void follow(struct wb_orders *o, struct mine *m, uint64_t pos, FILE *fills)
{
	struct wb_virtual_order v;

	if (m->done || wb_virtual_state(o, m->id, &v) < 0 || (m->seen && v.pos.version == m->last.pos.version))
		return;
	if (queue_csv)
		fprintf(queue_csv, "%d,%" PRIu64 ",%s,%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 "\n",
			(int)(m - orders), pos, wb_queue_state_name(v.pos.state), v.pos.shares_ahead, v.pos.orders_ahead,
			v.pos.shares_behind, v.pos.orders_behind, v.pos.level_qty, v.pos.level_orders, v.pos.qty,
			v.pos.filled_qty);
	if (!m->seen)
		m->ahead_at_place = v.pos.shares_ahead;
	if (v.fills != m->last.fills) {
		m->last = v;
		csv_fill(fills, m, pos, v.last_fill_qty);
		if (trace)
			printf("F %" PRIu64 " %d %" PRIu64 " %" PRIu64 "\n", pos, (int)(m - orders), v.last_fill_qty,
			       v.pos.filled_qty);
	}
	m->last = v;
	m->seen = 1;
	if (v.pos.state != WB_QUEUE_RESTING && v.pos.state != WB_QUEUE_PARTLY_FILLED) {
		if (!m->ended_at)
			m->ended_at = pos;
		if (live_of[m->sym] == (int)(m - orders) + 1)
			live_of[m->sym] = 0;	/* filled or refused: free to join again */
		if (cancelling_of[m->sym] == (int)(m - orders) + 1)
			cancelling_of[m->sym] = 0;
		m->done = 1;
		wb_virtual_cancel(o, m->id);	/* done: its tracking slot is free for the next */
	}
}

static void report(struct wb_orders *o, unsigned n, uint64_t events)
{
	uint64_t filled = 0, fills = 0, count[8] = { 0 };
	char price[32];

	printf("join_bid report: %" PRIu64 " events, %u virtual orders\n", events, n);
	printf("%-6s %-20s %-8s %-8s %12s %10s %14s %-14s %8s %6s\n", "order", "virtual_id", "symbol", "venue", "price", "placed_at",
	       "ahead_at_place", "state", "filled", "fills");
	for (unsigned k = 0; k < n; k++) {
		struct mine *m = &orders[k];

		if (!m->done && wb_virtual_state(o, m->id, &m->last) == 0)
			m->seen = 1;
		price_text(m->price, price, sizeof(price));
		printf("%-6u %-20" PRIu64 " %-8s %-8s %12s %10" PRIu64 " %14" PRId64 " %-14s %8" PRIu64 " %6" PRIu64 "\n", k, m->id,
		       tickers[m->sym], wb_venue_name(m->venue), price, m->placed_at,
		       m->ahead_at_place == UINT64_MAX ? (int64_t)-1 : (int64_t)m->ahead_at_place,
		       wb_queue_state_name(m->last.pos.state), m->last.pos.filled_qty, m->last.fills);
		if (trace)
			printf("S %u %s %" PRIu64 " %" PRIu64 "\n", k, wb_queue_state_name(m->last.pos.state),
			       m->last.pos.filled_qty, m->last.fills);
		filled += m->last.pos.filled_qty;
		fills += m->last.fills;
		count[m->last.pos.state & 7]++;
	}
	printf("join_bid totals: orders %u, filled %" PRIu64 " (partly %" PRIu64 "), cancelled %" PRIu64
	       ", refused %" PRIu64 ", resting %" PRIu64 "; fills %" PRIu64 ", shares %" PRIu64 "\n", n,
	       count[WB_QUEUE_FILLED], count[WB_QUEUE_PARTLY_FILLED], count[WB_QUEUE_CANCELLED],
	       count[WB_QUEUE_REFUSED], count[WB_QUEUE_RESTING], fills, filled);
}

int main(int argc, char **argv)
{
	const char *name = NULL, *fills_path = NULL, *queue_path = NULL;
	const struct wb_event *batch[256];
	struct wb_events *ev = NULL;
	struct wb_orders *o = NULL;
	struct wb_book *book = NULL;
	uint64_t qty = 100, pos = 0;
	unsigned max = 1000, n = 0, unseen = 0;
	FILE *fills = NULL;
	int i, err = 0, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--book") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--qty") && i + 1 < argc)
			qty = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			max = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--fills") && i + 1 < argc)
			fills_path = argv[++i];
		else if (!strcmp(argv[i], "--queue") && i + 1 < argc)
			queue_path = argv[++i];
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else {
			fprintf(strcmp(argv[i], "--help") ? stderr : stdout, "usage: join_bid [--book NAME] [--qty N] "
				"[--max N] [--fills FILE.csv] [--queue FILE.csv] [--trace]\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (max > MAX_ORDERS || !qty)
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* wirebookd may still be starting: wait for its stream and detail. */
	for (i = 0; i < 300 && !stop && (!ev || !o || !book); i++) {
		struct timespec nap = { 0, 20000000 };

		if (!ev)
			ev = wb_events_open_shm(name, &err);
		if (ev && !o)
			o = wb_orders_open(name, &err);
		if (o && !book)
			book = wb_open(name, &err);
		if (!ev || !o || !book)
			nanosleep(&nap, NULL);
	}
	if (!ev || !o || !book) {
		fprintf(stderr, "join_bid: %s (is wirebookd running with --events and --order-detail?)\n",
			wb_strerror(err));
		return 1;
	}
	if (fills_path) {
		fills = fopen(fills_path, "w");
		if (!fills) {
			perror(fills_path);
			return 1;
		}
		fprintf(fills, "order,virtual_id,event,symbol,venue,side,price,fill_qty,filled_qty,left_qty,fill_exch_ts,"
			"fill_recv_ts,fill_seq,state\n");
	}
	if (queue_path) {
		queue_csv = fopen(queue_path, "w");
		if (!queue_csv) {
			perror(queue_path);
			return 1;
		}
		fprintf(queue_csv, "order,event,state,shares_ahead,orders_ahead,shares_behind,orders_behind,"
			"level_qty,level_orders,left_qty,filled_qty\n");
	}
	while (!stop) {
		unsigned got = wb_events_peek(ev, batch, 256);

		if (!got) {
			rc = wb_events_wait(ev, 100);
			if (rc < 0)
				break;	/* WB_ESTALE: the replay (or wirebookd) ended */
			continue;
		}
		for (unsigned j = 0; j < got; j++) {
			const struct wb_event *e = batch[j];
			int sym = e->instrument;

			pos++;
			if (trace)
				printf("E %" PRIu64 " %" PRIu64 " %u\n", pos, e->recv_ts, e->line);
			if (e->kind == WB_EV_SYMBOL) {
				memcpy(tickers[sym], e->u.symbol.ticker, 8);
				for (int c = 7; c >= 0 && tickers[sym][c] == ' '; c--)
					tickers[sym][c] = 0;
				continue;
			}
			/* Orders just placed: their place in the queue as they join it. */
			for (unsigned k = unseen; k < n; k++)
				follow(o, &orders[k], pos, fills);
			while (unseen < n && (orders[unseen].seen || orders[unseen].done))
				unseen++;
			if (!sym || wb_orders_has_detail(o, sym) != 1)
				continue;
			if (cancelling_of[sym])
				follow(o, &orders[cancelling_of[sym] - 1], pos, fills);
			if (live_of[sym])
				follow(o, &orders[live_of[sym] - 1], pos, fills);
			on_event(book, o, e, pos, &n, max, qty);
			if (trace && live_of[sym] && orders[live_of[sym] - 1].placed_at == pos) {
				const struct mine *m = &orders[live_of[sym] - 1];
				char price[32];

				price_text(m->price, price, sizeof(price));
				printf("P %" PRIu64 " %d %d %d %s %" PRIu64 "\n", pos, live_of[sym] - 1, m->venue, sym,
				       price, qty);
			}
		}
		wb_events_release(ev);
	}
	/* Orders cancelled by the strategy, and those another symbol's events last saw. */
	for (unsigned k = 0; k < n; k++)
		follow(o, &orders[k], pos, fills);
	report(o, n, pos);
	if (fills)
		fclose(fills);
	if (queue_csv)
		fclose(queue_csv);
	wb_events_close(ev);
	wb_orders_close(o);
	wb_close(book);
	return 0;
}
