/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Cboe US Equities Multicast PITCH 2.x (BZX, BYX, EDGX, EDGA): Sequenced
 * Unit Header framing, little-endian throughout. Layouts and semantics,
 * with their sources: docs/specs/cboe-pitch-notes.md, whose sections are
 * cited below as "notes: Sequencing".
 *
 * Filtering. Adds, trades and status messages carry the symbol; executes,
 * reduces, modifies and deletes carry only the order id. An Add of a
 * subscribed symbol puts its id in the venue's order-id filter
 * (order_filter.h) with the instrument; the other order messages pass
 * exactly when their id is found there. The entry leaves with the order
 * (delete, last share executed or cancelled), with its unit (Unit Clear,
 * End of Session), or when its instrument is no longer subscribed.
 *
 * Filter full. An Add the filter cannot hold is not emitted (a book order
 * whose later executes and deletes would all be filtered would sit in the
 * book forever). Instead order_filter_full is counted and a GAP event for
 * that instrument alone (gap.first = the Add's sequence, count 1) tells
 * the book it is missing an order: the instrument's venue book is
 * incomplete until a CLEAR. Later messages for the order miss in the
 * filter and are filtered.
 *
 * Sequencing is the shared layer's (stream.c): each of the 256 units of a
 * channel is a stream of its own (gap.unit set). A heartbeat carries the next
 * expected sequence (notes: Sequencing). After a unit's End of Session, or at a
 * packet at sequence 1 holding a Unit Clear (a reset), the unit starts its new
 * day.
 *
 * Time. exch_ts = the trading day's midnight + the unit's last Time
 * (seconds since midnight ET) * 1e9 + the message's offset, so it is epoch
 * time like every feed's. Until a unit's first Time, and after a gap on the
 * unit (the Time may be in the lost range, notes: Time), exch_ts is 0: unknown.
 *
 * Subscribing mid-session: the shared layer (directory.c) flags the books
 * of instruments subscribed late, as for every protocol.
 *
 * Not multicast. Unit 0 (the TCP Gap Request Proxy and Spin sessions),
 * unsequenced messages (sequence 0) and the TCP session message types are
 * reported as FEED_ERR_NOT_MULTICAST and not decoded on the packet path. A
 * spin's book messages reach this decoder through the shared layer's
 * snapshot calls instead (feed_snapshot_packet, pitch_snapshot_frame),
 * against the unit's buffered multicast.
 *
 * Events seq is the message's sequence number within its unit.
 */
#include "feed_internal.h"
#include "order_filter.h"
#include "wire/pitch.h"

#define PITCH_UNITS 256
#define PITCH_LONG_PRICE_TO_WB 10000		/* 4 dp -> 1e-8 */
#define PITCH_SHORT_PRICE_TO_WB 1000000		/* 2 dp -> 1e-8 */
#define PITCH_ROUND_LOT 100
#define PITCH_MAX_LONG_PRICE (0x7fffffffffffffffull / PITCH_LONG_PRICE_TO_WB)
#define NS_PER_SEC 1000000000ull


/*
 * Known prefix of each type (notes: Messages): shorter is FEED_ERR_BAD_LENGTH,
 * longer is read up to here. 0 = not an equities multicast message.
 */
static const uint8_t pitch_min_len[256] = {
#define PITCH_MIN(type) [type] = type##_LEN
	PITCH_MIN(PITCH_TIME),		PITCH_MIN(PITCH_ADD_LONG),
	PITCH_MIN(PITCH_ADD_SHORT),	PITCH_MIN(PITCH_EXECUTED),
	PITCH_MIN(PITCH_EXECUTED_AT_PRICE), PITCH_MIN(PITCH_REDUCE_LONG),
	PITCH_MIN(PITCH_REDUCE_SHORT),	PITCH_MIN(PITCH_MODIFY_LONG),
	PITCH_MIN(PITCH_MODIFY_SHORT),	PITCH_MIN(PITCH_DELETE),
	PITCH_MIN(PITCH_TRADE_LONG),	PITCH_MIN(PITCH_TRADE_SHORT),
	PITCH_MIN(PITCH_TRADE_BREAK),	PITCH_MIN(PITCH_END_OF_SESSION),
	PITCH_MIN(PITCH_SYMBOL_MAPPING), PITCH_MIN(PITCH_ADD_EXPANDED),
	PITCH_MIN(PITCH_TRADE_EXPANDED), PITCH_MIN(PITCH_TRADING_STATUS),
	PITCH_MIN(PITCH_AUCTION_UPDATE), PITCH_MIN(PITCH_AUCTION_SUMMARY),
	PITCH_MIN(PITCH_UNIT_CLEAR),	PITCH_MIN(PITCH_RPI),
#undef PITCH_MIN
};

struct pitch_unit {
	uint32_t time_sec;	/* last Time message */
	bool time_known;	/* time_sec is valid for the messages that follow */
};

struct pitch_state {
	struct pitch_unit unit[PITCH_UNITS];
	struct order_filter filter;
	/* the filter's memory follows, 64-byte aligned */
};

#define PITCH_STATE_HEAD ((sizeof(struct pitch_state) + 63) & ~(size_t)63)

static size_t pitch_state_size(const struct feed_engine_config *cfg)
{
	return PITCH_STATE_HEAD + order_filter_bytes(cfg->order_filter_capacity);
}

static void pitch_state_reset(void *state)
{
	struct pitch_state *st = state;

	__builtin_memset(st->unit, 0, sizeof(st->unit));
	order_filter_clear(&st->filter);
}

static void pitch_state_init(void *state, const struct feed_engine_config *cfg)
{
	struct pitch_state *st = state;

	/* The engine allocated the filter with the state (pitch_state_size):
	 * one allocation, freed by the engine, nothing to destroy here. */
	order_filter_init(&st->filter, (char *)state + PITCH_STATE_HEAD,
			  cfg->order_filter_capacity);
}

/* ---- field helpers -------------------------------------------------------- */

static uint8_t side_of(uint8_t c)
{
	return c == 'B' ? WB_SIDE_BUY : c == 'S' ? WB_SIDE_SELL : WB_SIDE_NONE;
}

/* A Long Price (u64, 4 dp) in 1e-8; false when it does not fit an int64. */
static bool long_price(const uint8_t *p, int64_t *out)
{
	uint64_t raw = wire_le64(p);

	if (wb_unlikely(raw > PITCH_MAX_LONG_PRICE))
		return false;
	*out = (int64_t)raw * PITCH_LONG_PRICE_TO_WB;
	return true;
}

static int64_t short_price(const uint8_t *p)
{
	return (int64_t)wire_le16(p) * PITCH_SHORT_PRICE_TO_WB;
}

static uint64_t exch_time(const struct feed_packet *pk, const struct pitch_unit *u,
			  const uint8_t *m)
{
	if (wb_unlikely(!u->time_known))
		return 0;
	return pk->midnight_ns + (uint64_t)u->time_sec * NS_PER_SEC + wire_le32(m + PITCH_TIME_OFFSET);
}

/* ---- event helpers -------------------------------------------------------- */

/* An event about a tracked order: instrument and side come from its entry. */
static void emit_order(struct feed_packet *pk, uint8_t kind, const struct order_filter_entry *e,
		       uint64_t seq, uint64_t ts, uint8_t flags, uint64_t order_id, int64_t price,
		       uint32_t qty, uint64_t ref)
{
	struct wb_event *ev = feed_emit(pk, kind, e->instrument, seq, ts);

	if (!ev)
		return;
	ev->side = e->side;
	ev->flags = flags;
	ev->u.order.order_id = order_id;
	ev->u.order.price = price;
	ev->u.order.qty = qty;
	__builtin_memset(ev->u.order.mpid, 0, 4);
	ev->u.order.ref = ref;
	feed_commit(pk);
}

static void emit_status(struct feed_packet *pk, uint16_t inst, uint64_t seq, uint64_t ts,
			uint8_t state, uint8_t raw, uint8_t flags)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_STATUS, inst, seq, ts);

	if (!ev)
		return;
	ev->flags = flags;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.status.state = state;
	ev->u.status.raw_state = (char)raw;
	__builtin_memcpy(ev->u.status.reason, "    ", 4);
	feed_commit(pk);
}

/* ---- messages ------------------------------------------------------------- */

/* What every message handler needs: the bytes, sequence, time and unit. */
struct pitch_msg {
	const uint8_t *m;
	uint64_t seq;
	uint64_t ts;
	uint8_t unit;
};

static void decode_add(struct feed_packet *pk, struct pitch_state *st, const struct pitch_msg *msg,
		       uint32_t qty, uint64_t key, int64_t price, const uint8_t *participant)
{
	const uint8_t *m = msg->m;
	uint64_t order_id = wire_le64(m + PITCH_ORDER_ID);
	uint8_t side = side_of(m[PITCH_SIDE]);
	struct order_filter_entry *e;
	struct wb_event *ev;
	uint16_t inst;

	if (wb_unlikely(!side)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	inst = feed_instrument_for_key(pk->engine, key);
	if (!inst) {
		pk->counters->filtered++;
		return;
	}
	feed_announce(pk, inst, msg->unit, msg->seq, msg->ts);
	e = order_filter_insert(&st->filter, order_id, inst, msg->unit, qty);
	if (wb_unlikely(!e)) {
		pk->counters->order_filter_full++;
		feed_emit_instrument_gap(pk, inst, msg->seq, 1, msg->unit, WB_GAP_FILTER_FULL);
		return;
	}
	e->side = side;
	ev = feed_emit(pk, WB_EV_ADD, inst, msg->seq, msg->ts);
	if (!ev)
		return;
	ev->side = side;
	ev->u.order.order_id = order_id;
	ev->u.order.price = price;
	ev->u.order.qty = qty;
	/* Participant ID: an MPID, "RTAL" for retail, spaces when unattributed. */
	if (participant && __builtin_memcmp(participant, "    ", 4) != 0)
		__builtin_memcpy(ev->u.order.mpid, participant, 4);
	else
		__builtin_memset(ev->u.order.mpid, 0, 4);
	ev->u.order.ref = 0;
	feed_commit(pk);
}

/*
 * The filter entry of the order a message names, or NULL (counted as
 * filtered). An entry whose instrument was unsubscribed since its Add goes
 * now: its book is no longer kept.
 */
static struct order_filter_entry *tracked_order(struct feed_packet *pk, struct pitch_state *st,
						uint64_t order_id)
{
	struct order_filter_entry *e = order_filter_find(&st->filter, order_id);

	if (wb_likely(e) && wb_unlikely(!feed_subscribed(pk->engine, e->instrument))) {
		order_filter_erase(&st->filter, e);
		e = 0;
	}
	if (!e)
		pk->counters->filtered++;
	return e;
}

/* qty leaves the order; the entry goes with its last share. */
static void take_qty(struct pitch_state *st, struct order_filter_entry *e, uint32_t qty)
{
	if (qty >= e->qty)
		order_filter_erase(&st->filter, e);
	else
		e->qty -= qty;
}

static void decode_executed(struct feed_packet *pk, struct pitch_state *st,
			    const struct pitch_msg *msg)
{
	const uint8_t *m = msg->m;
	uint64_t order_id = wire_le64(m + PITCH_ORDER_ID);
	struct order_filter_entry *e = tracked_order(pk, st, order_id);
	uint32_t qty = wire_le32(m + PITCH_EXECUTED_QTY);

	if (!e)
		return;
	emit_order(pk, WB_EV_EXECUTE, e, msg->seq, msg->ts, WB_EVF_PRINTABLE,
		   order_id, 0, qty, wire_le64(m + PITCH_EXECUTED_EXECUTION));
	take_qty(st, e, qty);
}

/*
 * Executed at Price/Size gives the remaining quantity as an absolute
 * value. When it is less than the executed quantity leaves, the rest is
 * cancelled: a REDUCE follows. More than that (a refill) cannot be said
 * with the event's fields, as the filter does not keep the order's price:
 * the instrument gets a GAP (its book is then incomplete), counted as a bad
 * field.
 */
static void decode_executed_at_price(struct feed_packet *pk, struct pitch_state *st,
				     const struct pitch_msg *msg)
{
	const uint8_t *m = msg->m;
	uint64_t order_id = wire_le64(m + PITCH_ORDER_ID);
	uint32_t qty = wire_le32(m + PITCH_EXECUTED_AT_PRICE_QTY);
	uint32_t remaining = wire_le32(m + PITCH_EXECUTED_AT_PRICE_REMAINING), left;
	struct order_filter_entry *e;
	uint16_t inst;
	int64_t price;

	if (wb_unlikely(!long_price(m + PITCH_EXECUTED_AT_PRICE_PRICE, &price))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	e = tracked_order(pk, st, order_id);
	if (!e)
		return;
	inst = e->instrument;
	left = e->qty > qty ? e->qty - qty : 0;
	emit_order(pk, WB_EV_EXECUTE_AT_PRICE, e, msg->seq, msg->ts, WB_EVF_PRINTABLE,
		   order_id, price, qty, wire_le64(m + PITCH_EXECUTED_AT_PRICE_EXECUTION));
	if (remaining < left) {
		emit_order(pk, WB_EV_REDUCE, e, msg->seq, msg->ts, 0, order_id, 0,
			   left - remaining, 0);
	} else if (wb_unlikely(remaining > left)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		feed_emit_instrument_gap(pk, inst, msg->seq, 1, msg->unit, WB_GAP_BAD_DATA);
	}
	if (remaining)
		e->qty = remaining;
	else
		order_filter_erase(&st->filter, e);
}

static void decode_reduce(struct feed_packet *pk, struct pitch_state *st,
			  const struct pitch_msg *msg, uint32_t qty)
{
	uint64_t order_id = wire_le64(msg->m + PITCH_ORDER_ID);
	struct order_filter_entry *e = tracked_order(pk, st, order_id);

	if (!e)
		return;
	emit_order(pk, WB_EV_REDUCE, e, msg->seq, msg->ts, 0, order_id, 0, qty, 0);
	take_qty(st, e, qty);
}

/*
 * Modify Flags bit 1 (Maintain Priority) says whether the order keeps its
 * queue position; the v2.41 spec notes say to trust it (notes: Executions). A
 * modify to quantity 0 leaves no order: it is sent as a DELETE so the book
 * and the filter agree.
 */
static void decode_modify(struct feed_packet *pk, struct pitch_state *st,
			  const struct pitch_msg *msg, uint32_t qty, int64_t price, uint8_t flags)
{
	uint64_t order_id = wire_le64(msg->m + PITCH_ORDER_ID);
	struct order_filter_entry *e = tracked_order(pk, st, order_id);

	if (!e)
		return;
	if (wb_unlikely(!qty)) {
		emit_order(pk, WB_EV_DELETE, e, msg->seq, msg->ts, 0, order_id, 0, 0, 0);
		order_filter_erase(&st->filter, e);
		return;
	}
	emit_order(pk, WB_EV_MODIFY, e, msg->seq, msg->ts,
		   flags & PITCH_MODIFY_MAINTAIN_PRIORITY ? WB_EVF_KEEPS_PRIORITY : 0,
		   order_id, price, qty, 0);
	e->qty = qty;
}

static void decode_delete(struct feed_packet *pk, struct pitch_state *st,
			  const struct pitch_msg *msg)
{
	uint64_t order_id = wire_le64(msg->m + PITCH_ORDER_ID);
	struct order_filter_entry *e = tracked_order(pk, st, order_id);

	if (!e)
		return;
	emit_order(pk, WB_EV_DELETE, e, msg->seq, msg->ts, 0, order_id, 0, 0, 0);
	order_filter_erase(&st->filter, e);
}

/* Trades of hidden or routed orders: no book change, carry the symbol. */
static void decode_trade(struct feed_packet *pk, const struct pitch_msg *msg, uint32_t qty,
			 uint64_t key, int64_t price,
			 uint64_t match_id)
{
	const uint8_t *m = msg->m;
	uint16_t inst = feed_instrument_for_key(pk->engine, key);
	struct wb_event *ev;

	if (!inst) {
		pk->counters->filtered++;
		return;
	}
	feed_announce(pk, inst, msg->unit, msg->seq, msg->ts);
	ev = feed_emit(pk, WB_EV_TRADE, inst, msg->seq, msg->ts);
	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->side = side_of(m[PITCH_SIDE]);
	ev->flags = WB_EVF_PRINTABLE;
	ev->u.trade.order_id = wire_le64(m + PITCH_ORDER_ID);
	ev->u.trade.price = price;
	ev->u.trade.qty = qty;
	ev->u.trade.match_id = match_id;
	feed_commit(pk);
}

static uint8_t trading_state(uint8_t code)
{
	switch (code) {
	case 'T':
		return WB_STATE_TRADING;
	case 'H':
		return WB_STATE_HALTED;
	case 'Q':
		return WB_STATE_QUOTATION_ONLY;
	case 'A':
		return WB_STATE_PRE_OPEN;	/* accepting orders for queuing */
	case 'S':
		return WB_STATE_PAUSED;		/* exchange-specific suspension */
	default:
		return WB_STATE_UNKNOWN;
	}
}

static void decode_trading_status(struct feed_packet *pk, const struct pitch_msg *msg)
{
	const uint8_t *m = msg->m;
	uint16_t inst = feed_instrument_for_key(pk->engine, feed_symbol8_key(m + PITCH_STATUS_SYMBOL));

	if (!inst) {
		pk->counters->filtered++;
		return;
	}
	feed_announce(pk, inst, msg->unit, msg->seq, msg->ts);
	emit_status(pk, inst, msg->seq, msg->ts, trading_state(m[PITCH_STATUS_STATUS]),
		    m[PITCH_STATUS_STATUS], 0);
}

/*
 * The auction's total print. The orders executed in it are reported one
 * by one as executions, so this print does not count toward volume again
 * (no WB_EVF_PRINTABLE).
 */
static void decode_auction_summary(struct feed_packet *pk, const struct pitch_msg *msg)
{
	const uint8_t *m = msg->m;
	uint16_t inst;
	struct wb_event *ev;
	int64_t price;

	if (wb_unlikely(!long_price(m + PITCH_AUCTION_SUMMARY_PRICE, &price))) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	inst = feed_instrument_for_key(pk->engine, feed_symbol8_key(m + PITCH_STATUS_SYMBOL));
	if (!inst) {
		pk->counters->filtered++;
		return;
	}
	feed_announce(pk, inst, msg->unit, msg->seq, msg->ts);
	ev = feed_emit(pk, WB_EV_TRADE, inst, msg->seq, msg->ts);
	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->flags = WB_EVF_CROSS;
	ev->u.trade.price = price;
	ev->u.trade.qty = wire_le32(m + PITCH_AUCTION_SUMMARY_SHARES);
	ev->u.trade.cross_type = (char)m[PITCH_AUCTION_TYPE];
	feed_commit(pk);
}

/*
 * Unit Clear: every order of the unit is gone. End of Session: the unit
 * sends nothing more today, so its orders can leave the filter; the books
 * keep their last state and learn that the session is over. Both are said
 * per instrument, for the instruments this venue announced on that unit,
 * because other units of the venue go on.
 */
static void decode_unit_end(struct feed_packet *pk, struct pitch_state *st,
			    const struct pitch_msg *msg, bool clear)
{
	const struct feed_venue *v = pk->v;
	uint16_t id = feed_stream_id(pk->group, msg->unit);
	uint32_t inst, count = feed_subs_count(pk->engine);

	order_filter_clear_unit(&st->filter, msg->unit);
	if (clear) {
		feed_clear_stream(pk, msg->unit, msg->seq, msg->ts, 0);
		return;
	}
	pk->counters->end_of_session++;
	feed_stream_ended(pk, msg->unit);
	for (inst = 1; inst <= count && inst < FEED_MAX_INSTRUMENTS; inst++)
		if (v->stream_of[inst] == id && feed_announced(v, (uint16_t)inst))
			emit_status(pk, (uint16_t)inst, msg->seq, msg->ts, WB_STATE_CLOSED,
				    PITCH_END_OF_SESSION, WB_EVF_SESSION_END);
}

static bool is_session_message(uint8_t type)
{
	/* GRP/Spin TCP: login, gap request/response, spin (notes: Sessions). */
	return (type >= 0x01 && type <= 0x04) || (type >= 0x80 && type <= 0x86);
}

static void decode_message(struct feed_packet *pk, struct pitch_state *st, const uint8_t *m,
			   uint32_t len, uint64_t seq, uint8_t unit)
{
	uint8_t type = m[PITCH_MSG_TYPE], min = pitch_min_len[type];
	struct pitch_unit *u = &st->unit[unit];
	struct pitch_msg msg;
	int64_t price;

	if (wb_unlikely(!min)) {
		feed_count_error(pk, is_session_message(type) ? FEED_ERR_NOT_MULTICAST :
			FEED_ERR_UNKNOWN_TYPE);
		return;
	}
	if (wb_unlikely(len < min)) {
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return;
	}
	pk->counters->messages++;
	if (type == PITCH_TIME) {
		u->time_sec = wire_le32(m + PITCH_TIME_SECONDS);
		u->time_known = true;
		pk->counters->ignored++;
		return;
	}
	msg.m = m;
	msg.seq = seq;
	msg.unit = unit;
	msg.ts = exch_time(pk, u, m);

	switch (type) {
	case PITCH_ADD_SHORT:
		decode_add(pk, st, &msg, wire_le16(m + PITCH_ADD_SHORT_QTY),
			   feed_symbol6_key(m + PITCH_ADD_SHORT_SYMBOL),
			   short_price(m + PITCH_ADD_SHORT_PRICE), 0);
		return;
	case PITCH_ADD_LONG:
		if (wb_unlikely(!long_price(m + PITCH_ADD_LONG_PRICE, &price)))
			goto bad_field;
		decode_add(pk, st, &msg, wire_le32(m + PITCH_ADD_LONG_QTY),
			   feed_symbol6_key(m + PITCH_ADD_LONG_SYMBOL), price, 0);
		return;
	case PITCH_ADD_EXPANDED:
		if (wb_unlikely(!long_price(m + PITCH_ADD_EXPANDED_PRICE, &price)))
			goto bad_field;
		decode_add(pk, st, &msg, wire_le32(m + PITCH_ADD_EXPANDED_QTY),
			   feed_symbol8_key(m + PITCH_ADD_EXPANDED_SYMBOL), price,
			   len >= PITCH_ADD_EXPANDED_PARTICIPANT_LEN ?
			   m + PITCH_ADD_EXPANDED_PARTICIPANT : 0);
		return;
	case PITCH_EXECUTED:
		decode_executed(pk, st, &msg);
		return;
	case PITCH_EXECUTED_AT_PRICE:
		decode_executed_at_price(pk, st, &msg);
		return;
	case PITCH_REDUCE_LONG:
		decode_reduce(pk, st, &msg, wire_le32(m + PITCH_REDUCE_QTY));
		return;
	case PITCH_REDUCE_SHORT:
		decode_reduce(pk, st, &msg, wire_le16(m + PITCH_REDUCE_QTY));
		return;
	case PITCH_MODIFY_LONG:
		if (wb_unlikely(!long_price(m + PITCH_MODIFY_LONG_PRICE, &price)))
			goto bad_field;
		decode_modify(pk, st, &msg, wire_le32(m + PITCH_MODIFY_LONG_QTY), price,
			      m[PITCH_MODIFY_LONG_FLAGS]);
		return;
	case PITCH_MODIFY_SHORT:
		decode_modify(pk, st, &msg, wire_le16(m + PITCH_MODIFY_SHORT_QTY),
			      short_price(m + PITCH_MODIFY_SHORT_PRICE), m[PITCH_MODIFY_SHORT_FLAGS]);
		return;
	case PITCH_DELETE:
		decode_delete(pk, st, &msg);
		return;
	case PITCH_TRADE_SHORT:
		decode_trade(pk, &msg, wire_le16(m + PITCH_ADD_SHORT_QTY),
			     feed_symbol6_key(m + PITCH_ADD_SHORT_SYMBOL),
			     short_price(m + PITCH_ADD_SHORT_PRICE),
			     wire_le64(m + PITCH_TRADE_SHORT_EXECUTION));
		return;
	case PITCH_TRADE_LONG:
		if (wb_unlikely(!long_price(m + PITCH_ADD_LONG_PRICE, &price)))
			goto bad_field;
		decode_trade(pk, &msg, wire_le32(m + PITCH_ADD_LONG_QTY),
			     feed_symbol6_key(m + PITCH_ADD_LONG_SYMBOL), price,
			     wire_le64(m + PITCH_TRADE_LONG_EXECUTION));
		return;
	case PITCH_TRADE_EXPANDED:
		if (wb_unlikely(!long_price(m + PITCH_ADD_EXPANDED_PRICE, &price)))
			goto bad_field;
		decode_trade(pk, &msg, wire_le32(m + PITCH_ADD_EXPANDED_QTY),
			     feed_symbol8_key(m + PITCH_ADD_EXPANDED_SYMBOL), price,
			     wire_le64(m + PITCH_TRADE_EXPANDED_EXECUTION));
		return;
	case PITCH_TRADE_BREAK: {
		/* Names only the execution id: venue-wide, the reader matches the id. */
		struct wb_event *ev = feed_emit(pk, WB_EV_TRADE_BREAK, 0, seq, msg.ts);

		if (!ev)
			return;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->u.trade.match_id = wire_le64(m + PITCH_TRADE_BREAK_EXECUTION);
		feed_commit(pk);
		return;
	}
	case PITCH_TRADING_STATUS:
		decode_trading_status(pk, &msg);
		return;
	case PITCH_AUCTION_SUMMARY:
		decode_auction_summary(pk, &msg);
		return;
	case PITCH_UNIT_CLEAR:
		decode_unit_end(pk, st, &msg, true);
		return;
	case PITCH_END_OF_SESSION:
		decode_unit_end(pk, st, &msg, false);
		return;
	default:
		/* Auction Update, Retail Price Improvement, Symbol Mapping (options):
		 * nothing a book needs. */
		pk->counters->ignored++;
		return;
	}
bad_field:
	feed_count_error(pk, FEED_ERR_BAD_FIELD);
}

/* ---- framing ---------------------------------------------------------------- */

/*
 * A packet at sequence 1 that clears the unit: the exchange's new day. Its
 * token is the Time and the Unit Clear's offset, which the other line's
 * copy repeats.
 */
static uint64_t new_day_token(const uint8_t *p, uint32_t len, uint32_t count)
{
	uint32_t off = PITCH_HEADER_LEN, i, time_sec = 0;

	/* Time and Unit Clear are both this long: the field at 2 is in it. */
	for (i = 0; i < count && off + PITCH_TIME_LEN <= len && p[off] >= PITCH_TIME_LEN; i++) {
		if (p[off + PITCH_MSG_TYPE] == PITCH_TIME)
			time_sec = wire_le32(p + off + PITCH_TIME_SECONDS);
		if (p[off + PITCH_MSG_TYPE] == PITCH_UNIT_CLEAR)
			return ((uint64_t)time_sec << 32 | wire_le32(p + off + PITCH_TIME_OFFSET)) + 1;
		off += p[off + PITCH_MSG_LENGTH];
	}
	return 0;
}

static int pitch_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	uint32_t hdr_len;

	if (len < PITCH_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	__builtin_memset(f, 0, sizeof(*f));
	hdr_len = wire_le16(p + PITCH_HDR_LENGTH);
	f->count = p[PITCH_HDR_COUNT];
	f->unit = p[PITCH_HDR_UNIT];
	f->seq = wire_le32(p + PITCH_HDR_SEQUENCE);
	f->offset = PITCH_HEADER_LEN;
	/* TCP sessions (GRP, Spin) frame with unit 0; multicast units start at 1. */
	if (f->unit == 0)
		return FEED_FRAME_ERROR(FEED_ERR_NOT_MULTICAST);
	if (hdr_len > len)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	if (hdr_len < PITCH_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_LENGTH);
	f->length = hdr_len;
	if (f->count == 0) {
		/* A second source sends unit heartbeats with sequence 0: no news. */
		f->kind = FEED_FRAME_HEARTBEAT;
		return 0;
	}
	/* Unsequenced messages: a spin or a gap-proxy session, not multicast. */
	if (f->seq == 0)
		return FEED_FRAME_ERROR(FEED_ERR_NOT_MULTICAST);
	f->kind = FEED_FRAME_DATA;
	if (f->seq == 1) {
		f->reset_token = new_day_token(p, len, f->count);
		if (f->reset_token)
			f->kind = FEED_FRAME_RESET;
	}
	return 0;
}

/*
 * A frame of spin messages (Sequenced Unit Header, unit 0 and sequence 0
 * on the Spin server's TCP session): the recovery client hands over the
 * book messages of a spin this way.
 */
static int pitch_snapshot_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	uint32_t hdr_len;

	if (len < PITCH_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	__builtin_memset(f, 0, sizeof(*f));
	hdr_len = wire_le16(p + PITCH_HDR_LENGTH);
	if (hdr_len > len)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	if (hdr_len < PITCH_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_LENGTH);
	f->count = p[PITCH_HDR_COUNT];
	if (!f->count)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_COUNT);
	f->unit = p[PITCH_HDR_UNIT];
	f->seq = wire_le32(p + PITCH_HDR_SEQUENCE);
	f->offset = PITCH_HEADER_LEN;
	f->length = hdr_len;
	f->kind = FEED_FRAME_DATA;
	return 0;
}

/* The message at *off: a length byte that counts itself, then the type. */
static int pitch_next_message(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			      uint32_t *mlen)
{
	uint32_t n;

	if (*off + PITCH_MSG_HEADER_LEN > len)
		return -1;
	n = p[*off + PITCH_MSG_LENGTH];
	if (n < PITCH_MSG_HEADER_LEN || n > len - *off)
		return -1;
	*msg = p + *off;
	*mlen = n;
	*off += n;
	return 0;
}

/*
 * Prefetch the filter slots the packet's order messages will look up, so
 * their cache misses overlap instead of queueing one after the other.
 * Adds are prefetched only with every symbol subscribed: otherwise most
 * are not inserted at all. The walk stops at the first malformed length;
 * the decode loop reports it.
 */
WB_PREFETCH_FN void prefetch_orders(const struct feed_packet *pk, const struct pitch_state *st,
			    const uint8_t *p, uint32_t len, uint32_t count)
{
	bool all = pk->engine->subs.all;
	uint32_t off = PITCH_HEADER_LEN, i;

	for (i = 0; i < count && off + PITCH_MSG_HEADER_LEN <= len; i++) {
		uint8_t mlen = p[off + PITCH_MSG_LENGTH], type = p[off + PITCH_MSG_TYPE];

		if (mlen < PITCH_MSG_HEADER_LEN || mlen > len - off)
			return;
		if (mlen >= PITCH_ORDER_ID + 8) {	/* long enough to hold an order id */
			if (type >= PITCH_EXECUTED && type <= PITCH_DELETE)
				order_filter_prefetch(&st->filter,
						      wire_le64(p + off + PITCH_ORDER_ID), false);
			else if (all && (type == PITCH_ADD_SHORT || type == PITCH_ADD_LONG ||
					 type == PITCH_ADD_EXPANDED))
				order_filter_prefetch(&st->filter,
						      wire_le64(p + off + PITCH_ORDER_ID), true);
		}
		off += mlen;
	}
}

static uint32_t pitch_decode(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			     const struct feed_frame *f, uint32_t skip)
{
	struct pitch_state *st = pk->state;
	uint32_t off = PITCH_HEADER_LEN, i;

	if (f->count > 1)
		prefetch_orders(pk, st, p, len, f->count);
	for (i = 0; i < f->count; i++) {
		uint32_t mlen;

		if (wb_unlikely(off + PITCH_MSG_HEADER_LEN > len))
			goto truncated;
		mlen = p[off + PITCH_MSG_LENGTH];
		if (wb_unlikely(mlen < PITCH_MSG_HEADER_LEN)) {
			/* A length that cannot cover its own header: nothing after it can
			 * be framed. */
			feed_count_error(pk, FEED_ERR_BAD_LENGTH);
			return i;
		}
		if (wb_unlikely(mlen > len - off))
			goto truncated;
		if (wb_likely(i >= skip))
			decode_message(pk, st, p + off, mlen, f->seq + i, f->unit);
		off += mlen;
	}
	if (wb_unlikely(off != len))
		feed_count_error(pk, FEED_ERR_BAD_COUNT);
	return i;
truncated:
	/* The rest of this packet is lost: the other line's copy or the stream
	 * layer fills it or reports it as a gap. */
	feed_count_error(pk, FEED_ERR_TRUNCATED);
	return i;
}

/*
 * The unit's last Time may be in a lost range (notes: Time); a new day has none
 * yet. A snapshot (spin) rebuilds the unit: its orders leave the filter,
 * the spin adds them again.
 */
static void pitch_stream_event(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	struct pitch_state *st = pk->state;

	st->unit[unit].time_known = false;
	if (ev == FEED_STREAM_SNAPSHOT)
		order_filter_clear_unit(&st->filter, unit);
}

/* ---- raw view: the spec's fields of every message (wb-dump --raw) ------- */

#define PITCH_PREFIX FEED_F_UINT("", PITCH_MSG_TYPE, 1), \
	FEED_F_UINT("offset_ns", PITCH_TIME_OFFSET, 4)

static const struct feed_field pitch_time[] = {
	FEED_F_UINT("", PITCH_MSG_TYPE, 1), FEED_F_UINT("time_s", PITCH_TIME_SECONDS, 4),
};
static const struct feed_field pitch_unit_event[] = { PITCH_PREFIX };
static const struct feed_field pitch_add_long[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_LONG_QTY, 4),
	FEED_F_TICKER("symbol", PITCH_ADD_LONG_SYMBOL, PITCH_SYMBOL_SHORT_LEN),
	FEED_F_PRICE("price", PITCH_ADD_LONG_PRICE, 8, 4),
	FEED_F_HEX("flags", PITCH_ADD_LONG_FLAGS, 1),
};
static const struct feed_field pitch_add_short[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_SHORT_QTY, 2),
	FEED_F_TICKER("symbol", PITCH_ADD_SHORT_SYMBOL, PITCH_SYMBOL_SHORT_LEN),
	FEED_F_PRICE("price", PITCH_ADD_SHORT_PRICE, 2, 2),
	FEED_F_HEX("flags", PITCH_ADD_SHORT_FLAGS, 1),
};
static const struct feed_field pitch_add_expanded[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_EXPANDED_QTY, 4),
	FEED_F_TICKER("symbol", PITCH_ADD_EXPANDED_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_PRICE("price", PITCH_ADD_EXPANDED_PRICE, 8, 4),
	FEED_F_HEX("flags", PITCH_ADD_EXPANDED_FLAGS, 1),
};
static const struct feed_field pitch_executed[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("executed", PITCH_EXECUTED_QTY, 4),
	FEED_F_UINT("execution", PITCH_EXECUTED_EXECUTION, 8),
};
static const struct feed_field pitch_executed_at_price[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("executed", PITCH_EXECUTED_AT_PRICE_QTY, 4),
	FEED_F_UINT("remaining", PITCH_EXECUTED_AT_PRICE_REMAINING, 4),
	FEED_F_UINT("execution", PITCH_EXECUTED_AT_PRICE_EXECUTION, 8),
	FEED_F_PRICE("price", PITCH_EXECUTED_AT_PRICE_PRICE, 8, 4),
};
static const struct feed_field pitch_reduce_long[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("cancelled", PITCH_REDUCE_QTY, 4),
};
static const struct feed_field pitch_reduce_short[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("cancelled", PITCH_REDUCE_QTY, 2),
};
static const struct feed_field pitch_modify_long[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("qty", PITCH_MODIFY_LONG_QTY, 4),
	FEED_F_PRICE("price", PITCH_MODIFY_LONG_PRICE, 8, 4),
	FEED_F_HEX("flags", PITCH_MODIFY_LONG_FLAGS, 1),
};
static const struct feed_field pitch_modify_short[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
	FEED_F_UINT("qty", PITCH_MODIFY_SHORT_QTY, 2),
	FEED_F_PRICE("price", PITCH_MODIFY_SHORT_PRICE, 2, 2),
	FEED_F_HEX("flags", PITCH_MODIFY_SHORT_FLAGS, 1),
};
static const struct feed_field pitch_delete[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8),
};
static const struct feed_field pitch_trade_long[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_LONG_QTY, 4),
	FEED_F_TICKER("symbol", PITCH_ADD_LONG_SYMBOL, PITCH_SYMBOL_SHORT_LEN),
	FEED_F_PRICE("price", PITCH_ADD_LONG_PRICE, 8, 4),
	FEED_F_UINT("execution", PITCH_TRADE_LONG_EXECUTION, 8),
};
static const struct feed_field pitch_trade_short[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_SHORT_QTY, 2),
	FEED_F_TICKER("symbol", PITCH_ADD_SHORT_SYMBOL, PITCH_SYMBOL_SHORT_LEN),
	FEED_F_PRICE("price", PITCH_ADD_SHORT_PRICE, 2, 2),
	FEED_F_UINT("execution", PITCH_TRADE_SHORT_EXECUTION, 8),
};
static const struct feed_field pitch_trade_expanded[] = {
	PITCH_PREFIX, FEED_F_UINT("order", PITCH_ORDER_ID, 8), FEED_F_CHAR("side", PITCH_SIDE),
	FEED_F_UINT("qty", PITCH_ADD_EXPANDED_QTY, 4),
	FEED_F_TICKER("symbol", PITCH_ADD_EXPANDED_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_PRICE("price", PITCH_ADD_EXPANDED_PRICE, 8, 4),
	FEED_F_UINT("execution", PITCH_TRADE_EXPANDED_EXECUTION, 8),
};
static const struct feed_field pitch_trade_break[] = {
	PITCH_PREFIX, FEED_F_UINT("execution", PITCH_TRADE_BREAK_EXECUTION, 8),
};
static const struct feed_field pitch_trading_status[] = {
	PITCH_PREFIX, FEED_F_TICKER("symbol", PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_CHAR("status", PITCH_STATUS_STATUS),
	FEED_F_CHAR("regsho", PITCH_STATUS_REG_SHO),
};
static const struct feed_field pitch_auction_update[] = {
	PITCH_PREFIX, FEED_F_TICKER("symbol", PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_CHAR("auction", PITCH_AUCTION_TYPE),
	FEED_F_PRICE("reference", PITCH_AUCTION_UPDATE_REFERENCE, 8, 4),
	FEED_F_UINT("buy", PITCH_AUCTION_UPDATE_BUY, 4),
	FEED_F_UINT("sell", PITCH_AUCTION_UPDATE_SELL, 4),
	FEED_F_PRICE("indicative", PITCH_AUCTION_UPDATE_INDICATIVE, 8, 4),
	FEED_F_PRICE("auction_only", PITCH_AUCTION_UPDATE_AUCTION_ONLY, 8, 4),
};
static const struct feed_field pitch_auction_summary[] = {
	PITCH_PREFIX, FEED_F_TICKER("symbol", PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_CHAR("auction", PITCH_AUCTION_TYPE),
	FEED_F_PRICE("price", PITCH_AUCTION_SUMMARY_PRICE, 8, 4),
	FEED_F_UINT("shares", PITCH_AUCTION_SUMMARY_SHARES, 4),
};
static const struct feed_field pitch_rpi[] = {
	PITCH_PREFIX, FEED_F_TICKER("symbol", PITCH_STATUS_SYMBOL, PITCH_SYMBOL_LEN),
	FEED_F_CHAR("rpi", PITCH_RPI_INDICATOR),
};

/* A type's layout, named as the spec names it, its known prefix its length. */
#define PITCH_L(type, name, fields) [type] = FEED_LAYOUT(name, type##_LEN, fields)

static const struct feed_msg_layout pitch_layouts[256] = {
	PITCH_L(PITCH_TIME, "Time", pitch_time),
	PITCH_L(PITCH_ADD_LONG, "Add Order Long", pitch_add_long),
	PITCH_L(PITCH_ADD_SHORT, "Add Order Short", pitch_add_short),
	PITCH_L(PITCH_EXECUTED, "Order Executed", pitch_executed),
	PITCH_L(PITCH_EXECUTED_AT_PRICE, "Order Executed at Price/Size", pitch_executed_at_price),
	PITCH_L(PITCH_REDUCE_LONG, "Reduce Size Long", pitch_reduce_long),
	PITCH_L(PITCH_REDUCE_SHORT, "Reduce Size Short", pitch_reduce_short),
	PITCH_L(PITCH_MODIFY_LONG, "Modify Order Long", pitch_modify_long),
	PITCH_L(PITCH_MODIFY_SHORT, "Modify Order Short", pitch_modify_short),
	PITCH_L(PITCH_DELETE, "Delete Order", pitch_delete),
	PITCH_L(PITCH_TRADE_LONG, "Trade Long", pitch_trade_long),
	PITCH_L(PITCH_TRADE_SHORT, "Trade Short", pitch_trade_short),
	PITCH_L(PITCH_TRADE_BREAK, "Trade Break", pitch_trade_break),
	PITCH_L(PITCH_END_OF_SESSION, "End of Session", pitch_unit_event),
	PITCH_L(PITCH_ADD_EXPANDED, "Add Order Expanded", pitch_add_expanded),
	PITCH_L(PITCH_TRADE_EXPANDED, "Trade Expanded", pitch_trade_expanded),
	PITCH_L(PITCH_TRADING_STATUS, "Trading Status", pitch_trading_status),
	PITCH_L(PITCH_AUCTION_UPDATE, "Auction Update", pitch_auction_update),
	PITCH_L(PITCH_AUCTION_SUMMARY, "Auction Summary", pitch_auction_summary),
	PITCH_L(PITCH_UNIT_CLEAR, "Unit Clear", pitch_unit_event),
	PITCH_L(PITCH_RPI, "Retail Price Improvement", pitch_rpi),
};

static const struct feed_msg_layout *pitch_layout(const uint8_t *m, uint32_t len)
{
	if (len < PITCH_MSG_HEADER_LEN || !pitch_layouts[m[PITCH_MSG_TYPE]].name)
		return 0;
	return &pitch_layouts[m[PITCH_MSG_TYPE]];
}

/* Sequenced Unit Header whose messages exactly fill the datagram. */
static bool pitch_looks_like(const uint8_t *p, uint32_t len)
{
	struct feed_frame f;
	const uint8_t *m;
	uint32_t off = PITCH_HEADER_LEN, mlen, i;

	if (pitch_frame(p, len, &f) < 0 || f.length != len)
		return false;
	for (i = 0; i < f.count; i++)
		if (pitch_next_message(p, len, &off, &m, &mlen) < 0 ||
		    !pitch_min_len[m[PITCH_MSG_TYPE]])
			return false;
	return off == len;
}

const struct feed_proto feed_proto_pitch = {
	.name = "pitch",
	.title = "Cboe US Equities Multicast PITCH (Sequenced Unit Header)",
	.venues = 1u << WB_VENUE_BZX | 1u << WB_VENUE_BYX | 1u << WB_VENUE_EDGX |
		  1u << WB_VENUE_EDGA,
	.units = PITCH_UNITS,
	.first_seq = 1,
	.big_endian = false,
	.type_offset = 1,
	.type_width = 1,
	.directory_keys = 0,
	.sample_tickers = "MAT,YANG,A",
	.state_size = pitch_state_size,
	.state_init = pitch_state_init,
	.state_reset = pitch_state_reset,
	.frame = pitch_frame,
	.snapshot_frame = pitch_snapshot_frame,
	.decode = pitch_decode,
	.stream_event = pitch_stream_event,
	.next_message = pitch_next_message,
	.layout = pitch_layout,
	.looks_like = pitch_looks_like,
};
