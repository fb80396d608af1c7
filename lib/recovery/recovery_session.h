/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The TCP session both snapshot clients share (recovery_snapshot.c:
 * GLIMPSE and UTP Snap-Shot over SoupBinTCP; recovery_spin.c: Cboe Spin):
 * the policy that takes a recovery by snapshot, the non-blocking connect
 * with its backoff, the read loop that hands whole frames to the
 * protocol, the silence timeout, heartbeats, and the begin/abort/given-up
 * bookkeeping against the recovery target. What a protocol adds is its
 * login, its heartbeat and what its frames mean (struct rsess_proto).
 */
#ifndef WIREBOOK_RECOVERY_RECOVERY_SESSION_H
#define WIREBOOK_RECOVERY_RECOVERY_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recovery/recovery.h"

#define RSESS_IN_BYTES (64 * 1024)
#define RSESS_LOGIN_BYTES 128	/* room for any protocol's login frame */
#define RSESS_HEARTBEAT_BYTES 16	/* and for its heartbeat */

/* The states every protocol has; a protocol may add its own after RSESS_UP. */
enum rsess_state {
	RSESS_IDLE,		/* nothing wanted */
	RSESS_WAIT,		/* wanted: connect at next_connect */
	RSESS_CONNECTING,
	RSESS_LOGIN_SENT,
	RSESS_UP,		/* logged in */
};

/* The counters every session keeps. */
struct rsess_counts {
	uint64_t snapshots, messages, aborted, given_up, connects, disconnects, logins_refused;
	uint64_t stalls, hangups, heartbeats_sent, heartbeats_received, bad_packets;
	uint64_t last_ns, max_ns;	/* from the decision to the snapshot's end */
};

struct rsess;

/* A frame's result, beside its length (> 0) and 0 (not whole yet). */
#define RSESS_FRAME_BAD (-1)	/* malformed: counted, the attempt fails */
#define RSESS_FRAME_STOP (-2)	/* the session ended or failed with it: stop reading */

struct rsess_proto {
	/* The login frame into buf (RSESS_LOGIN_BYTES); its length. */
	size_t (*login)(uint8_t *buf, const struct recovery_conf_entry *conf);
	/* A heartbeat frame into buf (RSESS_HEARTBEAT_BYTES); its length. */
	size_t (*heartbeat)(uint8_t *buf);
	uint64_t heartbeat_period_ms;
	bool count_heartbeats;	/* heartbeats sent count in heartbeats_sent */
	/* The first whole frame of p, if any: its length, 0 or RSESS_FRAME_*. */
	long (*frame)(struct rsess *s, const uint8_t *p, size_t len, uint64_t now,
		      uint64_t recv_ts, struct wb_ring_producer *out);
	/* Optional: a recovery is begun (before snapshot_begin). */
	void (*begin)(struct rsess *s, const struct feed_recovery_stream *rs);
};

struct rsess {
	const struct recovery_target *target;
	const struct rsess_proto *proto;
	struct recovery_conf_entry conf;
	int state;
	int fd;
	/* the stream (unit) being snapshotted */
	int line;
	uint8_t unit;
	bool begun;		/* feed_snapshot_begin was called for the current attempt */
	uint32_t applied;	/* snapshot messages applied in the current attempt */
	uint32_t episode;	/* the engine's recovery episode of the current snapshot */
	uint32_t done_episode;	/* the episode a snapshot ended: its rest is gap fill's */
	uint64_t done_next_seq;	/* where the last snapshot left the stream (0: none yet) */
	uint64_t since;		/* receive time of the recovery (file sources' clock) */
	uint64_t decided;	/* now_ns the snapshot was decided */
	uint64_t next_connect, backoff_ns, deadline, last_sent;
	uint32_t attempts;	/* failed attempts at the current snapshot */
	/* A server silent through a whole snapshot's attempts is down: a new
	 * snapshot is given up at once (its hole a GAP, or gap fill's) but for
	 * one attempt at probe_at, on the backoff, until it says something. */
	bool down, said_silent;
	uint64_t probe_at, probe_backoff_ns;
	uint64_t bytes_in;	/* everything the server ever sent */
	uint64_t bytes_at_begin;	/* ... when the current snapshot was decided */
	uint8_t in[RSESS_IN_BYTES];
	uint32_t inlen;
	struct rsess_counts c;
};

void rsess_init(struct rsess *s, const struct recovery_target *t,
		const struct recovery_conf_entry *conf, const struct rsess_proto *proto);
void rsess_destroy(struct rsess *s);

/* The receive time to stamp: the packet's, or (file sources) the recovery's. */
uint64_t rsess_ts(const struct rsess *s, uint64_t recv_ts);

/* As snapshot_session_drive (recovery_snapshot.h). */
bool rsess_drive(struct rsess *s, const struct feed_recovery_stream *rs, bool has_gap_fill,
		 uint64_t began, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);
void rsess_poll(struct rsess *s, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);

/* A client frame, whole or the session is dead (-1). */
int rsess_send(struct rsess *s, const uint8_t *p, size_t len, uint64_t now);
/* A packet of count snapshot messages, in the protocol's snapshot framing, to the engine. */
void rsess_apply(struct rsess *s, const uint8_t *pkt, uint32_t len, uint32_t count,
		 uint64_t recv_ts, struct wb_ring_producer *out);
/* The attempt failed: abort, back off, or give up after retries. */
void rsess_fail(struct rsess *s, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);
void rsess_close(struct rsess *s);
/* The snapshot ended at next_seq (the engine took it): the books say so. */
void rsess_done(struct rsess *s, uint64_t next_seq, uint64_t now);
/*
 * "recovery VENUE[/CHANNEL][ unit U] snapshot (SERVICE IP:PORT): ", then
 * "STALE, WHAT wanted for T" or "idle" (unit < 0: none).
 */
void rsess_print_head(const struct rsess *s, uint64_t now, int unit, const char *service,
		      const char *what, FILE *f);
/* "; snapshot time last T max T\n" */
void rsess_print_tail(const struct rsess *s, FILE *f);

#endif /* WIREBOOK_RECOVERY_RECOVERY_SESSION_H */
