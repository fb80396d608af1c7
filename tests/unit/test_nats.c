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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
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

/* ---- the builder's tap ----------------------------------------------------- */

#define TAP_EVENTS 40u
#define TAP_SLOTS 16u

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

static void tap_run(int path)
{
	void *ring = ring_alloc(64), *tap = ring_alloc(TAP_SLOTS);
	struct wb_ring_producer prod;
	struct wb_ring_consumer cons;
	struct builder_config bc;
	struct builder_counters ctr;
	struct builder *b;
	char name[64];
	uint64_t i;
	int err, waits;

	wb_ring_producer_init(&prod, ring);
	for (i = 1; i <= TAP_EVENTS; i++) {
		make_event(wb_ring_producer_slot(&prod), i);
		wb_ring_producer_commit(&prod);
	}
	wb_ring_producer_publish_no_wakeup(&prod);
	memset(&bc, 0, sizeof(bc));
	bc.numa_node = -1;
	bc.cpus[0] = bc.cpus[1] = -1;
	bc.path = path;
	bc.books.max_instruments = 64;
	bc.books.expected_orders = 1024;
	bc.tap_ring = tap;
	snprintf(name, sizeof(name), "wbtest_tap%d_%d", path, (int)getpid());
	bc.shm.shm_name = name;
	b = builder_create(&bc, &err);
	ck_assert_msg(b, "builder_create: %d", err);
	ck_assert_int_eq(builder_start(b, ring, pump_ended, NULL), 0);
	/* Nobody reads the tap: thread 1 must finish all the same. */
	for (waits = 0; !builder_done(b) && waits < 30000; waits++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	ck_assert_msg(builder_done(b), "thread 1 did not finish with a full tap");
	builder_stop(b);
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, TAP_EVENTS);
	wb_ring_consumer_init(&cons, tap);
	ck_assert_uint_eq(wb_ring_consumer_available(&cons), TAP_SLOTS);
	for (i = 0; i < TAP_SLOTS; i++)
		ck_assert_uint_eq(wb_ring_consumer_at(&cons, i)->u.order.order_id, i + 1);
	ck_assert_uint_eq(wb_ring_consumer_dropped(&cons), TAP_EVENTS - TAP_SLOTS);
	builder_destroy(b);
	free(ring);
	free(tap);
}

START_TEST(test_tap_gets_the_applied_events_in_order_and_a_full_one_drops_and_counts)
{
	tap_run(BUILDER_PATH_RTC);
	tap_run(BUILDER_PATH_PIPELINE);
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
	tcase_add_test(tc, test_tap_gets_the_applied_events_in_order_and_a_full_one_drops_and_counts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
