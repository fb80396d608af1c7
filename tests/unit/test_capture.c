/*
 * tools/input/capture: a whole input in memory, replayed through the feed
 * engine. Whatever the file's form (pcap, BinaryFILE plain or gzip), the
 * replay must produce the events decoding the file directly produces.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed_harness.h"
#include "input/capture.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "input/itch_file.h"

#define ITCH_IP 0xe9360c6fu	/* 233.54.12.111:26477, the real captures' group */
#define ITCH_PORT 26477

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* A generated demo session as a BinaryFILE; returns its message count. */
static uint64_t write_day(const char *path, bool gzip)
{
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DEMO, .seed = 3, .messages = 3000 };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_itch *gi = calloc(1, sizeof(*gi));
	struct itch_file *f = calloc(1, sizeof(*f));
	struct gen_itch_config ic;
	struct gen_action a;
	char err[ITCH_FILE_ERR_LEN];
	uint64_t n;

	ck_assert_int_eq(gen_flow_init(flow, &fc), 0);
	ck_assert_int_eq(itch_file_open_write(f, path, gzip, err, sizeof(err)), 0);
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "CAPTURE001", 10);
	ic.file = f;
	gen_itch_init(gi, &ic);
	while (gen_flow_next(flow, &a) == 1)
		ck_assert_int_eq(gen_itch_action(gi, flow, &a), 0);
	ck_assert_int_eq(gen_itch_finish(gi, flow->ts), 0);
	n = f->messages;
	ck_assert_int_eq(itch_file_close(f, err, sizeof(err)), 0);
	gen_flow_destroy(flow);
	free(flow);
	free(gi);
	free(f);
	return n;
}

/* Replay c through a fresh harness (nasdaq itch line 0, '*'); events out. */
static size_t replay(const struct capture *c, struct harness *h)
{
	int line;

	harness_init(h, HARNESS_RING_SLOTS);
	line = feed_map_add(h->engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h->engine, "*", 1), 0);
	for (uint64_t p = 0; p < c->count; p++) {
		capture_replay(c, p, p + 1, line, h->engine, &h->prod);
		harness_drain(h);
	}
	return h->n;
}

static void assert_same_events(const struct harness *a, const struct harness *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		struct wb_event x = a->events[i], y = b->events[i];

		x.recv_ts = y.recv_ts = 0;
		ck_assert_msg(memcmp(&x, &y, sizeof(x)) == 0, "event %zu differs", i);
	}
}

START_TEST(test_capture_binaryfile_plain_and_gzip_replay_every_message_in_order)
{
	struct capture plain, gz;
	struct harness hp, hg;
	char err[CAPTURE_ERR_LEN];
	uint64_t messages = write_day(tmp_path("day.itch"), false), sent = 0;

	ck_assert_uint_eq(write_day(tmp_path("day.itch.gz"), true), messages);
	ck_assert_int_eq(capture_load(&plain, tmp_path("day.itch"), 0, err, sizeof(err)), 0);
	ck_assert_int_eq(capture_load(&gz, tmp_path("day.itch.gz"), 0, err, sizeof(err)), 0);
	ck_assert_str_eq(plain.format, "itch-file");
	ck_assert_str_eq(gz.format, "itch-file.gz");
	ck_assert_int_eq(plain.kind, CAPTURE_PAYLOADS);
	ck_assert_uint_eq(plain.file_messages, messages);
	ck_assert_uint_eq(gz.file_messages, messages);
	/* MoldUDP64 packets of at most 64 messages, numbered without a hole,
	 * one microsecond apart. */
	for (uint64_t p = 0; p < plain.count; p++) {
		const uint8_t *pkt = plain.bytes + plain.packets[p].offset;
		uint64_t seq = 0;
		unsigned count = (unsigned)pkt[18] << 8 | pkt[19];

		for (int k = 10; k < 18; k++)
			seq = seq << 8 | pkt[k];
		ck_assert_uint_eq(seq, sent + 1);
		ck_assert_uint_le(count, ITCH_FILE_PACKET_MESSAGES);
		ck_assert_uint_gt(count, 0);
		if (p)
			ck_assert_uint_eq(plain.packets[p].recv_ts - plain.packets[p - 1].recv_ts, 1000);
		sent += count;
	}
	ck_assert_uint_eq(sent, messages);
	ck_assert_uint_gt(replay(&plain, &hp), 3000);
	replay(&gz, &hg);
	assert_same_events(&hp, &hg);
	ck_assert_uint_eq(hp.engine->lines[0].counters.messages, messages);
	ck_assert_uint_eq(hp.engine->lines[0].counters.gaps, 0);
	harness_free(&hp);
	harness_free(&hg);
	capture_free(&plain);
	capture_free(&gz);
}
END_TEST

START_TEST(test_capture_pcap_replays_the_events_of_the_file)
{
	struct capture c;
	struct harness direct, replayed;
	char err[CAPTURE_ERR_LEN];

	harness_init(&direct, HARNESS_RING_SLOTS);
	ck_assert_int_ge(feed_map_add(direct.engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A"), 0);
	ck_assert_int_ge(feed_subscribe(direct.engine, "*", 1), 0);
	ck_assert_int_eq(harness_pcap(&direct, "pcaps/itch50/Multiple.Packets.pcap"), 2);

	/* A pcap is recognised by its bytes, not its name, and needs no ITCH line. */
	ck_assert_int_eq(capture_load(&c, "pcaps/itch50/Multiple.Packets.pcap", -1, err, sizeof(err)), 0);
	ck_assert_str_eq(c.format, "pcap");
	ck_assert_int_eq(c.kind, CAPTURE_FRAMES);
	ck_assert_uint_eq(c.count, 2);
	ck_assert_uint_gt(replay(&c, &replayed), 30);
	assert_same_events(&direct, &replayed);
	harness_free(&direct);
	harness_free(&replayed);
	capture_free(&c);
}
END_TEST

START_TEST(test_capture_says_why_it_cannot_load_a_file)
{
	struct capture c;
	char err[CAPTURE_ERR_LEN], cmd[512];
	FILE *f;

	ck_assert_int_eq(capture_load(&c, tmp_path("missing"), 0, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));

	/* Not a pcap: a BinaryFILE, which needs an ITCH line to decode as. */
	write_day(tmp_path("plain.itch"), false);
	ck_assert_int_eq(capture_load(&c, tmp_path("plain.itch"), -1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "itch nasdaq"));

	/* A compressed pcap is refused with the remedy, not misread as ITCH. */
	snprintf(cmd, sizeof(cmd), "gzip -c pcaps/itch50/Multiple.Packets.pcap > %s", tmp_path("x.pcap.gz"));
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(capture_load(&c, tmp_path("x.pcap.gz"), 0, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "gunzip"));

	/* A BinaryFILE cut inside a message: the error names the message. */
	f = fopen(tmp_path("cut.itch"), "wb");
	fwrite("\x00\x03" "abc" "\x00\x05" "ab", 1, 9, f);
	fclose(f);
	ck_assert_int_eq(capture_load(&c, tmp_path("cut.itch"), 0, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "inside message 2"));
}
END_TEST

START_TEST(test_itch_file_packet_before_the_damage_comes_first_then_the_error)
{
	struct itch_file *f = malloc(sizeof(*f));
	uint8_t *pkt = malloc(ITCH_FILE_PACKET_MAX);
	char err[ITCH_FILE_ERR_LEN];
	uint64_t seq = 1;
	FILE *raw = fopen(tmp_path("damaged.itch"), "wb");

	fwrite("\x00\x03" "abc" "\x00\x02" "de" "\x00\x05" "ab", 1, 13, raw);
	fclose(raw);
	ck_assert_int_eq(itch_file_open_read(f, tmp_path("damaged.itch"), err, sizeof(err)), 0);
	ck_assert_int_eq(itch_file_next_packet(f, pkt, &seq, err, sizeof(err)), 20 + 5 + 4);
	ck_assert_uint_eq(pkt[19], 2);
	ck_assert_uint_eq(seq, 3);
	ck_assert_int_eq(itch_file_next_packet(f, pkt, &seq, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "inside message 3"));
	itch_file_close(f, err, sizeof(err));
	free(f);
	free(pkt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("capture");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	/* Made here, not in a test: Check runs each test in a child process. */
	strcpy(tmpdir, "/tmp/wb-test-capture-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_capture_binaryfile_plain_and_gzip_replay_every_message_in_order);
	tcase_add_test(tc, test_capture_pcap_replays_the_events_of_the_file);
	tcase_add_test(tc, test_capture_says_why_it_cannot_load_a_file);
	tcase_add_test(tc, test_itch_file_packet_before_the_damage_comes_first_then_the_error);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			failed++;
	}
	return failed ? 1 : 0;
}
