/*
 * The SIP view (builder thread 2, beside the Super-Book): applies the SIP
 * updates thread 1 passes on (BOOK_UP_SIP_*) to each symbol's SIP record
 * in shared memory, and compares the SIP's view with the direct books'
 * (see "The SIP view" in wirebook/book.h for what is measured and how).
 *
 * The Super-Book owns the direct books; for a symbol with a SIP view it
 * tells the SIP view each venue's new top of a side whenever it changes
 * (BOOK_UP_SIP_TOP; every venue's tops when the view starts), and the SIP
 * view keeps those tops to compute the direct NBBO itself.
 *
 * It runs on its own thread in the builder (thread 3): the Super-Book
 * thread only copies these updates, in order, into a queue (superbook.h:
 * superbook_set_sip_queue), so the comparison costs it a queue push, and
 * a SIP view that falls behind drops (counted), never slows it. Without a
 * queue the Super-Book applies them itself. Single-threaded: one thread
 * owns a sipview.
 */
#ifndef WIREBOOK_SIPVIEW_H
#define WIREBOOK_SIPVIEW_H

#include <stdint.h>
#include "book/update.h"
#include "shm/shm_layout.h"

struct sipview;

/* The direct books' side of one symbol, from the venues' tops. */
struct sip_direct {
	int64_t bid, ask;		/* best consolidated prices; 0: none */
	uint32_t present;		/* venues with a direct book (levels) of the symbol */
	uint32_t lock_bid_venues;	/* venues bidding at or above the best ask */
	uint32_t lock_ask_venues;	/* venues offering at or below the best bid */
};

/* records: capacity SIP records, stats: the book-wide block (both zeroed). */
struct sipview *sipview_create(struct wb_shm_sip *records, struct wb_shm_sipstats *stats,
			       uint32_t capacity, int numa_node);
void sipview_destroy(struct sipview *sv);

/*
 * Apply a BOOK_UP_SIP_* update (instrument < capacity, or 0 for a
 * market-wide one), or a direct top change (BOOK_UP_SIP_TOP). A symbol's
 * view starts at its first update; the Super-Book sends the direct tops
 * as they stand just before it. Returns 1 when the symbol has a view.
 */
int sipview_apply(struct sipview *sv, const struct book_update *u);

/* Warm what sipview_apply(u) will touch: stage 0 about 8 updates ahead,
 * stage 1 (reading what stage 0 warmed) about 4. */
void sipview_prefetch_update(const struct sipview *sv, const struct book_update *u, int stage);
void sipview_prefetch(const struct sipview *sv, uint16_t instrument, uint8_t venue);

/*
 * A checksum of every symbol's SIP view as the SIP stated it: quotes, NBBO,
 * LULD band, status, the SIP's flags (locked, crossed, halted, stale),
 * update counts; not the comparison with the direct books nor receive
 * times, which follow how the feeds interleaved. Equal SIP input, equal
 * checksums (lib/book/checksum.h), whatever instrument ids the symbols
 * got: each symbol's part is hashed from its ticker in t
 * (superbook_tickers()). Call with the SIP view's thread idle.
 */
struct book_tickers;
uint64_t sipview_checksum(const struct sipview *sv, const struct book_tickers *t);
/*
 * The same without the update and quote counts: the state a snapshot restores (a
 * late join's view equals the whole day's, though fewer updates built it).
 */
uint64_t sipview_state_checksum(const struct sipview *sv, const struct book_tickers *t);

#endif /* WIREBOOK_SIPVIEW_H */
