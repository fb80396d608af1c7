// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * wb-recoveryd: a recovery server for tests and demos. It replays a
 * capture (a real one, or a day from wb-gen) and answers what an
 * exchange's recovery service answers, on loopback or in a namespace:
 *
 *   MoldUDP64 re-request (ITCH, UQDF): a 20-byte UDP request (session,
 *   first sequence, count) is answered with ordinary MoldUDP64 packets
 *   holding the messages asked for, as many as fit in one payload (the
 *   client asks again for the rest), unicast to the requester.
 *
 *   Cboe PITCH Gap Request Proxy (--service grp): a TCP session (Login,
 *   then Gap Requests for a unit's sequence range), each request answered
 *   by a Gap Response with its status; an accepted range is sent as
 *   ordinary Sequenced Unit Header packets, with their original sequence
 *   numbers, over UDP to the gap-response address (--reply-to), where a
 *   venue would multicast them (docs/specs/cboe-grp-notes.md).
 *
 * Mold defines no refusal: a request the server cannot answer (another
 * session, a range it does not have, a malformed request) gets no reply,
 * as from Nasdaq's servers, and is counted and, with -v, logged. The
 * client retries and in the end declares the range lost. GRP refuses in
 * its Gap Response (out of range, quota exhausted, count too large,
 * invalid unit) and its Login Response (not authorized).
 *
 *   NYSE XDP Request Server (--service xdp, sim/xdp_server.c): a TCP
 *   session taking Retransmission Requests of one channel, each answered
 *   by a Request Response; an accepted range goes over UDP to the
 *   retransmission channel (--reply-to), what the capture lacks as Message
 *   Unavailable; refusals for a bad SourceID, channel or product, a range
 *   too large, the daily limit (--quota); a Refresh Request answered with
 *   the channel's book as of --snapshot-at on the refresh channel.
 *
 *   Nasdaq GLIMPSE 5.0 over SoupBinTCP 4.0 (--service glimpse): the
 *   ITCH book as it stood after a chosen message, then the sequence to
 *   resume from (sim/glimpse_server.c).
 *
 *   UTP Snap-Shot over SoupBinTCP (--service utpsnap): a UQDF channel's
 *   SIP state after a chosen message, then the Snap-Shot message with the
 *   sequence to resume from (sim/utpsnap_server.c on glimpse_server.c's
 *   session).
 *   Cboe PITCH Spin server (--service spin, sim/spin_server.c): one
 *   unit's book as it stood after a chosen message, on request.
 *
 * Not yet: the Symbol Index Mapping and refresh limits of XDP (see README).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
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

#include "common/feeds_conf.h"
#include "sim/glimpse_server.h"
#include "sim/utpsnap_server.h"
#include "common/metrics.h"
#include "common/options.h"
#include "input/pcap_io.h"
#include "feed/feed.h"
#include "recovery/pitch_session.h"
#include "common/put_bytes.h"
#include "recovery/recovery_xdp.h"
#include "sim/xdp_server.h"
#include "sim/spin_server.h"

#define MOLD_HEADER 20
#define MOLD_END 0xffff
#define MAX_LINES 64
#define DEFAULT_PAYLOAD 1400
#define MAX_PAYLOAD 1472

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* The session's messages by sequence: message seq is at bytes + off[seq - 1]. */
struct store {
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

struct counters {
	uint64_t requests, replies, messages_sent;
	uint64_t bad_request, wrong_session, out_of_range, not_in_capture, dropped;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: wb-recoveryd --pcap FILE --venue VENUE [--channel N] --listen ADDR:PORT\n"
"                    [--feeds FILE] [--max-payload N] [--drop-every N] [-v]\n"
"       wb-recoveryd --service grp --pcap FILE --venue VENUE --listen ADDR:PORT\n"
"                    --reply-to ADDR:PORT [--user U] [--password P] [--quota N]\n"
"                    [--quota-per-second N] [--max-count N] [--hangup-after N]\n"
"                    [--feeds FILE] [--max-payload N] [-v]\n"
"       wb-recoveryd --service xdp --pcap FILE --venue VENUE [--channel N]\n"
"                    --listen ADDR:PORT --reply-to ADDR:PORT [--source-id ID]\n"
"                    [--quota N] [--hangup-after N] [--heartbeat-interval MS]\n"
"                    [--snapshot-at SEQ --refresh-to ADDR:PORT]\n"
"                    [--feeds FILE] [--max-payload N] [-v]\n"
"       wb-recoveryd --service glimpse --pcap FILE --venue VENUE\n"
"                    --listen ADDR:PORT [--snapshot-at SEQ] [--user U]\n"
"                    [--password P] [--hangup-after N | --stall-after N]\n"
"                    [--feeds FILE] [-v]\n"
"       wb-recoveryd --service utpsnap --pcap FILE --venue uqdf [--channel N]\n"
"                    --listen ADDR:PORT [--snapshot-at SEQ] [--user U]\n"
"                    [--password P] [--hangup-after N | --stall-after N]\n"
"                    [--feeds FILE] [-v]\n"
"       wb-recoveryd --service spin --pcap FILE --venue VENUE [--unit N]\n"
"                    --listen ADDR:PORT [--snapshot-at SEQ] [--user U]\n"
"                    [--password P] [--hangup-after N] [--feeds FILE] [-v]\n"
"\n"
"Replays one venue of a capture and answers its recovery protocol.\n"
"\n"
"--service mold (the default): the MoldUDP64 stream (ITCH or UQDF), answering\n"
"re-requests on UDP ADDR:PORT: a 20-byte request (session, first sequence,\n"
"message count) gets one MoldUDP64 packet with the messages from that\n"
"sequence on, as many as fit in --max-payload bytes. A request it cannot\n"
"answer (another session, a sequence beyond the capture or missing from it,\n"
"a malformed request) gets no reply, as Mold defines none; it is counted\n"
"and, with -v, logged.\n"
"\n"
"--service grp: the Cboe PITCH Gap Request Proxy, a TCP session on ADDR:PORT.\n"
"A Login whose username and password are not --user and --password (both\n"
"blank by default) gets Login Response 'N' and the session is closed. A Gap\n"
"Request (unit, sequence, count) gets a Gap Response: 'A' accepted, 'I'\n"
"invalid unit (none in the capture), 'O' out of range, 'C' count above\n"
"--max-count, 'D' daily quota exhausted (after --quota accepted requests),\n"
"'S' second quota exhausted (after --quota-per-second in one second).\n"
"An accepted range is sent as ordinary Sequenced Unit Header packets, with\n"
"the original sequence numbers, over UDP to --reply-to (the gap-response\n"
"channel the client listens on).\n"
"\n"
"--service xdp: the NYSE XDP Request Server of one channel, TCP on ADDR:PORT.\n"
"A Retransmission Request (BeginSeqNum..EndSeqNum) gets a Request Response:\n"
"status 0 accepted, 1 SourceID not --source-id (any when not given), 3 more\n"
"than 1000 messages or an empty range, 4 daily limit (after --quota accepted\n"
"requests), 7 another ChannelID, 8 another ProductID, 9 another message type\n"
"or size (a Refresh Request too, without --snapshot-at). An accepted range goes as\n"
"XDP packets with the original sequence numbers over UDP to --reply-to (the\n"
"retransmission channel), DeliveryFlag 13 (one packet) or 15; what the\n"
"capture lacks as Message Unavailable (flag 21). Each session gets a\n"
"heartbeat every --heartbeat-interval ms (default 60000) and is dropped when\n"
"no Heartbeat Response comes within 5 s. With --snapshot-at, a Refresh Request\n"
"gets status 0 and the channel's book as of that sequence on --refresh-to:\n"
"per symbol a Refresh Header (LastSeqNum SEQ), its mapping, its last Security\n"
"Status and an Add Order Refresh per live order, in queue order.\n"
"--service glimpse: Nasdaq GLIMPSE 5.0 over SoupBinTCP 4.0 for an ITCH venue,\n"
"a TCP session on ADDR:PORT. A Login Request whose username and password\n"
"are not --user and --password gets Login Rejected 'A', one naming another\n"
"session 'S'. Then the book after ITCH message SEQ of the capture: the last\n"
"system event, the stock directory, each stock's last trading action, Reg\n"
"SHO and operational halt, every live order as an Add Order (its remaining\n"
"shares, in priority order), and the End of Snapshot naming SEQ + 1, the\n"
"ITCH sequence to resume from. Server heartbeats after 1 s of silence.\n"
"--service utpsnap: the UTP Snap-Shot service over SoupBinTCP for a UQDF\n"
"channel, logins and refusals as glimpse's. Then the SIP state after UQDF\n"
"message SEQ, in UQDF formats: the last control messages, MWCB level and\n"
"status, every Issue Symbol Directory, each symbol's last Reg SHO, trading\n"
"actions, LULD band and collar, the quote that last set its NBBO, the\n"
"latest quote of each market centre as a Quote Long Form, and the Snap-Shot\n"
"message naming SEQ + 1, the UQDF sequence to resume from.\n"
"\n"
"--service spin: the Cboe Spin server of one unit of a PITCH venue, a TCP\n"
"session on ADDR:PORT. A Login whose username and password are not --user\n"
"and --password gets Login Response 'N' and is closed. Then Spin Image\n"
"Available for SEQ at once and every second. A Spin Request for SEQ gets\n"
"Spin Response 'A' with the order count, the unit's book after message SEQ\n"
"in unsequenced packets (the last Time, each symbol's last Trading Status,\n"
"every live order as an Add Order, in priority order) and Spin Finished;\n"
"one for another sequence gets 'O' (no image for it).\n"
"\n"
"  --pcap FILE        the capture to serve (its A and B copies are merged)\n"
"  --venue VENUE      the feed-map venue to serve (nasdaq, uqdf, bzx, ...)\n"
"  --channel N        its channel, when its feed-map lines name one\n"
"  --listen ADDR:PORT where to answer (port 0: any; the chosen one is printed)\n"
"  --feeds FILE       the feed map (default: feeds.conf as wirebookd finds it)\n"
"  --max-payload N    reply payload bytes, %d-%d (default %d)\n"
"  --drop-every N     mold: answer no Nth request (a lossy or stalling server,\n"
"                     for retry tests)\n"
"  --service S        mold, grp, xdp, glimpse, utpsnap or spin (default mold)\n"
"  --unit N           spin: the PITCH unit to serve (needed when the capture\n"
"                     has several)\n"
"  --reply-to A:P     grp, xdp: where the gap responses (retransmissions) go\n"
"                     (required)\n"
"  --user U           grp, glimpse, utpsnap, spin: the username a login must\n"
"                     give (up to 4 characters for grp and spin, 6 for glimpse\n"
"                     and utpsnap)\n"
"  --password P       grp, glimpse, utpsnap, spin: the password (up to 10\n"
"                     characters)\n"
"  --quota N          grp: accept N gap requests, then refuse with 'D'; xdp:\n"
"                     N retransmission requests, then refuse with 4\n"
"  --quota-per-second N  grp: accept N gap requests a second, refuse more\n"
"                     with 'S' (a client asks again later)\n"
"  --max-count N      grp: refuse a request for more than N messages with 'C'\n"
"                     (1-65535, default 65535)\n"
"  --source-id ID     xdp: the SourceID requests must give (up to 10 characters)\n"
"  --heartbeat-interval MS  xdp: the server's heartbeats (default 60000)\n"
"  --snapshot-at SEQ  xdp: answer Refresh Requests with the book as of SEQ;\n"
"                     glimpse: the snapshot is the book after ITCH message SEQ;\n"
"                     spin: the image is the unit's book after message SEQ\n"
"                     (default: the capture's last message, as a snapshot\n"
"                     taken after the day's close); utpsnap: the SIP state\n"
"                     after UQDF message SEQ (same default)\n"
"  --refresh-to A:P   xdp: where the refresh goes (the refresh channel)\n"
"  --hangup-after N   grp, xdp: drop the session on request N+1, and every later\n"
"                     session right after its login (for reconnect tests);\n"
"                     glimpse, utpsnap: close the first session after N\n"
"                     snapshot messages (later sessions get the whole one);\n"
"                     spin: the same, after N spin messages\n"
"  --stall-after N    glimpse, utpsnap: the first session falls silent (no data, no\n"
"                     heartbeats) after N snapshot messages\n"
"  -v, --verbose      log every refused request\n"
"\n"
"Prints 'wb-recoveryd: serving ...' on stderr once it answers; SIGINT or\n"
"SIGTERM: stop and print the counters. Exit 0, 1 (input or socket failed),\n"
"2 (bad usage).\n", MOLD_HEADER + 2 + 1, MAX_PAYLOAD, DEFAULT_PAYLOAD);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static int store_grow(struct store *s, uint64_t need_seq, size_t need_bytes)
{
	if (need_seq > s->cap) {
		uint64_t cap = s->cap ? s->cap : 1u << 16;

		while (cap < need_seq)
			cap *= 2;
		uint64_t *off = realloc(s->off, cap * sizeof(*off));
		uint16_t *len = off ? realloc(s->len, cap * sizeof(*len)) : NULL;

		if (off)
			s->off = off;
		if (!len)
			return -1;
		s->len = len;
		for (uint64_t i = s->cap; i < cap; i++)
			s->off[i] = UINT64_MAX;
		s->cap = cap;
	}
	if (s->used + need_bytes > s->bytes_cap) {
		size_t cap = s->bytes_cap ? s->bytes_cap : 1u << 20;
		uint8_t *b;

		while (cap < s->used + need_bytes)
			cap *= 2;
		b = realloc(s->bytes, cap);
		if (!b)
			return -1;
		s->bytes = b;
		s->bytes_cap = cap;
	}
	return 0;
}

/* One Mold packet of the served stream: keep the messages not kept yet. */
static int store_packet(struct store *s, const uint8_t *p, uint32_t len)
{
	uint64_t seq;
	uint16_t count;
	uint32_t off = MOLD_HEADER;

	if (len < MOLD_HEADER)
		return 0;
	if (!s->has_session) {
		memcpy(s->session, p, 10);
		s->has_session = true;
	} else if (memcmp(s->session, p, 10) != 0) {
		s->other_sessions++;	/* one session per capture is served */
		return 0;
	}
	seq = be64(p + 10);
	count = be16(p + 18);
	if (count == 0 || count == MOLD_END) {
		if (seq > s->end)
			s->end = seq;
		return 0;
	}
	for (uint16_t i = 0; i < count; i++, seq++) {
		uint16_t mlen;

		if (off + 2 > len || off + 2 + (mlen = be16(p + off)) > len)
			break;		/* truncated: the rest is not in the capture */
		if (seq == 0)
			return 0;
		if (store_grow(s, seq, mlen))
			return -1;
		if (s->off[seq - 1] == UINT64_MAX) {
			s->off[seq - 1] = s->used;
			s->len[seq - 1] = mlen;
			memcpy(s->bytes + s->used, p + off + 2, mlen);
			s->used += mlen;
			s->messages++;
		}
		off += 2 + mlen;
		if (seq + 1 > s->end)
			s->end = seq + 1;
	}
	return 0;
}

static bool served_line(const struct feed_map_entry *m, int n, uint32_t ip, uint16_t port)
{
	for (int i = 0; i < n; i++)
		if (m[i].ip == ip && m[i].port == port)
			return true;
	return false;
}

static int pitch_store_packet(const uint8_t *p, uint32_t len);

static int load(struct store *s, const char *path, const struct feed_map_entry *lines, int n,
		bool grp, bool xdp, char *err, size_t errlen)
{
	struct pcap_reader rd;
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	int rc;

	if (pcap_reader_open(&rd, path, err, errlen) < 0)
		return -1;
	while ((rc = pcap_reader_next(&rd, &frame, &len, &ts, err, errlen)) == 1) {
		struct udp_view u;

		if (!frame_udp_view(frame, len, &u) || !served_line(lines, n, u.dst_ip, u.dst_port))
			continue;
		if ((xdp ? xdp_store_packet((uint64_t)u.dst_ip << 16 | u.dst_port, u.payload, u.len) : grp ? pitch_store_packet(u.payload, u.len) :
		     store_packet(s, u.payload, u.len)) < 0) {
			snprintf(err, errlen, "%s: out of memory", path);
			rc = -1;
			break;
		}
	}
	pcap_reader_close(&rd);
	if (rc < 0)
		return -1;
	for (uint64_t q = 1; q < s->end; q++)
		s->holes += q > s->cap || s->off[q - 1] == UINT64_MAX;
	return 0;
}

static const char *session_text(const char *s)
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
static void answer(int fd, const struct store *s, struct counters *c, const uint8_t *req,
		   ssize_t n, const struct sockaddr_in *from, uint32_t max_payload, bool verbose)
{
	uint8_t pkt[MAX_PAYLOAD];
	uint64_t seq, want;
	uint32_t len = MOLD_HEADER;
	uint16_t count = 0;
	char why[128];

	if (n != MOLD_HEADER) {
		snprintf(why, sizeof(why), "%zd bytes, a request has %d", n, MOLD_HEADER);
		refuse(&c->bad_request, verbose, from, why);
		return;
	}
	seq = be64(req + 10);
	want = be16(req + 18);
	if (memcmp(req, s->session, 10) != 0) {
		snprintf(why, sizeof(why), "session '%s' is not served", session_text((const char *)req));
		refuse(&c->wrong_session, verbose, from, why);
		return;
	}
	if (seq == 0 || want == 0 || want == MOLD_END || seq >= s->end) {
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
		if (len + 2 + mlen > max_payload)
			break;
		put_be16(pkt + len, mlen);
		memcpy(pkt + len + 2, s->bytes + s->off[q - 1], mlen);
		len += 2 + mlen;
		count++;
	}
	if (!count) {
		snprintf(why, sizeof(why), "sequence %" PRIu64 " is not in the capture", seq);
		refuse(&c->not_in_capture, verbose, from, why);
		return;
	}
	memcpy(pkt, s->session, 10);
	put_be64(pkt + 10, seq);
	put_be16(pkt + 18, count);
	if (sendto(fd, pkt, len, 0, (const struct sockaddr *)from, sizeof(*from)) == (ssize_t)len) {
		c->replies++;
		c->messages_sent += count;
	}
}

/* ---- Cboe PITCH Gap Request Proxy ------------------------------------------ */

#define PITCH_HEADER 8
#define PITCH_UNITS 256
#define GRP_MAX_CLIENTS 8
#define GRP_IN 1024
#define GRP_LOGIN 0x01
#define GRP_LOGIN_RESPONSE 0x02
#define GRP_GAP_REQUEST 0x03
#define GRP_GAP_RESPONSE 0x04
#define GRP_LOGIN_LEN 22
#define GRP_GAP_REQUEST_LEN 9
#define GRP_DEFAULT_MAX_COUNT 65535

/* Each unit's messages by sequence, as the Mold store keeps a session's. */
static struct store g_units[PITCH_UNITS];

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One Sequenced Unit Header packet of the served venue: keep its messages. */
static int pitch_store_packet(const uint8_t *p, uint32_t len)
{
	struct store *s;
	uint32_t hlen, off = PITCH_HEADER;
	uint64_t seq;
	uint8_t count;

	if (len < PITCH_HEADER || (hlen = le16(p)) < PITCH_HEADER || hlen > len)
		return 0;
	count = p[2];
	s = &g_units[p[3]];
	seq = le32(p + 4);
	if (!seq)
		return 0;	/* unsequenced */
	if (!count) {
		if (seq > s->end)
			s->end = seq;	/* a heartbeat names the next sequence */
		return 0;
	}
	for (uint8_t i = 0; i < count; i++, seq++) {
		uint8_t mlen;

		if (off + 2 > hlen || (mlen = p[off]) < 2 || off + mlen > hlen)
			break;	/* truncated: the rest is not in the capture */
		if (store_grow(s, seq, mlen))
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

struct grp_opts {
	char user[4];		/* space-padded, as on the wire */
	char password[10];
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
	uint8_t f[PITCH_HEADER + 2 + 32];
	size_t len = pitch_session_message(f, type, body, blen);

	return send(fd, f, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* Send messages [seq, seq + count) of a unit to the gap-response address. */
static void grp_replay(int ufd, const struct store *s, uint8_t unit, uint64_t seq, uint64_t count,
		       const struct grp_opts *o, struct grp_counters *c)
{
	uint8_t pkt[MAX_PAYLOAD];
	uint64_t end = seq + count;

	while (seq < end) {
		uint32_t len = PITCH_HEADER;
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
		put_le16(pkt, (uint16_t)len);
		pkt[2] = n;
		pkt[3] = unit;
		put_le32(pkt + 4, (uint32_t)first);
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
	uint8_t unit = m[2], body[8];
	uint64_t seq = le32(m + 3), count = le16(m + 7);
	const struct store *s = &g_units[unit];
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
	body[0] = unit;
	put_le32(body + 1, (uint32_t)seq);
	put_le16(body + 5, (uint16_t)count);
	body[7] = (uint8_t)status;
	if (grp_send(cl->fd, GRP_GAP_RESPONSE, body, 8))
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
	uint32_t off = PITCH_HEADER;

	for (uint8_t i = 0; i < f[2]; i++) {
		const uint8_t *m = f + off;
		uint8_t status;

		if (off + 2 > flen || m[0] < 2 || off + m[0] > flen)
			goto malformed;
		off += m[0];
		if (m[1] == GRP_LOGIN && m[0] == GRP_LOGIN_LEN && !cl->logged_in) {
			bool good = !memcmp(m + 6, o->user, 4) && !memcmp(m + 12, o->password, 10);

			status = good ? 'A' : 'N';
			if (grp_send(cl->fd, GRP_LOGIN_RESPONSE, &status, 1) || !good) {
				c->logins_refused += !good;
				if (o->verbose && !good)
					fprintf(stderr, "wb-recoveryd: login '%.4s' refused\n",
						(const char *)m + 6);
				return -1;
			}
			c->logins++;
			cl->logged_in = true;
			if (o->hangup_after && c->requests >= o->hangup_after) {
				c->hangups++;
				return -1;	/* a server that keeps dropping its sessions */
			}
		} else if (m[1] == GRP_GAP_REQUEST && m[0] == GRP_GAP_REQUEST_LEN && cl->logged_in) {
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
	while (cl->inlen - used >= PITCH_HEADER) {
		const uint8_t *f = cl->in + used;
		uint16_t flen = le16(f);

		if (flen < PITCH_HEADER)
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
	while (!g_stop) {
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

/*
 * A TCP session server's socket on ADDR:PORT (addr: where it listens, the
 * port chosen when 0), and SIGINT/SIGTERM to stop it; -1 said on stderr.
 */
static int tcp_listen(const char *listen_at, uint32_t ip, uint16_t port, struct sockaddr_in *addr)
{
	socklen_t alen = sizeof(*addr);
	struct sigaction sa;
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(ip);
	addr->sin_port = htons(port);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)addr, sizeof(*addr)) < 0 || listen(lfd, 8) < 0 ||
	    getsockname(lfd, (struct sockaddr *)addr, &alen) < 0) {
		fprintf(stderr, "wb-recoveryd: --listen %s: %s\n", listen_at, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return lfd;
}

static int grp_main(const char *pcap, int venue, const char *listen_at, uint32_t ip,
		    uint16_t port, const char *user, const char *password, uint32_t rip,
		    uint16_t rport, struct grp_opts *o, uint32_t payload, bool verbose)
{
	struct sockaddr_in addr;
	uint64_t messages = 0, holes = 0;
	int units = 0, lfd, rc;

	for (int u = 0; u < PITCH_UNITS; u++) {
		struct store *s = &g_units[u];

		if (!s->messages)
			continue;
		units++;
		messages += s->messages;
		for (uint64_t q = 1; q < s->end; q++)
			holes += q > s->cap || s->off[q - 1] == UINT64_MAX;
	}
	if (!units) {
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
	o->verbose = verbose;
	lfd = tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s GRP, %d units, %" PRIu64 " messages (%" PRIu64
		" missing from the capture), gap responses to %s, on %s:%u\n",
		feed_venue_name(venue), units, messages, holes, inet_ntoa(o->reply_to.sin_addr),
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
	rc = grp_serve(lfd, o);
	close(lfd);
	for (int u = 0; u < PITCH_UNITS; u++) {
		free(g_units[u].off);
		free(g_units[u].len);
		free(g_units[u].bytes);
	}
	return rc;
}

/* --service spin: the unit to serve (given, or the capture's only one), listen, serve. */
static int spin_main(const char *pcap, int venue, const char *listen_at, uint32_t ip,
		     uint16_t port, int unit, const struct spin_opts *o)
{
	struct sockaddr_in addr;
	struct spin_source src;
	int units = 0, lfd, rc;

	for (int u = 0; u < PITCH_UNITS; u++) {
		if (!g_units[u].messages)
			continue;
		units++;
		if (unit < 0 && units == 1)
			src.unit = (uint8_t)u;
	}
	if (unit >= 0)
		src.unit = (uint8_t)unit;
	if (!units || (unit >= 0 && !g_units[unit].messages) || (unit < 0 && units > 1)) {
		fprintf(stderr, "wb-recoveryd: %s: %s\n", pcap, !units ?
			"no PITCH message of the venue on its groups" : unit >= 0 ?
			"no message of that --unit" : "several units: give --unit N (a Spin server "
			"serves one)");
		return units ? 2 : 1;
	}
	src.end = g_units[src.unit].end;
	src.cap = g_units[src.unit].cap;
	src.off = g_units[src.unit].off;
	src.len = g_units[src.unit].len;
	src.bytes = g_units[src.unit].bytes;
	if (o->snapshot_at >= src.end) {
		fprintf(stderr, "wb-recoveryd: --snapshot-at %" PRIu64 ": unit %u ends at %" PRIu64
			"\n", o->snapshot_at, src.unit, src.end - 1);
		return 2;
	}
	lfd = tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s Spin of unit %u, messages 1-%" PRIu64 " on %s:%u\n",
		feed_venue_name(venue), src.unit, src.end - 1, inet_ntoa(addr.sin_addr),
		ntohs(addr.sin_port));
	rc = spin_serve(lfd, &src, o, &g_stop);
	close(lfd);
	for (int u = 0; u < PITCH_UNITS; u++) {
		free(g_units[u].off);
		free(g_units[u].len);
		free(g_units[u].bytes);
	}
	return rc;
}

/* --service xdp: listen, serve, and say what was served. */
static int xdp_main(const char *pcap, const char *listen_at, uint32_t ip, uint16_t port,
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
	lfd = tcp_listen(listen_at, ip, port, &addr);
	if (lfd < 0)
		return 1;
	fprintf(stderr, "wb-recoveryd: serving %s XDP channel %u (product %u), %" PRIu64
		" messages in %d sequence epochs (%" PRIu64 " missing from the capture), "
		"retransmissions to %s, on %s:%u\n", feed_venue_name(o->venue), o->channel,
		o->product, messages, epochs, holes, inet_ntoa(o->reply_to.sin_addr),
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));
	rc = xdp_serve(lfd, listen_at, o, &g_stop);
	close(lfd);
	xdp_store_free();
	return rc;
}

enum { OPT_PCAP = 256, OPT_VENUE, OPT_CHANNEL, OPT_LISTEN, OPT_FEEDS, OPT_PAYLOAD, OPT_DROP,
       OPT_SERVICE, OPT_USER, OPT_PASSWORD, OPT_REPLY_TO, OPT_QUOTA, OPT_PER_SECOND, OPT_MAX_COUNT,
       OPT_HANGUP, OPT_SOURCE_ID, OPT_HEARTBEAT, OPT_SNAPSHOT_AT, OPT_REFRESH_TO,
       OPT_STALL, OPT_UNIT };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, 0, OPT_PCAP },
		{ "venue", required_argument, 0, OPT_VENUE },
		{ "channel", required_argument, 0, OPT_CHANNEL },
		{ "listen", required_argument, 0, OPT_LISTEN },
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "max-payload", required_argument, 0, OPT_PAYLOAD },
		{ "drop-every", required_argument, 0, OPT_DROP },
		{ "service", required_argument, 0, OPT_SERVICE },
		{ "user", required_argument, 0, OPT_USER },
		{ "password", required_argument, 0, OPT_PASSWORD },
		{ "reply-to", required_argument, 0, OPT_REPLY_TO },
		{ "quota", required_argument, 0, OPT_QUOTA },
		{ "quota-per-second", required_argument, 0, OPT_PER_SECOND },
		{ "max-count", required_argument, 0, OPT_MAX_COUNT },
		{ "hangup-after", required_argument, 0, OPT_HANGUP },
		{ "source-id", required_argument, 0, OPT_SOURCE_ID },
		{ "heartbeat-interval", required_argument, 0, OPT_HEARTBEAT },
		{ "snapshot-at", required_argument, 0, OPT_SNAPSHOT_AT },
		{ "refresh-to", required_argument, 0, OPT_REFRESH_TO },
		{ "stall-after", required_argument, 0, OPT_STALL },
		{ "unit", required_argument, 0, OPT_UNIT },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *pcap = NULL, *listen_at = NULL, *feeds = NULL;
	int venue = -1, channel = -1, c, n, nserved = 0, fd;
	uint64_t payload = DEFAULT_PAYLOAD, drop_every = 0, v;
	bool verbose = false, grp = false, xdp = false, glimpse = false, utpsnap = false;
	bool spin = false;
	int unit = -1;
	struct xdp_serve_opts xo = { .heartbeat_ms = 60000 };
	struct glimpse_opts gl = { 0 };
	const char *user = "", *password = "", *reply_to = NULL;
	struct grp_opts go = { .max_count = GRP_DEFAULT_MAX_COUNT };
	uint32_t rip = 0;
	uint16_t rport = 0;
	struct feed_map_entry all[FEED_MAX_LINES], served[MAX_LINES];
	struct store s;
	struct counters ctr;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	struct sigaction sa;
	uint32_t ip;
	uint16_t port;
	char err[512];

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
		switch (c) {
		case OPT_PCAP: pcap = optarg; break;
		case OPT_VENUE:
			venue = feed_venue_parse(optarg, strlen(optarg));
			if (venue < 0) {
				fprintf(stderr, "wb-recoveryd: --venue: unknown venue '%s' (see wb-dump "
					"--help)\n", optarg);
				return 2;
			}
			break;
		case OPT_CHANNEL:
			if (opt_u64("wb-recoveryd", "--channel", optarg, 1, 65535, &v))
				return 2;
			channel = (int)v;
			break;
		case OPT_LISTEN:
			if (metrics_parse_address(optarg, &ip, &port, err, sizeof(err))) {
				fprintf(stderr, "wb-recoveryd: --listen %s\n", err);
				return 2;
			}
			listen_at = optarg;
			break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_PAYLOAD:
			if (opt_u64("wb-recoveryd", "--max-payload", optarg, MOLD_HEADER + 3, MAX_PAYLOAD,
				    &payload))
				return 2;
			break;
		case OPT_DROP:
			if (opt_u64("wb-recoveryd", "--drop-every", optarg, 2, UINT32_MAX, &drop_every))
				return 2;
			break;
		case OPT_SERVICE:
			if (strcmp(optarg, "mold") && strcmp(optarg, "grp") && strcmp(optarg, "xdp") &&
			    strcmp(optarg, "glimpse") && strcmp(optarg, "utpsnap") &&
			    strcmp(optarg, "spin")) {
				fprintf(stderr, "wb-recoveryd: --service: unknown service '%s' (mold, "
					"grp, xdp, glimpse, utpsnap, spin)\n", optarg);
				return 2;
			}
			spin = !strcmp(optarg, "spin");
			grp = !strcmp(optarg, "grp");
			xdp = !strcmp(optarg, "xdp");
			/* The UTP Snap-Shot is glimpse's SoupBinTCP session with UQDF messages. */
			utpsnap = !strcmp(optarg, "utpsnap");
			glimpse = !strcmp(optarg, "glimpse") || utpsnap;
			break;
		case OPT_USER:
		case OPT_PASSWORD:
			/* Checked against the service after the options (glimpse's user has 6). */
			if (strlen(optarg) > (c == OPT_USER ? 6u : 10u)) {
				fprintf(stderr, "wb-recoveryd: %s: at most %d characters\n",
					c == OPT_USER ? "--user" : "--password", c == OPT_USER ? 6 : 10);
				return 2;
			}
			*(c == OPT_USER ? &user : &password) = optarg;
			break;
		case OPT_REPLY_TO:
			if (metrics_parse_address(optarg, &rip, &rport, err, sizeof(err)) || !rport) {
				fprintf(stderr, "wb-recoveryd: --reply-to %s\n",
					rport ? err : "needs ADDR:PORT with a port");
				return 2;
			}
			reply_to = optarg;
			break;
		case OPT_QUOTA:
			if (opt_u64("wb-recoveryd", "--quota", optarg, 0, UINT32_MAX, &go.quota))
				return 2;
			break;
		case OPT_PER_SECOND:
			if (opt_u64("wb-recoveryd", "--quota-per-second", optarg, 0, UINT32_MAX,
				    &go.per_second))
				return 2;
			break;
		case OPT_MAX_COUNT:
			if (opt_u64("wb-recoveryd", "--max-count", optarg, 1, 65535, &go.max_count))
				return 2;
			break;
		case OPT_HANGUP:
			if (opt_u64("wb-recoveryd", "--hangup-after", optarg, 0, UINT32_MAX,
				    &go.hangup_after))
				return 2;
			gl.hangup_after = go.hangup_after;
			break;
		case OPT_SNAPSHOT_AT:
			if (opt_u64("wb-recoveryd", "--snapshot-at", optarg, 1, UINT64_MAX / 2,
				    &gl.snapshot_at))
				return 2;
			break;
		case OPT_UNIT:
			if (opt_u64("wb-recoveryd", "--unit", optarg, 0, 255, &v))
				return 2;
			unit = (int)v;
			break;
		case OPT_STALL:
			if (opt_u64("wb-recoveryd", "--stall-after", optarg, 1, UINT32_MAX,
				    &gl.stall_after))
				return 2;
			break;
		case OPT_SOURCE_ID:
			if (strlen(optarg) > XDP_SOURCE_ID_LEN) {
				fprintf(stderr, "wb-recoveryd: --source-id: at most %d characters\n",
					XDP_SOURCE_ID_LEN);
				return 2;
			}
			strcpy(xo.source_id, optarg);
			break;
		case OPT_HEARTBEAT:
			if (opt_u64("wb-recoveryd", "--heartbeat-interval", optarg, 10, 3600000,
				    &xo.heartbeat_ms))
				return 2;
			break;
		case OPT_REFRESH_TO: {
			uint32_t fip = 0;
			uint16_t fport = 0;

			if (metrics_parse_address(optarg, &fip, &fport, err, sizeof(err)) || !fport) {
				fprintf(stderr, "wb-recoveryd: --refresh-to %s\n",
					fport ? err : "needs ADDR:PORT with a port");
				return 2;
			}
			xo.refresh_to.sin_family = AF_INET;
			xo.refresh_to.sin_addr.s_addr = htonl(fip);
			xo.refresh_to.sin_port = htons(fport);
			break;
		}
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, "wb-recoveryd: %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "wb-recoveryd: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !pcap || venue < 0 || !listen_at) {
		fprintf(stderr, optind != argc ? "wb-recoveryd: unexpected argument '%s'\n" :
			"wb-recoveryd: give --pcap, --venue and --listen%s\n",
			optind != argc ? argv[optind] : "");
		usage(stderr);
		return 2;
	}
	if ((grp || spin) && strlen(user) > 4) {
		fprintf(stderr, "wb-recoveryd: --user: at most 4 characters for grp and spin\n");
		return 2;
	}
	if (unit >= 0 && !spin) {
		fprintf(stderr, "wb-recoveryd: --unit is for --service spin\n");
		return 2;
	}
	if ((grp || xdp) != !!reply_to) {
		fprintf(stderr, "wb-recoveryd: %s\n", grp || xdp ? "this service needs --reply-to "
			"ADDR:PORT (where the client takes the gap responses)" :
			"--reply-to is for --service grp or xdp");
		return 2;
	}
	/* --snapshot-at is xdp's refresh point (with --refresh-to) or glimpse's snapshot. */
	xo.snapshot_at = xdp ? gl.snapshot_at : 0;
	if (xdp || xo.refresh_to.sin_port) {
		if (!!gl.snapshot_at != !!xo.refresh_to.sin_port || !xdp) {
			fprintf(stderr, "wb-recoveryd: --snapshot-at and --refresh-to go together, "
				"with --service xdp\n");
			return 2;
		}
		if (gl.snapshot_at > UINT32_MAX) {
			fprintf(stderr, "wb-recoveryd: --snapshot-at: an XDP sequence is at most "
				"%u\n", UINT32_MAX);
			return 2;
		}
	}
	if (!glimpse && !xdp && !spin && (gl.snapshot_at || gl.stall_after)) {
		fprintf(stderr, "wb-recoveryd: --snapshot-at and --stall-after are for --service "
			"glimpse (--snapshot-at also for xdp and spin)\n");
		return 2;
	}
	if (!glimpse && gl.stall_after) {
		fprintf(stderr, "wb-recoveryd: --stall-after is for --service glimpse\n");
		return 2;
	}
	if (gl.hangup_after && gl.stall_after) {
		fprintf(stderr, "wb-recoveryd: give --hangup-after or --stall-after, not both\n");
		return 2;
	}
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (!feeds) {
		fprintf(stderr, "wb-recoveryd: no feed map found (looked in %s); give --feeds FILE\n",
			feeds_conf_searched());
		return 2;
	}
	n = feeds_conf_read(feeds, all, FEED_MAX_LINES, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "wb-recoveryd: %s\n", err);
		return 1;
	}
	for (int i = 0; i < n && nserved < MAX_LINES; i++) {
		if (all[i].venue != venue || (channel >= 0 && all[i].channel != channel))
			continue;
		const char *serves = feed_protocol_recovery(all[i].protocol);

		/* GLIMPSE is the ITCH book's snapshot; its messages come from the Mold store. */
		/* Spin is the PITCH book's snapshot; its messages come from the GRP store. */
		const char *service = xdp ? "xdp" : grp || spin ? "grp" : "mold";

		if (glimpse && strcmp(feed_protocol_name(all[i].protocol), utpsnap ? "uqdf" : "itch")) {
			fprintf(stderr, "wb-recoveryd: %s: venue %s is %s; --service %s serves "
				"%s only\n", feeds, feed_venue_name(venue),
				feed_protocol_name(all[i].protocol), utpsnap ? "utpsnap" : "glimpse",
				utpsnap ? "UQDF" : "ITCH");
			return 2;
		}
		if (!serves || strcmp(serves, service)) {
			fprintf(stderr, "wb-recoveryd: %s: venue %s is %s, which --service %s cannot "
				"serve (its service: %s)\n", feeds, feed_venue_name(venue),
				feed_protocol_name(all[i].protocol), service,
				serves ? serves : "none is implemented for it yet");
			return 2;
		}
		if (nserved && all[i].channel != served[0].channel) {
			fprintf(stderr, "wb-recoveryd: %s: venue %s has channels %u and %u: give "
				"--channel\n", feeds, feed_venue_name(venue), served[0].channel,
				all[i].channel);
			return 2;
		}
		served[nserved++] = all[i];
	}
	if (!nserved) {
		fprintf(stderr, "wb-recoveryd: %s has no line of venue %s%s\n", feeds,
			feed_venue_name(venue), channel >= 0 ? " on that channel" : "");
		return 2;
	}

	memset(&s, 0, sizeof(s));
	memset(&ctr, 0, sizeof(ctr));
	if (load(&s, pcap, served, nserved, grp || spin, xdp, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-recoveryd: %s\n", err);
		return 1;
	}
	if (xdp) {
		xo.venue = venue;
		xo.product = xdp_product_of_venue(venue);
		xo.channel = (uint8_t)(served[0].channel ? served[0].channel : 1);
		xo.quota = go.quota;
		xo.hangup_after = go.hangup_after;
		xo.max_payload = (uint32_t)payload;
		xo.verbose = verbose;
		xo.reply_to.sin_family = AF_INET;
		xo.reply_to.sin_addr.s_addr = htonl(rip);
		xo.reply_to.sin_port = htons(rport);
		return xdp_main(pcap, listen_at, ip, port, &xo);
	}
	if (spin) {
		struct spin_opts so = { .snapshot_at = gl.snapshot_at, .user = user,
					.password = password, .hangup_after = gl.hangup_after,
					.verbose = verbose };

		return spin_main(pcap, venue, listen_at, ip, port, unit, &so);
	}
	if (grp)
		return grp_main(pcap, venue, listen_at, ip, port, user, password, rip, rport, &go,
				(uint32_t)payload, verbose);
	if (!s.has_session || !s.messages) {
		fprintf(stderr, "wb-recoveryd: %s: no MoldUDP64 message of venue %s on the groups of "
			"%s\n", pcap, feed_venue_name(venue), feeds);
		return 1;
	}
	if (glimpse) {
		struct glimpse_source src = { .session = s.session, .end = s.end, .cap = s.cap,
					      .off = s.off, .len = s.len, .bytes = s.bytes };

		gl.user = user;
		gl.password = password;
		gl.verbose = verbose;
		if (utpsnap) {
			gl.build = utpsnap_build;
			gl.title = "UTP Snap-Shot";
			gl.items = "symbols";
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns EINTR */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		c = glimpse_serve(ip, port, &src, &gl, &g_stop);
		free(s.off);
		free(s.len);
		free(s.bytes);
		return c;
	}

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
	sa.sa_handler = on_signal;	/* no SA_RESTART: recvfrom returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "wb-recoveryd: serving %s session %s, messages 1-%" PRIu64 " (%" PRIu64
		" missing from the capture) on %s:%u\n", feed_venue_name(venue),
		session_text(s.session), s.end - 1, s.holes,
		inet_ntoa(addr.sin_addr), ntohs(addr.sin_port));

	while (!g_stop) {
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
		if (drop_every && ctr.requests % drop_every == 0) {
			ctr.dropped++;
			continue;
		}
		answer(fd, &s, &ctr, req, got, &from, (uint32_t)payload, verbose);
	}
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " requests, %" PRIu64 " replies (%" PRIu64
		" messages); refused: %" PRIu64 " malformed, %" PRIu64 " other session, %" PRIu64
		" out of range, %" PRIu64 " not in the capture; %" PRIu64 " dropped (--drop-every)\n",
		ctr.requests, ctr.replies, ctr.messages_sent, ctr.bad_request, ctr.wrong_session,
		ctr.out_of_range, ctr.not_in_capture, ctr.dropped);
	close(fd);
	free(s.off);
	free(s.len);
	free(s.bytes);
	return 0;
}
