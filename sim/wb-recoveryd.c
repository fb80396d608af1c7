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
 * Not yet: the Symbol Index Mapping and refresh limits of XDP (see docs/recovery.md, "Not done yet").
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
#include "common/metrics.h"
#include "feedtext/address.h"
#include "common/options.h"
#include "feed/feed.h"
#include "input/pcap_io.h"
#include "recovery/recovery_services.h"
#include "recovery/recovery_xdp.h"
#include "sim/glimpse_server.h"
#include "sim/grp_server.h"
#include "sim/mold_server.h"
#include "sim/sim.h"
#include "sim/spin_server.h"
#include "sim/utpsnap_server.h"
#include "sim/xdp_server.h"

#define MAX_LINES 64
#define DEFAULT_PAYLOAD 1400

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
"2 (bad usage).\n", MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + 1, SIM_MAX_PAYLOAD, DEFAULT_PAYLOAD);
}

static bool served_line(const struct feed_map_entry *m, int n, uint32_t ip, uint16_t port)
{
	for (int i = 0; i < n; i++)
		if (m[i].ip == ip && m[i].port == port)
			return true;
	return false;
}

/* What a run serves: the options, and the capture's messages as its service keeps them. */
struct run {
	const char *pcap, *listen_at, *feeds, *user, *password;
	int venue, unit;
	uint32_t ip, rip;
	uint16_t port, rport;
	uint64_t payload, drop_every;
	bool verbose;
	struct grp_opts go;
	struct xdp_serve_opts xo;
	struct glimpse_opts gl;
	struct sim_store mold;				/* store MOLD */
	struct sim_store units[SIM_PITCH_UNITS];	/* store PITCH, by unit */
};

/* How a server keeps the capture (the xdp server keeps its own). */
enum store_kind { STORE_MOLD, STORE_PITCH, STORE_XDP };

/* Options only some servers take. */
#define TAKES_REPLY_TO	 1u	/* --reply-to, required */
#define TAKES_UNIT	 2u	/* --unit */
#define TAKES_SNAPSHOT	 4u	/* --snapshot-at */
#define TAKES_STALL	 8u	/* --stall-after */
#define SHORT_USER	16u	/* --user of up to 4 characters */
#define TAKES_REFRESH	32u	/* --snapshot-at is a refresh point, with --refresh-to */

/* One row per --service, named as the recovery services table names it. */
struct server {
	const char *name;
	enum store_kind store;
	/* a snapshot of a Mold stream: the one protocol it serves (feed_protocol_name,
	 * and as --help says it), else NULL: the protocols of its store's gap fill */
	const char *only, *only_title;
	unsigned takes;
	int (*serve)(struct run *r);
};

static int serve_mold(struct run *r)
{
	struct mold_serve_opts mo = { .venue = r->venue, .max_payload = (uint32_t)r->payload,
				      .drop_every = r->drop_every, .verbose = r->verbose };
	int rc = mold_serve(&r->mold, r->listen_at, r->ip, r->port, &mo);

	sim_store_free(&r->mold);
	return rc;
}

static int serve_grp(struct run *r)
{
	return grp_main(r->units, r->pcap, r->venue, r->listen_at, r->ip, r->port, r->user,
			r->password, r->rip, r->rport, &r->go, (uint32_t)r->payload, r->verbose);
}

static int serve_spin(struct run *r)
{
	struct spin_opts so = { .snapshot_at = r->gl.snapshot_at, .user = r->user,
				.password = r->password, .hangup_after = r->gl.hangup_after,
				.verbose = r->verbose };

	return spin_main(r->units, r->pcap, r->venue, r->listen_at, r->ip, r->port, r->unit, &so);
}

static int serve_xdp(struct run *r)
{
	return xdp_main(r->pcap, r->listen_at, r->ip, r->port, &r->xo);
}

/* GLIMPSE, and the UTP Snap-Shot on its SoupBinTCP session with UQDF messages. */
static int serve_soup(struct run *r)
{
	struct glimpse_source src = { .session = r->mold.session, .end = r->mold.end,
				      .cap = r->mold.cap, .off = r->mold.off, .len = r->mold.len,
				      .bytes = r->mold.bytes };
	struct sigaction sa;
	int rc;

	r->gl.user = r->user;
	r->gl.password = r->password;
	r->gl.verbose = r->verbose;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sim_on_signal;	/* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = glimpse_serve(r->ip, r->port, &src, &r->gl, &sim_stop);
	sim_store_free(&r->mold);
	return rc;
}

static int serve_utpsnap(struct run *r)
{
	r->gl.build = utpsnap_build;
	r->gl.title = "UTP Snap-Shot";
	r->gl.items = "symbols";
	return serve_soup(r);
}

static const struct server servers[] = {
	{ "mold", STORE_MOLD, NULL, NULL, 0, serve_mold },
	{ "grp", STORE_PITCH, NULL, NULL, TAKES_REPLY_TO | SHORT_USER, serve_grp },
	{ "xdp", STORE_XDP, NULL, NULL, TAKES_REPLY_TO | TAKES_SNAPSHOT | TAKES_REFRESH, serve_xdp },
	{ "glimpse", STORE_MOLD, "itch", "ITCH", TAKES_SNAPSHOT | TAKES_STALL, serve_soup },
	{ "utpsnap", STORE_MOLD, "uqdf", "UQDF", TAKES_SNAPSHOT | TAKES_STALL, serve_utpsnap },
	{ "spin", STORE_PITCH, NULL, NULL, TAKES_UNIT | TAKES_SNAPSHOT | SHORT_USER, serve_spin },
};

/* The gap-fill service whose store a server serves from (spin: grp's; glimpse: mold's). */
static const char *store_service(const struct server *sv)
{
	return sv->store == STORE_XDP ? "xdp" : sv->store == STORE_PITCH ? "grp" : "mold";
}

static const struct server *server_named(const char *name)
{
	for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++)
		if (!strcmp(servers[i].name, name))
			return &servers[i];
	return NULL;
}

static int load(struct run *r, const struct server *sv, const struct feed_map_entry *lines, int n,
		char *err, size_t errlen)
{
	struct pcap_reader rd;
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	int rc;

	if (pcap_reader_open(&rd, r->pcap, err, errlen) < 0)
		return -1;
	while ((rc = pcap_reader_next(&rd, &frame, &len, &ts, err, errlen)) == 1) {
		struct udp_view u;

		if (!frame_udp_view(frame, len, &u) || !served_line(lines, n, u.dst_ip, u.dst_port))
			continue;
		if ((sv->store == STORE_XDP ?
		     xdp_store_packet((uint64_t)u.dst_ip << 16 | u.dst_port, u.payload, u.len) :
		     sv->store == STORE_PITCH ? pitch_store_packet(r->units, u.payload, u.len) :
		     mold_store_packet(&r->mold, u.payload, u.len)) < 0) {
			snprintf(err, errlen, "%s: out of memory", r->pcap);
			rc = -1;
			break;
		}
	}
	pcap_reader_close(&rd);
	if (rc < 0)
		return -1;
	for (uint64_t q = 1; q < r->mold.end; q++)
		r->mold.holes += q > r->mold.cap || r->mold.off[q - 1] == UINT64_MAX;
	return 0;
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
	int venue = -1, channel = -1, c, n, nserved = 0;
	uint64_t payload = DEFAULT_PAYLOAD, drop_every = 0, v;
	bool verbose = false;
	const struct server *sv = server_named("mold");
	int unit = -1;
	static struct run r;	/* static: its stores begin empty */
	struct xdp_serve_opts xo = { .heartbeat_ms = 60000 };
	struct glimpse_opts gl = { 0 };
	const char *user = "", *password = "", *reply_to = NULL;
	struct grp_opts go = { .max_count = GRP_DEFAULT_MAX_COUNT };
	uint32_t rip = 0;
	uint16_t rport = 0;
	struct feed_map_entry all[FEED_MAX_LINES], served[MAX_LINES];
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
			if (feed_parse_address(optarg, &ip, &port, err, sizeof(err))) {
				fprintf(stderr, "wb-recoveryd: --listen %s\n", err);
				return 2;
			}
			listen_at = optarg;
			break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_PAYLOAD:
			if (opt_u64("wb-recoveryd", "--max-payload", optarg,
				    MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + 1, SIM_MAX_PAYLOAD,
				    &payload))
				return 2;
			break;
		case OPT_DROP:
			if (opt_u64("wb-recoveryd", "--drop-every", optarg, 2, UINT32_MAX, &drop_every))
				return 2;
			break;
		case OPT_SERVICE:
			sv = server_named(optarg);
			if (!sv) {
				char names[96] = "";

				for (size_t k = 0; k < sizeof(servers) / sizeof(servers[0]); k++)
					snprintf(names + strlen(names), sizeof(names) - strlen(names),
						 "%s%s", k ? ", " : "", servers[k].name);
				fprintf(stderr, "wb-recoveryd: --service: unknown service '%s' (%s)\n",
					optarg, names);
				return 2;
			}
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
			if (feed_parse_address(optarg, &rip, &rport, err, sizeof(err)) || !rport) {
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

			if (feed_parse_address(optarg, &fip, &fport, err, sizeof(err)) || !fport) {
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
	if ((sv->takes & SHORT_USER) && strlen(user) > 4) {
		fprintf(stderr, "wb-recoveryd: --user: at most 4 characters for grp and spin\n");
		return 2;
	}
	if (unit >= 0 && !(sv->takes & TAKES_UNIT)) {
		fprintf(stderr, "wb-recoveryd: --unit is for --service spin\n");
		return 2;
	}
	if (!(sv->takes & TAKES_REPLY_TO) != !reply_to) {
		fprintf(stderr, "wb-recoveryd: %s\n", reply_to ?
			"--reply-to is for --service grp or xdp" : "this service needs --reply-to "
			"ADDR:PORT (where the client takes the gap responses)");
		return 2;
	}
	/* --snapshot-at is xdp's refresh point (with --refresh-to) or glimpse's snapshot. */
	xo.snapshot_at = sv->takes & TAKES_REFRESH ? gl.snapshot_at : 0;
	if ((sv->takes & TAKES_REFRESH) || xo.refresh_to.sin_port) {
		if (!!gl.snapshot_at != !!xo.refresh_to.sin_port || !(sv->takes & TAKES_REFRESH)) {
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
	if (!(sv->takes & TAKES_SNAPSHOT) && (gl.snapshot_at || gl.stall_after)) {
		fprintf(stderr, "wb-recoveryd: --snapshot-at and --stall-after are for --service "
			"glimpse (--snapshot-at also for xdp and spin)\n");
		return 2;
	}
	if (!(sv->takes & TAKES_STALL) && gl.stall_after) {
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
		const struct recovery_service *gap_fill = recovery_gap_fill_of(all[i].protocol);
		const char *serves = gap_fill ? gap_fill->name : NULL;
		/* GLIMPSE is the ITCH book's snapshot; its messages come from the Mold store. */
		/* Spin is the PITCH book's snapshot; its messages come from the GRP store. */
		const char *service = store_service(sv);

		if (sv->only && strcmp(feed_protocol_name(all[i].protocol), sv->only)) {
			fprintf(stderr, "wb-recoveryd: %s: venue %s is %s; --service %s serves "
				"%s only\n", feeds, feed_venue_name(venue),
				feed_protocol_name(all[i].protocol), sv->name, sv->only_title);
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

	r.pcap = pcap;
	r.listen_at = listen_at;
	r.feeds = feeds;
	r.user = user;
	r.password = password;
	r.venue = venue;
	r.unit = unit;
	r.ip = ip;
	r.port = port;
	r.rip = rip;
	r.rport = rport;
	r.payload = payload;
	r.drop_every = drop_every;
	r.verbose = verbose;
	r.go = go;
	r.gl = gl;
	r.xo = xo;
	if (load(&r, sv, served, nserved, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-recoveryd: %s\n", err);
		return 1;
	}
	if (sv->store == STORE_XDP) {
		r.xo.venue = venue;
		r.xo.product = xdp_product_of_venue(venue);
		r.xo.channel = (uint8_t)(served[0].channel ? served[0].channel : 1);
		r.xo.quota = go.quota;
		r.xo.hangup_after = go.hangup_after;
		r.xo.max_payload = (uint32_t)payload;
		r.xo.verbose = verbose;
		r.xo.reply_to.sin_family = AF_INET;
		r.xo.reply_to.sin_addr.s_addr = htonl(rip);
		r.xo.reply_to.sin_port = htons(rport);
	}
	if (sv->store == STORE_MOLD && (!r.mold.has_session || !r.mold.messages)) {
		fprintf(stderr, "wb-recoveryd: %s: no MoldUDP64 message of venue %s on the groups of "
			"%s\n", pcap, feed_venue_name(venue), feeds);
		return 1;
	}
	return sv->serve(&r);
}
