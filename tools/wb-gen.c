/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-gen: a deterministic generator of realistic Nasdaq TotalView-ITCH 5.0
 * traffic, as MoldUDP64 packets in a pcap or as a BinaryFILE.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/feeds_conf.h"
#include "common/gen_flow.h"
#include "common/gen_itch.h"
#include "common/gen_pitch.h"
#include "common/itch_file.h"
#include "common/pcap_io.h"

/* 2026-02-19 00:00 US/Eastern (EST, UTC-5) in seconds since the epoch. */
#define DEFAULT_MIDNIGHT_S 1771477200ull
#define DEFAULT_A_IP 0xe9360c6fu	/* 233.54.12.111 */
#define DEFAULT_A_PORT 26477
#define DEFAULT_B_IP 0xe931c46fu	/* 233.49.196.111 */
#define DEFAULT_B_PORT 26478
#define SOURCE_IP 0x0a010101u		/* 10.1.1.1 */
#define SOURCE_PORT 40001

/* --pitch: the Cboe venues, and their default A/B groups (as feeds.conf's examples). */
static const struct {
	uint8_t venue;
	uint32_t a_ip, b_ip;
	uint16_t port;
} pitch_venues[] = {
	{ WB_VENUE_BZX, 0xe0003e02u, 0xe0003e82u, 30001 },	/* 224.0.62.2, 224.0.62.130 */
	{ WB_VENUE_BYX, 0xe0003f02u, 0xe0003f82u, 30101 },	/* 224.0.63.2, 224.0.63.130 */
	{ WB_VENUE_EDGX, 0xe0008202u, 0xe0008282u, 30201 },	/* 224.0.130.2, 224.0.130.130 */
	{ WB_VENUE_EDGA, 0xe0008302u, 0xe0008382u, 30301 },	/* 224.0.131.2, 224.0.131.130 */
};
#define PITCH_VENUES (sizeof(pitch_venues) / sizeof(pitch_venues[0]))

static void usage(FILE *out)
{
	fprintf(out,
"usage: wb-gen [options] -o FILE\n"
"\n"
"Generate a deterministic, realistic Nasdaq TotalView-ITCH 5.0 session: a pcap\n"
"of Ethernet/IPv4/UDP MoldUDP64 packets, or a Nasdaq BinaryFILE (2-byte\n"
"big-endian length before each message), plain or gzip.\n"
"\n"
"  -o, --out FILE         output file ('-' for stdout, pcap only)\n"
"  -p, --profile NAME     demo: 10 well-known symbols, a session compressed into\n"
"                         ~25 s (09:29:46-09:30:10), 20,000 order messages (default)\n"
"                         day: 8,000 symbols, 04:00-20:00, 6,000,000 order\n"
"                         messages, >1M live orders at the peak\n"
"  -s, --seed N           random seed (default 1); same seed, same bytes\n"
"  -n, --messages N       order-flow messages (A F D U E X C P), not counting the\n"
"                         directory, system events and crosses\n"
"      --symbols N        number of symbols (default: the profile's)\n"
"  -f, --format F         pcap (default), itch-file, itch-file.gz; a FILE ending\n"
"                         in .gz implies itch-file.gz\n"
"      --gap-every N      drop every Nth data packet (a sequence gap)\n"
"      --dup-every N      send every Nth data packet twice\n"
"      --ab               send every packet on the A and the B line\n"
"      --feeds FILE       take the A/B groups from the nasdaq itch lines named\n"
"                         A and B in FILE (default: feeds.conf if found, else\n"
"                         233.54.12.111:26477 and 233.49.196.111:26478)\n"
"      --session S        MoldUDP64 session (10 characters; default WBGEN<seed>)\n"
"      --max-payload N    MoldUDP64 payload bytes per packet (default %u)\n"
"      --pitch            also Cboe Multicast PITCH for BZX, BYX, EDGX and EDGA over\n"
"                         the same symbols (pcap only): the flow is spread over the\n"
"                         five venues, each Cboe venue on its own group (feeds.conf's\n"
"                         pitch lines A and B, else 224.0.62.2:30001 ...), with\n"
"                         prices that build an NBBO across venues and brief\n"
"                         locked and crossed markets\n"
"  -q, --quiet            no summary on stderr\n"
"  -h, --help\n",
		GEN_ITCH_DEFAULT_PAYLOAD);
}

struct pcap_sink_ctx {
	struct pcap_writer *w;
};

static int pcap_sink(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		     const uint8_t *payload, uint32_t len)
{
	struct pcap_writer *w = ctx;

	return pcap_writer_udp(w, ts_ns, SOURCE_IP, SOURCE_PORT, dst_ip, dst_port, payload, len);
}

static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "wb-gen: %s: not a number: %s\n", opt, s);
		return -1;
	}
	return 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void print_summary(const struct gen_flow *flow, const struct gen_itch *g,
			  const char *out, double secs)
{
	static const char types[] = "SRHQAFEXDUCP";
	uint64_t flow_msgs = flow->stats.flow_messages;

	fprintf(stderr, "wb-gen: %s: %" PRIu64 " ITCH messages (%" PRIu64
		" order flow) for %u symbols in %.2f s\n",
		out, g->stats.messages, flow_msgs, flow->symbol_count, secs);
	fprintf(stderr, "wb-gen: mix:");
	for (const char *t = types; *t; t++) {
		uint64_t n = g->stats.by_type[(int)*t];

		if (!n)
			continue;
		if (strchr("AFEXDUCP", *t) && flow_msgs)
			fprintf(stderr, " %c %" PRIu64 " (%.1f%%)", *t, n, 100.0 * (double)n / (double)flow_msgs);
		else
			fprintf(stderr, " %c %" PRIu64, *t, n);
	}
	fprintf(stderr, "\nwb-gen: peak live orders %" PRIu64 ", live at the end %" PRIu64 "\n",
		flow->stats.peak_live, flow->live_count);
	if (!g->cfg.file)
		fprintf(stderr, "wb-gen: %" PRIu64 " data packets, %" PRIu64 " datagrams written, %"
			PRIu64 " dropped (%" PRIu64 " messages), %" PRIu64 " duplicated, %" PRIu64
			" heartbeats, %" PRIu64 " end-of-session\n",
			g->stats.packets, g->stats.packets_sent, g->stats.dropped_packets,
			g->stats.dropped_messages, g->stats.duplicated_packets, g->stats.heartbeats,
			g->stats.end_of_session);
}

enum { OPT_GAP = 256, OPT_DUP, OPT_AB, OPT_FEEDS, OPT_SESSION, OPT_PAYLOAD, OPT_SYMBOLS,
       OPT_PITCH };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, 0, 'o' },	{ "profile", required_argument, 0, 'p' },
		{ "seed", required_argument, 0, 's' },	{ "messages", required_argument, 0, 'n' },
		{ "format", required_argument, 0, 'f' }, { "gap-every", required_argument, 0, OPT_GAP },
		{ "dup-every", required_argument, 0, OPT_DUP }, { "ab", no_argument, 0, OPT_AB },
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "session", required_argument, 0, OPT_SESSION },
		{ "max-payload", required_argument, 0, OPT_PAYLOAD },
		{ "symbols", required_argument, 0, OPT_SYMBOLS },
		{ "pitch", no_argument, 0, OPT_PITCH },
		{ "quiet", no_argument, 0, 'q' },	{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DEMO, .seed = 1 };
	struct gen_itch_config icfg = {
		.a_ip = DEFAULT_A_IP, .a_port = DEFAULT_A_PORT,
		.b_ip = DEFAULT_B_IP, .b_port = DEFAULT_B_PORT,
		.midnight_ns = DEFAULT_MIDNIGHT_S * 1000000000ull,
	};
	const char *out = NULL, *format = NULL, *feeds = NULL, *session = NULL;
	struct gen_pitch_config pcfg[PITCH_VENUES];
	bool quiet = false, pitch = false;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "o:p:s:n:f:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p':
			if (gen_profile_parse(optarg) < 0) {
				fprintf(stderr, "wb-gen: unknown profile '%s' (demo, day)\n", optarg);
				return 2;
			}
			fcfg.profile = (enum gen_profile)gen_profile_parse(optarg);
			break;
		case 's':
			if (parse_u64("--seed", optarg, &fcfg.seed))
				return 2;
			break;
		case 'n':
			if (parse_u64("--messages", optarg, &fcfg.messages))
				return 2;
			if (!fcfg.messages) {
				fprintf(stderr, "wb-gen: --messages must be at least 1\n");
				return 2;
			}
			break;
		case OPT_SYMBOLS:
			if (parse_u64("--symbols", optarg, &v))
				return 2;
			if (v < 1 || v > 65534) {
				fprintf(stderr, "wb-gen: --symbols must be 1..65534 (ITCH locates)\n");
				return 2;
			}
			fcfg.symbols = (uint32_t)v;
			break;
		case 'f': format = optarg; break;
		case OPT_GAP:
		case OPT_DUP:
			if (parse_u64(c == OPT_GAP ? "--gap-every" : "--dup-every", optarg, &v))
				return 2;
			if (v == 1 || v > UINT32_MAX) {
				fprintf(stderr, "wb-gen: --%s must be 0 (never) or 2..%u\n",
					c == OPT_GAP ? "gap-every" : "dup-every", UINT32_MAX);
				return 2;
			}
			*(c == OPT_GAP ? &icfg.gap_every : &icfg.dup_every) = (uint32_t)v;
			break;
		case OPT_AB: icfg.ab = true; break;
		case OPT_PITCH: pitch = true; break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_SESSION:
			if (strlen(optarg) != 10) {
				fprintf(stderr, "wb-gen: --session needs exactly 10 characters\n");
				return 2;
			}
			session = optarg;
			break;
		case OPT_PAYLOAD:
			if (parse_u64("--max-payload", optarg, &v))
				return 2;
			if (v < 20 + 2 + GEN_ITCH_MAX_MESSAGE || v > PCAP_WRITER_MAX_PAYLOAD) {
				fprintf(stderr, "wb-gen: --max-payload must be %d..%u\n",
					20 + 2 + GEN_ITCH_MAX_MESSAGE, PCAP_WRITER_MAX_PAYLOAD);
				return 2;
			}
			icfg.max_payload = (uint32_t)v;
			break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !out) {
		fprintf(stderr, optind != argc ? "wb-gen: unexpected argument '%s'\n"
					       : "wb-gen: no output file (-o FILE)\n%s",
			optind != argc ? argv[optind] : "");
		usage(stderr);
		return 2;
	}
	if (!format)
		format = itch_file_path_is_gz(out) ? "itch-file.gz" : "pcap";
	bool to_file = strcmp(format, "itch-file") == 0 || strcmp(format, "itch-file.gz") == 0;

	if (!to_file && strcmp(format, "pcap") != 0) {
		fprintf(stderr, "wb-gen: unknown format '%s' (pcap, itch-file, itch-file.gz)\n", format);
		return 2;
	}

	if (to_file && (icfg.ab || icfg.gap_every || icfg.dup_every || icfg.max_payload)) {
		/* A BinaryFILE has no packets to lose, copy or size. */
		fprintf(stderr, "wb-gen: --ab, --gap-every, --dup-every and --max-payload need "
				"--format pcap\n");
		return 2;
	}
	if (to_file && pitch) {
		fprintf(stderr, "wb-gen: --pitch needs --format pcap (a BinaryFILE is ITCH only)\n");
		return 2;
	}
	for (size_t i = 0; i < PITCH_VENUES; i++) {
		pcfg[i] = (struct gen_pitch_config){
			.venue = pitch_venues[i].venue, .unit = 1,
			.a_ip = pitch_venues[i].a_ip, .a_port = pitch_venues[i].port,
			.b_ip = pitch_venues[i].b_ip, .b_port = pitch_venues[i].port,
			.ab = icfg.ab, .gap_every = icfg.gap_every, .dup_every = icfg.dup_every,
			.max_payload = icfg.max_payload, .midnight_ns = icfg.midnight_ns,
			.seed = fcfg.seed,
		};
		if (pitch)
			fcfg.venues |= 1u << WB_VENUE_NASDAQ | 1u << pitch_venues[i].venue;
	}

	char err[PCAP_IO_ERR_LEN];

	/* A/B groups from feeds.conf when there is one. */
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (feeds) {
		struct feeds_conf_entry entries[FEED_MAX_LINES];
		int n = feeds_conf_read(feeds, entries, FEED_MAX_LINES, err, sizeof(err));
		const struct feeds_conf_entry *a, *b;

		if (n < 0) {
			fprintf(stderr, "wb-gen: %s\n", err);
			return 1;
		}
		a = feeds_conf_find(entries, n, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
		b = feeds_conf_find(entries, n, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "B");
		if (a) {
			icfg.a_ip = a->ip;
			icfg.a_port = a->port;
		}
		if (b) {
			icfg.b_ip = b->ip;
			icfg.b_port = b->port;
		}
		if (icfg.ab && (!a || !b)) {
			fprintf(stderr, "wb-gen: --ab: %s has no nasdaq itch line %s\n", feeds,
				a ? "B" : "A");
			return 1;
		}
		for (size_t i = 0; pitch && i < PITCH_VENUES; i++) {
			a = feeds_conf_find(entries, n, FEED_PROTO_PITCH, pcfg[i].venue, "A");
			b = feeds_conf_find(entries, n, FEED_PROTO_PITCH, pcfg[i].venue, "B");
			if (a) {
				pcfg[i].a_ip = a->ip;
				pcfg[i].a_port = a->port;
			}
			if (b) {
				pcfg[i].b_ip = b->ip;
				pcfg[i].b_port = b->port;
			}
		}
	}
	if (session) {
		memcpy(icfg.session, session, 10);
	} else {
		char s[16];

		snprintf(s, sizeof(s), "WBGEN%05" PRIu64, fcfg.seed % 100000);
		memcpy(icfg.session, s, 10);
	}

	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_itch *g = calloc(1, sizeof(*g));
	struct gen_pitch *pg = calloc(PITCH_VENUES, sizeof(*pg));
	struct pcap_writer pw;
	struct gen_reorder order = { 0 };
	struct itch_file file;
	struct timespec t0;
	int rc = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!flow || !g || !pg || gen_flow_init(flow, &fcfg)) {
		fprintf(stderr, "wb-gen: out of memory\n");
		return 1;
	}
	if (to_file) {
		if (strcmp(out, "-") == 0) {
			fprintf(stderr, "wb-gen: BinaryFILE output needs a file name\n");
			return 2;
		}
		if (itch_file_open_write(&file, out, strcmp(format, "itch-file.gz") == 0, err,
					 sizeof(err))) {
			fprintf(stderr, "wb-gen: %s\n", err);
			return 1;
		}
		icfg.file = &file;
	} else {
		if (pcap_writer_open(&pw, out, err, sizeof(err))) {
			fprintf(stderr, "wb-gen: %s\n", err);
			return 1;
		}
		struct gen_packet_sink file_sink = { .packet = pcap_sink, .ctx = &pw };

		/* Every encoder writes through one reorder buffer: time order. */
		gen_reorder_init(&order, &file_sink);
		icfg.sink = gen_reorder_sink(&order);
	}
	gen_itch_init(g, &icfg);
	for (size_t i = 0; pitch && i < PITCH_VENUES; i++) {
		pcfg[i].sink = icfg.sink;
		if (gen_pitch_init(&pg[i], &pcfg[i])) {
			fprintf(stderr, "wb-gen: out of memory\n");
			return 1;
		}
	}

	struct gen_action a;
	uint64_t last_ts = 0;
	int werr = 0;

	while (!werr && gen_flow_next(flow, &a) == 1) {
		uint64_t low;

		last_ts = a.ts;
		/* Each venue's actions go to its own encoder; ITCH is Nasdaq's. */
		if (a.venue == WB_VENUE_NASDAQ)
			werr = gen_itch_action(g, flow, &a);
		for (size_t i = 0; pitch && i < PITCH_VENUES && !werr; i++)
			werr = gen_pitch_action(&pg[i], flow, &a);
		if (to_file || werr)
			continue;
		/* Nothing earlier than this can come any more: write it out. */
		low = icfg.midnight_ns + a.ts;
		if (gen_itch_low_water(g) < low)
			low = gen_itch_low_water(g);
		for (size_t i = 0; pitch && i < PITCH_VENUES; i++)
			if (gen_pitch_low_water(&pg[i]) < low)
				low = gen_pitch_low_water(&pg[i]);
		werr = gen_reorder_release(&order, low);
	}
	if (!werr)
		werr = gen_itch_finish(g, last_ts + 1000000);
	for (size_t i = 0; pitch && i < PITCH_VENUES && !werr; i++)
		werr = gen_pitch_finish(&pg[i], last_ts + 1000000);
	if (!to_file && gen_reorder_finish(&order) && !werr) {
		fprintf(stderr, "wb-gen: %s: %s\n", out, order.error ? "a datagram out of time "
			"order (generator bug) or a write error" : "out of memory");
		werr = 1;
	}
	if (to_file)
		werr |= itch_file_close(&file, err, sizeof(err));
	else
		werr |= pcap_writer_close(&pw, err, sizeof(err));
	if (werr) {
		fprintf(stderr, "wb-gen: %s: write failed: %s\n", out, err[0] ? err : strerror(errno));
	} else {
		rc = 0;
		if (!quiet)
			print_summary(flow, g, out, seconds_since(&t0));
		for (size_t i = 0; pitch && !quiet && i < PITCH_VENUES; i++)
			fprintf(stderr, "wb-gen: %s PITCH: %" PRIu64 " messages in %" PRIu64
				" data packets, %" PRIu64 " heartbeats, %" PRIu64 " locking and %"
				PRIu64 " crossing orders\n", feed_venue_name(pg[i].cfg.venue),
				pg[i].stats.messages, pg[i].stats.packets, pg[i].stats.heartbeats,
				pg[i].stats.locking_orders, pg[i].stats.crossing_orders);
	}
	for (size_t i = 0; pitch && i < PITCH_VENUES; i++)
		gen_pitch_destroy(&pg[i]);
	free(pg);
	gen_flow_destroy(flow);
	free(flow);
	free(g);
	return rc;
}
