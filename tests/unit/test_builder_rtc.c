/*
 * The builder's run-to-completion path and its waiting:
 *
 * - run to completion (one thread: venue books, Super-Book and publish per
 *   batch) builds exactly the venue books and Super-Book the two-thread
 *   pipeline builds, on a generated day of three venues (Nasdaq ITCH, Cboe
 *   BZX PITCH, NYSE XDP), read from a ring or in place;
 * - a thread waiting for work is woken by the first event after a quiet
 *   period: the pipeline's thread 2 sleeping in its futex, and thread 1
 *   blocked in an in-place source's wait; asserted by what happened (it
 *   slept, it was woken, the event was applied), never by a time;
 * - --path: the words wirebookd takes (a bad one is refused, naming the
 *   option) and the rule --path auto applies.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/superbook.h"
#include "builder_harness.h"
#include "common/options.h"
#include "gen/gen_flow.h"
#include "gen/gen_proto.h"
#include "feed/feed.h"
#include "wirebook/ring.h"

#define DAY_SLOTS (1u << 18)
#define VENUES 3

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

static uint32_t ipv4(int a, int b, int c, int d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | (uint32_t)d;
}

/* ---- a generated three-venue day, decoded into one ring -------------------- */

struct day {
	struct feed_engine engine;
	struct wb_ring_producer prod;
	struct feed_map_entry map[VENUES];
	int line[VENUES];
	void *ring;
};

static int day_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		    uint32_t len)
{
	struct day *d = ctx;
	int i;

	for (i = 0; i < VENUES && (d->map[i].ip != ip || d->map[i].port != port); i++)
		;
	ck_assert_int_lt(i, VENUES);
	feed_process_payload(&d->engine, d->line[i], payload, len, ts, &d->prod);
	return 0;
}

static void day_make(struct day *d)
{
	static const struct {
		int protocol;
		uint8_t venue;
		uint16_t channel;
	} feeds[VENUES] = {
		{ FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, 0 },
		{ FEED_PROTO_PITCH, WB_VENUE_BZX, 1 },
		{ FEED_PROTO_XDP, WB_VENUE_NYSE, 1 },
	};
	struct feed_engine_config ecfg = { .alloc = zalloc, .free = free };
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DEMO, .seed = 7,
				      .venues = 1u << WB_VENUE_NASDAQ | 1u << WB_VENUE_BZX |
						1u << WB_VENUE_NYSE };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	void *enc[VENUES];
	const struct gen_proto *gp[VENUES];
	struct gen_action a;

	ck_assert_ptr_nonnull(flow);
	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(feed_engine_init(&d->engine, &ecfg), 0);
	ck_assert_int_ge(feed_subscribe(&d->engine, "*", 1), 0);
	for (int i = 0; i < VENUES; i++) {
		d->map[i] = (struct feed_map_entry){ .ip = ipv4(239, 9, 1, 1 + i), .port = 7000,
						     .channel = feeds[i].channel,
						     .protocol = feeds[i].protocol,
						     .venue = feeds[i].venue, .name = "A" };
		d->line[i] = feed_map_add_entry(&d->engine, &d->map[i]);
		ck_assert_int_ge(d->line[i], 0);
	}
	d->ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(DAY_SLOTS));
	ck_assert_ptr_nonnull(d->ring);
	memset(d->ring, 0, wb_ring_bytes(DAY_SLOTS));
	wb_ring_format(d->ring, DAY_SLOTS, 1);
	wb_ring_producer_init(&d->prod, d->ring);
	ck_assert_int_eq(gen_flow_init(flow, &fc), 0);
	for (int i = 0; i < VENUES; i++) {
		struct gen_encoder_config cfg = {
			.venue = feeds[i].venue, .a_ip = d->map[i].ip, .a_port = d->map[i].port,
			.channel = feeds[i].channel, .map = &d->map[i], .map_len = 1,
			.midnight_ns = 1771477200ull * 1000000000ull, .seed = 1 + (uint64_t)i,
			.sink = { .packet = day_sink, .ctx = d },
		};

		memcpy(cfg.session, "TESTRTC001", 10);
		gp[i] = gen_proto_get(feeds[i].protocol);
		ck_assert_ptr_nonnull(gp[i]);
		enc[i] = calloc(1, gp[i]->size);
		ck_assert_ptr_nonnull(enc[i]);
		ck_assert_int_eq(gp[i]->init(enc[i], &cfg), 0);
	}
	while (gen_flow_next(flow, &a) == 1)
		for (int i = 0; i < VENUES; i++)
			ck_assert_int_eq(gp[i]->action(enc[i], flow, &a), 0);
	for (int i = 0; i < VENUES; i++) {
		ck_assert_int_eq(gp[i]->finish(enc[i], flow->ts + 1000000), 0);
		gp[i]->destroy(enc[i]);
		free(enc[i]);
		ck_assert_uint_gt(d->engine.lines[d->line[i]].counters.events, 1000);
		ck_assert_uint_eq(d->engine.lines[d->line[i]].counters.gaps, 0);
	}
	wb_ring_producer_publish(&d->prod);
	ck_assert_uint_eq(d->prod.dropped, 0);
	gen_flow_destroy(flow);
	free(flow);
}

static void day_free(struct day *d)
{
	feed_engine_destroy(&d->engine);
	free(d->ring);
}

static int pump_nothing(void *arg)
{
	(void)arg;
	return BUILDER_PUMP_EOF;
}

/* The day's events in place (as the kernel rings hand them out). */
struct array_source {
	const struct wb_event *events;
	uint64_t n, next;
};

static uint64_t array_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct array_source *a = ctx;
	uint64_t k = 0;

	while (k < max && a->next < a->n)
		evs[k++] = &a->events[a->next++];
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

/* Run a builder of path on the day (from its ring, or in place); its checksums. */
static void run_day(struct day *d, int path, int in_place, uint64_t sums[2])
{
	struct builder *b = harness_builder(path, 1u << 16, in_place ? "rtc_place" : "rtc_ring");
	struct builder_warm_report warm;
	struct builder_counters ctr;
	struct array_source src = { (const struct wb_event *)((const char *)d->ring + WB_RING_SLOTS_OFFSET),
				    d->prod.head, 0 };

	/* Warming changes no byte of the books. */
	builder_warm(b, 0, &warm);
	ck_assert_uint_gt(warm.bytes, 0);
	ck_assert_int_eq(warm.lock_errno, -1);
	if (in_place) {
		struct builder_source s = { .peek = array_peek, .release = array_release,
					    .dropped = array_dropped, .ctx = &src };

		ck_assert_int_eq(builder_start_source(b, &s), 0);
		/* A source never ends: wait for all of it, then stop. */
		for (int n = 0; n < 600000; n++) {
			builder_get_counters(b, &ctr);
			if (ctr.events == src.n)
				break;
			usleep(100);
		}
	} else {
		/* Each run reads the ring from its start: rewind its consumer side. */
		((struct wb_ring_cons_page *)((char *)d->ring + WB_RING_PAGE))->tail = 0;
		ck_assert_int_eq(builder_start(b, d->ring, pump_nothing, NULL), 0);
		for (int n = 0; !builder_done(b) && n < 600000; n++)
			usleep(100);
		ck_assert(builder_done(b));
	}
	builder_stop(b);
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, d->prod.head);
	ck_assert_int_eq(ctr.path, path);
	if (path == BUILDER_PATH_RTC)
		ck_assert_int_eq(ctr.cpu[1], -1);	/* no thread 2 */
	ck_assert_uint_eq(builder_venue_counters(b)->unknown_order, 0);
	harness_builder_checksums(b, sums);
	builder_destroy(b);
}

START_TEST(test_rtc_builds_the_books_the_pipeline_builds_on_a_three_venue_day)
{
	struct day *d = calloc(1, sizeof(*d));
	uint64_t pipeline[2], rtc[2], rtc_in_place[2];

	ck_assert_ptr_nonnull(d);
	day_make(d);
	ck_assert_uint_gt(d->prod.head, 20000);
	run_day(d, BUILDER_PATH_PIPELINE, 0, pipeline);
	run_day(d, BUILDER_PATH_RTC, 0, rtc);
	run_day(d, BUILDER_PATH_RTC, 1, rtc_in_place);
	ck_assert_uint_eq(rtc[0], pipeline[0]);
	ck_assert_uint_eq(rtc[1], pipeline[1]);
	ck_assert_uint_eq(rtc_in_place[0], pipeline[0]);
	ck_assert_uint_eq(rtc_in_place[1], pipeline[1]);
	day_free(d);
	free(d);
}
END_TEST

/* ---- waking after a quiet period ------------------------------------------- */

static void add_order(struct wb_ring_producer *p, uint64_t id)
{
	struct wb_event *ev = wb_ring_producer_slot(p);

	ck_assert_ptr_nonnull(ev);
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
	wb_ring_producer_commit(p);
}

/* Thread 1's pump when the test thread produces: nothing of its own, until told to end. */
struct quiet_pump {
	struct wb_ring_producer prod;	/* the test thread's */
	int stop;
};

static int pump_quiet(void *arg)
{
	struct quiet_pump *q = arg;

	return wb_load_acquire(&q->stop) ? BUILDER_PUMP_EOF : BUILDER_PUMP_IDLE;
}

START_TEST(test_pipeline_thread_2_asleep_is_woken_by_the_first_update_after_a_quiet_period)
{
	struct builder *b = harness_builder(BUILDER_PATH_PIPELINE, 1u << 16, "rtc_wake2");
	struct quiet_pump q = { .stop = 0 };
	struct builder_counters ctr;
	void *ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(1024));
	int n;

	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, wb_ring_bytes(1024));
	wb_ring_format(ring, 1024, 1);
	wb_ring_producer_init(&q.prod, ring);
	ck_assert_int_eq(builder_start(b, ring, pump_quiet, &q), 0);
	/* Quiet: thread 2 spins, then says it sleeps. */
	for (n = 0; n < 600000; n++) {
		builder_get_counters(b, &ctr);
		if (ctr.t2_asleep)
			break;
		usleep(100);
	}
	ck_assert_msg(ctr.t2_asleep, "thread 2 never went to sleep on an empty queue");
	ck_assert_uint_eq(ctr.t2_wakes, 0);
	ck_assert_uint_eq(superbook_counters(builder_superbook(b))->updates, 0);

	/* The first event after the quiet period: thread 1 applies it, and
	 * thread 2 must be woken to fold it into the Super-Book (its sleep
	 * has no timer: nothing else would wake it). */
	add_order(&q.prod, 1);
	wb_ring_producer_publish(&q.prod);
	for (n = 0; n < 600000; n++) {
		if (wb_load_relaxed(&superbook_counters(builder_superbook(b))->updates) > 0)
			break;
		usleep(100);
	}
	builder_get_counters(b, &ctr);
	/* Applied at all proves the wake: thread 2's sleep has no timer. The
	 * wake count itself is not asserted: a futex may also return
	 * spuriously, and thread 2 then finds the update while it spins. */
	ck_assert_uint_gt(superbook_counters(builder_superbook(b))->updates, 0);
	ck_assert_uint_ge(ctr.t2_idle_sleeps, 1);

	wb_store_release(&q.stop, 1);
	for (n = 0; !builder_done(b) && n < 600000; n++)
		usleep(100);
	ck_assert(builder_done(b));
	builder_stop(b);
	builder_destroy(b);
	free(ring);
}
END_TEST

/* An in-place source whose wait blocks until the test posts an event. */
struct blocking_source {
	struct wb_event events[4];
	uint64_t n, next;	/* n: events made available so far */
	sem_t posted;
	int waiting;		/* thread 1 is inside wait() */
	int closing;		/* wait() returns at once: the test stops the builder */
	uint64_t waits;
};

static uint64_t blocking_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct blocking_source *s = ctx;
	uint64_t k = 0;

	while (k < max && s->next < wb_load_acquire(&s->n))
		evs[k++] = &s->events[s->next++];
	return k;
}

static void blocking_wait(void *ctx)
{
	struct blocking_source *s = ctx;

	wb_store_relaxed(&s->waits, s->waits + 1);
	wb_store_release(&s->waiting, 1);
	while (!wb_load_acquire(&s->closing) && sem_wait(&s->posted) != 0)
		;
	wb_store_release(&s->waiting, 0);
}

START_TEST(test_rtc_thread_1_blocked_in_the_source_wait_is_woken_by_the_first_event)
{
	struct builder *b = harness_builder(BUILDER_PATH_RTC, 1u << 16, "rtc_wake1");
	struct blocking_source *s = calloc(1, sizeof(*s));
	struct builder_source src = { .peek = blocking_peek, .release = array_release,
				      .dropped = array_dropped, .wait = blocking_wait };
	struct builder_counters ctr;
	int n;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sem_init(&s->posted, 0, 0), 0);
	src.ctx = s;
	s->events[0] = (struct wb_event){ .kind = WB_EV_ADD, .venue = WB_VENUE_NASDAQ, .line = 1,
					  .side = WB_SIDE_SELL, .instrument = 1, .seq = 1,
					  .recv_ts = 1 };
	s->events[0].u.order.order_id = 1;
	s->events[0].u.order.price = 101 * WB_PRICE_SCALE;
	s->events[0].u.order.qty = 100;
	ck_assert_int_eq(builder_start_source(b, &src), 0);
	/* Quiet: after its spin, thread 1 blocks in the source's wait. */
	for (n = 0; n < 600000 && !wb_load_acquire(&s->waiting); n++)
		usleep(100);
	ck_assert_msg(wb_load_acquire(&s->waiting), "thread 1 never waited in the source");
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, 0);

	/* The first event: the producer's wakeup ends the wait, and run to
	 * completion applies and publishes it on thread 1. */
	wb_store_release(&s->n, 1);
	sem_post(&s->posted);
	/* The counters are stored after the books are published (and the
	 * batch copied to its readers): wait for both, not the first only. */
	for (n = 0; n < 600000; n++) {
		builder_get_counters(b, &ctr);
		if (wb_load_relaxed(&superbook_counters(builder_superbook(b))->updates) > 0 &&
		    ctr.events > 0)
			break;
		usleep(100);
	}
	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.events, 1);
	ck_assert_uint_gt(superbook_counters(builder_superbook(b))->updates, 0);
	ck_assert_uint_ge(wb_load_relaxed(&s->waits), 1);

	/* Stop: thread 1 may be back in the wait; let it out for good. */
	wb_store_release(&s->closing, 1);
	sem_post(&s->posted);
	builder_stop(b);
	builder_destroy(b);
	sem_destroy(&s->posted);
	free(s);
}
END_TEST

/* ---- --path ---------------------------------------------------------------- */

static const char *const path_words[] = { "rtc", "pipeline", "auto", NULL };

/* Thread 1's pump for the priority test: reports its own policy, then ends. */
struct policy_probe {
	int policy;
	int priority;
	int seen;
};

static int pump_probe_policy(void *arg)
{
	struct policy_probe *p = arg;
	struct sched_param sp;

	if (!p->seen && pthread_getschedparam(pthread_self(), &p->policy, &sp) == 0) {
		p->priority = sp.sched_priority;
		p->seen = 1;
	}
	return BUILDER_PUMP_EOF;
}

START_TEST(test_rt_priority_puts_the_path_thread_in_sched_fifo_or_says_why_not)
{
	struct builder_config bc;
	struct policy_probe probe = { 0 };
	struct builder_counters ctr;
	struct builder *b;
	void *ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(1024));
	char name[64];
	int err, n;

	memset(&bc, 0, sizeof(bc));
	bc.numa_node = -1;
	bc.cpus[0] = bc.cpus[1] = -1;
	bc.path = BUILDER_PATH_RTC;
	bc.rt_priority = 7;
	bc.books.max_instruments = 64;
	bc.books.expected_orders = 1024;
	snprintf(name, sizeof(name), "wbtest_rtprio_%d", (int)getpid());
	bc.shm.shm_name = name;
	b = builder_create(&bc, &err);
	ck_assert_msg(b, "builder_create: %d", err);
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, wb_ring_bytes(1024));
	wb_ring_format(ring, 1024, 1);
	ck_assert_int_eq(builder_start(b, ring, pump_probe_policy, &probe), 0);
	for (n = 0; !builder_done(b) && n < 600000; n++)
		usleep(100);
	ck_assert(builder_done(b));
	builder_stop(b);
	builder_get_counters(b, &ctr);
	ck_assert(probe.seen);
	if (ctr.rt_errno) {	/* no CAP_SYS_NICE: refused, said, and time-shared as before */
		ck_assert_int_eq(ctr.rt_errno, EPERM);
		ck_assert_int_ne(probe.policy, SCHED_FIFO);
	} else {
		ck_assert_int_eq(probe.policy, SCHED_FIFO);
		ck_assert_int_eq(probe.priority, 7);
	}
	builder_destroy(b);
	free(ring);

	/* Out of SCHED_FIFO's range: refused at creation. */
	bc.rt_priority = 100;
	ck_assert_ptr_null(builder_create(&bc, &err));
	ck_assert_int_eq(err, -EINVAL);
}
END_TEST

START_TEST(test_path_words_are_parsed_and_a_bad_one_names_the_option)
{
	char msg[512] = "";
	FILE *f = tmpfile();
	int saved = dup(2), which = -1;
	size_t got;

	ck_assert_int_eq(opt_choice("wirebookd", "--path", "rtc", path_words, &which), 0);
	ck_assert_int_eq(which, 0);
	ck_assert_int_eq(opt_choice("wirebookd", "--path", "auto", path_words, &which), 0);
	ck_assert_int_eq(which, 2);
	/* A bad word: -1 (wirebookd exits 2), and one line naming the option
	 * and the words it takes. */
	ck_assert_ptr_nonnull(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	ck_assert_int_eq(opt_choice("wirebookd", "--path", "fast", path_words, &which), -1);
	ck_assert_int_eq(opt_choice("wirebookd", "--path", "RTC", path_words, &which), -1);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	got = fread(msg, 1, sizeof(msg) - 1, f);
	msg[got] = 0;
	fclose(f);
	ck_assert_msg(strstr(msg, "wirebookd: --path 'fast': expected one of: rtc, pipeline, auto"),
		      "message: %s", msg);
	ck_assert_ptr_nonnull(strstr(msg, "--path 'RTC'"));
}
END_TEST

START_TEST(test_path_auto_runs_to_completion_when_the_pipeline_would_outnumber_the_cores)
{
	ck_assert_int_eq(builder_auto_path(0, 1), BUILDER_PATH_RTC);
	ck_assert_int_eq(builder_auto_path(0, 2), BUILDER_PATH_RTC);
	ck_assert_int_eq(builder_auto_path(0, 3), BUILDER_PATH_PIPELINE);
	ck_assert_int_eq(builder_auto_path(0, 64), BUILDER_PATH_PIPELINE);
	/* --cpus A: both threads on one core; --cpus A,B: one each, as asked. */
	ck_assert_int_eq(builder_auto_path(1, 64), BUILDER_PATH_RTC);
	ck_assert_int_eq(builder_auto_path(2, 2), BUILDER_PATH_PIPELINE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("builder_rtc");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_rtc_builds_the_books_the_pipeline_builds_on_a_three_venue_day);
	tcase_add_test(tc, test_pipeline_thread_2_asleep_is_woken_by_the_first_update_after_a_quiet_period);
	tcase_add_test(tc, test_rtc_thread_1_blocked_in_the_source_wait_is_woken_by_the_first_event);
	tcase_add_test(tc, test_path_words_are_parsed_and_a_bad_one_names_the_option);
	tcase_add_test(tc, test_path_auto_runs_to_completion_when_the_pipeline_would_outnumber_the_cores);
	tcase_add_test(tc, test_rt_priority_puts_the_path_thread_in_sched_fifo_or_says_why_not);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
