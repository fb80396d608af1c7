/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Raw ITCH 5.0 message printer for wb-dump --raw (see itch_text.h). */
#include "common/itch_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/event_text.h"
#include "wirebook/event.h"

static const uint8_t type_length[128] = {
	['S'] = 12, ['R'] = 39, ['H'] = 25, ['Y'] = 20, ['L'] = 26, ['V'] = 35,
	['W'] = 12, ['K'] = 28, ['J'] = 35, ['h'] = 21, ['A'] = 36, ['F'] = 40,
	['E'] = 31, ['C'] = 36, ['X'] = 23, ['D'] = 19, ['U'] = 35, ['P'] = 44,
	['Q'] = 40, ['B'] = 19, ['I'] = 50, ['N'] = 20, ['O'] = 48,
};

/* Offset of the 8-byte Stock field per type; 0 = none. */
static const uint8_t stock_offset[128] = {
	['R'] = 11, ['H'] = 11, ['Y'] = 11, ['L'] = 15, ['K'] = 11, ['J'] = 11,
	['h'] = 11, ['A'] = 24, ['F'] = 24, ['P'] = 24, ['Q'] = 19, ['I'] = 28,
	['N'] = 11, ['O'] = 11,
};

uint32_t itch_message_length(uint8_t type)
{
	return type < 128 ? type_length[type] : 0;
}

const uint8_t *itch_message_stock(const uint8_t *m, uint32_t len)
{
	uint8_t off;

	if (len < 1 || m[0] >= 128 || len < type_length[m[0]])
		return NULL;
	off = stock_offset[m[0]];
	return off ? m + off : NULL;
}

struct line {
	char *buf;
	size_t n, len;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	size_t room = l->len < l->n ? l->n - l->len : 0;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(room ? l->buf + l->len : NULL, room, fmt, ap);
	va_end(ap);
	if (w > 0)
		l->len += (size_t)w;
}

static uint64_t be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* An alpha field, trailing spaces dropped, unprintable bytes escaped. */
static void alpha(struct line *l, const char *name, const uint8_t *p, int width)
{
	int n = width;

	while (n > 0 && p[n - 1] == ' ')
		n--;
	put(l, " %s%s", name, *name ? "=" : "");
	for (int i = 0; i < n; i++) {
		if (p[i] > 0x20 && p[i] < 0x7f)
			put(l, "%c", p[i]);
		else
			put(l, "\\x%02x", p[i]);
	}
}

static void chr(struct line *l, const char *name, uint8_t c)
{
	if (c > 0x20 && c < 0x7f)
		put(l, " %s=%c", name, c);
	else
		put(l, " %s=\\x%02x", name, c);
}

static void num(struct line *l, const char *name, const uint8_t *p, int bytes)
{
	put(l, " %s=%" PRIu64, name, be(p, bytes));
}

/* Price(4) or Price(8) as decimal dollars. */
static void price(struct line *l, const char *name, const uint8_t *p, int bytes)
{
	char tmp[32];
	uint64_t raw = be(p, bytes);

	/* Price(4) -> 1e-8 scale; Price(8) already is. */
	wb_price_format(bytes == 4 ? (int64_t)raw * 10000 : (int64_t)raw, tmp, sizeof(tmp));
	if (strcmp(name, "@") == 0)
		put(l, " @ %s", tmp);
	else
		put(l, " %s=%s", name, tmp);
}

size_t itch_message_format(const uint8_t *m, uint32_t len, uint64_t seq, char *buf, size_t n)
{
	struct line l = { buf, n, 0 };
	char ts[32];
	uint8_t t;

	if (n)
		buf[0] = 0;
	if (len < 1) {
		put(&l, "%" PRIu64 " (empty message)", seq);
		return l.len;
	}
	t = m[0];
	if (t >= 128 || !type_length[t]) {
		put(&l, "%" PRIu64 " unknown type 0x%02x length %u", seq, t, len);
		return l.len;
	}
	if (len < type_length[t]) {
		put(&l, "%" PRIu64 " %c truncated: %u bytes, type needs %u", seq, t, len,
		    type_length[t]);
		return l.len;
	}
	wb_time_format(be(m + 5, 6), ts, sizeof(ts));
	put(&l, "%" PRIu64 " %s %c locate=%u track=%u", seq, ts, t, (unsigned)be(m + 1, 2),
	    (unsigned)be(m + 3, 2));

	switch (t) {
	case 'S':
		chr(&l, "event", m[11]);
		break;
	case 'R':
		alpha(&l, "", m + 11, 8);
		chr(&l, "market", m[19]);
		chr(&l, "fsi", m[20]);
		num(&l, "lot", m + 21, 4);
		chr(&l, "lots_only", m[25]);
		chr(&l, "class", m[26]);
		alpha(&l, "subtype", m + 27, 2);
		chr(&l, "auth", m[29]);
		chr(&l, "ssti", m[30]);
		chr(&l, "ipo", m[31]);
		chr(&l, "luld_tier", m[32]);
		chr(&l, "etp", m[33]);
		num(&l, "leverage", m + 34, 4);
		chr(&l, "inverse", m[38]);
		break;
	case 'H':
		alpha(&l, "", m + 11, 8);
		chr(&l, "state", m[19]);
		alpha(&l, "reason", m + 21, 4);
		break;
	case 'Y':
		alpha(&l, "", m + 11, 8);
		chr(&l, "regsho", m[19]);
		break;
	case 'L':
		alpha(&l, "mpid", m + 11, 4);
		alpha(&l, "", m + 15, 8);
		chr(&l, "primary", m[23]);
		chr(&l, "mode", m[24]);
		chr(&l, "state", m[25]);
		break;
	case 'V':
		price(&l, "level1", m + 11, 8);
		price(&l, "level2", m + 19, 8);
		price(&l, "level3", m + 27, 8);
		break;
	case 'W':
		chr(&l, "breached", m[11]);
		break;
	case 'K':
		alpha(&l, "", m + 11, 8);
		num(&l, "release_s", m + 19, 4);
		chr(&l, "qualifier", m[23]);
		price(&l, "ipo_price", m + 24, 4);
		break;
	case 'J':
		alpha(&l, "", m + 11, 8);
		price(&l, "ref", m + 19, 4);
		price(&l, "upper", m + 23, 4);
		price(&l, "lower", m + 27, 4);
		num(&l, "extension", m + 31, 4);
		break;
	case 'h':
		alpha(&l, "", m + 11, 8);
		chr(&l, "market", m[19]);
		chr(&l, "action", m[20]);
		break;
	case 'A':
	case 'F':
		num(&l, "ref", m + 11, 8);
		put(&l, " %c %" PRIu64, m[19], be(m + 20, 4));
		alpha(&l, "", m + 24, 8);
		price(&l, "@", m + 32, 4);
		if (t == 'F')
			alpha(&l, "mpid", m + 36, 4);
		break;
	case 'E':
		num(&l, "ref", m + 11, 8);
		num(&l, "executed", m + 19, 4);
		num(&l, "match", m + 23, 8);
		break;
	case 'C':
		num(&l, "ref", m + 11, 8);
		num(&l, "executed", m + 19, 4);
		num(&l, "match", m + 23, 8);
		chr(&l, "printable", m[31]);
		price(&l, "price", m + 32, 4);
		break;
	case 'X':
		num(&l, "ref", m + 11, 8);
		num(&l, "cancelled", m + 19, 4);
		break;
	case 'D':
		num(&l, "ref", m + 11, 8);
		break;
	case 'U':
		num(&l, "ref", m + 11, 8);
		num(&l, "new_ref", m + 19, 8);
		num(&l, "shares", m + 27, 4);
		price(&l, "price", m + 31, 4);
		break;
	case 'P':
		num(&l, "ref", m + 11, 8);
		put(&l, " %c %" PRIu64, m[19], be(m + 20, 4));
		alpha(&l, "", m + 24, 8);
		price(&l, "@", m + 32, 4);
		num(&l, "match", m + 36, 8);
		break;
	case 'Q':
		num(&l, "shares", m + 11, 8);
		alpha(&l, "", m + 19, 8);
		price(&l, "price", m + 27, 4);
		num(&l, "match", m + 31, 8);
		chr(&l, "cross", m[39]);
		break;
	case 'B':
		num(&l, "match", m + 11, 8);
		break;
	case 'I':
		num(&l, "paired", m + 11, 8);
		num(&l, "imbalance", m + 19, 8);
		chr(&l, "direction", m[27]);
		alpha(&l, "", m + 28, 8);
		price(&l, "far", m + 36, 4);
		price(&l, "near", m + 40, 4);
		price(&l, "ref", m + 44, 4);
		chr(&l, "cross", m[48]);
		chr(&l, "variation", m[49]);
		break;
	case 'N':
		alpha(&l, "", m + 11, 8);
		chr(&l, "interest", m[19]);
		break;
	case 'O':
		alpha(&l, "", m + 11, 8);
		chr(&l, "eligible", m[19]);
		price(&l, "min", m + 20, 4);
		price(&l, "max", m + 24, 4);
		price(&l, "near", m + 28, 4);
		num(&l, "near_time", m + 32, 8);
		price(&l, "lower_collar", m + 40, 4);
		price(&l, "upper_collar", m + 44, 4);
		break;
	}
	if (len > type_length[t])
		put(&l, " (+%u extra bytes)", len - type_length[t]);
	return l.len;
}
