/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Consumer of the module's per-CPU rings, merged in decode order.
 *
 * Why the two-pass refresh: the module publishes each packet's events on
 * the ring of the CPU that received it, under one engine lock, and stamps
 * recv_ts strictly increasing in lock order. An event seen on ring A with
 * recv_ts t means every event with a smaller recv_ts was published before
 * it (the lock orders the publishes), but the reader may have looked at
 * ring B's head just before B published. So the reader reads every head
 * twice: an event visible in the first pass has all its predecessors
 * visible in the second, and only first-pass events are handed out, in
 * recv_ts order against everything visible in the second pass.
 */
#include "book/builder.h"
#include "common/kernel_source.h"
#include "common/source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KSRC_RELEASE_BATCH 64

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static void unmap_all(struct wb_kernel_source *ks)
{
	uint32_t i;

	for (i = 0; ks->maps && i < ks->ring_count; i++)
		if (ks->maps[i] && ks->maps[i] != MAP_FAILED)
			munmap(ks->maps[i], ks->info.ring_bytes);
	free(ks->maps);
	free(ks->cons);
	free(ks->limit);
	free(ks->pending);
	ks->maps = NULL;
	ks->cons = NULL;
	ks->limit = NULL;
	ks->pending = NULL;
}

/* Producer page and slots read-only, consumer page read-write over it. */
static void *map_ring(int fd, const struct wb_ioc_ring_info *info, uint32_t i)
{
	off_t off = (off_t)info->mmap_stride * i;
	void *base = mmap(NULL, info->ring_bytes, PROT_READ, MAP_SHARED, fd, off);

	if (base == MAP_FAILED)
		return MAP_FAILED;
	if (mmap((char *)base + WB_RING_PAGE, WB_RING_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, off + WB_RING_PAGE) == MAP_FAILED) {
		int saved = errno;

		munmap(base, info->ring_bytes);
		errno = saved;
		return MAP_FAILED;
	}
	return base;
}

int wb_kernel_source_open(struct wb_kernel_source *ks, const char *path, char *err,
			  size_t errlen)
{
	struct wb_ioc_version ver;
	uint32_t i;

	memset(ks, 0, sizeof(*ks));
	if (!path)
		path = WB_DEVICE_PATH;
	ks->fd = open(path, O_RDWR | O_CLOEXEC);
	if (ks->fd < 0)
		return fail(err, errlen, "%s: %s (is the wirebook module loaded, and may you "
			    "open it read-write?)", path, strerror(errno));
	memset(&ver, 0, sizeof(ver));
	if (ioctl(ks->fd, WB_IOC_VERSION, &ver) < 0) {
		fail(err, errlen, "%s: version ioctl: %s (not a wirebook device?)", path,
		     strerror(errno));
		goto out_close;
	}
	if (ver.ctl_version != WB_CTL_VERSION || ver.abi_version != WB_ABI_VERSION) {
		fail(err, errlen, "%s: module speaks control v%u / event ABI v%u, this tool "
		     "v%u / v%u: rebuild one of them", path, ver.ctl_version, ver.abi_version,
		     WB_CTL_VERSION, WB_ABI_VERSION);
		goto out_close;
	}
	if (ioctl(ks->fd, WB_IOC_RING_INFO, &ks->info) < 0) {
		fail(err, errlen, "%s: ring info ioctl: %s", path, strerror(errno));
		goto out_close;
	}
	if (!ks->info.ring_count || ks->info.ring_count > WB_KSRC_MAX_RINGS ||
	    ks->info.page_size != WB_RING_PAGE ||
	    ks->info.ring_bytes != wb_ring_bytes(ks->info.slot_count) ||
	    ks->info.mmap_stride < ks->info.ring_bytes) {
		fail(err, errlen, "%s: implausible ring geometry (%u rings of %u slots)", path,
		     ks->info.ring_count, ks->info.slot_count);
		goto out_close;
	}
	ks->ring_count = ks->info.ring_count;
	ks->maps = calloc(ks->ring_count, sizeof(*ks->maps));
	ks->cons = calloc(ks->ring_count, sizeof(*ks->cons));
	ks->limit = calloc(ks->ring_count, sizeof(*ks->limit));
	ks->pending = calloc(ks->ring_count, sizeof(*ks->pending));
	if (!ks->maps || !ks->cons || !ks->limit || !ks->pending) {
		fail(err, errlen, "out of memory");
		goto out_unmap;
	}
	for (i = 0; i < ks->ring_count; i++) {
		int rc;

		ks->maps[i] = map_ring(ks->fd, &ks->info, i);
		if (ks->maps[i] == MAP_FAILED) {
			fail(err, errlen, "%s: mapping ring %u: %s", path, i, strerror(errno));
			goto out_unmap;
		}
		rc = wb_ring_check(ks->maps[i], ks->info.ring_bytes);
		if (rc != WB_RING_OK) {
			fail(err, errlen, "%s: ring %u fails its check (%d)", path, i, rc);
			goto out_unmap;
		}
		wb_ring_consumer_init(&ks->cons[i], ks->maps[i]);
	}
	return 0;

out_unmap:
	unmap_all(ks);
out_close:
	close(ks->fd);
	ks->fd = -1;
	return -1;
}

void wb_kernel_source_close(struct wb_kernel_source *ks)
{
	uint32_t i;

	if (ks->fd < 0)
		return;
	for (i = 0; ks->cons && i < ks->ring_count; i++)
		if (ks->pending[i])
			wb_ring_consumer_release(&ks->cons[i], ks->pending[i]);
	unmap_all(ks);
	close(ks->fd);
	ks->fd = -1;
}

static void release_pending(struct wb_kernel_source *ks, uint32_t i)
{
	if (ks->pending[i]) {
		wb_ring_consumer_release(&ks->cons[i], ks->pending[i]);
		ks->pending[i] = 0;
	}
}

/* Unread events of ring i as of its last head read. */
static uint64_t visible(const struct wb_kernel_source *ks, uint32_t i)
{
	const struct wb_ring_consumer *c = &ks->cons[i];
	uint64_t n = c->cached_head - c->tail;

	/* The producer never runs more than a ring ahead; a larger value can
	 * only come from a consumer page scribbled on by someone else. */
	if (n > c->mask + 1)
		n = c->mask + 1;
	return n > ks->pending[i] ? n - ks->pending[i] : 0;
}

/* Read every head twice (see the top of the file); slots handed out stay held. */
static void refresh_heads(struct wb_kernel_source *ks)
{
	uint32_t i;

	for (i = 0; i < ks->ring_count; i++) {
		ks->cons[i].cached_head = wb_load_acquire(&ks->cons[i].prod->head);
		ks->limit[i] = visible(ks, i);
	}
	for (i = 0; i < ks->ring_count; i++)
		ks->cons[i].cached_head = wb_load_acquire(&ks->cons[i].prod->head);
}

static void refresh(struct wb_kernel_source *ks)
{
	uint32_t i;

	for (i = 0; i < ks->ring_count; i++)
		release_pending(ks, i);
	refresh_heads(ks);
}

/* The ring whose next visible event has the smallest recv_ts, or -1. */
static int64_t earliest_ring(const struct wb_kernel_source *ks)
{
	int64_t best = -1;
	uint64_t best_ts = 0;
	uint32_t i;

	for (i = 0; i < ks->ring_count; i++) {
		const struct wb_event *ev;

		if (!visible(ks, i))
			continue;
		ev = wb_ring_consumer_at(&ks->cons[i], ks->pending[i]);
		if (best < 0 || ev->recv_ts < best_ts) {
			best = i;
			best_ts = ev->recv_ts;
		}
	}
	return best;
}

const struct wb_event *wb_kernel_source_next(struct wb_kernel_source *ks)
{
	int attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		int64_t r = earliest_ring(ks);

		if (r >= 0 && ks->limit[r]) {
			struct wb_ring_consumer *c = &ks->cons[r];

			ks->current = *wb_ring_consumer_at(c, ks->pending[r]);
			ks->limit[r]--;
			if (++ks->pending[r] >= KSRC_RELEASE_BATCH)
				release_pending(ks, (uint32_t)r);
			ks->delivered++;
			return &ks->current;
		}
		refresh(ks);
	}
	return NULL;
}

uint64_t wb_kernel_source_peek(struct wb_kernel_source *ks, const struct wb_event **evs, uint64_t max)
{
	uint64_t n = 0;
	int refreshed = 0;

	while (n < max) {
		int64_t r = earliest_ring(ks);

		if (r >= 0 && ks->limit[r]) {
			/* The slot stays the consumer's until the release: no copy. */
			evs[n++] = wb_ring_consumer_at(&ks->cons[r], ks->pending[r]++);
			ks->limit[r]--;
			continue;
		}
		if (refreshed)
			break;
		refresh_heads(ks);
		refreshed = 1;
	}
	ks->delivered += n;
	return n;
}

void wb_kernel_source_release(struct wb_kernel_source *ks)
{
	for (uint32_t i = 0; i < ks->ring_count; i++)
		release_pending(ks, i);
}

int wb_kernel_source_wait(struct wb_kernel_source *ks, int timeout_ms)
{
	struct pollfd pfd = { .fd = ks->fd, .events = POLLIN };
	uint32_t i;
	int ready = 0, rc;

	for (i = 0; i < ks->ring_count; i++) {
		release_pending(ks, i);
		if (wb_ring_consumer_prepare_sleep(&ks->cons[i]))
			ready = 1;
	}
	if (!ready) {
		rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno != EINTR)
			ready = -1;
		else
			ready = rc > 0;
	}
	for (i = 0; i < ks->ring_count; i++)
		wb_ring_consumer_woke(&ks->cons[i]);
	return ready;
}

uint64_t wb_kernel_source_dropped(const struct wb_kernel_source *ks)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < ks->ring_count; i++)
		n += wb_ring_consumer_dropped(&ks->cons[i]);
	return n;
}

uint64_t wb_kernel_source_published(const struct wb_kernel_source *ks)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < ks->ring_count; i++)
		n += wb_load_acquire(&ks->cons[i].prod->published);
	return n;
}

/* ---- wirebookd source ------------------------------------------------------ */

#define KSRC_EVENTS_PER_BUDGET 64

static int ksrc_open(struct source *s, const struct source_options *opt)
{
	struct wb_kernel_source *ks = calloc(1, sizeof(*ks));

	if (!ks) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	if (wb_kernel_source_open(ks, opt->path, s->err, sizeof(s->err))) {
		free(ks);
		return -1;
	}
	s->priv = ks;
	return 0;
}

static int ksrc_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		     unsigned budget)
{
	struct wb_kernel_source *ks = s->priv;
	uint64_t n = 0, max = (uint64_t)budget * KSRC_EVENTS_PER_BUDGET;

	(void)e;
	while (n < max) {
		struct wb_event *slot = wb_ring_producer_slot(out);
		const struct wb_event *ev;

		if (!slot)
			break;	/* the builder is behind: leave the rest in the module's rings */
		ev = wb_kernel_source_next(ks);
		if (!ev)
			break;
		*slot = *ev;
		wb_ring_producer_commit(out);
		n++;
	}
	s->ctr.packets = ks->delivered;	/* events, for this source */
	s->ctr.kernel_drops = wb_kernel_source_dropped(ks);
	return n ? SOURCE_MORE : SOURCE_IDLE;
}

static void ksrc_close(struct source *s)
{
	struct wb_kernel_source *ks = s->priv;

	if (ks) {
		wb_kernel_source_close(ks);
		free(ks);
	}
	s->priv = NULL;
}

/* ---- builder thread 1 reading the rings in place ----------------------------- */

static uint64_t kbuild_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct source *s = ctx;
	struct wb_kernel_source *ks = s->priv;
	uint64_t n = wb_kernel_source_peek(ks, evs, max);

	wb_store_relaxed(&s->ctr.packets, ks->delivered);	/* events, for this source */
	return n;
}

static void kbuild_release(void *ctx)
{
	struct source *s = ctx;

	wb_kernel_source_release(s->priv);
}

static uint64_t kbuild_dropped(void *ctx)
{
	struct source *s = ctx;
	uint64_t n = wb_kernel_source_dropped(s->priv);

	wb_store_relaxed(&s->ctr.kernel_drops, n);
	return n;
}

void wb_kernel_source_builder(struct source *s, struct builder_source *out)
{
	*out = (struct builder_source){
		.peek = kbuild_peek, .release = kbuild_release, .dropped = kbuild_dropped, .ctx = s,
	};
}

const struct source_ops source_kernel_ops = {
	.name = "kernel",
	.open = ksrc_open,
	.pump = ksrc_pump,
	.close = ksrc_close,
};
