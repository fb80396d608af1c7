/*
 * Sleeping until another thread of the process says so, with no timer:
 * the waiter sets a flag word and sleeps on it while it holds the value;
 * the waker clears it and wakes (only when it saw the flag set: see
 * book_queue_prepare_sleep, wb_ring_consumer_prepare_sleep).
 */
#ifndef WIREBOOK_BOOK_FUTEX_H
#define WIREBOOK_BOOK_FUTEX_H

#include <stdint.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include "shm/relax.h"	/* cpu_relax(): a turn of the bounded spins before these sleeps */

/* Sleep while *w == val: until a wake (or a signal; the caller looks again). */
static inline void futex_wait(uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static inline void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Every waiter of another process on a shared-memory word (a broadcast
 * ring's readers: wb_ring_writer_publish says when any sleeps). */
static inline void futex_wake_shared_all(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Sleep while the shared-memory word *w == val (a broadcast ring's
 * reader, after wb_ring_reader_prepare_sleep), for timeout_ns at most:
 * the waiter's own periodic duties, not the traffic, set it. */
static inline void futex_wait_shared_timeout(uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ull),
			       (long)(timeout_ns % 1000000000ull) };

	syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}


#endif /* WIREBOOK_BOOK_FUTEX_H */
