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
 * Mold defines no refusal: a request the server cannot answer (another
 * session, a range it does not have, a malformed request) gets no reply,
 * as from Nasdaq's servers, and is counted and, with -v, logged. The
 * client retries and in the end declares the range lost.
 *
 * Not yet: SoupBinTCP/GLIMPSE, Cboe GRP and Spin, XDP request servers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/feeds_conf.h"
#include "common/metrics.h"
#include "common/options.h"
#include "input/pcap_io.h"
#include "feed/feed.h"

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
"\n"
"Replays the MoldUDP64 stream (ITCH or UQDF) of one venue of a capture and\n"
"answers MoldUDP64 re-requests for it on UDP ADDR:PORT: a 20-byte request\n"
"(session, first sequence, message count) gets one MoldUDP64 packet with the\n"
"messages from that sequence on, as many as fit in --max-payload bytes.\n"
"A request it cannot answer (another session, a sequence beyond the\n"
"capture or missing from it, a malformed request) gets no reply, as Mold\n"
"defines none; it is counted and, with -v, logged.\n"
"\n"
"  --pcap FILE        the capture to serve (its A and B copies are merged)\n"
"  --venue VENUE      the feed-map venue whose Mold stream to serve (nasdaq,\n"
"                     uqdf, ...)\n"
"  --channel N        its channel, when its feed-map lines name one\n"
"  --listen ADDR:PORT where to answer (port 0: any; the chosen one is printed)\n"
"  --feeds FILE       the feed map (default: feeds.conf as wirebookd finds it)\n"
"  --max-payload N    reply payload bytes, %d-%d (default %d)\n"
"  --drop-every N     answer no Nth request (a lossy or stalling server, for\n"
"                     retry tests)\n"
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

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
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

static int load(struct store *s, const char *path, const struct feed_map_entry *lines, int n,
		char *err, size_t errlen)
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
		if (store_packet(s, u.payload, u.len) < 0) {
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

enum { OPT_PCAP = 256, OPT_VENUE, OPT_CHANNEL, OPT_LISTEN, OPT_FEEDS, OPT_PAYLOAD, OPT_DROP };

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
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *pcap = NULL, *listen_at = NULL, *feeds = NULL;
	int venue = -1, channel = -1, c, n, nserved = 0, fd;
	uint64_t payload = DEFAULT_PAYLOAD, drop_every = 0, v;
	bool verbose = false;
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
		if (all[i].protocol != FEED_PROTO_ITCH50 && all[i].protocol != FEED_PROTO_UQDF) {
			fprintf(stderr, "wb-recoveryd: %s: venue %s is %s, not a MoldUDP64 feed (itch, "
				"uqdf): its recovery service is not implemented yet\n", feeds,
				feed_venue_name(venue), feed_protocol_name(all[i].protocol));
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
	if (load(&s, pcap, served, nserved, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-recoveryd: %s\n", err);
		return 1;
	}
	if (!s.has_session || !s.messages) {
		fprintf(stderr, "wb-recoveryd: %s: no MoldUDP64 message of venue %s on the groups of "
			"%s\n", pcap, feed_venue_name(venue), feeds);
		return 1;
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
