/*
 * queue_trace: a day through the venue books and the order detail, read
 * back through the reader API (wirebook/orders.h), as text a separate
 * model can check (tests/queue/queue_ref.py):
 *
 *   queue_trace [--feeds FILE] [--detail all|none|SYM,...] [--track VENUE:ID,...]
 *               [--enable-at N:SYM,...] [--virtual N:VENUE:SYM:B|S:PRICE:QTY,...]
 *               [--virtual-cancel N:K,...] PCAP
 *
 * Events are applied one at a time, numbered from 1 in the order the feed
 * engine gives them (wb-dump's order). Requests (tracking, detail turned
 * on mid-day) go through the readers' request area and are served before
 * the event they are asked at. After each event each tracked order's
 * queue position is read with wb_queue_position and printed when it
 * changed:
 *   T EVENT VENUE ID STATE AHEAD_SHARES AHEAD_ORDERS BEHIND_SHARES BEHIND_ORDERS LEVEL_QTY LEVEL_ORDERS QTY FILLED
 * Virtual orders (numbered K from 0 in --virtual's order) are placed
 * before event N, cancelled before event N of --virtual-cancel, and read
 * with wb_virtual_state after each event, printed when they changed:
 *   V EVENT K STATE AHEAD_SHARES AHEAD_ORDERS BEHIND_SHARES BEHIND_ORDERS LEVEL_QTY LEVEL_ORDERS QTY FILLED FILLS LAST_FILL
 * A fill must carry the event that caused it (its seq and times): the
 * trace stops with an error when one does not.
 * At the end, every level of every symbol with detail, best first, and
 * its orders in time priority:
 *   L VENUE SYM SIDE PRICE QTY ORDERS
 *   O ID QTY JOIN_TIME MPID        (JOIN_TIME '-': joined before detail began)
 *   E EVENTS
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book/order_detail.h"
#include "book/venue_book.h"
#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "feed/feed.h"
#include "input/capture.h"
#include "wirebook/orders.h"
#include "wirebook/ring.h"
#include "../unit/test_util.h"

#define MAX_FEEDS 64
#define RING_SLOTS (1u << 16)
#define MAX_TRACK 64
#define MAX_ENABLE 64
#define MAX_LEVELS 4096
#define MAX_ORDERS 65536
#define MAX_VIRTUAL 64

static int same_pos(const struct wb_queue_pos *a, const struct wb_queue_pos *b);

struct virtual {
	uint64_t at, cancel_at;
	int venue, sym, side;
	int64_t price;
	uint64_t qty, id;
	struct wb_virtual_order last;
	int printed;
};

/* "10.05" -> 1005000000 (wirebook prices: 1e-8 units). */
static int64_t price_of(const char *text)
{
	const char *dot = strchr(text, '.');
	int64_t v = strtoll(text, NULL, 10) * 100000000;
	int64_t scale = 10000000;

	for (const char *p = dot ? dot + 1 : ""; *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
		v += (*p - '0') * scale;
	return v;
}

static int same_virtual(const struct wb_virtual_order *a, const struct wb_virtual_order *b)
{
	return same_pos(&a->pos, &b->pos) && a->fills == b->fills && a->last_fill_qty == b->last_fill_qty;
}

struct tracked {
	int venue;
	uint64_t id;
	struct wb_queue_pos last;
	int printed;
};

static int venue_of(const char *name)
{
	for (int v = 1; v < WB_VENUE_COUNT; v++)
		if (!strcmp(feed_venue_name(v), name))
			return v;
	return -1;
}

static int same_pos(const struct wb_queue_pos *a, const struct wb_queue_pos *b)
{
	return a->state == b->state && a->shares_ahead == b->shares_ahead && a->orders_ahead == b->orders_ahead &&
	       a->shares_behind == b->shares_behind && a->orders_behind == b->orders_behind &&
	       a->level_qty == b->level_qty && a->level_orders == b->level_orders && a->qty == b->qty &&
	       a->filled_qty == b->filled_qty;
}

static void print_pos(uint64_t n, const struct tracked *t, const struct wb_queue_pos *p)
{
	printf("T %" PRIu64 " %s %" PRIu64 " %s %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %" PRIu64 "\n",
	       n, feed_venue_name(t->venue), t->id, wb_queue_state_name(p->state), p->shares_ahead, p->orders_ahead,
	       p->shares_behind, p->orders_behind, p->level_qty, p->level_orders, p->qty, p->filled_qty);
}

static void dump_books(const struct wb_orders *o, uint32_t capacity)
{
	static struct wb_order_level levels[MAX_LEVELS];
	static struct wb_order orders[MAX_ORDERS];
	char price[64], when[64];

	for (uint32_t sym = 1; sym < capacity; sym++) {
		if (wb_orders_has_detail(o, (int)sym) != 1)
			continue;
		for (int v = 1; v < WB_VENUE_COUNT; v++)
			for (int side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
				int nl = wb_order_levels(o, (int)sym, v, side, levels, MAX_LEVELS);

				for (int l = 0; l < nl; l++) {
					struct wb_order_level lv;
					int no = wb_orders_at(o, (int)sym, v, side, levels[l].price, orders, MAX_ORDERS, &lv);

					wb_price_format(lv.price, price, sizeof(price));
					printf("L %s %u %c %s %" PRIu64 " %u\n", feed_venue_name(v), sym,
					       side == WB_SIDE_BUY ? 'B' : 'S', price, lv.qty, lv.orders);
					for (int k = 0; k < no; k++) {
						char mpid[5] = { 0 };

						memcpy(mpid, orders[k].mpid, 4);
						for (int c = 3; c >= 0 && (mpid[c] == ' ' || !mpid[c]); c--)
							mpid[c] = 0;
						if (orders[k].join_ts)
							wb_time_format(orders[k].join_ts, when, sizeof(when));
						else
							snprintf(when, sizeof(when), "-");
						printf("O %" PRIu64 " %" PRIu64 " %s %s\n", orders[k].order_id, orders[k].qty,
						       when, mpid[0] ? mpid : "-");
					}
				}
			}
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "feeds", required_argument, NULL, 'f' },
		{ "detail", required_argument, NULL, 'd' },
		{ "track", required_argument, NULL, 't' },
		{ "enable-at", required_argument, NULL, 'e' },
		{ "virtual", required_argument, NULL, 'v' },
		{ "virtual-cancel", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	static struct feed_map_entry feeds[MAX_FEEDS];
	static struct tracked track[MAX_TRACK];
	static struct { uint64_t at; int sym; } enable[MAX_ENABLE];
	static struct virtual virt[MAX_VIRTUAL];
	int nvirt = 0;
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	const char *feeds_path = NULL, *detail = "all";
	struct feed_engine engine;
	struct capture cap = { 0 };
	struct wb_ring_producer prod;
	struct wb_ring_consumer cons;
	struct venue_books *vb;
	struct order_detail *od;
	struct wb_orders *rd;
	struct book_update ups[BOOK_MAX_UPDATES_PER_EVENT];
	char err[CAPTURE_ERR_LEN], name[64];
	int ntrack = 0, nenable = 0, nfeeds, c, e;
	uint64_t events = 0;
	void *ring;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		char *tok, *save = NULL;

		switch (c) {
		case 'f': feeds_path = optarg; break;
		case 'd': detail = optarg; break;
		case 't':
			for (tok = strtok_r(optarg, ",", &save); tok && ntrack < MAX_TRACK; tok = strtok_r(NULL, ",", &save)) {
				char *colon = strchr(tok, ':');

				if (!colon)
					return 2;
				*colon = 0;
				track[ntrack].venue = venue_of(tok);
				track[ntrack].id = strtoull(colon + 1, NULL, 0);
				if (track[ntrack].venue < 0)
					return 2;
				ntrack++;
			}
			break;
		case 'e':
			for (tok = strtok_r(optarg, ",", &save); tok && nenable < MAX_ENABLE; tok = strtok_r(NULL, ",", &save)) {
				if (sscanf(tok, "%" SCNu64 ":%d", &enable[nenable].at, &enable[nenable].sym) != 2)
					return 2;
				nenable++;
			}
			break;
		case 'v':
			for (tok = strtok_r(optarg, ",", &save); tok && nvirt < MAX_VIRTUAL; tok = strtok_r(NULL, ",", &save)) {
				char venue[32], side, price[32];
				struct virtual *w = &virt[nvirt];

				if (sscanf(tok, "%" SCNu64 ":%31[^:]:%d:%c:%31[^:]:%" SCNu64, &w->at, venue, &w->sym, &side,
					   price, &w->qty) != 6 || (w->venue = venue_of(venue)) < 0)
					return 2;
				w->side = side == 'B' ? WB_SIDE_BUY : WB_SIDE_SELL;
				w->price = price_of(price);
				nvirt++;
			}
			break;
		case 'c':
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				uint64_t at;
				int k;

				if (sscanf(tok, "%" SCNu64 ":%d", &at, &k) != 2 || k < 0 || k >= nvirt)
					return 2;
				virt[k].cancel_at = at;
			}
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc)
		return 2;
	if (!feeds_path)
		feeds_path = feeds_conf_default_path();
	nfeeds = feeds_conf_read(feeds_path, feeds, MAX_FEEDS, err, sizeof(err));
	if (nfeeds < 0 || feed_engine_init(&engine, &ecfg) < 0) {
		fprintf(stderr, "queue_trace: %s\n", nfeeds < 0 ? err : "feed engine");
		return 1;
	}
	for (int i = 0; i < nfeeds; i++)
		if (feed_map_add_entry(&engine, &feeds[i]) < 0)
			return 1;
	if (feed_subscribe(&engine, "*", 1) < 0 || capture_load(&cap, argv[optind], -1, err, sizeof(err)) < 0) {
		fprintf(stderr, "queue_trace: %s\n", err);
		return 1;
	}
	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(RING_SLOTS));
	memset(ring, 0, wb_ring_bytes(RING_SLOTS));
	wb_ring_format(ring, RING_SLOTS, 1);
	wb_ring_producer_init(&prod, ring);
	wb_ring_consumer_init(&cons, ring);

	vb = venue_books_create(&(struct venue_books_config){ .expected_orders = 1u << 16, .numa_node = -1 });
	snprintf(name, sizeof(name), "wb-queue-trace-%d", (int)getpid());
	od = order_detail_create(&(struct order_detail_config){ .shm_name = name, .order_slots = 1u << 18,
								 .all = !strcmp(detail, "all") },
				 &e);
	if (!vb || !od || (strcmp(detail, "all") && strcmp(detail, "none") && order_detail_watch(od, detail) < 0)) {
		fprintf(stderr, "queue_trace: setup failed (%d)\n", e);
		return 1;
	}
	rd = wb_orders_open(name, &e);
	if (!rd) {
		fprintf(stderr, "queue_trace: wb_orders_open: %s\n", wb_strerror(e));
		order_detail_destroy(od);
		return 1;
	}
	for (int t = 0; t < ntrack; t++)
		if (wb_queue_track(rd, track[t].venue, track[t].id) < 0)
			return 1;
	for (uint64_t p = 0; p < cap.count; p++) {
		uint64_t n;

		capture_replay(&cap, p, p + 1, -1, &engine, &prod);
		wb_ring_producer_publish_no_wakeup(&prod);
		n = wb_ring_consumer_available(&cons);
		for (uint64_t i = 0; i < n; i++) {
			const struct wb_event *ev = wb_ring_consumer_at(&cons, i);
			unsigned k;

			events++;
			for (int x = 0; x < nenable; x++)
				if (enable[x].at == events && wb_orders_detail(rd, enable[x].sym, 1) < 0)
					return 1;
			for (int x = 0; x < nvirt; x++) {
				if (virt[x].at == events &&
				    wb_virtual_place(rd, virt[x].sym, virt[x].venue, virt[x].side, virt[x].price, virt[x].qty,
						     &virt[x].id) < 0)
					return 1;
				if (virt[x].cancel_at == events && wb_virtual_cancel(rd, virt[x].id) < 0)
					return 1;
			}
			order_detail_poll(od, vb);
			k = venue_books_apply(vb, ev, ups);
			order_detail_event(od, vb, ev, ups, k);
			for (int x = 0; x < nvirt; x++) {
				struct wb_virtual_order vo;

				if (virt[x].at > events || wb_virtual_state(rd, virt[x].id, &vo) < 0)
					continue;
				if (vo.fills != virt[x].last.fills &&
				    (vo.fill_seq != ev->seq || vo.fill_exch_ts != ev->exch_ts || vo.fill_recv_ts != ev->recv_ts)) {
					fprintf(stderr, "queue_trace: virtual %d filled at event %" PRIu64 " names another event\n",
						x, events);
					return 1;
				}
				if (!virt[x].printed || !same_virtual(&vo, &virt[x].last)) {
					printf("V %" PRIu64 " %d %s %" PRIu64 " %u %" PRIu64 " %u %" PRIu64 " %u %" PRIu64
					       " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
					       events, x, wb_queue_state_name(vo.pos.state), vo.pos.shares_ahead,
					       vo.pos.orders_ahead, vo.pos.shares_behind, vo.pos.orders_behind,
					       vo.pos.level_qty, vo.pos.level_orders, vo.pos.qty, vo.pos.filled_qty, vo.fills,
					       vo.last_fill_qty);
					virt[x].last = vo;
					virt[x].printed = 1;
				}
			}
			for (int t = 0; t < ntrack; t++) {
				struct wb_queue_pos pos;

				if (wb_queue_position(rd, track[t].venue, track[t].id, &pos) < 0) {
					fprintf(stderr, "queue_trace: %s:%" PRIu64 " not tracked\n",
						feed_venue_name(track[t].venue), track[t].id);
					return 1;
				}
				if (!track[t].printed || !same_pos(&pos, &track[t].last)) {
					print_pos(events, &track[t], &pos);
					track[t].last = pos;
					track[t].printed = 1;
				}
			}
		}
		wb_ring_consumer_release(&cons, n);
	}
	dump_books(rd, VENUE_BOOKS_DEFAULT_INSTRUMENTS);
	printf("E %" PRIu64 "\n", events);
	wb_orders_close(rd);
	order_detail_destroy(od);
	venue_books_destroy(vb);
	capture_free(&cap);
	feed_engine_destroy(&engine);
	free(ring);
	return 0;
}
