/*
 * Per-packet latency samples: when the packet arrived (hook / kernel
 * receive timestamp) and when each builder stage finished with the last
 * change it caused. Recorded by the builder's publisher (thread 2, or
 * thread 1 in run-to-completion mode) on the hot path (a copy
 * into a lock-free buffer), written to per-feed files by a logger thread.
 */
#ifndef WIREBOOK_LATENCY_LOG_H
#define WIREBOOK_LATENCY_LOG_H

#include <pthread.h>
#include <stdint.h>

struct latency_sample {
	uint64_t recv_ts;	/* packet receive time, ns since the epoch (CLOCK_REALTIME) */
	uint64_t ring_read_ts;	/* thread 1 took the event batch off the event ring */
	uint64_t book_applied_ts; /* thread 1 applied it to the venue books (rtc: and the
				   * Super-Book, before its publish) */
	uint64_t published_ts;	/* the publisher made the Super-Book change visible in shm */
	uint64_t seq;		/* source sequence of the last event of the packet */
	uint16_t line;		/* feed-map line index */
	uint8_t venue;		/* enum wb_venue */
	uint8_t reserved[5];
};

_Static_assert(sizeof(struct latency_sample) == 48, "latency_sample layout");

struct latency_log;

/* Open a log writing latency_<feed>.bin files under dir; NULL + errno on failure. */
struct latency_log *latency_log_open(const char *dir);
/* Hot path, single producer: never blocks; counts a drop when the buffer is full. */
void latency_log_record(struct latency_log *log, const struct latency_sample *s);
/* The writer thread (off the path: it lowers its own priority), for
 * keeping it off the path's cores (builder_move_off_path). */
pthread_t latency_log_writer(const struct latency_log *log);
/* Flush and close; returns samples written, dropped through *dropped. */
uint64_t latency_log_close(struct latency_log *log, uint64_t *dropped);

#endif /* WIREBOOK_LATENCY_LOG_H */
