/*
 * The SIP view (builder thread 2, beside the Super-Book): applies the SIP
 * updates thread 1 passes on (BOOK_UP_SIP_*) to each symbol's SIP record
 * in shared memory, and compares the SIP's view with the direct books'
 * (see "The SIP view" in wirebook/book.h for what is measured and how).
 *
 * The Super-Book owns the direct books; it tells the SIP view, for a
 * symbol that has one, what the direct side looks like now (struct
 * sip_direct) whenever a venue's top of book changes. Symbols without SIP
 * traffic cost the Super-Book one predictable branch per top change.
 * Single-threaded, like the Super-Book.
 */
#ifndef WIREBOOK_SIPVIEW_H
#define WIREBOOK_SIPVIEW_H

#include <stdint.h>
#include "book/update.h"
#include "wirebook/book.h"

struct sipview;

/* The direct books' side of one symbol, as the Super-Book holds it now. */
struct sip_direct {
	int64_t bid, ask;		/* best consolidated prices; 0: none */
	uint32_t present;		/* venues with a direct book (levels) of the symbol */
	uint32_t lock_bid_venues;	/* venues bidding at or above the best ask */
	uint32_t lock_ask_venues;	/* venues offering at or below the best bid */
};

/* One venue's direct top of book. */
struct sip_bbo {
	int64_t bid, ask;		/* 0: side empty */
	uint64_t bid_qty, ask_qty;
};

/* records: capacity SIP records, stats: the book-wide block (both zeroed). */
struct sipview *sipview_create(struct wb_shm_sip *records, struct wb_shm_sipstats *stats,
			       uint32_t capacity, int numa_node);
void sipview_destroy(struct sipview *sv);

/*
 * Apply a BOOK_UP_SIP_* update (instrument already checked < capacity, or
 * 0 for a market-wide one); d: the symbol's direct side (zeros when it has
 * none). Returns 1 when the symbol has a SIP view now and the Super-Book
 * should report its direct top changes, else 0.
 */
int sipview_apply(struct sipview *sv, const struct book_update *u, const struct sip_direct *d);

/*
 * A direct venue's top of book of a SIP-viewed symbol changed (after the
 * change): bbo is that venue's, d the symbol's; exch_ts and recv_ts the
 * change's. Updates of one message (same times) are one change.
 */
void sipview_direct_top(struct sipview *sv, uint16_t instrument, uint8_t venue,
			const struct sip_bbo *bbo, const struct sip_direct *d, uint64_t exch_ts,
			uint64_t recv_ts);

/* Symbols with a SIP view. */
uint64_t sipview_symbols(const struct sipview *sv);

#endif /* WIREBOOK_SIPVIEW_H */
