/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Orders at a price and queue positions (issue 25): libwirebook's reader
 * API over the order detail the builder publishes beside its book
 * (wirebookd --order-detail). A symbol carries order detail when the
 * builder was started with it for all symbols or for that symbol, or when
 * a reader asked for it (wb_orders_detail); symbols without it cost the
 * builder nothing.
 *
 * Consistency: a symbol's orders are read under its seqlock, as the book's
 * records are: a read never returns a queue torn by a concurrent update,
 * and never blocks the builder. A queue position is read under its own.
 *
 * Requests (detail on or off for a symbol, tracking an order) go through
 * a small request area the builder reads between batches: they take
 * effect within one batch of events, not at the call's return.
 */
#ifndef WIREBOOK_ORDERS_H
#define WIREBOOK_ORDERS_H

#include <stdint.h>
#include "event.h"
#include "errors.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wb_orders;		/* an attached order detail, opaque */

struct wb_order {
	uint64_t order_id;	/* the venue's order id */
	uint64_t qty;		/* remaining displayed shares */
	uint64_t join_ts;	/* exchange time it joined the queue (ns); 0: before detail began */
	uint64_t join_recv_ts;	/* receive time of that event */
	char mpid[4];		/* attribution where the feed gives one, else zero */
	uint32_t reserved;
};

struct wb_order_level {
	int64_t price;
	uint64_t qty;		/* shares resting at the price */
	uint32_t orders;	/* orders resting at the price */
	uint32_t reserved;
};

/* wb_queue_pos.state */
enum wb_queue_state {
	WB_QUEUE_UNKNOWN = 0,	/* not seen (yet) on the venue */
	WB_QUEUE_RESTING = 1,
	WB_QUEUE_PARTLY_FILLED = 2,	/* resting, some shares executed */
	WB_QUEUE_FILLED = 3,	/* executed in full: gone */
	WB_QUEUE_CANCELLED = 4,	/* deleted, reduced to nothing or replaced: gone */
	WB_QUEUE_REFUSED = 5,	/* virtual orders: not placed (marketable at placement) */
};

struct wb_queue_pos {
	uint64_t order_id;
	uint8_t venue;
	uint8_t side;		/* WB_SIDE_* once known */
	uint8_t state;		/* enum wb_queue_state */
	uint8_t reserved;
	int sym;		/* symbol index once known, else 0 */
	int64_t price;
	uint64_t qty;		/* remaining shares */
	uint64_t filled_qty;	/* shares executed so far */
	uint64_t shares_ahead;	/* at its price, in time priority before it */
	uint32_t orders_ahead;
	uint32_t orders_behind;
	uint64_t shares_behind;
	uint64_t level_qty;	/* the price level's total */
	uint32_t level_orders;
	uint32_t version;	/* moves with every change: wb_queue_wait's argument */
	uint64_t exch_ts;	/* of the event that last changed it */
	uint64_t recv_ts;
	uint64_t changes;	/* events that changed it */
};

/* Attach to the order detail of the book NAME (NULL: "wirebook"). */
struct wb_orders *wb_orders_open(const char *name, int *err);
void wb_orders_close(struct wb_orders *o);

/* 1 when the symbol carries order detail now, 0 when not, or a wb_error. */
int wb_orders_has_detail(const struct wb_orders *o, int sym);
/* Ask the builder to keep (on 1) or drop (on 0) the symbol's order detail. */
int wb_orders_detail(struct wb_orders *o, int sym, int on);

/*
 * The prices of a venue's side (WB_SIDE_BUY, WB_SIDE_SELL) that have
 * orders, best first, into levels[max]: returns how many (at most max), or
 * WB_ENOSYM when the symbol carries no detail.
 */
int wb_order_levels(const struct wb_orders *o, int sym, int venue, int side, struct wb_order_level *levels,
		    unsigned max);
/*
 * The orders at (venue, side, price) in time priority, first max of them
 * into out: returns how many were copied; *level (when not NULL) gets
 * the level's totals (orders 0: no order at that price).
 */
int wb_orders_at(const struct wb_orders *o, int sym, int venue, int side, int64_t price, struct wb_order *out,
		 unsigned max, struct wb_order_level *level);

/* Ask the builder to keep (venue, order_id)'s queue position, or stop. */
int wb_queue_track(struct wb_orders *o, int venue, uint64_t order_id);
int wb_queue_untrack(struct wb_orders *o, int venue, uint64_t order_id);
/* The tracked order's queue position now: 0, or WB_ENOSYM when it is not tracked (yet). */
int wb_queue_position(const struct wb_orders *o, int venue, uint64_t order_id, struct wb_queue_pos *out);
/*
 * Sleep until the tracked order's position moves past version (from an
 * earlier wb_queue_position), or timeout_ns passes (< 0: no limit): 0
 * changed, WB_EBUSY timed out, WB_ENOSYM not tracked.
 */
int wb_queue_wait(struct wb_orders *o, int venue, uint64_t order_id, uint32_t version, int64_t timeout_ns);

const char *wb_queue_state_name(int state);

/*
 * Virtual orders (shadow trading and replay): a reader's order that the
 * builder keeps in the real queue's time priority without ever changing
 * the book or what any reader sees of it. Placed at the current point of
 * the stream, it joins the back of the venue's queue at its price
 * (shares_ahead: every real share there), moves forward as orders ahead
 * of it leave, and fills when an execution at its price goes beyond the
 * shares still ahead of it (by the shares beyond), or whole when a real
 * order on its side executes at a worse price than its own (traded
 * through). Executions count, not crossing adds: the venue never saw the
 * virtual order. A price marketable at placement (a buy at or above the
 * venue's best ask in the detail, a sell at or below its best bid) is
 * refused: state WB_QUEUE_REFUSED. Its symbol takes order detail.
 */
struct wb_virtual_order {
	struct wb_queue_pos pos;	/* order_id: its virtual id; qty: shares left;
					 * level_qty, level_orders: the real queue's */
	uint64_t fills;			/* fills so far */
	uint64_t last_fill_qty;
	uint64_t fill_exch_ts;		/* the event of the last fill */
	uint64_t fill_recv_ts;
	uint64_t fill_seq;
};

/*
 * Place a virtual order: *id gets its id (unique among readers) at once,
 * and the builder places it within one batch (wb_virtual_state says
 * WB_ENOSYM until then). qty at most UINT32_MAX.
 */
int wb_virtual_place(struct wb_orders *o, int sym, int venue, int side, int64_t price, uint64_t qty, uint64_t *id);
/* Cancel a resting virtual order (state WB_QUEUE_CANCELLED); on one that is done (filled, cancelled,
 * refused), forget it and free its slot. */
int wb_virtual_cancel(struct wb_orders *o, uint64_t id);
/* A virtual order now: 0, or WB_ENOSYM when not placed (yet) or forgotten. */
int wb_virtual_state(const struct wb_orders *o, uint64_t id, struct wb_virtual_order *out);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_ORDERS_H */
