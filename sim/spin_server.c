/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd --service spin (see spin.h). */
#include "sim/spin_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "recovery/pitch_session.h"
#include "wire/bytes.h"
#include "wire/pitch.h"
#include "feed/feed.h"
#include "sim/order_image.h"
#include "sim/sim.h"

#define MAX_CLIENTS 8
#define IN_BYTES 1024
#define SPIN_PACKET 1400	/* payload of one unsequenced spin packet */
#define SHORT_TO_LONG_PRICE 100	/* 2 dp -> 4 dp */

/* ---- the book after message S ---------------------------------------------- */

/* An order in the image: stamp, the sequence that put it at the back of its queue;
 * price, its Long Price (4 dp); extra, its symbol (PITCH_SYMBOL_LEN, space-padded). */

struct status {
	char symbol[PITCH_SYMBOL_LEN];
	uint8_t msg[PITCH_TRADING_STATUS_LEN];
};

struct image {
	struct order_image book;	/* a deleted order stays, not live */
	struct status *status;
	uint32_t nstatus, status_cap;
	uint8_t time_msg[PITCH_TIME_LEN];
	bool has_time;
	/* the spin, as messages one after the other */
	uint8_t *msgs;
	size_t msgs_len;
	uint32_t msgs_count, order_count;
};

static struct image_order *live_order(struct image *im, const uint8_t *m)
{
	struct image_order *o = order_image_find(&im->book, wire_le64(m + PITCH_ORDER_ID));

	return o && o->live ? o : NULL;
}

/* -1: no memory. */
static int add(struct image *im, const uint8_t *m, uint64_t seq, uint32_t qty, const uint8_t *sym,
	       size_t symlen, uint64_t price, uint8_t flags)
{
	struct image_order *o = order_image_add(&im->book, wire_le64(m + PITCH_ORDER_ID));

	if (!o)
		return -1;
	o->live = qty > 0;
	o->stamp = seq;
	o->price = (int64_t)price;
	o->qty = qty;
	o->side = m[PITCH_SIDE];
	o->flags = flags;
	o->extra_len = PITCH_SYMBOL_LEN;
	memset(o->extra, ' ', PITCH_SYMBOL_LEN);
	memcpy(o->extra, sym, symlen);
	return 0;
}

static void reduce(struct image_order *o, uint32_t by)
{
	if (!o)
		return;
	o->qty = by >= o->qty ? 0 : o->qty - by;
	o->live = o->qty > 0;
}

static void modify(struct image_order *o, uint64_t seq, uint32_t qty, uint64_t price,
		   uint8_t flags)
{
	if (!o)
		return;
	if (!(flags & PITCH_MODIFY_MAINTAIN_PRIORITY))
		o->stamp = seq;
	o->qty = qty;
	o->price = (int64_t)price;
	o->live = qty > 0;
}

static int keep_status(struct image *im, const uint8_t *m)
{
	uint32_t i;

	for (i = 0; i < im->nstatus && memcmp(im->status[i].symbol, m + PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN); i++)
		;
	if (i == im->status_cap) {
		uint32_t cap = im->status_cap ? im->status_cap * 2 : 256;
		struct status *p = realloc(im->status, cap * sizeof(*p));

		if (!p)
			return -1;
		im->status = p;
		im->status_cap = cap;
	}
	if (i == im->nstatus) {
		memcpy(im->status[i].symbol, m + PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN);
		im->nstatus++;
	}
	memcpy(im->status[i].msg, m, PITCH_TRADING_STATUS_LEN);
	return 0;
}

/* One sequenced message of the unit, in order. */
static int apply(struct image *im, const uint8_t *m, uint16_t len, uint64_t seq)
{
	/* Add Order Expanded only in its v2.41 length (with the Customer Indicator). */
	static const uint8_t need[256] = {
		[PITCH_TIME] = PITCH_TIME_LEN,
		[PITCH_ADD_LONG] = PITCH_ADD_LONG_LEN,
		[PITCH_ADD_SHORT] = PITCH_ADD_SHORT_LEN,
		[PITCH_EXECUTED] = PITCH_EXECUTED_LEN,
		[PITCH_EXECUTED_AT_PRICE] = PITCH_EXECUTED_AT_PRICE_LEN,
		[PITCH_REDUCE_LONG] = PITCH_REDUCE_LONG_LEN,
		[PITCH_REDUCE_SHORT] = PITCH_REDUCE_SHORT_LEN,
		[PITCH_MODIFY_LONG] = PITCH_MODIFY_LONG_LEN,
		[PITCH_MODIFY_SHORT] = PITCH_MODIFY_SHORT_LEN,
		[PITCH_DELETE] = PITCH_DELETE_LEN,
		[PITCH_ADD_EXPANDED] = PITCH_ADD_EXPANDED_V241_LEN,
		[PITCH_TRADING_STATUS] = PITCH_TRADING_STATUS_LEN,
		[PITCH_UNIT_CLEAR] = PITCH_UNIT_CLEAR_LEN,
	};

	if (len < PITCH_MSG_HEADER_LEN || len < need[m[PITCH_MSG_TYPE]])
		return 0;	/* not a book message, or too short to be one */
	switch (m[PITCH_MSG_TYPE]) {
	case PITCH_TIME:
		memcpy(im->time_msg, m, PITCH_TIME_LEN);
		im->has_time = true;
		break;
	case PITCH_ADD_LONG:
		return add(im, m, seq, wire_le32(m + PITCH_ADD_LONG_QTY), m + PITCH_ADD_LONG_SYMBOL,
			   PITCH_SYMBOL_SHORT_LEN, wire_le64(m + PITCH_ADD_LONG_PRICE),
			   m[PITCH_ADD_LONG_FLAGS]);
	case PITCH_ADD_SHORT:
		return add(im, m, seq, wire_le16(m + PITCH_ADD_SHORT_QTY), m + PITCH_ADD_SHORT_SYMBOL,
			   PITCH_SYMBOL_SHORT_LEN,
			   (uint64_t)wire_le16(m + PITCH_ADD_SHORT_PRICE) * SHORT_TO_LONG_PRICE,
			   m[PITCH_ADD_SHORT_FLAGS]);
	case PITCH_ADD_EXPANDED:
		return add(im, m, seq, wire_le32(m + PITCH_ADD_EXPANDED_QTY),
			   m + PITCH_ADD_EXPANDED_SYMBOL, PITCH_SYMBOL_LEN,
			   wire_le64(m + PITCH_ADD_EXPANDED_PRICE), m[PITCH_ADD_EXPANDED_FLAGS]);
	case PITCH_EXECUTED:
		reduce(live_order(im, m), wire_le32(m + PITCH_EXECUTED_QTY));
		break;
	case PITCH_EXECUTED_AT_PRICE: {
		struct image_order *o = live_order(im, m);

		if (o) {
			o->qty = wire_le32(m + PITCH_EXECUTED_AT_PRICE_REMAINING);
			o->live = o->qty > 0;
		}
		break;
	}
	case PITCH_REDUCE_LONG:
		reduce(live_order(im, m), wire_le32(m + PITCH_REDUCE_QTY));
		break;
	case PITCH_REDUCE_SHORT:
		reduce(live_order(im, m), wire_le16(m + PITCH_REDUCE_QTY));
		break;
	case PITCH_MODIFY_LONG:
		modify(live_order(im, m), seq, wire_le32(m + PITCH_MODIFY_LONG_QTY),
		       wire_le64(m + PITCH_MODIFY_LONG_PRICE), m[PITCH_MODIFY_LONG_FLAGS]);
		break;
	case PITCH_MODIFY_SHORT:
		modify(live_order(im, m), seq, wire_le16(m + PITCH_MODIFY_SHORT_QTY),
		       (uint64_t)wire_le16(m + PITCH_MODIFY_SHORT_PRICE) * SHORT_TO_LONG_PRICE,
		       m[PITCH_MODIFY_SHORT_FLAGS]);
		break;
	case PITCH_DELETE: {
		struct image_order *o = live_order(im, m);

		if (o)
			o->live = false;
		break;
	}
	case PITCH_TRADING_STATUS:
		return keep_status(im, m);
	case PITCH_UNIT_CLEAR:
		for (size_t i = 0; i < im->book.n; i++)
			im->book.o[i].live = false;
		break;
	}
	return 0;
}

static void put_msg(struct image *im, const uint8_t *m, size_t len)
{
	memcpy(im->msgs + im->msgs_len, m, len);
	im->msgs_len += len;
	im->msgs_count++;
}

/* The book after message s: -1 when out of memory. */
static int build_image(struct image *im, const struct spin_source *src, uint64_t s)
{
	struct image_order **live;
	long got;
	uint64_t n;

	for (uint64_t q = 1; q <= s && q <= src->cap; q++)
		if (src->off[q - 1] != UINT64_MAX &&
		    apply(im, src->bytes + src->off[q - 1], src->len[q - 1], q))
			return -1;
	got = order_image_live(&im->book, NULL, NULL, order_image_by_stamp, &live);
	if (got < 0)
		return -1;
	n = (uint64_t)got;
	im->msgs = malloc(PITCH_TIME_LEN + im->nstatus * PITCH_TRADING_STATUS_LEN +
			  n * PITCH_ADD_EXPANDED_V241_LEN);
	if (!im->msgs) {
		free(live);
		return -1;
	}
	if (im->has_time)
		put_msg(im, im->time_msg, PITCH_TIME_LEN);
	for (uint32_t i = 0; i < im->nstatus; i++)
		put_msg(im, im->status[i].msg, PITCH_TRADING_STATUS_LEN);
	for (uint64_t i = 0; i < n; i++) {
		const struct image_order *o = live[i];
		bool expanded = o->extra[PITCH_SYMBOL_SHORT_LEN] != ' ' ||
				o->extra[PITCH_SYMBOL_SHORT_LEN + 1] != ' ';
		uint8_t m[PITCH_ADD_EXPANDED_V241_LEN];

		/* Long unless the symbol needs Expanded's 8 characters. */
		memset(m, 0, sizeof(m));
		if (expanded) {
			m[PITCH_MSG_LENGTH] = PITCH_ADD_EXPANDED_V241_LEN;
			m[PITCH_MSG_TYPE] = PITCH_ADD_EXPANDED;
			wire_put_le32(m + PITCH_ADD_EXPANDED_QTY, o->qty);
			memcpy(m + PITCH_ADD_EXPANDED_SYMBOL, o->extra, PITCH_SYMBOL_LEN);
			wire_put_le64(m + PITCH_ADD_EXPANDED_PRICE, (uint64_t)o->price);
			m[PITCH_ADD_EXPANDED_FLAGS] = o->flags;
			/* no Participant ID, no Customer Indicator */
			memset(m + PITCH_ADD_EXPANDED_PARTICIPANT, ' ',
			       PITCH_ADD_EXPANDED_V241_LEN - PITCH_ADD_EXPANDED_PARTICIPANT);
		} else {
			m[PITCH_MSG_LENGTH] = PITCH_ADD_LONG_LEN;
			m[PITCH_MSG_TYPE] = PITCH_ADD_LONG;
			wire_put_le32(m + PITCH_ADD_LONG_QTY, o->qty);
			memcpy(m + PITCH_ADD_LONG_SYMBOL, o->extra, PITCH_SYMBOL_SHORT_LEN);
			wire_put_le64(m + PITCH_ADD_LONG_PRICE, (uint64_t)o->price);
			m[PITCH_ADD_LONG_FLAGS] = o->flags;
		}
		wire_put_le64(m + PITCH_ORDER_ID, o->id);
		m[PITCH_SIDE] = o->side;
		put_msg(im, m, m[PITCH_MSG_LENGTH]);
	}
	im->order_count = (uint32_t)n;
	free(live);
	return 0;
}

static void free_image(struct image *im)
{
	order_image_free(&im->book);
	free(im->status);
	free(im->msgs);
}

/* ---- the sessions ------------------------------------------------------------ */

struct client {
	int fd;
	bool logged_in, first;
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	uint64_t next_image;
};

struct counters {
	uint64_t sessions, logins, logins_refused, images, requests, spins, out_of_range;
	uint64_t hangups, malformed;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int send_whole(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The spin's messages in unsequenced packets; -1 when the session broke or is to be dropped. */
static int send_spin(struct client *cl, const struct image *im, const struct spin_opts *o,
		     struct counters *c)
{
	uint8_t pkt[PITCH_HEADER_LEN + SPIN_PACKET];
	size_t off = 0, plen = PITCH_HEADER_LEN;
	uint32_t count = 0;
	uint64_t sent = 0;
	bool hangup = cl->first && o->hangup_after;

	while (off < im->msgs_len || count) {
		uint8_t mlen = off < im->msgs_len ? im->msgs[off] : 0;

		if (count && (off == im->msgs_len || plen + mlen > sizeof(pkt) || count == 255 ||
			      (hangup && sent + count == o->hangup_after))) {
			wire_put_le16(pkt + PITCH_HDR_LENGTH, plen);
			pkt[PITCH_HDR_COUNT] = (uint8_t)count;
			pkt[PITCH_HDR_UNIT] = 0;
			wire_put_le32(pkt + PITCH_HDR_SEQUENCE, 0);
			if (send_whole(cl->fd, pkt, plen))
				return -1;
			sent += count;
			count = 0;
			plen = PITCH_HEADER_LEN;
			if (hangup && sent >= o->hangup_after) {
				c->hangups++;
				return -1;
			}
			continue;
		}
		memcpy(pkt + plen, im->msgs + off, mlen);
		plen += mlen;
		off += mlen;
		count++;
	}
	return 0;
}

static bool field_is(const uint8_t *f, size_t n, const char *want)
{
	size_t l = want ? strlen(want) : 0;

	for (size_t i = 0; i < n; i++)
		if (f[i] != (i < l ? (uint8_t)want[i] : ' '))
			return false;
	return true;
}

/* One message from the client; -1: close the session. */
static int on_message(struct client *cl, const uint8_t *m, size_t mlen, uint64_t s,
		      const struct image *im, const struct spin_opts *o, struct counters *c)
{
	uint8_t f[PITCH_HEADER_LEN + SPIN_RESPONSE_LEN];
	uint32_t seq;

	if (!cl->logged_in) {
		bool ok;

		if (m[PITCH_MSG_TYPE] != PITCH_LOGIN || mlen < PITCH_LOGIN_LEN) {
			c->malformed++;
			return -1;
		}
		ok = field_is(m + PITCH_LOGIN_USER_OFF, PITCH_LOGIN_USER_LEN, o->user) &&
		     field_is(m + PITCH_LOGIN_PASSWORD_OFF, PITCH_LOGIN_PASSWORD_LEN, o->password);
		(void)send_whole(cl->fd, f, pitch_session_message(f, PITCH_LOGIN_RESPONSE,
								  (const uint8_t *)(ok ? "A" : "N"),
								  PITCH_LOGIN_RESPONSE_LEN -
								  PITCH_MSG_HEADER_LEN));
		if (!ok) {
			c->logins_refused++;
			if (o->verbose)
				fprintf(stderr, "wb-recoveryd: spin: login refused ('N')\n");
			return -1;
		}
		c->logins++;
		cl->logged_in = true;
		cl->next_image = 0;	/* at once */
		return 0;
	}
	if (spin_seq_of(m, mlen, SPIN_REQUEST, &seq)) {
		c->malformed++;
		return 0;
	}
	c->requests++;
	if (seq != s) {
		c->out_of_range++;
		if (o->verbose)
			fprintf(stderr, "wb-recoveryd: spin: request for %u, the image is %" PRIu64
				": 'O'\n", seq, s);
		return send_whole(cl->fd, f, spin_response(f, seq, 0, 'O'));
	}
	if (send_whole(cl->fd, f, spin_response(f, seq, im->order_count, 'A')) ||
	    send_spin(cl, im, o, c))
		return -1;
	c->spins++;
	return send_whole(cl->fd, f, spin_seq_message(f, SPIN_FINISHED, seq));
}

static int read_client(struct client *cl, uint64_t s, const struct image *im,
		       const struct spin_opts *o, struct counters *c)
{
	ssize_t n = recv(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, 0);
	uint32_t used = 0;
	long flen;

	if (n <= 0)
		return -1;
	cl->inlen += (uint32_t)n;
	while ((flen = pitch_session_next(cl->in + used, cl->inlen - used)) > 0) {
		size_t off = 0, mlen;
		const uint8_t *m;
		int got;

		if (flen > (long)sizeof(cl->in))
			break;
		while ((got = pitch_session_message_at(cl->in + used, (size_t)flen, &off, &m,
						       &mlen)) > 0)
			if (on_message(cl, m, mlen, s, im, o, c))
				return -1;
		if (got < 0)
			c->malformed++;
		used += (uint32_t)flen;
	}
	if (flen < 0 || (used == 0 && cl->inlen == sizeof(cl->in))) {
		c->malformed++;
		return -1;
	}
	memmove(cl->in, cl->in + used, cl->inlen - used);
	cl->inlen -= used;
	return 0;
}

int spin_serve(int lfd, const struct spin_source *src, const struct spin_opts *o,
	       volatile sig_atomic_t *stop)
{
	struct client cl[MAX_CLIENTS];
	struct counters c;
	struct image im;
	uint64_t s = o->snapshot_at ? o->snapshot_at : src->end - 1;
	bool first_taken = false;

	memset(&im, 0, sizeof(im));
	memset(&c, 0, sizeof(c));
	if (s > UINT32_MAX || build_image(&im, src, s)) {
		fprintf(stderr, "wb-recoveryd: spin: %s\n", s > UINT32_MAX ?
			"--snapshot-at: a PITCH sequence is at most 4294967295" : "out of memory");
		free_image(&im);
		return 1;
	}
	fprintf(stderr, "wb-recoveryd: spin image of unit %u after message %" PRIu64 ": %u "
		"orders, %u messages\n", src->unit, s, im.order_count, im.msgs_count);
	for (int i = 0; i < MAX_CLIENTS; i++)
		cl[i].fd = -1;
	while (!*stop) {
		struct pollfd pf[MAX_CLIENTS + 1];
		uint64_t now = now_ms();

		/* Spin Image Available once a second to each session logged in. */
		for (int i = 0; i < MAX_CLIENTS; i++) {
			uint8_t f[PITCH_HEADER_LEN + SPIN_SEQ_LEN];

			if (cl[i].fd < 0 || !cl[i].logged_in || now < cl[i].next_image)
				continue;
			cl[i].next_image = now + 1000;
			c.images++;
			if (send_whole(cl[i].fd, f, spin_seq_message(f, SPIN_IMAGE_AVAILABLE,
								     (uint32_t)s))) {
				close(cl[i].fd);
				cl[i].fd = -1;
			}
		}
		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			pf[i + 1].fd = cl[i].fd;
			pf[i + 1].events = POLLIN;
		}
		if (poll(pf, MAX_CLIENTS + 1, 100) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "wb-recoveryd: poll: %s\n", strerror(errno));
			break;
		}
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (cl[i].fd < 0 || !(pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read_client(&cl[i], s, &im, o, &c)) {
				close(cl[i].fd);
				cl[i].fd = -1;
			}
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			int i;

			for (i = 0; i < MAX_CLIENTS && cl[i].fd >= 0; i++)
				;
			if (fd >= 0 && i == MAX_CLIENTS) {
				close(fd);	/* too many sessions */
			} else if (fd >= 0) {
				cl[i].fd = fd;
				cl[i].logged_in = false;
				cl[i].first = !first_taken;
				first_taken = true;
				cl[i].inlen = 0;
				c.sessions++;
			}
		}
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " sessions, %" PRIu64 " logins, %" PRIu64
		" refused; %" PRIu64 " images announced; %" PRIu64 " spin requests, %" PRIu64
		" spins sent, %" PRIu64 " out of range ('O'); %" PRIu64 " malformed; %" PRIu64
		" sessions dropped (--hangup-after)\n", c.sessions, c.logins, c.logins_refused,
		c.images, c.requests, c.spins, c.out_of_range, c.malformed, c.hangups);
	free_image(&im);
	return 0;
}

/* --service spin: the unit to serve (given, or the capture's only one), listen, serve. */
int spin_main(struct sim_store *units, const char *pcap, int venue, const char *listen_at,
	      uint32_t ip, uint16_t port, int unit, const struct spin_opts *o)
{
	struct sockaddr_in addr;
	struct spin_source src;
	int nunits = 0, lfd, rc;

	for (int u = 0; u < SIM_PITCH_UNITS; u++) {
		if (!units[u].messages)
			continue;
		nunits++;
		if (unit < 0 && nunits == 1)
			src.unit = (uint8_t)u;
	}
	if (unit >= 0)
		src.unit = (uint8_t)unit;
	if (!nunits || (unit >= 0 && !units[unit].messages) || (unit < 0 && nunits > 1)) {
		fprintf(stderr, "wb-recoveryd: %s: %s\n", pcap, !nunits ?
			"no PITCH message of the venue on its groups" : unit >= 0 ?
			"no message of that --unit" : "several units: give --unit N (a Spin server "
			"serves one)");
		return nunits ? 2 : 1;
	}
	src.end = units[src.unit].end;
	src.cap = units[src.unit].cap;
	src.off = units[src.unit].off;
	src.len = units[src.unit].len;
	src.bytes = units[src.unit].bytes;
	if (o->snapshot_at >= src.end) {
		fprintf(stderr, "wb-recoveryd: --snapshot-at %" PRIu64 ": unit %u ends at %" PRIu64
			"\n", o->snapshot_at, src.unit, src.end - 1);
		return 2;
	}
	lfd = sim_tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s Spin of unit %u, messages 1-%" PRIu64 " on %s:%u\n",
		feed_venue_name(venue), src.unit, src.end - 1, inet_ntoa(addr.sin_addr),
		ntohs(addr.sin_port));
	rc = spin_serve(lfd, &src, o, &sim_stop);
	close(lfd);
	for (int u = 0; u < SIM_PITCH_UNITS; u++)
		sim_store_free(&units[u]);
	return rc;
}

