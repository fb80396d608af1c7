/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery client's target in this process: the feed engine (recovery.h).
 * The kernel module's engine, reached through the tools' control calls, is
 * tools/common/recovery_kernel.c's.
 */
#include "recovery/recovery.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "feed/feed_ioc.h"

/* ---- this process's engine ------------------------------------------------- */

static uint32_t engine_feed_list(void *ctx, struct wb_ioc_feed *out, uint32_t cap)
{
	return feed_ioc_feed_list(ctx, out, cap);
}

static int engine_enable(void *ctx, int venue, uint16_t channel)
{
	return feed_recovery_enable(ctx, venue, channel, 0);
}

static uint32_t engine_changes(void *ctx)
{
	return ((const struct feed_engine *)ctx)->recovery_changes;
}

static int engine_list(void *ctx, struct feed_recovery_stream *out, int max, bool all)
{
	return feed_recovery_list(ctx, out, max, all);
}

static int engine_packet(void *ctx, int line, const uint8_t *payload, uint32_t len,
			 uint64_t recv_ts, struct wb_ring_producer *out)
{
	return feed_recover_packet(ctx, line, payload, len, recv_ts, out);
}

static int engine_lost(void *ctx, int line, uint8_t unit, uint64_t first, uint64_t count,
		       uint64_t now, struct wb_ring_producer *out)
{
	return feed_recover_lost(ctx, line, unit, first, count, now, out);
}

static int engine_snapshot_begin(void *ctx, int line, uint8_t unit, uint64_t now,
				 struct wb_ring_producer *out)
{
	return feed_snapshot_begin(ctx, line, unit, now, out);
}

static int engine_snapshot_packet(void *ctx, int line, uint8_t unit, const uint8_t *payload,
				  uint32_t len, uint64_t now, struct wb_ring_producer *out)
{
	return feed_snapshot_packet(ctx, line, unit, payload, len, now, out);
}

static int engine_snapshot_end(void *ctx, int line, uint8_t unit, uint64_t next_seq,
			       uint64_t now, struct wb_ring_producer *out)
{
	return feed_snapshot_end(ctx, line, unit, next_seq, now, out);
}

static int engine_snapshot_abort(void *ctx, int line, uint8_t unit, uint64_t now,
				 struct wb_ring_producer *out)
{
	return feed_snapshot_abort(ctx, line, unit, now, out);
}

void recovery_target_engine(struct recovery_target *t, struct feed_engine *e)
{
	*t = (struct recovery_target){
		.ctx = e,
		.feed_list = engine_feed_list,
		.enable = engine_enable,
		.changes = engine_changes,
		.list = engine_list,
		.recover_packet = engine_packet,
		.recover_lost = engine_lost,
		.snapshot_begin = engine_snapshot_begin,
		.snapshot_packet = engine_snapshot_packet,
		.snapshot_end = engine_snapshot_end,
		.snapshot_abort = engine_snapshot_abort,
	};
}
