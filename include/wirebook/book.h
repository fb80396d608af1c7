/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The published books: the shared-memory layout the builder (wirebookd,
 * thread 2) writes and the reader API strategies link (libwirebook).
 *
 * One POSIX shared-memory object (/dev/shm/wirebook by default) holds:
 *
 *   0                       struct wb_shm_header (one page)
 *   header.dir_offset       symbol directory: capacity x uint64_t ticker key
 *   header.records_offset   capacity x struct wb_shm_symbol, indexed by
 *                           instrument id (index 0 is never used)
 *   header.sip_offset       capacity x struct wb_shm_sip: the SIP view of
 *                           each symbol, indexed alike (ABI 4)
 *   header.sipstats_offset  struct wb_shm_sipstats: the SIP-vs-direct
 *                           statistics of the whole book (ABI 4)
 *   header.recovery_offset  struct wb_shm_recovery, then capacity x
 *                           WB_BOOK_VENUES bytes: gap recovery per stream
 *                           and each symbol's stream (libwirebook 1.3;
 *                           0 from an older builder)
 *
 * Consistency: every symbol record starts with a sequence number (a
 * seqlock). The single writer makes it odd, writes, and makes it even
 * again; a reader copies what it needs and retries when the sequence was
 * odd or moved. Readers map the object read-only, so they can neither
 * block nor corrupt the builder, and a torn read is never returned.
 *
 * Restarts: each builder run stamps header.instance_id. A builder that
 * starts (or exits cleanly) retires the previous object: its state becomes
 * WB_SHM_RETIRED and every record's sequence becomes WB_SEQ_RETIRED. A
 * reader's next call notices and reattaches by itself to the new run
 * (at most one attempt per WB_REATTACH_INTERVAL_NS while none is there);
 * the symbol indices it holds keep naming the same tickers. Until the new
 * run has a symbol, reads of it return WB_ESTALE; retry later.
 *
 * Liveness: the builder stores CLOCK_REALTIME in header.heartbeat_ns every
 * header.heartbeat_period_ns (wirebookd: 20 ms), whether or not the feed
 * moves. wb_health() turns it into a state: live, stale (no heartbeat for
 * wb_stale_after_ns(): the builder died or hangs), retired (stopped, no
 * successor yet) or recovering (a venue's book is being rebuilt by gap
 * recovery: header.recovering_venues).
 *
 * Prices are int64 in units of 1e-8 dollars (WB_PRICE_SCALE, event.h).
 */
#ifndef WIREBOOK_BOOK_H
#define WIREBOOK_BOOK_H

#include <stdint.h>
#include <stddef.h>
#include <errno.h>
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the layout below or to the meaning of a field. */
#define WB_BOOK_ABI_VERSION 4u	/* 3: heartbeat period, recovering venues;
				 * 4: the SIP view and the SIP-vs-direct statistics */
#define WB_SHM_MAGIC 0x4b4f4f4252495757ull /* "WWIRBOOK" little-endian */
#define WB_SHM_DEFAULT_NAME "wirebook"

#define WB_BOOK_DEPTH 10	/* levels per side, consolidated and per venue */
#define WB_BOOK_VENUES 24	/* venue slots, indexed by enum wb_venue */
#define WB_CONSOLIDATED 0	/* "venue" argument meaning the consolidated book */
#define WB_ANY_SYMBOL 0		/* wb_update_counter(): the whole book's counter */

/* A book is stale when its heartbeat is older than the larger of these. */
#define WB_STALE_MIN_NS 1000000000ull		/* 1 s */
#define WB_STALE_PERIODS 10u			/* x header.heartbeat_period_ns */
/* A retired book is looked for again at most this often per handle. */
#define WB_REATTACH_INTERVAL_NS 10000000ull	/* 10 ms */

WB_STATIC_ASSERT(WB_VENUE_COUNT <= WB_BOOK_VENUES && WB_BOOK_VENUES <= 32,
		 "a new venue needs WB_BOOK_VENUES and WB_BOOK_ABI_VERSION bumped; "
		 "venue sets are 32-bit masks");

/*
 * Errors, one convention: every call returns 0 (or a count, an index) on
 * success and a negative WB_E* code on failure. The codes are negated
 * errno values, as in liburing and the kernel, so they never clash with
 * the -errno the rest of wirebook returns, and wb_strerror() describes
 * any -errno too. Compare with the names, not the numbers.
 */
enum wb_error {
	WB_OK = 0,
	WB_ENOSHM = -ENOENT,	/* no book of that name (yet): is wirebookd running? */
	WB_EACCES = -EACCES,	/* permission denied opening the book */
	WB_EBADMAGIC = -EBADMSG, /* the object is not a wirebook book (or truncated) */
	WB_EABI = -EPROTO,	/* built against another WB_BOOK_ABI_VERSION */
	WB_ESTALE = -ESTALE,	/* the builder exited, or restarted and has not got this symbol
				 * (yet): retry later (calls reattach by themselves) */
	WB_ENOSYM = -ENODATA,	/* symbol not in the book */
	WB_EINVAL = -EINVAL,	/* bad argument (NULL, index or venue out of range) */
	WB_EBUSY = -EAGAIN,	/* the record stayed mid-update too long; retry */
	WB_ESYS = -EIO,		/* other OS error (shm_open, fstat, mmap); errno tells which */
	WB_ENODEV = -ENODEV,	/* events.h: no wirebook device (is the module loaded?) */
};

/* header.state */
enum wb_shm_state {
	WB_SHM_CREATING = 0,	/* being laid out; wb_open says WB_ENOSHM until it is ready */
	WB_SHM_LIVE = 1,	/* the builder is running and its source still produces */
	WB_SHM_SOURCE_DONE = 2,	/* the source ended (file replay done); books final */
	WB_SHM_RETIRED = 3,	/* the builder exited or was replaced: WB_ESTALE */
};

#define WB_SEQ_RETIRED UINT64_MAX /* odd, so old readers never accept it as data */

/* Symbol flags (struct wb_top.flags, wb_nbbo.flags, wb_depth.flags) */
#define WB_SYMF_LOCKED	0x0001	/* best bid == best ask across venues */
#define WB_SYMF_CROSSED	0x0002	/* best bid > best ask across venues */
#define WB_SYMF_GAP	0x0004	/* some venue of the symbol lost messages (see venue flags) */
#define WB_SYMF_HALTED	0x0008	/* trading state is halted or paused */

/* Venue flags (struct wb_venue_bbo.flags) */
#define WB_VENF_PRESENT	0x01	/* the venue has sent anything for the symbol */
#define WB_VENF_GAP	0x02	/* sequence gap since the last clear: book may be wrong */
#define WB_VENF_CROSSED	0x04	/* the venue's own book is crossed or locked */

/* ---- shared-memory layout (ABI) --------------------------------------- */

struct wb_level {
	int64_t price;
	uint64_t qty;		/* displayed shares at the price */
	uint32_t orders;	/* orders resting at the price */
	uint32_t venues;	/* consolidated: bit v set when venue v has size there */
};

struct wb_trade {
	int64_t price;
	uint64_t qty;
	uint64_t exch_ts;	/* exchange time, ns (see event.h) */
	uint64_t match_id;
	uint64_t volume;	/* printable shares traded today, all venues */
	uint32_t count;		/* trades seen */
	uint8_t venue;		/* enum wb_venue */
	uint8_t flags;		/* WB_EVF_PRINTABLE, WB_EVF_CROSS */
	uint8_t reserved[2];
};

struct wb_shm_venue {
	uint8_t flags;		/* WB_VENF_* */
	uint8_t state;		/* enum wb_trading_state as the venue last said */
	uint8_t bid_count;	/* levels filled in bid[] */
	uint8_t ask_count;
	uint32_t gaps;		/* gaps seen on this venue for the symbol */
	uint64_t exch_ts;	/* exchange time of the last change */
	struct wb_level bid[WB_BOOK_DEPTH];	/* best first */
	struct wb_level ask[WB_BOOK_DEPTH];
};

/* The first cache line is all wb_top() reads. */
struct wb_shm_symbol {
	/* line 0 */
	uint64_t seq;		/* seqlock: odd while the builder writes */
	uint64_t updates;	/* changes applied to this symbol (not publishes: the
				 * same on every run of the same input) */
	int64_t bid_price;	/* best consolidated bid, 0 when none */
	uint64_t bid_qty;	/* shares at the best bid, all venues; 0 = no bid */
	int64_t ask_price;
	uint64_t ask_qty;
	uint32_t bid_venues;	/* venues at the best bid */
	uint32_t ask_venues;
	uint16_t flags;		/* WB_SYMF_* */
	uint8_t state;		/* enum wb_trading_state */
	uint8_t bid_count;	/* consolidated levels filled */
	uint8_t ask_count;
	uint8_t reserved0[3];
	/* line 1 */
	uint64_t ticker;	/* 8-byte space-padded ticker, little-endian load */
	uint64_t exch_ts;	/* exchange time of the last change */
	uint64_t recv_ts;	/* receive time of the packet behind the last change */
	char raw_state;		/* the feed's own status code */
	char reason[4];
	uint8_t state_venue;	/* venue that sent the status */
	uint8_t reserved1a[2];
	uint32_t venues_present; /* bit v: venue v has sent anything */
	uint8_t reserved1[28];
	struct wb_trade last_trade;	/* 48 bytes */
	uint8_t reserved2[16];
	/* consolidated depth, best first, with the per-venue breakdown:
	 * bid_venue_qty[v][i] is venue v's shares at bid[i] (venue-major, so
	 * a symbol quoted on one venue publishes two cache lines, not 13) */
	struct wb_level bid[WB_BOOK_DEPTH];
	struct wb_level ask[WB_BOOK_DEPTH];
	uint64_t bid_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
	uint64_t ask_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
	struct wb_shm_venue venue[WB_BOOK_VENUES];
} __attribute__((aligned(64)));

struct wb_shm_header {
	uint64_t magic;		/* WB_SHM_MAGIC, stored last when created */
	uint32_t abi_version;	/* WB_BOOK_ABI_VERSION */
	uint32_t header_size;	/* sizeof(struct wb_shm_header) */
	uint32_t record_size;	/* sizeof(struct wb_shm_symbol) */
	uint32_t capacity;	/* records, instrument ids 1..capacity-1 */
	uint32_t depth;		/* WB_BOOK_DEPTH */
	uint32_t venue_slots;	/* WB_BOOK_VENUES */
	uint64_t total_size;	/* bytes of the object */
	uint64_t dir_offset;
	uint64_t records_offset;
	uint64_t instance_id;	/* unique per builder run */
	uint64_t created_ns;	/* CLOCK_REALTIME at creation */
	uint32_t builder_pid;
	uint32_t state;		/* enum wb_shm_state (release store) */
	/* line 2: changes while running */
	uint64_t updates __attribute__((aligned(64))); /* changes, all symbols */
	uint64_t symbols;	/* directory entries in use (highest id + 1) */
	uint64_t heartbeat_ns;	/* last time the builder published or idled */
	uint64_t venue_gaps[WB_BOOK_VENUES]; /* gaps seen per venue */
	/* receive time of the newest data from each venue (any symbol), set
	 * at publish: a venue silent while others move is stale */
	uint64_t venue_recv_ns[WB_BOOK_VENUES];
	/* ABI 3 */
	uint64_t heartbeat_period_ns; /* how often heartbeat_ns moves; 0: irregularly */
	/* bit v: venue v's book is being rebuilt by gap recovery (snapshot,
	 * retransmission); its levels may be incomplete until the bit clears.
	 * Written by the builder only (wirebookd --recovery); which symbols
	 * exactly: the recovery table (wb_symbol_recovering). */
	uint32_t recovering_venues;
	uint32_t reserved3;
	/* ABI 4: the SIP view (see "The SIP view" below) */
	uint64_t sip_offset;		/* capacity x struct wb_shm_sip */
	uint32_t sip_record_size;	/* sizeof(struct wb_shm_sip) */
	uint32_t sipstats_size;		/* sizeof(struct wb_shm_sipstats) */
	uint64_t sipstats_offset;	/* one struct wb_shm_sipstats */
	/* libwirebook 1.3, same ABI 4: the gap-recovery table (struct
	 * wb_shm_recovery, then capacity x WB_BOOK_VENUES bytes of symbol
	 * streams); both 0 from a builder that predates it, whose pad was 0 */
	uint64_t recovery_offset;
	uint64_t recovery_size;
	uint8_t pad[4096 - 128 - 24 - 16 * WB_BOOK_VENUES - 16 - 24 - 16];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_level) == 24, "wb_level layout");
WB_STATIC_ASSERT(sizeof(struct wb_trade) == 48, "wb_trade layout");
WB_STATIC_ASSERT(sizeof(struct wb_shm_header) == 4096, "header is one page");
WB_STATIC_ASSERT(offsetof(struct wb_shm_symbol, ticker) == 64, "wb_top reads line 0 only");
WB_STATIC_ASSERT(offsetof(struct wb_shm_symbol, bid) == 192, "symbol layout");
WB_STATIC_ASSERT(sizeof(struct wb_shm_symbol) % 64 == 0, "records are cache-line aligned");

/* ---- the SIP view (ABI 4) --------------------------------------------- */
/*
 * Beside each symbol's Super-Book (built from the direct feeds) the builder
 * keeps the SIP's view of the same symbol, from CQS and UQDF: every
 * participant's quote as the SIP published it, the SIP's own NBBO, the LULD
 * band and the SIP-reported trading status; and the comparison of the two
 * views. Each symbol's SIP record has its own seqlock (the same protocol as
 * wb_shm_symbol's), so a SIP event never holds up a Super-Book read.
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

struct wb_shm_sip {
	uint64_t seq;		/* seqlock, as wb_shm_symbol.seq */
	struct wb_sip_view v;
} __attribute__((aligned(64)));

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

/* The book-wide statistics. Counters are single 64-bit values the builder
 * stores one at a time: read them without locks (a set of them may be a
 * few updates apart); episodes have a seqlock each. */
struct wb_shm_sipstats {
	struct wb_sip_summary summary;
	struct wb_sip_venue_stats venue[WB_BOOK_VENUES];
	struct wb_sip_episode lock[WB_SIP_EPISODES];
	struct wb_sip_episode disagree[WB_SIP_EPISODES];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_sip_quote) == 64, "wb_sip_quote layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_nbbo) == 48, "wb_sip_nbbo layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_compare) == 160, "wb_sip_compare layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_lockcross) == 64, "wb_sip_lockcross layout");
WB_STATIC_ASSERT(sizeof(struct wb_sip_episode) == 80, "wb_sip_episode layout");
WB_STATIC_ASSERT(sizeof(struct wb_shm_sip) % 64 == 0, "SIP records are cache-line aligned");
WB_STATIC_ASSERT((WB_SIP_EPISODES & (WB_SIP_EPISODES - 1)) == 0, "episode rings are powers of two");

/* ---- gap recovery (libwirebook 1.3) ----------------------------------- */
/*
 * wirebookd publishes, per sequence stream in recovery mode (a feed map's
 * venue and channel; a PITCH unit is a stream of its own), the counts of
 * its gap recovery and whether it is recovering now: while it is, the
 * stream's later messages are held back, so the books of its symbols are
 * behind (a gap fill) or being rebuilt (a snapshot), never current.
 *
 * The table has one seqlock (seq, as wb_shm_symbol's) and is rewritten by
 * the thread that runs the feed engine when a recovery begins or ends, and
 * every 50 ms while counts move. Beside it, symbol_stream[sym][venue] is
 * the stream (index + 1 into stream[]; 0: not known, e.g. the symbol has
 * had no message of the venue since the stream began recovering) of the
 * symbol's messages on the venue: one byte, stored whole.
 */
#define WB_RECOVERY_STREAMS 128	/* streams published; more are counted in omitted */

/* struct wb_recovery_stream.state */
enum wb_recovery_state {
	WB_REC_IN_SEQUENCE = 0,	/* nothing missing */
	WB_REC_GAP = 1,		/* a hole is being filled: the books are behind */
	WB_REC_SNAPSHOT = 2,	/* a snapshot is being applied: the books are being rebuilt */
};

/* One stream's recovery (128 bytes). Counts are since the builder started. */
struct wb_recovery_stream {
	uint8_t venue;		/* enum wb_venue */
	uint8_t unit;		/* PITCH matching unit, 0 for other protocols */
	uint16_t channel;	/* the feed map's channel, 0 when it gives none */
	uint8_t state;		/* enum wb_recovery_state */
	uint8_t reserved0[3];
	uint64_t since_ns;	/* receive time the current recovery began; 0 in sequence */
	uint64_t gaps;		/* recoveries begun: holes to fill, late joins */
	uint64_t filled;	/* recoveries that got every message */
	uint64_t unrecoverable;	/* recoveries that ended with messages lost */
	uint64_t messages;	/* messages recovered */
	uint64_t lost;		/* messages given up (refused, too old, buffer full) */
	uint64_t snapshots;	/* snapshots applied */
	/* fill times (receive clock, gap announced to in sequence) of the
	 * stream's group (venue, channel), shared by a PITCH channel's units;
	 * within 19 % (4 buckets per power of two), max exact */
	uint64_t fills;
	uint64_t fill_p50_ns;
	uint64_t fill_p99_ns;
	uint64_t fill_max_ns;
	uint64_t reserved[4];
};

struct wb_shm_recovery {
	uint64_t seq;		/* seqlock over everything up to symbol_stream */
	uint32_t count;		/* entries of stream[] in use */
	uint32_t omitted;	/* streams beyond WB_RECOVERY_STREAMS, not published */
	uint64_t updated_ns;	/* CLOCK_REALTIME of the last rewrite */
	uint8_t reserved[40];
	struct wb_recovery_stream stream[WB_RECOVERY_STREAMS];
	/* then, at sizeof(struct wb_shm_recovery), the symbol streams:
	 * uint8_t symbol_stream[capacity][WB_BOOK_VENUES] */
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_recovery_stream) == 128, "wb_recovery_stream layout");
WB_STATIC_ASSERT(WB_RECOVERY_STREAMS < 256, "symbol_stream holds an index + 1 in a byte");

/* ---- reader API (libwirebook) ----------------------------------------- */

struct wb_book;			/* an attached book, opaque */

struct wb_top {
	int64_t bid_price;	/* 0 (and bid_qty 0) when there is no bid */
	uint64_t bid_qty;
	int64_t ask_price;
	uint64_t ask_qty;
	uint64_t updates;	/* the symbol's update counter at this snapshot */
	uint16_t flags;		/* WB_SYMF_* */
	uint8_t state;		/* enum wb_trading_state */
};

struct wb_nbbo {
	int64_t bid_price;
	uint64_t bid_qty;	/* all venues at the best bid */
	int64_t ask_price;
	uint64_t ask_qty;
	uint32_t bid_venues;	/* bit v: venue v at the best bid */
	uint32_t ask_venues;
	uint16_t flags;		/* WB_SYMF_LOCKED / CROSSED name the venues above */
	uint8_t state;
	uint64_t updates;
	uint64_t exch_ts;
	uint64_t recv_ts;
};

struct wb_venue_bbo {
	int64_t bid_price;
	uint64_t bid_qty;
	uint32_t bid_orders;
	int64_t ask_price;
	uint64_t ask_qty;
	uint32_t ask_orders;
	uint8_t flags;		/* WB_VENF_* */
	uint8_t state;
	uint32_t gaps;
	uint64_t exch_ts;
};

struct wb_status {
	uint8_t state;		/* enum wb_trading_state */
	char raw_state;
	char reason[4];
	uint8_t venue;		/* venue that set it */
	uint16_t flags;		/* WB_SYMF_* */
};

struct wb_venue_status {
	uint64_t gaps;		/* sequence gaps seen on the venue's feed */
	uint64_t last_recv_ns;	/* receive time (CLOCK_REALTIME) of its newest data; 0: none */
	uint32_t recovering;	/* 1 while gap recovery rebuilds the venue's book */
};

/* wb_health() states, most urgent last. */
enum wb_book_health {
	WB_BOOK_LIVE = 0,	/* the builder beats: data is current (or the feed is quiet) */
	WB_BOOK_STALE = 1,	/* no heartbeat for wb_stale_after_ns(): builder dead or hung;
				 * the data is as it was left, do not trade on it */
	WB_BOOK_RETIRED = 2,	/* the builder stopped and no successor is up yet: the
				 * data is final; calls reattach when one comes */
	WB_BOOK_RECOVERING = 3,	/* live, but some venue's book is being rebuilt after a
				 * gap (recovering_venues): its levels may be incomplete */
};

struct wb_health {
	int state;			/* enum wb_book_health (also the return value) */
	uint32_t shm_state;		/* enum wb_shm_state (SOURCE_DONE: replay over) */
	uint64_t age_ns;		/* now - heartbeat_ns (CLOCK_REALTIME); 0 if ahead */
	uint64_t heartbeat_ns;		/* the builder's last heartbeat */
	uint64_t stale_after_ns;	/* the age past which the book is stale */
	uint64_t last_update_age_ns;	/* now - the newest venue data's receive time; 0: none */
	uint32_t writer_pid;		/* the builder's pid (in its pid namespace) */
	int writer_alive;		/* kill(pid, 0): 1 yes, 0 no, -1 cannot tell */
	uint32_t recovering_venues;	/* bit v: venue v recovering */
	uint32_t reattaches;		/* restarts this handle followed */
	uint64_t instance_id;		/* the builder run now attached */
};

struct wb_depth {
	uint8_t venue;		/* WB_CONSOLIDATED or the venue asked for */
	uint8_t bid_count;	/* levels filled, <= the n asked for */
	uint8_t ask_count;
	uint16_t flags;		/* consolidated: WB_SYMF_*; venue: WB_VENF_* */
	uint64_t updates;
	struct wb_level bid[WB_BOOK_DEPTH];	/* best first */
	struct wb_level ask[WB_BOOK_DEPTH];
	/* consolidated only: bid_venue_qty[v][i] = shares of venue v at bid[i]
	 * (zero beyond bid_count, and everywhere for a single venue's depth) */
	uint64_t bid_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
	uint64_t ask_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
};

/*
 * Attach read-only to the book NAME (NULL: "wirebook"); *err says why not.
 * A handle belongs to one thread at a time: any call may reattach it
 * after a restart. Open one handle per reading thread (they share pages).
 */
struct wb_book *wb_open(const char *name, int *err);
void wb_close(struct wb_book *book);
/* Attach now to the current book of that name, keeping symbol indices;
 * on failure the handle stays on what it had. 0 or a wb_error. */
int wb_reopen(struct wb_book *book);
/* 0 while attached to a live builder's book (following a restart, or a
 * crashed builder replaced by a new one, when one happened: one stat
 * call); WB_ESTALE while the builder is gone and no successor is up. */
int wb_check(struct wb_book *book);
/* The book's liveness (see the comment at the top); fills *out when not
 * NULL. Returns enum wb_book_health, or a negative wb_error. Follows a
 * restart like wb_check. */
int wb_health(struct wb_book *book, struct wb_health *out);
const char *wb_health_name(int state);
/* The heartbeat age past which wb_health() says stale. */
uint64_t wb_stale_after_ns(const struct wb_book *book);
/* enum wb_shm_state of the attached book. */
int wb_state(const struct wb_book *book);

/* Symbol index (> 0) of TICKER ("AAPL"), or WB_ENOSYM / WB_EINVAL. The
 * index stays valid across builder restarts. */
int wb_find(const struct wb_book *book, const char *ticker);
/* The ticker of index SYM into out[9]; 0 or a wb_error. */
int wb_symbol(const struct wb_book *book, int sym, char out[9]);
/* Highest symbol index + 1 (iterate 1..wb_symbol_count()-1). */
int wb_symbol_count(const struct wb_book *book);

int wb_top(const struct wb_book *book, int sym, struct wb_top *out);
int wb_nbbo(const struct wb_book *book, int sym, struct wb_nbbo *out);
/* Up to n (<= WB_BOOK_DEPTH) levels per side of venue (WB_CONSOLIDATED: all). */
int wb_depth(const struct wb_book *book, int sym, int venue, unsigned n, struct wb_depth *out);
int wb_venue_bbo(const struct wb_book *book, int sym, int venue, struct wb_venue_bbo *out);
int wb_last_trade(const struct wb_book *book, int sym, struct wb_trade *out);
/* A venue's feed as a whole: gaps and the age of its newest data (staleness). */
int wb_venue_status(const struct wb_book *book, int venue, struct wb_venue_status *out);
int wb_status(const struct wb_book *book, int sym, struct wb_status *out);
/* The symbol's update counter (WB_ANY_SYMBOL: the whole book's) into *out;
 * poll it: a change means something was published. */
int wb_update_counter(const struct wb_book *book, int sym, uint64_t *out);

/* ---- the SIP view and the SIP-vs-direct statistics (see above) ---- */

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

/* ---- gap recovery (libwirebook 1.3, see above) ---- */

/*
 * The streams in recovery mode, up to max of them into out (out may be
 * NULL with max 0); returns how many there are (call again with more room
 * when larger than max), or a wb_error. 0 streams: the builder has no gap
 * recovery configured (or predates the table).
 */
int wb_recovery_streams(const struct wb_book *book, struct wb_recovery_stream *out, unsigned max);
/*
 * Whether the symbol's book on venue (WB_CONSOLIDATED: on any venue) is
 * being recovered: 1 yes, 0 no, or a wb_error. Exact per stream: of a
 * venue with several streams (PITCH units, channels) only the symbol's own
 * counts. Where the feed has not named the symbol's stream on a venue (no
 * message of it there yet, as in a late join's snapshot, or a builder
 * without the table), the venue's recovering bit (wb_venue_status)
 * answers instead: recovering rather than live when not known; so
 * WB_CONSOLIDATED counts every recovering venue whose stream of the
 * symbol is not known. *since_ns (if not NULL) gets the receive time the
 * recovery began, 0 when not recovering or not known.
 */
int wb_symbol_recovering(const struct wb_book *book, int sym, int venue, uint64_t *since_ns);

const char *wb_strerror(int err);
const char *wb_venue_name(int venue);
const char *wb_state_name(int state);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_BOOK_H */
