/*
 * bench_latency_overhead: what per-packet latency logging costs the
 * builder's throughput. A generated ITCH day (seed 1, day profile) is
 * decoded once into an event ring; the builder then runs over the very same
 * ring again and again, alternately without and with a latency log (one
 * sample per packet), and each run's wall time and per-thread CPU time are
 * taken. Thread 1 (venue books) is the bottleneck on a backlog; its CPU time
 * does not count time the thread was preempted, so it is the steadier
 * figure on a shared machine.
 *
 * WB_BENCH_MESSAGES sets the day's order messages (default 2,000,000),
 * WB_BENCH_RUNS the pairs of runs (default 6; which of a pair runs first
 * alternates). Prints the medians and the
 * overhead in percent. Not a test: nothing fails on a slow result.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/latency_log.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "feed/feed.h"
#include "wirebook/ring.h"
#include "../unit/test_util.h"

#define ITCH_IP 0xe9360c6fu /* 233.54.12.111 */
#define ITCH_PORT 26477
#define RING_SLOTS (1u << 24)
#define MAX_RUNS 64

static struct feed_engine engine;
static struct wb_ring_producer prod;

static int gen_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		    uint32_t len)
{
	uint64_t *packets = ctx;

	(void)ip;
	(void)port;
	feed_process_payload(&engine, 0, payload, len, ts, &prod);
	(*packets)++;
	return 0;
}

static int pump_done(void *ctx)
{
	(void)ctx;
	return BUILDER_PUMP_EOF; /* the ring holds the whole day already */
}

struct run {
	double wall_ns, cpu1_ns, cpu2_ns;
	uint64_t samples;
};

/* One builder run over the whole ring; latency_dir NULL: no log. */
static int run_builder(void *ring, const char *latency_dir, struct run *r)
{
	struct wb_ring_cons_page *cons = (struct wb_ring_cons_page *)((char *)ring + WB_RING_PAGE);
	struct builder_config bcfg;
	struct builder_counters bc;
	struct latency_log *log = NULL;
	struct builder *b;
	uint64_t t0, dropped = 0;
	char shm[64];
	int err;

	cons->tail = 0; /* replay the same events from the start */
	if (latency_dir && !(log = latency_log_open(latency_dir)))
		return -1;
	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.numa_node = -1;
	bcfg.cpus[0] = bcfg.cpus[1] = -1;
	bcfg.pin = 1;
	bcfg.books.expected_orders = 1u << 20;
	bcfg.latency = log;
	snprintf(shm, sizeof(shm), "wb-bench-latency-overhead-%d", (int)getpid());
	bcfg.shm.shm_name = shm;
	bcfg.shm.force = 1;
	b = builder_create(&bcfg, &err);
	if (!b) {
		fprintf(stderr, "bench_latency_overhead: builder_create: %d\n", err);
		return -1;
	}
	t0 = test_monotonic_ns();
	if (builder_start(b, ring, pump_done, NULL) < 0)
		return -1;
	while (!builder_done(b)) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	r->wall_ns = (double)(test_monotonic_ns() - t0);
	builder_stop(b);
	builder_get_counters(b, &bc);
	r->cpu1_ns = (double)bc.cpu_ns[0];
	r->cpu2_ns = (double)bc.cpu_ns[1];
	builder_destroy(b);
	r->samples = log ? latency_log_close(log, &dropped) : 0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(void)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	const char *env_msgs = getenv("WB_BENCH_MESSAGES"), *env_runs = getenv("WB_BENCH_RUNS");
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DAY, .seed = 1 };
	struct gen_itch_config ic;
	static struct gen_itch gi;
	struct gen_flow flow;
	struct gen_action a;
	struct run off[MAX_RUNS], on[MAX_RUNS];
	double wall_ratio[MAX_RUNS], cpu1_ratio[MAX_RUNS], cpu2_ratio[MAX_RUNS];
	char dir[] = "/tmp/wb-bench-latency-XXXXXX", path[sizeof(dir) + 32];
	uint64_t packets = 0, events;
	int runs = env_runs ? atoi(env_runs) : 6;
	void *ring;

	if (runs < 1 || runs > MAX_RUNS)
		runs = 6;
	fc.messages = env_msgs ? strtoull(env_msgs, NULL, 0) : 2000000;
	if (feed_engine_init(&engine, &ecfg) < 0 ||
	    feed_map_add(&engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A") != 0 ||
	    feed_subscribe(&engine, "*", 1) < 0 || !mkdtemp(dir)) {
		fprintf(stderr, "bench_latency_overhead: setup failed\n");
		return 1;
	}
	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(RING_SLOTS));
	if (!ring)
		return 1;
	memset(ring, 0, WB_RING_SLOTS_OFFSET);
	wb_ring_format(ring, RING_SLOTS, 1);
	wb_ring_producer_init(&prod, ring);

	if (gen_flow_init(&flow, &fc) < 0)
		return 1;
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "BENCHLATOV", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.sink.packet = gen_sink;
	ic.sink.ctx = &packets;
	gen_itch_init(&gi, &ic);
	while (gen_flow_next(&flow, &a) == 1)
		gen_itch_action(&gi, &flow, &a);
	gen_itch_finish(&gi, flow.ts);
	gen_flow_destroy(&flow);
	wb_ring_producer_publish(&prod);
	events = prod.head;
	if (prod.dropped) {
		fprintf(stderr, "bench_latency_overhead: the day does not fit the ring\n");
		return 1;
	}
	printf("bench_latency_overhead: %" PRIu64 " events in %" PRIu64 " packets, %d pairs of runs\n",
	       events, packets, runs);
	for (int i = 0; i < runs; i++) {
		/* Alternate which goes first: the second run of a pair finds warm caches. */
		int rc = i % 2 ? run_builder(ring, dir, &on[i]) | run_builder(ring, NULL, &off[i])
			       : run_builder(ring, NULL, &off[i]) | run_builder(ring, dir, &on[i]);

		if (rc < 0)
			return 1;
		wall_ratio[i] = on[i].wall_ns / off[i].wall_ns;
		cpu1_ratio[i] = on[i].cpu1_ns / off[i].cpu1_ns;
		cpu2_ratio[i] = on[i].cpu2_ns / off[i].cpu2_ns;
		printf("  run %d: off %.1f ns/event (thread 1 CPU %.1f), on %.1f ns/event "
		       "(thread 1 CPU %.1f), %" PRIu64 " samples\n", i + 1,
		       off[i].wall_ns / (double)events, off[i].cpu1_ns / (double)events,
		       on[i].wall_ns / (double)events, on[i].cpu1_ns / (double)events, on[i].samples);
	}
	printf("%-28s %10s\n", "median overhead (on/off - 1)", "percent");
	printf("%-28s %+9.1f%%\n", "wall time", (median(wall_ratio, runs) - 1) * 100);
	printf("%-28s %+9.1f%%\n", "thread 1 CPU (venue books)", (median(cpu1_ratio, runs) - 1) * 100);
	printf("%-28s %+9.1f%%\n", "thread 2 CPU (Super-Book)", (median(cpu2_ratio, runs) - 1) * 100);

	snprintf(path, sizeof(path), "%s/latency_nasdaq.bin", dir);
	unlink(path);
	rmdir(dir);
	free(ring);
	feed_engine_destroy(&engine);
	return 0;
}
