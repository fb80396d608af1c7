/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A Prometheus endpoint: a small HTTP/1.0 server on its own thread that
 * answers GET /metrics with whatever the render callback writes, in the
 * Prometheus text exposition format (version 0.0.4). Reads of the
 * counters it renders are relaxed loads of words other threads write:
 * each value is whole, a scrape is not one instant.
 *
 * The rest of this header renders wirebook's counters, shared by
 * wirebookd's user-space and kernel modes: the same names, so dashboards
 * do not care which producer runs.
 */
#ifndef WIREBOOK_TOOLS_METRICS_H
#define WIREBOOK_TOOLS_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "wirebook/ioctl.h"
#include "shm/shm_layout.h"
#include "wirebook/ring.h"

struct metrics_server;

typedef void (*metrics_render_fn)(void *ctx, FILE *out);

/*
 * Listen on ADDR:PORT (IPv4 address, "localhost", or "*" / empty for every
 * address; PORT 0: any free port) and serve from a thread. NULL with a
 * message in err when the address is bad or taken.
 */
struct metrics_server *metrics_start(const char *addr_port, metrics_render_fn render, void *ctx,
				     char *err, size_t errlen);
/* "127.0.0.1:9464": where it listens (the port chosen for 0). */
const char *metrics_address(const struct metrics_server *m);
void metrics_stop(struct metrics_server *m);


/* ---- renderers ----------------------------------------------------------- */

/* HELP and TYPE lines, then samples: one family at a time. */
void metrics_family(FILE *f, const char *name, const char *type, const char *help);

/* Per feed line (labels line, venue, protocol, group) and per venue's
 * sequenced stream (lines of a venue share sequencing); with kernel set,
 * the module's hook counters too. */
void metrics_render_lines(FILE *f, const struct wb_ioc_stats *st,
			  const struct wb_ioc_line_stats *lines, uint32_t n, int kernel);
/* The event ring's producer counters. */
void metrics_render_ring(FILE *f, const struct wb_ring_prod_page *ring);
/* The published book: health, heartbeat age, per-venue data age and gaps. */
void metrics_render_book(FILE *f, const struct wb_shm_header *h);

/*
 * Gap recovery per stream (labels venue, channel, unit) from the book's
 * recovery table (nothing when wirebookd runs without --recovery), and the
 * SIP view's CQS gaps and the symbols they marked stale.
 */
void metrics_render_recovery(FILE *f, const struct wb_shm_header *h);

#endif /* WIREBOOK_TOOLS_METRICS_H */
