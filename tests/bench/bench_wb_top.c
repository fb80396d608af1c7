/*
 * bench_wb_top: what a strategy pays to read the book through libwirebook.
 *
 * A Super-Book of 8,000 symbols (two venues, ten levels a side) is
 * published in shared memory; a reader attached through wb_open() then
 * calls, in a timed loop:
 *   - wb_top on one symbol (the hot path of a strategy watching a name),
 *   - wb_top on symbols picked at random (the record is usually not in cache),
 *   - wb_nbbo and wb_depth(10, consolidated) on one symbol,
 *   - wb_top on one symbol while another thread republishes it nonstop
 *     (contended: the seqlock retries).
 * Prints ns/call and instructions/call (perf_event_open; n/a without a
 * PMU). Target: wb_top <= 20 ns uncontended. Not a test.
 */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "book/superbook.h"
#include "wirebook/book.h"

#define SYMBOLS 8000
#define CALLS 20000000u
#define TICK 1000000LL

static int perf_fd = -1;

static void perf_open_instructions(void)
{
	perf_fd = bench_instructions_open();
}

static void perf_start(void)
{
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	}
}

static uint64_t perf_stop(void)
{
	uint64_t n = 0;

	if (perf_fd < 0)
		return 0;
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(perf_fd, &n, sizeof(n)) != sizeof(n))
		n = 0;
	return n;
}

static void report(const char *what, uint64_t calls, uint64_t ns, uint64_t instructions)
{
	printf("  %-44s %7.1f ns/call", what, (double)ns / (double)calls);
	if (instructions)
		printf("  %6.1f instructions/call\n", (double)instructions / (double)calls);
	else
		printf("  instructions n/a\n");
}

static void fill(struct superbook *sb, uint16_t sym, int64_t mid, uint64_t round)
{
	struct book_update u = { .kind = BOOK_UP_LEVEL, .instrument = sym };
	int v, k, side;

	for (v = WB_VENUE_NASDAQ; v <= WB_VENUE_BZX; v++)
		for (side = 0; side < 2; side++)
			for (k = 0; k < WB_BOOK_DEPTH; k++) {
				u.venue = (uint8_t)v;
				u.side = side ? WB_SIDE_SELL : WB_SIDE_BUY;
				u.price = side ? mid + (1 + k) * TICK : mid - k * TICK;
				u.qty = 100 * (uint64_t)(k + v) + round % 100;
				u.order_count = 1 + (uint32_t)k;
				superbook_apply(sb, &u);
			}
}

struct writer_arg {
	struct superbook *sb;
	volatile int stop;
	uint64_t publishes;
};

static void *writer_main(void *p)
{
	struct writer_arg *w = p;
	uint64_t round = 0;

	while (!w->stop) {
		fill(w->sb, 1, 100 * 100000000LL, round++);
		superbook_publish(w->sb);
		w->publishes++;
	}
	return NULL;
}

int main(void)
{
	struct superbook_config cfg = { .capacity = 16384, .numa_node = -1 };
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_top top;
	struct wb_nbbo nb;
	static struct wb_depth d;
	struct writer_arg w;
	pthread_t th;
	uint64_t t0, t1, ins, sum = 0, rng = 88172645463325252ull;
	int *syms, err;
	unsigned i;
	char name[64], tk[9];

	snprintf(name, sizeof(name), "wb-bench-top-%d", (int)getpid());
	cfg.shm_name = name;
	sb = superbook_create(&cfg, &err);
	if (!sb) {
		fprintf(stderr, "bench_wb_top: superbook_create: %d\n", err);
		return 1;
	}
	for (i = 1; i <= SYMBOLS; i++) {
		snprintf(tk, sizeof(tk), "S%-7u", i);
		superbook_add_symbol(sb, (uint16_t)i, tk);
		fill(sb, (uint16_t)i, (int64_t)(10 + i % 500) * 100000000LL, 0);
	}
	superbook_publish(sb);
	bk = wb_open(name, &err);
	if (!bk) {
		fprintf(stderr, "bench_wb_top: wb_open: %s\n", wb_strerror(err));
		return 1;
	}
	syms = malloc(sizeof(*syms) * 65536);
	for (i = 0; i < 65536; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		syms[i] = 1 + (int)(rng % SYMBOLS);
	}
	perf_open_instructions();
	printf("libwirebook read cost (%d symbols published, reader in this process)\n", SYMBOLS);

	perf_start();
	t0 = test_monotonic_ns();
	for (i = 0; i < CALLS; i++) {
		wb_top(bk, 1, &top);
		sum += top.bid_qty;
	}
	t1 = test_monotonic_ns();
	ins = perf_stop();
	report("wb_top, one symbol (uncontended)", CALLS, t1 - t0, ins);

	perf_start();
	t0 = test_monotonic_ns();
	for (i = 0; i < CALLS / 4; i++) {
		wb_top(bk, syms[i & 65535], &top);
		sum += top.bid_qty;
	}
	t1 = test_monotonic_ns();
	ins = perf_stop();
	report("wb_top, random symbol of 8000 (cache misses)", CALLS / 4, t1 - t0, ins);

	perf_start();
	t0 = test_monotonic_ns();
	for (i = 0; i < CALLS / 2; i++) {
		wb_nbbo(bk, 1, &nb);
		sum += nb.ask_qty;
	}
	t1 = test_monotonic_ns();
	ins = perf_stop();
	report("wb_nbbo, one symbol", CALLS / 2, t1 - t0, ins);

	perf_start();
	t0 = test_monotonic_ns();
	for (i = 0; i < CALLS / 20; i++) {
		wb_depth(bk, 1, WB_CONSOLIDATED, WB_BOOK_DEPTH, &d);
		sum += d.bid[9].qty;
	}
	t1 = test_monotonic_ns();
	ins = perf_stop();
	report("wb_depth 10 consolidated (with breakdown)", CALLS / 20, t1 - t0, ins);

	memset(&w, 0, sizeof(w));
	w.sb = sb;
	pthread_create(&th, NULL, writer_main, &w);
	usleep(10000);
	perf_start();
	t0 = test_monotonic_ns();
	for (i = 0; i < CALLS / 4; i++) {
		if (wb_top(bk, 1, &top) == 0)
			sum += top.bid_qty;
	}
	t1 = test_monotonic_ns();
	ins = perf_stop();
	w.stop = 1;
	pthread_join(th, NULL);
	report("wb_top, one symbol republished nonstop", CALLS / 4, t1 - t0, ins);
	printf("  (writer published the contended symbol %" PRIu64 " times meanwhile; checksum %" PRIu64 ")\n",
	       w.publishes, sum & 0xff);

	wb_close(bk);
	superbook_destroy(sb);
	free(syms);
	return 0;
}
