/*
 * Sleeping until another thread of the process says so, with no timer:
 * the waiter sets a flag word and sleeps on it while it holds the value;
 * the waker clears it and wakes (only when it saw the flag set: see
 * book_queue_prepare_sleep, wb_ring_consumer_prepare_sleep).
 */
#ifndef WIREBOOK_BOOK_FUTEX_H
#define WIREBOOK_BOOK_FUTEX_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

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

#endif /* WIREBOOK_BOOK_FUTEX_H */
