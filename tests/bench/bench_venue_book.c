/*
 * bench_venue_book: builder thread 1's cost per event.
 *
 * Generates in memory a day-like stream for ~8,000 instruments: an opening
 * build-up to ~1M live orders, then a steady mix close to a Nasdaq TotalView
 * day (adds 40%, deletes 38%, replaces 8%, executes 3%, partial cancels 3%,
 * executes at another price and attributed adds for the rest). By default
 * every delete, execute, cancel and replace picks its order uniformly from
 * the whole live set, so the books are hit the way a full market hits
 * them, not only in the recently touched, cache-warm corner (--locality
 * recent skews updates towards recent orders instead).
 *
 * The stream is applied once per id style, dense ITCH-like refs
 * (increasing) and sparse random 64-bit ids (PITCH/XDP-like), and per hint
 * mode: plain venue_books_apply(); with venue_books_prefetch() D events
 * ahead, as builder thread 1 does over a ring batch; and with the prefetch
 * stages run by hand. Only the apply (and hint) loop is timed, in thread
 * CPU time (the machine is shared; wall clock is printed beside it), the
 * best of --runs runs.
 *
 * Prints ns/event, instructions/event (perf_event_open; n/a when the PMU
 * is not available), peak live orders, the books' resident memory and the
 * process's peak RSS. A benchmark, never a test: it asserts nothing about
 * time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "book/venue_book.h"

#define TICK 1000000LL			/* one cent at the 1e-8 price scale */

struct bench_opts {
	uint32_t instruments;
	uint32_t live;			/* orders added by the opening build-up */
	uint32_t events;		/* steady-state events after it */
	uint64_t seed;
	unsigned runs;			/* report the best of this many runs */
	unsigned distance;		/* prefetch distance, events */
	unsigned stages;		/* pipeline: the first this many prefetch stages */
	int ids;			/* 0 dense, 1 sparse, 2 both */
	int mode;			/* enum prefetch_mode, or -1 for all */
	bool recent;			/* most updates hit recent orders (default: uniform) */
};

/* ------------------------------------------------------------ random */

static uint64_t rng;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(((rnd() >> 32) * n) >> 32);
}

/* ------------------------------------------------------------ stream */

/* --locality recent: this share of updates hits about the last RECENT_WINDOW orders added. */
#define RECENT_SHARE 80u
#define RECENT_WINDOW 50000u

struct gen_order {
	uint64_t id;
	int64_t price;
	uint32_t qty;
	uint16_t instrument;
	uint8_t side;
};

struct generator {
	const struct bench_opts *opt;
	bool sparse;
	uint8_t venue;
	uint64_t next_id;
	int64_t *mid;			/* per instrument, in ticks */
	struct gen_order *live;
	size_t nlive, cap;
	uint64_t seq, ts;
};

/* Busy names trade far more than the tail: the least of three uniform draws. */
static uint16_t pick_instrument(const struct generator *g)
{
	uint32_t a = rnd_below(g->opt->instruments), b = rnd_below(g->opt->instruments),
		 c = rnd_below(g->opt->instruments);
	uint32_t m = a < b ? a : b;

	return (uint16_t)(1 + (m < c ? m : c));
}

static uint64_t fresh_id(struct generator *g)
{
	return g->sparse ? rnd() : g->next_id++;
}

/* Most orders rest within a few ticks of the touch; some far away. */
static int64_t pick_price(struct generator *g, uint16_t instrument, uint8_t side)
{
	int64_t off = rnd_below(4) + (rnd_below(100) < 30 ? rnd_below(40) : 0);

	if (rnd_below(64) == 0)		/* the market moves */
		g->mid[instrument] += rnd_below(2) ? 1 : -1;
	return (side == WB_SIDE_BUY ? g->mid[instrument] - 1 - off : g->mid[instrument] + 1 + off) * TICK;
}

static uint32_t pick_qty(void)
{
	return rnd_below(10) ? 100 * (1 + rnd_below(5)) : 1 + rnd_below(99);
}

static struct wb_event *next_event(struct generator *g, struct wb_event *ev, uint8_t kind)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->venue = g->venue;
	ev->seq = ++g->seq;
	g->ts += 1 + rnd_below(2000);
	ev->exch_ts = g->ts;
	ev->recv_ts = g->ts + 20000;
	return ev;
}

static void gen_add(struct generator *g, struct wb_event *ev, bool attributed)
{
	struct gen_order *o = &g->live[g->nlive++];

	o->instrument = pick_instrument(g);
	o->side = rnd_below(2) ? WB_SIDE_BUY : WB_SIDE_SELL;
	o->price = pick_price(g, o->instrument, o->side);
	o->qty = pick_qty();
	o->id = fresh_id(g);
	next_event(g, ev, WB_EV_ADD);
	ev->instrument = o->instrument;
	ev->side = o->side;
	ev->u.order.order_id = o->id;
	ev->u.order.price = o->price;
	ev->u.order.qty = o->qty;
	if (attributed)
		memcpy(ev->u.order.mpid, "GSCO", 4);
}

static void drop_live(struct generator *g, size_t i)
{
	g->live[i] = g->live[--g->nlive];
}

/* Executes and cancels carry only the order id, as on the wire. */
static void gen_take(struct generator *g, struct wb_event *ev, uint8_t kind, size_t i, bool full)
{
	struct gen_order *o = &g->live[i];
	uint32_t qty = full || o->qty == 1 ? o->qty : 1 + rnd_below(o->qty - 1);

	next_event(g, ev, kind);
	ev->u.order.order_id = o->id;
	ev->u.order.qty = qty;
	if (kind != WB_EV_REDUCE) {
		ev->u.order.ref = g->seq;
		ev->flags = WB_EVF_PRINTABLE;
	}
	if (kind == WB_EV_EXECUTE_AT_PRICE)
		ev->u.order.price = o->price + (rnd_below(2) ? 0 : TICK);
	if (qty == o->qty)
		drop_live(g, i);
	else
		o->qty -= qty;
}

static void gen_replace(struct generator *g, struct wb_event *ev, size_t i)
{
	struct gen_order *o = &g->live[i];

	next_event(g, ev, WB_EV_REPLACE);
	ev->u.order.order_id = o->id;
	o->id = fresh_id(g);
	/* Mostly a size change or a step towards the touch. */
	if (rnd_below(3))
		o->price += (o->side == WB_SIDE_BUY ? TICK : -TICK) * (int64_t)rnd_below(3);
	o->qty = pick_qty();
	ev->u.order.ref = o->id;
	ev->u.order.price = o->price;
	ev->u.order.qty = o->qty;
}

/* One event of the steady mix. */
static void gen_mixed(struct generator *g, struct wb_event *ev)
{
	uint32_t r = rnd_below(1000);
	size_t i;

	if (g->nlive == g->cap)			/* never at these rates; keeps the array in bounds */
		r = 500;
	if (r < 400 || g->nlive == 0) {
		gen_add(g, ev, false);
		return;
	}
	if (r >= 960 && g->nlive < g->cap) {				/* F: attributed add */
		gen_add(g, ev, true);
		return;
	}
	if (g->opt->recent && rnd_below(100) < RECENT_SHARE) {
		/* Recently added orders sit near the end of the live array
		 * (deletions swap the last one into the hole). */
		uint32_t window = g->nlive < RECENT_WINDOW ? (uint32_t)g->nlive : RECENT_WINDOW;

		i = g->nlive - 1 - rnd_below(window);
	} else {
		i = rnd_below((uint32_t)g->nlive);	/* anywhere in the live set */
	}
	if (r < 780) {
		next_event(g, ev, WB_EV_DELETE);
		ev->u.order.order_id = g->live[i].id;
		drop_live(g, i);
	} else if (r < 860) {
		gen_replace(g, ev, i);
	} else if (r < 890) {
		gen_take(g, ev, WB_EV_EXECUTE, i, rnd_below(2));
	} else if (r < 920) {
		gen_take(g, ev, WB_EV_REDUCE, i, rnd_below(10) < 3);
	} else {				/* C: execute at another price */
		gen_take(g, ev, WB_EV_EXECUTE_AT_PRICE, i, rnd_below(2));
	}
}

static void generate(const struct bench_opts *opt, bool sparse, struct wb_event *evs, size_t n)
{
	struct generator g = {
		.opt = opt,
		.sparse = sparse,
		.venue = sparse ? WB_VENUE_BZX : WB_VENUE_NASDAQ,
		.next_id = 4096,
		.ts = 4ull * 3600 * 1000000000ull,
	};
	size_t k = 0;

	rng = opt->seed + sparse;
	g.cap = (size_t)opt->live + (size_t)opt->events / 2 + 16;
	g.live = malloc(g.cap * sizeof(*g.live));
	g.mid = malloc(((size_t)opt->instruments + 1) * sizeof(*g.mid));
	if (!g.live || !g.mid) {
		perror("bench_venue_book: generator");
		exit(1);
	}
	for (uint32_t i = 0; i <= opt->instruments; i++)
		g.mid[i] = 500 + rnd_below(50000);	/* $5 .. $505 */
	for (; k < opt->live && k < n; k++)
		gen_add(&g, &evs[k], false);
	for (; k < n; k++)
		gen_mixed(&g, &evs[k]);
	free(g.live);
	free(g.mid);
}

/* ----------------------------------------------------------- measuring */


/* Resident bytes of this process now. */
static uint64_t resident_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Bytes of this process backed by transparent huge pages now. */
static uint64_t huge_page_bytes(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

enum prefetch_mode {
	PREFETCH_NONE,		/* apply only */
	PREFETCH_BUCKET,	/* venue_books_prefetch D ahead (what builder thread 1 does) */
	PREFETCH_PIPELINE,	/* the first N venue_books_prefetch_stage()s, stage s (N - s) * D ahead */
	PREFETCH_MODES
};

static const char *const prefetch_names[PREFETCH_MODES] = {
	"apply",
	"apply + venue_books_prefetch",
	"apply + prefetch stages",
};

struct span {
	size_t events;
	uint64_t wall_ns, cpu_ns;
	uint64_t instructions;
	bool have_instructions;
};

static uint64_t sink;

/* Apply evs[from, to), timing only the loop (prefetches included). */
static void run_span(struct venue_books *vb, const struct wb_event *evs, size_t from, size_t to,
		     enum prefetch_mode mode, unsigned dist, unsigned stages, int perf_fd, struct span *sp)
{
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];
	uint64_t updates = 0, w0, c0, w1, c1, instructions = 0;

	memset(sp, 0, sizeof(*sp));
	sp->events = to - from;
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	w0 = test_clock_ns(CLOCK_MONOTONIC);
	c0 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	switch (mode) {
	case PREFETCH_NONE:
		for (size_t i = from; i < to; i++)
			updates += venue_books_apply(vb, &evs[i], out);
		break;
	case PREFETCH_BUCKET:
		for (size_t i = from; i < to; i++) {
			if (i + dist < to)
				venue_books_prefetch(vb, &evs[i + dist]);
			updates += venue_books_apply(vb, &evs[i], out);
		}
		break;
	default:
		for (size_t i = from; i < to; i++) {
			for (unsigned st = 0; st < stages; st++) {
				size_t ahead = i + (stages - st) * dist;

				if (ahead < to)
					venue_books_prefetch_stage(vb, &evs[ahead], st);
			}
			updates += venue_books_apply(vb, &evs[i], out);
		}
		break;
	}
	c1 = test_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = test_clock_ns(CLOCK_MONOTONIC);
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		sp->have_instructions = read(perf_fd, &instructions, sizeof(instructions)) == sizeof(instructions);
	}
	sp->wall_ns = w1 - w0;
	sp->cpu_ns = c1 - c0;
	sp->instructions = instructions;
	sink += updates + out[0].qty;
}

/* Keep the faster of two measurements of the same work (others share the machine). */
static void keep_best(struct span *best, const struct span *sp, bool first)
{
	if (first || sp->cpu_ns < best->cpu_ns)
		*best = *sp;
}

static void print_span(const char *what, const struct span *sp)
{
	double n = (double)sp->events;

	printf("    %-17s %8zu events %7.1f ns/event (wall %6.1f)  ", what, sp->events, (double)sp->cpu_ns / n,
	       (double)sp->wall_ns / n);
	if (sp->have_instructions)
		printf("%6.1f instructions/event\n", (double)sp->instructions / n);
	else
		printf("n/a instructions/event\n");
}

static void run_config(const struct bench_opts *opt, const struct wb_event *evs, size_t n, const char *ids,
		       enum prefetch_mode mode, int perf_fd)
{
	struct venue_books_config cfg = {
		.max_instruments = opt->instruments + 1,
		.expected_orders = opt->live + opt->live / 4,
		.numa_node = 0,
	};
	struct span build = { 0 }, steady = { 0 }, sp;
	struct venue_books_counters c = { 0 };
	uint64_t books_bytes = 0, huge_bytes = 0;

	for (unsigned r = 0; r < opt->runs; r++) {
		uint64_t rss0 = resident_bytes();
		struct venue_books *vb = venue_books_create(&cfg);

		if (!vb) {
			fprintf(stderr, "bench_venue_book: venue_books_create: %s\n", strerror(errno));
			exit(1);
		}
		run_span(vb, evs, 0, opt->live, mode, opt->distance, opt->stages, perf_fd, &sp);
		keep_best(&build, &sp, r == 0);
		run_span(vb, evs, opt->live, n, mode, opt->distance, opt->stages, perf_fd, &sp);
		keep_best(&steady, &sp, r == 0);
		books_bytes = resident_bytes() - rss0;
		huge_bytes = huge_page_bytes();
		c = *venue_books_counters(vb);
		venue_books_destroy(vb);
	}
	printf("  %s ids, %s", ids, prefetch_names[mode]);
	if (mode == PREFETCH_BUCKET)
		printf(" (%u ahead)", opt->distance);
	else if (mode == PREFETCH_PIPELINE)
		printf(" (%u stages, %u apart)", opt->stages, opt->distance);
	printf(", best of %u:\n", opt->runs);
	print_span("opening build-up", &build);
	print_span("steady mix", &steady);
	sp = (struct span){ .events = build.events + steady.events, .wall_ns = build.wall_ns + steady.wall_ns,
			    .cpu_ns = build.cpu_ns + steady.cpu_ns,
			    .instructions = build.instructions + steady.instructions,
			    .have_instructions = build.have_instructions && steady.have_instructions };
	print_span("whole stream", &sp);
	printf("    peak live orders %" PRIu64 ", levels at the end %" PRIu64 ", books resident %.0f MiB"
	       " (index/level doublings %" PRIu64 "/%" PRIu64 "; process on huge pages %.0f MiB)\n",
	       c.peak_live_orders, c.levels, (double)books_bytes / (1 << 20), c.index_grows, c.level_grows,
	       (double)huge_bytes / (1 << 20));
	if (c.unknown_order || c.duplicate_order || c.overfill || c.alloc_failures)
		printf("    unexpected: unknown %" PRIu64 " duplicate %" PRIu64 " overfill %" PRIu64
		       " alloc failures %" PRIu64 "\n",
		       c.unknown_order, c.duplicate_order, c.overfill, c.alloc_failures);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_venue_book [options]\n"
		"Time venue_books_apply over a generated day-like event stream; ns/event is\n"
		"thread CPU time (wall clock in brackets), the best of --runs runs.\n"
		"  --instruments N  instruments (default 8000)\n"
		"  --live N         orders added by the opening build-up (default 1000000)\n"
		"  --events N       steady-mix events after the build-up (default 6000000)\n"
		"  --ids dense|sparse|both   id style (default both)\n"
		"  --locality uniform|recent  which live orders updates hit: uniformly any\n"
		"                   (default), or 80%% among the ~50,000 most recent\n"
		"  --prefetch none|prefetch|stages|all   hints: none, venue_books_prefetch()\n"
		"                   D ahead, or the first --stages stages by hand (default all)\n"
		"  --distance N     prefetch distance D in events (default 4)\n"
		"  --stages N       stages run by hand, 1-3 (default 2)\n"
		"  --runs N         runs per configuration, best reported (default 1)\n"
		"  --seed N         generator seed (default 1)\n");
}

static int parse_choice(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "instruments", required_argument, NULL, 'i' },
		{ "live", required_argument, NULL, 'l' },
		{ "events", required_argument, NULL, 'e' },
		{ "ids", required_argument, NULL, 'd' },
		{ "locality", required_argument, NULL, 'L' },
		{ "prefetch", required_argument, NULL, 'p' },
		{ "distance", required_argument, NULL, 'D' },
		{ "stages", required_argument, NULL, 'S' },
		{ "runs", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const id_names[] = { "dense", "sparse", "both" };
	static const char *const mode_names[] = { "none", "prefetch", "stages", "all" };
	struct bench_opts opt = { .instruments = 8000, .live = 1000000, .events = 6000000, .seed = 1,
				  .runs = 1, .distance = 4, .stages = 2, .ids = 2, .mode = -1 };
	struct wb_event *evs;
	struct rusage ru;
	size_t n;
	int c, perf_fd;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': opt.instruments = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'l': opt.live = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'e': opt.events = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd': opt.ids = parse_choice(optarg, id_names, 3); break;
		case 'L':
			if (strcmp(optarg, "recent") == 0)
				opt.recent = true;
			else if (strcmp(optarg, "uniform") != 0)
				opt.ids = -1;	/* reported as a usage error below */
			break;
		case 'p':
			opt.mode = parse_choice(optarg, mode_names, 4);
			if (opt.mode == 3)
				opt.mode = -1;
			break;
		case 'D': opt.distance = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': opt.stages = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': opt.runs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (opt.instruments == 0 || opt.instruments > 16383 || opt.live == 0 || opt.runs == 0 ||
	    opt.distance == 0 || opt.stages == 0 || opt.stages > VENUE_BOOKS_PREFETCH_STAGES || opt.ids < 0 ||
	    opt.mode < -1) {
		usage(stderr);
		return 2;
	}
	n = (size_t)opt.live + opt.events;
	/* Huge pages, as a ring buffer would have: with 4 KiB pages every 64th
	 * event starts a page the hardware prefetcher will not cross. */
	evs = mmap(NULL, n * sizeof(*evs), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (evs == MAP_FAILED) {
		perror("bench_venue_book: event stream");
		return 1;
	}
	(void)madvise(evs, n * sizeof(*evs), MADV_HUGEPAGE);
	perf_fd = bench_instructions_open();
	printf("bench_venue_book: %u instruments, %zu events (%u-order build-up + %u steady), stream %.0f MiB,\n"
	       "  updates hit %s\n",
	       opt.instruments, n, opt.live, opt.events, (double)(n * sizeof(*evs)) / (1 << 20),
	       opt.recent ? "80% among the ~50,000 most recent orders, 20% any live order"
			  : "any live order, uniformly");
	if (perf_fd < 0)
		printf("  (perf_event_open: %s: instructions n/a)\n", strerror(errno));

	for (int sparse = 0; sparse < 2; sparse++) {
		if (opt.ids != 2 && opt.ids != sparse)
			continue;
		generate(&opt, sparse, evs, n);
		for (int m = 0; m < PREFETCH_MODES; m++)
			if (opt.mode < 0 || opt.mode == m)
				run_config(&opt, evs, n, sparse ? "sparse 64-bit" : "dense ITCH-like",
					   (enum prefetch_mode)m, perf_fd);
	}

	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.0f MiB (the event stream included)\n", (double)ru.ru_maxrss / 1024);
	munmap(evs, n * sizeof(*evs));
	if (perf_fd >= 0)
		close(perf_fd);
	return sink == 42 ? 3 : 0;
}
