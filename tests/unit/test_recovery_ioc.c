/*
 * Gap recovery's control ABI (WB_IOC_REC_*, lib/feed/feed_ioc.c), the part
 * the module runs: malformed requests refused before the engine sees them,
 * the engine's calls made for good ones, and every field of a recovering
 * stream carried into the ioctl's struct. And the recovery client's engine
 * target (lib/recovery/recovery_target.c) answering as the engine does.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "recovery/recovery.h"
#include "feed/feed_ioc.h"
#include "feed_harness.h"

static struct harness h;
static int line_a;

static void setup(void)
{
	harness_init(&h, HARNESS_RING_SLOTS);
	line_a = feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, FEED_PROTO_ITCH50,
			      WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line_a, 0);
}

static void teardown(void)
{
	harness_free(&h);
}

START_TEST(test_rec_packet_requests_are_checked)
{
	static const uint8_t payload[20];
	struct wb_ioc_rec_packet ok = { .line = 0, .len = 20, .data = (uintptr_t)payload };
	struct wb_ioc_rec_packet r;

	ck_assert_int_eq(feed_ioc_rec_packet_check(&ok), 0);
	r = ok;
	r.reserved0 = 1;
	ck_assert_int_eq(feed_ioc_rec_packet_check(&r), -FEED_EINVAL);
	r = ok;
	r.reserved[1] = 1;
	ck_assert_int_eq(feed_ioc_rec_packet_check(&r), -FEED_EINVAL);
	r = ok;
	r.len = 0;
	ck_assert_int_eq(feed_ioc_rec_packet_check(&r), -FEED_EINVAL);
	r = ok;
	r.len = WB_IOC_REC_MAX_PAYLOAD + 1;
	ck_assert_int_eq(feed_ioc_rec_packet_check(&r), -FEED_EINVAL);
	r = ok;
	r.data = 0;
	ck_assert_int_eq(feed_ioc_rec_packet_check(&r), -FEED_EINVAL);
	/* A good request for a line the map lacks reaches the engine, which says so. */
	r = ok;
	r.line = 40;
	ck_assert_int_eq(feed_ioc_rec_packet(h.engine, &r, payload, 1, &h.prod), -FEED_ENOENT);
}
END_TEST

START_TEST(test_rec_snapshot_and_lost_requests_are_checked)
{
	static const uint8_t payload[8];
	struct wb_ioc_rec_snapshot s = { .op = WB_SNAPSHOT_BEGIN };
	struct wb_ioc_rec_lost l = { .line = 0, .first = 1, .count = 1 };

	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), 0);
	s.op = 0;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), -FEED_EINVAL);
	s.op = WB_SNAPSHOT_ABORT + 1;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), -FEED_EINVAL);
	s.op = WB_SNAPSHOT_BEGIN;
	s.next_seq = 5;		/* only END carries a sequence */
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), -FEED_EINVAL);
	s.op = WB_SNAPSHOT_END;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), 0);
	s.len = 8;		/* only PACKET carries data */
	s.data = (uintptr_t)payload;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), -FEED_EINVAL);
	s.op = WB_SNAPSHOT_PACKET;
	s.next_seq = 0;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), 0);
	s.data = 0;
	ck_assert_int_eq(feed_ioc_rec_snapshot_check(&s), -FEED_EINVAL);
	/* Not in recovery mode: the engine refuses a snapshot. */
	s = (struct wb_ioc_rec_snapshot){ .line = (uint16_t)line_a, .op = WB_SNAPSHOT_BEGIN };
	ck_assert_int_eq(feed_ioc_rec_snapshot(h.engine, &s, NULL, 1, &h.prod), -FEED_EINVAL);

	l.reserved1 = 1;
	ck_assert_int_eq(feed_ioc_rec_lost(h.engine, &l, 1, &h.prod), -FEED_EINVAL);
	l.reserved1 = 0;
	l.line = 40;
	ck_assert_int_eq(feed_ioc_rec_lost(h.engine, &l, 1, &h.prod), -FEED_ENOENT);
}
END_TEST

START_TEST(test_rec_enable_puts_the_group_in_recovery_mode)
{
	struct wb_ioc_rec_enable r = { .venue = WB_VENUE_NASDAQ };
	struct wb_ioc_rec_snapshot s = { .line = (uint16_t)line_a, .op = WB_SNAPSHOT_BEGIN };

	r.reserved0 = 1;
	ck_assert_int_eq(feed_ioc_rec_enable(h.engine, &r), -FEED_EINVAL);
	r.reserved0 = 0;
	r.venue = WB_VENUE_BZX;	/* no line of it in the map */
	ck_assert_int_eq(feed_ioc_rec_enable(h.engine, &r), -FEED_ENOENT);
	r.venue = WB_VENUE_NASDAQ;
	r.slots = 1;		/* smaller than the hold buffer */
	ck_assert_int_eq(feed_ioc_rec_enable(h.engine, &r), -FEED_EINVAL);
	r.slots = 0;
	ck_assert_int_eq(feed_ioc_rec_enable(h.engine, &r), 0);
	/* In recovery mode, the snapshot the engine refused before is taken. */
	ck_assert_int_eq(feed_ioc_rec_snapshot(h.engine, &s, NULL, 1, &h.prod), 0);
	s.op = WB_SNAPSHOT_ABORT;
	ck_assert_int_eq(feed_ioc_rec_snapshot(h.engine, &s, NULL, 2, &h.prod), 0);
}
END_TEST

START_TEST(test_rec_stream_carries_every_field)
{
	struct feed_recovery_stream s;
	struct wb_ioc_rec_stream o;

	memset(&s, 0, sizeof(s));
	s.venue = 1;
	s.protocol = 2;
	s.unit = 3;
	s.state = 4;
	s.channel = 5;
	s.line = 6;
	s.episode = 7;
	s.held = 8;
	s.next_seq = 9;
	s.missing_first = 10;
	s.missing_count = 11;
	s.rec_first = 12;
	s.rec_end = 13;
	s.since = 14;
	memcpy(s.session, "ABCDEFGHIJ", 10);
	s.has_session = 1;
	s.gaps = 15;
	s.filled = 16;
	s.unrecoverable = 17;
	s.messages = 18;
	s.lost = 19;
	s.snapshots = 20;
	feed_ioc_rec_stream(&s, &o);
	ck_assert_uint_eq(o.venue, 1);
	ck_assert_uint_eq(o.protocol, 2);
	ck_assert_uint_eq(o.unit, 3);
	ck_assert_uint_eq(o.state, 4);
	ck_assert_uint_eq(o.channel, 5);
	ck_assert_uint_eq(o.line, 6);
	ck_assert_uint_eq(o.episode, 7);
	ck_assert_uint_eq(o.held, 8);
	ck_assert_uint_eq(o.next_seq, 9);
	ck_assert_uint_eq(o.missing_first, 10);
	ck_assert_uint_eq(o.missing_count, 11);
	ck_assert_uint_eq(o.rec_first, 12);
	ck_assert_uint_eq(o.rec_end, 13);
	ck_assert_uint_eq(o.since, 14);
	ck_assert(!memcmp(o.session, "ABCDEFGHIJ", 10));
	ck_assert_uint_eq(o.has_session, 1);
	ck_assert_uint_eq(o.gaps, 15);
	ck_assert_uint_eq(o.filled, 16);
	ck_assert_uint_eq(o.unrecoverable, 17);
	ck_assert_uint_eq(o.messages, 18);
	ck_assert_uint_eq(o.lost, 19);
	ck_assert_uint_eq(o.snapshots, 20);
}
END_TEST

START_TEST(test_engine_target_answers_as_the_engine)
{
	struct recovery_target t;
	struct wb_ioc_feed lines[4];
	uint32_t before;

	recovery_target_engine(&t, h.engine);
	ck_assert_uint_eq(t.feed_list(t.ctx, lines, 4), 1);
	ck_assert_uint_eq(lines[0].venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(lines[0].port, 26477);
	before = t.changes(t.ctx);
	ck_assert_int_eq(t.enable(t.ctx, WB_VENUE_NASDAQ, 0), 0);
	ck_assert_uint_ne(t.changes(t.ctx), before);
	ck_assert_int_eq(t.enable(t.ctx, WB_VENUE_BZX, 0), -FEED_ENOENT);
	ck_assert_int_eq(t.list(t.ctx, NULL, 0, false), 0);
	ck_assert_ptr_null(t.close);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recovery_ioc");
	TCase *tc = tcase_create("recovery_ioc");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rec_packet_requests_are_checked);
	tcase_add_test(tc, test_rec_snapshot_and_lost_requests_are_checked);
	tcase_add_test(tc, test_rec_enable_puts_the_group_in_recovery_mode);
	tcase_add_test(tc, test_rec_stream_carries_every_field);
	tcase_add_test(tc, test_engine_target_answers_as_the_engine);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
