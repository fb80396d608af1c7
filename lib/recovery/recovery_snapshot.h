/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Late join and resync by snapshot, for the recovery client (recovery.c):
 * a recovery.conf line of service "glimpse" gives an ITCH stream a GLIMPSE
 * 5.0 service over SoupBinTCP 4.0, one of service "utpsnap" a UQDF stream
 * the UTP Snap-Shot service (SoupBinTCP too), beside or instead of its
 * gap-fill one. The two differ only in their protocol and in the message
 * that ends the snapshot (End of Snapshot, Snap-Shot message).
 *
 * The policy: a stream's recovery is taken by snapshot rather than by gap
 * fill when it is the stream's first (a late join or a restart: its first
 * packet was not the day's first sequence), when the hole is larger than
 * max-gap messages, when it is still open after max-age ms, or when the
 * stream has no gap-fill service. Otherwise gap fill goes on as before.
 *
 * The session: connect, Login Request (user, password, blank session,
 * sequence 1), Sequenced Data messages into feed_snapshot_packet (packed
 * as MoldUDP64 blocks, the ITCH and UQDF decoders' snapshot framing), the
 * end message's sequence into feed_snapshot_end, then Logout Request. Heartbeats both
 * ways. A refused login, a connection that fails, stalls (nothing for
 * timeout ms) or hangs up is counted and retried with a backoff doubling
 * up to 1 s; one that broke after snapshot messages were applied is first
 * aborted (feed_snapshot_abort). The stream stays stale meanwhile; other
 * streams never wait for it. After retries failed attempts (default 10)
 * the snapshot is given up: the stream goes on with a GAP. Everything runs on the engine's thread and
 * never blocks.
 */
#ifndef WIREBOOK_RECOVERY_RECOVERY_SNAPSHOT_H
#define WIREBOOK_RECOVERY_RECOVERY_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recovery/recovery.h"
#include "recovery/recovery_session.h"

struct snapshot_session;

struct snapshot_session *snapshot_session_create(const struct recovery_target *t,
						 const struct recovery_conf_entry *conf);
void snapshot_session_destroy(struct snapshot_session *ss);

/*
 * A recovery of the stream the session serves, as the client sees it on
 * the engine's list (began: when the client first saw it). Returns true
 * when the snapshot takes it (the gap-fill service leaves it alone).
 * has_gap_fill: the stream also has a gap-fill service.
 */
bool snapshot_session_drive(struct snapshot_session *ss, const struct feed_recovery_stream *rs,
			    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
			    struct wb_ring_producer *out);

/* The session's socket work: connect, log in, read, heartbeats, deadlines. */
void snapshot_session_poll(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
			   struct wb_ring_producer *out);

/* Snapshots given up so far (a recovery that saw one is no fill). */
uint64_t snapshot_session_given_up(const struct snapshot_session *ss);

/* A snapshot is wanted or under way: the stream is stale. */
bool snapshot_session_busy(const struct snapshot_session *ss);

struct snapshot_totals {
	struct rsess_counts c;	/* last_ns, max_ns: from the decision to the End of Snapshot */
	bool busy, up;
	uint64_t busy_for_ns;
};
void snapshot_session_totals(const struct snapshot_session *ss, uint64_t now,
			     struct snapshot_totals *t);
void snapshot_session_print(const struct snapshot_session *ss, uint64_t now, FILE *f);

#endif /* WIREBOOK_RECOVERY_RECOVERY_SNAPSHOT_H */
