/*
 * The order index on its own: open addressing with backward-shift
 * deletion is easy to get subtly wrong (a cluster that wraps around the
 * end of the table, an entry whose home lies between the hole and
 * itself), so it is checked here against a plain reference set, in a
 * table small enough that long clusters and wrap-arounds are the norm
 * for sparse ids (dense ones the multiplicative hash spreads evenly), and
 * with clusters built on purpose from ids chosen by their home bucket.
 */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "book/order_index.h"

#define require(cond, ...)                                              \
	do {                                                            \
		if (__builtin_expect(!(cond), 0))                       \
			ck_abort_msg(__VA_ARGS__);                      \
	} while (0)

static struct order_index ix;

static void setup(void)
{
	ck_assert_int_eq(order_index_init(&ix, 0, -1), 0);
}

static void teardown(void)
{
	order_index_fini(&ix);
}

static struct order *insert(uint8_t venue, uint64_t id, uint32_t qty, uint32_t level)
{
	struct order *o = order_index_insert(&ix, venue, id, qty, level);

	ck_assert_ptr_nonnull(o);
	return o;
}

START_TEST(test_find_returns_the_inserted_order_and_null_for_others)
{
	struct order *o;

	insert(1, 42, 100, 7);
	o = order_index_find(&ix, 1, 42);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->id, 42);
	ck_assert_uint_eq(o->qty, 100);
	ck_assert_uint_eq(order_level(o), 7);
	ck_assert_uint_eq(order_venue(o), 1);
	ck_assert_ptr_null(order_index_find(&ix, 1, 43));
	ck_assert_ptr_null(order_index_find(&ix, 2, 42));
	ck_assert_uint_eq(ix.live, 1);
}
END_TEST

START_TEST(test_same_id_on_two_venues_is_two_orders)
{
	insert(1, 5, 10, 1);
	insert(2, 5, 20, 2);
	ck_assert_uint_eq(order_index_find(&ix, 1, 5)->qty, 10);
	ck_assert_uint_eq(order_index_find(&ix, 2, 5)->qty, 20);
	order_index_erase(&ix, order_index_find(&ix, 1, 5));
	ck_assert_ptr_null(order_index_find(&ix, 1, 5));
	ck_assert_uint_eq(order_index_find(&ix, 2, 5)->qty, 20);
}
END_TEST

START_TEST(test_slot_is_the_live_order_or_the_empty_bucket_it_would_fill)
{
	struct order *slot;

	insert(3, 77, 5, 9);
	slot = order_index_slot(&ix, 3, 77);
	ck_assert_uint_ne(slot->level_venue, 0);
	ck_assert_uint_eq(slot->qty, 5);
	ck_assert_int_eq(order_index_reserve(&ix), 0);
	slot = order_index_slot(&ix, 3, 78);
	ck_assert_uint_eq(slot->level_venue, 0);
	order_index_fill(&ix, slot, 3, 78, 6, 10);
	ck_assert_uint_eq(order_index_find(&ix, 3, 78)->qty, 6);
	ck_assert_uint_eq(ix.live, 2);
}
END_TEST

START_TEST(test_table_doubles_past_its_load_limit_and_keeps_every_order)
{
	uint32_t n = ix.grow_at * 3 + 5;

	for (uint32_t i = 0; i < n; i++)
		insert((uint8_t)(1 + i % 3), (uint64_t)i * 0x9e3779b97f4a7c15ull, i, 1 + i % 1000);
	ck_assert_uint_ge(ix.grows, 2);
	ck_assert_uint_le(ix.live, ix.grow_at);
	for (uint32_t i = 0; i < n; i++) {
		const struct order *o = order_index_find(&ix, (uint8_t)(1 + i % 3), (uint64_t)i * 0x9e3779b97f4a7c15ull);

		require(o && o->qty == i && order_level(o) == 1 + i % 1000, "order %u lost in a doubling", i);
	}
}
END_TEST

/* Random inserts and erases against a reference list, ids from a small
 * space so the same ids come and go. */
static void run_against_reference(bool sparse, uint64_t seed, unsigned steps)
{
	enum { MAX_LIVE = 1000 };	/* below the 2048-bucket table's limit: no doubling, long clusters */
	struct ref { uint64_t id; uint8_t venue; uint32_t qty; } live[MAX_LIVE];
	unsigned n = 0;
	uint64_t x = seed;

	for (unsigned step = 0; step < steps; step++) {
		uint64_t r;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r = x;
		if (n && (n == MAX_LIVE || (r & 1))) {
			unsigned k = (unsigned)((r >> 8) % n);
			struct order *o = order_index_find(&ix, live[k].venue, live[k].id);

			require(o && o->qty == live[k].qty, "step %u: live order %" PRIu64 " not found", step,
				live[k].id);
			order_index_erase(&ix, o);
			live[k] = live[--n];
		} else {
			uint64_t id = sparse ? r * 0xd6e8feb86659fd93ull : (r >> 16) % 4096;
			uint8_t venue = (uint8_t)(1 + (r >> 40) % 2);
			bool known = false;

			for (unsigned k = 0; k < n; k++)
				known |= live[k].id == id && live[k].venue == venue;
			require((order_index_find(&ix, venue, id) != NULL) == known, "step %u: find disagrees", step);
			if (known)
				continue;
			insert(venue, id, (uint32_t)step, 1);
			live[n++] = (struct ref){ .id = id, .venue = venue, .qty = step };
		}
		require(ix.live == n, "step %u: %u live, reference %u", step, ix.live, n);
		if (step % 257 == 0)
			for (unsigned k = 0; k < n; k++) {
				const struct order *o = order_index_find(&ix, live[k].venue, live[k].id);

				require(o && o->qty == live[k].qty, "step %u: order %" PRIu64 " lost", step, live[k].id);
			}
	}
	ck_assert_uint_eq(ix.grows, 0);
}

START_TEST(test_erase_keeps_every_other_order_findable_with_dense_ids)
{
	run_against_reference(false, 0x1234567, 300000);
}
END_TEST

START_TEST(test_erase_keeps_every_other_order_findable_with_sparse_ids)
{
	run_against_reference(true, 0x7654321, 300000);
}
END_TEST

/* n ids of venue 1, from start on, whose home bucket is home. */
static void ids_with_home(uint32_t home, uint64_t start, uint64_t *ids, unsigned n)
{
	for (uint64_t id = start; n; id++)
		if (order_index_home(&ix, 1, id) == home) {
			*ids++ = id;
			n--;
		}
}

START_TEST(test_cluster_across_the_end_of_the_table_survives_erases)
{
	uint64_t last[5], first[3];
	uint32_t end = ix.mask;

	/* Five orders at home in the last bucket run on into buckets 0-3;
	 * three at home in bucket 0 queue behind them. */
	ids_with_home(end, 1, last, 5);
	ids_with_home(0, 1, first, 3);
	for (unsigned k = 0; k < 5; k++)
		insert(1, last[k], (uint32_t)k, 1);
	for (unsigned k = 0; k < 3; k++)
		insert(1, first[k], (uint32_t)(10 + k), 2);
	ck_assert_ptr_eq(order_index_find(&ix, 1, last[4]), &ix.buckets[3]);
	ck_assert_ptr_eq(order_index_find(&ix, 1, first[2]), &ix.buckets[6]);
	/* Erasing at the end pulls the wrapped ones back across it, and the
	 * ones at home in bucket 0 only as far as bucket 0. */
	order_index_erase(&ix, order_index_find(&ix, 1, last[0]));
	order_index_erase(&ix, order_index_find(&ix, 1, last[1]));
	ck_assert_ptr_eq(order_index_find(&ix, 1, last[2]), &ix.buckets[end]);
	ck_assert_ptr_eq(order_index_find(&ix, 1, last[4]), &ix.buckets[1]);
	ck_assert_ptr_eq(order_index_find(&ix, 1, first[0]), &ix.buckets[2]);
	order_index_erase(&ix, order_index_find(&ix, 1, last[2]));
	order_index_erase(&ix, order_index_find(&ix, 1, last[3]));
	order_index_erase(&ix, order_index_find(&ix, 1, last[4]));
	ck_assert_uint_eq(ix.buckets[end].level_venue, 0);
	for (unsigned k = 0; k < 3; k++)
		ck_assert_ptr_eq(order_index_find(&ix, 1, first[k]), &ix.buckets[k]);
	ck_assert_uint_eq(ix.live, 3);
}
END_TEST

START_TEST(test_init_rejects_more_orders_than_32_bit_buckets_hold)
{
	struct order_index big;

	ck_assert_int_eq(order_index_init(&big, 0xffffffffu, -1), -1);
}
END_TEST

static Suite *order_index_suite(void)
{
	Suite *s = suite_create("order_index");
	TCase *tc = tcase_create("order_index");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_find_returns_the_inserted_order_and_null_for_others);
	tcase_add_test(tc, test_same_id_on_two_venues_is_two_orders);
	tcase_add_test(tc, test_slot_is_the_live_order_or_the_empty_bucket_it_would_fill);
	tcase_add_test(tc, test_table_doubles_past_its_load_limit_and_keeps_every_order);
	tcase_add_test(tc, test_erase_keeps_every_other_order_findable_with_dense_ids);
	tcase_add_test(tc, test_erase_keeps_every_other_order_findable_with_sparse_ids);
	tcase_add_test(tc, test_cluster_across_the_end_of_the_table_survives_erases);
	tcase_add_test(tc, test_init_rejects_more_orders_than_32_bit_buckets_hold);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(order_index_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
