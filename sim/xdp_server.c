// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * wb-recoveryd --service xdp: the NYSE XDP Request Server of one channel
 * (docs/specs/nyse-xdp-notes.md, "Recovery"; docs/specs/nyse-xdp-recovery-notes.md).
 *
 * TCP sessions carry requests in XDP packets; each Retransmission Request
 * gets a Request Response (status '0' accepted, or the refusal), and an
 * accepted range goes out over UDP to the retransmission channel
 * (--reply-to): the messages byte for byte with their original sequence
 * numbers, repacked into packets of up to --max-payload bytes, DeliveryFlag
 * 13 when the range fits one packet, else 15 on each. What the capture
 * does not have (lost there too, or beyond its end) is a Message
 * Unavailable (31, DeliveryFlag 21) for each missing run. Every session
 * gets a heartbeat (DeliveryFlag 1, no message) every --heartbeat-interval
 * and is dropped when no Heartbeat Response comes within 5 s of one.
 *
 * Refresh (--snapshot-at SEQ): a Refresh Request gets its Request
 * Response, then the channel's book as of SEQ of the session's epoch on
 * the refresh channel (--refresh-to): for each symbol, packets that begin
 * with a Refresh Header (the first with LastSeqNum SEQ), then its Symbol
 * Index Mapping, its last Security Status and an Add Order Refresh per
 * live order in queue order. DeliveryFlag 18 starts the refresh, 20 ends
 * it, 19 between, 17 when it is one packet; packets are numbered from 1
 * in SeqNum so a client sees one go missing.
 *
 * Sequence epochs: a channel starts over at 1 after a Sequence Number
 * Reset (a failover). A live server serves the current epoch; a replay
 * holds them all and cannot see which one a client is in, so it follows
 * the client: a session starts in the first epoch, and a request that
 * begins below the session's previous one moves it to the next (a
 * client's holes only go up within an epoch). A client that reconnects
 * after a failover is served the first epoch again: a limit of the replay.
 */
#include "sim/xdp_server.h"

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

#include "wire/bytes.h"
#include "wire/xdp.h"
#include "feed/feed.h"
#include "sim/order_image.h"
#include "sim/sim.h"
#include "recovery/recovery_xdp.h"

#define MAX_EPOCHS 16
#define MAX_LINES 8
#define MAX_CLIENTS 8
#define IN_BYTES 4096
#define MAX_PACKET 1472
#define HEARTBEAT_ANSWER_NS 5000000000ull	/* the spec's 5 s */
#define NOT_HERE UINT64_MAX

struct epoch {
	uint64_t token;		/* its reset's SourceTime (0: the capture began without one) */
	uint32_t end;		/* one past the highest sequence held */
	uint32_t cap;
	uint64_t *off;		/* by sequence - 1: offset in bytes, NOT_HERE when missing */
	uint16_t *len;
};

static struct {
	struct epoch ep[MAX_EPOCHS];
	int n;
	uint64_t line_key[MAX_LINES];	/* each line follows its own resets (B may lag A) */
	int line_epoch[MAX_LINES];
	int lines;
	uint8_t *bytes;
	size_t used, cap;
	uint64_t messages;
} st;

static int epoch_grow(struct epoch *e, uint32_t seq)
{
	uint32_t cap = e->cap ? e->cap : 1u << 16;

	while (cap < seq)
		cap *= 2;
	uint64_t *off = realloc(e->off, (size_t)cap * sizeof(*off));
	uint16_t *len = off ? realloc(e->len, (size_t)cap * sizeof(*len)) : NULL;

	if (off)
		e->off = off;
	if (!len)
		return -1;
	e->len = len;
	for (uint32_t i = e->cap; i < cap; i++)
		e->off[i] = NOT_HERE;
	e->cap = cap;
	return 0;
}

static int keep(struct epoch *e, uint32_t seq, const uint8_t *m, uint16_t mlen)
{
	if (seq > e->cap && epoch_grow(e, seq))
		return -1;
	if (e->off[seq - 1] != NOT_HERE)
		return 0;	/* the other line's copy */
	if (st.used + mlen > st.cap) {
		size_t cap = st.cap ? st.cap * 2 : 1u << 20;
		uint8_t *b = realloc(st.bytes, cap);

		if (!b)
			return -1;
		st.bytes = b;
		st.cap = cap;
	}
	e->off[seq - 1] = st.used;
	e->len[seq - 1] = mlen;
	memcpy(st.bytes + st.used, m, mlen);
	st.used += mlen;
	st.messages++;
	if (seq + 1 > e->end)
		e->end = seq + 1;
	return 0;
}

/* The index of a line (by its address), or -1 when there are too many. */
static int line_of(uint64_t key)
{
	for (int i = 0; i < st.lines; i++)
		if (st.line_key[i] == key)
			return i;
	if (st.lines == MAX_LINES)
		return -1;
	st.line_key[st.lines] = key;
	st.line_epoch[st.lines] = 0;
	return st.lines++;
}

int xdp_store_packet(uint64_t line_key, const uint8_t *p, uint32_t len)
{
	uint32_t plen, seq, off = XDP_HEADER_LEN;
	struct epoch *e;
	int line;

	if (len < XDP_HEADER_LEN || (plen = wire_le16(p + XDP_PKT_SIZE)) < XDP_HEADER_LEN ||
	    plen > len || !p[XDP_PKT_NUMBER_MSGS] || !(seq = wire_le32(p + XDP_PKT_SEQ_NUM)) ||
	    (line = line_of(line_key)) < 0)
		return 0;	/* not a packet, a heartbeat, or a line too many */
	if (!st.n)
		st.n = 1;	/* the capture may begin mid-epoch */
	/* A Sequence Number Reset (type 1, alone at 1): the line enters its epoch, new or known
	 * (its SourceTime tells). */
	if (seq == 1 && plen >= XDP_HEADER_LEN + XDP_SEQUENCE_RESET_LEN &&
	    wire_le16(p + XDP_HEADER_LEN + XDP_MSG_TYPE) == XDP_SEQUENCE_RESET) {
		const uint8_t *m = p + XDP_HEADER_LEN;
		uint64_t token = (uint64_t)wire_le32(m + XDP_TIMED_SOURCE_TIME) << 32 |
				 wire_le32(m + XDP_TIMED_SOURCE_TIME_NS);
		int k;

		for (k = 0; k < st.n && st.ep[k].token != token; k++)
			;
		if (k == st.n && st.n == 1 && !st.ep[0].token && !st.ep[0].end)
			k = 0;	/* the first reset opens the first epoch */
		else if (k == st.n && st.n < MAX_EPOCHS)
			st.n++;
		else if (k == st.n)
			return 0;	/* more failovers than kept: not served */
		st.ep[k].token = token;
		st.line_epoch[line] = k;
	}
	e = &st.ep[st.line_epoch[line]];
	for (uint8_t i = 0; i < p[XDP_PKT_NUMBER_MSGS]; i++, seq++) {
		uint16_t mlen;

		if (off + XDP_MSG_HEADER_LEN > plen ||
		    (mlen = wire_le16(p + off + XDP_MSG_SIZE)) < XDP_MSG_HEADER_LEN || off + mlen > plen)
			break;	/* the rest is not in the capture */
		if (keep(e, seq, p + off, mlen))
			return -1;
		off += mlen;
	}
	return 0;
}

void xdp_store_summary(uint64_t *messages, int *epochs, uint64_t *holes)
{
	*messages = st.messages;
	*epochs = st.n;
	*holes = 0;
	for (int k = 0; k < st.n; k++)
		for (uint32_t q = 1; q < st.ep[k].end; q++)
			*holes += st.ep[k].off[q - 1] == NOT_HERE;
}

void xdp_store_free(void)
{
	for (int k = 0; k < st.n; k++) {
		free(st.ep[k].off);
		free(st.ep[k].len);
	}
	free(st.bytes);
	memset(&st, 0, sizeof(st));
}

/* ---- serving ---------------------------------------------------------------- */

struct counters {
	uint64_t sessions, requests, accepted, packets, messages, unavailable_ranges;
	uint64_t refused_source, refused_range, refused_quota, refused_channel, refused_product;
	uint64_t refused_type, heartbeats, heartbeat_responses, heartbeat_timeouts, hangups;
	uint64_t epoch_moves, refreshes, refresh_packets, refresh_orders;
};

struct session {
	int fd;
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	uint32_t seq;		/* the server's packets on this session */
	uint64_t next_heartbeat, answer_by;	/* answer_by 0: no heartbeat unanswered */
	int epoch;		/* the epoch its client is in (see the top) */
	uint32_t last_begin;
};

struct server {
	const struct xdp_serve_opts *o;
	int ufd;
	struct counters c;
	struct session cl[MAX_CLIENTS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send_udp(struct server *s, const uint8_t *p, size_t len)
{
	if (sendto(s->ufd, p, len, 0, (const struct sockaddr *)&s->o->reply_to,
		   sizeof(s->o->reply_to)) == (ssize_t)len)
		s->c.packets++;
}

static void unavailable(struct server *s, uint32_t begin, uint32_t end)
{
	uint8_t pkt[XDP_HEADER_LEN + XDP_MESSAGE_UNAVAILABLE_LEN];
	size_t len = xdp_encode_unavailable(pkt, begin, end, s->o->product, s->o->channel,
					    wall_ns());

	s->c.unavailable_ranges++;
	send_udp(s, pkt, len);
}

/* Messages begin..end (inclusive) of the client's epoch to the retransmission channel. */
static void replay(struct server *s, int epoch, uint32_t begin, uint32_t end)
{
	const struct epoch *e = &st.ep[epoch];
	uint8_t pkt[MAX_PACKET];
	uint64_t seq = begin;
	bool first_packet = true;

	while (seq <= end) {
		uint32_t len = XDP_HEADER_LEN;
		uint8_t n = 0;
		uint64_t from = seq;

		if (seq >= e->end || e->off[seq - 1] == NOT_HERE) {
			/* A run the capture does not have. */
			while (seq <= end && (seq >= e->end || e->off[seq - 1] == NOT_HERE))
				seq++;
			unavailable(s, (uint32_t)from, (uint32_t)(seq - 1));
			first_packet = false;
			continue;
		}
		while (seq <= end && seq < e->end && e->off[seq - 1] != NOT_HERE && n < 255 &&
		       len + e->len[seq - 1] <= s->o->max_payload) {
			memcpy(pkt + len, st.bytes + e->off[seq - 1], e->len[seq - 1]);
			len += e->len[seq - 1];
			n++;
			seq++;
		}
		xdp_put_header(pkt, (uint16_t)len,
			       first_packet && seq > end ? XDP_DELIVERY_RETRANS_ONE : XDP_DELIVERY_RETRANS_PART,
			       n, (uint32_t)from, wall_ns());
		first_packet = false;
		s->c.messages += n;
		send_udp(s, pkt, len);
	}
}

/* ---- the book as of a sequence, for a refresh -------------------------------- */

#define REFRESH_KEYS 65536	/* SymbolIndex values a refresh restates */

struct rbook {
	struct order_image im;	/* key: SymbolIndex; qty: volume; extra: the firm */
	const uint8_t *mapping[REFRESH_KEYS];
	const uint8_t *status[REFRESH_KEYS];
};

static struct image_order *rfind(struct rbook *b, uint64_t id)
{
	return order_image_find(&b->im, id);
}

static struct image_order *radd(struct rbook *b, uint64_t id, uint32_t key)
{
	struct image_order *o = order_image_add(&b->im, id);

	if (o)
		o->key = key;
	return o;
}

static void rclear_key(struct rbook *b, uint32_t key)
{
	for (size_t k = 0; k < b->im.n; k++)
		if (b->im.o[k].key == key)
			b->im.o[k].live = false;
}

/* One stored message into the book (the decoder's book rules, lib/feed/xdp.c). */
static int rapply(struct rbook *b, const uint8_t *m, uint16_t len)
{
	uint16_t type = wire_le16(m + XDP_MSG_TYPE);
	uint32_t key;
	struct image_order *o;

	if (len < XDP_TIMED_SYMBOL_INDEX + 4)
		return 0;	/* shorter than any prefix read below */
	switch (type) {
	case XDP_SYMBOL_MAPPING:
		key = wire_le32(m + XDP_MAPPING_INDEX);
		if (key < REFRESH_KEYS && len >= XDP_SYMBOL_MAPPING_LEN)
			b->mapping[key] = m;
		return 0;
	case XDP_SYMBOL_CLEAR:
		key = wire_le32(m + XDP_TIMED_SYMBOL_INDEX);
		rclear_key(b, key);
		if (key < REFRESH_KEYS)
			b->status[key] = NULL;
		return 0;
	case XDP_SECURITY_STATUS:	/* 'X' ends the symbol's orders without deletes */
		key = wire_le32(m + XDP_TIMED_SYMBOL_INDEX);
		if (key < REFRESH_KEYS && len >= XDP_SECURITY_STATUS_LEN)
			b->status[key] = m;
		if (len >= XDP_SECURITY_STATUS_LEN && m[XDP_STATUS_STATUS] == 'X')
			rclear_key(b, key);
		return 0;
	case XDP_ADD_ORDER:
		if (len < XDP_ADD_ORDER_LEN ||
		    !(o = radd(b, wire_le64(m + XDP_ORDER_ID), wire_le32(m + XDP_SYMBOL_INDEX))))
			return len < XDP_ADD_ORDER_LEN ? 0 : -1;
		o->price = (int32_t)wire_le32(m + XDP_ADD_PRICE);
		o->qty = wire_le32(m + XDP_ADD_VOLUME);
		o->side = m[XDP_ADD_SIDE];
		memcpy(o->extra, m + XDP_ADD_FIRM, XDP_FIRM_LEN);
		return 0;
	case XDP_ADD_ORDER_REFRESH:
		if (len < XDP_ADD_ORDER_REFRESH_LEN ||
		    !(o = radd(b, wire_le64(m + XDP_REFRESH_ORDER_ID),
			       wire_le32(m + XDP_TIMED_SYMBOL_INDEX))))
			return len < XDP_ADD_ORDER_REFRESH_LEN ? 0 : -1;
		o->price = (int32_t)wire_le32(m + XDP_REFRESH_PRICE);
		o->qty = wire_le32(m + XDP_REFRESH_VOLUME);
		o->side = m[XDP_REFRESH_SIDE];
		memcpy(o->extra, m + XDP_REFRESH_FIRM, XDP_FIRM_LEN);
		return 0;
	case XDP_MODIFY_ORDER:	/* a new price loses the place in the queue */
		if (len < XDP_MODIFY_ORDER_LEN || !(o = rfind(b, wire_le64(m + XDP_ORDER_ID))) ||
		    !o->live)
			return 0;
		if ((int32_t)wire_le32(m + XDP_MODIFY_PRICE) != o->price)
			order_image_restamp(&b->im, o);
		o->price = (int32_t)wire_le32(m + XDP_MODIFY_PRICE);
		o->qty = wire_le32(m + XDP_MODIFY_VOLUME);
		o->live = o->qty != 0;
		return 0;
	case XDP_DELETE_ORDER:
		if (len >= XDP_DELETE_ORDER_LEN && (o = rfind(b, wire_le64(m + XDP_ORDER_ID))))
			o->live = false;
		return 0;
	case XDP_ORDER_EXECUTION:	/* the remainder keeps its price and place */
		if (len < XDP_ORDER_EXECUTION_LEN || !(o = rfind(b, wire_le64(m + XDP_ORDER_ID))) ||
		    !o->live)
			return 0;
		o->qty = wire_le32(m + XDP_EXECUTION_VOLUME) >= o->qty ?
			 0 : o->qty - wire_le32(m + XDP_EXECUTION_VOLUME);
		o->live = o->qty != 0;
		return 0;
	case XDP_REPLACE_ORDER: {	/* the new id, a new place */
		struct image_order old;

		if (len < XDP_REPLACE_ORDER_LEN || !(o = rfind(b, wire_le64(m + XDP_ORDER_ID))) ||
		    !o->live)
			return 0;
		old = *o;
		o->live = false;
		if (!(o = radd(b, wire_le64(m + XDP_REPLACE_NEW_ORDER_ID), old.key)))
			return -1;
		o->price = (int32_t)wire_le32(m + XDP_REPLACE_PRICE);
		o->qty = wire_le32(m + XDP_REPLACE_VOLUME);
		o->side = old.side;
		memcpy(o->extra, old.extra, XDP_FIRM_LEN);
		return 0;
	}
	default:
		return 0;
	}
}

struct rsender {
	struct server *s;
	uint8_t pkt[MAX_PACKET];
	uint32_t len;
	uint8_t count;
	bool pending, first_sent;
	uint32_t packet_seq;
	uint64_t now;
};

/* The packet built so far goes out; `last`: it ends the refresh. */
static void rflush(struct rsender *r, bool last)
{
	uint8_t flag;

	if (!r->pending)
		return;
	if (!r->first_sent)
		flag = last ? XDP_DELIVERY_REFRESH_ONE : XDP_DELIVERY_REFRESH_START;
	else
		flag = last ? XDP_DELIVERY_REFRESH_END : XDP_DELIVERY_REFRESH_PART;
	xdp_put_header(r->pkt, (uint16_t)r->len, flag, r->count, ++r->packet_seq, r->now);
	if (sendto(r->s->ufd, r->pkt, r->len, 0, (const struct sockaddr *)&r->s->o->refresh_to,
		   sizeof(r->s->o->refresh_to)) == (ssize_t)r->len)
		r->s->c.refresh_packets++;
	r->first_sent = true;
	r->pending = false;
}

static uint8_t *rmsg(struct rsender *r, uint16_t len)
{
	uint8_t *m = r->pkt + r->len;

	r->len += len;
	r->count++;
	return m;
}

/*
 * A symbol's refresh: its packets, each led by a Refresh Header. The packet
 * of the previous symbol is held back until this one starts, so the last
 * packet of all can carry the end flag.
 */
static void refresh_symbol(struct rsender *r, const struct rbook *b, uint32_t key,
			   struct image_order **o, size_t n, uint32_t last_seq)
{
	uint32_t room = r->s->o->max_payload;
	uint32_t head = XDP_REFRESH_HEADER_FIRST_LEN + XDP_SYMBOL_MAPPING_LEN +
			(b->status[key] ? XDP_SECURITY_STATUS_LEN : 0);
	uint32_t per_first = head + XDP_HEADER_LEN <= room ?
			     (room - head - XDP_HEADER_LEN) / XDP_ADD_ORDER_REFRESH_LEN : 0;
	uint32_t per_next = (room - XDP_HEADER_LEN - XDP_REFRESH_HEADER_LEN) /
			    XDP_ADD_ORDER_REFRESH_LEN;
	uint16_t total = 1, pkt = 1;
	size_t k = 0;
	uint8_t *m;

	if (n > per_first)
		total = (uint16_t)(1 + (n - per_first + per_next - 1) / per_next);
	for (;;) {
		bool first = pkt == 1;
		uint16_t hlen = first ? XDP_REFRESH_HEADER_FIRST_LEN : XDP_REFRESH_HEADER_LEN;

		rflush(r, false);
		r->len = XDP_HEADER_LEN;
		r->count = 0;
		r->pending = true;
		m = rmsg(r, hlen);
		memset(m, 0, hlen);
		wire_put_le16(m + XDP_MSG_SIZE, hlen);
		wire_put_le16(m + XDP_MSG_TYPE, XDP_REFRESH_HEADER);
		wire_put_le16(m + XDP_REFRESH_CURRENT_PKT, pkt);
		wire_put_le16(m + XDP_REFRESH_TOTAL_PKTS, total);
		if (first) {
			wire_put_le32(m + XDP_REFRESH_LAST_SEQ_NUM, last_seq);
			memcpy(rmsg(r, XDP_SYMBOL_MAPPING_LEN), b->mapping[key], XDP_SYMBOL_MAPPING_LEN);
			if (b->status[key])
				memcpy(rmsg(r, XDP_SECURITY_STATUS_LEN), b->status[key],
				       XDP_SECURITY_STATUS_LEN);
		}
		for (uint32_t i = 0; k < n && i < (first ? per_first : per_next); i++, k++) {
			m = rmsg(r, XDP_ADD_ORDER_REFRESH_LEN);
			memset(m, 0, XDP_ADD_ORDER_REFRESH_LEN);
			wire_put_le16(m + XDP_MSG_SIZE, XDP_ADD_ORDER_REFRESH_LEN);
			wire_put_le16(m + XDP_MSG_TYPE, XDP_ADD_ORDER_REFRESH);
			wire_put_le32(m + XDP_TIMED_SYMBOL_INDEX, o[k]->key);
			wire_put_le64(m + XDP_REFRESH_ORDER_ID, o[k]->id);
			wire_put_le32(m + XDP_REFRESH_PRICE, (uint32_t)o[k]->price);
			wire_put_le32(m + XDP_REFRESH_VOLUME, o[k]->qty);
			m[XDP_REFRESH_SIDE] = o[k]->side;
			memcpy(m + XDP_REFRESH_FIRM, o[k]->extra, XDP_FIRM_LEN);
			r->s->c.refresh_orders++;
		}
		if (k >= n)
			return;
		pkt++;
	}
}

/* A refresh restates the orders of the symbols it has a mapping for. */
static bool mapped(const struct image_order *o, const void *ctx)
{
	const struct rbook *b = ctx;

	return o->key < REFRESH_KEYS && b->mapping[o->key];
}

/* The channel's book as of --snapshot-at in the session's epoch, on the refresh channel. */
static int refresh(struct server *s, int epoch, uint32_t symbol_index)
{
	const struct epoch *e = &st.ep[epoch];
	uint64_t upto = s->o->snapshot_at < e->end ? s->o->snapshot_at : e->end - 1;
	struct rbook *b = calloc(1, sizeof(*b));
	struct image_order **live = NULL;
	struct rsender r = { .s = s, .now = wall_ns() };
	size_t n = 0, k = 0;
	long got;
	int rc = -1;

	if (!b)
		goto out;
	for (uint64_t q = 1; q <= upto; q++)
		if (e->off[q - 1] != NOT_HERE && rapply(b, st.bytes + e->off[q - 1], e->len[q - 1]))
			goto out;
	got = order_image_live(&b->im, mapped, b, order_image_by_key_then_stamp, &live);
	if (got < 0)
		goto out;
	n = (size_t)got;
	for (uint32_t key = 0; key < REFRESH_KEYS; key++) {
		size_t from = k;

		while (k < n && live[k]->key == key)
			k++;
		if (!b->mapping[key] || (symbol_index && key != symbol_index))
			continue;
		refresh_symbol(&r, b, key, live + from, k - from, (uint32_t)upto);
	}
	rflush(&r, true);
	s->c.refreshes++;
	rc = 0;
out:
	free(live);
	if (b)
		order_image_free(&b->im);
	free(b);
	return rc;
}

static void log_refusal(const struct server *s, const struct xdp_request *r, uint8_t status)
{
	if (s->o->verbose)
		fprintf(stderr, "wb-recoveryd: retransmission request %u-%u from '%.10s' refused: "
			"status %c (%s)\n", r->begin, r->end, r->source_id, status,
			xdp_status_text(status));
}

/* A request's status; accepted ones are counted against the quota. */
static uint8_t judge(struct server *s, const struct xdp_request *r)
{
	const struct xdp_serve_opts *o = s->o;

	if (o->source_id[0] && strncmp(r->source_id, o->source_id, XDP_SOURCE_ID_LEN)) {
		s->c.refused_source++;
		return XDP_ST_BAD_SOURCE;
	}
	if (r->product != o->product) {
		s->c.refused_product++;
		return XDP_ST_BAD_PRODUCT;
	}
	if (r->channel != o->channel) {
		s->c.refused_channel++;
		return XDP_ST_BAD_CHANNEL;
	}
	if (r->type == XDP_REFRESH_REQUEST) {
		if (!o->snapshot_at) {
			s->c.refused_type++;	/* no refresh served: --snapshot-at */
			return XDP_ST_BAD_TYPE;
		}
		return XDP_ST_ACCEPTED;
	}
	if (!r->begin || r->end < r->begin || r->end - r->begin >= XDP_MAX_RETRANS) {
		s->c.refused_range++;
		return XDP_ST_RANGE_TOO_LARGE;
	}
	if (o->quota && s->c.accepted - s->c.refreshes >= o->quota) {
		s->c.refused_quota++;
		return XDP_ST_DAILY_LIMIT;
	}
	return XDP_ST_ACCEPTED;
}

/* One request message; -1: drop the session. */
static int request(struct server *s, struct session *cl, uint32_t pkt_seq, const uint8_t *m,
		   uint32_t mlen)
{
	struct xdp_request r;
	struct xdp_response resp;
	uint8_t out[XDP_HEADER_LEN + XDP_REQUEST_RESPONSE_LEN];
	size_t len;

	bool malformed = xdp_parse_request(m, mlen, &r) != 0;

	if (malformed) {
		memset(&r, 0, sizeof(r));
	} else if (r.type == XDP_HEARTBEAT_RESPONSE) {
		s->c.heartbeat_responses++;
		cl->answer_by = 0;
		return 0;
	}
	s->c.requests++;
	if (s->o->hangup_after && s->c.requests > s->o->hangup_after) {
		s->c.hangups++;
		if (s->o->verbose)
			fprintf(stderr, "wb-recoveryd: session dropped (--hangup-after)\n");
		return -1;
	}
	resp = (struct xdp_response){
		.request_seq = pkt_seq, .begin = r.begin, .end = r.end,
		.product = r.product, .channel = r.channel,
	};
	memcpy(resp.source_id, r.source_id, XDP_SOURCE_ID_LEN);
	if (malformed) {
		/* Another type, or a size that is not its type's. */
		s->c.refused_type++;
		resp.status = XDP_ST_BAD_TYPE;
	} else {
		resp.status = judge(s, &r);
	}
	len = xdp_encode_request_response(out, ++cl->seq, &resp, wall_ns());
	if (send(cl->fd, out, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	if (resp.status != XDP_ST_ACCEPTED) {
		log_refusal(s, &r, resp.status);
		return 0;
	}
	s->c.accepted++;
	if (r.type == XDP_REFRESH_REQUEST)
		return refresh(s, cl->epoch, r.symbol_index) ? -1 : 0;
	if (r.begin < cl->last_begin && cl->epoch + 1 < st.n) {
		cl->epoch++;
		s->c.epoch_moves++;
	}
	cl->last_begin = r.begin;
	replay(s, cl->epoch, r.begin, r.end);
	return 0;
}

/* Take what a session sent; -1 when it ends. */
static int session_read(struct server *s, struct session *cl)
{
	ssize_t n = recv(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, 0);
	uint32_t used = 0;

	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	cl->inlen += (uint32_t)n;
	while (cl->inlen - used >= XDP_HEADER_LEN) {
		const uint8_t *p = cl->in + used;
		uint16_t plen = wire_le16(p + XDP_PKT_SIZE);
		uint32_t off = XDP_HEADER_LEN;

		if (plen < XDP_HEADER_LEN)
			return -1;
		if (cl->inlen - used < plen)
			break;
		for (uint8_t k = 0; k < p[XDP_PKT_NUMBER_MSGS]; k++) {
			uint16_t mlen;

			if (off + XDP_MSG_HEADER_LEN > plen ||
			    (mlen = wire_le16(p + off + XDP_MSG_SIZE)) < XDP_MSG_HEADER_LEN ||
			    off + mlen > plen)
				return -1;	/* not framed: nothing after it can be read */
			if (request(s, cl, wire_le32(p + XDP_PKT_SEQ_NUM), p + off, mlen))
				return -1;
			off += mlen;
		}
		used += plen;
	}
	memmove(cl->in, cl->in + used, cl->inlen - used);
	cl->inlen -= used;
	return 0;
}

/* Heartbeats due, and sessions that did not answer theirs. */
static void heartbeats(struct server *s, uint64_t now)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct session *cl = &s->cl[i];
		uint8_t hb[XDP_HEADER_LEN];

		if (cl->fd < 0)
			continue;
		if (cl->answer_by && now > cl->answer_by) {
			s->c.heartbeat_timeouts++;
			close(cl->fd);
			cl->fd = -1;
			continue;
		}
		if (now < cl->next_heartbeat)
			continue;
		cl->next_heartbeat = now + s->o->heartbeat_ms * 1000000ull;
		xdp_put_header(hb, XDP_HEADER_LEN, XDP_DELIVERY_HEARTBEAT, 0, cl->seq + 1, wall_ns());
		if (send(cl->fd, hb, sizeof(hb), MSG_NOSIGNAL) == (ssize_t)sizeof(hb)) {
			s->c.heartbeats++;
			if (!cl->answer_by)
				cl->answer_by = now + HEARTBEAT_ANSWER_NS;
		}
	}
}

int xdp_serve(int lfd, const char *listen_text, const struct xdp_serve_opts *o,
	      volatile sig_atomic_t *stop)
{
	struct server *s = calloc(1, sizeof(*s));
	struct counters *c;

	(void)listen_text;
	if (!s)
		return 1;
	s->o = o;
	s->ufd = socket(AF_INET, SOCK_DGRAM, 0);
	if (s->ufd < 0) {
		fprintf(stderr, "wb-recoveryd: socket: %s\n", strerror(errno));
		free(s);
		return 1;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		s->cl[i].fd = -1;
	while (!*stop) {
		struct pollfd pf[MAX_CLIENTS + 1];
		uint64_t now = mono_ns();

		heartbeats(s, now);
		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			pf[i + 1].fd = s->cl[i].fd;
			pf[i + 1].events = POLLIN;
		}
		if (poll(pf, MAX_CLIENTS + 1, 50) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "wb-recoveryd: poll: %s\n", strerror(errno));
			break;
		}
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (s->cl[i].fd < 0 || !(pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (session_read(s, &s->cl[i])) {
				close(s->cl[i].fd);
				s->cl[i].fd = -1;
			}
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			int i;

			for (i = 0; i < MAX_CLIENTS && s->cl[i].fd >= 0; i++)
				;
			if (fd >= 0 && i == MAX_CLIENTS) {
				close(fd);	/* too many sessions */
			} else if (fd >= 0) {
				memset(&s->cl[i], 0, sizeof(s->cl[i]));
				s->cl[i].fd = fd;
				s->cl[i].next_heartbeat = now + o->heartbeat_ms * 1000000ull;
				s->c.sessions++;
				if (o->hangup_after && s->c.requests >= o->hangup_after) {
					s->c.hangups++;	/* a server that keeps dropping its sessions */
					close(fd);
					s->cl[i].fd = -1;
				}
			}
		}
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->cl[i].fd >= 0)
			close(s->cl[i].fd);
	close(s->ufd);
	c = &s->c;
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " sessions; %" PRIu64 " requests, %" PRIu64
		" accepted (%" PRIu64 " packets, %" PRIu64 " messages, %" PRIu64 " ranges "
		"unavailable); refused: %" PRIu64 " source id, %" PRIu64 " range, %" PRIu64
		" daily limit, %" PRIu64 " channel, %" PRIu64 " product, %" PRIu64 " type; %" PRIu64
		" heartbeats, %" PRIu64 " answered, %" PRIu64 " sessions dropped unanswered; %" PRIu64
		" sessions dropped (--hangup-after); %" PRIu64 " epoch changes; %" PRIu64
		" refreshes (%" PRIu64 " packets, %" PRIu64 " orders)\n", c->sessions,
		c->requests, c->accepted, c->packets, c->messages, c->unavailable_ranges,
		c->refused_source, c->refused_range, c->refused_quota, c->refused_channel,
		c->refused_product, c->refused_type, c->heartbeats, c->heartbeat_responses,
		c->heartbeat_timeouts, c->hangups, c->epoch_moves, c->refreshes, c->refresh_packets,
		c->refresh_orders);
	free(s);
	return 0;
}

/* --service xdp: listen, serve, and say what was served. */
int xdp_main(const char *pcap, const char *listen_at, uint32_t ip, uint16_t port,
	     struct xdp_serve_opts *o)
{
	struct sockaddr_in addr;
	uint64_t messages, holes;
	int epochs, lfd, rc;

	xdp_store_summary(&messages, &epochs, &holes);
	if (!messages) {
		fprintf(stderr, "wb-recoveryd: %s: no XDP message of venue %s channel %u on its "
			"groups\n", pcap, feed_venue_name(o->venue), o->channel);
		return 1;
	}
	lfd = sim_tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s XDP channel %u (product %u), %" PRIu64
		" messages in %d sequence epochs (%" PRIu64 " missing from the capture), "
		"retransmissions to %s, on %s:%u\n", feed_venue_name(o->venue), o->channel,
		o->product, messages, epochs, holes, inet_ntoa(o->reply_to.sin_addr),
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
	rc = xdp_serve(lfd, listen_at, o, &sim_stop);
	close(lfd);
	xdp_store_free();
	return rc;
}
