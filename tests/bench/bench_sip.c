/*
 * Decode + filter speed of the SIP quote feeds, CQS and UQDF: ns/message
 * and instructions/message through feed_process_payload, subscribed to
 * every symbol and to 100 symbols.
 *
 * The streams are generated in memory: the day profile's flow (seed 1,
 * WB_BENCH_MESSAGES order-flow messages, default 2,000,000) on Nasdaq and
 * the four Cboe venues, quoted by gen_cqs (the symbols listed elsewhere
 * than Nasdaq) and gen_uqdf (the Nasdaq-listed ones): every change of a
 * venue's best bid or offer is a quote, with the NBBO news it brings. Only
 * the engine calls and a drain of the ring are timed; best of PASSES.
 *
 * Instructions come from the PMU where the machine has one; on VMs
 * without, `bench_sip --callgrind` runs one pass of each feed so that
 *   valgrind --tool=callgrind --toggle-collect=decode_all build/bench/bench_sip --callgrind
 * counts exactly the decode (the Ir of decode_all over the messages it
 * prints); WB_BENCH_ONLY=cqs-all, cqs-100, uqdf-all or uqdf-100 runs one
 * case alone. Not a test: nothing here fails on a slow result.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "common/gen_flow.h"
#include "common/gen_proto.h"
#include "bench_util.h"
#include "feed/feed.h"

#define DEFAULT_MESSAGES 2000000ull
#define RING_SLOTS 4096u
#define PASSES 5
#define SUBSET_SYMBOLS 100
#define MIDNIGHT_NS 1771477200000000000ull	/* 2026-02-19 00:00 ET */

struct stream {
	uint32_t ip;
	uint16_t port;
	uint8_t *bytes;
	uint64_t *off;
	uint32_t *len;
	uint64_t packets, size, cap, bytes_cap;
};

/* Both encoders write into one sink; the destination tells their streams apart. */
struct streams {
	struct stream s[2];	/* 0 CQS, 1 UQDF */
};

static int collect(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		   const uint8_t *payload, uint32_t len)
{
	struct streams *all = ctx;
	struct stream *s = dst_ip == all->s[0].ip && dst_port == all->s[0].port ? &all->s[0] :
			   &all->s[1];

	(void)ts_ns;
	if (s->packets == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1u << 18;
		s->off = realloc(s->off, s->cap * sizeof(*s->off));
		s->len = realloc(s->len, s->cap * sizeof(*s->len));
		if (!s->off || !s->len)
			return -1;
	}
	if (s->size + len > s->bytes_cap) {
		s->bytes_cap = s->bytes_cap ? s->bytes_cap * 2 : 32u << 20;
		s->bytes = realloc(s->bytes, s->bytes_cap);
		if (!s->bytes)
			return -1;
	}
	memcpy(s->bytes + s->size, payload, len);
	s->off[s->packets] = s->size;
	s->len[s->packets] = len;
	s->size += len;
	s->packets++;
	return 0;
}

static int generate(struct streams *all, uint64_t messages, struct gen_flow *flow)
{
	struct gen_flow_config fcfg = {
		.profile = GEN_PROFILE_DAY, .seed = 1, .messages = messages,
		.venues = 1u << WB_VENUE_NASDAQ | 1u << WB_VENUE_BZX | 1u << WB_VENUE_BYX |
			  1u << WB_VENUE_EDGX | 1u << WB_VENUE_EDGA,
	};
	const struct gen_proto *gp[2] = { gen_proto_get(FEED_PROTO_CQS),
					  gen_proto_get(FEED_PROTO_UQDF) };
	void *enc[2] = { NULL, NULL };
	struct gen_action a;
	uint64_t last = 0;
	int rc = 0;

	if (gen_flow_init(flow, &fcfg))
		return -1;
	for (int i = 0; i < 2; i++) {
		struct gen_encoder_config cfg = {
			.venue = (uint8_t)(FEED_SOURCE_CQS + i), .a_ip = all->s[i].ip,
			.a_port = all->s[i].port, .midnight_ns = MIDNIGHT_NS, .seed = 1,
			.sink = { .packet = collect, .ctx = all },
		};

		memcpy(cfg.session, "BENCHSIP01", 10);
		enc[i] = calloc(1, gp[i]->size);
		if (!enc[i] || gp[i]->init(enc[i], &cfg))
			return -1;
	}
	while (!rc && gen_flow_next(flow, &a) == 1) {
		last = a.ts;
		rc = gp[0]->action(enc[0], flow, &a) | gp[1]->action(enc[1], flow, &a);
	}
	for (int i = 0; i < 2; i++) {
		rc |= gp[i]->finish(enc[i], last + 1000000);
		gp[i]->destroy(enc[i]);
		free(enc[i]);
	}
	return rc;
}

struct result {
	uint64_t ns, instructions, messages, events, filtered, errors;
	bool have_instructions;
};

/* The timed part, a function of its own so callgrind can count it alone. */
__attribute__((noinline)) void decode_all(struct feed_engine *e, int line, const struct stream *s,
					  struct wb_ring_producer *p, struct wb_ring_consumer *c);

void decode_all(struct feed_engine *e, int line, const struct stream *s,
		struct wb_ring_producer *p, struct wb_ring_consumer *c)
{
	for (uint64_t n = 0; n < s->packets; n++) {
		uint64_t avail;

		/* A receive time on the generated day, as a capture's would be. */
		feed_process_payload(e, line, s->bytes + s->off[n], s->len[n], MIDNIGHT_NS + n, p);
		wb_ring_producer_publish(p);
		avail = wb_ring_consumer_available(c);
		if (avail)
			wb_ring_consumer_release(c, avail);
	}
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
	t0 = bench_now_ns();
	decode_all(e, line, s, &p, &c);
	t1 = bench_now_ns();
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &instr, sizeof(instr)) == sizeof(instr)) {
			r.instructions = instr;
			r.have_instructions = true;
		}
	}
	r.ns = t1 - t0;
	r.messages = k->messages - before.messages;
	r.events = k->events - before.events;
	r.filtered = k->filtered - before.filtered;
	for (int i = 0; i < FEED_ERR_COUNT; i++)
		r.errors += k->errors[i] - before.errors[i];
	return r;
}

static void bench(const char *feed, struct feed_engine *e, int line, const struct stream *s,
		  void *ring, const char *subscribed, int perf_fd, int passes)
{
	struct result best = { .ns = UINT64_MAX };
	char instr[32];
	double msgs;

	if (passes > 1)
		run_pass(e, line, s, ring, perf_fd);	/* warm caches and page tables */
	for (int i = 0; i < passes; i++) {
		struct result r = run_pass(e, line, s, ring, perf_fd);

		if (r.ns < best.ns)
			best = r;
	}
	msgs = (double)best.messages;
	if (best.have_instructions)
		snprintf(instr, sizeof(instr), "%.1f", (double)best.instructions / msgs);
	else
		snprintf(instr, sizeof(instr), "n/a");
	printf("%-5s %-12s %10" PRIu64 " %8.2f %10s %10.3f %10.3f %9.1f %7" PRIu64 "\n", feed,
	       subscribed, best.messages, (double)best.ns / msgs, instr, (double)best.events / msgs,
	       (double)best.filtered / msgs, msgs / ((double)best.ns / 1e9) / 1e6, best.errors);
}

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

int main(int argc, char **argv)
{
	const char *env_msgs = getenv("WB_BENCH_MESSAGES"), *only = getenv("WB_BENCH_ONLY");
	bool callgrind = argc > 1 && strcmp(argv[1], "--callgrind") == 0;
	uint64_t messages = env_msgs ? strtoull(env_msgs, NULL, 0) :
			    callgrind ? DEFAULT_MESSAGES / 10 : DEFAULT_MESSAGES;
	struct feed_engine_config cfg = { .alloc = zalloc, .free = free };
	struct feed_engine *e = calloc(1, sizeof(*e));
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct streams all = { .s = { { .ip = 0xe000cb86u, .port = 45007 },	/* feeds.conf's CQS A */
				      { .ip = 0xe92eb010u, .port = 55630 } } }; /* and UQDF A */
	static const int protocols[2] = { FEED_PROTO_CQS, FEED_PROTO_UQDF };
	static const char *const names[2] = { "cqs", "uqdf" };
	void *ring = NULL;
	int perf_fd, line[2], passes = callgrind ? 1 : PASSES;

	if (argc > 1 && !callgrind) {
		printf("usage: bench_sip [--callgrind]\n\nCQS and UQDF decode+filter ns/message, all "
		       "symbols and 100 symbols subscribed.\nWB_BENCH_MESSAGES=N sizes the generated "
		       "day's order flow (default %llu).\n--callgrind: one pass each, for valgrind "
		       "--tool=callgrind --toggle-collect=decode_all.\n", DEFAULT_MESSAGES);
		return strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? 0 : 2;
	}
	if (!e || !flow || generate(&all, messages, flow)) {
		fprintf(stderr, "bench_sip: cannot generate the streams\n");
		return 1;
	}
	if (feed_engine_init(e, &cfg) || posix_memalign(&ring, WB_RING_PAGE, wb_ring_bytes(RING_SLOTS)))
		return 1;
	for (int i = 0; i < 2; i++) {
		line[i] = feed_map_add(e, all.s[i].ip, all.s[i].port, protocols[i],
				       FEED_SOURCE_CQS + i, "A");
		if (line[i] < 0)
			return 1;
	}
	perf_fd = callgrind ? -1 : bench_instructions_open();
	printf("bench_sip: generated day of %" PRIu64 " order-flow messages on 5 venues, %u symbols: "
	       "CQS %" PRIu64 " blocks, UQDF %" PRIu64 " packets; best of %d passes\n",
	       flow->stats.flow_messages, flow->symbol_count, all.s[0].packets, all.s[1].packets,
	       passes);
	if (perf_fd < 0 && !callgrind)
		printf("bench_sip: instructions: n/a (perf_event_open: %s); see --callgrind\n",
		       strerror(errno));
	printf("%-5s %-12s %10s %8s %10s %10s %10s %9s %7s\n", "feed", "subscribed", "messages",
	       "ns/msg", "instr/msg", "events/msg", "filt/msg", "Mmsg/s", "errors");
	for (int i = 0; i < 2; i++) {
		char case_all[16], case_100[16];

		snprintf(case_all, sizeof(case_all), "%s-all", names[i]);
		snprintf(case_100, sizeof(case_100), "%s-100", names[i]);
		feed_subscribe(e, "*", 1);
		if (!only || !strcmp(only, case_all))
			bench(names[i], e, line[i], &all.s[i], ring, "all (*)", perf_fd, passes);
		feed_unsubscribe(e, "*", 1);
		for (uint32_t k = 0, step = flow->symbol_count / SUBSET_SYMBOLS; k < SUBSET_SYMBOLS; k++)
			feed_subscribe(e, flow->symbols[k * step].ticker,
				       strcspn(flow->symbols[k * step].ticker, " "));
		if (!only || !strcmp(only, case_100))
			bench(names[i], e, line[i], &all.s[i], ring, "100 symbols", perf_fd, passes);
		for (uint32_t k = 0, step = flow->symbol_count / SUBSET_SYMBOLS; k < SUBSET_SYMBOLS; k++)
			feed_unsubscribe(e, flow->symbols[k * step].ticker,
					 strcspn(flow->symbols[k * step].ticker, " "));
	}
	gen_flow_destroy(flow);
	feed_engine_destroy(e);
	free(flow);
	free(e);
	free(ring);
	for (int i = 0; i < 2; i++) {
		free(all.s[i].bytes);
		free(all.s[i].off);
		free(all.s[i].len);
	}
	return 0;
}
