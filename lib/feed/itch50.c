/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Nasdaq TotalView-ITCH 5.0 over MoldUDP64 (big-endian throughout).
 *
 * Filtering is by stock locate: 'R' (Stock Directory) maps a locate to a
 * ticker, the subscription table maps the ticker to an instrument id, and
 * the per-locate cache makes the packet-path filter one array load. The
 * cache is rebuilt, off the per-message path, whenever the subscriptions
 * change, so subscribing before or after the directory both work.
 */
#include "feed_internal.h"

#define MOLD_HEADER_LEN 20
#define MOLD_SESSION_LEN 10
#define MOLD_END_OF_SESSION 0xffff
#define ITCH_LOCATES 65536
#define ITCH_PRICE4_TO_WB 10000		/* Price(4) -> 1e-8 */
#define ITCH_DEFAULT_ROUND_LOT 100

struct itch_locate {
	uint64_t key;		/* ticker key; 0 = no directory entry */
	uint32_t round_lot;
	char market;		/* Market Category of 'R'; 0 when learned from an order */
	uint8_t reserved[3];
};

struct itch_state {
	uint8_t session[MOLD_SESSION_LEN];
	bool have_session;
	bool started;		/* next_seq is meaningful */
	uint64_t next_seq;	/* next expected MoldUDP64 sequence number */
	uint32_t subs_generation;
	uint32_t locate_end;	/* one past the highest locate with a directory entry */
	uint16_t instrument[ITCH_LOCATES];	/* locate -> instrument id if subscribed */
	struct itch_locate locate[ITCH_LOCATES];
};

/* Minimum length of each message type (the spec's lengths); 0 = unknown type. */
static const uint8_t itch_min_len[256] = {
	['S'] = 12, ['R'] = 39, ['H'] = 25, ['Y'] = 20, ['L'] = 26, ['V'] = 35,
	['W'] = 12, ['K'] = 28, ['J'] = 35, ['h'] = 21, ['A'] = 36, ['F'] = 40,
	['E'] = 31, ['C'] = 36, ['X'] = 23, ['D'] = 19, ['U'] = 35, ['P'] = 44,
	['Q'] = 40, ['B'] = 19, ['I'] = 50, ['N'] = 20, ['O'] = 48,
};

static size_t itch_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return sizeof(struct itch_state);
}

static void itch_state_reset(void *state)
{
	__builtin_memset(state, 0, sizeof(struct itch_state));
}

static void itch_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)cfg;
	itch_state_reset(state);
}

static int64_t price4(const uint8_t *p)
{
	return (int64_t)feed_be32(p) * ITCH_PRICE4_TO_WB;
}

static uint8_t side_of(uint8_t c)
{
	return c == 'B' ? WB_SIDE_BUY : c == 'S' ? WB_SIDE_SELL : WB_SIDE_NONE;
}

static void emit_symbol(struct feed_packet *pk, struct itch_state *st, uint16_t locate,
			uint16_t instrument, uint64_t seq, uint64_t ts)
{
	const struct itch_locate *loc = &st->locate[locate];
	struct wb_event *ev = feed_emit(pk, WB_EV_SYMBOL, instrument, seq, ts);

	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	__builtin_memcpy(ev->u.symbol.ticker, &loc->key, 8);
	ev->u.symbol.round_lot = loc->round_lot;
	ev->u.symbol.feed_key = locate;
	ev->u.symbol.listing_market = loc->market;
	feed_commit(pk);
}

/*
 * Point locate at key and refresh its filter entry; a locate that starts
 * passing the filter announces its instrument with a SYMBOL event.
 */
static void set_locate(struct feed_packet *pk, struct itch_state *st, uint16_t locate,
		       uint64_t key, uint32_t round_lot, char market, uint64_t seq, uint64_t ts)
{
	uint16_t inst;

	st->locate[locate].key = key;
	if ((uint32_t)locate >= st->locate_end)
		st->locate_end = (uint32_t)locate + 1;
	st->locate[locate].round_lot = round_lot;
	st->locate[locate].market = market;
	inst = feed_instrument_for_key(pk->engine, key);
	st->instrument[locate] = inst;
	if (inst)
		emit_symbol(pk, st, locate, inst, seq, ts);
}

/* Subscriptions changed since the cache was built: rebuild it. */
static void refresh_filter(struct feed_packet *pk, struct itch_state *st, uint64_t seq)
{
	uint32_t locate;

	st->subs_generation = pk->engine->subs.generation;
	for (locate = 0; locate < st->locate_end; locate++) {
		uint16_t before = st->instrument[locate], inst = 0;

		if (st->locate[locate].key)
			inst = feed_instrument_for_key(pk->engine, st->locate[locate].key);
		st->instrument[locate] = inst;
		if (inst && inst != before)
			emit_symbol(pk, st, (uint16_t)locate, inst, seq, 0);
	}
}

static uint8_t system_event_state(uint8_t code)
{
	switch (code) {
	case 'O': case 'S':
		return WB_STATE_PRE_OPEN;
	case 'Q':
		return WB_STATE_OPEN;
	case 'M': case 'E': case 'C':
		return WB_STATE_CLOSED;
	default:
		return WB_STATE_UNKNOWN;
	}
}

static uint8_t trading_action_state(uint8_t code)
{
	switch (code) {
	case 'H':
		return WB_STATE_HALTED;
	case 'P':
		return WB_STATE_PAUSED;
	case 'Q':
		return WB_STATE_QUOTATION_ONLY;
	case 'T':
		return WB_STATE_TRADING;
	default:
		return WB_STATE_UNKNOWN;
	}
}

static void emit_status(struct feed_packet *pk, uint16_t inst, uint64_t seq, uint64_t ts,
			uint8_t state, uint8_t raw, const uint8_t *reason, uint8_t flags)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_STATUS, inst, seq, ts);

	if (!ev)
		return;
	ev->flags = flags;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.status.state = state;
	ev->u.status.raw_state = (char)raw;
	if (reason)
		__builtin_memcpy(ev->u.status.reason, reason, 4);
	else
		__builtin_memcpy(ev->u.status.reason, "    ", 4);
	feed_commit(pk);
}

/*
 * The instrument of a message that carries its stock at stock_off. A
 * message whose locate has no directory entry is counted, and its stock
 * field fills the gap, so a capture that starts after the directory still
 * decodes.
 */
static uint16_t instrument_learning(struct feed_packet *pk, struct itch_state *st,
				    const uint8_t *m, uint32_t stock_off, uint64_t seq, uint64_t ts)
{
	uint16_t locate = feed_be16(m + 1), inst = st->instrument[locate];

	/* The small instrument cache answers the common case on its own. */
	if (wb_likely(inst))
		return inst;
	if (wb_unlikely(!st->locate[locate].key)) {
		feed_count_error(pk, FEED_ERR_UNKNOWN_LOCATE);
		set_locate(pk, st, locate, feed_symbol8_key(m + stock_off),
			   ITCH_DEFAULT_ROUND_LOT, 0, seq, ts);
	}
	return st->instrument[locate];
}

/* The instrument of an order message that names only its locate. */
static uint16_t instrument_of(struct feed_packet *pk, const struct itch_state *st,
			      const uint8_t *m)
{
	uint16_t locate = feed_be16(m + 1), inst = st->instrument[locate];

	if (wb_unlikely(!inst && !st->locate[locate].key))
		feed_count_error(pk, FEED_ERR_UNKNOWN_LOCATE);
	return inst;
}

/*
 * Where the seven order-book messages (A F E C X D U: about 95% of a day)
 * keep their fields. One table turns them into one branch-free path: a
 * field a type lacks is read at offset 0 (always inside the message) and
 * masked to zero, so a random mix of types costs no mispredicted switch.
 */
struct itch_order_layout {
	uint8_t kind;		/* 0: not an order-book message */
	uint8_t qty_off;
	uint8_t price_off;
	uint8_t ref_off;
	uint8_t side_off;	/* 0 reads the type byte, which is never B or S here */
	uint8_t mpid_off;
	uint8_t printable_off;	/* 0 reads the type byte, which is never Y here */
	uint8_t base_flags;
	uint32_t qty_mask;
	uint32_t mpid_mask;
	uint64_t price_mask;
	uint64_t ref_mask;
};

#define ALL32 0xffffffffu
#define ALL64 0xffffffffffffffffull

static const struct itch_order_layout order_layout[256] = {
	['A'] = { WB_EV_ADD, 20, 32, 0, 19, 0, 0, 0, ALL32, 0, ALL64, 0 },
	['F'] = { WB_EV_ADD, 20, 32, 0, 19, 36, 0, 0, ALL32, ALL32, ALL64, 0 },
	['E'] = { WB_EV_EXECUTE, 19, 0, 23, 0, 0, 0, WB_EVF_PRINTABLE, ALL32, 0, 0, ALL64 },
	['C'] = { WB_EV_EXECUTE_AT_PRICE, 19, 32, 23, 0, 0, 31, 0, ALL32, 0, ALL64, ALL64 },
	['X'] = { WB_EV_REDUCE, 19, 0, 0, 0, 0, 0, 0, ALL32, 0, 0, 0 },
	['D'] = { WB_EV_DELETE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	['U'] = { WB_EV_REPLACE, 27, 31, 19, 0, 0, 0, 0, ALL32, 0, ALL64, ALL64 },
};

/* The instrument of an order message whose locate is not subscribed (yet). */
static uint16_t order_instrument_slow(struct feed_packet *pk, struct itch_state *st,
				      const uint8_t *m, uint64_t seq, uint64_t ts)
{
	/* Adds carry their stock and can fill a missing directory entry. */
	if (m[0] == 'A' || m[0] == 'F')
		return instrument_learning(pk, st, m, 24, seq, ts);
	return instrument_of(pk, st, m);
}

/*
 * The 48-bit timestamp at offset 5 as one 8-byte load from offset 3 (every
 * ITCH message is at least 12 bytes, so the load stays inside it).
 */
static inline uint64_t itch_timestamp(const uint8_t *m)
{
	return feed_be64(m + 3) & 0xffffffffffffull;
}

/* Returns 1 when the message was filtered out, 0 otherwise. */
static inline __attribute__((always_inline)) int
decode_order(struct feed_packet *pk, struct itch_state *st, const uint8_t *m, uint64_t seq,
	     const struct itch_order_layout *l)
{
	uint64_t ts = itch_timestamp(m);
	uint16_t inst = st->instrument[feed_be16(m + 1)];
	/* restrict: the event's stores cannot touch the producer's indices,
	 * so they stay in registers across the message loop. */
	struct wb_event *restrict ev;
	uint8_t side_char = m[l->side_off];
	uint8_t side = (uint8_t)((side_char == 'B') | (side_char == 'S') << 1);
	uint32_t mpid;

	if (wb_unlikely(!inst)) {
		inst = order_instrument_slow(pk, st, m, seq, ts);
		if (!inst)
			return 1;
	}
	if (wb_unlikely(l->kind == WB_EV_ADD && !side)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return 0;
	}
	ev = feed_emit(pk, l->kind, inst, seq, ts);
	if (wb_unlikely(!ev))
		return 0;
	ev->side = side;
	ev->flags = (uint8_t)(l->base_flags | (m[l->printable_off] == 'Y') * WB_EVF_PRINTABLE);
	ev->u.order.order_id = feed_be64(m + 11);
	ev->u.order.price = (int64_t)((uint64_t)feed_be32(m + l->price_off) * ITCH_PRICE4_TO_WB &
				      l->price_mask);
	ev->u.order.qty = feed_be32(m + l->qty_off) & l->qty_mask;
	mpid = feed_le32(m + l->mpid_off) & l->mpid_mask;
	__builtin_memcpy(ev->u.order.mpid, &mpid, 4);
	ev->u.order.ref = feed_be64(m + l->ref_off) & l->ref_mask;
	feed_commit(pk);
	return 0;
}

/* Everything but the order-book messages: trades, directory, status. */
static int decode_other(struct feed_packet *pk, struct itch_state *st, const uint8_t *m,
			uint64_t seq)
{
	uint8_t type = m[0];
	uint64_t ts = itch_timestamp(m);
	struct wb_event *ev;
	uint16_t inst;

	switch (type) {
	case 'P':
		inst = instrument_learning(pk, st, m, 24, seq, ts);
		if (!inst)
			return 1;
		ev = feed_emit(pk, WB_EV_TRADE, inst, seq, ts);
		if (!ev)
			return 0;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->side = side_of(m[19]);
		ev->flags = WB_EVF_PRINTABLE;
		ev->u.trade.order_id = feed_be64(m + 11);
		ev->u.trade.qty = feed_be32(m + 20);
		ev->u.trade.price = price4(m + 32);
		ev->u.trade.match_id = feed_be64(m + 36);
		feed_commit(pk);
		return 0;
	case 'Q': {
		uint64_t shares = feed_be64(m + 11);

		inst = instrument_learning(pk, st, m, 19, seq, ts);
		if (!inst)
			return 1;
		ev = feed_emit(pk, WB_EV_TRADE, inst, seq, ts);
		if (!ev)
			return 0;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->flags = WB_EVF_PRINTABLE | WB_EVF_CROSS;
		/* A cross of more than 4G shares does not occur; saturate rather than wrap. */
		ev->u.trade.qty = shares > 0xffffffffu ? 0xffffffffu : (uint32_t)shares;
		ev->u.trade.price = price4(m + 27);
		ev->u.trade.match_id = feed_be64(m + 31);
		ev->u.trade.cross_type = (char)m[39];
		feed_commit(pk);
		return 0;
	}
	case 'B':
		inst = instrument_of(pk, st, m);
		if (!inst)
			return 1;
		ev = feed_emit(pk, WB_EV_TRADE_BREAK, inst, seq, ts);
		if (!ev)
			return 0;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->u.trade.match_id = feed_be64(m + 11);
		feed_commit(pk);
		return 0;
	case 'R': {
		uint16_t locate = feed_be16(m + 1);

		set_locate(pk, st, locate, feed_symbol8_key(m + 11), feed_be32(m + 21),
			   (char)m[19], seq, ts);
		return !st->instrument[locate];
	}
	case 'H':
		inst = instrument_learning(pk, st, m, 11, seq, ts);
		if (!inst)
			return 1;
		emit_status(pk, inst, seq, ts, trading_action_state(m[19]), m[19], m + 21, 0);
		return 0;
	case 'h':
		/* Only a halt of the Nasdaq market itself changes this venue's book. */
		if (m[19] != 'Q') {
			pk->counters->ignored++;
			return 0;
		}
		inst = instrument_learning(pk, st, m, 11, seq, ts);
		if (!inst)
			return 1;
		emit_status(pk, inst, seq, ts, m[20] == 'H' ? WB_STATE_HALTED : WB_STATE_TRADING,
			    'h', (const uint8_t *)"OPHT", 0);
		return 0;
	case 'S':
		emit_status(pk, 0, seq, ts, system_event_state(m[11]), m[11], 0,
			    m[11] == 'C' ? WB_EVF_SESSION_END : 0);
		return 0;
	default:
		/* Y L V W K J I N O: reference and auction data no book needs. */
		pk->counters->ignored++;
		return 0;
	}
}

/* Returns 1 when the message was filtered out, 0 otherwise. */
static inline __attribute__((always_inline)) int
decode_message(struct feed_packet *pk, struct itch_state *st, const uint8_t *m, uint32_t len,
	       uint64_t seq)
{
	uint8_t type = m[0], min = itch_min_len[type];
	const struct itch_order_layout *l = &order_layout[type];

	if (wb_unlikely(len < min || !min)) {
		feed_count_error(pk, min ? FEED_ERR_BAD_LENGTH : FEED_ERR_UNKNOWN_TYPE);
		return 0;
	}
	if (wb_likely(l->kind))
		return decode_order(pk, st, m, seq, l);
	return decode_other(pk, st, m, seq);
}

static void new_session(struct feed_packet *pk, struct itch_state *st, const uint8_t *session)
{
	if (st->have_session) {
		/* Locates and order references are only valid for one session. */
		pk->counters->session_changes++;
		itch_state_reset(st);
		feed_emit_clear(pk, 0, 0, WB_EVF_SESSION_END);
	}
	__builtin_memcpy(st->session, session, MOLD_SESSION_LEN);
	st->have_session = true;
}

/* Sequence of a packet that carries no messages (heartbeat, end of session). */
static void idle_sequence(struct feed_packet *pk, struct itch_state *st, uint64_t seq)
{
	if (!st->started) {
		if (seq > 1)
			feed_emit_gap(pk, 1, seq - 1, 0);
		st->next_seq = seq;
		st->started = true;
	} else if (seq > st->next_seq) {
		feed_emit_gap(pk, st->next_seq, seq - st->next_seq, 0);
		st->next_seq = seq;
	}
}

static void itch_packet(struct feed_packet *pk, const uint8_t *p, uint32_t len)
{
	struct itch_state *st = pk->state;
	uint64_t seq, skip, i, messages = 0, filtered = 0;
	uint32_t off = MOLD_HEADER_LEN;
	uint16_t count;

	if (wb_unlikely(len < MOLD_HEADER_LEN)) {
		feed_count_error(pk, FEED_ERR_TRUNCATED);
		return;
	}
	if (wb_unlikely(!st->have_session ||
			__builtin_memcmp(st->session, p, MOLD_SESSION_LEN) != 0))
		new_session(pk, st, p);
	seq = feed_be64(p + 10);
	count = feed_be16(p + 18);
	if (wb_unlikely(st->subs_generation != pk->engine->subs.generation))
		refresh_filter(pk, st, seq);

	if (wb_unlikely(count == 0 || count == MOLD_END_OF_SESSION)) {
		if (count == 0)
			pk->counters->heartbeats++;
		else
			pk->counters->end_of_session++;
		idle_sequence(pk, st, seq);
		return;
	}
	if (wb_unlikely(seq == 0)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	if (wb_unlikely(!st->started)) {
		if (seq > 1)
			feed_emit_gap(pk, 1, seq - 1, 0);
		st->next_seq = seq;
		st->started = true;
	}
	if (wb_unlikely(seq != st->next_seq)) {
		if (seq > st->next_seq) {
			feed_emit_gap(pk, st->next_seq, seq - st->next_seq, 0);
			st->next_seq = seq;
		} else if (seq + count <= st->next_seq) {
			pk->counters->duplicates++;
			pk->counters->duplicate_messages += count;
			return;
		}
	}
	/* An overlapping packet: its first messages were seen already. */
	skip = st->next_seq - seq;
	pk->counters->duplicate_messages += skip;

	for (i = 0; i < count; i++) {
		uint32_t mlen;

		if (wb_unlikely(off + 2 > len))
			goto truncated;
		mlen = feed_be16(p + off);
		off += 2;
		if (wb_unlikely(mlen > len - off))
			goto truncated;
		if (wb_unlikely(i < skip)) {
			;
		} else if (wb_likely(mlen)) {
			filtered += (uint64_t)decode_message(pk, st, p + off, mlen, seq + i);
			messages++;
		} else {
			feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		}
		off += mlen;
	}
	st->next_seq = seq + count;
	if (wb_unlikely(off != len))
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
	goto out;
truncated:
	/* The rest of this packet is lost: the next packet reports it as a gap. */
	feed_count_error(pk, FEED_ERR_TRUNCATED);
	if (seq + i > st->next_seq)
		st->next_seq = seq + i;
out:
	pk->counters->messages += messages;
	pk->counters->filtered += filtered;
}

const struct feed_protocol_ops feed_itch50_ops = {
	.state_size = itch_state_size,
	.state_init = itch_state_init,
	.state_reset = itch_state_reset,
	.packet = itch_packet,
};
