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
	u64 last_recv_ts;		/* the newest recv_ts stamped for it (its producer's) */
};

/*
 * A feed-map venue's lock (enum wb_venue or feed_source): its lines' counters,
 * its groups' streams and its directory and protocol state, and its clock.
 * Cache-line aligned: CPUs decoding different venues share nothing here.
 */
struct wb_venue_lock {
	spinlock_t lock;
	u64 last_recv_ts;		/* its events' recv_ts strictly increase */
} ____cacheline_aligned_in_smp;

/* Every venue id a feed-map line may name (0 is WB_VENUE_NONE). */
#define wb_for_each_venue_id(v) for ((v) = WB_VENUE_NONE + 1; (v) < FEED_SOURCE_COUNT; (v)++)

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
	u64 lock_waits;		/* a feed frame's venue lock was held elsewhere: this CPU spun */
};

/* Per-CPU state that is not a counter (stats reset leaves it alone). */
struct wb_cpu {
	unsigned int locks_held; /* wirebook spinlocks this CPU holds: no allocation then */
	int line_hint;		/* feed_route_frame's cache of the last line found (BH off) */
	u8 *scratch;		/* frame copy buffer of the receive path (BH off) */
};

struct wb_module {
	/*
	 * The engine's locks (kmod/README.md, "What protects what"): the
	 * packet path (softirq) decodes a venue's frames under that venue's
	 * lock; the control path takes one venue's, or every venue's in
	 * index order (BH off) to change the feed map or the subscriptions.
	 * intern_lock nests inside a venue's: '*' handing a new ticker an
	 * instrument id. Lock order: wb_ctl_mutex, then venues[1], venues[2],
	 * ... in index order, then intern_lock.
	 */
	struct wb_venue_lock venues[FEED_SOURCE_COUNT];
	spinlock_t intern_lock;
	struct feed_engine *engine;

	unsigned long *port_map;	/* UDP ports of the feed map: lock-free prefilter */

	/*
	 * rings[0..nr_cpu_ids-1]: the ring of the CPU that received the
	 * packet (written with BH off on that CPU); rings[nr_cpu_ids]
	 * (wb_ctl_ring): events the control path makes (gap recovery
	 * ioctls), written under wb_ctl_mutex, so no CPU's ring is written
	 * from another CPU. Each event is stamped and published under its
	 * venue's lock.
	 */
	unsigned int ring_count;
	u32 ring_slots;
	size_t ring_bytes;		/* wb_ring_bytes(ring_slots) */
	size_t ring_stride;		/* PAGE_ALIGN(ring_bytes) */
	struct wb_ring *rings;
	wait_queue_head_t readers;

	/*
	 * Set (under wb_ctl_mutex) around an engine call that takes a venue's
	 * lock itself and emits into the control ring with a time it was
	 * given before (feed_recovery_disable): the venue's unlock stamps
	 * those events with a time taken under the lock, so the venue's
	 * recv_ts stays in decode order.
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

/*
 * wb_main.c: the engine's locks. The control path (process context, BH
 * enabled) takes every venue's lock, or one venue's; the packet path
 * (softirq) one venue's, counting in stats (when not NULL) a frame that
 * found it taken. No allocation under any of them.
 */
void wb_lock_all(void);
void wb_unlock_all(void);
void wb_venue_lock(int venue);
void wb_venue_unlock(int venue);
void wb_venue_lock_rx(int venue, struct wb_hook_pcpu *stats);
void wb_venue_unlock_rx(int venue);
/*
 * The next recv_ts of an event of venue written to ring: strictly increasing
 * for the venue, and never lower than the ring's last. Caller holds the
 * venue's lock and is the ring's producer.
 */
u64 wb_next_recv_ts(int venue, struct wb_ring *ring);
/*
 * fn(venue, arg) for every venue of the feed map, each under its lock in
 * turn (a stats read stops one venue at a time). Caller holds wb_ctl_mutex,
 * which keeps the map still between them.
 */
void wb_for_each_venue_locked(void (*fn)(int venue, void *arg), void *arg);
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
