/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The feed engine: feed map, subscriptions, frame parsing and dispatch to
 * the protocol decoders. Freestanding (see feed.h).
 */
#include "feed_internal.h"

static const struct feed_protocol_ops *const protocol_ops[FEED_PROTO_COUNT] = {
	[FEED_PROTO_ITCH50] = &feed_itch50_ops,
	[FEED_PROTO_PITCH] = &feed_pitch_ops,
};

static const char *const protocol_names[FEED_PROTO_COUNT] = {
	[FEED_PROTO_NONE] = "none",
	[FEED_PROTO_ITCH50] = "itch",
	[FEED_PROTO_PITCH] = "pitch",
};

static const char *const venue_names[WB_VENUE_COUNT] = {
	[WB_VENUE_NONE] = "none",	  [WB_VENUE_NASDAQ] = "nasdaq",
	[WB_VENUE_BZX] = "bzx",		  [WB_VENUE_BYX] = "byx",
	[WB_VENUE_EDGX] = "edgx",	  [WB_VENUE_EDGA] = "edga",
	[WB_VENUE_NYSE] = "nyse",	  [WB_VENUE_ARCA] = "arca",
	[WB_VENUE_AMERICAN] = "american", [WB_VENUE_NATIONAL] = "national",
	[WB_VENUE_TEXAS] = "texas",	  [WB_VENUE_BX] = "bx",
	[WB_VENUE_PSX] = "psx",		  [WB_VENUE_IEX] = "iex",
	[WB_VENUE_MEMX] = "memx",	  [WB_VENUE_MIAX] = "miax",
	[WB_VENUE_LTSE] = "ltse",	  [WB_VENUE_ISE] = "ise",
	[WB_VENUE_CBOE] = "cboe",	  [WB_VENUE_24X] = "24x",
	[WB_VENUE_TXSE] = "txse",	  [WB_VENUE_FINRA] = "finra",
};

static const char *const error_names[FEED_ERR_COUNT] = {
	[FEED_ERR_TRUNCATED] = "truncated",
	[FEED_ERR_BAD_LENGTH] = "bad_length",
	[FEED_ERR_UNKNOWN_TYPE] = "unknown_type",
	[FEED_ERR_BAD_FIELD] = "bad_field",
	[FEED_ERR_UNKNOWN_LOCATE] = "unknown_locate",
	[FEED_ERR_NOT_MULTICAST] = "not_multicast",
	[FEED_ERR_BAD_FRAME] = "bad_frame",
};

static const char *const kind_names[WB_EV_KIND_COUNT] = {
	[WB_EV_NONE] = "NONE",		[WB_EV_ADD] = "ADD",
	[WB_EV_EXECUTE] = "EXEC",	[WB_EV_EXECUTE_AT_PRICE] = "EXECP",
	[WB_EV_REDUCE] = "REDUCE",	[WB_EV_DELETE] = "DELETE",
	[WB_EV_REPLACE] = "REPLACE",	[WB_EV_MODIFY] = "MODIFY",
	[WB_EV_TRADE] = "TRADE",	[WB_EV_TRADE_BREAK] = "BREAK",
	[WB_EV_QUOTE] = "QUOTE",	[WB_EV_STATUS] = "STATUS",
	[WB_EV_CLEAR] = "CLEAR",	[WB_EV_SYMBOL] = "SYMBOL",
	[WB_EV_GAP] = "GAP",
};

const char *feed_protocol_name(int protocol)
{
	if (protocol < 0 || protocol >= FEED_PROTO_COUNT)
		return "?";
	return protocol_names[protocol];
}

const char *feed_venue_name(int venue)
{
	if (venue < 0 || venue >= WB_VENUE_COUNT)
		return "?";
	return venue_names[venue];
}

const char *feed_error_name(int err)
{
	if (err < 0 || err >= FEED_ERR_COUNT)
		return "?";
	return error_names[err];
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
	if (word_equals(s, len, "itch") || word_equals(s, len, "itch50"))
		return FEED_PROTO_ITCH50;
	if (word_equals(s, len, "pitch"))
		return FEED_PROTO_PITCH;
	return -FEED_EINVAL;
}

int feed_venue_parse(const char *s, size_t len)
{
	int v;

	for (v = 1; v < WB_VENUE_COUNT; v++)
		if (word_equals(s, len, venue_names[v]))
			return v;
	return -FEED_EINVAL;
}

/* ---- engine lifetime ---------------------------------------------------- */

int feed_engine_init(struct feed_engine *e, const struct feed_engine_config *cfg)
{
	if (!cfg || !cfg->alloc || !cfg->free)
		return -FEED_EINVAL;
	__builtin_memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	if (!e->cfg.order_filter_capacity)
		e->cfg.order_filter_capacity = 1u << 20;
	e->last_line = -1;
	return 0;
}

void feed_engine_destroy(struct feed_engine *e)
{
	int v;

	for (v = 0; v < WB_VENUE_COUNT; v++) {
		if (e->venue_state[v])
			e->cfg.free(e->venue_state[v]);
		e->venue_state[v] = 0;
	}
}

void feed_engine_reset_state(struct feed_engine *e)
{
	int v;

	for (v = 0; v < WB_VENUE_COUNT; v++)
		if (e->venue_state[v])
			protocol_ops[e->venue_protocol[v]]->state_reset(e->venue_state[v]);
}

/* ---- feed map ------------------------------------------------------------ */

int feed_map_lookup(struct feed_engine *e, uint32_t ip, uint16_t port)
{
	int i = e->last_line;

	if (i >= 0 && e->lines[i].ip == ip && e->lines[i].port == port)
		return i;
	for (i = 0; i < (int)e->line_count; i++) {
		if (e->lines[i].ip == ip && e->lines[i].port == port) {
			e->last_line = i;
			return i;
		}
	}
	return -1;
}

int feed_map_add(struct feed_engine *e, uint32_t ip, uint16_t port, int protocol, int venue,
		 const char *name)
{
	struct feed_line *line;
	int i, slot = -1;
	size_t n;

	if (!ip || !port || protocol <= FEED_PROTO_NONE || protocol >= FEED_PROTO_COUNT ||
	    venue <= WB_VENUE_NONE || venue >= WB_VENUE_COUNT || !name)
		return -FEED_EINVAL;
	for (n = 0; n < FEED_LINE_NAME_LEN && name[n]; n++)
		if (name[n] <= ' ' || name[n] > '~')
			return -FEED_EINVAL;
	if (n == 0 || n == FEED_LINE_NAME_LEN)
		return -FEED_EINVAL;
	if (feed_map_lookup(e, ip, port) >= 0)
		return -FEED_EEXIST;
	if (e->venue_state[venue] && e->venue_protocol[venue] != protocol)
		return -FEED_EPROTO;
	for (i = 0; i < FEED_MAX_LINES; i++) {
		if (!e->lines[i].ip) {
			slot = i;
			break;
		}
	}
	if (slot < 0)
		return -FEED_ENOSPC;
	if (!e->venue_state[venue]) {
		const struct feed_protocol_ops *ops = protocol_ops[protocol];
		void *state = e->cfg.alloc(ops->state_size(&e->cfg));

		if (!state)
			return -FEED_ENOMEM;
		ops->state_init(state, &e->cfg);
		e->venue_state[venue] = state;
		e->venue_protocol[venue] = (uint8_t)protocol;
	}
	line = &e->lines[slot];
	__builtin_memset(line, 0, sizeof(*line));
	line->port = port;
	line->protocol = (uint8_t)protocol;
	line->venue = (uint8_t)venue;
	__builtin_memcpy(line->name, name, n);
	/* The address goes last: a zero ip marks a free entry. */
	line->ip = ip;
	if ((uint32_t)slot >= e->line_count)
		e->line_count = slot + 1;
	return slot;
}

int feed_map_remove(struct feed_engine *e, uint32_t ip, uint16_t port)
{
	int i = feed_map_lookup(e, ip, port);

	if (i < 0)
		return -FEED_ENOENT;
	e->lines[i].ip = 0;
	e->lines[i].port = 0;
	e->last_line = -1;
	while (e->line_count && !e->lines[e->line_count - 1].ip)
		e->line_count--;
	return 0;
}

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

int feed_map_parse_line(const char *text, size_t len, uint32_t *ip, uint16_t *port,
			int *protocol, int *venue, char name[FEED_LINE_NAME_LEN])
{
	const char *tok[4], *extra;
	size_t tlen[4], extralen, pos = 0;
	int n;

	for (n = 0; n < 4; n++)
		if (!next_token(text, len, &pos, &tok[n], &tlen[n]))
			break;
	if (n == 0)
		return 0;
	if (n < 4 || next_token(text, len, &pos, &extra, &extralen))
		return -FEED_EINVAL;
	if (!parse_ipv4_port(tok[0], tlen[0], ip, port))
		return -FEED_EINVAL;
	*protocol = feed_protocol_parse(tok[1], tlen[1]);
	*venue = feed_venue_parse(tok[2], tlen[2]);
	if (*protocol < 0 || *venue < 0 || tlen[3] >= FEED_LINE_NAME_LEN)
		return -FEED_EINVAL;
	__builtin_memset(name, 0, FEED_LINE_NAME_LEN);
	__builtin_memcpy(name, tok[3], tlen[3]);
	return 1;
}

/* ---- subscriptions ------------------------------------------------------- */

#define SUBS_HASH_SLOTS (2 * FEED_MAX_INSTRUMENTS)

static bool ticker_char_ok(char c)
{
	return c > ' ' && c <= '~' && c != '*' && c != ',';
}

uint64_t feed_ticker_key(const char *ticker, size_t len)
{
	uint8_t b[8];
	size_t i;

	if (!len || len > 8)
		return 0;
	for (i = 0; i < 8; i++) {
		if (i < len) {
			if (!ticker_char_ok(ticker[i]))
				return 0;
			b[i] = (uint8_t)ticker[i];
		} else {
			b[i] = ' ';
		}
	}
	return feed_le64(b);
}

void feed_ticker_text(uint64_t key, char out[9])
{
	int i, end = 0;

	for (i = 0; i < 8; i++) {
		char c = (char)(key >> (8 * i));

		out[i] = (c >= ' ' && c <= '~') ? c : '?';
		if (out[i] != ' ')
			end = i + 1;
	}
	out[end] = 0;
}

static uint32_t subs_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 49) & (SUBS_HASH_SLOTS - 1);
}

static uint16_t subs_find(const struct feed_subs *s, uint64_t key)
{
	uint32_t h = subs_hash(key);

	for (;;) {
		uint16_t id = s->hash[h];

		if (!id)
			return 0;
		if (s->ticker[id] == key)
			return id;
		h = (h + 1) & (SUBS_HASH_SLOTS - 1);
	}
}

/* The id of key, handing out a new one if needed; 0 when the table is full. */
static uint16_t subs_intern(struct feed_subs *s, uint64_t key)
{
	uint32_t h = subs_hash(key);
	uint16_t id;

	for (;;) {
		id = s->hash[h];
		if (!id)
			break;
		if (s->ticker[id] == key)
			return id;
		h = (h + 1) & (SUBS_HASH_SLOTS - 1);
	}
	if (s->count + 1 >= FEED_MAX_INSTRUMENTS)
		return 0;
	id = (uint16_t)++s->count;
	s->ticker[id] = key;
	s->hash[h] = id;
	return id;
}

int feed_subscribe(struct feed_engine *e, const char *ticker, size_t len)
{
	uint64_t key;
	uint16_t id;

	if (len == 1 && ticker[0] == '*') {
		e->subs.all = true;
		e->subs.generation++;
		return 0;
	}
	key = feed_ticker_key(ticker, len);
	if (!key)
		return -FEED_EINVAL;
	id = subs_intern(&e->subs, key);
	if (!id)
		return -FEED_ENOSPC;
	e->subs.subscribed[id] = 1;
	e->subs.generation++;
	return id;
}

int feed_unsubscribe(struct feed_engine *e, const char *ticker, size_t len)
{
	uint64_t key;
	uint16_t id;

	if (len == 1 && ticker[0] == '*') {
		if (!e->subs.all)
			return -FEED_ENOENT;
		e->subs.all = false;
		e->subs.generation++;
		return 0;
	}
	key = feed_ticker_key(ticker, len);
	if (!key)
		return -FEED_EINVAL;
	id = subs_find(&e->subs, key);
	if (!id || !e->subs.subscribed[id])
		return -FEED_ENOENT;
	e->subs.subscribed[id] = 0;
	e->subs.generation++;
	return 0;
}

uint16_t feed_instrument_for_key(struct feed_engine *e, uint64_t key)
{
	uint16_t id = subs_find(&e->subs, key);

	if (id)
		return (e->subs.all || e->subs.subscribed[id]) ? id : 0;
	return e->subs.all ? subs_intern(&e->subs, key) : 0;
}

/* ---- packet path --------------------------------------------------------- */

void feed_emit_gap(struct feed_packet *pk, uint64_t first, uint64_t count, uint8_t unit)
{
	struct wb_event *ev;

	pk->counters->gaps++;
	pk->counters->gap_messages += count;
	ev = feed_emit(pk, WB_EV_GAP, 0, first, 0);
	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.gap.first = first;
	ev->u.gap.count = count;
	ev->u.gap.unit = unit;
	ev->u.gap.reason = WB_GAP_SEQUENCE;
	feed_commit(pk);
}

void feed_emit_clear(struct feed_packet *pk, uint64_t seq, uint64_t exch_ts, uint8_t flags)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_CLEAR, 0, seq, exch_ts);

	if (!ev)
		return;
	ev->flags = flags;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	feed_commit(pk);
}

void feed_process_payload(struct feed_engine *e, int line, const uint8_t *payload,
			  uint32_t len, uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct feed_line *l;
	struct feed_packet pk;
	uint64_t head, dropped;

	if (wb_unlikely(line < 0 || line >= FEED_MAX_LINES))
		return;
	l = &e->lines[line];
	if (wb_unlikely(!l->ip))
		return;
	pk.engine = e;
	pk.line = l;
	pk.counters = &l->counters;
	pk.state = e->venue_state[l->venue];
	pk.out = out;
	pk.recv_ts = recv_ts;
	pk.line_index = (uint16_t)line;
	pk.venue = l->venue;
	head = out->head;
	dropped = out->dropped;
	l->counters.packets++;
	l->counters.bytes += len;
	protocol_ops[l->protocol]->packet(&pk, payload, len);
	l->counters.events += out->head - head;
	l->counters.ring_drops += out->dropped - dropped;
}

#define ETH_HLEN_ 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IPPROTO_UDP_ 17

int feed_process_frame(struct feed_engine *e, const uint8_t *frame, uint32_t len,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t off = 12, ihl, ip_total, udp_len;
	uint16_t ethertype;
	const uint8_t *ip, *udp;
	int line;

	if (len < ETH_HLEN_)
		return -1;
	ethertype = feed_be16(frame + off);
	off += 2;
	while ((ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ) && off + 4 <= len) {
		ethertype = feed_be16(frame + off + 2);
		off += 4;
	}
	if (ethertype != ETHERTYPE_IPV4 || off + 20 > len)
		return -1;
	ip = frame + off;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != IPPROTO_UDP_)
		return -1;
	line = feed_map_lookup(e, feed_be32(ip + 16), off + ihl + 4 <= len ?
			       feed_be16(ip + ihl + 2) : 0);
	if (line < 0)
		return -1;
	ip_total = feed_be16(ip + 2);
	/* Fragments and frames shorter than their headers say cannot be decoded. */
	if ((feed_be16(ip + 6) & 0x3fff) || ip_total < ihl + 8 || off + ip_total > len) {
		e->lines[line].counters.errors[FEED_ERR_BAD_FRAME]++;
		return line;
	}
	udp = ip + ihl;
	udp_len = feed_be16(udp + 4);
	if (udp_len < 8 || udp_len > ip_total - ihl) {
		e->lines[line].counters.errors[FEED_ERR_BAD_FRAME]++;
		return line;
	}
	feed_process_payload(e, line, udp + 8, udp_len - 8, recv_ts, out);
	return line;
}
