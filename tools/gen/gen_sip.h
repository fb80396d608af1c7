/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the SIP encoders of the generator (gen_cqs.c, gen_uqdf.c) share:
 * the venues' books as the SIP sees them (each venue's best bid and offer
 * per symbol, from the flow's actions on the direct feeds) and the NBBO
 * across them, and a quote stream that says, action by action, which
 * venue's BBO changed and what the NBBO became.
 *
 * The encoders stamp each message with the SIP time of a struct
 * gen_sip_clock: the participant's time plus a lag, fixed
 * (GEN_SIP_LATENCY_NS unless wb-gen --sip-lag-us says otherwise) or drawn
 * per message; the capture carries the message at that time.
 *
 * Prices are the venues' wire prices: a Cboe or XDP venue's prices are shaded as
 * gen_pitch shades them (gen_pitch_shade), so the SIP's view matches the
 * direct books; the encoders' short-lived locking/crossing orders are not
 * seen by the SIP.
 */
#ifndef WIREBOOK_TOOLS_GEN_SIP_H
#define WIREBOOK_TOOLS_GEN_SIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen/gen_flow.h"

#define GEN_SIP_LATENCY_NS 20000	/* participant time -> SIP time, by default */

/*
 * The SIP's lag after the participant's time (wb-gen --sip-lag-us): fixed,
 * or drawn per message from a uniform or an exponential distribution. A
 * SIP line keeps its order, so a draw that would put a message before the
 * line's previous one is raised to it (the line queues), as a real SIP's
 * does: under a distribution the lags come out a little larger than drawn
 * when messages are closer together than the lags' spread.
 */
enum gen_lag_kind { GEN_LAG_FIXED = 0, GEN_LAG_UNIFORM = 1, GEN_LAG_EXP = 2 };

struct gen_lag {
	uint8_t kind;		/* enum gen_lag_kind */
	uint64_t a_ns;		/* FIXED: the lag; UNIFORM: the least; EXP: the mean */
	uint64_t b_ns;		/* UNIFORM: the most */
};

/* "N", "uniform:A:B" or "exp:MEAN" (microseconds, decimals allowed): 0 or -1. */
int gen_lag_parse(const char *text, struct gen_lag *out);
/* The lag as parse takes it, into buf. */
const char *gen_lag_format(const struct gen_lag *lag, char *buf, size_t n);

/* The lags a day's SIP lines applied (after raising), for wb-gen --truth. */
struct gen_lag_record {
	uint64_t *lag;		/* ns, one per message */
	size_t n, cap;
	uint64_t sum;
	bool error;		/* out of memory: incomplete */
};

struct gen_sip_clock {
	struct gen_lag lag;
	struct gen_rng rng;
	uint64_t last;		/* the line's latest SIP time */
	struct gen_lag_record *rec;	/* NULL: not recorded */
};

/* lag NULL: fixed GEN_SIP_LATENCY_NS; rec NULL: lags not recorded. */
void gen_sip_clock_init(struct gen_sip_clock *c, const struct gen_lag *lag, uint64_t seed,
			struct gen_lag_record *rec);
/* The median of the recorded lags (sorts them), 0 when none. */
uint64_t gen_lag_record_median(struct gen_lag_record *r);
/* The SIP time of a message whose participant time is ts (ns since midnight). */
uint64_t gen_sip_clock_time(struct gen_sip_clock *c, uint64_t ts);

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
