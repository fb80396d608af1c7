/*
 * Order detail (issue 25): orders at a price in time priority and queue
 * positions, written by the venue books' thread (order_detail.h) and read
 * through libwirebook (wirebook/orders.h). Whole generated days are
 * checked against a separate model by make queue-test; these are the
 * specification, and the concurrency a day cannot show.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "book/order_detail.h"
#include "book/venue_book.h"
#include "wirebook/orders.h"

#define TICK 1000000LL
#define PX(cents) ((int64_t)(cents) * TICK)
#define SYM 3
#define V WB_VENUE_NASDAQ

static struct venue_books *vb;
static struct order_detail *od;
static struct wb_orders *rd;
static char name[64];
static uint64_t clock_ns = 1000;

static void open_all(const char *detail)
{
	int err;

	vb = venue_books_create(&(struct venue_books_config){ .max_instruments = 64, .numa_node = -1 });
	ck_assert_ptr_nonnull(vb);
	snprintf(name, sizeof(name), "wb-test-order-detail-%d", (int)getpid());
	od = order_detail_create(&(struct order_detail_config){ .shm_name = name, .capacity = 64, .order_slots = 4096,
								 .all = !strcmp(detail, "all") },
				 &err);
	ck_assert_ptr_nonnull(od);
	rd = wb_orders_open(name, &err);
	ck_assert_msg(rd != NULL, "wb_orders_open: %s", wb_strerror(err));
}

static void setup(void)
{
	open_all("all");
}

static void teardown(void)
{
	wb_orders_close(rd);
	order_detail_destroy(od);
	venue_books_destroy(vb);
}

static void apply(struct wb_event ev)
{
	struct book_update ups[BOOK_MAX_UPDATES_PER_EVENT];
	unsigned k;

	ev.venue = ev.venue ? ev.venue : V;
	ev.exch_ts = ev.recv_ts = clock_ns++;
	order_detail_poll(od, vb);
	k = venue_books_apply(vb, &ev, ups);
	order_detail_event(od, vb, &ev, ups, k);
}

static void add(uint64_t id, uint8_t side, int64_t price, uint32_t qty)
{
	apply((struct wb_event){ .kind = WB_EV_ADD, .instrument = SYM, .side = side,
				 .u.order = { .order_id = id, .price = price, .qty = qty, .mpid = "GSCO" } });
}

static void order_ev(uint8_t kind, uint64_t id, uint32_t qty, int64_t price, uint64_t ref, uint8_t flags)
{
	apply((struct wb_event){ .kind = kind, .flags = flags,
				 .u.order = { .order_id = id, .price = price, .qty = qty, .ref = ref } });
}

/* The ids at (side, price), in the queue's order, as a string "1 2 3". */
static const char *queue(uint8_t side, int64_t price)
{
	static char buf[256];
	struct wb_order o[32];
	struct wb_order_level lvl;
	int n = wb_orders_at(rd, SYM, V, side, price, o, 32, &lvl);
	size_t len = 0;
	uint64_t sum = 0;

	ck_assert_int_ge(n, 0);
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%llu", i ? " " : "",
					(unsigned long long)o[i].order_id);
		sum += o[i].qty;
	}
	ck_assert_uint_eq(lvl.orders, (unsigned)n);
	ck_assert_uint_eq(lvl.qty, sum);
	return buf;
}

START_TEST(test_orders_at_a_price_keep_time_priority)
{
	struct wb_order o[4];

	add(1, WB_SIDE_BUY, PX(1000), 100);
	add(2, WB_SIDE_BUY, PX(1000), 200);
	add(3, WB_SIDE_BUY, PX(1000), 300);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1 2 3");
	ck_assert_int_eq(wb_orders_at(rd, SYM, V, WB_SIDE_BUY, PX(1000), o, 4, NULL), 3);
	ck_assert_uint_eq(o[1].qty, 200);
	ck_assert_uint_eq(o[0].join_ts + 1, o[1].join_ts);
	ck_assert_int_eq(memcmp(o[0].mpid, "GSCO", 4), 0);
	order_ev(WB_EV_DELETE, 2, 0, 0, 0, 0);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1 3");
	order_ev(WB_EV_EXECUTE, 1, 40, 0, 7, WB_EVF_PRINTABLE);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1 3");
	order_ev(WB_EV_EXECUTE, 1, 60, 0, 8, WB_EVF_PRINTABLE);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "3");
	order_ev(WB_EV_DELETE, 3, 0, 0, 0, 0);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "");
	ck_assert_int_eq(wb_order_levels(rd, SYM, V, WB_SIDE_BUY, NULL, 0), 0);
}
END_TEST

START_TEST(test_modify_that_loses_priority_goes_to_the_back_and_one_that_keeps_it_stays)
{
	add(1, WB_SIDE_SELL, PX(1001), 100);
	add(2, WB_SIDE_SELL, PX(1001), 100);
	add(3, WB_SIDE_SELL, PX(1001), 100);
	order_ev(WB_EV_MODIFY, 1, 50, PX(1001), 0, WB_EVF_KEEPS_PRIORITY);
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1001)), "1 2 3");
	order_ev(WB_EV_MODIFY, 1, 80, PX(1001), 0, 0);
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1001)), "2 3 1");
	order_ev(WB_EV_MODIFY, 2, 80, PX(1002), 0, 0);
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1001)), "3 1");
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1002)), "2");
	order_ev(WB_EV_REPLACE, 3, 10, PX(1002), 9, 0);	/* new id 9 at the back of 10.02 */
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1001)), "1");
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1002)), "2 9");
}
END_TEST

START_TEST(test_levels_read_best_first)
{
	struct wb_order_level l[8];

	add(1, WB_SIDE_BUY, PX(990), 1);
	add(2, WB_SIDE_BUY, PX(1000), 2);
	add(3, WB_SIDE_BUY, PX(995), 3);
	add(4, WB_SIDE_SELL, PX(1010), 4);
	add(5, WB_SIDE_SELL, PX(1005), 5);
	ck_assert_int_eq(wb_order_levels(rd, SYM, V, WB_SIDE_BUY, l, 8), 3);
	ck_assert(l[0].price == PX(1000) && l[1].price == PX(995) && l[2].price == PX(990));
	ck_assert_int_eq(wb_order_levels(rd, SYM, V, WB_SIDE_SELL, l, 1), 1);
	ck_assert(l[0].price == PX(1005));
}
END_TEST

static void position(uint64_t id, struct wb_queue_pos *p)
{
	ck_assert_int_eq(wb_queue_position(rd, V, id, p), 0);
}

START_TEST(test_queue_position_of_a_tracked_order_follows_every_event)
{
	struct wb_queue_pos p;

	ck_assert_int_eq(wb_queue_position(rd, V, 2, &p), WB_ENOSYM);
	ck_assert_int_eq(wb_queue_track(rd, V, 2), 0);
	add(1, WB_SIDE_BUY, PX(1000), 100);	/* the request is served before this event */
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_UNKNOWN);
	add(2, WB_SIDE_BUY, PX(1000), 200);
	add(3, WB_SIDE_BUY, PX(1000), 300);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_RESTING);
	ck_assert_uint_eq(p.shares_ahead, 100);
	ck_assert_uint_eq(p.orders_ahead, 1);
	ck_assert_uint_eq(p.shares_behind, 300);
	ck_assert_uint_eq(p.orders_behind, 1);
	ck_assert_uint_eq(p.level_qty, 600);
	ck_assert_int_eq(p.sym, SYM);
	ck_assert_int_eq(p.side, WB_SIDE_BUY);
	order_ev(WB_EV_EXECUTE, 1, 100, 0, 1, WB_EVF_PRINTABLE);
	position(2, &p);
	ck_assert_uint_eq(p.shares_ahead, 0);
	ck_assert_uint_eq(p.orders_ahead, 0);
	order_ev(WB_EV_EXECUTE, 2, 50, 0, 2, WB_EVF_PRINTABLE);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_PARTLY_FILLED);
	ck_assert_uint_eq(p.qty, 150);
	ck_assert_uint_eq(p.filled_qty, 50);
	order_ev(WB_EV_EXECUTE, 2, 150, 0, 3, WB_EVF_PRINTABLE);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_FILLED);
	ck_assert_uint_eq(p.filled_qty, 200);
	ck_assert_uint_eq(p.qty, 0);
	ck_assert_int_eq(wb_queue_track(rd, V, 3), 0);
	order_ev(WB_EV_DELETE, 3, 0, 0, 0, 0);
	position(3, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_CANCELLED);
	ck_assert_int_eq(wb_queue_untrack(rd, V, 3), 0);
	add(4, WB_SIDE_BUY, PX(1000), 1);
	ck_assert_int_eq(wb_queue_position(rd, V, 3, &p), WB_ENOSYM);
}
END_TEST

/* A symbol without detail: a tracked order turns its detail on, seeded from the books. */
START_TEST(test_tracking_an_order_turns_its_symbol_detail_on)
{
	struct wb_queue_pos p;

	teardown();
	open_all("none");
	add(1, WB_SIDE_BUY, PX(1000), 100);
	ck_assert_int_eq(wb_orders_has_detail(rd, SYM), 0);
	ck_assert_int_eq(wb_orders_at(rd, SYM, V, WB_SIDE_BUY, PX(1000), NULL, 0, NULL), WB_ENOSYM);
	ck_assert_int_eq(wb_queue_track(rd, V, 2), 0);
	add(2, WB_SIDE_BUY, PX(1000), 200);
	ck_assert_int_eq(wb_orders_has_detail(rd, SYM), 1);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1 2");
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_RESTING);
	ck_assert_uint_eq(p.shares_ahead, 100);
	ck_assert_int_eq(wb_orders_detail(rd, SYM, 0), 0);
	add(3, WB_SIDE_BUY, PX(1000), 1);
	ck_assert_int_eq(wb_orders_has_detail(rd, SYM), 0);
}
END_TEST

START_TEST(test_a_clear_empties_the_venue_and_cancels_its_tracked_orders)
{
	struct wb_queue_pos p;

	ck_assert_int_eq(wb_queue_track(rd, V, 1), 0);
	add(1, WB_SIDE_BUY, PX(1000), 100);
	add(2, WB_SIDE_SELL, PX(1001), 100);
	apply((struct wb_event){ .kind = WB_EV_CLEAR, .instrument = SYM });
	ck_assert_int_eq(wb_order_levels(rd, SYM, V, WB_SIDE_BUY, NULL, 0), 0);
	ck_assert_int_eq(wb_order_levels(rd, SYM, V, WB_SIDE_SELL, NULL, 0), 0);
	position(1, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_CANCELLED);
}
END_TEST

/* The writer churns one level while a reader reads it: every read is a whole queue. */
static volatile int stop_writer;

static void *churn(void *arg)
{
	uint64_t id = 100;

	(void)arg;
	while (!stop_writer) {
		add(id, WB_SIDE_BUY, PX(1000), (uint32_t)(id % 7 + 1));
		if (id > 110)
			order_ev(WB_EV_DELETE, id - 10, 0, 0, 0, 0);
		if (id % 3 == 0)
			order_ev(WB_EV_MODIFY, id - 5, 9, PX(1000), 0, 0);
		id++;
	}
	return NULL;
}

START_TEST(test_concurrent_reads_never_see_a_torn_queue)
{
	pthread_t th;
	struct wb_order o[64];
	struct wb_order_level lvl;
	unsigned reads = 0;

	stop_writer = 0;
	ck_assert_int_eq(pthread_create(&th, NULL, churn, NULL), 0);
	for (int i = 0; i < 20000; i++) {
		int n = wb_orders_at(rd, SYM, V, WB_SIDE_BUY, PX(1000), o, 64, &lvl);
		uint64_t sum = 0;

		if (n == WB_EBUSY)
			continue;
		ck_assert_int_ge(n, 0);
		for (int k = 0; k < n; k++) {
			sum += o[k].qty;
			/* time priority: ids join in increasing order, except a requeue */
			ck_assert_uint_ne(o[k].order_id, 0);
		}
		ck_assert_uint_eq(lvl.orders, (unsigned)n);
		ck_assert_uint_eq(lvl.qty, sum);
		reads++;
	}
	stop_writer = 1;
	pthread_join(th, NULL);
	ck_assert_uint_gt(reads, 0);
}
END_TEST

static void *change_later(void *arg)
{
	(void)arg;
	usleep(20000);
	add(6, WB_SIDE_BUY, PX(1000), 10);
	return NULL;
}

START_TEST(test_wait_returns_when_the_position_changes)
{
	struct wb_queue_pos p;
	pthread_t th;

	ck_assert_int_eq(wb_queue_track(rd, V, 5), 0);
	add(5, WB_SIDE_BUY, PX(1000), 100);
	position(5, &p);
	ck_assert_int_eq(wb_queue_wait(rd, V, 5, p.version, 1000000), WB_EBUSY);	/* 1 ms, nothing moved */
	ck_assert_int_eq(pthread_create(&th, NULL, change_later, NULL), 0);
	ck_assert_int_eq(wb_queue_wait(rd, V, 5, p.version, -1), 0);
	pthread_join(th, NULL);
	position(5, &p);
	ck_assert_uint_eq(p.shares_behind, 10);
}
END_TEST


/* The reader's view of virtual order id after the builder's next batch. */
static struct wb_virtual_order virt(uint64_t id)
{
	struct wb_virtual_order v;

	order_detail_poll(od, vb);
	ck_assert_int_eq(wb_virtual_state(rd, id, &v), WB_OK);
	return v;
}

START_TEST(test_a_virtual_order_joins_the_back_moves_up_and_fills_without_touching_the_book)
{
	struct wb_virtual_order v;
	uint64_t id, seq_exec;

	add(1, WB_SIDE_BUY, PX(1000), 100);
	add(2, WB_SIDE_BUY, PX(1000), 200);
	ck_assert_int_eq(wb_virtual_place(rd, SYM, V, WB_SIDE_BUY, PX(1000), 300, &id), WB_OK);
	ck_assert_int_eq(wb_virtual_state(rd, id, &v), WB_ENOSYM);	/* not placed before the next batch */
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_RESTING);
	ck_assert_uint_eq(v.pos.shares_ahead, 300);
	ck_assert_uint_eq(v.pos.orders_ahead, 2);
	ck_assert_uint_eq(v.pos.qty, 300);
	add(3, WB_SIDE_BUY, PX(1000), 50);	/* joins behind it */
	v = virt(id);
	ck_assert_uint_eq(v.pos.shares_ahead, 300);
	ck_assert_uint_eq(v.pos.shares_behind, 50);
	ck_assert_uint_eq(v.pos.orders_behind, 1);
	ck_assert_uint_eq(v.pos.level_qty, 350);
	/* The real queue is what it was: the virtual order is in no reader's view of it. */
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1 2 3");

	order_ev(WB_EV_DELETE, 1, 0, 0, 0, 0);	/* cancel ahead: it moves up */
	v = virt(id);
	ck_assert_uint_eq(v.pos.shares_ahead, 200);
	ck_assert_uint_eq(v.pos.orders_ahead, 1);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_RESTING);

	order_ev(WB_EV_EXECUTE, 2, 150, 0, 11, WB_EVF_PRINTABLE);	/* within the shares ahead */
	v = virt(id);
	ck_assert_uint_eq(v.pos.shares_ahead, 50);
	ck_assert_uint_eq(v.pos.filled_qty, 0);

	/* Order 2, its anchor, leaves: nothing is ahead of it now. */
	order_ev(WB_EV_EXECUTE, 2, 50, 0, 12, WB_EVF_PRINTABLE);
	v = virt(id);
	ck_assert_uint_eq(v.pos.shares_ahead, 0);
	ck_assert_uint_eq(v.pos.orders_ahead, 0);
	ck_assert_uint_eq(v.fills, 0);

	/* An execution at its price beyond the shares ahead (none) reaches it: 40 of its 300. */
	seq_exec = clock_ns;
	order_ev(WB_EV_EXECUTE, 3, 40, 0, 13, WB_EVF_PRINTABLE);
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_PARTLY_FILLED);
	ck_assert_uint_eq(v.pos.qty, 260);
	ck_assert_uint_eq(v.pos.filled_qty, 40);
	ck_assert_uint_eq(v.fills, 1);
	ck_assert_uint_eq(v.last_fill_qty, 40);
	ck_assert_uint_eq(v.fill_exch_ts, seq_exec);
	ck_assert_uint_eq(v.fill_recv_ts, seq_exec);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "3");

	/* A real bid below it executes: the price traded through it, it fills whole. */
	add(4, WB_SIDE_BUY, PX(999), 100);
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_PARTLY_FILLED);
	seq_exec = clock_ns;
	apply((struct wb_event){ .kind = WB_EV_EXECUTE, .seq = 4242, .flags = WB_EVF_PRINTABLE,
				 .u.order = { .order_id = 4, .qty = 10, .ref = 14 } });
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_FILLED);
	ck_assert_uint_eq(v.pos.qty, 0);
	ck_assert_uint_eq(v.pos.filled_qty, 300);
	ck_assert_uint_eq(v.fills, 2);
	ck_assert_uint_eq(v.last_fill_qty, 260);
	ck_assert_uint_eq(v.fill_exch_ts, seq_exec);
	ck_assert_uint_eq(v.fill_seq, 4242);
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(999)), "4");

	/* Done: a cancel forgets it. */
	ck_assert_int_eq(wb_virtual_cancel(rd, id), WB_OK);
	order_detail_poll(od, vb);
	ck_assert_int_eq(wb_virtual_state(rd, id, &v), WB_ENOSYM);
}
END_TEST

START_TEST(test_a_virtual_order_is_cancelled_refused_when_marketable_and_kept_behind_a_requeued_order)
{
	struct wb_virtual_order v;
	uint64_t id, crossing, behind;

	add(1, WB_SIDE_SELL, PX(1005), 100);
	add(2, WB_SIDE_SELL, PX(1005), 100);
	ck_assert_int_eq(wb_virtual_place(rd, SYM, V, WB_SIDE_BUY, PX(1005), 10, &crossing), WB_OK);
	v = virt(crossing);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_REFUSED);
	ck_assert_str_eq(wb_queue_state_name(v.pos.state), "refused");

	ck_assert_int_eq(wb_virtual_place(rd, SYM, V, WB_SIDE_SELL, PX(1005), 10, &id), WB_OK);
	v = virt(id);
	ck_assert_uint_eq(v.pos.orders_ahead, 2);
	/* Its anchor (order 2) loses priority: it goes behind, the virtual order moves up. */
	order_ev(WB_EV_MODIFY, 2, 100, PX(1005), 0, 0);
	v = virt(id);
	ck_assert_uint_eq(v.pos.orders_ahead, 1);
	ck_assert_uint_eq(v.pos.orders_behind, 1);
	/* A sell at a price with no real order: nothing ahead; then an ask below it trades: filled. */
	ck_assert_int_eq(wb_virtual_place(rd, SYM, V, WB_SIDE_SELL, PX(1007), 10, &behind), WB_OK);
	v = virt(behind);
	ck_assert_uint_eq(v.pos.shares_ahead, 0);
	ck_assert_uint_eq(v.pos.level_orders, 0);
	add(3, WB_SIDE_SELL, PX(1007), 70);
	v = virt(behind);
	ck_assert_uint_eq(v.pos.shares_behind, 70);
	/* An execution at 10.05 is not through a sell at 10.07 (better for it, not worse). */
	order_ev(WB_EV_EXECUTE, 1, 10, 0, 20, WB_EVF_PRINTABLE);
	v = virt(behind);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_RESTING);

	/* Another handle of the process gets ids of its own. */
	{
		int err;
		struct wb_orders *rd2 = wb_orders_open(name, &err);
		uint64_t other;

		ck_assert_ptr_nonnull(rd2);
		ck_assert_int_eq(wb_virtual_place(rd2, SYM, V, WB_SIDE_SELL, PX(1005), 20, &other), WB_OK);
		ck_assert_uint_ne(other, id);
		ck_assert_uint_ne(other, behind);
		ck_assert_uint_ne(other, crossing);
		v = virt(other);
		ck_assert_uint_eq(v.pos.qty, 20);
		ck_assert_int_eq(wb_virtual_state(rd2, id, &v), WB_OK);
		ck_assert_uint_eq(v.pos.qty, 10);
		wb_orders_close(rd2);
	}

	ck_assert_int_eq(wb_virtual_cancel(rd, id), WB_OK);
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_CANCELLED);
	ck_assert_uint_eq(v.pos.filled_qty, 0);
	order_ev(WB_EV_EXECUTE, 1, 90, 0, 21, WB_EVF_PRINTABLE);
	v = virt(id);
	ck_assert_int_eq(v.pos.state, WB_QUEUE_CANCELLED);	/* a cancelled one fills no more */
	ck_assert_str_eq(queue(WB_SIDE_SELL, PX(1005)), "2");
}
END_TEST

/* A reader remembers where an order's position is: a slot that changed hands is not read as the old order's. */
START_TEST(test_a_reused_tracking_slot_is_never_read_as_its_last_order)
{
	struct wb_queue_pos p;

	add(5, WB_SIDE_BUY, PX(1000), 100);
	add(6, WB_SIDE_BUY, PX(1000), 200);
	ck_assert_int_eq(wb_queue_track(rd, V, 5), 0);
	order_detail_poll(od, vb);
	position(5, &p);
	ck_assert_uint_eq(p.qty, 100);
	ck_assert_int_eq(wb_queue_untrack(rd, V, 5), 0);
	ck_assert_int_eq(wb_queue_track(rd, V, 6), 0);	/* takes the slot 5 had */
	order_detail_poll(od, vb);
	ck_assert_int_eq(wb_queue_position(rd, V, 5, &p), WB_ENOSYM);
	position(6, &p);
	ck_assert_uint_eq(p.qty, 200);
	ck_assert_uint_eq(p.shares_ahead, 100);
	ck_assert_int_eq(wb_queue_track(rd, V, 5), 0);	/* another slot now */
	order_detail_poll(od, vb);
	position(5, &p);
	ck_assert_uint_eq(p.qty, 100);
	ck_assert_uint_eq(p.shares_ahead, 0);
}
END_TEST

/* The 1,000 virtual orders fit beside tracked ones, and an event reaches every one of its symbol's. */
#define MANY_VIRTUAL 1000u

START_TEST(test_a_thousand_virtual_orders_are_placed_and_all_fill)
{
	static uint64_t ids[MANY_VIRTUAL];
	struct wb_virtual_order v;

	add(1, WB_SIDE_BUY, PX(1000), 100);
	add(2, WB_SIDE_BUY, PX(999), 100);
	for (unsigned i = 0; i < MANY_VIRTUAL; i++) {
		ck_assert_int_eq(wb_virtual_place(rd, SYM, V, WB_SIDE_BUY, PX(1000), 10, &ids[i]), WB_OK);
		if (i % 32 == 31)
			order_detail_poll(od, vb);	/* 64 requests can be pending */
	}
	for (unsigned i = 0; i < MANY_VIRTUAL; i++) {
		v = virt(ids[i]);
		ck_assert_int_eq(v.pos.state, WB_QUEUE_RESTING);
		ck_assert_uint_eq(v.pos.shares_ahead, 100);
	}
	/* The bid below executes: the price traded through every one of them. */
	order_ev(WB_EV_EXECUTE, 2, 10, 0, 1, WB_EVF_PRINTABLE);
	for (unsigned i = 0; i < MANY_VIRTUAL; i++) {
		v = virt(ids[i]);
		ck_assert_int_eq(v.pos.state, WB_QUEUE_FILLED);
		ck_assert_uint_eq(v.pos.filled_qty, 10);
	}
	ck_assert_str_eq(queue(WB_SIDE_BUY, PX(1000)), "1");
}
END_TEST

/* Detail off and on again: a tracked order that was resting is found again, where it stands. */
START_TEST(test_a_tracked_order_is_found_again_when_its_symbol_detail_returns)
{
	struct wb_queue_pos p;

	teardown();
	open_all("none");
	ck_assert_int_eq(wb_queue_track(rd, V, 2), 0);
	add(1, WB_SIDE_BUY, PX(1000), 100);
	add(2, WB_SIDE_BUY, PX(1000), 200);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_RESTING);
	ck_assert_int_eq(wb_orders_detail(rd, SYM, 0), 0);
	order_detail_poll(od, vb);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_UNKNOWN);
	ck_assert_int_eq(wb_orders_detail(rd, SYM, 1), 0);
	order_detail_poll(od, vb);
	position(2, &p);
	ck_assert_int_eq(p.state, WB_QUEUE_RESTING);
	ck_assert_uint_eq(p.shares_ahead, 100);
	order_ev(WB_EV_DELETE, 1, 0, 0, 0, 0);
	position(2, &p);
	ck_assert_uint_eq(p.shares_ahead, 0);
}
END_TEST

static Suite *order_detail_suite(void)
{
	Suite *s = suite_create("order_detail");
	TCase *t = tcase_create("spec");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_orders_at_a_price_keep_time_priority);
	tcase_add_test(t, test_modify_that_loses_priority_goes_to_the_back_and_one_that_keeps_it_stays);
	tcase_add_test(t, test_levels_read_best_first);
	tcase_add_test(t, test_queue_position_of_a_tracked_order_follows_every_event);
	tcase_add_test(t, test_tracking_an_order_turns_its_symbol_detail_on);
	tcase_add_test(t, test_a_clear_empties_the_venue_and_cancels_its_tracked_orders);
	tcase_add_test(t, test_concurrent_reads_never_see_a_torn_queue);
	tcase_add_test(t, test_wait_returns_when_the_position_changes);
	tcase_add_test(t, test_a_virtual_order_joins_the_back_moves_up_and_fills_without_touching_the_book);
	tcase_add_test(t, test_a_virtual_order_is_cancelled_refused_when_marketable_and_kept_behind_a_requeued_order);
	tcase_add_test(t, test_a_thousand_virtual_orders_are_placed_and_all_fill);
	tcase_add_test(t, test_a_reused_tracking_slot_is_never_read_as_its_last_order);
	tcase_add_test(t, test_a_tracked_order_is_found_again_when_its_symbol_detail_returns);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(order_detail_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
