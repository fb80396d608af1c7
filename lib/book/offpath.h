/*
 * For threads that are not on the packet path (the SIP view, the latency
 * writer, the daemon's main loop and metrics): they must never take time
 * the path needs. SCHED_BATCH keeps their wakeups from preempting the
 * path's threads, and the nice value gives them a small share of a core
 * the path shares with them (on a two-core machine it shares one).
 * Best effort: an unprivileged thread may always lower its own priority.
 */
#ifndef WIREBOOK_BOOK_OFFPATH_H
#define WIREBOOK_BOOK_OFFPATH_H

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OFFPATH_NICE 10

/* The calling thread only (Linux's scheduler calls act on one thread). */
static inline void offpath_lower_priority(void)
{
	struct sched_param sp = { 0 };

	(void)sched_setscheduler(0, SCHED_BATCH, &sp);
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), OFFPATH_NICE);
}

#endif /* WIREBOOK_BOOK_OFFPATH_H */
