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

#include "common/cboe_groups.h"
#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "common/options.h"
#include "input/itch_file.h"
#include "common/raw_text.h"
#include "common/version.h"
#include "input/pcap_io.h"
#include "input/unmapped.h"
#include "wirebook/events.h"
#include "feed/feed.h"
#include "wire/bytes.h"
#include "wire/moldudp64.h"

/* Holds the events of the largest packet, and a full re-announcement of
 * every instrument when a subscription changes. */
#define DUMP_RING_SLOTS (1u << 17)
#define DUMP_BATCH 256
#define FILE_PACKET_BYTES 8192	/* BinaryFILE messages are packed this densely */
#define FILE_SESSION "BINARYFILE"

struct dump {
	struct feed_engine *engine;
	void *ring;
	struct wb_ring_producer prod;
	struct wb_events *events;	/* the ring read through the event API */
	bool raw, stats, quiet, auto_map;
	const char *symbols;
	/* --raw filtering without the engine: tickers asked for, and per
	 * venue the feed's symbol key -> ticker key, learned from the messages
	 * that carry both (ITCH locate and stock, XDP index and symbol). */
	bool raw_all;
	uint64_t raw_keys[FEED_MAX_INSTRUMENTS];
	uint32_t raw_key_count;
	uint64_t *symbol_ticker[FEED_SOURCE_COUNT];
	/* totals */
	uint64_t frames, unmapped_frames, auto_lines, raw_messages;
	struct unmapped_seen unmapped;
	/* --auto: addresses refused (each said once) */
	struct { uint32_t ip; uint16_t port; } auto_refused[FEED_MAX_LINES];
	uint32_t auto_refused_count;
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
"  --auto             also decode every UDP packet to an address the feed map\n"
"                     lacks that looks like one of the protocols (tried in the\n"
"                     order below), as that protocol's first venue (a\n"
"                     PITCH group of Cboe's plan: its market)\n"
"  --proto PROTOCOL[:VENUE]\n"
"                     decode every UDP payload the feed map does not name as\n"
"                     PROTOCOL for VENUE (default: its first venue), whatever its\n"
"                     address: anonymized captures (rewritten addresses, port 0;\n"
"                     a MoldUDP64 sequence number 0 is decoded, counted\n"
"                     unsequenced)\n"
"  --itch-file FILE   read a Nasdaq BinaryFILE (2-byte big-endian length before\n"
"                     each message), plain or gzip, instead of a capture;\n"
"                     messages are numbered from 1\n"
"  --date YYYY-MM-DD  the trading day of feeds that give time since midnight\n"
"                     (ITCH, PITCH); default: from the capture's record times\n"
"                     (a BinaryFILE has none: its times stay since midnight)\n"
"  --hold-us N        longest a packet behind a sequence hole waits for the other\n"
"                     line, in microseconds of capture time (default 1000; 0: a\n"
"                     hole is a GAP at once, whatever the timing)\n"
"  --raw              one line per source message, every wire field, no\n"
"                     normalization (duplicates and A/B copies included)\n"
"  --symbols LIST     comma-separated tickers to show (default '*': all)\n"
"  --stats            print the per-line counters at the end (with --raw:\n"
"                     frame and message totals only)\n"
"  -q, --quiet        do not print events (with --stats: counters only)\n"
"  -h, --help\n"
"      --version\n"
"\n"
"Exit status: 0 on success, 1 if the input is missing, unreadable, not a\n"
"capture, ends in the middle of a record or gives nothing (no frame, no frame\n"
"on a feed of the feed map, no message), 2 on bad usage (a bad option value or\n"
"feed map line, a pcap given to --itch-file).\n"
"\n"
"Protocols (feed map PROTOCOL) and the venues each serves:\n");
	for (int p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT; p++) {
		char venues[256];

		feed_protocol_venue_list(p, venues, sizeof(venues));
		fprintf(out, "  %-8s %s\n           venues: %s\n", feed_protocol_name(p),
			feed_protocol_title(p), venues);
	}
}

static void *zalloc(size_t bytes)
{
	return calloc(1, bytes);
}

/* ---- normalized events ---------------------------------------------------- */

static void drain(struct dump *d)
{
	const struct wb_event *batch[DUMP_BATCH];
	unsigned n;

	wb_ring_producer_publish_no_wakeup(&d->prod);
	/* The event API's zero-copy batches, as a strategy reads the module's rings. */
	while ((n = wb_events_peek(d->events, batch, DUMP_BATCH)) != 0) {
		for (unsigned i = 0; i < n && !d->quiet; i++) {
			wb_event_format(batch[i], d->text, sizeof(d->text));
			fputs(d->text, stdout);
			fputc('\n', stdout);
		}
		d->events_printed += n;
		wb_events_release(d->events);
	}
}

/* --auto: map an unmapped destination to the first protocol it looks like. */
static void auto_map(struct dump *d, const struct udp_view *u)
{
	struct feed_map_entry m;
	int rc;

	if (feed_map_lookup(d->engine, u->dst_ip, u->dst_port) >= 0)
		return;
	memset(&m, 0, sizeof(m));
	for (int p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT && !m.protocol; p++)
		if (feed_raw_looks_like(p, u->payload, u->len))
			m.protocol = (uint8_t)p;
	if (!m.protocol)
		return;
	m.ip = u->dst_ip;
	m.port = u->dst_port;
	m.venue = (uint8_t)__builtin_ctz(feed_protocol_venues(m.protocol));
	if (m.protocol == feed_protocol_parse("pitch", 5)) {
		int venue, first_unit;

		/* A group of Cboe's plan names its market; the groups of one range
		 * of units (its A/B, realtime and gap shapes) are one stream, a
		 * channel per range, so no range crowds out another's lines. */
		if (cboe_group_lookup(m.ip, &venue, &first_unit)) {
			m.venue = (uint8_t)venue;
			m.channel = (uint16_t)first_unit;
		}
	}
	snprintf(m.name, sizeof(m.name), "auto%" PRIu64, d->auto_lines);
	rc = feed_map_add_entry(d->engine, &m);
	if (rc >= 0) {
		d->auto_lines++;
		return;
	}
	for (uint32_t i = 0; i < d->auto_refused_count; i++)
		if (d->auto_refused[i].ip == u->dst_ip && d->auto_refused[i].port == u->dst_port)
			return;
	if (d->auto_refused_count == FEED_MAX_LINES)
		return;
	d->auto_refused[d->auto_refused_count].ip = u->dst_ip;
	d->auto_refused[d->auto_refused_count++].port = u->dst_port;
	if (rc == -FEED_ENOSPC)
		fprintf(stderr, "wb-dump: --auto: %u.%u.%u.%u:%u looks like %s but is not decoded: "
			"the feed map is full, or %s's one stream already has its %d lines (a feed "
			"of many channels, like xdp, needs its channel=N lines in --feeds)\n",
			u->dst_ip >> 24, (u->dst_ip >> 16) & 255, (u->dst_ip >> 8) & 255,
			u->dst_ip & 255, u->dst_port, feed_protocol_name(m.protocol),
			feed_venue_name(m.venue), FEED_STREAM_MAX_LINES);
}

/* ---- raw messages ------------------------------------------------------ */

static bool raw_wanted(struct dump *d, int protocol, int venue, const uint8_t *m, uint32_t len)
{
	uint64_t *learned = d->symbol_ticker[venue];
	uint32_t key = 0;
	int has_key;
	uint64_t ticker = raw_message_ticker(protocol, m, len, &key, &has_key);

	if (has_key && key < 65536) {
		if (ticker)
			learned[key] = ticker;
		else
			ticker = learned[key];
	}
	if (d->raw_all)
		return true;
	for (uint32_t i = 0; i < d->raw_key_count; i++)
		if (d->raw_keys[i] == ticker)
			return true;
	return false;
}

static void raw_message(struct dump *d, int protocol, int venue, const uint8_t *m, uint32_t len,
			uint64_t seq)
{
	d->raw_messages++;
	if (d->quiet || !raw_wanted(d, protocol, venue, m, len))
		return;
	raw_message_format(protocol, m, len, seq, d->text, sizeof(d->text));
	fputs(d->text, stdout);
	fputc('\n', stdout);
}

/* A heartbeat that is a message of its own (CQS Line Integrity, whose participant and
 * times say who sent it): its fields after the frame's. */
static void raw_heartbeat_message(struct dump *d, int protocol, const uint8_t *p, uint32_t len,
				  uint32_t off)
{
	const uint8_t *m;
	uint32_t mlen;

	if (off >= len || feed_raw_next(protocol, p, len, &off, &m, &mlen) < 0 || !mlen)
		return;
	raw_fields_format(protocol, m, mlen, d->text, sizeof(d->text));
	fputs(d->text, stdout);
}

static void raw_packet(struct dump *d, const struct feed_line *l, const uint8_t *p, uint32_t len)
{
	static const char *const kinds[] = {
		[FEED_FRAME_HEARTBEAT] = "HEARTBEAT", [FEED_FRAME_END] = "END-OF-SESSION",
	};
	struct feed_frame f;
	uint32_t off;
	int err;

	f.kind = FEED_FRAME_DATA;	/* a frame error may say UNSEQUENCED, no other kind */
	err = feed_raw_frame(l->protocol, p, len, &f);
	if (err && l->any && f.kind == FEED_FRAME_UNSEQUENCED)
		err = 0;	/* --proto: its messages, numbered from 0 */
	if (err) {
		if (!d->quiet)
			printf("- %s packet of %u bytes: %s\n", feed_protocol_name(l->protocol), len,
			       feed_error_name(FEED_FRAME_ERROR_OF(err)));
		return;
	}
	if (f.kind == FEED_FRAME_HEARTBEAT || f.kind == FEED_FRAME_END) {
		if (!d->quiet && d->raw_all) {
			printf("%" PRIu64 " %s", f.seq, kinds[f.kind]);
			if (f.has_session) {
				char session[MOLD_SESSION_LEN + 1];

				/* the frame keeps it as 8 bytes and a tail of 2 */
				memcpy(session, &f.session, 8);
				memcpy(session + 8, &f.session_tail, MOLD_SESSION_LEN - 8);
				session[MOLD_SESSION_LEN] = 0;
				printf(" session=%s", session);
			}
			if (f.unit)
				printf(" unit=%u", f.unit);
			raw_heartbeat_message(d, l->protocol, p, f.length < len ? f.length : len,
					      f.offset);
			printf("\n");
		}
		return;
	}
	if (f.length < len && !d->quiet)
		printf("- %u bytes after the %u the header covers\n", len - f.length, f.length);
	if (f.length < len)
		len = f.length;
	off = f.offset;
	for (uint32_t i = 0; i < f.count; i++) {
		const uint8_t *m;
		uint32_t mlen;

		if (feed_raw_next(l->protocol, p, len, &off, &m, &mlen) < 0) {
			if (!d->quiet)
				printf("%" PRIu64 " truncated packet: message %u of %u runs past byte %u "
				       "(or its length is broken at byte %u)\n", f.seq + i, i + 1, f.count,
				       len, off);
			return;
		}
		raw_message(d, l->protocol, l->venue, m, mlen, f.seq + i);
	}
	if (off != len && !d->quiet)
		printf("- %u bytes after the %u messages the header counts\n", len - off, f.count);
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
			} else {
				raw_packet(d, &d->engine->lines[line], u.payload, u.len);
			}
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
	static uint8_t pkt[FILE_PACKET_BYTES + MOLD_BLOCK_LENGTH_LEN + 65535];
	struct itch_file *f = malloc(sizeof(*f));
	char err[ITCH_FILE_ERR_LEN];
	const uint8_t *m;
	uint16_t mlen;
	uint64_t seq = 1, next_seq = 1;
	uint32_t off = MOLD_HEADER_LEN, count = 0;
	int line = -1, rc;

	if (!f)
		return 1;
	rc = itch_file_open_read(f, path, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "wb-dump: %s\n", err);
		free(f);
		return rc == ITCH_FILE_NOT_BINARYFILE ? 2 : 1;
	}
	if (!d->raw) {
		/* A BinaryFILE has no addresses: Nasdaq's ITCH on a line of its own. */
		line = feeds_conf_add_proto(d->engine, "itch:nasdaq", err, sizeof(err));
		if (line < 0) {
			fprintf(stderr, "wb-dump: the BinaryFILE line: %s\n", err);
			itch_file_close(f, err, sizeof(err));
			free(f);
			return 1;
		}
	}
	memcpy(pkt + MOLD_SESSION, FILE_SESSION, MOLD_SESSION_LEN);
	while ((rc = itch_file_next(f, &m, &mlen, err, sizeof(err))) == 1) {
		if (d->raw) {
			/* A BinaryFILE is Nasdaq ITCH without its transport. */
			raw_message(d, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, m, mlen, seq++);
			continue;
		}
		wire_put_be16(pkt + off, mlen);
		memcpy(pkt + off + MOLD_BLOCK_LENGTH_LEN, m, mlen);
		off += MOLD_BLOCK_LENGTH_LEN + mlen;
		count++;
		if (off >= FILE_PACKET_BYTES || count == MOLD_END_OF_SESSION - 1) {
			wire_put_be64(pkt + MOLD_SEQUENCE, next_seq);
			wire_put_be16(pkt + MOLD_COUNT, count);
			feed_process_payload(d->engine, line, pkt, off, 0, &d->prod);
			drain(d);
			next_seq += count;
			off = MOLD_HEADER_LEN;
			count = 0;
		}
	}
	if (count) {
		wire_put_be64(pkt + MOLD_SEQUENCE, next_seq);
		wire_put_be16(pkt + MOLD_COUNT, count);
		feed_process_payload(d->engine, line, pkt, off, 0, &d->prod);
		drain(d);
	}
	if (rc < 0)
		fprintf(stderr, "wb-dump: %s: %s\n", path, err);
	else if (!f->messages)
		fprintf(stderr, "wb-dump: warning: %s holds no message (an empty BinaryFILE)\n", path);
	rc = rc < 0 || !f->messages ? 1 : 0;
	itch_file_close(f, err, sizeof(err));
	free(f);
	return rc;
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
		printf("# raw messages %" PRIu64 "\n", d->raw_messages);
		return;
	}
	for (uint32_t i = 0; i < e->line_count; i++) {
		const struct feed_line *l = &e->lines[i];
		const struct feed_counters *c = &l->counters;

		if (!feed_line_in_use(l))
			continue;
		if (l->any)
			printf("# line %u %s any-address %s %s", i, l->name,
			       feed_protocol_name(l->protocol), feed_venue_name(l->venue));
		else
			printf("# line %u %s %u.%u.%u.%u:%u %s %s", i, l->name, l->ip >> 24,
			       (l->ip >> 16) & 255, (l->ip >> 8) & 255, l->ip & 255, l->port,
			       feed_protocol_name(l->protocol), feed_venue_name(l->venue));
		if (l->channel)
			printf(" channel=%u", l->channel);
		printf("\n");
#define C(field) printf("#   %-22s %" PRIu64 "\n", #field, c->field)
		C(packets); C(bytes); C(messages); C(events); C(filtered); C(ignored);
		C(heartbeats); C(gaps); C(gap_messages); C(duplicates); C(duplicate_messages);
		C(session_changes); C(end_of_session); C(ring_drops); C(order_filter_full);
		C(held); C(hold_full); C(stale_session);
		if (c->unsequenced)	/* --proto only: sequence-0 packets decoded */
			C(unsequenced);
#undef C
		for (int k = 0; k < FEED_ERR_COUNT; k++)
			printf("#   errors.%-15s %" PRIu64 "\n", feed_error_name(k), c->errors[k]);
	}
}

enum { OPT_FEEDS = 256, OPT_AUTO, OPT_ITCH_FILE, OPT_RAW, OPT_SYMBOLS, OPT_STATS, OPT_PROTO,
       OPT_DATE, OPT_HOLD };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "feeds", required_argument, 0, OPT_FEEDS },
		{ "auto", no_argument, 0, OPT_AUTO },
		{ "itch-file", required_argument, 0, OPT_ITCH_FILE },
		{ "raw", no_argument, 0, OPT_RAW },
		{ "symbols", required_argument, 0, OPT_SYMBOLS },
		{ "stats", no_argument, 0, OPT_STATS },
		{ "proto", required_argument, 0, OPT_PROTO },
		{ "date", required_argument, 0, OPT_DATE },
		{ "hold-us", required_argument, 0, OPT_HOLD },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct feed_engine_config cfg = { .alloc = zalloc, .free = free };
	const char *feeds = NULL, *itch_path = NULL, *symbols = "*", *proto = NULL, *date = NULL;
	struct dump *d = calloc(1, sizeof(*d));
	char err[PCAP_IO_ERR_LEN];
	int c, rc;

	if (!d)
		return 1;
	if (tool_version_option(argc, argv, "wb-dump"))
		return 0;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_FEEDS: feeds = optarg; break;
		case OPT_AUTO: d->auto_map = true; break;
		case OPT_ITCH_FILE: itch_path = optarg; break;
		case OPT_RAW: d->raw = true; break;
		case OPT_SYMBOLS:
			if (opt_list("wb-dump", "--symbols", optarg))
				return 2;
			symbols = optarg;
			break;
		case OPT_STATS: d->stats = true; break;
		case OPT_PROTO: proto = optarg; break;
		case OPT_DATE: date = optarg; break;
		case OPT_HOLD: {
			char *end;
			unsigned long us;

			errno = 0;
			us = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || us > 60000000) {
				fprintf(stderr, "wb-dump: --hold-us: a number of microseconds "
					"0..60000000: %s\n", optarg);
				return 2;
			}
			cfg.hold_ns = us * 1000;
			cfg.no_hold = us == 0;
			break;
		}
		case 'q': d->quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (itch_path ? optind != argc : optind != argc - 1) {
		if (optind == argc)
			fprintf(stderr, "wb-dump: no capture file given\n");
		else
			fprintf(stderr, "wb-dump: unexpected argument '%s'%s\n",
				argv[itch_path ? optind : optind + 1], itch_path ?
				" (--itch-file FILE is the input: give no capture too)" :
				" (one capture file at a time)");
		usage(stderr);
		return 2;
	}

	d->engine = calloc(1, sizeof(*d->engine));
	for (int v = 0; v < FEED_SOURCE_COUNT; v++)
		if (!(d->symbol_ticker[v] = calloc(65536, sizeof(uint64_t))))
			return 1;
	if (posix_memalign(&d->ring, WB_RING_PAGE, wb_ring_bytes(DUMP_RING_SLOTS)))
		d->ring = NULL;
	if (!d->engine || !d->ring || feed_engine_init(d->engine, &cfg)) {
		fprintf(stderr, "wb-dump: out of memory\n");
		return 1;
	}
	if (date || itch_path) {
		int given[3] = { 0, 0, 0 }, day[3];

		if (date && opt_date("wb-dump", "--date", date, &given[0], &given[1], &given[2]))
			return 2;
		memcpy(day, given, sizeof(day));
		/* A BinaryFILE's times carry no day: --date, else its name's, said. */
		if (!itch_path || itch_file_trading_day(itch_path, given, day, NULL))
			feed_engine_set_trading_date(d->engine, day[0], day[1], day[2]);
	}
	memset(d->ring, 0, wb_ring_bytes(DUMP_RING_SLOTS));
	wb_ring_format(d->ring, DUMP_RING_SLOTS, 0);
	wb_ring_producer_init(&d->prod, d->ring);
	d->events = wb_events_attach(&d->ring, 1, wb_ring_bytes(DUMP_RING_SLOTS), NULL);
	if (!d->events) {
		fprintf(stderr, "wb-dump: out of memory\n");
		return 1;
	}

	if (!itch_path) {
		if (!feeds)
			feeds = feeds_conf_default_path();
		if (feeds) {
			if (feeds_conf_load(d->engine, feeds, err, sizeof(err)) < 0) {
				fprintf(stderr, "wb-dump: %s\n", err);
				return 2;	/* the feed map is configuration: bad usage */
			}
		} else if (!d->auto_map && !proto) {
			fprintf(stderr, "wb-dump: no feeds.conf found: give --feeds FILE, --auto or "
				"--proto PROTOCOL\n");
			return 2;
		}
		if (proto && feeds_conf_add_proto(d->engine, proto, err, sizeof(err)) < 0) {
			fprintf(stderr, "wb-dump: %s\n", err);
			return 2;
		}
	}
	if (subscribe_list(d, symbols))
		return 2;

	rc = itch_path ? dump_itch_file(d, itch_path) : dump_pcap(d, argv[optind]);
	/* The input ended: packets held behind a hole are decoded, the hole reported. */
	feed_engine_flush(d->engine, &d->prod);
	drain(d);

	if (!itch_path && rc == 0 && !d->frames) {
		/* An input that gives nothing is an error, as in wirebookd --exit-at-eof. */
		fprintf(stderr, "wb-dump: warning: %s holds no frame (a capture header alone)\n",
			argv[optind]);
		rc = 1;
	}
	if (!itch_path && rc == 0 && d->frames && d->unmapped_frames == d->frames) {
		char seen[512];

		unmapped_describe(&d->unmapped, seen, sizeof(seen));
		fprintf(stderr, "wb-dump: none of the %" PRIu64 " frames went to a feed in %s%s "
			"(they went to: %s); %s\n", d->frames, feeds ? feeds : "the feed map",
			d->auto_map ? " or looked like a known protocol" : "", seen,
			d->auto_map ? "give --feeds FILE with their groups, or --proto PROTOCOL"
				    : "try --auto, --proto PROTOCOL or --feeds FILE");
		rc = 1;
	}
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
	for (int v = 0; v < FEED_SOURCE_COUNT; v++)
		free(d->symbol_ticker[v]);
	wb_events_close(d->events);
	free(d->ring);
	free(d);
	return rc;
}
