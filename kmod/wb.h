/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wirebook kernel module: what its files share. The module is a thin shim
 * around the freestanding feed engine (lib/feed): a receive hook, per-CPU
 * event rings mapped to user space, ioctls and /proc statistics. It has
 * no protocol logic of its own.
 */
#ifndef WB_KMOD_H
#define WB_KMOD_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/percpu.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>

#include "feed/feed.h"
#include "feed/feed_ioc.h"
#include "wirebook/ioctl.h"

#define WB_MAX_IFACES 8

/* One event ring: vmalloc_user memory, mapped by readers. */
struct wb_ring {
	void *mem;
	struct wb_ring_producer prod;	/* kernel-private producer state */
};

/* A configured interface name and, while hooked, its device. */
struct wb_hook {
	char name[IFNAMSIZ];
	struct net_device *dev;		/* hooked device (RTNL), NULL when not */
	bool tap;			/* hooked through dev_add_pack, not rx_handler */
	int error;			/* last hook attempt's error, 0 when fine */
	struct packet_type pt;		/* the tap, when tap is set */
};

/* Per-CPU hook counters (no shared cache line on the receive path). */
struct wb_hook_pcpu {
	u64 feed_frames;
	u64 consumed;
	u64 gso_frames;
	u64 gso_segments;
	u64 gso_undecoded;
	u64 oversize;
	u64 copy_errors;
	u64 lock_waits;		/* the engine lock was held elsewhere: this CPU spun */
};

/* Per-CPU state that is not a counter (stats reset leaves it alone). */
struct wb_cpu {
	bool engine_locked;	/* this CPU holds the engine lock: no allocation then */
	u8 *scratch;		/* frame copy buffer of the receive path (BH off) */
};

struct wb_module {
	/*
	 * The engine is single-threaded: this lock serializes the packet
	 * path (softirq) against itself on other CPUs and against the
	 * control path (which takes it with spin_lock_bh).
	 */
	spinlock_t lock;
	struct feed_engine *engine;
	u64 last_recv_ts;		/* recv_ts is strictly increasing (lock order) */

	unsigned long *port_map;	/* UDP ports of the feed map: lock-free prefilter */

	/*
	 * rings[0..nr_cpu_ids-1]: the ring of the CPU that received the
	 * packet; rings[nr_cpu_ids] (wb_ctl_ring): events the control path
	 * makes (gap recovery ioctls), written under wb_ctl_mutex and the
	 * engine lock, so no CPU's ring is written from another CPU.
	 */
	unsigned int ring_count;
	u32 ring_slots;
	size_t ring_bytes;		/* wb_ring_bytes(ring_slots) */
	size_t ring_stride;		/* PAGE_ALIGN(ring_bytes) */
	struct wb_ring *rings;
	wait_queue_head_t readers;

	/*
	 * Set (under wb_ctl_mutex) around an engine call that takes the lock
	 * itself and emits into the control ring with a time it was given
	 * before (feed_recovery_disable): the unlock stamps those events with
	 * a time taken under the lock, so recv_ts stays in decode order.
	 */
	bool ctl_restamp;

	struct wb_hook hooks[WB_MAX_IFACES];
	unsigned int hook_count;
	u64 hook_failures;
	struct wb_hook_pcpu __percpu *pcpu;
	struct wb_cpu __percpu *cpu;
};

extern bool wb_consume;
extern bool wb_tap_fallback;
extern struct mutex wb_ctl_mutex;

extern struct wb_module wb;

/* wb_main.c: engine calls under the lock, with sleeping allocation around */
void wb_engine_lock(void);
void wb_engine_unlock(void);
/* The packet path's side of the engine lock: counts the waits (softirq, BH off). */
void wb_engine_lock_rx(struct wb_hook_pcpu *stats);
void wb_engine_unlock_rx(struct wb_hook_pcpu *stats);
/* The next recv_ts: strictly increasing across rings. Caller holds the engine lock. */
u64 wb_next_recv_ts(void);
/* The control path's ring (see struct wb_module.rings). */
static inline struct wb_ring *wb_ctl_ring(void)
{
	return &wb.rings[wb.ring_count - 1];
}
int wb_feed_add(const struct feed_map_entry *m);
int wb_feed_remove(u32 ip, u16 port);
void wb_hook_stats_sum(struct wb_ioc_hook_stats *out);
size_t wb_scratch_bytes(void);

/* wb_dev.c: copy every used feed line and its counters (FEED_MAX_LINES) */
unsigned int wb_stats_snapshot(struct wb_ioc_line_stats *out);

/* wb_hook.c */
int wb_hooks_init(const char *ifaces);
void wb_hooks_exit(void);

/* wb_dev.c */
int wb_dev_init(void);
void wb_dev_exit(void);

/* wb_proc.c */
int wb_proc_init(void);
void wb_proc_exit(void);

#endif /* WB_KMOD_H */
