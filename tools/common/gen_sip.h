/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the SIP encoders of the generator (gen_cqs.c, gen_uqdf.c) share:
 * the venues' books as the SIP sees them (each venue's best bid and offer
 * per symbol, from the flow's actions on the direct feeds) and the NBBO
 * across them, and a quote stream that says, action by action, which
 * venue's BBO changed and what the NBBO became.
 *
 * It is a reusable piece on purpose: a SIP-vs-direct day delays these
 * quotes by a lag before handing them to an encoder; here the SIP time is
 * the participant's time plus GEN_SIP_LATENCY_NS.
 *
 * Prices are the venues' wire prices: a Cboe venue's prices are shaded as
 * gen_pitch shades them (gen_pitch_shade), so the SIP's view matches the
 * direct books; the encoders' short-lived locking/crossing orders are not
 * seen by the SIP.
 */
#ifndef WIREBOOK_TOOLS_GEN_SIP_H
#define WIREBOOK_TOOLS_GEN_SIP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/gen_flow.h"

#define GEN_SIP_LATENCY_NS 20000	/* participant time -> SIP time */

struct gen_sip_level {
	int64_t price;
	uint32_t qty;
};

/* One side of one venue's book of one symbol: levels, best first. */
struct gen_sip_side {
	struct gen_sip_level *level;
	uint32_t n, cap;
};

struct gen_sip_order {
	uint64_t key;		/* venue << 56 | order id; 0: empty */
	int64_t price;
	uint32_t qty;
	uint32_t symbol;
	uint8_t side;
};

struct gen_sip_best {
	int64_t price;		/* 0 with qty 0: none */
	uint32_t qty;
	uint8_t venue;
};

struct gen_sip_bbo {
	struct gen_sip_best bid, ask;
};

struct gen_sip_book {
	uint32_t symbols;
	struct gen_sip_side *side;	/* [symbols][WB_VENUE_COUNT][2] */
	struct gen_sip_order *order;	/* open addressing */
	uint64_t order_cap, order_count;
};

int gen_sip_book_init(struct gen_sip_book *b, uint32_t symbols);
void gen_sip_book_destroy(struct gen_sip_book *b);

/*
 * Apply a flow action. Returns 1 when the acting venue's BBO of a->symbol
 * changed, 0 when not, -1 when out of memory.
 */
int gen_sip_book_apply(struct gen_sip_book *b, const struct gen_flow *flow,
		       const struct gen_action *a);

/* A venue's best bid and offer of a symbol (venue set on both sides). */
void gen_sip_venue_bbo(const struct gen_sip_book *b, uint32_t symbol, uint8_t venue,
		       struct gen_sip_bbo *out);

/*
 * The NBBO over the venues in mask: the best price; between venues at the
 * same price, the larger size, then the lower venue id.
 */
void gen_sip_nbbo(const struct gen_sip_book *b, uint32_t symbol, uint32_t venue_mask,
		  struct gen_sip_bbo *out);

/*
 * What a SIP encoder keeps of the flow: the venues' books, the NBBO it last
 * published per symbol, and the symbols whose directory entry it sent.
 * Opened at the encoder's first action, when the flow's symbols are known.
 */
struct gen_sip_view {
	struct gen_sip_book book;
	struct gen_sip_bbo *published;	/* [symbols] */
	uint8_t *listed;		/* [symbols] */
	uint32_t venues;		/* the flow's venues: those the NBBO is over */
};

/* 0, or -1 when out of memory; nothing to do once open. */
int gen_sip_view_open(struct gen_sip_view *v, const struct gen_flow *flow);
void gen_sip_view_close(struct gen_sip_view *v);

/* The same best quote (price and size; the venue too, unless there is none). */
bool gen_sip_same(const struct gen_sip_best *a, const struct gen_sip_best *b);

/* Fits the SIPs' short forms: a whole-cent price up to 655.35 and a 16-bit size. */
bool gen_sip_fits_short(int64_t price, uint32_t qty);

/* Nasdaq-listed (UQDF) or not (CQS), by the flow's listing market code. */
bool gen_sip_nasdaq_listed(const struct gen_symbol *s);

/* The ticker's length (space padded). */
uint32_t gen_sip_ticker_len(const struct gen_symbol *s);

#endif /* WIREBOOK_TOOLS_GEN_SIP_H */
