/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The UQDF encoder of the generator: the quotes of the venues that trade
 * the flow's Nasdaq-listed symbols, as the UTP SIP would publish them on
 * one channel (UQDF binary on MoldUDP64; layouts and their sources:
 * docs/specs/cqs-uqdf-notes.md).
 *
 * Each action that changes a venue's best bid or offer becomes a Quote
 * Short Form (QE) or Long Form (QF) of that market center, whose NBBO
 * indicator says how the NBBO across the venues changed: '0' unchanged,
 * '1' none, '2'/'3' short/long appendage, '4' this quote is the NBBO (the
 * books are gen_sip.h's). The channel begins with Start of Day, gives an
 * Issue Symbol Directory per symbol and a Cross-SRO Trading Action per
 * trading-state change of the listing market, marks the market session's
 * open and close, sends MoldUDP64 heartbeats when idle and ends with End
 * of Transmissions and the MoldUDP64 end of session. Sizes are shares.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_proto.h"
#include "gen/gen_sip.h"
#include "wire/bytes.h"
#include "wire/moldudp64.h"
#include "wire/uqdf.h"

#define UQDF_DEFAULT_PAYLOAD 1400
#define UQDF_MAX_PAYLOAD 1472
#define UQDF_PACKET_WINDOW_NS 50000
#define UQDF_HEARTBEAT_NS 1000000000ull
#define UQDF_MAX_HEARTBEATS 3

struct gen_uqdf {
	struct gen_encoder_config cfg;
	struct gen_sip_view view;
	struct gen_sip_clock clock;	/* participant time -> SIP time */
	bool started, error;
	bool sent_any;		/* a data packet left (or was lost): idle heartbeats from then on */
	uint64_t next_seq;
	uint8_t pkt[UQDF_MAX_PAYLOAD];
	uint32_t len, count;
	uint64_t pkt_seq, pkt_first_ts, pkt_last_ts, last_sent_ts;
	uint64_t packets, messages, quotes, nbbo_changes, heartbeats, sent, dropped, duplicated;
};


static uint8_t market_center(uint8_t venue)
{
	static const char ids[WB_VENUE_COUNT] = {
		[WB_VENUE_AMERICAN] = 'A', [WB_VENUE_BX] = 'B',    [WB_VENUE_NATIONAL] = 'C',
		[WB_VENUE_FINRA] = 'D',	   [WB_VENUE_TXSE] = 'F',  [WB_VENUE_24X] = 'G',
		[WB_VENUE_MIAX] = 'H',	   [WB_VENUE_ISE] = 'I',   [WB_VENUE_EDGA] = 'J',
		[WB_VENUE_EDGX] = 'K',	   [WB_VENUE_LTSE] = 'L',  [WB_VENUE_TEXAS] = 'M',
		[WB_VENUE_NYSE] = 'N',	   [WB_VENUE_ARCA] = 'P',  [WB_VENUE_NASDAQ] = 'Q',
		[WB_VENUE_MEMX] = 'U',	   [WB_VENUE_IEX] = 'V',   [WB_VENUE_CBOE] = 'W',
		[WB_VENUE_PSX] = 'X',	   [WB_VENUE_BYX] = 'Y',   [WB_VENUE_BZX] = 'Z',
	};

	return venue < WB_VENUE_COUNT ? (uint8_t)ids[venue] : 0;
}

static uint32_t payload_room(const struct gen_uqdf *g)
{
	uint32_t room = g->cfg.max_payload ? g->cfg.max_payload : UQDF_DEFAULT_PAYLOAD;

	return room > UQDF_MAX_PAYLOAD ? UQDF_MAX_PAYLOAD : room;
}

static void mold_header(const struct gen_uqdf *g, uint8_t *p, uint64_t seq, uint16_t count)
{
	memcpy(p + MOLD_SESSION, g->cfg.session, MOLD_SESSION_LEN);
	wire_put_be64(p + MOLD_SEQUENCE, seq);
	wire_put_be16(p + MOLD_COUNT, count);
}

static int send_packet(struct gen_uqdf *g, const uint8_t *p, uint32_t len, uint64_t ts)
{
	int n = gen_sink_send(&g->cfg.sink, g->cfg.midnight_ns + ts, g->cfg.a_ip, g->cfg.a_port,
			      g->cfg.b_ip, g->cfg.b_port, g->cfg.ab, p, len);

	if (n < 0)
		return -1;
	g->sent += (uint64_t)n;
	g->last_sent_ts = ts;
	g->sent_any = true;
	return 0;
}

/*
 * MoldUDP64 heartbeats while idle: count 0, the next sequence. Only once
 * the line has sent something: before that there is no idle stretch to
 * fill, and heartbeats counted from time 0 put the capture's first frames
 * at midnight, hours before the session (a replay at the recorded pace
 * then waits for it).
 */
static int heartbeats_before(struct gen_uqdf *g, uint64_t ts)
{
	uint8_t p[MOLD_HEADER_LEN];

	for (int n = 0; g->sent_any && n < UQDF_MAX_HEARTBEATS &&
			ts > g->last_sent_ts + UQDF_HEARTBEAT_NS; n++) {
		mold_header(g, p, g->count ? g->pkt_seq : g->next_seq, MOLD_HEARTBEAT);
		if (send_packet(g, p, sizeof(p), g->last_sent_ts + UQDF_HEARTBEAT_NS))
			return -1;
		g->heartbeats++;
	}
	return 0;
}

static int flush_packet(struct gen_uqdf *g)
{
	int rc = 0;

	if (!g->count)
		return 0;
	if (heartbeats_before(g, g->pkt_first_ts))
		return -1;
	mold_header(g, g->pkt, g->pkt_seq, (uint16_t)g->count);
	g->packets++;
	if (g->cfg.gap_every && g->packets % g->cfg.gap_every == 0) {
		g->dropped++;
		g->last_sent_ts = g->pkt_last_ts;
		g->sent_any = true;
	} else {
		rc = send_packet(g, g->pkt, g->len, g->pkt_last_ts);
		if (!rc && g->cfg.dup_every && g->packets % g->cfg.dup_every == 0) {
			g->duplicated++;
			rc = send_packet(g, g->pkt, g->len, g->pkt_last_ts);
		}
	}
	g->len = MOLD_HEADER_LEN;
	g->count = 0;
	return rc;
}

/* A UTP message of len bytes at SIP time ts, its header filled in; the rest zeroed. */
static uint8_t *append(struct gen_uqdf *g, uint64_t ts, uint64_t participant_ts, char category,
		       char type, uint8_t origin, uint16_t len)
{
	uint8_t *m;

	if (g->count && (g->len + MOLD_BLOCK_LENGTH_LEN + len > payload_room(g) ||
			 g->count == MOLD_END_OF_SESSION - 1 ||
			 ts - g->pkt_first_ts > UQDF_PACKET_WINDOW_NS)) {
		if (flush_packet(g))
			g->error = true;
	}
	if (!g->count) {
		g->len = MOLD_HEADER_LEN;
		g->pkt_first_ts = ts;
		g->pkt_seq = g->next_seq;
	}
	g->pkt_last_ts = ts;
	wire_put_be16(g->pkt + g->len, len);
	m = g->pkt + g->len + MOLD_BLOCK_LENGTH_LEN;
	memset(m, 0, len);
	m[UQDF_VERSION_BYTE] = UQDF_VERSION;
	m[UQDF_CATEGORY] = (uint8_t)category;
	m[UQDF_TYPE] = (uint8_t)type;
	m[UQDF_ORIGINATOR] = origin;
	m[UQDF_SUB_MARKET] = ' ';
	wire_put_be64(m + UQDF_SIP_TIME, g->cfg.midnight_ns + ts);
	wire_put_be64(m + UQDF_TIMESTAMP1, g->cfg.midnight_ns + participant_ts);
	g->len += MOLD_BLOCK_LENGTH_LEN + len;
	g->count++;
	g->next_seq++;
	g->messages++;
	return m;
}

static bool fits_short(const struct gen_sip_best *b)
{
	return gen_sip_fits_short(b->price, b->qty);
}

static void put_symbol(uint8_t *p, const struct gen_symbol *s, uint32_t width)
{
	memset(p, ' ', width);
	memcpy(p, s->ticker, gen_sip_ticker_len(s));
}

static void quote(struct gen_uqdf *g, const struct gen_flow *flow, uint32_t symbol, uint8_t venue,
		  uint64_t ts)
{
	const struct gen_symbol *s = &flow->symbols[symbol];
	struct gen_sip_bbo q, nbbo, *was = &g->view.published[symbol];
	char indicator;
	bool shrt;
	uint8_t *m, *a;
	uint16_t len;

	if (!market_center(venue))
		return;
	gen_sip_venue_bbo(&g->view.book, symbol, venue, &q);
	gen_sip_nbbo(&g->view.book, symbol, g->view.venues, &nbbo);
	if (gen_sip_same(&was->bid, &nbbo.bid) && gen_sip_same(&was->ask, &nbbo.ask))
		indicator = '0';
	else if (!nbbo.bid.qty && !nbbo.ask.qty)
		indicator = '1';
	else if (gen_sip_same(&nbbo.bid, &q.bid) && gen_sip_same(&nbbo.ask, &q.ask) && nbbo.bid.venue == venue &&
		 nbbo.ask.venue == venue)
		indicator = '4';
	else
		indicator = fits_short(&nbbo.bid) && fits_short(&nbbo.ask) ? '2' : '3';
	shrt = gen_sip_ticker_len(s) <= 5 && fits_short(&q.bid) && fits_short(&q.ask) &&
	       indicator != '3';
	len = shrt ? UQDF_QE_LEN : UQDF_QF_LEN;
	len = (uint16_t)(len + (indicator == '2' ? 11 : indicator == '3' ? 27 : 0));
	m = append(g, gen_sip_clock_time(&g->clock, ts), ts, 'Q', shrt ? 'E' : 'F', market_center(venue), len);
	if (shrt) {
		put_symbol(m + UQDF_QE_SYMBOL, s, UQDF_SHORT_SYMBOL_LEN);
		wire_put_be16(m + UQDF_QE_BID_PRICE, (uint64_t)(q.bid.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(m + UQDF_QE_BID_SIZE, q.bid.qty);
		wire_put_be16(m + UQDF_QE_ASK_PRICE, (uint64_t)(q.ask.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(m + UQDF_QE_ASK_SIZE, q.ask.qty);
		/* condition R, not SIP-generated, no LULD, no retail interest */
		memcpy(m + UQDF_QE_CONDITION, "R   ", 4);
		m[UQDF_QE_NBBO] = (uint8_t)indicator;
		m[UQDF_QE_NBBO_LULD] = ' ';
		a = m + UQDF_QE_LEN;
	} else {
		put_symbol(m + UQDF_QF_SYMBOL, s, UQDF_SYMBOL_LEN);
		wire_put_be64(m + UQDF_QF_BID_PRICE, (uint64_t)(q.bid.price / 100));
		wire_put_be32(m + UQDF_QF_BID_SIZE, q.bid.qty);
		wire_put_be64(m + UQDF_QF_ASK_PRICE, (uint64_t)(q.ask.price / 100));
		wire_put_be32(m + UQDF_QF_ASK_SIZE, q.ask.qty);
		memcpy(m + UQDF_QF_CONDITION, "R   ", 4);	/* as in the short form */
		m[UQDF_QF_NBBO] = (uint8_t)indicator;
		m[UQDF_QF_NBBO_LULD] = ' ';
		m[UQDF_QF_ADF_MPID] = ' ';
		a = m + UQDF_QF_LEN;
	}
	if (indicator == '2') {
		a[UQDF_NBBO_CONDITION] = 'R';
		a[UQDF_NBBO_BID_CENTER] = market_center(nbbo.bid.venue);
		wire_put_be16(a + UQDF_NBBO_BID_PRICE,
			      (uint64_t)(nbbo.bid.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(a + UQDF_NBBO_SHORT_BID_SIZE, nbbo.bid.qty);
		a[UQDF_NBBO_SHORT_ASK_CENTER] = market_center(nbbo.ask.venue);
		wire_put_be16(a + UQDF_NBBO_SHORT_ASK_PRICE,
			      (uint64_t)(nbbo.ask.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(a + UQDF_NBBO_SHORT_ASK_SIZE, nbbo.ask.qty);
	} else if (indicator == '3') {
		a[UQDF_NBBO_CONDITION] = 'R';
		a[UQDF_NBBO_BID_CENTER] = market_center(nbbo.bid.venue);
		wire_put_be64(a + UQDF_NBBO_BID_PRICE, (uint64_t)(nbbo.bid.price / 100));
		wire_put_be32(a + UQDF_NBBO_LONG_BID_SIZE, nbbo.bid.qty);
		a[UQDF_NBBO_LONG_ASK_CENTER] = market_center(nbbo.ask.venue);
		wire_put_be64(a + UQDF_NBBO_LONG_ASK_PRICE, (uint64_t)(nbbo.ask.price / 100));
		wire_put_be32(a + UQDF_NBBO_LONG_ASK_SIZE, nbbo.ask.qty);
	}
	g->quotes++;
	if (indicator != '0')
		g->nbbo_changes++;
	*was = nbbo;
}

static void directory(struct gen_uqdf *g, const struct gen_symbol *s, uint64_t ts)
{
	uint8_t *m = append(g, gen_sip_clock_time(&g->clock, ts), ts, 'A', 'B', 'E', UQDF_AB_LEN);

	put_symbol(m + UQDF_ADMIN_SYMBOL, s, UQDF_SYMBOL_LEN);
	/* old symbol up to the round lot, then over it (written next): blank */
	memset(m + UQDF_AB_OLD_SYMBOL, ' ', UQDF_AB_FSI - UQDF_AB_OLD_SYMBOL);
	memcpy(m + UQDF_AB_NAME, s->ticker, gen_sip_ticker_len(s));
	m[UQDF_AB_TYPE] = 'C';
	m[UQDF_AB_MARKET_TIER] = (uint8_t)s->market;
	m[UQDF_AB_AUTHENTICITY] = 'P';
	wire_put_be16(m + UQDF_AB_ROUND_LOT, s->round_lot);
	m[UQDF_AB_FSI] = 'N';
}

static void trading_action(struct gen_uqdf *g, const struct gen_symbol *s, uint64_t ts, char code)
{
	uint8_t *m = append(g, gen_sip_clock_time(&g->clock, ts), ts, 'A', 'H', 'E', UQDF_AH_LEN);

	put_symbol(m + UQDF_ADMIN_SYMBOL, s, UQDF_SYMBOL_LEN);
	m[UQDF_AH_ACTION] = code == 'H' ? 'H' : 'T';
	wire_put_be64(m + UQDF_AH_TIME, g->cfg.midnight_ns + ts);
	memset(m + UQDF_AH_REASON, ' ', UQDF_AH_LEN - UQDF_AH_REASON);
}

static int uqdf_enc_action(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	struct gen_uqdf *g = enc;
	const struct gen_symbol *s;
	int changed;

	if (gen_sip_view_open(&g->view, flow))
		return -1;
	if (g->error)
		return -1;
	if (!g->started) {
		append(g, gen_sip_clock_time(&g->clock, a->ts), a->ts, 'C', 'I', 'E', UQDF_CONTROL_LEN);
		g->started = true;
	}
	if (a->kind == GEN_SYSTEM) {
		/* The market session of the listing market, Nasdaq's. */
		if (a->venue == WB_VENUE_NASDAQ && (a->code == 'Q' || a->code == 'M'))
			append(g, gen_sip_clock_time(&g->clock, a->ts), a->ts, 'C', a->code == 'Q' ? 'O' : 'C', 'E',
			       UQDF_CONTROL_LEN);
		return g->error ? -1 : 0;
	}
	if (a->symbol >= flow->symbol_count)
		return 0;
	s = &flow->symbols[a->symbol];
	if (!gen_sip_nasdaq_listed(s))
		return 0;
	if (a->kind == GEN_SYMBOL) {
		if (!g->view.listed[a->symbol])
			directory(g, s, a->ts);
		g->view.listed[a->symbol] = 1;
		return g->error ? -1 : 0;
	}
	if (a->kind == GEN_TRADING) {
		if (a->venue == WB_VENUE_NASDAQ)
			trading_action(g, s, a->ts, a->code);
		return g->error ? -1 : 0;
	}
	changed = gen_sip_book_apply(&g->view.book, flow, a);
	if (changed < 0)
		return -1;
	if (changed)
		quote(g, flow, a->symbol, a->venue, a->ts);
	return g->error ? -1 : 0;
}

static int uqdf_enc_finish(void *enc, uint64_t ts)
{
	struct gen_uqdf *g = enc;
	uint8_t p[MOLD_HEADER_LEN];

	if (g->error)
		return -1;
	if (!g->started)
		return 0;
	/* never before the line's last (lagged) message */
	if (ts < g->clock.last)
		ts = g->clock.last;
	append(g, ts, ts, 'C', 'Z', 'E', UQDF_CONTROL_LEN);
	if (g->error || flush_packet(g) || heartbeats_before(g, ts))
		return -1;
	mold_header(g, p, g->next_seq, MOLD_END_OF_SESSION);
	return send_packet(g, p, sizeof(p), ts + 1000);
}

/* wb-gen --until: send what is buffered, no End of Day. */
static int uqdf_enc_stop(void *enc)
{
	struct gen_uqdf *g = enc;

	return g->error || flush_packet(g) ? -1 : 0;
}

static int uqdf_enc_init(void *enc, const struct gen_encoder_config *cfg)
{
	struct gen_uqdf *g = enc;

	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	g->next_seq = 1;
	gen_sip_clock_init(&g->clock, cfg->sip_lag, cfg->seed, cfg->sip_lag_record);
	g->len = MOLD_HEADER_LEN;
	return 0;
}

static void uqdf_enc_destroy(void *enc)
{
	gen_sip_view_close(&((struct gen_uqdf *)enc)->view);
}

static void uqdf_enc_summary(const void *enc, const struct gen_flow *flow, FILE *out)
{
	const struct gen_uqdf *g = enc;

	(void)flow;
	fprintf(out, "wb-gen: UQDF: %" PRIu64 " messages (%" PRIu64 " quotes, %" PRIu64
		" NBBO changes) in %" PRIu64 " packets, %" PRIu64 " heartbeats\n", g->messages,
		g->quotes, g->nbbo_changes, g->packets, g->heartbeats);
}

const struct gen_proto gen_proto_uqdf = {
	.size = sizeof(struct gen_uqdf),
	.writes_files = false,
	.min_payload = MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + UQDF_AB_LEN,
	.init = uqdf_enc_init,
	.action = uqdf_enc_action,
	.finish = uqdf_enc_finish,
	.stop = uqdf_enc_stop,
	.destroy = uqdf_enc_destroy,
	.summary = uqdf_enc_summary,
};
