/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * CQS, the CTA Consolidated Quotation System: CTA Pillar binary output,
 * block versions 0, 1 and 2 (they share every layout used here).
 * Big-endian. Layouts and semantics, with their sources, and what was
 * learned beyond them: docs/specs/cqs-uqdf-notes.md, whose sections are
 * cited below as "notes: CQS framing".
 *
 * Framing (notes: CQS framing). One block per datagram: a 20-byte block header
 * whose Block Size must be the datagram's (a shorter block is decoded and the
 * surplus counted as bad_length; a longer one is truncated), whose 16-bit
 * checksum (the sum of every other byte) must match (else the block is dropped:
 * bad_checksum), then Messages In Block messages, each advanced by its own
 * Message Length, then an optional pad byte. A count that disagrees with the
 * messages is bad_count. Retransmitted blocks (V) and snapshot blocks (version
 * 11) are recovery traffic nobody here asked for: counted as recovery, not
 * decoded.
 *
 * Sequencing (notes: CQS sequencing) is the shared layer's (stream.c): a line
 * is a stream; give each line its own feeds.conf channel (24 lines, 2
 * networks), its A and B copies the same channel. The block sequence is the
 * first message's; Start of Day (sequence 0) and Reset Block Sequence Number
 * restart the stream at their sequence without a gap (the copy on the other
 * line is recognized by the block's SIP timestamp) and clear its quotes; Line
 * Integrity carries the last sequence sent, so it is a heartbeat saying the
 * next is that + 1; End of Day ends the stream.
 *
 * Events (event.h, the SIP events): a Long, Short or FINRA quote is a QUOTE
 * of its participant (venue = the participant) and, when its National BBO
 * Indicator says the NBBO changed, an NBBO (venue = cqs) carrying both
 * sides: a side the indicator leaves unchanged repeats the instrument's
 * last NBBO on the stream (WB_NBBO_* say which sides were stated). A
 * quote whose Security Status is a LULD band (0, 9) is a LULD event; any
 * other status is a STATUS of that participant (or of the SIP, for S) and
 * the quote, ineligible on both sides. MWCB Status is a market-wide
 * STATUS; FINRA open/close and End of Day are STATUS of FINRA and of the
 * line. Symbol Reference Data is the directory (round lots). Decline
 * levels, auction status, administrative text and the other control
 * messages are counted as ignored.
 */
#include "sip.h"
#include "wire/cqs.h"

/* What a National BBO Indicator says of one side (notes: CQS NBBO indicator). */
enum cqs_side_news {
	CQS_SIDE_UNCHANGED = 0,	/* the NBBO side did not change */
	CQS_SIDE_QUOTE,		/* this quote is that side of the NBBO */
	CQS_SIDE_NONE,		/* there is no such side any more */
	CQS_SIDE_SHORT,		/* a short appendage follows */
	CQS_SIDE_LONG,		/* a long appendage follows */
};

/*
 * The whole A-W table of the National BBO Indicator (the v2.10a code
 * table, checked against the OMI v2.10a dissector): codes A-O combine
 * {unchanged, quote, none} for the bid with {unchanged, quote, short,
 * long, none} for the offer; P-W give a bid appendage.
 */
static const struct {
	uint8_t bid, offer;
} cqs_nbbo_codes['W' - 'A' + 1] = {
	{ CQS_SIDE_UNCHANGED, CQS_SIDE_UNCHANGED }, /* A */ { CQS_SIDE_UNCHANGED, CQS_SIDE_QUOTE },
	{ CQS_SIDE_UNCHANGED, CQS_SIDE_SHORT },	   { CQS_SIDE_UNCHANGED, CQS_SIDE_LONG },
	{ CQS_SIDE_UNCHANGED, CQS_SIDE_NONE },	   { CQS_SIDE_QUOTE, CQS_SIDE_UNCHANGED }, /* F */
	{ CQS_SIDE_QUOTE, CQS_SIDE_QUOTE },	   { CQS_SIDE_QUOTE, CQS_SIDE_SHORT },
	{ CQS_SIDE_QUOTE, CQS_SIDE_LONG },	   { CQS_SIDE_QUOTE, CQS_SIDE_NONE },
	{ CQS_SIDE_NONE, CQS_SIDE_UNCHANGED },	   /* K */ { CQS_SIDE_NONE, CQS_SIDE_QUOTE },
	{ CQS_SIDE_NONE, CQS_SIDE_SHORT },	   { CQS_SIDE_NONE, CQS_SIDE_LONG },
	{ CQS_SIDE_NONE, CQS_SIDE_NONE },	   { CQS_SIDE_SHORT, CQS_SIDE_UNCHANGED }, /* P */
	{ CQS_SIDE_LONG, CQS_SIDE_UNCHANGED },	   { CQS_SIDE_SHORT, CQS_SIDE_QUOTE },
	{ CQS_SIDE_LONG, CQS_SIDE_QUOTE },	   { CQS_SIDE_SHORT, CQS_SIDE_SHORT },
	{ CQS_SIDE_LONG, CQS_SIDE_LONG },	   { CQS_SIDE_SHORT, CQS_SIDE_NONE },
	{ CQS_SIDE_LONG, CQS_SIDE_NONE },	   /* W */
};

static const uint8_t cqs_appendage_len[] = {
	[CQS_SIDE_SHORT] = CQS_SHORT_APPENDAGE_LEN, [CQS_SIDE_LONG] = CQS_LONG_APPENDAGE_LEN,
};

/* Participant IDs (notes: CQS quotes) to venues; S, the SIP itself, is the line's source. */
static const uint8_t cqs_venues[128] = {
	['A'] = WB_VENUE_AMERICAN, ['B'] = WB_VENUE_BX,    ['C'] = WB_VENUE_NATIONAL,
	['D'] = WB_VENUE_FINRA,	   ['G'] = WB_VENUE_24X,   ['H'] = WB_VENUE_MIAX,
	['I'] = WB_VENUE_ISE,	   ['J'] = WB_VENUE_EDGA,  ['K'] = WB_VENUE_EDGX,
	['L'] = WB_VENUE_LTSE,	   ['M'] = WB_VENUE_TEXAS, ['N'] = WB_VENUE_NYSE,
	['P'] = WB_VENUE_ARCA,	   ['S'] = WB_VENUE_SIP_CQS, ['T'] = WB_VENUE_NASDAQ,
	['U'] = WB_VENUE_MEMX,	   ['V'] = WB_VENUE_IEX,   ['W'] = WB_VENUE_CBOE,
	['X'] = WB_VENUE_PSX,	   ['Y'] = WB_VENUE_BYX,   ['Z'] = WB_VENUE_BZX,
};

static uint8_t cqs_venue(uint8_t participant)
{
	return participant < 128 ? cqs_venues[participant] : 0;
}

/* The last NBBO of each instrument, for the side a message leaves unchanged. */
struct cqs_nbbo_state {
	struct sip_best bid, ask;
	uint8_t known;		/* WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED */
};

struct cqs_state {
	struct cqs_nbbo_state nbbo[FEED_MAX_INSTRUMENTS];
};

static size_t cqs_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return sizeof(struct cqs_state);
}

static void cqs_state_reset(void *state)
{
	__builtin_memset(state, 0, sizeof(struct cqs_state));
}

static void cqs_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)cfg;
	cqs_state_reset(state);
}

/* Seconds and nanoseconds since the epoch (two u32) as epoch ns. */
static inline uint64_t cqs_time(const uint8_t *p)
{
	return (uint64_t)wire_be32(p) * NS_PER_SEC + wire_be32(p + CQS_TIME_LEN / 2);
}

/* ---- quotes ---------------------------------------------------------------- */

/* What every message handler needs. */
struct cqs_msg {
	const uint8_t *m;
	uint32_t len;
	uint64_t seq;
	uint64_t ts;		/* Timestamp 1: the participant's time (the SIP's for S) */
	uint64_t sip_ts;	/* the block's SIP timestamp */
};

/*
 * Quote Condition (notes: CQS quotes): A B H O R W are eligible for the NBBO; E
 * only the offer, F only the bid; anything else neither. The LULD Indicator
 * marks a side non-executable: A the bid, B the offer.
 */
#define CQS_NEITHER (WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE)
/* The sides a condition lets set the NBBO (as ineligible bits to clear). */
static const uint8_t cqs_condition_eligible[256] = {
	['A'] = CQS_NEITHER, ['B'] = CQS_NEITHER, ['H'] = CQS_NEITHER, ['O'] = CQS_NEITHER,
	['R'] = CQS_NEITHER, ['W'] = CQS_NEITHER,
	['E'] = WB_EVF_ASK_INELIGIBLE, ['F'] = WB_EVF_BID_INELIGIBLE,
};

static inline uint8_t cqs_ineligible(uint8_t condition, uint8_t luld)
{
	return (uint8_t)((CQS_NEITHER & ~cqs_condition_eligible[condition]) |
			 (luld == 'A' ? WB_EVF_BID_INELIGIBLE : 0) |
			 (luld == 'B' ? WB_EVF_ASK_INELIGIBLE : 0));
}

/* Security Status Indicator (notes: CQS quotes) to a trading state. */
static uint8_t cqs_status_state(uint8_t status)
{
	switch (status) {
	case 'T':
		return WB_STATE_TRADING;
	case 'M':
		return WB_STATE_PAUSED;		/* LULD trading pause */
	case 'G':
		return WB_STATE_QUOTATION_ONLY;	/* a trading-range indication before reopening */
	default:
		return WB_STATE_HALTED;		/* regulatory, non-regulatory and MWCB halts */
	}
}

/* One NBBO side from an appendage; false when its price is broken. */
static bool cqs_appendage(struct feed_packet *pk, uint8_t news, const uint8_t *a, uint32_t lot,
			  struct sip_best *best, char *condition)
{
	if (news == CQS_SIDE_SHORT) {
		best->venue = cqs_venue(a[CQS_APPENDAGE_PARTICIPANT]);
		best->price = sip_price2(a + CQS_SHORT_APPENDAGE_PRICE);
		best->qty = sip_shares(wire_be16(a + CQS_SHORT_APPENDAGE_SIZE), lot);
		return true;
	}
	best->venue = cqs_venue(a[CQS_APPENDAGE_PARTICIPANT]);
	if (!*condition)
		*condition = (char)a[CQS_LONG_APPENDAGE_CONDITION];
	best->qty = sip_shares(wire_be32(a + CQS_LONG_APPENDAGE_SIZE), lot);
	if (wb_unlikely(!sip_price6(a + CQS_LONG_APPENDAGE_PRICE, &best->price))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return false;
	}
	return true;
}

/*
 * The NBBO a quote's indicator announces, with its appendages at app.
 * Returns false (nothing emitted) when an appendage is broken.
 */
static bool cqs_nbbo(struct feed_packet *pk, struct cqs_state *st, uint16_t inst,
		     const struct cqs_msg *msg, uint8_t code, uint8_t luld, const uint8_t *app,
		     uint32_t lot, const struct sip_quote *q, struct sip_nbbo *n)
{
	uint8_t bid = cqs_nbbo_codes[code - 'A'].bid, offer = cqs_nbbo_codes[code - 'A'].offer;
	struct cqs_nbbo_state *last = &st->nbbo[inst];

	__builtin_memset(n, 0, sizeof(*n));
	n->sip_ts = msg->sip_ts;
	n->indicator = (char)code;
	n->luld = luld == ' ' ? 0 : (char)luld;
	switch (bid) {
	case CQS_SIDE_UNCHANGED:
		if (last->known & WB_NBBO_BID_STATED)
			n->bid = last->bid;
		else
			n->sides |= WB_NBBO_BID_UNKNOWN;
		break;
	case CQS_SIDE_QUOTE:
		n->bid = (struct sip_best){ q->bid_price, q->bid_qty, q->venue };
		n->sides |= WB_NBBO_BID_STATED;
		break;
	case CQS_SIDE_NONE:
		n->sides |= WB_NBBO_BID_STATED;
		break;
	default:
		if (!cqs_appendage(pk, bid, app, lot, &n->bid, &n->condition))
			return false;
		app += cqs_appendage_len[bid];
		n->sides |= WB_NBBO_BID_STATED;
		break;
	}
	switch (offer) {
	case CQS_SIDE_UNCHANGED:
		if (last->known & WB_NBBO_ASK_STATED)
			n->ask = last->ask;
		else
			n->sides |= WB_NBBO_ASK_UNKNOWN;
		break;
	case CQS_SIDE_QUOTE:
		n->ask = (struct sip_best){ q->ask_price, q->ask_qty, q->venue };
		n->sides |= WB_NBBO_ASK_STATED;
		break;
	case CQS_SIDE_NONE:
		n->sides |= WB_NBBO_ASK_STATED;
		break;
	default:
		if (!cqs_appendage(pk, offer, app, lot, &n->ask, &n->condition))
			return false;
		n->sides |= WB_NBBO_ASK_STATED;
		break;
	}
	return true;
}

static void cqs_nbbo_commit(struct cqs_state *st, uint16_t inst, const struct sip_nbbo *n)
{
	struct cqs_nbbo_state *last = &st->nbbo[inst];

	if (n->sides & WB_NBBO_BID_STATED)
		last->bid = n->bid;
	if (n->sides & WB_NBBO_ASK_STATED)
		last->ask = n->ask;
	last->known |= n->sides & (WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED);
}

/* Where a quote type keeps its fields. */
struct cqs_quote_layout {
	uint16_t body;		/* bytes before the NBBO appendages */
	uint8_t symbol_width;
	struct sip_quote_sides sides;
	uint8_t condition;	/* 0: implied regular ('R') */
	uint8_t ask_condition;	/* the offer's own condition, 0: the same */
	uint8_t status;		/* Security Status Indicator, 0: none */
	uint8_t luld;		/* the quote's LULD indicator, 0: none */
	uint8_t nbbo_luld;	/* 0: none */
};

static const struct cqs_quote_layout cqs_long_quote = {
	.body = CQS_LONG_QUOTE_LEN, .symbol_width = CQS_SYMBOL_LEN,
	.sides = { .long_prices = true, .bid_price = CQS_LONG_BID_PRICE,
		   .bid_size = CQS_LONG_BID_SIZE, .ask_price = CQS_LONG_ASK_PRICE,
		   .ask_size = CQS_LONG_ASK_SIZE },
	.condition = CQS_LONG_CONDITION, .status = CQS_LONG_STATUS, .luld = CQS_LONG_LULD,
	.nbbo_luld = CQS_LONG_NBBO_LULD,
};
static const struct cqs_quote_layout cqs_short_quote = {
	.body = CQS_SHORT_QUOTE_LEN, .symbol_width = CQS_SHORT_SYMBOL_LEN,
	.sides = { .long_prices = false, .bid_price = CQS_SHORT_BID_PRICE,
		   .bid_size = CQS_SHORT_BID_SIZE, .ask_price = CQS_SHORT_ASK_PRICE,
		   .ask_size = CQS_SHORT_ASK_SIZE },
};
/* FINRA's venue quote is its BBO: the FINRA Best Bid and Best Offer fields. */
static const struct cqs_quote_layout cqs_finra_quote = {
	.body = CQS_FINRA_QUOTE_LEN, .symbol_width = CQS_SYMBOL_LEN,
	.sides = { .long_prices = true, .bid_price = CQS_FINRA_BID_PRICE,
		   .bid_size = CQS_FINRA_BID_SIZE, .ask_price = CQS_FINRA_ASK_PRICE,
		   .ask_size = CQS_FINRA_ASK_SIZE },
	.condition = CQS_FINRA_BID_CONDITION, .ask_condition = CQS_FINRA_ASK_CONDITION,
	.status = CQS_LONG_STATUS, .luld = CQS_FINRA_LULD, .nbbo_luld = CQS_FINRA_NBBO_LULD,
};

/*
 * A quote (Q L, Q Q, Q S): the participant's QUOTE, its status or LULD
 * band, and the NBBO its indicator announces.
 */
static void decode_quote(struct feed_packet *pk, struct cqs_state *st, const struct cqs_msg *msg,
			 const struct cqs_quote_layout *l)
{
	const uint8_t *m = msg->m;
	uint8_t code, status, luld;
	uint32_t need = l->body, lot;
	bool nbbo, emit_quote = true;
	struct sip_quote q;
	struct sip_nbbo n;
	uint16_t inst;

	/* This one check bounds every read of the body below. */
	if (wb_unlikely(msg->len < l->body)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	code = m[l->body - 1];
	status = l->status ? m[l->status] : ' ';
	luld = l->luld ? m[l->luld] : ' ';
	nbbo = code >= 'B' && code <= 'W';
	q.venue = cqs_venue(m[CQS_MSG_PARTICIPANT]);
	if (wb_unlikely(!q.venue || (code != ' ' && (code < 'A' || code > 'W')))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	if (nbbo)
		need += cqs_appendage_len[cqs_nbbo_codes[code - 'A'].bid] +
			cqs_appendage_len[cqs_nbbo_codes[code - 'A'].offer];
	/* Message Length must cover the appendages its indicator announces. */
	if (wb_unlikely(msg->len < need)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	inst = sip_instrument(pk, m + CQS_SYMBOL, l->symbol_width, msg->seq, msg->ts);
	if (!inst)
		return;
	lot = sip_size_unit(pk, inst, msg->sip_ts);
	q.ts = msg->ts;
	q.sip_ts = msg->sip_ts;
	q.condition = l->condition ? m[l->condition] : 'R';
	if (!sip_quote_sides(pk, m, &l->sides, lot, &q))
		return;
	q.flags = cqs_ineligible(q.condition, luld);
	if (l->ask_condition)
		q.flags = (uint8_t)((q.flags & ~WB_EVF_ASK_INELIGIBLE) |
				    (cqs_ineligible(m[l->ask_condition], luld) & WB_EVF_ASK_INELIGIBLE));
	if (nbbo && !cqs_nbbo(pk, st, inst, msg, code, l->nbbo_luld ? m[l->nbbo_luld] : ' ',
			      m + l->body, lot, &q, &n))
		return;

	if (wb_unlikely(status != ' ')) {
		if (status == '0' || status == '9') {
			/* A LULD band the SIP publishes: bid = lower, offer = upper. */
			sip_emit_luld(pk, inst, msg->seq, msg->ts, q.bid_price, q.ask_price,
				      (char)status);
			emit_quote = false;
		} else {
			char reason[4] = { ' ', ' ', ' ', ' ' };

			if (status >= '1' && status <= '3')
				sip_mwcb_reason((char)status, reason);
			sip_emit_status(pk, inst, q.venue, msg->seq, msg->ts, cqs_status_state(status),
					(char)status, reason, 0);
			/* Any status takes the participant out of the NBBO. */
			q.flags = WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE;
		}
	}
	/*
	 * FINRA ADF in a Long Quote: one market maker's quote. FINRA's venue
	 * quote is its BBO, which Q S carries; A = the BBO did not change, B =
	 * there is none.
	 */
	if (l == &cqs_long_quote && q.venue == WB_VENUE_FINRA) {
		if (m[CQS_LONG_FINRA_BBO] == 'A')
			emit_quote = false;
		else if (m[CQS_LONG_FINRA_BBO] == 'B')
			q.bid_price = q.ask_price = 0, q.bid_qty = q.ask_qty = 0;
	}
	if (q.venue == WB_VENUE_SIP_CQS)
		emit_quote = false;	/* the SIP quotes for no one */
	if (emit_quote)
		sip_emit_quote(pk, inst, msg->seq, &q);
	if (nbbo) {
		sip_emit_nbbo(pk, inst, msg->seq, &n);
		cqs_nbbo_commit(st, inst, &n);
	}
	if (!emit_quote && !nbbo && status == ' ')
		pk->counters->ignored++;
}

/* ---- the other categories --------------------------------------------------- */

/* A S: the directory entry of a symbol, for its round lot (notes: CQS messages). */
static void decode_symbol_reference(struct feed_packet *pk, const struct cqs_msg *msg)
{
	const uint8_t *m = msg->m;
	uint16_t lot;

	if (wb_unlikely(msg->len < CQS_SYMBOL_REFERENCE_LEN)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	lot = wire_be16(m + CQS_REFERENCE_ROUND_LOT);
	sip_define(pk, m + CQS_SYMBOL, CQS_SYMBOL_LEN, lot ? lot : SIP_DEFAULT_ROUND_LOT,
		   (char)m[CQS_REFERENCE_LISTING], msg->seq, msg->ts);
}

/* M L: a market-wide circuit breaker level was breached: every symbol halts. */
static void decode_mwcb_status(struct feed_packet *pk, const struct cqs_msg *msg)
{
	uint8_t level;
	char reason[4];

	if (wb_unlikely(msg->len < CQS_MWCB_STATUS_LEN)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	level = msg->m[CQS_MWCB_LEVEL];
	if (wb_unlikely(level < '1' || level > '3')) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	sip_mwcb_reason((char)level, reason);
	sip_emit_status(pk, 0, pk->venue, msg->seq, msg->ts, WB_STATE_HALTED, (char)level, reason, 0);
}

static void decode_control(struct feed_packet *pk, const struct cqs_msg *msg)
{
	static const char no_reason[4] = { ' ', ' ', ' ', ' ' };

	switch (msg->m[CQS_MSG_TYPE]) {
	case 'Z':
		/* End of Day: the line is done; Line Integrity goes on. */
		feed_stream_ended(pk, 0);
		sip_emit_status(pk, 0, pk->venue, msg->seq, msg->ts, WB_STATE_CLOSED, 'Z', no_reason,
				WB_EVF_SESSION_END);
		return;
	case 'O':
	case 'C':
		/* FINRA open and close: the ADF's market session. */
		sip_emit_status(pk, 0, WB_VENUE_FINRA, msg->seq, msg->ts,
				msg->m[CQS_MSG_TYPE] == 'O' ? WB_STATE_OPEN : WB_STATE_CLOSED,
				(char)msg->m[CQS_MSG_TYPE],
				no_reason, 0);
		return;
	case 'A':	/* Start of Day and Reset: the stream layer restarted (cqs_frame) */
	case 'L':
	case 'T':	/* Line Integrity: a heartbeat (cqs_frame) */
	case 'P':	/* DR data center activation */
	case 'M':	/* start and end of test cycle (v1.91) */
	case 'N':
		pk->counters->ignored++;
		return;
	default:
		feed_count_error(pk, FEED_ERR_UNKNOWN_TYPE);
		return;
	}
}

static void decode_message(struct feed_packet *pk, struct cqs_state *st, const struct cqs_msg *msg)
{
	const uint8_t *m = msg->m;

	switch (m[CQS_MSG_CATEGORY] << 8 | m[CQS_MSG_TYPE]) {
	case 'Q' << 8 | 'L':
		decode_quote(pk, st, msg, &cqs_long_quote);
		return;
	case 'Q' << 8 | 'Q':
		decode_quote(pk, st, msg, &cqs_short_quote);
		return;
	case 'Q' << 8 | 'S':
		decode_quote(pk, st, msg, &cqs_finra_quote);
		return;
	case 'A' << 8 | 'S':
		decode_symbol_reference(pk, msg);
		return;
	case 'M' << 8 | 'L':
		decode_mwcb_status(pk, msg);
		return;
	case 'M' << 8 | 'K':	/* MWCB Decline Level Status (v2) */
	case 'M' << 8 | 'M':	/* the same in v1.91 */
	case 'Q' << 8 | 'A':	/* Auction Status: collars no view needs */
	case 'A' << 8 | 'H':	/* administrative text (v1.91) */
		pk->counters->ignored++;
		return;
	default:
		if (m[CQS_MSG_CATEGORY] == 'C') {
			decode_control(pk, msg);
			return;
		}
		feed_count_error(pk, FEED_ERR_UNKNOWN_TYPE);
		return;
	}
}

static uint32_t cqs_decode(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			   const struct feed_frame *f, uint32_t skip)
{
	struct cqs_state *st = pk->state;
	struct cqs_msg msg;
	uint32_t off = CQS_BLOCK_HEADER_LEN, i;

	msg.sip_ts = cqs_time(p + CQS_BLOCK_SIP_TIME);
	for (i = 0; i < f->count; i++) {
		uint32_t mlen;

		if (wb_unlikely(off + CQS_MSG_LENGTH + 2 > len))
			goto truncated;
		mlen = wire_be16(p + off + CQS_MSG_LENGTH);
		if (wb_unlikely(mlen < CQS_MSG_TYPE + 1)) {
			/* Too short to name its own type: nothing after it can be framed. */
			feed_count_error(pk, FEED_ERR_BAD_LENGTH);
			return i;
		}
		if (wb_unlikely(mlen > len - off))
			goto truncated;
		if (wb_likely(i >= skip)) {
			pk->counters->messages++;
			if (wb_unlikely(mlen < CQS_MSG_HEADER_LEN)) {
				feed_count_error(pk, FEED_ERR_BAD_LENGTH);
			} else {
				msg.m = p + off;
				msg.len = mlen;
				msg.seq = f->seq + i;
				msg.ts = cqs_time(p + off + CQS_MSG_TIMESTAMP1);
				decode_message(pk, st, &msg);
			}
		}
		off += mlen;
	}
	/* The pad byte that makes the block size even is the only thing that may follow. */
	if (wb_unlikely(off != len && !(off + 1 == len && p[off] == 0)))
		feed_count_error(pk, FEED_ERR_BAD_COUNT);
	return i;
truncated:
	feed_count_error(pk, FEED_ERR_TRUNCATED);
	return i;
}

/*
 * The stream lost messages or started over: the last NBBO of its
 * instruments is no longer known; a restart (Start of Day, Reset) also
 * clears their quotes.
 */
static void cqs_stream_event(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	struct cqs_state *st = pk->state;
	uint16_t id = feed_stream_id(pk->group, unit);
	uint32_t inst, count = feed_subs_count(pk->engine);

	for (inst = 1; inst <= count && inst < FEED_MAX_INSTRUMENTS; inst++)
		if (pk->v->stream_of[inst] == id)
			st->nbbo[inst].known = 0;
	if (ev != FEED_STREAM_GAP)
		feed_clear_stream(pk, unit, 0, 0, WB_EVF_SIP | WB_EVF_SESSION_END);
}

/* ---- framing ---------------------------------------------------------------- */

/* The low 16 bits of the sum of every byte but the checksum's own two (notes: CQS framing). */
static uint16_t cqs_checksum(const uint8_t *p, uint32_t len)
{
	uint64_t even = 0, odd = 0, sum;
	uint32_t i = 0, words = 0;

	/* Eight bytes at a time into 16-bit lanes, folded before a lane can carry. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w = wire_le64(p + i);

		even += w & 0x00ff00ff00ff00ffull;
		odd += (w >> 8) & 0x00ff00ff00ff00ffull;
		if (wb_unlikely(++words == 256)) {
			sum = 0;
			for (int k = 0; k < 4; k++)
				sum += (even >> (16 * k) & 0xffff) + (odd >> (16 * k) & 0xffff);
			even = sum & 0xffff;
			odd = 0;
			words = 1;
		}
	}
	sum = 0;
	for (int k = 0; k < 4; k++)
		sum += (even >> (16 * k) & 0xffff) + (odd >> (16 * k) & 0xffff);
	for (; i < len; i++)
		sum += p[i];
	sum -= (uint32_t)p[CQS_BLOCK_CHECKSUM] + p[CQS_BLOCK_CHECKSUM + 1];
	return (uint16_t)sum;
}

static int cqs_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	const uint8_t *first = p + CQS_BLOCK_HEADER_LEN;	/* the first message */
	uint32_t size;

	if (len < CQS_BLOCK_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	__builtin_memset(f, 0, sizeof(*f));
	if (p[CQS_BLOCK_VERSION] == CQS_SNAPSHOT_VERSION)
		return FEED_FRAME_ERROR(FEED_ERR_RECOVERY);
	if (p[CQS_BLOCK_VERSION] > CQS_MAX_VERSION || p[CQS_BLOCK_FEED] != CQS_FEED_INDICATOR)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_FIELD);
	size = wire_be16(p + CQS_BLOCK_SIZE);
	if (size < CQS_BLOCK_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_LENGTH);
	if (size > len)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	if (cqs_checksum(p, size) != wire_be16(p + CQS_BLOCK_CHECKSUM))
		return FEED_FRAME_ERROR(FEED_ERR_BAD_CHECKSUM);
	if (p[CQS_BLOCK_RETRANSMISSION] == CQS_RETRANSMISSION)
		return FEED_FRAME_ERROR(FEED_ERR_RECOVERY);
	if (p[CQS_BLOCK_RETRANSMISSION] != CQS_ORIGINAL)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_FIELD);
	f->seq = wire_be32(p + CQS_BLOCK_SEQUENCE);
	f->count = p[CQS_BLOCK_MESSAGES];
	f->offset = CQS_BLOCK_HEADER_LEN;
	f->length = size;
	f->kind = FEED_FRAME_DATA;
	if (wb_unlikely(!f->count))
		return FEED_FRAME_ERROR(FEED_ERR_BAD_COUNT);
	/* Control messages come alone in their block (notes: CQS sequencing). */
	if (f->count == 1 && size >= CQS_BLOCK_HEADER_LEN + CQS_MSG_HEADER_LEN &&
	    first[CQS_MSG_CATEGORY] == 'C') {
		switch (first[CQS_MSG_TYPE]) {
		case 'T':
			/* Line Integrity names the last sequence sent. */
			f->kind = FEED_FRAME_HEARTBEAT;
			f->seq += 1;
			f->count = 0;
			break;
		case 'A':
		case 'L':
			/* Start of Day and Reset restart the line at their sequence; the
			 * block's SIP time tells this restart from the next one. */
			f->kind = FEED_FRAME_RESET;
			f->reset_token = cqs_time(p + CQS_BLOCK_SIP_TIME) | 1;
			break;
		}
	}
	return 0;
}

/* The message at *off, advanced by its Message Length; a trailing pad byte goes with it. */
static int cqs_next_message(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			    uint32_t *mlen)
{
	uint32_t n;

	if (*off + CQS_MSG_LENGTH + 2 > len)
		return -1;
	n = wire_be16(p + *off + CQS_MSG_LENGTH);
	if (n < CQS_MSG_TYPE + 1 || n > len - *off)
		return -1;
	*msg = p + *off;
	*mlen = n;
	*off += n;
	if (*off + 1 == len && p[*off] == 0)
		*off += 1;
	return 0;
}

/* ---- raw view: the spec's fields of every message (wb-dump --raw) ------- */

#define CQS_HEADER FEED_F_UINT("len", CQS_MSG_LENGTH, 2), FEED_F_CHAR("", CQS_MSG_CATEGORY), \
	FEED_F_CHAR("", CQS_MSG_TYPE), FEED_F_CHAR("participant", CQS_MSG_PARTICIPANT), \
	FEED_F_EPOCH_S("ts1", CQS_MSG_TIMESTAMP1), FEED_F_UINT("ns", CQS_MSG_TIMESTAMP1 + 4, 4), \
	FEED_F_UINT("id", CQS_MSG_ID, 1), FEED_F_UINT("txid", CQS_MSG_TRANSACTION_ID, 4), \
	FEED_F_INT("prn", CQS_MSG_REFERENCE, 8)
#define CQS_APPENDED FEED_F_CHAR("nbbo_luld", CQS_LONG_NBBO_LULD), \
	FEED_F_CHAR("nbbo", CQS_LONG_NBBO)

static const struct feed_field cqs_control[] = { CQS_HEADER };
static const struct feed_field cqs_symbol_reference[] = {
	CQS_HEADER, FEED_F_TICKER("", CQS_SYMBOL, CQS_SYMBOL_LEN),
	FEED_F_TEXT("prior", CQS_REFERENCE_PRIOR_SYMBOL, 11),
	FEED_F_CHAR("listing", CQS_REFERENCE_LISTING),
	FEED_F_PRICE("prev_close", CQS_REFERENCE_PREV_CLOSE, 8, 6),
	FEED_F_PRICE("close", CQS_REFERENCE_CLOSE, 8, 6),
	FEED_F_UINT("lot", CQS_REFERENCE_ROUND_LOT, 2),
	FEED_F_CHAR("luld_tier", CQS_REFERENCE_LULD_TIER),
	FEED_F_UINT("leverage", CQS_REFERENCE_LEVERAGE, 4), FEED_F_CHAR("test", CQS_REFERENCE_TEST),
	FEED_F_CHAR("ipo", CQS_REFERENCE_IPO),
	FEED_F_CHAR("fsi", CQS_REFERENCE_FSI), FEED_F_CHAR("ssr", CQS_REFERENCE_SSR),
	FEED_F_CHAR("halt_reason", CQS_REFERENCE_HALT_REASON),
	FEED_F_CHAR("instrument", CQS_REFERENCE_INSTRUMENT_TYPE),
};
static const struct feed_field cqs_mwcb_decline[] = {
	CQS_HEADER, FEED_F_SPRICE("level1", CQS_MWCB_DECLINE_LEVEL1, 8, 6),
	FEED_F_SPRICE("level2", CQS_MWCB_DECLINE_LEVEL2, 8, 6),
	FEED_F_SPRICE("level3", CQS_MWCB_DECLINE_LEVEL3, 8, 6),
};
static const struct feed_field cqs_mwcb_status[] = {
	CQS_HEADER, FEED_F_CHAR("level", CQS_MWCB_LEVEL),
};
static const struct feed_field cqs_auction_status[] = {
	CQS_HEADER, FEED_F_TICKER("", CQS_SYMBOL, CQS_SYMBOL_LEN),
	FEED_F_CHAR("instrument", CQS_AUCTION_INSTRUMENT_TYPE),
	FEED_F_PRICE("reference", CQS_AUCTION_REFERENCE, 8, 6),
	FEED_F_PRICE("upper", CQS_AUCTION_UPPER, 8, 6),
	FEED_F_PRICE("lower", CQS_AUCTION_LOWER, 8, 6),
	FEED_F_UINT("extensions", CQS_AUCTION_EXTENSIONS, 1), FEED_F_CHAR("ssr", CQS_AUCTION_SSR),
	FEED_F_CHAR("listing", CQS_AUCTION_LISTING), FEED_F_CHAR("fsi", CQS_AUCTION_FSI),
};
static const struct feed_field cqs_long_quote_fields[] = {
	CQS_HEADER, FEED_F_TICKER("", CQS_SYMBOL, CQS_SYMBOL_LEN),
	FEED_F_CHAR("instrument", CQS_LONG_INSTRUMENT_TYPE),
	FEED_F_CHAR("cond", CQS_LONG_CONDITION), FEED_F_CHAR("status", CQS_LONG_STATUS),
	FEED_F_UINT("bid", CQS_LONG_BID_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_BID_PRICE, 8, 6), FEED_F_UINT("ask", CQS_LONG_ASK_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_ASK_PRICE, 8, 6),
	FEED_F_CHAR("rii", CQS_LONG_RETAIL_INTEREST), FEED_F_CHAR("settle", CQS_LONG_SETTLEMENT),
	FEED_F_CHAR("mkt_cond", CQS_LONG_MARKET_CONDITION),
	FEED_F_TEXT("mmid", CQS_LONG_FINRA_MMID, 4), FEED_F_CHAR("finra_bbo", CQS_LONG_FINRA_BBO),
	FEED_F_EPOCH_S("ts2", CQS_LONG_TIMESTAMP2),
	FEED_F_UINT("ns2", CQS_LONG_TIMESTAMP2 + 4, 4), FEED_F_CHAR("ssr", CQS_LONG_SSR),
	FEED_F_CHAR("listing", CQS_LONG_LISTING),
	FEED_F_CHAR("fsi", CQS_LONG_FSI), FEED_F_CHAR("sip_gen", CQS_LONG_SIP_GENERATED),
	FEED_F_CHAR("luld", CQS_LONG_LULD), CQS_APPENDED,
};
static const struct feed_field cqs_short_quote_fields[] = {
	CQS_HEADER, FEED_F_TICKER("", CQS_SYMBOL, CQS_SHORT_SYMBOL_LEN),
	FEED_F_UINT("bid", CQS_SHORT_BID_SIZE, 2),
	FEED_F_PRICE("@", CQS_SHORT_BID_PRICE, 2, 2), FEED_F_UINT("ask", CQS_SHORT_ASK_SIZE, 2),
	FEED_F_PRICE("@", CQS_SHORT_ASK_PRICE, 2, 2),
	FEED_F_CHAR("listing", CQS_SHORT_LISTING), FEED_F_CHAR("nbbo", CQS_SHORT_NBBO),
};
static const struct feed_field cqs_finra_quote_fields[] = {
	CQS_HEADER, FEED_F_TICKER("", CQS_SYMBOL, CQS_SYMBOL_LEN),
	FEED_F_CHAR("instrument", CQS_LONG_INSTRUMENT_TYPE),
	FEED_F_CHAR("cond", CQS_LONG_CONDITION), FEED_F_CHAR("status", CQS_LONG_STATUS),
	FEED_F_UINT("bid", CQS_LONG_BID_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_BID_PRICE, 8, 6), FEED_F_UINT("ask", CQS_LONG_ASK_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_ASK_PRICE, 8, 6),
	FEED_F_CHAR("rii", CQS_LONG_RETAIL_INTEREST), FEED_F_CHAR("settle", CQS_LONG_SETTLEMENT),
	FEED_F_CHAR("mkt_cond", CQS_LONG_MARKET_CONDITION),
	FEED_F_TEXT("mmid", CQS_LONG_FINRA_MMID, 4),
	FEED_F_CHAR("bbid_cond", CQS_FINRA_BID_CONDITION),
	FEED_F_UINT("bbid", CQS_FINRA_BID_SIZE, 4),
	FEED_F_PRICE("@", CQS_FINRA_BID_PRICE, 8, 6),
	FEED_F_TEXT("bbid_mmid", CQS_FINRA_BID_MMID, 4),
	FEED_F_CHAR("bask_cond", CQS_FINRA_ASK_CONDITION),
	FEED_F_UINT("bask", CQS_FINRA_ASK_SIZE, 4), FEED_F_PRICE("@", CQS_FINRA_ASK_PRICE, 8, 6),
	FEED_F_TEXT("bask_mmid", CQS_FINRA_ASK_MMID, 4),
	FEED_F_EPOCH_S("ts2", CQS_FINRA_TIMESTAMP2),
	FEED_F_UINT("ns2", CQS_FINRA_TIMESTAMP2 + 4, 4), FEED_F_CHAR("ssr", CQS_FINRA_SSR),
	FEED_F_CHAR("listing", CQS_FINRA_LISTING), FEED_F_CHAR("fsi", CQS_FINRA_FSI),
	FEED_F_CHAR("sip_gen", CQS_FINRA_SIP_GENERATED),
	FEED_F_CHAR("finra_luld", CQS_FINRA_LULD), FEED_F_CHAR("nbbo_luld", CQS_FINRA_NBBO_LULD),
	FEED_F_CHAR("nbbo", CQS_FINRA_NBBO),
};

static const struct feed_msg_layout cqs_layout_control =
	FEED_LAYOUT("Control", CQS_CONTROL_LEN, cqs_control);
static const struct feed_msg_layout cqs_layout_symbol_reference =
	FEED_LAYOUT("Symbol Reference Data", CQS_SYMBOL_REFERENCE_LEN, cqs_symbol_reference);
static const struct feed_msg_layout cqs_layout_mwcb_decline =
	FEED_LAYOUT("MWCB Decline Level Status", CQS_MWCB_DECLINE_LEN, cqs_mwcb_decline);
static const struct feed_msg_layout cqs_layout_mwcb_status =
	FEED_LAYOUT("MWCB Status", CQS_MWCB_STATUS_LEN, cqs_mwcb_status);
static const struct feed_msg_layout cqs_layout_auction_status =
	FEED_LAYOUT("Auction Status", CQS_AUCTION_STATUS_LEN, cqs_auction_status);
static const struct feed_msg_layout cqs_layout_long_quote =
	FEED_LAYOUT("Long Quote", CQS_LONG_QUOTE_LEN, cqs_long_quote_fields);
static const struct feed_msg_layout cqs_layout_short_quote =
	FEED_LAYOUT("Short Quote", CQS_SHORT_QUOTE_LEN, cqs_short_quote_fields);
static const struct feed_msg_layout cqs_layout_finra_quote =
	FEED_LAYOUT("Special Long Quote (FINRA BBO)", CQS_FINRA_QUOTE_LEN, cqs_finra_quote_fields);
static const struct feed_msg_layout cqs_layout_admin_text =
	FEED_LAYOUT("Administrative Unformatted Message", CQS_CONTROL_LEN, cqs_control);

static const struct feed_msg_layout *cqs_layout(const uint8_t *m, uint32_t len)
{
	if (len < CQS_MSG_TYPE + 1)
		return 0;
	switch (m[CQS_MSG_CATEGORY] << 8 | m[CQS_MSG_TYPE]) {
	case 'Q' << 8 | 'L': return &cqs_layout_long_quote;
	case 'Q' << 8 | 'Q': return &cqs_layout_short_quote;
	case 'Q' << 8 | 'S': return &cqs_layout_finra_quote;
	case 'Q' << 8 | 'A': return &cqs_layout_auction_status;
	case 'A' << 8 | 'S': return &cqs_layout_symbol_reference;
	case 'A' << 8 | 'H': return &cqs_layout_admin_text;
	case 'M' << 8 | 'K':
	case 'M' << 8 | 'M': return &cqs_layout_mwcb_decline;
	case 'M' << 8 | 'L': return &cqs_layout_mwcb_status;
	}
	if (m[CQS_MSG_CATEGORY] != 'C')
		return 0;
	switch (m[CQS_MSG_TYPE]) {
	case 'A': case 'C': case 'L': case 'M': case 'N': case 'O': case 'P': case 'T': case 'Z':
		return &cqs_layout_control;
	}
	return 0;
}

/* NBBO appendages (notes: CQS messages): the National Best Bid's first, then the Offer's. */
static const struct feed_field cqs_bid_short[] = {
	FEED_F_CHAR("nbb_mc", CQS_APPENDAGE_PARTICIPANT),
	FEED_F_UINT("nbb", CQS_SHORT_APPENDAGE_SIZE, 2),
	FEED_F_PRICE("@", CQS_SHORT_APPENDAGE_PRICE, 2, 2),
};
static const struct feed_field cqs_bid_long[] = {
	FEED_F_CHAR("nbb_mc", CQS_APPENDAGE_PARTICIPANT),
	FEED_F_CHAR("nbb_cond", CQS_LONG_APPENDAGE_CONDITION),
	FEED_F_UINT("nbb", CQS_LONG_APPENDAGE_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_APPENDAGE_PRICE, 8, 6),
	FEED_F_TEXT("nbb_mmid", CQS_LONG_APPENDAGE_MMID, 4),
};
static const struct feed_field cqs_ask_short[] = {
	FEED_F_CHAR("nbo_mc", CQS_APPENDAGE_PARTICIPANT),
	FEED_F_UINT("nbo", CQS_SHORT_APPENDAGE_SIZE, 2),
	FEED_F_PRICE("@", CQS_SHORT_APPENDAGE_PRICE, 2, 2),
};
static const struct feed_field cqs_ask_long[] = {
	FEED_F_CHAR("nbo_mc", CQS_APPENDAGE_PARTICIPANT),
	FEED_F_CHAR("nbo_cond", CQS_LONG_APPENDAGE_CONDITION),
	FEED_F_UINT("nbo", CQS_LONG_APPENDAGE_SIZE, 4),
	FEED_F_PRICE("@", CQS_LONG_APPENDAGE_PRICE, 8, 6),
	FEED_F_TEXT("nbo_mmid", CQS_LONG_APPENDAGE_MMID, 4),
};
/* By side (0 bid, 1 offer), then short (0) or long (1). */
static const struct feed_msg_layout cqs_appendage_layouts[2][2] = {
	{ FEED_LAYOUT("NBBO bid appendage (short)", CQS_SHORT_APPENDAGE_LEN, cqs_bid_short),
	  FEED_LAYOUT("NBBO bid appendage (long)", CQS_LONG_APPENDAGE_LEN, cqs_bid_long) },
	{ FEED_LAYOUT("NBBO offer appendage (short)", CQS_SHORT_APPENDAGE_LEN, cqs_ask_short),
	  FEED_LAYOUT("NBBO offer appendage (long)", CQS_LONG_APPENDAGE_LEN, cqs_ask_long) },
};

/* A quote's NBBO appendages, as its National BBO Indicator (its body's last byte) announces. */
static int cqs_parts(const uint8_t *m, uint32_t len, struct feed_raw_part *parts, int max)
{
	const struct feed_msg_layout *lay = cqs_layout(m, len);
	uint32_t off;
	uint8_t code, news[2];
	int n = 0;

	if (lay != &cqs_layout_long_quote && lay != &cqs_layout_short_quote &&
	    lay != &cqs_layout_finra_quote)
		return 0;
	if (len < lay->min_len)
		return 0;
	code = m[lay->min_len - 1];
	if (code < 'A' || code > 'W')
		return 0;
	news[0] = cqs_nbbo_codes[code - 'A'].bid;
	news[1] = cqs_nbbo_codes[code - 'A'].offer;
	off = lay->min_len;
	for (int side = 0; side < 2 && n < max; side++) {
		const struct feed_msg_layout *a;

		if (news[side] != CQS_SIDE_SHORT && news[side] != CQS_SIDE_LONG)
			continue;
		a = &cqs_appendage_layouts[side][news[side] == CQS_SIDE_LONG];
		if (off + a->min_len > len)
			break;
		parts[n].layout = a;
		parts[n].offset = off;
		n++;
		off += a->min_len;
	}
	return n;
}

/* A block whose header, checksum and messages all hold together. */
static bool cqs_looks_like(const uint8_t *p, uint32_t len)
{
	struct feed_frame f;
	const uint8_t *m;
	uint32_t off = CQS_BLOCK_HEADER_LEN, mlen, i, count;

	if (cqs_frame(p, len, &f) < 0 || f.length != len)
		return false;
	count = p[CQS_BLOCK_MESSAGES];
	for (i = 0; i < count; i++)
		if (cqs_next_message(p, len, &off, &m, &mlen) < 0)
			return false;
	return off == len;
}

const struct feed_proto feed_proto_cqs = {
	.name = "cqs",
	.title = "CTA CQS Pillar binary output (block versions 0-2)",
	.venues = 1u << FEED_SOURCE_CQS,
	.units = 1,
	.first_seq = 0,
	.big_endian = true,
	.type_offset = 2,
	.type_width = 2,
	.directory_keys = FEED_MAX_INSTRUMENTS,
	.sample_tickers = "LVWR.WS,JENA",
	.state_size = cqs_state_size,
	.state_init = cqs_state_init,
	.state_reset = cqs_state_reset,
	.frame = cqs_frame,
	.decode = cqs_decode,
	.stream_event = cqs_stream_event,
	.next_message = cqs_next_message,
	.layout = cqs_layout,
	.parts = cqs_parts,
	.looks_like = cqs_looks_like,
};
