/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* ITCH 5.0 / MoldUDP64 encoder for the generator (see gen_itch.h). */
#include "gen/gen_itch.h"
#include "gen/gen_proto.h"
#include "common/put_bytes.h"

#include <inttypes.h>

#include <string.h>

#define MOLD_HEADER 20
#define MOLD_END_OF_SESSION 0xffff
#define PRICE4_DIVISOR (WB_PRICE_SCALE / 10000)
/* Receive time in the pcap: the exchange time plus a wire delay. */

static uint32_t price4(int64_t price)
{
	return (uint32_t)(price / PRICE4_DIVISOR);
}

/* Type, locate, tracking number (0) and timestamp: the common 11 bytes. */
static void header(uint8_t *m, char type, uint16_t locate, uint64_t ts)
{
	m[0] = (uint8_t)type;
	put_be16(m + 1, locate);
	put_be16(m + 3, 0);
	put_be48(m + 5, ts);
}

uint32_t gen_itch_encode(const struct gen_flow *flow, const struct gen_action *a, uint8_t *m)
{
	const struct gen_symbol *s = &flow->symbols[a->symbol];
	uint16_t locate = (uint16_t)(a->symbol + 1);
	char side = a->side == WB_SIDE_SELL ? 'S' : 'B';

	switch (a->kind) {
	case GEN_SYSTEM:
		header(m, 'S', 0, a->ts);
		m[11] = (uint8_t)a->code;
		return 12;
	case GEN_SYMBOL:
		header(m, 'R', locate, a->ts);
		memcpy(m + 11, s->ticker, 8);
		m[19] = (uint8_t)s->market;
		m[20] = 'N';			/* financial status: normal */
		put_be32(m + 21, s->round_lot);
		m[25] = 'N';			/* round lots only */
		m[26] = 'C';			/* issue classification: common stock */
		memcpy(m + 27, "Z ", 2);	/* issue sub-type: n/a */
		m[29] = 'P';			/* authenticity: live */
		m[30] = 'N';			/* short sale threshold */
		m[31] = ' ';			/* IPO flag */
		m[32] = s->mid >= WB_PRICE_SCALE ? '1' : '2'; /* LULD tier */
		m[33] = 'N';			/* ETP flag */
		put_be32(m + 34, 0);		/* ETP leverage */
		m[38] = 'N';			/* inverse */
		return 39;
	case GEN_TRADING:
		header(m, 'H', locate, a->ts);
		memcpy(m + 11, s->ticker, 8);
		m[19] = (uint8_t)a->code;
		m[20] = ' ';
		memcpy(m + 21, "    ", 4);
		return 25;
	case GEN_ADD:
		header(m, a->attributed ? 'F' : 'A', locate, a->ts);
		put_be64(m + 11, a->order_id);
		m[19] = (uint8_t)side;
		put_be32(m + 20, a->qty);
		memcpy(m + 24, s->ticker, 8);
		put_be32(m + 32, price4(a->price));
		if (!a->attributed)
			return 36;
		memcpy(m + 36, a->mpid, 4);
		return 40;
	case GEN_EXECUTE:
		header(m, 'E', locate, a->ts);
		put_be64(m + 11, a->order_id);
		put_be32(m + 19, a->qty);
		put_be64(m + 23, a->match_id);
		return 31;
	case GEN_EXECUTE_AT_PRICE:
		header(m, 'C', locate, a->ts);
		put_be64(m + 11, a->order_id);
		put_be32(m + 19, a->qty);
		put_be64(m + 23, a->match_id);
		m[31] = a->printable ? 'Y' : 'N';
		put_be32(m + 32, price4(a->price));
		return 36;
	case GEN_CANCEL:
		header(m, 'X', locate, a->ts);
		put_be64(m + 11, a->order_id);
		put_be32(m + 19, a->qty);
		return 23;
	case GEN_DELETE:
		header(m, 'D', locate, a->ts);
		put_be64(m + 11, a->order_id);
		return 19;
	case GEN_REPLACE:
		header(m, 'U', locate, a->ts);
		put_be64(m + 11, a->order_id);
		put_be64(m + 19, a->new_order_id);
		put_be32(m + 27, a->qty);
		put_be32(m + 31, price4(a->price));
		return 35;
	case GEN_TRADE:
		header(m, 'P', locate, a->ts);
		put_be64(m + 11, 0);		/* order ref: always 0 since 2010 */
		m[19] = (uint8_t)side;
		put_be32(m + 20, a->qty);
		memcpy(m + 24, s->ticker, 8);
		put_be32(m + 32, price4(a->price));
		put_be64(m + 36, a->match_id);
		return 44;
	case GEN_CROSS:
		header(m, 'Q', locate, a->ts);
		put_be64(m + 11, a->qty);
		memcpy(m + 19, s->ticker, 8);
		put_be32(m + 27, price4(a->price));
		put_be64(m + 31, a->match_id);
		m[39] = (uint8_t)a->code;
		return 40;
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
	g->len = MOLD_HEADER;
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
	uint8_t p[MOLD_HEADER];

	memcpy(p, g->cfg.session, 10);
	put_be64(p + 10, g->next_seq);
	put_be16(p + 18, count);
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
	memcpy(g->pkt, g->cfg.session, 10);
	put_be64(g->pkt + 10, first_seq);
	put_be16(g->pkt + 18, g->count);
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
	g->len = MOLD_HEADER;
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
	g->stats.by_type[msg[0] & 0x7f]++;
	if (g->cfg.file) {
		if (itch_file_write(g->cfg.file, msg, (uint16_t)n))
			g->error = 1;
		return g->error ? -1 : 0;
	}
	if (g->count && (g->len + 2 + n > g->cfg.max_payload || g->count == 0xfffe ||
			 a->ts - g->pkt_first_ts > GEN_ITCH_PACKET_WINDOW_NS)) {
		if (flush_packet(g))
			g->error = 1;
	}
	if (!g->count)
		g->pkt_first_ts = a->ts;
	g->pkt_last_ts = a->ts;
	put_be16(g->pkt + g->len, (uint16_t)n);
	memcpy(g->pkt + g->len + 2, msg, n);
	g->len += 2 + n;
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
	.min_payload = 20 + 2 + GEN_ITCH_MAX_MESSAGE,
	.init = itch_enc_init,
	.action = itch_enc_action,
	.finish = itch_enc_finish,
	.stop = itch_enc_stop,
	.destroy = itch_enc_destroy,
	.summary = itch_enc_summary,
};
