/*
 * CQS (CTA Pillar binary output): every capture in pcaps/cqs/ field by field
 * against the values its bytes give (the spec's worked example; "notes:" cites
 * docs/specs/cqs-uqdf-notes.md), golden blocks built from the spec for the
 * message types without a capture (the 2018 v1.91 appendage example among
 * them), the whole National BBO Indicator table, units by trade date,
 * filtering, and malformed blocks.
 */
#include "feed_harness.h"
#include "wire/cqs.h"
#include "feed/raw.h"

#define PCAP_DIR "pcaps/cqs/"
#define NS 1000000000ull

static struct harness h;
static int line_a, line_b;

static void setup(void)
{
	harness_init(&h, HARNESS_RING_SLOTS);
	/* The captures' group, line 1 of a network: its own channel. */
	struct feed_map_entry a = { .ip = ipv4(224, 0, 203, 134), .port = 45007,
				    .protocol = FEED_PROTO_CQS, .venue = FEED_SOURCE_CQS,
				    .channel = 1, .name = "A" };
	struct feed_map_entry b = a;

	b.ip = ipv4(224, 0, 203, 135);
	b.name[0] = 'B';
	line_a = feed_map_add_entry(h.engine, &a);
	line_b = feed_map_add_entry(h.engine, &b);
	ck_assert_int_ge(line_a, 0);
	ck_assert_int_ge(line_b, 0);
}

static void teardown(void)
{
	harness_free(&h);
}

static const struct feed_counters *counters(int line)
{
	return &h.engine->lines[line].counters;
}

static void subscribe_all(void)
{
	ck_assert_int_eq(feed_subscribe(h.engine, "*", 1), 0);
}

/* ---- block builders (notes: CQS framing, CQS messages) -------------------- */

struct blk {
	uint8_t b[1500];
	size_t len;
	uint8_t count;
};

/* 2026-04-07 (after the change to shares) and 2018-04-02 (round lots), 10:00 ET. */
#define T2026 1775570400ull
#define T2018 1522677600ull

static void blk_start(struct blk *k)
{
	memset(k, 0, sizeof(*k));
	k->len = CQS_BLOCK_HEADER_LEN;
}

static uint16_t sum16(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i < len; i++)
		if (i != CQS_BLOCK_CHECKSUM && i != CQS_BLOCK_CHECKSUM + 1)
			s += p[i];
	return (uint16_t)s;
}

/* Header, pad byte and checksum; version 2 unless said. */
static void blk_finish_v(struct blk *k, uint8_t version, uint64_t seq, uint64_t sip_s,
			 uint32_t sip_ns)
{
	if (k->len & 1)
		k->b[k->len++] = 0;
	k->b[CQS_BLOCK_VERSION] = version;
	wire_put_be16(k->b + CQS_BLOCK_SIZE, k->len);
	k->b[CQS_BLOCK_FEED] = CQS_FEED_INDICATOR;
	k->b[CQS_BLOCK_RETRANSMISSION] = CQS_ORIGINAL;
	wire_put_be32(k->b + CQS_BLOCK_SEQUENCE, seq);
	k->b[CQS_BLOCK_MESSAGES] = k->count;
	wire_put_be32(k->b + CQS_BLOCK_SIP_TIME, sip_s);
	wire_put_be32(k->b + CQS_BLOCK_SIP_TIME + 4, sip_ns);
	wire_put_be16(k->b + CQS_BLOCK_CHECKSUM, sum16(k->b, k->len));
}

static void blk_finish(struct blk *k, uint64_t seq, uint64_t sip_s)
{
	blk_finish_v(k, 2, seq, sip_s, 500);
}

/* A message with its header; the body is zero. */
static uint8_t *blk_msg(struct blk *k, uint16_t len, char cat, char type, char participant,
			uint64_t ts_s, uint32_t ts_ns)
{
	uint8_t *m = k->b + k->len;

	memset(m, 0, len);
	wire_put_be16(m + CQS_MSG_LENGTH, len);
	m[CQS_MSG_CATEGORY] = (uint8_t)cat;
	m[CQS_MSG_TYPE] = (uint8_t)type;
	m[CQS_MSG_PARTICIPANT] = (uint8_t)participant;
	wire_put_be32(m + CQS_MSG_TIMESTAMP1, ts_s);
	wire_put_be32(m + CQS_MSG_TIMESTAMP1 + 4, ts_ns);
	m[CQS_MSG_ID] = ++k->count;
	k->len += len;
	return m;
}

/* A Long Quote body (notes: CQS messages): symbol, condition, status, prices (6 dp) and sizes. */
static uint8_t *long_quote(struct blk *k, uint16_t len, char participant, const char *symbol,
			   char cond, char status, uint64_t bid6, uint32_t bid_size, uint64_t ask6,
			   uint32_t ask_size, char nbbo, uint64_t ts_s)
{
	uint8_t *m = blk_msg(k, len, 'Q', 'L', participant, ts_s, 1000);

	put_text(m + CQS_SYMBOL, symbol, CQS_SYMBOL_LEN);
	m[CQS_LONG_INSTRUMENT_TYPE] = '0';
	m[CQS_LONG_CONDITION] = (uint8_t)cond;
	m[CQS_LONG_STATUS] = (uint8_t)status;
	wire_put_be64(m + CQS_LONG_BID_PRICE, bid6);
	wire_put_be32(m + CQS_LONG_BID_SIZE, bid_size);
	wire_put_be64(m + CQS_LONG_ASK_PRICE, ask6);
	wire_put_be32(m + CQS_LONG_ASK_SIZE, ask_size);
	/* retail interest, settlement, market condition, MMID, FINRA BBO: blank */
	memset(m + CQS_LONG_RETAIL_INTEREST, ' ', CQS_LONG_TIMESTAMP2 - CQS_LONG_RETAIL_INTEREST);
	m[CQS_LONG_SSR] = ' ';
	m[CQS_LONG_LISTING] = 'N';
	m[CQS_LONG_FSI] = '0';
	m[CQS_LONG_SIP_GENERATED] = ' ';
	m[CQS_LONG_LULD] = ' ';
	m[CQS_LONG_NBBO_LULD] = ' ';
	m[CQS_LONG_NBBO] = (uint8_t)nbbo;
	return m;
}

/* A long NBBO appendage (notes: CQS messages): participant, condition, price (6 dp), size, MMID. */
static void long_appendage(uint8_t *a, char participant, uint64_t price6, uint32_t size)
{
	a[CQS_APPENDAGE_PARTICIPANT] = (uint8_t)participant;
	a[CQS_LONG_APPENDAGE_CONDITION] = 'R';
	wire_put_be64(a + CQS_LONG_APPENDAGE_PRICE, price6);
	wire_put_be32(a + CQS_LONG_APPENDAGE_SIZE, size);
	memset(a + CQS_LONG_APPENDAGE_MMID, ' ', 4);
}

static void short_appendage(uint8_t *a, char participant, uint32_t cents, uint32_t size)
{
	a[CQS_APPENDAGE_PARTICIPANT] = (uint8_t)participant;
	wire_put_be16(a + CQS_SHORT_APPENDAGE_PRICE, cents);
	wire_put_be16(a + CQS_SHORT_APPENDAGE_SIZE, size);
}

static void feed(int line, const struct blk *k)
{
	harness_payload(&h, line, k->b, k->len);
}

static const struct wb_event *only(int kind)
{
	const struct wb_event *ev = harness_find(&h, kind, 0);

	ck_assert_msg(ev != NULL, "no event of kind %d", kind);
	ck_assert_uint_eq(harness_count(&h, kind), 1);
	return ev;
}

/* ---- the captures (pcaps/cqs, notes: Captures) ---------------------------- */

START_TEST(test_cqs_capture_long_quote_is_nyse_quote_and_nbbo_none)
{
	const struct wb_event *q, *n;

	subscribe_all();
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "Q_L_Long_Quote.pcap"), 1);
	/* Block: v2, 108 bytes, sequence 203, one message; the stream was joined late. */
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_CHECKSUM], 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 0);
	ck_assert_uint_eq(counters(line_a)->messages, 1);
	ck_assert_uint_eq(only(WB_EV_GAP)->u.gap.count, 203);
	ck_assert_uint_eq(harness_find(&h, WB_EV_GAP, 0)->u.gap.channel, 1);
	ck_assert_int_eq(memcmp(only(WB_EV_SYMBOL)->u.symbol.ticker, "LVWR.WS ", 8), 0);

	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_NYSE);		/* participant 'N' */
	ck_assert_uint_eq(q->seq, 203);
	ck_assert_uint_eq(q->side, 'R');			/* quote condition */
	ck_assert_uint_eq(q->exch_ts, 0x69d487afull * NS + 0x1166bbbd);	/* Timestamp 1 */
	ck_assert_uint_eq(q->u.quote.sip_ts, 0x69d4965cull * NS + 0x1cf3c849); /* block time */
	ck_assert_int_eq(q->u.quote.bid_price, 0);
	ck_assert_int_eq(q->u.quote.ask_price, 0);
	ck_assert_uint_eq(q->u.quote.bid_qty, 0);
	ck_assert_uint_eq(q->u.quote.ask_qty, 0);
	/* No quote on either side: neither may set the NBBO. */
	ck_assert_uint_eq(q->flags, WB_EVF_SIP | WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE);

	/* National BBO Indicator 'O': no best bid, no best offer. */
	n = only(WB_EV_NBBO);
	ck_assert_uint_eq(n->venue, FEED_SOURCE_CQS);
	ck_assert_uint_eq(n->exch_ts, q->u.quote.sip_ts);
	ck_assert_int_eq(n->u.nbbo.indicator, 'O');
	ck_assert_uint_eq(n->u.nbbo.sides, WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED);
	ck_assert_int_eq(n->u.nbbo.bid_price, 0);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, 0);
	ck_assert_uint_eq(n->u.nbbo.ask_qty, 0);
	ck_assert_uint_eq(n->flags, WB_EVF_SIP);
}
END_TEST

START_TEST(test_cqs_capture_symbol_reference_data_defines_round_lots)
{
	const struct wb_event *ev;

	subscribe_all();
	harness_pcap(&h, PCAP_DIR "A_S_Symbol_Reference_Data.pcap");
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 2);
	ev = harness_find(&h, WB_EV_SYMBOL, 0);
	ck_assert_int_eq(memcmp(ev->u.symbol.ticker, "JENA    ", 8), 0);
	ck_assert_uint_eq(ev->u.symbol.round_lot, 100);
	ck_assert_int_eq(ev->u.symbol.listing_market, 'N');
	ck_assert_uint_eq(ev->seq, 1);
	ck_assert_uint_eq(ev->exch_ts, 1775539800ull * NS + 108082);
	/* The rights suffix is lower case, as CQS writes it. */
	ev = harness_find(&h, WB_EV_SYMBOL, (size_t)(ev - h.events) + 1);
	ck_assert_int_eq(memcmp(ev->u.symbol.ticker, "JENAr   ", 8), 0);
	ck_assert_uint_eq(ev->seq, 2);
	ck_assert_uint_eq(counters(line_a)->messages, 2);
}
END_TEST

START_TEST(test_cqs_capture_start_of_day_restarts_the_line_at_zero)
{
	harness_pcap(&h, PCAP_DIR "C_A_Start_of_Day.pcap");
	/* Sequence 0 is the day's first: no gap, nothing else to say. */
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->messages, 1);
	ck_assert_uint_eq(counters(line_a)->ignored, 1);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
}
END_TEST

START_TEST(test_cqs_capture_line_integrity_names_the_last_sequence)
{
	harness_pcap(&h, PCAP_DIR "C_T_Line_Integrity.pcap");
	/* Block sequence 0 is the last sent (Start of Day, missed): next is 1. */
	ck_assert_uint_eq(counters(line_a)->heartbeats, 1);
	ck_assert_uint_eq(counters(line_a)->messages, 0);
	ck_assert_uint_eq(only(WB_EV_GAP)->u.gap.first, 0);
	ck_assert_uint_eq(only(WB_EV_GAP)->u.gap.count, 1);
}
END_TEST

START_TEST(test_cqs_capture_finra_open_and_close_are_finra_status)
{
	const struct wb_event *ev;

	harness_pcap(&h, PCAP_DIR "C_O_FINRA_Open.pcap");
	ev = only(WB_EV_STATUS);
	ck_assert_uint_eq(ev->venue, WB_VENUE_FINRA);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_OPEN);
	ck_assert_int_eq(ev->u.status.raw_state, 'O');
	ck_assert_uint_eq(ev->seq, 333675);
	ck_assert_uint_eq(ev->exch_ts, 1775563200ull * NS + 2147035);
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP);
	harness_free(&h);
	setup();
	harness_pcap(&h, PCAP_DIR "C_C_FINRA_Close.pcap");
	ev = only(WB_EV_STATUS);
	ck_assert_uint_eq(ev->venue, WB_VENUE_FINRA);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_CLOSED);
	ck_assert_uint_eq(ev->seq, 25835943);
	ck_assert_uint_eq(ev->exch_ts, 1775601000ull * NS + 1209209);
}
END_TEST

START_TEST(test_cqs_capture_end_of_day_closes_the_line)
{
	const struct wb_event *ev;

	harness_pcap(&h, PCAP_DIR "C_Z_End_of_Day.pcap");
	ev = only(WB_EV_STATUS);
	ck_assert_uint_eq(ev->venue, FEED_SOURCE_CQS);
	ck_assert_uint_eq(ev->instrument, 0);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_CLOSED);
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP | WB_EVF_SESSION_END);
	ck_assert_uint_eq(ev->seq, 25960321);
	ck_assert_uint_eq(ev->exch_ts, 1775606700ull * NS + 2939);
}
END_TEST

START_TEST(test_cqs_capture_mwcb_decline_levels_are_ignored_cleanly)
{
	harness_pcap(&h, PCAP_DIR "M_K_MWCB_Decline_Level_Status.pcap");
	/* 72-byte block: 20 + 51 + the pad byte; levels 6149.00, 5752.29, 5289.46. */
	ck_assert_uint_eq(counters(line_a)->messages, 1);
	ck_assert_uint_eq(counters(line_a)->ignored, 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_STATUS), 0);
}
END_TEST

START_TEST(test_cqs_every_capture_checksum_matches)
{
	static const char *const files[] = {
		"A_S_Symbol_Reference_Data.pcap", "C_A_Start_of_Day.pcap", "C_C_FINRA_Close.pcap",
		"C_O_FINRA_Open.pcap", "C_T_Line_Integrity.pcap", "C_Z_End_of_Day.pcap",
		"M_K_MWCB_Decline_Level_Status.pcap", "Q_L_Long_Quote.pcap",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), PCAP_DIR "%s", files[i]);
		harness_pcap(&h, path);
	}
	for (int e = 0; e < FEED_ERR_COUNT; e++)
		ck_assert_msg(counters(line_a)->errors[e] == 0, "error %s", feed_error_name(e));
	ck_assert_uint_eq(counters(line_a)->packets, 8);
}
END_TEST

/* ---- golden blocks from the spec ------------------------------------------------ */

/*
 * The 2018 v1.91 example (notes: Captures): block version 0, STOR bid 29.45 x 1,
 * offer 29.47 x 1, indicator U, NBB BZX 29.46 x 3, NBO BZX 29.47 x 2,
 * Message Length 123. 2018 sizes are round lots: 100 shares each.
 */
static void stor_2018(struct blk *k)
{
	uint8_t *m;

	blk_start(k);
	m = long_quote(k, 123, 'P', "STOR", 'R', ' ', 29450000, 1, 29470000, 1, 'U', T2018);
	long_appendage(m + 87, 'Z', 0x1c18620, 3);
	long_appendage(m + 105, 'Z', 0x1c1ad30, 2);
	blk_finish_v(k, 0, 77, T2018, 42);
}

START_TEST(test_cqs_v191_long_quote_with_long_appendages_2018_in_lots)
{
	const struct wb_event *q, *n;
	struct blk k;

	subscribe_all();
	stor_2018(&k);
	feed(line_a, &k);
	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_ARCA);
	ck_assert_int_eq(q->u.quote.bid_price, 2945000000);
	ck_assert_int_eq(q->u.quote.ask_price, 2947000000);
	ck_assert_uint_eq(q->u.quote.bid_qty, 100);
	ck_assert_uint_eq(q->u.quote.ask_qty, 100);
	ck_assert_uint_eq(q->flags, WB_EVF_SIP);
	n = only(WB_EV_NBBO);
	ck_assert_int_eq(n->u.nbbo.indicator, 'U');
	ck_assert_int_eq(n->u.nbbo.bid_price, 2946000000);	/* 0x1c18620 = 29460000 */
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 300);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_BZX);
	ck_assert_int_eq(n->u.nbbo.ask_price, 2947000000);
	ck_assert_uint_eq(n->u.nbbo.ask_qty, 200);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_BZX);
	ck_assert_int_eq(n->u.nbbo.condition, 'R');
	ck_assert_uint_eq(n->exch_ts, T2018 * NS + 42);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_CHECKSUM], 0);
}
END_TEST

START_TEST(test_cqs_block_versions_0_1_2_decode_alike)
{
	for (uint8_t v = 0; v <= 2; v++) {
		struct blk k;

		harness_free(&h);
		setup();
		subscribe_all();
		stor_2018(&k);
		blk_finish_v(&k, v, 77, T2018, 42);
		feed(line_a, &k);
		ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
		ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 1);
	}
}
END_TEST

START_TEST(test_cqs_short_quote_with_short_appendages_in_shares_since_2025)
{
	const struct wb_event *q, *n;
	struct blk k;
	uint8_t *m;

	subscribe_all();
	blk_start(&k);
	m = blk_msg(&k, 41 + 10, 'Q', 'Q', 'K', T2026, 5);
	put_text(m + 26, "IBM", 5);
	wire_put_be16(m + 31, 25012);	/* 250.12 */
	wire_put_be16(m + 33, 300);
	wire_put_be16(m + 35, 25015);
	wire_put_be16(m + 37, 200);
	m[39] = 'N';
	m[40] = 'T';
	short_appendage(m + 41, 'N', 25013, 500);
	short_appendage(m + 46, 'Z', 25014, 700);
	blk_finish(&k, 5, T2026);
	feed(line_a, &k);
	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_EDGX);
	ck_assert_int_eq(q->side, 'R');		/* implied regular */
	ck_assert_int_eq(q->u.quote.bid_price, 25012000000);
	ck_assert_uint_eq(q->u.quote.bid_qty, 300);	/* shares, as sent */
	ck_assert_uint_eq(q->u.quote.ask_qty, 200);
	n = only(WB_EV_NBBO);
	ck_assert_int_eq(n->u.nbbo.bid_price, 25013000000);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_NYSE);
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 500);
	ck_assert_int_eq(n->u.nbbo.ask_price, 25014000000);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_BZX);
	ck_assert_uint_eq(n->u.nbbo.ask_qty, 700);
	ck_assert_int_eq(n->u.nbbo.condition, 0);
}
END_TEST

/* Each code of the National BBO Indicator: the appendages it announces are read. */
START_TEST(test_cqs_every_nbbo_indicator_code_reads_its_appendages)
{
	/* bid, offer: 0 unchanged, 1 quote, 2 none, 3 short, 4 long
	 * (notes: CQS NBBO indicator / OMI v2.10a) */
	static const char codes[] = "ABCDEFGHIJKLMNOPQRSTUVW";
	static const uint8_t bid[] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 4, 3, 4, 3, 4, 3, 4 };
	static const uint8_t off[] = { 0, 1, 3, 4, 2, 0, 1, 3, 4, 2, 0, 1, 3, 4, 2, 0, 0, 1, 1, 3, 4, 2, 2 };
	static const uint16_t app[] = { 0, 0, 0, 5, 18 };

	for (int i = 0; codes[i]; i++) {
		uint16_t len = (uint16_t)(87 + app[bid[i]] + app[off[i]]);
		const struct wb_event *n;
		struct blk k;
		uint8_t *m, *a;

		harness_free(&h);
		setup();
		subscribe_all();
		blk_start(&k);
		m = long_quote(&k, len, 'N', "XYZ", 'R', ' ', 10000000, 100, 10100000, 200, codes[i],
			       T2026);
		a = m + 87;
		if (bid[i] == 3)
			short_appendage(a, 'P', 1001, 10), a += 5;
		if (bid[i] == 4)
			long_appendage(a, 'P', 10010000, 10), a += 18;
		if (off[i] == 3)
			short_appendage(a, 'Z', 1009, 20);
		if (off[i] == 4)
			long_appendage(a, 'Z', 10090000, 20);
		blk_finish(&k, 9, T2026);
		feed(line_a, &k);
		ck_assert_msg(counters(line_a)->errors[FEED_ERR_BAD_LENGTH] == 0, "code %c", codes[i]);
		ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
		if (codes[i] == 'A') {
			ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 0);
			continue;
		}
		n = only(WB_EV_NBBO);
		ck_assert_int_eq(n->u.nbbo.indicator, codes[i]);
		/* Nothing known before: an unchanged side is unknown. */
		ck_assert_msg(!!(n->u.nbbo.sides & WB_NBBO_BID_STATED) == (bid[i] != 0), "%c", codes[i]);
		ck_assert_msg(!!(n->u.nbbo.sides & WB_NBBO_BID_UNKNOWN) == (bid[i] == 0), "%c", codes[i]);
		ck_assert_msg(!!(n->u.nbbo.sides & WB_NBBO_ASK_STATED) == (off[i] != 0), "%c", codes[i]);
		if (bid[i] == 1)
			ck_assert(n->u.nbbo.bid_price == 1000000000 && n->u.nbbo.bid_venue == WB_VENUE_NYSE &&
				  n->u.nbbo.bid_qty == 100);
		if (bid[i] >= 3)
			ck_assert(n->u.nbbo.bid_price == 1001000000 && n->u.nbbo.bid_venue == WB_VENUE_ARCA &&
				  n->u.nbbo.bid_qty == 10);
		if (bid[i] == 2)
			ck_assert(n->u.nbbo.bid_price == 0 && n->u.nbbo.bid_qty == 0);
		if (off[i] == 1)
			ck_assert(n->u.nbbo.ask_price == 1010000000 && n->u.nbbo.ask_qty == 200);
		if (off[i] >= 3)
			ck_assert(n->u.nbbo.ask_price == 1009000000 && n->u.nbbo.ask_venue == WB_VENUE_BZX &&
				  n->u.nbbo.ask_qty == 20);
	}
}
END_TEST

START_TEST(test_cqs_unchanged_side_repeats_the_last_nbbo_until_a_gap)
{
	const struct wb_event *n;
	struct blk k;
	uint8_t *m;

	subscribe_all();
	stor_2018(&k);		/* U: NBB 29.46 x 300 BZX, NBO 29.47 x 200 BZX, at 77 */
	feed(line_a, &k);
	blk_start(&k);
	/* C: the bid did not change; a new NBO from a short appendage. */
	m = long_quote(&k, 87 + 5, 'N', "STOR", 'R', ' ', 29400000, 2, 29480000, 1, 'C', T2018);
	short_appendage(m + 87, 'N', 2948, 1);
	blk_finish_v(&k, 0, 78, T2018, 43);
	feed(line_a, &k);
	n = harness_find(&h, WB_EV_NBBO, 0);
	n = harness_find(&h, WB_EV_NBBO, (size_t)(n - h.events) + 1);
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->u.nbbo.indicator, 'C');
	ck_assert_uint_eq(n->u.nbbo.sides, WB_NBBO_ASK_STATED);
	ck_assert_int_eq(n->u.nbbo.bid_price, 2946000000);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_BZX);
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 300);
	ck_assert_int_eq(n->u.nbbo.ask_price, 2948000000);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_NYSE);
	/* A gap: the bid the next message leaves unchanged is no longer known. */
	blk_start(&k);
	m = long_quote(&k, 87, 'N', "STOR", 'R', ' ', 29400000, 2, 29470000, 1, 'B', T2018);
	blk_finish_v(&k, 0, 90, T2018, 44);
	feed(line_a, &k);
	feed(line_b, &k);	/* B saw nothing in between either */
	feed_engine_flush(h.engine, &h.prod);
	harness_drain(&h);
	/* The late join before 77, and 79..89. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 2);
	n = &h.events[h.n - 1];
	ck_assert_uint_eq(n->kind, WB_EV_NBBO);
	ck_assert_uint_eq(n->u.nbbo.sides, WB_NBBO_BID_UNKNOWN | WB_NBBO_ASK_STATED);
	ck_assert_int_eq(n->u.nbbo.bid_price, 0);
	ck_assert_int_eq(n->u.nbbo.ask_price, 2947000000);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_NYSE);
}
END_TEST

START_TEST(test_cqs_finra_special_quote_is_finra_bbo)
{
	const struct wb_event *q;
	struct blk k;
	uint8_t *m;

	subscribe_all();
	blk_start(&k);
	m = blk_msg(&k, 120, 'Q', 'S', 'D', T2026, 9);
	put_text(m + 26, "GE", 11);
	m[37] = '0';
	m[38] = 'R';
	m[39] = ' ';
	wire_put_be64(m + 40, 150000000);	/* the market maker's own quote */
	wire_put_be32(m + 48, 100);
	wire_put_be64(m + 52, 151000000);
	wire_put_be32(m + 60, 100);
	memcpy(m + 67, "MMAA", 4);
	m[71] = 'R';			/* FINRA best bid */
	wire_put_be64(m + 72, 150100000);
	wire_put_be32(m + 80, 400);
	memcpy(m + 84, "MMBB", 4);
	m[88] = 'C';			/* FINRA best offer: not eligible */
	wire_put_be64(m + 89, 150900000);
	wire_put_be32(m + 97, 600);
	memcpy(m + 101, "MMCC", 4);
	memset(m + 113, ' ', 7);
	m[119] = 'A';
	blk_finish(&k, 3, T2026);
	feed(line_a, &k);
	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_FINRA);
	ck_assert_int_eq(q->u.quote.bid_price, 15010000000);
	ck_assert_uint_eq(q->u.quote.bid_qty, 400);
	ck_assert_int_eq(q->u.quote.ask_price, 15090000000);
	ck_assert_uint_eq(q->u.quote.ask_qty, 600);
	ck_assert_uint_eq(q->flags, WB_EVF_SIP | WB_EVF_ASK_INELIGIBLE);
	ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 0);
}
END_TEST

START_TEST(test_cqs_finra_long_quote_follows_the_finra_bbo_indicator)
{
	struct blk k;
	uint8_t *m;

	subscribe_all();
	/* A: one market maker's quote, FINRA's BBO unchanged: no venue quote. */
	blk_start(&k);
	m = long_quote(&k, 87, 'D', "GE", 'R', ' ', 150000000, 100, 151000000, 100, 'A', T2026);
	m[71] = 'A';
	/* B: there is no FINRA BBO: FINRA's venue quote is empty. */
	m = long_quote(&k, 87, 'D', "GE", 'R', ' ', 150000000, 100, 151000000, 100, 'A', T2026);
	m[71] = 'B';
	blk_finish(&k, 3, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(only(WB_EV_QUOTE)->seq, 4);
	ck_assert_uint_eq(only(WB_EV_QUOTE)->u.quote.bid_qty, 0);
	ck_assert_int_eq(only(WB_EV_QUOTE)->u.quote.ask_price, 0);
	ck_assert_uint_eq(counters(line_a)->ignored, 1);
}
END_TEST

START_TEST(test_cqs_conditions_and_luld_indicator_set_ineligible_sides)
{
	static const struct {
		char cond, luld;
		uint8_t flags;
	} cases[] = {
		{ 'R', ' ', 0 }, { 'W', ' ', 0 }, { 'O', ' ', 0 },
		{ 'E', ' ', WB_EVF_BID_INELIGIBLE }, { 'F', ' ', WB_EVF_ASK_INELIGIBLE },
		{ 'C', ' ', WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE },
		{ '4', ' ', WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE },
		{ 'R', 'A', WB_EVF_BID_INELIGIBLE }, { 'R', 'B', WB_EVF_ASK_INELIGIBLE },
	};
	struct blk k;

	subscribe_all();
	blk_start(&k);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *m = long_quote(&k, 87, 'N', "IBM", cases[i].cond, ' ', 10000000, 1,
					10100000, 1, 'A', T2026);

		m[84] = (uint8_t)cases[i].luld;
	}
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), sizeof(cases) / sizeof(cases[0]));
	for (size_t i = 0, j = 0; i < h.n; i++) {
		if (h.events[i].kind != WB_EV_QUOTE)
			continue;
		ck_assert_msg(h.events[i].flags == (WB_EVF_SIP | cases[j].flags), "case %zu", j);
		ck_assert_int_eq(h.events[i].side, cases[j].cond);
		j++;
	}
}
END_TEST

START_TEST(test_cqs_security_status_is_status_and_luld_band)
{
	const struct wb_event *ev;
	struct blk k;

	subscribe_all();
	blk_start(&k);
	/* A LULD band from the SIP: bid = lower band, offer = upper band. */
	long_quote(&k, 87, 'S', "IBM", ' ', '0', 9500000, 0, 10500000, 0, ' ', T2026);
	/* NYSE pauses IBM (LULD): a status, and its quote leaves the NBBO. */
	long_quote(&k, 87, 'N', "IBM", ' ', 'M', 0, 0, 0, 0, ' ', T2026);
	/* A market-wide circuit breaker halt (level 2) reported in a quote. */
	long_quote(&k, 87, 'N', "IBM", ' ', '2', 0, 0, 0, 0, ' ', T2026);
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ev = only(WB_EV_LULD);
	ck_assert_uint_eq(ev->venue, FEED_SOURCE_CQS);
	ck_assert_int_eq(ev->u.luld.lower, 950000000);
	ck_assert_int_eq(ev->u.luld.upper, 1050000000);
	ck_assert_int_eq(ev->u.luld.indicator, '0');
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP);
	ck_assert_uint_eq(harness_count(&h, WB_EV_STATUS), 2);
	ev = harness_find(&h, WB_EV_STATUS, 0);
	ck_assert_uint_eq(ev->venue, WB_VENUE_NYSE);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_PAUSED);
	ck_assert_int_eq(ev->u.status.raw_state, 'M');
	ev = harness_find(&h, WB_EV_STATUS, (size_t)(ev - h.events) + 1);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED);
	ck_assert_int_eq(memcmp(ev->u.status.reason, "MWC2", 4), 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->flags,
			  WB_EVF_SIP | WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE);
}
END_TEST

START_TEST(test_cqs_mwcb_status_halts_the_market)
{
	const struct wb_event *ev;
	struct blk k;

	blk_start(&k);
	blk_msg(&k, 28, 'M', 'L', 'S', T2026, 1)[26] = '1';
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ev = only(WB_EV_STATUS);
	ck_assert_uint_eq(ev->instrument, 0);
	ck_assert_uint_eq(ev->venue, FEED_SOURCE_CQS);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED);
	ck_assert_int_eq(memcmp(ev->u.status.reason, "MWC1", 4), 0);
}
END_TEST

START_TEST(test_cqs_auction_status_and_admin_text_are_ignored)
{
	struct blk k;

	subscribe_all();
	blk_start(&k);
	put_text(blk_msg(&k, 128, 'Q', 'A', 'N', T2026, 1) + 26, "IBM", 11);
	blk_msg(&k, 40, 'A', 'H', 'S', T2026, 1);	/* v1.91 unformatted text */
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(counters(line_a)->ignored, 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 0);
}
END_TEST

/* ---- units ------------------------------------------------------------------------ */

START_TEST(test_cqs_lots_before_2025_11_03_are_round_lots_of_the_directory)
{
	struct blk k;
	uint8_t *m;

	subscribe_all();
	/* A directory entry with a round lot of 10, then a 2018 quote of 3 x 7 lots. */
	blk_start(&k);
	m = blk_msg(&k, 209, 'A', 'S', 'S', T2018, 0);
	put_text(m + 26, "BRK.A", 11);
	wire_put_be16(m + 65, 10);
	long_quote(&k, 87, 'N', "BRK.A", 'R', ' ', 700000000000, 3, 700100000000, 7, 'A', T2018);
	/* The same quote on the day the sizes became shares, and the day before. */
	long_quote(&k, 87, 'N', "BRK.A", 'R', ' ', 700000000000, 3, 700100000000, 7, 'A',
		   1762146000);
	blk_finish(&k, 1, T2018);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_find(&h, WB_EV_SYMBOL, 0)->u.symbol.round_lot, 10);
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->u.quote.bid_qty, 30);
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->u.quote.ask_qty, 70);
	/* The unit follows the block's SIP time, 2018 here, for both. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	blk_start(&k);
	long_quote(&k, 87, 'N', "BRK.A", 'R', ' ', 700000000000, 3, 700100000000, 7, 'A',
		   1762146000);
	blk_finish(&k, 4, 1762146000);	/* 2025-11-03 00:00 ET */
	feed(line_a, &k);
	ck_assert_uint_eq(h.events[h.n - 1].u.quote.bid_qty, 3);
	blk_start(&k);
	long_quote(&k, 87, 'N', "BRK.A", 'R', ' ', 700000000000, 3, 700100000000, 7, 'A',
		   1762145999);
	blk_finish(&k, 5, 1762145999);	/* a second before */
	feed(line_a, &k);
	ck_assert_uint_eq(h.events[h.n - 1].u.quote.bid_qty, 30);
}
END_TEST

/* ---- filtering ----------------------------------------------------------------------- */

START_TEST(test_cqs_filter_keeps_suffix_case_and_counts_the_rest)
{
	struct blk k;

	ck_assert_int_gt(feed_subscribe(h.engine, "BACpB", 5), 0);
	blk_start(&k);
	long_quote(&k, 87, 'N', "BACpB", 'R', ' ', 20000000, 1, 20010000, 1, 'A', T2026);
	long_quote(&k, 87, 'N', "BACPB", 'R', ' ', 20000000, 1, 20010000, 1, 'A', T2026);
	long_quote(&k, 87, 'N', "BAC", 'R', ' ', 20000000, 1, 20010000, 1, 'A', T2026);
	/* A symbol longer than a ticker key (8) can never be subscribed. */
	long_quote(&k, 87, 'N', "ABCDEFGHI.W", 'R', ' ', 20000000, 1, 20010000, 1, 'A', T2026);
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(only(WB_EV_QUOTE)->seq, 1);
	ck_assert_uint_eq(counters(line_a)->filtered, 3);
}
END_TEST

/* ---- sequencing ------------------------------------------------------------------- */

START_TEST(test_cqs_ab_copies_of_a_block_are_one)
{
	struct blk k;

	subscribe_all();
	stor_2018(&k);
	feed(line_a, &k);
	feed(line_b, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
	ck_assert_uint_eq(counters(line_b)->duplicates, 1);
}
END_TEST

START_TEST(test_cqs_reset_block_sequence_number_restarts_without_gap)
{
	struct blk k;

	subscribe_all();
	stor_2018(&k);		/* sequence 77 */
	feed(line_a, &k);
	blk_start(&k);
	blk_msg(&k, 26, 'C', 'L', 'S', T2018, 0);
	blk_finish(&k, 5000, T2018);
	feed(line_a, &k);
	blk_start(&k);
	long_quote(&k, 87, 'N', "STOR", 'R', ' ', 29400000, 2, 29480000, 1, 'A', T2018);
	blk_finish(&k, 5001, T2018);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);	/* only the late join */
	ck_assert_uint_eq(harness_count(&h, WB_EV_CLEAR), 1);
	ck_assert_uint_eq(harness_find(&h, WB_EV_CLEAR, 0)->flags, WB_EVF_SIP | WB_EVF_SESSION_END);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
}
END_TEST

START_TEST(test_cqs_end_of_day_then_start_of_day_is_a_new_day)
{
	struct blk k;

	subscribe_all();
	stor_2018(&k);
	feed(line_a, &k);
	blk_start(&k);
	blk_msg(&k, 26, 'C', 'Z', 'S', T2018, 0);
	blk_finish(&k, 78, T2018);
	feed(line_a, &k);
	blk_start(&k);
	blk_msg(&k, 26, 'C', 'A', 'S', T2018 + 86400, 0);
	blk_finish(&k, 0, T2018 + 86400);
	feed(line_a, &k);
	blk_start(&k);
	long_quote(&k, 87, 'N', "STOR", 'R', ' ', 29400000, 2, 29480000, 1, 'A', T2018 + 86400);
	blk_finish(&k, 1, T2018 + 86400);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_CLEAR), 1);
}
END_TEST

/* ---- malformed blocks ---------------------------------------------------------------- */

static void expect_only_error(int line, int err, uint64_t n)
{
	for (int e = 0; e < FEED_ERR_COUNT; e++)
		ck_assert_msg(counters(line)->errors[e] == (e == err ? n : 0), "%s: %" PRIu64,
			      feed_error_name(e), counters(line)->errors[e]);
}

START_TEST(test_cqs_bad_checksum_drops_the_block)
{
	struct blk k;

	subscribe_all();
	stor_2018(&k);
	k.b[60] ^= 0x01;	/* one bit of the message, checksum left as it was */
	feed(line_a, &k);
	ck_assert_uint_eq(h.n, 0);
	expect_only_error(line_a, FEED_ERR_BAD_CHECKSUM, 1);
	stor_2018(&k);
	k.b[19] ^= 0x80;	/* the checksum itself */
	feed(line_a, &k);
	ck_assert_uint_eq(h.n, 0);
	expect_only_error(line_a, FEED_ERR_BAD_CHECKSUM, 2);
}
END_TEST

START_TEST(test_cqs_retransmissions_and_snapshots_are_not_decoded)
{
	struct blk k;

	subscribe_all();
	stor_2018(&k);
	k.b[4] = 'V';
	blk_finish_v(&k, 0, 77, T2018, 42);
	k.b[4] = 'V';
	wire_put_be16(k.b + 18, sum16(k.b, k.len));
	feed(line_a, &k);
	stor_2018(&k);
	k.b[0] = 11;
	feed(line_a, &k);
	ck_assert_uint_eq(h.n, 0);
	expect_only_error(line_a, FEED_ERR_RECOVERY, 2);
}
END_TEST

START_TEST(test_cqs_block_size_other_than_the_datagram)
{
	struct blk k;
	uint8_t big[1600];

	subscribe_all();
	/* Longer datagram: the block is decoded, the surplus counted. */
	stor_2018(&k);
	memcpy(big, k.b, k.len);
	memset(big + k.len, 0xee, 10);
	harness_payload(&h, line_a, big, k.len + 10);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
	expect_only_error(line_a, FEED_ERR_BAD_LENGTH, 1);
	/* Shorter datagram: the block is truncated, nothing decoded. */
	harness_payload(&h, line_b, k.b, k.len - 3);
	expect_only_error(line_b, FEED_ERR_TRUNCATED, 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
}
END_TEST

START_TEST(test_cqs_message_length_past_the_block_is_truncated)
{
	struct blk k;

	subscribe_all();
	blk_start(&k);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	wire_put_be16(k.b + 20 + 87, 300);	/* the second claims more than the block has */
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
	expect_only_error(line_a, FEED_ERR_TRUNCATED, 1);
}
END_TEST

START_TEST(test_cqs_message_count_that_disagrees_is_counted)
{
	struct blk k;

	subscribe_all();
	blk_start(&k);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	k.count = 1;	/* says one, holds two */
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
	expect_only_error(line_a, FEED_ERR_BAD_COUNT, 1);
	/* Says three, holds two: the third runs past the end. */
	blk_start(&k);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	k.count = 3;
	blk_finish(&k, 1, T2026);
	feed(line_b, &k);
	expect_only_error(line_b, FEED_ERR_TRUNCATED, 1);
}
END_TEST

START_TEST(test_cqs_unknown_category_or_type_is_skipped_by_length)
{
	struct blk k;

	subscribe_all();
	blk_start(&k);
	blk_msg(&k, 40, 'X', 'Y', 'N', T2026, 0);
	blk_msg(&k, 30, 'Q', 'Z', 'N', T2026, 0);
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(only(WB_EV_QUOTE)->seq, 3);
	expect_only_error(line_a, FEED_ERR_UNKNOWN_TYPE, 2);
}
END_TEST

START_TEST(test_cqs_lengths_that_lie_emit_nothing_wrong)
{
	struct blk k;
	uint8_t *m;

	subscribe_all();
	blk_start(&k);
	/* U announces 36 bytes of appendages the message length does not hold. */
	long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'U', T2026);
	/* Shorter than a Long Quote. */
	blk_msg(&k, 60, 'Q', 'L', 'N', T2026, 0);
	/* Shorter than the message header. */
	blk_msg(&k, 10, 'Q', 'L', 'N', T2026, 0);
	/* An unknown participant. */
	long_quote(&k, 87, '?', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	/* A price past int64 in 1e-8. */
	m = long_quote(&k, 87, 'N', "IBM", 'R', ' ', 1, 1, 2, 1, 'A', T2026);
	wire_put_be64(m + 40, 0xffffffffffffffffull);
	blk_finish(&k, 1, T2026);
	feed(line_a, &k);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 3);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 2);
	/* A length of 2 cannot be advanced past: the block ends there. */
	blk_start(&k);
	blk_msg(&k, 26, 'C', 'P', 'S', T2026, 0);
	wire_put_be16(k.b + 20, 2);
	blk_finish(&k, 6, T2026);
	feed(line_b, &k);
	ck_assert_uint_eq(counters(line_b)->errors[FEED_ERR_BAD_LENGTH], 1);
}
END_TEST

/*
 * Regression (found by fuzz_cqs): a quote shorter than its type had its
 * NBBO indicator and status read before the length check, past the end of
 * the datagram. Here the message ends the buffer exactly.
 */
START_TEST(test_cqs_short_finra_quote_at_the_end_of_the_datagram_reads_nothing_past_it)
{
	static const char types[] = { 'S', 'L', 'Q' };

	subscribe_all();
	for (size_t i = 0; i < sizeof(types); i++) {
		struct blk k;
		uint8_t *copy;

		blk_start(&k);
		put_text(blk_msg(&k, 30, 'Q', types[i], 'N', T2026, 0) + 26, "IBM", 4);
		blk_finish(&k, 1 + i, T2026);
		copy = malloc(k.len);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, k.b, k.len);
		harness_payload(&h, line_a, copy, k.len);
		free(copy);
	}
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 0);
}
END_TEST

START_TEST(test_cqs_block_header_errors)
{
	struct blk k;

	stor_2018(&k);
	harness_payload(&h, line_a, k.b, 12);		/* shorter than a header */
	stor_2018(&k);
	k.b[3] = 'T';					/* CTS, not CQS */
	wire_put_be16(k.b + 18, sum16(k.b, k.len));
	harness_payload(&h, line_a, k.b, k.len);
	stor_2018(&k);
	k.b[0] = 3;					/* no such version */
	harness_payload(&h, line_a, k.b, k.len);
	stor_2018(&k);
	k.b[9] = 0;					/* no messages */
	wire_put_be16(k.b + 18, sum16(k.b, k.len));
	harness_payload(&h, line_a, k.b, k.len);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 2);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 1);
}
END_TEST

/* ---- the raw view ---------------------------------------------------------------------- */

START_TEST(test_cqs_raw_layouts_cover_every_known_message)
{
	static const char *const types[] = { "QL", "QQ", "QS", "QA", "AS", "AH", "MK", "MM", "ML",
					     "CA", "CC", "CL", "CO", "CP", "CT", "CZ", "CM", "CN" };
	uint8_t m[256] = { 0 };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct feed_msg_layout *l;

		m[2] = (uint8_t)types[i][0];
		m[3] = (uint8_t)types[i][1];
		l = feed_raw_layout(FEED_PROTO_CQS, m, sizeof(m));
		ck_assert_msg(l != NULL, "%s", types[i]);
		for (int f = 0; f < l->nfields; f++)
			ck_assert_msg(l->fields[f].offset + l->fields[f].width <= l->min_len, "%s %s",
				      types[i], l->fields[f].name);
	}
	m[2] = 'Q';
	m[3] = 'X';
	ck_assert_ptr_null(feed_raw_layout(FEED_PROTO_CQS, m, sizeof(m)));
}
END_TEST

static Suite *cqs_suite(void)
{
	Suite *s = suite_create("cqs");
	TCase *caps = tcase_create("captures"), *gold = tcase_create("golden"),
	      *seq = tcase_create("sequencing"), *bad = tcase_create("malformed");

	tcase_add_checked_fixture(caps, setup, teardown);
	tcase_add_test(caps, test_cqs_capture_long_quote_is_nyse_quote_and_nbbo_none);
	tcase_add_test(caps, test_cqs_capture_symbol_reference_data_defines_round_lots);
	tcase_add_test(caps, test_cqs_capture_start_of_day_restarts_the_line_at_zero);
	tcase_add_test(caps, test_cqs_capture_line_integrity_names_the_last_sequence);
	tcase_add_test(caps, test_cqs_capture_finra_open_and_close_are_finra_status);
	tcase_add_test(caps, test_cqs_capture_end_of_day_closes_the_line);
	tcase_add_test(caps, test_cqs_capture_mwcb_decline_levels_are_ignored_cleanly);
	tcase_add_test(caps, test_cqs_every_capture_checksum_matches);
	suite_add_tcase(s, caps);

	tcase_add_checked_fixture(gold, setup, teardown);
	tcase_add_test(gold, test_cqs_v191_long_quote_with_long_appendages_2018_in_lots);
	tcase_add_test(gold, test_cqs_block_versions_0_1_2_decode_alike);
	tcase_add_test(gold, test_cqs_short_quote_with_short_appendages_in_shares_since_2025);
	tcase_add_test(gold, test_cqs_every_nbbo_indicator_code_reads_its_appendages);
	tcase_add_test(gold, test_cqs_unchanged_side_repeats_the_last_nbbo_until_a_gap);
	tcase_add_test(gold, test_cqs_finra_special_quote_is_finra_bbo);
	tcase_add_test(gold, test_cqs_finra_long_quote_follows_the_finra_bbo_indicator);
	tcase_add_test(gold, test_cqs_conditions_and_luld_indicator_set_ineligible_sides);
	tcase_add_test(gold, test_cqs_security_status_is_status_and_luld_band);
	tcase_add_test(gold, test_cqs_mwcb_status_halts_the_market);
	tcase_add_test(gold, test_cqs_auction_status_and_admin_text_are_ignored);
	tcase_add_test(gold, test_cqs_lots_before_2025_11_03_are_round_lots_of_the_directory);
	tcase_add_test(gold, test_cqs_filter_keeps_suffix_case_and_counts_the_rest);
	tcase_add_test(gold, test_cqs_raw_layouts_cover_every_known_message);
	tcase_set_timeout(gold, 60);
	suite_add_tcase(s, gold);

	tcase_add_checked_fixture(seq, setup, teardown);
	tcase_add_test(seq, test_cqs_ab_copies_of_a_block_are_one);
	tcase_add_test(seq, test_cqs_reset_block_sequence_number_restarts_without_gap);
	tcase_add_test(seq, test_cqs_end_of_day_then_start_of_day_is_a_new_day);
	suite_add_tcase(s, seq);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_test(bad, test_cqs_bad_checksum_drops_the_block);
	tcase_add_test(bad, test_cqs_retransmissions_and_snapshots_are_not_decoded);
	tcase_add_test(bad, test_cqs_block_size_other_than_the_datagram);
	tcase_add_test(bad, test_cqs_message_length_past_the_block_is_truncated);
	tcase_add_test(bad, test_cqs_message_count_that_disagrees_is_counted);
	tcase_add_test(bad, test_cqs_unknown_category_or_type_is_skipped_by_length);
	tcase_add_test(bad, test_cqs_lengths_that_lie_emit_nothing_wrong);
	tcase_add_test(bad, test_cqs_block_header_errors);
	tcase_add_test(bad, test_cqs_short_finra_quote_at_the_end_of_the_datagram_reads_nothing_past_it);
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cqs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
