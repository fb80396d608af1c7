/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery client's state, shared by recovery.c (the services table's
 * driver) and the gap-fill services' files (recovery_mold.c,
 * recovery_grp.c, recovery_xdp.c). Private to lib/recovery.
 */
#ifndef WIREBOOK_RECOVERY_INTERNAL_H
#define WIREBOOK_RECOVERY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "recovery/recovery.h"
#include "recovery/recovery_services.h"

#define RECOVERY_MAX_REPLY 2048
#define RECOVERY_MAX_LIST 256
#define RECOVERY_UNITS 256	/* a PITCH unit is a byte; Mold streams are unit 0 */

/* One stream's recovery in progress (a Mold stream is unit 0). */
struct unit_rec {
	bool recovering;
	bool gave_up;		/* part of it was declared lost: no fill time */
	bool waiting;		/* a request is in flight */
	uint16_t line;		/* a line of the stream's group */
	uint32_t episode;
	uint32_t tries;		/* unanswered sends of this request */
	uint64_t began;		/* now_ns when the client first saw it */
	uint64_t since;		/* the engine's receive time of its start */
	uint64_t req_first, req_count;
	uint64_t deadline;
	uint64_t snapshots_given_up;	/* the snapshot service's count when it began */
	uint64_t answers_at_request;	/* the service's answers when the range was asked */
};

struct service {
	struct recovery_conf_entry conf;
	int fd;			/* mold: the socket to the service; grp: the gap-response one */
	int tcp;		/* grp: the session, -1 while down */
	int state;		/* grp: its session's state (recovery_grp.c) */
	uint64_t next_connect, backoff_ns, login_deadline;
	uint8_t in[512];	/* grp: what the session sent, not yet a whole frame */
	uint32_t inlen;
	int line;		/* a line of the stream's group (to name the stream) */
	bool has_line;
	int nrec;		/* units recovering */
	uint32_t held;
	struct unit_rec u[RECOVERY_UNITS];
	/* a gap-fill service's own state, when struct service's fields do not
	 * hold it (xdp: its struct xdp_client, session and retransmission channel) */
	void *session;
	/* the stream's snapshot service (glimpse, utpsnap: a session; spin: one per unit), or NULL */
	void *snap;
	const struct recovery_service *snap_service;
	/* A service silent through a range's whole schedule is down: new ranges
	 * are lost at once (a file source does not wait on it gap after gap),
	 * but for one probe request at probe_at, on the backoff. */
	bool down;
	bool said_silent;	/* its first unanswered request was named on stderr */
	uint64_t probe_at, probe_backoff_ns;
	uint64_t answers_when_down;	/* its answers when it was found down */
	int last_errno;		/* the socket's last error (mold: ECONNREFUSED), or 0 */
	/* counters */
	uint64_t requests, retries, replies, bad_replies, given_up, refused, deferred;
	uint64_t connects, disconnects, logins_refused;
	uint64_t *fill_ns;	/* every fill time, sorted when reported */
	size_t fills, fill_cap;
};

struct recovery_client {
	struct recovery_target t;
	int n;
	struct service svc[RECOVERY_MAX_SERVICES];
	uint32_t seen_changes;
	uint32_t pass;		/* bumped by every look at the engine's list */
	uint32_t seen[RECOVERY_MAX_SERVICES][RECOVERY_UNITS];	/* the pass a unit was last listed in */
	struct feed_recovery_stream list[RECOVERY_MAX_LIST];
};

static inline uint64_t recovery_ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

/* The replies waiting on s->fd, to the engine as the stream's packets (mold, grp). */
void recovery_take_replies(struct recovery_client *c, struct service *s, uint64_t recv_ts,
			   struct wb_ring_producer *out);

/* The services' clients (the table's rows point at them). */
extern const struct recovery_gap_fill_ops recovery_mold_ops;
extern const struct recovery_gap_fill_ops recovery_grp_ops;
extern const struct recovery_gap_fill_ops recovery_xdp_ops;
extern const struct recovery_snapshot_ops recovery_soup_snapshot_ops;
extern const struct recovery_snapshot_ops recovery_spin_ops;
const char *recovery_grp_conf_check(const struct recovery_conf_entry *en);
const char *recovery_xdp_conf_check(const struct recovery_conf_entry *en);
const char *recovery_spin_conf_check(const struct recovery_conf_entry *en);

#endif /* WIREBOOK_RECOVERY_INTERNAL_H */
