/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Nasdaq TotalView-ITCH 5.0 over MoldUDP64 (big-endian throughout); also
 * the ITCH-format feeds of Nasdaq BX and PSX.
 *
 * Sequencing is the shared layer's (stream.c): a stream is the MoldUDP64
 * session; a new session id starts the venue's day over (its directory
 * and books are cleared).
 *
 * Filtering is by stock locate: 'R' (Stock Directory) defines the locate
 * in the venue's instrument cache (directory.c), which answers "is this
 * subscribed" with one load per message. A message naming a locate the
 * directory never defined is counted (unknown_symbol); when the message
 * carries its stock (A, F, P, Q, H, h) the locate is learned from it, so
 * captures that start mid-day still decode.
 *
 * Time: the 48-bit nanoseconds since midnight plus the trading day's
 * midnight (feed_time.c), so exch_ts is epoch time like every feed's.
 */
#include "moldudp64.h"
#include "wire/itch50.h"

#define ITCH_LOCATES 65536
#define ITCH_PRICE4_TO_WB 10000		/* Price(4) -> 1e-8 */
#define ITCH_DEFAULT_ROUND_LOT 100

/* Everything ITCH keeps lives in the venue's shared directory. */
struct itch_state {
	uint8_t unused;
};

/* Minimum length of each message type (the spec's lengths); 0 = unknown type. */
static const uint8_t itch_min_len[256] = {
	[ITCH_SYSTEM_EVENT] = ITCH_SYSTEM_EVENT_LEN,
	[ITCH_STOCK_DIRECTORY] = ITCH_STOCK_DIRECTORY_LEN,
	[ITCH_TRADING_ACTION] = ITCH_TRADING_ACTION_LEN,
	[ITCH_REG_SHO] = ITCH_REG_SHO_LEN,
	[ITCH_PARTICIPANT_POSITION] = ITCH_PARTICIPANT_POSITION_LEN,
	[ITCH_MWCB_DECLINE] = ITCH_MWCB_DECLINE_LEN,
	[ITCH_MWCB_STATUS] = ITCH_MWCB_STATUS_LEN,
	[ITCH_IPO_QUOTING] = ITCH_IPO_QUOTING_LEN,
	[ITCH_LULD_COLLAR] = ITCH_LULD_COLLAR_LEN,
	[ITCH_OPERATIONAL_HALT] = ITCH_OPERATIONAL_HALT_LEN,
	[ITCH_ADD] = ITCH_ADD_LEN,
	[ITCH_ADD_MPID] = ITCH_ADD_MPID_LEN,
	[ITCH_EXECUTED] = ITCH_EXECUTED_LEN,
	[ITCH_EXECUTED_PRICE] = ITCH_EXECUTED_PRICE_LEN,
	[ITCH_CANCEL] = ITCH_CANCEL_LEN,
	[ITCH_DELETE] = ITCH_DELETE_LEN,
	[ITCH_REPLACE] = ITCH_REPLACE_LEN,
	[ITCH_TRADE] = ITCH_TRADE_LEN,
	[ITCH_CROSS_TRADE] = ITCH_CROSS_TRADE_LEN,
	[ITCH_BROKEN_TRADE] = ITCH_BROKEN_TRADE_LEN,
	[ITCH_NOII] = ITCH_NOII_LEN,
	[ITCH_RPII] = ITCH_RPII_LEN,
	[ITCH_DLCR] = ITCH_DLCR_LEN,
};

static size_t itch_state_size(const struct feed_engine_config *cfg)
{
	(void)cfg;
	return sizeof(struct itch_state);
}

static void itch_state_reset(void *state)
{
	(void)state;
}

static void itch_state_init(void *state, const struct feed_engine_config *cfg)
{
	(void)state;
	(void)cfg;
}

static int64_t price4(const uint8_t *p)
{
	return (int64_t)wire_be32(p) * ITCH_PRICE4_TO_WB;
}

/* Stock Directory: the locate's ticker, round lot and market. */
static uint16_t define_locate(struct feed_packet *pk, const uint8_t *m, uint64_t seq, uint64_t ts)
{
	struct feed_symbol sym = {
		.ticker = feed_symbol8_key(m + ITCH_DIRECTORY_STOCK),
		.round_lot = wire_be32(m + ITCH_DIRECTORY_ROUND_LOT),
		.market = (char)m[ITCH_DIRECTORY_MARKET],
	};

	return feed_dir_define(pk, wire_be16(m + ITCH_LOCATE), &sym, seq, ts);
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
 * The instrument of a message that carries its stock at stock_off: a
 * locate the directory never defined is learned from it.
 */
static uint16_t instrument_learning(struct feed_packet *pk, const uint8_t *m, uint32_t stock_off,
				    uint64_t seq, uint64_t ts)
{
	const struct feed_directory *d = &pk->v->dir;
	uint16_t locate = wire_be16(m + ITCH_LOCATE), inst = d->instrument[locate];

	/* The instrument cache answers the common case on its own. */
	if (wb_likely(inst))
		return inst;
	if (wb_unlikely(!d->symbol[locate].ticker))
		return feed_dir_learn(pk, locate, feed_symbol8_key(m + stock_off),
				      ITCH_DEFAULT_ROUND_LOT, seq, ts);
	return 0;
}

/* The instrument of an order message that names only its locate. */
static uint16_t instrument_of(struct feed_packet *pk, const uint8_t *m)
{
	const struct feed_directory *d = &pk->v->dir;
	uint16_t locate = wire_be16(m + ITCH_LOCATE), inst = d->instrument[locate];

	if (wb_unlikely(!inst && !d->symbol[locate].ticker))
		feed_count_error(pk, FEED_ERR_UNKNOWN_SYMBOL);
	return inst;
}

/*
 * Where the seven order-book messages (A F E C X D U) and the trade of a
 * non-displayed order (P), whose event has the order's layout, keep their
 * fields: together about 99% of a day. One table turns them into one
 * branch-free path: a field a type lacks is read at offset 0 (always
 * inside the message) and masked to zero, so a random mix of types costs
 * no mispredicted switch. Every other type's min_len is above any block's,
 * so one compare of the length sends both a short message and another
 * type off the path.
 */
struct itch_order_layout {
	uint64_t word0;		/* the event's first word as far as the type fixes it */
	uint64_t attr_mask;	/* of attr_of_char: the side of an add or a P, a C's printable flag */
	uint64_t min_attr;	/* an add's side must be B or S */
	uint64_t ref_mask;
	uint64_t qty_mpid_mask;	/* of the event's word of both (feed_event_pair32) */
	uint32_t price_mask;	/* of the Price(4), before scaling */
	uint32_t min_len;	/* the spec's length */
	uint8_t qty_off;
	uint8_t price_off;
	uint8_t ref_off;
	uint8_t mpid_off;
	uint8_t attr_off;	/* 0 reads the type byte, which is never B, S or Y here */
	uint8_t pad[11];
};

_Static_assert(sizeof(struct itch_order_layout) == 64, "an entry's address is one shift");

#define ALL32 0xffffffffu
#define ALL64 0xffffffffffffffffull
#define QTY FEED_EVENT_PAIR32(ALL32, 0)
#define QTY_MPID FEED_EVENT_PAIR32(ALL32, ALL32)
#define ITCH_NOT_IN_TABLE 0x10000	/* above any 16-bit block length */
#define SIDE_BYTE FEED_EVENT_WORD0(0, 0, 0xff, 0, 0, 0)
#define FLAGS_BYTE FEED_EVENT_WORD0(0, 0, 0, 0xff, 0, 0)
#define SIDE_REQUIRED FEED_EVENT_WORD0(0, 0, WB_SIDE_BUY, 0, 0, 0)	/* the lower of B and S */

/*
 * The table-driven path's tables, in one object: position-independent
 * code takes a table's address with an instruction of its own, here one
 * for both. The layout is indexed by the type byte itself (no table in
 * between: a load less on the way to every field, 0.3 ns a message), so
 * every entry is first set to a type not in the table, then the eight are
 * overridden: on purpose, hence the pragmas.
 */
#pragma GCC diagnostic push
#ifdef __clang__
#pragma GCC diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
static const struct {
	struct itch_order_layout layout[256];
	/* A side or printable character as its bits of an event's first word. */
	uint64_t attr_of_char[256];
} order = {
	.layout = {
		[0 ... 255] = { .min_len = ITCH_NOT_IN_TABLE },
		[ITCH_ADD] = { .word0 = FEED_EVENT_WORD0(WB_EV_ADD, 0, 0, 0, 0, 0),
			  .min_len = ITCH_ADD_LEN, .attr_off = ITCH_ADD_SIDE, .attr_mask = SIDE_BYTE,
			  .min_attr = SIDE_REQUIRED, .qty_off = ITCH_ADD_SHARES, .qty_mpid_mask = QTY,
			  .price_off = ITCH_ADD_PRICE, .price_mask = ALL32 },
		[ITCH_ADD_MPID] = { .word0 = FEED_EVENT_WORD0(WB_EV_ADD, 0, 0, 0, 0, 0),
			  .min_len = ITCH_ADD_MPID_LEN, .attr_off = ITCH_ADD_SIDE, .attr_mask = SIDE_BYTE,
			  .min_attr = SIDE_REQUIRED, .qty_off = ITCH_ADD_SHARES,
			  .qty_mpid_mask = QTY_MPID, .price_off = ITCH_ADD_PRICE,
			  .price_mask = ALL32, .mpid_off = ITCH_ADD_MPID_ATTRIBUTION },
		[ITCH_EXECUTED] = { .word0 = FEED_EVENT_WORD0(WB_EV_EXECUTE, 0, 0, WB_EVF_PRINTABLE, 0, 0),
			  .min_len = ITCH_EXECUTED_LEN, .qty_off = ITCH_EXECUTED_SHARES,
			  .qty_mpid_mask = QTY, .ref_off = ITCH_EXECUTED_MATCH, .ref_mask = ALL64 },
		[ITCH_EXECUTED_PRICE] = { .word0 = FEED_EVENT_WORD0(WB_EV_EXECUTE_AT_PRICE, 0, 0, 0, 0, 0),
			  .min_len = ITCH_EXECUTED_PRICE_LEN, .attr_off = ITCH_EXECUTED_PRINTABLE,
			  .attr_mask = FLAGS_BYTE, .qty_off = ITCH_EXECUTED_SHARES, .qty_mpid_mask = QTY,
			  .price_off = ITCH_EXECUTED_PRICE_PRICE, .price_mask = ALL32,
			  .ref_off = ITCH_EXECUTED_MATCH, .ref_mask = ALL64 },
		[ITCH_CANCEL] = { .word0 = FEED_EVENT_WORD0(WB_EV_REDUCE, 0, 0, 0, 0, 0),
			  .min_len = ITCH_CANCEL_LEN, .qty_off = ITCH_CANCEL_SHARES, .qty_mpid_mask = QTY },
		[ITCH_DELETE] = { .word0 = FEED_EVENT_WORD0(WB_EV_DELETE, 0, 0, 0, 0, 0),
			  .min_len = ITCH_DELETE_LEN },
		[ITCH_REPLACE] = { .word0 = FEED_EVENT_WORD0(WB_EV_REPLACE, 0, 0, 0, 0, 0),
			  .min_len = ITCH_REPLACE_LEN, .qty_off = ITCH_REPLACE_SHARES,
			  .qty_mpid_mask = QTY, .price_off = ITCH_REPLACE_PRICE, .price_mask = ALL32,
			  .ref_off = ITCH_REPLACE_NEW_REF, .ref_mask = ALL64 },
		/* ref is the match number (wb_ev_trade.match_id); qty's neighbour, cross_type, 0 */
		[ITCH_TRADE] = { .word0 = FEED_EVENT_WORD0(WB_EV_TRADE, 0, 0, WB_EVF_PRINTABLE, 0, 0),
			  .min_len = ITCH_TRADE_LEN, .attr_off = ITCH_ADD_SIDE, .attr_mask = SIDE_BYTE,
			  .qty_off = ITCH_ADD_SHARES, .qty_mpid_mask = QTY, .price_off = ITCH_ADD_PRICE,
			  .price_mask = ALL32, .ref_off = ITCH_TRADE_MATCH, .ref_mask = ALL64 },
	},
	.attr_of_char = {
		['B'] = FEED_EVENT_WORD0(0, 0, WB_SIDE_BUY, 0, 0, 0),
		['S'] = FEED_EVENT_WORD0(0, 0, WB_SIDE_SELL, 0, 0, 0),
		['Y'] = FEED_EVENT_WORD0(0, 0, 0, WB_EVF_PRINTABLE, 0, 0),
	},
};
#pragma GCC diagnostic pop

/* The instrument of a message of the table whose locate is not subscribed (yet). */
static uint16_t order_instrument_slow(struct feed_packet *pk, const uint8_t *m, uint64_t seq,
				      uint64_t ts)
{
	/* Adds and trades carry their stock and can fill a missing directory entry. */
	if (m[ITCH_TYPE] == ITCH_ADD || m[ITCH_TYPE] == ITCH_ADD_MPID || m[ITCH_TYPE] == ITCH_TRADE)
		return instrument_learning(pk, m, ITCH_ADD_STOCK, seq, ts);
	return instrument_of(pk, m);
}

/*
 * The 48-bit timestamp as one 8-byte load ending where it ends (every
 * ITCH message holds its header, so the load stays inside it).
 */
static inline uint64_t itch_timestamp(const uint8_t *m)
{
	return wire_be64(m + ITCH_TIMESTAMP + ITCH_TIMESTAMP_LEN - 8) & 0xffffffffffffull;
}

static inline void store64(uint8_t *slot, unsigned off, uint64_t v)
{
	__builtin_memcpy(slot + off, &v, 8);
}

/*
 * A packet's messages as itch_decode walks them. It lives in registers:
 * its address never leaves the inlined functions below.
 */
struct itch_walk {
	struct feed_packet *pk;
	const uint8_t *next;	/* the next message block */
	const uint8_t *end;	/* of the packet */
	const uint16_t *inst_of;
	uint64_t word0_base;	/* venue and line, the same in every event */
	struct feed_run run;
	/* Messages are walked by sequence number, up to seq_end (not included). */
	uint64_t seq_end;
	/*
	 * Messages before room_end have a slot each in the run: the ring's
	 * room is looked at once per packet, and again after anything that
	 * emitted through pk->out. It is never before the message after the
	 * one being decoded: the walk's loop compares with !=.
	 */
	uint64_t room_end;
	uint32_t empty;		/* zero-length message blocks: no message */
};

/* A new run from the producer's head, for the messages from seq on. */
static inline void walk_begin_run(struct itch_walk *w, uint64_t seq)
{
	feed_run_begin(&w->run, w->pk->out);
	w->room_end = w->run.slots < w->seq_end - seq ? seq + w->run.slots : w->seq_end;
}

/*
 * Message seq, a message of the table, of layout l. The event is composed in
 * registers and written as eight 8-byte stores, the whole slot's cache
 * line at once.
 */
static inline __attribute__((always_inline)) void
decode_order(struct itch_walk *w, uint64_t seq, const uint8_t *m, const struct itch_order_layout *l)
{
	struct feed_packet *pk = w->pk;
	/* The 48-bit time as the top of an 8-byte load: a message of the
	 * table is longer than 13 bytes. */
	uint64_t ts = (wire_be64(m + ITCH_TIMESTAMP) >> 16) + pk->midnight_ns;
	uint16_t inst = w->inst_of[wire_be16(m + ITCH_LOCATE)];
	uint64_t attr = order.attr_of_char[m[l->attr_off]] & l->attr_mask;
	uint8_t *slot;
	uint32_t qty, mpid;

	if (wb_unlikely(!inst)) {
		/* Learning a locate emits through pk->out. */
		feed_run_end(&w->run, pk->out);
		inst = order_instrument_slow(pk, m, seq, ts);
		walk_begin_run(w, seq);
		if (wb_unlikely(w->room_end == seq)) {
			/* Learning took the slot this message was counted on. */
			w->room_end = seq + 1;
			if (inst && attr >= l->min_attr) {
				wb_ring_producer_drop(pk->out);
				return;
			}
		}
		if (!inst) {
			pk->counters->filtered++;
			return;
		}
	}
	if (wb_unlikely(attr < l->min_attr)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	slot = feed_run_slot(&w->run);
	qty = wire_be32(m + l->qty_off);
	mpid = wire_le32(m + l->mpid_off);
	store64(slot, 0, w->word0_base | l->word0 | attr | FEED_EVENT_WORD0(0, 0, 0, 0, 0, inst));
	store64(slot, 8, seq);
	store64(slot, 16, ts);
	store64(slot, 24, pk->recv_ts);
	store64(slot, 32, wire_be64(m + ITCH_ORDER_REF));
	store64(slot, 40, (uint64_t)(wire_be32(m + l->price_off) & l->price_mask) * ITCH_PRICE4_TO_WB);
	store64(slot, 48, feed_event_pair32(qty, mpid) & l->qty_mpid_mask);
	store64(slot, 56, wire_be64(m + l->ref_off) & l->ref_mask);
	feed_run_commit(&w->run);
}

/* Everything but the messages of the table: crosses, breaks, directory, status. */
static int decode_other(struct feed_packet *pk, const uint8_t *m, uint64_t seq)
{
	uint8_t type = m[ITCH_TYPE];
	uint64_t ts = itch_timestamp(m) + pk->midnight_ns;
	struct wb_event *ev;
	uint16_t inst;

	switch (type) {
	case ITCH_CROSS_TRADE: {
		uint64_t shares = wire_be64(m + ITCH_CROSS_SHARES);

		inst = instrument_learning(pk, m, ITCH_CROSS_STOCK, seq, ts);
		if (!inst)
			return 1;
		ev = feed_emit(pk, WB_EV_TRADE, inst, seq, ts);
		if (!ev)
			return 0;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->flags = WB_EVF_PRINTABLE | WB_EVF_CROSS;
		/* A cross of more than 4G shares does not occur; saturate rather than wrap. */
		ev->u.trade.qty = shares > 0xffffffffu ? 0xffffffffu : (uint32_t)shares;
		ev->u.trade.price = price4(m + ITCH_CROSS_PRICE);
		ev->u.trade.match_id = wire_be64(m + ITCH_CROSS_MATCH);
		ev->u.trade.cross_type = (char)m[ITCH_CROSS_TYPE];
		feed_commit(pk);
		return 0;
	}
	case ITCH_BROKEN_TRADE:
		inst = instrument_of(pk, m);
		if (!inst)
			return 1;
		ev = feed_emit(pk, WB_EV_TRADE_BREAK, inst, seq, ts);
		if (!ev)
			return 0;
		__builtin_memset(&ev->u, 0, sizeof(ev->u));
		ev->u.trade.match_id = wire_be64(m + ITCH_BROKEN_MATCH);
		feed_commit(pk);
		return 0;
	case ITCH_STOCK_DIRECTORY:
		return !define_locate(pk, m, seq, ts);
	case ITCH_TRADING_ACTION:
		inst = instrument_learning(pk, m, ITCH_ACTION_STOCK, seq, ts);
		if (!inst)
			return 1;
		emit_status(pk, inst, seq, ts, trading_action_state(m[ITCH_ACTION_STATE]),
			    m[ITCH_ACTION_STATE], m + ITCH_ACTION_REASON, 0);
		return 0;
	case ITCH_OPERATIONAL_HALT:
		/* Only a halt of the Nasdaq market itself changes this venue's book. */
		if (m[ITCH_HALT_MARKET] != 'Q') {
			pk->counters->ignored++;
			return 0;
		}
		inst = instrument_learning(pk, m, ITCH_HALT_STOCK, seq, ts);
		if (!inst)
			return 1;
		emit_status(pk, inst, seq, ts,
			    m[ITCH_HALT_ACTION] == 'H' ? WB_STATE_HALTED : WB_STATE_TRADING,
			    ITCH_OPERATIONAL_HALT, (const uint8_t *)"OPHT", 0);
		return 0;
	case ITCH_SYSTEM_EVENT:
		emit_status(pk, 0, seq, ts, system_event_state(m[ITCH_SYSTEM_EVENT_CODE]),
			    m[ITCH_SYSTEM_EVENT_CODE], 0,
			    m[ITCH_SYSTEM_EVENT_CODE] == 'C' ? WB_EVF_SESSION_END : 0);
		return 0;
	default:
		/* Y L V W K J I N O: reference and auction data no book needs. */
		pk->counters->ignored++;
		return 0;
	}
}

/*
 * Frame and decode message seq. Returns false when its block runs past the
 * packet (truncated).
 */
static inline __attribute__((always_inline)) bool decode_message(struct itch_walk *w, uint64_t seq)
{
	struct feed_packet *pk = w->pk;
	const struct itch_order_layout *l;
	const uint8_t *m;
	uint32_t mlen, min;

	if (wb_unlikely(w->end - w->next < MOLD_BLOCK_LENGTH_LEN))
		return false;
	mlen = wire_be16(w->next);
	m = w->next + MOLD_BLOCK_LENGTH_LEN;
	/* One compare for both a block past the end and an empty block (its
	 * length - 1 wraps above any size_t the packet has). */
	if (wb_unlikely(mlen - 1u >= (size_t)(w->end - m))) {
		if (mlen)
			return false;
		w->next = m;
		w->empty++;
		feed_count_error(pk, FEED_ERR_BAD_LENGTH);
		return true;
	}
	w->next = m + mlen;
	l = &order.layout[m[ITCH_TYPE]];
	if (wb_likely(mlen >= l->min_len)) {
		decode_order(w, seq, m, l);
		return true;
	}
	/* Another type, or a message of the table shorter than the spec's. */
	min = itch_min_len[m[ITCH_TYPE]];
	if (wb_unlikely(mlen < min || !min)) {
		feed_count_error(pk, min ? FEED_ERR_BAD_LENGTH : FEED_ERR_UNKNOWN_TYPE);
		return true;
	}
	feed_run_end(&w->run, pk->out);
	pk->counters->filtered += (uint64_t)decode_other(pk, m, seq);
	walk_begin_run(w, seq + 1);
	return true;
}

/* With the ring full, a message decoded into sink: count a drop if it made an event. */
static inline void walk_end_run(struct itch_walk *w, const uint64_t *sink)
{
	if (wb_unlikely(w->run.start == (const uint8_t *)sink)) {
		if (feed_run_events(&w->run))
			wb_ring_producer_drop(w->pk->out);
		return;
	}
	feed_run_end(&w->run, w->pk->out);
}

static uint32_t itch_decode(struct feed_packet *pk, const uint8_t *p, uint32_t len,
			    const struct feed_frame *f, uint32_t skip)
{
	struct itch_walk w = {
		.pk = pk,
		.next = p + MOLD_HEADER_LEN,
		.end = p + len,
		.inst_of = pk->v->dir.instrument,
		.word0_base = feed_event_word0(0, pk->venue, 0, 0, pk->line_index, 0),
		.seq_end = f->seq + f->count,
	};
	/* A message decodes into this, which is no ring slot, when the ring is full. */
	uint64_t sink[sizeof(struct wb_event) / 8];
	uint64_t seq, first;
	uint32_t i;

	/* Messages the stream has already seen: walked over, bounds checked. */
	for (i = 0; i < skip && i < f->count; i++) {
		uint32_t mlen;

		if (wb_unlikely(w.end - w.next < MOLD_BLOCK_LENGTH_LEN))
			goto truncated;
		mlen = wire_be16(w.next);
		w.next += MOLD_BLOCK_LENGTH_LEN;
		if (wb_unlikely(mlen > (uint32_t)(w.end - w.next)))
			goto truncated;
		w.next += mlen;
	}
	/* A != compare, not <: sequence numbers may wrap. */
	seq = first = f->seq + i;
	walk_begin_run(&w, seq);
	for (;;) {
		for (; seq != w.room_end; seq++)
			if (wb_unlikely(!decode_message(&w, seq)))
				goto truncated_run;
		walk_end_run(&w, sink);
		if (seq == w.seq_end)
			break;
		walk_begin_run(&w, seq);
		if (wb_unlikely(w.room_end == seq)) {
			/* The ring is full, its tail re-read: message seq alone, into the sink. */
			w.run.start = w.run.next = (uint8_t *)sink;
			w.room_end = seq + 1;
		}
	}
	if (wb_unlikely(w.next != w.end))
		feed_count_error(pk, FEED_ERR_BAD_COUNT);
	goto out;
truncated_run:
	walk_end_run(&w, sink);
	/* The rest of this packet is lost: the stream reports it unless the
	 * other line's copy fills it. */
	feed_count_error(pk, FEED_ERR_TRUNCATED);
out:
	pk->counters->messages += seq - first - w.empty;
	return (uint32_t)(seq - f->seq);
truncated:
	feed_count_error(pk, FEED_ERR_TRUNCATED);
	return i;
}

/*
 * A new MoldUDP64 session is a new day: locates and order references are
 * gone. A snapshot (GLIMPSE) keeps the directory: it sends every Stock
 * Directory again.
 */
static void itch_stream_event(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	struct feed_venue *v = pk->v;

	(void)unit;
	if (ev != FEED_STREAM_NEW_SESSION)
		return;
	feed_directory_clear(&v->dir);
	__builtin_memset(v->announced, 0, sizeof(v->announced));
	__builtin_memset(v->stream_of, 0, sizeof(v->stream_of));
	feed_emit_clear(pk, 0, 0, 0, WB_EVF_SESSION_END);
}

static int itch_next_message(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			     uint32_t *mlen)
{
	return mold_next(p, len, off, msg, mlen);
}

/* ---- raw view: the spec's fields of every message (wb-dump --raw) ------- */

#define ITCH_PREFIX FEED_F_TIME("", ITCH_TIMESTAMP, ITCH_TIMESTAMP_LEN), \
	FEED_F_CHAR("", ITCH_TYPE), FEED_F_KEY("locate", ITCH_LOCATE, 2), \
	FEED_F_UINT("track", ITCH_TRACKING, 2)

static const struct feed_field itch_S[] = {
	ITCH_PREFIX, FEED_F_CHAR("event", ITCH_SYSTEM_EVENT_CODE),
};
static const struct feed_field itch_R[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_DIRECTORY_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("market", ITCH_DIRECTORY_MARKET), FEED_F_CHAR("fsi", ITCH_DIRECTORY_FSI),
	FEED_F_UINT("lot", ITCH_DIRECTORY_ROUND_LOT, 4),
	FEED_F_CHAR("lots_only", ITCH_DIRECTORY_LOTS_ONLY),
	FEED_F_CHAR("class", ITCH_DIRECTORY_CLASS),
	FEED_F_TEXT("subtype", ITCH_DIRECTORY_SUBTYPE, 2),
	FEED_F_CHAR("auth", ITCH_DIRECTORY_AUTHENTICITY), FEED_F_CHAR("ssti", ITCH_DIRECTORY_SSTI),
	FEED_F_CHAR("ipo", ITCH_DIRECTORY_IPO), FEED_F_CHAR("luld_tier", ITCH_DIRECTORY_LULD_TIER),
	FEED_F_CHAR("etp", ITCH_DIRECTORY_ETP),
	FEED_F_UINT("leverage", ITCH_DIRECTORY_LEVERAGE, 4),
	FEED_F_CHAR("inverse", ITCH_DIRECTORY_INVERSE),
};
static const struct feed_field itch_H[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_ACTION_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("state", ITCH_ACTION_STATE), FEED_F_TEXT("reason", ITCH_ACTION_REASON, 4),
};
static const struct feed_field itch_Y[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_REG_SHO_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("regsho", ITCH_REG_SHO_ACTION),
};
static const struct feed_field itch_L[] = {
	ITCH_PREFIX, FEED_F_TEXT("mpid", ITCH_POSITION_MPID, 4),
	FEED_F_TICKER("", ITCH_POSITION_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("primary", ITCH_POSITION_PRIMARY),
	FEED_F_CHAR("mode", ITCH_POSITION_MODE), FEED_F_CHAR("state", ITCH_POSITION_STATE),
};
static const struct feed_field itch_V[] = {
	ITCH_PREFIX, FEED_F_PRICE("level1", ITCH_MWCB_LEVEL1, 8, 8),
	FEED_F_PRICE("level2", ITCH_MWCB_LEVEL2, 8, 8),
	FEED_F_PRICE("level3", ITCH_MWCB_LEVEL3, 8, 8),
};
static const struct feed_field itch_W[] = {
	ITCH_PREFIX, FEED_F_CHAR("breached", ITCH_MWCB_BREACHED),
};
static const struct feed_field itch_K[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_IPO_STOCK, ITCH_STOCK_LEN),
	FEED_F_UINT("release_s", ITCH_IPO_RELEASE_TIME, 4),
	FEED_F_CHAR("qualifier", ITCH_IPO_QUALIFIER),
	FEED_F_PRICE("ipo_price", ITCH_IPO_PRICE, 4, 4),
};
static const struct feed_field itch_J[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_COLLAR_STOCK, ITCH_STOCK_LEN),
	FEED_F_PRICE("ref", ITCH_COLLAR_REFERENCE, 4, 4),
	FEED_F_PRICE("upper", ITCH_COLLAR_UPPER, 4, 4),
	FEED_F_PRICE("lower", ITCH_COLLAR_LOWER, 4, 4),
	FEED_F_UINT("extension", ITCH_COLLAR_EXTENSION, 4),
};
static const struct feed_field itch_h[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_HALT_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("market", ITCH_HALT_MARKET), FEED_F_CHAR("action", ITCH_HALT_ACTION),
};
static const struct feed_field itch_A[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8), FEED_F_CHAR("", ITCH_ADD_SIDE),
	FEED_F_UINT("", ITCH_ADD_SHARES, 4),
	FEED_F_TICKER("", ITCH_ADD_STOCK, ITCH_STOCK_LEN), FEED_F_PRICE("@", ITCH_ADD_PRICE, 4, 4),
};
static const struct feed_field itch_F[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8), FEED_F_CHAR("", ITCH_ADD_SIDE),
	FEED_F_UINT("", ITCH_ADD_SHARES, 4),
	FEED_F_TICKER("", ITCH_ADD_STOCK, ITCH_STOCK_LEN), FEED_F_PRICE("@", ITCH_ADD_PRICE, 4, 4),
	FEED_F_TEXT("mpid", ITCH_ADD_MPID_ATTRIBUTION, 4),
};
static const struct feed_field itch_E[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8),
	FEED_F_UINT("executed", ITCH_EXECUTED_SHARES, 4),
	FEED_F_UINT("match", ITCH_EXECUTED_MATCH, 8),
};
static const struct feed_field itch_C[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8),
	FEED_F_UINT("executed", ITCH_EXECUTED_SHARES, 4),
	FEED_F_UINT("match", ITCH_EXECUTED_MATCH, 8),
	FEED_F_CHAR("printable", ITCH_EXECUTED_PRINTABLE),
	FEED_F_PRICE("price", ITCH_EXECUTED_PRICE_PRICE, 4, 4),
};
static const struct feed_field itch_X[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8),
	FEED_F_UINT("cancelled", ITCH_CANCEL_SHARES, 4),
};
static const struct feed_field itch_D[] = { ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8) };
static const struct feed_field itch_U[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8),
	FEED_F_UINT("new_ref", ITCH_REPLACE_NEW_REF, 8),
	FEED_F_UINT("shares", ITCH_REPLACE_SHARES, 4),
	FEED_F_PRICE("price", ITCH_REPLACE_PRICE, 4, 4),
};
static const struct feed_field itch_P[] = {
	ITCH_PREFIX, FEED_F_UINT("ref", ITCH_ORDER_REF, 8), FEED_F_CHAR("", ITCH_ADD_SIDE),
	FEED_F_UINT("", ITCH_ADD_SHARES, 4),
	FEED_F_TICKER("", ITCH_ADD_STOCK, ITCH_STOCK_LEN), FEED_F_PRICE("@", ITCH_ADD_PRICE, 4, 4),
	FEED_F_UINT("match", ITCH_TRADE_MATCH, 8),
};
static const struct feed_field itch_Q[] = {
	ITCH_PREFIX, FEED_F_UINT("shares", ITCH_CROSS_SHARES, 8),
	FEED_F_TICKER("", ITCH_CROSS_STOCK, ITCH_STOCK_LEN),
	FEED_F_PRICE("price", ITCH_CROSS_PRICE, 4, 4), FEED_F_UINT("match", ITCH_CROSS_MATCH, 8),
	FEED_F_CHAR("cross", ITCH_CROSS_TYPE),
};
static const struct feed_field itch_B[] = {
	ITCH_PREFIX, FEED_F_UINT("match", ITCH_BROKEN_MATCH, 8),
};
static const struct feed_field itch_I[] = {
	ITCH_PREFIX, FEED_F_UINT("paired", ITCH_NOII_PAIRED, 8),
	FEED_F_UINT("imbalance", ITCH_NOII_IMBALANCE, 8),
	FEED_F_CHAR("direction", ITCH_NOII_DIRECTION),
	FEED_F_TICKER("", ITCH_NOII_STOCK, ITCH_STOCK_LEN),
	FEED_F_PRICE("far", ITCH_NOII_FAR, 4, 4),
	FEED_F_PRICE("near", ITCH_NOII_NEAR, 4, 4), FEED_F_PRICE("ref", ITCH_NOII_REFERENCE, 4, 4),
	FEED_F_CHAR("cross", ITCH_NOII_CROSS_TYPE),
	FEED_F_CHAR("variation", ITCH_NOII_VARIATION),
};
static const struct feed_field itch_N[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_RPII_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("interest", ITCH_RPII_INTEREST),
};
static const struct feed_field itch_O[] = {
	ITCH_PREFIX, FEED_F_TICKER("", ITCH_DLCR_STOCK, ITCH_STOCK_LEN),
	FEED_F_CHAR("eligible", ITCH_DLCR_ELIGIBLE),
	FEED_F_PRICE("min", ITCH_DLCR_MIN, 4, 4), FEED_F_PRICE("max", ITCH_DLCR_MAX, 4, 4),
	FEED_F_PRICE("near", ITCH_DLCR_NEAR, 4, 4),
	FEED_F_UINT("near_time", ITCH_DLCR_NEAR_TIME, 8),
	FEED_F_PRICE("lower_collar", ITCH_DLCR_LOWER_COLLAR, 4, 4),
	FEED_F_PRICE("upper_collar", ITCH_DLCR_UPPER_COLLAR, 4, 4),
};

/* A type's layout, named as the spec names it, of the type's length. */
#define ITCH_L(type, name, fields) [type] = FEED_LAYOUT(name, type##_LEN, fields)

static const struct feed_msg_layout itch_layouts[128] = {
	ITCH_L(ITCH_SYSTEM_EVENT, "System Event", itch_S),
	ITCH_L(ITCH_STOCK_DIRECTORY, "Stock Directory", itch_R),
	ITCH_L(ITCH_TRADING_ACTION, "Stock Trading Action", itch_H),
	ITCH_L(ITCH_REG_SHO, "Reg SHO Restriction", itch_Y),
	ITCH_L(ITCH_PARTICIPANT_POSITION, "Market Participant Position", itch_L),
	ITCH_L(ITCH_MWCB_DECLINE, "MWCB Decline Level", itch_V),
	ITCH_L(ITCH_MWCB_STATUS, "MWCB Status", itch_W),
	ITCH_L(ITCH_IPO_QUOTING, "IPO Quoting Period Update", itch_K),
	ITCH_L(ITCH_LULD_COLLAR, "LULD Auction Collar", itch_J),
	ITCH_L(ITCH_OPERATIONAL_HALT, "Operational Halt", itch_h),
	ITCH_L(ITCH_ADD, "Add Order", itch_A),
	ITCH_L(ITCH_ADD_MPID, "Add Order with MPID", itch_F),
	ITCH_L(ITCH_EXECUTED, "Order Executed", itch_E),
	ITCH_L(ITCH_EXECUTED_PRICE, "Order Executed with Price", itch_C),
	ITCH_L(ITCH_CANCEL, "Order Cancel", itch_X),
	ITCH_L(ITCH_DELETE, "Order Delete", itch_D),
	ITCH_L(ITCH_REPLACE, "Order Replace", itch_U),
	ITCH_L(ITCH_TRADE, "Trade", itch_P),
	ITCH_L(ITCH_CROSS_TRADE, "Cross Trade", itch_Q),
	ITCH_L(ITCH_BROKEN_TRADE, "Broken Trade", itch_B),
	ITCH_L(ITCH_NOII, "NOII", itch_I),
	ITCH_L(ITCH_RPII, "Retail Price Improvement Indicator", itch_N),
	ITCH_L(ITCH_DLCR, "DLCR Price Discovery", itch_O),
};

static const struct feed_msg_layout *itch_layout(const uint8_t *m, uint32_t len)
{
	if (!len || m[ITCH_TYPE] >= 128 || !itch_layouts[m[ITCH_TYPE]].name)
		return 0;
	return &itch_layouts[m[ITCH_TYPE]];
}

/*
 * MoldUDP64 whose first message is an ITCH type of at least its length:
 * UQDF rides on MoldUDP64 too, and its messages start with '1'.
 */
static bool itch_looks_like(const uint8_t *p, uint32_t len)
{
	uint16_t count;
	const uint8_t *first = p + MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN;

	if (!mold_looks_like(p, len))
		return false;
	count = wire_be16(p + MOLD_COUNT);
	if (count == MOLD_HEARTBEAT || count == MOLD_END_OF_SESSION)
		return true;
	return len > MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + ITCH_TYPE &&
	       itch_min_len[first[ITCH_TYPE]] &&
	       wire_be16(p + MOLD_HEADER_LEN) >= itch_min_len[first[ITCH_TYPE]];
}

static int itch_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	return mold_frame(p, len, f);
}

const struct feed_proto feed_proto_itch50 = {
	.name = "itch",
	.title = "Nasdaq TotalView-ITCH 5.0 over MoldUDP64",
	.venues = 1u << WB_VENUE_NASDAQ | 1u << WB_VENUE_BX | 1u << WB_VENUE_PSX,
	.units = 1,
	.first_seq = 1,
	.big_endian = true,
	.type_offset = 0,
	.type_width = 1,
	.directory_keys = ITCH_LOCATES,
	.sample_tickers = "META,IVOO",
	.state_size = itch_state_size,
	.state_init = itch_state_init,
	.state_reset = itch_state_reset,
	.frame = itch_frame,
	.snapshot_frame = mold_snapshot_frame,
	.decode = itch_decode,
	.stream_event = itch_stream_event,
	.next_message = itch_next_message,
	.layout = itch_layout,
	.looks_like = itch_looks_like,
};
