/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The Cboe equities PITCH groups (see cboe_groups.h). */
#include "common/cboe_groups.h"

#include "wirebook/event.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

/*
 * One distribution ("shape") of a market in a data centre: its realtime
 * groups for units 4k+1..4k+4 are rt + stride * (k - first), k from first
 * to first + count - 1, and its gap-response groups the same from gap.
 */
struct cboe_shape {
	uint8_t venue;
	uint32_t rt, gap;
	uint8_t stride, first, count;
};

static const struct cboe_shape shapes[] = {
	/* BZX: NJ2 GIG A (units 25-32 further on), WAN C, GIG B, WAN D; NY5 GIG A,
	 * WAN C, GIG B, WAN D; CH4 WAN E */
	{ WB_VENUE_BZX, IP(224, 0, 62, 2), IP(224, 0, 62, 3), 2, 0, 6 },
	{ WB_VENUE_BZX, IP(224, 0, 62, 30), IP(224, 0, 62, 31), 2, 6, 2 },
	{ WB_VENUE_BZX, IP(224, 0, 62, 14), IP(224, 0, 62, 15), 2, 0, 8 },
	{ WB_VENUE_BZX, IP(233, 19, 3, 128), IP(233, 19, 3, 129), 2, 0, 8 },
	{ WB_VENUE_BZX, IP(233, 19, 3, 144), IP(233, 19, 3, 145), 2, 0, 8 },
	{ WB_VENUE_BZX, IP(224, 0, 130, 128), IP(224, 0, 130, 144), 1, 0, 8 },
	{ WB_VENUE_BZX, IP(224, 0, 130, 160), IP(224, 0, 130, 176), 1, 0, 8 },
	{ WB_VENUE_BZX, IP(233, 209, 92, 128), IP(233, 209, 92, 144), 1, 0, 8 },
	{ WB_VENUE_BZX, IP(233, 209, 92, 160), IP(233, 209, 92, 176), 1, 0, 8 },
	{ WB_VENUE_BZX, IP(233, 19, 3, 80), IP(233, 19, 3, 81), 2, 0, 8 },
	/* BYX: the same shapes */
	{ WB_VENUE_BYX, IP(224, 0, 62, 192), IP(224, 0, 62, 193), 2, 0, 8 },
	{ WB_VENUE_BYX, IP(224, 0, 62, 208), IP(224, 0, 62, 209), 2, 0, 8 },
	{ WB_VENUE_BYX, IP(233, 19, 3, 192), IP(233, 19, 3, 193), 2, 0, 8 },
	{ WB_VENUE_BYX, IP(233, 19, 3, 208), IP(233, 19, 3, 209), 2, 0, 8 },
	{ WB_VENUE_BYX, IP(224, 0, 130, 192), IP(224, 0, 130, 208), 1, 0, 8 },
	{ WB_VENUE_BYX, IP(224, 0, 130, 224), IP(224, 0, 130, 240), 1, 0, 8 },
	{ WB_VENUE_BYX, IP(233, 209, 92, 192), IP(233, 209, 92, 208), 1, 0, 8 },
	{ WB_VENUE_BYX, IP(233, 209, 92, 224), IP(233, 209, 92, 240), 1, 0, 8 },
	{ WB_VENUE_BYX, IP(233, 19, 3, 112), IP(233, 19, 3, 113), 2, 0, 8 },
	/* EDGA: NY5 GIG A, WAN C, GIG B, WAN D; CH4 WAN E */
	{ WB_VENUE_EDGA, IP(224, 0, 130, 0), IP(224, 0, 130, 16), 1, 0, 8 },
	{ WB_VENUE_EDGA, IP(224, 0, 130, 32), IP(224, 0, 130, 48), 1, 0, 8 },
	{ WB_VENUE_EDGA, IP(233, 209, 92, 0), IP(233, 209, 92, 16), 1, 0, 8 },
	{ WB_VENUE_EDGA, IP(233, 209, 92, 32), IP(233, 209, 92, 48), 1, 0, 8 },
	{ WB_VENUE_EDGA, IP(233, 19, 3, 48), IP(233, 19, 3, 49), 2, 0, 8 },
	/* EDGX: the same */
	{ WB_VENUE_EDGX, IP(224, 0, 130, 64), IP(224, 0, 130, 80), 1, 0, 8 },
	{ WB_VENUE_EDGX, IP(224, 0, 130, 96), IP(224, 0, 130, 112), 1, 0, 8 },
	{ WB_VENUE_EDGX, IP(233, 209, 92, 64), IP(233, 209, 92, 80), 1, 0, 8 },
	{ WB_VENUE_EDGX, IP(233, 209, 92, 96), IP(233, 209, 92, 112), 1, 0, 8 },
	{ WB_VENUE_EDGX, IP(233, 19, 3, 64), IP(233, 19, 3, 65), 2, 0, 8 },
};

/* The range index k of ip in the shape's groups from base, or -1. */
static int range_of(const struct cboe_shape *s, uint32_t base, uint32_t ip)
{
	uint32_t d = ip - base;

	if (ip < base || d % s->stride || d / s->stride >= s->count)
		return -1;
	return s->first + (int)(d / s->stride);
}

bool cboe_group_lookup(uint32_t ip, int *venue, int *first_unit)
{
	for (unsigned i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		int k = range_of(&shapes[i], shapes[i].rt, ip);

		if (k < 0)
			k = range_of(&shapes[i], shapes[i].gap, ip);
		if (k >= 0) {
			*venue = shapes[i].venue;
			*first_unit = 4 * k + 1;
			return true;
		}
	}
	return false;
}
