/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Strict option values (see options.h). */
#include "common/options.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed/feed.h"

const char *opt_origin;

static int bad(const char *prog, const char *opt, const char *val, const char *expect)
{
	fprintf(stderr, "%s: %s%s%s '%s': %s\n", prog, opt_origin ? opt_origin : "",
		opt_origin ? ": " : "", opt, val ? val : "", expect);
	return -1;
}

int opt_choice(const char *prog, const char *opt, const char *val, const char *const *choices,
	       int *out)
{
	char expect[160] = "expected one of:";
	size_t len = strlen(expect);

	for (int i = 0; choices[i]; i++) {
		if (val && strcmp(val, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		len += (size_t)snprintf(expect + len, len < sizeof(expect) ? sizeof(expect) - len : 0,
					"%s %s", i ? "," : "", choices[i]);
	}
	return bad(prog, opt, val, expect);
}

int opt_u64(const char *prog, const char *opt, const char *val, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	char expect[128], *end;
	unsigned long long v;

	snprintf(expect, sizeof(expect), "expected a whole number from %" PRIu64 " to %" PRIu64,
		 min, max);
	/* strtoull accepts "-5" (as a huge value) and leading spaces: not we. */
	if (!val || !isdigit((unsigned char)val[0]))
		return bad(prog, opt, val, expect);
	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno || *end || end == val || v < min || v > max)
		return bad(prog, opt, val, expect);
	*out = v;
	return 0;
}

int opt_int(const char *prog, const char *opt, const char *val, int min, int max, int *out)
{
	char expect[128], *end;
	long v;

	snprintf(expect, sizeof(expect), "expected a whole number from %d to %d", min, max);
	if (!val || !(isdigit((unsigned char)val[0]) ||
		      (val[0] == '-' && isdigit((unsigned char)val[1]))))
		return bad(prog, opt, val, expect);
	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || *end || v < min || v > max)
		return bad(prog, opt, val, expect);
	*out = (int)v;
	return 0;
}

int opt_double(const char *prog, const char *opt, const char *val, double min, int min_exclusive,
	       double max, double *out)
{
	char expect[128], *end;
	double v;

	snprintf(expect, sizeof(expect), "expected a number %s %g and at most %g",
		 min_exclusive ? "greater than" : "of at least", min, max);
	if (!val || !(isdigit((unsigned char)val[0]) || val[0] == '.' ||
		      (val[0] == '-' && (isdigit((unsigned char)val[1]) || val[1] == '.'))))
		return bad(prog, opt, val, expect); /* also refuses "nan", "inf", " 1" */
	errno = 0;
	v = strtod(val, &end);
	if (errno || *end || !isfinite(v) || v < min || (min_exclusive && v == min) || v > max)
		return bad(prog, opt, val, expect);
	*out = v;
	return 0;
}

int opt_date(const char *prog, const char *opt, const char *val, int *year, int *month, int *day)
{
	char end;

	if (!val || sscanf(val, "%4d-%2d-%2d%c", year, month, day, &end) != 3 ||
	    !feed_et_midnight_of_date(*year, *month, *day))
		return bad(prog, opt, val, "expected a day of the calendar as YYYY-MM-DD (1970-01-02 "
			   "or later)");
	return 0;
}

int opt_list(const char *prog, const char *opt, const char *val)
{
	const char *p = val;

	if (!val || !*val)
		return bad(prog, opt, val, "expected a comma-separated list (e.g. AAPL,MSFT, or '*')");
	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 0)
			return bad(prog, opt, val, "an empty item in the list (two commas, or one at "
				   "an end)");
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int opt_cpu_pair(const char *prog, const char *opt, const char *val, int out[2])
{
	static const char expect[] = "expected one cpu or two different cpus 'A,B' (thread 1 on A)";
	char msg[160];
	cpu_set_t allowed;
	const char *p = val;
	int n = 0, k;

	if (!val || !*val)
		return bad(prog, opt, val, expect);
	while (n < 2) {
		char *end;
		long v;

		if (!isdigit((unsigned char)*p))
			return bad(prog, opt, val, expect);
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v >= CPU_SETSIZE)
			return bad(prog, opt, val, expect);
		out[n++] = (int)v;
		if (*end == 0)
			break;
		if (*end != ',' || n == 2)
			return bad(prog, opt, val, expect);
		p = end + 1;
	}
	if (n == 1)
		out[1] = out[0];
	else if (out[0] == out[1])
		return bad(prog, opt, val, "the two cpus must differ (give one cpu to put both "
					   "threads on it)");
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (k = 0; k < 2; k++)
			if (!CPU_ISSET(out[k], &allowed)) {
				snprintf(msg, sizeof(msg), "cpu %d is not one this process may run on "
					 "(see taskset -p %d or the unit's CPUAffinity)", out[k],
					 (int)getpid());
				return bad(prog, opt, val, msg);
			}
	return 0;
}
