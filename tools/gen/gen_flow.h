/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Synthetic order flow, independent of any feed protocol.
 *
 * The flow core owns what a trading day looks like: the symbols, the
 * venues they trade on, the set of live orders, the session timeline with
 * bursts at the open and the close, and a deterministic (seeded) stream of
 * actions: "add order 17 on nasdaq, buy 300 AAPL at 189.52", "delete order
 * 17", ... Per-feed encoders (gen_itch for ITCH 5.0/MoldUDP64; gen_pitch for
 * Cboe PITCH next) turn the actions of their venue into wire messages and
 * packets. The core never knows a wire format.
 *
 * Realism, so books built from the output look real:
 *  - each symbol has a mid price and a tick ($0.01, or $0.0001 below $1);
 *    buys rest below the mid and sells above it, most within a few ticks,
 *    a few deep, so price levels stack several orders and books never cross;
 *  - symbol activity is skewed (a few names carry much of the traffic);
 *  - updates (execute, cancel, delete, replace) pick a uniformly random
 *    live order from a flat array (swap-remove), so they hit orders across
 *    the whole live set, old and new, not only recent ones;
 *  - the live-order count follows the day: it builds up before the open,
 *    peaks after it and drains towards the close; message density peaks at
 *    the open and close bursts.
 *
 * Message mix drawn (of order-flow messages): A 38.5%, F 1.5%, D 38%, U 8%,
 * E 3.8%, X 3.8%, C 1.7%, P 4.7%; steering the live-order curve turns
 * some removals into adds, which lands the day near A 40%, D 38%, U 8%,
 * E 3%, X 3%, P 5%. Messages come in bursts (about 4 within nanoseconds,
 * then an idle gap), as an exchange emits them.
 *
 * ---- Encoder interface -------------------------------------------------
 *
 * Drive the core with gen_flow_next() and hand each action to the encoder
 * of a->venue. An encoder provides:
 *
 *   int  <feed>_action(struct <feed> *enc, const struct gen_flow *flow,
 *                      const struct gen_action *a);
 *        encode one action (in time order; a->ts never decreases). Actions
 *        the feed has no message for are skipped (PITCH has no directory:
 *        GEN_SYMBOL may be ignored). Symbols are a->symbol, an index into
 *        flow->symbols; the encoder maps it to its own key (ITCH: locate =
 *        index + 1; PITCH: the ticker). Order ids are unique per venue for
 *        the day and never reused.
 *   int  <feed>_finish(struct <feed> *enc, uint64_t ts);
 *        flush what is buffered and close the session (end-of-session
 *        packets) at time ts.
 *
 * and emits UDP payloads through a struct gen_packet_sink (below), which
 * the caller points at a pcap writer, an in-memory array (benchmarks) or
 * anything else. Packet-level faults (gaps, duplicates, A/B copies) are the
 * encoder's business, since they depend on the transport's sequencing.
 */
#ifndef WIREBOOK_TOOLS_GEN_FLOW_H
#define WIREBOOK_TOOLS_GEN_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wirebook/event.h"

/* ---- deterministic random numbers (splitmix64 seeding xoshiro256**) ---- */

struct gen_rng {
	uint64_t s[4];
};

void gen_rng_seed(struct gen_rng *r, uint64_t seed);

static inline uint64_t gen_rng_next(struct gen_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5, result = (x << 7 | x >> 57) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = s[3] << 45 | s[3] >> 19;
	return result;
}

/* Uniform in [0, n), n > 0 (multiply-shift; bias is below 2^-32). */
static inline uint32_t gen_rng_below(struct gen_rng *r, uint32_t n)
{
	return (uint32_t)(((gen_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ---- the output sink shared by every encoder --------------------------- */

struct gen_packet_sink {
	/* One UDP datagram at ts_ns (ns since the epoch). Returns 0 or -1. */
	int (*packet)(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
		      const uint8_t *payload, uint32_t len);
	void *ctx;
};

/*
 * Told of the orders an encoder adds and deletes of its own, outside the
 * flow (gen_pitch's short-lived locking and crossing orders), so a model
 * of the direct books (wb-gen --truth) can include them. price is the
 * wire price; ts the exchange time (ns since midnight).
 */
struct gen_order_observer {
	void (*order)(void *ctx, uint8_t venue, uint32_t symbol, uint8_t side, int64_t price,
		      uint32_t qty, uint64_t id, uint64_t ts, bool add);
	void *ctx;
};

/*
 * Send one datagram the way every encoder does: it leaves a fixed wire
 * delay after its exchange time (exch_epoch_ns) on the A line and, when
 * ab is set, a little later on the B line. Returns the datagrams sent, or
 * -1 when the sink failed.
 */
int gen_sink_send(const struct gen_packet_sink *s, uint64_t exch_epoch_ns, uint32_t a_ip,
		  uint16_t a_port, uint32_t b_ip, uint16_t b_port, bool ab,
		  const uint8_t *payload, uint32_t len);

/* ---- symbols and actions ---------------------------------------------- */

#define GEN_TICKER_LEN 8

struct gen_symbol {
	char ticker[GEN_TICKER_LEN];	/* space padded, as ITCH and PITCH carry it */
	int64_t mid;			/* 1e-8 dollars, a multiple of tick */
	int64_t tick;			/* 1e-8 dollars */
	uint32_t round_lot;
	char market;			/* listing market (ITCH market category) */
	uint32_t venues;		/* bit v set: trades on enum wb_venue v */
};

enum gen_action_kind {
	GEN_SYSTEM = 1,		/* venue-wide session event, code: O S Q M E C (ITCH codes) */
	GEN_SYMBOL,		/* the venue lists symbol (start-of-day directory) */
	GEN_TRADING,		/* trading state of symbol, code: T trading, H halted */
	GEN_ADD,		/* order_id side qty price; attributed: mpid */
	GEN_EXECUTE,		/* order_id qty match_id, at the order's price */
	GEN_EXECUTE_AT_PRICE,	/* order_id qty match_id price printable */
	GEN_CANCEL,		/* order_id qty (partial: qty < shares left) */
	GEN_DELETE,		/* order_id */
	GEN_REPLACE,		/* order_id -> new_order_id, qty price (same side) */
	GEN_TRADE,		/* non-displayed trade: side qty price match_id */
	GEN_CROSS,		/* auction print: qty price match_id, code O (open) C (close) */
	GEN_ACTION_KIND_COUNT
};

struct gen_action {
	uint8_t kind;		/* enum gen_action_kind */
	uint8_t venue;		/* enum wb_venue */
	uint8_t side;		/* enum wb_side */
	char code;		/* GEN_SYSTEM, GEN_TRADING, GEN_CROSS */
	bool attributed;	/* GEN_ADD: carries mpid */
	bool printable;		/* GEN_EXECUTE_AT_PRICE */
	char mpid[4];
	uint32_t symbol;	/* index into flow->symbols */
	uint32_t qty;
	uint32_t remaining;	/* shares of the order left after this action */
	uint64_t ts;		/* exchange time, ns since midnight */
	uint64_t order_id;
	uint64_t new_order_id;
	uint64_t match_id;
	int64_t price;		/* 1e-8 dollars */
};

/* ---- the flow core ------------------------------------------------------ */

enum gen_profile {
	GEN_PROFILE_DEMO = 0,	/* a handful of well-known symbols, a compressed session */
	GEN_PROFILE_DAY,	/* ~8,000 symbols, >1M live orders at peak, a whole day */
	GEN_PROFILE_HOSTILE,	/* ~1M live orders held all day, spread evenly over
				 * 8,000 symbols and many levels: every update hits a
				 * cold order, level and symbol (the cache-hostile
				 * day of the benchmarks) */
};

struct gen_flow_config {
	enum gen_profile profile;
	uint64_t seed;
	uint64_t messages;	/* order-flow messages (A..P); 0 = the profile's default */
	uint32_t symbols;	/* 0 = the profile's default */
	uint32_t venues;	/* bit per enum wb_venue; 0 = nasdaq only */
};

struct gen_live_order {
	uint64_t id;
	int64_t price;
	uint32_t qty;
	uint32_t symbol;
	uint8_t side;
	uint8_t venue;
};

/* Totals, for the caller's summary and the tests. */
struct gen_flow_stats {
	uint64_t actions[GEN_ACTION_KIND_COUNT];
	uint64_t attributed_adds;
	uint64_t flow_messages;		/* order-flow actions emitted */
	uint64_t peak_live;
};

struct gen_flow {
	struct gen_flow_config cfg;
	struct gen_rng rng;
	struct gen_symbol *symbols;
	uint32_t symbol_count;
	uint32_t *symbol_cdf;		/* activity weights, cumulative, for picking */
	uint8_t venue_list[WB_VENUE_COUNT];
	uint32_t venue_count;
	uint64_t next_order_id[WB_VENUE_COUNT];
	uint64_t next_match_id[WB_VENUE_COUNT];

	struct gen_live_order *live;	/* flat array, swap-remove */
	uint64_t live_count, live_cap;
	uint64_t peak_target;		/* live orders aimed at, at the peak */

	/* timeline */
	const void *steps;		/* the profile's session steps */
	uint32_t stage;			/* current step */
	uint64_t stage_pos;		/* actions emitted in the current step */
	uint64_t flow_done;		/* order-flow messages emitted */
	uint32_t flow_share_done;	/* permille of messages of the finished segments */
	uint64_t ts;			/* current exchange time */
	uint64_t seg_msgs;		/* order-flow messages in the current segment */
	uint64_t seg_step;		/* mean ns between them */
	uint64_t seg_target_start;	/* live orders when the segment began */

	struct gen_flow_stats stats;
};

/* Build the symbol universe and the empty book. Returns 0 or -1 (memory). */
int gen_flow_init(struct gen_flow *f, const struct gen_flow_config *cfg);
void gen_flow_destroy(struct gen_flow *f);

/* The next action: 1 with *a filled in, 0 when the day is over. */
int gen_flow_next(struct gen_flow *f, struct gen_action *a);

/* The profile's default number of order-flow messages. */
uint64_t gen_profile_default_messages(enum gen_profile p);

/* Exchange time (ns since midnight) of the profile's first message. */
uint64_t gen_profile_session_start(enum gen_profile p);

/* Parse "demo" / "day" / "hostile"; -1 if unknown. */
int gen_profile_parse(const char *s);

#endif /* WIREBOOK_TOOLS_GEN_FLOW_H */
