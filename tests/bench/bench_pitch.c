/*
 * Decode + filter speed of the Cboe PITCH decoder: ns/message and
 * instructions/message through feed_process_payload, subscribed to every
 * symbol and to 100 symbols. With 100 symbols almost every execute, reduce,
 * modify and delete names an order the order-id filter must prove absent:
 * that is where it works hardest.
 *
 * The stream is generated in memory by gen_flow + gen_pitch (day profile,
 * seed 1, every order on BZX, WB_BENCH_MESSAGES order-flow messages,
 * default 6,000,000). Only the engine calls and a drain of the ring are
 * timed; best of PASSES. Not a test: nothing here fails on a slow result.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gen/gen_flow.h"
#include "gen/gen_pitch.h"
#include "input/capture.h"
#include "bench_util.h"
#include "feed/feed.h"

#define DAY_MESSAGES 6000000ull
#define RING_SLOTS 4096u
#define PASSES 5
#define SUBSET_SYMBOLS 100
#define GROUP_IP 0xe0003e02u	/* 224.0.62.2, feeds.conf's bzx A line */
#define GROUP_PORT 30001
/* The day profile peaks at 1.15M live orders, all on one venue here. */
#define FILTER_CAPACITY 1250000u	/* 2Mi slots (32 MiB) */

/* The generated day in memory (a capture of one line's payloads). */
struct stream {
	struct capture cap;
	uint64_t messages;
};

static int collect(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		   const uint8_t *payload, uint32_t len)
{
	struct stream *s = ctx;

	(void)dst_ip;
	(void)dst_port;
	s->messages += payload[2];	/* Hdr Count; 0 for heartbeats */
	return capture_add(&s->cap, payload, len, ts_ns);
}

static int generate(struct stream *s, uint64_t messages, struct gen_flow *flow)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DAY, .seed = 1, .messages = messages,
					.venues = 1u << WB_VENUE_BZX };
	struct gen_pitch_config pcfg = { .venue = WB_VENUE_BZX, .unit = 1, .a_ip = GROUP_IP,
					 .a_port = GROUP_PORT, .seed = 1,
					 .sink = { .packet = collect, .ctx = s } };
	struct gen_pitch *g = calloc(1, sizeof(*g));
	struct gen_action a;
	uint64_t last = 0;
	int rc = 0;

	capture_init(&s->cap, CAPTURE_PAYLOADS, "generated");
	if (!g || gen_flow_init(flow, &fcfg) || gen_pitch_init(g, &pcfg))
		return -1;
	while (!rc && gen_flow_next(flow, &a) == 1) {
		last = a.ts;
		rc = gen_pitch_action(g, flow, &a);
	}
	rc |= gen_pitch_finish(g, last + 1000);
	gen_pitch_destroy(g);
	free(g);
	return rc;
}



struct result {
	uint64_t ns, instructions, events, filtered, filter_full, errors;
	bool have_instructions;
};

static void drain(struct wb_ring_producer *p, struct wb_ring_consumer *c)
{
	uint64_t n;

	wb_ring_producer_publish(p);
	n = wb_ring_consumer_available(c);
	if (n)
		wb_ring_consumer_release(c, n);
}

static struct result run_pass(struct feed_engine *e, int line, const struct stream *s, void *ring,
			      int perf_fd)
{
	struct feed_counters *k = &e->lines[line].counters;
	struct feed_counters before;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;
	struct result r = { 0 };
	uint64_t t0, t1, instr = 0;
	int i;

	feed_engine_reset_state(e);
	memset(ring, 0, wb_ring_bytes(RING_SLOTS));
	wb_ring_format(ring, RING_SLOTS, 1);
	wb_ring_producer_init(&p, ring);
	wb_ring_consumer_init(&c, ring);
	before = *k;
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	t0 = test_monotonic_ns();
	for (uint64_t n = 0; n < s->cap.count; n++) {
		const struct capture_packet *pkt = &s->cap.packets[n];

		feed_process_payload(e, line, s->cap.bytes + pkt->offset, pkt->len, n, &p);
		drain(&p, &c);
	}
	t1 = test_monotonic_ns();
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &instr, sizeof(instr)) == sizeof(instr)) {
			r.instructions = instr;
			r.have_instructions = true;
		}
	}
	r.ns = t1 - t0;
	r.events = k->events - before.events;
	r.filtered = k->filtered - before.filtered;
	r.filter_full = k->order_filter_full - before.order_filter_full;
	for (i = 0; i < FEED_ERR_COUNT; i++)
		r.errors += k->errors[i] - before.errors[i];
	return r;
}

static void bench(struct feed_engine *e, int line, const struct stream *s, void *ring,
		  const char *subscribed, int perf_fd)
{
	struct result best = { .ns = UINT64_MAX };
	double msgs = (double)s->messages;
	char instr[32];

	run_pass(e, line, s, ring, perf_fd);	/* warm caches and page tables */
	for (int i = 0; i < PASSES; i++) {
		struct result r = run_pass(e, line, s, ring, perf_fd);

		if (r.ns < best.ns)
			best = r;
	}
	if (best.have_instructions)
		snprintf(instr, sizeof(instr), "%.1f", (double)best.instructions / msgs);
	else
		snprintf(instr, sizeof(instr), "n/a");
	printf("%-12s %8.2f %10s %10.3f %10.3f %9.1f %11" PRIu64 " %7" PRIu64 "\n", subscribed,
	       (double)best.ns / msgs, instr, (double)best.events / msgs,
	       (double)best.filtered / msgs, msgs / ((double)best.ns / 1e9) / 1e6,
	       best.filter_full, best.errors);
}

/*
 * Venue state on transparent huge pages when the kernel offers them: the
 * order-id filter is tens of megabytes read at random, and with 4 KiB
 * pages most lookups would also miss the TLB. WB_BENCH_SMALL_PAGES=1
 * measures without.
 */
#define HUGE_PAGE ((size_t)2 << 20)

/* Each block starts with where its mapping starts and how long it is (0: calloc). */
struct block_header {
	void *base;
	size_t bytes;
};

static void *zalloc(size_t n)
{
	struct block_header *h;
	uint8_t *base, *p;
	size_t bytes;

	if (n < HUGE_PAGE || getenv("WB_BENCH_SMALL_PAGES")) {
		h = calloc(1, sizeof(*h) + n);
		if (!h)
			return NULL;
		h->base = h;
		return h + 1;
	}
	/* One huge page in front holds the header and aligns the block. */
	bytes = 2 * HUGE_PAGE + ((n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
	base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)base + 2 * HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	madvise(p, n, MADV_HUGEPAGE);
	h = (struct block_header *)p - 1;
	h->base = base;
	h->bytes = bytes;
	return p;
}

static void zfree(void *ptr)
{
	struct block_header *h = (struct block_header *)ptr - 1;

	if (!ptr)
		return;
	if (h->bytes)
		munmap(h->base, h->bytes);
	else
		free(h->base);
}

int main(int argc, char **argv)
{
	const char *env_msgs = getenv("WB_BENCH_MESSAGES");
	uint64_t messages = env_msgs ? strtoull(env_msgs, NULL, 0) : DAY_MESSAGES;
	struct feed_engine_config cfg = { .alloc = zalloc, .free = zfree,
					  .order_filter_capacity = FILTER_CAPACITY };
	struct feed_engine *e = calloc(1, sizeof(*e));
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct stream s = { 0 };
	void *ring = NULL;
	uint32_t step;
	int perf_fd, line;

	if (argc > 1) {
		printf("usage: bench_pitch\n\nPITCH decode+filter ns/message, all symbols and 100 "
		       "symbols subscribed.\nWB_BENCH_MESSAGES=N sizes the generated day "
		       "(default %llu).\n", DAY_MESSAGES);
		return strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? 0 : 2;
	}
	if (!e || !flow || generate(&s, messages, flow)) {
		fprintf(stderr, "bench_pitch: cannot generate the stream\n");
		return 1;
	}
	if (feed_engine_init(e, &cfg) || posix_memalign(&ring, WB_RING_PAGE, wb_ring_bytes(RING_SLOTS)))
		return 1;
	line = feed_map_add(e, GROUP_IP, GROUP_PORT, FEED_PROTO_PITCH, WB_VENUE_BZX, "A");
	if (line < 0)
		return 1;
	perf_fd = bench_instructions_open();

	printf("bench_pitch: generated BZX day: %" PRIu64 " PITCH messages in %" PRIu64
	       " packets (%.1f per packet), %u symbols, peak %" PRIu64
	       " live orders; best of %d passes\n",
	       s.messages, s.cap.count, (double)s.messages / (double)s.cap.count, flow->symbol_count,
	       flow->stats.peak_live, PASSES);
	if (perf_fd < 0)
		printf("bench_pitch: instructions: n/a (perf_event_open: %s)\n", strerror(errno));
	printf("%-12s %8s %10s %10s %10s %9s %11s %7s\n", "subscribed", "ns/msg", "instr/msg",
	       "events/msg", "filt/msg", "Mmsg/s", "filter_full", "errors");

	feed_subscribe(e, "*", 1);
	bench(e, line, &s, ring, "all (*)", perf_fd);

	/* 100 symbols spread over the activity ranking (the most active included). */
	feed_unsubscribe(e, "*", 1);
	step = flow->symbol_count / SUBSET_SYMBOLS;
	for (uint32_t i = 0; i < SUBSET_SYMBOLS; i++)
		feed_subscribe(e, flow->symbols[i * step].ticker,
			       strcspn(flow->symbols[i * step].ticker, " "));
	bench(e, line, &s, ring, "100 symbols", perf_fd);

	gen_flow_destroy(flow);
	feed_engine_destroy(e);
	free(flow);
	free(e);
	free(ring);
	capture_free(&s.cap);
	return 0;
}
