/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The SIP view of the published books (libwirebook, book ABI 4): each
 * symbol's quotes, NBBO, LULD band and status as the SIPs published them,
 * and the SIP-vs-direct statistics. Part of book.h.
 */
#ifndef WIREBOOK_SIP_H
#define WIREBOOK_SIP_H

#include "book.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Beside each symbol's Super-Book (built from the direct feeds) the builder
 * keeps the SIP's view of the same symbol, from CQS and UQDF: every
 * participant's quote as the SIP published it, the SIP's own NBBO, the LULD
 * band and the SIP-reported trading status; and the comparison of the two
 * views. Each symbol's SIP record has its own seqlock (the same protocol as
 * its Super-Book record's), so a SIP event never holds up a Super-Book read.
 *
 * Clocks, everywhere below: exch_ts is the participant's (the exchange's)
 * time, sip_ts the SIP's, recv_ts the local receive time. Durations and
 * delays are measured on the receive clock: what a reader of both feeds on
 * this host saw; the other stamps are kept so they can be recomputed.
 *
 * The comparison (builder thread 2, as each change is applied):
 *  - NBBO: where every venue at the SIP's NBB and NBO has a direct book of
 *    the symbol ("covered"), the Super-Book's best bid and ask (prices) are
 *    compared with the SIP's after every change of either. An episode is
 *    the time they differ. Begun by the direct books and ended by the SIP
 *    (catching up): the direct feeds were ahead; begun by the SIP and ended
 *    by the direct books: the SIP was ahead; begun and ended by the same
 *    side: that side showed something the other never did.
 *  - Per venue: each change of a venue's direct BBO (prices and sizes, one
 *    per message) is remembered (the last WB_SIP_BBO_HISTORY); a SIP quote
 *    of the venue is matched to the oldest remembered BBO not yet shown
 *    with the same prices and sizes (else the same prices); its delay is
 *    SIP receive time - direct receive time. Remembered BBOs older than the
 *    match were never shown by the SIP.
 *  - Locked and crossed: an episode of each view starts when its NBB >= NBO
 *    (both present) and ends when not; it names the venues whose quotes
 *    lock or cross (bids at or above the NBO, asks at or below the NBB).
 *    A state that lasts no time (between two updates of one message) is
 *    not an episode.
 */
#define WB_SIP_BBO_HISTORY 16	/* direct BBOs remembered per (symbol, venue) */
#define WB_SIP_EPISODES 4096	/* episodes kept per ring (power of two) */
#define WB_VIEW_DIRECT 0	/* wb_sip_lockcross index: the Super-Book's NBBO */
#define WB_VIEW_SIP 1		/* the SIP's NBBO */

/* struct wb_sip_view.flags */
#define WB_SIPF_LOCKED		0x0001	/* the SIP's NBB == NBO */
#define WB_SIPF_CROSSED		0x0002	/* the SIP's NBB > NBO */
#define WB_SIPF_HALTED		0x0004	/* the SIP says halted or paused */
#define WB_SIPF_COVERED		0x0008	/* the direct feeds cover the SIP's NBB and NBO venues */
#define WB_SIPF_DISAGREE	0x0010	/* covered, and the Super-Book's NBBO differs now */
#define WB_SIPF_STALE		0x0020	/* a CQS gap may have lost the symbol's quotes: the
					 * view is not current until its next CQS quote */

/* One participant's quote through the SIP (64 bytes). A side with price 0
 * and size 0 is absent. */
struct wb_sip_quote {
	int64_t bid_price;
	int64_t ask_price;
	uint32_t bid_qty;	/* shares */
	uint32_t ask_qty;
	uint64_t exch_ts;	/* the participant's time */
	uint64_t sip_ts;
	uint64_t recv_ts;
	uint32_t quotes;	/* quotes of this participant for the symbol */
	char condition;		/* the feed's quote condition code */
	uint8_t flags;		/* WB_EVF_SIP | WB_EVF_BID_INELIGIBLE | WB_EVF_ASK_INELIGIBLE */
	uint8_t feed;		/* WB_VENUE_SIP_CQS or _UQDF (the symbol's NBBO's); 0: not known yet */
	uint8_t state;		/* the participant's own status through the SIP; 0 unknown */
	uint8_t reserved[8];
};

/* The SIP's NBBO (48 bytes), as its last message stated it (event.h). */
struct wb_sip_nbbo {
	int64_t bid_price;	/* 0 with size 0: no NBB */
	int64_t ask_price;
	uint32_t bid_qty;
	uint32_t ask_qty;
	uint8_t bid_venue;	/* enum wb_venue, 0 if none */
	uint8_t ask_venue;
	char indicator;		/* the feed's NBBO indicator code */
	char condition;
	uint8_t sides;		/* WB_NBBO_* */
	char luld;		/* the feed's NBBO LULD indicator */
	uint8_t feed;		/* WB_VENUE_SIP_CQS or WB_VENUE_SIP_UQDF; 0: no NBBO yet */
	uint8_t reserved;
	uint64_t sip_ts;
	uint64_t recv_ts;
};

struct wb_sip_luld {
	int64_t lower;		/* 0: no band on that side */
	int64_t upper;
	uint64_t sip_ts;	/* 0: no band received */
	char indicator;
	uint8_t feed;
	uint8_t reserved[6];
};

/* A status the SIP reported (24 bytes): a symbol's, or market-wide (MWCB). */
struct wb_sip_status {
	uint64_t sip_ts;	/* 0: none received */
	uint64_t recv_ts;
	uint8_t state;		/* enum wb_trading_state */
	char raw_state;		/* the feed's code */
	char reason[4];		/* e.g. LUDP, MWC1 */
	uint8_t venue;		/* the participant, or the SIP (WB_VENUE_SIP_*) */
	uint8_t reserved;
};

/* Super-Book NBBO against SIP NBBO (160 bytes); see the comment above. */
struct wb_sip_compare {
	uint64_t compared;	/* changes of either view where both were covered */
	uint64_t uncovered;	/* SIP NBBO changes at a venue without a direct book */
	uint64_t episodes;	/* times the two started to differ */
	uint64_t disagree_ns;	/* receive-clock time they differed (ended episodes) */
	uint64_t max_ns;	/* the longest episode */
	uint64_t direct_ahead;	/* episodes the direct books began and the SIP ended (it was behind) */
	uint64_t direct_ahead_ns;
	uint64_t sip_ahead;	/* episodes the SIP began and the direct books ended */
	uint64_t sip_ahead_ns;
	uint64_t price_diff_sum; /* per episode its largest |direct - SIP| price on a side */
	int64_t max_price_diff;
	uint64_t open_recv_ts;	/* the episode under way: its start; 0 when they agree */
	uint64_t open_exch_ts;
	uint64_t direct_only;	/* episodes the direct books began and ended: a quote the SIP
				 * never showed (e.g. a short-lived locking order) */
	uint64_t direct_only_ns;
	uint64_t sip_only;	/* episodes the SIP began and ended: one the direct books never had */
	uint64_t sip_only_ns;
	/* summary.total only (0 in a symbol's cmp): CQS has no retransmission,
	 * so a CQS gap marks the SIP view of every symbol of its stream stale
	 * (WB_SIPF_STALE) until the symbol's next CQS quote */
	uint64_t sip_gaps;	/* CQS sequence gaps seen */
	uint64_t stale_marked;	/* symbols marked stale by them */
	uint64_t reserved[1];
};

/* Locked/crossed episodes of one view (64 bytes). */
struct wb_sip_lockcross {
	uint64_t episodes;
	uint64_t crossed;	/* of them, crossed at some moment (else locked only) */
	uint64_t total_ns;	/* receive-clock time locked or crossed (ended episodes) */
	uint64_t max_ns;
	uint64_t open_recv_ts;	/* the episode under way: its start; 0: none */
	uint64_t open_exch_ts;
	uint32_t bid_venues;	/* the episode under way: venues bidding at or above the NBO */
	uint32_t ask_venues;	/* venues offering at or below the NBB */
	uint64_t reserved;
};

/* What wb_sip_view() returns: a symbol's SIP record without its seqlock. */
struct wb_sip_view {
	uint64_t updates;	/* SIP events applied for the symbol */
	uint64_t recv_ts;	/* receive time of the newest */
	uint32_t quotes_present; /* bit v: participant v has quoted through a SIP */
	uint32_t flags;		/* WB_SIPF_* */
	struct wb_sip_status status;	/* the symbol's last SIP-reported status */
	struct wb_sip_nbbo nbbo;
	struct wb_sip_luld luld;
	struct wb_sip_compare cmp;
	struct wb_sip_lockcross lc[2];	/* [WB_VIEW_DIRECT], [WB_VIEW_SIP] */
	struct wb_sip_quote quote[WB_BOOK_VENUES];	/* indexed by enum wb_venue */
};

/*
 * Delays as a histogram: values below 32 ns have a bucket each; above,
 * each power of two has 32 buckets (a bucket is at most 1/32 wide, so a
 * quantile read at a bucket's middle is within 1.6 %), up to 2^41 ns.
 */
#define WB_DELAY_SUB 32u
#define WB_DELAY_BUCKETS (WB_DELAY_SUB * 37u)

static inline unsigned wb_delay_bucket(uint64_t ns)
{
	unsigned e;

	if (ns < WB_DELAY_SUB)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);	/* >= 5 */
	if (e > 40u)
		return WB_DELAY_BUCKETS - 1u;
	return (e - 4u) * WB_DELAY_SUB + (unsigned)((ns >> (e - 5u)) & (WB_DELAY_SUB - 1u));
}

/* The lowest value of bucket b, and its width. */
static inline uint64_t wb_delay_bucket_low(unsigned b)
{
	if (b < WB_DELAY_SUB)
		return b;
	return (uint64_t)(WB_DELAY_SUB + b % WB_DELAY_SUB) << (b / WB_DELAY_SUB - 1u);
}

static inline uint64_t wb_delay_bucket_width(unsigned b)
{
	return b < WB_DELAY_SUB ? 1u : 1ull << (b / WB_DELAY_SUB - 1u);
}

struct wb_sip_delay {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t hist[WB_DELAY_BUCKETS];
};

/* A venue's direct BBO against its quote through the SIP, all symbols. */
struct wb_sip_venue_stats {
	uint64_t sip_quotes;	/* the venue's SIP quotes */
	uint64_t compared;	/* of them, of symbols the venue's direct feed has */
	uint64_t matched;	/* matched a direct BBO (same prices and sizes) */
	uint64_t size_differs;	/* matched on prices only */
	uint64_t unmatched;	/* matched no remembered direct BBO */
	uint64_t sip_first;	/* matched a BBO the direct feed delivered later */
	uint64_t never_shown;	/* direct BBOs the SIP skipped (a later one was shown) */
	uint64_t direct_changes; /* direct BBO changes remembered */
	struct wb_sip_delay delay;	 /* SIP receive - direct receive, matched quotes */
	struct wb_sip_delay sip_latency; /* the SIP's sip_ts - the participant's exch_ts */
};

/* wb_sip_episode.kind */
#define WB_EPI_DIRECT_LOCK 1	/* the Super-Book's NBBO locked or crossed */
#define WB_EPI_SIP_LOCK 2	/* the SIP's NBBO locked or crossed */
#define WB_EPI_DISAGREE 3	/* the Super-Book's NBBO differed from the SIP's */
/* wb_sip_episode.flags */
#define WB_EPF_CROSSED 0x01	/* lock episode: crossed at some moment */
#define WB_EPF_DIRECT_AHEAD 0x02 /* disagreement begun by the direct books, ended by the SIP */
#define WB_EPF_SIP_AHEAD 0x04	/* begun by the SIP, ended by the direct books */
#define WB_EPF_DIRECT_ONLY 0x08	/* begun and ended by the direct books (the SIP never showed it) */
#define WB_EPF_SIP_ONLY 0x10	/* begun and ended by the SIP */

/* One ended episode (80 bytes), with every timestamp it had. */
struct wb_sip_episode {
	uint64_t seq;		/* the entry's seqlock: odd while written */
	uint64_t start_recv_ts;
	uint64_t start_exch_ts;
	uint64_t end_recv_ts;
	uint64_t end_exch_ts;
	int64_t bid_price;	/* lock: NBB and NBO at the start; disagreement: */
	int64_t ask_price;	/* the direct NBB and NBO at the start */
	int64_t price_diff;	/* disagreement: largest |direct - SIP| on a side */
	uint32_t bid_venues;	/* lock: venues at or above the NBO at the start */
	uint32_t ask_venues;
	uint16_t instrument;
	uint8_t kind;		/* WB_EPI_* */
	uint8_t flags;		/* WB_EPF_* */
	uint32_t reserved;
};

struct wb_sip_summary {
	uint64_t sip_events;	/* SIP events applied, all symbols */
	uint64_t symbols;	/* symbols with a SIP record */
	uint64_t dropped;	/* updates the SIP view lost: it fell behind the Super-Book
				 * (its figures then miss some changes) */
	uint64_t lock_written;	/* lock/cross episodes ever ended: entry n is at n % WB_SIP_EPISODES */
	uint64_t disagree_written;
	struct wb_sip_compare total;		/* every symbol's (no open episode) */
	struct wb_sip_lockcross lc[2];		/* every symbol's, per view */
	struct wb_sip_status mwcb;		/* market-wide status: MWCB level, halts */
};

WB_STATIC_ASSERT(sizeof(struct wb_sip_quote) == 64, "wb_sip_quote layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_nbbo) == 48, "wb_sip_nbbo layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_compare) == 160, "wb_sip_compare layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_lockcross) == 64, "wb_sip_lockcross layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_episode) == 80, "wb_sip_episode layout");
WB_STATIC_ASSERT((WB_SIP_EPISODES & (WB_SIP_EPISODES - 1)) == 0, "episode rings are powers of two");

/* The symbol's SIP view: quotes, NBBO, LULD, status, comparison. WB_ENOSYM
 * when the book has no SIP view (a builder before ABI 4 has none at all). */
int wb_sip_view(const struct wb_book *book, int sym, struct wb_sip_view *out);
/* One participant's quote through the SIP (venue: enum wb_venue). */
int wb_sip_quote(const struct wb_book *book, int sym, int venue, struct wb_sip_quote *out);
/* The SIP's NBBO of the symbol, its flags (WB_SIPF_*) into *flags if not NULL. */
int wb_sip_nbbo(const struct wb_book *book, int sym, struct wb_sip_nbbo *out, uint32_t *flags);
/* The book-wide totals and the market-wide status. */
int wb_sip_summary(const struct wb_book *book, struct wb_sip_summary *out);
/* A venue's direct-vs-SIP statistics, histograms included (~19 KiB). */
int wb_sip_venue_stats(const struct wb_book *book, int venue, struct wb_sip_venue_stats *out);
/* Ended episode number n (0-based, < summary.lock_written or
 * disagree_written) of kind WB_EPI_DIRECT_LOCK / WB_EPI_SIP_LOCK (one ring)
 * or WB_EPI_DISAGREE; WB_ENOSYM once the ring has overwritten it. */
int wb_sip_episode(const struct wb_book *book, int kind, uint64_t n, struct wb_sip_episode *out);
/* The delay at quantile q (parts per million: 500000 the median), the
 * middle of its bucket (the exact max_ns for 1000000); 0 when empty. */
uint64_t wb_delay_quantile(const struct wb_sip_delay *d, uint32_t q_ppm);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_SIP_H */
