/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The published books: the reader API strategies link (libwirebook) over
 * the shared memory the builder (wirebookd, thread 2) writes. Its layout
 * is private to the two (lib/shm/shm_layout.h); this header, with the SIP
 * view (sip.h), gap recovery (recovery.h) and the errors (errors.h) it
 * includes, is the whole contract.
 *
 * Consistency: every symbol record starts with a sequence number (a
 * seqlock). The single writer makes it odd, writes, and makes it even
 * again; a reader copies what it needs and retries when the sequence was
 * odd or moved. Readers map the object read-only, so they can neither
 * block nor corrupt the builder, and a torn read is never returned.
 *
 * Restarts: each builder run stamps header.instance_id. A builder that
 * starts (or exits cleanly) retires the previous object: its state becomes
 * WB_SHM_RETIRED and every record is marked retired. A
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
#include "event.h"
#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the layout or to the meaning of a field. */
#define WB_BOOK_ABI_VERSION 4u	/* 3: heartbeat period, recovering venues;
				 * 4: the SIP view and the SIP-vs-direct statistics */
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

/* header.state */
enum wb_shm_state {
	WB_SHM_CREATING = 0,	/* being laid out; wb_open says WB_ENOSHM until it is ready */
	WB_SHM_LIVE = 1,	/* the builder is running and its source still produces */
	WB_SHM_SOURCE_DONE = 2,	/* the source ended (file replay done); books final */
	WB_SHM_RETIRED = 3,	/* the builder exited or was replaced: WB_ESTALE */
};

/* Symbol flags (struct wb_top.flags, wb_nbbo.flags, wb_depth.flags) */
#define WB_SYMF_LOCKED	0x0001	/* best bid == best ask across venues */
#define WB_SYMF_CROSSED	0x0002	/* best bid > best ask across venues */
#define WB_SYMF_GAP	0x0004	/* some venue of the symbol lost messages (see venue flags) */
#define WB_SYMF_HALTED	0x0008	/* trading state is halted or paused */

/* Venue flags (struct wb_venue_bbo.flags) */
#define WB_VENF_PRESENT	0x01	/* the venue has sent anything for the symbol */
#define WB_VENF_GAP	0x02	/* sequence gap since the last clear: book may be wrong */
#define WB_VENF_CROSSED	0x04	/* the venue's own book is crossed or locked */

/* ---- levels and trades ------------------------------------------------ */

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

WB_STATIC_ASSERT(sizeof(struct wb_level) == 24, "wb_level layout");
WB_STATIC_ASSERT(sizeof(struct wb_trade) == 48, "wb_trade layout");

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

const char *wb_venue_name(int venue);
const char *wb_state_name(int state);

#ifdef __cplusplus
}
#endif

/* The rest of the reader API: #include <wirebook/book.h> gives it all. */
#include "sip.h"
#include "recovery.h"
#include "nats.h"

#endif /* WIREBOOK_BOOK_H */
