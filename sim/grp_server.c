/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd --service grp (see grp_server.h). */
#include "sim/grp_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire/bytes.h"
#include "wire/pitch.h"
#include "feed/feed.h"
#include "recovery/pitch_session.h"

/* ---- Cboe PITCH Gap Request Proxy ------------------------------------------ */

/* The session's wire facts: lib/wire/cboe_session.h. The packets replayed to the
 * gap-response channel are the feed's: Sequenced Unit Headers (lib/wire/pitch.h). */
#define GRP_MAX_CLIENTS 8
#define GRP_IN 1024

/* One Sequenced Unit Header packet of the served venue: keep its messages. */
int pitch_store_packet(struct sim_store *units, const uint8_t *p, uint32_t len)
{
	struct sim_store *s;
	uint32_t hlen, off = PITCH_HEADER_LEN;
	uint64_t seq;
	uint8_t count;

	if (len < PITCH_HEADER_LEN || (hlen = wire_le16(p + PITCH_HDR_LENGTH)) < PITCH_HEADER_LEN ||
	    hlen > len)
		return 0;
	count = p[PITCH_HDR_COUNT];
	s = &units[p[PITCH_HDR_UNIT]];
	seq = wire_le32(p + PITCH_HDR_SEQUENCE);
	if (!seq)
		return 0;	/* unsequenced */
	if (!count) {
		if (seq > s->end)
			s->end = seq;	/* a heartbeat names the next sequence */
		return 0;
	}
	for (uint8_t i = 0; i < count; i++, seq++) {
		uint8_t mlen;

		if (off + PITCH_MSG_HEADER_LEN > hlen ||
		    (mlen = p[off + PITCH_MSG_LENGTH]) < PITCH_MSG_HEADER_LEN || off + mlen > hlen)
			break;	/* truncated: the rest is not in the capture */
		if (sim_store_grow(s, seq, mlen))
			return -1;
		if (s->off[seq - 1] == UINT64_MAX) {
			s->off[seq - 1] = s->used;
			s->len[seq - 1] = mlen;
			memcpy(s->bytes + s->used, p + off, mlen);
			s->used += mlen;
			s->messages++;
		}
		off += mlen;
		if (seq + 1 > s->end)
			s->end = seq + 1;
	}
	return 0;
}

struct grp_client {
	int fd;
	bool logged_in;
	uint8_t in[GRP_IN];
	uint32_t inlen;
};

static void pad_copy(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

/* One message in its own header (unit 0, sequence 0) on the session. */
static int grp_send(int fd, uint8_t type, const uint8_t *body, uint8_t blen)
{
	uint8_t f[PITCH_HEADER_LEN + PITCH_MSG_HEADER_LEN + 32];
	size_t len = pitch_session_message(f, type, body, blen);

	return send(fd, f, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* Send messages [seq, seq + count) of a unit to the gap-response address. */
static void grp_replay(int ufd, const struct sim_store *s, uint8_t unit, uint64_t seq, uint64_t count,
		       const struct grp_opts *o, struct grp_counters *c)
{
	uint8_t pkt[SIM_MAX_PAYLOAD];
	uint64_t end = seq + count;

	while (seq < end) {
		uint32_t len = PITCH_HEADER_LEN;
		uint8_t n = 0;
		uint64_t first = seq;

		for (; seq < end && n < 255; seq++) {
			if (s->off[seq - 1] == UINT64_MAX)
				break;
			if (len + s->len[seq - 1] > o->max_payload)
				break;
			memcpy(pkt + len, s->bytes + s->off[seq - 1], s->len[seq - 1]);
			len += s->len[seq - 1];
			n++;
		}
		if (!n) {
			seq++;	/* not in the capture: the client asks again, then gives up */
			continue;
		}
		wire_put_le16(pkt + PITCH_HDR_LENGTH, (uint16_t)len);
		pkt[PITCH_HDR_COUNT] = n;
		pkt[PITCH_HDR_UNIT] = unit;
		wire_put_le32(pkt + PITCH_HDR_SEQUENCE, (uint32_t)first);
		if (sendto(ufd, pkt, len, 0, (const struct sockaddr *)&o->reply_to,
			   sizeof(o->reply_to)) == (ssize_t)len) {
			c->packets++;
			c->messages += n;
		}
	}
}

static void grp_log(const struct grp_opts *o, const char *what, uint8_t unit, uint64_t seq,
		    uint64_t count)
{
	if (o->verbose)
		fprintf(stderr, "wb-recoveryd: gap request unit %u sequence %" PRIu64 " count %"
			PRIu64 ": %s\n", unit, seq, count, what);
}

/* A Gap Request: its Gap Response, and the messages when accepted. -1: drop the session. */
static int grp_gap_request(struct grp_client *cl, int ufd, const uint8_t *m,
			   const struct grp_opts *o, struct grp_counters *c)
{
	uint8_t unit = m[GRP_GAP_UNIT_OFF], r[GRP_GAP_RESPONSE_LEN];
	uint64_t seq = wire_le32(m + GRP_GAP_SEQ_OFF), count = wire_le16(m + GRP_GAP_COUNT_OFF);
	const struct sim_store *s = &o->units[unit];
	char status = 'A';

	c->requests++;
	if (o->hangup_after && c->requests > o->hangup_after) {
		c->hangups++;
		grp_log(o, "session dropped (--hangup-after)", unit, seq, count);
		return -1;
	}
	if (!s->messages) {
		status = 'I';
		c->invalid_unit++;
	} else if (!seq || !count || seq + count > s->end) {
		status = 'O';
		c->out_of_range++;
	} else if (count > o->max_count) {
		status = 'C';
		c->count_too_large++;
	} else if (o->quota && c->accepted >= o->quota) {
		status = 'D';
		c->quota++;
	} else if (o->per_second) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec != c->this_second) {
			c->this_second = (uint64_t)ts.tv_sec;
			c->accepted_this_second = 0;
		}
		if (c->accepted_this_second >= o->per_second) {
			status = 'S';
			c->second_quota++;
		}
	}
	r[GRP_GAP_UNIT_OFF] = unit;
	wire_put_le32(r + GRP_GAP_SEQ_OFF, (uint32_t)seq);
	wire_put_le16(r + GRP_GAP_COUNT_OFF, (uint16_t)count);
	r[GRP_GAP_RESPONSE_STATUS_OFF] = (uint8_t)status;
	if (grp_send(cl->fd, GRP_GAP_RESPONSE, r + PITCH_MSG_HEADER_LEN,
		     GRP_GAP_RESPONSE_LEN - PITCH_MSG_HEADER_LEN))
		return -1;
	if (status != 'A') {
		char why[32];

		snprintf(why, sizeof(why), "refused, status %c", status);
		grp_log(o, why, unit, seq, count);
		return 0;
	}
	c->accepted++;
	c->accepted_this_second++;
	grp_replay(ufd, s, unit, seq, count, o, c);
	return 0;
}

/* The messages of one frame from a client. -1: drop the session. */
static int grp_frame(struct grp_client *cl, int ufd, const uint8_t *f, uint32_t flen,
		     const struct grp_opts *o, struct grp_counters *c)
{
	uint32_t off = PITCH_HEADER_LEN;

	for (uint8_t i = 0; i < f[PITCH_HDR_COUNT]; i++) {
		const uint8_t *m = f + off;
		uint8_t status;

		if (off + PITCH_MSG_HEADER_LEN > flen || m[PITCH_MSG_LENGTH] < PITCH_MSG_HEADER_LEN ||
		    off + m[PITCH_MSG_LENGTH] > flen)
			goto malformed;
		off += m[PITCH_MSG_LENGTH];
		if (m[PITCH_MSG_TYPE] == PITCH_LOGIN && m[PITCH_MSG_LENGTH] == PITCH_LOGIN_LEN &&
		    !cl->logged_in) {
			bool good = !memcmp(m + PITCH_LOGIN_USER_OFF, o->user, PITCH_LOGIN_USER_LEN) &&
				    !memcmp(m + PITCH_LOGIN_PASSWORD_OFF, o->password,
					    PITCH_LOGIN_PASSWORD_LEN);

			status = good ? 'A' : 'N';
			if (grp_send(cl->fd, PITCH_LOGIN_RESPONSE, &status,
				     PITCH_LOGIN_RESPONSE_LEN - PITCH_MSG_HEADER_LEN) || !good) {
				c->logins_refused += !good;
				if (o->verbose && !good)
					fprintf(stderr, "wb-recoveryd: login '%.4s' refused\n",
						(const char *)m + PITCH_LOGIN_USER_OFF);
				return -1;
			}
			c->logins++;
			cl->logged_in = true;
			if (o->hangup_after && c->requests >= o->hangup_after) {
				c->hangups++;
				return -1;	/* a server that keeps dropping its sessions */
			}
		} else if (m[PITCH_MSG_TYPE] == GRP_GAP_REQUEST &&
			   m[PITCH_MSG_LENGTH] == GRP_GAP_REQUEST_LEN && cl->logged_in) {
			if (grp_gap_request(cl, ufd, m, o, c))
				return -1;
		} else {
			goto malformed;
		}
	}
	return 0;
malformed:
	c->malformed++;
	if (o->verbose)
		fprintf(stderr, "wb-recoveryd: malformed or unexpected message: session dropped\n");
	return -1;
}

/* Take what a client sent; -1 when its session ends. */
static int grp_read(struct grp_client *cl, int ufd, const struct grp_opts *o,
		    struct grp_counters *c)
{
	ssize_t n = recv(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, 0);
	uint32_t used = 0;

	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	cl->inlen += (uint32_t)n;
	while (cl->inlen - used >= PITCH_HEADER_LEN) {
		const uint8_t *f = cl->in + used;
		uint16_t flen = wire_le16(f + PITCH_HDR_LENGTH);

		if (flen < PITCH_HEADER_LEN)
			return -1;
		if (cl->inlen - used < flen)
			break;
		if (grp_frame(cl, ufd, f, flen, o, c))
			return -1;
		used += flen;
	}
	memmove(cl->in, cl->in + used, cl->inlen - used);
	cl->inlen -= used;
	return 0;
}

static int grp_serve(int lfd, const struct grp_opts *o)
{
	struct grp_client cl[GRP_MAX_CLIENTS];
	struct grp_counters c;
	int ufd = socket(AF_INET, SOCK_DGRAM, 0);

	if (ufd < 0) {
		fprintf(stderr, "wb-recoveryd: socket: %s\n", strerror(errno));
		return 1;
	}
	memset(&c, 0, sizeof(c));
	for (int i = 0; i < GRP_MAX_CLIENTS; i++)
		cl[i].fd = -1;
	while (!sim_stop) {
		struct pollfd pf[GRP_MAX_CLIENTS + 1];
		int n = 1;

		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (int i = 0; i < GRP_MAX_CLIENTS; i++) {
			pf[n].fd = cl[i].fd;
			pf[n++].events = POLLIN;
		}
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "wb-recoveryd: poll: %s\n", strerror(errno));
			break;
		}
		for (int i = 0; i < GRP_MAX_CLIENTS; i++) {
			if (cl[i].fd < 0 || !(pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (grp_read(&cl[i], ufd, o, &c)) {
				close(cl[i].fd);
				cl[i].fd = -1;
			}
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			int i;

			for (i = 0; i < GRP_MAX_CLIENTS && cl[i].fd >= 0; i++)
				;
			if (fd >= 0 && i == GRP_MAX_CLIENTS) {
				close(fd);	/* too many sessions */
			} else if (fd >= 0) {
				cl[i].fd = fd;
				cl[i].logged_in = false;
				cl[i].inlen = 0;
				c.sessions++;
			}
		}
	}
	for (int i = 0; i < GRP_MAX_CLIENTS; i++)
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	close(ufd);
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " sessions, %" PRIu64 " logins, %" PRIu64
		" refused; %" PRIu64 " gap requests, %" PRIu64 " accepted (%" PRIu64 " packets, %"
		PRIu64 " messages); refused: %" PRIu64 " out of range, %" PRIu64 " quota, %" PRIu64
		" count too large, %" PRIu64 " invalid unit, %" PRIu64 " second quota; %" PRIu64
		" malformed; %" PRIu64 " sessions dropped (--hangup-after)\n", c.sessions, c.logins,
		c.logins_refused, c.requests, c.accepted, c.packets, c.messages, c.out_of_range,
		c.quota, c.count_too_large, c.invalid_unit, c.second_quota, c.malformed, c.hangups);
	return 0;
}

int grp_main(struct sim_store *units, const char *pcap, int venue, const char *listen_at,
	     uint32_t ip, uint16_t port, const char *user, const char *password, uint32_t rip,
	     uint16_t rport, struct grp_opts *o, uint32_t payload, bool verbose)
{
	struct sockaddr_in addr;
	uint64_t messages = 0, holes = 0;
	int nunits = 0, lfd, rc;

	for (int u = 0; u < SIM_PITCH_UNITS; u++) {
		struct sim_store *s = &units[u];

		if (!s->messages)
			continue;
		nunits++;
		messages += s->messages;
		for (uint64_t q = 1; q < s->end; q++)
			holes += q > s->cap || s->off[q - 1] == UINT64_MAX;
	}
	if (!nunits) {
		fprintf(stderr, "wb-recoveryd: %s: no PITCH message of venue %s on its groups\n",
			pcap, feed_venue_name(venue));
		return 1;
	}
	pad_copy(o->user, sizeof(o->user), user);
	pad_copy(o->password, sizeof(o->password), password);
	o->reply_to.sin_family = AF_INET;
	o->reply_to.sin_addr.s_addr = htonl(rip);
	o->reply_to.sin_port = htons(rport);
	o->max_payload = payload;
	o->units = units;
	o->verbose = verbose;
	lfd = sim_tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s GRP, %d units, %" PRIu64 " messages (%" PRIu64
		" missing from the capture), gap responses to %s, on %s:%u\n",
		feed_venue_name(venue), nunits, messages, holes, inet_ntoa(o->reply_to.sin_addr),
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
	rc = grp_serve(lfd, o);
	close(lfd);
	for (int u = 0; u < SIM_PITCH_UNITS; u++)
		sim_store_free(&units[u]);
	return rc;
}

