/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The one time convention (event.h): exch_ts is ns since the Unix epoch.
 * ITCH and PITCH give time since midnight US/Eastern, so their decoders
 * add the epoch time of that midnight, computed here from a civil date or
 * from a receive time. Integer arithmetic only (freestanding, kernel).
 *
 * US/Eastern: UTC-5, or UTC-4 from the second Sunday of March at 02:00
 * local to the first Sunday of November at 02:00 local (the rule since
 * 2007; older dates are taken with the same rule, which is wrong for
 * 1987-2006 only around the transition weeks).
 */
#include "feed_internal.h"

#define SECONDS_PER_DAY 86400
#define NS_PER_SEC 1000000000ull
#define EST_OFFSET (-5 * 3600)
#define EDT_OFFSET (-4 * 3600)

/* Days from 1970-01-01 to a proleptic Gregorian date (Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The year of a day count (days since 1970-01-01). */
static int64_t year_of_days(int64_t z)
{
	int64_t era, doe, yoe, y, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	return mp >= 10 ? y + 1 : y;	/* months Jan, Feb belong to the next year */
}

/* 0 = Sunday; day 0 (1970-01-01) was a Thursday. */
static int64_t weekday(int64_t days)
{
	int64_t w = (days + 4) % 7;

	return w < 0 ? w + 7 : w;
}

/* The day of the n-th (1-based) Sunday of a month. */
static int64_t nth_sunday(int64_t year, int month, int n)
{
	int64_t first = days_from_civil(year, month, 1);

	return first + (7 - weekday(first)) % 7 + 7 * (n - 1);
}

static int32_t offset_at_s(int64_t t)
{
	int64_t days = t >= 0 ? t / SECONDS_PER_DAY : (t - SECONDS_PER_DAY + 1) / SECONDS_PER_DAY;
	int64_t year = year_of_days(days);
	/* 02:00 EST is 07:00 UTC; 02:00 EDT is 06:00 UTC. */
	int64_t start = nth_sunday(year, 3, 2) * SECONDS_PER_DAY + 7 * 3600;
	int64_t end = nth_sunday(year, 11, 1) * SECONDS_PER_DAY + 6 * 3600;

	return t >= start && t < end ? EDT_OFFSET : EST_OFFSET;
}

int32_t feed_et_offset_s(uint64_t utc_ns)
{
	return offset_at_s((int64_t)(utc_ns / NS_PER_SEC));
}

/* Epoch seconds of local midnight starting local day `day` (days since 1970-01-01). */
static int64_t midnight_of_local_day(int64_t day)
{
	int64_t local = day * SECONDS_PER_DAY;

	/* The offset in force at local midnight: clocks change at 02:00, so
	 * it is the offset of the hours before, read at 05:00 UTC. */
	return local - offset_at_s(local - EST_OFFSET);
}

uint64_t feed_et_midnight_ns(uint64_t utc_ns)
{
	int64_t t = (int64_t)(utc_ns / NS_PER_SEC);
	int64_t local = t + offset_at_s(t);
	int64_t day = local / SECONDS_PER_DAY;

	if (day < 1)
		return 0;
	return (uint64_t)midnight_of_local_day(day) * NS_PER_SEC;
}

uint64_t feed_et_midnight_of_date(int year, int month, int day)
{
	static const uint8_t month_days[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	int64_t days;

	if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 ||
	    day > month_days[month - 1] || (month == 2 && day == 29 && !leap))
		return 0;
	days = days_from_civil(year, month, day);
	if (days < 1)
		return 0;
	return (uint64_t)midnight_of_local_day(days) * NS_PER_SEC;
}
