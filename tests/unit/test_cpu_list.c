/*
 * CPU lists in the kernel's text form: what isolcpus=, sysfs and --cpus
 * options write parses to the right set and prints back canonically.
 */
#include <check.h>
#include <stdlib.h>

#include "common/cpu_list.h"

START_TEST(test_cpu_list_parses_ranges_and_singles)
{
	struct cpu_list l;
	char buf[64];

	ck_assert_int_eq(cpu_list_parse("0-3,8,10-11\n", &l), 0);
	ck_assert_uint_eq(cpu_list_count(&l), 7);
	ck_assert(cpu_list_has(&l, 3) && cpu_list_has(&l, 8) && !cpu_list_has(&l, 9));
	ck_assert_str_eq(cpu_list_format(&l, buf, sizeof(buf)), "0-3,8,10-11");
}
END_TEST

START_TEST(test_cpu_list_sysfs_empty_forms_are_the_empty_list)
{
	struct cpu_list l;
	char buf[8];

	ck_assert_int_eq(cpu_list_parse("\n", &l), 0);
	ck_assert_uint_eq(cpu_list_count(&l), 0);
	ck_assert_int_eq(cpu_list_parse("(null)\n", &l), 0);
	ck_assert_uint_eq(cpu_list_count(&l), 0);
	ck_assert_str_eq(cpu_list_format(&l, buf, sizeof(buf)), "");
}
END_TEST

START_TEST(test_cpu_list_refuses_malformed_text)
{
	struct cpu_list l;

	ck_assert_int_eq(cpu_list_parse("3-1", &l), -1);
	ck_assert_int_eq(cpu_list_parse("1,,2", &l), -1);
	ck_assert_int_eq(cpu_list_parse("a", &l), -1);
	ck_assert_int_eq(cpu_list_parse("1-", &l), -1);
	ck_assert_int_eq(cpu_list_parse("2 x", &l), -1);
	ck_assert_int_eq(cpu_list_parse("4096", &l), -1);
}
END_TEST

START_TEST(test_cpu_list_set_operations)
{
	struct cpu_list a, b, d;
	char buf[64];

	cpu_list_parse("0-7", &a);
	cpu_list_parse("2-3", &b);
	ck_assert(cpu_list_subset(&b, &a));
	ck_assert(!cpu_list_subset(&a, &b));
	ck_assert(cpu_list_intersects(&a, &b));
	cpu_list_minus(&d, &a, &b);
	ck_assert_str_eq(cpu_list_format(&d, buf, sizeof(buf)), "0-1,4-7");
	ck_assert(!cpu_list_intersects(&d, &b));
}
END_TEST

START_TEST(test_cpu_list_format_cuts_at_a_whole_range)
{
	struct cpu_list l;
	char buf[8];

	cpu_list_parse("0-3,100-103,200", &l);
	ck_assert_str_eq(cpu_list_format(&l, buf, sizeof(buf)), "0-3");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu_list");
	TCase *tc = tcase_create("cpu_list");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_cpu_list_parses_ranges_and_singles);
	tcase_add_test(tc, test_cpu_list_sysfs_empty_forms_are_the_empty_list);
	tcase_add_test(tc, test_cpu_list_refuses_malformed_text);
	tcase_add_test(tc, test_cpu_list_set_operations);
	tcase_add_test(tc, test_cpu_list_format_cuts_at_a_whole_range);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
