/*
 * Cboe's equities PITCH group plan (tools/common/cboe_groups.c, from the
 * exchange's dissector, docs/specs/cboe-pitch-notes.md): the market and
 * units of a group, realtime or gap, every shape; nothing for a group
 * outside it (issue 23.15: wb-dump --auto named the BYX captures BZX).
 */
#include <check.h>
#include <stdlib.h>

#include "common/cboe_groups.h"
#include "wirebook/event.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

static void expect(uint32_t ip, int venue, int first_unit)
{
	int v = -1, u = -1;

	ck_assert_msg(cboe_group_lookup(ip, &v, &u), "%u.%u.%u.%u not found", ip >> 24,
		      (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	ck_assert_int_eq(v, venue);
	ck_assert_int_eq(u, first_unit);
}

START_TEST(test_the_byx_captures_groups_are_byx_with_their_units)
{
	/* pcaps/pitch: unit 11 on .194, 15 on .195, 17 on .196, 31 on .199 */
	expect(IP(233, 209, 92, 194), WB_VENUE_BYX, 9);
	expect(IP(233, 209, 92, 195), WB_VENUE_BYX, 13);
	expect(IP(233, 209, 92, 196), WB_VENUE_BYX, 17);
	expect(IP(233, 209, 92, 199), WB_VENUE_BYX, 29);
	expect(IP(233, 209, 92, 208), WB_VENUE_BYX, 1);		/* its gap-response group */
}
END_TEST

START_TEST(test_each_market_and_shape_from_the_dissector_s_table)
{
	expect(IP(224, 0, 62, 2), WB_VENUE_BZX, 1);		/* NJ2 GIG A, u1-u4 */
	expect(IP(224, 0, 62, 30), WB_VENUE_BZX, 25);		/* its u25-u28, out of step */
	expect(IP(224, 0, 62, 33), WB_VENUE_BZX, 29);		/* gap u29-u32 */
	expect(IP(233, 209, 92, 135), WB_VENUE_BZX, 29);	/* NY5 GIG B */
	expect(IP(224, 0, 62, 206), WB_VENUE_BYX, 29);		/* NJ2 GIG A */
	expect(IP(233, 19, 3, 112), WB_VENUE_BYX, 1);		/* CH4 WAN E */
	expect(IP(224, 0, 130, 0), WB_VENUE_EDGA, 1);		/* NY5 GIG A */
	expect(IP(233, 209, 92, 55), WB_VENUE_EDGA, 29);	/* NY5 WAN D gap */
	expect(IP(224, 0, 130, 64), WB_VENUE_EDGX, 1);
	expect(IP(233, 19, 3, 79), WB_VENUE_EDGX, 29);		/* CH4 WAN E gap */
}
END_TEST

START_TEST(test_a_group_outside_the_plan_is_not_named)
{
	int v, u;

	ck_assert(!cboe_group_lookup(IP(239, 39, 62, 190), &v, &u));	/* the lab's */
	ck_assert(!cboe_group_lookup(IP(224, 0, 62, 96), &v, &u));	/* BZX Options */
	ck_assert(!cboe_group_lookup(IP(233, 209, 92, 200), &v, &u));	/* between shapes */
	ck_assert(!cboe_group_lookup(IP(224, 0, 62, 34), &v, &u));	/* past BZX NJ2 */
}
END_TEST

static Suite *cboe_groups_suite(void)
{
	Suite *s = suite_create("cboe_groups");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_the_byx_captures_groups_are_byx_with_their_units);
	tcase_add_test(tc, test_each_market_and_shape_from_the_dissector_s_table);
	tcase_add_test(tc, test_a_group_outside_the_plan_is_not_named);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cboe_groups_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
