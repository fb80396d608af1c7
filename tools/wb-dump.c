/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-dump: decode a capture (or a Nasdaq BinaryFILE) through the feed
 * engine and print one line per normalized event, or with --raw one line
 * per source message as it is on the wire.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "common/itch_file.h"
#include "common/itch_text.h"
#include "common/pcap_io.h"
#include "common/unmapped.h"
#include "feed/feed.h"

/* Holds the events of the largest packet, and a full re-announcement of
 * every instrument when a subscription changes. */
#define DUMP_RING_SLOTS (1u << 17)
#define MOLD_HEADER 20
#define FILE_PACKET_BYTES 8192	/* BinaryFILE messages are packed this densely */
#define FILE_SESSION "BINARYFILE"

struct dump {
	struct feed_engine *engine;
	void *ring;
	struct wb_ring_producer prod;
	struct wb_ring_consumer cons;
	bool raw, stats, quiet, auto_map;
	const char *symbols;
	/* --raw filtering without the engine: tickers asked for, and
	 * locate -> ticker key learned from the messages themselves. */
	bool raw_all;
	uint64_t raw_keys[FEED_MAX_INSTRUMENTS];
	uint32_t raw_key_count;
	uint64_t *locate_key;
	/* totals */
	uint64_t frames, unmapped_frames, auto_lines, raw_messages, raw_non_itch;
	struct unmapped_seen unmapped;
	uint64_t events_printed;
	char text[1024];
};

static void usage(FILE *out)
{
	fprintf(out,
"usage: wb-dump [options] CAPTURE.pcap\n"
"       wb-dump [options] --itch-file FILE[.gz]\n"
"\n"
"Decode market data through the wirebook feed engine and print one line per\n"
"normalized event (the format every wirebook tool shares):\n"
"  <seq> <exchange time> <venue>/<line> i=<instrument> <KIND> <fields>\n"
"Instruments are named by their SYMBOL event.\n"
"\n"
"  --feeds FILE       feed map (ADDR:PORT PROTOCOL VENUE LINE); default\n"
"                     ./feeds.conf, <repo>/feeds.conf or\n"
"                     /usr/local/share/wirebook/feeds.conf\n"
"  --auto             also decode every UDP packet that looks like MoldUDP64 as\n"
"                     Nasdaq ITCH, whatever its address (one line per address)\n"
"  --itch-file FILE   read a Nasdaq BinaryFILE (2-byte big-endian length before\n"
"                     each message), plain or gzip, instead of a capture;\n"
"                     messages are numbered from 1\n"
"  --raw              one line per source message, every wire field, no\n"
"                     normalization (duplicates and A/B copies included)\n"
"  --symbols LIST     comma-separated tickers to show (default '*': all)\n"
"  --stats            print the per-line counters at the end (with --raw:\n"
"                     frame and message totals only)\n"
"  -q, --quiet        do not print events (with --stats: counters only)\n"
"  -h, --help\n"
"\n"
"Exit status: 0 on success, 1 if the input is missing, unreadable, not a\n"
"capture or ends in the middle of a record, 2 on bad usage.\n");
}

static void *zalloc(size_t bytes)
{
	return calloc(1, bytes);
}

/* ---- normalized events ---------------------------------------------------- */

static void drain(struct dump *d)
{
	uint64_t n;

	wb_ring_producer_publish_no_wakeup(&d->prod);
	while ((n = wb_ring_consumer_available(&d->cons)) != 0) {
		for (uint64_t i = 0; i < n; i++) {
			if (d->quiet)
				continue;
			wb_event_format(wb_ring_consumer_at(&d->cons, i), d->text, sizeof(d->text));
			fputs(d->text, stdout);
			fputc('\n', stdout);
		}
		d->events_printed += n;
		wb_ring_consumer_release(&d->cons, n);
	}
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* A MoldUDP64 packet whose message blocks exactly fill the payload. */
static bool looks_like_moldudp64(const uint8_t *p, uint32_t len)
{
	uint32_t off = MOLD_HEADER, count;

	if (len < MOLD_HEADER)
		return false;
	for (int i = 0; i < 10; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	count = rd16(p + 18);
	if (count == 0 || count == 0xffff)
		return len == MOLD_HEADER;
	for (uint32_t i = 0; i < count; i++) {
		if (off + 2 > len)
			return false;
		off += 2 + rd16(p + off);
	}
	return off == len;
}

/* --auto: map the frame's destination as a nasdaq ITCH line if it is MoldUDP64. */
static void auto_map(struct dump *d, const struct udp_view *u)
{
	char name[FEED_LINE_NAME_LEN];
	int rc;

	if (feed_map_lookup(d->engine, u->dst_ip, u->dst_port) >= 0 ||
	    !looks_like_moldudp64(u->payload, u->len))
		return;
	snprintf(name, sizeof(name), "auto%" PRIu64, d->auto_lines);
	rc = feed_map_add(d->engine, u->dst_ip, u->dst_port, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ,
			  name);
	if (rc >= 0)
		d->auto_lines++;
	else if (rc == -FEED_ENOSPC && d->auto_lines < FEED_MAX_LINES + 1)
		fprintf(stderr, "wb-dump: --auto: feed map full, %u.%u.%u.%u:%u not decoded\n",
			u->dst_ip >> 24, (u->dst_ip >> 16) & 255, (u->dst_ip >> 8) & 255,
			u->dst_ip & 255, u->dst_port);
}

/* ---- raw messages ------------------------------------------------------ */

static bool raw_wanted(struct dump *d, const uint8_t *m, uint32_t len)
{
	const uint8_t *stock = itch_message_stock(m, len);
	uint64_t key = 0;
	uint16_t locate;

	if (len < 3)
		return d->raw_all;
	locate = rd16(m + 1);
	if (stock) {
		memcpy(&key, stock, 8);
		d->locate_key[locate] = key;
	} else {
		key = d->locate_key[locate];
	}
	if (d->raw_all)
		return true;
	for (uint32_t i = 0; i < d->raw_key_count; i++)
		if (d->raw_keys[i] == key)
			return true;
	return false;
}

static void raw_message(struct dump *d, const uint8_t *m, uint32_t len, uint64_t seq)
{
	d->raw_messages++;
	if (d->quiet || !raw_wanted(d, m, len))
		return;
	itch_message_format(m, len, seq, d->text, sizeof(d->text));
	fputs(d->text, stdout);
	fputc('\n', stdout);
}

static void raw_moldudp64(struct dump *d, const uint8_t *p, uint32_t len)
{
	uint64_t seq;
	uint32_t off = MOLD_HEADER, count;

	if (len < MOLD_HEADER) {
		if (!d->quiet)
			printf("- truncated MoldUDP64 header: %u bytes\n", len);
		return;
	}
	seq = rd64(p + 10);
	count = rd16(p + 18);
	if (count == 0 || count == 0xffff) {
		if (!d->quiet && d->raw_all)
			printf("%" PRIu64 " %s session=%.10s\n", seq,
			       count ? "END-OF-SESSION" : "HEARTBEAT", (const char *)p);
		return;
	}
	for (uint32_t i = 0; i < count; i++, seq++) {
		uint32_t mlen;

		if (off + 2 > len || off + 2 + (mlen = rd16(p + off)) > len) {
			if (!d->quiet)
				printf("%" PRIu64 " truncated packet: message %u of %u runs past byte %u\n",
				       seq, i + 1, count, len);
			return;
		}
		raw_message(d, p + off + 2, mlen, seq);
		off += 2 + mlen;
	}
}

/* ---- inputs -------------------------------------------------------------- */

static int dump_pcap(struct dump *d, const char *path)
{
	struct pcap_reader r;
	char err[PCAP_IO_ERR_LEN];
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	int rc;

	if (pcap_reader_open(&r, path, err, sizeof(err))) {
		fprintf(stderr, "wb-dump: %s\n", err);
		return 1;
	}
	while ((rc = pcap_reader_next(&r, &frame, &len, &ts, err, sizeof(err))) == 1) {
		struct udp_view u;
		bool udp = frame_udp_view(frame, len, &u);

		d->frames++;
		if (udp && d->auto_map)
			auto_map(d, &u);
		if (d->raw) {
			int line = udp ? feed_map_lookup(d->engine, u.dst_ip, u.dst_port) : -1;

			if (line < 0) {
				d->unmapped_frames++;
				unmapped_note(&d->unmapped, frame, len);
			}
			else if (d->engine->lines[line].protocol != FEED_PROTO_ITCH50)
				d->raw_non_itch++;
			else
				raw_moldudp64(d, u.payload, u.len);
			continue;
		}
		if (feed_process_frame(d->engine, frame, len, ts, &d->prod) < 0) {
			d->unmapped_frames++;
			unmapped_note(&d->unmapped, frame, len);
		}
		drain(d);
	}
	pcap_reader_close(&r);
	if (rc < 0) {
		fprintf(stderr, "wb-dump: %s: %s\n", path, err);
		return 1;
	}
	return 0;
}

/*
 * A BinaryFILE has no transport: its messages are packed into MoldUDP64
 * packets numbered from 1 and fed to one ITCH line, so the engine decodes
 * them exactly as it would live.
 */
static int dump_itch_file(struct dump *d, const char *path)
{
	static uint8_t pkt[FILE_PACKET_BYTES + 2 + 65535];
	struct itch_file *f = malloc(sizeof(*f));
	char err[ITCH_FILE_ERR_LEN];
	const uint8_t *m;
	uint16_t mlen;
	uint64_t seq = 1, next_seq = 1;
	uint32_t off = MOLD_HEADER, count = 0;
	int line = -1, rc;

	if (!f)
		return 1;
	if (itch_file_open_read(f, path, err, sizeof(err))) {
		fprintf(stderr, "wb-dump: %s\n", err);
		free(f);
		return 1;
	}
	if (!d->raw) {
		line = feed_map_add(d->engine, 1, 1, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "file");
		if (line < 0) {
			fprintf(stderr, "wb-dump: cannot add the BinaryFILE line (%d)\n", line);
			itch_file_close(f, err, sizeof(err));
			free(f);
			return 1;
		}
	}
	memcpy(pkt, FILE_SESSION, 10);
	while ((rc = itch_file_next(f, &m, &mlen, err, sizeof(err))) == 1) {
		if (d->raw) {
			raw_message(d, m, mlen, seq++);
			continue;
		}
		pkt[off] = (uint8_t)(mlen >> 8);
		pkt[off + 1] = (uint8_t)mlen;
		memcpy(pkt + off + 2, m, mlen);
		off += 2 + mlen;
		count++;
		if (off >= FILE_PACKET_BYTES || count == 0xfffe) {
			for (int i = 0; i < 8; i++)
				pkt[10 + i] = (uint8_t)(next_seq >> (56 - 8 * i));
			pkt[18] = (uint8_t)(count >> 8);
			pkt[19] = (uint8_t)count;
			feed_process_payload(d->engine, line, pkt, off, 0, &d->prod);
			drain(d);
			next_seq += count;
			off = MOLD_HEADER;
			count = 0;
		}
	}
	if (count) {
		for (int i = 0; i < 8; i++)
			pkt[10 + i] = (uint8_t)(next_seq >> (56 - 8 * i));
		pkt[18] = (uint8_t)(count >> 8);
		pkt[19] = (uint8_t)count;
		feed_process_payload(d->engine, line, pkt, off, 0, &d->prod);
		drain(d);
	}
	if (rc < 0)
		fprintf(stderr, "wb-dump: %s: %s\n", path, err);
	itch_file_close(f, err, sizeof(err));
	free(f);
	return rc < 0 ? 1 : 0;
}

/* ---- setup and stats ---------------------------------------------------- */

static int subscribe_list(struct dump *d, const char *list)
{
	const char *p = list;

	d->raw_all = false;
	while (*p) {
		size_t n = strcspn(p, ",");
		int rc;

		if (n == 1 && *p == '*') {
			d->raw_all = true;
		} else if (n) {
			uint64_t key = feed_ticker_key(p, n);

			if (!key) {
				fprintf(stderr, "wb-dump: --symbols: not a ticker: '%.*s'\n", (int)n, p);
				return -1;
			}
			if (d->raw_key_count < FEED_MAX_INSTRUMENTS)
				d->raw_keys[d->raw_key_count++] = key;
		}
		if (n) {
			rc = feed_subscribe(d->engine, p, n);
			if (rc < 0) {
				fprintf(stderr, "wb-dump: --symbols: cannot subscribe '%.*s' (%s)\n",
					(int)n, p, rc == -FEED_ENOSPC ? "table full" : "invalid");
				return -1;
			}
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void print_stats(const struct dump *d)
{
	const struct feed_engine *e = d->engine;

	printf("# frames %" PRIu64 " not-on-a-feed %" PRIu64 " auto-lines %" PRIu64 "\n",
	       d->frames, d->unmapped_frames, d->auto_lines);
	if (d->raw) {
		/* --raw prints the wire without the engine: no line counters. */
		printf("# raw messages %" PRIu64 " non-itch-packets %" PRIu64 "\n", d->raw_messages,
		       d->raw_non_itch);
		return;
	}
	for (uint32_t i = 0; i < e->line_count; i++) {
		const struct feed_line *l = &e->lines[i];
		const struct feed_counters *c = &l->counters;

		if (!l->ip)
			continue;
		printf("# line %u %s %u.%u.%u.%u:%u %s %s\n", i, l->name, l->ip >> 24,
		       (l->ip >> 16) & 255, (l->ip >> 8) & 255, l->ip & 255, l->port,
		       feed_protocol_name(l->protocol), feed_venue_name(l->venue));
#define C(field) printf("#   %-22s %" PRIu64 "\n", #field, c->field)
		C(packets); C(bytes); C(messages); C(events); C(filtered); C(ignored);
		C(heartbeats); C(gaps); C(gap_messages); C(duplicates); C(duplicate_messages);
		C(session_changes); C(end_of_session); C(ring_drops); C(order_filter_full);
#undef C
		for (int k = 0; k < FEED_ERR_COUNT; k++)
			printf("#   errors.%-15s %" PRIu64 "\n", feed_error_name(k), c->errors[k]);
	}
}

enum { OPT_FEEDS = 256, OPT_AUTO, OPT_ITCH_FILE, OPT_RAW, OPT_SYMBOLS, OPT_STATS };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "auto", no_argument, 0, OPT_AUTO },
		{ "itch-file", required_argument, 0, OPT_ITCH_FILE },
		{ "raw", no_argument, 0, OPT_RAW },
		{ "symbols", required_argument, 0, OPT_SYMBOLS },
		{ "stats", no_argument, 0, OPT_STATS },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct feed_engine_config cfg = { .alloc = zalloc, .free = free };
	const char *feeds = NULL, *itch_path = NULL, *symbols = "*";
	struct dump *d = calloc(1, sizeof(*d));
	char err[PCAP_IO_ERR_LEN];
	int c, rc;

	if (!d)
		return 1;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_AUTO: d->auto_map = true; break;
		case OPT_ITCH_FILE: itch_path = optarg; break;
		case OPT_RAW: d->raw = true; break;
		case OPT_SYMBOLS: symbols = optarg; break;
		case OPT_STATS: d->stats = true; break;
		case 'q': d->quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (itch_path ? optind != argc : optind != argc - 1) {
		fprintf(stderr, "wb-dump: %s\n",
			itch_path ? "--itch-file takes no capture argument"
				  : optind == argc ? "no capture file given" : "more than one capture file");
		usage(stderr);
		return 2;
	}

	d->engine = calloc(1, sizeof(*d->engine));
	d->locate_key = calloc(65536, sizeof(*d->locate_key));
	if (posix_memalign(&d->ring, WB_RING_PAGE, wb_ring_bytes(DUMP_RING_SLOTS)))
		d->ring = NULL;
	if (!d->engine || !d->locate_key || !d->ring || feed_engine_init(d->engine, &cfg)) {
		fprintf(stderr, "wb-dump: out of memory\n");
		return 1;
	}
	memset(d->ring, 0, wb_ring_bytes(DUMP_RING_SLOTS));
	wb_ring_format(d->ring, DUMP_RING_SLOTS, 0);
	wb_ring_producer_init(&d->prod, d->ring);
	wb_ring_consumer_init(&d->cons, d->ring);

	if (!itch_path) {
		if (!feeds)
			feeds = feeds_conf_default_path();
		if (feeds) {
			if (feeds_conf_load(d->engine, feeds, err, sizeof(err)) < 0) {
				fprintf(stderr, "wb-dump: %s\n", err);
				return 1;
			}
		} else if (!d->auto_map) {
			fprintf(stderr, "wb-dump: no feeds.conf found: give --feeds FILE or --auto\n");
			return 2;
		}
	}
	if (subscribe_list(d, symbols))
		return 2;

	rc = itch_path ? dump_itch_file(d, itch_path) : dump_pcap(d, argv[optind]);

	if (!itch_path && rc == 0 && d->frames && d->unmapped_frames == d->frames) {
		char seen[512];

		unmapped_describe(&d->unmapped, seen, sizeof(seen));
		fprintf(stderr, "wb-dump: none of the %" PRIu64 " frames went to a feed in %s%s "
			"(they went to: %s); %s\n", d->frames, feeds ? feeds : "the feed map",
			d->auto_map ? " or looked like MoldUDP64" : "", seen,
			d->auto_map ? "give --feeds FILE with their groups (PITCH needs one)"
				    : "try --auto or --feeds FILE");
	}
	if (d->raw_non_itch)
		fprintf(stderr, "wb-dump: --raw prints ITCH only: %" PRIu64 " packets of other "
			"protocols skipped\n", d->raw_non_itch);
	if (d->stats)
		print_stats(d);
	for (uint32_t i = 0; i < d->engine->line_count; i++)
		if (d->engine->lines[i].counters.ring_drops)
			fprintf(stderr, "wb-dump: line %u lost %" PRIu64 " events to a full ring\n", i,
				d->engine->lines[i].counters.ring_drops);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "wb-dump: write error: %s\n", strerror(errno));
		rc = 1;
	}
	feed_engine_destroy(d->engine);
	free(d->engine);
	free(d->locate_key);
	free(d->ring);
	free(d);
	return rc;
}
