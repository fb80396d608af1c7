/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Late join and resync by Cboe Spin, for the recovery client (recovery.c):
 * a recovery.conf line of service "spin" gives one unit (unit=N) of a
 * PITCH venue a Spin server, beside or instead of its gap-fill (grp) one.
 * A Spin server serves one unit's book (docs/specs/cboe-spin-notes.md):
 * a venue with several units has one line per unit.
 *
 * The policy is glimpse's (recovery_snapshot.h): a unit's recovery is
 * taken by spin when it is its first (a late join or a restart), when the
 * hole is larger than max-gap messages or older than max-age ms, or when
 * the unit has no gap-fill service.
 *
 * The session: connect, Login (as GRP's), wait for Spin Image Available;
 * take one at or past the unit's first buffered real-time sequence (or,
 * after SPIN_IMAGE_PATIENCE older ones, the latest), Spin Request(S),
 * Spin Response: 'A' the spin follows; 'O' (out of range) and 'S' (a spin
 * already in progress) are counted and asked again after a backoff. The
 * unsequenced messages (Time, Add Orders, ...) go into feed_snapshot_packet;
 * Spin Finished(S) into feed_snapshot_end(S + 1). A refused login, a
 * session that fails to connect, stalls (nothing for timeout ms; the
 * server sends an image every second) or hangs up is counted and retried
 * with a backoff doubling up to 1 s, aborting (feed_snapshot_abort) what
 * was half applied; after retries failed attempts (default 10) the spin is
 * given up and the unit goes on with a GAP. Everything runs on the
 * engine's thread and never blocks; other units and streams never wait.
 */
#ifndef WIREBOOK_RECOVERY_RECOVERY_SPIN_H
#define WIREBOOK_RECOVERY_RECOVERY_SPIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recovery/recovery.h"
#include "recovery/recovery_session.h"

/* Images older than the first buffered sequence seen before the latest is taken anyway. */
#define SPIN_IMAGE_PATIENCE 3

/* A stream's Spin servers, one per unit. */
struct spin_set;

/* Adds conf's unit to *set (created on first use); -1 when out of memory. */
int spin_set_add(struct spin_set **set, const struct recovery_target *t,
		 const struct recovery_conf_entry *conf);
void spin_set_destroy(struct spin_set *set);

/* As snapshot_session_drive, for the unit of rs: false when no Spin server serves it. */
bool spin_set_drive(struct spin_set *set, const struct feed_recovery_stream *rs,
		    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
		    struct wb_ring_producer *out);

void spin_set_poll(struct spin_set *set, uint64_t now, uint64_t recv_ts,
		   struct wb_ring_producer *out);

/* Spins given up so far, all units. */
uint64_t spin_set_given_up(const struct spin_set *set);

/* A spin is wanted or under way on some unit. */
bool spin_set_busy(const struct spin_set *set);

struct spin_totals {
	struct rsess_counts c;	/* snapshots: spins; last_ns, max_ns: from the decision to the Spin Finished */
	uint64_t orders_announced, images, requests, out_of_range, in_progress, other_status;
	bool busy, up;
	uint64_t busy_for_ns;
};
/* One unit's totals (false: no server for it). */
bool spin_set_totals(const struct spin_set *set, uint8_t unit, uint64_t now,
		     struct spin_totals *t);
void spin_set_print(const struct spin_set *set, uint64_t now, FILE *f);

#endif /* WIREBOOK_RECOVERY_RECOVERY_SPIN_H */
