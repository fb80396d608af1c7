/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The publisher's shadow of the origin's books, for its book snapshots
 * (nats_snapshot.h). The builder's books change while it runs and belong
 * to its threads; the publisher thread reads every event they applied,
 * in their order, anyway: it applies them again to books of its own (the
 * same venue books, lib/book) and keeps beside them what the Super-Book
 * and the SIP view hold that no resting order says (trade totals and the
 * last trade, gap counts and marks, the last status of each venue, the
 * SIP's last quote per participant, NBBO, band and statuses). A snapshot
 * made from it stands exactly for the events applied so far, with no
 * lock and nothing asked of the path.
 *
 * What it does not carry: an order's MPID (order detail), the SIP view's
 * update and quote counts (the SIP view state checksum, not the count
 * one, equals the origin's after a load).
 */
#ifndef WIREBOOK_NET_NATS_SHADOW_H
#define WIREBOOK_NET_NATS_SHADOW_H

#include <stdint.h>
#include "net/nats_snapshot.h"
#include "wirebook/event.h"

struct nats_shadow;

/* max_instruments: the builder's (ids are below it). NULL: out of memory. */
struct nats_shadow *nats_shadow_create(uint32_t max_instruments);
void nats_shadow_destroy(struct nats_shadow *sh);
void nats_shadow_apply(struct nats_shadow *sh, const struct wb_event *ev);
/* The records that rebuild the books from empty, appended to w; taken_ns
 * stamps the events that have no time of their own (the resting orders). */
void nats_shadow_snapshot(const struct nats_shadow *sh, struct nats_snap_writer *w,
			  uint64_t taken_ns);

#endif /* WIREBOOK_NET_NATS_SHADOW_H */
