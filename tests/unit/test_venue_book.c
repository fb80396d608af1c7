/*
 * Venue books: specification tests, then a reference model (a plain array
 * of orders, brute-force aggregation) run against the real books over
 * random event sequences.
 *
 *   WB_VENUE_BOOK_MODEL_EVENTS  events per model test (default 1000000;
 *                               two model tests: dense and sparse ids)
 *   WB_VENUE_BOOK_MODEL_SEED    first seed (default 1); a failure prints
 *                               the seed and event index to replay it
 */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book/checksum.h"
#include "book/venue_book.h"

/*
 * ck_assert* reports every passing check to the runner (a write per
 * call): far too slow for millions of model events. require() only calls
 * into Check when the condition fails.
 */
#define require(cond, ...)                                              \
	do {                                                            \
		if (__builtin_expect(!(cond), 0))                       \
			ck_abort_msg(__VA_ARGS__);                      \
	} while (0)

#define TICK 1000000LL		/* one cent at 1e-8 */
#define PX(cents) ((int64_t)(cents) * TICK)

static struct venue_books *vb;
static struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];

static struct venue_books *create_small(uint32_t max_instruments, uint32_t expected_orders)
{
	struct venue_books_config cfg = {
		.max_instruments = max_instruments,
		.expected_orders = expected_orders,
		.numa_node = -1,
	};
	struct venue_books *b = venue_books_create(&cfg);

	ck_assert_ptr_nonnull(b);
	return b;
}

static void setup(void)
{
	vb = create_small(64, 0);
}

static void teardown(void)
{
	venue_books_destroy(vb);
	vb = NULL;
}

static const struct venue_books_counters *counters(void)
{
	return venue_books_counters(vb);
}

/* ------------------------------------------------------------ events */

static struct wb_event ev_base(uint8_t kind, uint8_t venue, uint16_t instrument)
{
	static uint64_t seq;
	struct wb_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.venue = venue;
	ev.instrument = instrument;
	ev.seq = ++seq;
	ev.exch_ts = 1000 + seq;
	ev.recv_ts = 2000000 + seq;
	return ev;
}

static struct wb_event ev_add(uint8_t venue, uint16_t instrument, uint8_t side, uint64_t id, int64_t price,
			      uint32_t qty)
{
	struct wb_event ev = ev_base(WB_EV_ADD, venue, instrument);

	ev.side = side;
	ev.u.order.order_id = id;
	ev.u.order.price = price;
	ev.u.order.qty = qty;
	return ev;
}

/* EXECUTE, EXECUTE_AT_PRICE, REDUCE, DELETE: by order id only, as PITCH sends them. */
static struct wb_event ev_order(uint8_t kind, uint8_t venue, uint64_t id, uint32_t qty)
{
	struct wb_event ev = ev_base(kind, venue, 0);

	ev.u.order.order_id = id;
	ev.u.order.qty = qty;
	return ev;
}

static struct wb_event ev_replace(uint8_t venue, uint64_t id, uint64_t new_id, int64_t price, uint32_t qty)
{
	struct wb_event ev = ev_base(WB_EV_REPLACE, venue, 0);

	ev.u.order.order_id = id;
	ev.u.order.ref = new_id;
	ev.u.order.price = price;
	ev.u.order.qty = qty;
	return ev;
}

static struct wb_event ev_modify(uint8_t venue, uint64_t id, int64_t price, uint32_t qty, uint8_t flags)
{
	struct wb_event ev = ev_base(WB_EV_MODIFY, venue, 0);

	ev.u.order.order_id = id;
	ev.u.order.price = price;
	ev.u.order.qty = qty;
	ev.flags = flags;
	return ev;
}

static unsigned apply(struct wb_event ev)
{
	memset(up, 0xa5, sizeof(up));
	return venue_books_apply(vb, &ev, up);
}

static void add(uint8_t venue, uint16_t instrument, uint8_t side, uint64_t id, int64_t price, uint32_t qty)
{
	ck_assert_uint_eq(apply(ev_add(venue, instrument, side, id, price, qty)), 1);
}

#define assert_level_update(u, side_, price_, qty_, orders_)                  \
	do {                                                                  \
		ck_assert_uint_eq((u)->kind, BOOK_UP_LEVEL);                   \
		ck_assert_uint_eq((u)->side, (side_));                         \
		ck_assert_int_eq((u)->price, (price_));                        \
		ck_assert_uint_eq((u)->qty, (qty_));                           \
		ck_assert_uint_eq((u)->order_count, (orders_));                \
	} while (0)

static void assert_queue(uint8_t venue, uint64_t id, uint64_t shares, uint32_t orders)
{
	uint64_t s = 99;
	uint32_t o = 99;

	ck_assert_int_eq(venue_books_queue_position(vb, venue, id, &s, &o), 0);
	ck_assert_uint_eq(s, shares);
	ck_assert_uint_eq(o, orders);
}

/* ------------------------------------------------------ specifications */

START_TEST(test_add_creates_level_and_emits_level_update)
{
	struct wb_event ev = ev_add(WB_VENUE_NASDAQ, 7, WB_SIDE_BUY, 1, PX(1000), 100);
	struct venue_level bid, ask;

	ev.flags = WB_EVF_UNSEQUENCED;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(1000), 100, 1);
	ck_assert_uint_eq(up[0].venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(up[0].instrument, 7);
	ck_assert_uint_eq(up[0].flags, WB_EVF_UNSEQUENCED);
	ck_assert_uint_eq(up[0].exch_ts, ev.exch_ts);
	ck_assert_uint_eq(up[0].recv_ts, ev.recv_ts);
	ck_assert_int_eq(venue_books_bbo(vb, WB_VENUE_NASDAQ, 7, &bid, &ask), 0);
	ck_assert_int_eq(bid.price, PX(1000));
	ck_assert_uint_eq(bid.qty, 100);
	ck_assert_uint_eq(bid.orders, 1);
	ck_assert_uint_eq(ask.qty, 0);
	ck_assert_uint_eq(ask.orders, 0);
	ck_assert_uint_eq(counters()->live_orders, 1);
	ck_assert_uint_eq(counters()->levels, 1);
}
END_TEST

START_TEST(test_adds_at_one_price_aggregate_in_arrival_order)
{
	add(1, 3, WB_SIDE_SELL, 10, PX(500), 100);
	add(1, 3, WB_SIDE_SELL, 11, PX(500), 200);
	ck_assert_uint_eq(apply(ev_add(1, 3, WB_SIDE_SELL, 12, PX(500), 300)), 1);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(500), 600, 3);
	assert_queue(1, 10, 0, 0);
	assert_queue(1, 11, 100, 1);
	assert_queue(1, 12, 300, 2);
}
END_TEST

START_TEST(test_depth_lists_best_price_first_on_both_sides)
{
	struct venue_level lv[8];
	const int bids[] = { 100, 103, 101, 99, 102 };
	const int asks[] = { 110, 107, 109, 105, 108 };

	for (unsigned i = 0; i < 5; i++) {
		add(2, 1, WB_SIDE_BUY, 100 + i, PX(bids[i]), 10 * (i + 1));
		add(2, 1, WB_SIDE_SELL, 200 + i, PX(asks[i]), 10 * (i + 1));
	}
	ck_assert_uint_eq(venue_books_depth(vb, 2, 1, WB_SIDE_BUY, lv, 8), 5);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(lv[i].price, PX(103 - (int)i));
	ck_assert_uint_eq(lv[0].qty, 20);
	ck_assert_uint_eq(venue_books_depth(vb, 2, 1, WB_SIDE_SELL, lv, 3), 3);
	ck_assert_int_eq(lv[0].price, PX(105));
	ck_assert_int_eq(lv[1].price, PX(107));
	ck_assert_int_eq(lv[2].price, PX(108));
	ck_assert_uint_eq(venue_books_depth(vb, 2, 1, 0, lv, 8), 0);
}
END_TEST

START_TEST(test_deep_book_keeps_every_level_sorted)
{
	/* More levels than the linear scan covers, inserted in a scrambled
	 * order, so lookups bisect and inserts land deep in the array. */
	enum { N = 300 };
	struct venue_level lv[N];
	for (unsigned i = 0; i < N; i++) {
		unsigned p = (i * 17 + 11) % N;	/* a permutation of 0..N-1 */

		add(1, 5, WB_SIDE_SELL, 1000 + i, PX(1000 + p), 1 + p);
		add(1, 5, WB_SIDE_BUY, 5000 + i, PX(1000 - p), 1 + p);
	}
	ck_assert_uint_eq(venue_books_depth(vb, 1, 5, WB_SIDE_SELL, lv, N), N);
	for (unsigned i = 0; i < N; i++) {
		ck_assert_int_eq(lv[i].price, PX(1000 + i));
		ck_assert_uint_eq(lv[i].qty, 1 + i);
	}
	ck_assert_uint_eq(venue_books_depth(vb, 1, 5, WB_SIDE_BUY, lv, N), N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(lv[i].price, PX(1000 - (int)i));
	/* Delete from the middle outwards: every remaining level still found. */
	for (unsigned i = 0; i < N; i += 2)
		ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 1000 + i, 0)), 1);
	ck_assert_uint_eq(venue_books_depth(vb, 1, 5, WB_SIDE_SELL, lv, N), N / 2);
	for (unsigned i = 1; i < N / 2; i++)
		ck_assert_int_gt(lv[i].price, lv[i - 1].price);
	ck_assert_uint_eq(counters()->levels, N + N / 2);
}
END_TEST

START_TEST(test_extreme_prices_sort_correctly)
{
	struct venue_level lv[3];

	add(1, 1, WB_SIDE_SELL, 1, INT64_MIN, 1);
	add(1, 1, WB_SIDE_SELL, 2, INT64_MAX, 1);
	add(1, 1, WB_SIDE_SELL, 3, 0, 1);
	ck_assert_uint_eq(venue_books_depth(vb, 1, 1, WB_SIDE_SELL, lv, 3), 3);
	ck_assert_int_eq(lv[0].price, INT64_MIN);
	ck_assert_int_eq(lv[1].price, 0);
	ck_assert_int_eq(lv[2].price, INT64_MAX);
	add(1, 1, WB_SIDE_BUY, 4, INT64_MIN, 1);
	add(1, 1, WB_SIDE_BUY, 5, INT64_MAX, 1);
	ck_assert_uint_eq(venue_books_depth(vb, 1, 1, WB_SIDE_BUY, lv, 3), 2);
	ck_assert_int_eq(lv[0].price, INT64_MAX);
	ck_assert_int_eq(lv[1].price, INT64_MIN);
}
END_TEST

START_TEST(test_execute_emits_level_then_trade_at_resting_price)
{
	struct wb_event ev;

	add(1, 2, WB_SIDE_BUY, 42, PX(2000), 500);
	add(1, 2, WB_SIDE_BUY, 43, PX(2000), 100);
	ev = ev_order(WB_EV_EXECUTE, 1, 42, 200);
	ev.u.order.ref = 777;
	ev.flags = WB_EVF_PRINTABLE;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 2);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(2000), 400, 2);
	ck_assert_uint_eq(up[0].instrument, 2);	/* from the order: the event has none */
	ck_assert_uint_eq(up[1].kind, BOOK_UP_TRADE);
	ck_assert_int_eq(up[1].price, PX(2000));
	ck_assert_uint_eq(up[1].qty, 200);
	ck_assert_uint_eq(up[1].u.match_id, 777);
	ck_assert_uint_eq(up[1].side, WB_SIDE_BUY);
	ck_assert_uint_eq(up[1].instrument, 2);
	ck_assert_uint_eq(up[1].exch_ts, ev.exch_ts);
	assert_queue(1, 42, 0, 0);		/* a partial fill keeps priority */
	ck_assert_uint_eq(counters()->executes, 1);
}
END_TEST

START_TEST(test_execute_in_full_removes_order_and_empty_level)
{
	struct venue_level bid;

	add(1, 2, WB_SIDE_BUY, 42, PX(2000), 500);
	add(1, 2, WB_SIDE_BUY, 43, PX(1999), 100);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 1, 42, 500)), 2);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(2000), 0, 0);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 42, NULL, NULL), -1);
	ck_assert_int_eq(venue_books_bbo(vb, 1, 2, &bid, NULL), 0);
	ck_assert_int_eq(bid.price, PX(1999));
	ck_assert_uint_eq(counters()->live_orders, 1);
	ck_assert_uint_eq(counters()->levels, 1);
	ck_assert_uint_eq(counters()->overfill, 0);
}
END_TEST

START_TEST(test_execute_at_price_prints_only_when_printable)
{
	struct wb_event ev;

	add(1, 2, WB_SIDE_SELL, 42, PX(2000), 500);
	ev = ev_order(WB_EV_EXECUTE_AT_PRICE, 1, 42, 100);
	ev.u.order.price = PX(1995);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(2000), 400, 1);

	ev = ev_order(WB_EV_EXECUTE_AT_PRICE, 1, 42, 100);
	ev.u.order.price = PX(1995);
	ev.flags = WB_EVF_PRINTABLE;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 2);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(2000), 300, 1);
	ck_assert_uint_eq(up[1].kind, BOOK_UP_TRADE);
	ck_assert_int_eq(up[1].price, PX(1995));
	ck_assert_uint_eq(up[1].qty, 100);
}
END_TEST

START_TEST(test_execute_larger_than_remaining_is_clamped_and_counted)
{
	add(1, 2, WB_SIDE_SELL, 42, PX(2000), 500);
	add(1, 2, WB_SIDE_SELL, 43, PX(2000), 70);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 1, 42, 900)), 2);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(2000), 70, 1);
	ck_assert_uint_eq(up[1].qty, 900);	/* the print is what the venue printed */
	ck_assert_uint_eq(counters()->overfill, 1);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 42, NULL, NULL), -1);
	ck_assert_uint_eq(apply(ev_order(WB_EV_REDUCE, 1, 43, 71)), 1);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(2000), 0, 0);
	ck_assert_uint_eq(counters()->overfill, 2);
	ck_assert_uint_eq(counters()->live_orders, 0);
}
END_TEST

START_TEST(test_reduce_is_a_partial_cancel_that_keeps_queue_position)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 3, PX(10), 100);
	ck_assert_uint_eq(apply(ev_order(WB_EV_REDUCE, 1, 2, 60)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 240, 3);
	assert_queue(1, 2, 100, 1);
	assert_queue(1, 3, 140, 2);
	ck_assert_uint_eq(counters()->reduces, 1);
}
END_TEST

START_TEST(test_delete_from_middle_of_queue_closes_the_gap)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(10), 200);
	add(1, 2, WB_SIDE_BUY, 3, PX(10), 300);
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 2, 0)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 400, 2);
	assert_queue(1, 3, 100, 1);
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 1, 0)), 1);
	assert_queue(1, 3, 0, 0);
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 3, 0)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 0, 0);
	ck_assert_uint_eq(counters()->levels, 0);
	/* The level is gone for good: a new order at that price starts afresh. */
	add(1, 2, WB_SIDE_BUY, 4, PX(10), 5);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 5, 1);
}
END_TEST

START_TEST(test_replace_moves_queue_position)
{
	add(1, 2, WB_SIDE_SELL, 1, PX(10), 100);
	add(1, 2, WB_SIDE_SELL, 2, PX(10), 100);
	add(1, 2, WB_SIDE_SELL, 3, PX(10), 100);
	/* Same price: one level update, the new id joins at the back. */
	ck_assert_uint_eq(apply(ev_replace(1, 1, 50, PX(10), 150)), 1);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(10), 350, 3);
	ck_assert_uint_eq(up[0].instrument, 2);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 1, NULL, NULL), -1);
	assert_queue(1, 2, 0, 0);
	assert_queue(1, 50, 200, 2);
	ck_assert_uint_eq(counters()->replaces, 1);
	ck_assert_uint_eq(counters()->live_orders, 3);
}
END_TEST

START_TEST(test_replace_of_only_order_at_same_price_keeps_the_level)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	ck_assert_uint_eq(apply(ev_replace(1, 1, 2, PX(10), 40)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 40, 1);
	ck_assert_uint_eq(counters()->levels, 1);
}
END_TEST

START_TEST(test_replace_to_new_price_emits_old_then_new_level_and_keeps_side)
{
	struct venue_order_info info;

	add(3, 9, WB_SIDE_SELL, 1, PX(10), 100);
	add(3, 9, WB_SIDE_SELL, 2, PX(10), 100);
	ck_assert_uint_eq(apply(ev_replace(3, 1, 77, PX(12), 30)), 2);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(10), 100, 1);
	assert_level_update(&up[1], WB_SIDE_SELL, PX(12), 30, 1);
	ck_assert_uint_eq(up[1].instrument, 9);
	ck_assert_uint_eq(up[1].venue, 3);
	ck_assert_int_eq(venue_books_order(vb, 3, 77, &info), 0);
	ck_assert_uint_eq(info.instrument, 9);
	ck_assert_uint_eq(info.side, WB_SIDE_SELL);
	ck_assert_int_eq(info.price, PX(12));
	ck_assert_uint_eq(info.qty, 30);
}
END_TEST

START_TEST(test_replace_with_same_id_gets_new_priority)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(10), 100);
	ck_assert_uint_eq(apply(ev_replace(1, 1, 1, PX(10), 100)), 1);
	assert_queue(1, 1, 100, 1);
	ck_assert_uint_eq(counters()->duplicate_order, 0);
}
END_TEST

START_TEST(test_replace_to_a_live_id_removes_old_and_counts_duplicate)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(11), 100);
	ck_assert_uint_eq(apply(ev_replace(1, 1, 2, PX(11), 30)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 0, 0);
	ck_assert_uint_eq(counters()->duplicate_order, 1);
	assert_queue(1, 2, 0, 0);
	ck_assert_uint_eq(counters()->live_orders, 1);
}
END_TEST

START_TEST(test_modify_keeping_priority_keeps_queue_position)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 3, PX(10), 100);
	ck_assert_uint_eq(apply(ev_modify(1, 1, PX(10), 40, WB_EVF_KEEPS_PRIORITY)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 240, 3);
	ck_assert_uint_eq(up[0].flags, WB_EVF_KEEPS_PRIORITY);
	assert_queue(1, 1, 0, 0);
	assert_queue(1, 2, 40, 1);
	ck_assert_uint_eq(counters()->modifies, 1);
}
END_TEST

START_TEST(test_modify_without_priority_moves_to_the_back)
{
	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_BUY, 2, PX(10), 100);
	ck_assert_uint_eq(apply(ev_modify(1, 1, PX(10), 100, 0)), 1);
	assert_level_update(&up[0], WB_SIDE_BUY, PX(10), 200, 2);
	assert_queue(1, 1, 100, 1);
	assert_queue(1, 2, 0, 0);
}
END_TEST

START_TEST(test_modify_to_new_price_moves_level_even_with_keep_priority_flag)
{
	add(1, 2, WB_SIDE_SELL, 1, PX(10), 100);
	add(1, 2, WB_SIDE_SELL, 2, PX(11), 100);
	ck_assert_uint_eq(apply(ev_modify(1, 1, PX(11), 50, WB_EVF_KEEPS_PRIORITY)), 2);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(10), 0, 0);
	assert_level_update(&up[1], WB_SIDE_SELL, PX(11), 150, 2);
	assert_queue(1, 1, 100, 1);
	ck_assert_uint_eq(counters()->levels, 1);
}
END_TEST

START_TEST(test_modify_to_zero_shares_removes_the_order)
{
	add(1, 2, WB_SIDE_SELL, 1, PX(10), 100);
	ck_assert_uint_eq(apply(ev_modify(1, 1, PX(10), 0, 0)), 1);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(10), 0, 0);
	ck_assert_uint_eq(counters()->live_orders, 0);
}
END_TEST

START_TEST(test_execute_unknown_order_is_counted_and_skipped)
{
	add(1, 2, WB_SIDE_SELL, 1, PX(10), 100);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 1, 999, 10)), 0);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE_AT_PRICE, 1, 999, 10)), 0);
	ck_assert_uint_eq(apply(ev_order(WB_EV_REDUCE, 1, 999, 10)), 0);
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 999, 0)), 0);
	ck_assert_uint_eq(apply(ev_replace(1, 999, 1000, PX(10), 5)), 0);
	ck_assert_uint_eq(apply(ev_modify(1, 999, PX(10), 5, 0)), 0);
	/* Same id, other venue: unknown too. */
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 2, 1, 0)), 0);
	ck_assert_uint_eq(counters()->unknown_order, 7);
	ck_assert_uint_eq(counters()->events, 8);
	ck_assert_uint_eq(counters()->live_orders, 1);
	assert_queue(1, 1, 0, 0);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 1000, NULL, NULL), -1);
}
END_TEST

START_TEST(test_duplicate_add_is_counted_and_keeps_the_original)
{
	struct venue_level bid;

	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	ck_assert_uint_eq(apply(ev_add(1, 2, WB_SIDE_BUY, 1, PX(11), 300)), 0);
	ck_assert_uint_eq(counters()->duplicate_order, 1);
	ck_assert_int_eq(venue_books_bbo(vb, 1, 2, &bid, NULL), 0);
	ck_assert_int_eq(bid.price, PX(10));
	ck_assert_uint_eq(bid.qty, 100);
}
END_TEST

START_TEST(test_same_id_on_two_venues_are_two_orders)
{
	add(1, 2, WB_SIDE_BUY, 5, PX(10), 100);
	add(2, 2, WB_SIDE_SELL, 5, PX(11), 200);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 2, 5, 50)), 2);
	assert_level_update(&up[0], WB_SIDE_SELL, PX(11), 150, 1);
	ck_assert_uint_eq(up[0].venue, 2);
	assert_queue(1, 5, 0, 0);
	ck_assert_uint_eq(counters()->live_orders, 2);
}
END_TEST

START_TEST(test_bad_instrument_side_venue_and_size_are_counted_and_skipped)
{
	ck_assert_uint_eq(apply(ev_add(1, 0, WB_SIDE_BUY, 1, PX(10), 100)), 0);
	ck_assert_uint_eq(apply(ev_add(1, 64, WB_SIDE_BUY, 2, PX(10), 100)), 0);
	ck_assert_uint_eq(counters()->bad_instrument, 2);
	ck_assert_uint_eq(apply(ev_add(1, 1, 0, 3, PX(10), 100)), 0);
	ck_assert_uint_eq(apply(ev_add(1, 1, 3, 4, PX(10), 100)), 0);
	ck_assert_uint_eq(apply(ev_add(1, 1, WB_SIDE_BUY, 5, PX(10), 0)), 0);
	ck_assert_uint_eq(counters()->bad_field, 3);
	ck_assert_uint_eq(apply(ev_add(0, 1, WB_SIDE_BUY, 6, PX(10), 1)), 0);
	ck_assert_uint_eq(apply(ev_add(WB_VENUE_COUNT, 1, WB_SIDE_BUY, 7, PX(10), 1)), 0);
	ck_assert_uint_eq(apply(ev_add(255, 1, WB_SIDE_BUY, 8, PX(10), 1)), 0);
	ck_assert_uint_eq(counters()->bad_venue, 3);
	ck_assert_uint_eq(counters()->live_orders, 0);
	ck_assert_int_eq(venue_books_bbo(vb, 1, 64, NULL, NULL), -1);
	ck_assert_int_eq(venue_books_bbo(vb, 0, 1, NULL, NULL), -1);
}
END_TEST

START_TEST(test_clear_of_one_instrument_drops_only_its_book)
{
	struct wb_event ev;
	struct venue_level bid, ask;

	add(1, 2, WB_SIDE_BUY, 1, PX(10), 100);
	add(1, 2, WB_SIDE_SELL, 2, PX(11), 100);
	add(1, 3, WB_SIDE_BUY, 3, PX(10), 100);
	add(2, 2, WB_SIDE_BUY, 4, PX(10), 100);
	ev = ev_base(WB_EV_CLEAR, 1, 2);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_CLEAR);
	ck_assert_uint_eq(up[0].venue, 1);
	ck_assert_uint_eq(up[0].instrument, 2);
	ck_assert_uint_eq(up[0].recv_ts, ev.recv_ts);
	venue_books_bbo(vb, 1, 2, &bid, &ask);
	ck_assert_uint_eq(bid.qty + ask.qty, 0);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 1, NULL, NULL), -1);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 2, NULL, NULL), -1);
	assert_queue(1, 3, 0, 0);
	assert_queue(2, 4, 0, 0);
	ck_assert_uint_eq(counters()->live_orders, 2);
	ck_assert_uint_eq(counters()->levels, 2);
	ck_assert_uint_eq(counters()->clears, 1);
	/* The ids are free again. */
	add(1, 2, WB_SIDE_BUY, 1, PX(9), 1);
}
END_TEST

START_TEST(test_clear_of_whole_venue_drops_every_book_of_that_venue)
{
	struct wb_event ev;

	for (uint64_t i = 1; i <= 200; i++) {
		add(1, (uint16_t)(1 + i % 63), i & 1 ? WB_SIDE_BUY : WB_SIDE_SELL, i, PX(100 + i % 7), 10);
		add(2, (uint16_t)(1 + i % 63), WB_SIDE_BUY, i, PX(100), 10);
	}
	ev = ev_base(WB_EV_CLEAR, 1, 0);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_CLEAR);
	ck_assert_uint_eq(up[0].instrument, 0);
	ck_assert_uint_eq(counters()->live_orders, 200);
	for (uint64_t i = 1; i <= 200; i++) {
		ck_assert_int_eq(venue_books_queue_position(vb, 1, i, NULL, NULL), -1);
		ck_assert_int_eq(venue_books_queue_position(vb, 2, i, NULL, NULL), 0);
	}
	ck_assert_uint_eq(counters()->levels, 63);
}
END_TEST

START_TEST(test_trade_status_symbol_and_gap_pass_through)
{
	struct wb_event ev = ev_base(WB_EV_TRADE, 1, 4);

	ev.side = WB_SIDE_BUY;
	ev.flags = WB_EVF_PRINTABLE | WB_EVF_CROSS;
	ev.u.trade.price = PX(321);
	ev.u.trade.qty = 1234;
	ev.u.trade.match_id = 99;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_TRADE);
	ck_assert_int_eq(up[0].price, PX(321));
	ck_assert_uint_eq(up[0].qty, 1234);
	ck_assert_uint_eq(up[0].u.match_id, 99);
	ck_assert_uint_eq(up[0].flags, WB_EVF_PRINTABLE | WB_EVF_CROSS);
	ck_assert_uint_eq(up[0].instrument, 4);
	ck_assert_uint_eq(up[0].side, WB_SIDE_BUY);

	ev = ev_base(WB_EV_STATUS, 1, 4);
	ev.u.status.state = WB_STATE_HALTED;
	ev.u.status.raw_state = 'H';
	memcpy(ev.u.status.reason, "LUDP", 4);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_STATUS);
	ck_assert_uint_eq(up[0].u.status.state, WB_STATE_HALTED);
	ck_assert_int_eq(up[0].u.status.raw_state, 'H');
	ck_assert_int_eq(memcmp(up[0].u.status.reason, "LUDP", 4), 0);
	ck_assert_uint_eq(up[0].exch_ts, ev.exch_ts);

	ev = ev_base(WB_EV_SYMBOL, 1, 4);
	memcpy(ev.u.symbol.ticker, "AAPL    ", 8);
	ev.u.symbol.round_lot = 100;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_SYMBOL);
	ck_assert_int_eq(memcmp(up[0].u.ticker, "AAPL    ", 8), 0);
	ck_assert_uint_eq(up[0].round_lot, 100);
	ck_assert_uint_eq(up[0].instrument, 4);

	ev = ev_base(WB_EV_GAP, 2, 0);
	ev.u.gap.first = 1000;
	ev.u.gap.count = 25;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_GAP);
	ck_assert_uint_eq(up[0].venue, 2);
	ck_assert_uint_eq(up[0].qty, 25);
	ck_assert_uint_eq(up[0].u.seq, 1000);

	ev = ev_base(WB_EV_QUOTE, 1, 4);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 0);
	ev = ev_base(WB_EV_KIND_COUNT + 3, 1, 4);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 0);

	const struct venue_books_counters *c = counters();
	ck_assert_uint_eq(c->trades, 1);
	ck_assert_uint_eq(c->statuses, 1);
	ck_assert_uint_eq(c->symbols, 1);
	ck_assert_uint_eq(c->gaps, 1);
	ck_assert_uint_eq(c->ignored, 2);
	ck_assert_uint_eq(c->events, 6);
}
END_TEST

/* A SIP's view of a venue (its halts, its quote wipe-outs) never touches the direct
 * book: it only goes on to the SIP view. */
START_TEST(test_sip_status_and_clear_leave_the_direct_book_alone)
{
	struct book_update out[8];
	struct wb_event ev;
	uint64_t bad = counters()->bad_venue, ignored = counters()->ignored, sip = counters()->sip;

	add(WB_VENUE_NYSE, 4, WB_SIDE_BUY, 77, PX(10), 100);
	ev = ev_base(WB_EV_CLEAR, WB_VENUE_NYSE, 0);
	ev.flags = WB_EVF_SIP;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_CLEAR);
	ev = ev_base(WB_EV_STATUS, WB_VENUE_NYSE, 4);
	ev.flags = WB_EVF_SIP;
	ev.u.status.state = WB_STATE_HALTED;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_STATUS);
	ck_assert_uint_eq(out[0].u.status.state, WB_STATE_HALTED);
	ck_assert_uint_eq(counters()->sip, sip + 2);
	ck_assert_int_eq(venue_books_queue_position(vb, WB_VENUE_NYSE, 77, NULL, NULL), 0);
	/* A SIP line's own gap or symbol is no book's either, and not a bad venue;
	 * a CQS gap (no retransmission) goes on to the SIP view, which marks
	 * its symbols stale. */
	ev = ev_base(WB_EV_GAP, WB_VENUE_SIP_UQDF, 0);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 0);
	ev = ev_base(WB_EV_GAP, WB_VENUE_SIP_CQS, 0);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_GAP);
	ev = ev_base(WB_EV_SYMBOL, WB_VENUE_SIP_UQDF, 4);
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 0);
	ck_assert_uint_eq(counters()->bad_venue, bad);
	ck_assert_uint_eq(counters()->ignored, ignored + 2);
	ck_assert_uint_eq(counters()->clears, 0);
}
END_TEST

START_TEST(test_sparse_64bit_ids_are_found)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint64_t ids[2000];

	for (unsigned i = 0; i < 2000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ids[i] = i % 3 == 0 ? x | (1ull << 63) : x;
		add(4, 1, WB_SIDE_BUY, ids[i], PX(10 + i % 50), 1);
	}
	for (unsigned i = 0; i < 2000; i++)
		ck_assert_int_eq(venue_books_queue_position(vb, 4, ids[i], NULL, NULL), 0);
	for (unsigned i = 0; i < 2000; i += 2)
		ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 4, ids[i], 0)), 1);
	for (unsigned i = 0; i < 2000; i++)
		ck_assert_int_eq(venue_books_queue_position(vb, 4, ids[i], NULL, NULL), i % 2 ? 0 : -1);
	ck_assert_uint_eq(counters()->live_orders, 1000);
}
END_TEST

START_TEST(test_tables_double_when_live_orders_exceed_the_hint)
{
	enum { N = 20000 };
	struct venue_books *small = create_small(8, 16);
	struct book_update u[BOOK_MAX_UPDATES_PER_EVENT];
	const struct venue_books_counters *c = venue_books_counters(small);

	for (uint64_t i = 0; i < N; i++) {
		struct wb_event ev = ev_add(1, (uint16_t)(1 + i % 7), i & 1 ? WB_SIDE_BUY : WB_SIDE_SELL,
					    i * 7919, PX(i % 4000), 1 + (uint32_t)(i % 9));

		require(venue_books_apply(small, &ev, u) == 1, "add %" PRIu64 " failed", i);
	}
	ck_assert_uint_gt(c->index_grows, 0);
	ck_assert_uint_gt(c->level_grows, 0);
	ck_assert_uint_eq(c->live_orders, N);
	ck_assert_uint_eq(c->alloc_failures, 0);
	for (uint64_t i = 0; i < N; i++) {
		struct venue_order_info info;

		require(venue_books_order(small, 1, i * 7919, &info) == 0, "order %" PRIu64 " lost", i);
		require(info.qty == 1 + i % 9 && info.price == PX(i % 4000), "order %" PRIu64 " changed", i);
	}
	venue_books_destroy(small);
}
END_TEST

START_TEST(test_prefetch_of_any_event_leaves_the_books_unchanged)
{
	struct wb_event evs[] = {
		ev_add(1, 2, WB_SIDE_BUY, 50, PX(10), 1),	/* joins a level */
		ev_add(1, 2, WB_SIDE_SELL, 51, PX(30), 1),	/* a new level */
		ev_add(0, 2, WB_SIDE_BUY, 52, PX(10), 1),	/* bad venue */
		ev_add(200, 2, WB_SIDE_BUY, 52, PX(10), 1),
		ev_add(1, 0, WB_SIDE_BUY, 53, PX(10), 1),	/* bad instrument */
		ev_add(1, 9999, WB_SIDE_BUY, 53, PX(10), 1),
		ev_add(1, 2, 7, 54, PX(10), 1),			/* bad side */
		ev_order(WB_EV_DELETE, 1, 1, 0),		/* last order of its level */
		ev_order(WB_EV_EXECUTE, 1, 2, 1),		/* in a spilled FIFO */
		ev_order(WB_EV_REDUCE, 1, 999, 1),		/* unknown */
		ev_replace(1, 3, 4000, PX(11), 5),
		ev_modify(1, 3, PX(12), 5, 0),
		ev_base(WB_EV_CLEAR, 1, 0),
		ev_base(WB_EV_KIND_COUNT + 7, 1, 2),
	};
	struct venue_level before[16], after[16];
	unsigned nb, na;

	add(1, 2, WB_SIDE_BUY, 1, PX(9), 100);
	for (uint64_t id = 2; id < 12; id++)
		add(1, 2, WB_SIDE_BUY, id, PX(10), 100);
	nb = venue_books_depth(vb, 1, 2, WB_SIDE_BUY, before, 16);
	for (unsigned i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		venue_books_prefetch(vb, &evs[i]);
		for (unsigned st = 0; st < VENUE_BOOKS_PREFETCH_STAGES + 2; st++)
			venue_books_prefetch_stage(vb, &evs[i], st);
	}
	na = venue_books_depth(vb, 1, 2, WB_SIDE_BUY, after, 16);
	ck_assert_uint_eq(na, nb);
	for (unsigned i = 0; i < nb; i++) {
		ck_assert_int_eq(after[i].price, before[i].price);
		ck_assert_uint_eq(after[i].qty, before[i].qty);
		ck_assert_uint_eq(after[i].orders, before[i].orders);
	}
	ck_assert_uint_eq(counters()->events, 11);
	ck_assert_uint_eq(counters()->live_orders, 11);
	assert_queue(1, 11, 900, 9);
}
END_TEST

START_TEST(test_long_queue_keeps_priority_through_growth_and_removals)
{
	enum { N = 5000 };
	uint64_t shares;
	uint32_t ahead;

	for (uint64_t id = 1; id <= N; id++)
		add(1, 3, WB_SIDE_SELL, id, PX(50), (uint32_t)id);
	/* Remove the first, the last and every third order in between. */
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 1, 0)), 1);
	ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 1, N, N)), 2);
	for (uint64_t id = 3; id < N; id += 3)
		ck_assert_uint_eq(apply(ev_order(WB_EV_REDUCE, 1, id, (uint32_t)id)), 1);
	/* The rest keep arrival order: shares ahead = sum of the ids ahead that remain. */
	shares = 0;
	ahead = 0;
	for (uint64_t id = 2; id < N; id++) {
		if (id % 3 == 0)
			continue;
		if (id % 97 == 0)
			assert_queue(1, id, shares, ahead);
		shares += id;
		ahead++;
	}
	assert_level_update(&up[0], WB_SIDE_SELL, PX(50), shares, ahead);
	/* Losing priority sends an order from the front to the back. */
	ck_assert_uint_eq(apply(ev_modify(1, 2, PX(50), 2, 0)), 1);
	assert_queue(1, 2, shares - 2, ahead - 1);
	assert_queue(1, 4, 0, 0);
}
END_TEST

/* The queue a test expects at one price: ids and shares, in priority order. */
struct queue_want {
	uint64_t id[256];
	uint32_t qty[256];
	unsigned n;
};

static void want_push(struct queue_want *w, uint64_t id, uint32_t qty)
{
	w->id[w->n] = id;
	w->qty[w->n++] = qty;
}

static void want_drop(struct queue_want *w, uint64_t id)
{
	unsigned k = 0;

	while (k < w->n && w->id[k] != id)
		k++;
	ck_assert_uint_lt(k, w->n);
	memmove(&w->id[k], &w->id[k + 1], (w->n - k - 1) * sizeof(w->id[0]));
	memmove(&w->qty[k], &w->qty[k + 1], (w->n - k - 1) * sizeof(w->qty[0]));
	w->n--;
}

/* Every order's queue position, and the checksum of a book built in the wanted order. */
static void assert_queue_is(const struct queue_want *w, uint16_t instrument, int64_t price)
{
	struct venue_books *fresh = create_small(64, 0), *mine = vb;
	uint64_t shares = 0, want_sum;

	for (unsigned k = 0; k < w->n; k++) {
		assert_queue(1, w->id[k], shares, k);
		shares += w->qty[k];
	}
	vb = fresh;
	for (unsigned k = 0; k < w->n; k++)
		add(1, instrument, WB_SIDE_BUY, w->id[k], price, w->qty[k]);
	want_sum = venue_books_checksum(vb, NULL);
	vb = mine;
	venue_books_destroy(fresh);
	ck_assert_uint_eq(venue_books_checksum(vb, NULL), want_sum);
}

START_TEST(test_spilled_queue_keeps_priority_through_stale_places)
{
	struct queue_want w = { .n = 0 };
	uint64_t next = 1000;

	/* A long queue at one price; removals leave its ids in place. */
	for (uint64_t id = 1; id <= 40; id++) {
		add(1, 3, WB_SIDE_BUY, id, PX(50), (uint32_t)id);
		want_push(&w, id, (uint32_t)id);
	}
	for (uint64_t id = 2; id <= 40; id += 5) {
		ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, id, 0)), 1);
		want_drop(&w, id);
	}
	assert_queue_is(&w, 3, PX(50));
	/* Orders back at the end while an old place of theirs is still in the
	 * queue: losing priority, leaving and coming back, a replace to the
	 * same id, a deleted id added again. */
	ck_assert_uint_eq(apply(ev_modify(1, 5, PX(50), 5, 0)), 1);
	want_drop(&w, 5);
	want_push(&w, 5, 5);
	ck_assert_uint_eq(apply(ev_modify(1, 8, PX(51), 8, 0)), 2);
	ck_assert_uint_eq(apply(ev_modify(1, 8, PX(50), 9, 0)), 2);
	want_drop(&w, 8);
	want_push(&w, 8, 9);
	ck_assert_uint_eq(apply(ev_replace(1, 9, 9, PX(50), 90)), 1);
	want_drop(&w, 9);
	want_push(&w, 9, 90);
	ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, 13, 0)), 1);
	add(1, 3, WB_SIDE_BUY, 13, PX(50), 130);
	want_drop(&w, 13);
	want_push(&w, 13, 130);
	assert_queue_is(&w, 3, PX(50));
	/* Churn at the back until the queue has compacted several times,
	 * some of the twice-placed orders losing priority again on the way. */
	for (unsigned round = 0; round < 200; round++) {
		uint64_t id = next++;

		add(1, 3, WB_SIDE_BUY, id, PX(50), 1);
		want_push(&w, id, 1);
		if (round % 3 == 0) {
			ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, id, 0)), 1);
			want_drop(&w, id);
		} else if (round % 3 == 1) {
			/* Not order 5: it loses priority again below. */
			uint64_t mid = w.id[w.n / 2] != 5 ? w.id[w.n / 2] : w.id[w.n / 2 + 1];

			ck_assert_uint_eq(apply(ev_order(WB_EV_DELETE, 1, mid, 0)), 1);
			want_drop(&w, mid);
		}
		if (round % 50 == 25) {
			ck_assert_uint_eq(apply(ev_modify(1, 5, PX(50), 5, 0)), 1);
			want_drop(&w, 5);
			want_push(&w, 5, 5);
		}
		if (w.n > 60 && w.id[0] != 5) {
			ck_assert_uint_eq(apply(ev_order(WB_EV_EXECUTE, 1, w.id[0], w.qty[0])), 2);
			want_drop(&w, w.id[0]);
		}
	}
	assert_queue_is(&w, 3, PX(50));
	ck_assert_uint_eq(counters()->live_orders, w.n);
	/* A clear takes every order once, stale places or not. */
	ck_assert_uint_eq(apply(ev_base(WB_EV_CLEAR, 1, 3)), 1);
	ck_assert_uint_eq(counters()->live_orders, 0);
	ck_assert_uint_eq(counters()->levels, 0);
	ck_assert_int_eq(venue_books_queue_position(vb, 1, 5, NULL, NULL), -1);
}
END_TEST

START_TEST(test_counters_track_live_and_peak_orders)
{
	for (uint64_t i = 1; i <= 10; i++)
		add(1, 1, WB_SIDE_BUY, i, PX(10 + i), 1);
	for (uint64_t i = 1; i <= 4; i++)
		apply(ev_order(WB_EV_DELETE, 1, i, 0));
	ck_assert_uint_eq(counters()->live_orders, 6);
	ck_assert_uint_eq(counters()->peak_live_orders, 10);
	ck_assert_uint_eq(counters()->levels, 6);
	ck_assert_uint_eq(counters()->adds, 10);
	ck_assert_uint_eq(counters()->deletes, 4);
}
END_TEST

START_TEST(test_gap_being_recovered_leaves_the_venue_unmarked)
{
	struct wb_event ev = ev_base(WB_EV_GAP, WB_VENUE_NASDAQ, 0);
	uint64_t before;

	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 1, PX(1000), 100);
	before = venue_books_checksum(vb, NULL);
	ev.u.gap.first = 10;
	ev.u.gap.count = 4;
	ev.u.gap.reason = WB_GAP_RECOVERING;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 0);
	ev.u.gap.reason = WB_GAP_FILLED;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 0);
	ck_assert_uint_eq(counters()->recoveries, 1);
	ck_assert_uint_eq(venue_books_checksum(vb, NULL), before);
	/* What could not be recovered is a sequence gap, and marks the venue. */
	ev.u.gap.reason = WB_GAP_SEQUENCE;
	ck_assert_uint_eq(venue_books_apply(vb, &ev, up), 1);
	ck_assert_uint_eq(up[0].kind, BOOK_UP_GAP);
}
END_TEST

START_TEST(test_checksum_follows_content_not_history)
{
	struct venue_books *other = create_small(64, 0);
	struct venue_books *mine = vb;
	uint64_t a, b;

	/* The same book reached two ways: directly, and through an order
	 * that came and went and a level that emptied and refilled. */
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 1, PX(1000), 100);
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 2, PX(1000), 200);
	add(WB_VENUE_BZX, 4, WB_SIDE_SELL, 7, PX(1001), 300);
	a = venue_books_checksum(vb, NULL);

	vb = other;
	add(WB_VENUE_BZX, 4, WB_SIDE_SELL, 9, PX(1001), 50);
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 1, PX(1000), 100);
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 5, PX(999), 10);
	apply(ev_order(WB_EV_DELETE, WB_VENUE_BZX, 9, 0));
	add(WB_VENUE_BZX, 4, WB_SIDE_SELL, 7, PX(1001), 300);
	apply(ev_order(WB_EV_DELETE, WB_VENUE_NASDAQ, 5, 0));
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 2, PX(1000), 200);
	b = venue_books_checksum(vb, NULL);
	ck_assert_uint_eq(a, b);

	/* Queue order is content: a change of priority changes the checksum. */
	apply(ev_modify(WB_VENUE_NASDAQ, 1, PX(1000), 100, 0));
	ck_assert_uint_ne(venue_books_checksum(vb, NULL), a);
	/* So does a share count. */
	apply(ev_modify(WB_VENUE_NASDAQ, 1, PX(1000), 100, 0));
	apply(ev_modify(WB_VENUE_NASDAQ, 2, PX(1000), 200, 0));
	ck_assert_uint_eq(venue_books_checksum(vb, NULL), a);
	apply(ev_order(WB_EV_REDUCE, WB_VENUE_NASDAQ, 2, 1));
	ck_assert_uint_ne(venue_books_checksum(vb, NULL), a);

	venue_books_destroy(other);
	vb = mine;
}
END_TEST

START_TEST(test_checksum_follows_tickers_not_instrument_ids)
{
	/* The same two symbols, their ids given in the other order (another
	 * stream named them first): the same books, the same checksum. */
	static const uint64_t keys_a[] = { 0, 0, 0, 0x202020204c504141ull, 0x202020205446534dull };
	static const uint64_t keys_b[] = { 0, 0, 0, 0x202020205446534dull, 0x202020204c504141ull };
	const struct book_tickers ta = { keys_a, 5 }, tb = { keys_b, 5 };
	struct venue_books *other = create_small(64, 0);
	struct venue_books *mine = vb;
	uint64_t a;

	add(WB_VENUE_NASDAQ, 3, WB_SIDE_BUY, 1, PX(1000), 100);
	add(WB_VENUE_NASDAQ, 4, WB_SIDE_SELL, 2, PX(2000), 200);
	add(WB_VENUE_BZX, 4, WB_SIDE_BUY, 3, PX(1999), 300);
	a = venue_books_checksum(vb, &ta);

	vb = other;
	add(WB_VENUE_BZX, 3, WB_SIDE_BUY, 3, PX(1999), 300);
	add(WB_VENUE_NASDAQ, 3, WB_SIDE_SELL, 2, PX(2000), 200);
	add(WB_VENUE_NASDAQ, 4, WB_SIDE_BUY, 1, PX(1000), 100);
	ck_assert_uint_eq(venue_books_checksum(vb, &tb), a);
	/* By index the two differ: the ids were what made them differ. */
	ck_assert_uint_ne(venue_books_checksum(vb, NULL), venue_books_checksum(mine, NULL));
	/* The same tickers, the other mapping: another book. */
	ck_assert_uint_ne(venue_books_checksum(vb, &ta), a);
	/* A share less is another book. */
	apply(ev_order(WB_EV_REDUCE, WB_VENUE_NASDAQ, 1, 1));
	ck_assert_uint_ne(venue_books_checksum(vb, &tb), a);

	venue_books_destroy(other);
	vb = mine;
}
END_TEST

/* What venue_books_apply_batch handed on: each event and its updates, in order. */
struct batch_log {
	const struct wb_event *events[64];
	struct book_update updates[64 * BOOK_MAX_UPDATES_PER_EVENT];
	unsigned n_events, n_updates;
};

/* The books write each event's updates straight after the last one's. */
static struct book_update *log_emit(void *ctx, const struct wb_event *ev, struct book_update *u, unsigned k)
{
	struct batch_log *log = ctx;

	ck_assert_ptr_eq(u, &log->updates[log->n_updates]);
	log->events[log->n_events++] = ev;
	log->n_updates += k;
	return u + k;
}

START_TEST(test_apply_batch_equals_applying_each_event_across_a_ring_wrap)
{
	enum { SLOTS = 16 };
	struct venue_books *one_by_one = create_small(64, 0);
	struct wb_event ring[SLOTS] __attribute__((aligned(64)));
	struct wb_event evs[12];
	struct book_update u[BOOK_MAX_UPDATES_PER_EVENT];
	struct batch_log log = { 0 };
	unsigned n = 0, expect = 0;

	evs[n++] = ev_add(WB_VENUE_NASDAQ, 5, WB_SIDE_BUY, 10, PX(100), 100);
	evs[n++] = ev_add(WB_VENUE_NASDAQ, 5, WB_SIDE_BUY, 11, PX(100), 200);
	evs[n++] = ev_add(WB_VENUE_NASDAQ, 5, WB_SIDE_SELL, 12, PX(101), 300);
	evs[n++] = ev_order(WB_EV_EXECUTE, WB_VENUE_NASDAQ, 10, 40);
	evs[n++] = ev_replace(WB_VENUE_NASDAQ, 11, 13, PX(99), 50);
	evs[n++] = ev_order(WB_EV_DELETE, WB_VENUE_NASDAQ, 10, 0);
	evs[n++] = ev_modify(WB_VENUE_NASDAQ, 12, PX(102), 10, 0);
	evs[n++] = ev_order(WB_EV_DELETE, WB_VENUE_NASDAQ, 999, 0);	/* unknown: no update */
	evs[n++] = ev_add(WB_VENUE_NASDAQ, 5, WB_SIDE_BUY, 14, PX(99), 5);
	evs[n++] = ev_order(WB_EV_REDUCE, WB_VENUE_NASDAQ, 13, 50);
	/* The events sit in a ring from slot 10 on: they wrap to slot 0. */
	for (unsigned i = 0; i < n; i++)
		ring[(10 + i) % SLOTS] = evs[i];
	/* All are applied; the stages look ahead only within avail. */
	venue_books_apply_batch(vb, ring, SLOTS - 1, 10, n, n, log.updates, log_emit, &log);
	ck_assert_uint_eq(log.n_events, n);
	for (unsigned i = 0; i < n; i++) {
		unsigned k = venue_books_apply(one_by_one, &evs[i], u);

		ck_assert_ptr_eq(log.events[i], &ring[(10 + i) % SLOTS]);
		ck_assert_int_eq(memcmp(u, &log.updates[expect], k * sizeof(*u)), 0);
		expect += k;
	}
	ck_assert_uint_eq(expect, log.n_updates);
	ck_assert_uint_eq(venue_books_checksum(vb, NULL), venue_books_checksum(one_by_one, NULL));
	ck_assert_uint_eq(counters()->unknown_order, 1);
	venue_books_destroy(one_by_one);
}
END_TEST

START_TEST(test_create_rejects_bad_config)
{
	struct venue_books_config cfg = { .max_instruments = 70000, .numa_node = -1 };

	ck_assert_ptr_null(venue_books_create(&cfg));
	cfg = (struct venue_books_config){ .max_instruments = 4, .expected_orders = 0x7fffffff, .numa_node = -1 };
	ck_assert_ptr_null(venue_books_create(&cfg));
	/* A node that does not exist falls back to plain allocation. */
	cfg = (struct venue_books_config){ .max_instruments = 4, .expected_orders = 10, .numa_node = 999 };
	struct venue_books *b = venue_books_create(&cfg);
	ck_assert_ptr_nonnull(b);
	venue_books_destroy(b);
	venue_books_destroy(NULL);
}
END_TEST

/* --------------------------------------------------- reference model */

#define M_VENUES 3
#define M_INSTRUMENTS 4		/* ids 1..4 of a book sized for 6 (5 is valid, never used) */

struct model_order {
	uint64_t id;
	uint64_t prio;		/* FIFO: smaller is earlier */
	int64_t price;
	uint32_t qty;
	uint16_t instrument;
	uint8_t venue, side;
};

struct model {
	struct model_order *o;
	size_t n, cap;
	uint64_t next_prio;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static long model_find(const struct model *m, uint8_t venue, uint64_t id)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->o[i].id == id && m->o[i].venue == venue)
			return (long)i;
	return -1;
}

static void model_remove(struct model *m, long i)
{
	m->o[i] = m->o[--m->n];
}

static void model_add(struct model *m, uint8_t venue, uint64_t id, uint16_t instrument, uint8_t side,
		      int64_t price, uint32_t qty)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->o = realloc(m->o, m->cap * sizeof(*m->o));
		require(m->o, "out of memory");
	}
	m->o[m->n++] = (struct model_order){ .id = id, .prio = m->next_prio++, .price = price, .qty = qty,
					     .instrument = instrument, .venue = venue, .side = side };
}

static void model_level(const struct model *m, uint8_t venue, uint16_t instrument, uint8_t side, int64_t price,
			uint64_t *qty, uint32_t *orders)
{
	*qty = 0;
	*orders = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct model_order *o = &m->o[i];

		if (o->venue == venue && o->instrument == instrument && o->side == side && o->price == price) {
			*qty += o->qty;
			(*orders)++;
		}
	}
}

static bool better(uint8_t side, int64_t a, int64_t b)
{
	return side == WB_SIDE_BUY ? a > b : a < b;
}

/* All levels of a side, best first, by brute force. */
static unsigned model_depth(const struct model *m, uint8_t venue, uint16_t instrument, uint8_t side,
			    struct venue_level *out, unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct model_order *o = &m->o[i];
		unsigned j;

		if (o->venue != venue || o->instrument != instrument || o->side != side)
			continue;
		for (j = 0; j < n && out[j].price != o->price; j++)
			;
		if (j == n) {
			require(n < max, "model depth overflow");
			/* insertion sort, best first */
			for (j = n; j > 0 && better(side, o->price, out[j - 1].price); j--)
				out[j] = out[j - 1];
			out[j] = (struct venue_level){ .price = o->price };
			n++;
		}
		out[j].qty += o->qty;
		out[j].orders++;
	}
	return n;
}

struct expect {
	unsigned n;
	struct book_update u[BOOK_MAX_UPDATES_PER_EVENT];
};

static void expect_level(struct expect *x, const struct model *m, const struct wb_event *ev, uint8_t venue,
			 uint16_t instrument, uint8_t side, int64_t price)
{
	struct book_update *u = &x->u[x->n++];

	*u = (struct book_update){ .kind = BOOK_UP_LEVEL, .venue = venue, .side = side, .flags = ev->flags,
				   .instrument = instrument, .price = price, .exch_ts = ev->exch_ts,
				   .recv_ts = ev->recv_ts };
	model_level(m, venue, instrument, side, price, &u->qty, &u->order_count);
}

static void expect_trade(struct expect *x, const struct wb_event *ev, const struct model_order *o, int64_t price)
{
	x->u[x->n++] = (struct book_update){ .kind = BOOK_UP_TRADE, .venue = o->venue, .side = o->side,
					     .flags = ev->flags, .instrument = o->instrument, .price = price,
					     .qty = ev->u.order.qty, .exch_ts = ev->exch_ts,
					     .recv_ts = ev->recv_ts, .u.match_id = ev->u.order.ref };
}

/* Apply ev to the model, writing the updates the books must emit. */
static void model_apply(struct model *m, const struct wb_event *ev, struct expect *x)
{
	const struct wb_ev_order *e = &ev->u.order;
	long i;

	x->n = 0;
	if (ev->venue == 0 || ev->venue >= WB_VENUE_COUNT)
		return;
	switch (ev->kind) {
	case WB_EV_ADD:
		if (ev->instrument == 0 || ev->instrument > M_INSTRUMENTS + 1 || e->qty == 0)
			return;
		if (model_find(m, ev->venue, e->order_id) >= 0)
			return;
		model_add(m, ev->venue, e->order_id, ev->instrument, ev->side, e->price, e->qty);
		expect_level(x, m, ev, ev->venue, ev->instrument, ev->side, e->price);
		return;
	case WB_EV_EXECUTE:
	case WB_EV_EXECUTE_AT_PRICE:
	case WB_EV_REDUCE:
	case WB_EV_DELETE: {
		struct model_order o;

		i = model_find(m, ev->venue, e->order_id);
		if (i < 0)
			return;
		o = m->o[i];
		if (ev->kind == WB_EV_DELETE || e->qty >= o.qty)
			model_remove(m, i);
		else
			m->o[i].qty -= e->qty;
		expect_level(x, m, ev, o.venue, o.instrument, o.side, o.price);
		if (ev->kind == WB_EV_EXECUTE)
			expect_trade(x, ev, &o, o.price);
		else if (ev->kind == WB_EV_EXECUTE_AT_PRICE && (ev->flags & WB_EVF_PRINTABLE))
			expect_trade(x, ev, &o, e->price);
		return;
	}
	case WB_EV_REPLACE: {
		struct model_order o;
		bool new_live;

		i = model_find(m, ev->venue, e->order_id);
		if (i < 0)
			return;
		o = m->o[i];
		new_live = e->ref != e->order_id && model_find(m, ev->venue, e->ref) >= 0;
		model_remove(m, i);
		if (!new_live && e->qty)
			model_add(m, o.venue, e->ref, o.instrument, o.side, e->price, e->qty);
		expect_level(x, m, ev, o.venue, o.instrument, o.side, o.price);
		if (!new_live && e->qty && e->price != o.price)
			expect_level(x, m, ev, o.venue, o.instrument, o.side, e->price);
		return;
	}
	case WB_EV_MODIFY: {
		struct model_order o;

		i = model_find(m, ev->venue, e->order_id);
		if (i < 0)
			return;
		o = m->o[i];
		if (e->qty == 0) {
			model_remove(m, i);
		} else {
			if (e->price != o.price || !(ev->flags & WB_EVF_KEEPS_PRIORITY))
				m->o[i].prio = m->next_prio++;
			m->o[i].price = e->price;
			m->o[i].qty = e->qty;
		}
		expect_level(x, m, ev, o.venue, o.instrument, o.side, o.price);
		if (e->qty && e->price != o.price)
			expect_level(x, m, ev, o.venue, o.instrument, o.side, e->price);
		return;
	}
	case WB_EV_CLEAR:
		for (size_t k = 0; k < m->n;) {
			if (m->o[k].venue == ev->venue && (ev->instrument == 0 || m->o[k].instrument == ev->instrument))
				model_remove(m, (long)k);
			else
				k++;
		}
		x->u[x->n++] = (struct book_update){ .kind = BOOK_UP_CLEAR, .venue = ev->venue, .side = ev->side,
						     .flags = ev->flags, .instrument = ev->instrument,
						     .exch_ts = ev->exch_ts, .recv_ts = ev->recv_ts };
		return;
	default:
		return;
	}
}

static bool same_update(const struct book_update *a, const struct book_update *b)
{
	if (a->kind != b->kind || a->venue != b->venue || a->side != b->side || a->flags != b->flags ||
	    a->instrument != b->instrument || a->exch_ts != b->exch_ts || a->recv_ts != b->recv_ts)
		return false;
	switch (a->kind) {
	case BOOK_UP_LEVEL:
		return a->price == b->price && a->qty == b->qty && a->order_count == b->order_count;
	case BOOK_UP_TRADE:
		return a->price == b->price && a->qty == b->qty && a->u.match_id == b->u.match_id;
	default:
		return true;
	}
}

static void check_book(const struct model *m, uint8_t venue, uint16_t instrument, const char *where)
{
	enum { MAXL = 512 };
	static struct venue_level want[MAXL], got[MAXL];
	struct venue_level bid, ask;

	require(venue_books_bbo(vb, venue, instrument, &bid, &ask) == 0, "%s: bbo failed", where);
	for (uint8_t side = WB_SIDE_BUY; side <= WB_SIDE_SELL; side++) {
		unsigned nw = model_depth(m, venue, instrument, side, want, MAXL);
		unsigned ng = venue_books_depth(vb, venue, instrument, side, got, MAXL);
		const struct venue_level *top = side == WB_SIDE_BUY ? &bid : &ask;

		require(nw == ng, "%s: venue %u instrument %u side %u: %u levels, model has %u", where,
			      venue, instrument, side, ng, nw);
		for (unsigned k = 0; k < nw; k++)
			require(want[k].price == got[k].price && want[k].qty == got[k].qty &&
					      want[k].orders == got[k].orders,
				      "%s: venue %u instrument %u side %u level %u: %" PRId64 " %" PRIu64
				      "/%u, model %" PRId64 " %" PRIu64 "/%u",
				      where, venue, instrument, side, k, got[k].price, got[k].qty, got[k].orders,
				      want[k].price, want[k].qty, want[k].orders);
		if (nw)
			require(top->price == want[0].price && top->qty == want[0].qty &&
					      top->orders == want[0].orders,
				      "%s: BBO differs from depth", where);
		else
			require(top->qty == 0 && top->orders == 0, "%s: empty side has a BBO", where);
	}
}

static void check_queue_positions(const struct model *m, unsigned samples, const char *where)
{
	for (unsigned s = 0; s < samples && m->n; s++) {
		const struct model_order *o = &m->o[rnd_below((uint32_t)m->n)];
		uint64_t want_shares = 0, got_shares;
		uint32_t want_orders = 0, got_orders;

		for (size_t k = 0; k < m->n; k++) {
			const struct model_order *p = &m->o[k];

			if (p->venue == o->venue && p->instrument == o->instrument && p->side == o->side &&
			    p->price == o->price && p->prio < o->prio) {
				want_shares += p->qty;
				want_orders++;
			}
		}
		require(venue_books_queue_position(vb, o->venue, o->id, &got_shares, &got_orders) == 0,
			"%s: live order %" PRIu64 " unknown to the books", where, o->id);
		require(got_shares == want_shares && got_orders == want_orders,
			      "%s: queue position of %" PRIu64 ": %" PRIu64 "/%u, model %" PRIu64 "/%u", where, o->id,
			      got_shares, got_orders, want_shares, want_orders);
	}
}

struct id_source {
	bool sparse;
	uint64_t next[WB_VENUE_COUNT];	/* dense: per-venue increasing refs */
};

static uint64_t new_id(struct id_source *ids, uint8_t venue)
{
	if (ids->sparse)
		return rnd();	/* a collision with a live id is a duplicate; the model agrees */
	return ids->next[venue]++;
}

static uint64_t unknown_id(struct id_source *ids, uint8_t venue)
{
	if (ids->sparse)
		return rnd() | 1;
	/* Above every id handed out so far, or a long-dead one. */
	return rnd_below(2) ? ids->next[venue] + 1 + rnd_below(1000) : rnd_below((uint32_t)ids->next[venue] + 1);
}

/* One random event, biased so books grow to ~target orders and shrink again. */
static struct wb_event random_event(const struct model *m, struct id_source *ids, unsigned target)
{
	uint8_t venue = (uint8_t)(1 + rnd_below(M_VENUES));
	uint16_t instrument = (uint16_t)(1 + rnd_below(M_INSTRUMENTS));
	uint8_t side = rnd_below(2) ? WB_SIDE_BUY : WB_SIDE_SELL;
	/* Mostly near the touch, sometimes deep enough to need the bisect. */
	int64_t price = PX(1000 + (rnd_below(8) ? (int)rnd_below(12) : (int)rnd_below(60) - 24));
	uint32_t qty = 1 + rnd_below(rnd_below(4) ? 500 : 5);
	uint32_t r = rnd_below(1000);
	const struct model_order *o = m->n ? &m->o[rnd_below((uint32_t)m->n)] : NULL;
	uint8_t kind;
	struct wb_event ev;

	if (r < 2) {
		ev = ev_base(WB_EV_CLEAR, venue, rnd_below(3) ? instrument : 0);
		return ev;
	}
	if (r < 10) {	/* invalid adds and other venues */
		ev = ev_add(venue, (uint16_t)rnd_below(3) * 1000, side, new_id(ids, venue), price, qty);
		if (r < 4)
			ev.venue = (uint8_t)(rnd_below(2) ? 0 : WB_VENUE_COUNT + rnd_below(100));
		else if (r < 6)
			ev.instrument = instrument, ev.u.order.qty = 0;
		return ev;
	}
	if (!o || r < (m->n < target ? 550u : 380u)) {
		if (o && rnd_below(50) == 0)	/* a duplicate of a live order */
			return ev_add(o->venue, instrument, side, o->id, price, qty);
		return ev_add(venue, instrument, side, new_id(ids, venue), price, qty);
	}
	r = rnd_below(100);
	if (r < 5) {	/* unknown id */
		static const uint8_t kinds[] = { WB_EV_EXECUTE, WB_EV_REDUCE, WB_EV_DELETE, WB_EV_REPLACE,
						 WB_EV_MODIFY, WB_EV_EXECUTE_AT_PRICE };

		kind = kinds[rnd_below(sizeof(kinds))];
		ev = ev_order(kind, venue, unknown_id(ids, venue), qty);
		ev.u.order.ref = new_id(ids, venue);
		ev.u.order.price = price;
		return ev;
	}
	/* Half the time stay at or next to the order's price. */
	if (rnd_below(2))
		price = o->price + (rnd_below(3) ? 0 : TICK * ((int)rnd_below(3) - 1));
	if (r < 40) {
		ev = ev_order(WB_EV_DELETE, o->venue, o->id, 0);
	} else if (r < 55) {
		ev = ev_order(WB_EV_EXECUTE, o->venue, o->id, rnd_below(4) ? 1 + rnd_below(o->qty) : o->qty + rnd_below(3));
		ev.u.order.ref = rnd();
		ev.flags = rnd_below(2) ? WB_EVF_PRINTABLE : 0;
	} else if (r < 60) {
		ev = ev_order(WB_EV_EXECUTE_AT_PRICE, o->venue, o->id, 1 + rnd_below(o->qty + 5));
		ev.u.order.price = price;
		ev.u.order.ref = rnd();
		ev.flags = rnd_below(2) ? WB_EVF_PRINTABLE : 0;
	} else if (r < 70) {
		ev = ev_order(WB_EV_REDUCE, o->venue, o->id, 1 + rnd_below(o->qty + 5));
	} else if (r < 85) {
		uint64_t nid = rnd_below(30) == 0 ? o->id : new_id(ids, o->venue);

		if (rnd_below(40) == 0 && m->n > 1)
			nid = m->o[rnd_below((uint32_t)m->n)].id;	/* maybe live on this venue */
		ev = ev_replace(o->venue, o->id, nid, price, rnd_below(100) ? qty : 0);
	} else {
		ev = ev_modify(o->venue, o->id, price, rnd_below(50) ? qty : 0,
			       rnd_below(2) ? WB_EVF_KEEPS_PRIORITY : 0);
	}
	return ev;
}

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : def;
}

/* One event's check against the model, and the model's step. */
struct model_run {
	struct model m;
	unsigned long seed, k;
	char where[128];
};

static void model_check(struct model_run *r, const struct wb_event *ev, const struct book_update *u, unsigned n)
{
	struct model *m = &r->m;
	struct expect x;
	long oi = ev->kind != WB_EV_ADD ? model_find(m, ev->venue, ev->u.order.order_id) : -1;
	uint16_t touched = oi >= 0 ? m->o[oi].instrument : ev->instrument;

	snprintf(r->where, sizeof(r->where), "seed %lu event %lu (kind %u)", r->seed, r->k, ev->kind);
	model_apply(m, ev, &x);
	require(n == x.n, "%s: %u updates, model expects %u", r->where, n, x.n);
	for (unsigned j = 0; j < n; j++)
		require(same_update(&u[j], &x.u[j]),
			"%s: update %u: kind %u side %u price %" PRId64 " qty %" PRIu64
			" orders %u; model kind %u side %u price %" PRId64 " qty %" PRIu64 " orders %u",
			r->where, j, u[j].kind, u[j].side, u[j].price, u[j].qty, u[j].order_count, x.u[j].kind,
			x.u[j].side, x.u[j].price, x.u[j].qty, x.u[j].order_count);
	if (touched >= 1 && touched <= M_INSTRUMENTS && ev->venue >= 1 && ev->venue <= M_VENUES)
		check_book(m, ev->venue, touched, r->where);
	require(venue_books_counters(vb)->live_orders == m->n, "%s: %" PRIu64 " live, model %zu", r->where,
		venue_books_counters(vb)->live_orders, m->n);
	if (r->k % 997 == 0) {
		for (uint8_t v = 1; v <= M_VENUES; v++)
			for (uint16_t i = 1; i <= M_INSTRUMENTS; i++)
				check_book(m, v, i, r->where);
		check_queue_positions(m, 20, r->where);
	}
	r->k++;
}

/* The books write every event's updates over the last one's, in up. */
static struct book_update *model_emit(void *ctx, const struct wb_event *ev, struct book_update *u, unsigned k)
{
	model_check(ctx, ev, u, k);
	memset(up, 0x5a, sizeof(up));
	return u;
}

/*
 * Events go in one at a time (with the prefetch hints, which must never
 * change what apply does), or, every third sequence, in runs through
 * venue_books_apply_batch() and _list(), whose look-ahead works out
 * hashes before the events ahead of it are applied: across the table
 * doublings of the small capacity hints too. A run's events are drawn
 * from the model as it was at the run's start.
 */
static void run_model(bool sparse)
{
	unsigned long total = env_ulong("WB_VENUE_BOOK_MODEL_EVENTS", 1000000);
	unsigned long seed0 = env_ulong("WB_VENUE_BOOK_MODEL_SEED", 1);
	unsigned long done = 0;
	static struct model_run r;

	for (unsigned long seq = 0; done < total; seq++) {
		unsigned long seed = seed0 + seq * 2 + sparse;
		unsigned long len = 5000 + (seed % 7) * 5000;
		struct id_source ids = { .sparse = sparse };
		bool batched = seq % 3 == 2;

		/* Small capacity hints so every run also crosses table doublings. */
		vb = create_small(M_INSTRUMENTS + 2, 1 + (uint32_t)(seed % 300));
		rng_state = seed;
		r.m.n = 0;
		r.seed = seed;
		r.k = 0;
		for (unsigned v = 0; v < WB_VENUE_COUNT; v++)
			ids.next[v] = rnd_below(3) ? 1 : rnd_below(1u << 31);
		while (r.k < len && done < total) {
			/* Targets swing between thin and thick books. */
			unsigned target = (r.k / 2000) % 2 ? 40 : 400;

			if (batched) {
				enum { RUN = 40 };
				struct wb_event evs[RUN];
				const struct wb_event *list[RUN];
				unsigned n = 1 + rnd_below(RUN), ahead = rnd_below(n + 1);

				for (unsigned i = 0; i < n; i++) {
					evs[i] = random_event(&r.m, &ids, target);
					list[i] = &evs[i];
				}
				/* avail may reach past the events applied. */
				memset(up, 0x5a, sizeof(up));
				if (rnd_below(2))
					venue_books_apply_batch(vb, evs, UINT64_MAX, 0, n - ahead, n, up, model_emit, &r);
				else
					venue_books_apply_list(vb, list, n - ahead, up, model_emit, &r);
				for (unsigned i = n - ahead; i < n; i++) {
					memset(up, 0x5a, sizeof(up));
					model_check(&r, &evs[i], up, venue_books_apply(vb, &evs[i], up));
				}
				done += n;
				continue;
			}
			struct wb_event ev = random_event(&r.m, &ids, target);

			if (r.k & 1)
				for (unsigned st = 0; st <= VENUE_BOOKS_PREFETCH_STAGES; st++)
					venue_books_prefetch_stage(vb, &ev, st);
			else
				venue_books_prefetch(vb, &ev);
			memset(up, 0x5a, sizeof(up));
			model_check(&r, &ev, up, venue_books_apply(vb, &ev, up));
			done++;
		}
		venue_books_destroy(vb);
		vb = NULL;
	}
	free(r.m.o);
	r.m = (struct model){ 0 };
}

START_TEST(test_random_dense_id_sequences_match_reference_model)
{
	run_model(false);
}
END_TEST

START_TEST(test_random_sparse_id_sequences_match_reference_model)
{
	run_model(true);
}
END_TEST

static Suite *venue_book_suite(void)
{
	Suite *s = suite_create("venue_book");
	TCase *spec = tcase_create("specification");
	TCase *model = tcase_create("reference_model");

	tcase_add_checked_fixture(spec, setup, teardown);
	tcase_add_test(spec, test_add_creates_level_and_emits_level_update);
	tcase_add_test(spec, test_adds_at_one_price_aggregate_in_arrival_order);
	tcase_add_test(spec, test_depth_lists_best_price_first_on_both_sides);
	tcase_add_test(spec, test_deep_book_keeps_every_level_sorted);
	tcase_add_test(spec, test_extreme_prices_sort_correctly);
	tcase_add_test(spec, test_execute_emits_level_then_trade_at_resting_price);
	tcase_add_test(spec, test_execute_in_full_removes_order_and_empty_level);
	tcase_add_test(spec, test_execute_at_price_prints_only_when_printable);
	tcase_add_test(spec, test_execute_larger_than_remaining_is_clamped_and_counted);
	tcase_add_test(spec, test_reduce_is_a_partial_cancel_that_keeps_queue_position);
	tcase_add_test(spec, test_delete_from_middle_of_queue_closes_the_gap);
	tcase_add_test(spec, test_replace_moves_queue_position);
	tcase_add_test(spec, test_replace_of_only_order_at_same_price_keeps_the_level);
	tcase_add_test(spec, test_replace_to_new_price_emits_old_then_new_level_and_keeps_side);
	tcase_add_test(spec, test_replace_with_same_id_gets_new_priority);
	tcase_add_test(spec, test_replace_to_a_live_id_removes_old_and_counts_duplicate);
	tcase_add_test(spec, test_modify_keeping_priority_keeps_queue_position);
	tcase_add_test(spec, test_modify_without_priority_moves_to_the_back);
	tcase_add_test(spec, test_modify_to_new_price_moves_level_even_with_keep_priority_flag);
	tcase_add_test(spec, test_modify_to_zero_shares_removes_the_order);
	tcase_add_test(spec, test_execute_unknown_order_is_counted_and_skipped);
	tcase_add_test(spec, test_duplicate_add_is_counted_and_keeps_the_original);
	tcase_add_test(spec, test_same_id_on_two_venues_are_two_orders);
	tcase_add_test(spec, test_bad_instrument_side_venue_and_size_are_counted_and_skipped);
	tcase_add_test(spec, test_clear_of_one_instrument_drops_only_its_book);
	tcase_add_test(spec, test_clear_of_whole_venue_drops_every_book_of_that_venue);
	tcase_add_test(spec, test_trade_status_symbol_and_gap_pass_through);
	tcase_add_test(spec, test_sparse_64bit_ids_are_found);
	tcase_add_test(spec, test_sip_status_and_clear_leave_the_direct_book_alone);
	tcase_add_test(spec, test_tables_double_when_live_orders_exceed_the_hint);
	tcase_add_test(spec, test_prefetch_of_any_event_leaves_the_books_unchanged);
	tcase_add_test(spec, test_long_queue_keeps_priority_through_growth_and_removals);
	tcase_add_test(spec, test_spilled_queue_keeps_priority_through_stale_places);
	tcase_add_test(spec, test_counters_track_live_and_peak_orders);
	tcase_add_test(spec, test_create_rejects_bad_config);
	tcase_add_test(spec, test_gap_being_recovered_leaves_the_venue_unmarked);
	tcase_add_test(spec, test_checksum_follows_content_not_history);
	tcase_add_test(spec, test_checksum_follows_tickers_not_instrument_ids);
	tcase_add_test(spec, test_apply_batch_equals_applying_each_event_across_a_ring_wrap);
	suite_add_tcase(s, spec);

	tcase_set_timeout(model, 600);
	tcase_add_test(model, test_random_dense_id_sequences_match_reference_model);
	tcase_add_test(model, test_random_sparse_id_sequences_match_reference_model);
	suite_add_tcase(s, model);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(venue_book_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
