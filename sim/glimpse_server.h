/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd's GLIMPSE 5.0 server (--service glimpse): a SoupBinTCP 4.0
 * session that, after a Login Request with the right username and
 * password, sends the book as it stood after ITCH message S of the served
 * capture (the stock directory, the last system event, each stock's last
 * trading action, Reg SHO and operational halt, then every live order as
 * an Add Order with its remaining shares and price, in priority order),
 * then the End of Snapshot naming S + 1, the ITCH sequence to resume
 * from. Server heartbeats after a second without sending. For tests,
 * refusals: a bad login (Login Rejected 'A'), a session other than the
 * capture's ('S'), the first session dropped or left silent after N
 * snapshot messages.
 *
 * The SoupBinTCP side serves any snapshot that is a list of messages: with
 * glimpse_opts.build another service (the UTP Snap-Shot, utpsnap_server.h)
 * puts its own messages in it.
 */
#ifndef WIREBOOK_SIM_GLIMPSE_SERVER_H
#define WIREBOOK_SIM_GLIMPSE_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* The served ITCH session's messages by sequence: message q at bytes + off[q - 1]. */
struct glimpse_source {
	const char *session;	/* 10 characters */
	uint64_t end;		/* one past the last sequence */
	uint64_t cap;		/* sequences off[] covers */
	const uint64_t *off;	/* UINT64_MAX: not in the capture */
	const uint16_t *len;
	const uint8_t *bytes;
};

/* The snapshot as SoupBinTCP Sequenced Data packets, and where each message ends. */
struct soup_snapshot {
	uint8_t *bytes;
	size_t len, cap;
	size_t *ends;		/* ends[k]: the offset after message k + 1 */
	size_t count, ends_cap;
};

/* Append one message as a Sequenced Data packet: 0, or -1 out of memory. */
int soup_snapshot_put(struct soup_snapshot *s, const uint8_t *m, size_t len);

/* The served session's message q (1-based), or NULL when the capture lacks it. */
const uint8_t *glimpse_source_message(const struct glimpse_source *src, uint64_t q, uint16_t *len);

/*
 * Build the snapshot after messages 1..at into out, ending with the
 * message that names at + 1; *items: what it restates (for the log line).
 * 0, or -1 out of memory.
 */
typedef int (*soup_snapshot_build_fn)(const struct glimpse_source *src, uint64_t at,
				      struct soup_snapshot *out, uint64_t *items);

struct glimpse_opts {
	soup_snapshot_build_fn build;	/* NULL: GLIMPSE's ITCH book */
	const char *title;	/* the log's name of the service (NULL: "nasdaq GLIMPSE") */
	const char *items;	/* what *items counts (NULL: "live orders") */
	uint64_t snapshot_at;	/* S: the book after messages 1..S (0: the capture's last) */
	const char *user, *password;
	uint64_t hangup_after;	/* the first session is closed after this many messages (0: never) */
	uint64_t stall_after;	/* the first session goes silent after this many (0: never) */
	bool verbose;
};

/* Serve on a bound TCP address until *stop; 0, or 1 when it cannot. */
int glimpse_serve(uint32_t ip, uint16_t port, const struct glimpse_source *src,
		  const struct glimpse_opts *o, volatile sig_atomic_t *stop);

#endif /* WIREBOOK_SIM_GLIMPSE_SERVER_H */
