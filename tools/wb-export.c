/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-export: a capture or a Nasdaq BinaryFILE to tables for research, as
 * CSV files or one HDF5 file (tools/export/table.c writes either).
 *
 * The input goes through the feed engine (as wirebookd's), its events are
 * read back through the event API (wb_events_attach) and applied to the
 * venue books, and every table is written as the events go. A day in NATS
 * JetStream (nats://..., what wirebookd --publish wrote) is decoded
 * already: its events go into the same ring (tools/net/nats_read.h).
 * The tables:
 *
 *   events   every order event (add, execute, reduce, delete, replace,
 *            modify, trade, trade break), in decode order
 *   trades   every execution and trade print
 *   bbo      each venue's best bid and offer, at every change
 *   nbbo     the consolidated best bid and offer over the direct books,
 *            at every change (the Super-Book's top, as wb_nbbo gives it)
 *   status   trading status changes
 *   gaps     sequence gaps
 *   quotes   each venue's quote as a SIP (CQS, UQDF) carries it
 *   sip_nbbo the SIP's own NBBO
 *   luld     limit up-limit down price bands
 *   book     (--depth N) the consolidated book N levels a side, at every
 *            change within those levels
 *   fills, queue  (--sim-fills, --sim-queue) a simulation's run on the
 *            day: its virtual orders' fills and queue positions, read
 *            from the CSV the strategy wrote (export/simout.c)
 *
 * Every row keeps the exchange and receive timestamps (ns) and, where an
 * event is behind it, the source sequence number. Each table is a row
 * struct described column by column (define_tables); the writer turns it
 * into CSV text or an HDF5 compound type.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "book/venue_book.h"
#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "common/options.h"
#include "common/version.h"
#include "input/source.h"
#include "export/simout.h"
#include "export/sink.h"
#include "export/table.h"
#include "feed/feed.h"
#include "net/nats_options.h"
#include "net/nats_read.h"
#include "wirebook/book.h"
#include "wirebook/events.h"

#define EXPORT_RING_SLOTS (1u << 17)
#define EXPORT_BATCH 256u
#define EXPORT_SCHEMA_VERSION 2	/* 2: signed times, the order-level table complete, dates */
#define MAX_DEPTH WB_BOOK_DEPTH
#define VENUES WB_VENUE_COUNT

/* T_BOOK last: only with --depth. */
enum table_id {
	T_EVENTS, T_TRADES, T_BBO, T_NBBO, T_STATUS, T_GAPS, T_QUOTES, T_SIP_NBBO, T_LULD,
	T_BOOK, T_COUNT
};

static const char *const table_name[T_COUNT] = {
	"events", "trades", "bbo", "nbbo", "status", "gaps", "quotes", "sip_nbbo", "luld", "book",
};

struct top {
	int64_t bid, ask;
	uint64_t bid_qty, ask_qty;
	uint32_t bid_orders, ask_orders;
};

struct consolidated {
	int64_t bid, ask;
	uint64_t bid_qty, ask_qty;
	uint32_t bid_venues, ask_venues;
};

/* --interval: an instrument whose levels changed since the last tick. */
struct pending {
	uint64_t exch_ts, seq;	/* of its last change */
	uint8_t queued;
};

/* The last book row written of an instrument. */
struct snapshot {
	struct venue_level bid[MAX_DEPTH], ask[MAX_DEPTH];
	uint8_t bids, asks;
};

/*
 * The order-level table: every event that changes a direct book (order
 * events, CLEAR, STATUS, SYMBOL, GAP), so that it alone rebuilds every
 * book at every point. An order event names its order's side and resting
 * price whatever its feed sent (the venue book knows them): EXEC, REDUCE
 * and DELETE the order's price (DELETE its remaining qty too), EXECP its
 * execution price, REPLACE and MODIFY the new price. GAP: qty the count,
 * ref the first missing number; SYMBOL: qty the round lot, ref the feed's
 * key; STATUS and GAP say the state or reason in detail. A venue-wide
 * CLEAR (no symbol) is also written once per symbol the venue had, so
 * that each symbol's rows are complete alone. event_no numbers the events
 * in decode order (rows of one event share it); last_in_packet is 1 on
 * the last row of a packet: the rows before it are one book change.
 */
struct row_event {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char venue[12];
	uint32_t line;
	char symbol[9], kind[8], side, mpid[5];
	uint64_t order_id;
	int64_t price;
	uint64_t qty, ref;
	uint32_t flags;
	uint8_t last_in_packet;
	uint64_t event_no;
	char detail[16];
};

#define HELD_MAX 512	/* the largest row struct (row_book) fits */

struct exporter {
	struct feed_engine *engine;
	struct venue_books *vb;
	void *ring;
	struct wb_ring_producer prod;
	struct wb_events *events;
	struct table tab[T_COUNT + SIM_TABLES];
	unsigned tables;		/* T_BOOK only with --depth */
	/* the simulation's tables follow the day's in tab (one set, one file) */
	struct sim_out *sim;
	unsigned all_tables;
	unsigned depth;
	char ticker[FEED_MAX_INSTRUMENTS][9];
	struct top (*vtop)[VENUES];		/* [instrument][venue]: last BBO written */
	uint32_t *vtop_exact;			/* [instrument]: bit v, vtop is venue v's book now */
	struct consolidated *nbbo;		/* [instrument]: last NBBO written */
	uint8_t *touched;			/* [instrument]: levels changed by this event */
	uint32_t *venues;			/* [instrument]: bit v, venue v has had levels */
	struct snapshot *snap;			/* [instrument], with --depth */
	uint64_t interval_ns, next_tick;	/* --interval: book rows at ticks of receive time */
	struct pending *pend;			/* [instrument], with --interval */
	uint16_t *queue;			/* instruments pending, in order of first change */
	uint32_t queued;
	uint64_t events_seen;
	struct export_sink *sink;		/* --format dbn, hftbacktest: no tables */
	uint64_t sink_rows;
	/* the trading date (US/Eastern) rows go to, and its bounds */
	char date[11];
	int64_t day_start, day_end;
	/* --start/--end: rows of events from start to before end only */
	int64_t start_ns, end_ns;	/* absolute, or (relative) since the day's midnight */
	int window_relative, writing;
	/* each table's last row, held until the next event or row says
	 * whether it was the last of its packet */
	unsigned char held[T_COUNT][HELD_MAX];
	uint16_t held_key[T_COUNT];
	uint8_t holding[T_COUNT];
	uint32_t last_line;
	uint64_t last_recv_ts;
	const char *tables_err;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: wb-export [options] CAPTURE OUTPUT\n"
"       wb-export [options] --itch-file FILE[.gz] OUTPUT\n"
"       wb-export [options] --kernel[=DEVICE] [--seconds N] OUTPUT\n"
"       wb-export [options] nats://HOST:PORT[/STREAM] OUTPUT\n"
"\n"
"Export a capture (pcap), a Nasdaq BinaryFILE or a day in NATS JetStream to\n"
"tables for research:\n"
"events (every event that changes a book: orders with their side and price,\n"
"clears, status, symbols, gaps; alone it rebuilds every book), trades, bbo\n"
"(each venue's best bid and offer at every change), nbbo (the consolidated\n"
"best at every change), status, gaps, the SIPs' quotes, sip_nbbo and luld\n"
"and, with --depth, book. CSV: OUTPUT is a directory (made if missing) with\n"
"one TABLE.csv each, prices in dollars, a missing price an empty field, a\n"
"first line '# wirebook export: ...' saying what the file holds. HDF5:\n"
"OUTPUT is one file, a group per trading date (YYYY-MM-DD, US/Eastern) with\n"
"one dataset a table (shuffled and deflated), prices int64 in units of 1e-8\n"
"dollars; the events table symbol by symbol, events_index saying where each\n"
"symbol's rows are; the file's attributes say the schema, price scale,\n"
"names and source. Timestamps are signed ns since the epoch (exchange time\n"
"and receive time).\n"
"\n"
"  --format F          csv or hdf5 (when built with libhdf5; the default for an\n"
"                      OUTPUT named .h5 or .hdf5, csv for any other); dbn\n"
"                      (Databento's DBN: OUTPUT/SCHEMA.dbn.zst, or .dbn\n"
"                      without libzstd) or hftbacktest (OUTPUT/SYMBOL.VENUE.l3.npz\n"
"                      and .l2.npz): order by order, OUTPUT a directory\n"
"  --schema LIST       with --format dbn: the files, of mbo, mbp-1, mbp-10,\n"
"                      trades (default all four)\n"
"  --itch-file         the input is a Nasdaq BinaryFILE, plain or gzip\n"
"  --date YYYY-MM-DD   with --itch-file: its trading day (default: the date of\n"
"                      Nasdaq's file names, MMDDYYYY; else no day: exch_ts is the\n"
"                      time since midnight, with a warning); a BinaryFILE's recv_ts\n"
"                      is the exchange time of each packet's last message (said on\n"
"                      stderr), so two exports of one file are the same bytes\n"
"  --kernel[=DEVICE]   a live session: the wirebook module's event rings\n"
"                      (default /dev/wirebook; its feed map and symbols are\n"
"                      wb-subscribe's), until SIGINT/SIGTERM or --seconds\n"
"  --seconds N         with --kernel: stop after N seconds\n"
"  nats://HOST:PORT[/STREAM] (tls://...: TLS)\n"
"                      the day a wirebookd --publish put in NATS JetStream\n"
"                      (the stream holding wirebook.INSTANCE.events.>, or STREAM),\n"
"                      read to the end it had when the read got there; its\n"
"                      events are decoded already: no feed map, --subscribe\n"
"                      filters by ticker\n"
"    --first-seq N, --last-seq N  only the stream's messages N to N (the\n"
"                      books are built from the first one on: from a later one\n"
"                      they lack the orders before it)\n"
"%s"
"  --feeds FILE        feed map (default: ./feeds.conf, then the installed one)\n"
"  --subscribe LIST    symbols to export, comma separated, or '*' (default '*')\n"
"  --depth N           also the book table: N levels a side (1-%d), at every\n"
"                      change within them\n"
"  --interval MS       with --depth: book rows every MS of receive time\n"
"                      instead, for the symbols that changed since the last\n"
"                      (the row's recv_ts is the tick)\n"
"  --proto PROTOCOL[:VENUE]\n"
"                      decode every UDP payload the feed map does not name as\n"
"                      PROTOCOL (as wb-dump --proto): anonymized captures\n"
"  --start T, --end T  rows of the events from T to before T only (the books\n"
"                      are built from the start all the same): HH:MM[:SS[.f]]\n"
"                      US/Eastern on each trading day, or ns since the epoch\n"
"  --deflate N         HDF5 deflate level after shuffle, 0 (none) to 9 (default 1)\n"
"  --sim-fills FILE, --sim-queue FILE\n"
"                      also the fills and queue tables of a simulation's run on\n"
"                      this day: the CSV examples/join_bid --fills/--queue (or\n"
"                      wirebook.simulate's write_fills/write_queue) wrote, in the\n"
"                      trading date's group (HDF5) or as fills.csv and queue.csv,\n"
"                      typed like the other tables (docs/simulate.md)\n"
"  --quiet             no summary on stderr\n"
"  -h, --help          this text\n"
"      --version\n"
"\n"
"Exit status: 0, 1 when the input fails or nothing was exported (no event\n"
"decoded, or none in --start/--end), 2 on bad usage.\n", nats_client_options_help, MAX_DEPTH);
}

static const char *const time_unit = "ns since 1970-01-01 UTC (signed 64-bit)";

/*
 * --start/--end: HH:MM[:SS[.fraction]], a time of day (US/Eastern) on
 * each trading day, or an integer, ns since the epoch. Both the same kind.
 */
static int parse_time(const char *opt, const char *s, int64_t *ns, int *relative)
{
	unsigned h = 0, m = 0;
	double sec = 0;
	char *e;
	int rel = strchr(s, ':') != NULL;

	if (rel) {
		if (sscanf(s, "%u:%u", &h, &m) != 2 || h > 48 || m > 59)
			goto bad;
		e = strchr(strchr(s, ':') + 1, ':');
		if (e && (sscanf(e + 1, "%lf", &sec) != 1 || sec < 0 || sec >= 60))
			goto bad;
		*ns = ((int64_t)h * 3600 + m * 60) * 1000000000 + (int64_t)(sec * 1e9 + 0.5);
	} else {
		errno = 0;
		*ns = strtoll(s, &e, 10);
		if (errno || *e || e == s)
			goto bad;
	}
	*relative = rel;
	return 0;
bad:
	fprintf(stderr, "wb-export: %s %s: want HH:MM[:SS[.fff]] (US/Eastern) or ns since the epoch\n",
		opt, s);
	return -1;
}

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

/* The venue as libwirebook names it (NASDAQ, BZX, ...); a SIP as the feed layer does. */
static const char *venue(int v)
{
	return v > 0 && v < WB_VENUE_COUNT ? wb_venue_name(v) : feed_venue_name(v);
}

static const char *sym(const struct exporter *x, uint16_t instrument)
{
	return x->ticker[instrument];
}

/* ---- tables: one row struct each --------------------------------------- */

struct row_trade {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char venue[12], symbol[9];
	int64_t price;
	uint64_t qty, match_id;
	uint32_t flags;
	char aggressor;		/* B or S: the side that took; empty when the feed does not say */
	uint8_t last_in_packet;
};

struct row_bbo {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char venue[12], symbol[9];
	int64_t bid;
	uint64_t bid_qty;
	uint32_t bid_orders;
	int64_t ask;
	uint64_t ask_qty;
	uint32_t ask_orders;
	uint64_t event_no;
	uint8_t last_in_packet;
};

struct row_nbbo {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char symbol[9];
	int64_t bid;
	uint64_t bid_qty;
	int64_t ask;
	uint64_t ask_qty;
	uint32_t bid_venues, ask_venues;
	uint64_t event_no;
	uint8_t last_in_packet;
};

struct row_status {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char venue[12], symbol[9], state[16], raw_state, reason[5];
	uint8_t last_in_packet;
};

struct row_gap {
	int64_t recv_ts, exch_ts;
	char venue[12];
	uint32_t line;
	char symbol[9];
	uint64_t first, count;
	uint32_t channel;
	uint8_t unit, reason;
	uint8_t last_in_packet;
};

struct row_quote {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	int64_t sip_ts;
	char venue[12], symbol[9];
	int64_t bid;
	uint64_t bid_qty;
	int64_t ask;
	uint64_t ask_qty;
	char condition;
	uint32_t flags;
	uint8_t last_in_packet;
};

struct row_sip_nbbo {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char feed[12], symbol[9];
	int64_t bid;
	uint64_t bid_qty;
	char bid_venue[12];
	int64_t ask;
	uint64_t ask_qty;
	char ask_venue[12], indicator, condition, luld;
	uint8_t sides;
	uint8_t last_in_packet;
};

struct row_luld {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char feed[12], symbol[9];
	int64_t lower, upper;
	char indicator;
	uint8_t last_in_packet;
};

struct row_book {
	int64_t recv_ts, exch_ts;
	uint64_t seq;
	char symbol[9];
	int64_t bid[MAX_DEPTH];
	uint64_t bid_qty[MAX_DEPTH];
	int64_t ask[MAX_DEPTH];
	uint64_t ask_qty[MAX_DEPTH];
	uint64_t event_no;	/* the event after which the book stands so */
	uint8_t last_in_packet;
};

/* Where each table's row struct keeps last_in_packet (table_id order). */
static const size_t last_in_packet_at[T_COUNT] = {
	offsetof(struct row_event, last_in_packet), offsetof(struct row_trade, last_in_packet),
	offsetof(struct row_bbo, last_in_packet), offsetof(struct row_nbbo, last_in_packet),
	offsetof(struct row_status, last_in_packet), offsetof(struct row_gap, last_in_packet),
	offsetof(struct row_quote, last_in_packet), offsetof(struct row_sip_nbbo, last_in_packet),
	offsetof(struct row_luld, last_in_packet), offsetof(struct row_book, last_in_packet),
};

_Static_assert(sizeof(struct row_book) <= HELD_MAX && sizeof(struct row_event) <= HELD_MAX,
	       "a held row fits");

#define COLS_TS(t, type) do {					\
	TABLE_COL(t, type, recv_ts, COL_I64);			\
	TABLE_COL(t, type, exch_ts, COL_I64);			\
} while (0)

static void define_tables(struct exporter *x)
{
	struct table *t;
	char name[24];

	t = &x->tab[T_EVENTS];
	table_init(t, table_name[T_EVENTS], sizeof(struct row_event));
	COLS_TS(t, struct row_event);
	TABLE_COL(t, struct row_event, seq, COL_U64);
	TABLE_COL(t, struct row_event, venue, COL_STR);
	TABLE_COL(t, struct row_event, line, COL_U32);
	TABLE_COL(t, struct row_event, symbol, COL_STR);
	TABLE_COL(t, struct row_event, kind, COL_STR);
	TABLE_COL(t, struct row_event, side, COL_CHAR);
	TABLE_COL(t, struct row_event, order_id, COL_U64);
	TABLE_COL(t, struct row_event, price, COL_PRICE);
	TABLE_COL(t, struct row_event, qty, COL_U64);
	TABLE_COL(t, struct row_event, ref, COL_U64);
	TABLE_COL(t, struct row_event, mpid, COL_STR);
	TABLE_COL(t, struct row_event, flags, COL_U32);
	TABLE_COL(t, struct row_event, last_in_packet, COL_U8);
	TABLE_COL(t, struct row_event, event_no, COL_U64);
	TABLE_COL(t, struct row_event, detail, COL_STR);
	t->keyed = 1;
	t->key_col = 5;	/* symbol */

	t = &x->tab[T_TRADES];
	table_init(t, table_name[T_TRADES], sizeof(struct row_trade));
	COLS_TS(t, struct row_trade);
	TABLE_COL(t, struct row_trade, seq, COL_U64);
	TABLE_COL(t, struct row_trade, venue, COL_STR);
	TABLE_COL(t, struct row_trade, symbol, COL_STR);
	TABLE_COL(t, struct row_trade, price, COL_PRICE);
	TABLE_COL(t, struct row_trade, qty, COL_U64);
	TABLE_COL(t, struct row_trade, match_id, COL_U64);
	TABLE_COL(t, struct row_trade, flags, COL_U32);
	TABLE_COL(t, struct row_trade, aggressor, COL_CHAR);

	t = &x->tab[T_BBO];
	table_init(t, table_name[T_BBO], sizeof(struct row_bbo));
	COLS_TS(t, struct row_bbo);
	TABLE_COL(t, struct row_bbo, seq, COL_U64);
	TABLE_COL(t, struct row_bbo, venue, COL_STR);
	TABLE_COL(t, struct row_bbo, symbol, COL_STR);
	TABLE_COL(t, struct row_bbo, bid, COL_PRICE);
	TABLE_COL(t, struct row_bbo, bid_qty, COL_U64);
	TABLE_COL(t, struct row_bbo, bid_orders, COL_U32);
	TABLE_COL(t, struct row_bbo, ask, COL_PRICE);
	TABLE_COL(t, struct row_bbo, ask_qty, COL_U64);
	TABLE_COL(t, struct row_bbo, ask_orders, COL_U32);
	TABLE_COL(t, struct row_bbo, event_no, COL_U64);

	t = &x->tab[T_NBBO];
	table_init(t, table_name[T_NBBO], sizeof(struct row_nbbo));
	COLS_TS(t, struct row_nbbo);
	TABLE_COL(t, struct row_nbbo, seq, COL_U64);
	TABLE_COL(t, struct row_nbbo, symbol, COL_STR);
	TABLE_COL(t, struct row_nbbo, bid, COL_PRICE);
	TABLE_COL(t, struct row_nbbo, bid_qty, COL_U64);
	TABLE_COL(t, struct row_nbbo, ask, COL_PRICE);
	TABLE_COL(t, struct row_nbbo, ask_qty, COL_U64);
	TABLE_COL(t, struct row_nbbo, bid_venues, COL_VENUES);
	TABLE_COL(t, struct row_nbbo, ask_venues, COL_VENUES);
	TABLE_COL(t, struct row_nbbo, event_no, COL_U64);

	t = &x->tab[T_STATUS];
	table_init(t, table_name[T_STATUS], sizeof(struct row_status));
	COLS_TS(t, struct row_status);
	TABLE_COL(t, struct row_status, seq, COL_U64);
	TABLE_COL(t, struct row_status, venue, COL_STR);
	TABLE_COL(t, struct row_status, symbol, COL_STR);
	TABLE_COL(t, struct row_status, state, COL_STR);
	TABLE_COL(t, struct row_status, raw_state, COL_CHAR);
	TABLE_COL(t, struct row_status, reason, COL_STR);

	t = &x->tab[T_GAPS];
	table_init(t, table_name[T_GAPS], sizeof(struct row_gap));
	COLS_TS(t, struct row_gap);
	TABLE_COL(t, struct row_gap, venue, COL_STR);
	TABLE_COL(t, struct row_gap, line, COL_U32);
	TABLE_COL(t, struct row_gap, symbol, COL_STR);
	TABLE_COL(t, struct row_gap, first, COL_U64);
	TABLE_COL(t, struct row_gap, count, COL_U64);
	TABLE_COL(t, struct row_gap, channel, COL_U32);
	TABLE_COL(t, struct row_gap, unit, COL_U8);
	TABLE_COL(t, struct row_gap, reason, COL_U8);

	t = &x->tab[T_QUOTES];
	table_init(t, table_name[T_QUOTES], sizeof(struct row_quote));
	COLS_TS(t, struct row_quote);
	TABLE_COL(t, struct row_quote, seq, COL_U64);
	TABLE_COL(t, struct row_quote, sip_ts, COL_I64);
	TABLE_COL(t, struct row_quote, venue, COL_STR);
	TABLE_COL(t, struct row_quote, symbol, COL_STR);
	TABLE_COL(t, struct row_quote, bid, COL_PRICE);
	TABLE_COL(t, struct row_quote, bid_qty, COL_U64);
	TABLE_COL(t, struct row_quote, ask, COL_PRICE);
	TABLE_COL(t, struct row_quote, ask_qty, COL_U64);
	TABLE_COL(t, struct row_quote, condition, COL_CHAR);
	TABLE_COL(t, struct row_quote, flags, COL_U32);

	t = &x->tab[T_SIP_NBBO];
	table_init(t, table_name[T_SIP_NBBO], sizeof(struct row_sip_nbbo));
	COLS_TS(t, struct row_sip_nbbo);
	TABLE_COL(t, struct row_sip_nbbo, seq, COL_U64);
	TABLE_COL(t, struct row_sip_nbbo, feed, COL_STR);
	TABLE_COL(t, struct row_sip_nbbo, symbol, COL_STR);
	TABLE_COL(t, struct row_sip_nbbo, bid, COL_PRICE);
	TABLE_COL(t, struct row_sip_nbbo, bid_qty, COL_U64);
	TABLE_COL(t, struct row_sip_nbbo, bid_venue, COL_STR);
	TABLE_COL(t, struct row_sip_nbbo, ask, COL_PRICE);
	TABLE_COL(t, struct row_sip_nbbo, ask_qty, COL_U64);
	TABLE_COL(t, struct row_sip_nbbo, ask_venue, COL_STR);
	TABLE_COL(t, struct row_sip_nbbo, indicator, COL_CHAR);
	TABLE_COL(t, struct row_sip_nbbo, condition, COL_CHAR);
	TABLE_COL(t, struct row_sip_nbbo, sides, COL_U8);
	TABLE_COL(t, struct row_sip_nbbo, luld, COL_CHAR);

	t = &x->tab[T_LULD];
	table_init(t, table_name[T_LULD], sizeof(struct row_luld));
	COLS_TS(t, struct row_luld);
	TABLE_COL(t, struct row_luld, seq, COL_U64);
	TABLE_COL(t, struct row_luld, feed, COL_STR);
	TABLE_COL(t, struct row_luld, symbol, COL_STR);
	TABLE_COL(t, struct row_luld, lower, COL_PRICE);
	TABLE_COL(t, struct row_luld, upper, COL_PRICE);
	TABLE_COL(t, struct row_luld, indicator, COL_CHAR);

	for (unsigned i = T_TRADES; i < T_BOOK; i++)
		table_col(&x->tab[i], "last_in_packet", COL_U8, 1, last_in_packet_at[i]);
	x->tables = T_BOOK;
	if (!x->depth)
		return;
	t = &x->tab[T_BOOK];
	table_init(t, table_name[T_BOOK], sizeof(struct row_book));
	COLS_TS(t, struct row_book);
	TABLE_COL(t, struct row_book, seq, COL_U64);
	TABLE_COL(t, struct row_book, symbol, COL_STR);
	for (unsigned side = 0; side < 2; side++)
		for (unsigned i = 0; i < x->depth; i++) {
			snprintf(name, sizeof(name), "%s_%u", side ? "ask" : "bid", i + 1);
			table_col(t, name, COL_PRICE, 8, side ? offsetof(struct row_book, ask[i])
							 : offsetof(struct row_book, bid[i]));
			snprintf(name, sizeof(name), "%s_qty_%u", side ? "ask" : "bid", i + 1);
			table_col(t, name, COL_QTY, 8, side ? offsetof(struct row_book, ask_qty[i])
							: offsetof(struct row_book, bid_qty[i]));
		}
	TABLE_COL(t, struct row_book, event_no, COL_U64);
	TABLE_COL(t, struct row_book, last_in_packet, COL_U8);
	x->tables = T_COUNT;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	strncpy(dst, src, n - 1);
	dst[n - 1] = 0;
}

/* Write table t's held row, the last of its packet or not. */
static void release_held(struct exporter *x, unsigned t, int packet_ended)
{
	if (!x->holding[t])
		return;
	x->held[t][last_in_packet_at[t]] = (uint8_t)packet_ended;
	table_row_keyed(&x->tab[t], x->held[t], x->held_key[t]);
	x->holding[t] = 0;
}

/* A packet ended: every table's held row was its last. */
static void packet_end(struct exporter *x)
{
	for (unsigned t = 0; t < x->tables; t++)
		release_held(x, t, 1);
}

/* A row of table t (of symbol KEY), held until it is known whether it is
 * its packet's last (several rows of one packet are one book change). */
static void emit_keyed(struct exporter *x, enum table_id t, const void *row, uint16_t key)
{
	if (!x->writing)
		return;
	release_held(x, t, 0);
	memcpy(x->held[t], row, x->tab[t].row_size);
	x->held_key[t] = key;
	x->holding[t] = 1;
}

static const char *const gap_reason_name[] = {
	"sequence", "late_subscribe", "filter_full", "bad_data", "recovering", "filled",
};

static void write_event(struct exporter *x, const struct wb_event *ev)
{
	struct venue_order_info o;
	struct row_event r;
	uint16_t inst = ev->instrument;
	int known = 0;

	memset(&r, 0, sizeof(r));
	r.recv_ts = (int64_t)ev->recv_ts;
	r.exch_ts = (int64_t)ev->exch_ts;
	r.seq = ev->seq;
	copy_str(r.venue, sizeof(r.venue), venue(ev->venue));
	r.line = ev->line;
	copy_str(r.kind, sizeof(r.kind), wb_event_kind_name(ev->kind));
	r.event_no = x->events_seen;
	r.side = ev->side == WB_SIDE_BUY ? 'B' : ev->side == WB_SIDE_SELL ? 'S' : 0;
	r.flags = ev->flags;
	switch (ev->kind) {
	case WB_EV_TRADE:
	case WB_EV_TRADE_BREAK:
		r.order_id = ev->u.trade.order_id;
		r.price = ev->u.trade.price;
		r.qty = ev->u.trade.qty;
		r.ref = ev->u.trade.match_id;
		break;
	case WB_EV_CLEAR:
		break;
	case WB_EV_STATUS:
		copy_str(r.detail, sizeof(r.detail), wb_state_name(ev->u.status.state));
		break;
	case WB_EV_SYMBOL:
		r.qty = ev->u.symbol.round_lot;
		r.ref = ev->u.symbol.feed_key;
		break;
	case WB_EV_GAP:
		r.qty = ev->u.gap.count;
		r.ref = ev->u.gap.first;
		if (ev->u.gap.reason < sizeof(gap_reason_name) / sizeof(gap_reason_name[0]))
			copy_str(r.detail, sizeof(r.detail), gap_reason_name[ev->u.gap.reason]);
		break;
	default:	/* an order event: the order as the venue book holds it, before the event */
		r.order_id = ev->u.order.order_id;
		r.price = ev->u.order.price;
		r.qty = ev->u.order.qty;
		r.ref = ev->u.order.ref;
		if (ev->kind == WB_EV_ADD) {
			memcpy(r.mpid, ev->u.order.mpid, 4);
			break;
		}
		known = venue_books_order(x->vb, ev->venue, ev->u.order.order_id, &o) == 0;
		if (!known)
			break;
		if (!inst)
			inst = o.instrument;	/* PITCH: an id alone */
		r.side = o.side == WB_SIDE_BUY ? 'B' : o.side == WB_SIDE_SELL ? 'S' : r.side;
		if (ev->kind == WB_EV_EXECUTE || ev->kind == WB_EV_REDUCE || ev->kind == WB_EV_DELETE)
			r.price = o.price;
		if (ev->kind == WB_EV_DELETE)
			r.qty = o.qty;
		break;
	}
	copy_str(r.symbol, sizeof(r.symbol), sym(x, inst));
	emit_keyed(x, T_EVENTS, &r, inst);
	if (ev->kind != WB_EV_CLEAR || inst)
		return;
	/* A venue-wide clear: a row for each symbol the venue had too. */
	for (unsigned i = 1; i < FEED_MAX_INSTRUMENTS; i++)
		if (ev->venue < VENUES && x->venues[i] >> ev->venue & 1) {
			copy_str(r.symbol, sizeof(r.symbol), sym(x, (uint16_t)i));
			emit_keyed(x, T_EVENTS, &r, (uint16_t)i);
		}
}

static void emit(struct exporter *x, enum table_id t, const void *row)
{
	emit_keyed(x, t, row, 0);
}

static void write_gap(struct exporter *x, const struct wb_event *ev)
{
	struct row_gap r;

	memset(&r, 0, sizeof(r));
	r.recv_ts = ev->recv_ts;
	r.exch_ts = ev->exch_ts;
	copy_str(r.venue, sizeof(r.venue), venue(ev->venue));
	r.line = ev->line;
	copy_str(r.symbol, sizeof(r.symbol), sym(x, ev->instrument));
	r.first = ev->u.gap.first;
	r.count = ev->u.gap.count;
	r.channel = ev->u.gap.channel;
	r.unit = ev->u.gap.unit;
	r.reason = ev->u.gap.reason;
	emit(x, T_GAPS, &r);
}

static void write_status(struct exporter *x, const struct wb_event *ev)
{
	struct row_status r;

	memset(&r, 0, sizeof(r));
	r.recv_ts = ev->recv_ts;
	r.exch_ts = ev->exch_ts;
	r.seq = ev->seq;
	copy_str(r.venue, sizeof(r.venue), venue(ev->venue));
	copy_str(r.symbol, sizeof(r.symbol), sym(x, ev->instrument));
	copy_str(r.state, sizeof(r.state), wb_state_name(ev->u.status.state));
	r.raw_state = ev->u.status.raw_state;
	memcpy(r.reason, ev->u.status.reason, 4);
	for (int i = 3; i >= 0 && (r.reason[i] == ' ' || !r.reason[i]); i--)
		r.reason[i] = 0;
	emit(x, T_STATUS, &r);
}

/* What the SIPs say: a participant's quote, the SIP's NBBO, LULD bands. */
static void write_sip(struct exporter *x, const struct wb_event *ev)
{
	union {
		struct row_quote q;
		struct row_sip_nbbo n;
		struct row_luld l;
	} r;

	memset(&r, 0, sizeof(r));
	if (ev->kind == WB_EV_QUOTE) {
		r.q.recv_ts = ev->recv_ts;
		r.q.exch_ts = ev->exch_ts;
		r.q.seq = ev->seq;
		r.q.sip_ts = (int64_t)ev->u.quote.sip_ts;
		copy_str(r.q.venue, sizeof(r.q.venue), venue(ev->venue));
		copy_str(r.q.symbol, sizeof(r.q.symbol), sym(x, ev->instrument));
		r.q.bid = ev->u.quote.bid_price;
		r.q.bid_qty = ev->u.quote.bid_qty;
		r.q.ask = ev->u.quote.ask_price;
		r.q.ask_qty = ev->u.quote.ask_qty;
		r.q.condition = (char)ev->side;	/* the quote condition, as event.h says */
		r.q.flags = ev->flags;
		emit(x, T_QUOTES, &r.q);
	} else if (ev->kind == WB_EV_NBBO) {
		const struct wb_ev_nbbo *n = &ev->u.nbbo;

		r.n.recv_ts = ev->recv_ts;
		r.n.exch_ts = ev->exch_ts;
		r.n.seq = ev->seq;
		copy_str(r.n.feed, sizeof(r.n.feed), venue(ev->venue));
		copy_str(r.n.symbol, sizeof(r.n.symbol), sym(x, ev->instrument));
		r.n.bid = n->bid_price;
		r.n.bid_qty = n->bid_qty;
		copy_str(r.n.bid_venue, sizeof(r.n.bid_venue), n->bid_venue ? venue(n->bid_venue) : "");
		r.n.ask = n->ask_price;
		r.n.ask_qty = n->ask_qty;
		copy_str(r.n.ask_venue, sizeof(r.n.ask_venue), n->ask_venue ? venue(n->ask_venue) : "");
		r.n.indicator = n->indicator;
		r.n.condition = n->condition;
		r.n.luld = n->luld;
		r.n.sides = n->sides;
		emit(x, T_SIP_NBBO, &r.n);
	} else {
		r.l.recv_ts = ev->recv_ts;
		r.l.exch_ts = ev->exch_ts;
		r.l.seq = ev->seq;
		copy_str(r.l.feed, sizeof(r.l.feed), venue(ev->venue));
		copy_str(r.l.symbol, sizeof(r.l.symbol), sym(x, ev->instrument));
		r.l.lower = ev->u.luld.lower;
		r.l.upper = ev->u.luld.upper;
		r.l.indicator = ev->u.luld.indicator;
		emit(x, T_LULD, &r.l);
	}
}

static void write_trade(struct exporter *x, const struct wb_event *ev, const struct book_update *u)
{
	struct row_trade r;

	memset(&r, 0, sizeof(r));
	r.recv_ts = u->recv_ts;
	r.exch_ts = u->exch_ts;
	r.seq = ev->seq;
	copy_str(r.venue, sizeof(r.venue), venue(u->venue));
	copy_str(r.symbol, sizeof(r.symbol), sym(x, u->instrument));
	r.price = u->price;
	r.qty = u->qty;
	r.match_id = u->u.match_id;
	r.flags = u->flags;
	/* an execution of a resting order: the other side took; a feed's
	 * TRADE (non-displayed) names no aggressor (ITCH and PITCH send B) */
	if ((ev->kind == WB_EV_EXECUTE || ev->kind == WB_EV_EXECUTE_AT_PRICE) && u->side)
		r.aggressor = u->side == WB_SIDE_BUY ? 'S' : 'B';
	emit(x, T_TRADES, &r);
}

/* A venue's top after a level change: a bbo row when it moved. */
static void check_bbo(struct exporter *x, const struct wb_event *ev, uint8_t v, uint16_t inst)
{
	struct venue_level bid, ask;
	struct top now, *last = &x->vtop[inst][v];
	struct row_bbo r;

	if (venue_books_bbo(x->vb, v, inst, &bid, &ask) < 0)
		return;
	x->venues[inst] |= 1u << v;
	x->vtop_exact[inst] |= 1u << v;
	now = (struct top){ .bid = bid.qty ? bid.price : 0, .ask = ask.qty ? ask.price : 0,
			    .bid_qty = bid.qty, .ask_qty = ask.qty,
			    .bid_orders = bid.orders, .ask_orders = ask.orders };
	if (!memcmp(&now, last, sizeof(now)))
		return;
	*last = now;
	x->touched[inst] = 1;
	memset(&r, 0, sizeof(r));
	r.recv_ts = ev->recv_ts;
	r.exch_ts = ev->exch_ts;
	r.seq = ev->seq;
	copy_str(r.venue, sizeof(r.venue), venue(v));
	copy_str(r.symbol, sizeof(r.symbol), sym(x, inst));
	r.bid = now.bid;
	r.bid_qty = now.bid_qty;
	r.bid_orders = now.bid_orders;
	r.ask = now.ask;
	r.ask_qty = now.ask_qty;
	r.ask_orders = now.ask_orders;
	r.event_no = x->events_seen;
	emit(x, T_BBO, &r);
}

/*
 * A level change behind a venue's top (a bid below its best, an offer
 * above) leaves that top as it was: no need to read the book (a cache
 * miss or two) to find so. Only while the last top read is the book's.
 */
static int behind_top(const struct exporter *x, const struct book_update *u)
{
	const struct top *t = &x->vtop[u->instrument][u->venue];

	if (u->kind != BOOK_UP_LEVEL || !(x->vtop_exact[u->instrument] >> u->venue & 1))
		return 0;
	if (u->side == WB_SIDE_BUY)
		return t->bid_qty && u->price < t->bid;
	if (u->side == WB_SIDE_SELL)
		return t->ask_qty && u->price > t->ask;
	return 0;
}

/* The consolidated top of an instrument from the venues' tops. */
static void consolidate(const struct exporter *x, uint16_t inst, struct consolidated *c)
{
	memset(c, 0, sizeof(*c));
	for (int v = 1; v < VENUES; v++) {
		const struct top *t = &x->vtop[inst][v];

		if (t->bid_qty && (!c->bid_qty || t->bid > c->bid)) {
			c->bid = t->bid;
			c->bid_qty = 0;
			c->bid_venues = 0;
		}
		if (t->bid_qty && t->bid == c->bid) {
			c->bid_qty += t->bid_qty;
			c->bid_venues |= 1u << v;
		}
		if (t->ask_qty && (!c->ask_qty || t->ask < c->ask)) {
			c->ask = t->ask;
			c->ask_qty = 0;
			c->ask_venues = 0;
		}
		if (t->ask_qty && t->ask == c->ask) {
			c->ask_qty += t->ask_qty;
			c->ask_venues |= 1u << v;
		}
	}
}

static void check_nbbo(struct exporter *x, const struct wb_event *ev, uint16_t inst)
{
	struct consolidated now;
	struct row_nbbo r;

	consolidate(x, inst, &now);
	if (!memcmp(&now, &x->nbbo[inst], sizeof(now)))
		return;
	x->nbbo[inst] = now;
	memset(&r, 0, sizeof(r));
	r.recv_ts = ev->recv_ts;
	r.exch_ts = ev->exch_ts;
	r.seq = ev->seq;
	copy_str(r.symbol, sizeof(r.symbol), sym(x, inst));
	r.bid = now.bid;
	r.bid_qty = now.bid_qty;
	r.ask = now.ask;
	r.ask_qty = now.ask_qty;
	r.bid_venues = now.bid_venues;
	r.ask_venues = now.ask_venues;
	r.event_no = x->events_seen;
	emit(x, T_NBBO, &r);
}

/* Levels of every venue on one side merged by price, best first. */
static unsigned merged_side(const struct exporter *x, uint16_t inst, uint8_t side,
			    struct venue_level *out, unsigned max)
{
	struct venue_level lv[MAX_DEPTH];
	unsigned n = 0;

	/* only the venues that ever had levels of the instrument */
	for (uint32_t m = x->venues[inst]; m; m &= m - 1) {
		int v = __builtin_ctz(m);
		unsigned k = venue_books_depth(x->vb, (uint8_t)v, inst, side, lv, max);

		for (unsigned i = 0; i < k; i++) {
			unsigned j;

			for (j = 0; j < n && out[j].price != lv[i].price; j++)
				;
			if (j < n) {
				out[j].qty += lv[i].qty;
				continue;
			}
			/* insert in order; past max only if better than the worst */
			for (j = n; j > 0; j--) {
				int better = side == WB_SIDE_BUY ? lv[i].price > out[j - 1].price
								 : lv[i].price < out[j - 1].price;
				if (!better)
					break;
				if (j < max)
					out[j] = out[j - 1];
			}
			if (j < max) {
				out[j] = lv[i];
				if (n < max)
					n++;
			}
		}
	}
	return n;
}

/* Can a level change at PRICE on SIDE alter the last N-level row? */
static int in_snapshot(const struct exporter *x, uint16_t inst, uint8_t side, int64_t price)
{
	const struct snapshot *sn = &x->snap[inst];

	if (side == WB_SIDE_BUY)
		return sn->bids < x->depth || price >= sn->bid[sn->bids - 1].price;
	return sn->asks < x->depth || price <= sn->ask[sn->asks - 1].price;
}

static int same_levels(const struct venue_level *a, unsigned na, const struct venue_level *b,
		       unsigned nb)
{
	if (na != nb)
		return 0;
	for (unsigned i = 0; i < na; i++)
		if (a[i].price != b[i].price || a[i].qty != b[i].qty)
			return 0;
	return 1;
}

/* A book row when the consolidated N levels changed. */
static void write_book_row(struct exporter *x, uint16_t inst, uint64_t recv_ts, uint64_t exch_ts,
			   uint64_t seq, uint64_t event_no)
{
	struct snapshot now, *last = &x->snap[inst];
	struct row_book r;

	now.bids = (uint8_t)merged_side(x, inst, WB_SIDE_BUY, now.bid, x->depth);
	now.asks = (uint8_t)merged_side(x, inst, WB_SIDE_SELL, now.ask, x->depth);
	if (same_levels(now.bid, now.bids, last->bid, last->bids) &&
	    same_levels(now.ask, now.asks, last->ask, last->asks))
		return;
	*last = now;
	memset(&r, 0, sizeof(r));
	r.recv_ts = recv_ts;
	r.exch_ts = exch_ts;
	r.seq = seq;
	copy_str(r.symbol, sizeof(r.symbol), sym(x, inst));
	r.event_no = event_no;
	for (unsigned i = 0; i < now.bids; i++) {
		r.bid[i] = now.bid[i].price;
		r.bid_qty[i] = now.bid[i].qty;
	}
	for (unsigned i = 0; i < now.asks; i++) {
		r.ask[i] = now.ask[i].price;
		r.ask_qty[i] = now.ask[i].qty;
	}
	emit(x, T_BOOK, &r);
}

/* A change within the N levels: a row now, or (--interval) at the next tick. */
static void check_book(struct exporter *x, const struct wb_event *ev, uint16_t inst)
{
	struct pending *p = &x->pend[inst];

	if (!x->interval_ns) {
		write_book_row(x, inst, ev->recv_ts, ev->exch_ts, ev->seq, x->events_seen);
		return;
	}
	if (!p->queued) {
		p->queued = 1;
		x->queue[x->queued++] = inst;
	}
	p->exch_ts = ev->exch_ts;
	p->seq = ev->seq;
}

/* --interval: the books of the instruments changed since the last tick, as
 * they stand at TICK (receive time), before the event that crossed it. */
static void flush_interval(struct exporter *x, uint64_t tick)
{
	for (uint32_t i = 0; i < x->queued; i++) {
		uint16_t inst = x->queue[i];
		struct pending *p = &x->pend[inst];

		write_book_row(x, inst, tick, p->exch_ts, p->seq, x->events_seen - 1);
		release_held(x, T_BOOK, 1);	/* a tick's row is a whole state */
		p->queued = 0;
	}
	x->queued = 0;
}

/* ---- one event ----------------------------------------------------------- */

#define DAY_NS 86400000000000ll

/* An event's time for dates and --start/--end: the exchange's, else (unknown,
 * or since midnight without a date) the receive time. */
static int64_t event_time(const struct wb_event *ev)
{
	return ev->exch_ts >= (uint64_t)DAY_NS ? (int64_t)ev->exch_ts : (int64_t)ev->recv_ts;
}

/* Midnight US/Eastern of the day holding T, and that day as YYYY-MM-DD
 * (TZ is America/New_York, set in main). */
static int64_t eastern_midnight(int64_t t, char date[11])
{
	time_t secs = (time_t)(t / 1000000000);
	struct tm tm;

	localtime_r(&secs, &tm);
	strftime(date, 11, "%Y-%m-%d", &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm) * 1000000000;
}

/* Rows go to the trading date of their event; dates only go forward (a
 * late or bad timestamp stays in the day it came in). */
static void follow_date(struct exporter *x, int64_t t)
{
	char date[11], next[11], err[256];
	int64_t midnight;

	if (x->date[0] && t < x->day_end)
		return;
	if (t < DAY_NS) {	/* no date at all (synthetic times) */
		midnight = 0;
		snprintf(date, sizeof(date), "1970-01-01");
	} else {
		midnight = eastern_midnight(t, date);
	}
	/* the next midnight: a day is 23 or 25 hours when the clocks change */
	x->day_end = eastern_midnight(midnight + DAY_NS + 6 * 3600000000000ll, next);
	if (t < DAY_NS)
		x->day_end = DAY_NS;
	if (x->date[0] && strcmp(date, x->date) <= 0)
		return;
	packet_end(x);
	x->day_start = midnight;
	memcpy(x->date, date, sizeof(date));
	if (tables_begin_date(x->tab, x->all_tables, x->date, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		exit(1);
	}
}

static int in_window(const struct exporter *x, int64_t t)
{
	if (x->window_relative)
		t -= x->day_start;
	return t >= x->start_ns && t < x->end_ns;
}


/*
 * A venue-wide clear (a new session: no instrument in the update) empties
 * every book the venue had: each gets its bbo row, and its symbol's nbbo
 * and book rows, as a per-symbol clear would give them.
 */
static void clear_venue_tops(struct exporter *x, const struct wb_event *ev, uint8_t v)
{
	for (unsigned k = 0; k < FEED_MAX_INSTRUMENTS; k++) {
		uint16_t inst = (uint16_t)k;

		x->vtop_exact[k] &= ~(1u << v);
		if (!inst || !(x->venues[k] >> v & 1))
			continue;
		check_bbo(x, ev, v, inst);
		if (x->touched[inst]) {
			check_nbbo(x, ev, inst);
			x->touched[inst] = 0;
		}
		if (x->depth)
			check_book(x, ev, inst);
	}
}
static void export_event(struct exporter *x, const struct wb_event *ev)
{
	struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];
	unsigned n, i;
	int64_t t = event_time(ev);

	x->events_seen++;
	/* a packet's events share its line and receive time: a change ends
	 * one (whatever the source says of packets, as the module's rings) */
	if (ev->line != x->last_line || ev->recv_ts != x->last_recv_ts)
		packet_end(x);
	x->last_line = ev->line;
	x->last_recv_ts = ev->recv_ts;
	follow_date(x, t);
	x->writing = in_window(x, t);
	if (x->interval_ns && ev->recv_ts >= x->next_tick) {
		uint64_t tick = ev->recv_ts - ev->recv_ts % x->interval_ns;

		if (x->next_tick)
			flush_interval(x, tick);
		x->next_tick = tick + x->interval_ns;
	}
	if (ev->kind == WB_EV_SYMBOL && ev->instrument && !x->ticker[ev->instrument][0]) {
		memcpy(x->ticker[ev->instrument], ev->u.symbol.ticker, 8);
		for (i = 8; i > 0 && x->ticker[ev->instrument][i - 1] == ' '; i--)
			x->ticker[ev->instrument][i - 1] = 0;
	}
	if (x->sink) {
		export_sink_before(x->sink, x->vb, ev);
		n = venue_books_apply(x->vb, ev, up);
		export_sink_after(x->sink, x->vb, ev, up, n);
		return;
	}
	/* the order-level table: whatever changes a direct book */
	if ((ev->kind >= WB_EV_ADD && ev->kind <= WB_EV_TRADE_BREAK) || ev->kind == WB_EV_SYMBOL ||
	    ev->kind == WB_EV_GAP ||
	    ((ev->kind == WB_EV_CLEAR || ev->kind == WB_EV_STATUS) && !(ev->flags & WB_EVF_SIP)))
		write_event(x, ev);
	if (ev->kind == WB_EV_GAP)
		write_gap(x, ev);
	else if (ev->kind == WB_EV_STATUS && !(ev->flags & WB_EVF_SIP) && ev->instrument)
		write_status(x, ev);
	else if (ev->kind == WB_EV_QUOTE || ev->kind == WB_EV_NBBO || ev->kind == WB_EV_LULD)
		write_sip(x, ev);

	n = venue_books_apply(x->vb, ev, up);
	for (i = 0; i < n; i++) {
		const struct book_update *u = &up[i];

		if (u->kind == BOOK_UP_TRADE)
			write_trade(x, ev, u);
		else if ((u->kind == BOOK_UP_LEVEL || u->kind == BOOK_UP_CLEAR) &&
			 u->venue < VENUES && u->instrument && !behind_top(x, u))
			check_bbo(x, ev, u->venue, u->instrument);
		else if (u->kind == BOOK_UP_CLEAR && !u->instrument && u->venue < VENUES)
			clear_venue_tops(x, ev, u->venue);
	}
	/* Then, once per instrument whose levels changed: the NBBO when a
	 * venue's top moved, the book snapshot at any level change. */
	for (i = 0; i < n; i++) {
		uint16_t inst = up[i].instrument;
		unsigned j;

		if ((up[i].kind != BOOK_UP_LEVEL && up[i].kind != BOOK_UP_CLEAR) || !inst ||
		    up[i].venue >= VENUES)
			continue;
		for (j = 0; j < i && up[j].instrument != inst; j++)
			;
		if (j < i)
			continue;	/* done with this instrument */
		if (x->touched[inst]) {
			check_nbbo(x, ev, inst);
			x->touched[inst] = 0;
		}
		if (!x->depth)
			continue;
		for (j = i; j < n; j++)	/* only a change within the N levels shows */
			if (up[j].instrument == inst && (up[j].kind == BOOK_UP_CLEAR ||
			    in_snapshot(x, inst, up[j].side, up[j].price)))
				break;
		if (j < n)
			check_book(x, ev, inst);
	}
}

/* The events the producer made so far; PACKET_ENDED: they end a packet. */
static void drain(struct exporter *x, int packet_ended)
{
	const struct wb_event *batch[EXPORT_BATCH];
	unsigned n;

	wb_ring_producer_publish_no_wakeup(&x->prod);
	while ((n = wb_events_peek(x->events, batch, EXPORT_BATCH)) != 0) {
		for (unsigned i = 0; i < n; i++)
			export_event(x, batch[i]);
		wb_events_release(x->events);
	}
	if (packet_ended)
		packet_end(x);
}

/* ---- setup --------------------------------------------------------------- */

static int subscribe(struct exporter *x, const char *list)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int id = feed_subscribe(x->engine, tok, strlen(tok));

		if (id < 0) {
			fprintf(stderr, "wb-export: cannot subscribe '%s'\n", tok);
			return -1;
		}
		if (id > 0 && strcmp(tok, "*"))
			snprintf(x->ticker[id], sizeof(x->ticker[id]), "%s", tok);
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct exporter *exporter_create(unsigned depth)
{
	struct exporter *x = calloc(1, sizeof(*x));
	struct feed_engine_config ecfg = { .alloc = zalloc, .free = free };
	struct venue_books_config vbc = { .numa_node = -1, .max_instruments = FEED_MAX_INSTRUMENTS };

	if (!x)
		return NULL;
	x->depth = depth;
	x->engine = calloc(1, sizeof(*x->engine));
	x->vtop = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->vtop));
	x->nbbo = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->nbbo));
	x->touched = calloc(FEED_MAX_INSTRUMENTS, 1);
	x->venues = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->venues));
	x->vtop_exact = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->vtop_exact));
	x->snap = depth ? calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->snap)) : NULL;
	x->pend = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->pend));
	x->queue = calloc(FEED_MAX_INSTRUMENTS, sizeof(*x->queue));
	if (posix_memalign(&x->ring, WB_RING_PAGE, wb_ring_bytes(EXPORT_RING_SLOTS)))
		x->ring = NULL;
	if (!x->engine || !x->vtop || !x->nbbo || !x->touched || !x->venues || !x->vtop_exact || !x->ring ||
	    (depth && !x->snap) || !x->pend || !x->queue ||
	    feed_engine_init(x->engine, &ecfg) < 0)
		return NULL;
	x->vb = venue_books_create(&vbc);
	memset(x->ring, 0, wb_ring_bytes(EXPORT_RING_SLOTS));
	wb_ring_format(x->ring, EXPORT_RING_SLOTS, 0);
	wb_ring_producer_init(&x->prod, x->ring);
	x->events = wb_events_attach(&x->ring, 1, wb_ring_bytes(EXPORT_RING_SLOTS), NULL);
	if (!x->vb || !x->events)
		return NULL;
	return x;
}

static void exporter_destroy(struct exporter *x)
{
	wb_events_close(x->events);
	if (x->vb)
		venue_books_destroy(x->vb);
	if (x->engine)
		feed_engine_destroy(x->engine);
	free(x->engine);
	free(x->ring);
	free(x->vtop);
	free(x->nbbo);
	free(x->touched);
	free(x->venues);
	free(x->vtop_exact);
	free(x->snap);
	free(x->pend);
	free(x->queue);
	sim_out_free(x->sim);
	free(x);
}

static void summary(const struct exporter *x, const char *what, uint64_t n, double t0)
{
	double s = now_s() - t0;

	fprintf(stderr, "wb-export: %" PRIu64 " %s, %" PRIu64 " events in %.2f s (%.0f events/s) ->",
		n, what, x->events_seen, s, s > 0 ? (double)x->events_seen / s : 0.0);
	for (unsigned t = 0; t < x->all_tables; t++)
		fprintf(stderr, " %s %" PRIu64, x->tab[t].name, x->tab[t].rows);
	if (x->sink_rows)
		fprintf(stderr, " %" PRIu64 " records", x->sink_rows);
	fprintf(stderr, "\n");
}

/* Without --format: an OUTPUT named .h5 or .hdf5 is an HDF5 file, anything else a CSV directory. */
static const char *format_of_output(const char *out)
{
	size_t n = strlen(out);

	if ((n > 3 && !strcmp(out + n - 3, ".h5")) || (n > 5 && !strcmp(out + n - 5, ".hdf5")))
		return "hdf5";
	return "csv";
}

/* The tables, or (--format dbn, hftbacktest) the order-level writer. */
static int output_open(struct exporter *x, const char *format, const char *path,
		       const char *schemas, const struct table_meta *meta, char *err,
		       size_t errlen)
{
	if (export_sink_format(format)) {
		x->sink = export_sink_open(format, path, schemas, err, errlen);
		return x->sink ? 0 : -1;
	}
	define_tables(x);
	x->all_tables = x->tables + sim_out_define(x->sim, &x->tab[x->tables]);
	if (tables_open(x->tab, x->all_tables, format, path, meta, err, errlen) < 0) {
		char ignored[8];

		tables_close(x->tab, x->all_tables, ignored, sizeof(ignored));
		return -1;
	}
	return 0;
}

/* An export that wrote nothing is a mistake to say, not a success. */
static int nothing_exported(const struct exporter *x, const char *input)
{
	uint64_t rows = x->sink_rows;

	for (unsigned t = 0; t < x->tables; t++)
		rows += x->tab[t].rows;
	if (!x->events_seen) {
		fprintf(stderr, "wb-export: warning: nothing exported: %s gave no event (is its traffic "
			"on the feed map's addresses? try --feeds FILE or --proto PROTOCOL[:VENUE])\n",
			input);
		return 1;
	}
	if (!rows) {
		fprintf(stderr, "wb-export: warning: nothing exported: %s gave %" PRIu64 " events, none "
			"between --start and --end\n", input, x->events_seen);
		return 1;
	}
	return 0;
}

static int output_close(struct exporter *x, char *err, size_t errlen)
{
	struct export_sink *s = x->sink;

	if (s) {
		x->sink = NULL;
		x->sink_rows = export_sink_rows(s);
		return export_sink_close(s, (const char (*)[9])x->ticker, err, errlen);
	}
	/* A run replays one day: its rows go to the (last) trading date's
	 * group; with no date begun nothing was exported (and HDF5 has no
	 * group to put them in). */
	if (x->date[0])
		sim_out_write(x->sim, &x->tab[x->tables]);
	return tables_close(x->tab, x->all_tables, err, errlen);
}

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* A live session: the kernel module's rings until SIGINT/SIGTERM or SECONDS. */
static int run_kernel(struct exporter *x, const char *dev, uint64_t seconds, const char *format,
		      const char *schemas, const char *out, const struct table_meta *meta, int quiet)
{
	struct wb_event_counts c;
	char err[512];
	double t0;
	int e, rc = 0;

	wb_events_close(x->events);
	x->events = wb_events_open(dev, &e);
	if (!x->events) {
		fprintf(stderr, "wb-export: %s: %s\n", dev ? dev : WB_DEVICE_PATH, wb_strerror(e));
		return 1;
	}
	if (output_open(x, format, out, schemas, meta, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();
	while (!g_stop && (!seconds || now_s() - t0 < (double)seconds)) {
		uint64_t before = x->events_seen;

		/* the rings say nothing of packets: their ends are where the
		 * line or the receive time changes (one hook time a packet) */
		drain(x, 0);
		if (x->events_seen == before)
			wb_events_wait(x->events, 100);
	}
	drain(x, 1);
	if (x->interval_ns && x->next_tick)
		flush_interval(x, x->next_tick);
	wb_events_counts(x->events, &c);
	if (c.dropped)
		fprintf(stderr, "wb-export: the module dropped %" PRIu64 " events (a ring was full)\n",
			c.dropped);
	if (output_close(x, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		rc = 1;
	}
	if (!quiet)
		summary(x, "rings", c.rings, t0);
	return rc ? rc : nothing_exported(x, "the module's rings");
}

/* The symbols --subscribe names (NULL: all), as tickers: a stream's
 * events carry the origin's instrument ids, learned from its SYMBOL events. */
static int wanted_ticker(const char *list, const char *ticker)
{
	size_t n = strlen(ticker);
	const char *p = list;

	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !memcmp(p, ticker, n))
			return 1;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* A day from NATS JetStream (wirebookd --publish): its events are the
 * origin's, decoded and in its builder's order; into the same ring the
 * other sources fill, so every table and format comes out as from a capture. */
static int run_nats(struct exporter *x, const struct nats_read_config *cfg, const char *subs,
		    const char *format, const char *schemas, const char *out,
		    const struct table_meta *meta, int quiet)
{
	static struct wb_event buf[EXPORT_BATCH];
	struct nats_read_counts c;
	struct nats_reader *r;
	uint8_t *wanted = NULL;	/* [instrument]: 1 wanted, 2 not (subs named some) */
	char err[512];
	double t0;
	int n, rc = 0;

	if (strcmp(subs, "*") && !(wanted = calloc(FEED_MAX_INSTRUMENTS, 1))) {
		fprintf(stderr, "wb-export: out of memory\n");
		return 1;
	}
	r = nats_reader_open(cfg, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "wb-export: %s\n", err);
		free(wanted);
		return 1;
	}
	if (output_open(x, format, out, schemas, meta, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		nats_reader_close(r);
		free(wanted);
		return 1;
	}
	t0 = now_s();
	while ((n = nats_reader_read(r, buf, EXPORT_BATCH, err, sizeof(err))) > 0) {
		for (int i = 0; i < n; i++) {
			const struct wb_event *ev = &buf[i];
			struct wb_event *slot;
			uint16_t inst = ev->instrument;

			if (wanted && inst && inst < FEED_MAX_INSTRUMENTS) {
				if (ev->kind == WB_EV_SYMBOL && !wanted[inst]) {
					char t[9];
					unsigned k;

					memcpy(t, ev->u.symbol.ticker, 8);
					for (k = 8; k > 0 && t[k - 1] == ' '; k--)
						;
					t[k] = 0;
					wanted[inst] = wanted_ticker(subs, t) ? 1 : 2;
				}
				if (wanted[inst] != 1)
					continue;
			}
			slot = wb_ring_producer_slot(&x->prod);	/* drained below: never full */
			memcpy(slot, ev, sizeof(*slot));
			wb_ring_producer_commit(&x->prod);
		}
		/* the events say nothing of packets: their ends are where the
		 * line or the receive time changes, as with the module's rings */
		drain(x, 0);
	}
	if (n < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		rc = 1;
	}
	drain(x, 1);
	if (x->interval_ns && x->next_tick)
		flush_interval(x, x->next_tick);
	nats_reader_counts(r, &c);
	if (c.lost || c.bad)
		fprintf(stderr, "wb-export: the stream lacks %" PRIu64 " events of the publisher's (a "
			"hole never filled), %" PRIu64 " messages were no batch\n", c.lost, c.bad);
	if (output_close(x, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		rc = 1;
	}
	if (!quiet) {
		fprintf(stderr, "wb-export: stream %s, sequences %" PRIu64 "-%" PRIu64 ": %" PRIu64
			" batches, %" PRIu64 " events (%" PRIu64 " before the range's first, %" PRIu64
			" of the range's runs outside it), %" PRIu64 " duplicate events skipped, %" PRIu64
			" publisher runs\n", c.stream[0] ? c.stream : "(none)", c.first_seq, c.last_seq,
			c.batches, c.events, c.early, c.outside, c.duplicates, c.runs);
		summary(x, "messages", c.messages, t0);
	}
	nats_reader_close(r);
	free(wanted);
	return rc ? rc : nothing_exported(x, cfg->client.url);
}

enum { OPT_FIRST_SEQ = 256, OPT_LAST_SEQ, OPT_SIM_FILLS, OPT_SIM_QUEUE, OPT_NATS_FIRST };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "itch-file", no_argument, NULL, 'I' },
		{ "feeds", required_argument, NULL, 'F' },
		{ "subscribe", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "kernel", optional_argument, NULL, 'K' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'T' },
		{ "date", required_argument, NULL, 'D' },
		{ "schema", required_argument, NULL, 'C' },
		{ "proto", required_argument, NULL, 'P' },
		{ "start", required_argument, NULL, 'A' },
		{ "end", required_argument, NULL, 'E' },
		{ "deflate", required_argument, NULL, 'Z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "first-seq", required_argument, NULL, OPT_FIRST_SEQ },
		{ "last-seq", required_argument, NULL, OPT_LAST_SEQ },
		{ "sim-fills", required_argument, NULL, OPT_SIM_FILLS },
		{ "sim-queue", required_argument, NULL, OPT_SIM_QUEUE },
		NATS_CLIENT_LONG_OPTIONS(OPT_NATS_FIRST),
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *feeds = NULL, *subs = "*", *kernel_dev = NULL, *proto = NULL;
	const char *schemas = NULL;
	const char *start = NULL, *end = NULL, *source_kind;
	const char *sim_fills = NULL, *sim_queue = NULL;
	static const char *venue_names[WB_VENUE_SIP_UQDF + 1], *kind_names[WB_EV_KIND_COUNT];
	const char *source_what[1], *version_what[1];
	struct table_meta meta = { .deflate = 1, .segment_rows = 1u << 23 };
	uint64_t deflate = 1;
	struct source_options sopt;
	struct nats_read_config ncfg;
	struct source src;
	struct exporter *x;
	int itch = 0, quiet = 0, kernel = 0, c, rc = 0, st;
	uint64_t depth = 0, seconds = 0, interval_ms = 0;
	int date[3] = { 0, 0, 0 };
	char err[512];
	double t0;

	if (tool_version_option(argc, argv, "wb-export"))
		return 0;
	memset(&ncfg, 0, sizeof(ncfg));
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'I': itch = 1; break;
		case 'F': feeds = optarg; break;
		case 's':
			if (opt_list("wb-export", "--subscribe", optarg))
				return 2;
			subs = optarg;
			break;
		case 'd':
			if (opt_u64("wb-export", "--depth", optarg, 1, MAX_DEPTH, &depth))
				return 2;
			break;
		case 'K':
			kernel = 1;
			kernel_dev = optarg;
			break;
		case 'S':
			if (opt_u64("wb-export", "--seconds", optarg, 1, 86400 * 7, &seconds))
				return 2;
			break;
		case 'T':
			if (opt_u64("wb-export", "--interval", optarg, 1, 86400000, &interval_ms))
				return 2;
			break;
		case 'D':
			if (opt_date("wb-export", "--date", optarg, &date[0], &date[1], &date[2]))
				return 2;
			break;
		case 'C': schemas = optarg; break;
		case 'P': proto = optarg; break;
		case 'A': start = optarg; break;
		case 'E': end = optarg; break;
		case 'Z':
			if (opt_u64("wb-export", "--deflate", optarg, 0, 9, &deflate))
				return 2;
			break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case OPT_FIRST_SEQ:
			if (opt_u64("wb-export", "--first-seq", optarg, 1, UINT64_MAX, &ncfg.first_seq))
				return 2;
			break;
		case OPT_LAST_SEQ:
			if (opt_u64("wb-export", "--last-seq", optarg, 1, UINT64_MAX, &ncfg.last_seq))
				return 2;
			break;
		case OPT_SIM_FILLS: sim_fills = optarg; break;
		case OPT_SIM_QUEUE: sim_queue = optarg; break;
		default:
			if (c >= OPT_NATS_FIRST && c < OPT_NATS_FIRST + NATS_CLIENT_OPTION_COUNT) {
				nats_client_option(&ncfg.client, c - OPT_NATS_FIRST, optarg);
				break;
			}
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > (kernel ? 1 : 2))
		fprintf(stderr, "wb-export: unexpected argument '%s' (%s)\n", argv[optind + (kernel ? 1 : 2)],
			kernel ? "--kernel takes OUTPUT alone" : "give INPUT OUTPUT");
	if (argc - optind != (kernel ? 1 : 2) || (kernel && itch)) {
		usage(stderr);
		return 2;
	}
	if (!kernel && (!strncmp(argv[optind], "nats://", 7) || !strncmp(argv[optind], "tls://", 6)))
		ncfg.client.url = argv[optind];
	if (!ncfg.client.url && (nats_client_options_given(&ncfg.client) || ncfg.first_seq ||
				 ncfg.last_seq)) {
		fprintf(stderr, "wb-export: the --nats-* and --first-seq/--last-seq options go with a "
			"nats://HOST:PORT input\n");
		return 2;
	}
	if (ncfg.client.url) {
		char servers[1024], stream[256];

		if (itch || proto || feeds) {
			fprintf(stderr, "wb-export: a NATS stream's events are decoded already: no "
				"--itch-file, --proto or --feeds\n");
			return 2;
		}
		if (!nats_available()) {
			fprintf(stderr, "wb-export: %s: this wb-export was built without NATS (install "
				"libnats-dev and rebuild)\n", ncfg.client.url);
			return 2;
		}
		if (nats_url_split(ncfg.client.url, servers, sizeof(servers), stream, sizeof(stream), err,
				   sizeof(err)) || nats_client_options_check(&ncfg.client, err, sizeof(err))) {
			fprintf(stderr, "wb-export: %s\n", err);
			return 2;
		}
		if (ncfg.first_seq && ncfg.last_seq && ncfg.last_seq < ncfg.first_seq) {
			fprintf(stderr, "wb-export: --last-seq before --first-seq\n");
			return 2;
		}
		if (!ncfg.client.instance)
			ncfg.client.instance = WB_SHM_DEFAULT_NAME;
	}
	if (!format)
		format = format_of_output(argv[optind + (kernel ? 0 : 1)]);
	if (!table_format_known(format) && !export_sink_format(format)) {
		fprintf(stderr, "wb-export: --format %s: this build writes %s, dbn and hftbacktest\n",
			format, table_format_known("hdf5") ? "csv, hdf5" : "csv (no hdf5: built without libhdf5)");
		return 2;
	}
	if (export_sink_format(format) && depth) {
		fprintf(stderr, "wb-export: --depth applies to the tables (csv, hdf5); %s has its own "
			"depth\n", format);
		return 2;
	}
	if (export_sink_format(format) && (sim_fills || sim_queue)) {
		fprintf(stderr, "wb-export: --sim-fills and --sim-queue add tables: --format csv or "
			"hdf5, not %s\n", format);
		return 2;
	}
	if (schemas && strcmp(format, "dbn")) {
		fprintf(stderr, "wb-export: --schema applies to --format dbn\n");
		return 2;
	}
	if (schemas && !export_sink_schemas_known(schemas)) {
		fprintf(stderr, "wb-export: --schema %s: expected a list of mbo, mbp-1, mbp-10, "
			"trades\n", schemas);
		return 2;
	}
	if (date[0] && !itch) {
		fprintf(stderr, "wb-export: --date applies to --itch-file only (a capture's record "
			"times give the day)\n");
		return 2;
	}
	if (interval_ms && !depth) {
		fprintf(stderr, "wb-export: --interval applies to the book table: give --depth N\n");
		return 2;
	}
	if (proto && (kernel || itch)) {
		fprintf(stderr, "wb-export: --proto applies to a capture (a BinaryFILE is ITCH; the "
			"module has its own map)\n");
		return 2;
	}
	x = exporter_create((unsigned)depth);
	if (!x) {
		fprintf(stderr, "wb-export: out of memory\n");
		return 1;
	}
	if (sim_fills || sim_queue) {
		x->sim = sim_out_load(sim_fills, sim_queue, err, sizeof(err));
		if (!x->sim) {	/* not the run's CSV: said before the day is read */
			fprintf(stderr, "wb-export: %s\n", err);
			exporter_destroy(x);
			return 2;
		}
	}
	x->interval_ns = interval_ms * 1000000ull;
	x->end_ns = INT64_MAX;
	{
		int rel_start = -1, rel_end = -1;

		if ((start && parse_time("--start", start, &x->start_ns, &rel_start) < 0) ||
		    (end && parse_time("--end", end, &x->end_ns, &rel_end) < 0)) {
			exporter_destroy(x);
			return 2;
		}
		if (start && end && rel_start != rel_end) {
			fprintf(stderr, "wb-export: --start %s --end %s: give both as HH:MM[:SS] or "
				"both as ns\n", start, end);
			exporter_destroy(x);
			return 2;
		}
		x->window_relative = rel_start == 1 || rel_end == 1;
		if (x->window_relative && !start)
			x->start_ns = 0;
		if (!x->window_relative && !start)
			x->start_ns = INT64_MIN;
	}
	/* trading dates, and --start/--end as times of day, are US/Eastern */
	setenv("TZ", "America/New_York", 1);
	tzset();

	/* what the file says of itself */
	for (int v = 0; v <= WB_VENUE_SIP_UQDF; v++)
		venue_names[v] = v ? venue(v) : "";
	for (int k = 0; k < WB_EV_KIND_COUNT; k++)
		kind_names[k] = k ? wb_event_kind_name(k) : "";
	source_kind = kernel ? "kernel" : itch ? "itch-file" : ncfg.client.url ? "nats" : "pcap";
	source_what[0] = kernel ? (kernel_dev ? kernel_dev : WB_DEVICE_PATH) : argv[optind];
	if (ncfg.client.url && strchr(argv[optind], '@'))	/* no password in the file */
		source_what[0] = strrchr(argv[optind], '@') + 1;
	version_what[0] = wb_version;
	meta.deflate = (int)deflate;
	table_meta_number(&meta, "schema_version", EXPORT_SCHEMA_VERSION);
	table_meta_number(&meta, "price_scale", WB_PRICE_SCALE);
	table_meta_strings(&meta, "time_unit", &time_unit, 1);
	table_meta_strings(&meta, "source", source_what, 1);
	table_meta_strings(&meta, "source_kind", &source_kind, 1);
	table_meta_strings(&meta, "wirebook_version", version_what, 1);
	table_meta_strings(&meta, "venue_names", venue_names, WB_VENUE_SIP_UQDF + 1);
	table_meta_strings(&meta, "event_kind_names", kind_names, WB_EV_KIND_COUNT);
	if (kernel) {	/* the module decodes: no feed map, no subscriptions here */
		rc = run_kernel(x, kernel_dev, seconds, format, schemas, argv[optind], &meta, quiet);
		exporter_destroy(x);
		return rc;
	}
	if (ncfg.client.url) {
		rc = run_nats(x, &ncfg, subs, format, schemas, argv[optind + 1], &meta, quiet);
		exporter_destroy(x);
		return rc;
	}
	if (!feeds)
		feeds = feeds_conf_default_path();
	if (feeds && feeds_conf_load(x->engine, feeds, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		exporter_destroy(x);
		return 2;	/* the feed map is configuration: bad usage */
	}
	if (!feeds && !itch && !proto) {
		fprintf(stderr, "wb-export: no feed map found (looked in %s); give --feeds FILE\n",
			feeds_conf_searched());
		exporter_destroy(x);
		return 2;
	}
	/* A BinaryFILE needs no feed map (nor an address): Nasdaq's ITCH. */
	if (!feeds && feeds_conf_add_proto(x->engine, "itch:nasdaq", err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		exporter_destroy(x);
		return 1;
	}
	if (proto && feeds_conf_add_proto(x->engine, proto, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		exporter_destroy(x);
		return 2;
	}
	if (subscribe(x, subs) < 0) {
		exporter_destroy(x);
		return 2;
	}
	memset(&sopt, 0, sizeof(sopt));
	sopt.path = argv[optind];
	sopt.engine = x->engine;
	if (itch)
		sopt.line = source_find_line(x->engine, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ);
	memcpy(sopt.date, date, sizeof(sopt.date));
	memset(&src, 0, sizeof(src));
	rc = source_open(&src, itch ? &source_itch_file_ops : &source_pcap_ops, &sopt);
	if (rc < 0) {
		fprintf(stderr, "wb-export: %s\n", src.err);
		exporter_destroy(x);
		return rc == SOURCE_EUSAGE ? 2 : 1;
	}
	if (output_open(x, format, argv[optind + 1], schemas, &meta, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		source_close(&src);
		exporter_destroy(x);
		return 1;
	}

	t0 = now_s();
	do {
		/* a packet at a time: its rows' last one is known to be its last */
		st = source_pump(&src, x->engine, &x->prod, 1);
		drain(x, 1);
	} while (st == SOURCE_MORE || st == SOURCE_IDLE || st == SOURCE_WAITED);
	if (st == SOURCE_ERROR) {
		fprintf(stderr, "wb-export: %s\n", src.err);
		rc = 1;
	}
	if (x->interval_ns && x->next_tick)
		flush_interval(x, x->next_tick);	/* the last tick's rows */
	for (unsigned i = 0; i < x->engine->line_count; i++)
		if (x->engine->lines[i].counters.ring_drops) {
			fprintf(stderr, "wb-export: line %u lost %" PRIu64 " events to a full ring\n", i,
				x->engine->lines[i].counters.ring_drops);
			rc = 1;
		}
	if (output_close(x, err, sizeof(err)) < 0) {
		fprintf(stderr, "wb-export: %s\n", err);
		rc = 1;
	}
	if (!quiet)
		summary(x, "packets", src.ctr.packets, t0);
	if (!rc)
		rc = nothing_exported(x, argv[optind]);
	source_close(&src);
	exporter_destroy(x);
	return rc;
}
