/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery client's target in the kernel module (recovery.h): the
 * module's engine through the WB_IOC_REC_* ioctls (include/wirebook/ioctl.h),
 * where the recovered packets are decoded and come out of the module's rings
 * in sequence with the rest. Here, not in lib/recovery, because it speaks
 * through the tools' control calls (control.h).
 */
#include "common/recovery_kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/control.h"
#include "feed/feed_ioc.h"

/* ---- the module's engine ------------------------------------------------------ */

#define KERNEL_LIST_MAX 256	/* the client asks for at most this many streams */

struct kernel_target {
	struct wb_control ctl;
	uint32_t changes;	/* as last read */
	struct wb_ioc_rec_stream buf[KERNEL_LIST_MAX];
};

/* An ioctl's -errno as the FEED_E* code the engine's callers expect. */
static int feed_code(int rc)
{
	switch (-rc) {
	case 0: return 0;
	case ENOENT: return -FEED_ENOENT;
	case ENOSPC: return -FEED_ENOSPC;
	case ENOMEM: return -FEED_ENOMEM;
	case EPROTO: return -FEED_EPROTO;
	default: return -FEED_EINVAL;
	}
}

static uint32_t kernel_feed_list(void *ctx, struct wb_ioc_feed *out, uint32_t cap)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_list req = { .capacity = cap, .entries = (uintptr_t)out };

	return wb_control_call(&k->ctl, WB_IOC_FEED_LIST, &req) < 0 ? 0 : req.count;
}

static int kernel_enable(void *ctx, int venue, uint16_t channel)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_rec_enable r = { .venue = (uint8_t)venue, .channel = channel };

	return feed_code(wb_control_call(&k->ctl, WB_IOC_REC_ENABLE, &r));
}

static uint32_t kernel_changes(void *ctx)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_rec_list req = { 0 };

	/* A failed call is no news. */
	if (wb_control_call(&k->ctl, WB_IOC_REC_LIST, &req) == 0)
		k->changes = req.changes;
	return k->changes;
}

static void from_ioc(const struct wb_ioc_rec_stream *i, struct feed_recovery_stream *o)
{
	memset(o, 0, sizeof(*o));
	o->venue = i->venue;
	o->protocol = i->protocol;
	o->unit = i->unit;
	o->state = i->state;
	o->channel = i->channel;
	o->line = i->line;
	o->episode = i->episode;
	o->held = i->held;
	o->next_seq = i->next_seq;
	o->missing_first = i->missing_first;
	o->missing_count = i->missing_count;
	o->rec_first = i->rec_first;
	o->rec_end = i->rec_end;
	o->since = i->since;
	memcpy(o->session, i->session, sizeof(o->session));
	o->has_session = i->has_session;
	o->gaps = i->gaps;
	o->filled = i->filled;
	o->unrecoverable = i->unrecoverable;
	o->messages = i->messages;
	o->lost = i->lost;
	o->snapshots = i->snapshots;
}

static int kernel_list(void *ctx, struct feed_recovery_stream *out, int max, bool all)
{
	struct kernel_target *k = ctx;
	uint32_t cap = max < 0 ? 0 : max > KERNEL_LIST_MAX ? KERNEL_LIST_MAX : (uint32_t)max;
	struct wb_ioc_rec_list req = { .capacity = cap, .entries = (uintptr_t)k->buf, .all = all };

	if (wb_control_call(&k->ctl, WB_IOC_REC_LIST, &req) < 0)
		return 0;
	for (uint32_t i = 0; i < req.count && i < cap; i++)
		from_ioc(&k->buf[i], &out[i]);
	return (int)req.count;
}

/* recv_ts and out are the module's own: it stamps and rings the events itself. */
static int kernel_packet(void *ctx, int line, const uint8_t *payload, uint32_t len,
			 uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_rec_packet r = { .line = (uint16_t)line, .len = len,
				       .data = (uintptr_t)payload };

	(void)recv_ts;
	(void)out;
	if (line < 0 || line >= FEED_MAX_LINES)
		return -FEED_ENOENT;
	return feed_code(wb_control_call(&k->ctl, WB_IOC_REC_PACKET, &r));
}

static int kernel_lost(void *ctx, int line, uint8_t unit, uint64_t first, uint64_t count,
		       uint64_t now, struct wb_ring_producer *out)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_rec_lost r = { .line = (uint16_t)line, .unit = unit, .first = first,
				     .count = count };

	(void)now;
	(void)out;
	if (line < 0 || line >= FEED_MAX_LINES)
		return -FEED_ENOENT;
	return feed_code(wb_control_call(&k->ctl, WB_IOC_REC_LOST, &r));
}

/* One snapshot step through WB_IOC_REC_SNAPSHOT (the module stamps its events itself). */
static int kernel_snapshot(void *ctx, int line, uint8_t unit, uint8_t op, const uint8_t *payload,
			   uint32_t len, uint64_t next_seq)
{
	struct kernel_target *k = ctx;
	struct wb_ioc_rec_snapshot r = { .line = (uint16_t)line, .unit = unit, .op = op,
					 .len = len, .data = (uintptr_t)payload,
					 .next_seq = next_seq };

	if (line < 0 || line >= FEED_MAX_LINES)
		return -FEED_ENOENT;
	return feed_code(wb_control_call(&k->ctl, WB_IOC_REC_SNAPSHOT, &r));
}

static int kernel_snapshot_begin(void *ctx, int line, uint8_t unit, uint64_t now,
				 struct wb_ring_producer *out)
{
	(void)now;
	(void)out;
	return kernel_snapshot(ctx, line, unit, WB_SNAPSHOT_BEGIN, NULL, 0, 0);
}

static int kernel_snapshot_packet(void *ctx, int line, uint8_t unit, const uint8_t *payload,
				  uint32_t len, uint64_t now, struct wb_ring_producer *out)
{
	(void)now;
	(void)out;
	return kernel_snapshot(ctx, line, unit, WB_SNAPSHOT_PACKET, payload, len, 0);
}

static int kernel_snapshot_end(void *ctx, int line, uint8_t unit, uint64_t next_seq,
			       uint64_t now, struct wb_ring_producer *out)
{
	(void)now;
	(void)out;
	return kernel_snapshot(ctx, line, unit, WB_SNAPSHOT_END, NULL, 0, next_seq);
}

static int kernel_snapshot_abort(void *ctx, int line, uint8_t unit, uint64_t now,
				 struct wb_ring_producer *out)
{
	(void)now;
	(void)out;
	return kernel_snapshot(ctx, line, unit, WB_SNAPSHOT_ABORT, NULL, 0, 0);
}

static void kernel_close(void *ctx)
{
	struct kernel_target *k = ctx;

	wb_control_close(&k->ctl);
	free(k);
}

int recovery_target_kernel(struct recovery_target *t, const char *device, char *err,
			   size_t errlen)
{
	struct kernel_target *k = calloc(1, sizeof(*k));

	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (wb_control_open_kernel(&k->ctl, device, true, err, errlen) < 0) {
		free(k);
		return -1;
	}
	*t = (struct recovery_target){
		.ctx = k,
		.feed_list = kernel_feed_list,
		.enable = kernel_enable,
		.changes = kernel_changes,
		.list = kernel_list,
		.recover_packet = kernel_packet,
		.recover_lost = kernel_lost,
		.snapshot_begin = kernel_snapshot_begin,
		.snapshot_packet = kernel_snapshot_packet,
		.snapshot_end = kernel_snapshot_end,
		.snapshot_abort = kernel_snapshot_abort,
		.close = kernel_close,
	};
	return 0;
}
