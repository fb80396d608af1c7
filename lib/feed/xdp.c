/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * NYSE Integrated Feed (XDP framing, Pillar message set) for NYSE, NYSE
 * Arca, NYSE American, NYSE National and NYSE Texas. Little-endian
 * throughout. Layouts and semantics, with their sources, and what the
 * spec leaves open and what was learned beyond it:
 * docs/specs/nyse-xdp-notes.md, whose sections are cited below as
 * "notes: Framing".
 *
 * Framing (notes: Framing). A 16-byte packet header (PktSize, DeliveryFlag,
 * NumberMsgs, SeqNum, SendTime) and messages that each start with MsgSize
 * and MsgType. Every message is stepped over by its MsgSize, whatever its
 * type: unknown types are counted and skipped, longer known ones read up to
 * their known prefix. PktSize shorter than the datagram: the rest is
 * counted (bad_length) and ignored; longer: the packet is truncated.
 *
 * Sequencing is the shared layer's (stream.c): a stream is an XDP channel,
 * its lines (A, B) the feed map's lines of that channel. A Sequence Number
 * Reset (its own packet, SeqNum 1) restarts the channel without a gap; its
 * token is the message's SourceTime, so the B line's copy is no second
 * reset. A restart clears the channel's books (the spin or the failover
 * refresh that follows rebuilds them). A heartbeat's SeqNum is not defined
 * by the spec: heartbeats are counted and say nothing about the sequence.
 *
 * Filtering is by SymbolIndex: Symbol Index Mapping defines the index in
 * the venue's instrument cache (directory.c), with its price scale; every
 * other message names its index and passes with one load when subscribed.
 * Mapping messages are decoded whatever the subscriptions. A message
 * naming an index no mapping defined is counted (unknown_symbol) and
 * dropped: XDP messages do not carry the ticker to learn it from.
 *
 * Prices are i32 / 10^PriceScaleCode of the symbol's mapping, converted to
 * 1e-8 exactly. A mapping with a scale above 8 is counted (bad_field); that
 * symbol's priced messages are then counted and dropped, never given a
 * wrong price.
 *
 * Time. Messages with a SourceTime of their own use it; the others carry
 * only SourceTimeNS and take the seconds from the channel's latest Source
 * Time Reference. References are kept per channel and per ID; a channel
 * that has sent references of more than one ID dates a message by the
 * reference whose ID is the symbol's System ID (mapping), the spec's link.
 * After a gap or a reset of the channel, and before its first reference,
 * exch_ts is 0 (unknown): the reference for the next second may be in the
 * lost range.
 *
 * Book rules (notes: Control messages, Feed messages): Modify is flagged
 * keeps-priority, as the spec keeps priority when the price does not change; a
 * Modify to another price joins the back of its new level in every book, which
 * is the spec's loss of priority. An Execution takes its volume off the order,
 * whose remainder keeps the order's own price (EXECUTE_AT_PRICE carries the
 * execution price for the trade only). Replace gives the new order id a new
 * place. Add Order Refresh adds. Symbol Clear and Security Status 'X' clear
 * that symbol's books.
 *
 * Refresh (notes: Recovery; feed_snapshot_packet): packets led by a Refresh
 * Header restate one symbol as of its LastSeqNum; the channel's buffered
 * real-time messages of that symbol at or below it are skipped when the
 * snapshot ends (docs/specs/nyse-xdp-recovery-notes.md).
 *
 * Versions (notes: Versions): XDP 2.1 (the 2017 captures) and Pillar 2.5 differ
 * only in bytes this decoder never reads (parity splits, DBExecID/trade
 * conditions, the Side of Modify and Replace) and in the Imbalance length.
 */
#include "feed_internal.h"
#include "wire/xdp.h"

#define XDP_DIRECTORY_KEYS 65536	/* SymbolIndex values held densely; higher ones overflow */
#define XDP_MAX_SCALE 8			/* 1e-8: the event's scale */
#define XDP_TIME_IDS 8			/* Source Time Reference IDs kept per channel */
#define NS_PER_SEC 1000000000ull

/*
 * Known prefix of each type (notes: Control messages, Feed messages, Recovery):
 * shorter is bad_length, longer is read up to here. 0: not a message of the
 * multicast feeds.
 */
static const uint8_t xdp_min_len[XDP_TYPE_LIMIT] = {
#define XDP_MIN(type) [type] = type##_LEN
	XDP_MIN(XDP_SEQUENCE_RESET),	XDP_MIN(XDP_TIME_REFERENCE),
	XDP_MIN(XDP_SYMBOL_MAPPING),	XDP_MIN(XDP_MESSAGE_UNAVAILABLE),
	XDP_MIN(XDP_SYMBOL_CLEAR),	XDP_MIN(XDP_SECURITY_STATUS),
	XDP_MIN(XDP_REFRESH_HEADER),	XDP_MIN(XDP_ADD_ORDER),
	XDP_MIN(XDP_MODIFY_ORDER),	XDP_MIN(XDP_DELETE_ORDER),
	XDP_MIN(XDP_ORDER_EXECUTION),	XDP_MIN(XDP_REPLACE_ORDER),
	[XDP_IMBALANCE] = XDP_IMBALANCE_V21_LEN,
	XDP_MIN(XDP_ADD_ORDER_REFRESH), XDP_MIN(XDP_NON_DISPLAYED_TRADE),
	XDP_MIN(XDP_CROSS_TRADE),	XDP_MIN(XDP_TRADE_CANCEL),
	XDP_MIN(XDP_CROSS_CORRECTION),	XDP_MIN(XDP_RPI),
	XDP_MIN(XDP_STOCK_SUMMARY),
#undef XDP_MIN
};

static bool is_request_server_message(uint32_t type)
{
	/* Pillar Request Server, TCP (notes: Recovery): never on the multicast feeds. */
	return type == XDP_RETRANSMISSION_REQUEST || type == XDP_REQUEST_RESPONSE ||
	       type == XDP_HEARTBEAT_RESPONSE || type == XDP_MAPPING_REQUEST ||
	       type == XDP_REFRESH_REQUEST;
}

/* ---- state ------------------------------------------------------------------ */

/* A channel's Source Time References (notes: Sequencing, Time). */
struct xdp_clock {
	uint64_t base_ns;	/* the latest reference, in ns */
	uint64_t known;		/* ~0 while base_ns dates the channel's messages, else 0 */
	uint32_t ids;		/* IDs in id[] */
	uint32_t id[XDP_TIME_IDS];
	uint32_t sec[XDP_TIME_IDS];
};

/* Per SymbolIndex below XDP_DIRECTORY_KEYS: what the hot path needs beside the instrument. */
struct xdp_key {
	uint8_t scale;		/* PriceScaleCode + 1; 0: no mapping; XDP_SCALE_INVALID: above 8 */
	uint8_t system_id;	/* the mapping's System ID (the Source Time Reference ID) */
};

#define XDP_SCALE_INVALID 0xff

/* The trading state of an instrument as the venue last said it (notes: Control messages, type 34). */
struct xdp_status {
	uint8_t session;	/* enum wb_trading_state of the session, 0 unknown */
	uint8_t halt;		/* WB_STATE_HALTED or PAUSED while halted, else 0 */
};

struct xdp_state {
	struct xdp_clock clock[FEED_MAX_LINES];		/* by stream group id */
	uint32_t refresh_until[FEED_MAX_LINES];		/* by group: the refresh's highest LastSeqNum */
	struct xdp_status status[FEED_MAX_INSTRUMENTS];
	struct xdp_key key[XDP_DIRECTORY_KEYS];
	/*
	 * A refresh (feed_snapshot_packet) restates each symbol as of its own
	 * LastSeqNum (notes: Recovery, Refresh): the channel's later messages
	 * of that symbol at or below it are in the refresh already and are
	 * skipped.
	 */
	uint32_t refreshed_upto[XDP_DIRECTORY_KEYS];	/* the symbol's LastSeqNum */
	uint8_t refreshed_group[XDP_DIRECTORY_KEYS];	/* stream group id + 1; 0: none */
};

static size_t xdp_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return sizeof(struct xdp_state);
}

static void xdp_state_reset(void *state)
{
	__builtin_memset(state, 0, sizeof(struct xdp_state));
}

static void xdp_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)cfg;
	xdp_state_reset(state);
}

/* ---- field helpers ------------------------------------------------------------ */

/*
 * By struct xdp_key.scale (PriceScaleCode + 1): 10^(8 - code), what turns
 * a price with that many decimals into 1e-8. 0 where no price can be made
 * (no mapping, or a scale above 8): one load, no bounds to check.
 */
static const int64_t price_multiplier[256] = {
	[1] = 100000000, [2] = 10000000, [3] = 1000000, [4] = 100000, [5] = 10000,
	[6] = 1000, [7] = 100, [8] = 10, [9] = 1,
};

static uint8_t side_of(uint8_t c)
{
	return c == 'B' ? WB_SIDE_BUY : c == 'S' ? WB_SIDE_SELL : WB_SIDE_NONE;
}

/* A full SourceTime (epoch s) + SourceTimeNS, as some messages carry. */
static uint64_t source_time(const uint8_t *m)
{
	return (uint64_t)wire_le32(m + XDP_TIMED_SOURCE_TIME) * NS_PER_SEC +
	       wire_le32(m + XDP_TIMED_SOURCE_TIME_NS);
}

/* The hot-path entry of a SymbolIndex, or NULL above the dense range. */
static inline struct xdp_key *key_of(struct xdp_state *st, uint32_t key)
{
	return key < XDP_DIRECTORY_KEYS ? &st->key[key] : 0;
}

/* The scale code + 1 of a key (0: no mapping), from the directory above the dense range. */
static uint8_t scale_of(struct feed_packet *pk, struct xdp_state *st, uint32_t key)
{
	const struct xdp_key *k = key_of(st, key);
	const struct feed_symbol *sym;

	if (wb_likely(k))
		return k->scale;
	sym = feed_dir_symbol(&pk->v->dir, key);
	return sym ? sym->price_scale : 0;
}

/* ---- time ------------------------------------------------------------------- */

static struct xdp_clock *clock_of(struct feed_packet *pk, struct xdp_state *st)
{
	return &st->clock[pk->group->id];
}

static void clock_reference(struct xdp_clock *c, uint32_t id, uint32_t sec)
{
	uint32_t i;

	c->base_ns = (uint64_t)sec * NS_PER_SEC;
	c->known = ~0ull;
	for (i = 0; i < c->ids; i++) {
		if (c->id[i] == id) {
			c->sec[i] = sec;
			return;
		}
	}
	if (c->ids < XDP_TIME_IDS) {
		c->id[c->ids] = id;
		c->sec[c->ids++] = sec;
	}
}

static void clock_forget(struct xdp_clock *c)
{
	__builtin_memset(c, 0, sizeof(*c));
}

/*
 * The exchange time of a message with SourceTimeNS at 4. One reference ID on
 * the channel (the usual case, notes: Sequencing): its latest. Several: the one
 * of the symbol's System ID, else the latest.
 */
static inline uint64_t message_time(struct xdp_state *st, const struct xdp_clock *c, uint32_t key,
				    const uint8_t *m)
{
	uint64_t ns = wire_le32(m + XDP_SOURCE_TIME_NS);

	if (wb_unlikely(c->ids > 1)) {
		const struct xdp_key *k = key_of(st, key);
		uint32_t i;

		for (i = 0; k && c->known && i < c->ids; i++)
			if (c->id[i] == k->system_id)
				return (uint64_t)c->sec[i] * NS_PER_SEC + ns;
	}
	return (c->base_ns + ns) & c->known;
}

/* ---- event helpers -------------------------------------------------------------- */

/*
 * The instrument of a message's SymbolIndex if it passes the filter, else
 * 0, counted as filtered, or as unknown_symbol when no mapping defined it.
 */
static uint16_t instrument_of(struct feed_packet *pk, struct xdp_state *st, uint32_t key)
{
	uint16_t inst = feed_dir_instrument(&pk->v->dir, key);

	if (wb_likely(inst))
		return inst;
	if (!scale_of(pk, st, key))
		feed_count_error(pk, FEED_ERR_UNKNOWN_SYMBOL);
	else
		pk->counters->filtered++;
	return 0;
}

static void emit_status(struct feed_packet *pk, uint16_t inst, uint64_t seq, uint64_t ts,
			uint8_t state, uint8_t raw, uint8_t reason, uint8_t flags)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_STATUS, inst, seq, ts);

	if (!ev)
		return;
	ev->flags = flags;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.status.state = state;
	ev->u.status.raw_state = (char)raw;
	__builtin_memcpy(ev->u.status.reason, "    ", 4);
	if (reason > ' ' && reason <= '~')
		ev->u.status.reason[0] = (char)reason;
	feed_commit(pk);
}

/* ---- the order messages (100-104): about 95% of a day ------------------------- */

/*
 * Where the five order messages keep their fields, so one branch-free path
 * decodes them: a field a type lacks is read at a harmless offset (1 or 3:
 * the high bytes of MsgSize and MsgType) and masked to zero.
 */
struct xdp_order_layout {
	uint8_t kind;		/* 0: not an order message */
	uint8_t min_len;
	uint8_t price_off;
	uint8_t qty_off;
	uint8_t ref_off;
	uint8_t side_off;
	uint8_t firm_off;
	uint8_t printable_off;	/* byte that is 1 when printed to the SIP */
	uint8_t base_flags;
	uint8_t side_mask;
	uint8_t uses_price;	/* a price the symbol's scale must convert */
	uint32_t qty_mask;
	uint32_t firm_mask;
	uint64_t ref_mask;
	int64_t price_mask;
};

#define ALL32 0xffffffffu
#define ALL64 0xffffffffffffffffull
#define NONE (XDP_MSG_SIZE + 1)		/* a field the type lacks: masked to zero */
#define NEVER_ONE (XDP_MSG_TYPE + 1)	/* 0 in types 100-104: never "printed" */

static const struct xdp_order_layout order_layouts[5] = {
	/* 100 Add Order */
	{ WB_EV_ADD, XDP_ADD_ORDER_LEN, XDP_ADD_PRICE, XDP_ADD_VOLUME, NONE, XDP_ADD_SIDE,
	  XDP_ADD_FIRM, NEVER_ONE, 0, 3, 1, ALL32, ALL32, 0, -1 },
	/* 101 Modify Order (Side only since 2.5) */
	{ WB_EV_MODIFY, XDP_MODIFY_ORDER_LEN, XDP_MODIFY_PRICE, XDP_MODIFY_VOLUME, NONE, NONE,
	  NONE, NEVER_ONE, WB_EVF_KEEPS_PRIORITY, 0, 1, ALL32, 0, 0, -1 },
	/* 102 Delete Order */
	{ WB_EV_DELETE, XDP_DELETE_ORDER_LEN, NONE, NONE, NONE, NONE, NONE, NEVER_ONE,
	  0, 0, 0, 0, 0, 0, 0 },
	/* 103 Order Execution: the TradeID (u32) as the event's ref */
	{ WB_EV_EXECUTE_AT_PRICE, XDP_ORDER_EXECUTION_LEN, XDP_EXECUTION_PRICE,
	  XDP_EXECUTION_VOLUME, XDP_EXECUTION_TRADE_ID, NONE, NONE, XDP_EXECUTION_PRINTABLE,
	  0, 0, 1, ALL32, 0, ALL32, -1 },
	/* 104 Replace Order: the NewOrderID as the event's ref (Side only since 2.5) */
	{ WB_EV_REPLACE, XDP_REPLACE_ORDER_LEN, XDP_REPLACE_PRICE, XDP_REPLACE_VOLUME,
	  XDP_REPLACE_NEW_ORDER_ID, NONE, NONE, NEVER_ONE, 0, 0, 1, ALL32, 0, ALL64, -1 },
};

/* FirmID: blank (or NUL) unless attributed; its first four characters as the MPID. */
static inline uint32_t firm_mpid(const uint8_t *m, const struct xdp_order_layout *l)
{
	uint32_t firm = wire_le32(m + l->firm_off) & l->firm_mask;

	return firm ^ (firm == 0x20202020u) * 0x20202020u;
}

/* A side code as enum wb_side: one load, no branch. */
static const uint8_t side_code[256] = { ['B'] = WB_SIDE_BUY, ['S'] = WB_SIDE_SELL };

/*
 * What every message of a packet needs, loaded once per packet; the
 * message and filter counts are added to the line once, as ITCH does.
 */
struct xdp_batch {
	struct feed_packet *pk;
	struct xdp_state *st;
	struct xdp_clock *clock;
	const uint16_t *inst_of;	/* the directory's dense instrument cache */
	uint64_t messages, filtered;
	/* The clock as the order messages read it (batch_clock after it changes). */
	uint64_t time_base, time_known;
	bool time_by_partition;		/* several reference IDs: message_time() */
	uint32_t refresh_until;		/* messages up to here may be in a refresh already */
	bool refresh;			/* a refresh packet (Refresh Header first) */
	bool refresh_last_known;	/* its symbol's LastSeqNum (first packet of a symbol) */
	uint32_t refresh_last;
};

static inline void batch_clock(struct xdp_batch *b)
{
	b->time_base = b->clock->base_ns;
	b->time_known = b->clock->known;
	b->time_by_partition = b->clock->ids > 1;
}

/* The time of an order message: the channel's reference, or its symbol partition's. */
static inline uint64_t batch_time(const struct xdp_batch *b, uint32_t key, const uint8_t *m)
{
	if (wb_unlikely(b->time_by_partition))
		return message_time(b->st, b->clock, key, m);
	return (b->time_base + wire_le32(m + XDP_SOURCE_TIME_NS)) & b->time_known;
}

static inline __attribute__((always_inline)) void
decode_order(struct xdp_batch *b, const uint8_t *m, uint32_t len, uint64_t seq,
	     const struct xdp_order_layout *l)
{
	struct feed_packet *pk = b->pk;
	/* restrict: the event's stores cannot touch the producer's indices. */
	struct wb_event *restrict ev;
	uint32_t key, firm;
	uint16_t inst;
	uint8_t side, scale;
	int64_t multiplier;

	/* This one check bounds every read below (the layout's offsets). */
	if (wb_unlikely(len < l->min_len)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	b->messages++;
	key = wire_le32(m + XDP_SYMBOL_INDEX);
	if (wb_likely(key < XDP_DIRECTORY_KEYS)) {
		inst = b->inst_of[key];
		scale = b->st->key[key].scale;
	} else {
		inst = feed_dir_instrument_slow(&pk->v->dir, key);
		scale = scale_of(pk, b->st, key);
	}
	if (wb_unlikely(!inst)) {
		if (wb_likely(scale))
			b->filtered++;
		else
			feed_count_error(pk, FEED_ERR_UNKNOWN_SYMBOL);
		return;
	}
	multiplier = price_multiplier[scale];
	side = side_code[m[l->side_off]] & l->side_mask;
	/* No price where the type has one (scale above 8), no side on an Add. */
	if (wb_unlikely(((multiplier == 0) & l->uses_price) | ((side == 0) & (l->side_mask != 0)))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	firm = firm_mpid(m, l);
	ev = feed_emit(pk, l->kind, inst, seq, batch_time(b, key, m));
	if (wb_unlikely(!ev))
		return;
	ev->side = side;
	ev->flags = (uint8_t)(l->base_flags | (m[l->printable_off] == 1) * WB_EVF_PRINTABLE);
	ev->u.order.order_id = wire_le64(m + XDP_ORDER_ID);
	ev->u.order.price = (int64_t)(int32_t)wire_le32(m + l->price_off) * multiplier &
			    l->price_mask;
	ev->u.order.qty = wire_le32(m + l->qty_off) & l->qty_mask;
	__builtin_memcpy(ev->u.order.mpid, &firm, 4);
	ev->u.order.ref = wire_le64(m + l->ref_off) & l->ref_mask;
	feed_commit(pk);
}

/* ---- the other messages ----------------------------------------------------------- */

/* An NYSE symbol (11 bytes, NUL terminated) as a ticker key; 0 if it cannot be one. */
static uint64_t symbol_key(const uint8_t *p)
{
	char t[8];
	size_t n = 0, i;

	while (n < XDP_SYMBOL_LEN && p[n] && p[n] != ' ')
		n++;
	/* A suffix after a space (NYSE symbology, e.g. "BRK A") reads as "BRK.A". */
	for (i = n; i < XDP_SYMBOL_LEN && p[i] == ' '; i++)
		;
	if (i < XDP_SYMBOL_LEN && p[i] && n) {
		size_t s = i;

		while (i < XDP_SYMBOL_LEN && p[i] && p[i] != ' ')
			i++;
		if (n + 1 + (i - s) > sizeof(t))
			return 0;
		__builtin_memcpy(t, p, n);
		t[n] = '.';
		__builtin_memcpy(t + n + 1, p + s, i - s);
		return feed_ticker_key(t, n + 1 + (i - s));
	}
	if (n > sizeof(t))
		return 0;
	__builtin_memcpy(t, p, n);
	return feed_ticker_key(t, n);
}

/* Symbol Index Mapping (type 3): the directory entry of a SymbolIndex. */
static void decode_mapping(struct feed_packet *pk, struct xdp_state *st, const uint8_t *m,
			   uint64_t seq)
{
	uint32_t key = wire_le32(m + XDP_MAPPING_INDEX);
	uint8_t scale = m[XDP_MAPPING_SCALE];
	struct feed_symbol sym = {
		.ticker = symbol_key(m + XDP_MAPPING_SYMBOL),
		.round_lot = wire_le16(m + XDP_MAPPING_LOT_SIZE),
		.market = (char)m[XDP_MAPPING_EXCHANGE],
	};
	struct xdp_key *k = key_of(st, key);

	if (wb_unlikely(!sym.ticker)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	/* Above 8 decimals no price of the symbol fits 1e-8 exactly: its priced
	 * messages are dropped (counted), never given a wrong price. */
	if (wb_unlikely(scale > XDP_MAX_SCALE)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		sym.price_scale = XDP_SCALE_INVALID;
	} else {
		sym.price_scale = (uint8_t)(scale + 1);
	}
	if (!sym.round_lot)
		sym.round_lot = 100;
	if (k) {
		k->scale = sym.price_scale;
		k->system_id = m[XDP_MAPPING_SYSTEM_ID];
	}
	feed_dir_define(pk, key, &sym, seq, 0);
}

/* The state an instrument is in now: its halt, else its session. */
static uint8_t status_state(const struct xdp_status *s)
{
	return s->halt ? s->halt : s->session;
}

static uint8_t session_state(uint8_t code)
{
	switch (code) {
	case 'P':		/* pre-open */
	case 'B':		/* begin accepting orders */
		return WB_STATE_PRE_OPEN;
	case 'E':		/* early session */
	case 'O':		/* core session */
	case 'L':		/* late session */
		return WB_STATE_TRADING;
	case 'X':
		return WB_STATE_CLOSED;
	default:
		return 0;
	}
}

/*
 * Security Status (type 34): halts, resumes, short-sale restriction, session
 * changes and indications all become STATUS. The state carried is always the
 * instrument's whole trading state (a halt outlasts a session change and is not
 * lifted by an SSR message); raw_state is the code that changed it, reason the
 * halt condition. 'X' closes the symbol: its remaining orders are gone without
 * Delete messages (notes: Control messages), so its books are cleared first.
 */
static void decode_security_status(struct feed_packet *pk, struct xdp_state *st,
				   const uint8_t *m, uint64_t seq)
{
	uint16_t inst = instrument_of(pk, st, wire_le32(m + XDP_TIMED_SYMBOL_INDEX));
	uint64_t ts = source_time(m);
	uint8_t code = m[XDP_STATUS_STATUS], condition = m[XDP_STATUS_HALT_CONDITION], flags = 0;
	struct xdp_status *s;

	if (!inst)
		return;
	s = &st->status[inst];
	switch (code) {
	case '4':		/* halt; condition M: an LULD trading pause */
		s->halt = condition == 'M' ? WB_STATE_PAUSED : WB_STATE_HALTED;
		break;
	case '6':		/* suspend */
		s->halt = WB_STATE_HALTED;
		break;
	case '5':		/* resume */
		s->halt = 0;
		if (!s->session)
			s->session = WB_STATE_TRADING;
		break;
	case 'X':
		s->halt = 0;
		s->session = WB_STATE_CLOSED;
		flags = WB_EVF_SESSION_END;
		feed_emit_clear(pk, inst, seq, ts, WB_EVF_SESSION_END);
		break;
	default:
		if (session_state(code))
			s->session = session_state(code);
		else if (session_state(m[XDP_STATUS_MARKET_STATE]))	/* SSR and indications */
			s->session = session_state(m[XDP_STATUS_MARKET_STATE]);
		break;
	}
	emit_status(pk, inst, seq, ts, status_state(s), code,
		    code == '4' || code == '6' ? condition : ' ', flags);
}

/* Symbol Clear (type 32): every order and state of the symbol is gone; a refresh follows. */
static void decode_symbol_clear(struct feed_packet *pk, struct xdp_state *st, const uint8_t *m,
				uint64_t seq)
{
	uint16_t inst = instrument_of(pk, st, wire_le32(m + XDP_TIMED_SYMBOL_INDEX));

	if (!inst)
		return;
	__builtin_memset(&st->status[inst], 0, sizeof(st->status[inst]));
	feed_emit_clear(pk, inst, seq, source_time(m), 0);
}

/* Add Order Refresh (type 106): an order of the book as a refresh restates it. */
static void decode_add_refresh(struct feed_packet *pk, struct xdp_state *st, const uint8_t *m,
			       uint64_t seq)
{
	uint32_t key = wire_le32(m + XDP_TIMED_SYMBOL_INDEX), firm;
	uint16_t inst = instrument_of(pk, st, key);
	uint8_t side = side_of(m[XDP_REFRESH_SIDE]);
	int64_t multiplier;
	struct wb_event *ev;

	if (!inst)
		return;
	multiplier = price_multiplier[scale_of(pk, st, key)];
	if (wb_unlikely(!multiplier || !side)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	ev = feed_emit(pk, WB_EV_ADD, inst, seq, source_time(m));
	if (!ev)
		return;
	firm = wire_le32(m + XDP_REFRESH_FIRM);
	if (firm == 0x20202020u)
		firm = 0;
	ev->side = side;
	ev->u.order.order_id = wire_le64(m + XDP_REFRESH_ORDER_ID);
	ev->u.order.price = (int64_t)(int32_t)wire_le32(m + XDP_REFRESH_PRICE) * multiplier;
	ev->u.order.qty = wire_le32(m + XDP_REFRESH_VOLUME);
	__builtin_memcpy(ev->u.order.mpid, &firm, 4);
	ev->u.order.ref = 0;
	feed_commit(pk);
}

/* Non-Displayed Trade (110) and Cross Trade (111): prints, no book change. */
static void decode_trade(struct feed_packet *pk, struct xdp_state *st, const struct xdp_clock *c,
			 const uint8_t *m, uint64_t seq, bool cross)
{
	uint32_t key = wire_le32(m + XDP_SYMBOL_INDEX);
	uint16_t inst = instrument_of(pk, st, key);
	int64_t multiplier;
	struct wb_event *ev;

	if (!inst)
		return;
	multiplier = price_multiplier[scale_of(pk, st, key)];
	if (wb_unlikely(!multiplier)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	ev = feed_emit(pk, WB_EV_TRADE, inst, seq, message_time(st, c, key, m));
	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.trade.price = (int64_t)(int32_t)wire_le32(m + XDP_TRADE_PRICE) * multiplier;
	ev->u.trade.qty = wire_le32(m + XDP_TRADE_VOLUME);
	ev->u.trade.match_id = wire_le32(m + XDP_TRADE_ID);	/* TradeID, or CrossID */
	if (cross) {
		/* The auction's print; its fills came as non-printable executions. */
		ev->flags = WB_EVF_CROSS | WB_EVF_PRINTABLE;
		ev->u.trade.cross_type = (char)m[XDP_TRADE_CROSS_TYPE];
	} else {
		ev->flags = m[XDP_TRADE_PRINTABLE] == 1 ? WB_EVF_PRINTABLE : 0;
	}
	feed_commit(pk);
}

/* Trade Cancel (112): the trade TradeID of the symbol is broken. */
static void decode_trade_cancel(struct feed_packet *pk, struct xdp_state *st,
				const struct xdp_clock *c, const uint8_t *m, uint64_t seq)
{
	uint32_t key = wire_le32(m + XDP_SYMBOL_INDEX);
	uint16_t inst = instrument_of(pk, st, key);
	struct wb_event *ev;

	if (!inst)
		return;
	ev = feed_emit(pk, WB_EV_TRADE_BREAK, inst, seq, message_time(st, c, key, m));
	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.trade.match_id = wire_le32(m + XDP_TRADE_ID);
	feed_commit(pk);
}

static void decode_other(struct xdp_batch *b, const uint8_t *m, uint32_t type, uint64_t seq)
{
	struct feed_packet *pk = b->pk;
	struct xdp_state *st = b->st;
	struct xdp_clock *c = b->clock;

	switch (type) {
	case XDP_TIME_REFERENCE:
		clock_reference(c, wire_le32(m + XDP_TIME_REFERENCE_ID),
				wire_le32(m + XDP_TIME_REFERENCE_TIME));
		batch_clock(b);
		pk->counters->ignored++;
		return;
	case XDP_SYMBOL_MAPPING:
		decode_mapping(pk, st, m, seq);
		return;
	case XDP_SYMBOL_CLEAR:
		decode_symbol_clear(pk, st, m, seq);
		return;
	case XDP_SECURITY_STATUS:
		decode_security_status(pk, st, m, seq);
		return;
	case XDP_ADD_ORDER_REFRESH:
		decode_add_refresh(pk, st, m, seq);
		return;
	case XDP_NON_DISPLAYED_TRADE:
		decode_trade(pk, st, c, m, seq, false);
		return;
	case XDP_CROSS_TRADE:
		decode_trade(pk, st, c, m, seq, true);
		return;
	case XDP_TRADE_CANCEL:
		decode_trade_cancel(pk, st, c, m, seq);
		return;
	case XDP_REFRESH_HEADER:
		/* The first packet of a symbol's refresh says its LastSeqNum. */
		pk->counters->ignored++;
		return;
	default:
		/*
		 * Sequence Number Reset (the stream layer restarted the channel on
		 * it), Imbalance (raw view), Cross Correction, RPI, Stock Summary,
		 * Refresh Header, Message Unavailable: nothing a book needs.
		 */
		pk->counters->ignored++;
		return;
	}
}

/* The SymbolIndex a message of type names, or XDP_NO_KEY (len: at least its known prefix). */
#define XDP_NO_KEY 0xffffffffu
/* Long enough to hold the SymbolIndex wherever a type keeps it. */
#define XDP_KEYED_LEN (XDP_TIMED_SYMBOL_INDEX + 4)
static uint32_t message_key(uint32_t type, const uint8_t *m)
{
	switch (type) {
	case XDP_SYMBOL_MAPPING:
		return wire_le32(m + XDP_MAPPING_INDEX);
	case XDP_SYMBOL_CLEAR:
	case XDP_SECURITY_STATUS:
	case XDP_IMBALANCE:
	case XDP_ADD_ORDER_REFRESH:
	case XDP_STOCK_SUMMARY:
		return wire_le32(m + XDP_TIMED_SYMBOL_INDEX);
	case XDP_ADD_ORDER:
	case XDP_MODIFY_ORDER:
	case XDP_DELETE_ORDER:
	case XDP_ORDER_EXECUTION:
	case XDP_REPLACE_ORDER:
	case XDP_NON_DISPLAYED_TRADE:
	case XDP_CROSS_TRADE:
	case XDP_TRADE_CANCEL:
	case XDP_CROSS_CORRECTION:
	case XDP_RPI:
		return wire_le32(m + XDP_SYMBOL_INDEX);
	default:
		return XDP_NO_KEY;
	}
}

/* A real-time message a refresh covers already: its symbol's LastSeqNum is at or above it. */
static bool refreshed_already(struct xdp_batch *b, uint32_t type, const uint8_t *m, uint32_t len,
			      uint64_t seq)
{
	uint32_t key;

	if (len < XDP_KEYED_LEN || (type < XDP_TYPE_LIMIT && len < xdp_min_len[type]))
		return false;	/* the decoder counts it */
	key = message_key(type, m);
	if (key >= XDP_DIRECTORY_KEYS)
		return false;
	return b->st->refreshed_group[key] == b->pk->group->id + 1 &&
	       seq <= b->st->refreshed_upto[key];
}

/* A message of a refresh packet: its symbol is restated as of the packet's LastSeqNum. */
static void note_refreshed(struct xdp_batch *b, uint32_t type, const uint8_t *m, uint32_t len)
{
	uint32_t key, gid = b->pk->group->id;

	if (!b->refresh_last_known || len < XDP_KEYED_LEN)
		return;
	key = message_key(type, m);
	if (key >= XDP_DIRECTORY_KEYS)
		return;
	b->st->refreshed_upto[key] = b->refresh_last;
	b->st->refreshed_group[key] = (uint8_t)(gid + 1);
	if (b->refresh_last > b->st->refresh_until[gid])
		b->st->refresh_until[gid] = b->refresh_last;
}

static inline __attribute__((always_inline)) void
decode_message(struct xdp_batch *b, const uint8_t *m, uint32_t len, uint64_t seq)
{
	uint32_t type = wire_le16(m + XDP_MSG_TYPE), order = type - XDP_ADD_ORDER;
	uint8_t min;

	if (wb_unlikely(seq <= b->refresh_until) && !b->refresh &&
	    refreshed_already(b, type, m, len, seq)) {
		b->pk->counters->duplicate_messages++;
		return;
	}
	if (wb_unlikely(b->refresh))
		note_refreshed(b, type, m, len);
	if (wb_likely(order < 5)) {
		decode_order(b, m, len, seq, &order_layouts[order]);
		return;
	}
	min = type < XDP_TYPE_LIMIT ? xdp_min_len[type] : 0;
	if (wb_unlikely(!min)) {
		feed_count_error(b->pk, is_request_server_message(type) ? FEED_ERR_NOT_MULTICAST :
				 FEED_ERR_UNKNOWN_TYPE);
		return;
	}
	if (wb_unlikely(len < min)) {
		feed_count_error(b->pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	b->messages++;
	decode_other(b, m, type, seq);
}

/* ---- framing ------------------------------------------------------------------- */

/* The packet header: every field the sequencing layer reads but the sequence and kind. */
static int frame_header(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	uint32_t pkt_size;

	if (len < XDP_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	pkt_size = wire_le16(p + XDP_PKT_SIZE);
	if (pkt_size < XDP_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_LENGTH);
	if (pkt_size > len)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	/* No session: it is unused. */
	f->length = pkt_size;
	f->offset = XDP_HEADER_LEN;
	f->count = p[XDP_PKT_NUMBER_MSGS];
	f->unit = 0;
	f->has_session = false;
	f->reset_token = 0;
	f->seq = 0;
	f->kind = FEED_FRAME_DATA;
	return 0;
}

static int xdp_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	const uint8_t *m = p + XDP_HEADER_LEN;
	int err = frame_header(p, len, f);

	if (err)
		return err;
	if (!f->count) {
		/* DeliveryFlag 1: what its SeqNum means is not specified (notes). */
		f->kind = FEED_FRAME_HEARTBEAT;
		return 0;
	}
	f->seq = wire_le32(p + XDP_PKT_SEQ_NUM);
	if (f->seq == 0)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_FIELD);
	/* A Sequence Number Reset comes alone in its packet (notes: Control messages): the
	 * channel restarts at SeqNum. Its SourceTime tells it from another. */
	if (f->length >= XDP_HEADER_LEN + XDP_SEQUENCE_RESET_LEN &&
	    wire_le16(m + XDP_MSG_TYPE) == XDP_SEQUENCE_RESET &&
	    wire_le16(m + XDP_MSG_SIZE) >= XDP_SEQUENCE_RESET_LEN) {
		f->kind = FEED_FRAME_RESET;
		f->reset_token = 1ull << 63 | (uint64_t)wire_le32(m + XDP_TIMED_SOURCE_TIME) << 32 |
				 wire_le32(m + XDP_TIMED_SOURCE_TIME_NS);
	}
	return 0;
}

/*
 * A refresh packet (feed_snapshot_packet): the feed's framing, its
 * sequence meaningless here; the Refresh Header first, then the symbol's
 * messages as of its LastSeqNum.
 */
static int xdp_snapshot_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	int err = frame_header(p, len, f);

	if (err)
		return err;
	if (!f->count)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_COUNT);	/* a heartbeat of the channel */
	return 0;
}

/* The message at *off: MsgSize counts its own 4-byte header. */
static int xdp_next_message(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			    uint32_t *mlen)
{
	uint32_t n;

	if (*off + XDP_MSG_HEADER_LEN > len)
		return -1;
	n = wire_le16(p + *off);
	if (n < XDP_MSG_HEADER_LEN || n > len - *off)
		return -1;
	*msg = p + *off;
	*mlen = n;
	*off += n;
	return 0;
}

static uint32_t xdp_decode(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			   const struct feed_frame *f, uint32_t skip)
{
	struct xdp_batch b = {
		.pk = pk, .st = pk->state, .clock = clock_of(pk, pk->state),
		.inst_of = pk->v->dir.instrument,
	};
	const uint8_t *first = p + XDP_HEADER_LEN;
	uint32_t off = XDP_HEADER_LEN, i;

	batch_clock(&b);
	b.refresh_until = b.st->refresh_until[pk->group->id];
	if (wb_unlikely(len >= XDP_HEADER_LEN + XDP_REFRESH_HEADER_LEN &&
			wire_le16(first + XDP_MSG_TYPE) == XDP_REFRESH_HEADER &&
			wire_le16(first + XDP_MSG_SIZE) >= XDP_REFRESH_HEADER_LEN)) {
		/* A refresh packet: its messages are the book as of LastSeqNum. */
		b.refresh = true;
		if (wire_le16(first + XDP_MSG_SIZE) >= XDP_REFRESH_HEADER_FIRST_LEN &&
		    len >= XDP_HEADER_LEN + XDP_REFRESH_HEADER_FIRST_LEN) {
			b.refresh_last_known = true;
			b.refresh_last = wire_le32(first + XDP_REFRESH_LAST_SEQ_NUM);
		}
	}
	for (i = 0; i < f->count; i++) {
		uint32_t mlen;

		if (wb_unlikely(off + XDP_MSG_HEADER_LEN > len)) {
			/* The messages end with the packet: NumberMsgs says more than it holds. */
			feed_count_error(pk, off == len ? FEED_ERR_BAD_COUNT : FEED_ERR_TRUNCATED);
			goto out;
		}
		mlen = wire_le16(p + off);
		if (wb_unlikely(mlen < XDP_MSG_HEADER_LEN)) {
			/* A size that cannot cover its own header: nothing after it can be framed. */
			feed_count_error(pk, FEED_ERR_BAD_LENGTH);
			goto out;
		}
		if (wb_unlikely(mlen > len - off)) {
			/* The rest is lost: the other line's copy or a GAP reports it. */
			feed_count_error(pk, FEED_ERR_TRUNCATED);
			goto out;
		}
		if (wb_likely(i >= skip))
			decode_message(&b, p + off, mlen, f->seq + i);
		off += mlen;
	}
	if (wb_unlikely(off != len))
		feed_count_error(pk, FEED_ERR_BAD_COUNT);
out:
	pk->counters->messages += b.messages;
	pk->counters->filtered += b.filtered;
	return i;
}

/*
 * A reset restarts the channel: its books are cleared (the spin or refresh
 * that follows rebuilds them). A reset or a gap leaves its time references
 * unproven (the next second's may be in the lost range).
 */
static void xdp_stream_event(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	struct xdp_state *st = pk->state;
	uint32_t gid = pk->group->id;

	clock_forget(clock_of(pk, st));
	if (ev == FEED_STREAM_SNAPSHOT || ev == FEED_STREAM_RESET ||
	    ev == FEED_STREAM_NEW_SESSION || ev == FEED_STREAM_NEW_DAY) {
		/* What an earlier refresh of the channel covered means nothing now. */
		st->refresh_until[gid] = 0;
		for (uint32_t k = 0; k < XDP_DIRECTORY_KEYS; k++)
			if (st->refreshed_group[k] == gid + 1)
				st->refreshed_group[k] = 0;
	}
	if (ev == FEED_STREAM_RESET)
		feed_clear_stream(pk, unit, pk->group->stream[unit].next_seq, 0, 0);
}

/* ---- raw view: every wire field of every message (wb-dump --raw) ------------- */

/*
 * Prices print as their integers: the decimals are the symbol's
 * PriceScaleCode (its mapping), which a message alone does not say.
 */
#define XDP_PREFIX FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_UINT("ns", XDP_SOURCE_TIME_NS, 4), \
	FEED_F_KEY("index", XDP_SYMBOL_INDEX, 4), FEED_F_UINT("symbol_seq", XDP_SYMBOL_SEQ_NUM, 4)
#define XDP_TIMED_PREFIX FEED_F_UINT("", XDP_MSG_TYPE, 2), \
	FEED_F_EPOCH_S("time", XDP_TIMED_SOURCE_TIME), \
	FEED_F_UINT("ns", XDP_TIMED_SOURCE_TIME_NS, 4), \
	FEED_F_KEY("index", XDP_TIMED_SYMBOL_INDEX, 4)

static const struct feed_field xdp_sequence_reset[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_EPOCH_S("time", XDP_TIMED_SOURCE_TIME),
	FEED_F_UINT("ns", XDP_TIMED_SOURCE_TIME_NS, 4),
	FEED_F_UINT("product", XDP_RESET_PRODUCT_ID, 1),
	FEED_F_UINT("channel", XDP_RESET_CHANNEL_ID, 1),
};
static const struct feed_field xdp_time_reference[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_UINT("id", XDP_TIME_REFERENCE_ID, 4),
	FEED_F_UINT("symbol_seq", XDP_TIME_REFERENCE_SYMBOL_SEQ, 4),
	FEED_F_EPOCH_S("time", XDP_TIME_REFERENCE_TIME),
};
static const struct feed_field xdp_symbol_mapping[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_KEY("index", XDP_MAPPING_INDEX, 4),
	FEED_F_TICKER("", XDP_MAPPING_SYMBOL, XDP_SYMBOL_LEN),
	FEED_F_HEX("reserved", XDP_MAPPING_RESERVED, 1),
	FEED_F_UINT("market", XDP_MAPPING_MARKET_ID, 2),
	FEED_F_UINT("system", XDP_MAPPING_SYSTEM_ID, 1),
	FEED_F_CHAR("exchange", XDP_MAPPING_EXCHANGE), FEED_F_UINT("scale", XDP_MAPPING_SCALE, 1),
	FEED_F_CHAR("type", XDP_MAPPING_SECURITY_TYPE),
	FEED_F_UINT("lot", XDP_MAPPING_LOT_SIZE, 2),
	FEED_F_INT("prev_close", XDP_MAPPING_PREV_CLOSE, 4),
	FEED_F_UINT("prev_volume", XDP_MAPPING_PREV_VOLUME, 4),
	FEED_F_UINT("resolution", XDP_MAPPING_RESOLUTION, 1),
	FEED_F_CHAR("round_lot", XDP_MAPPING_ROUND_LOT), FEED_F_UINT("mpv", XDP_MAPPING_MPV, 2),
	FEED_F_UINT("unit", XDP_MAPPING_UNIT_OF_TRADE, 2),
	FEED_F_HEX("reserved", XDP_MAPPING_RESERVED2, 2),
};
static const struct feed_field xdp_message_unavailable[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_UINT("begin", XDP_UNAVAILABLE_BEGIN, 4),
	FEED_F_UINT("end", XDP_UNAVAILABLE_END, 4),
	FEED_F_UINT("product", XDP_UNAVAILABLE_PRODUCT_ID, 1),
	FEED_F_UINT("channel", XDP_UNAVAILABLE_CHANNEL_ID, 1),
};
static const struct feed_field xdp_symbol_clear[] = {
	XDP_TIMED_PREFIX, FEED_F_UINT("next_symbol_seq", XDP_TIMED_SYMBOL_SEQ_NUM, 4),
};
static const struct feed_field xdp_security_status[] = {
	XDP_TIMED_PREFIX, FEED_F_UINT("symbol_seq", XDP_TIMED_SYMBOL_SEQ_NUM, 4),
	FEED_F_CHAR("status", XDP_STATUS_STATUS),
	FEED_F_CHAR("halt", XDP_STATUS_HALT_CONDITION),
	FEED_F_HEX("reserved", XDP_STATUS_RESERVED, 4), FEED_F_INT("price1", XDP_STATUS_PRICE1, 4),
	FEED_F_INT("price2", XDP_STATUS_PRICE2, 4),
	FEED_F_CHAR("ssr_exchange", XDP_STATUS_SSR_EXCHANGE),
	FEED_F_UINT("ssr_volume", XDP_STATUS_SSR_VOLUME, 4),
	FEED_F_UINT("ssr_time", XDP_STATUS_SSR_TIME, 4), FEED_F_CHAR("ssr", XDP_STATUS_SSR_STATE),
	FEED_F_CHAR("market", XDP_STATUS_MARKET_STATE),
	FEED_F_CHAR("session", XDP_STATUS_SESSION_STATE),
};
static const struct feed_field xdp_refresh_header[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_UINT("pkt", XDP_REFRESH_CURRENT_PKT, 2),
	FEED_F_UINT("of", XDP_REFRESH_TOTAL_PKTS, 2),
};
static const struct feed_field xdp_refresh_header_first[] = {
	FEED_F_UINT("", XDP_MSG_TYPE, 2), FEED_F_UINT("pkt", XDP_REFRESH_CURRENT_PKT, 2),
	FEED_F_UINT("of", XDP_REFRESH_TOTAL_PKTS, 2),
	FEED_F_UINT("last_seq", XDP_REFRESH_LAST_SEQ_NUM, 4),
	FEED_F_UINT("last_symbol_seq", XDP_REFRESH_LAST_SYMBOL_SEQ_NUM, 4),
};
static const struct feed_field xdp_add_order[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8), FEED_F_INT("price", XDP_ADD_PRICE, 4),
	FEED_F_UINT("volume", XDP_ADD_VOLUME, 4), FEED_F_CHAR("side", XDP_ADD_SIDE),
	FEED_F_TEXT("firm", XDP_ADD_FIRM, XDP_FIRM_LEN),
	FEED_F_UINT("byte38", XDP_ADD_RESERVED, 1),
};
/* Modify and Replace: Side since Pillar 2.5 (XDP 2.1: parity splits there). */
static const struct feed_field xdp_modify_order[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8), FEED_F_INT("price", XDP_MODIFY_PRICE, 4),
	FEED_F_UINT("volume", XDP_MODIFY_VOLUME, 4),
	FEED_F_UINT("position_change", XDP_MODIFY_POSITION_CHANGE, 1),
	FEED_F_CHAR("side", XDP_MODIFY_SIDE), FEED_F_UINT("byte34", XDP_MODIFY_RESERVED, 1),
};
static const struct feed_field xdp_modify_order_v21[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8), FEED_F_INT("price", XDP_MODIFY_PRICE, 4),
	FEED_F_UINT("volume", XDP_MODIFY_VOLUME, 4),
	FEED_F_UINT("position_change", XDP_MODIFY_POSITION_CHANGE, 1),
	FEED_F_UINT("prev_parity_splits", XDP_MODIFY_PREV_PARITY_SPLITS, 1),
	FEED_F_UINT("new_parity_splits", XDP_MODIFY_NEW_PARITY_SPLITS, 1),
};
static const struct feed_field xdp_delete_order[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8),
	FEED_F_UINT("byte24", XDP_DELETE_RESERVED, 1),
};
/* Execution bytes 38-41: trade conditions since Pillar 2.4, DBExecID in XDP 2.1. */
static const struct feed_field xdp_order_execution[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8),
	FEED_F_UINT("trade", XDP_EXECUTION_TRADE_ID, 4),
	FEED_F_INT("price", XDP_EXECUTION_PRICE, 4), FEED_F_UINT("volume", XDP_EXECUTION_VOLUME, 4),
	FEED_F_UINT("printable", XDP_EXECUTION_PRINTABLE, 1),
	FEED_F_UINT("byte37", XDP_EXECUTION_RESERVED, 1),
	FEED_F_TEXT("cond", XDP_EXECUTION_CONDITIONS, XDP_CONDITIONS_LEN),
};
static const struct feed_field xdp_order_execution_v21[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8),
	FEED_F_UINT("trade", XDP_EXECUTION_TRADE_ID, 4),
	FEED_F_INT("price", XDP_EXECUTION_PRICE, 4), FEED_F_UINT("volume", XDP_EXECUTION_VOLUME, 4),
	FEED_F_UINT("printable", XDP_EXECUTION_PRINTABLE, 1),
	FEED_F_UINT("parity_splits", XDP_EXECUTION_PARITY_SPLITS, 1),
	FEED_F_UINT("db_exec_id", XDP_EXECUTION_DB_EXEC_ID, 4),
};
static const struct feed_field xdp_replace_order[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8),
	FEED_F_UINT("new_order", XDP_REPLACE_NEW_ORDER_ID, 8),
	FEED_F_INT("price", XDP_REPLACE_PRICE, 4), FEED_F_UINT("volume", XDP_REPLACE_VOLUME, 4),
	FEED_F_CHAR("side", XDP_REPLACE_SIDE),
	FEED_F_UINT("byte41", XDP_REPLACE_RESERVED, 1),
};
static const struct feed_field xdp_replace_order_v21[] = {
	XDP_PREFIX, FEED_F_UINT("order", XDP_ORDER_ID, 8),
	FEED_F_UINT("new_order", XDP_REPLACE_NEW_ORDER_ID, 8),
	FEED_F_INT("price", XDP_REPLACE_PRICE, 4), FEED_F_UINT("volume", XDP_REPLACE_VOLUME, 4),
	FEED_F_UINT("prev_parity_splits", XDP_REPLACE_PREV_PARITY_SPLITS, 1),
	FEED_F_UINT("new_parity_splits", XDP_REPLACE_NEW_PARITY_SPLITS, 1),
};
#define XDP_IMBALANCE_FIELDS \
	XDP_TIMED_PREFIX, FEED_F_UINT("symbol_seq", XDP_TIMED_SYMBOL_SEQ_NUM, 4), \
	FEED_F_INT("reference", XDP_IMBALANCE_REFERENCE, 4), \
	FEED_F_UINT("paired", XDP_IMBALANCE_PAIRED, 4), \
	FEED_F_UINT("imbalance", XDP_IMBALANCE_TOTAL, 4), \
	FEED_F_UINT("market_imbalance", XDP_IMBALANCE_MARKET, 4), \
	FEED_F_UINT("auction_hhmm", XDP_IMBALANCE_AUCTION_TIME, 2), \
	FEED_F_CHAR("auction", XDP_IMBALANCE_AUCTION_TYPE), \
	FEED_F_CHAR("side", XDP_IMBALANCE_SIDE), \
	FEED_F_INT("book_clearing", XDP_IMBALANCE_BOOK_CLEARING, 4), \
	FEED_F_INT("auction_clearing", XDP_IMBALANCE_AUCTION_CLEARING, 4), \
	FEED_F_INT("ssr_filing", XDP_IMBALANCE_SSR_FILING, 4), \
	FEED_F_INT("indicative_match", XDP_IMBALANCE_INDICATIVE_MATCH, 4), \
	FEED_F_INT("upper_collar", XDP_IMBALANCE_UPPER_COLLAR, 4), \
	FEED_F_INT("lower_collar", XDP_IMBALANCE_LOWER_COLLAR, 4), \
	FEED_F_UINT("auction_status", XDP_IMBALANCE_AUCTION_STATUS, 1), \
	FEED_F_UINT("freeze", XDP_IMBALANCE_FREEZE, 1), \
	FEED_F_UINT("extensions", XDP_IMBALANCE_EXTENSIONS, 1)
static const struct feed_field xdp_imbalance_v21[] = { XDP_IMBALANCE_FIELDS };
static const struct feed_field xdp_imbalance[] = {
	XDP_IMBALANCE_FIELDS, FEED_F_UINT("unpaired", XDP_IMBALANCE_UNPAIRED, 4),
	FEED_F_CHAR("unpaired_side", XDP_IMBALANCE_UNPAIRED_SIDE),
	FEED_F_UINT("byte72", XDP_IMBALANCE_RESERVED, 1),
};
static const struct feed_field xdp_add_order_refresh[] = {
	XDP_TIMED_PREFIX, FEED_F_UINT("symbol_seq", XDP_TIMED_SYMBOL_SEQ_NUM, 4),
	FEED_F_UINT("order", XDP_REFRESH_ORDER_ID, 8),
	FEED_F_INT("price", XDP_REFRESH_PRICE, 4), FEED_F_UINT("volume", XDP_REFRESH_VOLUME, 4),
	FEED_F_CHAR("side", XDP_REFRESH_SIDE),
	FEED_F_TEXT("firm", XDP_REFRESH_FIRM, XDP_FIRM_LEN),
	FEED_F_UINT("byte42", XDP_REFRESH_RESERVED, 1),
};
/* Non-Displayed Trade bytes 29-32: trade conditions (Pillar), DBExecID (XDP 2.1). */
static const struct feed_field xdp_non_displayed_trade[] = {
	XDP_PREFIX, FEED_F_UINT("trade", XDP_TRADE_ID, 4), FEED_F_INT("price", XDP_TRADE_PRICE, 4),
	FEED_F_UINT("volume", XDP_TRADE_VOLUME, 4),
	FEED_F_UINT("printable", XDP_TRADE_PRINTABLE, 1),
	FEED_F_TEXT("cond", XDP_TRADE_CONDITIONS, XDP_CONDITIONS_LEN),
};
static const struct feed_field xdp_non_displayed_trade_v21[] = {
	XDP_PREFIX, FEED_F_UINT("trade", XDP_TRADE_ID, 4), FEED_F_INT("price", XDP_TRADE_PRICE, 4),
	FEED_F_UINT("volume", XDP_TRADE_VOLUME, 4),
	FEED_F_UINT("printable", XDP_TRADE_PRINTABLE, 1),
	FEED_F_UINT("db_exec_id", XDP_TRADE_DB_EXEC_ID, 4),
};
static const struct feed_field xdp_cross_trade[] = {
	XDP_PREFIX, FEED_F_UINT("cross", XDP_TRADE_ID, 4), FEED_F_INT("price", XDP_TRADE_PRICE, 4),
	FEED_F_UINT("volume", XDP_TRADE_VOLUME, 4), FEED_F_CHAR("type", XDP_TRADE_CROSS_TYPE),
};
static const struct feed_field xdp_trade_cancel[] = {
	XDP_PREFIX, FEED_F_UINT("trade", XDP_TRADE_ID, 4),
};
static const struct feed_field xdp_cross_correction[] = {
	XDP_PREFIX, FEED_F_UINT("cross", XDP_TRADE_ID, 4),
	FEED_F_UINT("volume", XDP_CORRECTION_VOLUME, 4),
};
static const struct feed_field xdp_rpi[] = { XDP_PREFIX, FEED_F_CHAR("rpi", XDP_RPI_INDICATOR) };
static const struct feed_field xdp_stock_summary[] = {
	XDP_TIMED_PREFIX, FEED_F_INT("high", XDP_SUMMARY_HIGH, 4),
	FEED_F_INT("low", XDP_SUMMARY_LOW, 4),
	FEED_F_INT("open", XDP_SUMMARY_OPEN, 4), FEED_F_INT("close", XDP_SUMMARY_CLOSE, 4),
	FEED_F_UINT("volume", XDP_SUMMARY_VOLUME, 4),
};

static const struct feed_msg_layout xdp_layouts[] = {
	FEED_LAYOUT("Sequence Number Reset", XDP_SEQUENCE_RESET_LEN, xdp_sequence_reset),
	FEED_LAYOUT("Source Time Reference", XDP_TIME_REFERENCE_LEN, xdp_time_reference),
	FEED_LAYOUT("Symbol Index Mapping", XDP_SYMBOL_MAPPING_LEN, xdp_symbol_mapping),
	FEED_LAYOUT("Message Unavailable", XDP_MESSAGE_UNAVAILABLE_LEN, xdp_message_unavailable),
	FEED_LAYOUT("Symbol Clear", XDP_SYMBOL_CLEAR_LEN, xdp_symbol_clear),
	FEED_LAYOUT("Security Status", XDP_SECURITY_STATUS_LEN, xdp_security_status),
	FEED_LAYOUT("Refresh Header", XDP_REFRESH_HEADER_LEN, xdp_refresh_header),
	FEED_LAYOUT("Refresh Header", XDP_REFRESH_HEADER_FIRST_LEN, xdp_refresh_header_first),
	FEED_LAYOUT("Add Order", XDP_ADD_ORDER_LEN, xdp_add_order),
	FEED_LAYOUT("Modify Order", XDP_MODIFY_ORDER_LEN, xdp_modify_order),
	FEED_LAYOUT("Modify Order (XDP 2.1)", XDP_MODIFY_ORDER_LEN, xdp_modify_order_v21),
	FEED_LAYOUT("Delete Order", XDP_DELETE_ORDER_LEN, xdp_delete_order),
	FEED_LAYOUT("Order Execution", XDP_ORDER_EXECUTION_LEN, xdp_order_execution),
	FEED_LAYOUT("Order Execution (XDP 2.1)", XDP_ORDER_EXECUTION_LEN, xdp_order_execution_v21),
	FEED_LAYOUT("Replace Order", XDP_REPLACE_ORDER_LEN, xdp_replace_order),
	FEED_LAYOUT("Replace Order (XDP 2.1)", XDP_REPLACE_ORDER_LEN, xdp_replace_order_v21),
	FEED_LAYOUT("Imbalance (XDP 2.1)", XDP_IMBALANCE_V21_LEN, xdp_imbalance_v21),
	FEED_LAYOUT("Imbalance", XDP_IMBALANCE_PILLAR_LEN, xdp_imbalance),
	FEED_LAYOUT("Add Order Refresh", XDP_ADD_ORDER_REFRESH_LEN, xdp_add_order_refresh),
	FEED_LAYOUT("Non-Displayed Trade", XDP_NON_DISPLAYED_TRADE_LEN, xdp_non_displayed_trade),
	FEED_LAYOUT("Non-Displayed Trade (XDP 2.1)", XDP_NON_DISPLAYED_TRADE_LEN,
		    xdp_non_displayed_trade_v21),
	FEED_LAYOUT("Cross Trade", XDP_CROSS_TRADE_LEN, xdp_cross_trade),
	FEED_LAYOUT("Trade Cancel", XDP_TRADE_CANCEL_LEN, xdp_trade_cancel),
	FEED_LAYOUT("Cross Correction", XDP_CROSS_CORRECTION_LEN, xdp_cross_correction),
	FEED_LAYOUT("Retail Price Improvement", XDP_RPI_LEN, xdp_rpi),
	FEED_LAYOUT("Stock Summary", XDP_STOCK_SUMMARY_LEN, xdp_stock_summary),
};

enum xdp_layout_index {
	L_SEQUENCE_RESET, L_TIME_REFERENCE, L_SYMBOL_MAPPING, L_MESSAGE_UNAVAILABLE,
	L_SYMBOL_CLEAR, L_SECURITY_STATUS, L_REFRESH_HEADER, L_REFRESH_HEADER_FIRST,
	L_ADD_ORDER, L_MODIFY_ORDER, L_MODIFY_ORDER_V21, L_DELETE_ORDER, L_ORDER_EXECUTION,
	L_ORDER_EXECUTION_V21, L_REPLACE_ORDER, L_REPLACE_ORDER_V21, L_IMBALANCE_V21,
	L_IMBALANCE, L_ADD_ORDER_REFRESH, L_NON_DISPLAYED_TRADE, L_NON_DISPLAYED_TRADE_V21,
	L_CROSS_TRADE, L_TRADE_CANCEL, L_CROSS_CORRECTION, L_RPI, L_STOCK_SUMMARY,
};

WB_STATIC_ASSERT(sizeof(xdp_layouts) / sizeof(xdp_layouts[0]) == L_STOCK_SUMMARY + 1,
		 "one layout per enum xdp_layout_index");

/* Trade conditions are letters, digits, '@' or spaces; a DBExecID is a binary number. */
static bool is_condition_text(const uint8_t *p)
{
	for (int i = 0; i < XDP_CONDITIONS_LEN; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return true;
}

/*
 * The layout of a message. Where XDP 2.1 and Pillar put different fields at the
 * same bytes (notes: Versions), the bytes themselves choose: a Side is B or S,
 * trade conditions are text; the Imbalance by its length.
 */
static const struct feed_msg_layout *xdp_layout(const uint8_t *m, uint32_t len)
{
	int i;

	if (len < XDP_MSG_HEADER_LEN)
		return 0;
	switch (wire_le16(m + XDP_MSG_TYPE)) {
	case XDP_SEQUENCE_RESET: i = L_SEQUENCE_RESET; break;
	case XDP_TIME_REFERENCE: i = L_TIME_REFERENCE; break;
	case XDP_SYMBOL_MAPPING: i = L_SYMBOL_MAPPING; break;
	case XDP_MESSAGE_UNAVAILABLE: i = L_MESSAGE_UNAVAILABLE; break;
	case XDP_SYMBOL_CLEAR: i = L_SYMBOL_CLEAR; break;
	case XDP_SECURITY_STATUS: i = L_SECURITY_STATUS; break;
	case XDP_REFRESH_HEADER:
		i = len >= XDP_REFRESH_HEADER_FIRST_LEN ? L_REFRESH_HEADER_FIRST : L_REFRESH_HEADER;
		break;
	case XDP_ADD_ORDER: i = L_ADD_ORDER; break;
	case XDP_MODIFY_ORDER:
		i = len > XDP_MODIFY_SIDE && (m[XDP_MODIFY_SIDE] == 'B' || m[XDP_MODIFY_SIDE] == 'S') ?
			L_MODIFY_ORDER : L_MODIFY_ORDER_V21;
		break;
	case XDP_DELETE_ORDER: i = L_DELETE_ORDER; break;
	case XDP_ORDER_EXECUTION:
		i = len >= XDP_ORDER_EXECUTION_LEN && !is_condition_text(m + XDP_EXECUTION_CONDITIONS) ?
			L_ORDER_EXECUTION_V21 :
			L_ORDER_EXECUTION;
		break;
	case XDP_REPLACE_ORDER:
		i = len > XDP_REPLACE_SIDE && (m[XDP_REPLACE_SIDE] == 'B' || m[XDP_REPLACE_SIDE] == 'S') ?
			L_REPLACE_ORDER :
			L_REPLACE_ORDER_V21;
		break;
	case XDP_IMBALANCE:
		i = len >= XDP_IMBALANCE_PILLAR_LEN ? L_IMBALANCE : L_IMBALANCE_V21;
		break;
	case XDP_ADD_ORDER_REFRESH: i = L_ADD_ORDER_REFRESH; break;
	case XDP_NON_DISPLAYED_TRADE:
		i = len >= XDP_NON_DISPLAYED_TRADE_LEN && !is_condition_text(m + XDP_TRADE_CONDITIONS) ?
			L_NON_DISPLAYED_TRADE_V21 :
			L_NON_DISPLAYED_TRADE;
		break;
	case XDP_CROSS_TRADE: i = L_CROSS_TRADE; break;
	case XDP_TRADE_CANCEL: i = L_TRADE_CANCEL; break;
	case XDP_CROSS_CORRECTION: i = L_CROSS_CORRECTION; break;
	case XDP_RPI: i = L_RPI; break;
	case XDP_STOCK_SUMMARY: i = L_STOCK_SUMMARY; break;
	default: return 0;
	}
	return &xdp_layouts[i];
}

/* A packet whose PktSize is the datagram and whose known messages exactly fill it. */
static bool xdp_looks_like(const uint8_t *p, uint32_t len)
{
	struct feed_frame f;
	const uint8_t *m;
	uint32_t off = XDP_HEADER_LEN, mlen, i, type;

	if (xdp_frame(p, len, &f) < 0 || f.length != len)
		return false;
	for (i = 0; i < f.count; i++) {
		if (xdp_next_message(p, len, &off, &m, &mlen) < 0)
			return false;
		type = wire_le16(m + XDP_MSG_TYPE);
		if (type >= XDP_TYPE_LIMIT || !xdp_min_len[type])
			return false;
	}
	return off == len;
}

const struct feed_proto feed_proto_xdp = {
	.name = "xdp",
	.title = "NYSE Integrated Feed (XDP framing, Pillar messages)",
	.venues = 1u << WB_VENUE_NYSE | 1u << WB_VENUE_ARCA | 1u << WB_VENUE_AMERICAN |
		  1u << WB_VENUE_NATIONAL | 1u << WB_VENUE_TEXAS,
	.units = 1,
	.first_seq = 1,
	.big_endian = false,
	.type_offset = 2,
	.type_width = 2,
	.directory_keys = XDP_DIRECTORY_KEYS,
	.sample_tickers = "ABG,AAPL",
	.state_size = xdp_state_size,
	.state_init = xdp_state_init,
	.state_reset = xdp_state_reset,
	.frame = xdp_frame,
	.snapshot_frame = xdp_snapshot_frame,
	.decode = xdp_decode,
	.stream_event = xdp_stream_event,
	.next_message = xdp_next_message,
	.layout = xdp_layout,
	.looks_like = xdp_looks_like,
};
