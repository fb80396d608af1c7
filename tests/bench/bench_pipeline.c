/*
 * bench_pipeline: the whole builder, ring -> thread 1 (venue books) ->
 * thread 2 (Super-Book) -> shared memory, on a full-market ITCH day.
 *
 * The day is build/bench/day.pcap when it exists (bench_decode writes it;
 * WB_BENCH_PCAP names another capture), else it is generated in memory by
 * the wb-gen code (day profile, seed 1; WB_BENCH_MESSAGES sizes it). It is
 * decoded by the feed engine into one event ring big enough for the whole
 * day before the clock starts; then both builder threads are started on
 * it and timed until thread 2 has published the last batch. So the figure
 * is the builder's sustained rate on a backlog, with the publish batching
 * (one BATCH_END per 256 events) a burst gets.
 *
 * Prints messages/s, ns/message, instructions/message (both threads,
 * perf_event_open; n/a without a PMU), and the peak RSS with and without
 * the in-memory input. Then, to tell which thread bounds the pipeline,
 * each stage alone on one thread (CPU time, so time lost to other
 * processes on a shared machine does not count): the venue books over the
 * day's events, and the Super-Book over the updates they produced, with a
 * publish every 256 events as thread 2 does on a backlog.
 * Not a test: nothing fails on a slow result.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "input/pcap_io.h"
#include "bench_util.h"
#include "feed/feed.h"
#include "wirebook/ring.h"

#define ITCH_IP 0xe9360c6fu /* 233.54.12.111 */
#define ITCH_PORT 26477
#define RING_SLOTS_MAX (1u << 24)

static struct feed_engine engine;
static struct wb_ring_producer prod;

static int gen_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		    uint32_t len)
{
	(void)ctx;
	(void)ip;
	(void)port;
	feed_process_payload(&engine, 0, payload, len, ts, &prod);
	return 0;
}

static int load_pcap(const char *path)
{
	struct pcap_reader rd;
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	char err[PCAP_IO_ERR_LEN];
	int rc;

	if (pcap_reader_open(&rd, path, err, sizeof(err)) < 0)
		return -1;
	while ((rc = pcap_reader_next(&rd, &frame, &len, &ts, err, sizeof(err))) == 1)
		feed_process_frame(&engine, frame, len, ts, &prod);
	pcap_reader_close(&rd);
	if (rc < 0)
		fprintf(stderr, "bench_pipeline: %s\n", err);
	return rc < 0 ? -1 : 0;
}

static int generate_day(uint64_t messages)
{
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DAY, .seed = 1, .messages = messages };
	struct gen_itch_config ic;
	static struct gen_itch gi;
	struct gen_flow flow;
	struct gen_action a;

	if (gen_flow_init(&flow, &fc) < 0)
		return -1;
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "BENCHPIPE1", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.sink.packet = gen_sink;
	gen_itch_init(&gi, &ic);
	while (gen_flow_next(&flow, &a) == 1)
		gen_itch_action(&gi, &flow, &a);
	gen_itch_finish(&gi, flow.ts);
	printf("generated day: %" PRIu64 " ITCH messages, peak live orders %" PRIu64 "\n",
	       gi.stats.messages, flow.stats.peak_live);
	gen_flow_destroy(&flow);
	return 0;
}

static int pump_done(void *ctx)
{
	(void)ctx;
	return BUILDER_PUMP_EOF; /* the ring holds the whole day already */
}

static struct book_update *stage_ups;
static uint64_t stage_nu;

/* The books write each event's updates straight after the last one's. */
static struct book_update *keep_update(void *ctx, const struct wb_event *ev, struct book_update *u, unsigned k)
{
	(void)ctx;
	(void)ev;
	stage_nu += k;
	return u + k;
}

/* Each builder stage alone, on this thread, timed in CPU time. */
static void stage_costs(const struct wb_event *ev, uint64_t n)
{
	struct venue_books_config vc = { .expected_orders = 1u << 21, .numa_node = -1 };
	struct superbook_config sc = { .numa_node = -1 };
	struct venue_books *vb = venue_books_create(&vc);
	struct book_update *ups = aligned_alloc(64, sizeof(*ups) * (n + n / 2 + 1024));
	struct book_update end = { .kind = BOOK_UP_BATCH_END };
	struct superbook *sb;
	uint64_t nu = 0, i, t0, t1, publishes;
	char name[64];
	int err;

	if (!vb || !ups) {
		printf("stage costs: out of memory\n");
		goto out;
	}
	t0 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	stage_ups = ups;
	stage_nu = 0;
	for (i = 0; i < n; i += 256) {
		/* As thread 1 applies a ring batch, a BATCH_END after each. */
		venue_books_apply_batch(vb, ev, UINT64_MAX, i, n - i < 256 ? n - i : 256, n - i, &stage_ups[stage_nu],
					keep_update, NULL);
		stage_ups[stage_nu++] = end;
	}
	nu = stage_nu;
	t1 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("stage costs, one thread each (CPU time):\n");
	printf("  thread 1 alone (venue books)   %.1f ns/message\n", (double)(t1 - t0) / (double)n);
	snprintf(name, sizeof(name), "wb-bench-stage-%d", (int)getpid());
	sc.shm_name = name;
	sb = superbook_create(&sc, &err);
	if (!sb) {
		printf("  superbook_create: %d\n", err);
		goto out;
	}
	t0 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < nu; i++) {
		if (i + 8 < nu)
			superbook_prefetch(sb, &ups[i + 8], 0);
		if (i + 4 < nu)
			superbook_prefetch(sb, &ups[i + 4], 1);
		superbook_apply(sb, &ups[i]);
	}
	t1 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	publishes = superbook_counters(sb)->publishes;
	printf("  thread 2 alone (Super-Book)    %.1f ns/message (%.2f updates and %.2f symbol "
	       "publishes per message)\n", (double)(t1 - t0) / (double)n,
	       (double)(nu - n / 256) / (double)n, (double)publishes / (double)n);
	superbook_destroy(sb);
out:
	free(ups);
	venue_books_destroy(vb);
}


int main(void)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	struct builder_config bcfg;
	struct builder_counters bc;
	const struct venue_books_counters *vc;
	const struct superbook_counters *sc;
	struct builder *b;
	struct rusage ru;
	const char *pcap = getenv("WB_BENCH_PCAP");
	const char *nmsg = getenv("WB_BENCH_MESSAGES");
	uint64_t ring_bytes, events, t0, t1, instructions = 0, input_rss;
	void *ring;
	int err, perf_fd;
	char shm[64];

	if (!pcap && access("build/bench/day.pcap", R_OK) == 0)
		pcap = "build/bench/day.pcap";
	if (feed_engine_init(&engine, &ecfg) < 0 ||
	    feed_map_add(&engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A") != 0 ||
	    feed_subscribe(&engine, "*", 1) < 0) {
		fprintf(stderr, "bench_pipeline: feed engine setup failed\n");
		return 1;
	}
	ring_bytes = wb_ring_bytes(RING_SLOTS_MAX);
	ring = aligned_alloc(WB_RING_PAGE, ring_bytes);
	if (!ring)
		return 1;
	memset(ring, 0, WB_RING_SLOTS_OFFSET); /* slots are faulted in as the decoder fills them */
	wb_ring_format(ring, RING_SLOTS_MAX, 1);
	wb_ring_producer_init(&prod, ring);

	if (pcap) {
		printf("input: %s\n", pcap);
		if (load_pcap(pcap) < 0)
			return 1;
	} else if (generate_day(nmsg ? strtoull(nmsg, NULL, 0) : 0) < 0) {
		return 1;
	}
	wb_ring_producer_publish(&prod);
	events = prod.head;
	if (prod.dropped) {
		fprintf(stderr, "bench_pipeline: the day does not fit the ring (%" PRIu64 " dropped)\n",
			prod.dropped);
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	input_rss = (uint64_t)ru.ru_maxrss * 1024;

	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.numa_node = -1;
	bcfg.cpus[0] = bcfg.cpus[1] = -1;
	bcfg.pin = 1;
	bcfg.books.expected_orders = 1u << 21;
	snprintf(shm, sizeof(shm), "wb-bench-pipeline-%d", (int)getpid());
	bcfg.shm.shm_name = shm;
	b = builder_create(&bcfg, &err);
	if (!b) {
		fprintf(stderr, "bench_pipeline: builder_create: %d\n", err);
		return 1;
	}
	perf_fd = bench_instructions_open();
	if (perf_fd >= 0)
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	t0 = test_monotonic_ns();
	if (builder_start(b, ring, pump_done, NULL) < 0)
		return 1;
	while (!builder_done(b)) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	t1 = test_monotonic_ns();
	builder_stop(b); /* joins: the threads' instruction counts fold into ours */
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &instructions, sizeof(instructions)) != sizeof(instructions))
			instructions = 0;
		close(perf_fd);
	}
	getrusage(RUSAGE_SELF, &ru);

	builder_get_counters(b, &bc);
	vc = builder_venue_counters(b);
	sc = builder_superbook_counters(b);
	printf("pipeline ring -> venue books -> Super-Book -> shm (threads on cpu %d,%d)\n",
	       bc.cpu[0], bc.cpu[1]);
	printf("  events          %" PRIu64 " (%" PRIu64 " ITCH messages decoded), %" PRIu64
	       " level updates, %" PRIu64 " symbol publishes\n",
	       events, engine.lines[0].counters.messages, sc->levels, sc->publishes);
	printf("  peak live orders %" PRIu64 ", unknown order ids %" PRIu64 ", queue-full waits %" PRIu64 "\n",
	       vc->peak_live_orders, vc->unknown_order, bc.queue_full_waits);
	printf("  time            %.3f s (CPU: thread 1 %.1f ns/message, thread 2 %.1f ns/message)\n",
	       (double)(t1 - t0) / 1e9, (double)bc.cpu_ns[0] / (double)events,
	       (double)bc.cpu_ns[1] / (double)events);
	printf("  throughput      %.2f M messages/s (target >= 10)\n",
	       (double)events / ((double)(t1 - t0) / 1e9) / 1e6);
	printf("  ns/message      %.1f (wall, two threads in parallel)\n",
	       (double)(t1 - t0) / (double)events);
	if (instructions)
		printf("  instructions/message %.1f (both threads)\n", (double)instructions / (double)events);
	else
		printf("  instructions/message n/a (perf_event_open: %s)\n",
		       perf_fd < 0 ? strerror(errno) : "no count");
	printf("  peak RSS        %.0f MiB (input ring of the whole day: %.0f MiB of it; "
	       "builder %.0f MiB)\n",
	       (double)ru.ru_maxrss / 1024, (double)input_rss / (1 << 20),
	       ((double)ru.ru_maxrss * 1024 - (double)input_rss) / (1 << 20));
	builder_destroy(b);
	stage_costs((const struct wb_event *)((char *)ring + WB_RING_SLOTS_OFFSET), events);
	free(ring);
	feed_engine_destroy(&engine);
	return 0;
}
