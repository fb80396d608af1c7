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
/* A negative FEED_E* code as a negative errno. */
int feed_ioc_errno(int rc);

#endif /* WIREBOOK_FEED_IOC_H */
