/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Gap recovery as the published books show it (libwirebook 1.3). Part of
 * book.h.
 */
#ifndef WIREBOOK_RECOVERY_H
#define WIREBOOK_RECOVERY_H

#include "book.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * wirebookd publishes, per sequence stream in recovery mode (a feed map's
 * venue and channel; a PITCH unit is a stream of its own), the counts of
 * its gap recovery and whether it is recovering now: while it is, the
 * stream's later messages are held back, so the books of its symbols are
 * behind (a gap fill) or being rebuilt (a snapshot), never current.
 *
 * The table has one seqlock (as every symbol record) and is rewritten by
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

WB_STATIC_ASSERT(sizeof(struct wb_recovery_stream) == 128, "wb_recovery_stream layout");
WB_STATIC_ASSERT(WB_RECOVERY_STREAMS < 256, "symbol_stream holds an index + 1 in a byte");

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

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_RECOVERY_H */
