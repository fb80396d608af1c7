/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The book's gap-recovery table (book.h, struct wb_shm_recovery): the feed
 * engine's recovery streams, their counts and state, and which stream
 * each symbol's messages of a venue come on, published for readers
 * (wb_recovery_streams, wb_symbol_recovering).
 *
 * Written by the thread that runs the engine, between packets: the table
 * under its seqlock; the symbol streams (a byte each, rewritten only when
 * a recovery begins or ends, before the table that tells it).
 */
#ifndef WIREBOOK_RECOVERY_RECOVERY_TABLE_H
#define WIREBOOK_RECOVERY_RECOVERY_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "feed/feed.h"
#include "shm/shm_layout.h"

/* While counts move, the table is rewritten at most this often. */
#define RECOVERY_TABLE_PERIOD_NS 50000000ull
/*
 * The symbol streams (a pass over every symbol of the venues in recovery)
 * are rewritten at most this often, and at once when a stream joins the
 * table: a symbol named since answers "not known", i.e. by its venue's
 * recovering bit, until then.
 */
#define RECOVERY_SYMBOLS_PERIOD_NS 100000000ull

struct recovery_client;

/*
 * The fill times of the stream group (venue, channel) as the recovery
 * client measured them (monotonic clock, from seeing the gap to in
 * sequence; the engine's receive-clock histogram stays empty on a file
 * replay, whose recovered packets carry the recovery's start time): into
 * fills and the p50/p99/max ns. False when c serves no such group.
 */
bool recovery_client_fill_times(const struct recovery_client *c, int venue, uint16_t channel,
				uint64_t *fills, uint64_t *p50, uint64_t *p99, uint64_t *max);

#define RECOVERY_TABLE_FILL_GROUPS 64

struct recovery_table {
	const struct recovery_client *client;	/* fill times from it, when not NULL */
	/* the client's fill times per (venue, channel), read at most every
	 * RECOVERY_TABLE_PERIOD_NS (each read sorts every fill time seen) */
	struct {
		int venue;
		uint16_t channel;
		uint64_t fills, p50, p99, max;
	} fill[RECOVERY_TABLE_FILL_GROUPS];
	int nfill;
	uint64_t next_fill_ns;
	struct wb_shm_recovery *t;
	uint8_t *symbol_stream;		/* [capacity][WB_BOOK_VENUES] */
	uint32_t capacity;
	uint32_t changes_seen;		/* the engine's recovery_changes last published */
	uint64_t recovering_sig;	/* which streams were recovering, in which episode */
	uint64_t next_ns;		/* the next rewrite for moved counts only */
	uint64_t next_symbols_ns;	/* the next symbol streams' rewrite */
	uint32_t streams;		/* in the table at the last symbol rewrite */
	uint64_t rewrites;		/* table rewrites */
	uint64_t symbol_rewrites;	/* of them, with the symbol streams rewritten */
	struct feed_recovery_stream list[WB_RECOVERY_STREAMS];
};

void recovery_table_init(struct recovery_table *rt, struct wb_shm_recovery *t,
			 uint8_t *symbol_stream, uint32_t capacity,
			 const struct recovery_client *client);
/*
 * Rewrite the table if a recovery began or ended since the last call (at
 * once), or counts moved (at most every RECOVERY_TABLE_PERIOD_NS of
 * now_ns, a monotonic clock). wall_ns: the table's updated_ns.
 */
void recovery_table_update(struct recovery_table *rt, const struct feed_engine *e, uint64_t now_ns,
			   uint64_t wall_ns);
/* Rewrite it now, fill times included (the source ended: the final counts). */
void recovery_table_publish_now(struct recovery_table *rt, const struct feed_engine *e,
				uint64_t now_ns, uint64_t wall_ns);

#endif /* WIREBOOK_RECOVERY_RECOVERY_TABLE_H */
