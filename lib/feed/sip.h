/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the two SIP quote feeds (CQS, cqs.c; UQDF, uqdf.c) share once their
 * framing is done: the instrument of an inline ticker, quote sizes in
 * shares, side eligibility, and the SIP events of event.h (QUOTE, NBBO,
 * LULD, STATUS and CLEAR with WB_EVF_SIP).
 *
 * Instruments. Both feeds carry the ticker as text in every quote, so an
 * instrument is found as PITCH finds it: the ticker key through the
 * subscription table (one hash probe). The feed's directory (CQS A S, UQDF
 * A B) is kept in the venue's instrument cache keyed by instrument id,
 * which is stable for the engine's life: it gives the round lot a
 * pre-2025-11-03 lot count is multiplied by, and announces the symbol.
 *
 * Units. Quote sizes were round lots until the Reg NMS round-lot amendment
 * took effect on 2025-11-03 and are shares since, on both feeds. The unit
 * is picked by the message's own SIP time, so a capture of any year
 * decodes the same way whenever it is replayed.
 */
#ifndef WIREBOOK_FEED_SIP_H
#define WIREBOOK_FEED_SIP_H

#include "feed_internal.h"

/* 2025-11-03 00:00 US/Eastern (EST, UTC-5): sizes are shares from here on. */
#define SIP_SHARES_SINCE_NS 1762146000000000000ull
#define SIP_DEFAULT_ROUND_LOT 100
#define SIP_PRICE6_TO_WB 100		/* 6 dp -> 1e-8 */
#define SIP_PRICE2_TO_WB 1000000	/* 2 dp -> 1e-8 */
#define SIP_MAX_PRICE6 (0x7fffffffffffffffull / SIP_PRICE6_TO_WB)
#define NS_PER_SEC 1000000000ull

/* The ticker key of a symbol field of width bytes, or 0 when it does not fit a key. */
static inline uint64_t sip_ticker_key(const uint8_t *p, uint32_t width)
{
	uint64_t key;
	uint32_t i;

	if (width == 5)
		return (uint64_t)wire_le32(p) | (uint64_t)p[4] << 32 | 0x2020200000000000ull;
	/* 8 bytes make a key; a longer symbol has no key (counted as filtered). */
	for (i = 8; i < width; i++)
		if (wb_unlikely(p[i] != ' '))
			return 0;
	key = wire_le64(p);
	return key;
}

/*
 * The instrument of a message's ticker if it passes the filter (announced
 * on this venue), else 0 and counted as filtered.
 */
static inline uint16_t sip_instrument(struct feed_packet *pk, const uint8_t *symbol,
				      uint32_t width, uint64_t seq, uint64_t ts)
{
	uint64_t key = sip_ticker_key(symbol, width);
	uint16_t inst = key ? feed_instrument_for_key(pk->engine, key) : 0;

	if (!inst) {
		pk->counters->filtered++;
		return 0;
	}
	if (wb_unlikely(!feed_announced(pk->v, inst)) ||
	    wb_unlikely(pk->v->stream_of[inst] != feed_stream_id(pk->group, 0)))
		feed_announce(pk, inst, 0, seq, ts);
	return inst;
}

/*
 * Shares per unit of a size field at SIP time sip_ts: 1 since 2025-11-03;
 * before, the instrument's round lot (its directory entry's, else 100).
 */
static inline uint32_t sip_size_unit(struct feed_packet *pk, uint16_t inst, uint64_t sip_ts)
{
	const struct feed_symbol *s;

	if (wb_likely(sip_ts >= SIP_SHARES_SINCE_NS))
		return 1;
	s = feed_dir_symbol(&pk->v->dir, inst);
	return s && s->round_lot ? s->round_lot : SIP_DEFAULT_ROUND_LOT;
}

/* A size field in shares (saturated: a lot count times a round lot may not fit). */
static inline uint32_t sip_shares(uint32_t size, uint32_t unit)
{
	uint64_t shares = (uint64_t)size * unit;

	return shares > 0xffffffffu ? 0xffffffffu : (uint32_t)shares;
}

/*
 * A long (6 dp) price in 1e-8; false when it does not fit an int64. The
 * SIPs use unsigned prices: anything past int64 is a broken field.
 */
static inline bool sip_price6(const uint8_t *p, int64_t *out)
{
	uint64_t raw = wire_be64(p);

	if (wb_unlikely(raw > SIP_MAX_PRICE6))
		return false;
	*out = (int64_t)(raw * SIP_PRICE6_TO_WB);
	return true;
}

static inline int64_t sip_price2(const uint8_t *p)
{
	return (int64_t)wire_be16(p) * SIP_PRICE2_TO_WB;
}

/* One participant quote, normalized: what a QUOTE event carries. */
struct sip_quote {
	int64_t bid_price, ask_price;
	uint32_t bid_qty, ask_qty;	/* shares */
	uint64_t ts, sip_ts;
	uint8_t venue;			/* enum wb_venue of the participant */
	uint8_t condition;		/* the feed's code */
	uint8_t flags;			/* WB_EVF_BID/ASK_INELIGIBLE */
};

/*
 * Where a quote keeps its two sides: the same shape on both SIPs, long
 * (u64 prices of 6 dp, u32 sizes) or short (u16 prices of 2 dp, u16 sizes).
 */
struct sip_quote_sides {
	bool long_prices;
	uint8_t bid_price, bid_size, ask_price, ask_size;
};

/*
 * The quote's prices and its sizes in shares (lot: sip_size_unit); false
 * when a long price is broken (counted as a bad field). The message's
 * length was checked against its body.
 */
static inline bool sip_quote_sides(struct feed_packet *pk, const uint8_t *m,
				   const struct sip_quote_sides *l, uint32_t lot, struct sip_quote *q)
{
	if (l->long_prices) {
		if (wb_unlikely(!sip_price6(m + l->bid_price, &q->bid_price) ||
				!sip_price6(m + l->ask_price, &q->ask_price))) {
			feed_count_error(pk, FEED_ERR_BAD_FIELD);
			return false;
		}
		q->bid_qty = sip_shares(wire_be32(m + l->bid_size), lot);
		q->ask_qty = sip_shares(wire_be32(m + l->ask_size), lot);
	} else {
		q->bid_price = sip_price2(m + l->bid_price);
		q->ask_price = sip_price2(m + l->ask_price);
		q->bid_qty = sip_shares(wire_be16(m + l->bid_size), lot);
		q->ask_qty = sip_shares(wire_be16(m + l->ask_size), lot);
	}
	return true;
}

/*
 * A side that is absent (price and size 0) or not firm (size 0: a price or
 * trading-range indication) may not set the NBBO, whatever the condition.
 */
static inline uint8_t sip_absent_sides(const struct sip_quote *q)
{
	return (uint8_t)((q->bid_qty == 0 ? WB_EVF_BID_INELIGIBLE : 0) |
			 (q->ask_qty == 0 ? WB_EVF_ASK_INELIGIBLE : 0));
}

static inline void sip_emit_quote(struct feed_packet *pk, uint16_t inst, uint64_t seq,
				  const struct sip_quote *q)
{
	struct wb_event *restrict ev = feed_emit(pk, WB_EV_QUOTE, inst, seq, q->ts);

	if (!ev)
		return;
	ev->venue = q->venue;
	ev->side = q->condition;
	ev->flags = (uint8_t)(WB_EVF_SIP | q->flags | sip_absent_sides(q));
	ev->u.quote.bid_price = q->bid_price;
	ev->u.quote.ask_price = q->ask_price;
	ev->u.quote.bid_qty = q->bid_qty;
	ev->u.quote.ask_qty = q->ask_qty;
	ev->u.quote.sip_ts = q->sip_ts;
	feed_commit(pk);
}

/* One side of the NBBO: price (1e-8), shares, venue. */
struct sip_best {
	int64_t price;
	uint32_t qty;
	uint8_t venue;
};

/* An NBBO as a message states it (event.h wb_ev_nbbo). */
struct sip_nbbo {
	struct sip_best bid, ask;
	uint64_t sip_ts;
	char indicator, condition, luld;
	uint8_t sides;			/* WB_NBBO_* */
};

static inline void sip_emit_nbbo(struct feed_packet *pk, uint16_t inst, uint64_t seq,
				 const struct sip_nbbo *n)
{
	struct wb_event *restrict ev = feed_emit(pk, WB_EV_NBBO, inst, seq, n->sip_ts);

	if (!ev)
		return;
	ev->flags = WB_EVF_SIP;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.nbbo.bid_price = n->bid.price;
	ev->u.nbbo.ask_price = n->ask.price;
	ev->u.nbbo.bid_qty = n->bid.qty;
	ev->u.nbbo.ask_qty = n->ask.qty;
	ev->u.nbbo.bid_venue = n->bid.venue;
	ev->u.nbbo.ask_venue = n->ask.venue;
	ev->u.nbbo.indicator = n->indicator;
	ev->u.nbbo.condition = n->condition;
	ev->u.nbbo.sides = n->sides;
	ev->u.nbbo.luld = n->luld;
	feed_commit(pk);
}

static inline void sip_emit_luld(struct feed_packet *pk, uint16_t inst, uint64_t seq,
				 uint64_t ts, int64_t lower, int64_t upper, char indicator)
{
	struct wb_event *restrict ev = feed_emit(pk, WB_EV_LULD, inst, seq, ts);

	if (!ev)
		return;
	ev->flags = WB_EVF_SIP;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.luld.lower = lower;
	ev->u.luld.upper = upper;
	ev->u.luld.indicator = indicator;
	feed_commit(pk);
}

/* A STATUS the SIP reports: of a participant (venue) or of the SIP itself (pk->venue). */
static inline void sip_emit_status(struct feed_packet *pk, uint16_t inst, uint8_t venue,
				   uint64_t seq, uint64_t ts, uint8_t state, char raw,
				   const char reason[4], uint8_t flags)
{
	struct wb_event *restrict ev = feed_emit(pk, WB_EV_STATUS, inst, seq, ts);

	if (!ev)
		return;
	ev->venue = venue;
	ev->flags = (uint8_t)(WB_EVF_SIP | flags);
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.status.state = state;
	ev->u.status.raw_state = raw;
	__builtin_memcpy(ev->u.status.reason, reason, 4);
	feed_commit(pk);
}

/* "MWC1" for an MWCB level '1', '2' or '3'. */
static inline void sip_mwcb_reason(char level, char out[4])
{
	out[0] = 'M';
	out[1] = 'W';
	out[2] = 'C';
	out[3] = level;
}

/* The venue's directory entry for an instrument: its round lot and listing market. */
static inline void sip_define(struct feed_packet *pk, const uint8_t *symbol, uint32_t width,
			      uint32_t round_lot, char market, uint64_t seq, uint64_t ts)
{
	struct feed_symbol sym = { .round_lot = round_lot, .market = market };
	uint16_t inst;

	sym.ticker = sip_ticker_key(symbol, width);
	inst = sym.ticker ? feed_instrument_for_key(pk->engine, sym.ticker) : 0;
	if (!inst) {
		pk->counters->filtered++;
		return;
	}
	/* A new directory entry is announced again, with its round lot. */
	pk->v->announced[inst >> 3] &= (uint8_t)~(1u << (inst & 7));
	feed_dir_define(pk, inst, &sym, seq, ts);
}

#endif /* WIREBOOK_FEED_SIP_H */
