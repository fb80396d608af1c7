/*
 * ITCH 5.0 over MoldUDP64: real captures, one golden vector per message
 * type built from the spec, malformed packets, sequencing and filtering.
 */
#include "feed_harness.h"
#include "wire/itch50.h"

#define SESSION "000010059B"
#define PCAP_DIR "pcaps/itch50/"

static struct harness h;
static int line_a, line_b;

static void setup(void)
{
	harness_init(&h, HARNESS_RING_SLOTS);
	line_a = feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, FEED_PROTO_ITCH50,
			      WB_VENUE_NASDAQ, "A");
	line_b = feed_map_add(h.engine, ipv4(233, 49, 196, 111), 26477, FEED_PROTO_ITCH50,
			      WB_VENUE_NASDAQ, "B");
	ck_assert_int_ge(line_a, 0);
	ck_assert_int_ge(line_b, 0);
}

static void teardown(void)
{
	harness_free(&h);
}

/* The OMI captures were recorded on 2023-08-22: their exchange times are that day's. */
#define CAPTURE_DAY feed_et_midnight_of_date(2023, 8, 22)

static const struct feed_counters *counters(int line)
{
	return &h.engine->lines[line].counters;
}

/* ---- packet and message builders ------------------------------------- */

struct pkt {
	uint8_t b[2048];
	size_t len;
	uint16_t count;
};

static void pkt_start(struct pkt *p, const char *session, uint64_t seq)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b + MOLD_SESSION, session, MOLD_SESSION_LEN);
	wire_put_be64(p->b + MOLD_SEQUENCE, seq);
	p->len = MOLD_HEADER_LEN;
}

static void pkt_add(struct pkt *p, const uint8_t *msg, size_t len)
{
	wire_put_be16(p->b + p->len, len);
	memcpy(p->b + p->len + MOLD_BLOCK_LENGTH_LEN, msg, len);
	p->len += MOLD_BLOCK_LENGTH_LEN + len;
	wire_put_be16(p->b + MOLD_COUNT, ++p->count);
}

static void send_pkt(int line, struct pkt *p)
{
	harness_payload(&h, line, p->b, p->len);
}

/* The common header: type, locate, tracking, timestamp. */
static void msg_header(uint8_t *m, char type, uint16_t locate, uint64_t ts)
{
	m[ITCH_TYPE] = (uint8_t)type;
	wire_put_be16(m + ITCH_LOCATE, locate);
	wire_put_be16(m + ITCH_TRACKING, 7);
	wire_put_be48(m + ITCH_TIMESTAMP, ts);
}

static size_t msg_directory(uint8_t *m, uint16_t locate, const char *stock, uint32_t lot)
{
	memset(m, 0, ITCH_STOCK_DIRECTORY_LEN);
	msg_header(m, ITCH_STOCK_DIRECTORY, locate, 1000);
	put_text(m + ITCH_DIRECTORY_STOCK, stock, ITCH_STOCK_LEN);
	m[ITCH_DIRECTORY_MARKET] = 'Q';
	m[ITCH_DIRECTORY_FSI] = 'N';
	wire_put_be32(m + ITCH_DIRECTORY_ROUND_LOT, lot);
	m[ITCH_DIRECTORY_LOTS_ONLY] = 'N';
	return ITCH_STOCK_DIRECTORY_LEN;
}

static size_t msg_add(uint8_t *m, uint16_t locate, uint64_t ref, char side, uint32_t shares,
		      const char *stock, uint32_t price4)
{
	msg_header(m, ITCH_ADD, locate, 2000);
	wire_put_be64(m + ITCH_ORDER_REF, ref);
	m[ITCH_ADD_SIDE] = (uint8_t)side;
	wire_put_be32(m + ITCH_ADD_SHARES, shares);
	put_text(m + ITCH_ADD_STOCK, stock, ITCH_STOCK_LEN);
	wire_put_be32(m + ITCH_ADD_PRICE, price4);
	return ITCH_ADD_LEN;
}

static size_t msg_delete(uint8_t *m, uint16_t locate, uint64_t ref)
{
	msg_header(m, ITCH_DELETE, locate, 3000);
	wire_put_be64(m + ITCH_ORDER_REF, ref);
	return ITCH_DELETE_LEN;
}

/* A one-message packet helper for sequence tests. */
static void send_delete(int line, uint64_t seq)
{
	struct pkt p;
	uint8_t m[64];

	pkt_start(&p, SESSION, seq);
	pkt_add(&p, m, msg_delete(m, 1, seq));
	send_pkt(line, &p);
}

static void send_directory(int line, uint64_t seq, uint16_t locate, const char *stock)
{
	struct pkt p;
	uint8_t m[64];

	pkt_start(&p, SESSION, seq);
	pkt_add(&p, m, msg_directory(m, locate, stock, 100));
	send_pkt(line, &p);
}

/* ---- real captures ----------------------------------------------------- */

START_TEST(test_itch_capture_add_order_decodes_spec_values)
{
	const struct wb_event *gap, *sym, *add;

	feed_subscribe(h.engine, "*", 1);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "AddOrderNoMpidAttributionMessage.pcap"), 1);
	gap = harness_find(&h, WB_EV_GAP, 0);
	ck_assert_ptr_nonnull(gap);
	/* Joining mid-session: everything before the first packet is missing. */
	ck_assert_uint_eq(gap->u.gap.first, 1);
	ck_assert_uint_eq(gap->u.gap.count, 14757720);
	sym = harness_find(&h, WB_EV_SYMBOL, 0);
	ck_assert_ptr_nonnull(sym);
	ck_assert_mem_eq(sym->u.symbol.ticker, "IVOO    ", 8);
	ck_assert_uint_eq(sym->u.symbol.feed_key, 5528);
	add = harness_find(&h, WB_EV_ADD, 0);
	ck_assert_ptr_nonnull(add);
	ck_assert_uint_eq(add->venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(add->instrument, sym->instrument);
	ck_assert_uint_eq(add->seq, 14757721);
	ck_assert_uint_eq(add->exch_ts, CAPTURE_DAY + 34199999894278ull);
	ck_assert_uint_eq(add->u.order.order_id, 23508286);
	ck_assert_uint_eq(add->side, WB_SIDE_BUY);
	ck_assert_uint_eq(add->u.order.qty, 1600);
	ck_assert_int_eq(add->u.order.price, 8739000000LL); /* $87.39 at 1e-8 */
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_SYMBOL], 1);
	ck_assert_uint_eq(counters(line_a)->messages, 1);
}
END_TEST

START_TEST(test_itch_capture_order_executed)
{
	const struct wb_event *ev;

	/* Executions name only a locate: subscribe to it through a directory. */
	feed_subscribe(h.engine, "XYZ", 3);
	send_directory(line_a, 14757744, 2345, "XYZ");
	harness_pcap(&h, PCAP_DIR "OrderExecutedMessage.pcap");
	ev = harness_find(&h, WB_EV_EXECUTE, 0);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->seq, 14757745);
	ck_assert_uint_eq(ev->exch_ts, CAPTURE_DAY + 34199999934561ull);
	ck_assert_uint_eq(ev->u.order.order_id, 23499418);
	ck_assert_uint_eq(ev->u.order.qty, 25);
	ck_assert_uint_eq(ev->u.order.ref, 255547);
	ck_assert_uint_eq(ev->flags & WB_EVF_PRINTABLE, WB_EVF_PRINTABLE);
}
END_TEST

START_TEST(test_itch_capture_order_delete_and_replace)
{
	const struct wb_event *ev;

	feed_subscribe(h.engine, "DEL", 3);
	feed_subscribe(h.engine, "REP", 3);
	send_directory(line_a, 14757700, 7603, "REP");
	harness_pcap(&h, PCAP_DIR "OrderReplaceMessage.pcap");
	ev = harness_find(&h, WB_EV_REPLACE, 0);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->u.order.order_id, 0xe6897f);
	ck_assert_uint_eq(ev->u.order.ref, 0x145f2c7);
	ck_assert_uint_eq(ev->u.order.qty, 100);
	ck_assert_int_eq(ev->u.order.price, 0x1036c8LL * 10000);

	send_directory(line_a, 14757702, 3517, "DEL");
	/* seq 14757703..14757721 missing before the delete at 14757722 */
	harness_pcap(&h, PCAP_DIR "OrderDeleteMessage.pcap");
	ev = harness_find(&h, WB_EV_DELETE, 0);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->u.order.order_id, 0x1668bd6);
	ck_assert_uint_eq(ev->seq, 14757722);
}
END_TEST

START_TEST(test_itch_capture_trading_action_is_status)
{
	const struct wb_event *ev;

	feed_subscribe(h.engine, "AMC", 3);
	harness_pcap(&h, PCAP_DIR "StockTradingActionMessage.pcap");
	ev = harness_find(&h, WB_EV_STATUS, 0);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->u.status.state, WB_STATE_TRADING);
	ck_assert_int_eq(ev->u.status.raw_state, 'T');
	ck_assert_uint_eq(ev->exch_ts, CAPTURE_DAY + 34763322465824ull);
	ck_assert_ptr_nonnull(harness_find(&h, WB_EV_SYMBOL, 0));
}
END_TEST

START_TEST(test_itch_capture_reference_messages_are_ignored)
{
	feed_subscribe(h.engine, "*", 1);
	/* In sequence order: the imbalance (14757919) precedes the position (17861990). */
	harness_pcap(&h, PCAP_DIR "NetOrderImbalanceIndicatorMessage.pcap");
	harness_pcap(&h, PCAP_DIR "MarketParticipantPositionMessage.pcap");
	ck_assert_uint_eq(counters(line_a)->ignored, 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 0);
}
END_TEST

START_TEST(test_itch_capture_multiple_packets)
{
	const struct wb_event *first, *f;
	size_t adds;

	feed_subscribe(h.engine, "META", 4);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "Multiple.Packets.pcap"), 2);
	adds = harness_count(&h, WB_EV_ADD);
	ck_assert_uint_eq(adds, 38); /* 36 'A' + 2 'F' */
	first = harness_find(&h, WB_EV_ADD, 0);
	ck_assert_uint_eq(first->seq, 19009117);
	ck_assert_uint_eq(first->u.order.order_id, 7942047);
	ck_assert_int_eq(first->u.order.price, 805200LL * 10000);
	f = first;
	while ((f = harness_find(&h, WB_EV_ADD, (size_t)(f - h.events) + 1)) && f->seq != 19009125)
		;
	ck_assert_ptr_nonnull(f);
	ck_assert_mem_eq(f->u.order.mpid, "UBSS", 4);
	/* The delete on locate 2737 is of an unsubscribed, undirected stock. */
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
	ck_assert_uint_eq(counters(line_a)->gaps, 2);
}
END_TEST

/* ---- one golden vector per message type ------------------------------- */

struct golden {
	char type;
	int len;
	int kind;	/* event kind, or 0 for ignored */
};

static const struct golden golden_types[] = {
	{ 'S', 12, WB_EV_STATUS }, { 'R', 39, WB_EV_SYMBOL }, { 'H', 25, WB_EV_STATUS },
	{ 'Y', 20, 0 }, { 'L', 26, 0 }, { 'V', 35, 0 }, { 'W', 12, 0 }, { 'K', 28, 0 },
	{ 'J', 35, 0 }, { 'h', 21, WB_EV_STATUS }, { 'A', 36, WB_EV_ADD }, { 'F', 40, WB_EV_ADD },
	{ 'E', 31, WB_EV_EXECUTE }, { 'C', 36, WB_EV_EXECUTE_AT_PRICE }, { 'X', 23, WB_EV_REDUCE },
	{ 'D', 19, WB_EV_DELETE }, { 'U', 35, WB_EV_REPLACE }, { 'P', 44, WB_EV_TRADE },
	{ 'Q', 40, WB_EV_TRADE }, { 'B', 19, WB_EV_TRADE_BREAK }, { 'I', 50, 0 },
	{ 'N', 20, 0 }, { 'O', 48, 0 },
};

/* Fill a message of the given type with recognisable field values. */
static size_t golden_message(uint8_t *m, const struct golden *g)
{
	memset(m, 0, 64);
	msg_header(m, g->type, 9, 0x0102030405ull);
	switch (g->type) {
	case 'S': m[11] = 'Q'; break;
	case 'R': msg_directory(m, 9, "GOLD", 100); break;
	case 'H': put_text(m + 11, "GOLD", 8); m[19] = 'H'; put_text(m + 21, "LUDP", 4); break;
	case 'h': put_text(m + 11, "GOLD", 8); m[19] = 'Q'; m[20] = 'H'; break;
	case 'A': case 'F':
		msg_add(m, 9, 1111, 'S', 300, "GOLD", 1234567);
		msg_header(m, g->type, 9, 0x0102030405ull);
		if (g->type == 'F')
			put_text(m + 36, "MPID", 4);
		break;
	case 'E': wire_put_be64(m + 11, 1111); wire_put_be32(m + 19, 50); wire_put_be64(m + 23, 777); break;
	case 'C': wire_put_be64(m + 11, 1111); wire_put_be32(m + 19, 60); wire_put_be64(m + 23, 778);
		m[31] = 'N'; wire_put_be32(m + 32, 1230000); break;
	case 'X': wire_put_be64(m + 11, 1111); wire_put_be32(m + 19, 70); break;
	case 'D': wire_put_be64(m + 11, 1111); break;
	case 'U': wire_put_be64(m + 11, 1111); wire_put_be64(m + 19, 2222); wire_put_be32(m + 27, 80);
		wire_put_be32(m + 31, 1240000); break;
	case 'P': wire_put_be64(m + 11, 0); m[19] = 'B'; wire_put_be32(m + 20, 90);
		put_text(m + 24, "GOLD", 8); wire_put_be32(m + 32, 1250000); wire_put_be64(m + 36, 779); break;
	case 'Q': wire_put_be64(m + 11, 5000000000ull); put_text(m + 19, "GOLD", 8);
		wire_put_be32(m + 27, 1260000); wire_put_be64(m + 31, 780); m[39] = 'O'; break;
	case 'B': wire_put_be64(m + 11, 779); break;
	default: break;
	}
	return (size_t)g->len;
}

START_TEST(test_itch_every_message_type_decodes_per_spec)
{
	const struct golden *g = &golden_types[_i];
	const struct wb_event *ev;
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "GOLD", 4);
	send_directory(line_a, 1, 9, "GOLD");
	h.n = 0;
	pkt_start(&p, SESSION, 2);
	pkt_add(&p, m, golden_message(m, g));
	send_pkt(line_a, &p);
	if (!g->kind) {
		ck_assert_uint_eq(h.n, 0);
		ck_assert_uint_eq(counters(line_a)->ignored, 1);
		return;
	}
	ck_assert_uint_eq(h.n, 1);
	ev = &h.events[0];
	ck_assert_int_eq(ev->kind, g->kind);
	ck_assert_uint_eq(ev->seq, 2);
	ck_assert_uint_eq(ev->exch_ts, g->type == 'R' ? 1000 : 0x0102030405ull);
	ck_assert_uint_eq(ev->instrument, g->type == 'S' ? 0 : 1);
	switch (g->type) {
	case 'S': ck_assert_uint_eq(ev->u.status.state, WB_STATE_OPEN); break;
	case 'R': ck_assert_mem_eq(ev->u.symbol.ticker, "GOLD    ", 8);
		ck_assert_uint_eq(ev->u.symbol.round_lot, 100);
		ck_assert_int_eq(ev->u.symbol.listing_market, 'Q'); break;
	case 'H': ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED);
		ck_assert_mem_eq(ev->u.status.reason, "LUDP", 4); break;
	case 'h': ck_assert_uint_eq(ev->u.status.state, WB_STATE_HALTED); break;
	case 'A': case 'F':
		ck_assert_uint_eq(ev->u.order.order_id, 1111);
		ck_assert_uint_eq(ev->side, WB_SIDE_SELL);
		ck_assert_uint_eq(ev->u.order.qty, 300);
		ck_assert_int_eq(ev->u.order.price, 1234567LL * 10000);
		ck_assert_mem_eq(ev->u.order.mpid, g->type == 'F' ? "MPID" : "\0\0\0\0", 4);
		break;
	case 'E': ck_assert_uint_eq(ev->u.order.qty, 50); ck_assert_uint_eq(ev->u.order.ref, 777); break;
	case 'C': ck_assert_uint_eq(ev->u.order.qty, 60);
		ck_assert_int_eq(ev->u.order.price, 1230000LL * 10000);
		ck_assert_uint_eq(ev->flags & WB_EVF_PRINTABLE, 0); break;
	case 'X': ck_assert_uint_eq(ev->u.order.qty, 70); break;
	case 'D': ck_assert_uint_eq(ev->u.order.order_id, 1111); break;
	case 'U': ck_assert_uint_eq(ev->u.order.order_id, 1111);
		ck_assert_uint_eq(ev->u.order.ref, 2222);
		ck_assert_uint_eq(ev->u.order.qty, 80);
		ck_assert_int_eq(ev->u.order.price, 1240000LL * 10000); break;
	case 'P': ck_assert_uint_eq(ev->u.trade.qty, 90);
		ck_assert_int_eq(ev->u.trade.price, 1250000LL * 10000);
		ck_assert_uint_eq(ev->u.trade.match_id, 779); break;
	case 'Q': ck_assert_uint_eq(ev->u.trade.qty, 0xffffffffu); /* saturated */
		ck_assert_int_eq(ev->u.trade.cross_type, 'O');
		ck_assert_uint_eq(ev->flags & WB_EVF_CROSS, WB_EVF_CROSS); break;
	case 'B': ck_assert_uint_eq(ev->u.trade.match_id, 779); break;
	}
}
END_TEST

START_TEST(test_itch_message_shorter_than_its_type_is_counted)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_add(m, 1, 5, 'B', 1, "SHORT", 1) - 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 0);
}
END_TEST

START_TEST(test_itch_longer_message_reads_known_prefix)
{
	struct pkt p;
	uint8_t m[64] = { 0 };

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_add(m, 1, 5, 'B', 1, "LONG", 1) + 4);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
}
END_TEST

START_TEST(test_itch_unknown_type_is_skipped_by_length)
{
	struct pkt p;
	uint8_t m[64] = { 'z' };

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, 17);
	pkt_add(&p, m, msg_add(m, 1, 5, 'B', 1, "NEXT", 1));
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_TYPE], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
}
END_TEST

START_TEST(test_itch_bad_side_is_a_field_error)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_add(m, 1, 5, 'Z', 1, "SIDE", 1));
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 0);
}
END_TEST

/* ---- malformed packets ------------------------------------------------- */

START_TEST(test_itch_packet_shorter_than_header_is_truncated)
{
	uint8_t b[19] = "000010059B";

	harness_payload(&h, line_a, b, sizeof(b));
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(h.n, 0);
}
END_TEST

START_TEST(test_itch_truncated_packet_decodes_whole_messages_then_reports_gap)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_add(m, 1, 5, 'B', 1, "TRUNC", 1));
	pkt_add(&p, m, msg_add(m, 1, 6, 'B', 1, "TRUNC", 1));
	p.len -= 10;	/* the second message loses its tail */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	/* The next packet exposes the lost message as a gap. */
	send_delete(line_a, 3);
	ck_assert_uint_eq(counters(line_a)->gap_messages, 1);
}
END_TEST

START_TEST(test_itch_count_larger_than_payload_is_truncated)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_delete(m, 1, 5));
	wire_put_be16(p.b + 18, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
}
END_TEST

START_TEST(test_itch_garbage_payloads_never_crash)
{
	uint8_t b[1500];
	uint32_t x = 12345;
	int i, j;

	feed_subscribe(h.engine, "*", 1);
	for (i = 0; i < 20000; i++) {
		size_t len = (size_t)(x % sizeof(b));

		for (j = 0; j < (int)len; j++) {
			x = x * 1103515245u + 12345u;
			b[j] = (uint8_t)(x >> 16);
		}
		if (len >= 20) {
			memcpy(b, SESSION, 10); /* keep the session so decoding goes deep */
			b[18] = 0;
			b[19] = (uint8_t)(x & 31);
		}
		harness_payload(&h, line_a, b, len);
		h.n = 0;
	}
	ck_assert_uint_eq(counters(line_a)->packets, 20000);
}
END_TEST

START_TEST(test_itch_oversized_packet_is_decoded_to_the_end)
{
	static uint8_t b[65535];
	uint8_t m[64];
	size_t off = 20, n = 0, len = msg_delete(m, 1, 1);

	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "BIG");
	memcpy(b, SESSION, 10);
	wire_put_be64(b + 10, 2);
	while (off + 2 + len <= sizeof(b) && n < 3000) {
		wire_put_be16(b + off, len);
		memcpy(b + off + 2, m, len);
		off += 2 + len;
		n++;
	}
	wire_put_be16(b + 18, n);
	harness_payload(&h, line_a, b, off);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), n);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 0);
}
END_TEST

START_TEST(test_itch_frames_that_are_not_clean_udp_are_counted)
{
	uint8_t f[128] = { 0 };

	f[12] = 0x08;
	f[14] = 0x45;
	wire_put_be16(f + 16, 60);		/* ip total length */
	wire_put_be16(f + 20, 0x2000);	/* more fragments */
	f[23] = 17;
	wire_put_be32(f + 30, ipv4(233, 54, 12, 111));
	wire_put_be16(f + 36, 26477);
	ck_assert_int_eq(feed_process_frame(h.engine, f, 74, 0, &h.prod), line_a);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FRAME], 1);
	wire_put_be16(f + 36, 1234);	/* unmapped port: not ours, not counted */
	ck_assert_int_eq(feed_process_frame(h.engine, f, 74, 0, &h.prod), -1);
	ck_assert_int_eq(feed_process_frame(h.engine, f, 10, 0, &h.prod), -1);
}
END_TEST

/* ---- sequencing --------------------------------------------------------- */

START_TEST(test_itch_in_order_packets_make_no_gap)
{
	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "SEQ");
	send_delete(line_a, 2);
	send_delete(line_a, 3);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 2);
}
END_TEST

START_TEST(test_itch_gap_emits_gap_event_with_missing_range)
{
	const struct wb_event *gap;

	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "SEQ");
	send_delete(line_a, 5);
	gap = harness_find(&h, WB_EV_GAP, 0);
	ck_assert_ptr_nonnull(gap);
	ck_assert_uint_eq(gap->u.gap.first, 2);
	ck_assert_uint_eq(gap->u.gap.count, 3);
	ck_assert_uint_eq(counters(line_a)->gap_messages, 3);
	/* The packet after the gap is still decoded. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
}
END_TEST

START_TEST(test_itch_ab_copies_are_deduplicated)
{
	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "AB");
	send_directory(line_b, 1, 1, "AB");
	send_delete(line_b, 2);
	send_delete(line_a, 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
	ck_assert_uint_eq(counters(line_a)->duplicates + counters(line_b)->duplicates, 2);
	ck_assert_uint_eq(counters(line_a)->gaps + counters(line_b)->gaps, 0);
}
END_TEST

START_TEST(test_itch_overlapping_packet_skips_seen_messages)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "OVL");
	send_delete(line_a, 2);
	pkt_start(&p, SESSION, 2);	/* 2 seen already, 3 and 4 new */
	pkt_add(&p, m, msg_delete(m, 1, 2));
	pkt_add(&p, m, msg_delete(m, 1, 3));
	pkt_add(&p, m, msg_delete(m, 1, 4));
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 3);
	ck_assert_uint_eq(counters(line_a)->duplicate_messages, 1);
	send_delete(line_a, 5);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
}
END_TEST

START_TEST(test_itch_heartbeat_reveals_tail_loss)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	send_directory(line_a, 1, 1, "HB");
	pkt_start(&p, SESSION, 2);	/* nothing lost yet */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
	pkt_start(&p, SESSION, 4);	/* 2 and 3 were sent and lost */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->heartbeats, 2);
	ck_assert_uint_eq(counters(line_a)->gaps, 1);
	ck_assert_uint_eq(counters(line_a)->gap_messages, 2);
}
END_TEST

START_TEST(test_itch_end_of_session_is_counted)
{
	struct pkt p;

	send_directory(line_a, 1, 1, "EOS");
	pkt_start(&p, SESSION, 2);
	wire_put_be16(p.b + 18, 0xffff);
	send_pkt(line_a, &p);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->end_of_session, 2);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 0);
}
END_TEST

START_TEST(test_itch_new_session_clears_books_and_directory)
{
	struct pkt p;
	uint8_t m[64];

	feed_subscribe(h.engine, "OLD", 3);
	send_directory(line_a, 1, 1, "OLD");
	h.n = 0;
	pkt_start(&p, "000010060A", 1);
	pkt_add(&p, m, msg_delete(m, 1, 9));	/* locate 1 means nothing yet */
	send_pkt(line_a, &p);
	ck_assert_ptr_nonnull(harness_find(&h, WB_EV_CLEAR, 0));
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_SYMBOL], 1);
}
END_TEST

/* ---- filtering ---------------------------------------------------------- */

START_TEST(test_itch_filter_subscribe_before_directory)
{
	feed_subscribe(h.engine, "AAPL", 4);
	send_directory(line_a, 1, 10, "AAPL");
	send_directory(line_a, 2, 11, "MSFT");
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 1);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_itch_filter_subscribe_after_directory_announces_symbol)
{
	struct pkt p;
	uint8_t m[64];
	const struct wb_event *sym;

	send_directory(line_a, 1, 11, "MSFT");
	ck_assert_uint_eq(h.n, 0);
	ck_assert_int_gt(feed_subscribe(h.engine, "MSFT", 4), 0);
	pkt_start(&p, SESSION, 2);
	pkt_add(&p, m, msg_delete(m, 11, 77));
	send_pkt(line_a, &p);
	sym = harness_find(&h, WB_EV_SYMBOL, 0);
	ck_assert_ptr_nonnull(sym);
	ck_assert_mem_eq(sym->u.symbol.ticker, "MSFT    ", 8);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
	ck_assert_uint_eq(harness_find(&h, WB_EV_DELETE, 0)->instrument, sym->instrument);
}
END_TEST

START_TEST(test_itch_filter_unsubscribe_stops_events)
{
	feed_subscribe(h.engine, "AAPL", 4);
	send_directory(line_a, 1, 1, "AAPL");
	send_delete(line_a, 2);
	ck_assert_int_eq(feed_unsubscribe(h.engine, "AAPL", 4), 0);
	send_delete(line_a, 3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
	ck_assert_int_eq(feed_unsubscribe(h.engine, "AAPL", 4), -FEED_ENOENT);
}
END_TEST

START_TEST(test_itch_instrument_ids_are_stable_across_resubscribe)
{
	int a = feed_subscribe(h.engine, "AAPL", 4);

	ck_assert_int_gt(a, 0);
	feed_unsubscribe(h.engine, "AAPL", 4);
	ck_assert_int_eq(feed_subscribe(h.engine, "AAPL", 4), a);
	ck_assert_int_eq(feed_subscribe(h.engine, "", 0), -FEED_EINVAL);
	ck_assert_int_eq(feed_subscribe(h.engine, "TOOLONGXX", 9), -FEED_EINVAL);
	ck_assert_int_eq(feed_subscribe(h.engine, "A B", 3), -FEED_EINVAL);
}
END_TEST

START_TEST(test_itch_ring_overflow_drops_and_counts)
{
	struct harness small;
	struct pkt p;
	uint8_t m[64];
	int line, i;

	harness_init(&small, 4);
	line = feed_map_add(small.engine, ipv4(233, 54, 12, 111), 26477, FEED_PROTO_ITCH50,
			    WB_VENUE_NASDAQ, "A");
	feed_subscribe(small.engine, "*", 1);
	pkt_start(&p, SESSION, 1);
	for (i = 0; i < 10; i++)
		pkt_add(&p, m, msg_add(m, 1, (uint64_t)i + 1, 'B', 1, "OVF", 1));
	feed_process_payload(small.engine, line, p.b, (uint32_t)p.len, 0, &small.prod);
	wb_ring_producer_publish(&small.prod);
	/* SYMBOL + 10 ADDs offered to 4 slots. */
	ck_assert_uint_eq(small.engine->lines[line].counters.ring_drops, 7);
	ck_assert_uint_eq(small.engine->lines[line].counters.events, 4);
	ck_assert_uint_eq(wb_ring_consumer_dropped(&small.cons), 7);
	harness_free(&small);
}
END_TEST

/*
 * With the ring full mid-packet, only a message that makes an event counts
 * a drop: a bad side, an unsubscribed locate and an unknown type do not.
 * The room freed by the consumer before the next packet is used again.
 */
START_TEST(test_itch_ring_full_counts_only_events_lost)
{
	struct harness small;
	struct pkt p;
	uint8_t m[64];
	uint64_t n;
	int line;

	harness_init(&small, 4);
	line = feed_map_add(small.engine, ipv4(233, 54, 12, 111), 26477, FEED_PROTO_ITCH50,
			    WB_VENUE_NASDAQ, "A");
	feed_subscribe(small.engine, "OVF", 3);
	pkt_start(&p, SESSION, 1);
	pkt_add(&p, m, msg_directory(m, 1, "OVF", 100));
	pkt_add(&p, m, msg_directory(m, 2, "OTHER", 100));
	pkt_add(&p, m, msg_add(m, 1, 1, 'B', 1, "OVF", 1));
	pkt_add(&p, m, msg_add(m, 1, 2, 'B', 1, "OVF", 1));
	pkt_add(&p, m, msg_add(m, 1, 3, 'B', 1, "OVF", 1));
	/* The ring is full (SYMBOL + 3 ADDs) from here on. */
	pkt_add(&p, m, msg_add(m, 1, 4, 'X', 1, "OVF", 1));
	pkt_add(&p, m, msg_add(m, 2, 5, 'B', 1, "OTHER", 1));
	m[0] = '~';
	pkt_add(&p, m, 19);
	pkt_add(&p, m, msg_delete(m, 1, 1));
	pkt_add(&p, m, msg_add(m, 1, 6, 'S', 1, "OVF", 1));
	feed_process_payload(small.engine, line, p.b, (uint32_t)p.len, 0, &small.prod);
	ck_assert_uint_eq(small.engine->lines[line].counters.events, 4);
	ck_assert_uint_eq(small.engine->lines[line].counters.ring_drops, 2);
	ck_assert_uint_eq(small.engine->lines[line].counters.messages, 10);
	ck_assert_uint_eq(small.engine->lines[line].counters.filtered, 2);
	ck_assert_uint_eq(small.engine->lines[line].counters.errors[FEED_ERR_BAD_FIELD], 1);
	ck_assert_uint_eq(small.engine->lines[line].counters.errors[FEED_ERR_UNKNOWN_TYPE], 1);
	/* Two slots read: the next packet's first two events fit, its third is dropped. */
	wb_ring_producer_publish(&small.prod);
	n = wb_ring_consumer_available(&small.cons);
	ck_assert_uint_eq(n, 4);
	wb_ring_consumer_release(&small.cons, 2);
	pkt_start(&p, SESSION, 11);
	pkt_add(&p, m, msg_delete(m, 1, 2));
	pkt_add(&p, m, msg_delete(m, 1, 3));
	pkt_add(&p, m, msg_delete(m, 1, 6));
	feed_process_payload(small.engine, line, p.b, (uint32_t)p.len, 0, &small.prod);
	ck_assert_uint_eq(small.engine->lines[line].counters.events, 6);
	ck_assert_uint_eq(small.engine->lines[line].counters.ring_drops, 3);
	wb_ring_producer_publish(&small.prod);
	wb_ring_consumer_release(&small.cons, 2);
	ck_assert_uint_eq(wb_ring_consumer_available(&small.cons), 2);
	ck_assert_uint_eq(wb_ring_consumer_at(&small.cons, 0)->kind, WB_EV_DELETE);
	ck_assert_uint_eq(wb_ring_consumer_at(&small.cons, 0)->u.order.order_id, 2);
	ck_assert_uint_eq(wb_ring_consumer_at(&small.cons, 1)->u.order.order_id, 3);
	ck_assert_uint_eq(wb_ring_consumer_dropped(&small.cons), 3);
	harness_free(&small);
}
END_TEST

/* ---- feed map ------------------------------------------------------------ */

START_TEST(test_feed_map_parses_conf_lines)
{
	struct feed_map_entry m;
	int problem;
	const char *ok = "  233.54.12.111:26477  itch  NASDAQ A  # primary";
	const char *ch = "233.125.89.1:40001 xdp nyse A channel=7";

	ck_assert_int_eq(feed_map_parse_line(ok, strlen(ok), &m, &problem), 1);
	ck_assert_uint_eq(m.ip, ipv4(233, 54, 12, 111));
	ck_assert_uint_eq(m.port, 26477);
	ck_assert_int_eq(m.protocol, FEED_PROTO_ITCH50);
	ck_assert_int_eq(m.venue, WB_VENUE_NASDAQ);
	ck_assert_str_eq(m.name, "A");
	ck_assert_uint_eq(m.channel, 0);
	if (feed_protocol_parse("xdp", 3) > 0) {
		ck_assert_int_eq(feed_map_parse_line(ch, strlen(ch), &m, &problem), 1);
		ck_assert_uint_eq(m.channel, 7);
	}
	ck_assert_int_eq(feed_map_parse_line("# x", 3, &m, &problem), 0);
	ck_assert_int_eq(feed_map_parse_line("", 0, &m, &problem), 0);
#define BAD(s, why)                                                                  \
	do {                                                                         \
		ck_assert_int_lt(feed_map_parse_line(s, strlen(s), &m, &problem), 0); \
		ck_assert_int_eq(problem, why);                                      \
	} while (0)
	BAD("233.54.12.111 itch nasdaq A", FEED_MAP_BAD_ADDRESS);
	BAD("233.54.12.256:1 itch nasdaq A", FEED_MAP_BAD_ADDRESS);
	BAD("233.54.12.1:70000 itch nasdaq A", FEED_MAP_BAD_ADDRESS);
	BAD("233.54.12.1:1 fix nasdaq A", FEED_MAP_BAD_PROTOCOL);
	BAD("233.54.12.1:1 itch nyce A", FEED_MAP_BAD_VENUE);
	BAD("233.54.12.1:1 itch nyse A", FEED_MAP_VENUE_NOT_SERVED);
	BAD("233.54.12.1:1 pitch nasdaq A", FEED_MAP_VENUE_NOT_SERVED);
	BAD("233.54.12.1:1 itch nasdaq", FEED_MAP_FEW_COLUMNS);
	BAD("233.54.12.1:1 itch nasdaq A extra", FEED_MAP_BAD_OPTION);
	BAD("233.54.12.1:1 itch nasdaq A channel=0", FEED_MAP_BAD_OPTION);
	BAD("233.54.12.1:1 itch nasdaq A channel=65536", FEED_MAP_BAD_OPTION);
	BAD("233.54.12.1:1 itch nasdaq LONGNAME1", FEED_MAP_BAD_LINE_NAME);
#undef BAD
}
END_TEST

START_TEST(test_feed_map_refuses_a_venue_its_protocol_cannot_serve)
{
	char venues[128];

	ck_assert_int_eq(feed_map_add(h.engine, ipv4(1, 2, 3, 4), 5, FEED_PROTO_ITCH50,
				      WB_VENUE_NYSE, "A"), -FEED_EVENUE);
	feed_protocol_venue_list(FEED_PROTO_ITCH50, venues, sizeof(venues));
	ck_assert_str_eq(venues, "nasdaq, bx, psx");
	feed_protocol_venue_list(FEED_PROTO_PITCH, venues, sizeof(venues));
	ck_assert_str_eq(venues, "bzx, byx, edgx, edga");
}
END_TEST

START_TEST(test_feed_map_rejects_duplicates_and_protocol_clash)
{
	ck_assert_int_eq(feed_map_add(h.engine, ipv4(233, 54, 12, 111), 26477, FEED_PROTO_ITCH50,
				      WB_VENUE_NASDAQ, "C"), -FEED_EEXIST);
	ck_assert_int_eq(feed_map_add(h.engine, ipv4(1, 2, 3, 4), 5, FEED_PROTO_ITCH50,
				      WB_VENUE_BX, "C"), 2);
	ck_assert_int_eq(feed_map_remove(h.engine, ipv4(1, 2, 3, 4), 5), 0);
	ck_assert_int_eq(feed_map_add(h.engine, 0, 5, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "C"),
			 -FEED_EINVAL);
	ck_assert_int_eq(feed_map_remove(h.engine, ipv4(233, 54, 12, 111), 26477), 0);
	ck_assert_int_eq(feed_map_lookup(h.engine, ipv4(233, 54, 12, 111), 26477), -1);
	ck_assert_int_eq(feed_map_remove(h.engine, ipv4(233, 54, 12, 111), 26477), -FEED_ENOENT);
}
END_TEST

static Suite *itch_suite(void)
{
	Suite *s = suite_create("itch50");
	TCase *tc = tcase_create("itch50");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_itch_capture_add_order_decodes_spec_values);
	tcase_add_test(tc, test_itch_capture_order_executed);
	tcase_add_test(tc, test_itch_capture_order_delete_and_replace);
	tcase_add_test(tc, test_itch_capture_trading_action_is_status);
	tcase_add_test(tc, test_itch_capture_reference_messages_are_ignored);
	tcase_add_test(tc, test_itch_capture_multiple_packets);
	tcase_add_loop_test(tc, test_itch_every_message_type_decodes_per_spec, 0,
			    (int)(sizeof(golden_types) / sizeof(golden_types[0])));
	tcase_add_test(tc, test_itch_message_shorter_than_its_type_is_counted);
	tcase_add_test(tc, test_itch_longer_message_reads_known_prefix);
	tcase_add_test(tc, test_itch_unknown_type_is_skipped_by_length);
	tcase_add_test(tc, test_itch_bad_side_is_a_field_error);
	tcase_add_test(tc, test_itch_packet_shorter_than_header_is_truncated);
	tcase_add_test(tc, test_itch_truncated_packet_decodes_whole_messages_then_reports_gap);
	tcase_add_test(tc, test_itch_count_larger_than_payload_is_truncated);
	tcase_add_test(tc, test_itch_garbage_payloads_never_crash);
	tcase_add_test(tc, test_itch_oversized_packet_is_decoded_to_the_end);
	tcase_add_test(tc, test_itch_frames_that_are_not_clean_udp_are_counted);
	tcase_add_test(tc, test_itch_in_order_packets_make_no_gap);
	tcase_add_test(tc, test_itch_gap_emits_gap_event_with_missing_range);
	tcase_add_test(tc, test_itch_ab_copies_are_deduplicated);
	tcase_add_test(tc, test_itch_overlapping_packet_skips_seen_messages);
	tcase_add_test(tc, test_itch_heartbeat_reveals_tail_loss);
	tcase_add_test(tc, test_itch_end_of_session_is_counted);
	tcase_add_test(tc, test_itch_new_session_clears_books_and_directory);
	tcase_add_test(tc, test_itch_filter_subscribe_before_directory);
	tcase_add_test(tc, test_itch_filter_subscribe_after_directory_announces_symbol);
	tcase_add_test(tc, test_itch_filter_unsubscribe_stops_events);
	tcase_add_test(tc, test_itch_instrument_ids_are_stable_across_resubscribe);
	tcase_add_test(tc, test_itch_ring_overflow_drops_and_counts);
	tcase_add_test(tc, test_itch_ring_full_counts_only_events_lost);
	tcase_add_test(tc, test_feed_map_parses_conf_lines);
	tcase_add_test(tc, test_feed_map_refuses_a_venue_its_protocol_cannot_serve);
	tcase_add_test(tc, test_feed_map_rejects_duplicates_and_protocol_clash);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(itch_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
