/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The user-space recovery client: asks an exchange's recovery service for
 * what a stream lost, and hands the replies to the shared sequencing layer
 * (feed_recover_packet), which merges them in sequence before the stream's
 * later packets reach the books.
 *
 * Services come from a companion file to the feed map, recovery.conf, one
 * line per stream (a feed map's venue, and channel when its lines name one):
 *
 *   VENUE  SERVICE  HOST:PORT  [channel=N] [timeout=MS] [retries=N]
 *                              [gap=ADDR:PORT] [user=U] [password=P]
 *                              [retrans=ADDR:PORT] [refresh=ADDR:PORT]
 *                              [max-gap=N] [max-age=MS] [unit=N]
 *
 *   nasdaq  mold  127.0.0.1:9100
 *   nasdaq  glimpse  127.0.0.1:9104  user=WB0001 password=secret
 *   uqdf    mold  127.0.0.1:9101  channel=1
 *   uqdf    utpsnap  127.0.0.1:9106  channel=1 user=WB0001 password=secret
 *   bzx     grp   127.0.0.1:9102  gap=127.0.0.1:9103 user=WB01 password=secret
 *   nyse    xdp   127.0.0.1:9104  channel=1 retrans=127.0.0.1:9105 user=WIREBOOK
 *   bzx     spin  127.0.0.1:9106  unit=1 user=WB01 password=secret
 *
 * SERVICE "mold" is the MoldUDP64 re-request (ITCH, UQDF); "grp" the Cboe
 * PITCH Gap Request Proxy: a TCP session (HOST:PORT) that takes Gap
 * Requests, whose replies come as ordinary PITCH packets to gap= (the
 * gap-response channel: a unicast address to bind, or a multicast group
 * to join). "xdp" the NYSE XDP Request Server (recovery_xdp.h): a TCP
 * session (HOST:PORT) taking Retransmission Requests from SourceID user=,
 * whose replies come as XDP packets to retrans= (the retransmission
 * channel, bound or joined like gap=); with refresh=ADDR:PORT (the refresh
 * channel) a late join takes a Refresh instead of re-requesting the
 * morning. "glimpse" (ITCH) is a snapshot service over SoupBinTCP, a
 * second line for a stream that may also have a gap-fill one: late joins,
 * and holes larger than max-gap messages or older than max-age ms, are
 * taken by snapshot (recovery_snapshot.h); "utpsnap" is the same for a
 * UQDF stream, by the UTP Snap-Shot service; "spin" (PITCH) for one unit
 * (unit=N) by its Cboe Spin server (recovery_spin.h). The services and the
 * keys each takes are rows of one table (recovery_services.c). timeout is the first
 * wait for a reply (default 20 ms), doubled after each unanswered request
 * up to 1 s; after retries unanswered requests (default 6) the range is
 * declared lost (an ordinary GAP, counted unrecoverable). A service that
 * answered nothing during a whole range is down (said on stderr, as its
 * first unanswered request is): its new ranges are lost at once but for a
 * probe request on a backoff, until it answers again.
 *
 * Fill time: from the client first seeing a recovery to the stream being in
 * sequence again, for the recoveries that got every message.
 *
 * Everything here runs on the thread that runs the feed engine (with the
 * kernel module's engine, a thread of its own: the module serializes the
 * calls), never blocks (non-blocking sockets, one request in flight per
 * stream), and a stream waiting for its fill never holds up another stream.
 */
#ifndef WIREBOOK_LIB_RECOVERY_H
#define WIREBOOK_LIB_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "feed/feed.h"
#include "recovery/recovery_services.h"
#include "wirebook/ioctl.h"

#define RECOVERY_MAX_SERVICES 64
#define RECOVERY_DEFAULT_TIMEOUT_MS 20
#define RECOVERY_DEFAULT_RETRIES 6
#define RECOVERY_MAX_BACKOFF_MS 1000
/* glimpse: a session silent this long (the server heartbeats every second) is dead. */
#define RECOVERY_SNAPSHOT_TIMEOUT_MS 3000
/* glimpse: failed attempts (refused, broken, silent) before a snapshot is given up. */
#define RECOVERY_SNAPSHOT_RETRIES 10
/* glimpse: a hole larger than this is taken by snapshot; as many messages as
 * about 250 re-request replies carry, a fraction of a second on a good link. */
#define RECOVERY_DEFAULT_MAX_GAP 10000
/* glimpse: a hole still open after this long is taken by snapshot (before
 * the gap fill's retries would give it up as lost). */
#define RECOVERY_DEFAULT_MAX_AGE_MS 1000

struct recovery_conf_entry {
	int venue;
	int channel;		/* -1: none given (the venue's lines have none) */
	const struct recovery_service *service;	/* its row of the services table */
	uint32_t ip;		/* host byte order */
	uint16_t port;
	uint32_t timeout_ms;
	uint32_t retries;
	int lineno;
	/* grp, xdp */
	uint32_t gap_ip;	/* where gap responses (xdp: retransmissions) arrive, host order */
	uint16_t gap_port;
	char user[7];		/* the login's username: grp up to 4 characters, glimpse 6 */
	char password[11];	/* up to 10 */
	char source_id[11];	/* xdp: the SourceID (user=), up to 10 */
	uint32_t refresh_ip;	/* xdp: the refresh channel (refresh=), 0 port: no refresh */
	uint16_t refresh_port;
	/* glimpse: the snapshot policy */
	uint64_t max_gap;	/* messages */
	uint32_t max_age_ms;	/* 0: no age limit */
	int unit;		/* spin: the PITCH unit its server serves (unit=N); -1 otherwise */
};

/*
 * The TCP sessions' shared steps (grp, xdp, and the snapshot services):
 * a non-blocking connection to ip:port (host byte order) begun, its socket
 * or -1; and the wait before the next attempt, *backoff_ns, which then
 * doubles up to RECOVERY_MAX_BACKOFF_MS.
 */
int recovery_tcp_connect(uint32_t ip, uint16_t port);
uint64_t recovery_backoff(uint64_t *backoff_ns);
/*
 * Everything fd has now, appended to buf (*len of cap used; *len grows).
 * True when the peer hung up or the socket failed: what came before the
 * hang-up (a refusal, say) is in buf, to be read first.
 */
bool recovery_tcp_read(int fd, uint8_t *buf, uint32_t cap, uint32_t *len);

/*
 * Read path: the entries, up to max, or -1 with err naming the file, the
 * line and what is wrong with it.
 */
int recovery_conf_read(const char *path, struct recovery_conf_entry *out, int max, char *err,
		       size_t errlen);

struct recovery_client;

/*
 * What the client recovers into: the engine the packets are decoded by,
 * in this process (recovery_target_engine) or in the kernel module, through
 * its ioctls (recovery_target_kernel, tools/common/recovery_kernel.h). The calls are feed.h's; out is the
 * ring recovery_client_poll was given (the module has its own: unused).
 */
struct recovery_target {
	void *ctx;
	/* The feed map's lines, up to cap into out; how many there are. */
	uint32_t (*feed_list)(void *ctx, struct wb_ioc_feed *out, uint32_t cap);
	int (*enable)(void *ctx, int venue, uint16_t channel);
	/* Bumped whenever a recovery begins, moves or ends. */
	uint32_t (*changes)(void *ctx);
	int (*list)(void *ctx, struct feed_recovery_stream *out, int max, bool all);
	int (*recover_packet)(void *ctx, int line, const uint8_t *payload, uint32_t len,
			      uint64_t recv_ts, struct wb_ring_producer *out);
	int (*recover_lost)(void *ctx, int line, uint8_t unit, uint64_t first, uint64_t count,
			    uint64_t now, struct wb_ring_producer *out);
	/* A snapshot's steps (feed_snapshot_begin, _packet, _end, _abort in lib/feed/feed.h). */
	int (*snapshot_begin)(void *ctx, int line, uint8_t unit, uint64_t now,
			      struct wb_ring_producer *out);
	int (*snapshot_packet)(void *ctx, int line, uint8_t unit, const uint8_t *payload,
			       uint32_t len, uint64_t now, struct wb_ring_producer *out);
	int (*snapshot_end)(void *ctx, int line, uint8_t unit, uint64_t next_seq, uint64_t now,
			    struct wb_ring_producer *out);
	int (*snapshot_abort)(void *ctx, int line, uint8_t unit, uint64_t now,
			      struct wb_ring_producer *out);
	void (*close)(void *ctx);	/* NULL: nothing to close */
};

/* recovery_target.c: the engine e, in this process. */
void recovery_target_engine(struct recovery_target *t, struct feed_engine *e);
/* The kernel module's engine: tools/common/recovery_kernel.h. */

/*
 * A client for the entries, on target t (its feed map loaded): puts each
 * entry's stream group in recovery mode and opens its socket. NULL with
 * err when an entry names no stream of the feed map, or a stream whose
 * protocol the service cannot serve. The client owns t from then on
 * (closed with it, or at once when creating fails).
 */
struct recovery_client *recovery_client_create_target(const struct recovery_target *t,
						      const struct recovery_conf_entry *entries,
						      int n, const char *path, char *err,
						      size_t errlen);
/* The same on engine e in this process. */
struct recovery_client *recovery_client_create(struct feed_engine *e,
					       const struct recovery_conf_entry *entries, int n,
					       const char *path, char *err, size_t errlen);
void recovery_client_destroy(struct recovery_client *c);

/*
 * Do what is due: take in replies, send requests (first ones, the rest of
 * a partly answered range, retries), declare ranges lost when their
 * retries ran out. now_ns: a monotonic clock; recv_ts: the receive time
 * to give recovered packets (0: the time their recovery began, for file
 * sources whose clock is the capture's). out: the ring the engine writes
 * (the module's target stamps and rings its events itself: NULL then).
 */
void recovery_client_poll(struct recovery_client *c, uint64_t now_ns, uint64_t recv_ts,
			  struct wb_ring_producer *out);

/* Streams recovering now, and the packets they hold back in all. */
int recovery_client_busy(const struct recovery_client *c, uint32_t *held);

/* Venues (bit v) with a stream recovering now: the book's recovering_venues. */
uint32_t recovery_client_recovering_venues(const struct recovery_client *c);

/* Per-stream report lines (for wirebookd's stats). */
void recovery_client_print(const struct recovery_client *c, FILE *f);

/* One stream's totals (index < recovery_client_count), for tests and summaries. */
struct recovery_totals {
	int venue, channel;
	uint64_t gaps, filled, unrecoverable, messages, lost;
	uint64_t snapshots;	/* snapshots applied (the engine's count) */
	uint64_t requests, retries, replies, given_up;
	uint64_t refused;	/* ranges the service refused for good (grp: O, D, C, I) */
	uint64_t deferred;	/* refused for now (grp: M, S, U), asked again */
	uint64_t connects, disconnects, logins_refused;	/* grp session */
	uint64_t fills, fill_p50_ns, fill_p99_ns, fill_max_ns;
	bool recovering;
	uint64_t recovering_for_ns;	/* how long the current recovery has been on */
};
int recovery_client_count(const struct recovery_client *c);
void recovery_client_totals(const struct recovery_client *c, int i, uint64_t now_ns,
			    struct recovery_totals *t);

#endif /* WIREBOOK_LIB_RECOVERY_H */
