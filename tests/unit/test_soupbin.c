/*
 * SoupBinTCP 4.0 and GLIMPSE 5.0 (lib/recovery/soupbin.c): golden byte
 * vectors written from the specs (docs/specs/soupbintcp-glimpse-notes.md),
 * the glimpse lines of recovery.conf, and the snapshot client against
 * wb-recoveryd's GLIMPSE server on loopback: a late join is taken by
 * snapshot, the snapshot's book is the served one, the buffered real time
 * after it is applied, and a refused login ends as a GAP, not a hang.
 */
#include <check.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feed_harness.h"
#include "sim/glimpse_server.h"
#include "recovery/recovery.h"
#include "recovery/recovery_snapshot.h"
#include "recovery/soupbin.h"
#include "recovery_conf_harness.h"
#include "test_util.h"

/* ---- golden vectors ------------------------------------------------------- */

static void assert_bytes(const uint8_t *got, size_t n, const char *hex)
{
	uint8_t want[256];
	size_t wn = harness_unhex(hex, want, sizeof(want));

	ck_assert_uint_eq(n, wn);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "byte %zu: got %02x, want %02x", i, got[i], want[i]);
}

START_TEST(test_login_request_pads_alpha_right_and_numeric_left_to_the_spec_widths)
{
	uint8_t b[64];
	size_t n = soup_login_request(b, "WB01", "secret", "", 1);

	/* length 0x002f (type + 46), 'L', username(6) "WB01  ", password(10)
	 * "secret    ", requested session(10) blank, requested sequence(20)
	 * right-justified "1". */
	assert_bytes(b, n,
		     "002f" "4c"
		     "574230312020"
		     "73656372657420202020"
		     "20202020202020202020"
		     "2020202020202020202020202020202020202031");
}
END_TEST

START_TEST(test_login_accepted_and_rejected_and_empty_packets_match_the_spec)
{
	uint8_t b[64];

	assert_bytes(b, soup_login_accepted(b, "WBGEN00011", 46101),
		     "001f" "41" "574247454e3030303131"
		     "2020202020202020202020202020203436313031");
	assert_bytes(b, soup_login_rejected(b, SOUP_REJECT_NOT_AUTHORIZED), "0002" "4a" "41");
	assert_bytes(b, soup_login_rejected(b, SOUP_REJECT_SESSION_UNAVAILABLE), "0002" "4a" "53");
	assert_bytes(b, soup_empty(b, SOUP_SERVER_HEARTBEAT), "0001" "48");
	assert_bytes(b, soup_empty(b, SOUP_CLIENT_HEARTBEAT), "0001" "52");
	assert_bytes(b, soup_empty(b, SOUP_END_OF_SESSION), "0001" "5a");
	assert_bytes(b, soup_empty(b, SOUP_LOGOUT_REQUEST), "0001" "4f");
}
END_TEST

START_TEST(test_end_of_snapshot_is_g_and_twenty_ascii_digits)
{
	uint8_t m[32];
	uint64_t seq = 0;

	assert_bytes(m, glimpse_put_end_of_snapshot(m, 46101),
		     "47" "2020202020202020202020202020203436313031");
	ck_assert_int_eq(glimpse_end_of_snapshot(m, GLIMPSE_END_OF_SNAPSHOT_LEN, &seq), 0);
	ck_assert_uint_eq(seq, 46101);
	/* Not one: another type, another length, a digit field with a hole in it. */
	ck_assert_int_lt(glimpse_end_of_snapshot(m, GLIMPSE_END_OF_SNAPSHOT_LEN - 1, &seq), 0);
	m[0] = 'A';
	ck_assert_int_lt(glimpse_end_of_snapshot(m, GLIMPSE_END_OF_SNAPSHOT_LEN, &seq), 0);
	m[0] = 'G';
	m[18] = ' ';
	ck_assert_int_lt(glimpse_end_of_snapshot(m, GLIMPSE_END_OF_SNAPSHOT_LEN, &seq), 0);
}
END_TEST

/* The UTP Snap-Shot message: a UQDF header from the SIP ('E'), then the sequence, u64. */
START_TEST(test_utp_snapshot_message_is_a_uqdf_header_then_the_sequence)
{
	uint8_t m[UTP_SNAPSHOT_LEN + 1];
	uint64_t seq = 0;

	assert_bytes(m, utp_put_snapshot_end(m, 46101, 1473960417922876842ull),
		     "31" "53" "53" "45" "20" "14748f30d34785aa" "0000000000000000"
		     "0000000000000000" "000000000000b415");
	ck_assert_int_eq(utp_snapshot_end(m, UTP_SNAPSHOT_LEN, &seq), 0);
	ck_assert_uint_eq(seq, 46101);
	/* Not one: another length, version, category or type (a UQDF quote is not one). */
	ck_assert_int_lt(utp_snapshot_end(m, UTP_SNAPSHOT_LEN - 1, &seq), 0);
	ck_assert_int_lt(utp_snapshot_end(m, UTP_SNAPSHOT_LEN + 1, &seq), 0);
	m[0] = '2';
	ck_assert_int_lt(utp_snapshot_end(m, UTP_SNAPSHOT_LEN, &seq), 0);
	m[0] = '1';
	m[1] = 'Q';
	ck_assert_int_lt(utp_snapshot_end(m, UTP_SNAPSHOT_LEN, &seq), 0);
	m[1] = 'S';
	m[2] = 'E';
	ck_assert_int_lt(utp_snapshot_end(m, UTP_SNAPSHOT_LEN, &seq), 0);
}
END_TEST

START_TEST(test_soup_next_waits_for_a_whole_packet_and_refuses_length_zero)
{
	uint8_t b[] = { 0x00, 0x03, 'S', 'x', 'y', 0x00, 0x01, 'H', 0x00, 0x00 };
	uint8_t type = 0;
	const uint8_t *p;
	size_t plen = 0;

	ck_assert_int_eq(soup_next(b, 1, &type, &p, &plen), 0);
	ck_assert_int_eq(soup_next(b, 4, &type, &p, &plen), 0);
	ck_assert_int_eq(soup_next(b, sizeof(b), &type, &p, &plen), 5);
	ck_assert_int_eq(type, 'S');
	ck_assert_uint_eq(plen, 2);
	ck_assert_int_eq(p[0], 'x');
	ck_assert_int_eq(soup_next(b + 5, 3, &type, &p, &plen), 3);
	ck_assert_int_eq(type, 'H');
	ck_assert_uint_eq(plen, 0);
	ck_assert_int_lt(soup_next(b + 8, 2, &type, &p, &plen), 0);
}
END_TEST

START_TEST(test_numeric_field_takes_leading_spaces_only)
{
	uint64_t v = 7;

	ck_assert_int_eq(soup_get_numeric((const uint8_t *)"   42", 5, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_lt(soup_get_numeric((const uint8_t *)"  4 2", 5, &v), 0);
	ck_assert_int_lt(soup_get_numeric((const uint8_t *)"42   ", 5, &v), 0);
	ck_assert_int_lt(soup_get_numeric((const uint8_t *)"     ", 5, &v), 0);
}
END_TEST

/* ---- recovery.conf -------------------------------------------------------- */

START_TEST(test_conf_takes_a_glimpse_line_beside_mold_with_its_policy)
{
	struct recovery_conf_entry e[RECOVERY_MAX_SERVICES];
	char err[256] = "";

	ck_assert_int_eq(conf_of("nasdaq mold 127.0.0.1:9000\n"
				 "nasdaq glimpse 127.0.0.1:9001 user=WB0001 password=pw "
				 "max-gap=500 max-age=250\n", e, err, sizeof(err)), 2);
	ck_assert_str_eq(e[1].service->name, "glimpse");
	ck_assert_str_eq(e[1].user, "WB0001");
	ck_assert_uint_eq(e[1].max_gap, 500);
	ck_assert_uint_eq(e[1].max_age_ms, 250);
	ck_assert_uint_eq(e[1].timeout_ms, RECOVERY_SNAPSHOT_TIMEOUT_MS);
	ck_assert_uint_eq(e[1].retries, RECOVERY_SNAPSHOT_RETRIES);
	ck_assert_int_eq(conf_of("nasdaq glimpse 127.0.0.1:9001\n", e, err, sizeof(err)), 1);
	ck_assert_uint_eq(e[0].max_gap, RECOVERY_DEFAULT_MAX_GAP);
	ck_assert_uint_eq(e[0].max_age_ms, RECOVERY_DEFAULT_MAX_AGE_MS);
}
END_TEST

START_TEST(test_conf_takes_a_utpsnap_line_beside_a_uqdf_channel_s_mold)
{
	struct recovery_conf_entry e[RECOVERY_MAX_SERVICES];
	char err[256] = "";

	ck_assert_int_eq(conf_of("uqdf mold 127.0.0.1:9000 channel=1\n"
				 "uqdf utpsnap 127.0.0.1:9001 channel=1 user=WB0001 password=pw "
				 "max-gap=0\n", e, err, sizeof(err)), 2);
	ck_assert_str_eq(e[1].service->name, "utpsnap");
	ck_assert_int_eq(e[1].channel, 1);
	ck_assert_str_eq(e[1].password, "pw");
	ck_assert_uint_eq(e[1].max_gap, UINT64_MAX);
	ck_assert_uint_eq(e[1].timeout_ms, RECOVERY_SNAPSHOT_TIMEOUT_MS);
	ck_assert(recovery_service_serves(recovery_service_named("utpsnap"), FEED_PROTO_UQDF));
	ck_assert(recovery_service_serves(recovery_service_named("glimpse"), FEED_PROTO_ITCH50));
	/* One snapshot service a stream: glimpse and utpsnap are both. */
	assert_conf_refused("uqdf utpsnap 127.0.0.1:9001\nuqdf glimpse 127.0.0.1:9002\n",
			    ":2: a second snapshot service");
}
END_TEST

START_TEST(test_conf_refuses_a_second_snapshot_service_and_misplaced_keys)
{
	assert_conf_refused("nasdaq glimpse 127.0.0.1:9001\nnasdaq glimpse 127.0.0.1:9002\n",
			    ":2: a second snapshot service");
	assert_conf_refused("nasdaq mold 127.0.0.1:9000 max-gap=5\n", "only a snapshot service");
	assert_conf_refused("nasdaq glimpse 127.0.0.1:9001 user=TOOLONG\n", "at most 6");
	assert_conf_refused("nasdaq glimpse 127.0.0.1:9001 gap=127.0.0.1:5\n",
			    "only a grp service takes gap=");
}
END_TEST

/* ---- the client against the server ------------------------------------------ */

#define LOCATE 7
#define DAY 9		/* messages of the served day */

static uint8_t day_bytes[DAY][40];
static uint16_t day_len[DAY];
static uint64_t day_off[DAY];

static uint8_t *itch(int seq, char type, uint16_t len)
{
	uint8_t *m = day_bytes[seq - 1];

	memset(m, 0, sizeof(day_bytes[0]));
	m[0] = (uint8_t)type;
	wire_put_be16(m + 1, LOCATE);
	wire_put_be48(m + 5, 34200000000000ull + (uint64_t)seq);
	day_len[seq - 1] = len;
	return m;
}

static void add(int seq, uint64_t ref, char side, uint32_t shares, uint32_t price)
{
	uint8_t *m = itch(seq, 'A', 36);

	wire_put_be64(m + 11, ref);
	m[19] = (uint8_t)side;
	wire_put_be32(m + 20, shares);
	put_text(m + 24, "SNAP", 8);
	wire_put_be32(m + 32, price);
}

/*
 * 1 R SNAP, 2 add 1, 3 add 2, 4 execute 40 of 1, 5 delete 2, 6 add 3,
 * 7 replace 3 by 4, 8 add 5, 9 add 6. The snapshot is taken after 6.
 */
static void make_day(void)
{
	uint8_t *m = itch(1, 'R', 39);

	put_text(m + 11, "SNAP", 8);
	m[19] = 'Q';
	wire_put_be32(m + 21, 100);
	add(2, 1, 'B', 100, 1000000);
	add(3, 2, 'S', 200, 1010000);
	m = itch(4, 'E', 31);
	wire_put_be64(m + 11, 1);
	wire_put_be32(m + 19, 40);
	wire_put_be64(m + 23, 77);
	m = itch(5, 'D', 19);
	wire_put_be64(m + 11, 2);
	add(6, 3, 'S', 300, 1020000);
	m = itch(7, 'U', 35);
	wire_put_be64(m + 11, 3);
	wire_put_be64(m + 19, 4);
	wire_put_be32(m + 27, 250);
	wire_put_be32(m + 31, 1030000);
	add(8, 5, 'B', 10, 990000);
	add(9, 6, 'B', 20, 980000);
	for (int i = 0; i < DAY; i++)
		day_off[i] = (uint64_t)i * sizeof(day_bytes[0]);
}

static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

struct server {
	pthread_t thread;
	struct glimpse_source src;
	struct glimpse_opts o;
	uint16_t port;
	volatile sig_atomic_t stop;
};

static void *serve(void *arg)
{
	struct server *s = arg;

	glimpse_serve(0x7f000001, s->port, &s->src, &s->o, &s->stop);
	return NULL;
}

static void server_start_at(struct server *s, const char *password, uint64_t at)
{
	memset(s, 0, sizeof(*s));
	make_day();
	s->src = (struct glimpse_source){ .session = "SNAPTEST01", .end = DAY + 1, .cap = DAY,
					  .off = day_off, .len = day_len,
					  .bytes = &day_bytes[0][0] };
	s->o = (struct glimpse_opts){ .snapshot_at = at, .user = "WB0001", .password = password };
	s->port = free_port();
	ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_start(struct server *s, const char *password)
{
	server_start_at(s, password, 6);
}

static void server_stop(struct server *s)
{
	s->stop = 1;
	pthread_join(s->thread, NULL);
}

/* Real time from sequence first on, one message a packet, as the line delivers it. */
static void real_time(struct harness *h, int line, int first, int last)
{
	for (int q = first; q <= last; q++) {
		uint8_t p[80];

		memcpy(p, "SNAPTEST01", 10);
		wire_put_be64(p + 10, (uint64_t)q);
		wire_put_be16(p + 18, 1);
		wire_put_be16(p + 20, day_len[q - 1]);
		memcpy(p + 22, day_bytes[q - 1], day_len[q - 1]);
		harness_payload(h, line, p, 22u + day_len[q - 1]);
	}
}

/*
 * The stream's services: glimpse on port, and when mold_retries, a Mold
 * re-request service that never answers (the discard port) beside it.
 */
static struct recovery_client *client_with(struct harness *h, uint16_t port, uint64_t max_gap,
					   uint32_t max_age_ms, uint32_t mold_retries)
{
	struct recovery_conf_entry en[2] = { {
		.venue = WB_VENUE_NASDAQ, .channel = -1, .service = recovery_service_named("glimpse"),
		.ip = 0x7f000001, .port = port, .timeout_ms = 2000, .retries = 2,
		.user = "WB0001", .password = "pw", .max_gap = max_gap, .max_age_ms = max_age_ms,
	}, {
		.venue = WB_VENUE_NASDAQ, .channel = -1, .service = recovery_service_named("mold"),
		.ip = 0x7f000001, .port = 9, .timeout_ms = 5, .retries = mold_retries,
	} };
	char err[256] = "";
	struct recovery_client *c = recovery_client_create(h->engine, en, mold_retries ? 2 : 1,
							   "test", err, sizeof(err));

	ck_assert_msg(c != NULL, "%s", err);
	return c;
}

static struct recovery_client *client_for(struct harness *h, uint16_t port)
{
	return client_with(h, port, RECOVERY_DEFAULT_MAX_GAP, 0, 0);
}

/* Poll until no stream recovers (at most 10 s of the wall clock, a failing bound). */
static void poll_until_quiet(struct harness *h, struct recovery_client *c)
{
	uint64_t until = test_monotonic_ns() + 10000000000ull;

	do {
		recovery_client_poll(c, test_monotonic_ns(), 0, &h->prod);
		harness_drain(h);
		usleep(1000);
	} while (recovery_client_busy(c, NULL) && test_monotonic_ns() < until);
	ck_assert_int_eq(recovery_client_busy(c, NULL), 0);
}

static const struct wb_event *add_of(const struct harness *h, uint64_t order_id)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->events[i].kind == WB_EV_ADD && h->events[i].u.order.order_id == order_id)
			return &h->events[i];
	return NULL;
}

static int setup_engine(struct harness *h)
{
	int line;

	harness_init(h, HARNESS_RING_SLOTS);
	line = feed_map_add(h->engine, ipv4(233, 54, 12, 111), 26477,
			    feed_protocol_parse("itch", 4), WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h->engine, "*", 1), 0);
	return line;
}

START_TEST(test_late_join_takes_the_snapshot_then_the_real_time_after_it)
{
	struct harness h;
	struct server s;
	struct recovery_client *c;
	struct recovery_totals t;
	const struct wb_event *ev;
	int line = setup_engine(&h);

	server_start(&s, "pw");
	c = client_for(&h, s.port);
	/* Joined at 5: 5 and 6 are in the snapshot (dropped), 7 on are applied. */
	real_time(&h, line, 5, 9);
	ck_assert_ptr_null(add_of(&h, 5));	/* held back until the snapshot is in */
	poll_until_quiet(&h, c);
	/* The served book: order 1 with its 60 remaining, never order 2 (deleted). */
	ev = add_of(&h, 1);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->u.order.qty, 60);
	ck_assert_ptr_null(add_of(&h, 2));
	ck_assert_ptr_nonnull(add_of(&h, 3));
	/* Then the buffered real time after the snapshot: 7 replaces 3, 8 and 9 add. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_REPLACE), 1);
	ck_assert_ptr_nonnull(add_of(&h, 5));
	ck_assert_ptr_nonnull(add_of(&h, 6));
	ck_assert_ptr_null(harness_find(&h, WB_EV_EXECUTE, 0));	/* 4 is in the book, not replayed */
	recovery_client_totals(c, 0, test_monotonic_ns(), &t);
	ck_assert_uint_eq(t.snapshots, 1);
	ck_assert_uint_eq(t.unrecoverable, 0);
	recovery_client_destroy(c);
	server_stop(&s);
	harness_free(&h);
}
END_TEST

START_TEST(test_refused_login_is_retried_then_given_up_as_a_gap)
{
	struct harness h;
	struct server s;
	struct recovery_client *c;
	struct recovery_totals t;
	int line = setup_engine(&h);
	size_t gaps = 0;

	server_start(&s, "other");
	c = client_for(&h, s.port);
	real_time(&h, line, 5, 9);
	poll_until_quiet(&h, c);
	/* No snapshot: what it should have covered is a GAP and the stream goes on. */
	recovery_client_totals(c, 0, test_monotonic_ns(), &t);
	ck_assert_uint_eq(t.snapshots, 0);
	ck_assert_uint_eq(t.unrecoverable, 1);
	ck_assert_uint_eq(t.fills, 0);	/* given up: no fill time */
	for (size_t i = 0; i < h.n; i++)
		gaps += h.events[i].kind == WB_EV_GAP && h.events[i].u.gap.reason == WB_GAP_SEQUENCE;
	ck_assert_uint_ge(gaps, 1);
	ck_assert_ptr_nonnull(add_of(&h, 6));
	recovery_client_destroy(c);
	server_stop(&s);
	harness_free(&h);
}
END_TEST

/*
 * The policy on one hole: the server's snapshot after message at; glimpse
 * with max_gap and max_age_ms; beside it a Mold service that never answers
 * (mold_retries tries). The stream joins at first_seq: 1 (in sequence
 * through 2, then 9, a hole of 6 messages: 3..8) or 9 (a late join).
 */
static struct recovery_totals policy_on_a_hole(uint64_t at, uint64_t max_gap, uint32_t max_age_ms,
					       uint32_t mold_retries, int first_seq)
{
	struct harness h;
	struct server s;
	struct recovery_client *c;
	struct recovery_totals t;
	int line = setup_engine(&h);

	server_start_at(&s, "pw", at);
	c = client_with(&h, s.port, max_gap, max_age_ms, mold_retries);
	if (first_seq == 1)
		real_time(&h, line, 1, 2);
	real_time(&h, line, 9, 9);
	poll_until_quiet(&h, c);
	recovery_client_totals(c, 0, test_monotonic_ns(), &t);
	ck_assert_ptr_nonnull(add_of(&h, 6));	/* 9 is decoded in the end, whatever came */
	recovery_client_destroy(c);
	server_stop(&s);
	harness_free(&h);
	return t;
}

START_TEST(test_a_hole_larger_than_max_gap_is_taken_by_snapshot)
{
	struct recovery_totals t = policy_on_a_hole(8, 5, 0, 100, 1);

	ck_assert_uint_eq(t.snapshots, 1);
	ck_assert_uint_eq(t.requests, 0);
	ck_assert_uint_eq(t.unrecoverable, 0);
}
END_TEST

START_TEST(test_a_hole_within_max_gap_is_gap_fill_s)
{
	/* Mold never answers: lost after 2 retries. */
	struct recovery_totals t = policy_on_a_hole(8, 6, 0, 2, 1);

	ck_assert_uint_eq(t.snapshots, 0);
	ck_assert_uint_ge(t.requests, 1);
	ck_assert_uint_eq(t.unrecoverable, 1);
}
END_TEST

START_TEST(test_a_hole_older_than_max_age_is_taken_by_snapshot)
{
	/* Mold would keep asking for seconds; after 30 ms the snapshot takes it. */
	struct recovery_totals t = policy_on_a_hole(8, 100, 30, 100, 1);

	ck_assert_uint_eq(t.snapshots, 1);
	ck_assert_uint_ge(t.requests, 1);
	ck_assert_uint_eq(t.unrecoverable, 0);
}
END_TEST

START_TEST(test_the_hole_an_old_snapshot_leaves_is_gap_fill_s_however_large)
{
	/* Joined at 9; the snapshot reaches 2 only: 3..8 remain, more than max-gap. */
	struct recovery_totals t = policy_on_a_hole(2, 3, 0, 1, 9);

	ck_assert_uint_eq(t.snapshots, 1);	/* not the same snapshot again */
	ck_assert_uint_ge(t.requests, 1);
	ck_assert_uint_eq(t.unrecoverable, 1);
}
END_TEST

static Suite *soupbin_suite(void)
{
	Suite *s = suite_create("soupbin");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_login_request_pads_alpha_right_and_numeric_left_to_the_spec_widths);
	tcase_add_test(tc, test_login_accepted_and_rejected_and_empty_packets_match_the_spec);
	tcase_add_test(tc, test_end_of_snapshot_is_g_and_twenty_ascii_digits);
	tcase_add_test(tc, test_utp_snapshot_message_is_a_uqdf_header_then_the_sequence);
	tcase_add_test(tc, test_soup_next_waits_for_a_whole_packet_and_refuses_length_zero);
	tcase_add_test(tc, test_numeric_field_takes_leading_spaces_only);
	tcase_add_test(tc, test_conf_takes_a_glimpse_line_beside_mold_with_its_policy);
	tcase_add_test(tc, test_conf_takes_a_utpsnap_line_beside_a_uqdf_channel_s_mold);
	tcase_add_test(tc, test_conf_refuses_a_second_snapshot_service_and_misplaced_keys);
	tcase_add_test(tc, test_late_join_takes_the_snapshot_then_the_real_time_after_it);
	tcase_add_test(tc, test_refused_login_is_retried_then_given_up_as_a_gap);
	tcase_add_test(tc, test_a_hole_larger_than_max_gap_is_taken_by_snapshot);
	tcase_add_test(tc, test_a_hole_within_max_gap_is_gap_fill_s);
	tcase_add_test(tc, test_a_hole_older_than_max_age_is_taken_by_snapshot);
	tcase_add_test(tc, test_the_hole_an_old_snapshot_leaves_is_gap_fill_s_however_large);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(soupbin_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
