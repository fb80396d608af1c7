/*
 * What builder thread 1 (venue books) hands builder thread 2 (Super-Book):
 * one 64-byte record per visible change. Thread 1 turns order events into
 * price-level totals; thread 2 never sees an order id.
 */
#ifndef WIREBOOK_BOOK_UPDATE_H
#define WIREBOOK_BOOK_UPDATE_H

#include <stdint.h>
#include "wirebook/event.h"

enum book_update_kind {
	BOOK_UP_NONE = 0,
	BOOK_UP_LEVEL = 1,	/* a venue's total at (side, price) is now qty / order_count */
	BOOK_UP_TRADE = 2,	/* an execution or trade print (last trade) */
	BOOK_UP_STATUS = 3,	/* trading status changed */
	BOOK_UP_CLEAR = 4,	/* drop every level of (venue, instrument); instrument 0 = all */
	BOOK_UP_SYMBOL = 5,	/* instrument id -> ticker */
	BOOK_UP_BATCH_END = 6,	/* end of the updates caused by one ring batch (latency mark) */
	BOOK_UP_GAP = 7,	/* a sequence gap on the venue: its books may miss changes */
	BOOK_UP_PACKET = 8,	/* latency mark: a packet of the batch ended (not the last one);
				 * thread 2 times it at the batch's publish, never applies it */
};

/* Most updates one event can cause (REPLACE/MODIFY: two levels and a trade). */
#define BOOK_MAX_UPDATES_PER_EVENT 4

struct book_update {
	uint8_t kind;		/* enum book_update_kind */
	uint8_t venue;		/* enum wb_venue */
	uint8_t side;		/* enum wb_side */
	uint8_t flags;		/* WB_EVF_* of the causing event */
	uint16_t instrument;
	uint16_t line;		/* BATCH_END: feed line of the last event (was reserved0) */
	uint32_t order_count;	/* LEVEL: orders resting at price after the change;
				 * BATCH_END: ns from taking the batch off the ring to applied_ts */
	uint32_t round_lot;	/* SYMBOL */
	int64_t price;		/* LEVEL, TRADE */
	uint64_t qty;		/* LEVEL: displayed total after the change (0: level gone); TRADE: shares */
	uint64_t exch_ts;
	uint64_t recv_ts;	/* receive time of the packet that caused it */
	union {
		char ticker[8];	/* SYMBOL */
		struct {
			uint8_t state;	/* enum wb_trading_state */
			char raw_state;
			char reason[4];
		} status;
		uint64_t match_id; /* TRADE */
		uint64_t seq;	/* BATCH_END: source sequence of the last event */
	} u;
	uint64_t applied_ts;	/* BATCH_END: thread 1 applied the batch, ns (was reserved1) */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct book_update) == 64, "book_update is one cache line");

#endif /* WIREBOOK_BOOK_UPDATE_H */
