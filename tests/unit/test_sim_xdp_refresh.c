/*
 * The XDP refresh server's book (sim/xdp_server.c), which restates a
 * channel's orders from the stored messages: a message too short for its
 * type changes nothing. The test includes the server's source to reach its
 * static book rules; the archive's copy is then never linked.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xdp_server.c"

static uint8_t *message(uint16_t type, uint16_t len)
{
	uint8_t *m = calloc(1, len);	/* exactly len bytes: ASan sees any read past them */

	wire_put_le16(m + XDP_MSG_SIZE, len);
	wire_put_le16(m + XDP_MSG_TYPE, type);
	return m;
}

START_TEST(test_a_short_delete_leaves_the_order_live)
{
	struct rbook *b = calloc(1, sizeof(*b));
	uint8_t *add = message(XDP_ADD_ORDER, XDP_ADD_ORDER_LEN);
	uint8_t *del = message(XDP_DELETE_ORDER, XDP_TIMED_SYMBOL_INDEX + 4);
	uint8_t *full_delete = message(XDP_DELETE_ORDER, XDP_DELETE_ORDER_LEN);

	wire_put_le64(add + XDP_ORDER_ID, 42);
	wire_put_le32(add + XDP_SYMBOL_INDEX, 7);
	wire_put_le32(add + XDP_ADD_VOLUME, 100);
	ck_assert_int_eq(rapply(b, add, XDP_ADD_ORDER_LEN), 0);
	/* Long enough for the symbol index, too short for the order id it names. */
	ck_assert_int_eq(rapply(b, del, XDP_TIMED_SYMBOL_INDEX + 4), 0);
	ck_assert(rfind(b, 42)->live);
	wire_put_le64(full_delete + XDP_ORDER_ID, 42);
	ck_assert_int_eq(rapply(b, full_delete, XDP_DELETE_ORDER_LEN), 0);
	ck_assert(!rfind(b, 42)->live);
	free(add);
	free(del);
	free(full_delete);
	order_image_free(&b->im);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim_xdp_refresh");
	TCase *tc = tcase_create("book");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_a_short_delete_leaves_the_order_live);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
