/*
 * The event ring (include/wirebook/ring.h): order and completeness across
 * two threads, drop-and-count on overflow, a consumer page that lies,
 * attach-time validation, and the sleep/wakeup handshake.
 *
 * WB_RING_STRESS_EVENTS scales the two-thread test (default 10^8 events).
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wirebook/ring.h"

#define STRESS_DEFAULT_EVENTS 100000000ull
#define STRESS_SLOTS 1024u
#define STRESS_BATCH 32u
#define CANARY 0xa5

/* A ring in its own zeroed allocation, with canary bytes after the slots. */
struct test_ring {
	uint8_t *mem;
	uint32_t slots;
	size_t bytes;
};

static void ring_create(struct test_ring *r, uint32_t slots)
{
	r->slots = slots;
	r->bytes = wb_ring_bytes(slots);
	ck_assert_int_eq(posix_memalign((void **)&r->mem, WB_RING_PAGE, r->bytes + WB_RING_PAGE), 0);
	memset(r->mem, 0, r->bytes);
	memset(r->mem + r->bytes, CANARY, WB_RING_PAGE);
	wb_ring_format(r->mem, slots, 12345);
	ck_assert_int_eq(wb_ring_check(r->mem, r->bytes), WB_RING_OK);
}

static void ring_destroy(struct test_ring *r)
{
	for (size_t i = 0; i < WB_RING_PAGE; i++)
		ck_assert_msg(r->mem[r->bytes + i] == CANARY, "byte %zu after the slots written", i);
	free(r->mem);
}

static struct wb_ring_prod_page *prod_page(struct test_ring *r)
{
	return (struct wb_ring_prod_page *)r->mem;
}

static struct wb_ring_cons_page *cons_page(struct test_ring *r)
{
	return (struct wb_ring_cons_page *)(r->mem + WB_RING_PAGE);
}

/* A recognizable event: seq and a check value derived from it. */
static uint64_t check_value(uint64_t seq)
{
	return seq * 0x9e3779b97f4a7c15ull ^ 0xdeadbeefull;
}

static int offer(struct wb_ring_producer *p, uint64_t seq)
{
	struct wb_event *ev = wb_ring_producer_slot(p);

	if (!ev) {
		wb_ring_producer_drop(p);
		return 0;
	}
	ev->kind = WB_EV_ADD;
	ev->seq = seq;
	ev->u.order.order_id = check_value(seq);
	wb_ring_producer_commit(p);
	return 1;
}

/* Back off politely: the test machine has two cores shared with others. */
static void spin_wait(unsigned *spins)
{
	if (++*spins < 64)
		__builtin_ia32_pause();
	else
		sched_yield();
}

/* ---- two threads, no overflow ------------------------------------------- */

struct stress {
	struct test_ring ring;
	uint64_t events;
	bool drop_when_full;	/* false: wait for room (lossless test) */
	uint64_t offered, delivered, consumer_saw_dropped;
	uint64_t errors;	/* out-of-order, duplicate or corrupt events seen */
	uint64_t first_bad_seq, first_bad_expected;
	uint32_t consumer_delay; /* pause per event, to make the consumer slow */
	int done;
};

static void *stress_producer(void *arg)
{
	struct stress *s = arg;
	struct wb_ring_producer p;
	uint64_t seq = 0;

	wb_ring_producer_init(&p, s->ring.mem);
	while (seq < s->events) {
		uint32_t n = 0;

		while (n < STRESS_BATCH && seq < s->events) {
			struct wb_event *ev = wb_ring_producer_slot(&p);

			if (!ev) {
				if (s->drop_when_full) {
					wb_ring_producer_drop(&p);
					seq++;
					n++;
					continue;
				}
				/* Make what is committed visible, then wait for room. */
				unsigned spins = 0;

				wb_ring_producer_publish(&p);
				while (!(ev = wb_ring_producer_slot(&p)))
					spin_wait(&spins);
			}
			ev->seq = seq;
			ev->u.order.order_id = check_value(seq);
			wb_ring_producer_commit(&p);
			seq++;
			n++;
		}
		wb_ring_producer_publish(&p);
	}
	wb_ring_producer_publish(&p);
	s->offered = seq;
	wb_store_release(&s->done, 1);
	return NULL;
}

static void *stress_consumer(void *arg)
{
	struct stress *s = arg;
	struct wb_ring_consumer c;
	uint64_t expected = 0, delivered = 0;
	unsigned spins = 0;

	wb_ring_consumer_init(&c, s->ring.mem);
	for (;;) {
		uint64_t n = wb_ring_consumer_available(&c);

		if (!n) {
			/* Done only once the producer finished and nothing is left. */
			if (wb_load_acquire(&s->done) && !wb_ring_consumer_available(&c))
				break;
			spin_wait(&spins);
			continue;
		}
		spins = 0;
		for (uint64_t i = 0; i < n; i++) {
			const struct wb_event *ev = wb_ring_consumer_at(&c, i);
			bool ok = s->drop_when_full ? ev->seq >= expected : ev->seq == expected;

			if (!ok || ev->u.order.order_id != check_value(ev->seq)) {
				if (!s->errors++) {
					s->first_bad_seq = ev->seq;
					s->first_bad_expected = expected;
				}
			}
			expected = ev->seq + 1;
			for (uint32_t d = 0; d < s->consumer_delay; d++)
				__builtin_ia32_pause();
		}
		delivered += n;
		wb_ring_consumer_release(&c, n);
	}
	s->delivered = delivered;
	s->consumer_saw_dropped = wb_ring_consumer_dropped(&c);
	return NULL;
}

static void run_stress(struct stress *s)
{
	pthread_t prod, cons;

	ck_assert_int_eq(pthread_create(&cons, NULL, stress_consumer, s), 0);
	ck_assert_int_eq(pthread_create(&prod, NULL, stress_producer, s), 0);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
}

static uint64_t stress_events(void)
{
	const char *env = getenv("WB_RING_STRESS_EVENTS");
	uint64_t n = env ? strtoull(env, NULL, 0) : 0;

	return n ? n : STRESS_DEFAULT_EVENTS;
}

START_TEST(test_ring_two_threads_deliver_every_event_once_in_order)
{
	struct stress *s = calloc(1, sizeof(*s));

	ring_create(&s->ring, STRESS_SLOTS);
	s->events = stress_events();
	run_stress(s);
	ck_assert_msg(s->errors == 0, "%llu bad events; first seq %llu where %llu expected",
		      (unsigned long long)s->errors, (unsigned long long)s->first_bad_seq,
		      (unsigned long long)s->first_bad_expected);
	ck_assert_uint_eq(s->delivered, s->events);
	ck_assert_uint_eq(prod_page(&s->ring)->published, s->events);
	ck_assert_uint_eq(prod_page(&s->ring)->dropped, 0);
	ck_assert_uint_eq(prod_page(&s->ring)->head, s->events);
	ck_assert_uint_eq(cons_page(&s->ring)->tail, s->events);
	ring_destroy(&s->ring);
	free(s);
}
END_TEST

START_TEST(test_ring_two_threads_overflow_delivered_plus_dropped_equals_offered)
{
	struct stress *s = calloc(1, sizeof(*s));

	ring_create(&s->ring, 64);
	s->events = 2000000;
	s->drop_when_full = true;
	s->consumer_delay = 20; /* slower than the producer: the ring overflows */
	run_stress(s);
	ck_assert_msg(s->errors == 0, "events out of order, duplicated or corrupt");
	ck_assert_uint_eq(s->offered, s->events);
	ck_assert_uint_gt(s->consumer_saw_dropped, 0);
	ck_assert_uint_eq(s->delivered + s->consumer_saw_dropped, s->events);
	ck_assert_uint_eq(prod_page(&s->ring)->published, s->delivered);
	ring_destroy(&s->ring);
	free(s);
}
END_TEST

/* ---- one thread: exact overflow accounting ------------------------------ */

START_TEST(test_ring_full_ring_drops_the_newest_and_counts_it)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;
	uint64_t accepted = 0, offered = 0;

	ring_create(&r, 8);
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);
	for (; offered < 20; offered++) {
		accepted += offer(&p, offered);
		wb_ring_producer_publish(&p);
	}
	ck_assert_uint_eq(accepted, 8);
	ck_assert_uint_eq(wb_ring_consumer_dropped(&c), 12);
	ck_assert_uint_eq(prod_page(&r)->published + prod_page(&r)->dropped, offered);
	/* The oldest eight survive, in order: drops never overwrite unread slots. */
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 8);
	for (uint64_t i = 0; i < 8; i++)
		ck_assert_uint_eq(wb_ring_consumer_at(&c, i)->seq, i);
	wb_ring_consumer_release(&c, 8);

	/* Room again: the next offers are accepted and follow on. */
	for (uint64_t i = 0; i < 5; i++, offered++)
		accepted += offer(&p, offered);
	wb_ring_producer_publish(&p);
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 5);
	ck_assert_uint_eq(wb_ring_consumer_at(&c, 0)->seq, 20);
	ck_assert_uint_eq(prod_page(&r)->published, accepted);
	ck_assert_uint_eq(prod_page(&r)->published + prod_page(&r)->dropped, offered);
	ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_drops_are_visible_even_when_nothing_was_published)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;

	ring_create(&r, 4);
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);
	for (int i = 0; i < 4; i++)
		offer(&p, (uint64_t)i);
	wb_ring_producer_publish(&p);
	ck_assert_int_eq(offer(&p, 4), 0);
	ck_assert_int_eq(offer(&p, 5), 0);
	ck_assert_int_eq(wb_ring_producer_publish(&p), 0);
	ck_assert_uint_eq(wb_ring_consumer_dropped(&c), 2);
	ck_assert_uint_eq(prod_page(&r)->batches, 1);
	ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_indices_wrap_around_two_to_the_64)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;
	const uint64_t start = UINT64_MAX - 5;
	uint64_t seq = 0, expected = 0;

	ring_create(&r, 8);
	prod_page(&r)->head = start;
	cons_page(&r)->tail = start;
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 5; i++)
			ck_assert_int_eq(offer(&p, seq++), 1);
		wb_ring_producer_publish(&p);
		uint64_t n = wb_ring_consumer_available(&c);

		ck_assert_uint_eq(n, 5);
		for (uint64_t i = 0; i < n; i++)
			ck_assert_uint_eq(wb_ring_consumer_at(&c, i)->seq, expected++);
		wb_ring_consumer_release(&c, n);
	}
	ck_assert_uint_eq(prod_page(&r)->head, start + 50);
	ck_assert_uint_eq(prod_page(&r)->dropped, 0);
	ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_producer_reattaches_where_it_published)
{
	struct test_ring r;
	struct wb_ring_producer p, again;
	struct wb_ring_consumer c;

	ring_create(&r, 8);
	wb_ring_producer_init(&p, r.mem);
	for (int i = 0; i < 3; i++)
		offer(&p, (uint64_t)i);
	wb_ring_producer_publish(&p);
	offer(&p, 99); /* committed, never published: lost with the old producer */
	wb_ring_producer_init(&again, r.mem);
	offer(&again, 3);
	wb_ring_producer_publish(&again);
	wb_ring_consumer_init(&c, r.mem);
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 4);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_uint_eq(wb_ring_consumer_at(&c, i)->seq, i);
	ring_destroy(&r);
}
END_TEST

/* ---- a lying consumer page ---------------------------------------------- */

static void assert_bogus_tail_means_full(uint64_t tail, uint64_t head_before)
{
	struct test_ring r;
	struct wb_ring_producer p;

	ring_create(&r, 8);
	prod_page(&r)->head = head_before;
	cons_page(&r)->tail = head_before;
	wb_ring_producer_init(&p, r.mem);
	/* The consumer page now claims something impossible. */
	cons_page(&r)->tail = tail;
	for (int i = 0; i < 100; i++) {
		struct wb_event *ev = wb_ring_producer_slot(&p);

		if (ev) {
			/* Whatever it returns must be one of the slots. */
			uint8_t *slots = r.mem + WB_RING_SLOTS_OFFSET;

			ck_assert((uint8_t *)ev >= slots && (uint8_t *)(ev + 1) <= slots + 8 * sizeof(*ev));
			memset(ev, 0xff, sizeof(*ev));
			wb_ring_producer_commit(&p);
		} else {
			wb_ring_producer_drop(&p);
		}
	}
	wb_ring_producer_publish(&p);
	/* No more than one ring's worth can ever be in flight. */
	ck_assert_uint_le(prod_page(&r)->published, 8);
	ck_assert_uint_eq(prod_page(&r)->published + prod_page(&r)->dropped, 100);
	ring_destroy(&r); /* checks the canary after the slots */
}

START_TEST(test_ring_bogus_consumer_tail_is_treated_as_full)
{
	assert_bogus_tail_means_full(1000, 0);		  /* tail ahead of head */
	assert_bogus_tail_means_full(UINT64_MAX, 0);	  /* "one behind" from the other side */
	assert_bogus_tail_means_full(0, 1000);		  /* more than a ring behind */
	assert_bogus_tail_means_full(0x8000000000000000ull, 5);
}
END_TEST

/* ---- attach-time validation --------------------------------------------- */

START_TEST(test_ring_check_rejects_bad_magic_abi_and_geometry)
{
	struct test_ring r;
	struct wb_ring_prod_page *pp;

	ring_create(&r, 16);
	pp = prod_page(&r);
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_OK);
	ck_assert_int_eq(wb_ring_check(r.mem, WB_RING_SLOTS_OFFSET - 1), WB_RING_BAD_MAGIC);

	pp->magic = 0x12345678;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_BAD_MAGIC);
	pp->magic = WB_RING_MAGIC;

	pp->abi_version = WB_ABI_VERSION + 1;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_ABI_MISMATCH);
	pp->abi_version = WB_ABI_VERSION;
	pp->slot_size = 128;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_ABI_MISMATCH);
	pp->slot_size = sizeof(struct wb_event);

	pp->slot_count = 12; /* not a power of two */
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_BAD_GEOMETRY);
	pp->slot_count = 1;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_BAD_GEOMETRY);
	pp->slot_count = 0;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_BAD_GEOMETRY);
	pp->slot_count = 32; /* more slots than the mapping holds */
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_BAD_GEOMETRY);
	pp->slot_count = 1u << 29; /* beyond the limit, however big the mapping */
	ck_assert_int_eq(wb_ring_check(r.mem, UINT64_MAX), WB_RING_BAD_GEOMETRY);
	pp->slot_count = 16;
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes - 1), WB_RING_BAD_GEOMETRY);
	ck_assert_int_eq(wb_ring_check(r.mem, r.bytes), WB_RING_OK);
	ring_destroy(&r);
}
END_TEST

/* ---- sleep and wakeup ------------------------------------------------------ */

START_TEST(test_ring_producer_wakes_only_a_consumer_that_said_it_sleeps)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;

	ring_create(&r, 8);
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);

	/* Awake consumer: publishing asks for no wakeup. */
	offer(&p, 0);
	ck_assert_int_eq(wb_ring_producer_publish(&p), 0);
	wb_ring_consumer_release(&c, wb_ring_consumer_available(&c));

	/* Empty ring: the consumer may sleep, and says so. */
	ck_assert_int_eq(wb_ring_consumer_prepare_sleep(&c), 0);
	ck_assert_uint_eq(cons_page(&r)->sleeping, 1);

	/* Publishing nothing wakes nobody. */
	ck_assert_int_eq(wb_ring_producer_publish(&p), 0);
	ck_assert_uint_eq(prod_page(&r)->wakeups, 0);

	/* Publishing an event to a sleeper asks for a wakeup, and counts it. */
	offer(&p, 1);
	ck_assert_int_eq(wb_ring_producer_publish(&p), 1);
	ck_assert_uint_eq(prod_page(&r)->wakeups, 1);

	wb_ring_consumer_woke(&c);
	ck_assert_uint_eq(cons_page(&r)->sleeping, 0);
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 1);
	wb_ring_consumer_release(&c, 1);
	offer(&p, 2);
	ck_assert_int_eq(wb_ring_producer_publish(&p), 0);
	ck_assert_uint_eq(prod_page(&r)->wakeups, 1);
	ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_publish_no_wakeup_publishes_without_waking)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;

	ring_create(&r, 8);
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);
	ck_assert_int_eq(wb_ring_consumer_prepare_sleep(&c), 0);
	offer(&p, 0);
	offer(&p, 1);
	/* Visible, counted as one batch, but no wakeup asked or counted. */
	ck_assert_int_eq(wb_ring_producer_publish_no_wakeup(&p), 1);
	ck_assert_int_eq(wb_ring_producer_publish_no_wakeup(&p), 0);
	ck_assert_uint_eq(prod_page(&r)->wakeups, 0);
	ck_assert_uint_eq(prod_page(&r)->published, 2);
	ck_assert_uint_eq(prod_page(&r)->batches, 1);
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 2);
	ring_destroy(&r);
}
END_TEST

START_TEST(test_ring_prepare_sleep_with_events_pending_does_not_sleep)
{
	struct test_ring r;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;

	ring_create(&r, 8);
	wb_ring_producer_init(&p, r.mem);
	wb_ring_consumer_init(&c, r.mem);
	/* The consumer looked (empty), then an event was published before the flag. */
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 0);
	offer(&p, 0);
	ck_assert_int_eq(wb_ring_producer_publish(&p), 0);
	ck_assert_int_eq(wb_ring_consumer_prepare_sleep(&c), 1);
	ck_assert_uint_eq(cons_page(&r)->sleeping, 0);
	ck_assert_uint_eq(wb_ring_consumer_available(&c), 1);
	ring_destroy(&r);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_ring_full_ring_drops_the_newest_and_counts_it);
	tcase_add_test(tc, test_ring_drops_are_visible_even_when_nothing_was_published);
	tcase_add_test(tc, test_ring_indices_wrap_around_two_to_the_64);
	tcase_add_test(tc, test_ring_producer_reattaches_where_it_published);
	tcase_add_test(tc, test_ring_bogus_consumer_tail_is_treated_as_full);
	tcase_add_test(tc, test_ring_check_rejects_bad_magic_abi_and_geometry);
	tcase_add_test(tc, test_ring_producer_wakes_only_a_consumer_that_said_it_sleeps);
	tcase_add_test(tc, test_ring_prepare_sleep_with_events_pending_does_not_sleep);
	tcase_add_test(tc, test_ring_publish_no_wakeup_publishes_without_waking);
	tcase_add_test(tc, test_ring_two_threads_overflow_delivered_plus_dropped_equals_offered);
	tcase_add_test(tc, test_ring_two_threads_deliver_every_event_once_in_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
