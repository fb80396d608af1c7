/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The normalized event: one 64-byte record per order-book or quote change,
 * the same for every feed. Shared verbatim by the kernel module, the
 * user-space producers, the book builder and any third-party consumer of
 * the event ring.
 *
 * Price scale: every price is a signed 64-bit integer in units of
 * 1e-8 dollars (WB_PRICE_SCALE). ITCH/PITCH Price(4) is multiplied by 10^4,
 * PITCH short prices (2 dp) by 10^6, SIP 6 dp prices by 100. Eight decimals
 * hold every exchange scale exactly (the finest, MWCB Price(8), included)
 * and still leave room for $92 billion per share.
 *
 * Timestamps: both are nanoseconds since the Unix epoch (UTC), for every
 * feed, so that events of two venues compare without knowing their feeds.
 *   exch_ts  the exchange's own clock. XDP, CQS and UQDF give epoch time;
 *            ITCH and PITCH give time since midnight US/Eastern, which the
 *            decoder adds to that trading day's midnight: the day is taken
 *            from the receive clock of the stream's first packet (a pcap's
 *            record time), or set by the producer for input without one
 *            (wb-dump --date for a BinaryFILE). 0 means unknown (a PITCH
 *            unit before its first Time message). Without any date (receive
 *            times before 1970-01-02, as in synthetic tests) ITCH and PITCH
 *            times stay times since midnight.
 *   recv_ts  the local receive time (CLOCK_REALTIME): taken at the hook in
 *            the module, the kernel's packet timestamp in live capture, the
 *            record time in a pcap.
 */
#ifndef WIREBOOK_EVENT_H
#define WIREBOOK_EVENT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#define WB_STATIC_ASSERT(c, m) static_assert(c, m)
#define WB_ALIGNOF(t) __alignof__(t)
#elif defined(__cplusplus)
#include <stdint.h>
#define WB_STATIC_ASSERT(c, m) static_assert(c, m)
#define WB_ALIGNOF(t) alignof(t)
#else
#include <stdint.h>
#define WB_STATIC_ASSERT(c, m) _Static_assert(c, m)
#define WB_ALIGNOF(t) _Alignof(t)
#endif

/* Bumped on any change to struct wb_event or the ring layout (3: gap recovery). */
#define WB_ABI_VERSION 3u

#define WB_PRICE_SCALE 100000000LL

enum wb_event_kind {
	WB_EV_NONE = 0,
	WB_EV_ADD = 1,		/* new displayed order: order_id, side, price, qty */
	WB_EV_EXECUTE = 2,	/* order executed at its resting price: qty executed */
	WB_EV_EXECUTE_AT_PRICE = 3, /* executed at another price (trade only; book as EXECUTE) */
	WB_EV_REDUCE = 4,	/* partial cancel: qty cancelled */
	WB_EV_DELETE = 5,	/* order removed */
	WB_EV_REPLACE = 6,	/* order_id removed, new_order_id added (new priority) */
	WB_EV_MODIFY = 7,	/* same order_id, new price/qty; see WB_EVF_KEEPS_PRIORITY */
	WB_EV_TRADE = 8,	/* non-displayed or cross trade; no book change */
	WB_EV_TRADE_BREAK = 9,	/* an earlier execution or trade was broken */
	WB_EV_QUOTE = 10,	/* a venue's quote through a SIP (CQS, UQDF): venue = the participant */
	WB_EV_STATUS = 11,	/* trading status of an instrument (or of the venue) */
	WB_EV_CLEAR = 12,	/* clear the books of instrument (0 = every instrument of the line) */
	WB_EV_SYMBOL = 13,	/* instrument id <-> ticker mapping; precedes its first event */
	WB_EV_GAP = 14,		/* sequence gap: messages [gap.first, gap.first+gap.count) lost */
	WB_EV_NBBO = 15,	/* the SIP's national best bid and offer (CQS, UQDF) */
	WB_EV_LULD = 16,	/* limit up-limit down price band of an instrument */
	WB_EV_KIND_COUNT
};

/*
 * Venues: every US equities exchange (and FINRA's ADF), whatever feed its
 * data comes from. A venue whose direct order-by-order feed is decoded gets
 * a book; every venue's quote also reaches wirebook through the SIPs (CQS,
 * UQDF), as a second view of the same venue. The SIPs are feeds, not venues.
 *
 * The one list of them: X(ID, value, name) gives WB_VENUE_<ID> = value,
 * the feeds.conf word (name) and the reader's label (wb_venue_name: #ID).
 * Values are ABI: new rows take new values.
 */
#define WB_VENUES(X) \
	X(NASDAQ, 1, "nasdaq")		/* Nasdaq Stock Market (ITCH) */ \
	X(BZX, 2, "bzx")		/* Cboe BZX (PITCH) */ \
	X(BYX, 3, "byx")		/* Cboe BYX (PITCH) */ \
	X(EDGX, 4, "edgx")		/* Cboe EDGX (PITCH) */ \
	X(EDGA, 5, "edga")		/* Cboe EDGA (PITCH) */ \
	X(NYSE, 6, "nyse")		/* New York Stock Exchange (XDP) */ \
	X(ARCA, 7, "arca")		/* NYSE Arca (XDP) */ \
	X(AMERICAN, 8, "american")	/* NYSE American (XDP) */ \
	X(NATIONAL, 9, "national")	/* NYSE National (XDP) */ \
	X(TEXAS, 10, "texas")		/* NYSE Texas, formerly NYSE Chicago (XDP) */ \
	X(BX, 11, "bx")			/* Nasdaq BX, now Nasdaq Texas (ITCH format) */ \
	X(PSX, 12, "psx")		/* Nasdaq PSX (ITCH format) */ \
	X(IEX, 13, "iex")		/* Investors Exchange */ \
	X(MEMX, 14, "memx")		/* Members Exchange */ \
	X(MIAX, 15, "miax")		/* MIAX Pearl Equities */ \
	X(LTSE, 16, "ltse")		/* Long-Term Stock Exchange */ \
	X(ISE, 17, "ise")		/* Nasdaq ISE */ \
	X(CBOE, 18, "cboe")		/* Cboe Stock Exchange (CBSX) */ \
	X(24X, 19, "24x")		/* 24X National Exchange */ \
	X(TXSE, 20, "txse")		/* Texas Stock Exchange */ \
	X(FINRA, 21, "finra")		/* FINRA Alternative Display Facility */

enum wb_venue {
	WB_VENUE_NONE = 0,
#define WB_VENUE_ENUM_ROW(id, value, name) WB_VENUE_##id = value,
	WB_VENUES(WB_VENUE_ENUM_ROW)
#undef WB_VENUE_ENUM_ROW
	WB_VENUE_COUNT
};

enum wb_side {
	WB_SIDE_NONE = 0,
	WB_SIDE_BUY = 1,
	WB_SIDE_SELL = 2,
};

/* wb_event.flags */
#define WB_EVF_PRINTABLE	0x01 /* execution/trade counts toward volume */
#define WB_EVF_KEEPS_PRIORITY	0x02 /* MODIFY keeps the order's queue position */
#define WB_EVF_CROSS		0x04 /* TRADE is an auction cross print */
#define WB_EVF_SESSION_END	0x08 /* CLEAR/STATUS caused by end of session */
#define WB_EVF_UNSEQUENCED	0x10 /* from an unsequenced message (seq is 0) */
#define WB_EVF_SIP		0x20 /* from a SIP feed: the SIP's view, no direct book changes */
#define WB_EVF_BID_INELIGIBLE	0x40 /* QUOTE: the bid may not set the NBBO (condition, LULD, none) */
#define WB_EVF_ASK_INELIGIBLE	0x80 /* QUOTE: the ask may not set the NBBO */

/* wb_event.status.state: feed-independent trading states. */
enum wb_trading_state {
	WB_STATE_UNKNOWN = 0,
	WB_STATE_TRADING = 1,
	WB_STATE_HALTED = 2,
	WB_STATE_PAUSED = 3,
	WB_STATE_QUOTATION_ONLY = 4,
	WB_STATE_CLOSED = 5,
	WB_STATE_PRE_OPEN = 6,
	WB_STATE_OPEN = 7,	/* venue-wide: market hours started */
};

struct wb_ev_order {
	uint64_t order_id;	/* REPLACE: the order that goes away */
	int64_t price;		/* ADD/REPLACE/MODIFY: resting price; EXECUTE_AT_PRICE: trade price */
	uint32_t qty;		/* ADD/REPLACE/MODIFY: displayed size; EXECUTE, REDUCE: change */
	char mpid[4];		/* ADD: attribution, zero when none */
	uint64_t ref;		/* REPLACE: new order id; EXECUTE, EXECUTE_AT_PRICE: match id */
};

struct wb_ev_trade {
	uint64_t order_id;	/* usually 0 */
	int64_t price;
	uint32_t qty;
	char cross_type;	/* ITCH 'Q': O/C/H/I; 0 otherwise */
	uint8_t reserved[3];
	uint64_t match_id;	/* TRADE_BREAK: the broken match */
};

/*
 * The SIP events (QUOTE, NBBO, LULD, and STATUS or CLEAR with WB_EVF_SIP)
 * are the SIP's view of the venues, never direct book changes. venue is
 * the participant whose quote or status it is; what the SIP says itself
 * (NBBO, LULD bands, market-wide halts, MWCB) carries the SIP's own id
 * instead: WB_VENUE_SIP_CQS or WB_VENUE_SIP_UQDF, which follow the venues.
 */
#define WB_VENUE_SIP_CQS	WB_VENUE_COUNT
#define WB_VENUE_SIP_UQDF	(WB_VENUE_COUNT + 1)

/*
 * QUOTE: one participant's quote through a SIP. Sizes are shares (the SIPs
 * sent round lots before 2025-11-03; the decoder converts by trade date).
 * A side with price 0 and size 0 is absent. exch_ts is the participant's
 * time, sip_ts the SIP's; the event's `side` byte holds the quote
 * condition code as the feed gives it. WB_EVF_BID/ASK_INELIGIBLE say which
 * sides may not set the NBBO.
 */
struct wb_ev_quote {
	int64_t bid_price;
	int64_t ask_price;
	uint32_t bid_qty;
	uint32_t ask_qty;
	uint64_t sip_ts;
};

/*
 * NBBO: the SIP's national best bid and offer after a quote (exch_ts is the
 * SIP's time). A side with price 0 and size 0 is absent (no NBB or NBO).
 * A message may state one side only (CQS indicators B-F, H-N, P-S): the
 * other side repeats the last NBBO of the instrument on that stream, and
 * `sides` says which were stated; a side neither stated nor known since
 * the stream (re)started is zero with its UNKNOWN bit set.
 */
struct wb_ev_nbbo {
	int64_t bid_price;
	int64_t ask_price;
	uint32_t bid_qty;
	uint32_t ask_qty;
	uint8_t bid_venue;	/* enum wb_venue at the best bid, 0 if none */
	uint8_t ask_venue;
	char indicator;		/* the feed's NBBO indicator code */
	char condition;		/* the feed's NBBO quote condition, 0 if none */
	uint8_t sides;		/* WB_NBBO_* */
	char luld;		/* the feed's NBBO LULD indicator, 0 if none */
	uint8_t reserved[2];
};

#define WB_NBBO_BID_STATED	0x01	/* this message set the bid */
#define WB_NBBO_ASK_STATED	0x02	/* this message set the ask */
#define WB_NBBO_BID_UNKNOWN	0x04	/* bid neither stated nor known */
#define WB_NBBO_ASK_UNKNOWN	0x08

/* LULD: the instrument's price band (0: no band on that side). */
struct wb_ev_luld {
	int64_t lower;
	int64_t upper;
	char indicator;		/* the feed's band indicator code */
	uint8_t reserved[15];
};

struct wb_ev_status {
	uint8_t state;		/* enum wb_trading_state */
	char raw_state;		/* the feed's own code, e.g. ITCH 'H' */
	char reason[4];		/* feed's reason code, space padded */
	uint8_t reserved[26];
};

struct wb_ev_symbol {
	char ticker[8];		/* space padded */
	uint32_t round_lot;
	uint32_t feed_key;	/* the feed's own key (ITCH locate, XDP SymbolIndex), 0 if none */
	char listing_market;	/* the feed's listing market code, 0 if unknown */
	uint8_t reserved[15];
};

/* wb_ev_gap.reason */
enum wb_gap_reason {
	WB_GAP_SEQUENCE = 0,	/* messages [first, first + count) of the stream were lost */
	WB_GAP_LATE_SUBSCRIBE = 1, /* the instrument was subscribed after its stream began:
				    * its earlier messages were never seen (count 0) */
	WB_GAP_FILTER_FULL = 2,	/* an order of the instrument could not be tracked (count 1) */
	WB_GAP_BAD_DATA = 3,	/* a message of the instrument could not be applied */
	WB_GAP_RECOVERING = 4,	/* [first, first + count) is missing and being recovered (gap
				 * fill, or a snapshot: count 0, the end is not known yet). The
				 * stream's later messages are held back until it is filled:
				 * its books are behind, not wrong. Always followed, on the
				 * same stream, by exactly one WB_GAP_FILLED. */
	WB_GAP_FILLED = 5,	/* the recovery of [first, first + count) is over: the stream
				 * is in sequence again. What could not be recovered was
				 * reported before it as WB_GAP_SEQUENCE gaps (gap.lost
				 * messages in all); lost == 0 means every message came. */
};

/*
 * A gap names its sequence stream: (venue, channel, unit). channel is the
 * feed map's channel of the line (0 when the map gives none); unit is the
 * PITCH matching unit (0 for other protocols). instrument 0 means the whole
 * stream; otherwise only that instrument's book is affected.
 */
struct wb_ev_gap {
	uint64_t first;		/* first missing sequence number */
	uint64_t count;		/* messages missing */
	uint16_t channel;
	uint8_t unit;
	uint8_t reason;		/* enum wb_gap_reason */
	uint32_t lost;		/* WB_GAP_FILLED: messages of the range that were lost */
	uint8_t reserved[8];
};

struct wb_event {
	uint8_t kind;		/* enum wb_event_kind */
	uint8_t venue;		/* enum wb_venue */
	uint8_t side;		/* enum wb_side */
	uint8_t flags;		/* WB_EVF_* */
	uint16_t line;		/* feed-map index of the line the packet came on */
	uint16_t instrument;	/* assigned at subscription; 0 = venue-wide */
	uint64_t seq;		/* source sequence number of the message */
	uint64_t exch_ts;	/* exchange time, ns (see above) */
	uint64_t recv_ts;	/* local receive time, ns since the epoch */
	union {
		struct wb_ev_order order;
		struct wb_ev_trade trade;
		struct wb_ev_quote quote;
		struct wb_ev_nbbo nbbo;
		struct wb_ev_luld luld;
		struct wb_ev_status status;
		struct wb_ev_symbol symbol;
		struct wb_ev_gap gap;
		uint8_t raw[32];
	} u;
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_event) == 64, "wb_event must be one cache line");
WB_STATIC_ASSERT(WB_ALIGNOF(struct wb_event) == 64, "wb_event must be cache-line aligned");
WB_STATIC_ASSERT(sizeof(struct wb_ev_order) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_trade) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_quote) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_nbbo) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_luld) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_status) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_symbol) == 32, "payload is 32 bytes");
WB_STATIC_ASSERT(sizeof(struct wb_ev_gap) == 32, "payload is 32 bytes");

#endif /* WIREBOOK_EVENT_H */
