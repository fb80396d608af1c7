/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The order-detail objects (issue 25), private to the builder (lib/book
 * order_detail.c writes them) and libwirebook (lib/shm/orders.c reads
 * them); readers use include/wirebook/orders.h. Two POSIX shared-memory
 * objects beside the book's, so the book's layout does not change:
 *
 *   /NAME.orders      written by the builder, mapped read-only by readers:
 *     0                     struct wb_ord_header (one page)
 *     symbols_offset        capacity x struct wb_ord_symbol (seqlock, flags)
 *     heads_offset          capacity x WB_BOOK_VENUES x 2 uint32_t: the
 *                           first level of each book side (0: none)
 *     levels_offset         level_slots x struct wb_ord_level
 *     orders_offset         order_slots x struct wb_ord_order
 *     track_offset          track_slots x struct wb_ord_track
 *   /NAME.orders-req  written by readers (requests, waiter counts), read
 *                     and validated by the builder: struct wb_ord_requests
 *
 * Levels and orders are flat arrays linked by index (0: none), never
 * moved: a symbol's levels form a list per book side (unsorted: new
 * levels go first), its orders a FIFO per level. Everything a symbol's
 * books hold changes only inside its seqlock (wb_ord_symbol.seq), and a
 * slot changes hands only after leaving a symbol inside that symbol's
 * seqlock, so a reader that copied a symbol's levels and orders between
 * two equal even sequence values copied a consistent queue. A reader
 * still bounds every walk and checks every index: what it follows may
 * be mid-update.
 */
#ifndef WIREBOOK_ORDERS_LAYOUT_H
#define WIREBOOK_ORDERS_LAYOUT_H

#include "wirebook/orders.h"
#include "shm/shm_layout.h"

#define WB_ORD_MAGIC 0x5344524f4f4257ull	/* "WBOORDS" little-endian */
#define WB_ORD_REQ_MAGIC 0x5145524f4f4257ull	/* "WBOOREQ" */
#define WB_ORD_ABI_VERSION 2u	/* 2: virtual orders (tracking slot, request fields) */
#define WB_ORD_REQUESTS 64u			/* request slots */

/* wb_ord_symbol.flags */
#define WB_ORDF_DETAIL 0x1	/* the symbol carries order detail */
#define WB_ORDF_INCOMPLETE 0x2	/* slots ran out: some orders are missing */

struct wb_ord_header {
	uint64_t magic;		/* WB_ORD_MAGIC, stored last when created */
	uint32_t abi_version;	/* WB_ORD_ABI_VERSION */
	uint32_t header_size;
	uint32_t capacity;	/* symbols, as the book's capacity */
	uint32_t order_slots;
	uint32_t level_slots;
	uint32_t track_slots;
	uint64_t total_size;
	uint64_t symbols_offset, heads_offset, levels_offset, orders_offset, track_offset;
	uint64_t instance_id;	/* unique per builder run */
	uint32_t builder_pid;
	uint32_t state;		/* enum wb_shm_state */
	uint32_t detail_all;	/* every symbol carries detail */
	uint32_t reserved;
	/* changing */
	uint64_t slot_overflows __attribute__((aligned(64)));	/* orders not kept: no slot */
	uint64_t requests_done;		/* requests the builder has served */
	uint64_t requests_refused;	/* malformed or not servable */
	uint8_t pad[4096 - 128 - 24];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_ord_header) == 4096, "header is one page");

struct wb_ord_symbol {
	uint64_t seq;		/* seqlock: odd while the builder writes */
	uint64_t updates;	/* changes to the symbol's orders */
	uint32_t flags;		/* WB_ORDF_* */
	uint32_t orders;	/* live orders of the symbol, all venues */
	uint8_t reserved[40];
} __attribute__((aligned(64)));

struct wb_ord_level {
	int64_t price;
	uint64_t qty;		/* shares of the orders on the level */
	uint32_t orders;
	uint32_t head, tail;	/* order slots, first and last in time priority */
	uint32_t next, prev;	/* levels of the same book side */
	uint32_t tracked;	/* tracked orders on the level (builder's) */
	uint16_t instrument;
	uint8_t venue, side;
	uint8_t reserved[4];
};

WB_STATIC_ASSERT(sizeof(struct wb_ord_level) == 48, "level layout");

struct wb_ord_order {
	uint64_t id;
	uint64_t join_ts;	/* exchange time it joined the queue (ns) */
	uint64_t join_recv_ts;	/* receive time of that event */
	uint32_t qty;		/* remaining shares */
	uint32_t level;		/* its level slot */
	uint32_t next, prev;	/* the FIFO */
	char mpid[4];		/* attribution, zero when none */
	uint32_t track;		/* its tracking slot + 1; 0: untracked */
	uint16_t virt_anchors;	/* virtual orders right behind it (builder's) */
	uint8_t reserved[6];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_ord_order) == 64, "an order is one cache line");

struct wb_ord_track {
	uint32_t seq;		/* seqlock and futex word: odd while written */
	uint32_t in_use;	/* 1: a tracked order (id, venue) */
	uint64_t order_id;
	uint8_t venue;
	uint8_t side;
	uint16_t instrument;
	uint8_t state;		/* enum wb_queue_state */
	uint8_t is_virtual;	/* 1: a reader's virtual order, not a venue's */
	uint8_t reserved0[2];
	int64_t price;
	uint64_t qty;		/* remaining shares */
	uint64_t filled_qty;
	uint64_t shares_ahead, shares_behind, level_qty;
	uint32_t orders_ahead, orders_behind, level_orders;
	uint32_t reserved1;
	uint64_t exch_ts, recv_ts;	/* of the event that last changed it */
	uint64_t changes;		/* events that changed it */
	/* virtual orders: their fills, and the event of the last one */
	uint64_t fills, last_fill_qty;
	uint64_t fill_exch_ts, fill_recv_ts, fill_seq;
	uint8_t reserved2[40];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_ord_track) == 192, "tracking layout");

/* A reader's request to the builder. */
enum wb_ord_op {
	WB_ORD_OP_DETAIL_ON = 1,	/* sym */
	WB_ORD_OP_DETAIL_OFF = 2,
	WB_ORD_OP_TRACK = 3,		/* venue, order_id */
	WB_ORD_OP_UNTRACK = 4,
	WB_ORD_OP_VIRTUAL_PLACE = 5,	/* order_id (the reader's), sym, venue, side, price, qty */
	WB_ORD_OP_VIRTUAL_CANCEL = 6,	/* order_id */
};

/* wb_ord_request.state */
#define WB_ORD_REQ_FREE 0u
#define WB_ORD_REQ_CLAIMED 1u	/* a reader is writing it */
#define WB_ORD_REQ_READY 2u	/* for the builder */

struct wb_ord_request {
	uint32_t state;
	uint8_t op;
	uint8_t venue;
	uint16_t sym;
	uint64_t order_id;
	int64_t price;		/* WB_ORD_OP_VIRTUAL_PLACE */
	uint32_t qty;
	uint8_t side;
	uint8_t reserved[3];
};

struct wb_ord_requests {
	uint64_t magic;		/* WB_ORD_REQ_MAGIC */
	uint64_t instance_id;	/* the builder run that reads it */
	uint32_t track_slots;
	uint32_t reserved;
	uint64_t posted __attribute__((aligned(64)));	/* requests made ready (readers add) */
	struct wb_ord_request req[WB_ORD_REQUESTS] __attribute__((aligned(64)));
	/* then track_slots x uint32_t: readers waiting on each tracking slot */
	uint32_t waiters[] __attribute__((aligned(64)));
};

#endif /* WIREBOOK_ORDERS_LAYOUT_H */
