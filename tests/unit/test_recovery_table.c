/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery table's writer (lib/recovery/recovery_table.c) over a real
 * feed engine: Nasdaq ITCH on two channels (two streams, a symbol each),
 * channel 1 loses a packet and recovers it. The table must name both
 * streams, say channel 1 recovering while it is and channel 2 not, point
 * each symbol at its own stream, and count the recovery when it ends.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "recovery/recovery_table.h"
#include "feed_harness.h"

#define CAPACITY 64u

static struct harness h;
static struct recovery_table rt;
static struct wb_shm_recovery *table;
static uint8_t *symbol_stream;
static int ch1, ch2;		/* a line of each channel */
static uint64_t now = 1000;

/* A MoldUDP64 packet at seq with one message: TICKER's stock directory
 * (locate) at seq 1, an add order after. Returns its length. */
static size_t itch_packet(uint8_t *p, uint64_t seq, const char *ticker, uint16_t locate)
{
	uint8_t *m = p + 22;
	uint16_t mlen = seq == 1 ? 39 : 36;

	memcpy(p, "SESSION001", 10);
	wire_put_be64(p + 10, seq);
	wire_put_be16(p + 18, 1);
	wire_put_be16(p + 20, mlen);
	memset(m, 0, mlen);
	wire_put_be16(m + 1, locate);
	if (seq == 1) {
		m[0] = 'R';
		put_text(m + 11, ticker, 8);
		m[19] = 'Q';
		wire_put_be32(m + 21, 100);
	} else {
		m[0] = 'A';
		wire_put_be48(m + 5, 1000 * seq);
		wire_put_be64(m + 11, seq);
		m[19] = 'B';
		wire_put_be32(m + 20, 100);
		put_text(m + 24, ticker, 8);
		wire_put_be32(m + 32, 1000000);
	}
	return 22u + mlen;
}

static void packet(int line, uint64_t seq, const char *ticker, uint16_t locate)
{
	uint8_t p[128];
	size_t len = itch_packet(p, seq, ticker, locate);

	now += 1000;
	feed_process_payload(h.engine, line, p, (uint32_t)len, now, &h.prod);
	harness_drain(&h);
}

/* The packet at seq, as a re-request's reply brings it. */
static void recovered(int line, uint64_t seq, const char *ticker, uint16_t locate)
{
	uint8_t p[128];
	size_t len = itch_packet(p, seq, ticker, locate);

	now += 1000;
	ck_assert_int_eq(feed_recover_packet(h.engine, line, p, (uint32_t)len, now, &h.prod), 0);
	harness_drain(&h);
}

static void setup(void)
{
	struct feed_map_entry a = { .ip = 0xe9000001, .port = 4000, .channel = 1,
				    .protocol = FEED_PROTO_ITCH50, .venue = WB_VENUE_NASDAQ, .name = "A" };
	struct feed_map_entry b = a;

	harness_init(&h, HARNESS_RING_SLOTS);
	b.ip = 0xe9000002;
	b.channel = 2;
	ch1 = feed_map_add_entry(h.engine, &a);
	ch2 = feed_map_add_entry(h.engine, &b);
	ck_assert_int_ge(ch1, 0);
	ck_assert_int_ge(ch2, 0);
	ck_assert_int_gt(feed_subscribe(h.engine, "*", 1), -1);
	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_NASDAQ, 1, 0), 0);
	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_NASDAQ, 2, 0), 0);
	table = calloc(1, sizeof(*table) + CAPACITY * WB_BOOK_VENUES);
	ck_assert_ptr_nonnull(table);
	symbol_stream = (uint8_t *)table + sizeof(*table);
	recovery_table_init(&rt, table, symbol_stream, CAPACITY, NULL);
}

static void teardown(void)
{
	free(table);
	harness_free(&h);
}

static const struct wb_recovery_stream *stream_of_channel(uint16_t channel)
{
	for (uint32_t i = 0; i < table->count; i++)
		if (table->stream[i].channel == channel)
			return &table->stream[i];
	return NULL;
}

static int instrument(const char *ticker)
{
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_SYMBOL &&
		    !memcmp(h.events[i].u.symbol.ticker, ticker, strlen(ticker)))
			return h.events[i].instrument;
	ck_abort_msg("no SYMBOL event for %s", ticker);
	return 0;
}

START_TEST(test_table_follows_a_recovery_per_stream_and_points_symbols_at_theirs)
{
	const struct wb_recovery_stream *s1, *s2;
	uint64_t seq_before;
	int strm, othr;

	packet(ch1, 1, "STRM", 1);
	packet(ch2, 1, "OTHR", 2);
	packet(ch1, 2, "STRM", 1);
	packet(ch2, 2, "OTHR", 2);
	packet(ch1, 4, "STRM", 1);	/* 3 lost on channel 1: recovering */
	packet(ch2, 3, "OTHR", 2);
	strm = instrument("STRM");
	othr = instrument("OTHR");

	recovery_table_update(&rt, h.engine, 1, 111);
	ck_assert_uint_eq(table->count, 2);
	ck_assert_uint_eq(table->seq % 2, 0);
	ck_assert_uint_eq(table->updated_ns, 111);
	s1 = stream_of_channel(1);
	s2 = stream_of_channel(2);
	ck_assert_ptr_nonnull(s1);
	ck_assert_ptr_nonnull(s2);
	ck_assert_uint_eq(s1->venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(s1->state, WB_REC_GAP);
	ck_assert_uint_gt(s1->since_ns, 0);
	ck_assert_uint_eq(s1->gaps, 1);
	ck_assert_uint_eq(s2->state, WB_REC_IN_SEQUENCE);
	ck_assert_uint_eq(s2->since_ns, 0);
	ck_assert_uint_eq(s2->gaps, 0);
	/* each symbol points at its own stream's entry */
	ck_assert_ptr_eq(&table->stream[symbol_stream[strm * WB_BOOK_VENUES + WB_VENUE_NASDAQ] - 1], s1);
	ck_assert_ptr_eq(&table->stream[symbol_stream[othr * WB_BOOK_VENUES + WB_VENUE_NASDAQ] - 1], s2);
	ck_assert_uint_eq(symbol_stream[strm * WB_BOOK_VENUES + WB_VENUE_BZX], 0);

	/* nothing moved: not rewritten */
	seq_before = table->seq;
	recovery_table_update(&rt, h.engine, 2, 222);
	ck_assert_uint_eq(table->seq, seq_before);

	/* the fill ends the recovery: published at once, counted */
	recovered(ch1, 3, "STRM", 1);
	recovery_table_update(&rt, h.engine, 3, 333);
	ck_assert_uint_gt(table->seq, seq_before);
	s1 = stream_of_channel(1);
	ck_assert_uint_eq(s1->state, WB_REC_IN_SEQUENCE);
	ck_assert_uint_eq(s1->since_ns, 0);
	ck_assert_uint_eq(s1->filled, 1);
	ck_assert_uint_eq(s1->unrecoverable, 0);
	ck_assert_uint_eq(s1->messages, 1);
	ck_assert_uint_eq(s1->fills, 1);	/* the engine's receive clock moved */
	ck_assert_uint_gt(s1->fill_max_ns, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("recovery_table");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_table_follows_a_recovery_per_stream_and_points_symbols_at_theirs);
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
