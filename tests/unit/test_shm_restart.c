/*
 * Readers across builder restarts (issue 14.3): a reader's handle follows
 * a restart by itself, its symbol indices keep naming the same tickers
 * even when the new run numbers them differently, a gap with no builder
 * never leaves the handle unusable, and wb_health says live, stale,
 * retired or recovering from the heartbeat and the header.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "book/superbook.h"
#include "wirebook/book.h"
#include "test_util.h"

static char name[64];

static void set_name(const char *what)
{
	snprintf(name, sizeof(name), "wbtest_restart_%s_%d", what, (int)getpid());
	shm_unlink(name);
}

static struct superbook *builder(void)
{
	struct superbook_config cfg = { .shm_name = name, .capacity = 64, .numa_node = -1 };
	int err;
	struct superbook *sb = superbook_create(&cfg, &err);

	ck_assert_msg(sb, "superbook_create: %d", err);
	superbook_heartbeat(sb, test_realtime_ns());
	return sb;
}

/* Publish TICKER as instrument ID with a NASDAQ bid of QTY shares. */
static void publish(struct superbook *sb, uint16_t id, const char *ticker, uint64_t qty)
{
	char padded[8];
	struct book_update u = { .kind = BOOK_UP_LEVEL, .venue = WB_VENUE_NASDAQ, .side = WB_SIDE_BUY,
				 .instrument = id, .price = 100 * WB_PRICE_SCALE, .qty = qty,
				 .order_count = 1 };

	memset(padded, ' ', sizeof(padded));
	memcpy(padded, ticker, strlen(ticker));
	ck_assert_int_eq(superbook_add_symbol(sb, id, padded), 0);
	superbook_apply(sb, &u);
	superbook_publish(sb);
}

/* Reads retry a retired book at most every WB_REATTACH_INTERVAL_NS. */
static void past_reattach_interval(void)
{
	usleep((useconds_t)(2 * WB_REATTACH_INTERVAL_NS / 1000));
}

START_TEST(test_reader_follows_a_restart_and_its_indices_keep_their_tickers)
{
	struct superbook *sb1, *sb2;
	struct wb_book *bk;
	struct wb_top top;
	char tk[9];
	int err, aapl, msft;

	set_name("follow");
	sb1 = builder();
	publish(sb1, 1, "AAPL", 100);
	publish(sb1, 2, "MSFT", 200);
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	aapl = wb_find(bk, "AAPL");
	msft = wb_find(bk, "MSFT");
	ck_assert_int_eq(wb_top(bk, aapl, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 100);

	/* The new run numbers the symbols the other way round and has not
	 * seen AAPL yet. */
	sb2 = builder();
	publish(sb2, 1, "MSFT", 222);
	ck_assert_int_eq(wb_top(bk, msft, &top), 0); /* followed, no reopen */
	ck_assert_uint_eq(top.bid_qty, 222);
	ck_assert_int_eq(wb_top(bk, aapl, &top), WB_ESTALE); /* not in the new run yet */
	publish(sb2, 2, "AAPL", 111);
	ck_assert_int_eq(wb_top(bk, aapl, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 111);
	ck_assert_int_eq(wb_find(bk, "AAPL"), aapl);
	ck_assert_int_eq(wb_symbol(bk, aapl, tk), 0);
	ck_assert_str_eq(tk, "AAPL");
	/* a ticker new in this run gets an index of its own */
	publish(sb2, 3, "SPY", 5);
	ck_assert_int_gt(wb_find(bk, "SPY"), msft);
	ck_assert_int_eq(wb_top(bk, wb_find(bk, "SPY"), &top), 0);
	ck_assert_uint_eq(top.bid_qty, 5);
	ck_assert_int_eq(wb_symbol_count(bk), 4);
	ck_assert_int_eq(wb_health(bk, NULL), WB_BOOK_LIVE);
	wb_close(bk);
	superbook_destroy(sb2);
	superbook_destroy(sb1);
}
END_TEST

START_TEST(test_reader_waits_through_a_gap_without_a_builder)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_top top;
	struct wb_health h;
	int err, sym;

	set_name("gap");
	sb = builder();
	publish(sb, 4, "NVDA", 10);
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	sym = wb_find(bk, "NVDA");
	superbook_destroy(sb); /* stopped: retired and unlinked, no successor */
	ck_assert_int_eq(wb_top(bk, sym, &top), WB_ESTALE);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_RETIRED);
	ck_assert_int_eq(h.state, WB_BOOK_RETIRED);
	ck_assert_int_eq(wb_reopen(bk), WB_ENOSHM);
	/* the handle stays usable (no WB_EINVAL) and follows the successor */
	ck_assert_int_eq(wb_top(bk, sym, &top), WB_ESTALE);
	ck_assert_int_eq(wb_symbol_count(bk) > 0, 1);
	sb = builder();
	publish(sb, 1, "NVDA", 30);
	past_reattach_interval();
	ck_assert_int_eq(wb_top(bk, sym, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 30);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_LIVE);
	ck_assert_uint_eq(h.reattaches, 1);
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_health_is_live_stale_recovering_retired)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_health h;
	int err;

	set_name("health");
	sb = builder();
	superbook_set_heartbeat_period(sb, 20000000ull);
	publish(sb, 1, "AAPL", 1);
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_LIVE);
	ck_assert_uint_eq(h.writer_pid, (uint32_t)getpid());
	ck_assert_int_eq(h.writer_alive, 1);
	ck_assert_uint_lt(h.age_ns, h.stale_after_ns);
	ck_assert_uint_eq(h.stale_after_ns, WB_STALE_MIN_NS);

	/* a builder that stopped beating (killed -9, hung) */
	superbook_heartbeat(sb, test_realtime_ns() - 5 * WB_STALE_MIN_NS);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_STALE);
	ck_assert_uint_ge(h.age_ns, 5 * WB_STALE_MIN_NS);
	superbook_heartbeat(sb, test_realtime_ns());
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_LIVE);

	/* a longer declared period stretches the threshold */
	superbook_set_heartbeat_period(sb, 500000000ull);
	ck_assert_uint_eq(wb_stale_after_ns(bk), 10 * 500000000ull);

	superbook_set_recovering(sb, 1u << WB_VENUE_BZX);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_RECOVERING);
	ck_assert_uint_eq(h.recovering_venues, 1u << WB_VENUE_BZX);
	{
		struct wb_venue_status vs;

		ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_BZX, &vs), 0);
		ck_assert_uint_eq(vs.recovering, 1);
		ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_NASDAQ, &vs), 0);
		ck_assert_uint_eq(vs.recovering, 0);
	}
	superbook_set_recovering(sb, 0);
	ck_assert_int_eq(wb_health(bk, NULL), WB_BOOK_LIVE);

	superbook_destroy(sb);
	ck_assert_int_eq(wb_health(bk, &h), WB_BOOK_RETIRED);
	ck_assert_str_eq(wb_health_name(WB_BOOK_RETIRED), "retired");
	ck_assert_str_eq(wb_health_name(WB_BOOK_RECOVERING), "recovering");
	ck_assert_int_eq(wb_health(NULL, &h), WB_EINVAL);
	wb_close(bk);
}
END_TEST

START_TEST(test_crashed_builder_replaced_is_followed_by_check_and_health)
{
	struct superbook *crashed, *fresh;
	struct wb_book *bk;
	struct wb_top top;
	int err, sym;

	set_name("crash");
	crashed = builder();
	publish(crashed, 1, "AAPL", 7);
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	sym = wb_find(bk, "AAPL");
	/* dies without retiring; an operator removes the object, a new run starts */
	shm_unlink(name);
	fresh = builder();
	publish(fresh, 1, "AAPL", 8);
	ck_assert_int_eq(wb_top(bk, sym, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 7); /* the old mapping still reads... */
	ck_assert_int_eq(wb_health(bk, NULL), WB_BOOK_LIVE); /* ...until checked */
	ck_assert_int_eq(wb_top(bk, sym, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 8);
	superbook_destroy(crashed); /* retires its own object, leaves the new one */
	ck_assert_int_eq(wb_check(bk), 0);
	ck_assert_int_eq(wb_top(bk, sym, &top), 0);
	wb_close(bk);
	superbook_destroy(fresh);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("shm_restart");
	TCase *tc = tcase_create("restart");

	tcase_add_test(tc, test_reader_follows_a_restart_and_its_indices_keep_their_tickers);
	tcase_add_test(tc, test_reader_waits_through_a_gap_without_a_builder);
	tcase_add_test(tc, test_health_is_live_stale_recovering_retired);
	tcase_add_test(tc, test_crashed_builder_replaced_is_followed_by_check_and_health);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
