/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery services table: one row per service a recovery.conf line
 * can name (recovery_services.c). A row says what the service is called,
 * which feed protocols it serves, whether it fills gaps or takes
 * snapshots, which recovery.conf keys it takes, and the client's
 * operations (its own file: recovery_mold.c, recovery_grp.c,
 * recovery_xdp.c, recovery_snapshot.c, recovery_spin.c). The parser, the
 * feed-map check and the client ask the table; none of them names a
 * service. A new service is one row here, one client file, one server in
 * sim/ and its tests.
 */
#ifndef WIREBOOK_RECOVERY_SERVICES_H
#define WIREBOOK_RECOVERY_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feed/feed.h"

struct recovery_client;
struct recovery_conf_entry;
struct recovery_target;
struct recovery_totals;
struct service;
struct unit_rec;

/* A gap-fill service's client, on the stream's struct service (recovery_internal.h). */
struct recovery_gap_fill_ops {
	/* Its sockets; -1 with why ("socket to the service: ..."). */
	int (*open)(struct service *s, char *why, size_t whylen);
	void (*close)(struct service *s);
	/* Socket work each poll: sessions, replies to the engine. */
	void (*pump)(struct recovery_client *c, struct service *s, uint64_t now, uint64_t recv_ts,
		     struct wb_ring_producer *out);
	/* Ask for u->req_first, u->req_count (clamped here to what one request may ask). */
	void (*request)(struct service *s, uint8_t unit, struct unit_rec *u,
			const struct feed_recovery_stream *rs, uint64_t now);
	/* A late join taken another way (xdp: the refresh): true when taken. NULL: never. */
	bool (*late_join)(struct recovery_client *c, struct service *s,
			  const struct feed_recovery_stream *rs, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out);
	/* The request in flight was given up (NULL: nothing to do). */
	void (*forget)(struct service *s);
	/* Counters the service keeps itself, over t's (NULL: none). */
	void (*totals)(const struct service *s, struct recovery_totals *t);
	/* Its part of the stats line, before the fill times (NULL: none). */
	void (*print)(const struct service *s, const struct recovery_totals *t, FILE *f);
};

/* A snapshot service's client: a session (or a set of them) beside the stream's gap fill. */
struct recovery_snapshot_ops {
	/* Adds conf's line to *snap (created on first use); -1 when out of memory. */
	int (*add)(void **snap, const struct recovery_target *t, const struct recovery_conf_entry *conf);
	void (*destroy)(void *snap);
	/* A recovery of the stream: true when the snapshot takes it (the gap fill leaves it). */
	bool (*drive)(void *snap, const struct feed_recovery_stream *rs, bool has_gap_fill,
		      uint64_t began, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);
	void (*poll)(void *snap, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);
	uint64_t (*given_up)(const void *snap);
	bool (*busy)(const void *snap);
	void (*print)(const void *snap, uint64_t now, FILE *f);
};

#define RECOVERY_SERVICE_PROTOCOLS 3

struct recovery_service {
	const char *name;		/* as recovery.conf (and wb-recoveryd --service) write it */
	/* The feed protocols it serves (feed_protocol_name), NULL after the last. */
	const char *protocols[RECOVERY_SERVICE_PROTOCOLS];
	/* recovery.conf keys beyond channel=, timeout=, retries= (max-gap=, max-age=: snapshots) */
	uint8_t user_max;		/* user=, password=: the username's length; 0: no login */
	const char *user_note;		/* said with a user= too long, or NULL */
	bool takes_gap;			/* gap=ADDR:PORT: where gap responses arrive */
	bool takes_unit;		/* unit=N: a line serves one PITCH unit; one no line serves
					 * is lost when the stream has no gap fill */
	bool needs_session;		/* asks only once the stream's session is known (mold) */
	/* Keys of its own: 1 taken into en, 0 not its key, -1 with why. NULL: none. */
	int (*conf_key)(struct recovery_conf_entry *en, const char *tok, char *why, size_t whylen);
	/* What a whole line still lacks, or NULL. NULL: nothing required. */
	const char *(*conf_check)(const struct recovery_conf_entry *en);
	/* Exactly one of the two: what kind of service it is, and its client. */
	const struct recovery_gap_fill_ops *gap_fill;
	const struct recovery_snapshot_ops *snapshot;
};

extern const struct recovery_service recovery_services[];
extern const size_t recovery_service_count;

/* The row named name, or NULL. */
const struct recovery_service *recovery_service_named(const char *name);
/* Whether sv serves the feed protocol (enum feed_protocol). */
bool recovery_service_serves(const struct recovery_service *sv, int protocol);
/* The gap-fill service of a feed protocol, or NULL: none. */
const struct recovery_service *recovery_gap_fill_of(int protocol);
/*
 * The names of the rows that pass keep (every row when NULL) as a list
 * into buf ("a, b, c", or with and_last "a, b and c"), always terminated.
 */
const char *recovery_service_names(char *buf, size_t n, bool (*keep)(const struct recovery_service *),
				   bool and_last);

#endif /* WIREBOOK_RECOVERY_SERVICES_H */
