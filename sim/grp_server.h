/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd's Cboe PITCH Gap Request Proxy (--service grp): a TCP
 * session (Login, then Gap Requests for a unit's sequence range), each
 * request answered by a Gap Response with its status; an accepted range is
 * sent as ordinary Sequenced Unit Header packets, with their original
 * sequence numbers, over UDP to the gap-response address
 * (docs/specs/cboe-grp-notes.md). Refusals: out of range, quota
 * exhausted, count too large, invalid unit (Gap Response), not authorized
 * (Login Response).
 */
#ifndef WIREBOOK_SIM_GRP_SERVER_H
#define WIREBOOK_SIM_GRP_SERVER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"

#include "wire/cboe_session.h"

#define GRP_DEFAULT_MAX_COUNT GRP_MAX_COUNT

/*
 * One Sequenced Unit Header packet of the served venue: keep its messages
 * in units[its unit] (the store GRP and Spin serve from). -1: no memory.
 */
int pitch_store_packet(struct sim_store *units, const uint8_t *p, uint32_t len);

struct grp_opts {
	const struct sim_store *units;	/* the PITCH store, by unit */
	char user[PITCH_LOGIN_USER_LEN];	/* space-padded, as on the wire */
	char password[PITCH_LOGIN_PASSWORD_LEN];
	struct sockaddr_in reply_to;
	uint64_t quota;		/* accepted requests before 'D' (0: none) */
	uint64_t per_second;	/* accepted requests a second before 'S' (0: none) */
	uint64_t max_count;	/* larger requests get 'C' */
	uint64_t hangup_after;	/* requests answered before the server drops sessions */
	uint32_t max_payload;
	bool verbose;
};

struct grp_counters {
	uint64_t sessions, logins, logins_refused, requests, accepted, packets, messages;
	uint64_t out_of_range, quota, count_too_large, invalid_unit, malformed, hangups;
	uint64_t second_quota, this_second, accepted_this_second;
};


/* Serve units on listen_at until SIGINT/SIGTERM; prints the counters. */
int grp_main(struct sim_store *units, const char *pcap, int venue, const char *listen_at,
	     uint32_t ip, uint16_t port, const char *user, const char *password, uint32_t rip,
	     uint16_t rport, struct grp_opts *o, uint32_t payload, bool verbose);

#endif /* WIREBOOK_SIM_GRP_SERVER_H */
