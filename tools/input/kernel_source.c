/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd's glue over the event API (include/wirebook/events.h): the
 * module's rings copied into the daemon's ring, or read in place by
 * builder thread 1.
 */
#include "book/builder.h"
#include "input/kernel_source.h"
#include "input/source.h"

#include <stdio.h>
#include <stdlib.h>

static void update_counters(struct source *s, struct wb_events *ev)
{
	struct wb_event_counts c;

	wb_events_counts(ev, &c);
	wb_store_relaxed(&s->ctr.packets, c.delivered);	/* events, for this source */
	wb_store_relaxed(&s->ctr.kernel_drops, c.dropped);
}

/* ---- wirebookd source ------------------------------------------------------ */

#define KSRC_EVENTS_PER_BUDGET 64

static int ksrc_open(struct source *s, const struct source_options *opt)
{
	int err;
	struct wb_events *ev = wb_events_open(opt->path, &err);

	if (!ev) {
		snprintf(s->err, sizeof(s->err), "%s: %s", opt->path ? opt->path : WB_DEVICE_PATH,
			 wb_strerror(err));
		return -1;
	}
	s->priv = ev;
	return 0;
}

static int ksrc_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		     unsigned budget)
{
	struct wb_events *evs = s->priv;
	uint64_t n = 0, max = (uint64_t)budget * KSRC_EVENTS_PER_BUDGET;

	(void)e;
	while (n < max) {
		struct wb_event *slot = wb_ring_producer_slot(out);
		const struct wb_event *ev;

		/* A slot first, then one event: what is peeked is always copied. */
		if (!slot)
			break;	/* the builder is behind: leave the rest in the module's rings */
		if (!wb_events_peek(evs, &ev, 1))
			break;
		*slot = *ev;
		wb_ring_producer_commit(out);
		if (++n % KSRC_EVENTS_PER_BUDGET == 0)
			wb_events_release(evs);	/* hand slots back as we go */
	}
	wb_events_release(evs);
	update_counters(s, evs);
	return n ? SOURCE_MORE : SOURCE_IDLE;
}

static void ksrc_close(struct source *s)
{
	wb_events_close(s->priv);
	s->priv = NULL;
}

/* ---- builder thread 1 reading the rings in place ----------------------------- */

static uint64_t kbuild_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct source *s = ctx;
	unsigned n = wb_events_peek(s->priv, evs, max > 65536 ? 65536 : (unsigned)max);

	/* events, for this source; counted here, off the rings' cache lines */
	wb_store_relaxed(&s->ctr.packets, s->ctr.packets + n);
	return n;
}

static void kbuild_release(void *ctx)
{
	struct source *s = ctx;

	wb_events_release(s->priv);
}

static uint64_t kbuild_dropped(void *ctx)
{
	struct source *s = ctx;

	update_counters(s, s->priv);
	return s->ctr.kernel_drops;
}

/* At most this long in the kernel at a time, so a stop is noticed. */
#define KBUILD_WAIT_MS 100

/* Asleep in poll() on the device until the module writes into an empty
 * ring (it wakes only a reader that flagged it sleeps). */
static void kbuild_wait(void *ctx)
{
	struct source *s = ctx;

	(void)wb_events_wait(s->priv, KBUILD_WAIT_MS);
}

void wb_kernel_source_builder(struct source *s, struct builder_source *out)
{
	*out = (struct builder_source){
		.peek = kbuild_peek, .release = kbuild_release, .dropped = kbuild_dropped,
		.wait = kbuild_wait, .ctx = s,
	};
}

const struct source_ops source_kernel_ops = {
	.name = "kernel",
	.open = ksrc_open,
	.pump = ksrc_pump,
	.close = ksrc_close,
};
