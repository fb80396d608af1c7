/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The reader's view of gap recovery: wb_recovery_streams and
 * wb_symbol_recovering over a book whose recovery table is written here
 * as wirebookd's engine thread writes it (lib/recovery/recovery_table.c).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "book/book_shm.h"
#include "book/superbook.h"
#include "wirebook/barrier.h"
#include "shm/shm_layout.h"
#include "test_util.h"

static char name[64];
static struct superbook *sb;
static struct book_shm *m;
static struct wb_book *bk;

static void publish(uint16_t id, const char *ticker, int venue)
{
	char padded[8];
	struct book_update u = { .kind = BOOK_UP_LEVEL, .venue = (uint8_t)venue,
				 .side = WB_SIDE_BUY, .instrument = id,
				 .price = 100 * WB_PRICE_SCALE, .qty = 100, .order_count = 1 };

	memset(padded, ' ', sizeof(padded));
	memcpy(padded, ticker, strlen(ticker));
	ck_assert_int_eq(superbook_add_symbol(sb, id, padded), 0);
	superbook_apply(sb, &u);
	superbook_publish(sb);
}

static void setup(void)
{
	struct superbook_config cfg = { .shm_name = name, .capacity = 64, .numa_node = -1 };
	int err;

	snprintf(name, sizeof(name), "wbtest_recovery_%d", (int)getpid());
	shm_unlink(name);
	sb = superbook_create(&cfg, &err);
	ck_assert_msg(sb, "superbook_create: %d", err);
	superbook_heartbeat(sb, test_realtime_ns());
	m = superbook_shm(sb);
	publish(1, "AAPL", WB_VENUE_BZX);
	publish(2, "MSFT", WB_VENUE_BZX);
	publish(3, "IBM", WB_VENUE_NASDAQ);
	bk = wb_open(name, &err);
	ck_assert_msg(bk, "wb_open: %d", err);
}

static void teardown(void)
{
	wb_close(bk);
	superbook_destroy(sb);
}

/* Two BZX units (stream 1: unit 1, stream 2: unit 2) and Nasdaq's one. */
static void write_table(uint8_t bzx_unit1_state, uint64_t since)
{
	struct wb_shm_recovery *t = m->recovery;
	struct wb_recovery_stream s[3] = {
		{ .venue = WB_VENUE_BZX, .unit = 1, .state = bzx_unit1_state, .since_ns = since,
		  .gaps = 3, .filled = 2, .messages = 40 },
		{ .venue = WB_VENUE_BZX, .unit = 2, .gaps = 1, .filled = 1, .messages = 5,
		  .fills = 1, .fill_p50_ns = 1000, .fill_p99_ns = 1000, .fill_max_ns = 1000 },
		{ .venue = WB_VENUE_NASDAQ, .gaps = 0 },
	};

	wb_store_relaxed(&t->seq, t->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(t->stream, s, sizeof(s));
	t->count = 3;
	wb_store_release(&t->seq, t->seq + 1);
}

static void symbol_stream(int sym, int venue, uint8_t k)
{
	m->symbol_stream[(size_t)sym * WB_BOOK_VENUES + (unsigned)venue] = k;
}

START_TEST(test_no_table_written_means_no_streams_and_nothing_recovering)
{
	uint64_t since = 99;

	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 0), 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, &since), 0);
	ck_assert_uint_eq(since, 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_CONSOLIDATED, NULL), 0);
}
END_TEST

START_TEST(test_streams_are_copied_with_their_counts)
{
	struct wb_recovery_stream s[4];

	write_table(WB_REC_GAP, 12345);
	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 0), 3);
	memset(s, 0xee, sizeof(s));
	ck_assert_int_eq(wb_recovery_streams(bk, s, 2), 3);	/* room for two: two copied */
	ck_assert_uint_eq(s[0].venue, WB_VENUE_BZX);
	ck_assert_uint_eq(s[0].state, WB_REC_GAP);
	ck_assert_uint_eq(s[0].since_ns, 12345);
	ck_assert_uint_eq(s[0].messages, 40);
	ck_assert_uint_eq(s[1].unit, 2);
	ck_assert_uint_eq(s[1].fill_max_ns, 1000);
	ck_assert_uint_eq(s[2].venue, 0xee);			/* untouched */
	ck_assert_int_eq(wb_recovery_streams(bk, s, 4), 3);
	ck_assert_uint_eq(s[2].venue, WB_VENUE_NASDAQ);
	ck_assert_int_eq(wb_recovery_streams(NULL, s, 4), WB_EINVAL);
	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 4), WB_EINVAL);
}
END_TEST

START_TEST(test_only_the_symbols_own_stream_makes_it_recovering)
{
	uint64_t since = 0;

	write_table(WB_REC_GAP, 777);
	symbol_stream(1, WB_VENUE_BZX, 1);	/* AAPL on unit 1: recovering */
	symbol_stream(2, WB_VENUE_BZX, 2);	/* MSFT on unit 2: in sequence */
	symbol_stream(3, WB_VENUE_NASDAQ, 3);
	symbol_stream(3, WB_VENUE_BZX, 2);	/* IBM's BZX messages would come on unit 2 */
	superbook_set_recovering(sb, 1u << WB_VENUE_BZX);	/* what wirebookd sets beside */

	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, &since), 1);
	ck_assert_uint_eq(since, 777);
	ck_assert_int_eq(wb_symbol_recovering(bk, 2, WB_VENUE_BZX, &since), 0);
	ck_assert_uint_eq(since, 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_VENUE_NASDAQ, NULL), 0);
	/* any venue of the symbol */
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_CONSOLIDATED, &since), 1);
	ck_assert_uint_eq(since, 777);
	ck_assert_int_eq(wb_symbol_recovering(bk, 2, WB_CONSOLIDATED, NULL), 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_CONSOLIDATED, NULL), 0);
	/* the venue as a whole still says recovering */
	ck_assert_int_eq(wb_health(bk, NULL), WB_BOOK_RECOVERING);

	write_table(WB_REC_SNAPSHOT, 888);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, &since), 1);
	ck_assert_uint_eq(since, 888);
	write_table(WB_REC_IN_SEQUENCE, 0);
	superbook_set_recovering(sb, 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, &since), 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_CONSOLIDATED, NULL), 0);
}
END_TEST

START_TEST(test_a_symbol_of_unknown_stream_follows_its_venues_bit)
{
	write_table(WB_REC_GAP, 5);
	/* IBM's BZX stream is not known: BZX's venue bit answers */
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_VENUE_BZX, NULL), 0);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_CONSOLIDATED, NULL), 0);
	superbook_set_recovering(sb, 1u << WB_VENUE_BZX);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_VENUE_BZX, NULL), 1);
	/* a venue the symbol has had nothing from yet counts too: a late
	 * join's venue has sent nothing yet */
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_CONSOLIDATED, NULL), 1);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_VENUE_NASDAQ, NULL), 0);
	/* an index naming another venue's stream is not taken for this one */
	symbol_stream(3, WB_VENUE_BZX, 3);
	ck_assert_int_eq(wb_symbol_recovering(bk, 3, WB_VENUE_BZX, NULL), 0);
}
END_TEST

START_TEST(test_bad_arguments_and_a_retired_book)
{
	ck_assert_int_eq(wb_symbol_recovering(NULL, 1, WB_VENUE_BZX, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_symbol_recovering(bk, 0, WB_VENUE_BZX, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_symbol_recovering(bk, 64, WB_VENUE_BZX, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, -1, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_BOOK_VENUES, NULL), WB_EINVAL);
	superbook_destroy(sb);	/* retires the book, no successor */
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, NULL), WB_ESTALE);
	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 0), WB_ESTALE);
	sb = superbook_create(&(struct superbook_config){ .shm_name = name, .capacity = 64,
							 .numa_node = -1 }, &(int){ 0 });
	ck_assert_ptr_nonnull(sb);
}
END_TEST

/* A restarted builder: the handle follows it, and its recovery table and
 * SIP statistics are the new book's (they were read from the unmapped old
 * one before). */
START_TEST(test_a_restart_is_followed_to_the_new_books_table)
{
	struct superbook_config cfg = { .shm_name = name, .capacity = 64, .numa_node = -1 };
	struct wb_sip_summary sum;
	int err;

	write_table(WB_REC_GAP, 5);
	symbol_stream(1, WB_VENUE_BZX, 1);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, NULL), 1);
	superbook_destroy(sb);
	sb = superbook_create(&cfg, &err);
	ck_assert_msg(sb, "superbook_create: %d", err);
	superbook_heartbeat(sb, test_realtime_ns());
	m = superbook_shm(sb);
	publish(1, "AAPL", WB_VENUE_BZX);
	usleep((useconds_t)(2 * WB_REATTACH_INTERVAL_NS / 1000));
	ck_assert_int_eq(wb_check(bk), 0);
	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 0), 0);	/* the new, empty table */
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, NULL), 0);
	ck_assert_int_eq(wb_sip_summary(bk, &sum), WB_OK);
	write_table(WB_REC_SNAPSHOT, 9);
	symbol_stream(1, WB_VENUE_BZX, 1);
	ck_assert_int_eq(wb_recovery_streams(bk, NULL, 0), 3);
	ck_assert_int_eq(wb_symbol_recovering(bk, 1, WB_VENUE_BZX, NULL), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("recovery_reader");
	TCase *tc = tcase_create("reader");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_no_table_written_means_no_streams_and_nothing_recovering);
	tcase_add_test(tc, test_streams_are_copied_with_their_counts);
	tcase_add_test(tc, test_only_the_symbols_own_stream_makes_it_recovering);
	tcase_add_test(tc, test_a_symbol_of_unknown_stream_follows_its_venues_bit);
	tcase_add_test(tc, test_bad_arguments_and_a_retired_book);
	tcase_add_test(tc, test_a_restart_is_followed_to_the_new_books_table);
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
