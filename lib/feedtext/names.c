/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The feed engine in words: protocol and venue names as feeds.conf and the
 * tools write them, event kind and feed-map problem texts, and a feeds.conf
 * line parsed into a feed-map entry.
 * User space only (lib/feedtext: never built into the module); what the
 * module also needs (feed_venue_name, feed_error_name) stays in engine.c.
 */
#include "feed/feed_internal.h"

static const char *const map_problems[FEED_MAP_PROBLEM_COUNT] = {
	[FEED_MAP_OK] = "ok",
	[FEED_MAP_FEW_COLUMNS] = "not an entry \"ADDR:PORT PROTOCOL VENUE LINE [channel=N]\"",
	[FEED_MAP_BAD_ADDRESS] = "bad ADDR:PORT (an IPv4 address and a port 1-65535)",
	[FEED_MAP_BAD_PROTOCOL] = "unknown protocol",
	[FEED_MAP_BAD_VENUE] = "unknown venue",
	[FEED_MAP_VENUE_NOT_SERVED] = "the protocol cannot serve this venue",
	[FEED_MAP_BAD_LINE_NAME] = "bad line name (1-7 printable characters)",
	[FEED_MAP_BAD_OPTION] = "unknown option (only channel=N, N 1-65535)",
};

static const char *const kind_names[WB_EV_KIND_COUNT] = {
	[WB_EV_NONE] = "NONE",		[WB_EV_ADD] = "ADD",
	[WB_EV_EXECUTE] = "EXEC",	[WB_EV_EXECUTE_AT_PRICE] = "EXECP",
	[WB_EV_REDUCE] = "REDUCE",	[WB_EV_DELETE] = "DELETE",
	[WB_EV_REPLACE] = "REPLACE",	[WB_EV_MODIFY] = "MODIFY",
	[WB_EV_TRADE] = "TRADE",	[WB_EV_TRADE_BREAK] = "BREAK",
	[WB_EV_QUOTE] = "QUOTE",	[WB_EV_STATUS] = "STATUS",
	[WB_EV_CLEAR] = "CLEAR",	[WB_EV_SYMBOL] = "SYMBOL",
	[WB_EV_GAP] = "GAP",		[WB_EV_NBBO] = "NBBO",
	[WB_EV_LULD] = "LULD",
};

const char *feed_protocol_name(int protocol)
{
	const struct feed_proto *p = feed_protocol_get(protocol);

	return p ? p->name : protocol == FEED_PROTO_NONE ? "none" : "?";
}

const char *feed_protocol_title(int protocol)
{
	const struct feed_proto *p = feed_protocol_get(protocol);

	return p ? p->title : "?";
}

void feed_protocol_venue_list(int protocol, char *buf, size_t len)
{
	uint32_t venues = feed_protocol_venues(protocol);
	size_t n = 0;
	int v;

	if (!len)
		return;
	for (v = 1; v < FEED_SOURCE_COUNT; v++) {
		const char *name = feed_venue_name(v);

		if (!(venues & (1u << v)))
			continue;
		if (n && n + 2 < len) {
			buf[n++] = ',';
			buf[n++] = ' ';
		}
		while (*name && n + 1 < len)
			buf[n++] = *name++;
	}
	buf[n] = 0;
}

const char *feed_map_problem_text(int problem)
{
	if (problem < 0 || problem >= FEED_MAP_PROBLEM_COUNT)
		return "?";
	return map_problems[problem];
}

const char *wb_event_kind_name(int kind)
{
	if (kind < 0 || kind >= WB_EV_KIND_COUNT)
		return "?";
	return kind_names[kind];
}

/* ---- small freestanding string helpers ---------------------------------- */

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static bool word_equals(const char *s, size_t len, const char *word)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!word[i] || lower((unsigned char)s[i]) != word[i])
			return false;
	return word[len] == 0;
}

int feed_protocol_parse(const char *s, size_t len)
{
	int p;

	for (p = FEED_PROTO_NONE + 1; p < FEED_PROTO_COUNT; p++)
		if (word_equals(s, len, feed_protocol_get(p)->name))
			return p;
	return -FEED_EINVAL;
}

int feed_venue_parse(const char *s, size_t len)
{
	int v;

	for (v = 1; v < FEED_SOURCE_COUNT; v++)
		if (word_equals(s, len, feed_venue_name(v)))
			return v;
	return -FEED_EINVAL;
}

/* ---- feeds.conf lines ----------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Next whitespace-separated token of [*pos, len); false at the end or a comment. */
static bool next_token(const char *s, size_t len, size_t *pos, const char **tok, size_t *tlen)
{
	size_t i = *pos, start;

	while (i < len && is_space(s[i]))
		i++;
	if (i >= len || s[i] == '#' || s[i] == 0)
		return false;
	start = i;
	while (i < len && !is_space(s[i]) && s[i] != '#' && s[i] != 0)
		i++;
	*tok = s + start;
	*tlen = i - start;
	*pos = i;
	return true;
}

static bool parse_uint(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;

	if (!len || len > 10)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (max - (uint32_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

static bool parse_ipv4_port(const char *s, size_t len, uint32_t *ip, uint16_t *port)
{
	uint32_t addr = 0, part, p;
	size_t i = 0, start;
	int octets = 0;

	while (octets < 4) {
		start = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (!parse_uint(s + start, i - start, 255, &part))
			return false;
		addr = addr << 8 | part;
		octets++;
		if (octets < 4) {
			if (i >= len || s[i] != '.')
				return false;
			i++;
		}
	}
	if (i >= len || s[i] != ':')
		return false;
	i++;
	if (!parse_uint(s + i, len - i, 65535, &p) || !p || !addr)
		return false;
	*ip = addr;
	*port = (uint16_t)p;
	return true;
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t i;

	for (i = 0; prefix[i]; i++)
		if (i >= len || lower((unsigned char)s[i]) != prefix[i])
			return false;
	return true;
}

int feed_map_parse_line(const char *text, size_t len, struct feed_map_entry *out, int *problem)
{
	const char *tok;
	size_t tlen, pos = 0;
	int n, protocol, venue;
	uint32_t channel;

	__builtin_memset(out, 0, sizeof(*out));
	*problem = FEED_MAP_OK;
	for (n = 0; next_token(text, len, &pos, &tok, &tlen); n++) {
		switch (n) {
		case 0:
			if (!parse_ipv4_port(tok, tlen, &out->ip, &out->port))
				*problem = FEED_MAP_BAD_ADDRESS;
			break;
		case 1:
			protocol = feed_protocol_parse(tok, tlen);
			if (protocol < 0)
				*problem = FEED_MAP_BAD_PROTOCOL;
			else
				out->protocol = (uint8_t)protocol;
			break;
		case 2:
			venue = feed_venue_parse(tok, tlen);
			if (venue < 0)
				*problem = FEED_MAP_BAD_VENUE;
			else
				out->venue = (uint8_t)venue;
			break;
		case 3:
			if (tlen >= FEED_LINE_NAME_LEN)
				*problem = FEED_MAP_BAD_LINE_NAME;
			else
				__builtin_memcpy(out->name, tok, tlen);
			break;
		default:
			if (!starts_with(tok, tlen, "channel=") ||
			    !parse_uint(tok + 8, tlen - 8, FEED_MAX_CHANNEL, &channel) || !channel)
				*problem = FEED_MAP_BAD_OPTION;
			else
				out->channel = (uint16_t)channel;
			break;
		}
		if (*problem)
			return -FEED_EINVAL;
	}
	if (n == 0)
		return 0;
	if (n < 4) {
		*problem = FEED_MAP_FEW_COLUMNS;
		return -FEED_EINVAL;
	}
	if (!(feed_protocol_venues(out->protocol) & (1u << out->venue))) {
		*problem = FEED_MAP_VENUE_NOT_SERVED;
		return -FEED_EINVAL;
	}
	return 1;
}
