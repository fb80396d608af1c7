/*
 * NYSE Integrated Feed (XDP/Pillar) decoder: every real capture in
 * pcaps/xdp decoded field by field against values derived by hand from
 * its bytes, one golden message per type written from the spec
 * (docs/specs/nyse-xdp-notes.md, cited as "notes:"), the book rules through venue books, channels
 * as sequence streams, time, filtering, malformed input, and a generated
 * day of NYSE and Arca checked against the flow that made it.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_harness.h"
#include "wire/xdp.h"
#include "book/venue_book.h"
#include "common/event_text.h"
#include "gen/gen_flow.h"
#include "gen/gen_pitch.h"
#include "gen/gen_proto.h"
#include "gen/gen_xdp.h"
#include "common/raw_text.h"

#define PCAP_DIR "pcaps/xdp/"

/* 2026-02-19 09:30:00 US/Eastern (EST) in epoch seconds: the synthetic packets' second. */
#define SEC_0930 1771511400u
#define TS(sec, ns) ((uint64_t)(sec) * 1000000000ull + (ns))
#define DOLLARS(d) ((int64_t)(d) * WB_PRICE_SCALE)

static struct harness h;
static int line_a, line_b, line_c;	/* channel 1 A and B, channel 2 A (the captures' groups) */

static void add_line(int *line, int a, int b, int c, int d, uint16_t port, const char *name,
		     uint16_t channel)
{
	struct feed_map_entry m = { .ip = ipv4(a, b, c, d), .port = port, .channel = channel,
				    .protocol = FEED_PROTO_XDP, .venue = WB_VENUE_NYSE };

	strcpy(m.name, name);
	*line = feed_map_add_entry(h.engine, &m);
	ck_assert_int_ge(*line, 0);
}

static void setup(void)
{
	harness_init(&h, HARNESS_RING_SLOTS);
	add_line(&line_a, 233, 125, 89, 24, 11064, "A", 1);
	add_line(&line_b, 233, 125, 89, 152, 11064, "B", 1);
	add_line(&line_c, 233, 125, 89, 36, 11106, "A", 2);
}

static void teardown(void)
{
	harness_free(&h);
}

static const struct feed_counters *counters(int line)
{
	return &h.engine->lines[line].counters;
}

static uint64_t total_errors(int line)
{
	uint64_t n = 0;

	for (int k = 0; k < FEED_ERR_COUNT; k++)
		n += counters(line)->errors[k];
	return n;
}

static const struct wb_event *last(void)
{
	ck_assert_uint_gt(h.n, 0);
	return &h.events[h.n - 1];
}

/* ---- packet builder: the spec's layouts by lib/wire's names (golden bytes check them) ---- */

struct pkt {
	uint8_t b[1500];
	uint32_t len;
};

static void pkt_begin(struct pkt *p, uint32_t seq, uint8_t flag)
{
	memset(p, 0, sizeof(*p));
	p->len = XDP_HEADER_LEN;
	wire_put_le16(p->b + XDP_PKT_SIZE, XDP_HEADER_LEN);
	p->b[XDP_PKT_DELIVERY_FLAG] = flag;
	wire_put_le32(p->b + XDP_PKT_SEQ_NUM, seq);
	wire_put_le32(p->b + XDP_PKT_SEND_TIME, SEC_0930);
}

static uint8_t *pkt_msg(struct pkt *p, uint16_t type, uint16_t len)
{
	uint8_t *m = p->b + p->len;

	wire_put_le16(m + XDP_MSG_SIZE, len);
	wire_put_le16(m + XDP_MSG_TYPE, type);
	p->len += len;
	p->b[XDP_PKT_NUMBER_MSGS]++;
	wire_put_le16(p->b + XDP_PKT_SIZE, p->len);
	return m;
}

static void send_pkt(int line, const struct pkt *p)
{
	harness_payload(&h, line, p->b, p->len);
}

/* The common prefix: SourceTimeNS, SymbolIndex, SymbolSeqNum. */
static uint8_t *order_msg(struct pkt *p, uint16_t type, uint16_t len, uint32_t ns, uint32_t index)
{
	uint8_t *m = pkt_msg(p, type, len);

	wire_put_le32(m + XDP_SOURCE_TIME_NS, ns);
	wire_put_le32(m + XDP_SYMBOL_INDEX, index);
	wire_put_le32(m + XDP_SYMBOL_SEQ_NUM, 1);
	return m;
}

/* SourceTime, SourceTimeNS, SymbolIndex. */
static uint8_t *timed_msg(struct pkt *p, uint16_t type, uint16_t len, uint32_t sec, uint32_t ns,
			  uint32_t index)
{
	uint8_t *m = pkt_msg(p, type, len);

	wire_put_le32(m + XDP_TIMED_SOURCE_TIME, sec);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME_NS, ns);
	wire_put_le32(m + XDP_TIMED_SYMBOL_INDEX, index);
	return m;
}

static void msg_mapping(struct pkt *p, uint32_t index, const char *symbol, uint8_t scale,
			uint8_t system_id)
{
	uint8_t *m = pkt_msg(p, XDP_SYMBOL_MAPPING, XDP_SYMBOL_MAPPING_LEN);

	wire_put_le32(m + XDP_MAPPING_INDEX, index);
	memcpy(m + XDP_MAPPING_SYMBOL, symbol, strlen(symbol));	/* NUL padded */
	wire_put_le16(m + XDP_MAPPING_MARKET_ID, 1);			/* NYSE */
	m[XDP_MAPPING_SYSTEM_ID] = system_id;
	m[XDP_MAPPING_EXCHANGE] = 'N';
	m[XDP_MAPPING_SCALE] = scale;
	m[XDP_MAPPING_SECURITY_TYPE] = 'C';
	wire_put_le16(m + XDP_MAPPING_LOT_SIZE, 100);
	m[XDP_MAPPING_ROUND_LOT] = 'Y';
	wire_put_le16(m + XDP_MAPPING_MPV, 100);
	wire_put_le16(m + XDP_MAPPING_UNIT_OF_TRADE, 100);
}

static void msg_time_reference(struct pkt *p, uint32_t id, uint32_t sec)
{
	uint8_t *m = pkt_msg(p, XDP_TIME_REFERENCE, XDP_TIME_REFERENCE_LEN);

	wire_put_le32(m + XDP_TIME_REFERENCE_ID, id);
	wire_put_le32(m + XDP_TIME_REFERENCE_TIME, sec);
}

static void msg_add(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order, int32_t price,
		    uint32_t volume, char side, const char *firm)
{
	uint8_t *m = order_msg(p, XDP_ADD_ORDER, XDP_ADD_ORDER_LEN, ns, index);

	wire_put_le64(m + XDP_ORDER_ID, order);
	wire_put_le32(m + XDP_ADD_PRICE, (uint32_t)price);
	wire_put_le32(m + XDP_ADD_VOLUME, volume);
	m[XDP_ADD_SIDE] = (uint8_t)side;
	put_text(m + XDP_ADD_FIRM, firm, XDP_FIRM_LEN);
}

static void msg_modify(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order, int32_t price,
		       uint32_t volume, char side)
{
	uint8_t *m = order_msg(p, XDP_MODIFY_ORDER, XDP_MODIFY_ORDER_LEN, ns, index);

	wire_put_le64(m + XDP_ORDER_ID, order);
	wire_put_le32(m + XDP_MODIFY_PRICE, (uint32_t)price);
	wire_put_le32(m + XDP_MODIFY_VOLUME, volume);
	m[XDP_MODIFY_SIDE] = (uint8_t)side;
}

static void msg_delete(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order)
{
	uint8_t *m = order_msg(p, XDP_DELETE_ORDER, XDP_DELETE_ORDER_LEN, ns, index);

	wire_put_le64(m + XDP_ORDER_ID, order);
}

static void msg_execution(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order,
			  uint32_t trade, int32_t price, uint32_t volume, uint8_t printable)
{
	uint8_t *m = order_msg(p, XDP_ORDER_EXECUTION, XDP_ORDER_EXECUTION_LEN, ns, index);

	wire_put_le64(m + XDP_ORDER_ID, order);
	wire_put_le32(m + XDP_EXECUTION_TRADE_ID, trade);
	wire_put_le32(m + XDP_EXECUTION_PRICE, (uint32_t)price);
	wire_put_le32(m + XDP_EXECUTION_VOLUME, volume);
	m[XDP_EXECUTION_PRINTABLE] = printable;
	memcpy(m + XDP_EXECUTION_CONDITIONS, "@   ", XDP_CONDITIONS_LEN);
}

static void msg_replace(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order,
			uint64_t new_order, int32_t price, uint32_t volume, char side)
{
	uint8_t *m = order_msg(p, XDP_REPLACE_ORDER, XDP_REPLACE_ORDER_LEN, ns, index);

	wire_put_le64(m + XDP_ORDER_ID, order);
	wire_put_le64(m + XDP_REPLACE_NEW_ORDER_ID, new_order);
	wire_put_le32(m + XDP_REPLACE_PRICE, (uint32_t)price);
	wire_put_le32(m + XDP_REPLACE_VOLUME, volume);
	m[XDP_REPLACE_SIDE] = (uint8_t)side;
}

static void msg_status(struct pkt *p, uint32_t ns, uint32_t index, char code, char halt,
		       char market)
{
	uint8_t *m = timed_msg(p, XDP_SECURITY_STATUS, XDP_SECURITY_STATUS_LEN, SEC_0930, ns, index);

	m[XDP_STATUS_STATUS] = (uint8_t)code;
	m[XDP_STATUS_HALT_CONDITION] = (uint8_t)halt;
	m[XDP_STATUS_SSR_EXCHANGE] = ' ';
	m[XDP_STATUS_SSR_STATE] = '~';
	m[XDP_STATUS_MARKET_STATE] = (uint8_t)market;
}

static void msg_clear(struct pkt *p, uint32_t ns, uint32_t index)
{
	timed_msg(p, XDP_SYMBOL_CLEAR, XDP_SYMBOL_CLEAR_LEN, SEC_0930, ns, index);
}

static void msg_add_refresh(struct pkt *p, uint32_t ns, uint32_t index, uint64_t order,
			    int32_t price, uint32_t volume, char side)
{
	uint8_t *m = timed_msg(p, XDP_ADD_ORDER_REFRESH, XDP_ADD_ORDER_REFRESH_LEN, SEC_0930, ns,
			       index);

	wire_put_le64(m + XDP_REFRESH_ORDER_ID, order);
	wire_put_le32(m + XDP_REFRESH_PRICE, (uint32_t)price);
	wire_put_le32(m + XDP_REFRESH_VOLUME, volume);
	m[XDP_REFRESH_SIDE] = (uint8_t)side;
	put_text(m + XDP_REFRESH_FIRM, "", XDP_FIRM_LEN);
}

/* A Sequence Number Reset in its own packet at SeqNum 1 (notes: Control messages, type 1). */
static void send_reset(int line, uint32_t sec, uint32_t ns)
{
	struct pkt p;
	uint8_t *m;

	pkt_begin(&p, 1, XDP_DELIVERY_SEQUENCE_RESET);
	m = pkt_msg(&p, XDP_SEQUENCE_RESET, XDP_SEQUENCE_RESET_LEN);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME, sec);
	wire_put_le32(m + XDP_TIMED_SOURCE_TIME_NS, ns);
	m[XDP_RESET_PRODUCT_ID] = 11;	/* NYSE Integrated */
	m[XDP_RESET_CHANNEL_ID] = 1;
	send_pkt(line, &p);
}

/*
 * The start of a channel as the tests use it: reset (seq 1), then the
 * mapping of index 42 ZVZZT at scale 4 and a time reference for 09:30:00
 * (seq 2, 3). The next sequence is 4.
 */
#define ZVZZT 42
static void open_channel(int line)
{
	struct pkt p;

	send_reset(line, SEC_0930, 7);
	pkt_begin(&p, 2, 11);
	msg_mapping(&p, ZVZZT, "ZVZZT", 4, 1);
	msg_time_reference(&p, 1, SEC_0930);
	send_pkt(line, &p);
}

/* A mapping and a time reference right before seq (at seq - 2, seq - 1): no gap before it. */
static void prime(int line, uint32_t seq, uint32_t index, const char *symbol, uint8_t scale,
		  uint32_t ref_id, uint32_t ref_sec)
{
	struct pkt p;

	pkt_begin(&p, seq - 2, 11);
	msg_mapping(&p, index, symbol, scale, (uint8_t)ref_id);
	msg_time_reference(&p, ref_id, ref_sec);
	send_pkt(line, &p);
}

static const char *event_text(const struct wb_event *ev)
{
	static char text[WB_EVENT_TEXT_MAX];

	wb_event_format(ev, text, sizeof(text));
	return text;
}

/* The raw line of the one message of a capture's first packet. */
static const char *raw_line_of_capture(const char *path, char *out, size_t n)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *data;
	pcap_t *pc = pcap_open_offline(path, err);
	struct feed_frame f;
	const uint8_t *m;
	uint32_t off, mlen;

	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(pcap_next_ex(pc, &hdr, &data), 1);
	ck_assert_int_eq(feed_raw_frame(FEED_PROTO_XDP, data + 42, hdr->caplen - 42, &f), 0);
	off = f.offset;
	ck_assert_int_eq(feed_raw_next(FEED_PROTO_XDP, data + 42, hdr->caplen - 42, &off, &m, &mlen), 0);
	raw_message_format(FEED_PROTO_XDP, m, mlen, f.seq, out, n);
	pcap_close(pc);
	return out;
}

/* ---- real captures (pcaps/xdp), values derived by hand from their bytes ---- */

/*
 * SequenceResetMessage.pcap: 1e00 0c 01 01000000 a756ce59 a1b43805 |
 * 0e00 0100 81a1ca59 82c0ed0b 0b 01 -> PktSize 30, DeliveryFlag 12, one
 * message, SeqNum 1, SendTime 1506694823 s; Sequence Number Reset,
 * SourceTime 0x59caa181 = 1506451841 s, SourceTimeNS 0x0bedc082 =
 * 200130690, ProductID 11 (NYSE Integrated), ChannelID 1.
 * SymbolIndexMappingMessage.pcap is SeqNum 2 of the same group (the spec's worked example):
 * index 1169 ABG, MarketID 1, SystemID 7, listing 'N', scale 4, lot 100,
 * PrevClose 508500 ($50.85).
 */
START_TEST(test_xdp_capture_reset_and_mapping_open_channel_one)
{
	struct feed_frame f;
	const struct wb_event *sym;
	struct pkt p;
	uint8_t raw[64];
	int id;

	id = feed_subscribe(h.engine, "ABG", 3);
	ck_assert_int_gt(id, 0);
	/* The reset's frame: a restart at 1 whose token is its SourceTime. */
	ck_assert_uint_eq(harness_unhex("1e000c0101000000a756ce59a1b43805 0e00010081a1ca5982c0ed0b0b01",
					raw, sizeof(raw)), 30);
	ck_assert_int_eq(feed_raw_frame(FEED_PROTO_XDP, raw, 30, &f), 0);
	ck_assert_int_eq(f.kind, FEED_FRAME_RESET);
	ck_assert_uint_eq(f.seq, 1);
	ck_assert_uint_eq(f.count, 1);
	ck_assert_uint_eq(f.length, 30);
	ck_assert_uint_eq(f.reset_token & 0x7fffffffffffffffull,
			  (uint64_t)1506451841 << 32 | 200130690);

	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "SequenceResetMessage.pcap"), 1);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "SymbolIndexMappingMessage.pcap"), 1);
	ck_assert_ptr_null(harness_find(&h, WB_EV_GAP, 0));
	sym = harness_find(&h, WB_EV_SYMBOL, 0);
	ck_assert_ptr_nonnull(sym);
	ck_assert_uint_eq(sym->seq, 2);
	ck_assert_int_eq(sym->instrument, id);
	ck_assert_int_eq(sym->venue, WB_VENUE_NYSE);
	ck_assert_int_eq(memcmp(sym->u.symbol.ticker, "ABG     ", 8), 0);
	ck_assert_uint_eq(sym->u.symbol.feed_key, 1169);
	ck_assert_uint_eq(sym->u.symbol.round_lot, 100);
	ck_assert_int_eq(sym->u.symbol.listing_market, 'N');
	ck_assert_uint_eq(counters(line_a)->messages, 2);
	ck_assert_uint_eq(total_errors(line_a), 0);

	/* Scale 4 from the mapping: PrevClose's 508500 is $50.85 on an order too. */
	pkt_begin(&p, 3, 11);
	msg_add(&p, 5, 1169, 77, 508500, 100, 'S', "");
	send_pkt(line_a, &p);
	ck_assert_int_eq(last()->kind, WB_EV_ADD);
	ck_assert_int_eq(last()->u.order.price, 5085 * (WB_PRICE_SCALE / 100));
}
END_TEST

/*
 * SourceTimeReferenceMessage.pcap: 2000 0b 01 d8070000 ... | 1000 0200
 * 07000000 00000000 baa1a659 -> SeqNum 2008; Source Time Reference ID 7,
 * SymbolSeqNum 0, SourceTime 0x59a6a1ba = 1504092602 s (a month before
 * the packet's SendTime: the OMI captures are not of one day). The next
 * message of the channel is dated by it.
 */
START_TEST(test_xdp_capture_time_reference_dates_the_next_message)
{
	const struct wb_event *gap, *add;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	harness_pcap(&h, PCAP_DIR "SequenceResetMessage.pcap");
	harness_pcap(&h, PCAP_DIR "SymbolIndexMappingMessage.pcap");
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "SourceTimeReferenceMessage.pcap"), 1);
	gap = harness_find(&h, WB_EV_GAP, 0);
	ck_assert_ptr_nonnull(gap);
	ck_assert_uint_eq(gap->u.gap.first, 3);
	ck_assert_uint_eq(gap->u.gap.count, 2005);
	ck_assert_uint_eq(gap->u.gap.channel, 1);
	pkt_begin(&p, 2009, 11);
	msg_add(&p, 123456789, 1169, 1, 500000, 100, 'B', "");
	send_pkt(line_a, &p);
	add = harness_find(&h, WB_EV_ADD, 0);
	ck_assert_ptr_nonnull(add);
	ck_assert_uint_eq(add->exch_ts, TS(1504092602u, 123456789u));
}
END_TEST

/*
 * AddOrderMessage.pcap (spec 7): SeqNum 0x12f77e = 1243006; Add Order,
 * SourceTimeNS 0x2b4d9240 = 726504000, SymbolIndex 0x9cf = 2511,
 * SymbolSeqNum 6683, OrderID 0x15390b = 1390859, Price 0x774fc = 488700,
 * Volume 61, Side 'B', FirmID blank. Index 2511's mapping is not in the
 * capture: scale 4 makes $48.87. Its packet SendTime 0x59ce579f dates a
 * reference just before it.
 */
START_TEST(test_xdp_capture_add_order_decodes_every_field)
{
	const struct wb_event *add;
	int id;

	id = feed_subscribe(h.engine, "XAO", 3);
	prime(line_a, 1243006, 2511, "XAO", 4, 7, 0x59ce579f);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "AddOrderMessage.pcap"), 1);
	add = last();
	ck_assert_int_eq(add->kind, WB_EV_ADD);
	ck_assert_uint_eq(add->seq, 1243006);
	ck_assert_int_eq(add->instrument, id);
	ck_assert_uint_eq(add->exch_ts, TS(0x59ce579fu, 726504000u));
	ck_assert_uint_eq(add->u.order.order_id, 1390859);
	ck_assert_int_eq(add->u.order.price, 4887 * (WB_PRICE_SCALE / 100));
	ck_assert_uint_eq(add->u.order.qty, 61);
	ck_assert_int_eq(add->side, WB_SIDE_BUY);
	ck_assert_int_eq(memcmp(add->u.order.mpid, "\0\0\0\0", 4), 0);
	ck_assert_uint_eq(add->u.order.ref, 0);
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

/*
 * OrderExecutionMessage.pcap: SeqNum 0x24f89a = 2422938; Order Execution
 * (42 bytes), SourceTimeNS 0x3b8ee320 = 999220000, SymbolIndex 0xa91 =
 * 2705, SymbolSeqNum 0x211e7 = 135655, OrderID 0x267d87 = 2522503, TradeID
 * 0x17893 = 96403, Price 0x1edc0 = 126400, Volume 100, PrintableFlag 1,
 * and in bytes 38-41 the XDP 2.1 DBExecID 0xaa8 = 2728 (spec 6), which
 * the decoder must not read as trade conditions.
 */
START_TEST(test_xdp_capture_order_execution_of_xdp_2_1)
{
	const struct wb_event *ex;
	char raw[512];

	feed_subscribe(h.engine, "*", 1);
	prime(line_a, 2422938, 2705, "XOE", 4, 7, 0x59ce588b);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "OrderExecutionMessage.pcap"), 1);
	ex = last();
	ck_assert_int_eq(ex->kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_uint_eq(ex->seq, 2422938);
	ck_assert_uint_eq(ex->exch_ts, TS(0x59ce588bu, 999220000u));
	ck_assert_uint_eq(ex->u.order.order_id, 2522503);
	ck_assert_uint_eq(ex->u.order.ref, 96403);
	ck_assert_int_eq(ex->u.order.price, 1264 * (WB_PRICE_SCALE / 100));
	ck_assert_uint_eq(ex->u.order.qty, 100);
	ck_assert_int_eq(ex->flags, WB_EVF_PRINTABLE);
	ck_assert_int_eq(ex->side, WB_SIDE_NONE);
	raw_line_of_capture(PCAP_DIR "OrderExecutionMessage.pcap", raw, sizeof(raw));
	ck_assert_str_eq(raw, "2422938 103 ns=999220000 index=2705 symbol_seq=135655 order=2522503 "
			 "trade=96403 price=126400 volume=100 printable=1 parity_splits=0 "
			 "db_exec_id=2728");
}
END_TEST

/*
 * ReplaceOrderMessage.pcap: SeqNum 0x24f805 = 2422789; Replace Order,
 * SourceTimeNS 0x1a7fc0a0 = 444580000, SymbolIndex 0x1e6a = 7786,
 * SymbolSeqNum 0x97a4 = 38820, OrderID 0x2763aa = 2581418, NewOrderID
 * 0x276403 = 2581507, Price 0x382d4 = 230100, Volume 100, and bytes 40-41
 * 0, 0: XDP 2.1 parity splits where Pillar has the Side. The book takes
 * the side from the old order, so the event carries none.
 */
START_TEST(test_xdp_capture_replace_order_of_xdp_2_1)
{
	const struct wb_event *rep;
	char raw[512];

	feed_subscribe(h.engine, "*", 1);
	prime(line_a, 2422789, 7786, "XRO", 4, 7, 0x59ce588b);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "ReplaceOrderMessage.pcap"), 1);
	rep = last();
	ck_assert_int_eq(rep->kind, WB_EV_REPLACE);
	ck_assert_uint_eq(rep->seq, 2422789);
	ck_assert_uint_eq(rep->exch_ts, TS(0x59ce588bu, 444580000u));
	ck_assert_uint_eq(rep->u.order.order_id, 2581418);
	ck_assert_uint_eq(rep->u.order.ref, 2581507);
	ck_assert_int_eq(rep->u.order.price, 2301 * (WB_PRICE_SCALE / 100));
	ck_assert_uint_eq(rep->u.order.qty, 100);
	ck_assert_int_eq(rep->side, WB_SIDE_NONE);
	raw_line_of_capture(PCAP_DIR "ReplaceOrderMessage.pcap", raw, sizeof(raw));
	ck_assert_str_eq(raw, "2422789 104 ns=444580000 index=7786 symbol_seq=38820 order=2581418 "
			 "new_order=2581507 price=230100 volume=100 prev_parity_splits=0 "
			 "new_parity_splits=0");
}
END_TEST

/*
 * ImbalanceMessage.pcap: SeqNum 0x3a5e3d = 3825213; Imbalance of the XDP
 * 2.1 length, 67 bytes: SourceTime 0x59a71940 = 1504123200 (16:00:00 ET),
 * SourceTimeNS 0x042b6200 = 69952000, SymbolIndex 0x56b = 1387,
 * SymbolSeqNum 0x364e = 13902, ReferencePrice 0x3dbe4 = 252900, PairedQty
 * 0x3cf0 = 15600, TotalImbalanceQty 500, MarketImbalanceQty 0, AuctionTime
 * 0x640 = 1600, AuctionType 'C', ImbalanceSide 'B', ContinuousBook-
 * ClearingPrice 252900, the rest 0. No book change: no event.
 */
START_TEST(test_xdp_capture_imbalance_of_xdp_2_1_is_raw_only)
{
	char raw[512];

	feed_subscribe(h.engine, "*", 1);
	prime(line_a, 3825213, 1387, "XIM", 4, 7, 1504123200);
	h.n = 0;
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "ImbalanceMessage.pcap"), 1);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->ignored, 2);	/* the reference and the imbalance */
	ck_assert_uint_eq(total_errors(line_a), 0);
	raw_line_of_capture(PCAP_DIR "ImbalanceMessage.pcap", raw, sizeof(raw));
	ck_assert_str_eq(raw, "3825213 105 time=16:00:00.000000000 ns=69952000 index=1387 "
			 "symbol_seq=13902 reference=252900 paired=15600 imbalance=500 "
			 "market_imbalance=0 auction_hhmm=1600 auction=C side=B book_clearing=252900 "
			 "auction_clearing=0 ssr_filing=0 indicative_match=0 upper_collar=0 "
			 "lower_collar=0 auction_status=0 freeze=0 extensions=0");
}
END_TEST

/*
 * SecurityStatusMessage.pcap, another channel (233.125.89.36:11106):
 * SeqNum 0xf2 = 242; Security Status, SourceTime 0x59b0d319 = 1504760601,
 * SourceTimeNS 0x02515a70 = 38886000, SymbolIndex 0xa8f6 = 43254,
 * SymbolSeqNum 1, Status 'P' (pre-open), Halt Condition ' ', SSRState '~',
 * MarketState 'P'.
 */
START_TEST(test_xdp_capture_security_status_pre_open_on_channel_two)
{
	const struct wb_event *st;
	int id;

	id = feed_subscribe(h.engine, "XSS", 3);
	prime(line_c, 242, 43254, "XSS", 4, 1, 1504760601);
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "SecurityStatusMessage.pcap"), 1);
	st = last();
	ck_assert_int_eq(st->kind, WB_EV_STATUS);
	ck_assert_int_eq(st->instrument, id);
	ck_assert_uint_eq(st->seq, 242);
	ck_assert_uint_eq(st->line, line_c);
	ck_assert_uint_eq(st->exch_ts, TS(1504760601u, 38886000u));
	ck_assert_int_eq(st->u.status.state, WB_STATE_PRE_OPEN);
	ck_assert_int_eq(st->u.status.raw_state, 'P');
	/* Channel 1 saw nothing of it. */
	ck_assert_uint_eq(counters(line_a)->packets, 0);
}
END_TEST

/* ---- golden bytes: every message type written from the spec's offsets ---- */

/*
 * After a setup on channel 1: the reset (seq 1), ZVZZT's mapping at
 * index 42 scale 4 and a reference for 09:30:00 (seq 2, 3), and an Add of
 * order 171, B 100 ZVZZT at $20.00 (seq 4). The message under test is
 * seq 5, 2,000 ns into the second.
 */
static const struct {
	const char *name;
	const char *message;
	const char *event;		/* the last event, or NULL: none */
} golden[] = {
	{ "100 Add Order",
	  "2700 6400 d0070000 2a000000 02000000 ac00000000000000 a0860100 e8030000 53 4753434f20 00",
	  "5 09:30:00.000002000 nyse/0 i=1 ADD ref=172 S 1000 @ 10.00 mpid=GSCO" },
	{ "101 Modify Order, same price",
	  "2300 6500 d0070000 2a000000 02000000 ab00000000000000 400d0300 5a000000 00 42 00",
	  "5 09:30:00.000002000 nyse/0 i=1 MODIFY ref=171 90 @ 20.00 f=keeps-priority" },
	{ "102 Delete Order",
	  "1900 6600 d0070000 2a000000 02000000 ab00000000000000 00",
	  "5 09:30:00.000002000 nyse/0 i=1 DELETE ref=171" },
	{ "103 Order Execution",
	  "2a00 6700 d0070000 2a000000 02000000 ab00000000000000 09000000 4c0d0300 1e000000 01 00 4020 2020",
	  "5 09:30:00.000002000 nyse/0 i=1 EXECP ref=171 qty=30 @ 20.0012 match=9 f=printable" },
	{ "103 Order Execution, not printed",
	  "2a00 6700 d0070000 2a000000 02000000 ab00000000000000 0a000000 400d0300 1e000000 00 00 4020 2020",
	  "5 09:30:00.000002000 nyse/0 i=1 EXECP ref=171 qty=30 @ 20.00 match=10" },
	{ "104 Replace Order",
	  "2a00 6800 d0070000 2a000000 02000000 ab00000000000000 ae00000000000000 58090300 c8000000 42 00",
	  "5 09:30:00.000002000 nyse/0 i=1 REPLACE ref=171 new=174 200 @ 19.90" },
	{ "105 Imbalance (Pillar, 73 bytes)",
	  "4900 6900 681e9769 d0070000 2a000000 02000000 400d0300 64000000 32000000 00000000 "
	  "e803 43 53 400d0300 00000000 00000000 400d0300 00000000 00000000 00 00 00 0a000000 53 00",
	  NULL },
	{ "106 Add Order Refresh",
	  "2b00 6a00 681e9769 d0070000 2a000000 03000000 af00000000000000 400d0300 64000000 42 2020202020 00",
	  "5 09:30:00.000002000 nyse/0 i=1 ADD ref=175 B 100 @ 20.00" },
	{ "110 Non-Displayed Trade",
	  "2100 6e00 d0070000 2a000000 02000000 0b000000 a40d0300 2c010000 01 40202020",
	  "5 09:30:00.000002000 nyse/0 i=1 TRADE ref=0 300 @ 20.01 match=11 f=printable" },
	{ "111 Cross Trade",
	  "1d00 6f00 d0070000 2a000000 02000000 0c000000 400d0300 10270000 4f",
	  "5 09:30:00.000002000 nyse/0 i=1 TRADE ref=0 10000 @ 20.00 match=12 cross=O f=printable,cross" },
	{ "112 Trade Cancel",
	  "1400 7000 d0070000 2a000000 02000000 0b000000",
	  "5 09:30:00.000002000 nyse/0 i=1 BREAK match=11" },
	{ "113 Cross Correction",
	  "1800 7100 d0070000 2a000000 02000000 0c000000 88130000",
	  NULL },
	{ "114 Retail Price Improvement",
	  "1100 7200 d0070000 2a000000 02000000 41",
	  NULL },
	{ "223 Stock Summary",
	  "2400 df00 681e9769 d0070000 2a000000 400d0300 400d0300 400d0300 400d0300 10270000",
	  NULL },
	{ "32 Symbol Clear",
	  "1400 2000 681e9769 d0070000 2a000000 03000000",
	  "5 09:30:00.000002000 nyse/0 i=1 CLEAR" },
	{ "34 Security Status, LULD pause",
	  "2e00 2200 681e9769 d0070000 2a000000 02000000 34 4d 00000000 00000000 00000000 20 00000000 00000000 7e 4f 00",
	  "5 09:30:00.000002000 nyse/0 i=1 STATUS paused raw=4 reason=M" },
	{ "34 Security Status, closed",
	  "2e00 2200 681e9769 d0070000 2a000000 02000000 58 7e 00000000 00000000 00000000 20 00000000 00000000 7e 58 00",
	  "5 09:30:00.000002000 nyse/0 i=1 STATUS closed raw=X f=session-end" },
	{ "3 Symbol Index Mapping",
	  "2c00 0300 2b000000 5a585a5a5400000000000000 0100 01 4e 06 43 6400 00000000 00000000 00 59 0100 6400 0000",
	  "5 00:00:00.000000000 nyse/0 i=2 SYMBOL ZXZZT key=43 lot=100 mkt=N" },
	{ "2 Source Time Reference",
	  "1000 0200 01000000 00000000 691e9769",
	  NULL },
	{ "35 Refresh Header",
	  "1000 2300 0100 0100 04000000 02000000",
	  NULL },
	{ "31 Message Unavailable",
	  "0e00 1f00 01000000 02000000 0b 01",
	  NULL },
};

START_TEST(test_xdp_golden_bytes_of_every_message_type)
{
	size_t i = (size_t)_i, n;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1000, ZVZZT, 171, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	h.n = 0;

	pkt_begin(&p, 5, 11);
	n = harness_unhex(golden[i].message, p.b + 16, sizeof(p.b) - 16);
	ck_assert_msg(n == (size_t)(p.b[16] | p.b[17] << 8),
		      "%s: the message is %zu bytes, its MsgSize says %u", golden[i].name, n,
		      p.b[16] | p.b[17] << 8);
	p.len = (uint32_t)(16 + n);
	p.b[3] = 1;
	wire_put_le16(p.b, p.len);
	send_pkt(line_a, &p);
	ck_assert_msg(total_errors(line_a) == 0, "%s: decode errors", golden[i].name);
	ck_assert_uint_eq(counters(line_a)->messages, 5);
	if (!golden[i].event) {
		ck_assert_msg(h.n == 0, "%s: %zu unexpected events, first %s", golden[i].name, h.n,
			      h.n ? event_text(&h.events[0]) : "");
		/* with the setup's reset and reference */
		ck_assert_uint_eq(counters(line_a)->ignored, 3);
		return;
	}
	ck_assert_msg(h.n > 0, "%s: no event", golden[i].name);
	ck_assert_msg(strcmp(event_text(last()), golden[i].event) == 0, "%s:\n got  %s\n want %s",
		      golden[i].name, event_text(last()), golden[i].event);
}
END_TEST

/* The raw view names every type and prints every field; the 2.1/Pillar bytes by content. */
START_TEST(test_xdp_raw_view_names_every_type_and_tells_the_versions_apart)
{
	static const struct { uint16_t type, len; const char *name; } types[] = {
		{ 1, 14, "Sequence Number Reset" }, { 2, 16, "Source Time Reference" },
		{ 3, 44, "Symbol Index Mapping" }, { 31, 14, "Message Unavailable" },
		{ 32, 20, "Symbol Clear" }, { 34, 46, "Security Status" },
		{ 35, 8, "Refresh Header" }, { 35, 16, "Refresh Header" }, { 100, 39, "Add Order" },
		{ 102, 25, "Delete Order" }, { 105, 67, "Imbalance (XDP 2.1)" },
		{ 105, 73, "Imbalance" }, { 106, 43, "Add Order Refresh" },
		{ 111, 29, "Cross Trade" }, { 112, 20, "Trade Cancel" }, { 113, 24, "Cross Correction" },
		{ 114, 17, "Retail Price Improvement" }, { 223, 36, "Stock Summary" },
	};
	uint8_t m[80];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct feed_msg_layout *l;

		memset(m, 0, sizeof(m));
		wire_put_le16(m, types[i].len);
		wire_put_le16(m + 2, types[i].type);
		l = feed_raw_layout(FEED_PROTO_XDP, m, types[i].len);
		ck_assert_ptr_nonnull(l);
		ck_assert_str_eq(l->name, types[i].name);
		ck_assert_uint_le(l->min_len, types[i].len);
		for (int k = 0; k < l->nfields; k++)
			ck_assert_uint_le(l->fields[k].offset + l->fields[k].width, l->min_len);
	}
	/* Modify and Replace: a Side (Pillar) or parity splits (2.1). */
	memset(m, 0, sizeof(m));
	wire_put_le16(m + 2, 101);
	ck_assert_str_eq(feed_raw_layout(FEED_PROTO_XDP, m, 35)->name, "Modify Order (XDP 2.1)");
	m[33] = 'S';
	ck_assert_str_eq(feed_raw_layout(FEED_PROTO_XDP, m, 35)->name, "Modify Order");
	wire_put_le16(m + 2, 104);
	m[40] = 'B';
	ck_assert_str_eq(feed_raw_layout(FEED_PROTO_XDP, m, 42)->name, "Replace Order");
	/* Execution and Non-Displayed Trade: trade conditions (text) or DBExecID. */
	wire_put_le16(m + 2, 103);
	memcpy(m + 38, "@ F ", 4);
	ck_assert_str_eq(feed_raw_layout(FEED_PROTO_XDP, m, 42)->name, "Order Execution");
	wire_put_le16(m + 2, 110);
	memcpy(m + 29, "\xa8\x0a\0\0", 4);
	ck_assert_str_eq(feed_raw_layout(FEED_PROTO_XDP, m, 33)->name, "Non-Displayed Trade (XDP 2.1)");
	wire_put_le16(m + 2, 99);
	ck_assert_ptr_null(feed_raw_layout(FEED_PROTO_XDP, m, 33));
	ck_assert_uint_eq(feed_raw_type(FEED_PROTO_XDP, m, 33), 99);
}
END_TEST

/* ---- book rules, through venue books --------------------------------------------- */

static struct venue_books *books_new(void)
{
	struct venue_books_config cfg = { .max_instruments = 64, .expected_orders = 1024,
					  .numa_node = -1 };
	struct venue_books *vb = venue_books_create(&cfg);

	ck_assert_ptr_nonnull(vb);
	return vb;
}

/* Apply every drained event, then forget them. */
static void books_apply(struct venue_books *vb)
{
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];

	for (size_t i = 0; i < h.n; i++)
		venue_books_apply(vb, &h.events[i], out);
	h.n = 0;
}

static uint64_t shares_ahead(struct venue_books *vb, uint64_t order)
{
	uint64_t shares = 0;
	uint32_t orders = 0;

	ck_assert_int_eq(venue_books_queue_position(vb, WB_VENUE_NYSE, order, &shares, &orders), 0);
	return shares;
}

START_TEST(test_xdp_modify_keeps_priority_at_its_price_and_loses_it_at_another)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 200000, 200, 'B', "");
	msg_modify(&p, 3, ZVZZT, 1, 200000, 50, 'B');	/* size down, same price */
	send_pkt(line_a, &p);
	books_apply(vb);
	ck_assert_uint_eq(shares_ahead(vb, 1), 0);	/* still first */
	ck_assert_uint_eq(shares_ahead(vb, 2), 50);
	pkt_begin(&p, 7, 11);
	msg_modify(&p, 4, ZVZZT, 1, 199900, 50, 'B');	/* to $19.99 */
	msg_modify(&p, 5, ZVZZT, 1, 200000, 50, 'B');	/* and back: behind order 2 now */
	send_pkt(line_a, &p);
	books_apply(vb);
	ck_assert_uint_eq(shares_ahead(vb, 1), 200);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), 0);
	ck_assert_int_eq(info.price, 20 * WB_PRICE_SCALE);
	ck_assert_uint_eq(info.qty, 50);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_xdp_execution_leaves_the_remainder_at_the_orders_own_price)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct venue_level bid, ask;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'S', "");
	/* Executed 30 at $20.0100 (price improvement): 70 stay at $20.00. */
	msg_execution(&p, 2, ZVZZT, 1, 9, 200100, 30, 1);
	send_pkt(line_a, &p);
	ck_assert_int_eq(last()->kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_int_eq(last()->u.order.price, 200100 * 10000ll);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), 0);
	ck_assert_uint_eq(info.qty, 70);
	ck_assert_int_eq(info.price, 20 * WB_PRICE_SCALE);
	ck_assert_int_eq(venue_books_bbo(vb, WB_VENUE_NYSE, 1, &bid, &ask), 0);
	ck_assert_int_eq(ask.price, 20 * WB_PRICE_SCALE);
	ck_assert_uint_eq(ask.qty, 70);
	/* The rest executes: the order is gone. */
	pkt_begin(&p, 6, 11);
	msg_execution(&p, 3, ZVZZT, 1, 10, 200000, 70, 1);
	send_pkt(line_a, &p);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), -1);
	ck_assert_uint_eq(venue_books_counters(vb)->unknown_order, 0);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_xdp_replace_gives_the_new_id_a_new_place_in_the_queue)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 200000, 200, 'B', "");
	msg_replace(&p, 3, ZVZZT, 1, 3, 200000, 100, 'B');
	send_pkt(line_a, &p);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), -1);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 3, &info), 0);
	ck_assert_int_eq(info.side, WB_SIDE_BUY);
	ck_assert_uint_eq(shares_ahead(vb, 3), 200);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_xdp_symbol_clear_and_refresh_rebuild_only_that_symbol)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 43, "OTHER", 6, 1);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, 43, 2, 20000000, 100, 'B', "");	/* $20 at scale 6 */
	msg_clear(&p, 3, ZVZZT);
	msg_add_refresh(&p, 4, ZVZZT, 5, 199900, 300, 'S');
	send_pkt(line_a, &p);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), -1);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 2, &info), 0);
	ck_assert_int_eq(info.price, 20 * WB_PRICE_SCALE);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 5, &info), 0);
	ck_assert_int_eq(info.price, 1999 * (WB_PRICE_SCALE / 100));
	ck_assert_uint_eq(info.qty, 300);
	ck_assert_int_eq(info.side, WB_SIDE_SELL);
	venue_books_destroy(vb);
}
END_TEST

/*
 * A Refresh Header (notes: Recovery, type 35): the first packet of a symbol
 * has LastSeqNum (16 bytes).
 */
static void msg_refresh_header(struct pkt *p, uint16_t current, uint16_t total, bool first,
			       uint32_t last_seq)
{
	uint8_t *m = pkt_msg(p, 35, first ? 16 : 8);

	wire_put_le16(m + 4, current);
	wire_put_le16(m + 6, total);
	if (first)
		wire_put_le32(m + 8, last_seq);
}

static int adds_of(uint64_t order)
{
	int n = 0;

	for (size_t i = 0; i < h.n; i++)
		n += h.events[i].kind == WB_EV_ADD && h.events[i].u.order.order_id == order;
	return n;
}

START_TEST(test_xdp_refresh_applies_each_symbol_as_of_its_last_seq_num)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct pkt p;
	uint64_t skipped;

	feed_subscribe(h.engine, "*", 1);
	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_NYSE, 1, 0), 0);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 43, "OTHER", 4, 1);
	msg_add(&p, 1, ZVZZT, 1, 100000, 100, 'B', "");		/* seq 5 */
	msg_add(&p, 2, 43, 2, 200000, 100, 'B', "");		/* seq 6 */
	send_pkt(line_a, &p);
	ck_assert_int_eq(feed_snapshot_begin(h.engine, line_a, 0, 42, &h.prod), 0);
	/* Real time while the refresh comes: buffered. */
	pkt_begin(&p, 7, 11);
	msg_add(&p, 3, ZVZZT, 10, 100100, 100, 'B', "");	/* 7: in ZVZZT's refresh */
	msg_add(&p, 4, 43, 11, 200100, 100, 'B', "");		/* 8: after OTHER's */
	send_pkt(line_a, &p);
	pkt_begin(&p, 9, 11);
	msg_add(&p, 5, ZVZZT, 12, 100200, 100, 'B', "");	/* 9 */
	msg_add(&p, 6, 43, 13, 200200, 100, 'B', "");		/* 10 */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(adds_of(10), 0);
	/* ZVZZT as of 8 in two packets (the second with the short header), OTHER as of 6. */
	pkt_begin(&p, 1, 18);
	msg_refresh_header(&p, 1, 2, true, 8);
	msg_mapping(&p, ZVZZT, "ZVZZT", 4, 1);
	msg_add_refresh(&p, 7, ZVZZT, 1, 100000, 100, 'B');
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, 0, p.b, p.len, 42, &h.prod), 0);
	pkt_begin(&p, 2, 19);
	msg_refresh_header(&p, 2, 2, false, 0);
	msg_add_refresh(&p, 8, ZVZZT, 10, 100100, 100, 'B');
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, 0, p.b, p.len, 42, &h.prod), 0);
	pkt_begin(&p, 3, 20);
	msg_refresh_header(&p, 1, 1, true, 6);
	msg_mapping(&p, 43, "OTHER", 4, 1);
	msg_add_refresh(&p, 9, 43, 2, 200000, 100, 'B');
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, 0, p.b, p.len, 42, &h.prod), 0);
	skipped = counters(line_a)->duplicate_messages;
	/* The channel resumes after the lowest LastSeqNum. */
	ck_assert_int_eq(feed_snapshot_end(h.engine, line_a, 0, 7, 42, &h.prod), 0);
	harness_drain(&h);
	/* Order 10 once, from the refresh: its real-time add at 7 was skipped. */
	ck_assert_int_eq(adds_of(10), 1);
	ck_assert_uint_eq(counters(line_a)->duplicate_messages, skipped + 1);
	for (uint64_t id = 11; id <= 13; id++)
		ck_assert_int_eq(adds_of(id), 1);
	books_apply(vb);
	for (uint64_t id = 1; id <= 13; id++) {
		bool live = id <= 2 || id >= 10;

		ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, id, &info), live ? 0 : -1);
	}
	ck_assert_uint_eq(counters(line_a)->snapshots, 1);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_xdp_refresh_covers_nothing_after_a_reset)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_NYSE, 1, 0), 0);
	open_channel(line_a);
	ck_assert_int_eq(feed_snapshot_begin(h.engine, line_a, 0, 42, &h.prod), 0);
	pkt_begin(&p, 1, 17);
	msg_refresh_header(&p, 1, 1, true, 50);
	msg_mapping(&p, ZVZZT, "ZVZZT", 4, 1);
	ck_assert_int_eq(feed_snapshot_packet(h.engine, line_a, 0, p.b, p.len, 42, &h.prod), 0);
	ck_assert_int_eq(feed_snapshot_end(h.engine, line_a, 0, 4, 42, &h.prod), 0);
	/* The channel starts over (a failover): sequence 5 is a new message, not the refresh's. */
	send_reset(line_a, SEC_0930 + 60, 0);
	pkt_begin(&p, 2, 11);
	msg_mapping(&p, ZVZZT, "ZVZZT", 4, 1);
	msg_add(&p, 1, ZVZZT, 77, 100000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_int_eq(adds_of(77), 1);
}
END_TEST

START_TEST(test_xdp_closing_status_clears_the_symbol_without_deletes)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct venue_level bid, ask;
	const struct wb_event *clear;
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 201000, 100, 'S', "");
	msg_status(&p, 3, ZVZZT, 'X', '~', 'X');
	send_pkt(line_a, &p);
	clear = harness_find(&h, WB_EV_CLEAR, 0);
	ck_assert_ptr_nonnull(clear);
	ck_assert_int_eq(clear->instrument, 1);
	ck_assert_int_eq(clear->flags, WB_EVF_SESSION_END);
	ck_assert_int_eq(last()->kind, WB_EV_STATUS);
	ck_assert_int_eq(last()->u.status.state, WB_STATE_CLOSED);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), -1);
	ck_assert_int_eq(venue_books_bbo(vb, WB_VENUE_NYSE, 1, &bid, &ask), 0);
	ck_assert_uint_eq(bid.qty + ask.qty, 0);
	venue_books_destroy(vb);
}
END_TEST

/* A Sequence Number Reset clears its channel's books, not another channel's. */
START_TEST(test_xdp_sequence_reset_clears_only_its_channels_books)
{
	struct venue_books *vb = books_new();
	struct venue_order_info info;
	struct pkt p;
	size_t clears = 0;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	send_reset(line_c, SEC_0930, 99);
	pkt_begin(&p, 2, 11);
	msg_mapping(&p, 50, "CHTWO", 4, 2);
	msg_add(&p, 1, 50, 2, 100000, 100, 'B', "");
	send_pkt(line_c, &p);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	books_apply(vb);
	/* Channel 1 fails over: a new reset, then the refresh of its book. */
	send_reset(line_a, SEC_0930 + 60, 5);
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_CLEAR) {
			clears++;
			ck_assert_int_eq(h.events[i].instrument, 1);
		}
	ck_assert_uint_eq(clears, 1);
	books_apply(vb);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 1, &info), -1);
	ck_assert_int_eq(venue_books_order(vb, WB_VENUE_NYSE, 2, &info), 0);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
	ck_assert_uint_eq(counters(line_c)->session_changes, 0);
	/* Its copy on line B is no second reset; the channel goes on at 2. */
	send_reset(line_b, SEC_0930 + 60, 5);
	ck_assert_uint_eq(harness_count(&h, WB_EV_CLEAR), 0);
	pkt_begin(&p, 2, 10);
	msg_add_refresh(&p, 6, ZVZZT, 1, 200000, 100, 'B');
	send_pkt(line_b, &p);
	ck_assert_int_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->seq, 2);
	ck_assert_uint_eq(counters(line_a)->gaps + counters(line_b)->gaps, 0);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_xdp_halts_ssr_and_sessions_become_status_and_ssr_never_lifts_a_halt)
{
	static const struct { char code, halt, market; uint8_t state; } steps[] = {
		{ 'P', '~', 'P', WB_STATE_PRE_OPEN },
		{ 'O', '~', 'O', WB_STATE_TRADING },
		{ '4', 'D', 'O', WB_STATE_HALTED },
		{ 'A', '~', 'O', WB_STATE_HALTED },	/* SSR activated while halted */
		{ 'I', '~', 'O', WB_STATE_HALTED },	/* resume indication */
		{ '5', '~', 'O', WB_STATE_TRADING },
		{ 'D', '~', 'O', WB_STATE_TRADING },
		{ '4', 'M', 'O', WB_STATE_PAUSED },	/* LULD pause */
		{ '5', '~', 'O', WB_STATE_TRADING },
		{ '6', '~', 'O', WB_STATE_HALTED },	/* suspended */
		{ 'L', '~', 'L', WB_STATE_HALTED },	/* a session change does not lift it */
		{ '5', '~', 'L', WB_STATE_TRADING },
		{ 'X', '~', 'X', WB_STATE_CLOSED },
	};
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		h.n = 0;
		pkt_begin(&p, (uint32_t)(4 + i), 11);
		msg_status(&p, (uint32_t)i, ZVZZT, steps[i].code, steps[i].halt, steps[i].market);
		send_pkt(line_a, &p);
		ck_assert_int_eq(last()->kind, WB_EV_STATUS);
		ck_assert_msg(last()->u.status.state == steps[i].state, "step %zu (%c): state %u, want %u",
			      i, steps[i].code, last()->u.status.state, steps[i].state);
		ck_assert_int_eq(last()->u.status.raw_state, steps[i].code);
	}
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

/* ---- channels, sequencing and time ------------------------------------------------ */

START_TEST(test_xdp_heartbeats_are_counted_and_say_nothing_of_the_sequence)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 1000, 1);		/* whatever SeqNum it carries */
	send_pkt(line_a, &p);
	send_pkt(line_b, &p);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->heartbeats, 1);
	ck_assert_uint_eq(counters(line_b)->heartbeats, 1);
	/* The next data packet is where a loss shows. */
	pkt_begin(&p, 6, 11);
	msg_delete(&p, 1, ZVZZT, 1);
	send_pkt(line_a, &p);
	ck_assert_int_eq(h.events[0].kind, WB_EV_GAP);
	ck_assert_uint_eq(h.events[0].u.gap.first, 4);
	ck_assert_uint_eq(h.events[0].u.gap.count, 2);
}
END_TEST

START_TEST(test_xdp_time_is_unknown_after_a_gap_until_the_next_reference)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_add(&p, 10, ZVZZT, 1, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->exch_ts, TS(SEC_0930, 10));
	/* Seq 5 is lost: the reference of the next second may have been in it. */
	pkt_begin(&p, 6, 11);
	msg_add(&p, 20, ZVZZT, 2, 200000, 100, 'B', "");
	msg_time_reference(&p, 1, SEC_0930 + 1);
	msg_add(&p, 30, ZVZZT, 3, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_find(&h, WB_EV_ADD, 2)->exch_ts, 0);
	ck_assert_uint_eq(last()->exch_ts, TS(SEC_0930 + 1, 30));
	/* Messages with a SourceTime of their own are always dated. */
	send_reset(line_a, SEC_0930 + 5, 1);
	pkt_begin(&p, 2, 10);
	msg_add_refresh(&p, 40, ZVZZT, 4, 200000, 100, 'B');
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->exch_ts, TS(SEC_0930, 40));
}
END_TEST

START_TEST(test_xdp_channel_with_two_partitions_dates_by_the_symbols_system_id)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);	/* ZVZZT on system 1, reference 1 at 09:30:00 */
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 60, "PARTB", 4, 2);
	msg_time_reference(&p, 2, SEC_0930 + 1);	/* partition 2 is a second ahead */
	msg_add(&p, 999000000, ZVZZT, 1, 200000, 100, 'B', "");	/* still 09:30:00.999 */
	msg_add(&p, 5, 60, 2, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_find(&h, WB_EV_ADD, 0)->exch_ts, TS(SEC_0930, 999000000));
	ck_assert_uint_eq(last()->exch_ts, TS(SEC_0930 + 1, 5));
}
END_TEST

START_TEST(test_xdp_channels_are_streams_of_their_own)
{
	struct pkt p;
	const struct wb_event *gap;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	open_channel(line_c);
	h.n = 0;
	pkt_begin(&p, 9, 11);		/* channel 2 loses 4..8 */
	msg_delete(&p, 1, ZVZZT, 1);
	send_pkt(line_c, &p);
	pkt_begin(&p, 4, 11);		/* channel 1 is in order */
	msg_delete(&p, 1, ZVZZT, 2);
	send_pkt(line_a, &p);
	gap = harness_find(&h, WB_EV_GAP, 0);
	ck_assert_ptr_nonnull(gap);
	ck_assert_uint_eq(gap->u.gap.channel, 2);
	ck_assert_uint_eq(gap->u.gap.first, 4);
	ck_assert_uint_eq(gap->u.gap.count, 5);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 2);
}
END_TEST

/* ---- filtering -------------------------------------------------------------------- */

START_TEST(test_xdp_filter_passes_subscribed_indexes_and_always_reads_mappings)
{
	struct pkt p;
	int id;

	id = feed_subscribe(h.engine, "ZVZZT", 5);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 43, "OTHER", 4, 1);
	msg_add(&p, 1, 43, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 200000, 100, 'B', "");
	msg_execution(&p, 3, 43, 1, 1, 200000, 10, 1);
	msg_delete(&p, 4, 43, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	ck_assert_int_eq(harness_find(&h, WB_EV_ADD, 0)->instrument, id);
	ck_assert_uint_eq(counters(line_a)->filtered, 3);
	ck_assert_uint_eq(total_errors(line_a), 0);
	/* Subscribing later: the directory names it at once, its later orders pass. */
	h.n = 0;
	id = feed_subscribe(h.engine, "OTHER", 5);
	pkt_begin(&p, 9, 11);
	msg_add(&p, 5, 43, 3, 200000, 100, 'S', "");
	send_pkt(line_a, &p);
	ck_assert_int_eq(harness_find(&h, WB_EV_SYMBOL, 0)->instrument, id);
	ck_assert_int_eq(last()->kind, WB_EV_ADD);
	ck_assert_int_eq(last()->instrument, id);
}
END_TEST

START_TEST(test_xdp_index_above_the_dense_range_decodes_through_the_overflow)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 4000000000u, "BIGIX", 6, 1);
	msg_add(&p, 1, 4000000000u, 1, 1234567, 100, 'B', "");	/* $1.234567 */
	send_pkt(line_a, &p);
	ck_assert_int_eq(last()->kind, WB_EV_ADD);
	ck_assert_int_eq(last()->u.order.price, 123456700);
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

/* ---- malformed input: counted per line, never a wrong event --------------------- */

START_TEST(test_xdp_packet_shorter_than_its_header_is_truncated)
{
	uint8_t b[15] = { 15, 0, 11, 1, 1, 0, 0, 0 };

	harness_payload(&h, line_a, b, sizeof(b));
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(h.n, 0);
}
END_TEST

START_TEST(test_xdp_packet_size_must_match_the_datagram)
{
	struct pkt p;
	uint8_t big[1500];

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	/* Longer datagram than PktSize: the tail is counted and ignored. */
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	memcpy(big, p.b, p.len);
	memset(big + p.len, 0xee, 10);
	harness_payload(&h, line_a, big, p.len + 10);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	/* PktSize beyond the datagram: nothing of it is decoded. */
	pkt_begin(&p, 5, 11);
	msg_add(&p, 1, ZVZZT, 2, 200000, 100, 'B', "");
	harness_payload(&h, line_a, p.b, p.len - 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	/* Below the header size. */
	wire_put_le16(p.b, 8);
	harness_payload(&h, line_a, p.b, p.len);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
}
END_TEST

START_TEST(test_xdp_message_size_below_four_stops_the_packet)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	wire_put_le16(pkt_msg(&p, 100, 39), 3);	/* MsgSize 3 */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	/* Message 5 was never framed: a packet at 6 finds it missing. */
	pkt_begin(&p, 6, 11);
	msg_delete(&p, 1, ZVZZT, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	ck_assert_uint_eq(harness_find(&h, WB_EV_GAP, 0)->u.gap.first, 5);
}
END_TEST

START_TEST(test_xdp_message_past_the_packet_is_truncated_and_b_fills_it)
{
	struct pkt p, cut;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 200000, 100, 'B', "");
	cut = p;
	wire_put_le16(cut.b + 16 + 39, 200);	/* the second says 200 bytes */
	send_pkt(line_a, &cut);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	send_pkt(line_b, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
}
END_TEST

START_TEST(test_xdp_number_of_messages_that_disagrees_is_counted)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	/* Says 3, holds 2 that end with the packet. */
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	msg_add(&p, 2, ZVZZT, 2, 200000, 100, 'B', "");
	p.b[3] = 3;
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 2);
	/* Says 1, holds 2: the second is not decoded, its bytes are counted. */
	pkt_begin(&p, 6, 11);
	msg_add(&p, 3, ZVZZT, 3, 200000, 100, 'B', "");
	msg_add(&p, 4, ZVZZT, 4, 200000, 100, 'B', "");
	p.b[3] = 1;
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_COUNT], 2);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 3);
}
END_TEST

START_TEST(test_xdp_unknown_symbol_index_is_counted_and_dropped)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, 777, 1, 200000, 100, 'B', "");
	msg_status(&p, 2, 777, 'O', '~', 'O');
	msg_delete(&p, 3, 777, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_SYMBOL], 3);
}
END_TEST

START_TEST(test_xdp_scale_above_eight_never_makes_a_price)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 44, "NINE", 9, 1);
	msg_add(&p, 1, 44, 1, 200000, 100, 'B', "");
	msg_execution(&p, 2, 44, 1, 1, 200000, 10, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_EXECUTE_AT_PRICE), 0);
	/* The symbol is known, so orders without a price still reach the book. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 1);
}
END_TEST

START_TEST(test_xdp_unknown_short_and_long_messages_are_stepped_over_by_their_size)
{
	struct pkt p;
	uint8_t *m;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	pkt_msg(&p, 250, 12);			/* an unknown type */
	pkt_msg(&p, 100, 20);			/* an Add too short for its fields */
	pkt_msg(&p, 15, 20);			/* a Refresh Request: TCP only */
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'B', "");
	m = pkt_msg(&p, 102, 30);		/* a longer Delete: its known prefix */
	wire_put_le32(m + 8, ZVZZT);
	wire_put_le64(m + 16, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_TYPE], 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_NOT_MULTICAST], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	ck_assert_int_eq(last()->kind, WB_EV_DELETE);
	ck_assert_uint_eq(last()->seq, 8);
}
END_TEST

START_TEST(test_xdp_bad_side_zero_sequence_and_long_symbol_are_bad_fields)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	open_channel(line_a);
	h.n = 0;
	pkt_begin(&p, 4, 11);
	msg_add(&p, 1, ZVZZT, 1, 200000, 100, 'X', "");
	msg_mapping(&p, 45, "LONGSYMBOL", 4, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 2);
	pkt_begin(&p, 0, 11);
	msg_add(&p, 1, ZVZZT, 2, 200000, 100, 'B', "");
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 3);
	ck_assert_uint_eq(h.n, 0);
}
END_TEST

/* NYSE symbology's space suffix ("BRK A") reads as the dotted ticker. */
START_TEST(test_xdp_symbol_with_a_suffix_is_its_dotted_ticker)
{
	struct pkt p;
	int id;

	id = feed_subscribe(h.engine, "BRK.A", 5);
	open_channel(line_a);
	pkt_begin(&p, 4, 11);
	msg_mapping(&p, 46, "BRK A", 3, 1);
	send_pkt(line_a, &p);
	ck_assert_int_eq(last()->kind, WB_EV_SYMBOL);
	ck_assert_int_eq(last()->instrument, id);
}
END_TEST

/* ---- a generated day of NYSE and Arca, against the flow that made it ---------- */

struct day {
	struct venue_books *vb;
	int line_of_group[64];
	uint32_t group[64];
	int ngroups;
};

static int sink_to_books(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
			 const uint8_t *payload, uint32_t len)
{
	struct day *d = ctx;
	int g;

	(void)dst_port;
	for (g = 0; g < d->ngroups && d->group[g] != dst_ip; g++)
		;
	ck_assert_int_lt(g, d->ngroups);
	feed_process_payload(h.engine, d->line_of_group[g], payload, len, ts_ns, &h.prod);
	harness_drain(&h);
	books_apply(d->vb);
	return 0;
}

/* What the venue books hold for each live flow order of the venue, at its shaded price. */
static void check_books_against_flow(struct day *d, const struct gen_flow *flow, uint8_t venue)
{
	uint64_t orders = 0;

	for (uint64_t i = 0; i < flow->live_count; i++) {
		const struct gen_live_order *o = &flow->live[i];
		struct venue_order_info info;

		if (o->venue != venue)
			continue;
		ck_assert_msg(venue_books_order(d->vb, venue, o->id, &info) == 0,
			      "%s order %" PRIu64 " missing", feed_venue_name(venue), o->id);
		ck_assert_uint_eq(info.qty, o->qty);
		ck_assert_int_eq(info.side, o->side);
		orders++;
	}
	ck_assert_uint_gt(orders, 100);
}

START_TEST(test_xdp_generated_day_rebuilds_the_flows_books_through_a_failover)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DEMO, .seed = 11,
					.venues = 1u << WB_VENUE_NYSE | 1u << WB_VENUE_ARCA };
	struct venue_books_config bcfg = { .max_instruments = 64, .expected_orders = 1u << 16,
					   .numa_node = -1 };
	struct feed_map_entry map[4] = {
		{ .ip = ipv4(239, 1, 1, 1), .port = 5001, .channel = 1, .protocol = FEED_PROTO_XDP,
		  .venue = WB_VENUE_NYSE, .name = "A" },
		{ .ip = ipv4(239, 1, 1, 2), .port = 5002, .channel = 2, .protocol = FEED_PROTO_XDP,
		  .venue = WB_VENUE_NYSE, .name = "A" },
		{ .ip = ipv4(239, 1, 1, 3), .port = 5003, .channel = 3, .protocol = FEED_PROTO_XDP,
		  .venue = WB_VENUE_NYSE, .name = "A" },
		{ .ip = ipv4(239, 1, 2, 1), .port = 5001, .channel = 1, .protocol = FEED_PROTO_XDP,
		  .venue = WB_VENUE_ARCA, .name = "A" },
	};
	const struct gen_proto *gp = gen_proto_get(FEED_PROTO_XDP);
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_xdp *enc = calloc(2, sizeof(*enc));
	struct day d = { 0 };
	struct gen_action a;
	uint64_t statuses = 0, halts = 0;
	bool closing = false;

	ck_assert_ptr_nonnull(gp);
	ck_assert_ptr_nonnull(flow);
	ck_assert_ptr_nonnull(enc);
	d.vb = venue_books_create(&bcfg);
	feed_subscribe(h.engine, "*", 1);
	for (int i = 0; i < 4; i++) {
		d.group[i] = map[i].ip;
		d.line_of_group[i] = feed_map_add_entry(h.engine, &map[i]);
		ck_assert_int_ge(d.line_of_group[i], 0);
	}
	d.ngroups = 4;
	ck_assert_int_eq(gen_flow_init(flow, &fcfg), 0);
	for (int v = 0; v < 2; v++) {
		struct gen_encoder_config cfg = {
			.venue = v ? WB_VENUE_ARCA : WB_VENUE_NYSE, .map = map, .map_len = 4,
			.midnight_ns = 1771477200ull * 1000000000ull, .dup_every = 40,
			.sink = { .packet = sink_to_books, .ctx = &d },
		};

		ck_assert_int_eq(gp->init(&enc[v], &cfg), 0);
	}
	ck_assert_uint_eq(enc[0].nch, 3);
	ck_assert_uint_eq(enc[1].nch, 1);
	while (gen_flow_next(flow, &a) == 1) {
		if (a.kind == GEN_SYSTEM && a.code == 'E' && !closing) {
			/* Before the close: every live order of the flow is in the books. */
			for (int v = 0; v < 2; v++)
				ck_assert_int_eq(gp->finish(&enc[v], a.ts), 0);
			check_books_against_flow(&d, flow, WB_VENUE_NYSE);
			check_books_against_flow(&d, flow, WB_VENUE_ARCA);
			closing = true;
		}
		for (int v = 0; v < 2; v++)
			ck_assert_int_eq(gp->action(&enc[v], flow, &a), 0);
		for (size_t i = 0; i < h.n; i++)
			statuses += h.events[i].kind == WB_EV_STATUS;
	}
	ck_assert(closing);
	for (int v = 0; v < 2; v++) {
		ck_assert_int_eq(gp->finish(&enc[v], a.ts + 1000000), 0);
		/* One reset per channel at the start, one failover. */
		ck_assert_uint_eq(enc[v].stats.resets, enc[v].nch + 1);
		ck_assert_uint_gt(enc[v].stats.refreshed_orders, 0);
		ck_assert_uint_gt(enc[v].stats.scale4, 0);
		ck_assert_uint_gt(enc[v].stats.scale6, 0);
		ck_assert_int_eq(enc[v].halt_stage, 2);
		halts++;
		gp->destroy(&enc[v]);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(total_errors(d.line_of_group[i]) == 0, "line %d errors", i);
		ck_assert_uint_eq(counters(d.line_of_group[i])->gaps, 0);
	}
	ck_assert_uint_eq(venue_books_counters(d.vb)->unknown_order, 0);
	ck_assert_uint_eq(venue_books_counters(d.vb)->duplicate_order, 0);
	/* The closing 'X' took every order out. */
	ck_assert_uint_eq(venue_books_counters(d.vb)->live_orders, 0);
	ck_assert_uint_gt(halts, 0);
	(void)statuses;
	venue_books_destroy(d.vb);
	gen_flow_destroy(flow);
	free(flow);
	free(enc);
}
END_TEST

static Suite *xdp_suite(void)
{
	Suite *s = suite_create("xdp");
	TCase *caps = tcase_create("captures");
	TCase *msgs = tcase_create("messages");
	TCase *book = tcase_create("book rules");
	TCase *seq = tcase_create("channels and time");
	TCase *filt = tcase_create("filtering");
	TCase *bad = tcase_create("malformed");
	TCase *gen = tcase_create("generated");

	tcase_add_checked_fixture(caps, setup, teardown);
	tcase_add_test(caps, test_xdp_capture_reset_and_mapping_open_channel_one);
	tcase_add_test(caps, test_xdp_capture_time_reference_dates_the_next_message);
	tcase_add_test(caps, test_xdp_capture_add_order_decodes_every_field);
	tcase_add_test(caps, test_xdp_capture_order_execution_of_xdp_2_1);
	tcase_add_test(caps, test_xdp_capture_replace_order_of_xdp_2_1);
	tcase_add_test(caps, test_xdp_capture_imbalance_of_xdp_2_1_is_raw_only);
	tcase_add_test(caps, test_xdp_capture_security_status_pre_open_on_channel_two);
	suite_add_tcase(s, caps);

	tcase_add_checked_fixture(msgs, setup, teardown);
	tcase_add_loop_test(msgs, test_xdp_golden_bytes_of_every_message_type, 0,
			    (int)(sizeof(golden) / sizeof(golden[0])));
	tcase_add_test(msgs, test_xdp_raw_view_names_every_type_and_tells_the_versions_apart);
	suite_add_tcase(s, msgs);

	tcase_add_checked_fixture(book, setup, teardown);
	tcase_add_test(book, test_xdp_modify_keeps_priority_at_its_price_and_loses_it_at_another);
	tcase_add_test(book, test_xdp_execution_leaves_the_remainder_at_the_orders_own_price);
	tcase_add_test(book, test_xdp_replace_gives_the_new_id_a_new_place_in_the_queue);
	tcase_add_test(book, test_xdp_symbol_clear_and_refresh_rebuild_only_that_symbol);
	tcase_add_test(book, test_xdp_closing_status_clears_the_symbol_without_deletes);
	tcase_add_test(book, test_xdp_sequence_reset_clears_only_its_channels_books);
	tcase_add_test(book, test_xdp_halts_ssr_and_sessions_become_status_and_ssr_never_lifts_a_halt);
	suite_add_tcase(s, book);

	tcase_add_checked_fixture(seq, setup, teardown);
	tcase_add_test(seq, test_xdp_heartbeats_are_counted_and_say_nothing_of_the_sequence);
	tcase_add_test(seq, test_xdp_time_is_unknown_after_a_gap_until_the_next_reference);
	tcase_add_test(seq, test_xdp_channel_with_two_partitions_dates_by_the_symbols_system_id);
	tcase_add_test(seq, test_xdp_channels_are_streams_of_their_own);
	tcase_add_test(seq, test_xdp_refresh_applies_each_symbol_as_of_its_last_seq_num);
	tcase_add_test(seq, test_xdp_refresh_covers_nothing_after_a_reset);
	suite_add_tcase(s, seq);

	tcase_add_checked_fixture(filt, setup, teardown);
	tcase_add_test(filt, test_xdp_filter_passes_subscribed_indexes_and_always_reads_mappings);
	tcase_add_test(filt, test_xdp_index_above_the_dense_range_decodes_through_the_overflow);
	tcase_add_test(filt, test_xdp_symbol_with_a_suffix_is_its_dotted_ticker);
	suite_add_tcase(s, filt);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_test(bad, test_xdp_packet_shorter_than_its_header_is_truncated);
	tcase_add_test(bad, test_xdp_packet_size_must_match_the_datagram);
	tcase_add_test(bad, test_xdp_message_size_below_four_stops_the_packet);
	tcase_add_test(bad, test_xdp_message_past_the_packet_is_truncated_and_b_fills_it);
	tcase_add_test(bad, test_xdp_number_of_messages_that_disagrees_is_counted);
	tcase_add_test(bad, test_xdp_unknown_symbol_index_is_counted_and_dropped);
	tcase_add_test(bad, test_xdp_scale_above_eight_never_makes_a_price);
	tcase_add_test(bad, test_xdp_unknown_short_and_long_messages_are_stepped_over_by_their_size);
	tcase_add_test(bad, test_xdp_bad_side_zero_sequence_and_long_symbol_are_bad_fields);
	suite_add_tcase(s, bad);

	tcase_add_checked_fixture(gen, setup, teardown);
	tcase_set_timeout(gen, 60);
	tcase_add_test(gen, test_xdp_generated_day_rebuilds_the_flows_books_through_a_failover);
	suite_add_tcase(s, gen);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(xdp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
