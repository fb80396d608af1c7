/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Named memory-ordering primitives shared by the module and user space.
 *
 * Every cross-thread or kernel/user handoff in wirebook goes through one of
 * these, so the ordering each access needs is visible at the call site.
 */
#ifndef WIREBOOK_BARRIER_H
#define WIREBOOK_BARRIER_H

#ifdef __KERNEL__
#include <asm/barrier.h>
#include <linux/compiler.h>
#define wb_load_acquire(p)	smp_load_acquire(p)
#define wb_store_release(p, v)	smp_store_release(p, v)
#define wb_load_relaxed(p)	READ_ONCE(*(p))
#define wb_store_relaxed(p, v)	WRITE_ONCE(*(p), v)
#define wb_full_fence()		smp_mb()
#define wb_write_fence()	smp_wmb()
#define wb_read_fence()		smp_rmb()
#else
#define wb_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define wb_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define wb_load_relaxed(p)	__atomic_load_n(p, __ATOMIC_RELAXED)
#define wb_store_relaxed(p, v)	__atomic_store_n(p, v, __ATOMIC_RELAXED)
#if defined(__x86_64__)
/* A locked add to the stack orders like mfence at a fraction of its cost
 * (the kernel's smp_mb does the same). */
#define wb_full_fence()		__asm__ __volatile__("lock; addl $0,-4(%%rsp)" ::: "memory", "cc")
#else
#define wb_full_fence()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
/* A seqlock's two halves: the writer's stores before the fence are seen
 * before its stores after it; the reader's loads before the fence are
 * done before its loads after it (free on x86: compiler barriers). */
#define wb_write_fence()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define wb_read_fence()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/*
 * An atomic add to a plain integer, with no ordering, for a counter that
 * several CPUs bump (each under its own lock) and readers only compare.
 * GCC's builtin in both worlds: on x86 a locked add, which the kernel's
 * sanitizers know as atomic.
 */
#define wb_fetch_add_relaxed(p, v)	__atomic_fetch_add(p, v, __ATOMIC_RELAXED)

#if defined(__GNUC__)
#define wb_likely(x)	__builtin_expect(!!(x), 1)
#define wb_unlikely(x)	__builtin_expect(!!(x), 0)
#else
#define wb_likely(x)	(x)
#define wb_unlikely(x)	(x)
#endif

#endif /* WIREBOOK_BARRIER_H */
