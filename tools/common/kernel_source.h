/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * User-space consumer of the kernel module's event rings: opens
 * /dev/wirebook, checks the control and event ABI versions, maps every
 * per-CPU ring (producer page and slots read-only, consumer page
 * read-write) and hands out events merged across the rings in the order
 * the module decoded them (recv_ts is strictly increasing across rings).
 *
 *   struct wb_kernel_source ks;
 *   char err[256];
 *   if (wb_kernel_source_open(&ks, NULL, err, sizeof err)) { puts(err); ... }
 *   for (;;) {
 *       const struct wb_event *ev = wb_kernel_source_next(&ks);
 *       if (!ev) { wb_kernel_source_wait(&ks, 100); continue; }
 *       ... use *ev (valid until the next call) ...
 *   }
 *   wb_kernel_source_close(&ks);
 */
#ifndef WIREBOOK_TOOLS_KERNEL_SOURCE_H
#define WIREBOOK_TOOLS_KERNEL_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "wirebook/ring.h"
#include "wirebook/ioctl.h"

#define WB_KSRC_MAX_RINGS 1024

struct wb_kernel_source {
	int fd;
	struct wb_ioc_ring_info info;
	uint32_t ring_count;
	void **maps;			/* ring_count mappings of info.ring_bytes */
	struct wb_ring_consumer *cons;	/* one consumer per ring */
	uint64_t *limit;		/* per ring: events safe to merge (see .c) */
	uint64_t *pending;		/* per ring: events handed out, not yet released */
	struct wb_event current;	/* the event last returned */
	uint64_t delivered;		/* events returned so far */
};

/*
 * Open and map the module's rings. path NULL means WB_DEVICE_PATH.
 * Returns 0, or -1 with a sentence in err.
 */
int wb_kernel_source_open(struct wb_kernel_source *ks, const char *path, char *err,
			  size_t errlen);
void wb_kernel_source_close(struct wb_kernel_source *ks);

/*
 * The next event in decode order, or NULL when none is ready. The pointer
 * stays valid until the next call; its ring slot is already handed back.
 */
const struct wb_event *wb_kernel_source_next(struct wb_kernel_source *ks);

/*
 * Zero-copy: up to max events in decode order, as pointers into the
 * rings' slots; returns how many (0: none ready). The slots stay held,
 * and the pointers valid, until wb_kernel_source_release(), which hands
 * back every slot peeked so far; peek again only after it. Do not mix
 * with wb_kernel_source_next() between two releases.
 */
uint64_t wb_kernel_source_peek(struct wb_kernel_source *ks, const struct wb_event **evs, uint64_t max);
void wb_kernel_source_release(struct wb_kernel_source *ks);

/*
 * Sleep until an event may be ready or timeout_ms passes (-1: forever),
 * setting each ring's sleeping flag so the module wakes this reader only
 * when it sleeps. Returns 1 when events may be ready, 0 on timeout, -1 on
 * error (errno set; EINTR is returned as 0).
 */
int wb_kernel_source_wait(struct wb_kernel_source *ks, int timeout_ms);

/*
 * The module's rings as a wirebookd packet source (tools/common/source.h):
 * pump() copies up to budget x 64 events, in decode order, into the
 * daemon's own ring (wirebookd --kernel --source-thread only; by default
 * builder thread 1 reads the rings in place, below); the feed engine argument is unused (the module
 * decoded already). opt->path is the device (NULL: WB_DEVICE_PATH). The
 * module's feed map and subscriptions are set with wb-subscribe.
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

/* Events the module dropped because a ring was full, summed over rings. */
uint64_t wb_kernel_source_dropped(const struct wb_kernel_source *ks);
/* Events the module published, summed over rings. */
uint64_t wb_kernel_source_published(const struct wb_kernel_source *ks);

#endif /* WIREBOOK_TOOLS_KERNEL_SOURCE_H */
