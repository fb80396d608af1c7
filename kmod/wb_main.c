// SPDX-License-Identifier: GPL-2.0
/*
 * wirebook: module parameters, the feed engine and its locks, the per-CPU
 * event rings, load and unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>

#include "wb.h"

static char *ifaces;
module_param(ifaces, charp, 0444);
MODULE_PARM_DESC(ifaces, "Comma-separated interfaces to hook (hooked whenever they exist)");

static unsigned int ring_slots = 65536;
module_param(ring_slots, uint, 0444);
MODULE_PARM_DESC(ring_slots, "Events per per-CPU ring: a power of two, 64..4194304 (default 65536)");

bool wb_consume = true;
module_param_named(consume, wb_consume, bool, 0644);
MODULE_PARM_DESC(consume, "Keep decoded feed packets from the IP stack (default 1); 0 passes them on");

bool wb_tap_fallback;
module_param_named(tap_fallback, wb_tap_fallback, bool, 0444);

static unsigned int hold_us = 1000;
module_param(hold_us, uint, 0444);
MODULE_PARM_DESC(hold_us, "Longest a packet behind a sequence hole waits for the other line, "
		 "in us (default 1000; 0: never hold, a hole is a gap at once)");
MODULE_PARM_DESC(tap_fallback, "When a device's rx_handler slot is taken (bridge, bond, macvlan), "
		 "hook it with a packet tap instead of failing (feed packets then also reach the stack)");

#define WB_MIN_SLOTS 64u		/* one page of slots: rings stay page-sized */
#define WB_MAX_SLOTS (1u << 22)		/* 256 MiB per ring */

static_assert(PAGE_SIZE == WB_RING_PAGE, "the ring's protection granule is one page");
static_assert(FEED_ERR_COUNT <= WB_IOC_ERROR_SLOTS, "ioctl stats hold every decode error");

struct wb_module wb;

/* Serializes control operations (ioctls) among themselves. */
DEFINE_MUTEX(wb_ctl_mutex);

/*
 * The engine allocates per-venue and per-stream state when a feed line is
 * added, on the control path and outside every lock: it takes the venue
 * locks itself (feed_engine_config.lock) only to publish the new line.
 */
static void *wb_engine_alloc(size_t bytes)
{
	/* Never under one of the module's spinlocks: vzalloc sleeps. Refused
	 * (and said once) rather than done, so a bug here is an ENOMEM, not a
	 * hung CPU. */
	if (WARN_ON_ONCE(this_cpu_read(wb.cpu->locks_held)))
		return NULL;
	return vzalloc(bytes);
}

static void wb_engine_free(void *p)
{
	vfree(p);
}

/*
 * Each venue lock has a lockdep class of its own, so that taking them all
 * in index order (wb_lock_all) is an order lockdep can check, not the
 * recursion on one class it would see in a loop over one lock class.
 */
static struct lock_class_key wb_venue_lock_keys[FEED_SOURCE_COUNT];

static void wb_locks_init(void)
{
	int v;

	for (v = 0; v < FEED_SOURCE_COUNT; v++) {
		spin_lock_init(&wb.venues[v].lock);
		lockdep_set_class(&wb.venues[v].lock, &wb_venue_lock_keys[v]);
	}
	spin_lock_init(&wb.intern_lock);
}

/* Control path: a feed-map or subscription change stops every venue. */
void wb_lock_all(void)
{
	int v;

	local_bh_disable();
	wb_for_each_venue_id(v)
		spin_lock(&wb.venues[v].lock);
	this_cpu_inc(wb.cpu->locks_held);
}

void wb_unlock_all(void)
{
	int v;

	this_cpu_dec(wb.cpu->locks_held);
	for (v = FEED_SOURCE_COUNT - 1; v > WB_VENUE_NONE; v--)
		spin_unlock(&wb.venues[v].lock);
	local_bh_enable();
}

void wb_venue_lock(int venue)
{
	spin_lock_bh(&wb.venues[venue].lock);
	this_cpu_inc(wb.cpu->locks_held);
}

void wb_venue_lock_rx(int venue, struct wb_hook_pcpu *stats)
{
	spinlock_t *lock = &wb.venues[venue].lock;

	if (unlikely(!spin_trylock(lock))) {
		if (stats)
			stats->lock_waits++;
		spin_lock(lock);
	}
	this_cpu_inc(wb.cpu->locks_held);
}

void wb_venue_unlock_rx(int venue)
{
	this_cpu_dec(wb.cpu->locks_held);
	spin_unlock(&wb.venues[venue].lock);
}

/* The engine's, with a venue's lock held: '*' interns a new ticker. */
static void wb_intern_lock(void)
{
	spin_lock(&wb.intern_lock);
	this_cpu_inc(wb.cpu->locks_held);
}

static void wb_intern_unlock(void)
{
	this_cpu_dec(wb.cpu->locks_held);
	spin_unlock(&wb.intern_lock);
}

/*
 * recv_ts strictly increasing per venue: the readers' merge key, and what
 * keeps a venue's events in order across rings (lib/shm/events.c). Never
 * lower than the ring's last either, so each ring stays sorted when the
 * wall clock steps back under one venue's feet and not another's.
 */
u64 wb_next_recv_ts(int venue, struct wb_ring *ring)
{
	struct wb_venue_lock *vl = &wb.venues[venue];
	u64 now = ktime_get_real_ns(), floor = max(vl->last_recv_ts, ring->last_recv_ts);

	if (now <= floor)
		now = floor + 1;
	vl->last_recv_ts = now;
	ring->last_recv_ts = now;
	return now;
}

/* The control ring's events since its last publish get one time, taken now. */
static bool wb_ctl_ring_restamp_publish(int venue)
{
	struct wb_ring *ring = wb_ctl_ring();
	struct wb_ring_producer *prod = &ring->prod;
	u64 ts = wb_next_recv_ts(venue, ring), i;

	for (i = prod->published; i != prod->head; i++)
		prod->slots[i & prod->mask].recv_ts = ts;
	return wb_ring_producer_publish(prod);
}

void wb_venue_unlock(int venue)
{
	bool wake = false;

	if (unlikely(wb.ctl_restamp))
		wake = wb_ctl_ring_restamp_publish(venue);
	this_cpu_dec(wb.cpu->locks_held);
	spin_unlock_bh(&wb.venues[venue].lock);
	if (wake)
		wake_up_interruptible(&wb.readers);
}

void wb_for_each_venue_locked(void (*fn)(int venue, void *arg), void *arg)
{
	int v;

	lockdep_assert_held(&wb_ctl_mutex);
	wb_for_each_venue_id(v) {
		if (!READ_ONCE(wb.engine->venue[v]))
			continue;
		wb_venue_lock(v);
		fn(v, arg);
		wb_venue_unlock(v);
	}
}

/* Caller holds wb_ctl_mutex. */
int wb_feed_add(const struct feed_map_entry *m)
{
	int rc = feed_map_add_entry(wb.engine, m);

	if (rc >= 0)
		set_bit(m->port, wb.port_map);
	return feed_ioc_errno(rc);
}

/* Caller holds wb_ctl_mutex. */
int wb_feed_remove(u32 ip, u16 port)
{
	int rc, i;
	bool port_used = false;

	rc = feed_map_remove(wb.engine, ip, port);
	if (rc == 0) {
		for (i = 0; i < (int)wb.engine->line_count; i++)
			if (wb.engine->lines[i].ip && wb.engine->lines[i].port == port)
				port_used = true;
		if (!port_used)
			clear_bit(port, wb.port_map);
	}
	return feed_ioc_errno(rc);
}

void wb_hook_stats_sum(struct wb_ioc_hook_stats *out)
{
	unsigned int cpu, i;

	memset(out, 0, sizeof(*out));
	for_each_possible_cpu(cpu) {
		const struct wb_hook_pcpu *c = per_cpu_ptr(wb.pcpu, cpu);

		out->feed_frames += READ_ONCE(c->feed_frames);
		out->consumed += READ_ONCE(c->consumed);
		out->gso_frames += READ_ONCE(c->gso_frames);
		out->gso_segments += READ_ONCE(c->gso_segments);
		out->gso_undecoded += READ_ONCE(c->gso_undecoded);
		out->oversize += READ_ONCE(c->oversize);
		out->copy_errors += READ_ONCE(c->copy_errors);
		out->lock_waits += READ_ONCE(c->lock_waits);
	}
	for (i = 0; i < wb.ring_count; i++) {
		const struct wb_ring_prod_page *pp = wb.rings[i].mem;

		out->ring_published += READ_ONCE(pp->published);
		out->ring_dropped += READ_ONCE(pp->dropped);
		out->ring_wakeups += READ_ONCE(pp->wakeups);
	}
	out->hook_failures = READ_ONCE(wb.hook_failures);
	for (i = 0; i < wb.hook_count; i++) {
		if (READ_ONCE(wb.hooks[i].dev)) {
			out->hooked_devices++;
			if (READ_ONCE(wb.hooks[i].tap))
				out->tap_devices++;
		}
	}
}

static void wb_rings_free(void)
{
	unsigned int i;

	for (i = 0; wb.rings && i < wb.ring_count; i++)
		vfree(wb.rings[i].mem);
	kfree(wb.rings);
	wb.rings = NULL;
}

static int wb_rings_alloc(void)
{
	u64 now = ktime_get_real_ns();
	unsigned int i;

	wb.ring_count = nr_cpu_ids + 1;	/* one per CPU, and the control path's */
	wb.ring_slots = ring_slots;
	wb.ring_bytes = wb_ring_bytes(ring_slots);
	wb.ring_stride = PAGE_ALIGN(wb.ring_bytes);
	wb.rings = kcalloc(wb.ring_count, sizeof(*wb.rings), GFP_KERNEL);
	if (!wb.rings)
		return -ENOMEM;
	for (i = 0; i < wb.ring_count; i++) {
		/* Zeroed, page-aligned, and allowed to be mapped to user space. */
		wb.rings[i].mem = vmalloc_user(wb.ring_stride);
		if (!wb.rings[i].mem) {
			pr_err("cannot allocate ring %u (%zu bytes): lower ring_slots\n", i,
			       wb.ring_stride);
			wb_rings_free();
			return -ENOMEM;
		}
		/* Each ring carries its own creation time, so readers can tell
		 * a reloaded module's rings from the old ones. */
		wb_ring_format(wb.rings[i].mem, ring_slots, now + i);
		wb_ring_producer_init(&wb.rings[i].prod, wb.rings[i].mem);
	}
	return 0;
}

static void wb_engine_free_all(void)
{
	if (wb.engine) {
		feed_engine_destroy(wb.engine);
		vfree(wb.engine);
		wb.engine = NULL;
	}
	bitmap_free(wb.port_map);
	wb.port_map = NULL;
	free_percpu(wb.pcpu);
	wb.pcpu = NULL;
	if (wb.cpu) {
		unsigned int cpu;

		for_each_possible_cpu(cpu)
			vfree(per_cpu_ptr(wb.cpu, cpu)->scratch);
	}
	free_percpu(wb.cpu);
	wb.cpu = NULL;
}

/* The copy buffer holds the largest GSO super-packet plus headers. */
#define WB_SCRATCH_BYTES (65536 + 256)

static int wb_engine_setup(void)
{
	struct feed_engine_config cfg = {
		.alloc = wb_engine_alloc,
		.free = wb_engine_free,
		.lock = wb_lock_all,
		.unlock = wb_unlock_all,
		.lock_venue = wb_venue_lock,
		.unlock_venue = wb_venue_unlock,
		.lock_intern = wb_intern_lock,
		.unlock_intern = wb_intern_unlock,
		.hold_ns = (u64)hold_us * 1000,
		.no_hold = hold_us == 0,
	};
	unsigned int cpu;
	int rc;

	wb.engine = vzalloc(sizeof(*wb.engine));
	wb.port_map = bitmap_zalloc(65536, GFP_KERNEL);
	wb.pcpu = alloc_percpu(struct wb_hook_pcpu);
	wb.cpu = alloc_percpu(struct wb_cpu);
	if (!wb.engine || !wb.port_map || !wb.pcpu || !wb.cpu)
		goto nomem;
	/* One copy buffer per CPU: a frame is copied before a lock is taken. */
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(wb.cpu, cpu)->line_hint = -1;
		per_cpu_ptr(wb.cpu, cpu)->scratch = vmalloc(WB_SCRATCH_BYTES);
		if (!per_cpu_ptr(wb.cpu, cpu)->scratch)
			goto nomem;
	}
	rc = feed_engine_init(wb.engine, &cfg);
	if (rc < 0) {
		wb_engine_free_all();
		return feed_ioc_errno(rc);
	}
	return 0;
nomem:
	wb_engine_free_all();
	return -ENOMEM;
}

size_t wb_scratch_bytes(void)
{
	return WB_SCRATCH_BYTES;
}

static int __init wb_init(void)
{
	int rc;

	if (ring_slots < WB_MIN_SLOTS || ring_slots > WB_MAX_SLOTS || !is_power_of_2(ring_slots)) {
		pr_err("ring_slots=%u: must be a power of two from %u to %u\n", ring_slots,
		       WB_MIN_SLOTS, WB_MAX_SLOTS);
		return -EINVAL;
	}
	wb_locks_init();
	init_waitqueue_head(&wb.readers);

	rc = wb_engine_setup();
	if (rc)
		return rc;
	rc = wb_rings_alloc();
	if (rc)
		goto out_engine;
	rc = wb_proc_init();
	if (rc)
		goto out_rings;
	rc = wb_dev_init();
	if (rc)
		goto out_proc;
	/* Hooks last: packets may arrive as soon as a device is hooked. */
	rc = wb_hooks_init(ifaces);
	if (rc)
		goto out_dev;
	pr_info("loaded: %u rings of %u events, consume=%d tap_fallback=%d ifaces=%s\n",
		wb.ring_count, wb.ring_slots, wb_consume, wb_tap_fallback,
		ifaces ? ifaces : "(none)");
	return 0;

out_dev:
	wb_dev_exit();
out_proc:
	wb_proc_exit();
out_rings:
	wb_rings_free();
out_engine:
	wb_engine_free_all();
	return rc;
}

static void __exit wb_exit(void)
{
	/* Unhooking waits for every receive handler still running. */
	wb_hooks_exit();
	/* No reader can hold the device: an open file pins the module. */
	wb_dev_exit();
	wb_proc_exit();
	wb_rings_free();
	wb_engine_free_all();
	pr_info("unloaded\n");
}

module_init(wb_init);
module_exit(wb_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("wirebook");
MODULE_DESCRIPTION("wirebook: market-data feed decoding at the receive hook, into mmap'd event rings");
MODULE_VERSION("0.1");
