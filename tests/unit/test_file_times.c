/*
 * The times of the file sources (tools/input/source.c): a replay at the
 * recorded pace keeps exch_ts on the capture's trading day while recv_ts
 * is now's, --skip-idle replays an idle stretch as a short one, and a
 * BinaryFILE's recv_ts is the exchange's, the same on every run, on the
 * day its name or --date gives, or on no day (never today's).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed_harness.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "input/itch_file.h"
#include "input/pcap_io.h"
#include "input/source.h"

#define ITCH_IP 0xe9360c6fu	/* 233.54.12.111:26477 */
#define ITCH_PORT 26477
#define NS_PER_DAY (86400ull * 1000000000ull)
#define HOUR_NS (3600ull * 1000000000ull)

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* Packets to a pcap file; frames from the idle_after-th on come an hour late. */
struct pcap_sink {
	struct pcap_writer w;
	uint64_t frames, idle_after;
};

static int to_pcap(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		   const uint8_t *payload, uint32_t len)
{
	struct pcap_sink *s = ctx;

	if (s->idle_after && s->frames++ >= s->idle_after)
		ts_ns += HOUR_NS;
	return pcap_writer_udp(&s->w, ts_ns, ipv4(10, 0, 0, 1), 5000, dst_ip, dst_port, payload, len);
}

/* A generated demo session of Nasdaq ITCH on day midnight_ns: a pcap
 * (path, idle_after as in struct pcap_sink) or, with file, a BinaryFILE. */
static void write_session(const char *path, uint64_t midnight_ns, uint64_t idle_after, bool file)
{
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DEMO, .seed = 3, .messages = 2000 };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_itch *gi = calloc(1, sizeof(*gi));
	struct itch_file *f = calloc(1, sizeof(*f));
	struct pcap_sink sink = { .idle_after = idle_after };
	struct gen_itch_config ic;
	struct gen_action a;
	char err[PCAP_IO_ERR_LEN];

	ck_assert_int_eq(gen_flow_init(flow, &fc), 0);
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "TIMES00001", 10);
	ic.midnight_ns = midnight_ns;
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	if (file) {
		ck_assert_int_eq(itch_file_open_write(f, path, false, err, sizeof(err)), 0);
		ic.file = f;
	} else {
		ck_assert_int_eq(pcap_writer_open(&sink.w, path, err, sizeof(err)), 0);
		ic.sink.packet = to_pcap;
		ic.sink.ctx = &sink;
	}
	gen_itch_init(gi, &ic);
	while (gen_flow_next(flow, &a) == 1)
		ck_assert_int_eq(gen_itch_action(gi, flow, &a), 0);
	ck_assert_int_eq(gen_itch_finish(gi, flow->ts), 0);
	if (file)
		ck_assert_int_eq(itch_file_close(f, err, sizeof(err)), 0);
	else
		ck_assert_int_eq(pcap_writer_close(&sink.w, err, sizeof(err)), 0);
	gen_flow_destroy(flow);
	free(flow);
	free(gi);
	free(f);
}

/*
 * Run a source over its file into h (an ITCH nasdaq line, '*') until it
 * ends or max_pumps pumps went by; returns the last status.
 */
static int run_source(struct harness *h, const struct source_ops *ops, struct source_options *opt,
		      struct source *src, long max_pumps)
{
	int st = SOURCE_MORE;

	harness_init(h, HARNESS_RING_SLOTS);
	opt->line = feed_map_add(h->engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(opt->line, 0);
	ck_assert_int_ge(feed_subscribe(h->engine, "*", 1), 0);
	ck_assert_int_eq(source_open(src, ops, opt), 0);
	for (long i = 0; i < max_pumps && st != SOURCE_EOF && st != SOURCE_ERROR; i++) {
		st = source_pump(src, h->engine, &h->prod, 64);
		harness_drain(h);
	}
	return st;
}

START_TEST(test_pcap_at_speed_keeps_exch_ts_on_the_capture_day_and_recv_ts_now)
{
	uint64_t midnight = feed_et_midnight_of_date(2023, 11, 3), started = test_realtime_ns();
	struct source_options opt = { .path = tmp_path("day.pcap"), .speed = 1e6 };
	struct source src;
	struct harness h;

	write_session(opt.path, midnight, 0, false);
	ck_assert_int_eq(run_source(&h, &source_pcap_ops, &opt, &src, 10000000), SOURCE_EOF);
	ck_assert_uint_gt(h.n, 1000);
	for (size_t i = 0; i < h.n; i++) {
		if (!h.events[i].exch_ts)
			continue;	/* a gap or clear of no message */
		ck_assert_msg(h.events[i].exch_ts >= midnight && h.events[i].exch_ts < midnight + NS_PER_DAY,
			      "event %zu: exch_ts %llu off the capture's day", i,
			      (unsigned long long)h.events[i].exch_ts);
		ck_assert_uint_ge(h.events[i].recv_ts, started);
	}
	source_close(&src);
	harness_free(&h);
}
END_TEST

START_TEST(test_pcap_at_speed_skip_idle_replays_an_hour_of_silence_short)
{
	struct source_options opt = {
		.path = tmp_path("idle.pcap"), .speed = 1000, .skip_idle_ns = 1000000,
	};
	struct source src;
	struct harness h;
	uint64_t frames;

	/* The demo session, ~25 s, at 1000x, the hour after its third frame
	 * replayed as 1 ms: it ends. */
	write_session(opt.path, feed_et_midnight_of_date(2023, 11, 3), 3, false);
	ck_assert_int_eq(run_source(&h, &source_pcap_ops, &opt, &src, 100000000), SOURCE_EOF);
	frames = src.ctr.packets;
	source_close(&src);
	harness_free(&h);
	ck_assert_uint_gt(frames, 100);

	/* Without it, at the recorded pace, the fourth frame is an hour away:
	 * the pumps (each waits 0.1 ms or so) never reach it. */
	opt.skip_idle_ns = 0;
	opt.speed = 1;
	ck_assert_int_eq(run_source(&h, &source_pcap_ops, &opt, &src, 20000), SOURCE_MORE);
	ck_assert_uint_le(src.ctr.packets, 3);
	ck_assert_uint_gt(src.ctr.packets, 0);
	source_close(&src);
	harness_free(&h);
}
END_TEST

/* Every event of a BinaryFILE run through the itch-file source. */
static void read_binaryfile(struct harness *h, const char *path, const int date[3])
{
	struct source_options opt = { .path = path };
	struct source src;

	memcpy(opt.date, date, sizeof(opt.date));
	ck_assert_int_eq(run_source(h, &source_itch_file_ops, &opt, &src, 10000000), SOURCE_EOF);
	ck_assert_ptr_nonnull(src.recv_ts_note);
	source_close(&src);
	ck_assert_uint_gt(h->n, 1000);
}

START_TEST(test_binaryfile_recv_ts_is_the_exchange_time_the_same_on_every_run)
{
	static const int no_date[3] = { 0, 0, 0 };
	uint64_t midnight = feed_et_midnight_of_date(2019, 1, 30);
	const char *path = tmp_path("01302019.NASDAQ_ITCH50");
	struct harness a, b;

	write_session(path, 0, 0, true);
	read_binaryfile(&a, path, no_date);
	read_binaryfile(&b, path, no_date);
	ck_assert_uint_eq(a.n, b.n);
	ck_assert_msg(memcmp(a.events, b.events, a.n * sizeof(a.events[0])) == 0,
		      "two runs over one BinaryFILE gave different events");
	for (size_t i = 0; i < a.n; i++) {
		const struct wb_event *e = &a.events[i];

		ck_assert_uint_ge(e->recv_ts, midnight);
		ck_assert_uint_lt(e->recv_ts, midnight + NS_PER_DAY);
		if (e->exch_ts)
			ck_assert_uint_ge(e->recv_ts, e->exch_ts);
		if (i)
			ck_assert_uint_ge(e->recv_ts, a.events[i - 1].recv_ts);
	}
	harness_free(&a);
	harness_free(&b);
}
END_TEST

START_TEST(test_binaryfile_day_is_the_date_given_else_the_name_else_none_never_today)
{
	static const int no_date[3] = { 0, 0, 0 }, given[3] = { 2020, 3, 4 };
	uint64_t named = feed_et_midnight_of_date(2019, 1, 30), dated = feed_et_midnight_of_date(2020, 3, 4);
	struct harness h;
	size_t checked = 0;

	write_session(tmp_path("01302019.NASDAQ_ITCH50"), 0, 0, true);
	write_session(tmp_path("day.itch"), 0, 0, true);
	read_binaryfile(&h, tmp_path("01302019.NASDAQ_ITCH50"), given);
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].exch_ts) {
			ck_assert_uint_ge(h.events[i].exch_ts, dated);
			ck_assert_uint_lt(h.events[i].exch_ts, dated + NS_PER_DAY);
			checked++;
		}
	harness_free(&h);
	read_binaryfile(&h, tmp_path("day.itch"), no_date);
	for (size_t i = 0; i < h.n; i++) {
		ck_assert_uint_lt(h.events[i].exch_ts, NS_PER_DAY);
		ck_assert_uint_lt(h.events[i].recv_ts, NS_PER_DAY);
	}
	harness_free(&h);
	ck_assert_uint_gt(checked, 1000);
	ck_assert_uint_ne(named, dated);
}
END_TEST

START_TEST(test_engine_trading_day_of_a_time_refuses_what_is_no_wall_clock)
{
	struct harness h;

	harness_init(&h, HARNESS_RING_SLOTS);
	ck_assert_int_eq(feed_engine_set_trading_day_of(h.engine, 5 * HOUR_NS), -FEED_EINVAL);
	/* 2023-11-03 23:30 ET is 2023-11-04 03:30 UTC: the ET day counts. */
	ck_assert_int_eq(feed_engine_set_trading_day_of(h.engine,
							 feed_et_midnight_of_date(2023, 11, 3) + 23 * HOUR_NS +
								 HOUR_NS / 2), 0);
	ck_assert_uint_eq(h.engine->trading_day_ns, feed_et_midnight_of_date(2023, 11, 3));
	harness_free(&h);
}
END_TEST

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wb-file-times-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

int main(void)
{
	Suite *s = suite_create("file_times");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pcap_at_speed_keeps_exch_ts_on_the_capture_day_and_recv_ts_now);
	tcase_add_test(tc, test_pcap_at_speed_skip_idle_replays_an_hour_of_silence_short);
	tcase_add_test(tc, test_binaryfile_recv_ts_is_the_exchange_time_the_same_on_every_run);
	tcase_add_test(tc, test_binaryfile_day_is_the_date_given_else_the_name_else_none_never_today);
	tcase_add_test(tc, test_engine_trading_day_of_a_time_refuses_what_is_no_wall_clock);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
