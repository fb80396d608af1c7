/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd --service mold (see mold_server.h). */
#include "sim/mold_server.h"

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
#include "wire/moldudp64.h"
#include "feed/feed.h"

struct counters {
	uint64_t requests, replies, messages_sent;
	uint64_t bad_request, wrong_session, out_of_range, not_in_capture, dropped;
};

/* One Mold packet of the served stream: keep the messages not kept yet. */
int mold_store_packet(struct sim_store *s, const uint8_t *p, uint32_t len)
{
	uint64_t seq;
	uint16_t count;
	uint32_t off = MOLD_HEADER_LEN;

	if (len < MOLD_HEADER_LEN)
		return 0;
	if (!s->has_session) {
		memcpy(s->session, p + MOLD_SESSION, MOLD_SESSION_LEN);
		s->has_session = true;
	} else if (memcmp(s->session, p + MOLD_SESSION, MOLD_SESSION_LEN) != 0) {
		s->other_sessions++;	/* one session per capture is served */
		return 0;
	}
	seq = wire_be64(p + MOLD_SEQUENCE);
	count = wire_be16(p + MOLD_COUNT);
	if (count == 0 || count == MOLD_END_OF_SESSION) {
		if (seq > s->end)
			s->end = seq;
		return 0;
	}
	for (uint16_t i = 0; i < count; i++, seq++) {
		uint16_t mlen;

		if (off + MOLD_BLOCK_LENGTH_LEN > len ||
		    off + MOLD_BLOCK_LENGTH_LEN + (mlen = wire_be16(p + off)) > len)
			break;		/* truncated: the rest is not in the capture */
		if (seq == 0)
			return 0;
		if (sim_store_grow(s, seq, mlen))
			return -1;
		if (s->off[seq - 1] == UINT64_MAX) {
			s->off[seq - 1] = s->used;
			s->len[seq - 1] = mlen;
			memcpy(s->bytes + s->used, p + off + MOLD_BLOCK_LENGTH_LEN, mlen);
			s->used += mlen;
			s->messages++;
		}
		off += MOLD_BLOCK_LENGTH_LEN + mlen;
		if (seq + 1 > s->end)
			s->end = seq + 1;
	}
	return 0;
}

const char *mold_session_text(const char *s)
{
	static char text[11];

	for (int i = 0; i < 10; i++)
		text[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	text[10] = 0;
	return text;
}

static void refuse(uint64_t *ctr, bool verbose, const struct sockaddr_in *from, const char *why)
{
	char a[INET_ADDRSTRLEN];

	(*ctr)++;
	if (verbose) {
		inet_ntop(AF_INET, &from->sin_addr, a, sizeof(a));
		fprintf(stderr, "wb-recoveryd: request from %s:%u refused: %s\n", a,
			ntohs(from->sin_port), why);
	}
}

/* Answer one request; the reply is an ordinary Mold packet from seq on. */
static void answer(int fd, const struct sim_store *s, struct counters *c, const uint8_t *req,
		   ssize_t n, const struct sockaddr_in *from, uint32_t max_payload, bool verbose)
{
	uint8_t pkt[SIM_MAX_PAYLOAD];
	uint64_t seq, want;
	uint32_t len = MOLD_HEADER_LEN;
	uint16_t count = 0;
	char why[128];

	if (n != MOLD_HEADER_LEN) {
		snprintf(why, sizeof(why), "%zd bytes, a request has %d", n, MOLD_HEADER_LEN);
		refuse(&c->bad_request, verbose, from, why);
		return;
	}
	seq = wire_be64(req + MOLD_SEQUENCE);
	want = wire_be16(req + MOLD_COUNT);
	if (memcmp(req + MOLD_SESSION, s->session, MOLD_SESSION_LEN) != 0) {
		snprintf(why, sizeof(why), "session '%s' is not served",
			 mold_session_text((const char *)req));
		refuse(&c->wrong_session, verbose, from, why);
		return;
	}
	if (seq == 0 || want == 0 || want == MOLD_END_OF_SESSION || seq >= s->end) {
		snprintf(why, sizeof(why), "sequence %" PRIu64 " count %" PRIu64 " is outside 1..%" PRIu64,
			 seq, want, s->end - 1);
		refuse(&c->out_of_range, verbose, from, why);
		return;
	}
	while (count < want && seq + count < s->end) {
		uint64_t q = seq + count;
		uint16_t mlen;

		if (q > s->cap || s->off[q - 1] == UINT64_MAX)
			break;
		mlen = s->len[q - 1];
		if (len + MOLD_BLOCK_LENGTH_LEN + mlen > max_payload)
			break;
		wire_put_be16(pkt + len, mlen);
		memcpy(pkt + len + MOLD_BLOCK_LENGTH_LEN, s->bytes + s->off[q - 1], mlen);
		len += MOLD_BLOCK_LENGTH_LEN + mlen;
		count++;
	}
	if (!count) {
		snprintf(why, sizeof(why), "sequence %" PRIu64 " is not in the capture", seq);
		refuse(&c->not_in_capture, verbose, from, why);
		return;
	}
	memcpy(pkt + MOLD_SESSION, s->session, MOLD_SESSION_LEN);
	wire_put_be64(pkt + MOLD_SEQUENCE, seq);
	wire_put_be16(pkt + MOLD_COUNT, count);
	if (sendto(fd, pkt, len, 0, (const struct sockaddr *)from, sizeof(*from)) == (ssize_t)len) {
		c->replies++;
		c->messages_sent += count;
	}
}


int mold_serve(const struct sim_store *s, const char *listen_at, uint32_t ip, uint16_t port,
	       const struct mold_serve_opts *o)
{
	struct counters ctr;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	struct sigaction sa;
	int fd;

	memset(&ctr, 0, sizeof(ctr));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(ip);
	addr.sin_port = htons(port);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &alen) < 0) {
		fprintf(stderr, "wb-recoveryd: --listen %s: %s\n", listen_at, strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sim_on_signal;	/* no SA_RESTART: recvfrom returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "wb-recoveryd: serving %s session %s, messages 1-%" PRIu64 " (%" PRIu64
		" missing from the capture) on %s:%u\n", feed_venue_name(o->venue),
		mold_session_text(s->session), s->end - 1, s->holes,
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));

	while (!sim_stop) {
		uint8_t req[64];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t got = recvfrom(fd, req, sizeof(req), 0, (struct sockaddr *)&from, &flen);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "wb-recoveryd: receive: %s\n", strerror(errno));
			break;
		}
		ctr.requests++;
		if (o->drop_every && ctr.requests % o->drop_every == 0) {
			ctr.dropped++;
			continue;
		}
		answer(fd, s, &ctr, req, got, &from, o->max_payload, o->verbose);
	}
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " requests, %" PRIu64 " replies (%" PRIu64
		" messages); refused: %" PRIu64 " malformed, %" PRIu64 " other session, %" PRIu64
		" out of range, %" PRIu64 " not in the capture; %" PRIu64 " dropped (--drop-every)\n",
		ctr.requests, ctr.replies, ctr.messages_sent, ctr.bad_request, ctr.wrong_session,
		ctr.out_of_range, ctr.not_in_capture, ctr.dropped);
	close(fd);
	return 0;
}

