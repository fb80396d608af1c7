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
#include <linux/poll.h>
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

/* Copy every used feed line with its counters; out holds FEED_MAX_LINES. */
unsigned int wb_stats_snapshot(struct wb_ioc_line_stats *out)
{
	unsigned int n;

	wb_engine_lock();
	n = feed_ioc_line_stats(wb.engine, out, FEED_MAX_LINES);
	wb_engine_unlock();
	return n;
}

static long wb_ioctl_feed_add(void __user *arg)
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

static long wb_ioctl_trading_date(void __user *arg)
{
	struct wb_ioc_date d;
	int rc;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	mutex_lock(&wb_ctl_mutex);
	wb_engine_lock();
	rc = feed_ioc_trading_date(wb.engine, &d);
	wb_engine_unlock();
	mutex_unlock(&wb_ctl_mutex);
	return feed_ioc_errno(rc);
}

static long wb_ioctl_feed_del(void __user *arg)
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

static long wb_ioctl_feed_list(void __user *arg)
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
	wb_engine_lock();
	n = feed_ioc_feed_list(wb.engine, out, FEED_MAX_LINES);
	wb_engine_unlock();
	if (req.capacity && copy_to_user(u64_to_user_ptr(req.entries), out,
					 min(n, req.capacity) * sizeof(*out)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
	kfree(out);
	return rc;
}

static long wb_ioctl_sub(void __user *arg, bool add)
{
	struct wb_ioc_symbol s;
	int len, rc;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	len = feed_ioc_ticker(&s);
	if (len < 0)
		return -EINVAL;
	mutex_lock(&wb_ctl_mutex);
	wb_engine_lock();
	rc = add ? feed_subscribe(wb.engine, s.ticker, len) :
		   feed_unsubscribe(wb.engine, s.ticker, len);
	wb_engine_unlock();
	mutex_unlock(&wb_ctl_mutex);
	if (rc < 0)
		return feed_ioc_errno(rc);
	if (!add)
		return 0;
	s.instrument = rc;
	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long wb_ioctl_sub_list(void __user *arg)
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
	wb_engine_lock();
	n = feed_ioc_sub_list(wb.engine, out, cap);
	wb_engine_unlock();
	if (cap && copy_to_user(u64_to_user_ptr(req.entries), out,
				min(n, cap) * sizeof(*out)))
		rc = -EFAULT;
	req.count = n;
	if (!rc && copy_to_user(arg, &req, sizeof(req)))
		rc = -EFAULT;
	vfree(out);
	return rc;
}

static long wb_ioctl_stats(void __user *arg)
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

/* Line counters and hook counters restart; ring counters never do (the
 * ring ABI promises readers a monotonic dropped count). */
static long wb_ioctl_stats_reset(void)
{
	unsigned int cpu;

	mutex_lock(&wb_ctl_mutex);
	wb_engine_lock();
	feed_ioc_stats_reset(wb.engine);
	wb_engine_unlock();
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(wb.pcpu, cpu), 0, sizeof(struct wb_hook_pcpu));
	mutex_unlock(&wb_ctl_mutex);
	return 0;
}

static long wb_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	void __user *arg = (void __user *)uarg;
	bool writer = file->f_mode & FMODE_WRITE;

	switch (cmd) {
	case WB_IOC_VERSION: {
		struct wb_ioc_version v = {
			.ctl_version = WB_CTL_VERSION,
			.abi_version = WB_ABI_VERSION,
			.ring_count = wb.ring_count,
		};

		return copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	case WB_IOC_RING_INFO: {
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
	case WB_IOC_FEED_LIST:
		return wb_ioctl_feed_list(arg);
	case WB_IOC_SUB_LIST:
		return wb_ioctl_sub_list(arg);
	case WB_IOC_STATS:
		return wb_ioctl_stats(arg);
	case WB_IOC_FEED_ADD:
	case WB_IOC_FEED_DEL:
	case WB_IOC_SUB_ADD:
	case WB_IOC_SUB_DEL:
	case WB_IOC_STATS_RESET:
	case WB_IOC_TRADING_DATE:
		if (!writer)
			return -EBADF;
		break;
	default:
		return -ENOTTY;
	}
	switch (cmd) {
	case WB_IOC_FEED_ADD:
		return wb_ioctl_feed_add(arg);
	case WB_IOC_FEED_DEL:
		return wb_ioctl_feed_del(arg);
	case WB_IOC_SUB_ADD:
		return wb_ioctl_sub(arg, true);
	case WB_IOC_SUB_DEL:
		return wb_ioctl_sub(arg, false);
	case WB_IOC_TRADING_DATE:
		return wb_ioctl_trading_date(arg);
	default:
		return wb_ioctl_stats_reset();
	}
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
