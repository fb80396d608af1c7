/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* NYSE XDP gap recovery: Request Server messages and the client (see recovery_xdp.h). */
#include "recovery/recovery_xdp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feedtext/address.h"
#include "wire/bytes.h"
#include "recovery/recovery_internal.h"

#define NS_PER_SEC 1000000000ull
#define MS 1000000ull
#define RCVBUF (4 << 20)
#define MAX_DATAGRAM 2048
#define IN_BYTES 1024
#define IDLE_READ_NS (10 * MS)	/* an idle session is read this often (heartbeats) */
#define CONNECT_WAIT_NS (1000 * MS)

uint8_t xdp_product_of_venue(int venue)
{
	switch (venue) {
	case WB_VENUE_NYSE: return 11;
	case WB_VENUE_AMERICAN: return 59;
	case WB_VENUE_NATIONAL: return 109;
	case WB_VENUE_ARCA: return 157;
	case WB_VENUE_TEXAS: return 209;
	default: return 0;
	}
}

void xdp_put_header(uint8_t *p, uint16_t size, uint8_t flag, uint8_t count, uint32_t seq,
		    uint64_t send_ns)
{
	wire_put_le16(p + XDP_PKT_SIZE, size);
	p[XDP_PKT_DELIVERY_FLAG] = flag;
	p[XDP_PKT_NUMBER_MSGS] = count;
	wire_put_le32(p + XDP_PKT_SEQ_NUM, seq);
	wire_put_le32(p + XDP_PKT_SEND_TIME, send_ns / NS_PER_SEC);
	wire_put_le32(p + XDP_PKT_SEND_TIME_NS, send_ns % NS_PER_SEC);
}

static uint8_t *message(uint8_t *out, uint16_t type, uint16_t len, uint8_t flag, uint32_t seq,
			uint64_t send_ns)
{
	uint8_t *m = out + XDP_HEADER_LEN;

	xdp_put_header(out, (uint16_t)(XDP_HEADER_LEN + len), flag, 1, seq, send_ns);
	memset(m, 0, len);
	wire_put_le16(m + XDP_MSG_SIZE, len);
	wire_put_le16(m + XDP_MSG_TYPE, type);
	return m;
}

/* A SourceID: NUL padded, cut at 10 characters. */
static void put_source(uint8_t *p, const char *source_id)
{
	size_t n = strnlen(source_id, XDP_SOURCE_ID_LEN);

	memset(p, 0, XDP_SOURCE_ID_LEN);
	memcpy(p, source_id, n);
}

size_t xdp_encode_retrans_request(uint8_t *out, uint32_t request_seq, uint32_t begin,
				  uint32_t end, const char *source_id, uint8_t product,
				  uint8_t channel, uint64_t send_ns)
{
	uint8_t *m = message(out, XDP_RETRANSMISSION_REQUEST, XDP_RETRANS_REQUEST_LEN,
			     XDP_DELIVERY_ORIGINAL, request_seq, send_ns);

	wire_put_le32(m + XDP_RETRANS_BEGIN_OFF, begin);
	wire_put_le32(m + XDP_RETRANS_END_OFF, end);
	put_source(m + XDP_RETRANS_SOURCE_OFF, source_id);
	m[XDP_RETRANS_PRODUCT_OFF] = product;
	m[XDP_RETRANS_CHANNEL_OFF] = channel;
	return XDP_HEADER_LEN + XDP_RETRANS_REQUEST_LEN;
}

size_t xdp_encode_heartbeat_response(uint8_t *out, uint32_t request_seq, const char *source_id,
				     uint64_t send_ns)
{
	uint8_t *m = message(out, XDP_HEARTBEAT_RESPONSE, XDP_HEARTBEAT_RESPONSE_LEN,
			     XDP_DELIVERY_ORIGINAL, request_seq, send_ns);

	put_source(m + XDP_HEARTBEAT_SOURCE_OFF, source_id);
	return XDP_HEADER_LEN + XDP_HEARTBEAT_RESPONSE_LEN;
}

size_t xdp_encode_request_response(uint8_t *out, uint32_t seq, const struct xdp_response *r,
				   uint64_t send_ns)
{
	uint8_t *m = message(out, XDP_REQUEST_RESPONSE, XDP_REQUEST_RESPONSE_LEN,
			     XDP_DELIVERY_ORIGINAL, seq, send_ns);

	wire_put_le32(m + XDP_RESPONSE_REQUEST_SEQ_OFF, r->request_seq);
	wire_put_le32(m + XDP_RESPONSE_BEGIN_OFF, r->begin);
	wire_put_le32(m + XDP_RESPONSE_END_OFF, r->end);
	memcpy(m + XDP_RESPONSE_SOURCE_OFF, r->source_id, XDP_SOURCE_ID_LEN);
	m[XDP_RESPONSE_PRODUCT_OFF] = r->product;
	m[XDP_RESPONSE_CHANNEL_OFF] = r->channel;
	m[XDP_RESPONSE_STATUS_OFF] = r->status;
	return XDP_HEADER_LEN + XDP_REQUEST_RESPONSE_LEN;
}

size_t xdp_encode_unavailable(uint8_t *out, uint32_t begin, uint32_t end, uint8_t product,
			      uint8_t channel, uint64_t send_ns)
{
	/* Its SeqNum is the range's first: the packet stands for those messages. */
	uint8_t *m = message(out, XDP_MESSAGE_UNAVAILABLE, XDP_MESSAGE_UNAVAILABLE_LEN,
			     XDP_DELIVERY_UNAVAILABLE, begin, send_ns);

	wire_put_le32(m + XDP_UNAVAILABLE_BEGIN, begin);
	wire_put_le32(m + XDP_UNAVAILABLE_END, end);
	m[XDP_UNAVAILABLE_PRODUCT_ID] = product;
	m[XDP_UNAVAILABLE_CHANNEL_ID] = channel;
	return XDP_HEADER_LEN + XDP_MESSAGE_UNAVAILABLE_LEN;
}

int xdp_parse_request(const uint8_t *m, uint32_t len, struct xdp_request *r)
{
	uint16_t size, want;

	if (len < XDP_MSG_HEADER_LEN)
		return -1;
	size = wire_le16(m + XDP_MSG_SIZE);
	memset(r, 0, sizeof(*r));
	r->type = wire_le16(m + XDP_MSG_TYPE);
	switch (r->type) {
	case XDP_RETRANSMISSION_REQUEST: want = XDP_RETRANS_REQUEST_LEN; break;
	case XDP_HEARTBEAT_RESPONSE: want = XDP_HEARTBEAT_RESPONSE_LEN; break;
	case XDP_REFRESH_REQUEST: want = XDP_REFRESH_REQUEST_LEN; break;
	default: return -1;
	}
	if (size != want || len < want)
		return -1;
	switch (r->type) {
	case XDP_RETRANSMISSION_REQUEST:
		r->begin = wire_le32(m + XDP_RETRANS_BEGIN_OFF);
		r->end = wire_le32(m + XDP_RETRANS_END_OFF);
		memcpy(r->source_id, m + XDP_RETRANS_SOURCE_OFF, XDP_SOURCE_ID_LEN);
		r->product = m[XDP_RETRANS_PRODUCT_OFF];
		r->channel = m[XDP_RETRANS_CHANNEL_OFF];
		break;
	case XDP_HEARTBEAT_RESPONSE:
		memcpy(r->source_id, m + XDP_HEARTBEAT_SOURCE_OFF, XDP_SOURCE_ID_LEN);
		break;
	default:
		r->symbol_index = wire_le32(m + XDP_REFRESH_SYMBOL_OFF);
		memcpy(r->source_id, m + XDP_REFRESH_SOURCE_OFF, XDP_SOURCE_ID_LEN);
		r->product = m[XDP_REFRESH_PRODUCT_OFF];
		r->channel = m[XDP_REFRESH_CHANNEL_OFF];
		break;
	}
	return 0;
}

int xdp_parse_response(const uint8_t *m, uint32_t len, struct xdp_response *r)
{
	uint8_t status;

	if (len < XDP_REQUEST_RESPONSE_LEN ||
	    wire_le16(m + XDP_MSG_SIZE) < XDP_REQUEST_RESPONSE_LEN ||
	    wire_le16(m + XDP_MSG_TYPE) != XDP_REQUEST_RESPONSE)
		return -1;
	r->request_seq = wire_le32(m + XDP_RESPONSE_REQUEST_SEQ_OFF);
	r->begin = wire_le32(m + XDP_RESPONSE_BEGIN_OFF);
	r->end = wire_le32(m + XDP_RESPONSE_END_OFF);
	memcpy(r->source_id, m + XDP_RESPONSE_SOURCE_OFF, XDP_SOURCE_ID_LEN);
	r->product = m[XDP_RESPONSE_PRODUCT_OFF];
	r->channel = m[XDP_RESPONSE_CHANNEL_OFF];
	/* ASCII digits per the dissectors; a binary 0..9 reads the same. */
	status = m[XDP_RESPONSE_STATUS_OFF];
	r->status = status <= 9 ? (uint8_t)('0' + status) : status;
	return 0;
}

bool xdp_parse_unavailable(const uint8_t *p, uint32_t len, uint32_t *begin, uint32_t *end,
			   uint8_t *product, uint8_t *channel)
{
	const uint8_t *m = p + XDP_HEADER_LEN;

	if (len < XDP_HEADER_LEN + XDP_MESSAGE_UNAVAILABLE_LEN || p[XDP_PKT_NUMBER_MSGS] < 1 ||
	    wire_le16(m + XDP_MSG_SIZE) < XDP_MESSAGE_UNAVAILABLE_LEN ||
	    wire_le16(m + XDP_MSG_TYPE) != XDP_MESSAGE_UNAVAILABLE)
		return false;
	*begin = wire_le32(m + XDP_UNAVAILABLE_BEGIN);
	*end = wire_le32(m + XDP_UNAVAILABLE_END);
	*product = m[XDP_UNAVAILABLE_PRODUCT_ID];
	*channel = m[XDP_UNAVAILABLE_CHANNEL_ID];
	return true;
}

const char *xdp_status_text(uint8_t status)
{
	switch (status) {
	case XDP_ST_ACCEPTED: return "accepted";
	case XDP_ST_BAD_SOURCE: return "invalid source id";
	case XDP_ST_RANGE_TOO_LARGE: return "range too large";
	case XDP_ST_DAILY_LIMIT: return "daily request limit";
	case XDP_ST_REFRESH_LIMIT: return "daily refresh limit";
	case XDP_ST_TOO_OLD: return "too old";
	case XDP_ST_BAD_CHANNEL: return "invalid channel";
	case XDP_ST_BAD_PRODUCT: return "invalid product";
	case XDP_ST_BAD_TYPE: return "invalid message type or size";
	default: return "unknown status";
	}
}

/* ---- recovery.conf ----------------------------------------------------------- */

int xdp_conf_key(struct recovery_conf_entry *en, const char *tok, char *why, size_t whylen)
{
	const char *eq = strchr(tok, '=');

	if (!strncmp(tok, "retrans=", 8)) {
		if (feed_parse_address(eq + 1, &en->gap_ip, &en->gap_port, why, whylen) ||
		    !en->gap_port) {
			snprintf(why, whylen, "retrans= wants ADDR:PORT with a port");
			return -1;
		}
		return 1;
	}
	if (!strncmp(tok, "refresh=", 8)) {
		if (feed_parse_address(eq + 1, &en->refresh_ip, &en->refresh_port, why, whylen) ||
		    !en->refresh_port) {
			snprintf(why, whylen, "refresh= wants ADDR:PORT with a port");
			return -1;
		}
		return 1;
	}
	if (!strncmp(tok, "user=", 5)) {
		if (!eq[1] || strlen(eq + 1) > XDP_SOURCE_ID_LEN) {
			snprintf(why, whylen, "user= (the SourceID) has 1 to %d characters",
				 XDP_SOURCE_ID_LEN);
			return -1;
		}
		strcpy(en->source_id, eq + 1);
		return 1;
	}
	return 0;
}

/* ---- the client ---------------------------------------------------------------- */

enum session_state { S_DOWN, S_CONNECTING, S_UP };
enum refresh_state { R_NONE, R_WANTED, R_SENT };

struct xdp_client {
	uint32_t ip;
	uint16_t port;
	int venue;
	char source_id[XDP_SOURCE_ID_LEN + 1];
	uint8_t product, channel;
	uint32_t timeout_ms;
	int udp;		/* the retransmission channel */
	int tcp;		/* the Request Server session, -1 while down */
	int state;
	uint32_t request_seq;	/* the session's last request packet */
	uint64_t next_connect, backoff_ns, connect_deadline, next_read;
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	/* the request in flight */
	bool waiting, sent;
	uint64_t first, count;
	uint32_t sent_seq;	/* its packet's SeqNum on this session */
	struct xdp_client_counts n;
	uint64_t refused_by[10];
	/* late join by refresh */
	int rfd;		/* the refresh channel, -1: none */
	int rstate;		/* enum refresh_state */
	uint32_t retries;
	uint32_t rtries;	/* refreshes begun for this late join */
	uint32_t rseq;		/* the Refresh Request's packet SeqNum */
	uint32_t next_pkt;	/* the refresh packet expected next (0: its first) */
	uint32_t min_last;	/* the lowest LastSeqNum so far */
	uint64_t rdeadline;
	int rline;
};

static uint64_t ms_ns(uint64_t ms)
{
	return ms * MS;
}

static int retrans_socket(uint32_t ip, uint16_t port)
{
	struct sockaddr_in at = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, rcv = RCVBUF;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	at.sin_addr.s_addr = htonl(ip);
	at.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&at, sizeof(at)) < 0)
		goto fail;
	if ((ip >> 28) == 0xe) {
		struct ip_mreq mr = { .imr_multiaddr.s_addr = htonl(ip) };

		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

struct xdp_client *xdp_client_create(const struct recovery_conf_entry *en, char *err,
				     size_t errlen)
{
	struct xdp_client *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x->ip = en->ip;
	x->port = en->port;
	x->venue = en->venue;
	strcpy(x->source_id, en->source_id);
	x->product = xdp_product_of_venue(en->venue);
	x->channel = (uint8_t)(en->channel > 0 ? en->channel : 1);
	x->timeout_ms = en->timeout_ms;
	x->backoff_ns = ms_ns(en->timeout_ms);
	x->tcp = -1;
	x->state = S_DOWN;
	x->retries = en->retries;
	x->rfd = -1;
	x->udp = retrans_socket(en->gap_ip, en->gap_port);
	if (x->udp < 0) {
		snprintf(err, errlen, "the retransmission socket (retrans=): %s", strerror(errno));
		free(x);
		return NULL;
	}
	if (en->refresh_port && (x->rfd = retrans_socket(en->refresh_ip, en->refresh_port)) < 0) {
		snprintf(err, errlen, "the refresh socket (refresh=): %s", strerror(errno));
		close(x->udp);
		free(x);
		return NULL;
	}
	return x;
}

void xdp_client_destroy(struct xdp_client *x)
{
	if (!x)
		return;
	close(x->udp);
	if (x->rfd >= 0)
		close(x->rfd);
	if (x->tcp >= 0)
		close(x->tcp);
	free(x);
}

static void session_down(struct xdp_client *x, uint64_t now)
{
	if (x->tcp >= 0) {
		close(x->tcp);
		x->tcp = -1;
		x->n.disconnects += x->state == S_UP;
	}
	x->state = S_DOWN;
	x->inlen = 0;
	x->sent = false;	/* what was in flight goes again on the next session */
	if (x->rstate == R_SENT)
		x->rstate = R_WANTED;
	x->next_connect = now + recovery_backoff(&x->backoff_ns);
}

static void session_connect(struct xdp_client *x, uint64_t now)
{
	x->n.connects++;
	x->tcp = recovery_tcp_connect(x->ip, x->port);
	if (x->tcp < 0) {
		session_down(x, now);
		return;
	}
	x->state = S_CONNECTING;
	x->request_seq = 0;
	x->connect_deadline = now + CONNECT_WAIT_NS;
}

/* A packet to the server; -1: the session broke (and is down). */
static int session_send(struct xdp_client *x, const uint8_t *p, size_t len, uint64_t now)
{
	/* Packets this small never part-fill an empty socket buffer; a full one is a dead session. */
	if (send(x->tcp, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len)
		return 0;
	session_down(x, now);
	return -1;
}

static uint64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static bool send_waiting(struct xdp_client *x, uint64_t now)
{
	uint8_t pkt[XDP_HEADER_LEN + XDP_RETRANS_REQUEST_LEN];
	size_t len;

	if (x->state != S_UP || !x->waiting)
		return false;
	len = xdp_encode_retrans_request(pkt, ++x->request_seq, (uint32_t)x->first,
					 (uint32_t)(x->first + x->count - 1), x->source_id,
					 x->product, x->channel, wall_now());
	if (session_send(x, pkt, len, now))
		return false;
	x->sent = true;
	x->sent_seq = x->request_seq;
	return true;
}

bool xdp_client_request(struct xdp_client *x, uint64_t first, uint64_t count, uint64_t now)
{
	if (!count || first > UINT32_MAX)
		return false;
	if (count > XDP_MAX_RETRANS)
		count = XDP_MAX_RETRANS;
	if (first + count - 1 > UINT32_MAX)
		count = UINT32_MAX - first + 1;
	x->waiting = true;
	x->sent = false;
	x->first = first;
	x->count = count;
	return send_waiting(x, now);
}

void xdp_client_forget(struct xdp_client *x)
{
	x->waiting = false;
	x->sent = false;
}

/* A Request Response: a refusal of what is in flight makes it lost. */
static int on_response(struct xdp_client *x, const struct xdp_response *r, const struct recovery_target *t,
		       int line, bool has_line, uint64_t recv_ts, struct wb_ring_producer *out)
{
	/* Any answer says the server is alive: the next hang-up retries soon. */
	x->backoff_ns = ms_ns(x->timeout_ms);
	if (r->status == XDP_ST_ACCEPTED)
		return 0;	/* the messages come on the retransmission channel */
	x->n.refused++;
	if (r->status >= '0' && r->status <= '9')
		x->refused_by[r->status - '0']++;
	if (x->n.refused == 1)
		fprintf(stderr, "recovery %s/%u: xdp request server refused %u-%u: status %c (%s)\n",
			feed_venue_name(x->venue), x->channel, r->begin, r->end, r->status,
			xdp_status_text(r->status));
	if (x->rstate == R_SENT && r->request_seq == x->rseq && has_line) {
		/* The refresh is refused: what it should have covered is lost. */
		x->rstate = R_NONE;
		t->snapshot_abort(t->ctx, line, 0, recv_ts, out);
		return XDP_PUMP_LOST;
	}
	if (!x->waiting || !x->sent || r->request_seq != x->sent_seq || !has_line)
		return 0;	/* an answer to an older request */
	x->waiting = false;
	x->sent = false;
	t->recover_lost(t->ctx, line, 0, x->first, x->count, recv_ts, out);
	return XDP_PUMP_LOST;
}

/* What the server sent on the session: responses and heartbeats. */
static int read_session(struct xdp_client *x, const struct recovery_target *t, int line, bool has_line,
			uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t used = 0;
	bool hung_up;
	int rc = 0;

	/* What came before a hang-up (a refusal) is read first. */
	hung_up = recovery_tcp_read(x->tcp, x->in, sizeof(x->in), &x->inlen);
	while (x->inlen - used >= XDP_HEADER_LEN) {
		const uint8_t *p = x->in + used;
		uint16_t plen = wire_le16(p + XDP_PKT_SIZE);
		uint32_t off = XDP_HEADER_LEN;

		if (plen < XDP_HEADER_LEN || plen > sizeof(x->in)) {
			session_down(x, now);
			return rc;
		}
		if (x->inlen - used < plen)
			break;
		if (p[XDP_PKT_NUMBER_MSGS] == 0 && p[XDP_PKT_DELIVERY_FLAG] == XDP_DELIVERY_HEARTBEAT) {
			uint8_t hb[XDP_HEADER_LEN + XDP_HEARTBEAT_RESPONSE_LEN];
			size_t hlen = xdp_encode_heartbeat_response(hb, ++x->request_seq,
								    x->source_id, wall_now());

			x->n.heartbeats++;
			if (session_send(x, hb, hlen, now))
				return rc;
		}
		for (uint8_t k = 0; k < p[XDP_PKT_NUMBER_MSGS]; k++) {
			struct xdp_response r;
			uint16_t mlen;

			if (off + XDP_MSG_HEADER_LEN > plen ||
			    (mlen = wire_le16(p + off + XDP_MSG_SIZE)) < XDP_MSG_HEADER_LEN ||
			    off + mlen > plen)
				break;
			if (!xdp_parse_response(p + off, mlen, &r))
				rc |= on_response(x, &r, t, line, has_line, recv_ts, out);
			off += mlen;
		}
		used += plen;
	}
	memmove(x->in, x->in + used, x->inlen - used);
	x->inlen -= used;
	if (hung_up)
		session_down(x, now);
	return rc;
}

/* The retransmission channel: recovered packets, and what the server does not have. */
static int take_retransmissions(struct xdp_client *x, const struct recovery_target *t, int line,
				uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint8_t buf[MAX_DATAGRAM];
	ssize_t n;
	int rc = 0;

	while ((n = recv(x->udp, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		uint32_t begin, end;
		uint8_t product, channel;

		if (n < XDP_HEADER_LEN || buf[XDP_PKT_NUMBER_MSGS] == 0)
			continue;	/* heartbeats of the channel */
		if (xdp_parse_unavailable(buf, (uint32_t)n, &begin, &end, &product, &channel)) {
			if (product != x->product || channel != x->channel || end < begin)
				continue;
			x->n.unavailable++;
			if (!t->recover_lost(t->ctx, line, 0, begin, (uint64_t)end - begin + 1, recv_ts,
					       out))
				rc |= XDP_PUMP_LOST;
			continue;
		}
		x->n.replies++;
		t->recover_packet(t->ctx, line, buf, (uint32_t)n, recv_ts, out);
	}
	return rc;
}

bool xdp_client_refresh_wanted(const struct xdp_client *x, const struct feed_recovery_stream *rs)
{
	return x->rfd >= 0 && x->rstate == R_NONE && rs->state == FEED_REC_GAP &&
	       rs->missing_first == 1 && rs->missing_count > XDP_MAX_RETRANS;
}

/* (Again) clear the stream's books, buffer its real time, ask for the refresh. */
static void refresh_start(struct xdp_client *x, const struct recovery_target *t, uint64_t now,
			  uint64_t recv_ts, struct wb_ring_producer *out)
{
	x->rtries++;
	x->rstate = R_WANTED;
	x->next_pkt = 0;
	x->min_last = UINT32_MAX;
	x->rdeadline = now + ms_ns(x->timeout_ms) * 50 + ms_ns(RECOVERY_MAX_BACKOFF_MS);
	t->snapshot_begin(t->ctx, x->rline, 0, recv_ts, out);
}

void xdp_client_refresh_begin(struct xdp_client *x, const struct recovery_target *t, int line, uint64_t now,
			      uint64_t recv_ts, struct wb_ring_producer *out)
{
	x->rline = line;
	x->rtries = 0;
	refresh_start(x, t, now, recv_ts, out);
}

static void send_refresh_request(struct xdp_client *x, uint64_t now)
{
	uint8_t pkt[XDP_HEADER_LEN + XDP_REFRESH_REQUEST_LEN];
	uint8_t *m = pkt + XDP_HEADER_LEN;

	xdp_put_header(pkt, sizeof(pkt), XDP_DELIVERY_ORIGINAL, 1, ++x->request_seq, wall_now());
	memset(m, 0, XDP_REFRESH_REQUEST_LEN);
	wire_put_le16(m + XDP_MSG_SIZE, XDP_REFRESH_REQUEST_LEN);
	wire_put_le16(m + XDP_MSG_TYPE, XDP_REFRESH_REQUEST);
	wire_put_le32(m + XDP_REFRESH_SYMBOL_OFF, 0);	/* every symbol of the channel */
	put_source(m + XDP_REFRESH_SOURCE_OFF, x->source_id);
	m[XDP_REFRESH_PRODUCT_OFF] = x->product;
	m[XDP_REFRESH_CHANNEL_OFF] = x->channel;
	if (session_send(x, pkt, sizeof(pkt), now))
		return;
	x->rseq = x->request_seq;
	x->rstate = R_SENT;
}

/* The refresh channel: packets applied in order; the last one ends the snapshot. */
static int take_refresh(struct xdp_client *x, const struct recovery_target *t, uint64_t now,
			uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint8_t buf[MAX_DATAGRAM];
	ssize_t n;

	while ((n = recv(x->rfd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		uint8_t flag = n >= XDP_HEADER_LEN ? buf[XDP_PKT_DELIVERY_FLAG] : 0;
		const uint8_t *m = buf + XDP_HEADER_LEN;
		uint32_t seq;

		if (n < XDP_HEADER_LEN + XDP_REFRESH_HEADER_LEN || !buf[XDP_PKT_NUMBER_MSGS] ||
		    x->rstate != R_SENT)
			continue;	/* heartbeats, or no refresh asked for */
		seq = wire_le32(buf + XDP_PKT_SEQ_NUM);
		if (flag == XDP_DELIVERY_REFRESH_ONE || flag == XDP_DELIVERY_REFRESH_START) {
			x->next_pkt = seq;
			x->min_last = UINT32_MAX;
		}
		if (!x->next_pkt || seq != x->next_pkt) {
			/* A packet of it went missing: refresh packets are not retransmitted. */
			x->n.refresh_restarts++;
			refresh_start(x, t, now, recv_ts, out);
			return 0;
		}
		x->next_pkt++;
		x->n.refresh_packets++;
		/* A symbol's first Refresh Header names the last sequence it reflects. */
		if (wire_le16(m + XDP_MSG_TYPE) == XDP_REFRESH_HEADER &&
		    wire_le16(m + XDP_MSG_SIZE) >= XDP_REFRESH_HEADER_FIRST_LEN &&
		    n >= XDP_HEADER_LEN + XDP_REFRESH_HEADER_FIRST_LEN) {
			uint32_t last = wire_le32(m + XDP_REFRESH_LAST_SEQ_NUM);

			if (last < x->min_last)
				x->min_last = last;
		}
		t->snapshot_packet(t->ctx, x->rline, 0, buf, (uint32_t)n, recv_ts, out);
		if (flag == XDP_DELIVERY_REFRESH_ONE || flag == XDP_DELIVERY_REFRESH_END) {
			x->rstate = R_NONE;
			x->n.refreshes++;
			t->snapshot_end(t->ctx, x->rline, 0,
					  x->min_last == UINT32_MAX ? 1 : (uint64_t)x->min_last + 1,
					  recv_ts, out);
			return 0;
		}
	}
	if (now > x->rdeadline) {
		if (x->rtries > x->retries) {
			x->rstate = R_NONE;
			t->snapshot_abort(t->ctx, x->rline, 0, recv_ts, out);
			return XDP_PUMP_LOST;
		}
		x->n.refresh_restarts++;
		refresh_start(x, t, now, recv_ts, out);
	}
	return 0;
}

int xdp_client_pump(struct xdp_client *x, const struct recovery_target *t, int line, bool has_line,
		    bool recovering, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	int rc = 0;

	if (x->state == S_DOWN) {
		if (recovering && (x->waiting || x->rstate != R_NONE) && now >= x->next_connect)
			session_connect(x, now);
	}
	if (x->state == S_CONNECTING) {
		struct pollfd pf = { .fd = x->tcp, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (poll(&pf, 1, 0) <= 0) {
			if (now > x->connect_deadline)
				session_down(x, now);
		} else if (getsockopt(x->tcp, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			session_down(x, now);
		} else {
			x->state = S_UP;
			if (x->waiting && !x->sent && send_waiting(x, now))
				rc |= XDP_PUMP_SENT;
		}
	}
	/* An idle session is read now and then, for the server's heartbeats. */
	if (x->state == S_UP && (recovering || now >= x->next_read)) {
		x->next_read = now + IDLE_READ_NS;
		rc |= read_session(x, t, line, has_line, now, recv_ts, out);
	}
	if (x->rstate == R_WANTED && x->state == S_UP)
		send_refresh_request(x, now);
	if (x->rstate != R_NONE)
		rc |= take_refresh(x, t, now, recv_ts, out);
	if (recovering && has_line)
		rc |= take_retransmissions(x, t, line, recv_ts, out);
	return rc;
}

void xdp_client_counts(const struct xdp_client *x, struct xdp_client_counts *c)
{
	*c = x->n;
	c->up = x->state == S_UP;
}

void xdp_client_print(const struct xdp_client *x, FILE *f)
{
	fprintf(f, "; refused %" PRIu64, x->n.refused);
	if (x->n.refused) {
		const char *sep = " (status";

		for (int s = 0; s < 10; s++) {
			if (!x->refused_by[s])
				continue;
			fprintf(f, "%s %d: %" PRIu64, sep, s, x->refused_by[s]);
			sep = ",";
		}
		fprintf(f, ")");
	}
	fprintf(f, ", unavailable %" PRIu64 "; session %s, connects %" PRIu64 ", disconnects %"
		PRIu64 ", heartbeats answered %" PRIu64, x->n.unavailable,
		x->state == S_UP ? "up" : "down", x->n.connects, x->n.disconnects,
		x->n.heartbeats);
	if (x->rfd >= 0)
		fprintf(f, "; refreshes %" PRIu64 " (%" PRIu64 " packets, %" PRIu64 " begun again)",
			x->n.refreshes, x->n.refresh_packets, x->n.refresh_restarts);
}

/* ---- the services table's row "xdp" ----------------------------------------------- */

static int xdp_open(struct service *s, char *why, size_t whylen)
{
	s->session = xdp_client_create(&s->conf, why, whylen);
	return s->session ? 0 : -1;
}

static void xdp_close(struct service *s)
{
	xdp_client_destroy(s->session);
}

static void xdp_pump(struct recovery_client *c, struct service *s, uint64_t now,
		     uint64_t recv_ts, struct wb_ring_producer *out)
{
	int got = xdp_client_pump(s->session, &c->t, s->line, s->has_line, s->nrec > 0, now,
				  recv_ts ? recv_ts : s->u[0].since, out);

	if (got & XDP_PUMP_LOST) {
		/* Refused or unavailable: what is left is asked for anew. */
		s->u[0].gave_up = true;
		s->u[0].waiting = false;
	}
	if (got & XDP_PUMP_SENT) {
		s->requests++;
		s->u[0].deadline = now + recovery_ms_ns(s->conf.timeout_ms);
	}
}

static void xdp_request(struct service *s, uint8_t unit, struct unit_rec *u,
			const struct feed_recovery_stream *rs, uint64_t now)
{
	(void)unit;
	(void)rs;
	if (u->req_count > XDP_MAX_RETRANS)
		u->req_count = XDP_MAX_RETRANS;
	/* Without a session the request goes when one is up. */
	if (xdp_client_request(s->session, u->req_first, u->req_count, now))
		s->requests++;
}

static bool xdp_late_join(struct recovery_client *c, struct service *s,
			  const struct feed_recovery_stream *rs, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	if (!xdp_client_refresh_wanted(s->session, rs))
		return false;
	xdp_client_refresh_begin(s->session, &c->t, rs->line, now, recv_ts, out);
	return true;
}

static void xdp_forget(struct service *s)
{
	xdp_client_forget(s->session);
}

static void xdp_totals(const struct service *s, struct recovery_totals *t)
{
	struct xdp_client_counts x;

	xdp_client_counts(s->session, &x);
	t->replies = x.replies;
	t->refused = x.refused;
	t->connects = x.connects;
	t->disconnects = x.disconnects;
}

static void xdp_print(const struct service *s, const struct recovery_totals *t, FILE *f)
{
	(void)t;
	xdp_client_print(s->session, f);
}

const char *recovery_xdp_conf_check(const struct recovery_conf_entry *en)
{
	return en->gap_port && en->source_id[0] ? NULL :
	       "an xdp service needs retrans=ADDR:PORT (where its retransmissions arrive) and "
	       "user=SOURCEID";
}

const struct recovery_gap_fill_ops recovery_xdp_ops = {
	.open = xdp_open,
	.close = xdp_close,
	.pump = xdp_pump,
	.request = xdp_request,
	.late_join = xdp_late_join,
	.forget = xdp_forget,
	.totals = xdp_totals,
	.print = xdp_print,
};
