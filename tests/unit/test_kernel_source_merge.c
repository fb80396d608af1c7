/*
 * The kernel-ring consumer (tools/common/kernel_source.c) hands out the
 * events of the module's per-CPU rings in the module's decode order
 * (recv_ts), whichever ring each landed in, releases slots back to the
 * producer, and keeps going when rings fill again. The rings here are
 * in-memory rings of the same layout, attached without a device.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_source.h"

#define RINGS 3
#define SLOTS 64u

struct fixture {
	struct wb_kernel_source ks;
	void *mem[RINGS];
	struct wb_ring_producer prod[RINGS];
};

static void fixture_init(struct fixture *f)
{
	unsigned i;

	memset(f, 0, sizeof(*f));
	f->ks.fd = -1;
	f->ks.ring_count = RINGS;
	f->ks.maps = calloc(RINGS, sizeof(*f->ks.maps));
	f->ks.cons = calloc(RINGS, sizeof(*f->ks.cons));
	f->ks.limit = calloc(RINGS, sizeof(*f->ks.limit));
	f->ks.pending = calloc(RINGS, sizeof(*f->ks.pending));
	for (i = 0; i < RINGS; i++) {
		ck_assert_int_eq(posix_memalign(&f->mem[i], WB_RING_PAGE, wb_ring_bytes(SLOTS)), 0);
		memset(f->mem[i], 0, wb_ring_bytes(SLOTS));
		wb_ring_format(f->mem[i], SLOTS, i + 1);
		wb_ring_producer_init(&f->prod[i], f->mem[i]);
		f->ks.maps[i] = f->mem[i];
		wb_ring_consumer_init(&f->ks.cons[i], f->mem[i]);
	}
}

static void fixture_free(struct fixture *f)
{
	unsigned i;

	for (i = 0; i < RINGS; i++)
		free(f->mem[i]);
	free(f->ks.maps);
	free(f->ks.cons);
	free(f->ks.limit);
	free(f->ks.pending);
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

START_TEST(test_kernel_source_merges_rings_in_recv_ts_order)
{
	struct fixture f;
	const struct wb_event *ev;
	uint64_t ts, expect = 1;

	fixture_init(&f);
	/* Runs of packets on different CPUs, as the engine lock orders them;
	 * one packet's events share a recv_ts and stay together. */
	for (ts = 1; ts <= 40; ts++)
		ck_assert(put(&f, (unsigned)((ts / 3) % RINGS), ts));
	while ((ev = wb_kernel_source_next(&f.ks)) != NULL) {
		ck_assert_uint_eq(ev->recv_ts, expect);
		expect++;
	}
	ck_assert_uint_eq(expect, 41);
	ck_assert_uint_eq(f.ks.delivered, 40);
	fixture_free(&f);
}
END_TEST

START_TEST(test_kernel_source_releases_slots_so_full_rings_flow_again)
{
	struct fixture f;
	const struct wb_event *ev;
	uint64_t ts = 1, expect = 1;
	int round;

	fixture_init(&f);
	for (round = 0; round < 10; round++) {
		unsigned n = 0;

		/* Fill ring 1 completely, then drain it. */
		while (put(&f, 1, ts))
			ts++, n++;
		ck_assert_uint_eq(n, SLOTS);
		while ((ev = wb_kernel_source_next(&f.ks)) != NULL)
			ck_assert_uint_eq(ev->recv_ts, expect++);
		ck_assert_uint_eq(expect, ts);
	}
	ck_assert_uint_eq(wb_kernel_source_dropped(&f.ks), 0);
	ck_assert_uint_eq(wb_kernel_source_published(&f.ks), 10 * SLOTS);
	fixture_free(&f);
}
END_TEST

START_TEST(test_kernel_source_peek_hands_out_ring_slots_in_order_and_holds_them_until_release)
{
	struct fixture f;
	const struct wb_event *evs[2 * SLOTS];
	uint64_t ts = 1, expect = 1, n;
	unsigned i, r;

	fixture_init(&f);
	/* Packets alternate over the rings, as CPUs take turns. */
	for (i = 0; i < 30; i++)
		ck_assert(put(&f, i % RINGS, ts++));
	n = wb_kernel_source_peek(&f.ks, evs, 10);
	ck_assert_uint_eq(n, 10);
	n += wb_kernel_source_peek(&f.ks, evs + n, 2 * SLOTS);
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
		ck_assert_uint_eq(wb_load_acquire(&f.ks.cons[r].cons->tail), 0);
	ck_assert_uint_eq(wb_kernel_source_peek(&f.ks, evs, 2 * SLOTS), 0);
	wb_kernel_source_release(&f.ks);
	for (r = 0; r < RINGS; r++)
		ck_assert_uint_eq(wb_load_acquire(&f.ks.cons[r].cons->tail), 10);
	/* A full ring flows again after a release, and the order holds. */
	while (put(&f, 1, ts))
		ts++;
	ck_assert_uint_eq(wb_kernel_source_peek(&f.ks, evs, 2 * SLOTS), SLOTS);
	ck_assert_uint_eq(evs[0]->recv_ts, 31);
	ck_assert_uint_eq(evs[SLOTS - 1]->recv_ts, ts - 1);
	wb_kernel_source_release(&f.ks);
	ck_assert(put(&f, 1, ts));
	ck_assert_uint_eq(f.ks.delivered, 30 + SLOTS);
	fixture_free(&f);
}
END_TEST

START_TEST(test_kernel_source_counts_drops_of_every_ring)
{
	struct fixture f;
	unsigned i;

	fixture_init(&f);
	for (i = 0; i < SLOTS + 5; i++)
		if (!put(&f, 2, i + 1)) {
			wb_ring_producer_drop(&f.prod[2]);
			wb_ring_producer_publish(&f.prod[2]);
		}
	ck_assert_uint_eq(wb_kernel_source_dropped(&f.ks), 5);
	fixture_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kernel_source_merge");
	TCase *tc = tcase_create("kernel_source_merge");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_kernel_source_merges_rings_in_recv_ts_order);
	tcase_add_test(tc, test_kernel_source_releases_slots_so_full_rings_flow_again);
	tcase_add_test(tc, test_kernel_source_counts_drops_of_every_ring);
	tcase_add_test(tc, test_kernel_source_peek_hands_out_ring_slots_in_order_and_holds_them_until_release);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
