/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the exchange simulators share (wb-recoveryd's servers, sim/): a
 * stream's messages by sequence as loaded from a capture, the stop flag
 * SIGINT/SIGTERM set, and a TCP session server's listening socket.
 */
#ifndef WIREBOOK_SIM_SIM_H
#define WIREBOOK_SIM_SIM_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_PAYLOAD 1472	/* a reply's UDP payload at most */
#define SIM_PITCH_UNITS 256

/* Set by SIGINT or SIGTERM (sim_on_signal): the servers stop. */
extern volatile sig_atomic_t sim_stop;
void sim_on_signal(int sig);

/* The session's messages by sequence: message seq is at bytes + off[seq - 1]. */
struct sim_store {
	char session[10];
	bool has_session;
	uint64_t end;		/* one past the highest sequence seen (data or heartbeat) */
	uint64_t *off;		/* UINT64_MAX: not in the capture (lost there too) */
	uint16_t *len;
	uint64_t cap;		/* sequences off[] has room for */
	uint8_t *bytes;
	size_t used, bytes_cap;
	uint64_t messages, holes, other_sessions;
};

/* Room for sequences up to need_seq and need_bytes more bytes; -1: no memory. */
int sim_store_grow(struct sim_store *s, uint64_t need_seq, size_t need_bytes);
void sim_store_free(struct sim_store *s);

/*
 * A TCP session server's socket on ADDR:PORT (addr: where it listens, the
 * port chosen when 0), and SIGINT/SIGTERM to stop it; -1 said on stderr.
 */
int sim_tcp_listen(const char *listen_at, uint32_t ip, uint16_t port, struct sockaddr_in *addr);

#endif /* WIREBOOK_SIM_SIM_H */
