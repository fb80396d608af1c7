/*
 * The simulators' shared order image (sim/order_image.c), which the
 * GLIMPSE, Spin and XDP refresh servers restate their books from: an order
 * made over keeps one entry at the back of its queue, the live orders come
 * in stamp (or key, then stamp) order, and the table grows past its first
 * size without losing an order.
 */
#include <check.h>
#include <stdlib.h>

#include "sim/order_image.h"

START_TEST(test_orders_come_back_in_queue_order)
{
	struct order_image im = { 0 };
	struct image_order **live = NULL, *o;

	ck_assert_ptr_null(order_image_find(&im, 7));
	ck_assert_ptr_nonnull(order_image_add(&im, 7));
	ck_assert_ptr_nonnull(o = order_image_add(&im, 8));
	o->qty = 100;
	ck_assert_ptr_nonnull(order_image_add(&im, 9));
	/* 7 loses its place, 9 is deleted. */
	order_image_restamp(&im, order_image_find(&im, 7));
	order_image_find(&im, 9)->live = false;
	ck_assert_int_eq(order_image_live(&im, NULL, NULL, NULL, &live), 2);
	ck_assert_uint_eq(live[0]->id, 8);
	ck_assert_uint_eq(live[0]->qty, 100);
	ck_assert_uint_eq(live[1]->id, 7);
	free(live);
	order_image_free(&im);
}
END_TEST

START_TEST(test_an_order_made_over_is_one_order_at_the_back)
{
	struct order_image im = { 0 };
	struct image_order **live = NULL, *o;

	order_image_add(&im, 1)->qty = 5;
	order_image_add(&im, 2);
	o = order_image_add(&im, 1);
	ck_assert_uint_eq(o->qty, 0);	/* its fields begin again */
	ck_assert_int_eq(im.n, 2);
	ck_assert_int_eq(order_image_live(&im, NULL, NULL, order_image_by_stamp, &live), 2);
	ck_assert_uint_eq(live[0]->id, 2);
	ck_assert_uint_eq(live[1]->id, 1);
	free(live);
	order_image_free(&im);
}
END_TEST

static bool even_key(const struct image_order *o, const void *ctx)
{
	(void)ctx;
	return !(o->key & 1);
}

START_TEST(test_by_key_then_stamp_and_a_filter)
{
	struct order_image im = { 0 };
	struct image_order **live = NULL;

	order_image_add(&im, 10)->key = 4;
	order_image_add(&im, 11)->key = 2;
	order_image_add(&im, 12)->key = 3;
	order_image_add(&im, 13)->key = 2;
	ck_assert_int_eq(order_image_live(&im, even_key, NULL, order_image_by_key_then_stamp,
					  &live), 3);
	ck_assert_uint_eq(live[0]->id, 11);
	ck_assert_uint_eq(live[1]->id, 13);
	ck_assert_uint_eq(live[2]->id, 10);
	free(live);
	order_image_free(&im);
}
END_TEST

START_TEST(test_the_table_grows_and_keeps_every_order)
{
	struct order_image im = { 0 };

	for (uint64_t id = 1; id <= 200000; id++) {
		struct image_order *o = order_image_add(&im, id * 7919);

		ck_assert_ptr_nonnull(o);
		o->qty = (uint32_t)id;
	}
	for (uint64_t id = 1; id <= 200000; id += 997)
		ck_assert_uint_eq(order_image_find(&im, id * 7919)->qty, id);
	ck_assert_ptr_null(order_image_find(&im, 3));
	order_image_free(&im);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("order_image");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_orders_come_back_in_queue_order);
	tcase_add_test(tc, test_an_order_made_over_is_one_order_at_the_back);
	tcase_add_test(tc, test_by_key_then_stamp_and_a_filter);
	tcase_add_test(tc, test_the_table_grows_and_keeps_every_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
