/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd's Cboe Spin server (--service spin): one PITCH unit's book
 * as it stood after message S of the served capture
 * (docs/specs/cboe-spin-notes.md). A TCP session: Login (as GRP's; a
 * wrong username or password gets Login Response 'N' and is closed), then
 * Spin Image Available(S) at once and every second; a Spin Request(S)
 * gets Spin Response 'A' with the order count, the spin (the last Time,
 * each symbol's last Trading Status, every live order as an Add Order in
 * priority order, in unsequenced packets) and Spin Finished(S); a request
 * for another sequence gets 'O'. A spin is sent whole before the next
 * request is read, so this server never answers 'S'. For tests: the first
 * session is closed after N spin messages.
 */
#ifndef WIREBOOK_SIM_SPIN_SERVER_H
#define WIREBOOK_SIM_SPIN_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"

/* One unit's messages by sequence: message q at bytes + off[q - 1] (UINT64_MAX: missing). */
struct spin_source {
	uint8_t unit;
	uint64_t end;		/* one past the last sequence */
	uint64_t cap;		/* sequences off[] covers */
	const uint64_t *off;
	const uint16_t *len;
	const uint8_t *bytes;
};

struct spin_opts {
	uint64_t snapshot_at;	/* S: the book after messages 1..S (0: the unit's last) */
	const char *user, *password;
	uint64_t hangup_after;	/* the first session is closed after this many spin messages */
	bool verbose;
};

/* Serve on the listening socket lfd until *stop; 0, or 1 when it cannot. */
int spin_serve(int lfd, const struct spin_source *src, const struct spin_opts *o,
	       volatile sig_atomic_t *stop);

/* --service spin: the unit to serve of units (given, or the capture's only one), listen, serve. */
int spin_main(struct sim_store *units, const char *pcap, int venue, const char *listen_at,
	      uint32_t ip, uint16_t port, int unit, const struct spin_opts *o);

#endif /* WIREBOOK_SIM_SPIN_SERVER_H */
