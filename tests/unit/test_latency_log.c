/*
 * The latency log: samples recorded on the hot path end up, in order, in
 * one latency_<feed>.bin per venue with the documented header; a full
 * buffer drops and counts instead of blocking; nothing is lost silently.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feed/feed.h"
#include "book/latency_log.h"
#include "book/latency_format.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wb-latency-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[sizeof(tmpdir) + sizeof(e->d_name) + 1];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmpdir);
}

static struct latency_sample sample(uint8_t venue, uint64_t seq)
{
	struct latency_sample s;

	memset(&s, 0, sizeof(s));
	s.recv_ts = 1000000000ull * 1763700000ull + seq * 10;
	s.ring_read_ts = s.recv_ts + 100;
	s.book_applied_ts = s.recv_ts + 250;
	s.published_ts = s.recv_ts + 400;
	s.seq = seq;
	s.line = venue == WB_VENUE_NASDAQ ? 0 : 3;
	s.venue = venue;
	return s;
}

/* Reads a whole log file: header into *hdr, samples returned (malloc), count in *n. */
static struct latency_sample *read_log(const char *feed, struct latency_file_header *hdr,
				       size_t *n)
{
	char path[256];
	struct stat st;
	struct latency_sample *samples;
	FILE *f;

	snprintf(path, sizeof(path), "%s/latency_%s.bin", tmpdir, feed);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	ck_assert_int_eq(fread(hdr, sizeof(*hdr), 1, f), 1);
	ck_assert_int_eq((st.st_size - (off_t)sizeof(*hdr)) % (off_t)sizeof(struct latency_sample), 0);
	*n = (size_t)(st.st_size - (off_t)sizeof(*hdr)) / sizeof(struct latency_sample);
	samples = calloc(*n + 1, sizeof(*samples));
	ck_assert_int_eq(fread(samples, sizeof(*samples), *n, f), *n);
	fclose(f);
	return samples;
}

START_TEST(test_latency_log_writes_each_venue_to_its_own_file_in_order)
{
	struct latency_file_header hdr;
	struct latency_sample *got;
	struct latency_log *log;
	uint64_t dropped = 99;
	size_t n;

	make_tmpdir();
	log = latency_log_open(tmpdir);
	ck_assert_ptr_nonnull(log);
	for (uint64_t i = 1; i <= 1000; i++) {
		struct latency_sample s = sample(i % 3 ? WB_VENUE_NASDAQ : WB_VENUE_BZX, i);

		latency_log_record(log, &s);
	}
	ck_assert_uint_eq(latency_log_close(log, &dropped), 1000);
	ck_assert_uint_eq(dropped, 0);

	got = read_log(feed_venue_name(WB_VENUE_NASDAQ), &hdr, &n);
	ck_assert_int_eq(memcmp(hdr.magic, LATENCY_FILE_MAGIC, LATENCY_FILE_MAGIC_LEN), 0);
	ck_assert_uint_eq(hdr.version, LATENCY_FILE_VERSION);
	ck_assert_uint_eq(hdr.header_size, sizeof(hdr));
	ck_assert_uint_eq(hdr.sample_size, sizeof(struct latency_sample));
	ck_assert_uint_eq(hdr.venue, WB_VENUE_NASDAQ);
	ck_assert_uint_ne(hdr.created_ns, 0);
	ck_assert_uint_eq(n, 667);
	for (size_t i = 0, seq = 1; i < n; i++, seq++) {
		if (seq % 3 == 0)
			seq++;
		struct latency_sample want = sample(WB_VENUE_NASDAQ, seq);
		ck_assert_int_eq(memcmp(&got[i], &want, sizeof(want)), 0);
	}
	free(got);

	got = read_log(feed_venue_name(WB_VENUE_BZX), &hdr, &n);
	ck_assert_uint_eq(hdr.venue, WB_VENUE_BZX);
	ck_assert_uint_eq(n, 333);
	ck_assert_uint_eq(got[0].seq, 3);
	ck_assert_uint_eq(got[332].seq, 999);
	free(got);
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_counts_every_sample_as_written_or_dropped_under_a_burst)
{
	/* Far more than the buffer holds, faster than a 1 ms-polling writer drains. */
	const uint64_t total = 4u << 20;
	struct latency_file_header hdr;
	struct latency_sample *got;
	struct latency_log *log;
	uint64_t written, dropped;
	size_t n;

	make_tmpdir();
	log = latency_log_open(tmpdir);
	ck_assert_ptr_nonnull(log);
	for (uint64_t i = 1; i <= total; i++) {
		struct latency_sample s = sample(WB_VENUE_NASDAQ, i);

		latency_log_record(log, &s);
	}
	written = latency_log_close(log, &dropped);
	ck_assert_uint_eq(written + dropped, total);

	got = read_log(feed_venue_name(WB_VENUE_NASDAQ), &hdr, &n);
	ck_assert_uint_eq(n, written);
	/* What was kept is in order: drops remove samples, never reorder them. */
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_lt(got[i - 1].seq, got[i].seq);
	free(got);
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_drops_and_counts_samples_of_an_unknown_venue)
{
	struct latency_log *log;
	struct latency_sample s = sample(WB_VENUE_NASDAQ, 1);
	uint64_t dropped;

	make_tmpdir();
	log = latency_log_open(tmpdir);
	ck_assert_ptr_nonnull(log);
	latency_log_record(log, &s);
	s.venue = 250;
	latency_log_record(log, &s);
	ck_assert_uint_eq(latency_log_close(log, &dropped), 1);
	ck_assert_uint_eq(dropped, 1);
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_counts_samples_lost_to_a_full_disk_as_dropped_not_written)
{
	char path[128];
	struct latency_log *log;
	uint64_t written, dropped;

	make_tmpdir();
	/* Every write to /dev/full fails with ENOSPC, but only when stdio flushes. */
	snprintf(path, sizeof(path), "%s/latency_%s.bin", tmpdir, feed_venue_name(WB_VENUE_NASDAQ));
	log = latency_log_open(tmpdir);
	ck_assert_ptr_nonnull(log);
	/* After open (which clears old logs), before the first sample opens it. */
	ck_assert_int_eq(symlink("/dev/full", path), 0);
	for (uint64_t i = 1; i <= 100; i++) {
		struct latency_sample s = sample(i % 2 ? WB_VENUE_NASDAQ : WB_VENUE_BZX, i);

		latency_log_record(log, &s);
	}
	written = latency_log_close(log, &dropped);
	ck_assert_uint_eq(written, 50);		/* bzx's file is fine */
	ck_assert_uint_eq(dropped, 50);		/* nasdaq's never reached a disk */
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_open_removes_the_logs_of_an_earlier_run)
{
	const char *old[] = { "latency_bzx.bin", "latency_bzx.txt", "latency_edgx.txt" };
	char path[192];
	struct latency_log *log;
	struct latency_sample s = sample(WB_VENUE_NASDAQ, 1);
	uint64_t dropped;
	FILE *f;

	make_tmpdir();
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, old[i]);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);	/* not ours: stays */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);

	log = latency_log_open(tmpdir);
	ck_assert_ptr_nonnull(log);
	latency_log_record(log, &s);
	ck_assert_uint_eq(latency_log_close(log, &dropped), 1);
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, old[i]);
		ck_assert_msg(access(path, F_OK) != 0, "%s survived", old[i]);
	}
	snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/latency_%s.bin", tmpdir, feed_venue_name(WB_VENUE_NASDAQ));
	ck_assert_int_eq(access(path, F_OK), 0);
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_open_creates_a_missing_directory)
{
	char sub[128];
	struct latency_log *log;
	uint64_t dropped;
	struct stat st;

	make_tmpdir();
	snprintf(sub, sizeof(sub), "%s/run1", tmpdir);
	log = latency_log_open(sub);
	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(latency_log_close(log, &dropped), 0);
	ck_assert_uint_eq(dropped, 0);
	rmdir(sub);
	remove_tmpdir();
}
END_TEST

START_TEST(test_latency_log_open_refuses_a_path_that_is_a_file)
{
	char file[128];
	FILE *f;

	make_tmpdir();
	snprintf(file, sizeof(file), "%s/plain", tmpdir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	errno = 0;
	ck_assert_ptr_null(latency_log_open(file));
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_ptr_null(latency_log_open(""));
	ck_assert_int_eq(errno, EINVAL);
	remove_tmpdir();
}
END_TEST

static Suite *latency_log_suite(void)
{
	Suite *s = suite_create("latency_log");
	TCase *tc = tcase_create("latency_log");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_latency_log_writes_each_venue_to_its_own_file_in_order);
	tcase_add_test(tc, test_latency_log_counts_every_sample_as_written_or_dropped_under_a_burst);
	tcase_add_test(tc, test_latency_log_drops_and_counts_samples_of_an_unknown_venue);
	tcase_add_test(tc, test_latency_log_counts_samples_lost_to_a_full_disk_as_dropped_not_written);
	tcase_add_test(tc, test_latency_log_open_removes_the_logs_of_an_earlier_run);
	tcase_add_test(tc, test_latency_log_open_creates_a_missing_directory);
	tcase_add_test(tc, test_latency_log_open_refuses_a_path_that_is_a_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(latency_log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
