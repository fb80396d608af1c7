/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * UQDF, the UTP Quotation Data Feed (UTP Data Feed Services 3.0c, binary
 * since v1.5), on MoldUDP64 (moldudp64.h). Big-endian. Layouts and
 * semantics, with their sources, and what was learned beyond them:
 * docs/specs/cqs-uqdf-notes.md, whose sections are cited below as
 * "notes: UQDF quotes".
 *
 * Sequencing is the shared layer's (stream.c): a stream is a channel's
 * MoldUDP64 session (give each channel its own feeds.conf channel); a new
 * session id starts the day over: the SIP's quotes of the line are cleared
 * and its directory forgotten.
 *
 * Events (event.h, the SIP events). A participant quote (QE, QF, and the
 * combined QC, QD of the odd-lot release) is a QUOTE of its market center
 * (venue = the participant) and, when its NBBO indicator says so, an
 * NBBO (venue = uqdf; both sides are always stated). Trading actions are
 * STATUS: AH for the whole market (venue = uqdf), AK for one market
 * center; MWCB Status is a market-wide STATUS; LULD Price Band a LULD;
 * Quote Wipe-Out (C P) one CLEAR of every SIP quote of that participant;
 * Market Session Open and Close and End of Transmissions venue-wide STATUS.
 * The Issue Symbol Directory gives round lots.
 *
 * Odd lots (QA, QB, and the BOLO and odd-lot parts of QC, QD) are parsed
 * and length-checked but emit nothing: odd lots never set the NBBO, a
 * QUOTE has no room for odd-lot levels, and the SIP view has no place for
 * them yet. The FINRA ADF participant quote (QM) is one market maker's,
 * not FINRA's venue quote (that is the QF from D): ignored. So are Reg
 * SHO, MWCB decline levels, auction collars, the session close recap,
 * administrative text and start/end of day, each length-checked.
 */
#include "moldudp64.h"
#include "sip.h"
#include "wire/uqdf.h"

/* Market Center Originator IDs (notes: UQDF types) to venues; E, the SIP itself, is the line's source. */
static const uint8_t uqdf_venues[128] = {
	['A'] = WB_VENUE_AMERICAN, ['B'] = WB_VENUE_BX,	   ['C'] = WB_VENUE_NATIONAL,
	['D'] = WB_VENUE_FINRA,	   ['E'] = WB_VENUE_SIP_UQDF, ['F'] = WB_VENUE_TXSE,
	['G'] = WB_VENUE_24X,	   ['H'] = WB_VENUE_MIAX,  ['I'] = WB_VENUE_ISE,
	['J'] = WB_VENUE_EDGA,	   ['K'] = WB_VENUE_EDGX,  ['L'] = WB_VENUE_LTSE,
	['M'] = WB_VENUE_TEXAS,	   ['N'] = WB_VENUE_NYSE,  ['P'] = WB_VENUE_ARCA,
	['Q'] = WB_VENUE_NASDAQ,   ['U'] = WB_VENUE_MEMX,  ['V'] = WB_VENUE_IEX,
	['W'] = WB_VENUE_CBOE,	   ['X'] = WB_VENUE_PSX,   ['Y'] = WB_VENUE_BYX,
	['Z'] = WB_VENUE_BZX,
};

static uint8_t uqdf_venue(uint8_t mc)
{
	return mc < 128 ? uqdf_venues[mc] : 0;
}

/* Everything UQDF keeps lives in the venue's shared directory. */
struct uqdf_state {
	uint8_t unused;
};

static size_t uqdf_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return sizeof(struct uqdf_state);
}

static void uqdf_state_reset(void *state)
{
	(void)state;
}

static void uqdf_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)state;
	(void)cfg;
}

struct uqdf_msg {
	const uint8_t *m;
	uint32_t len;
	uint64_t seq;
	uint64_t sip_ts;	/* sipTime: the SIP's publish time */
	uint64_t ts;		/* timestamp1: the participant's time */
};

/* ---- the trailing parts of a quote (notes: UQDF quotes) -------------------- */

static uint32_t nbbo_part_len(uint8_t indicator)
{
	return indicator == '2' ? UQDF_NBBO_SHORT_LEN : indicator == '3' ? UQDF_NBBO_LONG_LEN : 0;
}

static uint32_t bolo_part_len(uint8_t indicator)
{
	return indicator == '2' ? UQDF_BOLO_SHORT_LEN : indicator == '3' ? UQDF_BOLO_LONG_LEN :
	       indicator == '5' ? UQDF_BOLO_MPID_LEN : 0;
}

static uint32_t odd_lot_attachment_len(uint8_t type)
{
	return type == '2' ? UQDF_ODD_LOT_SHORT_LEN : type == '3' ? UQDF_ODD_LOT_LONG_LEN :
	       type == '5' ? UQDF_ODD_LOT_MPID_LEN : 0;
}

/* Where a quote type keeps its fields; 0 = the type has no such field. */
struct uqdf_quote_layout {
	uint8_t body;
	uint8_t symbol, symbol_width;
	struct sip_quote_sides sides;
	uint8_t condition, luld, nbbo, nbbo_luld;
	uint8_t adf;		/* finraAdfMpidIndicator */
	uint8_t bolo, odd_lot_type, odd_lot_count;
};

/* QE and QC share their first 48 bytes, QF, QD (and QM) their first 73. */
#define UQDF_SHORT_QUOTE_FIELDS .symbol = UQDF_QE_SYMBOL, .symbol_width = UQDF_SHORT_SYMBOL_LEN, \
	.sides = { .long_prices = false, .bid_price = UQDF_QE_BID_PRICE, \
		   .bid_size = UQDF_QE_BID_SIZE, .ask_price = UQDF_QE_ASK_PRICE, \
		   .ask_size = UQDF_QE_ASK_SIZE }, \
	.condition = UQDF_QE_CONDITION, .luld = UQDF_QE_LULD, .nbbo = UQDF_QE_NBBO, \
	.nbbo_luld = UQDF_QE_NBBO_LULD
#define UQDF_LONG_QUOTE_FIELDS .symbol = UQDF_QF_SYMBOL, .symbol_width = UQDF_SYMBOL_LEN, \
	.sides = { .long_prices = true, .bid_price = UQDF_QF_BID_PRICE, \
		   .bid_size = UQDF_QF_BID_SIZE, .ask_price = UQDF_QF_ASK_PRICE, \
		   .ask_size = UQDF_QF_ASK_SIZE }, \
	.condition = UQDF_QF_CONDITION, .luld = UQDF_QF_LULD, .nbbo = UQDF_QF_NBBO, \
	.nbbo_luld = UQDF_QF_NBBO_LULD, .adf = UQDF_QF_ADF_MPID

static const struct uqdf_quote_layout uqdf_qe = { .body = UQDF_QE_LEN, UQDF_SHORT_QUOTE_FIELDS };
static const struct uqdf_quote_layout uqdf_qf = { .body = UQDF_QF_LEN, UQDF_LONG_QUOTE_FIELDS };
static const struct uqdf_quote_layout uqdf_qc = {
	.body = UQDF_QC_LEN, UQDF_SHORT_QUOTE_FIELDS, .bolo = UQDF_QC_BOLO,
	.odd_lot_type = UQDF_QC_ODD_LOT_TYPE, .odd_lot_count = UQDF_QC_ODD_LOT_COUNT,
};
static const struct uqdf_quote_layout uqdf_qd = {
	.body = UQDF_QD_LEN, UQDF_LONG_QUOTE_FIELDS, .bolo = UQDF_QD_BOLO,
	.odd_lot_type = UQDF_QD_ODD_LOT_TYPE, .odd_lot_count = UQDF_QD_ODD_LOT_COUNT,
};
/* Odd-lot quotes: the trailing parts only. */
static const struct uqdf_quote_layout uqdf_qa = {
	.body = UQDF_QA_LEN, .symbol = UQDF_QA_SYMBOL, .symbol_width = UQDF_SHORT_SYMBOL_LEN,
	.bolo = UQDF_QA_BOLO, .odd_lot_type = UQDF_QA_ODD_LOT_TYPE,
	.odd_lot_count = UQDF_QA_ODD_LOT_COUNT,
};
static const struct uqdf_quote_layout uqdf_qb = {
	.body = UQDF_QB_LEN, .symbol = UQDF_QB_SYMBOL, .symbol_width = UQDF_SYMBOL_LEN,
	.sides = { .long_prices = true }, .bolo = UQDF_QB_BOLO,
	.odd_lot_type = UQDF_QB_ODD_LOT_TYPE, .odd_lot_count = UQDF_QB_ODD_LOT_COUNT,
};

/* Bytes a quote needs: its body and every part its indicators announce, in
 * the order notes: UQDF quotes gives. */
static uint32_t uqdf_quote_need(const uint8_t *m, const struct uqdf_quote_layout *l)
{
	uint32_t need = l->body;

	if (l->nbbo)
		need += nbbo_part_len(m[l->nbbo]);
	if (l->adf && m[l->adf] == '2')
		need += UQDF_ADF_MPID_LEN;
	if (l->bolo)
		need += bolo_part_len(m[l->bolo]);
	if (l->odd_lot_type)
		need += wire_be16(m + l->odd_lot_count) * odd_lot_attachment_len(m[l->odd_lot_type]);
	return need;
}

/* Participant quoteCond (notes: UQDF quotes): A B H O R Y are NBBO-eligible; luldBboIndicator A/B/C. */
static uint8_t uqdf_ineligible(uint8_t condition, uint8_t luld)
{
	uint8_t flags;

	switch (condition) {
	case 'A': case 'B': case 'H': case 'O': case 'R': case 'Y':
		flags = 0;
		break;
	default:
		flags = WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE;
		break;
	}
	if (luld == 'A' || luld == 'C')
		flags |= WB_EVF_BID_INELIGIBLE;
	if (luld == 'B' || luld == 'C')
		flags |= WB_EVF_ASK_INELIGIBLE;
	return flags;
}

/* The NBBO appendage at a: '2' short, '3' long. False when a price is broken. */
static bool uqdf_nbbo_appendage(struct feed_packet *pk, uint8_t indicator, const uint8_t *a,
				uint32_t lot, struct sip_nbbo *n)
{
	n->condition = (char)a[UQDF_NBBO_CONDITION];
	n->bid.venue = uqdf_venue(a[UQDF_NBBO_BID_CENTER]);
	if (indicator == '2') {
		n->bid.price = sip_price2(a + UQDF_NBBO_BID_PRICE);
		n->bid.qty = sip_shares(wire_be16(a + UQDF_NBBO_SHORT_BID_SIZE), lot);
		n->ask.venue = uqdf_venue(a[UQDF_NBBO_SHORT_ASK_CENTER]);
		n->ask.price = sip_price2(a + UQDF_NBBO_SHORT_ASK_PRICE);
		n->ask.qty = sip_shares(wire_be16(a + UQDF_NBBO_SHORT_ASK_SIZE), lot);
		return true;
	}
	n->bid.qty = sip_shares(wire_be32(a + UQDF_NBBO_LONG_BID_SIZE), lot);
	n->ask.venue = uqdf_venue(a[UQDF_NBBO_LONG_ASK_CENTER]);
	n->ask.qty = sip_shares(wire_be32(a + UQDF_NBBO_LONG_ASK_SIZE), lot);
	if (wb_unlikely(!sip_price6(a + UQDF_NBBO_BID_PRICE, &n->bid.price) ||
			!sip_price6(a + UQDF_NBBO_LONG_ASK_PRICE, &n->ask.price))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return false;
	}
	return true;
}

static void decode_quote(struct feed_packet *pk, const struct uqdf_msg *msg,
			 const struct uqdf_quote_layout *l)
{
	const uint8_t *m = msg->m;
	uint8_t indicator;
	struct sip_quote q;
	struct sip_nbbo n;
	uint32_t lot;
	uint16_t inst;
	bool nbbo;

	if (wb_unlikely(msg->len < l->body || msg->len < uqdf_quote_need(m, l))) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	if (!l->sides.bid_price) {
		/* Odd lots: never the NBBO, no QUOTE (see the top of this file). */
		pk->counters->ignored++;
		return;
	}
	indicator = m[l->nbbo];
	q.venue = uqdf_venue(m[UQDF_ORIGINATOR]);
	if (wb_unlikely(!q.venue || q.venue == WB_VENUE_SIP_UQDF ||
			indicator < '0' || indicator > '4')) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	inst = sip_instrument(pk, m + l->symbol, l->symbol_width, msg->seq, msg->ts);
	if (!inst)
		return;
	lot = sip_size_unit(pk, inst, msg->sip_ts);
	q.ts = msg->ts;
	q.sip_ts = msg->sip_ts;
	q.condition = m[l->condition];
	if (!sip_quote_sides(pk, m, &l->sides, lot, &q))
		return;
	q.flags = uqdf_ineligible(q.condition, m[l->luld]);

	/* '0' unchanged; '1' no NBBO; '2'/'3' an appendage; '4' this quote is the NBBO. */
	nbbo = indicator != '0';
	if (nbbo) {
		__builtin_memset(&n, 0, sizeof(n));
		n.sip_ts = msg->sip_ts;
		n.indicator = (char)indicator;
		n.luld = m[l->nbbo_luld] == ' ' ? 0 : (char)m[l->nbbo_luld];
		n.sides = WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED;
		if (indicator == '4') {
			n.bid = (struct sip_best){ q.bid_price, q.bid_qty, q.venue };
			n.ask = (struct sip_best){ q.ask_price, q.ask_qty, q.venue };
		} else if (indicator != '1' &&
			   !uqdf_nbbo_appendage(pk, indicator, m + l->body, lot, &n)) {
			return;
		}
	}
	sip_emit_quote(pk, inst, msg->seq, &q);
	if (nbbo)
		sip_emit_nbbo(pk, inst, msg->seq, &n);
}

/* ---- administrative and control messages (notes: UQDF control) ------------- */

/* Minimum length of each administrative type; 0 = not in the spec. */
static const uint8_t uqdf_admin_len[128] = {
	['A'] = UQDF_AA_LEN, ['H'] = UQDF_AH_LEN, ['K'] = UQDF_AK_LEN, ['B'] = UQDF_AB_LEN,
	['V'] = UQDF_AV_LEN, ['P'] = UQDF_AP_LEN, ['C'] = UQDF_AC_LEN, ['D'] = UQDF_AD_LEN,
	['E'] = UQDF_AE_LEN, ['R'] = UQDF_AR_LEN,
};

/* Trading action codes (AH, AK) to a trading state. */
static uint8_t uqdf_action_state(uint8_t action)
{
	switch (action) {
	case 'H':
		return WB_STATE_HALTED;
	case 'P':
		return WB_STATE_PAUSED;
	case 'Q':
		return WB_STATE_QUOTATION_ONLY;
	case 'T':
		return WB_STATE_TRADING;
	default:
		return WB_STATE_UNKNOWN;
	}
}

static void decode_trading_action(struct feed_packet *pk, const struct uqdf_msg *msg,
				  bool cross_sro)
{
	const uint8_t *m = msg->m;
	uint8_t state = uqdf_action_state(m[UQDF_AH_ACTION]);
	uint8_t venue = cross_sro ? pk->venue : uqdf_venue(m[UQDF_AK_MARKET_CENTER]);
	uint16_t inst;

	if (wb_unlikely(state == WB_STATE_UNKNOWN || !venue)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	inst = sip_instrument(pk, m + UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN, msg->seq, msg->ts);
	if (!inst)
		return;
	/* The action's own time; AH also gives its reason (T1, LUDP, MWC1, ...). */
	sip_emit_status(pk, inst, venue, msg->seq,
			wire_be64(m + (cross_sro ? UQDF_AH_TIME : UQDF_AK_TIME)), state,
			(char)m[UQDF_AH_ACTION], cross_sro ? (const char *)m + UQDF_AH_REASON : "    ",
			0);
}

static void decode_admin(struct feed_packet *pk, const struct uqdf_msg *msg)
{
	const uint8_t *m = msg->m;
	uint8_t type = m[UQDF_TYPE], min = type < 128 ? uqdf_admin_len[type] : 0;
	char reason[4];
	uint16_t inst, lot;
	int64_t lower, upper;

	if (wb_unlikely(!min)) {
		feed_count_error(pk, FEED_ERR_UNKNOWN_TYPE);
		return;
	}
	if (wb_unlikely(msg->len < min ||
			(type == 'A' && msg->len < UQDF_AA_LEN + (uint32_t)wire_be16(m + UQDF_AA_TEXT_LEN)) ||
			(type == 'R' && msg->len < UQDF_AR_LEN + UQDF_AR_CENTER_LEN *
			 (uint32_t)wire_be16(m + UQDF_AR_CENTERS)))) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	switch (type) {
	case 'H':
	case 'K':
		decode_trading_action(pk, msg, type == 'H');
		return;
	case 'B':
		lot = wire_be16(m + UQDF_AB_ROUND_LOT);
		sip_define(pk, m + UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN,
			   lot ? lot : SIP_DEFAULT_ROUND_LOT, (char)m[UQDF_AB_MARKET_TIER], msg->seq,
			   msg->ts);
		return;
	case 'P':
		if (wb_unlikely(!sip_price6(m + UQDF_AP_LIMIT_DOWN, &lower) ||
				!sip_price6(m + UQDF_AP_LIMIT_UP, &upper))) {
			feed_count_error(pk, FEED_ERR_BAD_FIELD);
			return;
		}
		inst = sip_instrument(pk, m + UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN, msg->seq, msg->ts);
		if (inst)
			sip_emit_luld(pk, inst, msg->seq, wire_be64(m + UQDF_AP_TIME), lower, upper,
				      (char)m[UQDF_AP_INDICATOR]);
		return;
	case 'D':
		if (wb_unlikely(m[UQDF_AD_STATUS] < '1' || m[UQDF_AD_STATUS] > '3')) {
			feed_count_error(pk, FEED_ERR_BAD_FIELD);
			return;
		}
		sip_mwcb_reason((char)m[UQDF_AD_STATUS], reason);
		sip_emit_status(pk, 0, pk->venue, msg->seq, msg->ts, WB_STATE_HALTED,
				(char)m[UQDF_AD_STATUS],
				reason, 0);
		return;
	default:
		/* A V E R C: Reg SHO, auction collars, recaps, decline levels, text. */
		pk->counters->ignored++;
		return;
	}
}

static void decode_control(struct feed_packet *pk, const struct uqdf_msg *msg)
{
	static const char no_reason[4] = { ' ', ' ', ' ', ' ' };
	const uint8_t *m = msg->m;
	struct wb_event *ev;
	uint8_t venue;

	switch (m[UQDF_TYPE]) {
	case 'O':
	case 'C':
		sip_emit_status(pk, 0, pk->venue, msg->seq, msg->ts,
				m[UQDF_TYPE] == 'O' ? WB_STATE_OPEN : WB_STATE_CLOSED, (char)m[UQDF_TYPE],
				no_reason, 0);
		return;
	case 'Z':
		/* End of Transmissions: nothing more this session. */
		feed_stream_ended(pk, 0);
		sip_emit_status(pk, 0, pk->venue, msg->seq, msg->ts, WB_STATE_CLOSED, 'Z', no_reason,
				WB_EVF_SESSION_END);
		return;
	case 'P':
		/* Quote Wipe-Out: every quote of that participant, in every symbol, is gone. */
		venue = uqdf_venue(m[UQDF_ORIGINATOR]);
		if (wb_unlikely(!venue || venue == WB_VENUE_SIP_UQDF)) {
			feed_count_error(pk, FEED_ERR_BAD_FIELD);
			return;
		}
		ev = feed_emit(pk, WB_EV_CLEAR, 0, msg->seq, msg->ts);
		if (!ev)
			return;
		ev->venue = venue;
		ev->flags = WB_EVF_SIP;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		feed_commit(pk);
		return;
	case 'I':
	case 'J':
		pk->counters->ignored++;
		return;
	default:
		feed_count_error(pk, FEED_ERR_UNKNOWN_TYPE);
		return;
	}
}

static void decode_message(struct feed_packet *pk, const struct uqdf_msg *msg)
{
	const uint8_t *m = msg->m;

	if (wb_unlikely(m[UQDF_VERSION_BYTE] != UQDF_VERSION)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	switch (m[UQDF_CATEGORY] << 8 | m[UQDF_TYPE]) {
	case 'Q' << 8 | 'E':
		decode_quote(pk, msg, &uqdf_qe);
		return;
	case 'Q' << 8 | 'F':
		decode_quote(pk, msg, &uqdf_qf);
		return;
	case 'Q' << 8 | 'C':
		decode_quote(pk, msg, &uqdf_qc);
		return;
	case 'Q' << 8 | 'D':
		decode_quote(pk, msg, &uqdf_qd);
		return;
	case 'Q' << 8 | 'A':
		decode_quote(pk, msg, &uqdf_qa);
		return;
	case 'Q' << 8 | 'B':
		decode_quote(pk, msg, &uqdf_qb);
		return;
	case 'Q' << 8 | 'M':
		if (wb_unlikely(msg->len < UQDF_QM_LEN))
			feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		else
			pk->counters->ignored++;
		return;
	}
	if (m[UQDF_CATEGORY] == 'A')
		decode_admin(pk, msg);
	else if (m[UQDF_CATEGORY] == 'C')
		decode_control(pk, msg);
	else
		feed_count_error(pk, FEED_ERR_UNKNOWN_TYPE);
}

static uint32_t uqdf_decode(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			    const struct feed_frame *f, uint32_t skip)
{
	uint32_t off = MOLD_HEADER_LEN, i;
	struct uqdf_msg msg;

	for (i = 0; i < f->count; i++) {
		uint32_t mlen;

		if (wb_unlikely(off + MOLD_BLOCK_LENGTH_LEN > len))
			goto truncated;
		mlen = wire_be16(p + off);
		off += MOLD_BLOCK_LENGTH_LEN;
		if (wb_unlikely(mlen > len - off))
			goto truncated;
		if (wb_likely(i >= skip)) {
			pk->counters->messages++;
			if (wb_unlikely(mlen < UQDF_HEADER_LEN)) {
				feed_count_error(pk, FEED_ERR_BAD_LENGTH);
			} else {
				msg.m = p + off;
				msg.len = mlen;
				msg.seq = f->seq + i;
				msg.sip_ts = wire_be64(p + off + UQDF_SIP_TIME);
				msg.ts = wire_be64(p + off + UQDF_TIMESTAMP1);
				decode_message(pk, &msg);
			}
		}
		off += mlen;
	}
	if (wb_unlikely(off != len))
		feed_count_error(pk, FEED_ERR_BAD_COUNT);
	return i;
truncated:
	feed_count_error(pk, FEED_ERR_TRUNCATED);
	return i;
}

/*
 * A new MoldUDP64 session is a new day: the SIP's quotes and directory of
 * yesterday are gone. A snapshot (UTP Snap-Shot) keeps the directory: it
 * sends every Issue Symbol Directory again, and the stream's clear
 * (stream.c) empties the SIP view of its symbols.
 */
static void uqdf_stream_event(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	struct feed_venue *v = pk->v;

	(void)unit;
	if (ev != FEED_STREAM_NEW_SESSION)
		return;
	feed_directory_clear(&v->dir);
	__builtin_memset(v->announced, 0, sizeof(v->announced));
	__builtin_memset(v->stream_of, 0, sizeof(v->stream_of));
	feed_emit_clear(pk, 0, 0, 0, WB_EVF_SIP | WB_EVF_SESSION_END);
}

static int uqdf_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	return mold_frame(p, len, f);
}

static int uqdf_next_message(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			     uint32_t *mlen)
{
	return mold_next(p, len, off, msg, mlen);
}

/* ---- raw view: the spec's fields of every message (wb-dump --raw) ------- */

#define UQDF_HEADER \
	FEED_F_CHAR("v", UQDF_VERSION_BYTE), FEED_F_CHAR("", UQDF_CATEGORY), \
	FEED_F_CHAR("", UQDF_TYPE), \
	FEED_F_CHAR("mc", UQDF_ORIGINATOR), FEED_F_CHAR("sub", UQDF_SUB_MARKET), \
	FEED_F_EPOCH_NS("sip", UQDF_SIP_TIME), \
	FEED_F_EPOCH_NS("ts1", UQDF_TIMESTAMP1)
#define UQDF_SHORT_QUOTE \
	UQDF_HEADER, FEED_F_TICKER("", UQDF_QE_SYMBOL, UQDF_SHORT_SYMBOL_LEN), \
	FEED_F_UINT("bid", UQDF_QE_BID_SIZE, 2), \
	FEED_F_PRICE("@", UQDF_QE_BID_PRICE, 2, 2), FEED_F_UINT("ask", UQDF_QE_ASK_SIZE, 2), \
	FEED_F_PRICE("@", UQDF_QE_ASK_PRICE, 2, 2), \
	FEED_F_CHAR("cond", UQDF_QE_CONDITION), FEED_F_CHAR("sip_gen", UQDF_QE_SIP_GENERATED), \
	FEED_F_CHAR("luld", UQDF_QE_LULD), \
	FEED_F_CHAR("rii", UQDF_QE_RETAIL_INTEREST), FEED_F_CHAR("nbbo", UQDF_QE_NBBO), \
	FEED_F_CHAR("nbbo_luld", UQDF_QE_NBBO_LULD)
#define UQDF_LONG_QUOTE \
	UQDF_HEADER, FEED_F_EPOCH_NS("ts2", UQDF_QF_TIMESTAMP2), \
	FEED_F_TICKER("", UQDF_QF_SYMBOL, UQDF_SYMBOL_LEN), \
	FEED_F_UINT("bid", UQDF_QF_BID_SIZE, 4), FEED_F_PRICE("@", UQDF_QF_BID_PRICE, 8, 6), \
	FEED_F_UINT("ask", UQDF_QF_ASK_SIZE, 4), \
	FEED_F_PRICE("@", UQDF_QF_ASK_PRICE, 8, 6), FEED_F_CHAR("cond", UQDF_QF_CONDITION), \
	FEED_F_CHAR("sip_gen", UQDF_QF_SIP_GENERATED), \
	FEED_F_CHAR("luld", UQDF_QF_LULD), FEED_F_CHAR("rii", UQDF_QF_RETAIL_INTEREST), \
	FEED_F_CHAR("nbbo", UQDF_QF_NBBO), \
	FEED_F_CHAR("nbbo_luld", UQDF_QF_NBBO_LULD), FEED_F_CHAR("adf", UQDF_QF_ADF_MPID)

static const struct feed_field uqdf_header_only[] = { UQDF_HEADER };
static const struct feed_field uqdf_qe_fields[] = { UQDF_SHORT_QUOTE };
static const struct feed_field uqdf_qf_fields[] = { UQDF_LONG_QUOTE };
static const struct feed_field uqdf_qc_fields[] = {
	UQDF_SHORT_QUOTE, FEED_F_CHAR("bolo", UQDF_QC_BOLO),
	FEED_F_CHAR("odd_lots", UQDF_QC_ODD_LOT_TYPE),
	FEED_F_UINT("count", UQDF_QC_ODD_LOT_COUNT, 2),
};
static const struct feed_field uqdf_qd_fields[] = {
	UQDF_LONG_QUOTE, FEED_F_CHAR("bolo", UQDF_QD_BOLO),
	FEED_F_CHAR("odd_lots", UQDF_QD_ODD_LOT_TYPE),
	FEED_F_UINT("count", UQDF_QD_ODD_LOT_COUNT, 2),
};
static const struct feed_field uqdf_qa_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_QA_SYMBOL, UQDF_SHORT_SYMBOL_LEN),
	FEED_F_CHAR("sip_gen", UQDF_QA_SIP_GENERATED), FEED_F_CHAR("bolo", UQDF_QA_BOLO),
	FEED_F_CHAR("odd_lots", UQDF_QA_ODD_LOT_TYPE),
	FEED_F_UINT("count", UQDF_QA_ODD_LOT_COUNT, 2),
};
static const struct feed_field uqdf_qb_fields[] = {
	UQDF_HEADER, FEED_F_EPOCH_NS("ts2", UQDF_QB_TIMESTAMP2),
	FEED_F_TICKER("", UQDF_QB_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("sip_gen", UQDF_QB_SIP_GENERATED), FEED_F_CHAR("bolo", UQDF_QB_BOLO),
	FEED_F_CHAR("odd_lots", UQDF_QB_ODD_LOT_TYPE),
	FEED_F_UINT("count", UQDF_QB_ODD_LOT_COUNT, 2),
};
static const struct feed_field uqdf_qm_fields[] = {
	UQDF_HEADER, FEED_F_EPOCH_NS("ts2", UQDF_QF_TIMESTAMP2),
	FEED_F_TICKER("", UQDF_QF_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_UINT("bid", UQDF_QF_BID_SIZE, 4), FEED_F_PRICE("@", UQDF_QF_BID_PRICE, 8, 6),
	FEED_F_UINT("ask", UQDF_QF_ASK_SIZE, 4),
	FEED_F_PRICE("@", UQDF_QF_ASK_PRICE, 8, 6), FEED_F_CHAR("cond", UQDF_QF_CONDITION),
	FEED_F_TEXT("mpid", UQDF_QM_MPID, 4),
};
static const struct feed_field uqdf_aa_fields[] = {
	UQDF_HEADER, FEED_F_UINT("text_len", UQDF_AA_TEXT_LEN, 2),
};
static const struct feed_field uqdf_ah_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("action", UQDF_AH_ACTION),
	FEED_F_UINT("action_seq", UQDF_AH_SEQUENCE, 4), FEED_F_EPOCH_NS("at", UQDF_AH_TIME),
	FEED_F_TEXT("reason", UQDF_AH_REASON, 6),
};
static const struct feed_field uqdf_ak_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("action", UQDF_AK_ACTION), FEED_F_EPOCH_NS("at", UQDF_AK_TIME),
	FEED_F_CHAR("market", UQDF_AK_MARKET_CENTER),
};
static const struct feed_field uqdf_ab_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_TEXT("old", UQDF_AB_OLD_SYMBOL, 11), FEED_F_TEXT("name", UQDF_AB_NAME, 30),
	FEED_F_CHAR("type", UQDF_AB_TYPE), FEED_F_TEXT("subtype", UQDF_AB_SUBTYPE, 2),
	FEED_F_CHAR("tier", UQDF_AB_MARKET_TIER),
	FEED_F_CHAR("auth", UQDF_AB_AUTHENTICITY), FEED_F_CHAR("sst", UQDF_AB_SST),
	FEED_F_UINT("lot", UQDF_AB_ROUND_LOT, 2),
	FEED_F_CHAR("fsi", UQDF_AB_FSI),
};
static const struct feed_field uqdf_av_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("regsho", UQDF_AV_ACTION),
};
static const struct feed_field uqdf_ap_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("band", UQDF_AP_INDICATOR), FEED_F_EPOCH_NS("at", UQDF_AP_TIME),
	FEED_F_PRICE("down", UQDF_AP_LIMIT_DOWN, 8, 6), FEED_F_PRICE("up", UQDF_AP_LIMIT_UP, 8, 6),
};
static const struct feed_field uqdf_ac_fields[] = {
	UQDF_HEADER, FEED_F_PRICE("level1", UQDF_AC_LEVEL1, 8, 6),
	FEED_F_PRICE("level2", UQDF_AC_LEVEL2, 8, 6),
	FEED_F_PRICE("level3", UQDF_AC_LEVEL3, 8, 6),
};
static const struct feed_field uqdf_ad_fields[] = {
	UQDF_HEADER, FEED_F_CHAR("level", UQDF_AD_STATUS),
};
static const struct feed_field uqdf_ae_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_UINT("action_seq", UQDF_AE_SEQUENCE, 4),
	FEED_F_PRICE("reference", UQDF_AE_REFERENCE, 8, 6), FEED_F_PRICE("up", UQDF_AE_UP, 8, 6),
	FEED_F_PRICE("down", UQDF_AE_DOWN, 8, 6), FEED_F_UINT("extension", UQDF_AE_EXTENSION, 1),
};
static const struct feed_field uqdf_ar_fields[] = {
	UQDF_HEADER, FEED_F_TICKER("", UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN),
	FEED_F_CHAR("nbb_mc", UQDF_AR_BID_CENTER), FEED_F_UINT("nbb", UQDF_AR_BID_SIZE, 8),
	FEED_F_PRICE("@", UQDF_AR_BID_PRICE, 8, 6), FEED_F_CHAR("nbo_mc", UQDF_AR_ASK_CENTER),
	FEED_F_UINT("nbo", UQDF_AR_ASK_SIZE, 8),
	FEED_F_PRICE("@", UQDF_AR_ASK_PRICE, 8, 6), FEED_F_CHAR("special", UQDF_AR_SPECIAL),
	FEED_F_UINT("centers", UQDF_AR_CENTERS, 2),
};

#define UQDF_L(name, len, fields) FEED_LAYOUT(name, len, fields)

static const struct feed_msg_layout uqdf_quote_layouts[] = {
	UQDF_L("Quote Short Form", UQDF_QE_LEN, uqdf_qe_fields),	/* QE */
	UQDF_L("Quote Long Form", UQDF_QF_LEN, uqdf_qf_fields),	/* QF */
	UQDF_L("Combined Quote Short", UQDF_QC_LEN, uqdf_qc_fields), /* QC */
	UQDF_L("Combined Quote Long", UQDF_QD_LEN, uqdf_qd_fields), /* QD */
	UQDF_L("Odd Lot Quote Short", UQDF_QA_LEN, uqdf_qa_fields), /* QA */
	UQDF_L("Odd Lot Quote Long", UQDF_QB_LEN, uqdf_qb_fields), /* QB */
	UQDF_L("FINRA ADF Market Participant Quote", UQDF_QM_LEN, uqdf_qm_fields), /* QM */
};

static const struct feed_msg_layout uqdf_admin_layouts[128] = {
	['A'] = UQDF_L("General Administrative", UQDF_AA_LEN, uqdf_aa_fields),
	['H'] = UQDF_L("Cross-SRO Trading Action", UQDF_AH_LEN, uqdf_ah_fields),
	['K'] = UQDF_L("Market Center Trading Action", UQDF_AK_LEN, uqdf_ak_fields),
	['B'] = UQDF_L("Issue Symbol Directory", UQDF_AB_LEN, uqdf_ab_fields),
	['V'] = UQDF_L("Reg SHO Restriction", UQDF_AV_LEN, uqdf_av_fields),
	['P'] = UQDF_L("LULD Price Band", UQDF_AP_LEN, uqdf_ap_fields),
	['C'] = UQDF_L("MWCB Decline Level", UQDF_AC_LEN, uqdf_ac_fields),
	['D'] = UQDF_L("MWCB Status", UQDF_AD_LEN, uqdf_ad_fields),
	['E'] = UQDF_L("Auction Collar", UQDF_AE_LEN, uqdf_ae_fields),
	['R'] = UQDF_L("Session Close Recap", UQDF_AR_LEN, uqdf_ar_fields),
};

static const struct feed_msg_layout uqdf_control_layouts[128] = {
	['I'] = UQDF_L("Start of Day", UQDF_CONTROL_LEN, uqdf_header_only),
	['J'] = UQDF_L("End of Day", UQDF_CONTROL_LEN, uqdf_header_only),
	['O'] = UQDF_L("Market Session Open", UQDF_CONTROL_LEN, uqdf_header_only),
	['C'] = UQDF_L("Market Session Close", UQDF_CONTROL_LEN, uqdf_header_only),
	['Z'] = UQDF_L("End of Transmissions", UQDF_CONTROL_LEN, uqdf_header_only),
	['P'] = UQDF_L("Quote Wipe-Out", UQDF_CONTROL_LEN, uqdf_header_only),
};

/* NBBO appendages (notes: UQDF quotes): the appendage's condition, then each side's
 * market center, price and size. */
static const struct feed_field uqdf_nbbo_short_fields[] = {
	FEED_F_CHAR("nbbo_cond", UQDF_NBBO_CONDITION),
	FEED_F_CHAR("nbb_mc", UQDF_NBBO_BID_CENTER),
	FEED_F_UINT("nbb", UQDF_NBBO_SHORT_BID_SIZE, 2),
	FEED_F_PRICE("@", UQDF_NBBO_BID_PRICE, 2, 2),
	FEED_F_CHAR("nbo_mc", UQDF_NBBO_SHORT_ASK_CENTER),
	FEED_F_UINT("nbo", UQDF_NBBO_SHORT_ASK_SIZE, 2),
	FEED_F_PRICE("@", UQDF_NBBO_SHORT_ASK_PRICE, 2, 2),
};
static const struct feed_field uqdf_nbbo_long_fields[] = {
	FEED_F_CHAR("nbbo_cond", UQDF_NBBO_CONDITION),
	FEED_F_CHAR("nbb_mc", UQDF_NBBO_BID_CENTER),
	FEED_F_UINT("nbb", UQDF_NBBO_LONG_BID_SIZE, 4),
	FEED_F_PRICE("@", UQDF_NBBO_BID_PRICE, 8, 6),
	FEED_F_CHAR("nbo_mc", UQDF_NBBO_LONG_ASK_CENTER),
	FEED_F_UINT("nbo", UQDF_NBBO_LONG_ASK_SIZE, 4),
	FEED_F_PRICE("@", UQDF_NBBO_LONG_ASK_PRICE, 8, 6),
};
static const struct feed_msg_layout uqdf_nbbo_short =
	UQDF_L("Short Form NBBO Appendage", UQDF_NBBO_SHORT_LEN, uqdf_nbbo_short_fields);
static const struct feed_msg_layout uqdf_nbbo_long =
	UQDF_L("Long Form NBBO Appendage", UQDF_NBBO_LONG_LEN, uqdf_nbbo_long_fields);

static const struct feed_msg_layout *uqdf_layout(const uint8_t *m, uint32_t len)
{
	static const char quote_types[] = "EFCDABM";
	const struct feed_msg_layout *l = 0;

	if (len < UQDF_TYPE + 1 || m[UQDF_TYPE] >= 128)
		return 0;
	if (m[UQDF_CATEGORY] == 'Q') {
		for (uint32_t i = 0; quote_types[i]; i++)
			if (quote_types[i] == m[UQDF_TYPE])
				return &uqdf_quote_layouts[i];
		return 0;
	}
	if (m[UQDF_CATEGORY] == 'A')
		l = &uqdf_admin_layouts[m[UQDF_TYPE]];
	else if (m[UQDF_CATEGORY] == 'C')
		l = &uqdf_control_layouts[m[UQDF_TYPE]];
	return l && l->name ? l : 0;
}

/* A quote's NBBO appendage, the first of its trailing parts ('2' short, '3' long). */
static int uqdf_parts(const uint8_t *m, uint32_t len, struct feed_raw_part *parts, int max)
{
	const struct feed_msg_layout *lay = uqdf_layout(m, len), *a;
	uint32_t indicator;

	if (!lay || m[UQDF_CATEGORY] != 'Q' || len < lay->min_len || max < 1)
		return 0;
	switch (m[UQDF_TYPE]) {
	case 'E': case 'C': indicator = UQDF_QE_NBBO; break;
	case 'F': case 'D': indicator = UQDF_QF_NBBO; break;
	default: return 0;
	}
	a = m[indicator] == '2' ? &uqdf_nbbo_short : m[indicator] == '3' ? &uqdf_nbbo_long : 0;
	if (!a || lay->min_len + a->min_len > len)
		return 0;
	parts[0].layout = a;
	parts[0].offset = lay->min_len;
	return 1;
}

/* MoldUDP64 whose first message is a UTP message: version '1', a known category. */
static bool uqdf_looks_like(const uint8_t *p, uint32_t len)
{
	const uint32_t first = MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN;	/* its first message */

	if (!mold_looks_like(p, len))
		return false;
	if (wire_be16(p + MOLD_COUNT) == MOLD_HEARTBEAT ||
	    wire_be16(p + MOLD_COUNT) == MOLD_END_OF_SESSION)
		return true;
	return len >= first + UQDF_HEADER_LEN && p[first + UQDF_VERSION_BYTE] == UQDF_VERSION &&
	       uqdf_layout(p + first, len - first);
}

const struct feed_proto feed_proto_uqdf = {
	.name = "uqdf",
	.title = "UTP Quotation Data Feed (UQDF) binary over MoldUDP64",
	.venues = 1u << FEED_SOURCE_UQDF,
	.units = 1,
	.first_seq = 1,
	.big_endian = true,
	.type_offset = 1,
	.type_width = 2,
	.directory_keys = FEED_MAX_INSTRUMENTS,
	.sample_tickers = "AKAM,AMZN",
	.state_size = uqdf_state_size,
	.state_init = uqdf_state_init,
	.state_reset = uqdf_state_reset,
	.frame = uqdf_frame,
	.snapshot_frame = mold_snapshot_frame,
	.decode = uqdf_decode,
	.stream_event = uqdf_stream_event,
	.next_message = uqdf_next_message,
	.layout = uqdf_layout,
	.parts = uqdf_parts,
	.looks_like = uqdf_looks_like,
};
