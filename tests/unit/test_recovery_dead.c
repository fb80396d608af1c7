/*
 * A recovery service that never answers (issue 23.2): after one range's
 * whole schedule went unanswered the service is down, and a new range is
 * declared lost at once, not waited on for another schedule; a probe
 * request goes out on the backoff, and one answer brings the service back.
 * The client runs on a virtual clock (recovery_client_poll's now): no
 * time is waited or asserted.
 */
#include <check.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feed_harness.h"
#include "recovery/recovery.h"
#include "test_util.h"

#define MS 1000000ull
#define SESSION "DEADTEST01"

/* A UDP port on loopback nobody listens on: bound, named, closed. */
static uint16_t closed_udp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* The packet of sequence seq: one System Event message ('S', 12 bytes). */
static void packet(struct harness *h, int line, uint64_t seq)
{
	uint8_t p[MOLD_HEADER_LEN + 2 + 12] = { 0 };

	memcpy(p, SESSION, MOLD_SESSION_LEN);
	wire_put_be64(p + MOLD_SEQUENCE, seq);
	wire_put_be16(p + MOLD_COUNT, 1);
	wire_put_be16(p + MOLD_HEADER_LEN, 12);
	p[MOLD_HEADER_LEN + 2] = 'S';
	wire_put_be48(p + MOLD_HEADER_LEN + 2 + 5, 34200000000000ull + seq);
	p[MOLD_HEADER_LEN + 2 + 11] = 'Q';
	harness_payload(h, line, p, sizeof(p));
}

/* One look at now, and a second: a range lost in the first ends the recovery in the next. */
static void poll_at(struct harness *h, struct recovery_client *c, uint64_t now)
{
	for (int i = 0; i < 2; i++) {
		recovery_client_poll(c, now, 0, &h->prod);
		harness_drain(h);
	}
}

static struct recovery_totals totals(struct recovery_client *c, uint64_t now)
{
	struct recovery_totals t;

	recovery_client_totals(c, 0, now, &t);
	return t;
}

START_TEST(test_a_silent_service_is_waited_on_once_then_probed_on_the_backoff)
{
	struct harness h;
	struct recovery_conf_entry en = {
		.venue = WB_VENUE_NASDAQ, .channel = -1, .service = recovery_service_named("mold"),
		.ip = 0x7f000001, .port = closed_udp_port(), .timeout_ms = 5, .retries = 2,
	};
	char err[256] = "";
	struct recovery_client *c;
	struct recovery_totals t;
	uint64_t now = 1000 * MS;
	int line, polls = 0;

	harness_init(&h, HARNESS_RING_SLOTS);
	line = feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, feed_protocol_parse("itch", 4),
			    WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	c = recovery_client_create(h.engine, &en, 1, "test", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);

	/* The first hole: asked, asked again twice, then lost. */
	packet(&h, line, 1);
	packet(&h, line, 3);
	for (poll_at(&h, c, now); recovery_client_busy(c, NULL) && ++polls < 100; poll_at(&h, c, now))
		now += 100 * MS;
	t = totals(c, now);
	ck_assert_uint_eq(t.unrecoverable, 1);
	ck_assert_uint_eq(t.requests, 3);
	ck_assert_uint_eq(t.replies, 0);

	/* The next hole, before the backoff's first probe is due: lost without a
	 * request or a wait. */
	packet(&h, line, 5);
	poll_at(&h, c, now);
	ck_assert_int_eq(recovery_client_busy(c, NULL), 0);
	t = totals(c, now);
	ck_assert_uint_eq(t.unrecoverable, 2);
	ck_assert_uint_eq(t.requests, 3);

	/* Past the backoff (1 s at most): one probe request, one wait, no retry. */
	now += 2000 * MS;
	packet(&h, line, 7);
	poll_at(&h, c, now);
	ck_assert_int_eq(recovery_client_busy(c, NULL), 1);
	ck_assert_uint_eq(totals(c, now).requests, 4);
	now += 100 * MS;
	poll_at(&h, c, now);
	ck_assert_int_eq(recovery_client_busy(c, NULL), 0);
	t = totals(c, now);
	ck_assert_uint_eq(t.unrecoverable, 3);
	ck_assert_uint_eq(t.requests, 4);
	ck_assert_uint_eq(t.retries, 2);

	recovery_client_destroy(c);
	harness_free(&h);
}
END_TEST

/* A TCP port on loopback nobody listens on: bound, named, closed. */
static uint16_t closed_tcp_port(void)
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

/*
 * The same for a snapshot service (glimpse, alone on the stream: a hole is
 * its): one snapshot's attempts all fail, then the next hole is lost at
 * once, without a connection, until the backoff's probe.
 */
START_TEST(test_a_silent_snapshot_server_is_tried_once_then_probed_on_the_backoff)
{
	struct harness h;
	struct recovery_conf_entry en = {
		.venue = WB_VENUE_NASDAQ, .channel = -1, .service = recovery_service_named("glimpse"),
		.ip = 0x7f000001, .port = closed_tcp_port(), .timeout_ms = 50, .retries = 2,
		.user = "WB0001", .password = "pw", .max_gap = RECOVERY_DEFAULT_MAX_GAP, .unit = -1,
	};
	char err[256] = "";
	struct recovery_client *c;
	uint64_t now = 1000 * MS;
	int line, polls = 0;
	char *text = NULL;
	size_t textlen = 0;
	FILE *f;

	harness_init(&h, HARNESS_RING_SLOTS);
	line = feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, feed_protocol_parse("itch", 4),
			    WB_VENUE_NASDAQ, "A");
	ck_assert_int_ge(line, 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	c = recovery_client_create(h.engine, &en, 1, "test", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);

	packet(&h, line, 1);
	packet(&h, line, 3);
	for (poll_at(&h, c, now); recovery_client_busy(c, NULL) && ++polls < 500; poll_at(&h, c, now))
		now += 100 * MS;
	ck_assert_int_eq(recovery_client_busy(c, NULL), 0);
	ck_assert_uint_eq(totals(c, now).unrecoverable, 1);
	f = open_memstream(&text, &textlen);
	recovery_client_print(c, f);
	fclose(f);
	ck_assert_msg(strstr(text, "connects 3,") != NULL, "%s", text);	/* 1 + 2 retries */

	/* Before the probe is due: lost at once, no connection. */
	packet(&h, line, 5);
	poll_at(&h, c, now);
	ck_assert_int_eq(recovery_client_busy(c, NULL), 0);
	ck_assert_uint_eq(totals(c, now).unrecoverable, 2);
	free(text);
	f = open_memstream(&text, &textlen);
	recovery_client_print(c, f);
	fclose(f);
	ck_assert_msg(strstr(text, "connects 3,") != NULL, "%s", text);

	free(text);
	recovery_client_destroy(c);
	harness_free(&h);
}
END_TEST

static Suite *recovery_dead_suite(void)
{
	Suite *s = suite_create("recovery_dead");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_a_silent_service_is_waited_on_once_then_probed_on_the_backoff);
	tcase_add_test(tc, test_a_silent_snapshot_server_is_tried_once_then_probed_on_the_backoff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(recovery_dead_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
