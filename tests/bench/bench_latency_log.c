/*
 * bench_latency_log: the hot-path cost of latency_log_record (what builder
 * thread 2 pays per sample), in ns and instructions per sample, with the
 * writer thread draining to real files at the same time.
 *
 * Timed in bursts of half the buffer, waiting for the writer between bursts
 * (untimed), so the "stored" figure is the normal path; a second figure is
 * the cost of a sample dropped because the buffer is full.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "book/latency_log.h"
#include "wirebook/event.h"

#define BURST (1u << 16)	/* half of the log's buffer */
#define BURSTS 64u



struct timing {
	uint64_t ns, instructions, samples;
};

static void timed_burst(struct latency_log *log, struct latency_sample *s, uint32_t n, int perf_fd,
			struct timing *t)
{
	uint64_t t0, instr = 0;

	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
		ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	t0 = test_monotonic_ns();
	for (uint32_t i = 0; i < n; i++) {
		s->seq++;
		s->published_ts += 7;
		latency_log_record(log, s);
	}
	t->ns += test_monotonic_ns() - t0;
	if (perf_fd >= 0) {
		ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(perf_fd, &instr, sizeof(instr)) != sizeof(instr))
			instr = 0;
	}
	t->instructions += instr;
	t->samples += n;
}

static void print_row(const char *name, const struct timing *t, int have_instructions)
{
	char instr[32] = "n/a";

	if (have_instructions)
		snprintf(instr, sizeof(instr), "%.1f", (double)t->instructions / (double)t->samples);
	printf("%-10s %8.2f %12s\n", name, (double)t->ns / (double)t->samples, instr);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/wb-bench-latency-XXXXXX";
	struct latency_sample s;
	struct timing stored = { 0 }, dropped_t = { 0 };
	struct latency_log *log;
	uint64_t written, dropped;
	int perf_fd = bench_instructions_open();
	const struct timespec drain_wait = { 0, 20 * 1000 * 1000 };

	(void)argv;
	if (argc > 1) {
		printf("usage: bench_latency_log\nns and instructions per latency_log_record call\n");
		return 0;
	}
	if (!mkdtemp(dir) || !(log = latency_log_open(dir))) {
		fprintf(stderr, "bench_latency_log: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	memset(&s, 0, sizeof(s));
	s.recv_ts = 1763700000ull * 1000000000ull;
	s.ring_read_ts = s.recv_ts + 1000;
	s.book_applied_ts = s.recv_ts + 1500;
	s.published_ts = s.recv_ts + 2000;
	s.venue = WB_VENUE_NASDAQ;

	for (uint32_t b = 0; b < BURSTS; b++) {
		timed_burst(log, &s, BURST, perf_fd, &stored);
		nanosleep(&drain_wait, NULL);	/* the writer empties the buffer */
	}
	/* Fill the buffer faster than any disk, then time samples that are dropped. */
	for (uint32_t i = 0; i < 4 * BURST; i++)
		latency_log_record(log, &s);
	timed_burst(log, &s, BURST / 16, perf_fd, &dropped_t);

	written = latency_log_close(log, &dropped);
	printf("bench_latency_log: %" PRIu64 " samples stored in bursts of %u, %" PRIu64
	       " written, %" PRIu64 " dropped\n", stored.samples, BURST, written, dropped);
	if (perf_fd < 0)
		printf("bench_latency_log: instructions: n/a (perf_event_open: %s)\n", strerror(errno));
	printf("%-10s %8s %12s\n", "path", "ns/rec", "instr/rec");
	print_row("stored", &stored, perf_fd >= 0);
	print_row("dropped", &dropped_t, perf_fd >= 0);

	/* The files are the writer's output, not the benchmark's: clean up. */
	{
		char path[sizeof(dir) + 32];

		snprintf(path, sizeof(path), "%s/latency_nasdaq.bin", dir);
		unlink(path);
		rmdir(dir);
	}
	return 0;
}
