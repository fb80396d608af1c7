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
	/* The SIP's view (event.h: events with WB_EVF_SIP), passed through
	 * thread 1 untouched for thread 2's SIP view. venue, instrument,
	 * flags, exch_ts and recv_ts are the event's; the rest: */
	BOOK_UP_SIP_QUOTE = 9,	/* side: condition; price: bid, u.ask_price: ask; order_count:
				 * bid shares, round_lot: ask shares; qty: sip_ts */
	BOOK_UP_SIP_NBBO = 10,	/* price, u.ask_price, order_count, round_lot as a QUOTE;
				 * qty: book_sip_nbbo_pack() of venues, codes and sides */
	BOOK_UP_SIP_LULD = 11,	/* price: lower band, u.ask_price: upper; side: indicator */
	BOOK_UP_SIP_STATUS = 12, /* u.status; instrument 0: market-wide (MWCB) */
	BOOK_UP_SIP_CLEAR = 13,	/* the SIP's quotes of (venue, instrument) are gone; instrument 0:
				 * every instrument's; venue a SIP id: every participant's */
	/* Thread 2 -> the SIP view only (sipview.h): a direct venue's top of
	 * one side changed on a symbol with a SIP view; price and qty of the
	 * new top (0: the side is empty), exch_ts and recv_ts of the change. */
	BOOK_UP_SIP_TOP = 14,
	/* Thread 1 -> the SIP view: a sequence gap of a SIP line without a
	 * retransmission service (CQS), venue the SIP's id, qty the messages
	 * lost; instrument 0: every symbol quoted through that SIP. */
	BOOK_UP_SIP_GAP = 15,
};

/* The updates thread 2 passes to the SIP view as they come. */
static inline int book_update_is_sip(uint8_t kind)
{
	return (kind >= BOOK_UP_SIP_QUOTE && kind <= BOOK_UP_SIP_CLEAR) || kind == BOOK_UP_SIP_GAP;
}

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
		int64_t ask_price; /* SIP_QUOTE, SIP_NBBO; SIP_LULD: upper band */
	} u;
	uint64_t applied_ts;	/* BATCH_END: thread 1 applied the batch, ns (was reserved1) */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct book_update) == 64, "book_update is one cache line");

/* The NBBO's small fields in one word (BOOK_UP_SIP_NBBO qty). */
static inline uint64_t book_sip_nbbo_pack(const struct wb_ev_nbbo *n)
{
	return (uint64_t)n->bid_venue | (uint64_t)n->ask_venue << 8 |
	       (uint64_t)(uint8_t)n->indicator << 16 | (uint64_t)(uint8_t)n->condition << 24 |
	       (uint64_t)n->sides << 32 | (uint64_t)(uint8_t)n->luld << 40;
}

static inline void book_sip_nbbo_unpack(uint64_t w, struct wb_ev_nbbo *n)
{
	n->bid_venue = (uint8_t)w;
	n->ask_venue = (uint8_t)(w >> 8);
	n->indicator = (char)(w >> 16);
	n->condition = (char)(w >> 24);
	n->sides = (uint8_t)(w >> 32);
	n->luld = (char)(w >> 40);
}

#endif /* WIREBOOK_BOOK_UPDATE_H */
