/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd --service xdp: an NYSE XDP Request Server for one channel
 * of a capture (sim/xdp_server.c). The wire layouts are the client's
 * (lib/recovery/recovery_xdp.h).
 */
#ifndef WIREBOOK_SIM_XDP_SERVER_H
#define WIREBOOK_SIM_XDP_SERVER_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct xdp_serve_opts {
	int venue;
	uint8_t product;		/* the venue's ProductID */
	uint8_t channel;		/* the ChannelID requests must name */
	char source_id[11];		/* the SourceID requests must give ("": any) */
	struct sockaddr_in reply_to;	/* the retransmission channel */
	uint64_t quota;			/* accepted requests a day before status 4 (0: none) */
	uint64_t hangup_after;		/* requests answered before the server drops sessions */
	uint64_t heartbeat_ms;		/* server heartbeats on each session */
	uint32_t max_payload;
	uint64_t snapshot_at;		/* refresh: the book as of this sequence (0: no refresh) */
	struct sockaddr_in refresh_to;	/* the refresh channel */
	bool verbose;
};

/*
 * One UDP payload of a line of the served channel (line_key: its address),
 * while loading; A and B are merged. -1: no memory.
 */
int xdp_store_packet(uint64_t line_key, const uint8_t *p, uint32_t len);

/* Serve on the listening TCP socket until SIGINT/SIGTERM (*stop); prints the counters. */
int xdp_serve(int lfd, const char *listen_text, const struct xdp_serve_opts *o,
	      volatile sig_atomic_t *stop);

/* What the capture held: messages, sequence epochs (a reset starts one), holes. */
void xdp_store_summary(uint64_t *messages, int *epochs, uint64_t *holes);

/* Free the store. */
void xdp_store_free(void);

/* --service xdp: listen, serve, and say what was served. */
int xdp_main(const char *pcap, const char *listen_at, uint32_t ip, uint16_t port,
	     struct xdp_serve_opts *o);

#endif /* WIREBOOK_SIM_XDP_SERVER_H */
