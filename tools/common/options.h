/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Strict option values for every tool: the whole string must be a number
 * in the accepted range ("-5", "abc", "12x", "nan", "inf" and overflow
 * are refused). On a bad value the parser prints one line naming the
 * program, the option, the value and the accepted range, and returns -1;
 * tools then exit 2 (bad usage).
 *
 *   if (opt_u64("wirebookd", "--expected-orders", optarg, 1, 1u << 30, &n) < 0)
 *           return 2;
 */
#ifndef WIREBOOK_TOOLS_OPTIONS_H
#define WIREBOOK_TOOLS_OPTIONS_H

#include <stdint.h>

/* Where the value being checked came from ("FILE:LINE" of a config
 * file), printed before the option; NULL: the command line. */
extern const char *opt_origin;

/* Decimal, or 0x hex; min <= value <= max. */
int opt_u64(const char *prog, const char *opt, const char *val, uint64_t min, uint64_t max,
	    uint64_t *out);
int opt_int(const char *prog, const char *opt, const char *val, int min, int max, int *out);
/* A finite decimal number with min <= value <= max; min_exclusive makes
 * the lower bound strict ("a positive factor"). */
int opt_double(const char *prog, const char *opt, const char *val, double min, int min_exclusive,
	       double max, double *out);
/* A day of the calendar, YYYY-MM-DD, 1970-01-02 or later (a trading day). */
int opt_date(const char *prog, const char *opt, const char *val, int *year, int *month, int *day);
/*
 * A comma-separated list of names ("AAPL,MSFT", "*"): refuses an empty
 * value and empty items ("", ",", "A,,B"), which would silently select
 * nothing.
 */
int opt_list(const char *prog, const char *opt, const char *val);
/* One of the words of choices (NULL-terminated); *out its index. */
int opt_choice(const char *prog, const char *opt, const char *val, const char *const *choices,
	       int *out);
/*
 * Two distinct cpus "A,B" (thread 1 on A) that this process may run on,
 * or one "A" (both threads there). Refuses repeats, ranges and cpus
 * outside the process's affinity mask, saying which.
 */
int opt_cpu_pair(const char *prog, const char *opt, const char *val, int out[2]);

#endif /* WIREBOOK_TOOLS_OPTIONS_H */
