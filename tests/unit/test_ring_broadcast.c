/*
 * The broadcast ring (include/wirebook/ring.h, "Broadcast rings"), which
 * wirebookd's event stream is: a reader gets every event in order while it
 * keeps up, counts exactly what it lost when it falls behind or a slot is
 * rewritten under its copy, never hands out a torn event, and sleeps in a
 * futex the writer wakes only when a reader said it sleeps; the same
 * through libwirebook's wb_events_attach (events.h), to the stream's end.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "book/futex.h"
#include "wirebook/events.h"
#include "wirebook/ring.h"

#define STRESS_SLOTS 1024u
#define STRESS_EVENTS 4000000ull
#define STRESS_BATCH 64u

static void *ring_new(uint32_t slots)
{
	void *mem;

	ck_assert_int_eq(posix_memalign(&mem, WB_RING_PAGE, wb_ring_bytes(slots)), 0);
	memset(mem, 0, wb_ring_bytes(slots));
	wb_ring_format_kind(mem, slots, 1, WB_RING_MAGIC_BROADCAST);
	return mem;
}

static uint64_t check_value(uint64_t seq)
{
	return seq * 0x9e3779b97f4a7c15ull ^ 0xdeadbeefull;
}

/* An event whose every 8-byte word is derived from seq: a torn copy shows. */
static void make_event(struct wb_event *ev, uint64_t seq)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = WB_EV_ADD;
	ev->seq = seq;
	ev->exch_ts = check_value(seq) + 1;
	ev->recv_ts = check_value(seq) + 2;
	ev->u.order.order_id = check_value(seq);
	ev->u.order.price = (int64_t)(check_value(seq) >> 1);
	ev->u.order.ref = ~check_value(seq);
}

static int event_whole(const struct wb_event *ev)
{
	return ev->exch_ts == check_value(ev->seq) + 1 && ev->recv_ts == check_value(ev->seq) + 2 &&
	       ev->u.order.order_id == check_value(ev->seq) &&
	       ev->u.order.price == (int64_t)(check_value(ev->seq) >> 1) &&
	       ev->u.order.ref == ~check_value(ev->seq);
}

/* Write events [first, first + n) as one batch and publish them. */
static int write_batch(struct wb_ring_writer *w, uint64_t first, uint64_t n)
{
	struct wb_event ev;
	uint64_t i;

	wb_ring_writer_claim(w, n);
	for (i = 0; i < n; i++) {
		make_event(&ev, first + i);
		wb_ring_writer_put(w, &ev);
	}
	return wb_ring_writer_publish(w);
}

START_TEST(test_ring_broadcast_reader_gets_every_event_in_order)
{
	void *mem = ring_new(1024);
	struct wb_ring_writer w;
	struct wb_ring_reader r;
	struct wb_event out[300];
	uint64_t got = 0, n, i;

	wb_ring_writer_init(&w, mem);
	wb_ring_reader_init(&r, mem);
	write_batch(&w, 0, 700);
	write_batch(&w, 700, 300);
	while ((n = wb_ring_reader_copy(&r, out, 300)) > 0) {
		for (i = 0; i < n; i++) {
			ck_assert_uint_eq(out[i].seq, got + i);
			ck_assert(event_whole(&out[i]));
		}
		got += n;
	}
	ck_assert_uint_eq(got, 1000);
	ck_assert_uint_eq(r.lost, 0);
	ck_assert_uint_eq(((struct wb_ring_prod_page *)mem)->published, 1000);
	free(mem);
}
END_TEST

START_TEST(test_ring_broadcast_reader_a_ring_behind_counts_what_it_lost)
{
	void *mem = ring_new(1024);
	struct wb_ring_writer w;
	struct wb_ring_reader r;
	struct wb_event out[1024];
	uint64_t n;

	wb_ring_writer_init(&w, mem);
	wb_ring_reader_init(&r, mem);
	write_batch(&w, 0, 1000);
	write_batch(&w, 1000, 2000);	/* overwrites the first 1976 */
	n = wb_ring_reader_copy(&r, out, 1024);
	ck_assert_uint_eq(n, 1024);
	ck_assert_uint_eq(r.lost, 3000 - 1024);
	ck_assert_uint_eq(out[0].seq, 3000 - 1024);
	ck_assert_uint_eq(out[1023].seq, 2999);
	ck_assert(event_whole(&out[0]) && event_whole(&out[1023]));
	ck_assert_uint_eq(wb_ring_reader_copy(&r, out, 1024), 0);
	free(mem);
}
END_TEST

/* The writer claims slots it has not written yet: a reader's copy of
 * them may be torn, so it is dropped and counted, never handed out. */
START_TEST(test_ring_broadcast_slots_claimed_under_a_copy_are_lost_not_torn)
{
	void *mem = ring_new(1024);
	struct wb_ring_writer w;
	struct wb_ring_reader r;
	struct wb_event out[1024];
	uint64_t n;

	wb_ring_writer_init(&w, mem);
	wb_ring_reader_init(&r, mem);
	write_batch(&w, 0, 1024);
	wb_ring_writer_claim(&w, 10);	/* about to rewrite events 0..9 */
	n = wb_ring_reader_copy(&r, out, 1024);
	ck_assert_uint_eq(n, 1014);
	ck_assert_uint_eq(r.lost, 10);
	ck_assert_uint_eq(out[0].seq, 10);
	ck_assert_uint_eq(out[1013].seq, 1023);
	ck_assert(event_whole(&out[0]));
	free(mem);
}
END_TEST

START_TEST(test_ring_broadcast_new_reader_starts_at_the_oldest_event_held)
{
	void *mem = ring_new(1024);
	struct wb_ring_writer w;
	struct wb_ring_reader r;
	struct wb_event out[8];

	wb_ring_writer_init(&w, mem);
	write_batch(&w, 0, 5000);
	wb_ring_reader_init(&r, mem);
	ck_assert_uint_eq(wb_ring_reader_copy(&r, out, 8), 8);
	ck_assert_uint_eq(out[0].seq, 5000 - 1024);
	ck_assert_uint_eq(r.lost, 0);
	free(mem);
}
END_TEST

START_TEST(test_ring_broadcast_is_refused_by_the_single_consumer_check)
{
	void *mem = ring_new(1024);

	ck_assert_int_eq(wb_ring_check(mem, wb_ring_bytes(1024)), WB_RING_BAD_MAGIC);
	ck_assert_int_eq(wb_ring_check_kind(mem, wb_ring_bytes(1024), WB_RING_MAGIC_BROADCAST),
			 WB_RING_OK);
	free(mem);
}
END_TEST

/* A wake only for a reader that set the bit, and only once for it: a
 * reader that died asleep costs one futile wake, not one per batch. */
START_TEST(test_ring_broadcast_writer_wakes_only_a_reader_that_said_it_sleeps)
{
	void *mem = ring_new(1024);
	struct wb_ring_writer w;
	struct wb_ring_reader r;
	struct wb_event out[4];
	uint32_t word;

	wb_ring_writer_init(&w, mem);
	wb_ring_reader_init(&r, mem);
	ck_assert_int_eq(write_batch(&w, 0, 4), 0);
	ck_assert_int_eq(wb_ring_reader_prepare_sleep(&r, &word), 1);	/* 4 unread: no sleep */
	ck_assert_uint_eq(wb_ring_reader_copy(&r, out, 4), 4);
	ck_assert_int_eq(wb_ring_reader_prepare_sleep(&r, &word), 0);
	ck_assert_uint_eq(word & 1, 1);
	ck_assert_int_eq(write_batch(&w, 4, 1), 1);
	ck_assert_uint_ne(w.cons->sleeping, word);	/* a futex wait on word returns at once */
	ck_assert_uint_eq(w.cons->sleeping & 1, 0);
	ck_assert_int_eq(write_batch(&w, 5, 1), 0);
	ck_assert_uint_eq(w.prod->wakeups, 1);
	free(mem);
}
END_TEST

/* ---- two threads -------------------------------------------------------- */

struct stress {
	void *mem;
	uint32_t slots;
	uint64_t events;
	unsigned reader_delay;	/* pauses per event: a slow reader loses events */
	int attached;		/* the writer starts once the reader is there */
	uint64_t delivered, lost, torn, out_of_order, handle_dropped;
};

static void *stress_writer(void *arg)
{
	struct stress *s = arg;
	struct wb_ring_writer w;
	uint64_t seq = 0;

	wb_ring_writer_init(&w, s->mem);
	while (!wb_load_acquire(&s->attached))
		sched_yield();
	while (seq < s->events) {
		uint64_t n = s->events - seq < STRESS_BATCH ? s->events - seq : STRESS_BATCH;

		if (write_batch(&w, seq, n))
			futex_wake_shared_all(&w.cons->sleeping);
		seq += n;
	}
	if (wb_ring_writer_close(&w))
		futex_wake_shared_all(&w.cons->sleeping);
	return NULL;
}

/* The reader through libwirebook: wb_events_attach, peek, wait to the end. */
static void *stress_reader(void *arg)
{
	struct stress *s = arg;
	const struct wb_event *evs[512];
	struct wb_event_counts c;
	struct wb_events *ev;
	uint64_t next = 0;
	int err;

	ev = wb_events_attach(&s->mem, 1, wb_ring_bytes(s->slots), &err);
	ck_assert_msg(ev, "attach: %d", err);
	wb_store_release(&s->attached, 1);
	for (;;) {
		unsigned n = wb_events_peek(ev, evs, 512), i;

		if (!n) {
			int rc = wb_events_wait(ev, 1000);

			if (rc == WB_ESTALE)
				break;
			ck_assert_int_ge(rc, 0);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (!event_whole(evs[i]))
				s->torn++;
			if (evs[i]->seq < next)
				s->out_of_order++;
			next = evs[i]->seq + 1;
			for (unsigned d = 0; d < s->reader_delay; d++)
				__builtin_ia32_pause();
		}
		wb_events_release(ev);
	}
	ck_assert_int_eq(wb_events_counts(ev, &c), 0);
	s->delivered = c.delivered;
	s->handle_dropped = c.dropped;
	ck_assert_uint_eq(c.published, s->events);
	wb_events_close(ev);
	return NULL;
}

static void run_stress(struct stress *s)
{
	pthread_t wr, rd;

	s->mem = ring_new(s->slots);
	ck_assert_int_eq(pthread_create(&rd, NULL, stress_reader, s), 0);
	ck_assert_int_eq(pthread_create(&wr, NULL, stress_writer, s), 0);
	pthread_join(wr, NULL);
	pthread_join(rd, NULL);
	free(s->mem);
}

START_TEST(test_ring_broadcast_slow_reader_delivered_plus_dropped_equals_written_none_torn)
{
	struct stress s = { .slots = STRESS_SLOTS, .events = STRESS_EVENTS, .reader_delay = 20 };

	run_stress(&s);
	ck_assert_uint_eq(s.torn, 0);
	ck_assert_uint_eq(s.out_of_order, 0);
	ck_assert_uint_eq(s.delivered + s.handle_dropped, s.events);
	ck_assert_uint_gt(s.handle_dropped, 0);	/* the point: it fell behind */
}
END_TEST

/* A reader that sleeps in wb_events_wait is woken for every batch: with
 * a ring as big as the run, it gets every event. */
START_TEST(test_ring_broadcast_sleeping_reader_is_woken_and_gets_every_event)
{
	struct stress s = { .slots = 1u << 17, .events = 100000 };
	pthread_t wr, rd;
	struct wb_ring_cons_page *cons;
	void *mem;

	mem = s.mem = ring_new(s.slots);
	cons = (struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	ck_assert_int_eq(pthread_create(&rd, NULL, stress_reader, &s), 0);
	/* Let the reader find the ring empty and sleep in the futex. */
	for (int i = 0; i < 100000 && !(wb_load_acquire(&cons->sleeping) & 1); i++)
		sched_yield();
	ck_assert_int_eq(pthread_create(&wr, NULL, stress_writer, &s), 0);
	pthread_join(wr, NULL);
	pthread_join(rd, NULL);
	ck_assert_uint_eq(s.delivered, s.events);
	ck_assert_uint_eq(s.handle_dropped, 0);
	ck_assert_uint_eq(s.torn + s.out_of_order, 0);
	free(mem);
}
END_TEST

static Suite *ring_broadcast_suite(void)
{
	Suite *s = suite_create("ring_broadcast");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ring_broadcast_reader_gets_every_event_in_order);
	tcase_add_test(tc, test_ring_broadcast_reader_a_ring_behind_counts_what_it_lost);
	tcase_add_test(tc, test_ring_broadcast_slots_claimed_under_a_copy_are_lost_not_torn);
	tcase_add_test(tc, test_ring_broadcast_new_reader_starts_at_the_oldest_event_held);
	tcase_add_test(tc, test_ring_broadcast_is_refused_by_the_single_consumer_check);
	tcase_add_test(tc, test_ring_broadcast_writer_wakes_only_a_reader_that_said_it_sleeps);
	tcase_add_test(tc, test_ring_broadcast_slow_reader_delivered_plus_dropped_equals_written_none_torn);
	tcase_add_test(tc, test_ring_broadcast_sleeping_reader_is_woken_and_gets_every_event);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_broadcast_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
