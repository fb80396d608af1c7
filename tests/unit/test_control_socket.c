/*
 * The control channel (tools/common/control.c): wb-subscribe's requests
 * carried over wirebookd's unix socket to a user-space feed engine give
 * the same answers the module's ioctls give: feed map add/list/remove,
 * subscriptions, stats, lists larger than the caller's array, and errno
 * values for bad or impossible requests. wirebookd's socket-only requests
 * (order detail on/off and its list, tracking and queue positions) cross
 * whole with their errors, never reach the module's device, are -ENOTTY
 * to a server that does not know them, and wirebookd's handler refuses
 * them when order detail is not enabled, handing every other request on.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
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
	wb_control_handler handler;	/* NULL: the engine's, over ctx */
	void *handler_ctx;
	pthread_t thread;
	char path[108];
};

static void *serve(void *arg)
{
	struct server *s = arg;

	while (!s->stop) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };

		if (poll(&p, 1, 20) > 0)
			wb_control_serve(s->fd, s->handler ? s->handler : wb_control_engine_handler,
					 s->handler ? s->handler_ctx : &s->ctx);
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

static void server_start_handler(struct server *s, wb_control_handler handler, void *handler_ctx)
{
	char err[256];

	memset(s, 0, sizeof(*s));
	s->handler = handler;
	s->handler_ctx = handler_ctx;
	snprintf(s->path, sizeof(s->path), "/tmp/wb-test-control-%d.sock", (int)getpid());
	s->ctx.engine = engine_create();
	s->fd = wb_control_listen(s->path, err, sizeof(err));
	ck_assert_msg(s->fd >= 0, "%s", err);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_start(struct server *s)
{
	server_start_handler(s, NULL, NULL);
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

/* ---- wirebookd's socket-only requests: order detail, queue positions ---- */

#define DETAIL_SYMBOLS 100u	/* the fake's list: more than a client's first array */

/* Answers as wirebookd's handler would, from values derived from the request. */
static int fake_handler(void *ctx, unsigned long cmd, void *arg)
{
	(void)ctx;
	if (cmd == WB_IOC_VERSION) {
		struct wb_ioc_version *v = arg;

		memset(v, 0, sizeof(*v));
		v->ctl_version = WB_CTL_VERSION;
		return 0;
	}
	if (cmd == WB_CTL_DETAIL) {
		struct wb_ctl_detail *d = arg;

		if (!strcmp(d->ticker, "NOSUCH"))
			return -ENOENT;
		if (!strcmp(d->ticker, "FULL"))
			return -EBUSY;
		d->sym = (uint32_t)strlen(d->ticker);
		d->has_detail = d->op == WB_CTL_DETAIL_ON;
		return 0;
	}
	if (cmd == WB_CTL_DETAIL_LIST) {
		struct wb_ioc_list *l = arg;
		struct wb_ioc_symbol *out = (struct wb_ioc_symbol *)(uintptr_t)l->entries;

		for (uint32_t i = 0; i < DETAIL_SYMBOLS && i < l->capacity; i++) {
			snprintf(out[i].ticker, sizeof(out[i].ticker), "S%u", i + 1);
			out[i].instrument = i + 1;
		}
		l->count = DETAIL_SYMBOLS;
		return 0;
	}
	if (cmd == WB_CTL_QUEUE) {
		struct wb_ctl_queue *q = arg;

		if (q->op == WB_CTL_QUEUE_UNTRACK)
			return -ESRCH;
		q->tracked = 1;
		q->pos = (struct wb_queue_pos){ .order_id = q->order_id, .venue = (uint8_t)q->venue,
						.side = WB_SIDE_SELL, .state = WB_QUEUE_PARTLY_FILLED, .sym = 7,
						.price = -123456789012LL, .qty = 300, .filled_qty = 100,
						.shares_ahead = q->order_id * 2, .orders_ahead = 4, .orders_behind = 5,
						.shares_behind = 600, .level_qty = 1000, .level_orders = 10,
						.version = 42, .exch_ts = 1ull << 60, .recv_ts = 3, .changes = 9 };
		return 0;
	}
	return -ENOTTY;
}

START_TEST(test_control_detail_request_round_trips_and_errors_come_back)
{
	struct server s;
	struct wb_control c;
	struct wb_ctl_detail d = { .ticker = "AAPL", .op = WB_CTL_DETAIL_ON };

	server_start_handler(&s, fake_handler, NULL);
	client_open(&c, &s);
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), 0);
	ck_assert_uint_eq(d.sym, 4);
	ck_assert_int_eq(d.has_detail, 1);
	d.op = WB_CTL_DETAIL_OFF;
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), 0);
	ck_assert_int_eq(d.has_detail, 0);
	snprintf(d.ticker, sizeof(d.ticker), "NOSUCH");
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), -ENOENT);
	snprintf(d.ticker, sizeof(d.ticker), "FULL");
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), -EBUSY);
	ck_assert_str_eq(c.what, "");	/* an answer, not a failed exchange */
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_queue_position_crosses_the_socket_whole)
{
	struct server s;
	struct wb_control c;
	struct wb_ctl_queue q = { .op = WB_CTL_QUEUE_TRACK, .venue = WB_VENUE_NASDAQ, .order_id = 1ull << 40 };
	struct wb_queue_pos want;

	server_start_handler(&s, fake_handler, NULL);
	client_open(&c, &s);
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_QUEUE, &q), 0);
	ck_assert_int_eq(q.tracked, 1);
	want = (struct wb_queue_pos){ .order_id = 1ull << 40, .venue = WB_VENUE_NASDAQ, .side = WB_SIDE_SELL,
				      .state = WB_QUEUE_PARTLY_FILLED, .sym = 7, .price = -123456789012LL,
				      .qty = 300, .filled_qty = 100, .shares_ahead = 1ull << 41, .orders_ahead = 4,
				      .orders_behind = 5, .shares_behind = 600, .level_qty = 1000, .level_orders = 10,
				      .version = 42, .exch_ts = 1ull << 60, .recv_ts = 3, .changes = 9 };
	ck_assert_mem_eq(&q.pos, &want, sizeof(want));
	q.op = WB_CTL_QUEUE_UNTRACK;
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_QUEUE, &q), -ESRCH);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_detail_list_reports_the_full_count_beyond_capacity)
{
	struct server s;
	struct wb_control c;
	struct wb_ioc_symbol out[10];
	struct wb_ioc_list l = { .capacity = 10, .entries = (uint64_t)(uintptr_t)out };

	server_start_handler(&s, fake_handler, NULL);
	client_open(&c, &s);
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL_LIST, &l), 0);
	ck_assert_uint_eq(l.count, DETAIL_SYMBOLS);
	ck_assert_ptr_eq((void *)(uintptr_t)l.entries, out);	/* the caller's pointer, not the server's */
	ck_assert_str_eq(out[0].ticker, "S1");
	ck_assert_str_eq(out[9].ticker, "S10");
	ck_assert_uint_eq(out[9].instrument, 10);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_socket_only_requests_never_reach_the_device)
{
	struct wb_control c;
	struct wb_ctl_detail d = { .ticker = "AAPL", .op = WB_CTL_DETAIL_ON };
	struct wb_ctl_queue q = { .venue = WB_VENUE_NASDAQ, .order_id = 1 };

	memset(&c, 0, sizeof(c));
	c.fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(c.fd, 0);
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), -ENOTTY);
	ck_assert_ptr_nonnull(strstr(c.what, "the module keeps no books"));
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_QUEUE, &q), -ENOTTY);
	ck_assert(wb_control_socket_only(WB_CTL_DETAIL_LIST));
	ck_assert(!wb_control_socket_only(WB_IOC_SUB_LIST));
	wb_control_close(&c);
}
END_TEST

START_TEST(test_control_a_server_without_order_detail_answers_enotty)
{
	struct server s;
	struct wb_control c;
	struct wb_control_engine ce = { 0 };
	struct wb_ctl_detail d = { .ticker = "AAPL" };

	/* The feed engine's handler alone: what a wirebookd of before serves. */
	server_start_handler(&s, wb_control_engine_handler, &ce);
	client_open(&c, &s);
	ck_assert_int_eq(wb_control_call(&c, WB_CTL_DETAIL, &d), -ENOTTY);
	wb_control_close(&c);
	server_stop(&s);
}
END_TEST

START_TEST(test_control_orders_handler_refuses_without_order_detail_and_hands_on_the_rest)
{
	struct wb_control_orders co = { .shm_name = "wb-test-control-orders-none", .enabled = false,
					.next = fake_handler };
	struct wb_ctl_detail d = { .ticker = "AAPL", .op = WB_CTL_DETAIL_ON };
	struct wb_ioc_version v;

	ck_assert_int_eq(wb_control_orders_handler(&co, WB_CTL_DETAIL, &d), -EOPNOTSUPP);
	/* Enabled, but no such book in shared memory: the same answer. */
	co.enabled = true;
	ck_assert_int_eq(wb_control_orders_handler(&co, WB_CTL_DETAIL, &d), -EOPNOTSUPP);
	ck_assert_int_eq(wb_control_orders_handler(&co, WB_IOC_VERSION, &v), 0);
	ck_assert_uint_eq(v.ctl_version, WB_CTL_VERSION);
	co.next = NULL;
	ck_assert_int_eq(wb_control_orders_handler(&co, WB_IOC_VERSION, &v), -ENOTTY);
	wb_control_orders_close(&co);
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
	tcase_add_test(tc, test_control_detail_request_round_trips_and_errors_come_back);
	tcase_add_test(tc, test_control_queue_position_crosses_the_socket_whole);
	tcase_add_test(tc, test_control_detail_list_reports_the_full_count_beyond_capacity);
	tcase_add_test(tc, test_control_socket_only_requests_never_reach_the_device);
	tcase_add_test(tc, test_control_a_server_without_order_detail_answers_enotty);
	tcase_add_test(tc, test_control_orders_handler_refuses_without_order_detail_and_hands_on_the_rest);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
