/*
 * UQDF (UTP binary over MoldUDP64): every capture in pcaps/uqdf/ field by field
 * against the values its bytes give (the spec's worked examples; "notes:" cites
 * docs/specs/cqs-uqdf-notes.md), golden messages built from the spec for the
 * types without a capture (the April 2026 odd-lot forms among them), units by
 * trade date, and malformed messages.
 */
#include "feed_harness.h"
#include "wire/uqdf.h"
#include "feed/raw.h"

#define PCAP_DIR "pcaps/uqdf/"
#define SESSION "000007527Q"

static struct harness h;
static int line_a, line_b;

static void setup(void)
{
	harness_init(&h, HARNESS_RING_SLOTS);
	line_a = feed_map_add(h.engine, ipv4(233, 46, 176, 16), 55630, FEED_PROTO_UQDF,
			      FEED_SOURCE_UQDF, "A");
	line_b = feed_map_add(h.engine, ipv4(233, 46, 176, 17), 55630, FEED_PROTO_UQDF,
			      FEED_SOURCE_UQDF, "B");
	ck_assert_int_ge(line_a, 0);
	ck_assert_int_ge(line_b, 0);
	ck_assert_int_eq(feed_subscribe(h.engine, "*", 1), 0);
}

static void teardown(void)
{
	harness_free(&h);
}

static const struct feed_counters *counters(int line)
{
	return &h.engine->lines[line].counters;
}

static const struct wb_event *only(int kind)
{
	const struct wb_event *ev = harness_find(&h, kind, 0);

	ck_assert_msg(ev != NULL, "no event of kind %d", kind);
	ck_assert_uint_eq(harness_count(&h, kind), 1);
	return ev;
}

/* ---- packet builders ------------------------------------------------------------ */

struct pkt {
	uint8_t b[2048];
	size_t len;
	uint16_t count;
};

/* 2026-05-04 10:00 ET (odd-lot era, shares) and 2016-09-15 13:26 ET (lots). */
#define T2026 1777903200000000000ull
#define T2016 1473960417922876842ull

static void pkt_start(struct pkt *p, uint64_t seq)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b + MOLD_SESSION, SESSION, MOLD_SESSION_LEN);
	wire_put_be64(p->b + MOLD_SEQUENCE, seq);
	p->len = MOLD_HEADER_LEN;
}

/* A UTP message: its header (version '1'); the body zeroed. */
static uint8_t *msg(struct pkt *p, uint16_t len, char cat, char type, char orig, uint64_t sip_ts)
{
	uint8_t *m = p->b + p->len + MOLD_BLOCK_LENGTH_LEN;

	wire_put_be16(p->b + p->len, len);
	memset(m, 0, len);
	m[UQDF_VERSION_BYTE] = UQDF_VERSION;
	m[UQDF_CATEGORY] = (uint8_t)cat;
	m[UQDF_TYPE] = (uint8_t)type;
	m[UQDF_ORIGINATOR] = (uint8_t)orig;
	m[UQDF_SUB_MARKET] = ' ';
	wire_put_be64(m + UQDF_SIP_TIME, sip_ts);
	wire_put_be64(m + UQDF_TIMESTAMP1, sip_ts - 1000);
	p->len += MOLD_BLOCK_LENGTH_LEN + len;
	wire_put_be16(p->b + MOLD_COUNT, ++p->count);
	return m;
}

static void send_a(const struct pkt *p)
{
	harness_payload(&h, line_a, p->b, p->len);
}

/* A Quote Long Form (notes: UQDF quotes) with its fields; extra = bytes of parts after it. */
static uint8_t *qf(struct pkt *p, char type, uint16_t body, uint16_t extra, char orig,
		   const char *symbol, uint64_t bid6, uint32_t bid_size, uint64_t ask6,
		   uint32_t ask_size, char cond, char nbbo, uint64_t sip_ts)
{
	uint8_t *m = msg(p, (uint16_t)(body + extra), 'Q', type, orig, sip_ts);

	put_text(m + UQDF_QF_SYMBOL, symbol, UQDF_SYMBOL_LEN);
	wire_put_be64(m + UQDF_QF_BID_PRICE, bid6);
	wire_put_be32(m + UQDF_QF_BID_SIZE, bid_size);
	wire_put_be64(m + UQDF_QF_ASK_PRICE, ask6);
	wire_put_be32(m + UQDF_QF_ASK_SIZE, ask_size);
	m[UQDF_QF_CONDITION] = (uint8_t)cond;
	m[UQDF_QF_SIP_GENERATED] = ' ';
	m[UQDF_QF_LULD] = ' ';
	m[UQDF_QF_RETAIL_INTEREST] = ' ';
	m[UQDF_QF_NBBO] = (uint8_t)nbbo;
	m[UQDF_QF_NBBO_LULD] = ' ';
	m[UQDF_QF_ADF_MPID] = ' ';
	return m;
}

static uint8_t *qe(struct pkt *p, char type, uint16_t body, uint16_t extra, char orig,
		   const char *symbol, uint32_t bid_cents, uint32_t bid_size, uint32_t ask_cents,
		   uint32_t ask_size, char cond, char nbbo, uint64_t sip_ts)
{
	uint8_t *m = msg(p, (uint16_t)(body + extra), 'Q', type, orig, sip_ts);

	put_text(m + UQDF_QE_SYMBOL, symbol, UQDF_SHORT_SYMBOL_LEN);
	wire_put_be16(m + UQDF_QE_BID_PRICE, bid_cents);
	wire_put_be16(m + UQDF_QE_BID_SIZE, bid_size);
	wire_put_be16(m + UQDF_QE_ASK_PRICE, ask_cents);
	wire_put_be16(m + UQDF_QE_ASK_SIZE, ask_size);
	m[UQDF_QE_CONDITION] = (uint8_t)cond;
	/* SIP-generated, LULD, retail interest: blank */
	memset(m + UQDF_QE_SIP_GENERATED, ' ', UQDF_QE_NBBO - UQDF_QE_SIP_GENERATED);
	m[UQDF_QE_NBBO] = (uint8_t)nbbo;
	m[UQDF_QE_NBBO_LULD] = ' ';
	return m;
}

/* ---- the captures (notes: Captures) ---------------------------------------- */

START_TEST(test_uqdf_capture_short_quote_is_edgx_quote_in_lots)
{
	const struct wb_event *q;

	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "QuoteShortFormMessage.pcap"), 1);
	ck_assert_uint_eq(counters(line_a)->messages, 1);
	ck_assert_uint_eq(only(WB_EV_GAP)->u.gap.first, 1);
	ck_assert_uint_eq(only(WB_EV_GAP)->u.gap.count, 19819340);
	ck_assert_int_eq(memcmp(only(WB_EV_SYMBOL)->u.symbol.ticker, "AKAM    ", 8), 0);
	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_EDGX);		/* orig 'K' */
	ck_assert_uint_eq(q->seq, 19819341);
	ck_assert_int_eq(q->side, 'R');
	ck_assert_uint_eq(q->u.quote.sip_ts, 0x14748f30d34785aaull);	/* 1473960417922876842 */
	ck_assert_uint_eq(q->exch_ts, 0x14748f30d3449460ull);
	ck_assert_int_eq(q->u.quote.bid_price, 5123000000);
	ck_assert_int_eq(q->u.quote.ask_price, 5124000000);
	/* 2016: one round lot of 100 shares. */
	ck_assert_uint_eq(q->u.quote.bid_qty, 100);
	ck_assert_uint_eq(q->u.quote.ask_qty, 100);
	ck_assert_uint_eq(q->flags, WB_EVF_SIP);
	/* NBBO indicator '0': unchanged, no NBBO event. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 0);
}
END_TEST

START_TEST(test_uqdf_capture_long_quote_with_long_nbbo_appendage)
{
	const struct wb_event *q, *n;

	harness_pcap(&h, PCAP_DIR "QuoteLongFormMessage.pcap");
	q = only(WB_EV_QUOTE);
	ck_assert_uint_eq(q->venue, WB_VENUE_EDGX);
	ck_assert_uint_eq(q->seq, 19969935);
	ck_assert_int_eq(q->u.quote.bid_price, 76725000000);
	ck_assert_uint_eq(q->u.quote.bid_qty, 300);
	ck_assert_int_eq(q->u.quote.ask_price, 76731000000);
	ck_assert_uint_eq(q->u.quote.ask_qty, 200);
	n = only(WB_EV_NBBO);
	ck_assert_uint_eq(n->venue, FEED_SOURCE_UQDF);
	ck_assert_uint_eq(n->exch_ts, q->u.quote.sip_ts);
	ck_assert_int_eq(n->u.nbbo.indicator, '3');
	ck_assert_int_eq(n->u.nbbo.condition, 'R');
	ck_assert_int_eq(n->u.nbbo.luld, 'A');
	ck_assert_uint_eq(n->u.nbbo.sides, WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_EDGX);
	ck_assert_int_eq(n->u.nbbo.bid_price, 76725000000);	/* 0x2dbb4e50 = 767250000 */
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 300);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_BZX);
	ck_assert_int_eq(n->u.nbbo.ask_price, 76726000000);	/* 0x2dbb7560 */
	ck_assert_uint_eq(n->u.nbbo.ask_qty, 100);
}
END_TEST

START_TEST(test_uqdf_capture_luld_price_band)
{
	const struct wb_event *ev;

	harness_pcap(&h, PCAP_DIR "LimitUpLimitDownPriceBandMessage.pcap");
	ev = only(WB_EV_LULD);
	ck_assert_uint_eq(ev->venue, FEED_SOURCE_UQDF);
	ck_assert_uint_eq(ev->seq, 19952117);
	ck_assert_int_eq(ev->u.luld.indicator, 'C');		/* restated */
	ck_assert_int_eq(ev->u.luld.lower, 887000000);
	ck_assert_int_eq(ev->u.luld.upper, 1084000000);
	ck_assert_uint_eq(ev->exch_ts, 0x147483140145ca0dull);	/* luldTime, 09:45:00 ET */
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP);
}
END_TEST

/* ---- golden messages from the spec ---------------------------------------------------- */

START_TEST(test_uqdf_short_appendage_and_quote_is_the_nbbo)
{
	const struct wb_event *n;
	struct pkt p;
	uint8_t *m;

	pkt_start(&p, 1);
	m = qe(&p, 'E', 48, 11, 'Q', "INTC", 3071, 5, 3072, 6, 'R', '2', T2026);
	m[48] = 'R';
	m[49] = 'Q';
	wire_put_be16(m + 50, 3071);
	wire_put_be16(m + 52, 500);
	m[54] = 'P';
	wire_put_be16(m + 55, 3072);
	wire_put_be16(m + 57, 600);
	qe(&p, 'E', 48, 0, 'Y', "INTC", 3071, 9, 3072, 9, 'R', '4', T2026);
	qe(&p, 'E', 48, 0, 'Y', "INTC", 0, 0, 0, 0, 'R', '1', T2026);
	send_a(&p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 3);
	n = harness_find(&h, WB_EV_NBBO, 0);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_NASDAQ);
	ck_assert_int_eq(n->u.nbbo.bid_price, 3071000000);
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 500);		/* 2026: shares */
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_ARCA);
	ck_assert_uint_eq(n->u.nbbo.ask_qty, 600);
	/* '4': this quote is the NBBO on both sides. */
	n = harness_find(&h, WB_EV_NBBO, (size_t)(n - h.events) + 1);
	ck_assert_uint_eq(n->u.nbbo.bid_venue, WB_VENUE_BYX);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, WB_VENUE_BYX);
	ck_assert_uint_eq(n->u.nbbo.bid_qty, 9);
	/* '1': no NBBO can be calculated. */
	n = &h.events[h.n - 1];
	ck_assert_uint_eq(n->kind, WB_EV_NBBO);
	ck_assert_int_eq(n->u.nbbo.indicator, '1');
	ck_assert_int_eq(n->u.nbbo.bid_price, 0);
	ck_assert_uint_eq(n->u.nbbo.ask_venue, 0);
	ck_assert_uint_eq(n->u.nbbo.sides, WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED);
}
END_TEST

START_TEST(test_uqdf_conditions_and_luld_indicator_set_ineligible_sides)
{
	static const struct {
		char cond, luld;
		uint8_t flags;
	} cases[] = {
		{ 'R', ' ', 0 }, { 'Y', ' ', 0 }, { 'A', ' ', 0 },
		{ 'L', ' ', WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE },
		{ 'R', 'A', WB_EVF_BID_INELIGIBLE }, { 'R', 'B', WB_EVF_ASK_INELIGIBLE },
		{ 'R', 'C', WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE },
	};
	struct pkt p;

	pkt_start(&p, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		qe(&p, 'E', 48, 0, 'Q', "INTC", 3071, 5, 3072, 6, cases[i].cond, '0', T2026)[44] =
			(uint8_t)cases[i].luld;
	send_a(&p);
	for (size_t i = 0, j = 0; i < h.n; i++) {
		if (h.events[i].kind != WB_EV_QUOTE)
			continue;
		ck_assert_msg(h.events[i].flags == (WB_EVF_SIP | cases[j].flags), "case %zu", j);
		j++;
	}
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), sizeof(cases) / sizeof(cases[0]));
}
END_TEST

/* QC/QD: the quote, its NBBO; the ADF MPID, BOLO and odd-lot parts are skipped. */
START_TEST(test_uqdf_combined_quotes_skip_bolo_and_odd_lot_parts)
{
	struct pkt p;
	uint8_t *m;

	pkt_start(&p, 1);
	/* QD: long NBBO (27) + ADF MPIDs (8) + BOLO MPID form (30) + 2 odd lots of 16. */
	m = qf(&p, 'D', 83, 27 + 8 + 30 + 32, 'D', "AMZN", 200000000, 100, 200100000, 200, 'R',
	       '3', T2026);
	m[78] = '2';
	m[79] = '5';
	m[80] = '5';
	wire_put_be16(m + 81, 2);
	m[83] = 'R';
	m[84] = 'D';
	wire_put_be64(m + 85, 200000000);
	wire_put_be32(m + 93, 100);
	m[97] = 'Q';
	wire_put_be64(m + 98, 200050000);
	wire_put_be32(m + 106, 300);
	/* QC: no NBBO change, short BOLO (10) and one short odd lot (6). */
	m = qe(&p, 'C', 52, 16, 'Q', "AMZN", 0, 0, 0, 0, 'R', '0', T2026);
	m[48] = '2';
	m[49] = '2';
	wire_put_be16(m + 50, 1);
	/* QA/QB: odd lots only, emit nothing. */
	m = msg(&p, 39 + 12, 'Q', 'A', 'Q', T2026);
	put_text(m + 29, "AMZN", 5);
	m[35] = '1';
	m[36] = '3';
	wire_put_be16(m + 37, 1);
	m = msg(&p, 53, 'Q', 'B', 'Q', T2026);
	put_text(m + 37, "AMZN", 11);
	m[49] = '0';
	m[50] = '0';
	send_a(&p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->venue, WB_VENUE_FINRA);
	ck_assert_int_eq(only(WB_EV_NBBO)->u.nbbo.ask_price, 20005000000);
	ck_assert_uint_eq(only(WB_EV_NBBO)->u.nbbo.ask_venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(counters(line_a)->ignored, 2);
	for (int e = 0; e < FEED_ERR_COUNT; e++)
		ck_assert_msg(counters(line_a)->errors[e] == 0, "%s", feed_error_name(e));
}
END_TEST

START_TEST(test_uqdf_trading_actions_are_status)
{
	const struct wb_event *ev;
	struct pkt p;
	uint8_t *m;

	pkt_start(&p, 1);
	m = msg(&p, 59, 'A', 'H', 'E', T2026);
	put_text(m + 29, "ZVZZT", 11);
	m[40] = 'H';
	wire_put_be64(m + 45, T2026 - 5000);
	put_text(m + 53, "LUDP", 6);
	m = msg(&p, 50, 'A', 'K', 'E', T2026);
	put_text(m + 29, "ZVZZT", 11);
	m[40] = 'T';
	wire_put_be64(m + 41, T2026 - 7000);
	m[49] = 'Z';
	send_a(&p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_STATUS), 2);
	ev = harness_find(&h, WB_EV_STATUS, 0);
	ck_assert_uint_eq(ev->venue, FEED_SOURCE_UQDF);		/* cross-SRO: every venue */
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED);
	ck_assert_int_eq(memcmp(ev->u.status.reason, "LUDP", 4), 0);
	ck_assert_uint_eq(ev->exch_ts, T2026 - 5000);		/* the action's time */
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP);
	ev = harness_find(&h, WB_EV_STATUS, (size_t)(ev - h.events) + 1);
	ck_assert_uint_eq(ev->venue, WB_VENUE_BZX);			/* one market center */
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_TRADING);
	ck_assert_uint_eq(ev->exch_ts, T2026 - 7000);
}
END_TEST

START_TEST(test_uqdf_directory_round_lot_converts_2016_lots)
{
	struct pkt p;
	uint8_t *m;

	pkt_start(&p, 1);
	m = msg(&p, 90, 'A', 'B', 'E', T2016);
	put_text(m + 29, "BRKA", 11);
	m[84] = 'Q';
	wire_put_be16(m + 87, 10);
	qe(&p, 'E', 48, 0, 'Q', "BRKA", 60000, 3, 60001, 4, 'R', '0', T2016);
	qe(&p, 'E', 48, 0, 'Q', "BRKA", 60000, 3, 60001, 4, 'R', '0', T2026);
	send_a(&p);
	ck_assert_uint_eq(only(WB_EV_SYMBOL)->u.symbol.round_lot, 10);
	ck_assert_int_eq(only(WB_EV_SYMBOL)->u.symbol.listing_market, 'Q');
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->u.quote.bid_qty, 30);
	ck_assert_uint_eq(harness_find(&h, WB_EV_QUOTE, 0)->u.quote.ask_qty, 40);
	ck_assert_uint_eq(h.events[h.n - 1].u.quote.bid_qty, 3);	/* shares since 2025-11-03 */
}
END_TEST

START_TEST(test_uqdf_mwcb_wipe_out_and_session_messages)
{
	const struct wb_event *ev;
	struct pkt p;

	pkt_start(&p, 1);
	msg(&p, 30, 'A', 'D', 'E', T2026)[29] = '3';
	msg(&p, 29, 'C', 'P', 'K', T2026);
	msg(&p, 29, 'C', 'O', 'E', T2026);
	msg(&p, 29, 'C', 'Z', 'E', T2026);
	msg(&p, 29, 'C', 'I', 'E', T2026);
	msg(&p, 41, 'A', 'V', 'E', T2026);
	msg(&p, 53, 'A', 'C', 'E', T2026);
	msg(&p, 69, 'A', 'E', 'E', T2026);
	wire_put_be16(msg(&p, 77 + 33, 'A', 'R', 'E', T2026) + 75, 1);
	wire_put_be16(msg(&p, 31 + 5, 'A', 'A', 'E', T2026) + 29, 5);
	send_a(&p);
	ev = harness_find(&h, WB_EV_STATUS, 0);
	ck_assert_uint_eq(ev->instrument, 0);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED);
	ck_assert_int_eq(memcmp(ev->u.status.reason, "MWC3", 4), 0);
	ev = only(WB_EV_CLEAR);
	ck_assert_uint_eq(ev->venue, WB_VENUE_EDGX);		/* every quote of K */
	ck_assert_uint_eq(ev->instrument, 0);
	ck_assert_uint_eq(ev->flags, WB_EVF_SIP);
	ck_assert_uint_eq(harness_count(&h, WB_EV_STATUS), 3);
	ck_assert_uint_eq(h.events[h.n - 1].u.status.state, WB_STATE_CLOSED);
	ck_assert_uint_eq(h.events[h.n - 1].flags, WB_EVF_SIP | WB_EVF_SESSION_END);
	ck_assert_uint_eq(counters(line_a)->ignored, 6);
	ck_assert_uint_eq(counters(line_a)->messages, 10);
}
END_TEST

/* ---- malformed -------------------------------------------------------------------------- */

START_TEST(test_uqdf_lengths_and_fields_that_lie_emit_nothing_wrong)
{
	struct pkt p;
	uint8_t *m;

	pkt_start(&p, 1);
	qf(&p, 'F', 79, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '3', T2026);	/* appendage missing */
	qe(&p, 'E', 40, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);	/* body cut short */
	m = qe(&p, 'C', 52, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	m[49] = '3';
	wire_put_be16(m + 50, 4);					/* 4 odd lots not there */
	qe(&p, 'E', 48, 0, '?', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);	/* unknown center */
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '9', T2026);	/* unknown indicator */
	msg(&p, 29, 'Q', 'Z', 'K', T2026);				/* unknown type */
	msg(&p, 29, 'A', 'F', 'E', T2026);				/* not yet published */
	msg(&p, 20, 'Q', 'E', 'K', T2026);				/* shorter than a header */
	m = msg(&p, 48, 'Q', 'E', 'K', T2026);
	m[0] = '2';							/* another version */
	send_a(&p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_NBBO), 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 4);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 3);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_TYPE], 2);
	ck_assert_uint_eq(counters(line_a)->messages, 9);
}
END_TEST

START_TEST(test_uqdf_mold_count_that_disagrees_and_truncation)
{
	struct pkt p;

	pkt_start(&p, 1);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	wire_put_be16(p.b + 18, 1);
	send_a(&p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
	pkt_start(&p, 2);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	harness_payload(&h, line_a, p.b, p.len - 5);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 1);
}
END_TEST

START_TEST(test_uqdf_new_session_clears_the_sips_quotes)
{
	struct pkt p;

	pkt_start(&p, 1);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	send_a(&p);
	pkt_start(&p, 1);
	memcpy(p.b, "000007528Q", 10);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	send_a(&p);
	ck_assert_uint_eq(only(WB_EV_CLEAR)->flags, WB_EVF_SIP | WB_EVF_SESSION_END);
	ck_assert_uint_eq(only(WB_EV_CLEAR)->venue, FEED_SOURCE_UQDF);
	ck_assert_uint_eq(harness_count(&h, WB_EV_QUOTE), 2);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
}
END_TEST

START_TEST(test_uqdf_is_told_from_itch_by_its_first_message)
{
	struct pkt p;

	pkt_start(&p, 1);
	qe(&p, 'E', 48, 0, 'K', "AMZN", 1, 1, 2, 1, 'R', '0', T2026);
	ck_assert(feed_raw_looks_like(FEED_PROTO_UQDF, p.b, (uint32_t)p.len));
	ck_assert(!feed_raw_looks_like(FEED_PROTO_ITCH50, p.b, (uint32_t)p.len));
}
END_TEST

START_TEST(test_uqdf_raw_layouts_cover_every_known_message)
{
	static const char *const types[] = { "QE", "QF", "QC", "QD", "QA", "QB", "QM", "AA", "AH",
					     "AK", "AB", "AV", "AP", "AC", "AD", "AE", "AR", "CI",
					     "CJ", "CO", "CC", "CZ", "CP" };
	uint8_t m[128] = { '1' };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct feed_msg_layout *l;

		m[1] = (uint8_t)types[i][0];
		m[2] = (uint8_t)types[i][1];
		l = feed_raw_layout(FEED_PROTO_UQDF, m, sizeof(m));
		ck_assert_msg(l != NULL, "%s", types[i]);
		for (int f = 0; f < l->nfields; f++)
			ck_assert_msg(l->fields[f].offset + l->fields[f].width <= l->min_len, "%s %s",
				      types[i], l->fields[f].name);
	}
	m[1] = 'A';
	m[2] = 'F';
	ck_assert_ptr_null(feed_raw_layout(FEED_PROTO_UQDF, m, sizeof(m)));
}
END_TEST

static Suite *uqdf_suite(void)
{
	Suite *s = suite_create("uqdf");
	TCase *caps = tcase_create("captures"), *gold = tcase_create("golden"),
	      *bad = tcase_create("malformed");

	tcase_add_checked_fixture(caps, setup, teardown);
	tcase_add_test(caps, test_uqdf_capture_short_quote_is_edgx_quote_in_lots);
	tcase_add_test(caps, test_uqdf_capture_long_quote_with_long_nbbo_appendage);
	tcase_add_test(caps, test_uqdf_capture_luld_price_band);
	suite_add_tcase(s, caps);

	tcase_add_checked_fixture(gold, setup, teardown);
	tcase_add_test(gold, test_uqdf_short_appendage_and_quote_is_the_nbbo);
	tcase_add_test(gold, test_uqdf_conditions_and_luld_indicator_set_ineligible_sides);
	tcase_add_test(gold, test_uqdf_combined_quotes_skip_bolo_and_odd_lot_parts);
	tcase_add_test(gold, test_uqdf_trading_actions_are_status);
	tcase_add_test(gold, test_uqdf_directory_round_lot_converts_2016_lots);
	tcase_add_test(gold, test_uqdf_mwcb_wipe_out_and_session_messages);
	tcase_add_test(gold, test_uqdf_new_session_clears_the_sips_quotes);
	tcase_add_test(gold, test_uqdf_is_told_from_itch_by_its_first_message);
	tcase_add_test(gold, test_uqdf_raw_layouts_cover_every_known_message);
	suite_add_tcase(s, gold);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_test(bad, test_uqdf_lengths_and_fields_that_lie_emit_nothing_wrong);
	tcase_add_test(bad, test_uqdf_mold_count_that_disagrees_and_truncation);
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(uqdf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
