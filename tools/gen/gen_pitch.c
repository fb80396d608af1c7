/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Cboe Multicast PITCH encoder for the generator (see gen_pitch.h). "notes:"
 * cites a section of docs/specs/cboe-pitch-notes.md.
 */
#include "gen/gen_pitch.h"
#include "gen/gen_proto.h"
#include "wire/bytes.h"
#include "wire/pitch.h"

#include <inttypes.h>

#include <stdlib.h>
#include <string.h>

#define MAX_COUNT 255			/* Hdr Count is one byte */
#define NS_PER_SEC 1000000000ull
#define LONG_PRICE_DIVISOR (WB_PRICE_SCALE / 10000)	/* 1e-8 -> 4 dp */
#define SHORT_PRICE_DIVISOR (WB_PRICE_SCALE / 100)	/* 1e-8 -> 2 dp */
#define FLASH_ID_BASE 0x7A00000000000000ull	/* far from the flow's ids */
#define ALIAS_MIN_SLOTS 1024u

#define MODIFY_DISPLAY 0x01

/* ---- prices and symbols ----------------------------------------------------- */

uint32_t gen_pitch_shade(uint8_t venue, uint32_t symbol, uint8_t side)
{
	uint64_t h = ((uint64_t)venue << 40 | (uint64_t)side << 32 | symbol) * 0x9E3779B97F4A7C15ull;
	uint32_t r = (uint32_t)(h >> 59) % 10;	/* 0..9 */

	return r < 5 ? 0 : r < 8 ? 1 : 2;
}

/* The venue's price for a flow price on side: shaded away from the touch. */
static int64_t venue_price(const struct gen_pitch *g, const struct gen_symbol *s,
			   uint32_t symbol, uint8_t side, int64_t price)
{
	int64_t shade;

	if (g->cfg.no_flash)
		return price;
	shade = (int64_t)gen_pitch_shade(g->cfg.venue, symbol, side) * s->tick;
	if (side == WB_SIDE_BUY)
		return price - shade >= s->tick ? price - shade : price;
	return price + shade;
}

static bool fits_short_price(int64_t price)
{
	return price >= 0 && price % SHORT_PRICE_DIVISOR == 0 &&
	       price / SHORT_PRICE_DIVISOR <= 0xffff;
}

static bool fits_short_symbol(const struct gen_symbol *s)
{
	return s->ticker[6] == ' ' && s->ticker[7] == ' ';
}

static uint8_t side_char(uint8_t side)
{
	return side == WB_SIDE_SELL ? 'S' : 'B';
}

/* ---- replaced-order aliases --------------------------------------------------- */

static uint64_t alias_home(const struct gen_pitch *g, uint64_t id)
{
	return (id * 0x9E3779B97F4A7C15ull >> 20) & g->alias_mask;
}

static struct gen_pitch_alias *alias_find(const struct gen_pitch *g, uint64_t flow_id)
{
	uint64_t i = alias_home(g, flow_id);

	for (;; i = (i + 1) & g->alias_mask) {
		if (!g->alias[i].flow_id)
			return NULL;
		if (g->alias[i].flow_id == flow_id)
			return &g->alias[i];
	}
}

static void alias_place(struct gen_pitch *g, uint64_t flow_id, uint64_t wire_id)
{
	uint64_t i = alias_home(g, flow_id);

	while (g->alias[i].flow_id && g->alias[i].flow_id != flow_id)
		i = (i + 1) & g->alias_mask;
	if (!g->alias[i].flow_id)
		g->alias_count++;
	g->alias[i].flow_id = flow_id;
	g->alias[i].wire_id = wire_id;
}

static int alias_put(struct gen_pitch *g, uint64_t flow_id, uint64_t wire_id)
{
	if ((g->alias_count + 1) * 2 > g->alias_mask + 1) {
		struct gen_pitch_alias *old = g->alias;
		uint64_t n = g->alias_mask + 1, i;

		g->alias = calloc(n * 2, sizeof(*g->alias));
		if (!g->alias) {
			g->alias = old;
			return -1;
		}
		g->alias_mask = n * 2 - 1;
		g->alias_count = 0;
		for (i = 0; i < n; i++)
			if (old[i].flow_id)
				alias_place(g, old[i].flow_id, old[i].wire_id);
		free(old);
	}
	alias_place(g, flow_id, wire_id);
	return 0;
}

/* Backward-shift removal, so a day of replaces leaves no tombstones. */
static void alias_remove(struct gen_pitch *g, struct gen_pitch_alias *e)
{
	uint64_t hole = (uint64_t)(e - g->alias), j = hole;

	g->alias_count--;
	for (;;) {
		uint64_t home;

		j = (j + 1) & g->alias_mask;
		if (!g->alias[j].flow_id)
			break;
		home = alias_home(g, g->alias[j].flow_id);
		if (((j - home) & g->alias_mask) >= ((j - hole) & g->alias_mask)) {
			g->alias[hole] = g->alias[j];
			hole = j;
		}
	}
	g->alias[hole].flow_id = 0;
}

/* The order id on the wire for a flow id; the alias goes when the order does. */
static uint64_t wire_id(struct gen_pitch *g, uint64_t flow_id, bool order_ends)
{
	struct gen_pitch_alias *e = alias_find(g, flow_id);
	uint64_t id;

	if (!e)
		return flow_id;
	id = e->wire_id;
	if (order_ends)
		alias_remove(g, e);
	return id;
}

/* ---- packets ------------------------------------------------------------------ */

int gen_pitch_init(struct gen_pitch *g, const struct gen_pitch_config *cfg)
{
	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	if (!g->cfg.unit)
		g->cfg.unit = 1;
	if (!g->cfg.max_payload || g->cfg.max_payload > 0xffff)
		g->cfg.max_payload = GEN_PITCH_DEFAULT_PAYLOAD;
	g->next_seq = 1;
	g->len = PITCH_HEADER_LEN;
	gen_rng_seed(&g->rng, cfg->seed * 31 + cfg->venue);
	g->adds_until_flash = GEN_PITCH_FLASH_EVERY;
	g->next_flash_id = FLASH_ID_BASE + ((uint64_t)cfg->venue << 48);
	g->alias = calloc(ALIAS_MIN_SLOTS, sizeof(*g->alias));
	g->alias_mask = ALIAS_MIN_SLOTS - 1;
	return g->alias ? 0 : -1;
}

void gen_pitch_destroy(struct gen_pitch *g)
{
	free(g->alias);
	g->alias = NULL;
}

static int sink_send(struct gen_pitch *g, uint64_t ts, const uint8_t *p, uint32_t len)
{
	int sent = gen_sink_send(&g->cfg.sink, g->cfg.midnight_ns + ts, g->cfg.a_ip, g->cfg.a_port,
				 g->cfg.b_ip, g->cfg.b_port, g->cfg.ab, p, len);

	if (sent < 0)
		return -1;
	g->stats.packets_sent += (uint64_t)sent;
	return 0;
}

/* A heartbeat: count 0, the sequence the unit sends next (notes: Sequencing). */
static int heartbeats_before(struct gen_pitch *g, uint64_t ts, uint32_t next_seq)
{
	uint8_t p[PITCH_HEADER_LEN];

	for (int n = 0; g->sent_any && n < GEN_PITCH_MAX_HEARTBEATS &&
			ts > g->last_sent_ts + GEN_PITCH_HEARTBEAT_NS; n++) {
		uint64_t t = g->last_sent_ts + GEN_PITCH_HEARTBEAT_NS;

		wire_put_le16(p + PITCH_HDR_LENGTH, PITCH_HEADER_LEN);
		p[PITCH_HDR_COUNT] = 0;
		p[PITCH_HDR_UNIT] = g->cfg.unit;
		wire_put_le32(p + PITCH_HDR_SEQUENCE, next_seq);
		g->last_sent_ts = t;
		if (sink_send(g, t, p, sizeof(p)))
			return -1;
		g->stats.heartbeats++;
	}
	return 0;
}

static int flush_packet(struct gen_pitch *g)
{
	int rc = 0;

	if (!g->count)
		return 0;
	if (heartbeats_before(g, g->pkt_first_ts, g->pkt_seq))
		return -1;
	wire_put_le16(g->pkt + PITCH_HDR_LENGTH, (uint16_t)g->len);
	g->pkt[PITCH_HDR_COUNT] = (uint8_t)g->count;
	g->pkt[PITCH_HDR_UNIT] = g->cfg.unit;
	wire_put_le32(g->pkt + PITCH_HDR_SEQUENCE, g->pkt_seq);
	g->stats.packets++;
	g->last_sent_ts = g->pkt_last_ts;
	g->sent_any = true;
	if (g->cfg.gap_every && g->stats.packets % g->cfg.gap_every == 0) {
		g->stats.dropped_packets++;
		g->stats.dropped_messages += g->count;
	} else {
		rc = sink_send(g, g->pkt_last_ts, g->pkt, g->len);
		if (!rc && g->cfg.dup_every && g->stats.packets % g->cfg.dup_every == 0) {
			g->stats.duplicated_packets++;
			rc = sink_send(g, g->pkt_last_ts, g->pkt, g->len);
		}
	}
	g->len = PITCH_HEADER_LEN;
	g->count = 0;
	return rc;
}

/* Room for a message of len bytes at ts; returns where to write it. */
static uint8_t *append_raw(struct gen_pitch *g, uint64_t ts, uint8_t type, uint8_t len)
{
	uint8_t *m;

	if (g->count && (g->len + len > g->cfg.max_payload || g->count == MAX_COUNT ||
			 ts - g->pkt_first_ts > GEN_PITCH_PACKET_WINDOW_NS)) {
		if (flush_packet(g))
			g->error = 1;
	}
	if (!g->count) {
		g->pkt_first_ts = ts;
		g->pkt_seq = g->next_seq;
	}
	g->pkt_last_ts = ts;
	m = g->pkt + g->len;
	memset(m, 0, len);
	m[PITCH_MSG_LENGTH] = len;
	m[PITCH_MSG_TYPE] = type;
	g->len += len;
	g->count++;
	g->next_seq++;
	g->stats.messages++;
	g->stats.by_type[type]++;
	return m;
}

/*
 * A message with a Time Offset: a Time message goes first whenever the
 * second changes (Time Offsets count from the unit's last Time).
 */
static uint8_t *append(struct gen_pitch *g, uint64_t ts, uint8_t type, uint8_t len)
{
	uint32_t sec = (uint32_t)(ts / NS_PER_SEC);
	uint8_t *m;

	if (!g->time_sent || sec != g->time_sec) {
		wire_put_le32(append_raw(g, ts, PITCH_TIME, PITCH_TIME_LEN) + PITCH_TIME_SECONDS, sec);
		g->time_sec = sec;
		g->time_sent = true;
	}
	m = append_raw(g, ts, type, len);
	wire_put_le32(m + PITCH_TIME_OFFSET, (uint32_t)(ts % NS_PER_SEC));
	return m;
}

/* ---- messages ------------------------------------------------------------------- */

static void add_order(struct gen_pitch *g, const struct gen_symbol *s, uint64_t ts, uint64_t id,
		      uint8_t side, uint32_t qty, int64_t price, const char *mpid)
{
	uint8_t *m;

	if (!mpid && fits_short_symbol(s) && qty <= 0xffff && fits_short_price(price)) {
		m = append(g, ts, PITCH_ADD_SHORT, PITCH_ADD_SHORT_LEN);
		wire_put_le64(m + PITCH_ORDER_ID, id);
		m[PITCH_SIDE] = side_char(side);
		wire_put_le16(m + PITCH_ADD_SHORT_QTY, (uint16_t)qty);
		memcpy(m + PITCH_ADD_SHORT_SYMBOL, s->ticker, PITCH_SYMBOL_SHORT_LEN);
		wire_put_le16(m + PITCH_ADD_SHORT_PRICE, (uint16_t)(price / SHORT_PRICE_DIVISOR));
		m[PITCH_ADD_SHORT_FLAGS] = 0x01;	/* displayed */
	} else if (!mpid && fits_short_symbol(s)) {
		m = append(g, ts, PITCH_ADD_LONG, PITCH_ADD_LONG_LEN);
		wire_put_le64(m + PITCH_ORDER_ID, id);
		m[PITCH_SIDE] = side_char(side);
		wire_put_le32(m + PITCH_ADD_LONG_QTY, qty);
		memcpy(m + PITCH_ADD_LONG_SYMBOL, s->ticker, PITCH_SYMBOL_SHORT_LEN);
		wire_put_le64(m + PITCH_ADD_LONG_PRICE, (uint64_t)(price / LONG_PRICE_DIVISOR));
		m[PITCH_ADD_LONG_FLAGS] = 0x01;
	} else {
		m = append(g, ts, PITCH_ADD_EXPANDED, PITCH_ADD_EXPANDED_V241_LEN);
		wire_put_le64(m + PITCH_ORDER_ID, id);
		m[PITCH_SIDE] = side_char(side);
		wire_put_le32(m + PITCH_ADD_EXPANDED_QTY, qty);
		memcpy(m + PITCH_ADD_EXPANDED_SYMBOL, s->ticker, PITCH_SYMBOL_LEN);
		wire_put_le64(m + PITCH_ADD_EXPANDED_PRICE, (uint64_t)(price / LONG_PRICE_DIVISOR));
		m[PITCH_ADD_EXPANDED_FLAGS] = 0x01;
		memcpy(m + PITCH_ADD_EXPANDED_PARTICIPANT, mpid ? mpid : "    ", PITCH_PARTICIPANT_LEN);
		m[PITCH_ADD_EXPANDED_CUSTOMER] = ' ';
	}
}

static void delete_order(struct gen_pitch *g, uint64_t ts, uint64_t id)
{
	wire_put_le64(append(g, ts, PITCH_DELETE, PITCH_DELETE_LEN) + PITCH_ORDER_ID, id);
}

/*
 * Maybe add an order of the encoder's own that locks or crosses the other
 * venues' touch (see gen_pitch.h): one tick through when this venue's
 * opposite side sits at least one tick behind, two ticks (crossed) when it
 * sits two behind, so the venue's own book never locks or crosses.
 */
static void maybe_flash(struct gen_pitch *g, const struct gen_flow *flow, const struct gen_action *a)
{
	const struct gen_symbol *s = &flow->symbols[a->symbol];
	struct gen_pitch_flash *f;
	uint8_t side, other;
	uint32_t behind;
	int64_t price;
	bool cross;

	if (g->cfg.no_flash || --g->adds_until_flash)
		return;
	side = gen_rng_below(&g->rng, 2) ? WB_SIDE_BUY : WB_SIDE_SELL;
	other = side == WB_SIDE_BUY ? WB_SIDE_SELL : WB_SIDE_BUY;
	behind = gen_pitch_shade(g->cfg.venue, a->symbol, other);
	cross = behind == 2 && gen_rng_below(&g->rng, 2) == 0;
	g->adds_until_flash = GEN_PITCH_FLASH_EVERY / 2 + gen_rng_below(&g->rng, GEN_PITCH_FLASH_EVERY);
	/* Through the touch by less than this venue sits behind it on the other side. */
	if (g->flash_count == GEN_PITCH_MAX_FLASH || !behind || s->mid < 4 * s->tick)
		return;
	/* A live flash order on the other side would meet this one on this venue. */
	for (uint32_t i = 0; i < g->flash_count; i++)
		if (g->flash[i].symbol == a->symbol && g->flash[i].side != side)
			return;
	/* The flow's touch: bids at mid, asks at mid + tick. */
	if (side == WB_SIDE_BUY)
		price = s->mid + s->tick * (cross ? 2 : 1);
	else
		price = s->mid - s->tick * (cross ? 1 : 0);
	if (price < s->tick)
		return;
	f = &g->flash[g->flash_count++];
	f->id = g->next_flash_id++;
	f->symbol = a->symbol;
	f->side = side;
	f->price = price;
	f->expires = (uint32_t)g->stats.messages + GEN_PITCH_FLASH_LIFE / 2 +
		     gen_rng_below(&g->rng, GEN_PITCH_FLASH_LIFE);
	add_order(g, s, a->ts, f->id, side, 100, price, NULL);
	if (g->cfg.observer)
		g->cfg.observer->order(g->cfg.observer->ctx, g->cfg.venue, f->symbol, side, price, 100,
				       f->id, a->ts, true);
	if (cross)
		g->stats.crossing_orders++;
	else
		g->stats.locking_orders++;
}

static void expire_flash(struct gen_pitch *g, uint64_t ts, bool all)
{
	uint32_t i = 0;

	while (i < g->flash_count) {
		if (all || g->flash[i].expires <= g->stats.messages) {
			delete_order(g, ts, g->flash[i].id);
			if (g->cfg.observer)
				g->cfg.observer->order(g->cfg.observer->ctx, g->cfg.venue, g->flash[i].symbol,
						       g->flash[i].side, g->flash[i].price, 0,
						       g->flash[i].id, ts, false);
			g->flash[i] = g->flash[--g->flash_count];
		} else {
			i++;
		}
	}
}

static void encode(struct gen_pitch *g, const struct gen_flow *flow, const struct gen_action *a)
{
	const struct gen_symbol *s = &flow->symbols[a->symbol];
	uint64_t id;
	int64_t price;
	uint8_t *m;

	switch (a->kind) {
	case GEN_TRADING:
		m = append(g, a->ts, PITCH_TRADING_STATUS, PITCH_TRADING_STATUS_LEN);
		memcpy(m + PITCH_STATUS_SYMBOL, s->ticker, PITCH_SYMBOL_LEN);
		m[PITCH_STATUS_STATUS] = (uint8_t)a->code;	/* T trading, H halted: PITCH's too */
		m[PITCH_STATUS_REG_SHO] = '0';			/* no price test */
		return;
	case GEN_ADD:
		price = venue_price(g, s, a->symbol, a->side, a->price);
		add_order(g, s, a->ts, a->order_id, a->side, a->qty, price,
			  a->attributed ? a->mpid : NULL);
		maybe_flash(g, flow, a);
		return;
	case GEN_EXECUTE:
		id = wire_id(g, a->order_id, a->remaining == 0);
		m = append(g, a->ts, PITCH_EXECUTED, PITCH_EXECUTED_LEN);
		wire_put_le64(m + PITCH_ORDER_ID, id);
		wire_put_le32(m + PITCH_EXECUTED_QTY, a->qty);
		wire_put_le64(m + PITCH_EXECUTED_EXECUTION, a->match_id);
		return;
	case GEN_EXECUTE_AT_PRICE:
		id = wire_id(g, a->order_id, a->remaining == 0);
		price = venue_price(g, s, a->symbol, a->side, a->price);
		m = append(g, a->ts, PITCH_EXECUTED_AT_PRICE, PITCH_EXECUTED_AT_PRICE_LEN);
		wire_put_le64(m + PITCH_ORDER_ID, id);
		wire_put_le32(m + PITCH_EXECUTED_AT_PRICE_QTY, a->qty);
		wire_put_le32(m + PITCH_EXECUTED_AT_PRICE_REMAINING, a->remaining);
		wire_put_le64(m + PITCH_EXECUTED_AT_PRICE_EXECUTION, a->match_id);
		wire_put_le64(m + PITCH_EXECUTED_AT_PRICE_PRICE,
			      (uint64_t)(price / LONG_PRICE_DIVISOR));
		return;
	case GEN_CANCEL:
		id = wire_id(g, a->order_id, a->remaining == 0);
		if (a->qty <= 0xffff) {
			m = append(g, a->ts, PITCH_REDUCE_SHORT, PITCH_REDUCE_SHORT_LEN);
			wire_put_le16(m + PITCH_REDUCE_QTY, (uint16_t)a->qty);
		} else {
			m = append(g, a->ts, PITCH_REDUCE_LONG, PITCH_REDUCE_LONG_LEN);
			wire_put_le32(m + PITCH_REDUCE_QTY, a->qty);
		}
		wire_put_le64(m + PITCH_ORDER_ID, id);
		return;
	case GEN_DELETE:
		delete_order(g, a->ts, wire_id(g, a->order_id, true));
		return;
	case GEN_REPLACE:
		id = wire_id(g, a->order_id, true);
		if (alias_put(g, a->new_order_id, id))
			g->error = 1;
		price = venue_price(g, s, a->symbol, a->side, a->price);
		if (a->qty <= 0xffff && fits_short_price(price)) {
			m = append(g, a->ts, PITCH_MODIFY_SHORT, PITCH_MODIFY_SHORT_LEN);
			wire_put_le16(m + PITCH_MODIFY_SHORT_QTY, (uint16_t)a->qty);
			wire_put_le16(m + PITCH_MODIFY_SHORT_PRICE,
				      (uint16_t)(price / SHORT_PRICE_DIVISOR));
			m[PITCH_MODIFY_SHORT_FLAGS] = MODIFY_DISPLAY;
		} else {
			m = append(g, a->ts, PITCH_MODIFY_LONG, PITCH_MODIFY_LONG_LEN);
			wire_put_le32(m + PITCH_MODIFY_LONG_QTY, a->qty);
			wire_put_le64(m + PITCH_MODIFY_LONG_PRICE,
				      (uint64_t)(price / LONG_PRICE_DIVISOR));
			m[PITCH_MODIFY_LONG_FLAGS] = MODIFY_DISPLAY;
		}
		wire_put_le64(m + PITCH_ORDER_ID, id);
		return;
	case GEN_TRADE:
		if (fits_short_symbol(s) && a->qty <= 0xffff && fits_short_price(a->price)) {
			m = append(g, a->ts, PITCH_TRADE_SHORT, PITCH_TRADE_SHORT_LEN);
			wire_put_le16(m + PITCH_ADD_SHORT_QTY, (uint16_t)a->qty);
			memcpy(m + PITCH_ADD_SHORT_SYMBOL, s->ticker, PITCH_SYMBOL_SHORT_LEN);
			wire_put_le16(m + PITCH_ADD_SHORT_PRICE,
				      (uint16_t)(a->price / SHORT_PRICE_DIVISOR));
			wire_put_le64(m + PITCH_TRADE_SHORT_EXECUTION, a->match_id);
		} else if (fits_short_symbol(s)) {
			m = append(g, a->ts, PITCH_TRADE_LONG, PITCH_TRADE_LONG_LEN);
			wire_put_le32(m + PITCH_ADD_LONG_QTY, a->qty);
			memcpy(m + PITCH_ADD_LONG_SYMBOL, s->ticker, PITCH_SYMBOL_SHORT_LEN);
			wire_put_le64(m + PITCH_ADD_LONG_PRICE,
				      (uint64_t)(a->price / LONG_PRICE_DIVISOR));
			wire_put_le64(m + PITCH_TRADE_LONG_EXECUTION, a->match_id);
		} else {
			m = append(g, a->ts, PITCH_TRADE_EXPANDED, PITCH_TRADE_EXPANDED_LEN);
			wire_put_le32(m + PITCH_ADD_EXPANDED_QTY, a->qty);
			memcpy(m + PITCH_ADD_EXPANDED_SYMBOL, s->ticker, PITCH_SYMBOL_LEN);
			wire_put_le64(m + PITCH_ADD_EXPANDED_PRICE,
				      (uint64_t)(a->price / LONG_PRICE_DIVISOR));
			wire_put_le64(m + PITCH_TRADE_EXPANDED_EXECUTION, a->match_id);
		}
		wire_put_le64(m + PITCH_ORDER_ID, 0);	/* the hidden order: not disclosed */
		m[PITCH_SIDE] = side_char(a->side);
		return;
	case GEN_CROSS:
		/* Auction messages exist on BZX and BYX only (notes: Status). */
		if (g->cfg.venue != WB_VENUE_BZX && g->cfg.venue != WB_VENUE_BYX)
			return;
		m = append(g, a->ts, PITCH_AUCTION_SUMMARY, PITCH_AUCTION_SUMMARY_LEN);
		memcpy(m + PITCH_STATUS_SYMBOL, s->ticker, PITCH_SYMBOL_LEN);
		m[PITCH_AUCTION_TYPE] = (uint8_t)a->code;	/* O open, C close */
		wire_put_le64(m + PITCH_AUCTION_SUMMARY_PRICE,
			      (uint64_t)(a->price / LONG_PRICE_DIVISOR));
		wire_put_le32(m + PITCH_AUCTION_SUMMARY_SHARES, a->qty);
		return;
	default:
		/* GEN_SYSTEM, GEN_SYMBOL: PITCH has no system events or directory. */
		return;
	}
}

int gen_pitch_action(struct gen_pitch *g, const struct gen_flow *flow, const struct gen_action *a)
{
	if (g->error)
		return -1;
	if (a->venue != g->cfg.venue)
		return 0;
	if (!g->started) {
		/* Each day starts with a Unit Clear (notes: Messages). */
		append(g, a->ts, PITCH_UNIT_CLEAR, PITCH_UNIT_CLEAR_LEN);
		g->started = true;
	}
	encode(g, flow, a);
	if (g->flash_count)
		expire_flash(g, a->ts, false);
	return g->error ? -1 : 0;
}

int gen_pitch_finish(struct gen_pitch *g, uint64_t ts)
{
	if (g->error)
		return -1;
	if (g->started) {
		expire_flash(g, ts, true);
		append(g, ts, PITCH_END_OF_SESSION, PITCH_END_OF_SESSION_LEN);
	}
	if (flush_packet(g) || heartbeats_before(g, ts, g->next_seq))
		g->error = 1;
	return g->error ? -1 : 0;
}

/* ---- the generator entry (gen_proto.h) ---------------------------------------- */

static int pitch_enc_init(void *enc, const struct gen_encoder_config *cfg)
{
	struct gen_pitch_config pcfg = {
		.venue = cfg->venue, .unit = 1,
		.a_ip = cfg->a_ip, .b_ip = cfg->b_ip, .a_port = cfg->a_port, .b_port = cfg->b_port,
		.ab = cfg->ab, .gap_every = cfg->gap_every, .dup_every = cfg->dup_every,
		.max_payload = cfg->max_payload, .midnight_ns = cfg->midnight_ns, .seed = cfg->seed,
		.sink = cfg->sink, .observer = cfg->observer,
	};

	return gen_pitch_init(enc, &pcfg);
}

static int pitch_enc_action(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	return gen_pitch_action(enc, flow, a);
}

static int pitch_enc_finish(void *enc, uint64_t ts)
{
	return gen_pitch_finish(enc, ts);
}

static int pitch_enc_stop(void *enc)
{
	struct gen_pitch *g = enc;

	return g->error ? -1 : flush_packet(g);
}

static void pitch_enc_destroy(void *enc)
{
	gen_pitch_destroy(enc);
}

static void pitch_enc_summary(const void *enc, const struct gen_flow *flow, FILE *out)
{
	const struct gen_pitch *g = enc;

	(void)flow;
	fprintf(out, "wb-gen: %s PITCH: %" PRIu64 " messages in %" PRIu64 " data packets, %" PRIu64
		" heartbeats, %" PRIu64 " locking and %" PRIu64 " crossing orders\n",
		feed_venue_name(g->cfg.venue), g->stats.messages, g->stats.packets,
		g->stats.heartbeats, g->stats.locking_orders, g->stats.crossing_orders);
}

const struct gen_proto gen_proto_pitch = {
	.size = sizeof(struct gen_pitch),
	.writes_files = false,
	.min_payload = 8 + GEN_PITCH_MAX_MESSAGE,
	.init = pitch_enc_init,
	.action = pitch_enc_action,
	.finish = pitch_enc_finish,
	.stop = pitch_enc_stop,
	.destroy = pitch_enc_destroy,
	.summary = pitch_enc_summary,
};
