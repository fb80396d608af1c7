/*
 * The order-id filter: lookups after inserts and erases, capacity as a hard
 * bound, unit clears, and millions of random adds and deletes that must
 * leave the table exactly as good as a fresh one.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "feed/order_filter.h"

struct table {
	struct order_filter f;
	void *mem;
};

static void table_init(struct table *t, uint32_t capacity)
{
	t->mem = calloc(1, order_filter_bytes(capacity));
	ck_assert_ptr_nonnull(t->mem);
	order_filter_init(&t->f, t->mem, capacity);
}

static void table_free(struct table *t)
{
	free(t->mem);
}

/* xorshift64*: reproducible ids without libc rand state. */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Ids whose home slot falls in the given group of slots (collisions on purpose). */
static uint64_t id_in_group(const struct order_filter *f, uint32_t group, uint64_t *s)
{
	for (;;) {
		uint64_t id = next_random(s);

		if (order_filter_home(f, id) >> ORDER_FILTER_GROUP_SHIFT == group)
			return id;
	}
}

START_TEST(test_order_filter_finds_inserted_ids_with_their_fields)
{
	struct table t;
	struct order_filter_entry *e;

	table_init(&t, 1000);
	ck_assert_ptr_nonnull(order_filter_insert(&t.f, 0x03689EEAE9741001ull, 7, 1, 100));
	ck_assert_ptr_nonnull(order_filter_insert(&t.f, 42, 9, 3, 500));
	e = order_filter_find(&t.f, 0x03689EEAE9741001ull);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->instrument, 7);
	ck_assert_uint_eq(e->unit, 1);
	ck_assert_uint_eq(e->qty, 100);
	e = order_filter_find(&t.f, 42);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->instrument, 9);
	ck_assert_ptr_null(order_filter_find(&t.f, 43));
	ck_assert_uint_eq(t.f.live, 2);
	ck_assert_uint_eq(t.f.live_in_unit[1], 1);
	ck_assert_uint_eq(t.f.live_in_unit[3], 1);
	table_free(&t);
}
END_TEST

START_TEST(test_order_filter_slots_are_a_power_of_two_at_least_one_and_a_half_capacity)
{
	ck_assert_uint_eq(order_filter_slot_count(1u << 20), 1u << 21);
	ck_assert_uint_eq(order_filter_slot_count(1000), 2048);
	ck_assert_uint_eq(order_filter_slot_count(1400), 4096);
	ck_assert_uint_eq(order_filter_slot_count(1), 16);
	ck_assert_uint_eq(order_filter_slot_count(0), 1u << 21); /* default capacity */
}
END_TEST

START_TEST(test_order_filter_reinserting_a_live_id_overwrites_it)
{
	struct table t;
	struct order_filter_entry *e;

	table_init(&t, 100);
	order_filter_insert(&t.f, 5, 1, 1, 100);
	e = order_filter_insert(&t.f, 5, 2, 4, 300);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(t.f.live, 1);
	ck_assert_uint_eq(t.f.live_in_unit[1], 0);
	ck_assert_uint_eq(t.f.live_in_unit[4], 1);
	e = order_filter_find(&t.f, 5);
	ck_assert_uint_eq(e->instrument, 2);
	ck_assert_uint_eq(e->qty, 300);
	table_free(&t);
}
END_TEST

START_TEST(test_order_filter_erase_in_a_collision_run_keeps_the_rest_findable)
{
	struct table t;
	uint64_t s = 99, ids[40];
	int i, j;

	table_init(&t, 100);	/* 256 slots, 16 groups */
	for (i = 0; i < 40; i++) {
		/* Two groups next to each other so runs cross a group boundary. */
		ids[i] = id_in_group(&t.f, (uint32_t)(i & 1) + 14, &s);
		ck_assert_ptr_nonnull(order_filter_insert(&t.f, ids[i], (uint16_t)(i + 1), 1, 1));
	}
	for (i = 0; i < 40; i += 3) {
		order_filter_erase(&t.f, order_filter_find(&t.f, ids[i]));
		for (j = 0; j < 40; j++) {
			struct order_filter_entry *e = order_filter_find(&t.f, ids[j]);

			if (j <= i && j % 3 == 0) {
				ck_assert_ptr_null(e);
			} else {
				ck_assert_ptr_nonnull(e);
				ck_assert_uint_eq(e->instrument, j + 1);
			}
		}
	}
	table_free(&t);
}
END_TEST

START_TEST(test_order_filter_runs_wrap_around_the_end_of_the_table)
{
	struct table t;
	uint64_t s = 7, ids[30];
	uint32_t last_group;
	int i;

	table_init(&t, 100);
	last_group = t.f.mask >> ORDER_FILTER_GROUP_SHIFT;
	for (i = 0; i < 30; i++) {
		ids[i] = id_in_group(&t.f, last_group, &s);
		order_filter_insert(&t.f, ids[i], 1, (uint8_t)(i % 2 + 1), 1);
	}
	/* 30 ids homed in the last 16 slots: the run wraps into slot 0. */
	ck_assert_uint_ne(t.f.slots[0].instrument, 0);
	ck_assert_uint_eq(order_filter_clear_unit(&t.f, 1), 15);
	for (i = 0; i < 30; i++) {
		if (i % 2 == 0)
			ck_assert_ptr_null(order_filter_find(&t.f, ids[i]));
		else
			ck_assert_ptr_nonnull(order_filter_find(&t.f, ids[i]));
	}
	ck_assert_uint_eq(t.f.live, 15);
	ck_assert_uint_eq(t.f.live_in_unit[1], 0);
	ck_assert_uint_eq(t.f.live_in_unit[2], 15);
	table_free(&t);
}
END_TEST

START_TEST(test_order_filter_refuses_inserts_beyond_capacity_and_accepts_again_after_erase)
{
	struct table t;
	uint64_t id;

	table_init(&t, 1000);
	for (id = 1; id <= 1000; id++)
		ck_assert_ptr_nonnull(order_filter_insert(&t.f, id * 7919, 3, 1, 10));
	ck_assert_ptr_null(order_filter_insert(&t.f, 123456789, 3, 1, 10));
	ck_assert_ptr_null(order_filter_find(&t.f, 123456789));
	/* A refused insert changed nothing. */
	ck_assert_uint_eq(t.f.live, 1000);
	for (id = 1; id <= 1000; id++)
		ck_assert_ptr_nonnull(order_filter_find(&t.f, id * 7919));
	/* Overwriting a live id is not a new entry: allowed when full. */
	ck_assert_ptr_nonnull(order_filter_insert(&t.f, 7919, 4, 1, 20));
	order_filter_erase(&t.f, order_filter_find(&t.f, 7919 * 2));
	ck_assert_ptr_nonnull(order_filter_insert(&t.f, 123456789, 3, 1, 10));
	ck_assert_uint_eq(t.f.live, 1000);
	table_free(&t);
}
END_TEST

START_TEST(test_order_filter_without_memory_holds_nothing)
{
	struct order_filter f;

	order_filter_init(&f, NULL, 1000);
	ck_assert_ptr_null(order_filter_insert(&f, 1, 1, 1, 1));
	ck_assert_ptr_null(order_filter_find(&f, 1));
	ck_assert_uint_eq(order_filter_clear_unit(&f, 1), 0);
	order_filter_clear(&f);
}
END_TEST

START_TEST(test_order_filter_saturated_summary_group_still_finds_and_misses_correctly)
{
	struct table t;
	uint64_t s = 1234, ids[300];
	int i;

	table_init(&t, 1000);	/* 2048 slots */
	for (i = 0; i < 300; i++) {
		ids[i] = id_in_group(&t.f, 5, &s);
		ck_assert_ptr_nonnull(order_filter_insert(&t.f, ids[i], 2, 1, 1));
	}
	ck_assert_uint_eq(t.f.home_count[5], ORDER_FILTER_COUNT_STUCK);
	for (i = 0; i < 300; i++)
		ck_assert_ptr_nonnull(order_filter_find(&t.f, ids[i]));
	for (i = 0; i < 300; i++)
		order_filter_erase(&t.f, order_filter_find(&t.f, ids[i]));
	ck_assert_uint_eq(t.f.live, 0);
	for (i = 0; i < 300; i++)
		ck_assert_ptr_null(order_filter_find(&t.f, ids[i]));
	/* Stuck counts only cost a search; they never hide an entry. */
	ck_assert_ptr_nonnull(order_filter_insert(&t.f, ids[0], 2, 1, 1));
	ck_assert_ptr_nonnull(order_filter_find(&t.f, ids[0]));
	table_free(&t);
}
END_TEST

/*
 * Millions of random adds and deletes at about 60% of capacity, checked
 * against a plain list of live ids. Backward-shift deletion leaves the
 * table as if the deleted ids had never been inserted, so the total
 * displacement after the churn must equal that of a fresh table built
 * from the surviving ids: churn costs nothing.
 */
START_TEST(test_order_filter_churn_matches_reference_and_does_not_degrade)
{
	enum { CAPACITY = 1 << 16, TARGET = CAPACITY * 6 / 10, OPS = 2000000 };
	struct table t, fresh;
	uint64_t *live = malloc(sizeof(uint64_t) * CAPACITY);
	uint16_t *inst = malloc(sizeof(uint16_t) * CAPACITY);
	uint64_t s = 0x9E3779B97F4A7C15ull, sum_churned, sum_fresh;
	uint32_t n = 0, max_churned, max_fresh, i;
	long op, wrong = 0;

	ck_assert_ptr_nonnull(live);
	ck_assert_ptr_nonnull(inst);
	table_init(&t, CAPACITY);
	for (op = 0; op < OPS; op++) {
		uint64_t r = next_random(&s);

		if (n < TARGET / 2 || (n < TARGET && (r & 1))) {
			uint64_t id = next_random(&s);

			live[n] = id;
			inst[n] = (uint16_t)(1 + r % (FEED_MAX_INSTRUMENTS - 1));
			/* Plain checks in the loop (counted, asserted after it): a
			 * Check assertion per operation would be most of the run time. */
			wrong += !order_filter_insert(&t.f, id, inst[n], (uint8_t)(id >> 56), 100);
			n++;
		} else {
			uint32_t k = (uint32_t)((r >> 8) % n);
			struct order_filter_entry *e = order_filter_find(&t.f, live[k]);

			if (!e || e->instrument != inst[k]) {
				wrong++;
				break;
			}
			order_filter_erase(&t.f, e);
			wrong += order_filter_find(&t.f, live[k]) != NULL;
			live[k] = live[n - 1];
			inst[k] = inst[n - 1];
			n--;
		}
		if (t.f.live != n)
			wrong++;
	}
	ck_assert_int_eq(wrong, 0);
	ck_assert_int_eq(op, OPS);
	ck_assert_uint_eq(t.f.live, n);
	for (i = 0; i < n; i++) {
		struct order_filter_entry *e = order_filter_find(&t.f, live[i]);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->instrument, inst[i]);
	}

	table_init(&fresh, CAPACITY);
	for (i = 0; i < n; i++)
		order_filter_insert(&fresh.f, live[i], inst[i], 1, 100);
	order_filter_displacement(&t.f, &sum_churned, &max_churned);
	order_filter_displacement(&fresh.f, &sum_fresh, &max_fresh);
	ck_assert_uint_eq(sum_churned, sum_fresh);
	/* And short in absolute terms: under one extra probe per lookup on average. */
	ck_assert_uint_lt(sum_churned, n);

	table_free(&fresh);
	table_free(&t);
	free(live);
	free(inst);
}
END_TEST

START_TEST(test_order_filter_clear_unit_removes_that_unit_only)
{
	struct table t;
	uint64_t s = 5, ids[3000];
	int i;

	table_init(&t, 4000);
	for (i = 0; i < 3000; i++) {
		ids[i] = next_random(&s);
		order_filter_insert(&t.f, ids[i], 1, (uint8_t)(i % 3 + 1), 1);
	}
	ck_assert_uint_eq(order_filter_clear_unit(&t.f, 2), 1000);
	ck_assert_uint_eq(order_filter_clear_unit(&t.f, 2), 0);
	ck_assert_uint_eq(order_filter_clear_unit(&t.f, 9), 0);
	for (i = 0; i < 3000; i++) {
		if (i % 3 == 1)
			ck_assert_ptr_null(order_filter_find(&t.f, ids[i]));
		else
			ck_assert_ptr_nonnull(order_filter_find(&t.f, ids[i]));
	}
	ck_assert_uint_eq(t.f.live, 2000);
	order_filter_clear(&t.f);
	ck_assert_uint_eq(t.f.live, 0);
	ck_assert_ptr_null(order_filter_find(&t.f, ids[0]));
	table_free(&t);
}
END_TEST

static Suite *order_filter_suite(void)
{
	Suite *s = suite_create("order_filter");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_order_filter_finds_inserted_ids_with_their_fields);
	tcase_add_test(tc, test_order_filter_slots_are_a_power_of_two_at_least_one_and_a_half_capacity);
	tcase_add_test(tc, test_order_filter_reinserting_a_live_id_overwrites_it);
	tcase_add_test(tc, test_order_filter_erase_in_a_collision_run_keeps_the_rest_findable);
	tcase_add_test(tc, test_order_filter_runs_wrap_around_the_end_of_the_table);
	tcase_add_test(tc, test_order_filter_refuses_inserts_beyond_capacity_and_accepts_again_after_erase);
	tcase_add_test(tc, test_order_filter_without_memory_holds_nothing);
	tcase_add_test(tc, test_order_filter_saturated_summary_group_still_finds_and_misses_correctly);
	tcase_add_test(tc, test_order_filter_churn_matches_reference_and_does_not_degrade);
	tcase_add_test(tc, test_order_filter_clear_unit_removes_that_unit_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(order_filter_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
