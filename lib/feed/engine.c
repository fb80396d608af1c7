/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The feed engine: feed map, subscriptions, frame parsing and dispatch to
 * the protocol decoders. Freestanding (see feed.h).
 */
#include "feed_internal.h"

static const struct feed_proto *const protocols[FEED_PROTO_COUNT] = {
#define FEED_PROTOCOL_ROW(id, stem) [FEED_PROTO_##id] = &feed_proto_##stem,
	FEED_PROTOCOLS(FEED_PROTOCOL_ROW)
#undef FEED_PROTOCOL_ROW
};

const struct feed_proto *feed_protocol_get(int protocol)
{
	if (protocol <= FEED_PROTO_NONE || protocol >= FEED_PROTO_COUNT)
		return 0;
	return protocols[protocol];
}

static const char *const venue_names[FEED_SOURCE_COUNT] = {
	[WB_VENUE_NONE] = "none",
#define FEED_VENUE_NAME_ROW(id, value, name) [WB_VENUE_##id] = name,
	WB_VENUES(FEED_VENUE_NAME_ROW)
#undef FEED_VENUE_NAME_ROW
	[FEED_SOURCE_CQS] = "cqs",
	[FEED_SOURCE_UQDF] = "uqdf",
};

static const char *const error_names[FEED_ERR_COUNT] = {
	[FEED_ERR_TRUNCATED] = "truncated",
	[FEED_ERR_BAD_LENGTH] = "bad_length",
	[FEED_ERR_UNKNOWN_TYPE] = "unknown_type",
	[FEED_ERR_BAD_FIELD] = "bad_field",
	[FEED_ERR_UNKNOWN_SYMBOL] = "unknown_symbol",
	[FEED_ERR_NOT_MULTICAST] = "not_multicast",
	[FEED_ERR_BAD_FRAME] = "bad_frame",
	[FEED_ERR_BAD_COUNT] = "bad_count",
	[FEED_ERR_BAD_CHECKSUM] = "bad_checksum",
	[FEED_ERR_RECOVERY] = "recovery",
};

uint32_t feed_protocol_venues(int protocol)
{
	const struct feed_proto *p = feed_protocol_get(protocol);

	return p ? p->venues : 0;
}

const char *feed_venue_name(int venue)
{
	if (venue < 0 || venue >= FEED_SOURCE_COUNT)
		return "?";
	return venue_names[venue];
}

const char *feed_error_name(int err)
{
	if (err < 0 || err >= FEED_ERR_COUNT)
		return "?";
	return error_names[err];
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
	if (!e->cfg.hold_packets)
		e->cfg.hold_packets = 16;
	e->last_line = -1;
	e->any_line = -1;
	return 0;
}

static void venue_free(struct feed_engine *e, struct feed_venue *v)
{
	if (v->state)
		e->cfg.free(v->state);
	feed_directory_free(&v->dir, &e->cfg);
	e->cfg.free(v);
}

static void group_free(struct feed_engine *e, struct feed_group *g)
{
	if (g->hold)
		e->cfg.free(g->hold);
	e->cfg.free(g);
}

void feed_engine_destroy(struct feed_engine *e)
{
	int i;

	for (i = 0; i < FEED_SOURCE_COUNT; i++) {
		if (e->venue[i])
			venue_free(e, e->venue[i]);
		e->venue[i] = 0;
	}
	for (i = 0; i < FEED_MAX_LINES; i++) {
		if (e->group[i])
			group_free(e, e->group[i]);
		e->group[i] = 0;
	}
}

static void group_reset(struct feed_group *g)
{
	__builtin_memset(g->stream, 0, (size_t)g->units * sizeof(g->stream[0]));
	feed_hold_init(g);
	g->holes = 0;
	g->recovering = 0;
}

void feed_engine_reset_state(struct feed_engine *e)
{
	int i;

	for (i = 0; i < FEED_SOURCE_COUNT; i++) {
		struct feed_venue *v = e->venue[i];

		if (!v)
			continue;
		feed_protocol_get(v->protocol)->state_reset(v->state);
		feed_directory_clear(&v->dir);
		v->holes = 0;
		v->session_seen = false;
		v->midnight_ns = FEED_MIDNIGHT_UNKNOWN;
		__builtin_memset(v->announced, 0, sizeof(v->announced));
		__builtin_memset(v->stream_of, 0, sizeof(v->stream_of));
	}
	for (i = 0; i < FEED_MAX_LINES; i++)
		if (e->group[i])
			group_reset(e->group[i]);
}

static void set_trading_midnight(struct feed_engine *e, uint64_t midnight)
{
	int i;

	e->trading_day_ns = midnight;
	for (i = 0; i < FEED_SOURCE_COUNT; i++)
		if (e->venue[i])
			e->venue[i]->midnight_ns = FEED_MIDNIGHT_UNKNOWN;
}

int feed_engine_set_trading_date(struct feed_engine *e, int year, int month, int day)
{
	uint64_t midnight = year ? feed_et_midnight_of_date(year, month, day) : 0;

	if (year && !midnight)
		return -FEED_EINVAL;
	set_trading_midnight(e, midnight);
	return 0;
}

int feed_engine_set_trading_day_of(struct feed_engine *e, uint64_t utc_ns)
{
	uint64_t midnight = feed_et_midnight_ns(utc_ns);

	if (!midnight)
		return -FEED_EINVAL;
	set_trading_midnight(e, midnight);
	return 0;
}

/*
 * A receive time within the first day of the epoch is no wall clock (a
 * synthetic capture's times since midnight, or none): exch_ts stays a time
 * since midnight, and the day is learned from the first real clock.
 */
#define FEED_FIRST_WALL_CLOCK_NS (86400ull * 1000000000ull)

uint64_t feed_venue_learn_midnight(struct feed_packet *pk)
{
	struct feed_venue *v = pk->v;

	if (pk->engine->trading_day_ns)
		v->midnight_ns = pk->engine->trading_day_ns;
	else if (pk->recv_ts >= FEED_FIRST_WALL_CLOCK_NS)
		v->midnight_ns = feed_et_midnight_ns(pk->recv_ts);
	else
		return 0;
	return v->midnight_ns;
}

/* ---- feed map -------------------------------------------------------------- */

/*
 * Is line i exactly (ip, port)? A free entry has ip 0, which no line has.
 * Read without a lock by feed_route_frame, while the control path may
 * change the map (under every venue lock): each field is read once, whole,
 * and what it finds is checked again under the venue's lock.
 */
static inline bool line_is(const struct feed_engine *e, int i, uint32_t ip, uint16_t port)
{
	const struct feed_line *l = &e->lines[i];

	return wb_load_relaxed(&l->ip) == ip && wb_load_relaxed(&l->port) == port &&
	       !wb_load_relaxed(&l->any);
}

/*
 * The line of exactly (ip, port), or -1. hint (may be NULL): the caller's
 * cache of the last line found, tried first.
 */
static int exact_lookup(const struct feed_engine *e, uint32_t ip, uint16_t port, int *hint)
{
	int i = hint ? *hint : -1, n = (int)wb_load_relaxed(&e->line_count);

	if (i >= 0 && i < FEED_MAX_LINES && line_is(e, i, ip, port))
		return i;
	for (i = 0; i < n && i < FEED_MAX_LINES; i++) {
		if (line_is(e, i, ip, port)) {
			if (hint)
				*hint = i;
			return i;
		}
	}
	return -1;
}

int feed_map_lookup(const struct feed_engine *e, uint32_t ip, uint16_t port)
{
	int i = exact_lookup(e, ip, port, 0);

	return i >= 0 ? i : e->any_line;
}

static struct feed_venue *venue_new(struct feed_engine *e, const struct feed_proto *proto,
				    int protocol)
{
	struct feed_venue *v = e->cfg.alloc(sizeof(*v));

	if (!v)
		return 0;
	v->protocol = (uint8_t)protocol;
	v->midnight_ns = FEED_MIDNIGHT_UNKNOWN;
	v->state = e->cfg.alloc(proto->state_size(&e->cfg));
	if (!v->state || feed_directory_init(&v->dir, proto->directory_keys, &e->cfg) < 0) {
		venue_free(e, v);
		return 0;
	}
	proto->state_init(v->state, &e->cfg);
	return v;
}

/* The group of (venue, channel), or -1 and a free index in *slot. */
static int group_find(const struct feed_engine *e, int venue, uint16_t channel, int *slot)
{
	int i;

	*slot = -1;
	for (i = 0; i < FEED_MAX_LINES; i++) {
		const struct feed_group *g = e->group[i];

		if (g && g->venue == venue && g->channel == channel)
			return i;
		if (!g && *slot < 0)
			*slot = i;
	}
	return -1;
}

static struct feed_group *group_new(struct feed_engine *e, const struct feed_proto *proto,
				    int protocol, int venue, uint16_t channel, int id)
{
	uint32_t units = proto->units ? proto->units : 1;
	struct feed_group *g = e->cfg.alloc(sizeof(*g) + units * sizeof(g->stream[0]));

	if (!g)
		return 0;
	g->hold = e->cfg.alloc((size_t)e->cfg.hold_packets * sizeof(*g->hold));
	if (!g->hold) {
		group_free(e, g);
		return 0;
	}
	g->hold_slots = e->cfg.hold_packets;
	feed_hold_init(g);
	g->venue = (uint8_t)venue;
	g->protocol = (uint8_t)protocol;
	g->channel = channel;
	g->units = (uint16_t)units;
	g->id = (uint8_t)id;
	return g;
}

/* Every venue's lock (feed_engine_config): a feed-map change. */
static void lock_all(struct feed_engine *e)
{
	if (e->cfg.lock)
		e->cfg.lock();
}

static void unlock_all(struct feed_engine *e)
{
	if (e->cfg.unlock)
		e->cfg.unlock();
}

/*
 * Everything is allocated first, outside the locks (the module's packet
 * path takes them); every venue's lock only covers publishing the new line.
 */
int feed_map_add_entry(struct feed_engine *e, const struct feed_map_entry *m)
{
	const struct feed_proto *proto = feed_protocol_get(m->protocol);
	struct feed_venue *new_venue = 0;
	struct feed_group *g, *new_group = 0;
	struct feed_line *line;
	int i, slot = -1, gi, gslot;
	size_t n;

	if (!proto || m->venue <= WB_VENUE_NONE || m->venue >= FEED_SOURCE_COUNT)
		return -FEED_EINVAL;
	if (m->any ? (m->ip || m->port) : (!m->ip || !m->port))
		return -FEED_EINVAL;
	for (n = 0; n < FEED_LINE_NAME_LEN && m->name[n]; n++)
		if (m->name[n] <= ' ' || m->name[n] > '~')
			return -FEED_EINVAL;
	if (n == 0 || n == FEED_LINE_NAME_LEN)
		return -FEED_EINVAL;
	if (!(proto->venues & (1u << m->venue)))
		return -FEED_EVENUE;
	if (m->any ? e->any_line >= 0 : exact_lookup(e, m->ip, m->port, 0) >= 0)
		return -FEED_EEXIST;
	if (e->venue[m->venue] && e->venue[m->venue]->protocol != m->protocol)
		return -FEED_EPROTO;
	for (i = 0; i < FEED_MAX_LINES; i++) {
		if (!feed_line_in_use(&e->lines[i])) {
			slot = i;
			break;
		}
	}
	if (slot < 0)
		return -FEED_ENOSPC;
	gi = group_find(e, m->venue, m->channel, &gslot);
	if (gi >= 0 && e->group[gi]->nlines == FEED_STREAM_MAX_LINES)
		return -FEED_ENOSPC;
	if (gi < 0 && gslot < 0)
		return -FEED_ENOSPC;
	if (!e->venue[m->venue]) {
		new_venue = venue_new(e, proto, m->protocol);
		if (!new_venue)
			return -FEED_ENOMEM;
	}
	if (gi < 0) {
		new_group = group_new(e, proto, m->protocol, m->venue, m->channel, gslot);
		if (!new_group) {
			if (new_venue)
				venue_free(e, new_venue);
			return -FEED_ENOMEM;
		}
	}

	lock_all(e);
	/* Its zeroed state before it, for the hole timer's lock-free look. */
	if (new_venue)
		wb_store_release(&e->venue[m->venue], new_venue);
	if (new_group)
		e->group[gslot] = new_group;
	g = new_group ? new_group : e->group[gi];
	line = &e->lines[slot];
	__builtin_memset(line, 0, sizeof(*line));
	line->port = m->port;
	line->protocol = m->protocol;
	line->venue = m->venue;
	line->channel = m->channel;
	line->group = g->id;
	line->group_line = g->nlines;
	g->line[g->nlines++] = (uint8_t)slot;
	__builtin_memcpy(line->name, m->name, n);
	/* The address goes last: a zero ip marks a free entry. */
	if (m->any) {
		line->any = true;
		e->any_line = slot;
	}
	wb_store_relaxed(&line->ip, m->ip);
	if ((uint32_t)slot >= e->line_count)
		wb_store_relaxed(&e->line_count, (uint32_t)slot + 1);
	unlock_all(e);
	return slot;
}

int feed_map_add(struct feed_engine *e, uint32_t ip, uint16_t port, int protocol, int venue,
		 const char *name)
{
	struct feed_map_entry m;
	size_t n;

	__builtin_memset(&m, 0, sizeof(m));
	if (protocol < 0 || protocol > 255 || venue < 0 || venue > 255 || !name)
		return -FEED_EINVAL;
	m.ip = ip;
	m.port = port;
	m.protocol = (uint8_t)protocol;
	m.venue = (uint8_t)venue;
	for (n = 0; n < FEED_LINE_NAME_LEN && name[n]; n++)
		m.name[n] = name[n];
	if (n == FEED_LINE_NAME_LEN)
		return -FEED_EINVAL;
	return feed_map_add_entry(e, &m);
}

int feed_map_remove(struct feed_engine *e, uint32_t ip, uint16_t port)
{
	int i = feed_map_lookup(e, ip, port), gi;
	struct feed_group *g, *gone = 0;
	struct feed_line *l;
	uint32_t k, j = 0;

	if (i < 0 || (e->lines[i].any && (ip || port)))
		return -FEED_ENOENT;
	l = &e->lines[i];
	gi = l->group;
	g = e->group[gi];
	lock_all(e);
	for (k = 0; k < g->nlines; k++)
		if (g->line[k] != i)
			g->line[j++] = g->line[k];
	g->nlines = (uint8_t)j;
	/* A line's place in the group changes: its arbitration history goes. */
	for (k = 0; k < g->units; k++)
		__builtin_memset(g->stream[k].line_next, 0, sizeof(g->stream[k].line_next));
	for (k = 0; k < g->nlines; k++)
		e->lines[g->line[k]].group_line = (uint8_t)k;
	if (!g->nlines) {
		gone = g;
		e->group[gi] = 0;
		e->venue[g->venue]->holes -= g->holes;
	}
	if (l->any)
		e->any_line = -1;
	wb_store_relaxed(&l->ip, 0);
	l->port = 0;
	l->any = false;
	e->last_line = -1;
	while (e->line_count && !e->lines[e->line_count - 1].ip &&
	       !e->lines[e->line_count - 1].any)
		wb_store_relaxed(&e->line_count, e->line_count - 1);
	unlock_all(e);
	if (gone)
		group_free(e, gone);
	return 0;
}

/* ---- subscriptions ------------------------------------------------------- */

#define SUBS_HASH_SLOTS (2 * FEED_MAX_INSTRUMENTS)

static bool ticker_char_ok(char c)
{
	return c > ' ' && c <= '~' && c != '*' && c != ',';
}

/*
 * Tickers are upper case on every feed, but for suffix letters in CQS
 * symbology (BACpB): a ticker with no upper-case letter at all ("aapl")
 * is taken in upper case; one in mixed case is kept as written.
 */
uint64_t feed_ticker_key(const char *ticker, size_t len)
{
	bool has_upper = false;
	uint8_t b[8];
	size_t i;

	if (!len || len > 8)
		return 0;
	for (i = 0; i < len; i++)
		has_upper |= ticker[i] >= 'A' && ticker[i] <= 'Z';
	for (i = 0; i < 8; i++) {
		if (i < len) {
			char c = ticker[i];

			if (!ticker_char_ok(c))
				return 0;
			if (!has_upper && c >= 'a' && c <= 'z')
				c = (char)(c - 32);
			b[i] = (uint8_t)c;
		} else {
			b[i] = ' ';
		}
	}
	return wire_le64(b);
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

/*
 * Lock-free: with '*', another venue's CPU may be interning a ticker
 * meanwhile (subs_intern). Its ticker is stored before its hash slot
 * (release), so a slot read with acquire names a ticker that is there.
 */
static uint16_t subs_find(const struct feed_subs *s, uint64_t key)
{
	uint32_t h = subs_hash(key);

	for (;;) {
		uint16_t id = wb_load_acquire(&s->hash[h]);

		if (!id)
			return 0;
		if (s->ticker[id] == key)
			return id;
		h = (h + 1) & (SUBS_HASH_SLOTS - 1);
	}
}

/*
 * The id of key, handing out a new one if needed; 0 when the table is full.
 * One writer at a time: the control path (every venue's lock) or '*' on the
 * packet path (the intern lock). The new id's ticker is stored before the
 * count and the hash slot that publish it to lock-free readers.
 */
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
	id = (uint16_t)(s->count + 1);
	s->ticker[id] = key;
	wb_store_release(&s->count, (uint32_t)id);
	wb_store_release(&s->hash[h], id);
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

/* '*' met a ticker new to the engine: every venue shares the table. */
static uint16_t intern_shared(struct feed_engine *e, uint64_t key)
{
	uint16_t id;

	if (e->cfg.lock_intern)
		e->cfg.lock_intern();
	id = subs_intern(&e->subs, key);
	if (e->cfg.unlock_intern)
		e->cfg.unlock_intern();
	return id;
}

uint16_t feed_instrument_for_key(struct feed_engine *e, uint64_t key)
{
	uint16_t id = subs_find(&e->subs, key);

	if (id)
		return (e->subs.all || e->subs.subscribed[id]) ? id : 0;
	return e->subs.all ? intern_shared(e, key) : 0;
}

/* ---- events -------------------------------------------------------------- */

static void emit_gap(struct feed_packet *pk, uint16_t inst, uint64_t first, uint64_t count,
		     uint8_t unit, uint8_t reason)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_GAP, inst, first, 0);

	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.gap.first = first;
	ev->u.gap.count = count;
	ev->u.gap.channel = pk->line->channel;
	ev->u.gap.unit = unit;
	ev->u.gap.reason = reason;
	feed_commit(pk);
}

void feed_emit_gap(struct feed_packet *pk, uint64_t first, uint64_t count, uint8_t unit)
{
	pk->counters->gaps++;
	pk->counters->gap_messages += count;
	emit_gap(pk, 0, first, count, unit, WB_GAP_SEQUENCE);
}

void feed_emit_instrument_gap(struct feed_packet *pk, uint16_t inst, uint64_t first,
			      uint64_t count, uint8_t unit, uint8_t reason)
{
	emit_gap(pk, inst, first, count, unit, reason);
}

void feed_emit_clear(struct feed_packet *pk, uint16_t inst, uint64_t seq, uint64_t exch_ts,
		     uint8_t flags)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_CLEAR, inst, seq, exch_ts);

	if (!ev)
		return;
	ev->flags = flags;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	feed_commit(pk);
}

void feed_clear_stream(struct feed_packet *pk, uint8_t unit, uint64_t seq, uint64_t exch_ts,
		       uint8_t flags)
{
	const struct feed_venue *v = pk->v;
	uint16_t id = feed_stream_id(pk->group, unit);
	uint32_t inst, count = feed_subs_count(pk->engine);

	for (inst = 1; inst <= count && inst < FEED_MAX_INSTRUMENTS; inst++)
		if (v->stream_of[inst] == id && feed_announced(v, (uint16_t)inst))
			feed_emit_clear(pk, (uint16_t)inst, seq, exch_ts, flags);
}

/* ---- packet path ---------------------------------------------------------- */

/* Inlined into feed_process_payload: a call a packet saved. */
static inline __attribute__((always_inline)) void
packet_init(struct feed_packet *pk, struct feed_engine *e, int line, uint64_t recv_ts,
	    struct wb_ring_producer *out)
{
	struct feed_line *l = &e->lines[line];

	pk->engine = e;
	pk->proto = protocols[l->protocol];
	pk->line = l;
	pk->counters = &l->counters;
	pk->v = e->venue[l->venue];
	pk->group = e->group[l->group];
	pk->state = pk->v->state;
	pk->out = out;
	pk->recv_ts = recv_ts;
	pk->line_index = (uint16_t)line;
	pk->venue = l->venue;
	feed_packet_midnight(pk);
}

void feed_packet_init(struct feed_packet *pk, struct feed_engine *e, int line,
		      uint64_t recv_ts, struct wb_ring_producer *out)
{
	packet_init(pk, e, line, recv_ts, out);
}

void feed_process_payload(struct feed_engine *e, int line, const uint8_t *payload,
			  uint32_t len, uint64_t recv_ts, struct wb_ring_producer *out)
{
	const struct feed_proto *proto;
	struct feed_packet pk;
	struct feed_frame f;
	uint64_t head, dropped;
	int err;

	if (wb_unlikely(line < 0 || line >= FEED_MAX_LINES))
		return;
	if (wb_unlikely(!feed_line_in_use(&e->lines[line])))
		return;
	packet_init(&pk, e, line, recv_ts, out);
	proto = pk.proto;
	head = out->head;
	dropped = out->dropped;
	pk.counters->packets++;
	pk.counters->bytes += len;
	if (wb_unlikely(pk.v->subs_generation != e->subs.generation))
		feed_venue_refresh(&pk);
	f.kind = FEED_FRAME_DATA;	/* a frame error may say UNSEQUENCED, no other kind */
	err = proto->frame(payload, len, &f);
	if (wb_likely(!err)) {
		if (wb_unlikely(f.length < len)) {
			feed_count_error(&pk, FEED_ERR_BAD_LENGTH);
			len = f.length;
		}
		feed_stream_packet(&pk, &f, payload, len);
	} else if (pk.line->any && f.kind == FEED_FRAME_UNSEQUENCED) {
		/* An anonymized capture decoded with --proto (sequence numbers
		 * zeroed): its messages, in the packet's order, on no stream. */
		pk.counters->unsequenced++;
		pk.v->session_seen = true;
		f.kind = FEED_FRAME_DATA;
		(void)proto->decode(&pk, payload, f.length < len ? f.length : len, &f, 0);
	} else {
		feed_count_error(&pk, FEED_FRAME_ERROR_OF(err));
	}
	pk.counters->events += out->head - head;
	pk.counters->ring_drops += out->dropped - dropped;
}

/*
 * Release holes of every group of venue (-1: of every venue; flush: all of
 * them, else those older than hold_ns).
 */
static void release(struct feed_engine *e, int venue, uint64_t now, bool flush,
		    struct wb_ring_producer *out)
{
	int i;

	for (i = 0; i < FEED_MAX_LINES; i++) {
		struct feed_group *g = e->group[i];
		struct feed_line *l;
		uint64_t head, dropped;

		if (!g || !g->holes || !g->nlines || (venue >= 0 && g->venue != venue))
			continue;
		l = &e->lines[g->line[0]];
		head = out->head;
		dropped = out->dropped;
		feed_group_release(e, g, now, flush, out);
		l->counters.events += out->head - head;
		l->counters.ring_drops += out->dropped - dropped;
	}
}

void feed_engine_poll(struct feed_engine *e, uint64_t now, struct wb_ring_producer *out)
{
	release(e, -1, now, false, out);
}

void feed_venue_poll(struct feed_engine *e, int venue, uint64_t now,
		     struct wb_ring_producer *out)
{
	if (venue > WB_VENUE_NONE && venue < FEED_SOURCE_COUNT && e->venue[venue])
		release(e, venue, now, false, out);
}

void feed_engine_flush(struct feed_engine *e, struct wb_ring_producer *out)
{
	release(e, -1, 0, true, out);
}

uint32_t feed_venue_holes(const struct feed_engine *e, int venue)
{
	const struct feed_venue *v;

	if (venue <= WB_VENUE_NONE || venue >= FEED_SOURCE_COUNT)
		return 0;
	v = wb_load_acquire(&e->venue[venue]);
	return v ? wb_load_relaxed(&v->holes) : 0;
}

uint32_t feed_engine_holes(const struct feed_engine *e)
{
	uint32_t n = 0;
	int v;

	for (v = WB_VENUE_NONE + 1; v < FEED_SOURCE_COUNT; v++)
		n += feed_venue_holes(e, v);
	return n;
}

#define ETH_HLEN_ 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IPPROTO_UDP_ 17

int feed_route_addr(const struct feed_engine *e, uint32_t ip, uint16_t port, int *hint,
		    struct feed_route *r)
{
	int line = exact_lookup(e, ip, port, hint);

	__builtin_memset(r, 0, sizeof(*r));
	r->ip = ip;
	r->port = port;
	if (line < 0)
		line = e->any_line;
	r->line = line;
	if (line >= 0)
		r->venue = wb_load_relaxed(&e->lines[line].venue);
	return line;
}

int feed_route_frame(const struct feed_engine *e, const uint8_t *frame, uint32_t len, int *hint,
		     struct feed_route *r)
{
	uint32_t off = 12, ihl, ip_total, udp_len;
	uint16_t ethertype;
	const uint8_t *ip, *udp;

	r->line = -1;
	if (len < ETH_HLEN_)
		return -1;
	ethertype = wire_be16(frame + off);
	off += 2;
	while ((ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ) && off + 4 <= len) {
		ethertype = wire_be16(frame + off + 2);
		off += 4;
	}
	if (ethertype != ETHERTYPE_IPV4 || off + 20 > len)
		return -1;
	ip = frame + off;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != IPPROTO_UDP_)
		return -1;
	if (feed_route_addr(e, wire_be32(ip + 16),
			    off + ihl + 4 <= len ? wire_be16(ip + ihl + 2) : 0, hint, r) < 0)
		return -1;
	ip_total = wire_be16(ip + 2);
	/* Fragments and frames shorter than their headers say cannot be decoded. */
	if ((wire_be16(ip + 6) & 0x3fff) || ip_total < ihl + 8 || off + ip_total > len) {
		r->bad_frame = true;
		return r->line;
	}
	udp = ip + ihl;
	udp_len = wire_be16(udp + 4);
	if (udp_len < 8 || udp_len > ip_total - ihl) {
		r->bad_frame = true;
		return r->line;
	}
	r->payload = udp + 8;
	r->len = udp_len - 8;
	return r->line;
}

bool feed_route_current(const struct feed_engine *e, const struct feed_route *r)
{
	const struct feed_line *l;

	if (r->line < 0 || r->line >= FEED_MAX_LINES)
		return false;
	l = &e->lines[r->line];
	if (!feed_line_in_use(l) || l->venue != r->venue)
		return false;
	return l->any || (l->ip == r->ip && l->port == r->port);
}

void feed_process_route(struct feed_engine *e, const struct feed_route *r, uint64_t recv_ts,
			struct wb_ring_producer *out)
{
	if (wb_unlikely(r->bad_frame)) {
		e->lines[r->line].counters.errors[FEED_ERR_BAD_FRAME]++;
		return;
	}
	feed_process_payload(e, r->line, r->payload, r->len, recv_ts, out);
}

int feed_process_frame(struct feed_engine *e, const uint8_t *frame, uint32_t len,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct feed_route r;

	if (feed_route_frame(e, frame, len, &e->last_line, &r) < 0)
		return -1;
	feed_process_route(e, &r, recv_ts, out);
	return r.line;
}
