/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The recovery service "grp": the Cboe PITCH Gap Request Proxy
 * (docs/specs/cboe-grp-notes.md). A TCP session (HOST:PORT) takes Gap
 * Requests; the messages come as ordinary PITCH packets to gap= (a unicast
 * address bound, or a multicast group joined).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire/bytes.h"
#include "recovery/pitch_session.h"
#include "recovery/recovery_internal.h"

/* Cboe GRP (docs/specs/cboe-grp-notes.md, lib/wire/cboe_session.h): framed in
 * Sequenced Unit Headers. */
#define GRP_RCVBUF (4 << 20)

enum grp_state { GRP_DOWN, GRP_CONNECTING, GRP_LOGIN_SENT, GRP_UP };

/* grp: the socket the gap responses arrive on, bound (and joined when multicast). */
static int gap_socket(const struct recovery_conf_entry *en)
{
	struct sockaddr_in at = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, rcv = GRP_RCVBUF;
	bool multicast = (en->gap_ip >> 28) == 0xe;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	at.sin_addr.s_addr = htonl(en->gap_ip);
	at.sin_port = htons(en->gap_port);
	if (bind(fd, (struct sockaddr *)&at, sizeof(at)) < 0)
		goto fail;
	if (multicast) {
		struct ip_mreq mr = { .imr_multiaddr.s_addr = htonl(en->gap_ip) };

		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}



/* One message in a Sequenced Unit Header of unit 0, sequence 0; -1: the session broke. */
static int grp_send(struct service *s, uint8_t type, const uint8_t *body, uint8_t blen)
{
	uint8_t f[PITCH_HEADER_LEN + PITCH_MSG_HEADER_LEN + 32];
	size_t len = pitch_session_message(f, type, body, blen);

	/* Frames this small never part-fill an empty socket buffer; a full one is a dead session. */
	return send(s->tcp, f, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len ? 0 : -1;
}

static void grp_down(struct service *s, uint64_t now)
{
	if (s->tcp >= 0) {
		close(s->tcp);
		s->tcp = -1;
		s->disconnects += s->state == GRP_UP;
	}
	s->state = GRP_DOWN;
	s->inlen = 0;
	s->next_connect = now + recovery_backoff(&s->backoff_ns);
}


static void grp_connect(struct service *s, uint64_t now)
{
	s->connects++;
	s->tcp = recovery_tcp_connect(s->conf.ip, s->conf.port);
	if (s->tcp < 0) {
		grp_down(s, now);
		return;
	}
	s->state = GRP_CONNECTING;
	s->login_deadline = now + recovery_ms_ns(RECOVERY_MAX_BACKOFF_MS);
}

static void grp_login(struct service *s, uint64_t now)
{
	uint8_t f[PITCH_HEADER_LEN + PITCH_LOGIN_LEN];
	size_t len = pitch_session_login(f, s->conf.user, s->conf.password);

	if (send(s->tcp, f, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
		grp_down(s, now);
		return;
	}
	s->state = GRP_LOGIN_SENT;
}

static bool grp_send_request(struct service *s, uint8_t unit, const struct unit_rec *u,
			     uint64_t now)
{
	uint8_t m[GRP_GAP_REQUEST_LEN];	/* the fields at the message's offsets */

	if (s->state != GRP_UP)
		return false;
	m[GRP_GAP_UNIT_OFF] = unit;
	wire_put_le32(m + GRP_GAP_SEQ_OFF, (uint32_t)u->req_first);
	wire_put_le16(m + GRP_GAP_COUNT_OFF, (uint16_t)u->req_count);
	if (grp_send(s, GRP_GAP_REQUEST, m + PITCH_MSG_HEADER_LEN,
		     GRP_GAP_REQUEST_LEN - PITCH_MSG_HEADER_LEN)) {
		grp_down(s, now);
		return false;
	}
	return true;
}

/* A Gap Response: a refusal declares the range lost (the stream goes on). */
static void grp_gap_response(struct recovery_client *c, struct service *s, const uint8_t *m,
			     uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint8_t unit = m[GRP_GAP_UNIT_OFF], status = m[GRP_GAP_RESPONSE_STATUS_OFF];
	uint64_t seq = wire_le32(m + GRP_GAP_SEQ_OFF);
	struct unit_rec *u = &s->u[unit];

	if (status == 'A' || !u->waiting || seq != u->req_first)
		return;		/* accepted (the messages come on gap=), or an old answer */
	if (status == 'M' || status == 'S' || status == 'U') {
		/* Quota per minute or second, unit unavailable: for now. Asked again at the
		 * unit's deadline, with its backoff, within its retries. */
		s->deferred++;
		return;
	}
	s->refused++;
	u->waiting = false;
	u->gave_up = true;
	c->t.recover_lost(c->t.ctx, u->line, unit, u->req_first, u->req_count,
			  recv_ts ? recv_ts : u->since, out);
}

static void grp_message(struct recovery_client *c, struct service *s, const uint8_t *m,
			uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint8_t type = m[PITCH_MSG_TYPE], mlen = m[PITCH_MSG_LENGTH];

	if (type == PITCH_LOGIN_RESPONSE && mlen >= PITCH_LOGIN_RESPONSE_LEN &&
	    s->state == GRP_LOGIN_SENT) {
		if (m[PITCH_LOGIN_RESPONSE_STATUS_OFF] != 'A') {
			if (!s->logins_refused++)
				fprintf(stderr, "recovery %s: grp %s:%u refused the login '%s' (status "
					"%c); retrying\n", feed_venue_name(s->conf.venue),
					inet_ntoa((struct in_addr){ htonl(s->conf.ip) }),
					s->conf.port, s->conf.user, m[PITCH_LOGIN_RESPONSE_STATUS_OFF]);
			grp_down(s, now);
			return;
		}
		/* The backoff is reset by an answer, not a login: a proxy that logs in and hangs up is down. */
		s->state = GRP_UP;
		/* What waited for the session is asked for now. */
		for (int k = 0; k < RECOVERY_UNITS; k++)
			if (s->u[k].waiting && grp_send_request(s, (uint8_t)k, &s->u[k], now)) {
				s->requests++;
				s->u[k].deadline = now + recovery_ms_ns(s->conf.timeout_ms);
			}
	} else if (type == GRP_GAP_RESPONSE && mlen >= GRP_GAP_RESPONSE_LEN && s->state == GRP_UP) {
		s->backoff_ns = recovery_ms_ns(s->conf.timeout_ms);
		grp_gap_response(c, s, m, recv_ts, out);
	}
}

/* The session: connect, log in, read what it says. Never blocks. */
static void grp_pump(struct recovery_client *c, struct service *s, uint64_t now,
		     uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t used = 0;
	bool hung_up;

	if (s->state == GRP_DOWN) {
		if (s->nrec && now >= s->next_connect)
			grp_connect(s, now);
		if (s->state == GRP_DOWN)
			return;
	}
	if (s->state == GRP_CONNECTING) {
		struct pollfd pf = { .fd = s->tcp, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (poll(&pf, 1, 0) <= 0) {
			if (now > s->login_deadline)
				grp_down(s, now);
			return;
		}
		if (getsockopt(s->tcp, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			grp_down(s, now);
			return;
		}
		grp_login(s, now);
		if (s->state != GRP_LOGIN_SENT)
			return;
	}
	/* What came before a hang-up (a refused login's response) is read first. */
	hung_up = recovery_tcp_read(s->tcp, s->in, sizeof(s->in), &s->inlen);
	while (s->inlen - used >= PITCH_HEADER_LEN) {
		const uint8_t *f = s->in + used;
		uint16_t flen = wire_le16(f + PITCH_HDR_LENGTH);
		uint32_t off = PITCH_HEADER_LEN;

		if (flen < PITCH_HEADER_LEN || flen > sizeof(s->in)) {
			grp_down(s, now);
			return;
		}
		if (s->inlen - used < flen)
			break;
		for (uint8_t k = 0; k < f[PITCH_HDR_COUNT]; k++) {
			if (off + PITCH_MSG_HEADER_LEN > flen || f[off] < PITCH_MSG_HEADER_LEN ||
			    off + f[off] > flen)
				break;
			grp_message(c, s, f + off, now, recv_ts, out);
			if (s->state == GRP_DOWN)
				return;
			off += f[off];
		}
		used += flen;
	}
	memmove(s->in, s->in + used, s->inlen - used);
	s->inlen -= used;
	if (hung_up || (s->state == GRP_LOGIN_SENT && now > s->login_deadline))
		grp_down(s, now);
}


static int grp_open(struct service *s, char *why, size_t whylen)
{
	s->state = GRP_DOWN;
	s->fd = gap_socket(&s->conf);
	if (s->fd < 0) {
		snprintf(why, whylen, "the gap-response socket (gap=): %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void grp_close(struct service *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->tcp >= 0)
		close(s->tcp);
}

static void grp_poll(struct recovery_client *c, struct service *s, uint64_t now,
		     uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (s->nrec || s->state == GRP_CONNECTING || s->state == GRP_LOGIN_SENT)
		grp_pump(c, s, now, recv_ts, out);
	if (s->nrec && s->fd >= 0)
		recovery_take_replies(c, s, recv_ts ? recv_ts : 1, out);
}

static void grp_request(struct service *s, uint8_t unit, struct unit_rec *u,
			const struct feed_recovery_stream *rs, uint64_t now)
{
	(void)rs;
	if (u->req_count > GRP_MAX_COUNT)
		u->req_count = GRP_MAX_COUNT;
	/* Without a session the request goes when the login is accepted. */
	if (grp_send_request(s, unit, u, now))
		s->requests++;
}

static void grp_print(const struct service *s, const struct recovery_totals *t, FILE *f)
{
	fprintf(f, "; refused %" PRIu64 ", deferred %" PRIu64 "; session %s, connects %" PRIu64
		", disconnects %" PRIu64 ", logins refused %" PRIu64, t->refused, t->deferred,
		s->state == GRP_UP ? "up" : "down", t->connects, t->disconnects,
		t->logins_refused);
}

const char *recovery_grp_conf_check(const struct recovery_conf_entry *en)
{
	return en->gap_port ? NULL :
	       "a grp service needs gap=ADDR:PORT (where its gap responses arrive)";
}

const struct recovery_gap_fill_ops recovery_grp_ops = {
	.open = grp_open,
	.close = grp_close,
	.pump = grp_poll,
	.request = grp_request,
	.print = grp_print,
};
