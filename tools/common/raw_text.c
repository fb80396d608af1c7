/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The raw message printer for wb-dump --raw (see raw_text.h). */
#include "common/raw_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/event_text.h"

static uint64_t field_uint(const uint8_t *p, int width, bool big_endian)
{
	uint64_t v = 0;

	for (int i = 0; i < width; i++)
		v |= (uint64_t)p[big_endian ? i : width - 1 - i] << 8 * (width - 1 - i);
	return v;
}

static int64_t field_int(const uint8_t *p, int width, bool big_endian)
{
	uint64_t v = field_uint(p, width, big_endian);

	if (width < 8 && (v >> (8 * width - 1)) & 1)
		v |= ~0ull << 8 * width;
	return (int64_t)v;
}

static void put_name(struct text_out *l, const char *name)
{
	if (!*name)
		text_printf(l, " ");
	else if (!strcmp(name, "@"))
		text_printf(l, " @ ");
	else
		text_printf(l, " %s=", name);
}

/* Text, trailing spaces and NULs dropped, unprintable bytes escaped. */
static void put_text(struct text_out *l, const uint8_t *p, int width)
{
	int n = width;

	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == 0))
		n--;
	for (int i = 0; i < n; i++) {
		if (p[i] > 0x20 && p[i] < 0x7f)
			text_printf(l, "%c", p[i]);
		else
			text_printf(l, "\\x%02x", p[i]);
	}
}

static void put_field(struct text_out *l, const struct feed_field *f, const uint8_t *m, bool be)
{
	const uint8_t *p = m + f->offset;
	char tmp[48];

	put_name(l, f->name);
	switch (f->type) {
	case FEED_FIELD_UINT:
		text_printf(l, "%" PRIu64, field_uint(p, f->width, be));
		break;
	case FEED_FIELD_INT:
		text_printf(l, "%" PRId64, field_int(p, f->width, be));
		break;
	case FEED_FIELD_CHAR:
		if (p[0] > 0x20 && p[0] < 0x7f)
			text_printf(l, "%c", p[0]);
		else
			text_printf(l, "\\x%02x", p[0]);
		break;
	case FEED_FIELD_TEXT:
		put_text(l, p, f->width);
		break;
	case FEED_FIELD_PRICE: {
		int64_t raw = f->sign ? field_int(p, f->width, be) : (int64_t)field_uint(p, f->width, be);
		int64_t scale = 1;

		/* To the event scale (1e-8); prices of 8 or more decimals print as is. */
		for (int d = f->decimals; d < 8; d++)
			scale *= 10;
		wb_price_format(raw * scale, tmp, sizeof(tmp));
		text_printf(l, "%s", tmp);
		break;
	}
	case FEED_FIELD_TIME:
		wb_time_format(field_uint(p, f->width, be), tmp, sizeof(tmp));
		text_printf(l, "%s", tmp);
		break;
	case FEED_FIELD_EPOCH_S:
		wb_time_format(field_uint(p, f->width, be) * 1000000000ull, tmp, sizeof(tmp));
		text_printf(l, "%s", tmp);
		break;
	case FEED_FIELD_EPOCH_NS:
		wb_time_format(field_uint(p, f->width, be), tmp, sizeof(tmp));
		text_printf(l, "%s", tmp);
		break;
	default:
		for (int i = 0; i < f->width; i++)
			text_printf(l, "%02x", p[i]);
		break;
	}
}

/* The message's fields, then those of each trailing part, then what is left over. */
static void put_message(struct text_out *l, int protocol, const uint8_t *m, uint32_t len)
{
	const struct feed_msg_layout *lay = feed_raw_layout(protocol, m, len);
	bool be = feed_raw_big_endian(protocol);
	struct feed_raw_part parts[FEED_RAW_MAX_PARTS];
	uint32_t end;
	int nparts;

	if (!len) {
		text_printf(l, " (empty message)");
		return;
	}
	if (!lay) {
		text_printf(l, " unknown type 0x%02" PRIx32 " length %u",
			    feed_raw_type(protocol, m, len), len);
		return;
	}
	if (len < lay->min_len) {
		text_printf(l, " %s truncated: %u bytes, type needs %u", lay->name, len,
			    lay->min_len);
		return;
	}
	for (int i = 0; i < lay->nfields; i++)
		put_field(l, &lay->fields[i], m, be);
	end = lay->min_len;
	nparts = feed_raw_parts(protocol, m, len, parts, FEED_RAW_MAX_PARTS);
	for (int k = 0; k < nparts; k++) {
		for (int i = 0; i < parts[k].layout->nfields; i++)
			put_field(l, &parts[k].layout->fields[i], m + parts[k].offset, be);
		end = parts[k].offset + parts[k].layout->min_len;
	}
	if (len > end)
		text_printf(l, " (+%u extra bytes)", len - end);
}

size_t raw_message_format(int protocol, const uint8_t *m, uint32_t len, uint64_t seq, char *buf,
			  size_t n)
{
	struct text_out l = { buf, n, 0 };

	if (n)
		buf[0] = 0;
	text_printf(&l, "%" PRIu64, seq);
	put_message(&l, protocol, m, len);
	return l.len;
}

size_t raw_fields_format(int protocol, const uint8_t *m, uint32_t len, char *buf, size_t n)
{
	struct text_out l = { buf, n, 0 };

	if (n)
		buf[0] = 0;
	put_message(&l, protocol, m, len);
	return l.len;
}

uint64_t raw_message_ticker(int protocol, const uint8_t *m, uint32_t len, uint32_t *symbol_key,
			    int *has_symbol_key)
{
	const struct feed_msg_layout *lay = feed_raw_layout(protocol, m, len);
	bool be = feed_raw_big_endian(protocol);
	uint64_t ticker = 0;

	*has_symbol_key = 0;
	if (!lay || len < lay->min_len)
		return 0;
	for (int i = 0; i < lay->nfields; i++) {
		const struct feed_field *f = &lay->fields[i];
		const uint8_t *p = m + f->offset;

		if (f->role == FEED_ROLE_SYMBOL_KEY) {
			*symbol_key = (uint32_t)field_uint(p, f->width, be);
			*has_symbol_key = 1;
		} else if (f->role == FEED_ROLE_TICKER) {
			char t[9];
			int w = f->width < 8 ? f->width : 8;

			memcpy(t, p, (size_t)w);
			while (w > 0 && (t[w - 1] == ' ' || t[w - 1] == 0))
				w--;
			ticker = feed_ticker_key(t, (size_t)w);
			/* A symbol longer than a key (CQS, UQDF: 11 bytes) names no ticker. */
			for (int k = 8; k < f->width; k++)
				if (p[k] != ' ' && p[k] != 0)
					ticker = 0;
		}
	}
	return ticker;
}
