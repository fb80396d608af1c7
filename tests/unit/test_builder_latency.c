/*
 * The builder records one latency sample per packet (every packet of a ring
 * batch, not only its last: regression, the earlier packets of a batch had
 * waited longest and went unmeasured), with every stage timed and in order
 * (recv <= ring read <= book applied <= published), in the file of the
 * packet's feed; and a builder with a latency log starts at all
 * (regression: struct builder was calloc'd with 16-byte alignment and its
 * 64-byte aligned members crashed wirebookd --latency-dir). Each test runs
 * on both paths (loop index: enum builder_path): run to completion records
 * the same samples, stages and all, as the pipeline.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/latency_format.h"
#include "book/latency_log.h"
#include "feed/feed.h"
#include "wirebook/ring.h"
#include "test_util.h"

#define SLOTS 1024u
#define PACKETS 60u
#define PACKETS_PER_PUMP 6u	/* one ring batch holds several packets */

struct pump_ctx {
	struct wb_ring_producer prod;
	unsigned sent;
	uint64_t first_recv_ts;
};

static void add_event(struct pump_ctx *p, uint64_t recv_ts, uint64_t seq)
{
	struct wb_event *ev = wb_ring_producer_slot(&p->prod);

	ck_assert_ptr_nonnull(ev);
	memset(ev, 0, sizeof(*ev));
	ev->kind = WB_EV_ADD;
	ev->venue = WB_VENUE_NASDAQ;
	ev->line = 1;
	ev->side = seq % 2 ? WB_SIDE_BUY : WB_SIDE_SELL;
	ev->instrument = 1;
	ev->seq = seq;
	ev->recv_ts = recv_ts;
	ev->u.order.order_id = seq;
	ev->u.order.price = (int64_t)(100 + seq % 50) * WB_PRICE_SCALE;
	ev->u.order.qty = 100;
	wb_ring_producer_commit(&p->prod);
}

/*
 * PACKETS_PER_PUMP packets per call, published together: packet k carries
 * messages 10k and, for odd k, 10k+1 (two events of one packet share its
 * recv_ts). Its last message is the sequence its sample must carry.
 */
static int pump_packets(void *arg)
{
	struct pump_ctx *p = arg;

	if (p->sent == PACKETS)
		return BUILDER_PUMP_EOF;
	for (unsigned i = 0; i < PACKETS_PER_PUMP && p->sent < PACKETS; i++, p->sent++) {
		uint64_t recv_ts = test_realtime_ns();

		if (!p->first_recv_ts)
			p->first_recv_ts = recv_ts;
		add_event(p, recv_ts, 10 * p->sent);
		if (p->sent % 2)
			add_event(p, recv_ts, 10 * p->sent + 1);
		/* Distinct receive times, as the kernel gives distinct packets. */
		while (test_realtime_ns() == recv_ts)
			;
	}
	wb_ring_producer_publish(&p->prod);
	return BUILDER_PUMP_MORE;
}

/* Runs a builder with a latency log over what pump produces; returns the
 * samples written (malloc'd) and their count. */
static struct latency_sample *run_builder(int builder_path, builder_pump_fn pump,
					  struct pump_ctx *pc, uint64_t *n)
{
	char dir[] = "/tmp/wb-builder-latency-XXXXXX", path[128], shm[64];
	struct builder_config cfg;
	struct builder *b;
	struct latency_log *log;
	struct latency_file_header hdr;
	struct latency_sample *samples;
	uint64_t written, dropped;
	void *ring;
	FILE *f;
	int err = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	log = latency_log_open(dir);
	ck_assert_ptr_nonnull(log);

	memset(&cfg, 0, sizeof(cfg));
	snprintf(shm, sizeof(shm), "wb-test-builder-latency-%d", (int)getpid());
	cfg.shm.shm_name = shm;
	cfg.shm.numa_node = -1;
	cfg.shm.force = 1;
	cfg.books.numa_node = -1;
	cfg.books.expected_orders = 1024;
	cfg.numa_node = -1;
	cfg.cpus[0] = cfg.cpus[1] = -1;
	cfg.pin = 0;
	cfg.path = builder_path;
	cfg.latency = log;
	b = builder_create(&cfg, &err);
	ck_assert_msg(b != NULL, "builder_create: %d", err);
	ck_assert_uint_eq((uintptr_t)b % 64, 0);

	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(SLOTS));
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, wb_ring_bytes(SLOTS));
	wb_ring_format(ring, SLOTS, 1);
	wb_ring_producer_init(&pc->prod, ring);
	ck_assert_int_eq(builder_start(b, ring, pump, pc), 0);
	for (int i = 0; i < 5000 && !builder_done(b); i++)
		usleep(1000);
	ck_assert(builder_done(b));
	builder_stop(b);
	written = latency_log_close(log, &dropped);
	builder_destroy(b);
	free(ring);
	ck_assert_uint_eq(dropped, 0);

	snprintf(path, sizeof(path), "%s/latency_%s.bin", dir, feed_venue_name(WB_VENUE_NASDAQ));
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s missing", path);
	ck_assert_int_eq(fread(&hdr, sizeof(hdr), 1, f), 1);
	ck_assert_uint_eq(hdr.venue, WB_VENUE_NASDAQ);
	samples = calloc(written + 1, sizeof(*samples));
	ck_assert_ptr_nonnull(samples);
	*n = fread(samples, sizeof(*samples), written + 1, f);
	ck_assert_uint_eq(*n, written);
	fclose(f);
	unlink(path);
	rmdir(dir);
	return samples;
}

static void check_stages(const struct latency_sample *s, const struct pump_ctx *pc)
{
	ck_assert_uint_eq(s->venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(s->line, 1);
	ck_assert_uint_ge(s->recv_ts, pc->first_recv_ts);
	ck_assert_uint_ge(s->ring_read_ts, s->recv_ts);
	ck_assert_uint_ge(s->book_applied_ts, s->ring_read_ts);
	ck_assert_uint_ge(s->published_ts, s->book_applied_ts);
	/* A sample is microseconds to milliseconds, not a garbage difference. */
	ck_assert_uint_lt(s->published_ts - s->recv_ts, 10ull * 1000000000ull);
}

START_TEST(test_builder_records_every_packet_of_a_batch_with_ordered_stages)
{
	struct pump_ctx pc;
	struct latency_sample *s;
	uint64_t n;

	memset(&pc, 0, sizeof(pc));
	s = run_builder(_i, pump_packets, &pc, &n);
	ck_assert_uint_eq(n, PACKETS);
	for (uint64_t i = 0; i < n; i++) {
		/* Packet i, in order, timed by the sequence of its last message. */
		ck_assert_uint_eq(s[i].seq, 10 * i + (i % 2));
		check_stages(&s[i], &pc);
	}
	free(s);
}
END_TEST

/* Three packets at once; the middle one has more events than a batch holds. */
#define BIG_PACKET_EVENTS 300u

static int pump_a_packet_longer_than_a_batch(void *arg)
{
	struct pump_ctx *p = arg;
	uint64_t t;

	if (p->sent)
		return BUILDER_PUMP_EOF;
	t = test_realtime_ns();
	p->first_recv_ts = t;
	add_event(p, t, 1);
	for (unsigned i = 0; i < BIG_PACKET_EVENTS; i++)
		add_event(p, t + 1, 100 + i);
	add_event(p, t + 2, 1000);
	wb_ring_producer_publish(&p->prod);
	p->sent = 3;
	return BUILDER_PUMP_MORE;
}

START_TEST(test_builder_times_a_packet_split_across_batches_once_when_it_ends)
{
	struct pump_ctx pc;
	struct latency_sample *s;
	uint64_t n;

	memset(&pc, 0, sizeof(pc));
	s = run_builder(_i, pump_a_packet_longer_than_a_batch, &pc, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(s[0].seq, 1);
	ck_assert_uint_eq(s[1].seq, 100 + BIG_PACKET_EVENTS - 1);	/* its last message */
	ck_assert_uint_eq(s[2].seq, 1000);
	for (int i = 0; i < 3; i++)
		check_stages(&s[i], &pc);
	/* The big packet ended in the second batch: published with or after the
	 * first (thread 2 publishes two batches at once when both are queued). */
	ck_assert_uint_ge(s[1].published_ts, s[0].published_ts);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("builder_latency");
	TCase *tc = tcase_create("builder_latency");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_builder_records_every_packet_of_a_batch_with_ordered_stages,
			    BUILDER_PATH_PIPELINE, BUILDER_PATH_RTC + 1);
	tcase_add_loop_test(tc, test_builder_times_a_packet_split_across_batches_once_when_it_ends,
			    BUILDER_PATH_PIPELINE, BUILDER_PATH_RTC + 1);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
