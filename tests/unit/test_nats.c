/*
 * The normalized stream over NATS (issue 26), the parts that need no
 * server (tests/nats/nats.sh runs a real one):
 *
 * - a batch's header, runs and events read back as written, and a message
 *   that is no batch, or says it holds more or less than it does, refused;
 * - subject tokens and the --publish/--source addresses (nats://HOST:PORT
 *   [/STREAM]);
 * - the builder's tap: thread 1 copies every event it applies, in order,
 *   and when the tap is full drops and counts the rest without waiting:
 *   the books still get every event.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/futex.h"
#include "net/nats_batch.h"
#include "net/nats_client.h"
#include "wirebook/ring.h"

static void make_event(struct wb_event *ev, uint64_t id)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = WB_EV_ADD;
	ev->venue = WB_VENUE_NASDAQ;
	ev->line = 1;
	ev->side = WB_SIDE_BUY;
	ev->instrument = 1;
	ev->seq = id;
	ev->recv_ts = id;
	ev->u.order.order_id = id;
	ev->u.order.price = (int64_t)(100 + id) * WB_PRICE_SCALE;
	ev->u.order.qty = 100;
}

START_TEST(test_batch_reads_back_as_written)
{
	struct nats_batch_header h = { 0 }, back;
	struct nats_batch_run runs[2] = { { 10, 2 }, { 15, 1 } }, r;
	uint8_t *msg = calloc(1, nats_batch_size(2, 3));
	struct wb_event ev, got;
	char err[160];
	uint32_t i;

	ck_assert_ptr_nonnull(msg);
	h.line = 7;
	h.venue = WB_VENUE_BZX;
	h.count = 3;
	h.run = 123456789012345ull;
	h.first = 41;
	h.seq_first = 1000;
	h.seq_last = 1002;
	h.runs = 2;
	nats_batch_put_header(msg, &h);
	for (i = 0; i < 2; i++)
		nats_batch_put_run(msg, i, &runs[i]);
	for (i = 0; i < 3; i++) {
		make_event(&ev, 500 + i);
		memcpy((uint8_t *)nats_batch_event_at(msg, &h, i), &ev, sizeof(ev));
	}
	ck_assert_int_eq(nats_batch_parse(msg, nats_batch_size(2, 3), &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.line, 7);
	ck_assert_uint_eq(back.venue, WB_VENUE_BZX);
	ck_assert_uint_eq(back.count, 3);
	ck_assert_uint_eq(back.run, 123456789012345ull);
	ck_assert_uint_eq(back.first, 41);
	ck_assert_uint_eq(back.seq_first, 1000);
	ck_assert_uint_eq(back.seq_last, 1002);
	ck_assert_uint_eq(back.runs, 2);
	nats_batch_run_at(msg, 1, &r);
	ck_assert_uint_eq(r.first, 15);
	ck_assert_uint_eq(r.count, 1);
	memcpy(&got, nats_batch_event_at(msg, &back, 2), sizeof(got));
	ck_assert_uint_eq(got.u.order.order_id, 502);
	ck_assert_int_eq(memcmp(&got, &ev, sizeof(ev)), 0);
	/* The header is little-endian on the wire, whatever the host. */
	ck_assert_int_eq(memcmp(msg, "WBNB", 4), 0);
	ck_assert_uint_eq(msg[8], 7);
	free(msg);
}
END_TEST

START_TEST(test_batch_that_lies_about_its_size_or_runs_is_refused)
{
	struct nats_batch_header h = { 0 }, back;
	struct nats_batch_run run = { 1, 2 };
	size_t len = nats_batch_size(1, 2);
	uint8_t *msg = calloc(1, len + 64);
	char err[160];

	ck_assert_ptr_nonnull(msg);
	h.count = 2;
	h.first = 1;
	h.runs = 1;
	nats_batch_put_header(msg, &h);
	nats_batch_put_run(msg, 0, &run);
	ck_assert_int_eq(nats_batch_parse(msg, len, &back, err, sizeof(err)), 0);
	/* One event short, one event long. */
	ck_assert_int_eq(nats_batch_parse(msg, len - 64, &back, err, sizeof(err)), -1);
	ck_assert_int_eq(nats_batch_parse(msg, len + 64, &back, err, sizeof(err)), -1);
	/* Runs that do not add up to the count. */
	run.count = 1;
	nats_batch_put_run(msg, 0, &run);
	ck_assert_int_eq(nats_batch_parse(msg, len, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "runs"));
	/* Not a batch at all. */
	memcpy(msg, "HTTP", 4);
	ck_assert_int_eq(nats_batch_parse(msg, len, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "WBNB"));
	ck_assert_int_eq(nats_batch_parse(msg, 10, &back, err, sizeof(err)), -1);
	free(msg);
}
END_TEST

START_TEST(test_end_batch_carries_the_run_and_its_event_count)
{
	struct nats_batch_header h = { 0 }, back;
	uint8_t msg[NATS_BATCH_HEADER];
	char err[160];

	h.flags = NATS_BATCH_END;
	h.run = 77;
	h.first = 428585;
	nats_batch_put_header(msg, &h);
	ck_assert_int_eq(nats_batch_parse(msg, sizeof(msg), &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.flags, NATS_BATCH_END);
	ck_assert_uint_eq(back.run, 77);
	ck_assert_uint_eq(back.first, 428585);
	ck_assert_uint_eq(back.count, 0);
}
END_TEST

START_TEST(test_subject_tokens_and_addresses)
{
	char tok[16], servers[128], stream[64], err[160];

	nats_subject_token(tok, sizeof(tok), "a.b*c>d e");
	ck_assert_str_eq(tok, "a_b_c_d_e");
	nats_subject_token(tok, 4, "wirebook");
	ck_assert_str_eq(tok, "wir");
	ck_assert_int_eq(nats_url_split("nats://10.0.0.1:4222/WIREBOOK_X_20260219", servers,
					sizeof(servers), stream, sizeof(stream), err, sizeof(err)), 0);
	ck_assert_str_eq(servers, "nats://10.0.0.1:4222");
	ck_assert_str_eq(stream, "WIREBOOK_X_20260219");
	ck_assert_int_eq(nats_url_split("nats://u:p@h:4222,nats://g:4222", servers, sizeof(servers),
					stream, sizeof(stream), err, sizeof(err)), 0);
	ck_assert_str_eq(servers, "nats://u:p@h:4222,nats://g:4222");
	ck_assert_str_eq(stream, "");
	ck_assert_int_eq(nats_url_split("tls://h:4222", servers, sizeof(servers), stream,
					sizeof(stream), err, sizeof(err)), 0);
	ck_assert_int_eq(nats_url_split("http://h:4222", servers, sizeof(servers), stream,
					sizeof(stream), err, sizeof(err)), -1);
	ck_assert_int_eq(nats_url_split("nats://h:4222/a.b", servers, sizeof(servers), stream,
					sizeof(stream), err, sizeof(err)), -1);
	ck_assert_int_eq(nats_url_split("nats://h:4222/", servers, sizeof(servers), stream,
					sizeof(stream), err, sizeof(err)), -1);
	ck_assert_int_eq(nats_url_split("nats:///S", servers, sizeof(servers), stream,
					sizeof(stream), err, sizeof(err)), -1);
}
END_TEST

/* ---- the publisher's backlog: the builder's event stream ----------------- */

/* More than the stream holds (its least, EVENT_STREAM_MIN_SLOTS). */
#define BACKLOG_EVENTS 3000u
#define BACKLOG_SLOTS EVENT_STREAM_MIN_SLOTS

static int pump_ended(void *arg)
{
	(void)arg;
	return BUILDER_PUMP_EOF;
}

static void *ring_alloc(uint32_t slots)
{
	size_t bytes = (wb_ring_bytes(slots) + WB_RING_PAGE - 1) / WB_RING_PAGE * WB_RING_PAGE;
	void *mem = aligned_alloc(WB_RING_PAGE, bytes);

	ck_assert_ptr_nonnull(mem);
	memset(mem, 0, bytes);
	wb_ring_format(mem, slots, 1);
	return mem;
}

/* A builder with an event stream of EVENT_STREAM_MIN_SLOTS over ring,
 * which holds events 1..events (thread 1 reads them once started). */
static struct builder *stream_builder(void *ring, uint64_t events, int path, const char *tag)
{
	static char name[64];	/* the builder's while it lives: one at a time */
	struct wb_ring_producer prod;
	struct builder_config bc;
	struct builder *b;
	uint64_t i;
	int err;

	wb_ring_producer_init(&prod, ring);
	for (i = 1; i <= events; i++) {
		make_event(wb_ring_producer_slot(&prod), i);
		wb_ring_producer_commit(&prod);
	}
	wb_ring_producer_publish_no_wakeup(&prod);
	memset(&bc, 0, sizeof(bc));
	bc.numa_node = -1;
	bc.cpus[0] = bc.cpus[1] = -1;
	bc.path = path;
	bc.books.max_instruments = 64;
	bc.books.expected_orders = 4096;
	bc.stream_slots = EVENT_STREAM_MIN_SLOTS;
	snprintf(name, sizeof(name), "wbtest_%s%d_%d", tag, path, (int)getpid());
	bc.shm.shm_name = name;
	b = builder_create(&bc, &err);
	ck_assert_msg(b, "builder_create: %d", err);
	ck_assert_ptr_nonnull(builder_event_stream(b));
	return b;
}

/* The publisher reads the stream as here (nats_publish.c): a reader that
 * never reads must not hold thread 1 up, and then finds the newest
 * BACKLOG_SLOTS events in order and the others counted as its loss. */
static void backlog_run(int path)
{
	void *ring = ring_alloc(4096);
	const struct event_stream *es;
	struct wb_ring_reader reader;
	struct builder_counters ctr;
	struct wb_event *got = malloc(BACKLOG_EVENTS * sizeof(*got));
	struct builder *b;
	uint64_t i, n;
	int waits;

	ck_assert_ptr_nonnull(got);
	b = stream_builder(ring, BACKLOG_EVENTS, path, "backlog");
	es = builder_event_stream(b);
	ck_assert_ptr_nonnull(es);
	ck_assert_int_eq(wb_ring_check_kind(es->mem, es->bytes, WB_RING_MAGIC_BROADCAST), WB_RING_OK);
	wb_ring_reader_init(&reader, es->mem);	/* the publisher, started, then NATS away */
	ck_assert_int_eq(builder_start(b, ring, pump_ended, NULL), 0);
	for (waits = 0; !builder_done(b) && waits < 30000; waits++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	ck_assert_msg(builder_done(b), "thread 1 did not finish with a reader behind");
	builder_stop(b);
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, BACKLOG_EVENTS);
	n = wb_ring_reader_copy(&reader, got, BACKLOG_EVENTS);
	ck_assert_uint_eq(n, BACKLOG_SLOTS);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(got[i].u.order.order_id, BACKLOG_EVENTS - BACKLOG_SLOTS + 1 + i);
	ck_assert_uint_eq(reader.lost, BACKLOG_EVENTS - BACKLOG_SLOTS);
	ck_assert_uint_eq(wb_ring_reader_copy(&reader, got, BACKLOG_EVENTS), 0);
	builder_destroy(b);
	free(got);
	free(ring);
}

START_TEST(test_publisher_backlog_is_the_stream_a_reader_behind_loses_the_oldest_counted)
{
	backlog_run(BUILDER_PATH_RTC);
	backlog_run(BUILDER_PATH_PIPELINE);
}
END_TEST

/* The publisher's wait (nats_publish.c wait_for_events): asleep in the
 * stream's futex with nothing new, woken by the books' writer, not by a
 * timer. The sleep's timeout here is an hour: a wake that never comes
 * leaves the test to Check's timeout. */
#define WAKE_EVENTS 500u

struct sleepy_reader {
	struct wb_ring_reader r;
	struct wb_event got[WAKE_EVENTS];
	uint64_t n;
	unsigned sleeps;
};

static void *sleepy_reader_main(void *arg)
{
	struct sleepy_reader *sr = arg;
	uint32_t word;

	while (sr->n < WAKE_EVENTS) {
		uint64_t k = wb_ring_reader_copy(&sr->r, sr->got + sr->n, WAKE_EVENTS - sr->n);

		sr->n += k;
		if (k || wb_ring_reader_prepare_sleep(&sr->r, &word))
			continue;
		__atomic_fetch_add(&sr->sleeps, 1, __ATOMIC_RELEASE);
		futex_wait_shared_timeout(&sr->r.cons->sleeping, word, 3600ull * 1000000000ull);
	}
	return NULL;
}

START_TEST(test_a_reader_asleep_on_the_stream_is_woken_by_the_books_writer)
{
	void *ring = ring_alloc(1024);
	const struct event_stream *es;
	struct sleepy_reader *sr = calloc(1, sizeof(*sr));
	struct builder *b;
	pthread_t th;
	uint64_t i;

	ck_assert_ptr_nonnull(sr);
	b = stream_builder(ring, WAKE_EVENTS, BUILDER_PATH_PIPELINE, "wake");
	es = builder_event_stream(b);
	ck_assert_ptr_nonnull(es);
	wb_ring_reader_init(&sr->r, es->mem);
	ck_assert_int_eq(pthread_create(&th, NULL, sleepy_reader_main, sr), 0);
	/* Asleep before the first event exists: only the writer can wake it. */
	while (!__atomic_load_n(&sr->sleeps, __ATOMIC_ACQUIRE))
		sched_yield();
	ck_assert_int_eq(builder_start(b, ring, pump_ended, NULL), 0);
	pthread_join(th, NULL);	/* before builder_stop, whose close would wake it too */
	ck_assert_uint_eq(sr->n, WAKE_EVENTS);
	for (i = 0; i < WAKE_EVENTS; i++)
		ck_assert_uint_eq(sr->got[i].u.order.order_id, i + 1);
	ck_assert_uint_eq(sr->r.lost, 0);
	ck_assert_uint_ge(wb_load_relaxed(&es->writer.prod->wakeups), 1);
	builder_stop(b);
	builder_destroy(b);
	free(sr);
	free(ring);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nats");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_batch_reads_back_as_written);
	tcase_add_test(tc, test_batch_that_lies_about_its_size_or_runs_is_refused);
	tcase_add_test(tc, test_end_batch_carries_the_run_and_its_event_count);
	tcase_add_test(tc, test_subject_tokens_and_addresses);
	tcase_add_test(tc, test_publisher_backlog_is_the_stream_a_reader_behind_loses_the_oldest_counted);
	tcase_add_test(tc, test_a_reader_asleep_on_the_stream_is_woken_by_the_books_writer);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
