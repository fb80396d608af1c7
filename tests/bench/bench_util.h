/*
 * What every benchmark needs to time itself: a monotonic clock
 * (test_monotonic_ns, with the tests' allocator) and a user-space
 * instruction counter (perf_event_open; -1 where the machine
 * exposes no PMU, as on many VMs, and the benchmark prints n/a).
 */
#ifndef WIREBOOK_BENCH_UTIL_H
#define WIREBOOK_BENCH_UTIL_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../unit/test_util.h"

/* A disabled counter of this thread's user-space instructions, or -1. */
static inline int bench_instructions_open(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_HARDWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_HW_INSTRUCTIONS;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

#endif
