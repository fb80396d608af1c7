/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * NYSE Integrated Feed (XDP/Pillar) encoder for the generator (see gen_xdp.h).
 * "notes:" cites a section of docs/specs/nyse-xdp-notes.md.
 */
#include "gen/gen_xdp.h"
#include "gen/gen_pitch.h"
#include "gen/gen_proto.h"
#include "wire/bytes.h"
#include "wire/xdp.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNT 255			/* NumberMsgs is one byte */
#define NS_PER_SEC 1000000000ull

/* ---- venues, symbols and prices --------------------------------------------------- */

/* ProductID of each market's Integrated Feed and Market ID of its mappings (notes: Control messages, Feed messages). */
static void venue_ids(uint8_t venue, uint8_t *product, uint16_t *market)
{
	switch (venue) {
	case WB_VENUE_ARCA: *product = 157; *market = 3; break;
	case WB_VENUE_AMERICAN: *product = 59; *market = 9; break;
	case WB_VENUE_NATIONAL: *product = 109; *market = 10; break;
	case WB_VENUE_TEXAS: *product = 209; *market = 11; break;
	default: *product = 11; *market = 1; break;
	}
}

/* The nightly PriceScaleCode (notes: Sequencing, Prices): 6 below $500, 4 from there. */
static uint8_t price_scale(const struct gen_symbol *s)
{
	return s->mid < 500 * WB_PRICE_SCALE ? 6 : 4;
}

static uint32_t wire_price(const struct gen_symbol *s, int64_t price)
{
	int64_t divisor = price_scale(s) == 6 ? WB_PRICE_SCALE / 1000000 : WB_PRICE_SCALE / 10000;

	return (uint32_t)(int32_t)(price / divisor);
}

/*
 * The venue's price for a flow price on side: shaded away from the touch
 * like the Cboe venues (gen_pitch_shade), so the NBBO is built from
 * different venues. The same for an order's whole life (venue, symbol, side).
 */
static int64_t venue_price(const struct gen_xdp *g, const struct gen_symbol *s, uint32_t symbol,
			   uint8_t side, int64_t price)
{
	int64_t shade = (int64_t)gen_pitch_shade(g->venue, symbol, side) * s->tick;

	if (side == WB_SIDE_BUY)
		return price - shade >= s->tick ? price - shade : price;
	return price + shade;
}

static uint8_t side_char(uint8_t side)
{
	return side == WB_SIDE_SELL ? 'S' : 'B';
}

/* ---- packets ------------------------------------------------------------------------ */

static int send_datagram(struct gen_xdp *g, struct gen_xdp_channel *c, uint64_t ts,
			 const uint8_t *p, uint32_t len)
{
	int sent = gen_sink_send(&g->sink, g->midnight_ns + ts, c->a.ip, c->a.port, c->b.ip,
				 c->b.port, g->ab && c->has_b, p, len);

	if (sent < 0)
		return -1;
	g->stats.packets_sent += (uint64_t)sent;
	c->last_sent_ts = ts;
	c->sent_any = true;
	return 0;
}

static void header(uint8_t *p, uint16_t size, uint8_t flag, uint8_t count, uint32_t seq,
		   uint64_t epoch_ns)
{
	wire_put_le16(p + XDP_PKT_SIZE, size);
	p[XDP_PKT_DELIVERY_FLAG] = flag;
	p[XDP_PKT_NUMBER_MSGS] = count;
	wire_put_le32(p + XDP_PKT_SEQ_NUM, seq);
	wire_put_le32(p + XDP_PKT_SEND_TIME, (uint32_t)(epoch_ns / NS_PER_SEC));
	wire_put_le32(p + XDP_PKT_SEND_TIME_NS, (uint32_t)(epoch_ns % NS_PER_SEC));
}

/* The channel's packet goes out, with its faults. */
static int send_packet(struct gen_xdp *g, struct gen_xdp_channel *c)
{
	int rc = 0;

	header(c->pkt, (uint16_t)c->len, c->flag, (uint8_t)c->count, c->pkt_seq,
	       g->midnight_ns + c->pkt_last_ts);
	g->stats.packets++;
	c->packets++;
	/* A lost reset would leave the channel on its old sequence (a limit of
	 * the receivers, docs/architecture.md): the injected losses spare it. */
	if (g->gap_every && c->packets % g->gap_every == 0 &&
	    !(c->count == 1 &&
	      wire_le16(c->pkt + XDP_HEADER_LEN + XDP_MSG_TYPE) == XDP_SEQUENCE_RESET)) {
		/* Lost on every line: the receiver sees a real gap. */
		g->stats.dropped_packets++;
		g->stats.dropped_messages += c->count;
		c->last_sent_ts = c->pkt_last_ts;
		c->idle_heartbeats = 0;
	} else {
		rc = send_datagram(g, c, c->pkt_last_ts, c->pkt, c->len);
		c->idle_heartbeats = 0;
		if (!rc && g->dup_every && c->packets % g->dup_every == 0) {
			g->stats.duplicated_packets++;
			rc = send_datagram(g, c, c->pkt_last_ts, c->pkt, c->len);
		}
	}
	c->len = XDP_HEADER_LEN;
	c->count = 0;
	return rc;
}

/*
 * Everything pending with a time up to ts leaves, oldest first: a packet
 * written later never has an earlier time than one written before it.
 */
static int flush_until(struct gen_xdp *g, uint64_t ts)
{
	for (;;) {
		struct gen_xdp_channel *oldest = NULL;

		for (uint32_t i = 0; i < g->nch; i++) {
			struct gen_xdp_channel *c = &g->ch[i];

			if (c->count && c->pkt_last_ts <= ts &&
			    (!oldest || c->pkt_last_ts < oldest->pkt_last_ts))
				oldest = c;
		}
		if (!oldest)
			return 0;
		if (send_packet(g, oldest))
			return -1;
	}
}

static int flush_channel(struct gen_xdp *g, struct gen_xdp_channel *c)
{
	if (!c->count)
		return 0;
	if (flush_until(g, c->pkt_last_ts))
		return -1;
	return c->count ? send_packet(g, c) : 0;
}

/*
 * Heartbeats of channels idle for a second before time ts (at most
 * GEN_XDP_MAX_HEARTBEATS per idle stretch), and packets whose window
 * closed: the channels keep pace with the flow. The SeqNum of
 * a heartbeat is the next the channel will send (the decoder relies on
 * none: the spec does not say).
 */
static int keep_pace(struct gen_xdp *g, uint64_t ts)
{
	for (uint32_t i = 0; i < g->nch; i++) {
		struct gen_xdp_channel *c = &g->ch[i];

		if (c->count && ts - c->pkt_first_ts > GEN_XDP_PACKET_WINDOW_NS &&
		    flush_channel(g, c))
			return -1;
	}
	for (uint32_t i = 0; i < g->nch; i++) {
		struct gen_xdp_channel *c = &g->ch[i];

		while (c->started && c->sent_any && !c->count &&
		       c->idle_heartbeats < GEN_XDP_MAX_HEARTBEATS &&
		       ts > c->last_sent_ts + GEN_XDP_HEARTBEAT_NS) {
			uint64_t t = c->last_sent_ts + GEN_XDP_HEARTBEAT_NS;
			uint8_t p[XDP_HEADER_LEN];

			if (flush_until(g, t))
				return -1;
			header(p, XDP_HEADER_LEN, XDP_DELIVERY_HEARTBEAT, 0, c->next_seq, g->midnight_ns + t);
			if (send_datagram(g, c, t, p, sizeof(p)))
				return -1;
			c->idle_heartbeats++;
			g->stats.heartbeats++;
		}
	}
	return 0;
}

/* Room for a message of len bytes at ts on channel c, in a packet of the given flag. */
static uint8_t *append_raw(struct gen_xdp *g, struct gen_xdp_channel *c, uint64_t ts, uint16_t type,
			   uint16_t len, uint8_t flag)
{
	uint8_t *m;

	if (c->count && (c->len + len > g->max_payload || c->count == MAX_COUNT || c->flag != flag ||
			 ts - c->pkt_first_ts > GEN_XDP_PACKET_WINDOW_NS)) {
		if (flush_channel(g, c))
			g->error = 1;
	}
	if (!c->count) {
		c->pkt_first_ts = ts;
		c->pkt_seq = c->next_seq;
		c->flag = flag;
	}
	c->pkt_last_ts = ts;
	m = c->pkt + c->len;
	memset(m, 0, len);
	wire_put_le16(m + XDP_MSG_SIZE, len);
	wire_put_le16(m + XDP_MSG_TYPE, type);
	c->len += len;
	c->count++;
	c->next_seq++;
	g->stats.messages++;
	g->stats.by_type[type & 0xff]++;
	return m;
}

/* A Sequence Number Reset, alone in its packet at SeqNum 1 (notes: Control messages, type 1). */
static void sequence_reset(struct gen_xdp *g, struct gen_xdp_channel *c, uint64_t ts, uint8_t flag)
{
	uint64_t epoch = g->midnight_ns + ts;
	uint8_t *m;

	if (flush_channel(g, c))
		g->error = 1;
	c->next_seq = 1;
	c->ref_sent = false;
	m = append_raw(g, c, ts, XDP_SEQUENCE_RESET, XDP_SEQUENCE_RESET_LEN, flag);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME, (uint32_t)(epoch / NS_PER_SEC));
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME_NS, (uint32_t)(epoch % NS_PER_SEC));
	m[XDP_RESET_PRODUCT_ID] = g->product;
	m[XDP_RESET_CHANNEL_ID] = (uint8_t)(c->channel ? c->channel : 1);
	if (flush_channel(g, c))
		g->error = 1;
	c->started = true;
	g->stats.resets++;
}

/* A Source Time Reference when the second changes (notes: Sequencing, Time). */
static void time_reference(struct gen_xdp *g, struct gen_xdp_channel *c, uint64_t ts, uint8_t flag)
{
	uint32_t sec = (uint32_t)((g->midnight_ns + ts) / NS_PER_SEC);
	uint8_t *m;

	if (c->ref_sent && c->ref_sec == sec)
		return;
	m = append_raw(g, c, ts, XDP_TIME_REFERENCE, XDP_TIME_REFERENCE_LEN, flag);
	wire_put_le32(m + XDP_TIME_REFERENCE_ID, c->system_id);
	wire_put_le32(m + XDP_TIME_REFERENCE_TIME, sec);
	c->ref_sec = sec;
	c->ref_sent = true;
}

/* A message of a symbol on its channel at ts: SourceTimeNS, SymbolIndex, SymbolSeqNum. */
static uint8_t *append(struct gen_xdp *g, uint32_t symbol, uint64_t ts, uint16_t type, uint16_t len,
		       uint8_t flag)
{
	struct gen_xdp_channel *c = &g->ch[gen_xdp_channel_of(g, symbol)];
	uint8_t *m;

	if (!c->started)
		sequence_reset(g, c, ts, XDP_DELIVERY_SEQUENCE_RESET);
	time_reference(g, c, ts, flag);
	m = append_raw(g, c, ts, type, len, flag);
	wire_put_le32(m + XDP_SOURCE_TIME_NS, (uint32_t)((g->midnight_ns + ts) % NS_PER_SEC));
	wire_put_le32(m + XDP_SYMBOL_INDEX, gen_xdp_symbol_index(symbol));
	wire_put_le32(m + XDP_SYMBOL_SEQ_NUM, ++g->symbol_seq[symbol]);
	return m;
}

/* Messages with a full SourceTime: SourceTime, SourceTimeNS, SymbolIndex. */
static uint8_t *append_timed(struct gen_xdp *g, uint32_t symbol, uint64_t ts, uint16_t type,
			     uint16_t len, uint8_t flag)
{
	struct gen_xdp_channel *c = &g->ch[gen_xdp_channel_of(g, symbol)];
	uint64_t epoch = g->midnight_ns + ts;
	uint8_t *m;

	if (!c->started)
		sequence_reset(g, c, ts, XDP_DELIVERY_SEQUENCE_RESET);
	m = append_raw(g, c, ts, type, len, flag);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME, (uint32_t)(epoch / NS_PER_SEC));
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME_NS, (uint32_t)(epoch % NS_PER_SEC));
	wire_put_le32(m + XDP_TIMED_SYMBOL_INDEX, gen_xdp_symbol_index(symbol));
	return m;
}

/* ---- messages -------------------------------------------------------------------------- */

static void symbol_mapping(struct gen_xdp *g, const struct gen_flow *flow, uint32_t symbol,
			   uint64_t ts, uint8_t flag)
{
	const struct gen_symbol *s = &flow->symbols[symbol];
	struct gen_xdp_channel *c = &g->ch[gen_xdp_channel_of(g, symbol)];
	uint8_t *m;
	size_t n = 0;

	if (!c->started)
		sequence_reset(g, c, ts, XDP_DELIVERY_SEQUENCE_RESET);
	m = append_raw(g, c, ts, XDP_SYMBOL_MAPPING, XDP_SYMBOL_MAPPING_LEN, flag);
	wire_put_le32(m + XDP_MAPPING_INDEX, gen_xdp_symbol_index(symbol));
	while (n < GEN_TICKER_LEN && s->ticker[n] != ' ')
		n++;
	memcpy(m + XDP_MAPPING_SYMBOL, s->ticker, n);	/* NUL padded to XDP_SYMBOL_LEN */
	wire_put_le16(m + XDP_MAPPING_MARKET_ID, g->market);
	m[XDP_MAPPING_SYSTEM_ID] = c->system_id;
	m[XDP_MAPPING_EXCHANGE] = (uint8_t)(s->market ? s->market : 'N');
	m[XDP_MAPPING_SCALE] = price_scale(s);
	/* ETF on Arca's listings, else common */
	m[XDP_MAPPING_SECURITY_TYPE] = s->market == 'P' ? 'E' : 'C';
	wire_put_le16(m + XDP_MAPPING_LOT_SIZE, (uint16_t)s->round_lot);
	wire_put_le32(m + XDP_MAPPING_PREV_CLOSE, wire_price(s, s->mid));
	m[XDP_MAPPING_RESOLUTION] = 0;		/* all penny */
	m[XDP_MAPPING_ROUND_LOT] = 'Y';
	/* MPV, in 1/100 cent */
	wire_put_le16(m + XDP_MAPPING_MPV, s->tick < WB_PRICE_SCALE / 100 ? 1 : 100);
	wire_put_le16(m + XDP_MAPPING_UNIT_OF_TRADE, (uint16_t)s->round_lot);
}

static void symbol_clear(struct gen_xdp *g, uint32_t symbol, uint64_t ts, uint8_t flag)
{
	uint8_t *m = append_timed(g, symbol, ts, XDP_SYMBOL_CLEAR, XDP_SYMBOL_CLEAR_LEN, flag);

	wire_put_le32(m + XDP_TIMED_SYMBOL_SEQ_NUM, g->symbol_seq[symbol] + 1);	/* next */
}

/* Security Status: code, halt condition ('~' none), the session for MarketState. */
static void security_status(struct gen_xdp *g, uint32_t symbol, uint64_t ts, uint8_t code,
			    uint8_t condition, uint8_t flag)
{
	uint8_t *m = append_timed(g, symbol, ts, XDP_SECURITY_STATUS, XDP_SECURITY_STATUS_LEN,
				  flag);

	wire_put_le32(m + XDP_TIMED_SYMBOL_SEQ_NUM, ++g->symbol_seq[symbol]);
	m[XDP_STATUS_STATUS] = code;
	m[XDP_STATUS_HALT_CONDITION] = condition;
	m[XDP_STATUS_SSR_EXCHANGE] = ' ';
	m[XDP_STATUS_SSR_STATE] = '~';
	if (code == 'P' || code == 'E' || code == 'O' || code == 'L' || code == 'X')
		g->session[symbol] = code;
	m[XDP_STATUS_MARKET_STATE] = g->session[symbol];
}

static void order_execution(struct gen_xdp *g, const struct gen_symbol *s,
			    const struct gen_action *a, int64_t price, bool printable)
{
	uint8_t *m = append(g, a->symbol, a->ts, XDP_ORDER_EXECUTION, XDP_ORDER_EXECUTION_LEN,
			    XDP_DELIVERY_ORIGINAL);

	wire_put_le64(m + XDP_ORDER_ID, a->order_id);
	wire_put_le32(m + XDP_EXECUTION_TRADE_ID, (uint32_t)a->match_id);
	wire_put_le32(m + XDP_EXECUTION_PRICE, wire_price(s, price));
	wire_put_le32(m + XDP_EXECUTION_VOLUME, a->qty);
	m[XDP_EXECUTION_PRINTABLE] = printable ? 1 : 0;
	memcpy(m + XDP_EXECUTION_CONDITIONS, "@   ", XDP_CONDITIONS_LEN);
}

/* Every symbol of the venue in a session state (the flow's system events). */
static void session_all(struct gen_xdp *g, const struct gen_flow *flow, uint64_t ts, uint8_t code)
{
	for (uint32_t sym = 0; sym < flow->symbol_count; sym++)
		if (flow->symbols[sym].venues & (1u << g->venue))
			security_status(g, sym, ts, code, '~', XDP_DELIVERY_ORIGINAL);
}

static void encode(struct gen_xdp *g, const struct gen_flow *flow, const struct gen_action *a)
{
	const struct gen_symbol *s = &flow->symbols[a->symbol];
	int64_t price;
	uint8_t *m;

	switch (a->kind) {
	case GEN_SYSTEM:
		/* ITCH's codes: Q start of market hours, M end of them, E end of system hours. */
		if (a->code == 'Q')
			session_all(g, flow, a->ts, 'O');
		else if (a->code == 'M')
			session_all(g, flow, a->ts, 'L');
		else if (a->code == 'E')
			session_all(g, flow, a->ts, 'X');
		return;
	case GEN_SYMBOL:
		/* The start-of-day spin (notes: Sequencing): mapping, clear, status. */
		symbol_mapping(g, flow, a->symbol, a->ts, XDP_DELIVERY_ORIGINAL);
		if (price_scale(s) == 6)
			g->stats.scale6++;
		else
			g->stats.scale4++;
		symbol_clear(g, a->symbol, a->ts, XDP_DELIVERY_ORIGINAL);
		security_status(g, a->symbol, a->ts, 'P', '~', XDP_DELIVERY_ORIGINAL);
		return;
	case GEN_TRADING:
		security_status(g, a->symbol, a->ts, a->code == 'H' ? '4' : 'E', '~', XDP_DELIVERY_ORIGINAL);
		return;
	case GEN_ADD:
		price = venue_price(g, s, a->symbol, a->side, a->price);
		m = append(g, a->symbol, a->ts, XDP_ADD_ORDER, XDP_ADD_ORDER_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le64(m + XDP_ORDER_ID, a->order_id);
		wire_put_le32(m + XDP_ADD_PRICE, wire_price(s, price));
		wire_put_le32(m + XDP_ADD_VOLUME, a->qty);
		m[XDP_ADD_SIDE] = side_char(a->side);
		/* FirmID: the four characters of an MPID, blank-filled */
		memcpy(m + XDP_ADD_FIRM, a->attributed ? a->mpid : "    ", 4);
		m[XDP_ADD_FIRM + 4] = ' ';
		return;
	case GEN_EXECUTE:
		order_execution(g, s, a, venue_price(g, s, a->symbol, a->side, a->price), true);
		return;
	case GEN_EXECUTE_AT_PRICE:
		order_execution(g, s, a, venue_price(g, s, a->symbol, a->side, a->price),
				a->printable);
		return;
	case GEN_CANCEL:
		/* A partial cancel: the order's remaining volume at its own price. */
		m = append(g, a->symbol, a->ts, XDP_MODIFY_ORDER, XDP_MODIFY_ORDER_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le64(m + XDP_ORDER_ID, a->order_id);
		wire_put_le32(m + XDP_MODIFY_PRICE,
			      wire_price(s, venue_price(g, s, a->symbol, a->side, a->price)));
		wire_put_le32(m + XDP_MODIFY_VOLUME, a->remaining);
		m[XDP_MODIFY_SIDE] = side_char(a->side);
		return;
	case GEN_DELETE:
		m = append(g, a->symbol, a->ts, XDP_DELETE_ORDER, XDP_DELETE_ORDER_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le64(m + XDP_ORDER_ID, a->order_id);
		return;
	case GEN_REPLACE:
		m = append(g, a->symbol, a->ts, XDP_REPLACE_ORDER, XDP_REPLACE_ORDER_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le64(m + XDP_ORDER_ID, a->order_id);
		wire_put_le64(m + XDP_REPLACE_NEW_ORDER_ID, a->new_order_id);
		wire_put_le32(m + XDP_REPLACE_PRICE,
			      wire_price(s, venue_price(g, s, a->symbol, a->side, a->price)));
		wire_put_le32(m + XDP_REPLACE_VOLUME, a->qty);
		m[XDP_REPLACE_SIDE] = side_char(a->side);
		return;
	case GEN_TRADE:
		m = append(g, a->symbol, a->ts, XDP_NON_DISPLAYED_TRADE, XDP_NON_DISPLAYED_TRADE_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le32(m + XDP_TRADE_ID, (uint32_t)a->match_id);
		wire_put_le32(m + XDP_TRADE_PRICE, wire_price(s, a->price));
		wire_put_le32(m + XDP_TRADE_VOLUME, a->qty);
		m[XDP_TRADE_PRINTABLE] = 1;
		memcpy(m + XDP_TRADE_CONDITIONS, "@   ", XDP_CONDITIONS_LEN);
		return;
	case GEN_CROSS:
		if (!a->qty)
			return;
		m = append(g, a->symbol, a->ts, XDP_CROSS_TRADE, XDP_CROSS_TRADE_LEN,
			   XDP_DELIVERY_ORIGINAL);
		wire_put_le32(m + XDP_TRADE_ID, (uint32_t)a->match_id);
		wire_put_le32(m + XDP_TRADE_PRICE, wire_price(s, a->price));
		wire_put_le32(m + XDP_TRADE_VOLUME, a->qty);
		m[XDP_TRADE_CROSS_TYPE] = a->code == 'C' ? '6' : 'O';	/* closing, opening cross */
		return;
	default:
		return;
	}
}

/* ---- the mid-day halt and failover ----------------------------------------------------- */

static void halt_and_resume(struct gen_xdp *g, const struct gen_flow *flow, uint64_t ts)
{
	uint64_t done = flow->flow_done * 1000, total = flow->cfg.messages;

	if (g->halt_stage == 0 && done >= total * GEN_XDP_HALT_PERMILLE) {
		security_status(g, g->halt_symbol, ts, '4', 'D', XDP_DELIVERY_ORIGINAL); /* news dissemination */
		g->halt_stage = 1;
	} else if (g->halt_stage == 1 && done >= total * GEN_XDP_RESUME_PERMILLE) {
		security_status(g, g->halt_symbol, ts, '5', '~', XDP_DELIVERY_ORIGINAL);
		g->halt_stage = 2;
	}
}

static int by_symbol(const void *x, const void *y)
{
	const struct gen_live_order *a = x, *b = y;

	if (a->symbol != b->symbol)
		return a->symbol < b->symbol ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * The backup publisher takes over the venue's last channel (notes: Sequencing,
 * publisher failover): a Sequence Number Reset, then per symbol its
 * mapping, a Symbol Clear, its last Security Status and its book as Add
 * Order Refresh, all flagged 10; the last Source Time Reference closes it.
 */
static void failover(struct gen_xdp *g, const struct gen_flow *flow, uint64_t ts)
{
	uint32_t ci = g->nch - 1, n = 0, k = 0;
	struct gen_xdp_channel *c = &g->ch[ci];
	struct gen_live_order *orders = calloc(flow->live_count + 1, sizeof(*orders));

	if (!orders) {
		g->error = 1;
		return;
	}
	for (uint64_t i = 0; i < flow->live_count; i++) {
		const struct gen_live_order *o = &flow->live[i];

		if (o->venue == g->venue && gen_xdp_channel_of(g, o->symbol) == ci)
			orders[n++] = *o;
	}
	qsort(orders, n, sizeof(*orders), by_symbol);
	sequence_reset(g, c, ts, XDP_DELIVERY_FAILOVER);
	for (uint32_t sym = ci; sym < flow->symbol_count; sym += g->nch) {
		const struct gen_symbol *s = &flow->symbols[sym];

		if (!(s->venues & (1u << g->venue)))
			continue;
		symbol_mapping(g, flow, sym, ts, XDP_DELIVERY_FAILOVER);
		symbol_clear(g, sym, ts, XDP_DELIVERY_FAILOVER);
		if (g->halt_stage == 1 && sym == g->halt_symbol)
			security_status(g, sym, ts, '4', 'D', XDP_DELIVERY_FAILOVER);
		else if (g->session[sym])
			security_status(g, sym, ts, g->session[sym], '~', XDP_DELIVERY_FAILOVER);
		while (k < n && orders[k].symbol < sym)
			k++;
		for (; k < n && orders[k].symbol == sym; k++) {
			const struct gen_live_order *o = &orders[k];
			uint8_t *m = append_timed(g, sym, ts, XDP_ADD_ORDER_REFRESH, XDP_ADD_ORDER_REFRESH_LEN,
						  XDP_DELIVERY_FAILOVER);

			wire_put_le32(m + XDP_TIMED_SYMBOL_SEQ_NUM, ++g->symbol_seq[sym]);
			wire_put_le64(m + XDP_REFRESH_ORDER_ID, o->id);
			wire_put_le32(m + XDP_REFRESH_PRICE,
				      wire_price(s, venue_price(g, s, sym, o->side, o->price)));
			wire_put_le32(m + XDP_REFRESH_VOLUME, o->qty);
			m[XDP_REFRESH_SIDE] = side_char(o->side);
			memcpy(m + XDP_REFRESH_FIRM, "     ", XDP_FIRM_LEN);
			g->stats.refreshed_orders++;
		}
	}
	c->ref_sent = false;
	time_reference(g, c, ts, XDP_DELIVERY_FAILOVER);
	if (flush_channel(g, c))
		g->error = 1;
	free(orders);
}

/* ---- the generator entry (gen_proto.h) --------------------------------------------------- */

/* The venue's channels from the feed map: each channel=N with a line A (and B). */
static void channels_from_map(struct gen_xdp *g, const struct gen_encoder_config *cfg)
{
	for (int i = 0; i < cfg->map_len && g->nch < GEN_XDP_MAX_CHANNELS; i++) {
		const struct feed_map_entry *e = &cfg->map[i];
		struct gen_xdp_channel *c = &g->ch[g->nch];

		if (e->venue != cfg->venue || e->protocol != FEED_PROTO_XDP || strcmp(e->name, "A"))
			continue;
		c->channel = e->channel;
		c->a = (struct gen_xdp_line){ e->ip, e->port };
		for (int j = 0; j < cfg->map_len; j++) {
			const struct feed_map_entry *b = &cfg->map[j];

			if (b->venue == e->venue && b->protocol == e->protocol &&
			    b->channel == e->channel && !strcmp(b->name, "B")) {
				c->b = (struct gen_xdp_line){ b->ip, b->port };
				c->has_b = true;
			}
		}
		g->nch++;
	}
	if (g->nch)
		return;
	/* No lines in the map: consecutive groups after the configured ones. */
	for (uint32_t i = 0; i < GEN_XDP_DEFAULT_CHANNELS; i++) {
		struct gen_xdp_channel *c = &g->ch[i];

		c->channel = (uint16_t)(i + 1);
		c->a = (struct gen_xdp_line){ cfg->a_ip + 2 * i, cfg->a_port };
		c->b = (struct gen_xdp_line){ cfg->b_ip + 2 * i, cfg->b_port };
		c->has_b = true;
	}
	g->nch = GEN_XDP_DEFAULT_CHANNELS;
}

static int xdp_enc_init(void *enc, const struct gen_encoder_config *cfg)
{
	struct gen_xdp *g = enc;

	memset(g, 0, sizeof(*g));
	g->venue = cfg->venue;
	venue_ids(cfg->venue, &g->product, &g->market);
	g->ab = cfg->ab;
	g->gap_every = cfg->gap_every;
	g->dup_every = cfg->dup_every;
	g->max_payload = cfg->max_payload && cfg->max_payload <= GEN_XDP_DEFAULT_PAYLOAD ?
		cfg->max_payload : GEN_XDP_DEFAULT_PAYLOAD;
	g->midnight_ns = cfg->midnight_ns;
	g->sink = cfg->sink;
	channels_from_map(g, cfg);
	for (uint32_t i = 0; i < g->nch; i++) {
		g->ch[i].len = XDP_HEADER_LEN;
		g->ch[i].next_seq = 1;
		g->ch[i].system_id = (uint8_t)(i + 1);
	}
	return 0;
}

static int xdp_enc_action(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	struct gen_xdp *g = enc;

	if (g->error)
		return -1;
	if (!g->symbol_seq) {
		g->symbol_seq = calloc(flow->symbol_count, sizeof(*g->symbol_seq));
		g->session = calloc(flow->symbol_count, sizeof(*g->session));
		g->halt_symbol = flow->symbol_count / 2;
		if (!g->symbol_seq || !g->session)
			return -1;
	}
	if (a->venue != g->venue)
		return 0;
	if (keep_pace(g, a->ts))
		return -1;
	encode(g, flow, a);
	/* After the action: the flow's live orders are then the wire's. */
	if (g->halt_stage < 2 && g->session[g->halt_symbol] == 'O')
		halt_and_resume(g, flow, a->ts);
	if (!g->failover_done &&
	    flow->flow_done * 1000 >= flow->cfg.messages * GEN_XDP_FAILOVER_PERMILLE) {
		failover(g, flow, a->ts);
		g->failover_done = true;
	}
	return g->error ? -1 : 0;
}

static int xdp_enc_finish(void *enc, uint64_t ts)
{
	struct gen_xdp *g = enc;

	if (g->error)
		return -1;
	if (flush_until(g, ~0ull) || keep_pace(g, ts))
		g->error = 1;
	return g->error ? -1 : 0;
}

static int xdp_enc_stop(void *enc)
{
	struct gen_xdp *g = enc;

	if (!g->error && flush_until(g, ~0ull))
		g->error = 1;
	return g->error ? -1 : 0;
}

static void xdp_enc_destroy(void *enc)
{
	struct gen_xdp *g = enc;

	free(g->symbol_seq);
	free(g->session);
	g->symbol_seq = NULL;
	g->session = NULL;
}

static void xdp_enc_summary(const void *enc, const struct gen_flow *flow, FILE *out)
{
	const struct gen_xdp *g = enc;

	(void)flow;
	fprintf(out, "wb-gen: %s XDP: %" PRIu64 " messages in %" PRIu64 " data packets on %u channels, %"
		PRIu64 " heartbeats, %" PRIu64 " sequence resets (%" PRIu64 " orders refreshed), "
		"symbols at scale 4: %" PRIu64 ", scale 6: %" PRIu64 "; %" PRIu64 " dropped, %" PRIu64
		" duplicated\n", feed_venue_name(g->venue), g->stats.messages, g->stats.packets, g->nch,
		g->stats.heartbeats, g->stats.resets, g->stats.refreshed_orders, g->stats.scale4,
		g->stats.scale6, g->stats.dropped_packets, g->stats.duplicated_packets);
}

const struct gen_proto gen_proto_xdp = {
	.size = sizeof(struct gen_xdp),
	.writes_files = false,
	.min_payload = XDP_HEADER_LEN + GEN_XDP_MAX_MESSAGE,
	.init = xdp_enc_init,
	.action = xdp_enc_action,
	.finish = xdp_enc_finish,
	.stop = xdp_enc_stop,
	.destroy = xdp_enc_destroy,
	.summary = xdp_enc_summary,
};
