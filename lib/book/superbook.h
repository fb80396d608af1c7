/*
 * The Super-Book: builder thread 2 (thread 1 in run-to-completion mode,
 * builder.h). Folds the per-venue level changes of
 * thread 1 (struct book_update) into, per symbol, the full-depth level
 * book of every venue, and publishes to shared memory (wirebook/book.h)
 * the consolidated depth with its per-venue breakdown, per-venue BBO and
 * depth, the NBBO with locked/crossed flags, last trade, trading status
 * and gap flags; and, beside it, the SIP view with its comparison against
 * the direct books (sipview.h).
 *
 * Publishing is batched: updates mark symbols dirty, superbook_publish()
 * (called on BOOK_UP_BATCH_END, or by hand) writes each dirty symbol once
 * under its seqlock. Single-threaded: one thread owns a superbook.
 */
#ifndef WIREBOOK_SUPERBOOK_H
#define WIREBOOK_SUPERBOOK_H

#include <stdint.h>
#include "book/checksum.h"
#include "book/update.h"
#include "shm/shm_layout.h"

struct superbook;

struct superbook_config {
	const char *shm_name;	/* NULL: WB_SHM_DEFAULT_NAME */
	uint32_t capacity;	/* symbol records (instrument ids < capacity); 0: 16384 */
	int numa_node;		/* -1: no placement */
	int force;		/* replace a book another live builder still owns */
};

struct superbook_counters {
	uint64_t updates;		/* book_update records applied */
	uint64_t levels;		/* LEVEL updates */
	uint64_t trades;
	uint64_t statuses;
	uint64_t clears;
	uint64_t symbols;
	uint64_t gaps;
	uint64_t batches;		/* BATCH_END seen */
	uint64_t publishes;		/* symbol records written */
	uint64_t bad_instrument;	/* instrument id outside the book: skipped */
	uint64_t bad_venue;		/* venue outside WB_BOOK_VENUES: skipped */
	uint64_t bad_side;
	uint64_t bad_kind;
	uint64_t level_missing;		/* a level removed that was never there */
	uint64_t alloc_failures;	/* a level could not be stored (out of memory) */
	uint64_t max_depth;		/* deepest venue side seen */
	uint64_t sip;			/* SIP updates given to the SIP view */
	uint64_t sip_dropped;		/* updates for the SIP view lost to its full queue */
	uint64_t prefault_failures;	/* records not faulted in at their symbol's announcement
					 * (no memory, /dev/shm full): their first publish faults */
};

/* Errors of superbook_create: a wb_error (errno tells for WB_ESYS), or
 * this one; all are -errno values. */
#define SUPERBOOK_EBUSY (-EADDRINUSE)	/* another live builder owns the name (use force) */

/* Creates the shared-memory book (retiring any previous one of that name). */
struct superbook *superbook_create(const struct superbook_config *cfg, int *err);
/* Retires the published book (readers get WB_ESTALE) and unlinks it. */
void superbook_destroy(struct superbook *sb);

void superbook_apply(struct superbook *sb, const struct book_update *u);
/*
 * Optional: warm what superbook_apply(u) will touch, a few updates ahead.
 * Stage 0 (about 8 ahead) fetches the symbol's venue state, stage 1
 * (about 4 ahead, reading that state) the top of the level array.
 */
void superbook_prefetch(const struct superbook *sb, const struct book_update *u, int stage);
/*
 * The distances, in updates, at which superbook_apply_run (and builder
 * thread 2) run the stages; the others tried: docs/benchmarks.md.
 */
#define SUPERBOOK_AHEAD_STATE 8u
#define SUPERBOOK_AHEAD_LEVEL 4u
/*
 * superbook_apply() on u[0..n-1] in order, with superbook_prefetch()'s
 * stages run 8 and 4 updates ahead: a run of updates applied as builder
 * thread 2 applies its queue (BATCH_END publishes, as in superbook_apply).
 */
void superbook_apply_run(struct superbook *sb, const struct book_update *u, uint64_t n);
/*
 * The same on the updates slots[(first + i) & mask], i < n (a queue's
 * ring), stopping before the first BOOK_UP_PACKET or BOOK_UP_BATCH_END,
 * which are the caller's to handle; returns the updates applied. The
 * stages run ahead across such a mark as they run ahead of any update.
 */
uint64_t superbook_apply_ring(struct superbook *sb, const struct book_update *slots, uint64_t mask,
			      uint64_t first, uint64_t n);
/*
 * Fault in, for writing and without changing a byte, the whole shared
 * book and the Super-Book's own tables not faulted in at creation, so no
 * publish takes a page fault (a symbol first seen in the feed would, in
 * its record); bytes faulted in. Before the feed starts: readers may look,
 * but the writer is this thread.
 */
uint64_t superbook_prefault(struct superbook *sb);
/* Write every dirty symbol to shared memory; returns symbols written. */
unsigned superbook_publish(struct superbook *sb);

/*
 * The SIP view (sipview.h) on a thread of its own: the SIP updates and the
 * direct top changes of symbols with a SIP view go into q (published with
 * each superbook_publish) instead of being applied here; whoever drains q
 * applies them with sipview_apply(superbook_sipview(sb), u). A full q
 * drops them (counted: sip_dropped, and the SIP summary's dropped).
 * Before the threads start; NULL: applied here again.
 */
struct book_queue;
struct sipview;
struct book_shm;
void superbook_set_sip_queue(struct superbook *sb, struct book_queue *q);
struct sipview *superbook_sipview(struct superbook *sb);

/* Make a ticker findable before its first update (subscriptions). */
int superbook_add_symbol(struct superbook *sb, uint16_t instrument, const char ticker[8]);
/* Publish header state (enum wb_shm_state) and heartbeat. */
void superbook_set_state(struct superbook *sb, int state);
void superbook_heartbeat(struct superbook *sb, uint64_t now_ns);
/* How often the caller beats (readers call the book stale after
 * WB_STALE_PERIODS of them, at least WB_STALE_MIN_NS); 0: irregularly. */
void superbook_set_heartbeat_period(struct superbook *sb, uint64_t period_ns);
/* Venues (bit v) whose books gap recovery is rebuilding: readers see
 * WB_BOOK_RECOVERING until the mask is 0 again. */
void superbook_set_recovering(struct superbook *sb, uint32_t venues);

/*
 * A checksum of the published book as readers see it: per symbol its
 * ticker, consolidated depth with the per-venue breakdown, NBBO, flags,
 * status, last trade and each venue's depth, flags, state and gaps.
 * Times of last change and publish counters stay out: they follow when
 * publishes happened, not what the book holds. Each symbol's part is
 * hashed from its ticker, not its index, and the parts are summed: equal
 * books, equal checksums, whatever ids the symbols got. Call with the
 * writer idle.
 */
uint64_t superbook_checksum(const struct superbook *sb);
/*
 * The instrument -> ticker mapping (the symbol directory) the checksums
 * hash by: pass it to venue_books_checksum and sipview_checksum.
 */
struct book_tickers superbook_tickers(const struct superbook *sb);

const struct superbook_counters *superbook_counters(const struct superbook *sb);
const struct wb_shm_header *superbook_header(const struct superbook *sb);
/*
 * The book's gap-recovery table and symbol streams (book.h), which the
 * thread running the feed engine writes, not the Super-Book's threads.
 */
struct book_shm *superbook_shm(struct superbook *sb);
/* Shared-memory name as opened ("/wirebook"). */
const char *superbook_shm_name(const struct superbook *sb);

#endif /* WIREBOOK_SUPERBOOK_H */
