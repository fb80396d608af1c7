// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/wirebook/: human- and script-readable statistics.
 *   stats  one row per feed line (the counters of struct feed_counters)
 *   rings  one row per per-CPU ring (producer page counters, reader tail)
 *   hooks  configured interfaces, how each is hooked, and hook counters
 *   recovery  one row per feed line: its gap-recovery counters (struct
 *          feed_counters rec_*; recovery itself is wirebookd's, in user
 *          space: here they stay 0 until the engine is put in recovery mode)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/rtnetlink.h>

#include "wb.h"

static struct proc_dir_entry *wb_proc_dir;

static int wb_proc_stats_show(struct seq_file *m, void *v)
{
	struct wb_ioc_line_stats *lines;
	unsigned int i, n, e;

	lines = kvcalloc(FEED_MAX_LINES, sizeof(*lines), GFP_KERNEL);
	if (!lines)
		return -ENOMEM;
	n = wb_stats_snapshot(lines);
	seq_puts(m, "line venue name address packets messages events filtered gaps "
		 "gap_messages duplicates decode_errors ring_drops gso_packets");
	for (e = 0; e < FEED_ERR_COUNT; e++)
		seq_printf(m, " %s", feed_error_name(e));
	seq_putc(m, '\n');
	for (i = 0; i < n; i++) {
		const struct wb_ioc_feed *f = &lines[i].feed;
		const struct wb_ioc_counters *c = &lines[i].counters;
		u64 errors = 0;

		for (e = 0; e < FEED_ERR_COUNT; e++)
			errors += c->errors[e];
		seq_printf(m, "%d %s %s %u.%u.%u.%u:%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   f->line, feed_venue_name(f->venue), f->name, f->ip >> 24,
			   (f->ip >> 16) & 0xff, (f->ip >> 8) & 0xff, f->ip & 0xff, f->port,
			   c->packets, c->messages, c->events, c->filtered, c->gaps,
			   c->gap_messages, c->duplicates, errors, c->ring_drops, c->gso_packets);
		for (e = 0; e < FEED_ERR_COUNT; e++)
			seq_printf(m, " %llu", c->errors[e]);
		seq_putc(m, '\n');
	}
	kvfree(lines);
	return 0;
}

struct wb_proc_rec_row {
	int line;
	u8 venue;
	char name[FEED_LINE_NAME_LEN + 1];
	u64 gaps, filled, unrecoverable, messages, lost, snapshots, buffer_full, rejected;
};

struct wb_proc_rec_rows {
	struct wb_proc_rec_row *rows;
	unsigned int n;
};

/* The rows of venue's lines, under its lock. */
static void wb_proc_rec_venue(int venue, void *arg)
{
	struct wb_proc_rec_rows *t = arg;
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		struct wb_proc_rec_row *r = &t->rows[i];
		const struct feed_counters *c = &wb.engine->lines[r->line].counters;

		if (r->venue != venue)
			continue;
		r->gaps = c->rec_gaps;
		r->filled = c->rec_filled;
		r->unrecoverable = c->rec_unrecoverable;
		r->messages = c->rec_messages;
		r->lost = c->rec_lost;
		r->snapshots = c->snapshots;
		r->buffer_full = c->rec_buffer_full;
		r->rejected = c->rec_rejected;
	}
}

static int wb_proc_recovery_show(struct seq_file *m, void *v)
{
	struct wb_proc_rec_rows t = { 0 };
	struct wb_proc_rec_row *rows;
	unsigned int i, n = 0;

	rows = kvcalloc(FEED_MAX_LINES, sizeof(*rows), GFP_KERNEL);
	if (!rows)
		return -ENOMEM;
	/* The lines under the mutex (the map stays still), each venue's
	 * counters under its lock. */
	mutex_lock(&wb_ctl_mutex);
	for (i = 0; i < wb.engine->line_count && i < FEED_MAX_LINES; i++) {
		const struct feed_line *l = &wb.engine->lines[i];
		struct wb_proc_rec_row *r = &rows[n];

		if (!feed_line_in_use(l))
			continue;
		r->line = i;
		r->venue = l->venue;
		memcpy(r->name, l->name, FEED_LINE_NAME_LEN);
		n++;
	}
	t.rows = rows;
	t.n = n;
	wb_for_each_venue_locked(wb_proc_rec_venue, &t);
	mutex_unlock(&wb_ctl_mutex);
	seq_puts(m, "line venue name rec_gaps rec_filled rec_unrecoverable rec_messages rec_lost "
		 "snapshots rec_buffer_full rec_rejected\n");
	for (i = 0; i < n; i++)
		seq_printf(m, "%d %s %s %llu %llu %llu %llu %llu %llu %llu %llu\n", rows[i].line,
			   feed_venue_name(rows[i].venue), rows[i].name, rows[i].gaps, rows[i].filled,
			   rows[i].unrecoverable, rows[i].messages, rows[i].lost, rows[i].snapshots,
			   rows[i].buffer_full, rows[i].rejected);
	kvfree(rows);
	return 0;
}

static int wb_proc_rings_show(struct seq_file *m, void *v)
{
	unsigned int i;

	seq_puts(m, "ring slots head tail published dropped batches wakeups\n");
	for (i = 0; i < wb.ring_count; i++) {
		const struct wb_ring_prod_page *pp = wb.rings[i].mem;
		const struct wb_ring_cons_page *cp = wb.rings[i].mem + WB_RING_PAGE;

		seq_printf(m, "%u %u %llu %llu %llu %llu %llu %llu\n", i, pp->slot_count,
			   READ_ONCE(pp->head), READ_ONCE(cp->tail), READ_ONCE(pp->published),
			   READ_ONCE(pp->dropped), READ_ONCE(pp->batches), READ_ONCE(pp->wakeups));
	}
	return 0;
}

static int wb_proc_hooks_show(struct seq_file *m, void *v)
{
	struct wb_ioc_hook_stats s;
	unsigned int i;

	rtnl_lock();
	for (i = 0; i < wb.hook_count; i++) {
		const struct wb_hook *h = &wb.hooks[i];

		seq_printf(m, "iface %s %s", h->name,
			   h->dev ? (h->tap ? "tap" : "rx_handler") : "not-hooked");
		if (h->error)
			seq_printf(m, " error=%d", h->error);
		seq_putc(m, '\n');
	}
	rtnl_unlock();
	wb_hook_stats_sum(&s);
	seq_printf(m, "consume %d\nfeed_frames %llu\nconsumed %llu\ngso_frames %llu\n"
		   "gso_segments %llu\ngso_undecoded %llu\noversize %llu\ncopy_errors %llu\n"
		   "hook_failures %llu\nring_published %llu\nring_dropped %llu\nring_wakeups %llu\n",
		   READ_ONCE(wb_consume), s.feed_frames, s.consumed, s.gso_frames,
		   s.gso_segments, s.gso_undecoded, s.oversize, s.copy_errors, s.hook_failures,
		   s.ring_published, s.ring_dropped, s.ring_wakeups);
	return 0;
}

int wb_proc_init(void)
{
	wb_proc_dir = proc_mkdir("wirebook", NULL);
	if (!wb_proc_dir)
		return -ENOMEM;
	if (!proc_create_single("stats", 0444, wb_proc_dir, wb_proc_stats_show) ||
	    !proc_create_single("rings", 0444, wb_proc_dir, wb_proc_rings_show) ||
	    !proc_create_single("hooks", 0444, wb_proc_dir, wb_proc_hooks_show) ||
	    !proc_create_single("recovery", 0444, wb_proc_dir, wb_proc_recovery_show)) {
		proc_remove(wb_proc_dir);
		wb_proc_dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

void wb_proc_exit(void)
{
	proc_remove(wb_proc_dir);
	wb_proc_dir = NULL;
}
