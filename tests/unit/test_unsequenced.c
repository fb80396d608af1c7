/*
 * MoldUDP64 packets of sequence number 0 (issue 23.7): the anonymized
 * Nasdaq BX samples zero the session and the sequence. A feed-map line
 * (a real group) counts such a packet bad_field, as before; a --proto line
 * (any address) decodes its messages on no stream and counts the packet
 * unsequenced. Sessions number their messages from 1 (the MoldUDP64
 * spec's sequencing, /work/shared/specs/moldudp64-itch50.md 1.2).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "feed_harness.h"
#include "feed/raw.h"

/* A packet of sequence 0, session of zero bytes, one ITCH Add Order (no MPID). */
static uint32_t anonymized_add(uint8_t *p)
{
	uint8_t *m = p + MOLD_HEADER_LEN + 2;

	memset(p, 0, MOLD_HEADER_LEN + 2 + 36);
	wire_put_be16(p + MOLD_COUNT, 1);
	wire_put_be16(p + MOLD_HEADER_LEN, 36);
	m[0] = 'A';
	wire_put_be16(m + 1, 9);
	wire_put_be48(m + 5, 34200000000000ull);
	wire_put_be64(m + 11, 4242);
	m[19] = 'B';
	wire_put_be32(m + 20, 300);
	put_text(m + 24, "ANON", 8);
	wire_put_be32(m + 32, 1234500);
	return MOLD_HEADER_LEN + 2 + 36;
}

START_TEST(test_the_frame_says_unsequenced_with_its_error)
{
	uint8_t p[80];
	uint32_t len = anonymized_add(p);
	struct feed_frame f;

	f.kind = FEED_FRAME_DATA;
	ck_assert_int_eq(feed_raw_frame(feed_protocol_parse("itch", 4), p, len, &f),
			 FEED_FRAME_ERROR(FEED_ERR_BAD_FIELD));
	ck_assert_uint_eq(f.kind, FEED_FRAME_UNSEQUENCED);
	ck_assert_uint_eq(f.count, 1);
}
END_TEST

START_TEST(test_a_proto_line_decodes_a_sequence_0_packet_and_counts_it)
{
	struct harness h;
	struct feed_map_entry any = { .any = true, .protocol = (uint8_t)feed_protocol_parse("itch", 4),
				      .venue = WB_VENUE_BX, .name = "any" };
	uint8_t p[80];
	uint32_t len = anonymized_add(p);
	const struct wb_event *ev;
	int line;

	harness_init(&h, HARNESS_RING_SLOTS);
	line = feed_map_add_entry(h.engine, &any);
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	harness_payload(&h, line, p, len);
	ev = harness_find(&h, WB_EV_ADD, 0);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->u.order.order_id, 4242);
	ck_assert_uint_eq(ev->u.order.qty, 300);
	ck_assert_uint_eq(h.engine->lines[line].counters.unsequenced, 1);
	ck_assert_uint_eq(h.engine->lines[line].counters.errors[FEED_ERR_BAD_FIELD], 0);
	harness_free(&h);
}
END_TEST

START_TEST(test_a_feed_map_line_still_counts_it_bad_field)
{
	struct harness h;
	uint8_t p[80];
	uint32_t len = anonymized_add(p);
	int line;

	harness_init(&h, HARNESS_RING_SLOTS);
	line = feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, feed_protocol_parse("itch", 4),
			    WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	harness_payload(&h, line, p, len);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(h.engine->lines[line].counters.unsequenced, 0);
	ck_assert_uint_eq(h.engine->lines[line].counters.errors[FEED_ERR_BAD_FIELD], 1);
	harness_free(&h);
}
END_TEST

static Suite *unsequenced_suite(void)
{
	Suite *s = suite_create("unsequenced");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_the_frame_says_unsequenced_with_its_error);
	tcase_add_test(tc, test_a_proto_line_decodes_a_sequence_0_packet_and_counts_it);
	tcase_add_test(tc, test_a_feed_map_line_still_counts_it_bad_field);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(unsequenced_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
