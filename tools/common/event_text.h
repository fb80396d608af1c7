/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The one text form of a normalized event, shared by wb-dump, the tests
 * and the kernel VM test, so any two producers of the same input can be
 * compared with diff.
 *
 * One line, no trailing newline, deterministic: the same event always
 * gives the same bytes. The receive time (recv_ts) is left out on purpose:
 * it is the only field that differs between a pcap replay and the kernel
 * hook seeing the same packets. Layout:
 *
 *   <seq> <exch time> <venue>/<line> i=<instrument> <KIND> <kind fields> [f=<flags>]
 *
 * KIND is wb_event_kind_name() (lib/feed).
 *
 *   14757721 09:29:59.999894278 nasdaq/0 i=3 ADD ref=23508286 B 1600 @ 87.39
 *   14757722 09:29:59.999934561 nasdaq/0 i=7 EXEC ref=23499418 qty=25 match=255547
 *   1 04:00:00.000000000 nasdaq/0 i=3 SYMBOL AAPL locate=13 lot=100 mkt=Q
 *
 * Tickers are not looked up here: the SYMBOL event of an instrument names
 * it (and precedes its first event), so a reader joins on i=<instrument>.
 * Prices are printed in dollars from the 1e-8 fixed point with integer
 * math: at least 2 and at most 8 decimals, trailing zeros trimmed.
 */
#ifndef WIREBOOK_TOOLS_EVENT_TEXT_H
#define WIREBOOK_TOOLS_EVENT_TEXT_H

#include <stddef.h>
#include "wirebook/event.h"

/*
 * Format ev into buf (at most n bytes, always NUL-terminated when n > 0).
 * Returns the length the full line has, like snprintf: a return >= n
 * means the line was cut. 256 bytes always suffice.
 */
size_t wb_event_format(const struct wb_event *ev, char *buf, size_t n);

/* A price in 1e-8 dollars as text ("87.39", "-0.0001"); returns the length. */
size_t wb_price_format(int64_t price, char *buf, size_t n);

/* A time as the US/Eastern wall clock, HH:MM:SS.nnnnnnnnn: epoch ns (event.h), or
 * ns since midnight (times below a day, as ITCH carries them). */
size_t wb_time_format(uint64_t ns, char *buf, size_t n);

#define WB_EVENT_TEXT_MAX 256

/* A bounded appender: keeps counting past the end like snprintf does. */
struct text_out {
	char *buf;
	size_t n;
	size_t len;
};

void text_printf(struct text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* WIREBOOK_TOOLS_EVENT_TEXT_H */
