/*
 * sim_probe: a small strategy for the simulator's reference check
 * (tests/sim/sim_test.py), run against wirebookd --lockstep like
 * examples/join_bid, on any day (the real captures in pcaps/ too, where
 * join_bid's imbalance signal never fires):
 *
 *   sim_probe --book NAME [--max N] [--cancel-after N] [--dump-at P,P,...] [--linger-ms N]
 *
 * On an event of a symbol with order detail, when it has no order of its
 * own on that symbol and venue, it joins the best level of one side
 * (buy and sell in turn; the other side when that one is empty) with a
 * virtual order; every third order it cancels once it has rested
 * --cancel-after events. Every request it posts, in the order it posts
 * them (a sampled latency model draws one delay per request, in that
 * order), and what it sees:
 *   E POS RECV_TS LINE            every event
 *   P POS K VENUE SYM PRICE QTY SIDE   a virtual order placed
 *   C POS K                       the strategy cancels order K
 *   X POS K                       order K is done: its tracking slot given back (a cancel that changes nothing)
 *   Q POS K STATE AHEAD_SHARES AHEAD_ORDERS BEHIND_SHARES BEHIND_ORDERS LEVEL_QTY LEVEL_ORDERS QTY FILLED FILLS
 *                                 its place in the queue when it changed (wb_virtual_state)
 *   F POS K FILL_QTY FILLED_QTY   a fill seen
 *   S K STATE FILLED FILLS        each order at the end
 * and, at the first point at or after each --dump-at position where it
 * holds the whole of a step (the builder waits for it: the books are those
 * after the step's last event; the end of the day is one), every level of every
 * symbol with detail, best first, with its orders in time priority
 * (wb_order_levels, wb_orders_at), as tests/queue/queue_trace prints them
 * (--linger-ms: after a sleep, as a slow strategy would read them):
 *   D POS
 *   L VENUE SYM SIDE PRICE QTY ORDERS
 *   O ID QTY JOIN_TIME MPID
 *   W SYM ERROR                   a read failed: the dump is not whole
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/event_text.h"
#include "wirebook/book.h"
#include "wirebook/events.h"
#include "wirebook/orders.h"

#define MAX_SYMS 65536
#define MAX_ORDERS 4096
#define MAX_DUMPS 256
#define MAX_LEVELS 4096
#define MAX_LEVEL_ORDERS 65536
#define BATCH 256

struct mine {
	uint64_t id, placed_at;
	int sym, venue, side;
	struct wb_virtual_order last;
	int seen, done, cancelling;
};

static struct mine orders[MAX_ORDERS];
static unsigned n_orders;
static int live_of[MAX_SYMS][WB_VENUE_COUNT];	/* order + 1, or 0 */
static int known[MAX_SYMS];			/* a SYMBOL event named it */

static int same_place(const struct wb_virtual_order *a, const struct wb_virtual_order *b)
{
	return a->pos.state == b->pos.state && a->pos.shares_ahead == b->pos.shares_ahead &&
	       a->pos.orders_ahead == b->pos.orders_ahead && a->pos.shares_behind == b->pos.shares_behind &&
	       a->pos.orders_behind == b->pos.orders_behind && a->pos.level_qty == b->pos.level_qty &&
	       a->pos.level_orders == b->pos.level_orders && a->pos.qty == b->pos.qty &&
	       a->pos.filled_qty == b->pos.filled_qty && a->fills == b->fills;
}

static void follow(struct wb_orders *o, struct mine *m, uint64_t pos)
{
	struct wb_virtual_order v;

	if (m->done || wb_virtual_state(o, m->id, &v) < 0)
		return;
	if (!m->seen || !same_place(&v, &m->last))
		printf("Q %" PRIu64 " %d %s %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64
		       "\n", pos, (int)(m - orders), wb_queue_state_name(v.pos.state), v.pos.shares_ahead,
		       v.pos.orders_ahead, v.pos.shares_behind, v.pos.orders_behind, v.pos.level_qty, v.pos.level_orders,
		       v.pos.qty, v.pos.filled_qty, v.fills);
	if (v.fills != m->last.fills)
		printf("F %" PRIu64 " %d %" PRIu64 " %" PRIu64 "\n", pos, (int)(m - orders), v.last_fill_qty,
		       v.pos.filled_qty);
	m->last = v;
	m->seen = 1;
	if (v.pos.state == WB_QUEUE_RESTING || v.pos.state == WB_QUEUE_PARTLY_FILLED)
		return;
	m->done = 1;
	live_of[m->sym][m->venue] = 0;
	if (wb_virtual_cancel(o, m->id) == WB_OK)
		printf("X %" PRIu64 " %d\n", pos, (int)(m - orders));
}

static void on_event(struct wb_orders *o, const struct wb_event *e, uint64_t pos, unsigned max, uint64_t cancel_after)
{
	int sym = e->instrument, venue = e->venue;
	struct wb_order_level best;
	char price[64];

	for (unsigned k = 0; k < n_orders; k++)
		follow(o, &orders[k], pos);
	if (live_of[sym][venue]) {
		int k = live_of[sym][venue] - 1;
		struct mine *m = &orders[k];

		if (k % 3 == 2 && m->seen && !m->cancelling && pos - m->placed_at >= cancel_after &&
		    wb_virtual_cancel(o, m->id) == WB_OK) {
			m->cancelling = 1;
			printf("C %" PRIu64 " %d\n", pos, k);
		}
		return;
	}
	if (n_orders >= max)
		return;
	for (int t = 0; t < 2; t++) {
		int side = (n_orders + (unsigned)t) % 2 ? WB_SIDE_SELL : WB_SIDE_BUY;
		struct mine *m = &orders[n_orders];
		uint64_t qty = 100 + 37 * (n_orders % 4);

		if (wb_order_levels(o, sym, venue, side, &best, 1) != 1)
			continue;
		if (wb_virtual_place(o, sym, venue, side, best.price, qty, &m->id) != WB_OK)
			return;
		m->sym = sym;
		m->venue = venue;
		m->side = side;
		m->placed_at = pos;
		live_of[sym][venue] = (int)++n_orders;
		wb_price_format(best.price, price, sizeof(price));
		printf("P %" PRIu64 " %u %d %d %s %" PRIu64 " %c\n", pos, n_orders - 1, venue, sym, price, qty,
		       side == WB_SIDE_BUY ? 'B' : 'S');
		return;
	}
}

static void dump(const struct wb_orders *o, uint64_t pos)
{
	static struct wb_order_level levels[MAX_LEVELS];
	static struct wb_order at[MAX_LEVEL_ORDERS];
	char price[64], when[64];

	printf("D %" PRIu64 "\n", pos);
	for (int sym = 1; sym < MAX_SYMS; sym++) {
		int rc = known[sym] ? wb_orders_has_detail(o, sym) : 0;

		if (rc < 0)
			printf("W %d %s\n", sym, wb_strerror(rc));	/* an incomplete dump: the check fails */
		if (rc != 1)
			continue;
		for (int v = 1; v < WB_VENUE_COUNT; v++)
			for (int side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
				int nl = wb_order_levels(o, sym, v, side, levels, MAX_LEVELS);

				if (nl < 0)
					printf("W %d %s\n", sym, wb_strerror(nl));

				for (int l = 0; l < nl; l++) {
					struct wb_order_level lv;
					int no = wb_orders_at(o, sym, v, side, levels[l].price, at, MAX_LEVEL_ORDERS, &lv);

					wb_price_format(lv.price, price, sizeof(price));
					printf("L %d %d %c %s %" PRIu64 " %u\n", v, sym, side == WB_SIDE_BUY ? 'B' : 'S', price,
					       lv.qty, lv.orders);
					for (int k = 0; k < no; k++) {
						char mpid[5] = { 0 };

						memcpy(mpid, at[k].mpid, 4);
						for (int c = 3; c >= 0 && (mpid[c] == ' ' || !mpid[c]); c--)
							mpid[c] = 0;
						if (at[k].join_ts)
							wb_time_format(at[k].join_ts, when, sizeof(when));
						else
							snprintf(when, sizeof(when), "-");
						printf("O %" PRIu64 " %" PRIu64 " %s %s\n", at[k].order_id, at[k].qty, when,
						       mpid[0] ? mpid : "-");
					}
				}
			}
	}
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	const struct wb_event *batch[BATCH];
	static uint64_t dump_at[MAX_DUMPS];
	unsigned max = 200, n_dumps = 0, next_dump = 0;
	unsigned long linger_ms = 0;
	uint64_t cancel_after = 50, pos = 0;
	struct wb_events *ev = NULL;
	struct wb_orders *o = NULL;
	int err = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--book") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			max = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--linger-ms") && i + 1 < argc)
			linger_ms = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cancel-after") && i + 1 < argc)
			cancel_after = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dump-at") && i + 1 < argc) {
			for (char *p = argv[++i]; *p && n_dumps < MAX_DUMPS; p += *p == ',')
				dump_at[n_dumps++] = strtoull(p, &p, 10);
		} else {
			fprintf(stderr, "usage: sim_probe --book NAME [--max N] [--cancel-after N] [--dump-at P,P,...] "
				"[--linger-ms N]\n");
			return 2;
		}
	}
	if (max > MAX_ORDERS)
		return 2;
	/* wirebookd may still be starting: wait for its stream and detail. */
	for (int i = 0; i < 500 && (!ev || !o); i++) {
		struct timespec nap = { 0, 20000000 };

		if (!ev)
			ev = wb_events_open_shm(name, &err);
		if (ev && !o)
			o = wb_orders_open(name, &err);
		if (!ev || !o)
			nanosleep(&nap, NULL);
	}
	if (!ev || !o) {
		fprintf(stderr, "sim_probe: %s\n", wb_strerror(err));
		return 1;
	}
	for (;;) {
		unsigned got = wb_events_peek(ev, batch, BATCH);

		if (!got) {
			if (wb_events_wait(ev, 100) < 0)
				break;	/* WB_ESTALE: the replay ended */
			continue;
		}
		for (unsigned j = 0; j < got; j++) {
			const struct wb_event *e = batch[j];

			pos++;
			printf("E %" PRIu64 " %" PRIu64 " %u\n", pos, e->recv_ts, e->line);
			if (e->kind == WB_EV_SYMBOL)
				known[e->instrument] = 1;
			if (e->kind == WB_EV_SYMBOL || e->kind == WB_EV_GAP || !e->instrument || !e->venue ||
			    e->venue >= WB_VENUE_COUNT || wb_orders_has_detail(o, e->instrument) != 1)
				continue;
			on_event(o, e, pos, max, cancel_after);
		}
		/* A short batch is the whole of a step, not yet acknowledged:
		 * the builder waits, the books stand after its last event. */
		if (got < BATCH && next_dump < n_dumps && dump_at[next_dump] <= pos) {
			/* A slow reader: the builder must wait for it, even at the end. */
			struct timespec nap = { (time_t)(linger_ms / 1000), (long)(linger_ms % 1000) * 1000000L };

			if (linger_ms)
				nanosleep(&nap, NULL);
			dump(o, pos);
			while (next_dump < n_dumps && dump_at[next_dump] <= pos)
				next_dump++;
		}
		wb_events_release(ev);
	}
	for (unsigned k = 0; k < n_orders; k++)
		follow(o, &orders[k], pos);
	for (unsigned k = 0; k < n_orders; k++)
		printf("S %u %s %" PRIu64 " %" PRIu64 "\n", k, wb_queue_state_name(orders[k].last.pos.state),
		       orders[k].last.pos.filled_qty, orders[k].last.fills);
	wb_events_close(ev);
	wb_orders_close(o);
	return 0;
}
