/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd --source nats://HOST:PORT[/STREAM]: the books built from a
 * stream another wirebookd publishes (nats_publish.h), as from any other
 * source: the events go into the event ring, the builder does the rest.
 *
 * An ordered JetStream consumer reads the stream from its first message
 * (a late or restarted source catches up from the day's start), then
 * follows it live; the client refetches from the stream whatever its
 * delivery missed. Each feed line's batches are applied in their order
 * and once: a batch ahead of its line (one resent after a NATS restart
 * is stored after later ones) waits until the batches before it come,
 * one already applied is skipped. The subject is wirebook.INSTANCE.
 * events.> of the stream that holds it, or of STREAM when named.
 * With nats_exit_at_end the source ends at the publisher's END batch
 * once every line's events came (wirebookd --exit-at-eof).
 */
#ifndef WIREBOOK_NET_NATS_SOURCE_H
#define WIREBOOK_NET_NATS_SOURCE_H

#include <stdio.h>
#include "input/source.h"

extern const struct source_ops source_nats_ops;

void nats_source_print(const struct source *s, FILE *f);
void nats_source_metrics(const struct source *s, FILE *f);
/* The source's half of libwirebook's struct wb_nats_stats (nats_stats.h). */
struct wb_nats_stats;
void nats_source_stats(const struct source *s, struct wb_nats_stats *out);

#endif /* WIREBOOK_NET_NATS_SOURCE_H */
