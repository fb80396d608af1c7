/*
 * The builder's event stream (builder_config.stream_slots, wirebookd
 * --events): on every path (run to completion, pipeline, events read in
 * place from a builder_source) every event the books applied reaches the
 * stream once, byte for byte, in order; a reader sees the stream's end
 * after the stop; the object is gone after the destroy.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "book/builder.h"
#include "builder_harness.h"
#include "wirebook/events.h"
#include "wirebook/ring.h"

#define EVENTS 50000u
#define SLOTS (1u << 16)

static struct wb_event sent[EVENTS];

/* Adds and deletes of one symbol's orders on Nasdaq, every word distinct. */
static void make_events(void)
{
	uint32_t i;

	memset(sent, 0, sizeof(sent));
	for (i = 0; i < EVENTS; i++) {
		struct wb_event *e = &sent[i];
		uint32_t order = i / 2 + 1;

		e->kind = i % 2 ? WB_EV_DELETE : WB_EV_ADD;
		e->venue = WB_VENUE_NASDAQ;
		e->side = order % 2 ? WB_SIDE_BUY : WB_SIDE_SELL;
		e->instrument = 1;
		e->seq = i + 1;
		e->exch_ts = 1000000ull + i;
		e->recv_ts = 2000000ull + i;
		e->u.order.order_id = order;
		if (e->kind == WB_EV_ADD) {
			e->u.order.price = (int64_t)(100 + order % 7) * WB_PRICE_SCALE;
			e->u.order.qty = 100 + order % 300;
		}
	}
}

static int pump_nothing(void *arg)
{
	(void)arg;
	return BUILDER_PUMP_EOF;
}

/* A builder_source over sent[], in runs of odd sizes. */
struct array_source {
	uint64_t next, peeks;
};

static uint64_t array_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct array_source *a = ctx;
	uint64_t k = 0;

	if (max > 1 + a->peeks % 97)
		max = 1 + a->peeks % 97;
	while (k < max && a->next < EVENTS)
		evs[k++] = &sent[a->next++];
	a->peeks++;
	return k;
}

static void array_release(void *ctx)
{
	(void)ctx;
}

static uint64_t array_dropped(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Read the whole stream of book name: every event sent, in order, then its end. */
static void check_stream(const char *name)
{
	const struct wb_event *evs[256];
	struct wb_event_counts c;
	struct wb_events *ev;
	uint64_t got = 0;
	int err;

	ev = wb_events_open_shm(name, &err);
	ck_assert_msg(ev, "wb_events_open_shm: %s", wb_strerror(err));
	for (;;) {
		unsigned n = wb_events_peek(ev, evs, 256), i;

		if (!n) {
			ck_assert_int_eq(wb_events_wait(ev, 0), WB_ESTALE);	/* ended, all read */
			break;
		}
		for (i = 0; i < n; i++, got++) {
			ck_assert_uint_lt(got, EVENTS);
			ck_assert_msg(!memcmp(evs[i], &sent[got], sizeof(sent[got])),
				      "event %llu differs", (unsigned long long)got);
		}
		wb_events_release(ev);
	}
	ck_assert_uint_eq(got, EVENTS);
	ck_assert_int_eq(wb_events_counts(ev, &c), 0);
	ck_assert_uint_eq(c.published, EVENTS);
	ck_assert_uint_eq(c.dropped, 0);
	wb_events_close(ev);
}

static void run(int path, int in_place, const char *tag)
{
	struct array_source a = { 0, 0 };
	struct builder_counters ctr;
	struct wb_ring_producer p;
	struct builder *b;
	char name[64], obj[80];
	void *ring = NULL;
	uint32_t i;
	int n;

	make_events();
	b = harness_builder_stream(path, 1u << 14, tag, SLOTS);
	snprintf(name, sizeof(name), "wbtest_%s_%d", tag, (int)getpid());	/* the harness's name */
	ck_assert_ptr_nonnull(builder_event_stream(b));
	if (in_place) {
		struct builder_source src = { .peek = array_peek, .release = array_release,
					      .dropped = array_dropped, .ctx = &a };

		ck_assert_int_eq(builder_start_source(b, &src), 0);
		for (n = 0; a.next < EVENTS && n < 60000; n++)
			usleep(1000);
	} else {
		ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(SLOTS));
		ck_assert_ptr_nonnull(ring);
		memset(ring, 0, wb_ring_bytes(SLOTS));
		wb_ring_format(ring, SLOTS, 1);
		wb_ring_producer_init(&p, ring);
		for (i = 0; i < EVENTS; i++) {
			*wb_ring_producer_slot(&p) = sent[i];
			wb_ring_producer_commit(&p);
		}
		wb_ring_producer_publish(&p);
		ck_assert_int_eq(builder_start(b, ring, pump_nothing, NULL), 0);
		for (n = 0; !builder_done(b) && n < 60000; n++)
			usleep(1000);
	}
	builder_stop(b);	/* drains what the source still holds; closes the stream */
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, EVENTS);
	check_stream(name);
	builder_destroy(b);
	snprintf(obj, sizeof(obj), "/%s%s", name, WB_EVENTS_SHM_SUFFIX);
	ck_assert_int_lt(shm_open(obj, O_RDONLY, 0), 0);
	ck_assert_int_eq(errno, ENOENT);
	free(ring);
}

START_TEST(test_builder_stream_rtc_publishes_every_applied_event_once_in_order)
{
	run(BUILDER_PATH_RTC, 0, "stream_rtc");
}
END_TEST

START_TEST(test_builder_stream_pipeline_publishes_every_applied_event_once_in_order)
{
	run(BUILDER_PATH_PIPELINE, 0, "stream_pipe");
}
END_TEST

START_TEST(test_builder_stream_in_place_source_publishes_every_applied_event_once_in_order)
{
	run(BUILDER_PATH_RTC, 1, "stream_inplace");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("builder_stream");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_builder_stream_rtc_publishes_every_applied_event_once_in_order);
	tcase_add_test(tc, test_builder_stream_pipeline_publishes_every_applied_event_once_in_order);
	tcase_add_test(tc, test_builder_stream_in_place_source_publishes_every_applied_event_once_in_order);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
