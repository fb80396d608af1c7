/*
 * Received batches in the origin's order (tools/net/nats_order.c, issue
 * 26): batches of several lines, each holding runs of the origin's global
 * event numbers interleaved with the other lines', come out one event
 * number after the other whatever order they were received in; a batch is
 * freed once its last run is passed. Built with libnats (its messages hold
 * the batches); without it the test says so and passes.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "net/nats_order.h"

#ifdef WB_NATS
/* A batch of one line: runs (first, count) pairs, events numbered by them. */
static natsMsg *batch(uint16_t line, const uint64_t *runs, uint32_t nruns,
		      struct nats_batch_header *h, const uint8_t **data)
{
	uint32_t count = 0, i;
	uint8_t *buf;
	size_t len;
	natsMsg *m = NULL;
	char err[128];

	for (i = 0; i < nruns; i++)
		count += (uint32_t)runs[2 * i + 1];
	len = nats_batch_size(nruns, count);
	buf = calloc(1, len);
	memset(h, 0, sizeof(*h));
	h->line = line;
	h->count = count;
	h->run = 42;
	h->first = 1;
	h->runs = nruns;
	nats_batch_put_header(buf, h);
	for (i = 0; i < nruns; i++) {
		struct nats_batch_run r = { runs[2 * i], (uint32_t)runs[2 * i + 1] };

		nats_batch_put_run(buf, i, &r);
	}
	ck_assert_int_eq(natsMsg_Create(&m, "wirebook.t.events.x", NULL, (const char *)buf, (int)len),
			 NATS_OK);
	free(buf);
	*data = (const uint8_t *)natsMsg_GetData(m);
	ck_assert_int_eq(nats_batch_parse(*data, len, h, err, sizeof(err)), 0);
	return m;
}

static void push(struct nats_order *o, uint16_t line, const uint64_t *runs, uint32_t nruns)
{
	struct nats_batch_header h;
	const uint8_t *data;
	natsMsg *m = batch(line, runs, nruns, &h, &data);

	ck_assert_int_eq(nats_order_push(o, m, data, &h), 0);
}

START_TEST(test_interleaved_lines_come_out_in_the_origins_order)
{
	/* line 1: events 1-2, 5, 9-10; line 2: 3-4, 8; line 3: 6-7; received 3, 2, 1 */
	static const uint64_t l1[] = { 1, 2, 5, 1, 9, 2 }, l2[] = { 3, 2, 8, 1 }, l3[] = { 6, 2 };
	struct nats_order o = { 0 };
	uint64_t next = 1;
	int freed = 0;

	push(&o, 3, l3, 1);
	push(&o, 2, l2, 2);
	push(&o, 1, l1, 3);
	ck_assert_uint_eq(o.n, 3);
	while (o.n) {
		struct nats_held *c = nats_order_top(&o);

		ck_assert_uint_eq(c->key, next);
		next++;
		freed += nats_order_advance(&o, 1);	/* one event at a time */
	}
	ck_assert_uint_eq(next, 11);
	ck_assert_int_eq(freed, 3);
	nats_order_free(&o);
}
END_TEST

START_TEST(test_a_whole_run_at_once_and_free_what_is_left)
{
	static const uint64_t l1[] = { 1, 3, 7, 2 }, l2[] = { 4, 3 };
	struct nats_order o = { 0 };

	push(&o, 1, l1, 2);
	push(&o, 2, l2, 1);
	ck_assert_uint_eq(nats_order_top(&o)->key, 1);
	ck_assert_uint_eq(nats_order_top(&o)->r.count, 3);
	ck_assert_int_eq(nats_order_advance(&o, 3), 0);	/* line 1's first run: its batch stays */
	ck_assert_uint_eq(nats_order_top(&o)->key, 4);
	ck_assert_uint_eq(nats_order_top(&o)->h.line, 2);
	ck_assert_uint_eq(nats_order_top(&o)->ev, 0);
	ck_assert_int_eq(nats_order_advance(&o, 3), 1);	/* line 2 done: freed */
	ck_assert_uint_eq(nats_order_top(&o)->key, 7);
	ck_assert_uint_eq(nats_order_top(&o)->ev, 3);	/* its fourth event */
	nats_order_free(&o);				/* with a batch not passed: freed too */
	ck_assert_uint_eq(o.n, 0);
}
END_TEST

/* wirebookd --source's held batches counter follows every push and pop. */
START_TEST(test_the_held_count_is_stored_where_asked)
{
	static const uint64_t l1[] = { 1, 2 }, l2[] = { 3, 1 };
	uint64_t held = 99;
	struct nats_order o = { .held = &held };

	push(&o, 1, l1, 1);
	ck_assert_uint_eq(held, 1);
	push(&o, 2, l2, 1);
	ck_assert_uint_eq(held, 2);
	ck_assert_int_eq(nats_order_advance(&o, 2), 1);
	ck_assert_uint_eq(held, 1);
	nats_order_free(&o);
	ck_assert_uint_eq(held, 0);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("nats_order");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

#ifdef WB_NATS
	if (nats_Open(-1) != NATS_OK)	/* the library's own state, for its messages */
		return 1;
	tcase_add_test(tc, test_interleaved_lines_come_out_in_the_origins_order);
	tcase_add_test(tc, test_a_whole_run_at_once_and_free_what_is_left);
	tcase_add_test(tc, test_the_held_count_is_stored_where_asked);
#else
	printf("test_nats_order: built without libnats: nothing to test\n");
#endif
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* In this process: the library's threads are not forked, and stop below. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
#ifdef WB_NATS
	nats_Close();
#endif
	return failed ? 1 : 0;
}
