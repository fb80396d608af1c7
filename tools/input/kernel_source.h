/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The kernel module's event rings as a wirebookd source. Reading the rings
 * (mapping, merging the per-CPU rings in decode order, zero-copy batches,
 * drop counters) is libwirebook's event API, include/wirebook/events.h;
 * this is only the daemon's glue over it.
 */
#ifndef WIREBOOK_TOOLS_KERNEL_SOURCE_H
#define WIREBOOK_TOOLS_KERNEL_SOURCE_H

#include "wirebook/events.h"

/*
 * The module's rings as a wirebookd packet source (tools/input/source.h):
 * pump() copies up to budget x 64 events, in decode order, into the
 * daemon's own ring (wirebookd --kernel --source-thread only; by default
 * builder thread 1 reads the rings in place, below); the feed engine
 * argument is unused (the module decoded already). opt->path is the device
 * (NULL: WB_DEVICE_PATH). The module's feed map and subscriptions are set
 * with wb-subscribe.
 */
struct source_ops;
extern const struct source_ops source_kernel_ops;

/*
 * The same rings for builder thread 1 to read in place (builder.h's
 * struct builder_source, builder_start_source): no copy into a ring of
 * the daemon's. s is a source opened with source_kernel_ops; its counters
 * (events delivered, kernel drops) keep being updated.
 */
struct source;
struct builder_source;
void wb_kernel_source_builder(struct source *s, struct builder_source *out);

#endif /* WIREBOOK_TOOLS_KERNEL_SOURCE_H */
