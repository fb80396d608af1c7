/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The CQS encoder of the generator: the quotes of the venues that trade
 * the flow's CQS-listed symbols (every listing market but Nasdaq's), as
 * the SIP would publish them on one line (CTA Pillar binary output,
 * block version 2; layouts and their sources: docs/specs/cqs-uqdf-notes.md).
 *
 * Each action that changes a venue's best bid or offer becomes a Long or
 * Short Quote of that participant, with the National BBO Indicator and
 * appendages that say how the NBBO across the venues changed (gen_sip.h
 * keeps the books). The line begins with Start of Day (sequence 0), sends
 * a Symbol Reference Data message per symbol with the directory, Line
 * Integrity when idle, and End of Day at the finish. Sizes are shares
 * (the generated days are after 2025-11-03).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_proto.h"
#include "gen/gen_sip.h"
#include "wire/bytes.h"
#include "wire/cqs.h"

#define CQS_MAX_BLOCK 1000		/* the spec's largest block */
#define CQS_BLOCK_WINDOW_NS 50000	/* messages further apart go in another block */
#define CQS_LINE_INTEGRITY_NS 1000000000ull
#define CQS_MAX_IDLE_INTEGRITY 3
#define NS_PER_SEC 1000000000ull

/* NBBO news per side, numbered as the A-O part of the indicator table. */
enum { NEWS_UNCHANGED = 0, NEWS_QUOTE = 1, NEWS_SHORT = 2, NEWS_LONG = 3, NEWS_NONE = 4 };

struct gen_cqs {
	struct gen_encoder_config cfg;
	struct gen_sip_view view;
	struct gen_sip_clock clock;	/* participant time -> SIP time */
	bool started, error;
	uint32_t next_seq;
	uint8_t block[CQS_MAX_BLOCK];
	uint32_t len, count, block_seq;
	uint64_t block_first_ts, block_sip_ts, last_sent_ts;
	uint64_t blocks, messages, quotes, nbbo_changes, integrity, sent, dropped, duplicated;
};

static void put_time(uint8_t *p, uint64_t epoch_ns)
{
	wire_put_be32(p, epoch_ns / NS_PER_SEC);
	wire_put_be32(p + CQS_TIME_LEN / 2, epoch_ns % NS_PER_SEC);
}

static uint8_t participant(uint8_t venue)
{
	static const char ids[WB_VENUE_COUNT] = {
		[WB_VENUE_AMERICAN] = 'A', [WB_VENUE_BX] = 'B',    [WB_VENUE_NATIONAL] = 'C',
		[WB_VENUE_FINRA] = 'D',	   [WB_VENUE_24X] = 'G',   [WB_VENUE_MIAX] = 'H',
		[WB_VENUE_ISE] = 'I',	   [WB_VENUE_EDGA] = 'J',  [WB_VENUE_EDGX] = 'K',
		[WB_VENUE_LTSE] = 'L',	   [WB_VENUE_TEXAS] = 'M', [WB_VENUE_NYSE] = 'N',
		[WB_VENUE_ARCA] = 'P',	   [WB_VENUE_NASDAQ] = 'T', [WB_VENUE_MEMX] = 'U',
		[WB_VENUE_IEX] = 'V',	   [WB_VENUE_CBOE] = 'W',  [WB_VENUE_PSX] = 'X',
		[WB_VENUE_BYX] = 'Y',	   [WB_VENUE_BZX] = 'Z',
	};

	return venue < WB_VENUE_COUNT ? (uint8_t)ids[venue] : 0;
}

/* The low 16 bits of the sum of every block byte but the checksum's. */
static uint16_t checksum(const uint8_t *p, uint32_t len)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < len; i++)
		if (i != CQS_BLOCK_CHECKSUM && i != CQS_BLOCK_CHECKSUM + 1)
			sum += p[i];
	return (uint16_t)sum;
}

static int send_block(struct gen_cqs *g, uint8_t *p, uint32_t len, uint64_t sip_ts)
{
	int n;

	wire_put_be16(p + CQS_BLOCK_SIZE, len);
	put_time(p + CQS_BLOCK_SIP_TIME, g->cfg.midnight_ns + sip_ts);
	wire_put_be16(p + CQS_BLOCK_CHECKSUM, checksum(p, len));
	n = gen_sink_send(&g->cfg.sink, g->cfg.midnight_ns + sip_ts, g->cfg.a_ip, g->cfg.a_port,
			  g->cfg.b_ip, g->cfg.b_port, g->cfg.ab, p, len);
	if (n < 0)
		return -1;
	g->sent += (uint64_t)n;
	g->last_sent_ts = sip_ts;
	return 0;
}

static void block_header(uint8_t *p, uint32_t seq, uint8_t count)
{
	memset(p, 0, CQS_BLOCK_HEADER_LEN);
	p[CQS_BLOCK_VERSION] = CQS_MAX_VERSION;		/* Pillar output */
	p[CQS_BLOCK_FEED] = CQS_FEED_INDICATOR;
	p[CQS_BLOCK_RETRANSMISSION] = CQS_ORIGINAL;
	wire_put_be32(p + CQS_BLOCK_SEQUENCE, seq);
	p[CQS_BLOCK_MESSAGES] = count;
}

static void message_header(uint8_t *m, uint16_t len, char category, char type, uint8_t who,
			   uint64_t epoch_ns, uint8_t id)
{
	memset(m, 0, len);
	wire_put_be16(m + CQS_MSG_LENGTH, len);
	m[CQS_MSG_CATEGORY] = (uint8_t)category;
	m[CQS_MSG_TYPE] = (uint8_t)type;
	m[CQS_MSG_PARTICIPANT] = who;
	put_time(m + CQS_MSG_TIMESTAMP1, epoch_ns);
	m[CQS_MSG_ID] = id;
}

/* A control message alone in its block. */
static int send_control(struct gen_cqs *g, char type, uint32_t seq, uint64_t ts)
{
	uint8_t p[CQS_BLOCK_HEADER_LEN + CQS_MSG_HEADER_LEN];

	block_header(p, seq, 1);
	message_header(p + CQS_BLOCK_HEADER_LEN, CQS_MSG_HEADER_LEN, 'C', type, 'S',
		       g->cfg.midnight_ns + ts, 1);
	return send_block(g, p, sizeof(p), ts);
}

/* Line Integrity while the line is idle: the last sequence sent (not the block being filled). */
static int integrity_before(struct gen_cqs *g, uint64_t ts)
{
	uint32_t last = (g->count ? g->block_seq : g->next_seq) - 1;

	for (int n = 0; g->started && n < CQS_MAX_IDLE_INTEGRITY &&
			ts > g->last_sent_ts + CQS_LINE_INTEGRITY_NS; n++) {
		if (send_control(g, 'T', last, g->last_sent_ts + CQS_LINE_INTEGRITY_NS))
			return -1;
		g->integrity++;
	}
	return 0;
}

static int flush_block(struct gen_cqs *g)
{
	int rc = 0;

	if (!g->count)
		return 0;
	if (integrity_before(g, g->block_first_ts))
		return -1;
	if (g->len & 1)
		g->block[g->len++] = 0;		/* the pad byte: blocks are even */
	block_header(g->block, g->block_seq, (uint8_t)g->count);
	g->blocks++;
	if (g->cfg.gap_every && g->blocks % g->cfg.gap_every == 0) {
		g->dropped++;
		g->last_sent_ts = g->block_sip_ts;
	} else {
		rc = send_block(g, g->block, g->len, g->block_sip_ts);
		if (!rc && g->cfg.dup_every && g->blocks % g->cfg.dup_every == 0) {
			g->duplicated++;
			rc = send_block(g, g->block, g->len, g->block_sip_ts);
		}
	}
	g->len = CQS_BLOCK_HEADER_LEN;
	g->count = 0;
	return rc;
}

/* Room for a message of len bytes at SIP time ts (ns since midnight). */
static uint8_t *append(struct gen_cqs *g, uint64_t ts, uint16_t len)
{
	uint32_t room = g->cfg.max_payload ? g->cfg.max_payload : CQS_MAX_BLOCK;

	if (room > CQS_MAX_BLOCK)
		room = CQS_MAX_BLOCK;
	if (g->count && (g->len + len + 1 > room || g->count == UINT8_MAX ||
			 ts - g->block_first_ts > CQS_BLOCK_WINDOW_NS)) {
		if (flush_block(g))
			g->error = true;
	}
	if (!g->count) {
		g->len = CQS_BLOCK_HEADER_LEN;
		g->block_first_ts = ts;
		g->block_seq = g->next_seq;
	}
	g->block_sip_ts = ts;
	g->count++;
	g->next_seq++;
	g->messages++;
	g->len += len;
	return g->block + g->len - len;
}

static int side_news(const struct gen_sip_best *was, const struct gen_sip_best *now,
		     const struct gen_sip_best *quote)
{
	if (gen_sip_same(was, now))
		return NEWS_UNCHANGED;
	if (!now->qty)
		return NEWS_NONE;
	if (now->venue == quote->venue && gen_sip_same(now, quote))
		return NEWS_QUOTE;
	return gen_sip_fits_short(now->price, now->qty) ? NEWS_SHORT : NEWS_LONG;
}

/* The National BBO Indicator of (bid news, offer news); appendages widened to fit it. */
static char nbbo_code(int *bid, int *offer)
{
	bool bid_app = *bid == NEWS_SHORT || *bid == NEWS_LONG;
	bool offer_app = *offer == NEWS_SHORT || *offer == NEWS_LONG;

	if (bid_app && offer_app && *bid != *offer)
		*bid = *offer = NEWS_LONG;
	if (bid_app && !offer_app)
		*bid = NEWS_LONG;		/* P-W: use the long bid forms */
	if (!bid_app) {
		static const uint8_t bid_row[] = { [NEWS_UNCHANGED] = 0, [NEWS_QUOTE] = 1, [NEWS_NONE] = 2 };

		return (char)('A' + bid_row[*bid] * 5 + *offer);
	}
	if (offer_app)
		return *bid == NEWS_SHORT ? 'T' : 'U';
	switch (*offer) {
	case NEWS_UNCHANGED: return 'Q';
	case NEWS_QUOTE: return 'S';
	default: return 'W';
	}
}

static uint8_t *put_appendage(uint8_t *p, int news, const struct gen_sip_best *b)
{
	if (news == NEWS_SHORT) {
		p[CQS_APPENDAGE_PARTICIPANT] = participant(b->venue);
		wire_put_be16(p + CQS_SHORT_APPENDAGE_PRICE,
			      (uint64_t)(b->price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(p + CQS_SHORT_APPENDAGE_SIZE, b->qty);
		return p + CQS_SHORT_APPENDAGE_LEN;
	}
	if (news != NEWS_LONG)
		return p;
	p[CQS_APPENDAGE_PARTICIPANT] = participant(b->venue);
	p[CQS_LONG_APPENDAGE_CONDITION] = 'R';
	wire_put_be64(p + CQS_LONG_APPENDAGE_PRICE, (uint64_t)(b->price / 100));
	wire_put_be32(p + CQS_LONG_APPENDAGE_SIZE, b->qty);
	memset(p + CQS_LONG_APPENDAGE_MMID, ' ', 4);
	return p + CQS_LONG_APPENDAGE_LEN;
}

static uint16_t appendage_len(int news)
{
	return news == NEWS_SHORT ? CQS_SHORT_APPENDAGE_LEN :
	       news == NEWS_LONG ? CQS_LONG_APPENDAGE_LEN : 0;
}

/* The quote of venue for symbol, with the NBBO news it brings. */
static void quote(struct gen_cqs *g, const struct gen_flow *flow, uint32_t symbol, uint8_t venue,
		  uint64_t ts)
{
	const struct gen_symbol *s = &flow->symbols[symbol];
	struct gen_sip_bbo q, nbbo, *was = &g->view.published[symbol];
	uint32_t tlen = gen_sip_ticker_len(s);
	int bid, offer;
	char code;
	bool shrt;
	uint8_t *m, *p;
	uint16_t len;

	if (!participant(venue))
		return;
	gen_sip_venue_bbo(&g->view.book, symbol, venue, &q);
	gen_sip_nbbo(&g->view.book, symbol, g->view.venues, &nbbo);
	bid = side_news(&was->bid, &nbbo.bid, &q.bid);
	offer = side_news(&was->ask, &nbbo.ask, &q.ask);
	code = nbbo_code(&bid, &offer);
	shrt = tlen <= 5 && gen_sip_fits_short(q.bid.price, q.bid.qty) &&
	       gen_sip_fits_short(q.ask.price, q.ask.qty) &&
	       (bid == NEWS_UNCHANGED || bid == NEWS_QUOTE || bid == NEWS_NONE || bid == NEWS_SHORT) &&
	       (offer != NEWS_LONG);
	len = (uint16_t)((shrt ? CQS_SHORT_QUOTE_LEN : CQS_LONG_QUOTE_LEN) + appendage_len(bid) +
			 appendage_len(offer));
	m = append(g, gen_sip_clock_time(&g->clock, ts), len);
	message_header(m, len, 'Q', shrt ? 'Q' : 'L', participant(venue), g->cfg.midnight_ns + ts,
		       (uint8_t)g->count);
	if (shrt) {
		memset(m + CQS_SYMBOL, ' ', CQS_SHORT_SYMBOL_LEN);
		memcpy(m + CQS_SYMBOL, s->ticker, tlen);
		wire_put_be16(m + CQS_SHORT_BID_PRICE, (uint64_t)(q.bid.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(m + CQS_SHORT_BID_SIZE, q.bid.qty);
		wire_put_be16(m + CQS_SHORT_ASK_PRICE, (uint64_t)(q.ask.price / (WB_PRICE_SCALE / 100)));
		wire_put_be16(m + CQS_SHORT_ASK_SIZE, q.ask.qty);
		m[CQS_SHORT_LISTING] = (uint8_t)s->market;
		m[CQS_SHORT_NBBO] = (uint8_t)code;
		p = m + CQS_SHORT_QUOTE_LEN;
	} else {
		memset(m + CQS_SYMBOL, ' ', CQS_LONG_QUOTE_LEN - CQS_SYMBOL);
		memcpy(m + CQS_SYMBOL, s->ticker, tlen);
		m[CQS_LONG_INSTRUMENT_TYPE] = '0';
		m[CQS_LONG_CONDITION] = 'R';
		wire_put_be64(m + CQS_LONG_BID_PRICE, (uint64_t)(q.bid.price / 100));
		wire_put_be32(m + CQS_LONG_BID_SIZE, q.bid.qty);
		wire_put_be64(m + CQS_LONG_ASK_PRICE, (uint64_t)(q.ask.price / 100));
		wire_put_be32(m + CQS_LONG_ASK_SIZE, q.ask.qty);
		memset(m + CQS_LONG_TIMESTAMP2, 0, CQS_TIME_LEN);
		m[CQS_LONG_LISTING] = (uint8_t)s->market;
		m[CQS_LONG_FSI] = '0';
		m[CQS_LONG_NBBO] = (uint8_t)code;
		p = m + CQS_LONG_QUOTE_LEN;
	}
	p = put_appendage(p, bid, &nbbo.bid);
	put_appendage(p, offer, &nbbo.ask);
	g->quotes++;
	if (code != 'A')
		g->nbbo_changes++;
	*was = nbbo;
}

static void symbol_reference(struct gen_cqs *g, const struct gen_symbol *s, uint64_t ts)
{
	uint8_t *m = append(g, ts, CQS_SYMBOL_REFERENCE_LEN);

	message_header(m, CQS_SYMBOL_REFERENCE_LEN, 'A', 'S', 'S', g->cfg.midnight_ns + ts,
		       (uint8_t)g->count);
	memset(m + CQS_SYMBOL, ' ', CQS_SYMBOL_REFERENCE_LEN - CQS_SYMBOL);
	memcpy(m + CQS_SYMBOL, s->ticker, gen_sip_ticker_len(s));
	m[CQS_REFERENCE_LISTING] = (uint8_t)s->market;
	memset(m + CQS_REFERENCE_PREV_CLOSE, 0, 16);	/* both closing prices */
	wire_put_be16(m + CQS_REFERENCE_ROUND_LOT, s->round_lot);
	m[CQS_REFERENCE_LULD_TIER] = '1';
	memset(m + CQS_REFERENCE_LEVERAGE, 0, 4);
	m[CQS_REFERENCE_TEST] = '0';
	m[CQS_REFERENCE_IPO] = '0';
	m[CQS_REFERENCE_FSI] = '0';
	m[CQS_REFERENCE_INSTRUMENT_TYPE] = '0';
}

static int cqs_enc_action(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	struct gen_cqs *g = enc;
	const struct gen_symbol *s;
	int changed;

	if (g->error)
		return -1;
	if (a->kind != GEN_SYSTEM && a->symbol >= flow->symbol_count)
		return 0;
	if (!g->started) {
		if (send_control(g, 'A', 0, a->ts))
			return -1;
		g->started = true;
		g->next_seq = 1;
	}
	if (a->kind == GEN_SYSTEM)
		return 0;
	s = &flow->symbols[a->symbol];
	if (gen_sip_nasdaq_listed(s))
		return 0;
	if (a->kind == GEN_SYMBOL) {
		if (!g->view.listed[a->symbol])
			symbol_reference(g, s, a->ts);
		g->view.listed[a->symbol] = 1;
		return g->error ? -1 : 0;
	}
	changed = gen_sip_book_apply(&g->view.book, flow, a);
	if (changed < 0)
		return -1;
	if (changed)
		quote(g, flow, a->symbol, a->venue, a->ts);
	return g->error ? -1 : 0;
}

static int cqs_enc_finish(void *enc, uint64_t ts)
{
	struct gen_cqs *g = enc;

	if (g->error || flush_block(g))
		return -1;
	if (!g->started)
		return 0;
	/* never before the line's last (lagged) message */
	if (ts < g->clock.last)
		ts = g->clock.last;
	if (integrity_before(g, ts) || send_control(g, 'Z', g->next_seq++, ts) ||
	    send_control(g, 'T', g->next_seq - 1, ts + 1000))
		return -1;
	return 0;
}

/* wb-gen --until: send what is buffered, no End of Day. */
static int cqs_enc_stop(void *enc)
{
	struct gen_cqs *g = enc;

	return g->error || flush_block(g) ? -1 : 0;
}

static int cqs_enc_init(void *enc, const struct gen_encoder_config *cfg)
{
	struct gen_cqs *g = enc;

	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	g->len = CQS_BLOCK_HEADER_LEN;
	gen_sip_clock_init(&g->clock, cfg->sip_lag, cfg->seed, cfg->sip_lag_record);
	return 0;
}

/* The books need the flow's symbols: opened at the first action. */
static int cqs_enc_action_first(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	struct gen_cqs *g = enc;

	if (gen_sip_view_open(&g->view, flow))
		return -1;
	return cqs_enc_action(enc, flow, a);
}

static void cqs_enc_destroy(void *enc)
{
	gen_sip_view_close(&((struct gen_cqs *)enc)->view);
}

static void cqs_enc_summary(const void *enc, const struct gen_flow *flow, FILE *out)
{
	const struct gen_cqs *g = enc;

	(void)flow;
	fprintf(out, "wb-gen: CQS: %" PRIu64 " messages (%" PRIu64 " quotes, %" PRIu64
		" NBBO changes) in %" PRIu64 " blocks, %" PRIu64 " line integrity\n", g->messages,
		g->quotes, g->nbbo_changes, g->blocks, g->integrity);
}

const struct gen_proto gen_proto_cqs = {
	.size = sizeof(struct gen_cqs),
	.writes_files = false,
	.min_payload = CQS_BLOCK_HEADER_LEN + CQS_SYMBOL_REFERENCE_LEN + 1,
	.init = cqs_enc_init,
	.action = cqs_enc_action_first,
	.finish = cqs_enc_finish,
	.stop = cqs_enc_stop,
	.destroy = cqs_enc_destroy,
	.summary = cqs_enc_summary,
};
