/*
 * bench_file: decode and book building on any day file, row by row.
 *
 *   bench_file [options] FILE          a pcap (through feeds.conf) or a Nasdaq
 *                                      BinaryFILE, plain or gzip
 *   bench_file [options] --generate N  a generated ITCH day of N order messages
 *
 * The input is loaded whole into memory first (tools/input/capture.h);
 * then each row replays it from the start through a fresh feed engine:
 *
 *   decode only                         the feed engine into an event ring
 *   decode + venue books                ... and builder thread 1's venue books
 *   decode + venue books + Super-Book   ... and thread 2's Super-Book, on one thread
 *                                       (each batch's updates applied after it,
 *                                       with thread 2's look-ahead)
 *   pipeline                            the two-thread builder (decoding on
 *                                       thread 1, as wirebookd --path pipeline)
 *   run to completion                   the one-thread builder: a packet read,
 *                                       decoded, built and published before the
 *                                       next (wirebookd --path rtc)
 *
 * Both builder rows warm the builder first, as wirebookd does before it
 * starts it (builder_warm; not timed).
 *
 * Each row is one line: its name, then `N ns/msg` (per source message;
 * single-thread rows in thread CPU time, best of --runs, since the machine
 * may be shared; the builder rows in wall time), the target, messages/s, the
 * peak RSS during the row (the in-memory input included; its size is on
 * the first line), the live orders at the end, and checksums: of the event
 * stream for decode only, of the venue books (venue_books_checksum) and of
 * the published Super-Book (superbook_checksum) for the others, and for
 * decode + venue books also of every update the books emitted on the way
 * (event-for-event equality, not only equal final books). Equal
 * checksums mean equal books, so two runs, two rows or two builds compare
 * for equality. A benchmark, never a test: nothing fails on a slow figure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/order_detail.h"
#include "book/checksum.h"
#include "book/superbook.h"
#include "book/venue_book.h"
#include "input/capture.h"
#include "common/feeds_conf.h"
#include "common/shm_mount.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "feed/feed.h"
#include "wirebook/ring.h"
#include "../unit/test_util.h"

#define ITCH_IP 0xe9360c6fu	/* 233.54.12.111:26477, feeds.conf's nasdaq A */
#define ITCH_PORT 26477
#define MAX_FEEDS 64
#define RING_SLOTS (1u << 16)
/* Packets decoded before their events are applied: wirebookd's pump budget
 * (the pipeline's; run to completion reads one packet at a time). */
#define PUMP_PACKETS 32u
#define RTC_PUMP_PACKETS 1u
#define ROW_NAME_WIDTH 36

enum row { ROW_DECODE, ROW_BOOKS, ROW_SUPERBOOK, ROW_PIPELINE, ROW_RTC, ROWS };

static const char *const row_names[ROWS] = {
	"decode only",
	"decode + venue books",
	"decode + venue books + Super-Book",
	"pipeline",
	"run to completion",
};
static const char *const row_keys[ROWS] = { "decode", "books", "superbook", "pipeline", "rtc" };
/* The targets, per source message (the whole path's for both builders). */
static const double row_target_ns[ROWS] = { 5, 55, 100, 100, 100 };

struct opts {
	const char *feeds;
	unsigned runs;
	unsigned rows;		/* bit per enum row */
	uint32_t expected_orders;
	uint64_t generate;	/* messages; 0: read FILE */
	uint32_t symbols;
	uint64_t seed;
	const char *order_detail;	/* NULL: none; "all"; N: instruments 1..N */
};

struct bench {
	struct opts o;
	struct capture cap;
	struct feed_map_entry feeds[MAX_FEEDS];
	int nfeeds;
	void *ring;
	struct feed_engine *engine;
	struct wb_ring_producer prod;
	struct wb_ring_consumer cons;
	int line;		/* payload captures: the ITCH line */
	uint64_t next_packet;	/* builder pump position */
	uint64_t pump_packets;	/* packets per pump */
	uint64_t shm_serial;
};

struct row_result {
	uint64_t cpu_ns, wall_ns;
	uint64_t messages, events;
	uint64_t live_orders;
	uint64_t books_sum, super_sum, events_sum;
	uint64_t updates_sum;	/* every update the venue books emitted, in order */
	uint64_t peak_rss;
	uint64_t thread_cpu_ns[2];	/* pipeline: CPU time of builder thread 1 and 2 */
	uint64_t superbook_cpu_ns;	/* Super-Book row: the Super-Book's part of cpu_ns */
	int have_books, have_super;
};

/* Peak RSS since the last reset_peak_rss(), bytes (VmHWM). */
static uint64_t peak_rss(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static void reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);	/* 5: reset the peak RSS to the current RSS */
		fclose(f);
	}
}

/* ---- the input ------------------------------------------------------------ */

static int gen_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		    uint32_t len)
{
	(void)ip;
	(void)port;
	return capture_add(ctx, payload, len, ts);
}

static int generate(struct bench *b)
{
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DAY, .seed = b->o.seed,
				      .messages = b->o.generate, .symbols = b->o.symbols };
	struct gen_itch_config ic;
	struct gen_itch *gi = calloc(1, sizeof(*gi));
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_action a;
	int rc = -1;

	capture_init(&b->cap, CAPTURE_PAYLOADS, "generated");
	if (!gi || !flow || gen_flow_init(flow, &fc) < 0)
		goto out;
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "BENCHFILE1", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.midnight_ns = 1771477200ull * 1000000000ull;
	ic.sink.packet = gen_sink;
	ic.sink.ctx = &b->cap;
	gen_itch_init(gi, &ic);
	while (gen_flow_next(flow, &a) == 1)
		if (gen_itch_action(gi, flow, &a) < 0)
			goto out_flow;
	if (gen_itch_finish(gi, flow->ts) < 0)
		goto out_flow;
	printf("generated day: %" PRIu64 " order messages, %u symbols, seed %" PRIu64
	       ", peak live orders %" PRIu64 "\n",
	       b->o.generate, flow->symbol_count, b->o.seed, flow->stats.peak_live);
	rc = 0;
out_flow:
	gen_flow_destroy(flow);
out:
	free(gi);
	free(flow);
	return rc;
}

/* A fresh engine: the feed map, '*' subscribed, no sequence state. */
static int engine_fresh(struct bench *b)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };

	if (b->engine) {
		feed_engine_destroy(b->engine);
		free(b->engine);
	}
	b->engine = calloc(1, sizeof(*b->engine));
	if (!b->engine || feed_engine_init(b->engine, &ecfg) < 0)
		return -1;
	b->line = -1;
	for (int i = 0; i < b->nfeeds; i++) {
		const struct feed_map_entry *f = &b->feeds[i];
		int line = feed_map_add_entry(b->engine, f);

		if (line < 0)
			return -1;
		if (b->line < 0 && f->protocol == FEED_PROTO_ITCH50 && f->venue == WB_VENUE_NASDAQ)
			b->line = line;
	}
	if (b->line < 0) {
		b->line = feed_map_add(b->engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
		if (b->line < 0)
			return -1;
	}
	return feed_subscribe(b->engine, "*", 1) < 0 ? -1 : 0;
}

/* Source messages decoded so far, every line. */
static uint64_t engine_messages(const struct feed_engine *e)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < e->line_count; i++)
		n += e->lines[i].counters.messages;
	return n;
}

static void ring_fresh(struct bench *b)
{
	memset(b->ring, 0, WB_RING_SLOTS_OFFSET);
	wb_ring_format(b->ring, RING_SLOTS, 1);
	wb_ring_producer_init(&b->prod, b->ring);
	wb_ring_consumer_init(&b->cons, b->ring);
}

/* ---- single-thread rows --------------------------------------------------- */

static uint64_t hash_words(uint64_t h, const void *p, size_t bytes)
{
	const uint64_t *w = p;

	for (size_t k = 0; k < bytes / 8; k++)
		h = book_checksum_mix(h, w[k]);
	return h;
}

/*
 * What builder thread 1 hands thread 2, here: the Super-Book's updates
 * (applied after the batch, as thread 2 drains its queue), a checksum, or
 * nothing.
 */
struct emit_ctx {
	struct superbook *sb;
	struct book_update *queued;	/* with sb: the batch's updates */
	uint64_t n_queued;
	uint64_t *update_hash;	/* NULL, or a checksum of every update, in order */
	uint64_t *tickers;	/* without sb: [65536] instrument -> ticker, for the checksum */
	struct order_detail *od;	/* --order-detail */
	const struct venue_books *vb;
	const struct wb_ring_consumer *ring;	/* the batch's events, for the detail's look-ahead */
	uint64_t next, n;
};

/* Updates of one ring batch (RING_SLOTS events at most). */
static struct book_update *batch_updates;

/* The books write each event's updates where the last call said: with
 * sb after the batch's updates so far, else over the last event's. */
static struct book_update *emit_updates(void *arg, const struct wb_event *ev, struct book_update *u, unsigned k)
{
	struct emit_ctx *c = arg;

	if (c->od) {
		uint64_t i = c->next++;

		/* As builder thread 1 does (t1_emit). */
		order_detail_lookahead(c->od, i + ORDER_DETAIL_PREFETCH_AHEAD < c->n ?
					      wb_ring_consumer_at(c->ring, i + ORDER_DETAIL_PREFETCH_AHEAD) : NULL);
		order_detail_event(c->od, c->vb, ev, u, k);
	}
	if (c->update_hash)
		*c->update_hash = hash_words(*c->update_hash, u, k * sizeof(*u));
	if (c->sb) {
		c->n_queued += k;
		return u + k;
	}
	if (c->tickers)
		for (unsigned j = 0; j < k; j++)
			if (u[j].kind == BOOK_UP_SYMBOL)
				memcpy(&c->tickers[u[j].instrument], u[j].u.ticker, 8);
	return u;
}

/*
 * Builder thread 1's apply of a ring batch, and thread 2's if sb (its
 * apply and publish, whose CPU time is added to *sb_cpu_ns: thread 2's
 * share of the row, measured inside it rather than as a difference of
 * two noisy rows).
 */
static void apply_events(struct venue_books *vb, struct superbook *sb, struct order_detail *od,
			 struct wb_ring_consumer *c, uint64_t n, uint64_t *update_hash, uint64_t *tickers,
			 uint64_t *sb_cpu_ns)
{
	struct emit_ctx ctx = { .sb = sb, .queued = batch_updates, .update_hash = update_hash,
				.tickers = tickers, .od = od, .vb = vb, .ring = c, .n = n };
	uint64_t t0;

	venue_books_apply_batch(vb, c->slots, c->mask, c->tail, n, n, batch_updates, emit_updates, &ctx);
	if (!sb)
		return;
	t0 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	superbook_apply_run(sb, ctx.queued, ctx.n_queued);
	superbook_publish(sb);
	*sb_cpu_ns += test_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static uint64_t hash_events(uint64_t h, const struct wb_ring_consumer *c, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct wb_event ev = *wb_ring_consumer_at(c, i);

		ev.recv_ts = 0;	/* the replay's clock, not the feed's data */
		h = hash_words(h, &ev, sizeof(ev));
	}
	return h;
}

static char *shm_name(struct bench *b, char *buf, size_t len)
{
	snprintf(buf, len, "wb-bench-file-%d-%" PRIu64, (int)getpid(), b->shm_serial++);
	return buf;
}

/* The order detail of --order-detail: every symbol, or instruments 1..N. */
static struct order_detail *detail_create(struct bench *b, const struct venue_books *vb, const char *name)
{
	struct order_detail_config dc = {
		.shm_name = name, .order_slots = b->o.expected_orders, .all = !strcmp(b->o.order_detail, "all"),
	};
	struct order_detail *od;
	int err;

	od = order_detail_create(&dc, &err);
	if (!od) {
		fprintf(stderr, "bench_file: order_detail_create: %s\n", strerror(-err));
		return NULL;
	}
	if (!dc.all)
		for (uint32_t i = 1, n = (uint32_t)strtoul(b->o.order_detail, NULL, 0); i <= n; i++)
			order_detail_set(od, vb, (uint16_t)i, 1);
	return od;
}

static int run_single(struct bench *b, enum row row, int hash, struct row_result *r)
{
	struct venue_books_config vc = { .expected_orders = b->o.expected_orders, .numa_node = -1 };
	struct superbook_config sc = { .numa_node = -1 };
	struct venue_books *vb = NULL;
	struct superbook *sb = NULL;
	struct order_detail *od = NULL;
	/* The books' checksum hashes instruments by ticker: without a
	 * Super-Book (the books row), the SYMBOL updates give them. */
	static uint64_t tickers[UINT16_MAX + 1];
	struct book_tickers t = { .key = tickers, .count = UINT16_MAX + 1 };
	uint64_t c0, w0, events = 0, h = BOOK_CHECKSUM_SEED;
	char name[64];
	int err;

	memset(r, 0, sizeof(*r));
	if (engine_fresh(b) < 0) {
		fprintf(stderr, "bench_file: feed engine setup failed\n");
		return -1;
	}
	ring_fresh(b);
	if (row >= ROW_BOOKS && !(vb = venue_books_create(&vc))) {
		fprintf(stderr, "bench_file: venue_books_create: %s\n", strerror(errno));
		return -1;
	}
	if (row >= ROW_SUPERBOOK) {
		sc.shm_name = shm_name(b, name, sizeof(name));
		sb = superbook_create(&sc, &err);
		if (!sb) {
			fprintf(stderr, "bench_file: superbook_create: %d\n", err);
			venue_books_destroy(vb);
			return -1;
		}
	}
	if (vb && b->o.order_detail && !(od = detail_create(b, vb, shm_name(b, name, sizeof(name))))) {
		superbook_destroy(sb);
		venue_books_destroy(vb);
		return -1;
	}
	memset(tickers, 0, sizeof(tickers));
	c0 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = test_clock_ns(CLOCK_MONOTONIC);
	for (uint64_t p = 0; p < b->cap.count; p += PUMP_PACKETS) {
		uint64_t n;

		capture_replay(&b->cap, p, p + PUMP_PACKETS, b->line, b->engine, &b->prod);
		wb_ring_producer_publish_no_wakeup(&b->prod);
		n = wb_ring_consumer_available(&b->cons);
		if (hash && !vb)
			h = hash_events(h, &b->cons, n);
		if (vb)
			apply_events(vb, sb, od, &b->cons, n, hash ? &h : NULL, tickers, &r->superbook_cpu_ns);
		wb_ring_consumer_release(&b->cons, n);
		events += n;
	}
	r->cpu_ns = test_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	r->wall_ns = test_clock_ns(CLOCK_MONOTONIC) - w0;
	r->messages = engine_messages(b->engine);
	r->events = events;
	r->events_sum = r->updates_sum = h;
	if (b->prod.dropped)
		fprintf(stderr, "bench_file: %" PRIu64 " events dropped: a pump overran the ring\n",
			b->prod.dropped);
	if (vb) {
		r->have_books = 1;
		if (sb)
			t = superbook_tickers(sb);
		r->books_sum = venue_books_checksum(vb, &t);
		r->live_orders = venue_books_counters(vb)->live_orders;
	}
	if (sb) {
		r->have_super = 1;
		r->super_sum = superbook_checksum(sb);
	}
	order_detail_destroy(od);
	superbook_destroy(sb);
	venue_books_destroy(vb);
	return 0;
}

/* ---- the pipeline --------------------------------------------------------- */

static int pump_capture(void *ctx)
{
	struct bench *b = ctx;

	if (b->next_packet >= b->cap.count)
		return BUILDER_PUMP_EOF;
	capture_replay(&b->cap, b->next_packet, b->next_packet + b->pump_packets, b->line, b->engine,
		       &b->prod);
	b->next_packet += b->pump_packets;
	wb_ring_producer_publish_no_wakeup(&b->prod);
	return BUILDER_PUMP_MORE;
}

/* The builder on the capture: the pipeline, or run to completion (rtc). */
static int run_builder(struct bench *b, int rtc, struct row_result *r)
{
	struct builder_config bc;
	struct builder_warm_report warm;
	struct builder_counters ctr;
	struct book_tickers t;
	struct builder *bld;
	uint64_t w0;
	char name[64];
	int err;

	memset(r, 0, sizeof(*r));
	if (engine_fresh(b) < 0)
		return -1;
	ring_fresh(b);
	b->next_packet = 0;
	b->pump_packets = rtc ? RTC_PUMP_PACKETS : PUMP_PACKETS;
	memset(&bc, 0, sizeof(bc));
	bc.path = rtc ? BUILDER_PATH_RTC : BUILDER_PATH_PIPELINE;
	bc.numa_node = -1;
	bc.cpus[0] = bc.cpus[1] = -1;
	bc.pin = 1;
	/* As wirebookd runs by default: a thread waiting on the other spins a
	 * while, then sleeps (busy polling both threads measured 30x
	 * slower on a shared 2-core machine: a spinner holds the core its
	 * peer needs). */
	bc.busy_poll = 0;
	bc.books.expected_orders = b->o.expected_orders;
	bc.shm.shm_name = shm_name(b, name, sizeof(name));
	if (b->o.order_detail) {
		bc.order_detail = strcmp(b->o.order_detail, "all") ? "none" : "all";
		bc.order_detail_slots = b->o.expected_orders;
	}
	bld = builder_create(&bc, &err);
	if (!bld) {
		fprintf(stderr, "bench_file: builder_create: %d\n", err);
		return -1;
	}
	if (b->o.order_detail && strcmp(b->o.order_detail, "all"))
		for (uint32_t i = 1, n = (uint32_t)strtoul(b->o.order_detail, NULL, 0); i <= n; i++)
			order_detail_set(builder_order_detail(bld), builder_venue_books(bld), (uint16_t)i, 1);
	builder_warm(bld, 0, &warm);
	w0 = test_clock_ns(CLOCK_MONOTONIC);
	if (builder_start(bld, b->ring, pump_capture, b) < 0) {
		builder_destroy(bld);
		return -1;
	}
	while (!builder_done(bld)) {
		/* A millisecond: waking more often takes a core from the two
		 * threads being measured (2 cores here), and the wall clock
		 * is read to within it on a run of about a second. */
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	r->wall_ns = test_clock_ns(CLOCK_MONOTONIC) - w0;
	builder_stop(bld);
	builder_get_counters(bld, &ctr);
	r->cpu_ns = r->wall_ns;
	r->thread_cpu_ns[0] = ctr.cpu_ns[0];
	r->thread_cpu_ns[1] = ctr.cpu_ns[1];
	r->messages = engine_messages(b->engine);
	r->events = ctr.events;
	r->have_books = r->have_super = 1;
	t = superbook_tickers(builder_superbook(bld));
	r->books_sum = venue_books_checksum(builder_venue_books(bld), &t);
	r->super_sum = superbook_checksum(builder_superbook(bld));
	r->live_orders = builder_venue_counters(bld)->live_orders;
	if (ctr.ring_dropped)
		fprintf(stderr, "bench_file: %s: %" PRIu64 " events dropped\n", rtc ? "rtc" : "pipeline",
			ctr.ring_dropped);
	builder_destroy(bld);
	return 0;
}

/* ---- rows ------------------------------------------------------------------ */

static void print_row(enum row row, const struct row_result *r, unsigned runs)
{
	double ns = (double)r->cpu_ns / (double)(r->messages ? r->messages : 1);

	printf("%-*s %7.1f ns/msg (target <= %.0f)  %6.2f M msg/s  peak RSS %5.0f MiB  live orders ",
	       ROW_NAME_WIDTH, row_names[row], ns, row_target_ns[row], 1e3 / ns,
	       (double)r->peak_rss / (1 << 20));
	if (r->have_books)
		printf("%7" PRIu64, r->live_orders);
	else
		printf("%7s", "-");
	if (row == ROW_DECODE)
		printf("  checksum events %016" PRIx64, r->events_sum);
	else
		printf("  checksum books %016" PRIx64, r->books_sum);
	if (row == ROW_BOOKS)
		printf(" updates %016" PRIx64, r->updates_sum);
	if (r->have_super)
		printf(" super-book %016" PRIx64, r->super_sum);
	if (row == ROW_PIPELINE)
		printf("  (wall, two threads; CPU: thread 1 %.1f, thread 2 %.1f ns/msg",
		       (double)r->thread_cpu_ns[0] / (double)(r->messages ? r->messages : 1),
		       (double)r->thread_cpu_ns[1] / (double)(r->messages ? r->messages : 1));
	else if (row == ROW_RTC)
		printf("  (wall, one thread; CPU: thread 1 %.1f ns/msg",
		       (double)r->thread_cpu_ns[0] / (double)(r->messages ? r->messages : 1));
	else
		printf("  (thread CPU");
	printf(", %" PRIu64 " events, %s)\n", r->events, runs > 1 ? "best run" : "one run");
	fflush(stdout);
}

static int run_row(struct bench *b, enum row row, struct row_result *best)
{
	struct row_result r;

	reset_peak_rss();
	for (unsigned i = 0; i < b->o.runs; i++) {
		/* The checksum of the events costs time: a run of its own. */
		if ((row == ROW_PIPELINE || row == ROW_RTC ? run_builder(b, row == ROW_RTC, &r)
							   : run_single(b, row, 0, &r)) < 0)
			return -1;
		if (i == 0 || r.cpu_ns < best->cpu_ns)
			*best = r;
	}
	best->peak_rss = peak_rss();
	if (row == ROW_DECODE || row == ROW_BOOKS) {
		if (run_single(b, row, 1, &r) < 0)
			return -1;
		best->events_sum = r.events_sum;
		best->updates_sum = r.updates_sum;
	}
	print_row(row, best, b->o.runs);
	return 0;
}

/*
 * Whether the published book (the Super-Book and pipeline rows) can sit on
 * huge pages: on 4 KiB pages each symbol's publish starts with TLB misses,
 * which moved the pipeline row from about 92 to about 115 ns/msg on the
 * development VM. Figures of two machines compare only with the same.
 */
static void print_shm_pages(void)
{
	char type[32], opts[256];

	if (shm_mount_find("", type, sizeof(type), opts, sizeof(opts)) < 0)
		printf("book: /dev/shm not found in /proc/mounts\n");
	else if (shm_mount_allows_huge(type, opts))
		printf("book: /dev/shm allows huge pages (%s)\n", opts);
	else
		printf("book: /dev/shm on 4 KiB pages (mount it huge=advise, as wb-tune --apply does, "
		       "for huge pages)\n");
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: bench_file [options] FILE\n"
"       bench_file [options] --generate N\n"
"Decode and book-building speed on a day file, one line a row: decode only,\n"
"decode + venue books, decode + venue books + Super-Book, pipeline, run to\n"
"completion (rtc: one thread, a packet at a time). FILE is a\n"
"pcap (frames to feeds.conf's lines) or a Nasdaq BinaryFILE, plain or gzip\n"
"(decoded as the nasdaq itch line).\n"
"  --generate N        a generated ITCH day of N order messages instead of FILE\n"
"  --symbols N         symbols of the generated day (default 8000)\n"
"  --seed N            seed of the generated day (default 1)\n"
"  --feeds FILE        feed map (default: ./feeds.conf or the source tree's)\n"
"  --rows LIST         decode,books,superbook,pipeline,rtc (default: all)\n"
"  --runs N            runs per row, best shown (default 3)\n"
"  --expected-orders N size the order tables for N live orders (default 1Mi)\n"
"  --order-detail all|N  keep order detail (wirebook/orders.h) for every symbol\n"
"                      or instruments 1..N, in the book rows\n");
}

static int parse_rows(const char *arg, unsigned *rows)
{
	char buf[256], *tok, *save = NULL;

	*rows = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < ROWS && strcmp(tok, row_keys[k]); k++)
			;
		if (k == ROWS)
			return -1;
		*rows |= 1u << k;
	}
	return *rows ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "generate", required_argument, NULL, 'g' },
		{ "symbols", required_argument, NULL, 'y' },
		{ "seed", required_argument, NULL, 's' },
		{ "feeds", required_argument, NULL, 'f' },
		{ "rows", required_argument, NULL, 'r' },
		{ "runs", required_argument, NULL, 'n' },
		{ "expected-orders", required_argument, NULL, 'o' },
		{ "order-detail", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bench b;
	struct row_result res[ROWS] = { 0 };
	char err[CAPTURE_ERR_LEN];
	int c;

	b.o = (struct opts){ .runs = 3, .rows = (1u << ROWS) - 1, .seed = 1 };
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'g': b.o.generate = strtoull(optarg, NULL, 0); break;
		case 'y': b.o.symbols = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': b.o.seed = strtoull(optarg, NULL, 0); break;
		case 'f': b.o.feeds = optarg; break;
		case 'r':
			if (parse_rows(optarg, &b.o.rows) < 0) {
				usage(stderr);
				return 2;
			}
			break;
		case 'n': b.o.runs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': b.o.order_detail = optarg; break;
		case 'o': b.o.expected_orders = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (b.o.runs == 0 || (b.o.generate ? optind != argc : optind + 1 != argc)) {
		usage(stderr);
		return 2;
	}
	if (!b.o.feeds)
		b.o.feeds = feeds_conf_default_path();
	if (b.o.feeds) {
		b.nfeeds = feeds_conf_read(b.o.feeds, b.feeds, MAX_FEEDS, err, sizeof(err));
		if (b.nfeeds < 0) {
			fprintf(stderr, "bench_file: %s\n", err);
			return 1;
		}
	}
	b.ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(RING_SLOTS));
	batch_updates = calloc((size_t)RING_SLOTS * BOOK_MAX_UPDATES_PER_EVENT, sizeof(*batch_updates));
	if (!b.ring || !batch_updates || engine_fresh(&b) < 0) {
		fprintf(stderr, "bench_file: setup failed\n");
		return 1;
	}
	memset(b.ring, 0, wb_ring_bytes(RING_SLOTS));
	if (b.o.generate) {
		if (generate(&b) < 0) {
			fprintf(stderr, "bench_file: generating the day failed\n");
			return 1;
		}
	} else if (capture_load(&b.cap, argv[optind], b.line, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_file: %s\n", err);
		return 1;
	}
	printf("input: %s (%s), %" PRIu64 " packets, %.0f MiB in memory; feeds %s\n",
	       b.o.generate ? "generated day" : argv[optind], b.cap.format, b.cap.count,
	       (double)(b.cap.size + b.cap.count * sizeof(struct capture_packet)) / (1 << 20),
	       b.o.feeds ? b.o.feeds : "(built-in nasdaq itch line)");
	print_shm_pages();
	fflush(stdout);
	for (int row = 0; row < ROWS; row++) {
		if (!(b.o.rows & (1u << row)))
			continue;
		if (run_row(&b, (enum row)row, &res[row]) < 0)
			return 1;
	}
	if ((b.o.rows & 3u) == 3u) {
		double books = (double)(res[ROW_BOOKS].cpu_ns - res[ROW_DECODE].cpu_ns) /
			       (double)(res[ROW_BOOKS].events ? res[ROW_BOOKS].events : 1);

		printf("venue books alone (row 2 - row 1): %.1f ns/event (target <= 50)\n", books);
	}
	if (b.o.rows & (1u << ROW_SUPERBOOK))
		printf("Super-Book alone (timed inside row 3): %.1f ns/msg (thread 2's work: pipeline target <= 100)\n",
		       (double)res[ROW_SUPERBOOK].superbook_cpu_ns /
			       (double)(res[ROW_SUPERBOOK].messages ? res[ROW_SUPERBOOK].messages : 1));
	if ((b.o.rows & 0xeu) && res[ROW_BOOKS].have_books) {
		int same = 1, first_super = -1;

		for (int row = ROW_SUPERBOOK; row < ROWS; row++) {
			if (!(b.o.rows & (1u << row)))
				continue;
			if (res[row].books_sum != res[ROW_BOOKS].books_sum)
				same = 0;
			/* Every Super-Book row (one thread, pipeline, rtc) publishes the same book. */
			if (first_super < 0)
				first_super = row;
			else if (res[row].super_sum != res[first_super].super_sum)
				same = 0;
		}
		printf("books equal across rows: %s\n", same ? "yes" : "NO");
	}
	capture_free(&b.cap);
	feed_engine_destroy(b.engine);
	free(b.engine);
	free(b.ring);
	free(batch_updates);
	return 0;
}
