/*
 * The event API (include/wirebook/events.h, lib/shm/events.c) hands out
 * the events of several rings (the module's per-CPU rings) in decode order
 * (recv_ts), whichever ring each landed in, zero-copy, holds the slots
 * until a release, counts drops, and keeps going when rings fill again;
 * with producers racing under a lock per venue, every venue's events in
 * its order.
 * The rings here are in-memory rings of the module's layout, attached with
 * wb_events_attach; wb_events_open is checked on what is not a device.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "wirebook/events.h"
#include "wirebook/ring.h"

#define RINGS 3
#define SLOTS 64u

struct fixture {
	struct wb_events *ev;
	void *mem[RINGS];
	struct wb_ring_producer prod[RINGS];
};

static void fixture_init(struct fixture *f)
{
	unsigned i;
	int err = 1;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < RINGS; i++) {
		ck_assert_int_eq(posix_memalign(&f->mem[i], WB_RING_PAGE, wb_ring_bytes(SLOTS)), 0);
		memset(f->mem[i], 0, wb_ring_bytes(SLOTS));
		wb_ring_format(f->mem[i], SLOTS, i + 1);
		wb_ring_producer_init(&f->prod[i], f->mem[i]);
	}
	f->ev = wb_events_attach(f->mem, RINGS, wb_ring_bytes(SLOTS), &err);
	ck_assert_ptr_nonnull(f->ev);
	ck_assert_int_eq(err, 0);
}

static void fixture_free(struct fixture *f)
{
	unsigned i;

	wb_events_close(f->ev);
	for (i = 0; i < RINGS; i++)
		free(f->mem[i]);
}

/* The consumer index ring r's producer sees. */
static uint64_t tail_of(const struct fixture *f, unsigned r)
{
	const struct wb_ring_cons_page *c =
		(const void *)((const char *)f->mem[r] + WB_RING_PAGE);

	return wb_load_acquire(&c->tail);
}

/* One event at a time, its slot handed back at once. */
static const struct wb_event *next(struct fixture *f, struct wb_event *copy)
{
	const struct wb_event *e;

	if (!wb_events_peek(f->ev, &e, 1))
		return NULL;
	*copy = *e;
	wb_events_release(f->ev);
	return copy;
}

static uint64_t counts(const struct fixture *f, int which)
{
	struct wb_event_counts c;

	ck_assert_int_eq(wb_events_counts(f->ev, &c), 0);
	ck_assert_uint_eq(c.rings, RINGS);
	return which == 0 ? c.delivered : which == 1 ? c.dropped : c.published;
}

/* One event with recv_ts ts (seq carries it too) on ring r, published. */
static int put(struct fixture *f, unsigned r, uint64_t ts)
{
	struct wb_event *ev = wb_ring_producer_slot(&f->prod[r]);

	if (!ev)
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->kind = WB_EV_ADD;
	ev->recv_ts = ts;
	ev->seq = ts;
	wb_ring_producer_commit(&f->prod[r]);
	wb_ring_producer_publish(&f->prod[r]);
	return 1;
}

START_TEST(test_events_merges_rings_in_recv_ts_order)
{
	struct fixture f;
	const struct wb_event *ev;
	struct wb_event copy;
	uint64_t ts, expect = 1;

	fixture_init(&f);
	/* Runs of packets on different CPUs, in the order of one venue's lock;
	 * one packet's events share a recv_ts and stay together. */
	for (ts = 1; ts <= 40; ts++)
		ck_assert(put(&f, (unsigned)((ts / 3) % RINGS), ts));
	while ((ev = next(&f, &copy)) != NULL) {
		ck_assert_uint_eq(ev->recv_ts, expect);
		expect++;
	}
	ck_assert_uint_eq(expect, 41);
	ck_assert_uint_eq(counts(&f, 0), 40);
	fixture_free(&f);
}
END_TEST

START_TEST(test_events_releases_slots_so_full_rings_flow_again)
{
	struct fixture f;
	const struct wb_event *ev;
	struct wb_event copy;
	uint64_t ts = 1, expect = 1;
	int round;

	fixture_init(&f);
	for (round = 0; round < 10; round++) {
		unsigned n = 0;

		/* Fill ring 1 completely, then drain it. */
		while (put(&f, 1, ts))
			ts++, n++;
		ck_assert_uint_eq(n, SLOTS);
		while ((ev = next(&f, &copy)) != NULL)
			ck_assert_uint_eq(ev->recv_ts, expect++);
		ck_assert_uint_eq(expect, ts);
	}
	ck_assert_uint_eq(counts(&f, 1), 0);
	ck_assert_uint_eq(counts(&f, 2), 10 * SLOTS);
	fixture_free(&f);
}
END_TEST

START_TEST(test_events_peek_hands_out_ring_slots_in_order_and_holds_them_until_release)
{
	struct fixture f;
	const struct wb_event *evs[2 * SLOTS];
	uint64_t ts = 1, expect = 1, n;
	unsigned i, r;

	fixture_init(&f);
	/* Packets alternate over the rings, as CPUs take turns. */
	for (i = 0; i < 30; i++)
		ck_assert(put(&f, i % RINGS, ts++));
	n = wb_events_peek(f.ev, evs, 10);
	ck_assert_uint_eq(n, 10);
	n += wb_events_peek(f.ev, evs + n, 2 * SLOTS);
	ck_assert_uint_eq(n, 30);
	for (i = 0; i < n; i++) {
		const char *slots = (const char *)f.mem[i % RINGS] + WB_RING_SLOTS_OFFSET;

		/* In place: the event is the ring's own slot, not a copy. */
		ck_assert_uint_eq(evs[i]->recv_ts, expect++);
		ck_assert((const char *)evs[i] >= slots &&
			  (const char *)evs[i] < slots + SLOTS * sizeof(struct wb_event));
	}
	/* Held: the producers still see their slots taken until the release. */
	for (r = 0; r < RINGS; r++)
		ck_assert_uint_eq(tail_of(&f, r), 0);
	ck_assert_uint_eq(wb_events_peek(f.ev, evs, 2 * SLOTS), 0);
	wb_events_release(f.ev);
	for (r = 0; r < RINGS; r++)
		ck_assert_uint_eq(tail_of(&f, r), 10);
	/* A full ring flows again after a release, and the order holds. */
	while (put(&f, 1, ts))
		ts++;
	ck_assert_uint_eq(wb_events_peek(f.ev, evs, 2 * SLOTS), SLOTS);
	ck_assert_uint_eq(evs[0]->recv_ts, 31);
	ck_assert_uint_eq(evs[SLOTS - 1]->recv_ts, ts - 1);
	wb_events_release(f.ev);
	ck_assert(put(&f, 1, ts));
	ck_assert_uint_eq(counts(&f, 0), 30 + SLOTS);
	fixture_free(&f);
}
END_TEST

START_TEST(test_events_counts_drops_of_every_ring)
{
	struct fixture f;
	unsigned i;

	fixture_init(&f);
	for (i = 0; i < SLOTS + 5; i++)
		if (!put(&f, 2, i + 1)) {
			wb_ring_producer_drop(&f.prod[2]);
			wb_ring_producer_publish(&f.prod[2]);
		}
	ck_assert_uint_eq(counts(&f, 1), 5);
	fixture_free(&f);
}
END_TEST

START_TEST(test_events_wait_on_attached_rings_times_out_then_sees_a_publish)
{
	struct fixture f;
	struct wb_event copy;

	fixture_init(&f);
	ck_assert_int_eq(wb_events_wait(f.ev, 5), 0);
	ck_assert(put(&f, 0, 7));
	ck_assert_int_eq(wb_events_wait(f.ev, 5), 1);
	ck_assert_ptr_nonnull(next(&f, &copy));
	ck_assert_uint_eq(copy.recv_ts, 7);
	fixture_free(&f);
}
END_TEST

START_TEST(test_events_refuses_bad_rings_and_what_is_not_a_device)
{
	void *mem, *rings[2];
	int err = 0;

	ck_assert_int_eq(posix_memalign(&mem, WB_RING_PAGE, wb_ring_bytes(SLOTS)), 0);
	memset(mem, 0, wb_ring_bytes(SLOTS));
	rings[0] = mem;
	rings[1] = NULL;
	/* not formatted: no magic */
	ck_assert_ptr_null(wb_events_attach(rings, 1, wb_ring_bytes(SLOTS), &err));
	ck_assert_int_eq(err, WB_EBADMAGIC);
	wb_ring_format(mem, SLOTS, 1);
	/* too short for its slot count */
	ck_assert_ptr_null(wb_events_attach(rings, 1, wb_ring_bytes(SLOTS / 2), &err));
	ck_assert_int_eq(err, WB_EBADMAGIC);
	ck_assert_ptr_null(wb_events_attach(rings, 2, wb_ring_bytes(SLOTS), &err));
	ck_assert_int_eq(err, WB_EINVAL);
	ck_assert_ptr_null(wb_events_attach(rings, 0, wb_ring_bytes(SLOTS), &err));
	ck_assert_int_eq(err, WB_EINVAL);
	/* the device: missing, and a character device that is not ours */
	ck_assert_ptr_null(wb_events_open("/nonexistent/wirebook", &err));
	ck_assert_int_eq(err, WB_ENODEV);
	ck_assert_ptr_null(wb_events_open("/dev/null", &err));
	ck_assert_int_eq(err, WB_EBADMAGIC);
	ck_assert_int_eq(wb_events_counts(NULL, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_events_wait(NULL, 0), WB_EINVAL);
	wb_events_close(NULL);
	free(mem);
}
END_TEST

/*
 * The module's scheme with a lock per venue, run for real: each producer
 * thread is a CPU with its ring; it takes a venue's lock, stamps its
 * events as wb_next_recv_ts does (above the venue's last and the ring's
 * last), writes and publishes them, unlocks. Across venues the threads
 * race, and the shared clock now and then steps back. The reader, meanwhile,
 * must hand out every venue's events in that venue's order, none lost.
 */
#define VENUES 4
#define PER_PRODUCER 60000u

static struct {
	pthread_mutex_t lock[VENUES];
	uint64_t last_ts[VENUES];	/* under lock[v] */
	uint64_t next_seq[VENUES];	/* under lock[v] */
	uint64_t clock;			/* the "wall clock": atomic */
	unsigned finished;		/* producers done: atomic */
	struct fixture *f;
} sim;

static void *producer(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg, seed = r + 1, done = 0;
	uint64_t ring_last = 0;

	while (done < PER_PRODUCER) {
		unsigned v = (seed = seed * 1103515245u + 12345u) >> 16 & (VENUES - 1);
		unsigned k = 1 + (seed >> 8) % 3, i;
		uint64_t now, ts;

		/* Room first: only this thread fills the ring, so it stays. */
		while (wb_ring_producer_slot(&sim.f->prod[r]) == NULL ||
		       SLOTS - (sim.f->prod[r].head - tail_of(sim.f, r)) < k)
			sched_yield();
		now = __atomic_add_fetch(&sim.clock, 1, __ATOMIC_RELAXED);
		if ((seed >> 4) % 97 == 0)	/* a step back of the wall clock */
			now = __atomic_sub_fetch(&sim.clock, 500, __ATOMIC_RELAXED);
		pthread_mutex_lock(&sim.lock[v]);
		ts = now;
		if (ts <= sim.last_ts[v])
			ts = sim.last_ts[v] + 1;
		if (ts <= ring_last)
			ts = ring_last + 1;
		sim.last_ts[v] = ring_last = ts;
		for (i = 0; i < k; i++) {
			struct wb_event *ev = wb_ring_producer_slot(&sim.f->prod[r]);

			ck_assert_ptr_nonnull(ev);
			memset(ev, 0, sizeof(*ev));
			ev->venue = (uint8_t)v;
			ev->line = (uint16_t)r;
			ev->recv_ts = ts;
			ev->seq = sim.next_seq[v]++;
			wb_ring_producer_commit(&sim.f->prod[r]);
		}
		wb_ring_producer_publish(&sim.f->prod[r]);
		pthread_mutex_unlock(&sim.lock[v]);
		done += k;
	}
	__atomic_add_fetch(&sim.finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

START_TEST(test_events_keep_each_venues_order_with_a_lock_per_venue)
{
	struct fixture f;
	pthread_t t[RINGS];
	const struct wb_event *evs[16];
	uint64_t expect[VENUES] = { 0 }, total = 0, want = 0;
	unsigned i, v;
	int running = 1;

	fixture_init(&f);
	memset(&sim, 0, sizeof(sim));
	sim.f = &f;
	sim.clock = 1000000;
	for (v = 0; v < VENUES; v++)
		pthread_mutex_init(&sim.lock[v], NULL);
	for (i = 0; i < RINGS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, producer, (void *)(uintptr_t)i), 0);
	while (running) {
		unsigned n = wb_events_peek(f.ev, evs, 1 + (unsigned)(total % 16));

		for (i = 0; i < n; i++) {
			v = evs[i]->venue;
			ck_assert_uint_lt(v, VENUES);
			ck_assert_msg(evs[i]->seq == expect[v], "venue %u: event %llu came before %llu",
				      v, (unsigned long long)evs[i]->seq,
				      (unsigned long long)expect[v]);
			expect[v]++;
		}
		total += n;
		wb_events_release(f.ev);
		if (!n && __atomic_load_n(&sim.finished, __ATOMIC_ACQUIRE) == RINGS) {
			want = 0;
			for (v = 0; v < VENUES; v++)
				want += sim.next_seq[v];
			running = total < want;
		}
	}
	for (i = 0; i < RINGS; i++)
		pthread_join(t[i], NULL);
	want = 0;
	for (v = 0; v < VENUES; v++)
		want += sim.next_seq[v];
	ck_assert_uint_eq(total, want);
	ck_assert_uint_eq(counts(&f, 1), 0);
	fixture_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("events");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_events_merges_rings_in_recv_ts_order);
	tcase_add_test(tc, test_events_wait_on_attached_rings_times_out_then_sees_a_publish);
	tcase_add_test(tc, test_events_refuses_bad_rings_and_what_is_not_a_device);
	tcase_add_test(tc, test_events_releases_slots_so_full_rings_flow_again);
	tcase_add_test(tc, test_events_counts_drops_of_every_ring);
	tcase_add_test(tc, test_events_peek_hands_out_ring_slots_in_order_and_holds_them_until_release);
	tcase_add_test(tc, test_events_keep_each_venues_order_with_a_lock_per_venue);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
