/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wirebookd's NATS counters in the book; see nats_stats.h. */
#include <string.h>

#include "net/nats_source.h"
#include "net/nats_stats.h"
#include "wirebook/barrier.h"

void nats_stats_write(struct wb_shm_nats *block, struct nats_publisher *pub,
		      const struct source *src, uint64_t wall_ns)
{
	struct wb_nats_stats st;

	if (!block)
		return;
	memset(&st, 0, sizeof(st));
	if (pub) {
		struct nats_publish_counters c;

		nats_publisher_counters(pub, &c);
		st.roles |= WB_NATS_PUBLISH;
		st.pub_batches = c.batches;
		st.pub_events = c.events;
		st.pub_bytes = c.bytes;
		st.pub_acked = c.acked;
		st.pub_duplicates = c.duplicates;
		st.pub_resent = c.resent;
		st.pub_lost = c.lost;
		st.pub_backlog = c.backlog;
		st.pub_resend_waiting = c.waiting;
		st.pub_in_flight = c.inflight;
		st.pub_disconnects = c.disconnects;
		st.pub_reconnects = c.reconnects;
		st.pub_connected = (uint32_t)c.connected;
		st.pub_end_sent = (uint32_t)c.end_sent;
		st.pub_snapshots = c.snapshots;
		st.pub_snapshot_bytes = c.snapshot_bytes;
		st.pub_snapshot_failures = c.snapshot_failures;
		st.pub_book_messages = c.book_messages;
		st.pub_book_bytes = c.book_bytes;
		st.pub_book_failed = c.book_failed;
	}
	if (src)
		nats_source_stats(src, &st);
	if (!st.roles)
		return;	/* no NATS: the block stays 0s */
	st.updated_ns = wall_ns;
	/* The seqlock every record of the book has: odd while written. */
	wb_store_relaxed(&block->seq, block->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&block->stats, &st, sizeof(st));
	wb_store_release(&block->seq, block->seq + 1);
}
