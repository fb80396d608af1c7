/*
 * The control channel (tools/common/control.c): wb-subscribe's requests
 * carried over wirebookd's unix socket to a user-space feed engine give
 * the same answers the module's ioctls give: feed map add/list/remove,
 * subscriptions, stats, lists larger than the caller's array, and errno
 * values for bad or impossible requests.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/control.h"
#include "test_util.h"

struct server {
	int fd;
	volatile int stop;
	struct wb_control_engine ctx;
	pthread_t thread;
	char path[108];
};

static void *serve(void *arg)
{
	struct server *s = arg;

	while (!s->stop) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };

		if (poll(&p, 1, 20) > 0)
			wb_control_serve(s->fd, wb_control_engine_handler, &s->ctx);
	}
	return NULL;
}

static struct feed_engine *engine_create(void)
{
	struct feed_engine_config cfg = { .alloc = test_zalloc, .free = free };
	struct feed_engine *e = calloc(1, sizeof(*e));

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(feed_engine_init(e, &cfg), 0);
	return e;
}

static void server_start(struct server *s)
{
	char err[256];

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "/tmp/wb-test-control-%d.sock", (int)getpid());
	s->ctx.engine = engine_create();
	s->fd = wb_control_listen(s->path, err, sizeof(err));
	ck_assert_msg(s->fd >= 0, "%s", err);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	s->stop = 1;
	pthread_join(s->thread, NULL);
	close(s->fd);
	unlink(s->path);
	feed_engine_destroy(s->ctx.engine);
	free(s->ctx.engine);
}

static void client_open(struct wb_control *c, const struct server *s)
{
	char err[256];

	ck_assert_msg(wb_control_open_daemon(c, s->path, err, sizeof(err)) == 0, "%s", err);
}

static int feed_add(struct wb_control *c, uint32_t ip, uint16_t port, const char *name, int *line)
{
	struct wb_ioc_feed f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.ip = ip;
	f.port = port;
	f.protocol = FEED_PROTO_ITCH50;
	f.venue = WB_VENUE_NASDAQ;
	snprintf(f.name, sizeof(f.name), "%s", name);
	rc = wb_control_call(c, WB_IOC_FEED_ADD, &f);
	if (line)
		*line = f.line;
	return rc;
}

START_TEST(test_control_feed_map_round_trip_matches_the_engine)
{
	struct server s;
	struct wb_control c;
	struct wb_ioc_feed entries[4], del, unterminated;
	struct wb_ioc_list list;
	int line = -1;

	server_start(&s);
	client_open(&c, &s);
	ck_assert_int_eq(feed_add(&c, 0xe9360c6f, 26477, "A", &line), 0);
	ck_assert_int_eq(line, 0);
	ck_assert_int_eq(feed_add(&c, 0xe931c46f, 26478, "B", &line), 0);
	ck_assert_int_eq(line, 1);
	/* The same address twice, and a name without room for its NUL. */
	ck_assert_int_eq(feed_add(&c, 0xe9360c6f, 26477, "A", NULL), -EEXIST);
	memset(&unterminated, 0, sizeof(unterminated));
	unterminated.ip = 0x01020304;
	unterminated.port = 5;
	unterminated.protocol = FEED_PROTO_ITCH50;
	unterminated.venue = WB_VENUE_NASDAQ;
	memcpy(unterminated.name, "LONGNAME", sizeof(unterminated.name));
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_FEED_ADD, &unterminated), -EINVAL);

	memset(&list, 0, sizeof(list));
	list.capacity = 4;
	list.entries = (uint64_t)(uintptr_t)entries;
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_FEED_LIST, &list), 0);
	ck_assert_uint_eq(list.count, 2);
	ck_assert_uint_eq(entries[1].port, 26478);
	ck_assert_str_eq(entries[1].name, "B");
	/* The caller's pointer survives the trip. */
	ck_assert_uint_eq(list.entries, (uint64_t)(uintptr_t)entries);

	memset(&del, 0, sizeof(del));
	del.ip = 0xe9360c6f;
	del.port = 26477;
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_FEED_DEL, &del), 0);
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_FEED_DEL, &del), -ENOENT);
	ck_assert_int_eq(s.ctx.engine->lines[0].ip, 0);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_list_reports_the_full_count_beyond_capacity)
{
	static const char *const tickers[] = { "AAPL", "MSFT", "SPY", "QQQ", "NVDA" };
	struct server s;
	struct wb_control c;
	struct wb_ioc_symbol sym, out[2];
	struct wb_ioc_list list;
	unsigned i;

	server_start(&s);
	client_open(&c, &s);
	for (i = 0; i < 5; i++) {
		memset(&sym, 0, sizeof(sym));
		snprintf(sym.ticker, sizeof(sym.ticker), "%s", tickers[i]);
		ck_assert_int_eq(wb_control_call(&c, WB_IOC_SUB_ADD, &sym), 0);
		ck_assert_uint_eq(sym.instrument, i + 1);
	}
	memset(out, 0x5a, sizeof(out));
	memset(&list, 0, sizeof(list));
	list.capacity = 2;
	list.entries = (uint64_t)(uintptr_t)out;
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_SUB_LIST, &list), 0);
	ck_assert_uint_eq(list.count, 5);
	ck_assert_str_eq(out[0].ticker, "AAPL");
	ck_assert_str_eq(out[1].ticker, "MSFT");

	memset(&sym, 0, sizeof(sym));
	snprintf(sym.ticker, sizeof(sym.ticker), "ZZZZ");
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_SUB_DEL, &sym), -ENOENT);
	/* Not NUL-terminated within the field: refused, not read past. */
	memset(sym.ticker, 'A', sizeof(sym.ticker));
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_SUB_ADD, &sym), -EINVAL);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_stats_carry_the_line_counters)
{
	struct server s;
	struct wb_control c;
	struct wb_ioc_stats st;
	struct wb_ioc_line_stats lines[2];

	server_start(&s);
	client_open(&c, &s);
	ck_assert_int_eq(feed_add(&c, 0xe9360c6f, 26477, "A", NULL), 0);
	s.ctx.engine->lines[0].counters.packets = 42;
	s.ctx.engine->lines[0].counters.errors[FEED_ERR_TRUNCATED] = 7;
	memset(&st, 0, sizeof(st));
	st.capacity = 2;
	st.lines = (uint64_t)(uintptr_t)lines;
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_STATS, &st), 0);
	ck_assert_uint_eq(st.count, 1);
	ck_assert_uint_eq(lines[0].counters.packets, 42);
	ck_assert_uint_eq(lines[0].counters.errors[FEED_ERR_TRUNCATED], 7);
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_STATS_RESET, NULL), 0);
	ck_assert_uint_eq(s.ctx.engine->lines[0].counters.packets, 0);
	/* A request the server does not know. */
	ck_assert_int_eq(wb_control_call(&c, WB_IOC_RING_INFO + 0x100, &st), -ENOTTY);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_open_daemon_explains_a_missing_socket)
{
	struct wb_control c;
	char err[256];

	ck_assert_int_eq(wb_control_open_daemon(&c, "/tmp/wb-no-such-socket", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "--control"));
}
END_TEST

START_TEST(test_control_listen_refuses_a_socket_in_use_and_never_removes_it)
{
	struct server s;
	char err[256], plain[128];
	int fd;
	FILE *f;

	server_start(&s);
	ck_assert_int_eq(wb_control_listen(s.path, err, sizeof(err)), WB_CONTROL_EINUSE);
	ck_assert_msg(strstr(err, s.path) && strstr(err, "in use"), "%s", err);
	ck_assert_int_eq(access(s.path, F_OK), 0);
	/* a file that is no socket is neither taken nor removed */
	snprintf(plain, sizeof(plain), "%s.plain", s.path);
	f = fopen(plain, "w");
	fclose(f);
	ck_assert_int_eq(wb_control_listen(plain, err, sizeof(err)), WB_CONTROL_EINUSE);
	ck_assert_msg(strstr(err, "not a socket"), "%s", err);
	ck_assert_int_eq(access(plain, F_OK), 0);
	unlink(plain);
	/* the server's socket replaced since: closing ours leaves the newer one */
	fd = wb_control_listen(plain, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	unlink(plain);
	ck_assert_int_eq(rename(s.path, plain), 0);
	wb_control_unlisten(fd, plain);
	ck_assert_int_eq(access(plain, F_OK), 0);
	ck_assert_int_eq(rename(plain, s.path), 0);
	server_stop(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control_socket");
	TCase *tc = tcase_create("control_socket");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_control_feed_map_round_trip_matches_the_engine);
	tcase_add_test(tc, test_control_list_reports_the_full_count_beyond_capacity);
	tcase_add_test(tc, test_control_stats_carry_the_line_counters);
	tcase_add_test(tc, test_control_open_daemon_explains_a_missing_socket);
	tcase_add_test(tc, test_control_listen_refuses_a_socket_in_use_and_never_removes_it);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
