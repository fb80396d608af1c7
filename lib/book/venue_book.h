/*
 * Venue books: builder thread 1's order-by-order books, one per
 * (instrument, venue), with price levels aggregated from the orders and a
 * FIFO per level (queue position). Applying a normalized event yields the
 * visible changes thread 2 folds into the Super-Book.
 *
 * One writer thread owns a struct venue_books; there are no locks. The
 * read functions (bbo, depth, queue position, counters) are for that same
 * thread, or for another one only while the writer is stopped.
 *
 * Memory: the order index, the level pool and the level arena are
 * allocated at create on cfg->numa_node (libnuma), pre-faulted, and sized
 * from cfg->expected_orders; nothing is allocated per order. When the live
 * orders outgrow that size a table doubles inside the apply that needs it
 * (a one-off stall, counted in *_grows): size expected_orders for the
 * day's peak.
 */
#ifndef WIREBOOK_VENUE_BOOK_H
#define WIREBOOK_VENUE_BOOK_H

#include <stdint.h>
#include "wirebook/event.h"
#include "book/update.h"	/* struct book_update, BOOK_UP_*, BOOK_MAX_UPDATES_PER_EVENT */

struct venue_books;		/* every venue book of every instrument; owned by one thread */

#define VENUE_BOOKS_DEFAULT_INSTRUMENTS 16384u
#define VENUE_BOOKS_DEFAULT_ORDERS (1u << 20)

struct venue_books_config {
	uint32_t max_instruments;	/* ids are < this; 0: default 16384 */
	uint32_t expected_orders;	/* sizing hint for live orders; 0: default 1Mi */
	int numa_node;			/* -1: no preference */
};

/* NULL + errno (EINVAL for a bad config, ENOMEM). */
struct venue_books *venue_books_create(const struct venue_books_config *cfg);
void venue_books_destroy(struct venue_books *vb);

/*
 * Apply one normalized event; write the visible changes to out (at most
 * BOOK_MAX_UPDATES_PER_EVENT) and return how many.
 *
 * Order events (EXECUTE, REDUCE, DELETE, REPLACE, MODIFY) take the side and
 * instrument of their updates from the order as it was added: feeds whose
 * executes and cancels carry only an order id need not fill them in.
 * Order of updates: an execute's LEVEL comes before its TRADE (whose qty
 * is the event's, even when it overfilled the order); a REPLACE or MODIFY
 * to a new price gives the old level, then the new one. A REPLACE whose
 * new id is already live removes the old order and adds nothing
 * (duplicate_order); a MODIFY to 0 shares removes the order. GAP updates
 * carry gap.count in qty and gap.first in u.seq. A SIP event (WB_EVF_SIP)
 * changes no book: it becomes one BOOK_UP_SIP_* update (update.h).
 */
unsigned venue_books_apply(struct venue_books *vb, const struct wb_event *ev,
			   struct book_update *out);

/*
 * Optional, and never changing the books: warm the cache lines
 * venue_books_apply(ev) will need, so the DRAM misses of consecutive
 * events overlap instead of queueing one after the other. An event's data
 * is a chain of 2-4 dependent misses (index bucket -> price level -> level
 * FIFO or book side); a hint can only start the hop whose address is
 * known, so the hops are stages, each reading what the previous one
 * warmed:
 *   0: the order's index bucket (the order itself, or for an ADD the
 *      bucket the new id goes to); for an ADD its price's bucket in the
 *      price index and its book side; for a REPLACE also the new id's
 *      bucket;
 *   1: the order's price level; for an ADD the level at its price, or
 *      the top of its book side when the price is new;
 *   2: what the level leads to: its spilled FIFO, the price bucket a
 *      REPLACE or MODIFY moves the order to, and the price bucket and
 *      the side's top of a level about to lose its last order.
 *
 * The simple way: call venue_books_prefetch() once per event, in order,
 * on the event D (4-8) ahead of the one being applied, from the thread
 * that applies. It runs stage 0 on that event and stage 1 on the one it
 * was given two calls earlier (from a copy of it: that event's ring slot
 * may be gone by then). It keeps that small history, not book state,
 * hence the const.
 *
 * Or run the stages yourself, stage s on the event (N - s) * D ahead
 * (stage s works out again what the stages before it found, from lines
 * they warmed):
 *
 *     for (i = 0; i < n; i++) {
 *         for (s = 0; s < N; s++)
 *             if (i + (N - s) * D < n)
 *                 venue_books_prefetch_stage(vb, &ev[i + (N - s) * D], s);
 *         venue_books_apply(vb, &ev[i], out);
 *     }
 *
 * venue_books_apply_batch() below runs every stage for you, and works
 * out each event's hashes once for all of them and the apply.
 *
 * What the stages gain, measured: docs/benchmarks.md. Stages past the
 * first read memory an earlier stage should have warmed: run alone they
 * are correct but stall where apply would have.
 */
#define VENUE_BOOKS_PREFETCH_STAGES 3u

/*
 * The way to apply a run of events: venue_books_apply() on each of the n
 * events slots[(first + i) & mask], in order, with every prefetch stage
 * run at its own distance ahead, handing each event and its updates (k of
 * them, maybe 0) to emit before the next event is applied. The events up
 * to first + avail - 1 (avail >= n) are readable and may be looked at,
 * not applied, to warm the cache early (a ring's unread events). mask:
 * a ring's slot mask, or UINT64_MAX for a plain array.
 *
 * The updates are written straight where the caller wants them, not
 * copied there: the first event's at out, each next one's where emit
 * returned, which must have room for BOOK_MAX_UPDATES_PER_EVENT. A
 * caller that keeps every update returns updates + k; one that is done
 * with them returns updates again.
 */
typedef struct book_update *(*venue_books_emit_fn)(void *ctx, const struct wb_event *ev,
						   struct book_update *updates, unsigned k);
void venue_books_apply_batch(struct venue_books *vb, const struct wb_event *slots, uint64_t mask,
			     uint64_t first, uint64_t n, uint64_t avail, struct book_update *out,
			     venue_books_emit_fn emit, void *ctx);
/* The same for n events given by pointer (events read in place, scattered). */
void venue_books_apply_list(struct venue_books *vb, const struct wb_event *const *evs, uint64_t n,
			    struct book_update *out, venue_books_emit_fn emit, void *ctx);
void venue_books_prefetch_stage(const struct venue_books *vb, const struct wb_event *ev, unsigned stage);
void venue_books_prefetch(const struct venue_books *vb, const struct wb_event *ev);

struct venue_level {
	int64_t price;
	uint64_t qty;
	uint32_t orders;
};

/* 0 ok (an empty side reads qty 0, orders 0, price 0); -1 bad venue or instrument. */
int venue_books_bbo(const struct venue_books *vb, uint8_t venue, uint16_t instrument,
		    struct venue_level *bid, struct venue_level *ask);

/* Levels of one side (WB_SIDE_BUY/WB_SIDE_SELL), best first; returns how many. */
unsigned venue_books_depth(const struct venue_books *vb, uint8_t venue, uint16_t instrument,
			   uint8_t side, struct venue_level *out, unsigned max_levels);

/* Queue position: shares and orders ahead of order_id at its price (FIFO). 0 ok, -1 unknown */
int venue_books_queue_position(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
			       uint64_t *shares_ahead, uint32_t *orders_ahead);

/* A live order as the book holds it. 0 ok, -1 unknown. */
struct venue_order_info {
	uint16_t instrument;
	uint8_t side;
	int64_t price;
	uint32_t qty;		/* remaining */
};
int venue_books_order(const struct venue_books *vb, uint8_t venue, uint64_t order_id,
		      struct venue_order_info *info);

/*
 * fn on each live order of a venue's side of one instrument: level by
 * level (in no particular order of levels), each level's orders in time
 * priority. Off the hot path (an index lookup per order): for seeding
 * what follows the books (order_detail.h).
 */
typedef void (*venue_books_order_fn)(void *ctx, int64_t price, uint64_t order_id, uint32_t qty);
void venue_books_each_order(const struct venue_books *vb, uint8_t venue, uint16_t instrument, uint8_t side,
			    venue_books_order_fn fn, void *ctx);

/*
 * A checksum of every book's content: per (venue, instrument, side), each
 * level best first (price, shares, orders) and its queue in priority order
 * (order id, remaining shares). Equal books give equal checksums whatever
 * their layout; empty books add nothing. Slow (walks every level).
 * Each (venue, instrument) part is hashed from the instrument's ticker in
 * t (superbook_tickers()), not its id, and the parts are summed: equal
 * books give equal checksums whatever ids their symbols got.
 */
struct book_tickers;
uint64_t venue_books_checksum(const struct venue_books *vb, const struct book_tickers *t);

struct venue_books_counters {
	uint64_t events, adds, executes, reduces, deletes, replaces, modifies,
		trades, clears, gaps, statuses, symbols,
		unknown_order,		/* event for an order id not live: counted, skipped */
		duplicate_order,	/* ADD (or REPLACE's new id) of a live id: skipped */
		bad_instrument,		/* ADD/CLEAR/STATUS... instrument 0 or >= max_instruments */
		overfill,		/* execute/reduce > remaining: clamped, order removed */
		live_orders, peak_live_orders,
		levels;			/* price levels with orders, every book */
	/* Added after the first contract; new fields only ever go at the end. */
	uint64_t bad_venue;		/* venue 0 or >= WB_VENUE_COUNT: skipped */
	uint64_t bad_field;		/* side not buy/sell, ADD/REPLACE of 0 shares: skipped */
	uint64_t ignored;		/* kinds the venue books do not use (QUOTE, TRADE_BREAK, ...) */
	uint64_t alloc_failures;	/* a table could not grow: the event was skipped */
	uint64_t index_grows;		/* order index doublings (see above) */
	uint64_t level_grows;		/* level pool doublings and new level-arena chunks */
	uint64_t sip;			/* SIP events passed on to thread 2's SIP view */
	uint64_t recoveries;		/* gaps announced as being recovered: the book waits, unmarked */
};

const struct venue_books_counters *venue_books_counters(const struct venue_books *vb);

#endif /* WIREBOOK_VENUE_BOOK_H */
