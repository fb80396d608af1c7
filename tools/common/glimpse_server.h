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
 */
#ifndef WIREBOOK_TOOLS_GLIMPSE_SERVER_H
#define WIREBOOK_TOOLS_GLIMPSE_SERVER_H

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

struct glimpse_opts {
	uint64_t snapshot_at;	/* S: the book after messages 1..S (0: the capture's last) */
	const char *user, *password;
	uint64_t hangup_after;	/* the first session is closed after this many messages (0: never) */
	uint64_t stall_after;	/* the first session goes silent after this many (0: never) */
	bool verbose;
};

/* Serve on a bound TCP address until *stop; 0, or 1 when it cannot. */
int glimpse_serve(uint32_t ip, uint16_t port, const struct glimpse_source *src,
		  const struct glimpse_opts *o, volatile sig_atomic_t *stop);

#endif /* WIREBOOK_TOOLS_GLIMPSE_SERVER_H */
