/*
 * bench_xdp: the NYSE Integrated Feed (XDP) next to ITCH on the same
 * generated day. One order flow (gen_flow, day profile, seed 1,
 * WB_BENCH_MESSAGES order messages, default 6,000,000) is encoded twice,
 * each time all on one venue by its protocol's own generator (gen_proto):
 * Nasdaq over ITCH 5.0/MoldUDP64 (one stream), NYSE over XDP on one
 * channel (the same packing as ITCH's) and on four channels (as XDP
 * publishes a market: each channel packs only its own symbols' messages and
 * sends its own heartbeats, so the day has more, smaller packets). The
 * packets are kept in memory; then, for each day:
 *
 *   decode + filter: feed_process_payload over the whole day, subscribed to
 *     every symbol and to 100 symbols spread over the activity ranking:
 *     ns and instructions (perf_event_open; n/a without a PMU) per source
 *     message and per order-flow message (the same flow for both), best of
 *     WB_BENCH_PASSES (default 5) on this shared machine;
 *   pipeline: the day decoded into one ring, then both builder threads
 *     (venue books, Super-Book, shared memory) timed on it, as
 *     bench_pipeline does for ITCH: messages/s.
 *
 * Only the engine calls and a drain of the ring are timed. Not a test:
 * nothing fails on a slow result. WB_BENCH_ONLY=itch, xdp/1 or xdp/4 runs
 * one day, e.g. under callgrind for deterministic instruction counts (a
 * binary built without -march=native: make O=build/cg OPT="-O2 -g"):
 *   WB_BENCH_ONLY=xdp/4 WB_BENCH_PASSES=1 valgrind --tool=callgrind \
 *       --toggle-collect=feed_process_payload build/cg/bench/bench_xdp
 * counts 5 decodes of the day (2 per subscription, 1 for the pipeline).
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "gen/gen_flow.h"
#include "gen/gen_proto.h"
#include "bench_util.h"
#include "feed/feed.h"
#include "wirebook/ring.h"

#define DAY_MESSAGES 6000000ull
#define DEFAULT_PASSES 5
#define RING_SLOTS 4096u
#define PIPELINE_RING_SLOTS (1u << 24)
#define SUBSET_SYMBOLS 100
#define XDP_CHANNELS 4		/* the most a day here is spread over */
#define NDAYS 3
#define MIDNIGHT_NS (1771477200ull * 1000000000ull)

static int passes = DEFAULT_PASSES;

/* One protocol's day: every payload in memory, with the line it goes to. */
struct day {
	const char *name;
	int protocol;
	uint8_t venue;
	int channels;
	struct feed_engine engine;
	struct feed_map_entry map[XDP_CHANNELS];
	int nmap;
	uint8_t *bytes;
	uint64_t *off;
	uint32_t *len;
	uint8_t *line;
	uint64_t *ts;		/* receive time: the sink's (wire) time */
	uint64_t packets, size, cap, bytes_cap;
	uint64_t messages;	/* source messages the engine decodes (from a first pass) */
	uint64_t flow_messages;	/* order-flow messages of the day */
};

static int collect(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		   const uint8_t *payload, uint32_t len)
{
	struct day *d = ctx;
	int line = feed_map_lookup(&d->engine, dst_ip, dst_port);

	if (line < 0)
		return -1;
	if (d->packets == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 1u << 20;
		d->off = realloc(d->off, d->cap * sizeof(*d->off));
		d->len = realloc(d->len, d->cap * sizeof(*d->len));
		d->line = realloc(d->line, d->cap);
		d->ts = realloc(d->ts, d->cap * sizeof(*d->ts));
		if (!d->off || !d->len || !d->line || !d->ts)
			return -1;
	}
	if (d->size + len > d->bytes_cap) {
		d->bytes_cap = d->bytes_cap ? d->bytes_cap * 2 : 64u << 20;
		d->bytes = realloc(d->bytes, d->bytes_cap);
		if (!d->bytes)
			return -1;
	}
	memcpy(d->bytes + d->size, payload, len);
	d->off[d->packets] = d->size;
	d->len[d->packets] = len;
	d->line[d->packets] = (uint8_t)line;
	d->ts[d->packets] = ts_ns;
	d->size += len;
	d->packets++;
	return 0;
}

/* The feed map of the day (ITCH: one line; XDP: a line per channel), then the day. */
static int generate(struct day *d, uint64_t messages)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DAY, .seed = 1, .messages = messages,
					.venues = 1u << d->venue };
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	const struct gen_proto *gp = gen_proto_get(d->protocol);
	struct gen_encoder_config cfg = {
		.venue = d->venue, .midnight_ns = MIDNIGHT_NS, .seed = 1,
		.sink = { .packet = collect, .ctx = d },
	};
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	void *enc = gp ? calloc(1, gp->size) : NULL;
	struct gen_action a;
	uint64_t last = 0;
	int rc = 0;

	if (!flow || !enc || feed_engine_init(&d->engine, &ecfg))
		return -1;
	d->nmap = d->channels;
	for (int i = 0; i < d->nmap; i++) {
		struct feed_map_entry *m = &d->map[i];

		m->ip = 0xef0a0001u + (uint32_t)i;	/* 239.10.0.1, ... */
		m->port = (uint16_t)(20001 + i);
		m->channel = d->protocol == FEED_PROTO_XDP ? (uint16_t)(i + 1) : 0;
		m->protocol = (uint8_t)d->protocol;
		m->venue = d->venue;
		strcpy(m->name, "A");
		if (feed_map_add_entry(&d->engine, m) < 0)
			return -1;
	}
	cfg.a_ip = d->map[0].ip;
	cfg.a_port = d->map[0].port;
	cfg.map = d->map;
	cfg.map_len = d->nmap;
	memcpy(cfg.session, "BENCHXDP01", 10);
	if (gen_flow_init(flow, &fcfg) || gp->init(enc, &cfg))
		return -1;
	while (!rc && gen_flow_next(flow, &a) == 1) {
		last = a.ts;
		rc = gp->action(enc, flow, &a);
	}
	rc |= gp->finish(enc, last + 1000000);
	d->flow_messages = flow->stats.flow_messages;
	gp->destroy(enc);
	free(enc);
	gen_flow_destroy(flow);
	free(flow);
	return rc;
}

struct result {
	uint64_t ns, instructions, events, messages;
	bool have_instructions;
};

static uint64_t line_sum(const struct day *d, size_t field)
{
	uint64_t n = 0;

	for (int i = 0; i < d->nmap; i++)
		n += *(const uint64_t *)((const char *)&d->engine.lines[i].counters + field);
	return n;
}

static void drain(struct wb_ring_producer *p, struct wb_ring_consumer *c)
{
	uint64_t n;

	wb_ring_producer_publish_no_wakeup(p);
	n = wb_ring_consumer_available(c);
	if (n)
		wb_ring_consumer_release(c, n);
}

static struct result decode_pass(struct day *d, void *ring, int perf_fd)
{
	struct feed_engine *e = &d->engine;
	struct wb_ring_producer p;
	struct wb_ring_consumer c;
	struct result r = { 0 };
	uint64_t t0, events0 = line_sum(d, offsetof(struct feed_counters, events));
	uint64_t msgs0 = line_sum(d, offsetof(struct feed_counters, messages)), instr = 0;

	feed_engine_reset_state(e);
	memset(ring, 0, wb_ring_bytes(RING_SLOTS));
	wb_ring_format(ring, RING_SLOTS, 1);
	wb_ring_producer_init(&p, ring);
	wb_ring_consumer_init(&c, ring);
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	t0 = test_monotonic_ns();
	for (uint64_t i = 0; i < d->packets; i++) {
		feed_process_payload(e, d->line[i], d->bytes + d->off[i], d->len[i], d->ts[i], &p);
		drain(&p, &c);
	}
	r.ns = test_monotonic_ns() - t0;
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &instr, sizeof(instr)) == sizeof(instr)) {
			r.instructions = instr;
			r.have_instructions = true;
		}
	}
	r.events = line_sum(d, offsetof(struct feed_counters, events)) - events0;
	r.messages = line_sum(d, offsetof(struct feed_counters, messages)) - msgs0;
	return r;
}

static void bench_decode(struct day *d, void *ring, const char *subscribed, int perf_fd)
{
	struct result best = { .ns = UINT64_MAX };
	char instr[32];

	decode_pass(d, ring, perf_fd);		/* warm caches and page tables */
	for (int i = 0; i < passes; i++) {
		struct result r = decode_pass(d, ring, perf_fd);

		if (r.ns < best.ns)
			best = r;
	}
	d->messages = best.messages;
	if (best.have_instructions)
		snprintf(instr, sizeof(instr), "%.1f", (double)best.instructions / (double)best.messages);
	else
		snprintf(instr, sizeof(instr), "n/a");
	printf("%-6s %-12s %10" PRIu64 " %8.2f %10s %12.2f %10.3f %9.1f\n", d->name, subscribed,
	       best.messages, (double)best.ns / (double)best.messages, instr,
	       (double)best.ns / (double)d->flow_messages, (double)best.events / (double)best.messages,
	       (double)best.messages / ((double)best.ns / 1e9) / 1e6);
}

static int pump_done(void *ctx)
{
	(void)ctx;
	return BUILDER_PUMP_EOF;	/* the ring holds the whole day already */
}

/* The whole day into one ring, then both builder threads on it: messages/s. */
static void bench_pipeline(struct day *d, void *ring)
{
	struct builder_config bcfg;
	struct wb_ring_producer p;
	struct builder_counters bc;
	struct builder *b;
	uint64_t t0, t1, events;
	char shm[64];
	int err;

	feed_engine_reset_state(&d->engine);
	memset(ring, 0, WB_RING_SLOTS_OFFSET);	/* slots fault in as the decoder fills them */
	wb_ring_format(ring, PIPELINE_RING_SLOTS, 1);
	wb_ring_producer_init(&p, ring);
	for (uint64_t i = 0; i < d->packets; i++)
		feed_process_payload(&d->engine, d->line[i], d->bytes + d->off[i], d->len[i],
				     d->ts[i], &p);
	wb_ring_producer_publish(&p);
	events = p.head;
	if (p.dropped) {
		printf("%-6s pipeline: the day does not fit the ring\n", d->name);
		return;
	}
	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.numa_node = -1;
	bcfg.cpus[0] = bcfg.cpus[1] = -1;
	bcfg.pin = 1;
	bcfg.books.expected_orders = 1u << 21;
	snprintf(shm, sizeof(shm), "wb-bench-xdp-%d", (int)getpid());
	bcfg.shm.shm_name = shm;
	b = builder_create(&bcfg, &err);
	if (!b) {
		printf("%-6s pipeline: builder_create: %d\n", d->name, err);
		return;
	}
	t0 = test_monotonic_ns();
	if (builder_start(b, ring, pump_done, NULL) < 0) {
		builder_destroy(b);
		return;
	}
	while (!builder_done(b)) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	t1 = test_monotonic_ns();
	builder_stop(b);
	builder_get_counters(b, &bc);
	printf("%-6s pipeline: %" PRIu64 " messages, %" PRIu64 " events in %.3f s: %.2f M messages/s, "
	       "%.2f M events/s (CPU: thread 1 %.1f, thread 2 %.1f ns/event)\n", d->name,
	       d->messages, events, (double)(t1 - t0) / 1e9,
	       (double)d->messages / ((double)(t1 - t0) / 1e9) / 1e6,
	       (double)events / ((double)(t1 - t0) / 1e9) / 1e6,
	       (double)bc.cpu_ns[0] / (double)events, (double)bc.cpu_ns[1] / (double)events);
	builder_destroy(b);
}

static void subscribe_subset(struct feed_engine *e)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DAY, .seed = 1, .messages = 1 };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	uint32_t step;

	if (!flow || gen_flow_init(flow, &fcfg))
		exit(1);
	step = flow->symbol_count / SUBSET_SYMBOLS;
	for (uint32_t i = 0; i < SUBSET_SYMBOLS; i++)
		feed_subscribe(e, flow->symbols[i * step].ticker,
			       strcspn(flow->symbols[i * step].ticker, " "));
	gen_flow_destroy(flow);
	free(flow);
}

int main(void)
{
	const char *env_msgs = getenv("WB_BENCH_MESSAGES");
	const char *only = getenv("WB_BENCH_ONLY");
	uint64_t messages = env_msgs ? strtoull(env_msgs, NULL, 0) : DAY_MESSAGES;
	static struct day days[NDAYS] = {
		{ .name = "itch", .protocol = FEED_PROTO_ITCH50, .venue = WB_VENUE_NASDAQ, .channels = 1 },
		{ .name = "xdp/1", .protocol = FEED_PROTO_XDP, .venue = WB_VENUE_NYSE, .channels = 1 },
		{ .name = "xdp/4", .protocol = FEED_PROTO_XDP, .venue = WB_VENUE_NYSE,
		  .channels = XDP_CHANNELS },
	};
	bool run[NDAYS];
	void *ring = NULL, *big = NULL;
	uint64_t flow_messages = 0;
	int perf_fd;

	if (getenv("WB_BENCH_PASSES") && atoi(getenv("WB_BENCH_PASSES")) > 0)
		passes = atoi(getenv("WB_BENCH_PASSES"));
	for (int i = 0; i < NDAYS; i++) {
		run[i] = !only || strncmp(days[i].name, only, strlen(only)) == 0;
		if (run[i] && generate(&days[i], messages)) {
			fprintf(stderr, "bench_xdp: cannot generate the %s day\n", days[i].name);
			return 1;
		}
		if (run[i])
			flow_messages = days[i].flow_messages;
	}
	if (posix_memalign(&ring, WB_RING_PAGE, wb_ring_bytes(RING_SLOTS)))
		return 1;
	perf_fd = bench_instructions_open();
	printf("bench_xdp: one day (%" PRIu64 " order-flow messages, day profile, seed 1) as Nasdaq "
	       "ITCH and as NYSE XDP on 1 and on %d channels, best of %d passes\n", flow_messages,
	       XDP_CHANNELS, passes);
	for (int i = 0; i < NDAYS; i++)
		if (run[i])
			printf("  %-6s %8" PRIu64 " packets, %.1f MB\n", days[i].name, days[i].packets,
			       (double)days[i].size / 1e6);
	if (perf_fd < 0)
		printf("bench_xdp: instructions: n/a (perf_event_open: %s)\n", strerror(errno));
	printf("%-6s %-12s %10s %8s %10s %12s %10s %9s\n", "day", "subscribed", "messages",
	       "ns/msg", "instr/msg", "ns/flow-msg", "events/msg", "Mmsg/s");
	for (int i = 0; i < NDAYS; i++) {
		if (!run[i])
			continue;
		feed_subscribe(&days[i].engine, "*", 1);
		bench_decode(&days[i], ring, "all (*)", perf_fd);
	}
	for (int i = 0; i < NDAYS; i++) {
		if (!run[i])
			continue;
		feed_unsubscribe(&days[i].engine, "*", 1);
		subscribe_subset(&days[i].engine);
		bench_decode(&days[i], ring, "100 symbols", perf_fd);
		feed_subscribe(&days[i].engine, "*", 1);
	}
	if (posix_memalign(&big, WB_RING_PAGE, wb_ring_bytes(PIPELINE_RING_SLOTS)))
		return 1;
	for (int i = 0; i < NDAYS; i++)
		if (run[i])
			bench_pipeline(&days[i], big);
	for (int i = 0; i < NDAYS; i++)
		if (run[i])
			feed_engine_destroy(&days[i].engine);
	free(big);
	free(ring);
	return 0;
}
