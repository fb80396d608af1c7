/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The layout of the published books' shared-memory object: private to the
 * builder (lib/book writes it) and libwirebook (lib/shm reads it), never
 * installed; readers use the API of include/wirebook/book.h. A change
 * here bumps WB_BOOK_ABI_VERSION.
 *
 * One POSIX shared-memory object (/dev/shm/wirebook by default) holds:
 *
 *   0                       struct wb_shm_header (one page)
 *   header.dir_offset       symbol directory: capacity x uint64_t ticker key
 *   header.records_offset   capacity x struct wb_shm_symbol, indexed by
 *                           instrument id (index 0 is never used)
 *   header.sip_offset       capacity x struct wb_shm_sip: the SIP view of
 *                           each symbol, indexed alike (ABI 4)
 *   header.sipstats_offset  struct wb_shm_sipstats: the SIP-vs-direct
 *                           statistics of the whole book (ABI 4)
 *   header.recovery_offset  struct wb_shm_recovery, then capacity x
 *                           WB_BOOK_VENUES bytes: gap recovery per stream
 *                           and each symbol's stream (libwirebook 1.3;
 *                           0 from an older builder)
 *   header.nats_offset      struct wb_shm_nats: the writer's NATS counters
 *                           (libwirebook 1.5; 0 from an older builder)
 *
 * Every record is read under its seqlock (seq first, WB_SEQ_RETIRED once
 * its builder is gone).
 */
#ifndef WIREBOOK_SHM_LAYOUT_H
#define WIREBOOK_SHM_LAYOUT_H

#include "wirebook/book.h"

#define WB_SHM_MAGIC 0x4b4f4f4252495757ull /* "WWIRBOOK" little-endian */

#define WB_SEQ_RETIRED UINT64_MAX /* odd, so old readers never accept it as data */

struct wb_shm_venue {
	uint8_t flags;		/* WB_VENF_* */
	uint8_t state;		/* enum wb_trading_state as the venue last said */
	uint8_t bid_count;	/* levels filled in bid[] */
	uint8_t ask_count;
	uint32_t gaps;		/* gaps seen on this venue for the symbol */
	uint64_t exch_ts;	/* exchange time of the last change */
	struct wb_level bid[WB_BOOK_DEPTH];	/* best first */
	struct wb_level ask[WB_BOOK_DEPTH];
};

/* The first cache line is all wb_top() reads. */
struct wb_shm_symbol {
	/* line 0 */
	uint64_t seq;		/* seqlock: odd while the builder writes */
	uint64_t updates;	/* changes applied to this symbol (not publishes: the
				 * same on every run of the same input) */
	int64_t bid_price;	/* best consolidated bid, 0 when none */
	uint64_t bid_qty;	/* shares at the best bid, all venues; 0 = no bid */
	int64_t ask_price;
	uint64_t ask_qty;
	uint32_t bid_venues;	/* venues at the best bid */
	uint32_t ask_venues;
	uint16_t flags;		/* WB_SYMF_* */
	uint8_t state;		/* enum wb_trading_state */
	uint8_t bid_count;	/* consolidated levels filled */
	uint8_t ask_count;
	uint8_t reserved0[3];
	/* line 1 */
	uint64_t ticker;	/* 8-byte space-padded ticker, little-endian load */
	uint64_t exch_ts;	/* exchange time of the last change */
	uint64_t recv_ts;	/* receive time of the packet behind the last change */
	char raw_state;		/* the feed's own status code */
	char reason[4];
	uint8_t state_venue;	/* venue that sent the status */
	uint8_t reserved1a[2];
	uint32_t venues_present; /* bit v: venue v has sent anything */
	uint8_t reserved1[28];
	struct wb_trade last_trade;	/* 48 bytes */
	uint8_t reserved2[16];
	/* consolidated depth, best first, with the per-venue breakdown:
	 * bid_venue_qty[v][i] is venue v's shares at bid[i] (venue-major, so
	 * a symbol quoted on one venue publishes two cache lines, not 13) */
	struct wb_level bid[WB_BOOK_DEPTH];
	struct wb_level ask[WB_BOOK_DEPTH];
	uint64_t bid_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
	uint64_t ask_venue_qty[WB_BOOK_VENUES][WB_BOOK_DEPTH];
	struct wb_shm_venue venue[WB_BOOK_VENUES];
} __attribute__((aligned(64)));

struct wb_shm_header {
	uint64_t magic;		/* WB_SHM_MAGIC, stored last when created */
	uint32_t abi_version;	/* WB_BOOK_ABI_VERSION */
	uint32_t header_size;	/* sizeof(struct wb_shm_header) */
	uint32_t record_size;	/* sizeof(struct wb_shm_symbol) */
	uint32_t capacity;	/* records, instrument ids 1..capacity-1 */
	uint32_t depth;		/* WB_BOOK_DEPTH */
	uint32_t venue_slots;	/* WB_BOOK_VENUES */
	uint64_t total_size;	/* bytes of the object */
	uint64_t dir_offset;
	uint64_t records_offset;
	uint64_t instance_id;	/* unique per builder run */
	uint64_t created_ns;	/* CLOCK_REALTIME at creation */
	uint32_t builder_pid;
	uint32_t state;		/* enum wb_shm_state (release store) */
	/* line 2: changes while running */
	uint64_t updates __attribute__((aligned(64))); /* changes, all symbols */
	uint64_t symbols;	/* directory entries in use (highest id + 1) */
	uint64_t heartbeat_ns;	/* last time the builder published or idled */
	uint64_t venue_gaps[WB_BOOK_VENUES]; /* gaps seen per venue */
	/* receive time of the newest data from each venue (any symbol), set
	 * at publish: a venue silent while others move is stale */
	uint64_t venue_recv_ns[WB_BOOK_VENUES];
	/* ABI 3 */
	uint64_t heartbeat_period_ns; /* how often heartbeat_ns moves; 0: irregularly */
	/* bit v: venue v's book is being rebuilt by gap recovery (snapshot,
	 * retransmission); its levels may be incomplete until the bit clears.
	 * Written by the builder only (wirebookd --recovery); which symbols
	 * exactly: the recovery table (wb_symbol_recovering). */
	uint32_t recovering_venues;
	uint32_t reserved3;
	/* ABI 4: the SIP view (see "The SIP view" below) */
	uint64_t sip_offset;		/* capacity x struct wb_shm_sip */
	uint32_t sip_record_size;	/* sizeof(struct wb_shm_sip) */
	uint32_t sipstats_size;		/* sizeof(struct wb_shm_sipstats) */
	uint64_t sipstats_offset;	/* one struct wb_shm_sipstats */
	/* libwirebook 1.3, same ABI 4: the gap-recovery table (struct
	 * wb_shm_recovery, then capacity x WB_BOOK_VENUES bytes of symbol
	 * streams); both 0 from a builder that predates it, whose pad was 0 */
	uint64_t recovery_offset;
	uint64_t recovery_size;
	/* libwirebook 1.5, same ABI 4: the NATS counters (struct
	 * wb_shm_nats); both 0 from a builder that predates them */
	uint64_t nats_offset;
	uint64_t nats_size;
	uint8_t pad[4096 - 128 - 24 - 16 * WB_BOOK_VENUES - 16 - 24 - 16 - 16];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_shm_header) == 4096, "header is one page");
WB_STATIC_ASSERT(offsetof(struct wb_shm_symbol, ticker) == 64, "wb_top reads line 0 only");
WB_STATIC_ASSERT(offsetof(struct wb_shm_symbol, bid) == 192, "symbol layout");
WB_STATIC_ASSERT(sizeof(struct wb_shm_symbol) % 64 == 0, "records are cache-line aligned");

struct wb_shm_sip {
	uint64_t seq;		/* seqlock, as wb_shm_symbol.seq */
	struct wb_sip_view v;
} __attribute__((aligned(64)));

/* The book-wide statistics. Counters are single 64-bit values the builder
 * stores one at a time: read them without locks (a set of them may be a
 * few updates apart); episodes have a seqlock each. */
struct wb_shm_sipstats {
	struct wb_sip_summary summary;
	struct wb_sip_venue_stats venue[WB_BOOK_VENUES];
	struct wb_sip_episode lock[WB_SIP_EPISODES];
	struct wb_sip_episode disagree[WB_SIP_EPISODES];
} __attribute__((aligned(64)));

WB_STATIC_ASSERT(sizeof(struct wb_shm_sip) % 64 == 0, "SIP records are cache-line aligned");

struct wb_shm_recovery {
	uint64_t seq;		/* seqlock over everything up to symbol_stream */
	uint32_t count;		/* entries of stream[] in use */
	uint32_t omitted;	/* streams beyond WB_RECOVERY_STREAMS, not published */
	uint64_t updated_ns;	/* CLOCK_REALTIME of the last rewrite */
	uint8_t reserved[40];
	struct wb_recovery_stream stream[WB_RECOVERY_STREAMS];
	/* then, at sizeof(struct wb_shm_recovery), the symbol streams:
	 * uint8_t symbol_stream[capacity][WB_BOOK_VENUES] */
} __attribute__((aligned(64)));

/* The writer's NATS counters, rewritten whole under the seqlock. */
struct wb_shm_nats {
	uint64_t seq;
	uint8_t reserved[56];
	struct wb_nats_stats stats;
} __attribute__((aligned(64)));

#endif /* WIREBOOK_SHM_LAYOUT_H */
