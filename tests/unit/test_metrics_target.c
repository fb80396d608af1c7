/*
 * wirebookd --metrics-file (tools/common/metrics_target.c, issue 23.14):
 * the Prometheus file_sd target list naming where an instance's metrics
 * listen, its book as a label (escaped as JSON), written whole; a file
 * that cannot be written is an error naming it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/metrics_target.h"

static char *slurp(const char *path)
{
	static char buf[512];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

START_TEST(test_the_target_list_names_the_address_and_the_book)
{
	char dir[] = "/tmp/wb-metrics-target-XXXXXX", path[256], tmp[300], err[256] = "";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/metrics.json", dir);
	ck_assert_int_eq(metrics_target_write(path, "127.0.0.1:40123", "wirebook-main", err,
					      sizeof(err)), 0);
	ck_assert_str_eq(slurp(path), "[{\"targets\": [\"127.0.0.1:40123\"], \"labels\": "
			 "{\"book\": \"wirebook-main\"}}]\n");
	/* A book name is any text without a '/': quoted as JSON. */
	ck_assert_int_eq(metrics_target_write(path, "127.0.0.1:1", "a\"b\\c", err, sizeof(err)), 0);
	ck_assert_str_eq(slurp(path), "[{\"targets\": [\"127.0.0.1:1\"], \"labels\": "
			 "{\"book\": \"a\\\"b\\\\c\"}}]\n");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_ne(access(tmp, F_OK), 0);	/* renamed over, nothing left beside it */
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_a_file_that_cannot_be_written_is_named)
{
	char err[256] = "";

	ck_assert_int_eq(metrics_target_write("/nonexistent-dir/metrics.json", "127.0.0.1:1", "b",
					      err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/nonexistent-dir/metrics.json") != NULL, "%s", err);
}
END_TEST

static Suite *metrics_target_suite(void)
{
	Suite *s = suite_create("metrics_target");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_the_target_list_names_the_address_and_the_book);
	tcase_add_test(tc, test_a_file_that_cannot_be_written_is_named);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(metrics_target_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
