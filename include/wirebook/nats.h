/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The NATS counters of the wirebookd that writes a book (libwirebook 1.5):
 * its publisher's (--publish) and its source's (--source nats://...), as
 * its --stats and metrics endpoint give them. Part of book.h.
 */
#ifndef WIREBOOK_NATS_H
#define WIREBOOK_NATS_H

#include "book.h"

#ifdef __cplusplus
extern "C" {
#endif

/* struct wb_nats_stats.roles */
#define WB_NATS_PUBLISH 0x1u	/* the writer publishes to NATS (--publish) */
#define WB_NATS_SOURCE 0x2u	/* the writer's books come from NATS (--source nats://) */

/*
 * Counts are since the writer started; the writer rewrites the whole
 * block (under one seqlock) every 20 ms or so, so a set of them is one
 * moment's. Unused halves are 0.
 */
struct wb_nats_stats {
	uint32_t roles;		/* WB_NATS_*: 0 for a writer without NATS (or older) */
	uint32_t reserved0;
	uint64_t updated_ns;	/* CLOCK_REALTIME of the last rewrite */
	/* --publish */
	uint64_t pub_batches;	/* batches sent (resends not counted) */
	uint64_t pub_events;
	uint64_t pub_bytes;	/* payload bytes */
	uint64_t pub_acked;	/* batches JetStream acknowledged (the END batch too) */
	uint64_t pub_duplicates;	/* of which it held already (a resend that had arrived) */
	uint64_t pub_resent;	/* batches sent again */
	uint64_t pub_lost;	/* events never published: the backlog overflowed */
	uint64_t pub_backlog;	/* events not published yet */
	uint64_t pub_resend_waiting;	/* batches waiting to be sent again */
	uint64_t pub_in_flight;	/* batches sent, not acknowledged yet */
	uint64_t pub_disconnects;
	uint64_t pub_reconnects;
	uint32_t pub_connected;	/* 1 while connected */
	uint32_t pub_end_sent;	/* 1 once the END batch went out (the source ended) */
	/* --source nats:// */
	uint64_t src_messages;	/* messages read from JetStream */
	uint64_t src_batches;	/* batches applied */
	uint64_t src_events;	/* events applied */
	uint64_t src_bytes;	/* payload bytes read */
	uint64_t src_duplicates;	/* events applied already: skipped */
	uint64_t src_held;	/* batches received, not applied in full */
	uint64_t src_waited;	/* batches that came before an earlier event and waited */
	uint64_t src_lost;	/* events that never came (the publisher lost them) */
	uint64_t src_lag_messages;	/* stream messages not delivered yet */
	int64_t src_lag_ns;	/* now minus when the server stored the last message */
	uint64_t src_disconnects;
	uint64_t src_reconnects;
	uint32_t src_connected;	/* 1 while connected */
	uint32_t src_end_seen;	/* 1 once the publisher's END came */
	/* --publish's book snapshots (--nats-snapshot) and book subjects
	 * (--publish-books); after src_end_seen, in what was reserved. */
	uint64_t pub_snapshots;	/* snapshots stored */
	uint64_t pub_snapshot_bytes;	/* the last one's size */
	uint64_t pub_snapshot_failures;	/* attempts given up (NATS away, too slow) */
	uint64_t pub_book_messages;	/* conflated book messages sent */
	uint64_t pub_book_bytes;
	uint64_t pub_book_failed;	/* book messages the client refused */
	/* --source's start: the global event index of the book snapshot it
	 * started from (0: none, it replayed the stream from its start). */
	uint64_t src_snapshot_global;
	uint64_t reserved[1];
};

WB_STATIC_ASSERT(sizeof(struct wb_nats_stats) == 288, "wb_nats_stats layout");

/*
 * Copy the counters into out: 0, or a negative WB_E* code (WB_EINVAL,
 * WB_ESTALE when the writer is gone, WB_EBUSY when the block stayed
 * mid-update). A writer without the block (older) gives roles 0.
 */
int wb_nats_stats(const struct wb_book *book, struct wb_nats_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_NATS_H */
