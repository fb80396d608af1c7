/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd's NATS counters for libwirebook's readers (wb_nats_stats,
 * include/wirebook/nats.h): the publisher's and the source's, rewritten
 * whole under the block's seqlock by wirebookd's main thread every tick.
 */
#ifndef WIREBOOK_NET_NATS_STATS_H
#define WIREBOOK_NET_NATS_STATS_H

#include <stdint.h>
#include "input/source.h"
#include "net/nats_publish.h"
#include "shm/shm_layout.h"

/* Either may be absent (NULL publisher; a source of another kind). */
void nats_stats_write(struct wb_shm_nats *block, struct nats_publisher *pub,
		      const struct source *src, uint64_t wall_ns);

#endif /* WIREBOOK_NET_NATS_STATS_H */
