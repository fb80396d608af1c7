// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/wirebook: the control ioctls, the ring mappings and poll().
 *
 * Every ioctl argument is copied in once, validated in the kernel copy
 * (reserved words zero, strings NUL-terminated, counts bounded) and only
 * then used. State-changing ioctls need the file opened for writing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/version.h>

#include "wb.h"

/* vm_flags became write-protected in 6.3: use the accessors there. */
static void wb_vma_set(struct vm_area_struct *vma, vm_flags_t set, vm_flags_t clear)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

struct wb_line_copy {
	struct wb_ioc_line_stats *out;
	unsigned int n;
};

static void wb_copy_venue_counters(int venue, void *arg)
{
	struct wb_line_copy *c = arg;

	feed_ioc_line_counters(wb.engine, venue, c->out, c->n);
}

/*
 * Copy every used feed line with its counters; out holds FEED_MAX_LINES.
 * The lines are listed under wb_ctl_mutex (which every map change holds),
 * each venue's counters then copied under its lock.
 */
unsigned int wb_stats_snapshot(struct wb_ioc_line_stats *out)
{
	struct wb_line_copy c = { .out = out };

	mutex_lock(&wb_ctl_mutex);
	c.n = feed_ioc_line_list(wb.engine, out, FEED_MAX_LINES);
	wb_for_each_venue_locked(wb_copy_venue_counters, &c);
	mutex_unlock(&wb_ctl_mutex);
	return c.n;
}

static long wb_ioctl_feed_add(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_feed f;
	struct feed_map_entry m;
	int rc;

	if (copy_from_user(&f, arg, sizeof(f)))
		return -EFAULT;
	if (feed_ioc_entry(&f, &m) < 0)
		return -EINVAL;
	mutex_lock(&wb_ctl_mutex);
	rc = wb_feed_add(&m);
	mutex_unlock(&wb_ctl_mutex);
	if (rc < 0)
		return rc;
	f.line = rc;
	return copy_to_user(arg, &f, sizeof(f)) ? -EFAULT : 0;
}

static long wb_ioctl_trading_date(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_date d;
	int rc;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	mutex_lock(&wb_ctl_mutex);
	wb_lock_all();
	rc = feed_ioc_trading_date(wb.engine, &d);
	wb_unlock_all();
	mutex_unlock(&wb_ctl_mutex);
	return feed_ioc_errno(rc);
}

static long wb_ioctl_feed_del(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_feed f;
	int rc;

	if (copy_from_user(&f, arg, sizeof(f)))
		return -EFAULT;
	if (feed_ioc_feed_key(&f) < 0)
		return -EINVAL;
	mutex_lock(&wb_ctl_mutex);
	rc = wb_feed_remove(f.ip, f.port);
	mutex_unlock(&wb_ctl_mutex);
	return rc;
}

static long wb_ioctl_feed_list(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_list req;
	struct wb_ioc_feed *out;
	unsigned int n;
	long rc = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	out = kcalloc(FEED_MAX_LINES, sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	/* Lines change only under the mutex: no venue need stop. */
	mutex_lock(&wb_ctl_mutex);
	n = feed_ioc_feed_list(wb.engine, out, FEED_MAX_LINES);
	mutex_unlock(&wb_ctl_mutex);
	if (req.capacity && copy_to_user(u64_to_user_ptr(req.entries), out,
					 min(n, req.capacity) * sizeof(*out)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
	kfree(out);
	return rc;
}

static long wb_ioctl_sub(struct file *file, unsigned int cmd, void __user *arg)
{
	bool add = cmd == WB_IOC_SUB_ADD;
	struct wb_ioc_symbol s;
	int len, rc;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	len = feed_ioc_ticker(&s);
	if (len < 0)
		return -EINVAL;
	mutex_lock(&wb_ctl_mutex);
	wb_lock_all();
	rc = add ? feed_subscribe(wb.engine, s.ticker, len) :
		   feed_unsubscribe(wb.engine, s.ticker, len);
	wb_unlock_all();
	mutex_unlock(&wb_ctl_mutex);
	if (rc < 0)
		return feed_ioc_errno(rc);
	if (!add)
		return 0;
	s.instrument = rc;
	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long wb_ioctl_sub_list(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_list req;
	struct wb_ioc_symbol *out = NULL;
	unsigned int cap, n;
	long rc = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	/* '*' plus every instrument id: no list is longer. */
	cap = min_t(u32, req.capacity, FEED_MAX_INSTRUMENTS + 1);
	if (cap) {
		out = vzalloc(array_size(cap, sizeof(*out)));
		if (!out)
			return -ENOMEM;
	}
	/*
	 * Subscriptions change only under the mutex; '*' interning a ticker
	 * meanwhile (under a venue's lock) only adds an id the list does not
	 * show, its ticker stored before the count that names it.
	 */
	mutex_lock(&wb_ctl_mutex);
	n = feed_ioc_sub_list(wb.engine, out, cap);
	mutex_unlock(&wb_ctl_mutex);
	if (cap && copy_to_user(u64_to_user_ptr(req.entries), out,
				min(n, cap) * sizeof(*out)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
	vfree(out);
	return rc;
}

static long wb_ioctl_stats(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_stats req;
	struct wb_ioc_line_stats *lines;
	unsigned int n;
	long rc = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	lines = kvcalloc(FEED_MAX_LINES, sizeof(*lines), GFP_KERNEL);
	if (!lines)
		return -ENOMEM;
	n = wb_stats_snapshot(lines);
	wb_hook_stats_sum(&req.hook);
	if (req.capacity && copy_to_user(u64_to_user_ptr(req.lines), lines,
					 min(n, req.capacity) * sizeof(*lines)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
	kvfree(lines);
	return rc;
}

static void wb_reset_venue_counters(int venue, void *arg)
{
	feed_ioc_stats_reset_venue(wb.engine, venue);
}

/* Line counters and hook counters restart; ring counters never do (the
 * ring ABI promises readers a monotonic dropped count). */
static long wb_ioctl_stats_reset(struct file *file, unsigned int cmd, void __user *arg)
{
	unsigned int cpu;

	mutex_lock(&wb_ctl_mutex);
	wb_for_each_venue_locked(wb_reset_venue_counters, NULL);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(wb.pcpu, cpu), 0, sizeof(struct wb_hook_pcpu));
	mutex_unlock(&wb_ctl_mutex);
	return 0;
}

/* ---- gap recovery ---------------------------------------------------------------
 *
 * A group's recovery mode belongs to the file that enabled it: only that
 * file may feed it, and closing it (the client exits or dies) disables it,
 * so no stream waits for a fill nobody will send. The owners are kept
 * here, under wb_ctl_mutex.
 */
#define WB_REC_MAX_SLOTS (1u << 16)	/* recovery buffer per group: ~96 MiB at most */
#define WB_REC_LIST_MAX 4096u

struct wb_rec_owner {
	struct file *file;		/* NULL: a free entry */
	u8 venue;
	u16 channel;
};

static struct wb_rec_owner wb_rec_owners[FEED_MAX_LINES];

static struct wb_rec_owner *wb_rec_owner_of(u8 venue, u16 channel)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wb_rec_owners); i++)
		if (wb_rec_owners[i].file && wb_rec_owners[i].venue == venue &&
		    wb_rec_owners[i].channel == channel)
			return &wb_rec_owners[i];
	return NULL;
}

/* May file feed the recovery of line's group? Caller holds wb_ctl_mutex. */
static int wb_rec_may_feed(struct file *file, u16 line)
{
	const struct feed_line *l;
	struct wb_rec_owner *o;

	if (line >= FEED_MAX_LINES)
		return -EINVAL;
	l = &wb.engine->lines[line];
	if (!feed_line_in_use(l))
		return -ENOENT;
	o = wb_rec_owner_of(l->venue, l->channel);
	return o && o->file == file ? 0 : -EPERM;
}

/* Caller holds wb_ctl_mutex; never a venue's lock (the engine allocates). */
static void wb_rec_disable(struct wb_rec_owner *o)
{
	int rc;

	/*
	 * The engine takes the venue's lock itself, with a time given before
	 * it; the unlock stamps the events again with one taken under the
	 * lock. The wall clock given here still dates the day (a venue's
	 * first packets may be among those held).
	 */
	wb.ctl_restamp = true;
	rc = feed_recovery_disable(wb.engine, o->venue, o->channel, ktime_get_real_ns(),
				   &wb_ctl_ring()->prod);
	wb.ctl_restamp = false;
	if (rc < 0 && rc != -FEED_ENOENT)
		pr_warn("could not take %s/%u out of recovery mode (error %d): its holes wait "
			"until its recovery buffer fills\n", feed_venue_name(o->venue), o->channel, rc);
	o->file = NULL;
}

static long wb_ioctl_rec_enable(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_rec_enable r;
	struct wb_rec_owner *o;
	bool claimed = false;
	unsigned int i;
	int rc;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.slots > WB_REC_MAX_SLOTS)
		return -EINVAL;
	mutex_lock(&wb_ctl_mutex);
	o = wb_rec_owner_of(r.venue, r.channel);
	if (o && o->file != file) {
		rc = -EBUSY;	/* another client recovers this group */
		goto out;
	}
	for (i = 0; !o && i < ARRAY_SIZE(wb_rec_owners); i++) {
		if (!wb_rec_owners[i].file) {
			o = &wb_rec_owners[i];
			o->file = file;
			o->venue = r.venue;
			o->channel = r.channel;
			claimed = true;
		}
	}
	if (!o) {
		rc = -ENOSPC;
		goto out;
	}
	rc = feed_ioc_errno(feed_ioc_rec_enable(wb.engine, &r));
	if (rc && claimed)
		o->file = NULL;
out:
	mutex_unlock(&wb_ctl_mutex);
	return rc;
}

struct wb_rec_listing {
	struct feed_recovery_stream *list;
	unsigned int cap;
	bool all;
	int n;
};

static void wb_rec_list_venue(int venue, void *arg)
{
	struct wb_rec_listing *l = arg;
	unsigned int at = min_t(unsigned int, l->n, l->cap);

	l->n += feed_recovery_list_venue(wb.engine, venue, l->list + at, l->cap - at, l->all);
}

static long wb_ioctl_rec_list(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_rec_list req;
	struct wb_rec_listing l = { 0 };
	struct feed_recovery_stream *list;
	struct wb_ioc_rec_stream *out;
	unsigned int cap, i;
	long rc = 0;
	int n;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (feed_ioc_rec_list_check(&req) < 0)
		return -EINVAL;
	cap = min(req.capacity, WB_REC_LIST_MAX);
	list = kvcalloc(max(cap, 1u), sizeof(*list), GFP_KERNEL);
	out = kvcalloc(max(cap, 1u), sizeof(*out), GFP_KERNEL);
	if (!list || !out) {
		rc = -ENOMEM;
		goto out;
	}
	/*
	 * The changes count first, each venue's streams after, under its lock:
	 * a change the list misses moves the count the caller compares next.
	 */
	l.list = list;
	l.cap = cap;
	l.all = req.all;
	mutex_lock(&wb_ctl_mutex);
	req.changes = wb_load_relaxed(&wb.engine->recovery_changes);
	wb_for_each_venue_locked(wb_rec_list_venue, &l);
	mutex_unlock(&wb_ctl_mutex);
	n = l.n;
	for (i = 0; i < min_t(unsigned int, n, cap); i++)
		feed_ioc_rec_stream(&list[i], &out[i]);
	if (cap && copy_to_user(u64_to_user_ptr(req.entries), out,
				min_t(unsigned int, n, cap) * sizeof(*out)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
out:
	kvfree(list);
	kvfree(out);
	return rc;
}

/* A payload from user space (len checked by the caller): kmalloc'd, or an ERR_PTR. */
static u8 *wb_rec_payload(u64 data, u32 len)
{
	return len ? memdup_user(u64_to_user_ptr(data), len) : NULL;
}

/*
 * The engine calls that feed a recovery: under the ctl mutex (the control
 * ring's one producer) and the lock of the line's venue, stamped in its
 * decode order.
 */
static long wb_ioctl_rec_feed(struct file *file, unsigned int cmd, void __user *arg)
{
	union {
		struct wb_ioc_rec_packet packet;
		struct wb_ioc_rec_lost lost;
		struct wb_ioc_rec_snapshot snapshot;
	} r;
	struct wb_ring *ring = wb_ctl_ring();
	struct wb_ring_producer *prod = &ring->prod;
	u8 *payload = NULL;
	bool wake;
	u16 line;
	int rc, venue;

	if (copy_from_user(&r, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	switch (cmd) {
	case WB_IOC_REC_PACKET:
		if (feed_ioc_rec_packet_check(&r.packet) < 0)
			return -EINVAL;
		payload = wb_rec_payload(r.packet.data, r.packet.len);
		line = r.packet.line;
		break;
	case WB_IOC_REC_SNAPSHOT:
		if (feed_ioc_rec_snapshot_check(&r.snapshot) < 0)
			return -EINVAL;
		payload = wb_rec_payload(r.snapshot.data, r.snapshot.len);
		line = r.snapshot.line;
		break;
	default:
		line = r.lost.line;
		break;
	}
	if (IS_ERR(payload))
		return PTR_ERR(payload);
	mutex_lock(&wb_ctl_mutex);
	rc = wb_rec_may_feed(file, line);
	if (!rc) {
		/* The map cannot change under the mutex: the line stays the venue's. */
		venue = wb.engine->lines[line].venue;
		wb_venue_lock(venue);
		if (cmd == WB_IOC_REC_PACKET)
			rc = feed_ioc_rec_packet(wb.engine, &r.packet, payload,
						 wb_next_recv_ts(venue, ring), prod);
		else if (cmd == WB_IOC_REC_SNAPSHOT)
			rc = feed_ioc_rec_snapshot(wb.engine, &r.snapshot, payload,
						   wb_next_recv_ts(venue, ring), prod);
		else
			rc = feed_ioc_rec_lost(wb.engine, &r.lost, wb_next_recv_ts(venue, ring), prod);
		wake = wb_ring_producer_publish(prod);
		wb_venue_unlock(venue);
		if (wake)
			wake_up_interruptible(&wb.readers);
		rc = feed_ioc_errno(rc);
	}
	mutex_unlock(&wb_ctl_mutex);
	kfree(payload);
	return rc;
}

/* The file's recovery groups go back to reporting gaps. */
static int wb_release(struct inode *inode, struct file *file)
{
	unsigned int i;

	mutex_lock(&wb_ctl_mutex);
	for (i = 0; i < ARRAY_SIZE(wb_rec_owners); i++)
		if (wb_rec_owners[i].file == file)
			wb_rec_disable(&wb_rec_owners[i]);
	mutex_unlock(&wb_ctl_mutex);
	return 0;
}

static long wb_ioctl_version(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_version v = {
		.ctl_version = WB_CTL_VERSION,
		.abi_version = WB_ABI_VERSION,
		.ring_count = wb.ring_count,
	};

	return copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long wb_ioctl_ring_info(struct file *file, unsigned int cmd, void __user *arg)
{
	struct wb_ioc_ring_info ri = {
		.ring_count = wb.ring_count,
		.slot_count = wb.ring_slots,
		.slot_size = sizeof(struct wb_event),
		.page_size = WB_RING_PAGE,
		.ring_bytes = wb.ring_bytes,
		.mmap_stride = wb.ring_stride,
	};

	return copy_to_user(arg, &ri, sizeof(ri)) ? -EFAULT : 0;
}

/*
 * The ioctls, one row each (the DRM way): a command is served only by the
 * row its number indexes and only when it is that row's whole command
 * (direction and size too), so a command with no row is -ENOTTY, never
 * another's handler.
 */
#define WB_IOCTL_WRITE	0x1	/* changes state: needs the file opened for writing */

struct wb_ioctl_desc {
	unsigned int cmd;
	unsigned int flags;
	long (*func)(struct file *file, unsigned int cmd, void __user *arg);
};

#define WB_IOCTL_DEF(ioctl, _func, _flags) \
	[_IOC_NR(ioctl)] = { .cmd = ioctl, .func = _func, .flags = _flags }

static const struct wb_ioctl_desc wb_ioctls[] = {
	WB_IOCTL_DEF(WB_IOC_VERSION, wb_ioctl_version, 0),
	WB_IOCTL_DEF(WB_IOC_RING_INFO, wb_ioctl_ring_info, 0),
	WB_IOCTL_DEF(WB_IOC_FEED_ADD, wb_ioctl_feed_add, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_FEED_DEL, wb_ioctl_feed_del, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_FEED_LIST, wb_ioctl_feed_list, 0),
	WB_IOCTL_DEF(WB_IOC_SUB_ADD, wb_ioctl_sub, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_SUB_DEL, wb_ioctl_sub, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_SUB_LIST, wb_ioctl_sub_list, 0),
	WB_IOCTL_DEF(WB_IOC_STATS, wb_ioctl_stats, 0),
	WB_IOCTL_DEF(WB_IOC_STATS_RESET, wb_ioctl_stats_reset, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_TRADING_DATE, wb_ioctl_trading_date, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_REC_ENABLE, wb_ioctl_rec_enable, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_REC_LIST, wb_ioctl_rec_list, 0),
	WB_IOCTL_DEF(WB_IOC_REC_PACKET, wb_ioctl_rec_feed, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_REC_LOST, wb_ioctl_rec_feed, WB_IOCTL_WRITE),
	WB_IOCTL_DEF(WB_IOC_REC_SNAPSHOT, wb_ioctl_rec_feed, WB_IOCTL_WRITE),
	/* WB_IOC_RECOVERY_LIST is wirebookd's: the module has no recovery client */
};

static long wb_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	unsigned int nr = _IOC_NR(cmd);
	const struct wb_ioctl_desc *d;

	if (_IOC_TYPE(cmd) != WB_IOC_MAGIC || nr >= ARRAY_SIZE(wb_ioctls))
		return -ENOTTY;
	d = &wb_ioctls[array_index_nospec(nr, ARRAY_SIZE(wb_ioctls))];
	if (!d->func || d->cmd != cmd)
		return -ENOTTY;
	if ((d->flags & WB_IOCTL_WRITE) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	return d->func(file, cmd, (void __user *)uarg);
}

/*
 * Ring i is at offset i * ring_stride. Only its consumer page (page 1) may
 * be mapped writable; a mapping touching the producer page or the slots is
 * read-only for good (VM_MAYWRITE cleared, so mprotect cannot undo it).
 */
static int wb_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long stride_pages = wb.ring_stride >> PAGE_SHIFT;
	unsigned long pages = vma_pages(vma);
	unsigned long ring = vma->vm_pgoff / stride_pages;
	unsigned long first = vma->vm_pgoff % stride_pages;
	bool read_only_part = first == 0 || first + pages > 2;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (ring >= wb.ring_count || !pages || pages > stride_pages - first)
		return -EINVAL;
	if (read_only_part) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		wb_vma_set(vma, 0, VM_MAYWRITE);
	}
	return remap_vmalloc_range(vma, wb.rings[ring].mem, first);
}

static __poll_t wb_poll(struct file *file, poll_table *wait)
{
	unsigned int i;

	poll_wait(file, &wb.readers, wait);
	for (i = 0; i < wb.ring_count; i++) {
		const struct wb_ring_prod_page *pp = wb.rings[i].mem;
		const struct wb_ring_cons_page *cp = wb.rings[i].mem + WB_RING_PAGE;

		/* The tail is user-written: only used to answer "readable?". */
		if (smp_load_acquire(&pp->head) != READ_ONCE(cp->tail))
			return EPOLLIN | EPOLLRDNORM;
	}
	return 0;
}

static const struct file_operations wb_fops = {
	.owner = THIS_MODULE,
	.release = wb_release,
	.unlocked_ioctl = wb_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = wb_mmap,
	.poll = wb_poll,
	.llseek = noop_llseek,
};

static struct miscdevice wb_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "wirebook",
	.fops = &wb_fops,
	.mode = 0640,
};

int wb_dev_init(void)
{
	int rc = misc_register(&wb_misc);

	if (rc)
		pr_err("cannot register /dev/wirebook: %d\n", rc);
	return rc;
}

void wb_dev_exit(void)
{
	misc_deregister(&wb_misc);
}
