/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd's MoldUDP64 re-request server (--service mold, the
 * default): a 20-byte UDP request (session, first sequence, count) is
 * answered with one ordinary MoldUDP64 packet holding the messages from
 * that sequence on, as many as fit in the payload, unicast to the
 * requester. Mold defines no refusal: a request it cannot answer gets no
 * reply, counted and, with verbose, logged.
 */
#ifndef WIREBOOK_SIM_MOLD_SERVER_H
#define WIREBOOK_SIM_MOLD_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"
#include "wire/moldudp64.h"

/* One Mold packet of the served stream: keep the messages not kept yet. -1: no memory. */
int mold_store_packet(struct sim_store *s, const uint8_t *p, uint32_t len);

struct mold_serve_opts {
	int venue;
	uint32_t max_payload;
	uint64_t drop_every;	/* answer no Nth request (0: answer all) */
	bool verbose;
};

/* The session's name, printable. */
const char *mold_session_text(const char *s);

/* Bind listen_at (ip, port) and answer until SIGINT/SIGTERM; prints the counters. */
int mold_serve(const struct sim_store *s, const char *listen_at, uint32_t ip, uint16_t port,
	       const struct mold_serve_opts *o);

#endif /* WIREBOOK_SIM_MOLD_SERVER_H */
