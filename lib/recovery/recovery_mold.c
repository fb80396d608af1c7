/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery service "mold": the MoldUDP64 re-request (ITCH, UQDF). A
 * 20-byte request (session, first sequence, count) on UDP to HOST:PORT;
 * the replies are ordinary MoldUDP64 packets from the service.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>

#include "wire/bytes.h"
#include "wire/moldudp64.h"
#include "recovery/recovery_internal.h"

/* mold: a socket connected to the service (replies from anyone else are not ours). */
static int mold_socket(const struct recovery_conf_entry *en)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	to.sin_addr.s_addr = htonl(en->ip);
	to.sin_port = htons(en->port);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void mold_send_request(struct service *s, const struct feed_recovery_stream *rs)
{
	uint8_t req[MOLD_HEADER_LEN];
	uint64_t count = rs->missing_count;

	memcpy(req + MOLD_SESSION, rs->session, MOLD_SESSION_LEN);
	wire_put_be64(req + MOLD_SEQUENCE, rs->missing_first);
	if (count > MOLD_END_OF_SESSION - 1)
		count = MOLD_END_OF_SESSION - 1;	/* the largest count that is not a marker */
	wire_put_be16(req + MOLD_COUNT, (uint16_t)count);
	/* A send that fails (the service's port closed) is retried like a lost one. */
	(void)!send(s->fd, req, sizeof(req), 0);
	s->requests++;
}


static int mold_open(struct service *s, char *why, size_t whylen)
{
	s->fd = mold_socket(&s->conf);
	if (s->fd < 0) {
		snprintf(why, whylen, "socket to the service: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void mold_close(struct service *s)
{
	if (s->fd >= 0)
		close(s->fd);
}

static void mold_pump(struct recovery_client *c, struct service *s, uint64_t now,
		      uint64_t recv_ts, struct wb_ring_producer *out)
{
	(void)now;
	if (s->nrec && s->fd >= 0)
		recovery_take_replies(c, s, recv_ts ? recv_ts : 1, out);
}

static void mold_request(struct service *s, uint8_t unit, struct unit_rec *u,
			 const struct feed_recovery_stream *rs, uint64_t now)
{
	(void)unit;
	(void)u;
	(void)now;
	mold_send_request(s, rs);
}

const struct recovery_gap_fill_ops recovery_mold_ops = {
	.open = mold_open,
	.close = mold_close,
	.pump = mold_pump,
	.request = mold_request,
};
