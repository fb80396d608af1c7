/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The control ABI (wirebook/ioctl.h) over a feed engine: the conversions
 * both the module and the user-space control socket need, written once.
 */
#ifndef WIREBOOK_FEED_IOC_H
#define WIREBOOK_FEED_IOC_H

#include "feed.h"
#include "wirebook/ioctl.h"

void feed_ioc_line(const struct feed_line *l, int index, struct wb_ioc_feed *f);
void feed_ioc_counters(const struct feed_counters *c, struct wb_ioc_counters *o);
/* A user's feed-map request, checked (reserved zero, a 1-7 character name). */
int feed_ioc_entry(const struct wb_ioc_feed *f, struct feed_map_entry *m);
/* WB_IOC_TRADING_DATE: 0 or -FEED_EINVAL. */
int feed_ioc_trading_date(struct feed_engine *e, const struct wb_ioc_date *d);
/* WB_IOC_FEED_DEL's key, checked (reserved zero, an address): 0 or -FEED_EINVAL. */
int feed_ioc_feed_key(const struct wb_ioc_feed *f);
/* A subscription's ticker, checked (1-8 characters, NUL-terminated): its
 * length, or -FEED_EINVAL. */
int feed_ioc_ticker(const struct wb_ioc_symbol *s);

/*
 * The list ioctls' entries: each fills at most cap entries of out and
 * returns how many there are (which may be more than cap).
 */
uint32_t feed_ioc_feed_list(const struct feed_engine *e, struct wb_ioc_feed *out, uint32_t cap);
uint32_t feed_ioc_sub_list(const struct feed_engine *e, struct wb_ioc_symbol *out, uint32_t cap);
uint32_t feed_ioc_line_stats(const struct feed_engine *e, struct wb_ioc_line_stats *out,
			     uint32_t cap);
/*
 * The same in steps, for a caller with a lock per venue: the lines without
 * their counters (the map held still: every map change is the caller's),
 * then the counters of venue's lines among the n listed, under its lock.
 */
uint32_t feed_ioc_line_list(const struct feed_engine *e, struct wb_ioc_line_stats *out,
			    uint32_t cap);
void feed_ioc_line_counters(const struct feed_engine *e, int venue, struct wb_ioc_line_stats *out,
			    uint32_t n);
/* One stream of feed_recovery_list() as WB_IOC_RECOVERY_LIST gives it. */
void feed_ioc_recovery(const struct feed_engine *e, const struct feed_recovery_stream *s,
		       struct wb_ioc_recovery *o);
/* WB_IOC_STATS_RESET's part in the engine: every line's counters to zero. */
void feed_ioc_stats_reset(struct feed_engine *e);
/* The same for one venue's lines, under its lock. */
void feed_ioc_stats_reset_venue(struct feed_engine *e, int venue);

/*
 * Gap recovery (WB_IOC_REC_*): each checks its request (reserved words
 * zero, a line of the feed map, a length in bounds) and makes the engine
 * call; 0 or a negative FEED_E* code. Events go to out, stamped now.
 * feed_ioc_rec_enable allocates: never call it under a lock (it takes its
 * venue's itself, through feed_engine_config.lock_venue, to swap buffers).
 * The others run under the lock of the line's venue. payload: the request's bytes, already
 * copied in (len as the request says).
 */
int feed_ioc_rec_enable(struct feed_engine *e, const struct wb_ioc_rec_enable *r);
void feed_ioc_rec_stream(const struct feed_recovery_stream *s, struct wb_ioc_rec_stream *o);
int feed_ioc_rec_list_check(const struct wb_ioc_rec_list *r);
int feed_ioc_rec_packet_check(const struct wb_ioc_rec_packet *r);
int feed_ioc_rec_packet(struct feed_engine *e, const struct wb_ioc_rec_packet *r,
			const uint8_t *payload, uint64_t now, struct wb_ring_producer *out);
int feed_ioc_rec_lost(struct feed_engine *e, const struct wb_ioc_rec_lost *r, uint64_t now,
		      struct wb_ring_producer *out);
int feed_ioc_rec_snapshot_check(const struct wb_ioc_rec_snapshot *r);
int feed_ioc_rec_snapshot(struct feed_engine *e, const struct wb_ioc_rec_snapshot *r,
			  const uint8_t *payload, uint64_t now, struct wb_ring_producer *out);

/* A negative FEED_E* code as a negative errno. */
int feed_ioc_errno(int rc);

#endif /* WIREBOOK_FEED_IOC_H */
