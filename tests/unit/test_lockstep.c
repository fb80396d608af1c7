/*
 * Lockstep replay (lib/book/lockstep.h, include/wirebook/ring.h
 * "Lockstep"): a batch ends at the end of the first gated packet and the
 * next packet is a step; a packet the batch or the pump cut short stays
 * one step; due requests cut a batch; one reader claims the stream, its
 * ack is what the writer waits for; through libwirebook, release and
 * close ack.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book/lockstep.h"
#include "book/order_detail.h"
#include "wirebook/events.h"
#include "wirebook/ring.h"

#define SLOTS 1024u

static struct wb_event evs[16];

static const struct wb_event *at(const void *ctx, uint64_t i)
{
	return &((const struct wb_event *)ctx)[i];
}

/* Events in packets: sizes[k] events received at time k + 1 on line 1. */
static unsigned packets(const unsigned *sizes, unsigned n)
{
	unsigned e = 0;

	memset(evs, 0, sizeof(evs));
	for (unsigned k = 0; k < n; k++)
		for (unsigned j = 0; j < sizes[k]; j++, e++) {
			evs[e].kind = WB_EV_ADD;
			evs[e].instrument = 1;
			evs[e].recv_ts = 1000 * (k + 1);
			evs[e].line = 1;
		}
	return e;
}

static struct event_stream stream;

static struct lockstep *ls_new(int gate)
{
	struct lockstep_config cfg = { .shm_name = "wb-test-lockstep-none", .gate = gate };
	static const int stop = 1;	/* no reader to wait for */
	struct lockstep *ls;
	int err;

	memset(&stream, 0, sizeof(stream));
	ck_assert_int_eq(posix_memalign(&stream.mem, WB_RING_PAGE, wb_ring_bytes(SLOTS)), 0);
	memset(stream.mem, 0, wb_ring_bytes(SLOTS));
	wb_ring_format_kind(stream.mem, SLOTS, 1, WB_RING_MAGIC_BROADCAST);
	stream.bytes = wb_ring_bytes(SLOTS);
	wb_ring_writer_init(&stream.writer, stream.mem);
	ls = lockstep_create(&cfg, &err);
	ck_assert_ptr_nonnull(ls);
	lockstep_begin(ls, &stream, NULL, &stop);
	ck_assert_uint_eq(((struct wb_ring_prod_page *)stream.mem)->lockstep, 1);
	return ls;
}

static void ls_free(struct lockstep *ls)
{
	lockstep_destroy(ls);
	free(stream.mem);
}

START_TEST(test_lockstep_batch_ends_with_the_first_gated_packet)
{
	static const unsigned sizes[] = { 2, 3, 1 };
	unsigned n = packets(sizes, 3);
	struct lockstep *ls = ls_new(LOCKSTEP_GATE_ALL);

	ck_assert_uint_eq(lockstep_cut(ls, at, evs, n), 2);
	ck_assert_int_eq(lockstep_holding(ls), 1);
	/* The next packet starts: a step before it. */
	ck_assert_int_eq(lockstep_step_over(ls, &evs[2]), 1);
	ls_free(ls);
}
END_TEST

START_TEST(test_lockstep_packet_cut_short_is_one_step)
{
	static const unsigned sizes[] = { 4, 1 };
	struct lockstep *ls = ls_new(LOCKSTEP_GATE_ALL);

	packets(sizes, 2);
	/* The batch (or the pump) ends inside the first packet ... */
	ck_assert_uint_eq(lockstep_cut(ls, at, evs, 2), 2);
	/* ... its rest is no step, and ends the next batch. */
	ck_assert_int_eq(lockstep_step_over(ls, &evs[2]), 0);
	ck_assert_uint_eq(lockstep_cut(ls, at, evs + 2, 3), 2);
	ck_assert_int_eq(lockstep_step_over(ls, &evs[4]), 1);
	ls_free(ls);
}
END_TEST

START_TEST(test_lockstep_detail_gate_without_detail_steps_nowhere)
{
	static const unsigned sizes[] = { 2, 3, 1 };
	unsigned n = packets(sizes, 3);
	struct lockstep *ls = ls_new(LOCKSTEP_GATE_DETAIL);

	ck_assert_uint_eq(lockstep_cut(ls, at, evs, n), n);
	ck_assert_int_eq(lockstep_step_over(ls, &evs[0]), 0);
	ls_free(ls);
}
END_TEST

/* A watch list's symbol has no detail until its definition is applied,
 * mid-packet: the packet that defines it (and brings its first orders,
 * which the strategy reads with detail) is a step all the same. */
static uint64_t cut_with_watch(const char *watch, const char *defined)
{
	static const unsigned sizes[] = { 2, 1, 1 };
	static const int stop = 1;
	unsigned n = packets(sizes, 3);
	struct lockstep_config cfg = { .shm_name = "wb-test-lockstep-none", .gate = LOCKSTEP_GATE_DETAIL };
	struct order_detail *od;
	struct lockstep *ls;
	uint64_t cut;
	int err;

	od = order_detail_create(&(struct order_detail_config){ .shm_name = "wb-test-lockstep-watch",
								 .capacity = 16, .order_slots = 1024 }, &err);
	ck_assert_ptr_nonnull(od);
	ck_assert_int_eq(order_detail_watch(od, watch), 0);
	evs[0].kind = WB_EV_SYMBOL;
	memcpy(evs[0].u.symbol.ticker, defined, 8);
	ls = ls_new(LOCKSTEP_GATE_DETAIL);
	lockstep_destroy(ls);
	ls = lockstep_create(&cfg, &err);
	ck_assert_ptr_nonnull(ls);
	lockstep_begin(ls, &stream, od, &stop);
	cut = lockstep_cut(ls, at, evs, n);
	ls_free(ls);
	order_detail_destroy(od);
	return cut;
}

START_TEST(test_lockstep_watched_symbol_defined_mid_packet_is_a_step)
{
	ck_assert_uint_eq(cut_with_watch("MAT", "MAT     "), 2);
	ck_assert_uint_eq(cut_with_watch("MAT,IWO", "IWO     "), 2);
	/* a symbol off the list: no step anywhere */
	ck_assert_uint_eq(cut_with_watch("MAT", "MATX    "), 4);
}
END_TEST

/* --lockstep-delay-file: a file of delays in ns, one a line. */
static int read_delays(const char *text, uint64_t **out, char *err, size_t errlen)
{
	char path[] = "/tmp/wb-test-lockstep-delays-XXXXXX";
	int fd = mkstemp(path), n;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	n = lockstep_delays_read(path, out, err, errlen);
	unlink(path);
	return n;
}

START_TEST(test_lockstep_delay_file_reads_one_delay_a_line)
{
	uint64_t *v;
	char err[256];

	ck_assert_int_eq(read_delays("# wire to order, ns\n1500\n\n  2500 \n60000000000\n0\n", &v, err, sizeof(err)), 4);
	ck_assert_uint_eq(v[0], 1500);
	ck_assert_uint_eq(v[1], 2500);
	ck_assert_uint_eq(v[2], 60000000000ull);
	ck_assert_uint_eq(v[3], 0);
	free(v);
	ck_assert_int_eq(read_delays("", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no delay"));
	ck_assert_int_eq(read_delays("# only a comment\n\n", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no delay"));
	ck_assert_int_eq(read_delays("100\n200\n12x\n", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "line 3: '12x'"));
	ck_assert_int_eq(read_delays("-5\n", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "line 1"));
	ck_assert_int_eq(read_delays("100\n60000000001\n", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "line 2"));
	ck_assert_int_eq(lockstep_delays_read("/nonexistent/wb-delays", &v, err, sizeof(err)), -1);
	ck_assert_ptr_null(v);
}
END_TEST

START_TEST(test_lockstep_delay_file_limit_is_named)
{
	size_t n = LOCKSTEP_MAX_DELAY_SAMPLES + 1;
	char *text = malloc(n * 2 + 1), err[256];
	uint64_t *v;

	for (size_t i = 0; i < n; i++)
		memcpy(text + 2 * i, "7\n", 2);
	text[2 * n] = 0;
	ck_assert_int_eq(read_delays(text, &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 1000000 delays"));
	text[2 * (n - 1)] = 0;	/* exactly the limit */
	ck_assert_int_eq(read_delays(text, &v, err, sizeof(err)), (int)LOCKSTEP_MAX_DELAY_SAMPLES);
	free(v);
	free(text);
}
END_TEST

/* The draws: a sample each, from the seed's xorshift64* (the values
 * tests/sim/probe.py's draws() gives the model); the jitter's as before. */
START_TEST(test_lockstep_sampled_delay_draws_from_the_seed)
{
	static const uint64_t samples[] = { 100, 200, 300, 400, 500 };
	static const uint64_t want[] = { 300, 400, 500, 400, 200, 200, 100, 300 };
	static const uint64_t want_jitter[] = { 822, 438, 474, 918 };
	struct lockstep_config cfg = { .shm_name = "wb-test-lockstep-none", .seed = 7, .delay_samples = samples,
				       .delay_sample_count = 5 };
	struct lockstep *a, *b;
	uint64_t copy[5];
	int err;

	memcpy(copy, samples, sizeof(copy));
	cfg.delay_samples = copy;
	a = lockstep_create(&cfg, &err);
	memset(copy, 0, sizeof(copy));	/* lockstep_create keeps its own */
	cfg.delay_samples = samples;
	b = lockstep_create(&cfg, &err);
	for (unsigned i = 0; i < 8; i++) {
		ck_assert_uint_eq(lockstep_next_draw(a), want[i]);
		ck_assert_uint_eq(lockstep_next_draw(b), want[i]);
	}
	lockstep_destroy(a);
	lockstep_destroy(b);
	cfg = (struct lockstep_config){ .shm_name = "wb-test-lockstep-none", .seed = 7, .jitter_ns = 1000 };
	a = lockstep_create(&cfg, &err);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(lockstep_next_draw(a), want_jitter[i]);
	lockstep_destroy(a);
	cfg.jitter_ns = 0;
	a = lockstep_create(&cfg, &err);
	ck_assert_uint_eq(lockstep_next_draw(a), 0);	/* a fixed delay only */
	lockstep_destroy(a);
}
END_TEST

START_TEST(test_lockstep_one_reader_claims_and_its_ack_is_seen)
{
	void *mem;
	struct wb_ring_reader a, b;
	struct wb_ring_cons_page *c;

	ck_assert_int_eq(posix_memalign(&mem, WB_RING_PAGE, wb_ring_bytes(SLOTS)), 0);
	memset(mem, 0, wb_ring_bytes(SLOTS));
	wb_ring_format_kind(mem, SLOTS, 1, WB_RING_MAGIC_BROADCAST);
	c = (struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	wb_ring_reader_init(&a, mem);
	wb_ring_reader_init(&b, mem);
	/* Not a lockstep stream: nobody claims. */
	ck_assert_int_eq(wb_ring_reader_claim_lockstep(&a, 10), 0);
	((struct wb_ring_prod_page *)mem)->lockstep = 1;
	ck_assert_int_eq(wb_ring_reader_claim_lockstep(&a, 10), 1);
	ck_assert_int_eq(wb_ring_reader_claim_lockstep(&b, 11), 0);
	ck_assert_uint_eq(c->lockstep_reader, 10);
	/* A writer asleep on the ack is told to wake; one awake is not. */
	ck_assert_int_eq(wb_ring_reader_ack(&a, 5), 0);
	ck_assert_uint_eq(c->lockstep_acked, 5);
	c->lockstep_writer_waits = 1;
	ck_assert_int_eq(wb_ring_reader_ack(&a, 9), 1);
	ck_assert_uint_eq(c->lockstep_writer_waits, 0);
	ck_assert_uint_eq(c->lockstep_acked, 9);
	free(mem);
}
END_TEST

START_TEST(test_lockstep_attached_reader_never_claims)
{
	struct lockstep *ls = ls_new(LOCKSTEP_GATE_ALL);
	struct wb_ring_cons_page *c = (struct wb_ring_cons_page *)((char *)stream.mem + WB_RING_PAGE);
	const struct wb_event *got[8];
	struct wb_events *ev;
	int err;

	/* wb_events_attach never claims (a reader inside wirebookd): the
	 * claim is for wb_events_open_shm's handles; the ack is the ring's. */
	ev = wb_events_attach(&stream.mem, 1, stream.bytes, &err);
	ck_assert_ptr_nonnull(ev);
	wb_ring_writer_claim(&stream.writer, 3);
	for (int i = 0; i < 3; i++)
		wb_ring_writer_put(&stream.writer, &evs[0]);
	wb_ring_writer_publish(&stream.writer);
	ck_assert_uint_eq(wb_events_peek(ev, got, 8), 3);
	wb_events_release(ev);
	ck_assert_uint_eq(c->lockstep_reader, 0);
	ck_assert_uint_eq(c->lockstep_acked, 0);
	wb_events_close(ev);
	ls_free(ls);
}
END_TEST

static Suite *lockstep_suite(void)
{
	Suite *s = suite_create("lockstep");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_lockstep_batch_ends_with_the_first_gated_packet);
	tcase_add_test(tc, test_lockstep_packet_cut_short_is_one_step);
	tcase_add_test(tc, test_lockstep_detail_gate_without_detail_steps_nowhere);
	tcase_add_test(tc, test_lockstep_watched_symbol_defined_mid_packet_is_a_step);
	tcase_add_test(tc, test_lockstep_delay_file_reads_one_delay_a_line);
	tcase_add_test(tc, test_lockstep_delay_file_limit_is_named);
	tcase_add_test(tc, test_lockstep_sampled_delay_draws_from_the_seed);
	tcase_add_test(tc, test_lockstep_one_reader_claims_and_its_ack_is_seen);
	tcase_add_test(tc, test_lockstep_attached_reader_never_claims);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(lockstep_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
