/*
 * What test programs share, one copy each: the feed engine's allocator and
 * the clocks. (Benchmarks include it too, from tests/bench/bench_util.h.)
 */
#ifndef WIREBOOK_TEST_UTIL_H
#define WIREBOOK_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* struct feed_engine_config.alloc: zeroed memory (its .free is free). */
static inline void *test_zalloc(size_t bytes)
{
	return calloc(1, bytes);
}

static inline uint64_t test_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t test_realtime_ns(void)
{
	return test_clock_ns(CLOCK_REALTIME);
}

static inline uint64_t test_monotonic_ns(void)
{
	return test_clock_ns(CLOCK_MONOTONIC);
}

#endif /* WIREBOOK_TEST_UTIL_H */
