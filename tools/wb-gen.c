/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-gen: a deterministic generator of realistic market-data traffic: one
 * synthetic order flow (gen_flow) spread over the venues asked for, each
 * venue written by the encoder of its protocol (gen_proto.h) as UDP
 * packets in a pcap, or, for ITCH alone, as a BinaryFILE.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/feeds_conf.h"
#include "common/options.h"
#include "common/version.h"
#include "gen/gen_flow.h"
#include "gen/gen_proto.h"
#include "gen/gen_truth.h"
#include "input/itch_file.h"
#include "input/pcap_io.h"
#include "wire/moldudp64.h"

/* 2026-02-19 00:00 US/Eastern (EST, UTC-5) in seconds since the epoch. */
#define DEFAULT_MIDNIGHT_S 1771477200ull
#define SOURCE_IP 0x0a010101u		/* 10.1.1.1 */
#define SOURCE_PORT 40001

/*
 * Groups of the sample feeds.conf, used when no feed map names a venue's A
 * and B lines; other venues get 239.192.<venue>.1 and .2, port 31000 + venue.
 */
static const struct {
	uint8_t venue;
	uint32_t a_ip, b_ip;
	uint16_t a_port, b_port;
} sample_groups[] = {
	{ WB_VENUE_NASDAQ, 0xe9360c6fu, 0xe931c46fu, 26477, 26478 }, /* 233.54.12.111, 233.49.196.111 */
	{ WB_VENUE_BZX, 0xe0003e02u, 0xe0003e82u, 30001, 30001 },	/* 224.0.62.2, 224.0.62.130 */
	{ WB_VENUE_BYX, 0xe0003f02u, 0xe0003f82u, 30101, 30101 },	/* 224.0.63.2, 224.0.63.130 */
	{ WB_VENUE_EDGX, 0xe0008202u, 0xe0008282u, 30201, 30201 },	/* 224.0.130.2, 224.0.130.130 */
	{ WB_VENUE_EDGA, 0xe0008302u, 0xe0008382u, 30301, 30301 },	/* 224.0.131.2, 224.0.131.130 */
};

/*
 * The most order-flow messages one run makes: the capture is held in
 * memory until it is written in time order, so a count beyond this (some
 * 17 days of the day profile) would only exhaust memory.
 */
#define GEN_MAX_MESSAGES 100000000ull

static const char pitch_venues[] = "nasdaq,bzx,byx,edgx,edga";
static const char xdp_venues[] = "nyse,arca";

static void usage(FILE *out)
{
	fprintf(out,
"usage: wb-gen [options] -o FILE\n"
"\n"
"Generate a deterministic, realistic trading session: one order flow over the\n"
"venues asked for, each venue in its own protocol (the one its feed-map lines\n"
"name, else the first protocol that serves it), as a pcap of\n"
"Ethernet/IPv4/UDP packets in time order, or, for Nasdaq alone, a Nasdaq BinaryFILE (2-byte\n"
"big-endian length before each message), plain or gzip.\n"
"\n"
"  -o, --out FILE         output file ('-' for stdout, pcap only)\n"
"  -p, --profile NAME     demo: 10 well-known symbols, a session compressed into\n"
"                         ~25 s (09:29:46-09:30:10), 20,000 order messages (default)\n"
"                         day: 8,000 symbols, 04:00-20:00, 6,000,000 order\n"
"                         messages, >1M live orders at the peak\n"
"                         hostile: the cache-hostile day of the benchmarks:\n"
"                         8,000 equally active symbols, 5,000,000 order messages,\n"
"                         the book built to ~1M live orders (messages / 5) over\n"
"                         32 levels a side before the open and held there to\n"
"                         the close, so every update hits a cold order, level\n"
"                         and symbol\n"
"  -s, --seed N           random seed (default 1); same seed, same bytes\n"
"  -n, --messages N       order-flow messages (A F D U E X C P), not counting the\n"
"                         directory, system events and crosses (1-%llu)\n"
"      --symbols N        number of symbols (1-65534; default: the profile's)\n"
"      --venues LIST      comma-separated venues the flow trades on (default\n"
"                         nasdaq); see wb-dump --help for the venue names\n"
"      --pitch            the same as --venues %s\n"
"      --xdp              add %s (NYSE Integrated Feed) to the venues, each\n"
"                         over the channels its feed-map lines name (channel=N)\n"
"  -f, --format F         pcap (default), itch-file, itch-file.gz; a FILE ending\n"
"                         in .gz implies itch-file.gz\n"
"      --gap-every N      drop every Nth data packet of each venue (a sequence gap)\n"
"      --dup-every N      send every Nth data packet twice\n"
"      --ab               send every packet on the A and the B line\n"
"      --loss PCT         lose PCT %% (0-50, e.g. 0.1) of the data packets at\n"
"                         random on every line at once, in bursts of 1-5\n"
"                         packets; heartbeats pass. Same flow as without it\n"
"      --feeds FILE       take each venue's protocol and A/B groups from its lines\n"
"                         named A and B in FILE (default: feeds.conf if found; else\n"
"                         the sample feeds.conf's groups, 239.192.<venue>.1/.2 for\n"
"                         venues it lacks)\n"
"      --session S        MoldUDP64 session (10 characters; default WBGEN<seed>)\n"
"      --date YYYY-MM-DD  the trading day (default 2026-02-19)\n"
"      --until HH:MM:SS[.fff]  stop the session at that exchange time, without\n"
"                         closing it (no end of session, no close): a capture that\n"
"                         ends mid-day\n"
"      --max-payload N    UDP payload bytes per packet (default 1400)\n"
"      --sip-lag-us LAG   the SIPs' (cqs, uqdf) lag behind the participants' own\n"
"                         time, in microseconds: N (fixed; default 20),\n"
"                         uniform:A:B or exp:MEAN (drawn per message; a line\n"
"                         never goes back in time, so a draw is raised to the\n"
"                         line's previous message's time when it would)\n"
"      --truth FILE       write what the day holds for a test to check against:\n"
"                         the locked and crossed episodes of the NBBO across the\n"
"                         direct feeds (start, end, venues; tools/gen/gen_truth.h)\n"
"  -q, --quiet            no summary on stderr\n"
"  -h, --help\n"
"      --version\n",
		GEN_MAX_MESSAGES, pitch_venues, xdp_venues);
}

/*
 * Each encoder writes its packets in time order, but a venue holds a
 * packet until its window closes while other venues write theirs, and a B
 * copy trails its A copy: the run's packets are held here and written at
 * the end sorted by time (stable), so the capture replays as the exchanges
 * sent it. Memory: the capture's size, once.
 */
/*
 * --loss: random packet loss on every line at once (a copy on the B line,
 * or a --dup-every copy, shares the fate of the packet it copies), in
 * bursts of 1 to LOSS_MAX_BURST packets (mean 3), data packets only: a
 * heartbeat or end of session (a payload of a header alone) always
 * passes, so every loss is visible to the receiver. Its own random
 * numbers, so the flow (and every packet that is kept) is the same bytes
 * as without --loss.
 */
#define LOSS_MAX_BURST 5
#define LOSS_HEADER_ONLY MOLD_HEADER_LEN	/* the largest header-only payload */

struct loss {
	uint32_t ppm;		/* packets lost per million */
	uint64_t rng;
	uint32_t burst_left;	/* packets still to drop in this burst */
	bool prev_dropped;	/* the fate of the previous packet... */
	uint32_t prev_len;	/* ...and its bytes, to recognise its copy */
	uint8_t prev[PCAP_WRITER_MAX_PAYLOAD];
	uint64_t data_packets, dropped, bursts;
};

static uint64_t loss_random(struct loss *l)
{
	uint64_t z = (l->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool loss_drops(struct loss *l, const uint8_t *p, uint32_t len)
{
	bool drop;

	if (len <= LOSS_HEADER_ONLY)
		return false;
	if (len == l->prev_len && memcmp(p, l->prev, len) == 0)
		return l->prev_dropped;		/* the other line's copy */
	l->data_packets++;
	if (l->burst_left) {
		l->burst_left--;
		drop = true;
	} else {
		/* A burst starts with probability rate / mean burst length. */
		drop = loss_random(l) % (1000000ull * (LOSS_MAX_BURST + 1) / 2) < l->ppm;
		if (drop) {
			l->burst_left = (uint32_t)(loss_random(l) % LOSS_MAX_BURST);
			l->bursts++;
		}
	}
	l->dropped += drop;
	l->prev_dropped = drop;
	l->prev_len = len;
	memcpy(l->prev, p, len);
	return drop;
}

struct held_packet {
	uint64_t ts;
	uint64_t off;		/* in time_order.bytes; also the tie-break: arrival order */
	uint32_t ip, len;
	uint16_t port;
};

struct time_order {
	struct pcap_writer *w;
	uint8_t *bytes;
	size_t used, cap;
	struct held_packet *held;
	size_t n, held_cap;
	struct loss loss;
};

static int pcap_sink(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		     const uint8_t *payload, uint32_t len)
{
	struct time_order *t = ctx;

	if (len > PCAP_WRITER_MAX_PAYLOAD)
		return -1;
	if (t->loss.ppm && loss_drops(&t->loss, payload, len))
		return 0;
	if (t->n == t->held_cap) {
		size_t cap = t->held_cap ? t->held_cap * 2 : 1u << 16;
		struct held_packet *h = realloc(t->held, cap * sizeof(*h));

		if (!h)
			return -1;
		t->held = h;
		t->held_cap = cap;
	}
	if (t->used + len > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1u << 22;
		uint8_t *b;

		while (cap < t->used + len)
			cap *= 2;
		b = realloc(t->bytes, cap);
		if (!b)
			return -1;
		t->bytes = b;
		t->cap = cap;
	}
	memcpy(t->bytes + t->used, payload, len);
	t->held[t->n++] = (struct held_packet){ ts_ns, t->used, dst_ip, len, dst_port };
	t->used += len;
	return 0;
}

static int earlier(const void *a, const void *b)
{
	const struct held_packet *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int write_in_time_order(struct time_order *t)
{
	int rc = 0;

	qsort(t->held, t->n, sizeof(*t->held), earlier);
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct held_packet *h = &t->held[i];

		rc = pcap_writer_udp(t->w, h->ts, SOURCE_IP, SOURCE_PORT, h->ip, h->port,
				     t->bytes + h->off, h->len);
	}
	free(t->held);
	free(t->bytes);
	t->held = NULL;
	t->bytes = NULL;
	return rc;
}


/* "HH:MM:SS" or "HH:MM:SS.fff..." as ns since midnight; -1 if malformed. */
static int parse_time_of_day(const char *s, uint64_t *ns)
{
	unsigned h, m, sec;
	int n = 0;
	uint64_t frac = 0, scale = 100000000;

	if (sscanf(s, "%2u:%2u:%2u%n", &h, &m, &sec, &n) != 3 || h > 23 || m > 59 || sec > 59)
		return -1;
	s += n;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9' && scale; s++, scale /= 10)
			frac += (uint64_t)(*s - '0') * scale;
	}
	if (*s)
		return -1;
	*ns = ((uint64_t)h * 3600 + m * 60 + sec) * 1000000000ull + frac;
	return *ns ? 0 : -1;
}

/* "nasdaq,bzx" as a venue mask; 0 (with a message) on a bad name. */
static uint32_t parse_venues(const char *list)
{
	uint32_t mask = 0;
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");
		int v = feed_venue_parse(p, n);

		if (v <= 0) {
			fprintf(stderr, "wb-gen: --venues: unknown venue '%.*s'\n", (int)n, p);
			return 0;
		}
		mask |= 1u << v;
		p += n + (p[n] == ',');
	}
	if (!mask)
		fprintf(stderr, "wb-gen: --venues: empty list\n");
	return mask;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* One venue's encoder. */
struct venue_out {
	uint8_t venue;
	int protocol;
	const struct gen_proto *gp;
	struct gen_encoder_config cfg;
	void *enc;
};

/* The protocol of a venue: its feed-map lines', else the first that serves it. */
static int venue_protocol(const struct feed_map_entry *map, int n, uint8_t venue)
{
	for (int i = 0; i < n; i++)
		if (map[i].venue == venue)
			return map[i].protocol;
	for (int p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT; p++)
		if (feed_protocol_venues(p) & (1u << venue))
			return p;
	return -1;
}

/* A and B groups of a venue: the feed map's lines A and B, else the defaults above. */
static void venue_groups(const struct feed_map_entry *map, int n, struct venue_out *o)
{
	const struct feed_map_entry *a = feeds_conf_find(map, n, o->protocol, o->venue, "A");
	const struct feed_map_entry *b = feeds_conf_find(map, n, o->protocol, o->venue, "B");

	o->cfg.a_ip = 0xefc00001u | (uint32_t)o->venue << 8;	/* 239.192.<venue>.1 */
	o->cfg.b_ip = o->cfg.a_ip + 1;
	o->cfg.a_port = o->cfg.b_port = (uint16_t)(31000 + o->venue);
	for (size_t i = 0; i < sizeof(sample_groups) / sizeof(sample_groups[0]); i++) {
		if (sample_groups[i].venue != o->venue)
			continue;
		o->cfg.a_ip = sample_groups[i].a_ip;
		o->cfg.b_ip = sample_groups[i].b_ip;
		o->cfg.a_port = sample_groups[i].a_port;
		o->cfg.b_port = sample_groups[i].b_port;
	}
	if (a) {
		o->cfg.a_ip = a->ip;
		o->cfg.a_port = a->port;
		o->cfg.channel = a->channel;
	}
	if (b) {
		o->cfg.b_ip = b->ip;
		o->cfg.b_port = b->port;
	}
}

enum { OPT_GAP = 256, OPT_DUP, OPT_AB, OPT_LOSS, OPT_FEEDS, OPT_SESSION, OPT_PAYLOAD, OPT_SYMBOLS,
       OPT_PITCH, OPT_XDP, OPT_VENUES, OPT_UNTIL, OPT_DATE, OPT_SIP_LAG, OPT_TRUTH };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, 0, 'o' },	{ "profile", required_argument, 0, 'p' },
		{ "seed", required_argument, 0, 's' },	{ "messages", required_argument, 0, 'n' },
		{ "format", required_argument, 0, 'f' }, { "gap-every", required_argument, 0, OPT_GAP },
		{ "dup-every", required_argument, 0, OPT_DUP }, { "ab", no_argument, 0, OPT_AB },
		{ "loss", required_argument, 0, OPT_LOSS },
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "session", required_argument, 0, OPT_SESSION },
		{ "until", required_argument, 0, OPT_UNTIL },
		{ "date", required_argument, 0, OPT_DATE },
		{ "max-payload", required_argument, 0, OPT_PAYLOAD },
		{ "symbols", required_argument, 0, OPT_SYMBOLS },
		{ "pitch", no_argument, 0, OPT_PITCH },
		{ "xdp", no_argument, 0, OPT_XDP },
		{ "venues", required_argument, 0, OPT_VENUES },
		{ "sip-lag-us", required_argument, 0, OPT_SIP_LAG },
		{ "truth", required_argument, 0, OPT_TRUTH },
		{ "quiet", no_argument, 0, 'q' },	{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DEMO, .seed = 1 };
	struct gen_encoder_config base = { .midnight_ns = DEFAULT_MIDNIGHT_S * 1000000000ull };
	const char *out = NULL, *format = NULL, *feeds = NULL, *session = NULL, *truth_path = NULL;
	struct gen_lag sip_lag;
	bool have_sip_lag = false;
	struct venue_out venues[FEED_SOURCE_COUNT];
	uint32_t venue_mask = 1u << WB_VENUE_NASDAQ, added_venues = 0;
	bool quiet = false;
	uint64_t until = 0;	/* exchange time (ns since midnight) to stop at; 0: the whole day */
	uint32_t loss_ppm = 0;	/* --loss, packets per million */
	int nvenues = 0;
	uint64_t v;
	int c;
	bool pitch = false;
	const char *venues_given = NULL;	/* --venues, which --pitch would contradict */
	const char *until_text = NULL;

	if (tool_version_option(argc, argv, "wb-gen"))
		return 0;
	while ((c = getopt_long(argc, argv, "o:p:s:n:f:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p':
			if (gen_profile_parse(optarg) < 0) {
				fprintf(stderr, "wb-gen: unknown profile '%s' (demo, day, hostile)\n", optarg);
				return 2;
			}
			fcfg.profile = (enum gen_profile)gen_profile_parse(optarg);
			break;
		case 's':
			if (opt_u64("wb-gen", "--seed", optarg, 0, UINT64_MAX, &fcfg.seed))
				return 2;
			break;
		case 'n':
			if (opt_u64("wb-gen", "--messages", optarg, 1, GEN_MAX_MESSAGES, &fcfg.messages))
				return 2;
			break;
		case OPT_SYMBOLS:	/* ITCH locates are 16 bits, 0 and 65535 unused */
			if (opt_u64("wb-gen", "--symbols", optarg, 1, 65534, &v))
				return 2;
			fcfg.symbols = (uint32_t)v;
			break;
		case 'f': format = optarg; break;
		case OPT_GAP:
		case OPT_DUP:
			if (opt_u64("wb-gen", c == OPT_GAP ? "--gap-every" : "--dup-every", optarg, 0,
				    UINT32_MAX, &v))
				return 2;
			if (v == 1) {
				fprintf(stderr, "wb-gen: --%s must be 0 (never) or 2..%u\n",
					c == OPT_GAP ? "gap-every" : "dup-every", UINT32_MAX);
				return 2;
			}
			*(c == OPT_GAP ? &base.gap_every : &base.dup_every) = (uint32_t)v;
			break;
		case OPT_AB: base.ab = true; break;
		case OPT_LOSS: {
			char *end;
			double pct = strtod(optarg, &end);

			if (end == optarg || *end || !(pct >= 0 && pct <= 50)) {
				fprintf(stderr, "wb-gen: --loss: a percentage 0-50 (e.g. 1 or 0.1), "
					"not '%s'\n", optarg);
				return 2;
			}
			loss_ppm = (uint32_t)(pct * 10000 + 0.5);
			break;
		}
		case OPT_PITCH: venue_mask = parse_venues(pitch_venues); pitch = true; break;
		case OPT_XDP: added_venues |= parse_venues(xdp_venues); break;
		case OPT_VENUES:
			venues_given = optarg;
			venue_mask = parse_venues(optarg);
			if (!venue_mask)
				return 2;
			break;
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_SIP_LAG:
			if (gen_lag_parse(optarg, &sip_lag)) {
				fprintf(stderr, "wb-gen: --sip-lag-us: not N, uniform:A:B (A <= B) or exp:MEAN "
						"(microseconds): %s\n", optarg);
				return 2;
			}
			have_sip_lag = true;
			break;
		case OPT_TRUTH: truth_path = optarg; break;
		case OPT_DATE: {
			int y, mo, dd;
			char end;

			if (sscanf(optarg, "%4d-%2d-%2d%c", &y, &mo, &dd, &end) != 3 ||
			    !(base.midnight_ns = feed_et_midnight_of_date(y, mo, dd))) {
				fprintf(stderr, "wb-gen: --date: not a date YYYY-MM-DD: %s\n", optarg);
				return 2;
			}
			break;
		}
		case OPT_UNTIL:
			if (parse_time_of_day(optarg, &until)) {
				fprintf(stderr, "wb-gen: --until: not a time HH:MM:SS[.fff]: %s\n", optarg);
				return 2;
			}
			until_text = optarg;
			break;
		case OPT_SESSION:
			if (strlen(optarg) != 10) {
				fprintf(stderr, "wb-gen: --session needs exactly 10 characters\n");
				return 2;
			}
			session = optarg;
			break;
		case OPT_PAYLOAD:
			if (opt_u64("wb-gen", "--max-payload", optarg, 0, PCAP_WRITER_MAX_PAYLOAD, &v))
				return 2;
			base.max_payload = (uint32_t)v;
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
	if (pitch && venues_given) {
		fprintf(stderr, "wb-gen: --pitch and --venues %s: give one (--pitch is --venues %s)\n",
			venues_given, pitch_venues);
		return 2;
	}
	if (until && until <= gen_profile_session_start(fcfg.profile)) {
		uint64_t s = gen_profile_session_start(fcfg.profile) / 1000000000ull;

		fprintf(stderr, "wb-gen: --until %s: before the %s session starts (%02u:%02u:%02u): "
			"nothing to generate\n", until_text, fcfg.profile == GEN_PROFILE_DAY ? "day" :
			"demo", (unsigned)(s / 3600), (unsigned)(s / 60 % 60), (unsigned)(s % 60));
		return 2;
	}
	if (!format)
		format = itch_file_path_is_gz(out) ? "itch-file.gz" : "pcap";
	bool to_file = strcmp(format, "itch-file") == 0 || strcmp(format, "itch-file.gz") == 0;

	if (!to_file && strcmp(format, "pcap") != 0) {
		fprintf(stderr, "wb-gen: unknown format '%s' (pcap, itch-file, itch-file.gz)\n", format);
		return 2;
	}
	if (to_file && (base.ab || base.gap_every || base.dup_every || base.max_payload ||
			loss_ppm)) {
		/* A BinaryFILE has no packets to lose, copy or size. */
		fprintf(stderr, "wb-gen: --ab, --gap-every, --dup-every, --loss and --max-payload "
				"need --format pcap\n");
		return 2;
	}
	venue_mask |= added_venues;
	if (to_file && venue_mask != 1u << WB_VENUE_NASDAQ) {
		fprintf(stderr, "wb-gen: a BinaryFILE holds Nasdaq ITCH only: --venues, --pitch and "
				"--xdp need --format pcap\n");
		return 2;
	}
	/* The SIPs (cqs, uqdf) quote the venues that trade; they trade nothing themselves. */
	fcfg.venues = venue_mask & ((1u << WB_VENUE_COUNT) - 1);

	char err[PCAP_IO_ERR_LEN] = "";
	struct feed_map_entry map[FEED_MAX_LINES];
	int nmap = 0;

	/* Protocols and A/B groups from feeds.conf when there is one. */
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (feeds) {
		nmap = feeds_conf_read(feeds, map, FEED_MAX_LINES, err, sizeof(err));
		if (nmap < 0) {
			fprintf(stderr, "wb-gen: %s\n", err);
			return 2;	/* the feed map is configuration: bad usage */
		}
	}
	if (session) {
		memcpy(base.session, session, 10);
	} else {
		char s[16];

		snprintf(s, sizeof(s), "WBGEN%05" PRIu64, fcfg.seed % 100000);
		memcpy(base.session, s, 10);
	}
	base.seed = fcfg.seed;
	if (have_sip_lag)
		base.sip_lag = &sip_lag;

	struct gen_truth truth;
	struct gen_lag_record lags;

	memset(&truth, 0, sizeof(truth));
	memset(&lags, 0, sizeof(lags));
	if (truth_path) {
		char lagtext[64], comment[160];

		snprintf(comment, sizeof(comment), "seed %" PRIu64 ", sip-lag-us %s", fcfg.seed,
			 have_sip_lag ? gen_lag_format(&sip_lag, lagtext, sizeof(lagtext)) : "20.000");
		if (gen_truth_open(&truth, truth_path, base.midnight_ns, comment)) {
			fprintf(stderr, "wb-gen: --truth %s: %s\n", truth_path, strerror(errno));
			return 1;
		}
		base.observer = &truth.observer;
		base.sip_lag_record = &lags;
	}
	for (int venue = 1; venue < FEED_SOURCE_COUNT; venue++) {
		struct venue_out *o = &venues[nvenues];

		if (!(venue_mask & (1u << venue)))
			continue;
		o->venue = (uint8_t)venue;
		o->protocol = venue_protocol(map, nmap, o->venue);
		o->gp = gen_proto_get(o->protocol);
		if (!o->gp) {
			fprintf(stderr, "wb-gen: no generator for venue %s\n", feed_venue_name(venue));
			return 2;
		}
		if (base.max_payload && base.max_payload < o->gp->min_payload) {
			fprintf(stderr, "wb-gen: --max-payload must be at least %u for %s\n",
				o->gp->min_payload, feed_protocol_name(o->protocol));
			return 2;
		}
		o->cfg = base;
		o->cfg.venue = o->venue;
		o->cfg.map = map;
		o->cfg.map_len = nmap;
		venue_groups(map, nmap, o);
		if (base.ab && feeds && (!feeds_conf_find(map, nmap, o->protocol, o->venue, "A") ||
					 !feeds_conf_find(map, nmap, o->protocol, o->venue, "B"))) {
			fprintf(stderr, "wb-gen: --ab: %s has no %s %s lines A and B\n", feeds,
				feed_venue_name(venue), feed_protocol_name(o->protocol));
			return 1;
		}
		nvenues++;
	}

	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct pcap_writer pw;
	struct time_order order = { .w = &pw };

	order.loss.ppm = loss_ppm;
	order.loss.rng = fcfg.seed ^ 0x6c6f7373ull;	/* its own stream: "loss" */
	struct itch_file file;
	struct timespec t0;
	int rc = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!flow || gen_flow_init(flow, &fcfg)) {
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
	} else if (pcap_writer_open(&pw, out, err, sizeof(err))) {
		fprintf(stderr, "wb-gen: %s\n", err);
		return 1;
	}
	for (int i = 0; i < nvenues; i++) {
		struct venue_out *o = &venues[i];

		if (to_file)
			o->cfg.file = &file;
		else
			o->cfg.sink = (struct gen_packet_sink){ .packet = pcap_sink, .ctx = &order };
		o->enc = calloc(1, o->gp->size);
		if (!o->enc || o->gp->init(o->enc, &o->cfg)) {
			fprintf(stderr, "wb-gen: out of memory\n");
			return 1;
		}
	}

	struct gen_action a;
	uint64_t last_ts = 0;
	int werr = 0;

	bool stopped = false;

	while (!werr && gen_flow_next(flow, &a) == 1) {
		if (until && a.ts >= until) {
			stopped = true;
			break;
		}
		last_ts = a.ts;
		if (truth_path && !werr && gen_truth_action(&truth, flow, &a)) {
			fprintf(stderr, "wb-gen: out of memory\n");
			werr = -1;
		}
		/* Each venue's actions go to its own encoder, and every action to a SIP's. */
		for (int i = 0; i < nvenues && !werr; i++)
			if (venues[i].venue == a.venue || venues[i].venue >= WB_VENUE_COUNT)
				werr = venues[i].gp->action(venues[i].enc, flow, &a);
	}
	for (int i = 0; i < nvenues && !werr; i++)
		werr = stopped ? venues[i].gp->stop(venues[i].enc) :
			venues[i].gp->finish(venues[i].enc, last_ts + 1000000);
	if (truth_path) {
		char note[160];

		/* what the SIP lines applied, raised where a line would have gone back */
		snprintf(note, sizeof(note), "sip-lag-applied messages %zu mean_ns %" PRIu64 " p50_ns %" PRIu64 "%s",
			 lags.n, lags.n ? lags.sum / lags.n : 0, gen_lag_record_median(&lags),
			 lags.error ? " (incomplete: out of memory)" : "");
		gen_truth_note(&truth, note);
		free(lags.lag);
	}
	if (truth_path && gen_truth_close(&truth)) {
		fprintf(stderr, "wb-gen: --truth %s: write failed\n", truth_path);
		werr = -1;
	}
	if (to_file) {
		werr |= itch_file_close(&file, err, sizeof(err));
	} else {
		if (!werr)
			werr = write_in_time_order(&order);
		werr |= pcap_writer_close(&pw, err, sizeof(err));
	}
	if (werr) {
		fprintf(stderr, "wb-gen: %s: write failed: %s\n", out, err[0] ? err : strerror(errno));
	} else {
		rc = 0;
		if (!quiet) {
			fprintf(stderr, "wb-gen: %s: %u symbols on %d venues in %.2f s; peak live orders %"
				PRIu64 ", live at the end %" PRIu64 "\n", out, flow->symbol_count, nvenues,
				seconds_since(&t0), flow->stats.peak_live, flow->live_count);
			for (int i = 0; i < nvenues; i++)
				venues[i].gp->summary(venues[i].enc, flow, stderr);
			if (loss_ppm)
				fprintf(stderr, "wb-gen: --loss: %" PRIu64 " of %" PRIu64 " data packets "
					"lost on every line, in %" PRIu64 " bursts\n", order.loss.dropped,
					order.loss.data_packets, order.loss.bursts);
		}
	}
	for (int i = 0; i < nvenues; i++) {
		venues[i].gp->destroy(venues[i].enc);
		free(venues[i].enc);
	}
	gen_flow_destroy(flow);
	free(flow);
	return rc;
}
