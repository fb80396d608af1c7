/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* ITCH 5.0 / MoldUDP64 encoder for the generator (see gen_itch.h). */
#include "gen/gen_itch.h"
#include "gen/gen_proto.h"
#include "wire/bytes.h"
#include "wire/itch50.h"
#include "wire/moldudp64.h"

#include <inttypes.h>

#include <string.h>

#define PRICE4_DIVISOR (WB_PRICE_SCALE / 10000)
/* Receive time in the pcap: the exchange time plus a wire delay. */

static uint32_t price4(int64_t price)
{
	return (uint32_t)(price / PRICE4_DIVISOR);
}

/* Type, locate, tracking number (0) and timestamp: every message's header. */
static void header(uint8_t *m, char type, uint16_t locate, uint64_t ts)
{
	m[ITCH_TYPE] = (uint8_t)type;
	wire_put_be16(m + ITCH_LOCATE, locate);
	wire_put_be16(m + ITCH_TRACKING, 0);
	wire_put_be48(m + ITCH_TIMESTAMP, ts);
}

uint32_t gen_itch_encode(const struct gen_flow *flow, const struct gen_action *a, uint8_t *m)
{
	const struct gen_symbol *s = &flow->symbols[a->symbol];
	uint16_t locate = (uint16_t)(a->symbol + 1);
	char side = a->side == WB_SIDE_SELL ? 'S' : 'B';

	switch (a->kind) {
	case GEN_SYSTEM:
		header(m, ITCH_SYSTEM_EVENT, 0, a->ts);
		m[ITCH_SYSTEM_EVENT_CODE] = (uint8_t)a->code;
		return ITCH_SYSTEM_EVENT_LEN;
	case GEN_SYMBOL:
		header(m, ITCH_STOCK_DIRECTORY, locate, a->ts);
		memcpy(m + ITCH_DIRECTORY_STOCK, s->ticker, ITCH_STOCK_LEN);
		m[ITCH_DIRECTORY_MARKET] = (uint8_t)s->market;
		m[ITCH_DIRECTORY_FSI] = 'N';			/* normal */
		wire_put_be32(m + ITCH_DIRECTORY_ROUND_LOT, s->round_lot);
		m[ITCH_DIRECTORY_LOTS_ONLY] = 'N';
		m[ITCH_DIRECTORY_CLASS] = 'C';			/* common stock */
		memcpy(m + ITCH_DIRECTORY_SUBTYPE, "Z ", 2);	/* n/a */
		m[ITCH_DIRECTORY_AUTHENTICITY] = 'P';		/* live */
		m[ITCH_DIRECTORY_SSTI] = 'N';
		m[ITCH_DIRECTORY_IPO] = ' ';
		m[ITCH_DIRECTORY_LULD_TIER] = s->mid >= WB_PRICE_SCALE ? '1' : '2';
		m[ITCH_DIRECTORY_ETP] = 'N';
		wire_put_be32(m + ITCH_DIRECTORY_LEVERAGE, 0);
		m[ITCH_DIRECTORY_INVERSE] = 'N';
		return ITCH_STOCK_DIRECTORY_LEN;
	case GEN_TRADING:
		header(m, ITCH_TRADING_ACTION, locate, a->ts);
		memcpy(m + ITCH_ACTION_STOCK, s->ticker, ITCH_STOCK_LEN);
		m[ITCH_ACTION_STATE] = (uint8_t)a->code;
		m[ITCH_ACTION_RESERVED] = ' ';
		memcpy(m + ITCH_ACTION_REASON, "    ", ITCH_REASON_LEN);
		return ITCH_TRADING_ACTION_LEN;
	case GEN_ADD:
		header(m, a->attributed ? ITCH_ADD_MPID : ITCH_ADD, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		m[ITCH_ADD_SIDE] = (uint8_t)side;
		wire_put_be32(m + ITCH_ADD_SHARES, a->qty);
		memcpy(m + ITCH_ADD_STOCK, s->ticker, ITCH_STOCK_LEN);
		wire_put_be32(m + ITCH_ADD_PRICE, price4(a->price));
		if (!a->attributed)
			return ITCH_ADD_LEN;
		memcpy(m + ITCH_ADD_MPID_ATTRIBUTION, a->mpid, ITCH_MPID_LEN);
		return ITCH_ADD_MPID_LEN;
	case GEN_EXECUTE:
		header(m, ITCH_EXECUTED, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		wire_put_be32(m + ITCH_EXECUTED_SHARES, a->qty);
		wire_put_be64(m + ITCH_EXECUTED_MATCH, a->match_id);
		return ITCH_EXECUTED_LEN;
	case GEN_EXECUTE_AT_PRICE:
		header(m, ITCH_EXECUTED_PRICE, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		wire_put_be32(m + ITCH_EXECUTED_SHARES, a->qty);
		wire_put_be64(m + ITCH_EXECUTED_MATCH, a->match_id);
		m[ITCH_EXECUTED_PRINTABLE] = a->printable ? 'Y' : 'N';
		wire_put_be32(m + ITCH_EXECUTED_PRICE_PRICE, price4(a->price));
		return ITCH_EXECUTED_PRICE_LEN;
	case GEN_CANCEL:
		header(m, ITCH_CANCEL, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		wire_put_be32(m + ITCH_CANCEL_SHARES, a->qty);
		return ITCH_CANCEL_LEN;
	case GEN_DELETE:
		header(m, ITCH_DELETE, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		return ITCH_DELETE_LEN;
	case GEN_REPLACE:
		header(m, ITCH_REPLACE, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, a->order_id);
		wire_put_be64(m + ITCH_REPLACE_NEW_REF, a->new_order_id);
		wire_put_be32(m + ITCH_REPLACE_SHARES, a->qty);
		wire_put_be32(m + ITCH_REPLACE_PRICE, price4(a->price));
		return ITCH_REPLACE_LEN;
	case GEN_TRADE:
		header(m, ITCH_TRADE, locate, a->ts);
		wire_put_be64(m + ITCH_ORDER_REF, 0);	/* always 0 since 2010 */
		m[ITCH_ADD_SIDE] = (uint8_t)side;
		wire_put_be32(m + ITCH_ADD_SHARES, a->qty);
		memcpy(m + ITCH_ADD_STOCK, s->ticker, ITCH_STOCK_LEN);
		wire_put_be32(m + ITCH_ADD_PRICE, price4(a->price));
		wire_put_be64(m + ITCH_TRADE_MATCH, a->match_id);
		return ITCH_TRADE_LEN;
	case GEN_CROSS:
		header(m, ITCH_CROSS_TRADE, locate, a->ts);
		wire_put_be64(m + ITCH_CROSS_SHARES, a->qty);
		memcpy(m + ITCH_CROSS_STOCK, s->ticker, ITCH_STOCK_LEN);
		wire_put_be32(m + ITCH_CROSS_PRICE, price4(a->price));
		wire_put_be64(m + ITCH_CROSS_MATCH, a->match_id);
		m[ITCH_CROSS_TYPE] = (uint8_t)a->code;
		return ITCH_CROSS_TRADE_LEN;
	}
	return 0;
}

void gen_itch_init(struct gen_itch *g, const struct gen_itch_config *cfg)
{
	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	if (!g->cfg.max_payload || g->cfg.max_payload > sizeof(g->pkt))
		g->cfg.max_payload = GEN_ITCH_DEFAULT_PAYLOAD;
	g->next_seq = 1;
	g->len = MOLD_HEADER_LEN;
}

static int sink_send(struct gen_itch *g, uint64_t ts, const uint8_t *p, uint32_t len)
{
	int sent = gen_sink_send(&g->cfg.sink, g->cfg.midnight_ns + ts, g->cfg.a_ip, g->cfg.a_port,
				 g->cfg.b_ip, g->cfg.b_port, g->cfg.ab, p, len);

	if (sent < 0)
		return -1;
	g->stats.packets_sent += (uint64_t)sent;
	return 0;
}

/* A header-only packet: heartbeat (count 0) or end of session (0xffff). */
static int send_control(struct gen_itch *g, uint64_t ts, uint16_t count)
{
	uint8_t p[MOLD_HEADER_LEN];

	memcpy(p + MOLD_SESSION, g->cfg.session, MOLD_SESSION_LEN);
	wire_put_be64(p + MOLD_SEQUENCE, g->next_seq);
	wire_put_be16(p + MOLD_COUNT, count);
	g->last_sent_ts = ts;
	g->sent_any = true;
	return sink_send(g, ts, p, sizeof(p));
}

/* Heartbeats for an idle stretch before a packet at ts (a few at most). */
static int heartbeats_before(struct gen_itch *g, uint64_t ts)
{
	for (int n = 0; g->sent_any && n < GEN_ITCH_MAX_HEARTBEATS &&
			ts > g->last_sent_ts + GEN_ITCH_HEARTBEAT_NS; n++) {
		if (send_control(g, g->last_sent_ts + GEN_ITCH_HEARTBEAT_NS, 0))
			return -1;
		g->stats.heartbeats++;
	}
	return 0;
}

static int flush_packet(struct gen_itch *g)
{
	uint64_t first_seq = g->next_seq;
	int rc = 0;

	if (!g->count)
		return 0;
	if (heartbeats_before(g, g->pkt_first_ts))
		return -1;
	memcpy(g->pkt + MOLD_SESSION, g->cfg.session, MOLD_SESSION_LEN);
	wire_put_be64(g->pkt + MOLD_SEQUENCE, first_seq);
	wire_put_be16(g->pkt + MOLD_COUNT, g->count);
	g->next_seq += g->count;
	g->stats.packets++;
	g->last_sent_ts = g->pkt_last_ts;
	g->sent_any = true;
	if (g->cfg.gap_every && g->stats.packets % g->cfg.gap_every == 0) {
		/* Lost on every line: the receiver sees a real gap. */
		g->stats.dropped_packets++;
		g->stats.dropped_messages += g->count;
	} else {
		rc = sink_send(g, g->pkt_last_ts, g->pkt, g->len);
		if (!rc && g->cfg.dup_every && g->stats.packets % g->cfg.dup_every == 0) {
			g->stats.duplicated_packets++;
			rc = sink_send(g, g->pkt_last_ts, g->pkt, g->len);
		}
	}
	g->len = MOLD_HEADER_LEN;
	g->count = 0;
	return rc;
}

int gen_itch_action(struct gen_itch *g, const struct gen_flow *flow, const struct gen_action *a)
{
	uint8_t msg[GEN_ITCH_MAX_MESSAGE];
	uint32_t n = gen_itch_encode(flow, a, msg);

	if (!n || g->error)
		return g->error ? -1 : 0;
	g->stats.messages++;
	g->stats.by_type[msg[ITCH_TYPE] & 0x7f]++;
	if (g->cfg.file) {
		if (itch_file_write(g->cfg.file, msg, (uint16_t)n))
			g->error = 1;
		return g->error ? -1 : 0;
	}
	if (g->count && (g->len + MOLD_BLOCK_LENGTH_LEN + n > g->cfg.max_payload ||
			 g->count == MOLD_END_OF_SESSION - 1 ||
			 a->ts - g->pkt_first_ts > GEN_ITCH_PACKET_WINDOW_NS)) {
		if (flush_packet(g))
			g->error = 1;
	}
	if (!g->count)
		g->pkt_first_ts = a->ts;
	g->pkt_last_ts = a->ts;
	wire_put_be16(g->pkt + g->len, (uint16_t)n);
	memcpy(g->pkt + g->len + MOLD_BLOCK_LENGTH_LEN, msg, n);
	g->len += MOLD_BLOCK_LENGTH_LEN + n;
	g->count++;
	return g->error ? -1 : 0;
}

int gen_itch_finish(struct gen_itch *g, uint64_t ts)
{
	if (g->cfg.file || g->error)
		return g->error ? -1 : 0;
	if (flush_packet(g) || heartbeats_before(g, ts) || send_control(g, ts, MOLD_END_OF_SESSION))
		g->error = 1;
	else
		g->stats.end_of_session++;
	return g->error ? -1 : 0;
}

/* ---- the generator entry (gen_proto.h) ---------------------------------------- */

static int itch_enc_init(void *enc, const struct gen_encoder_config *cfg)
{
	struct gen_itch_config icfg = {
		.a_ip = cfg->a_ip, .b_ip = cfg->b_ip, .a_port = cfg->a_port, .b_port = cfg->b_port,
		.ab = cfg->ab, .gap_every = cfg->gap_every, .dup_every = cfg->dup_every,
		.max_payload = cfg->max_payload, .midnight_ns = cfg->midnight_ns,
		.sink = cfg->sink, .file = cfg->file,
	};

	memcpy(icfg.session, cfg->session, sizeof(icfg.session));
	gen_itch_init(enc, &icfg);
	return 0;
}

static int itch_enc_action(void *enc, const struct gen_flow *flow, const struct gen_action *a)
{
	return a->venue == WB_VENUE_NASDAQ || a->venue == WB_VENUE_BX || a->venue == WB_VENUE_PSX ?
		gen_itch_action(enc, flow, a) : 0;
}

static int itch_enc_finish(void *enc, uint64_t ts)
{
	return gen_itch_finish(enc, ts);
}

static int itch_enc_stop(void *enc)
{
	struct gen_itch *g = enc;

	if (g->cfg.file || g->error)
		return g->error ? -1 : 0;
	return flush_packet(g);
}

static void itch_enc_destroy(void *enc)
{
	(void)enc;
}

static void itch_enc_summary(const void *enc, const struct gen_flow *flow, FILE *out)
{
	static const char types[] = "SRHQAFEXDUCP";
	const struct gen_itch *g = enc;
	uint64_t flow_msgs = flow->stats.flow_messages;

	fprintf(out, "wb-gen: ITCH: %" PRIu64 " messages (%" PRIu64 " order flow); mix:",
		g->stats.messages, flow_msgs);
	for (const char *t = types; *t; t++) {
		uint64_t n = g->stats.by_type[(int)*t];

		if (!n)
			continue;
		if (strchr("AFEXDUCP", *t) && flow_msgs)
			fprintf(out, " %c %" PRIu64 " (%.1f%%)", *t, n,
				100.0 * (double)n / (double)flow_msgs);
		else
			fprintf(out, " %c %" PRIu64, *t, n);
	}
	fprintf(out, "\n");
	if (!g->cfg.file)
		fprintf(out, "wb-gen: ITCH: %" PRIu64 " data packets, %" PRIu64 " datagrams written, %"
			PRIu64 " dropped (%" PRIu64 " messages), %" PRIu64 " duplicated, %" PRIu64
			" heartbeats, %" PRIu64 " end-of-session\n",
			g->stats.packets, g->stats.packets_sent, g->stats.dropped_packets,
			g->stats.dropped_messages, g->stats.duplicated_packets, g->stats.heartbeats,
			g->stats.end_of_session);
}

const struct gen_proto gen_proto_itch50 = {
	.size = sizeof(struct gen_itch),
	.writes_files = true,
	.min_payload = MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + GEN_ITCH_MAX_MESSAGE,
	.init = itch_enc_init,
	.action = itch_enc_action,
	.finish = itch_enc_finish,
	.stop = itch_enc_stop,
	.destroy = itch_enc_destroy,
	.summary = itch_enc_summary,
};
