/*
 * Cboe Multicast PITCH decoder: the real captures in pcaps/pitch decoded
 * field by field, one golden message per type built from the spec
 * (docs/specs/cboe-pitch-notes.md, cited as "notes:"), sequencing per unit, the order-id filter
 * as the decoder uses it, and malformed input.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_harness.h"
#include "wire/pitch.h"
#include "common/event_text.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "gen/gen_pitch.h"
#include "book/venue_book.h"

#ifndef PCAP_DIR
#define PCAP_DIR "pcaps/pitch/"
#endif

#define SEC_0930 34200u
#define TS(off) ((uint64_t)SEC_0930 * 1000000000ull + (off))
#define PRICE(dollars_x100) ((int64_t)(dollars_x100) * 1000000)	/* cents -> 1e-8 */

/* ---- packet builder -------------------------------------------------------- */

struct pkt {
	uint8_t b[1500];
	uint32_t len;
	uint8_t count;
};

static void pkt_begin(struct pkt *p, uint8_t unit, uint32_t seq)
{
	memset(p, 0, sizeof(*p));
	p->len = PITCH_HEADER_LEN;
	wire_put_le16(p->b + PITCH_HDR_LENGTH, PITCH_HEADER_LEN);
	p->b[PITCH_HDR_UNIT] = unit;
	wire_put_le32(p->b + PITCH_HDR_SEQUENCE, seq);
}

static uint8_t *pkt_msg(struct pkt *p, uint8_t type, uint8_t len, uint32_t offset)
{
	uint8_t *m = p->b + p->len;

	memset(m, 0, len);
	m[PITCH_MSG_LENGTH] = len;
	m[PITCH_MSG_TYPE] = type;
	if (len >= PITCH_TIME_OFFSET + 4)
		wire_put_le32(m + PITCH_TIME_OFFSET, offset);	/* a Time's seconds too */
	p->len += len;
	p->count++;
	wire_put_le16(p->b + PITCH_HDR_LENGTH, p->len);
	p->b[PITCH_HDR_COUNT] = p->count;
	return m;
}

static void msg_time(struct pkt *p, uint32_t sec)
{
	pkt_msg(p, PITCH_TIME, PITCH_TIME_LEN, sec);
}

static void msg_add_short(struct pkt *p, uint32_t off, uint64_t id, char side, uint16_t qty,
			  const char *sym, uint16_t cents)
{
	uint8_t *m = pkt_msg(p, PITCH_ADD_SHORT, PITCH_ADD_SHORT_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le16(m + PITCH_ADD_SHORT_QTY, qty);
	put_text(m + PITCH_ADD_SHORT_SYMBOL, sym, PITCH_SYMBOL_SHORT_LEN);
	wire_put_le16(m + PITCH_ADD_SHORT_PRICE, cents);
	m[PITCH_ADD_SHORT_FLAGS] = 1;
}

static void msg_add_long(struct pkt *p, uint32_t off, uint64_t id, char side, uint32_t qty,
			 const char *sym, uint64_t price4)
{
	uint8_t *m = pkt_msg(p, PITCH_ADD_LONG, PITCH_ADD_LONG_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le32(m + PITCH_ADD_LONG_QTY, qty);
	put_text(m + PITCH_ADD_LONG_SYMBOL, sym, PITCH_SYMBOL_SHORT_LEN);
	wire_put_le64(m + PITCH_ADD_LONG_PRICE, price4);
	m[PITCH_ADD_LONG_FLAGS] = 1;
}

static void msg_add_expanded(struct pkt *p, uint8_t len, uint32_t off, uint64_t id, char side,
			     uint32_t qty, const char *sym, uint64_t price4, const char *participant)
{
	uint8_t *m = pkt_msg(p, PITCH_ADD_EXPANDED, len, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le32(m + PITCH_ADD_EXPANDED_QTY, qty);
	put_text(m + PITCH_ADD_EXPANDED_SYMBOL, sym, PITCH_SYMBOL_LEN);
	wire_put_le64(m + PITCH_ADD_EXPANDED_PRICE, price4);
	m[PITCH_ADD_EXPANDED_FLAGS] = 1;
	if (len >= PITCH_ADD_EXPANDED_V241_LEN) {
		put_text(m + PITCH_ADD_EXPANDED_PARTICIPANT, participant, PITCH_PARTICIPANT_LEN);
		m[PITCH_ADD_EXPANDED_CUSTOMER] = ' ';
	}
}

static void msg_executed(struct pkt *p, uint32_t off, uint64_t id, uint32_t qty, uint64_t exec_id)
{
	uint8_t *m = pkt_msg(p, PITCH_EXECUTED, PITCH_EXECUTED_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le32(m + PITCH_EXECUTED_QTY, qty);
	wire_put_le64(m + PITCH_EXECUTED_EXECUTION, exec_id);
}

static void msg_executed_at_price(struct pkt *p, uint32_t off, uint64_t id, uint32_t qty,
				  uint32_t remaining, uint64_t exec_id, uint64_t price4)
{
	uint8_t *m = pkt_msg(p, PITCH_EXECUTED_AT_PRICE, PITCH_EXECUTED_AT_PRICE_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le32(m + PITCH_EXECUTED_AT_PRICE_QTY, qty);
	wire_put_le32(m + PITCH_EXECUTED_AT_PRICE_REMAINING, remaining);
	wire_put_le64(m + PITCH_EXECUTED_AT_PRICE_EXECUTION, exec_id);
	wire_put_le64(m + PITCH_EXECUTED_AT_PRICE_PRICE, price4);
}

static void msg_reduce_long(struct pkt *p, uint32_t off, uint64_t id, uint32_t qty)
{
	uint8_t *m = pkt_msg(p, PITCH_REDUCE_LONG, PITCH_REDUCE_LONG_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le32(m + PITCH_REDUCE_QTY, qty);
}

static void msg_reduce_short(struct pkt *p, uint32_t off, uint64_t id, uint16_t qty)
{
	uint8_t *m = pkt_msg(p, PITCH_REDUCE_SHORT, PITCH_REDUCE_SHORT_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le16(m + PITCH_REDUCE_QTY, qty);
}

static void msg_modify_long(struct pkt *p, uint32_t off, uint64_t id, uint32_t qty,
			    uint64_t price4, uint8_t flags)
{
	uint8_t *m = pkt_msg(p, PITCH_MODIFY_LONG, PITCH_MODIFY_LONG_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le32(m + PITCH_MODIFY_LONG_QTY, qty);
	wire_put_le64(m + PITCH_MODIFY_LONG_PRICE, price4);
	m[PITCH_MODIFY_LONG_FLAGS] = flags;
}

static void msg_modify_short(struct pkt *p, uint32_t off, uint64_t id, uint16_t qty,
			     uint16_t cents, uint8_t flags)
{
	uint8_t *m = pkt_msg(p, PITCH_MODIFY_SHORT, PITCH_MODIFY_SHORT_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	wire_put_le16(m + PITCH_MODIFY_SHORT_QTY, qty);
	wire_put_le16(m + PITCH_MODIFY_SHORT_PRICE, cents);
	m[PITCH_MODIFY_SHORT_FLAGS] = flags;
}

static void msg_delete(struct pkt *p, uint32_t off, uint64_t id)
{
	wire_put_le64(pkt_msg(p, PITCH_DELETE, PITCH_DELETE_LEN, off) + PITCH_ORDER_ID, id);
}

static void msg_trade_long(struct pkt *p, uint32_t off, uint64_t id, char side, uint32_t qty,
			   const char *sym, uint64_t price4, uint64_t exec_id)
{
	uint8_t *m = pkt_msg(p, PITCH_TRADE_LONG, PITCH_TRADE_LONG_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le32(m + PITCH_ADD_LONG_QTY, qty);
	put_text(m + PITCH_ADD_LONG_SYMBOL, sym, PITCH_SYMBOL_SHORT_LEN);
	wire_put_le64(m + PITCH_ADD_LONG_PRICE, price4);
	wire_put_le64(m + PITCH_TRADE_LONG_EXECUTION, exec_id);
}

static void msg_trade_short(struct pkt *p, uint32_t off, uint64_t id, char side, uint16_t qty,
			    const char *sym, uint16_t cents, uint64_t exec_id)
{
	uint8_t *m = pkt_msg(p, PITCH_TRADE_SHORT, PITCH_TRADE_SHORT_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le16(m + PITCH_ADD_SHORT_QTY, qty);
	put_text(m + PITCH_ADD_SHORT_SYMBOL, sym, PITCH_SYMBOL_SHORT_LEN);
	wire_put_le16(m + PITCH_ADD_SHORT_PRICE, cents);
	wire_put_le64(m + PITCH_TRADE_SHORT_EXECUTION, exec_id);
}

static void msg_trade_expanded(struct pkt *p, uint32_t off, uint64_t id, char side, uint32_t qty,
			       const char *sym, uint64_t price4, uint64_t exec_id)
{
	uint8_t *m = pkt_msg(p, PITCH_TRADE_EXPANDED, PITCH_TRADE_EXPANDED_LEN, off);

	wire_put_le64(m + PITCH_ORDER_ID, id);
	m[PITCH_SIDE] = (uint8_t)side;
	wire_put_le32(m + PITCH_ADD_EXPANDED_QTY, qty);
	put_text(m + PITCH_ADD_EXPANDED_SYMBOL, sym, PITCH_SYMBOL_LEN);
	wire_put_le64(m + PITCH_ADD_EXPANDED_PRICE, price4);
	wire_put_le64(m + PITCH_TRADE_EXPANDED_EXECUTION, exec_id);
}

static void msg_trade_break(struct pkt *p, uint32_t off, uint64_t exec_id)
{
	uint8_t *m = pkt_msg(p, PITCH_TRADE_BREAK, PITCH_TRADE_BREAK_LEN, off);

	wire_put_le64(m + PITCH_TRADE_BREAK_EXECUTION, exec_id);
}

static void msg_trading_status(struct pkt *p, uint32_t off, const char *sym, char status)
{
	uint8_t *m = pkt_msg(p, PITCH_TRADING_STATUS, PITCH_TRADING_STATUS_LEN, off);

	put_text(m + PITCH_STATUS_SYMBOL, sym, PITCH_SYMBOL_LEN);
	m[PITCH_STATUS_STATUS] = (uint8_t)status;
	m[PITCH_STATUS_REG_SHO] = '0';
}

static void msg_auction_update(struct pkt *p, uint32_t off, const char *sym)
{
	uint8_t *m = pkt_msg(p, PITCH_AUCTION_UPDATE, PITCH_AUCTION_UPDATE_LEN, off);

	put_text(m + PITCH_STATUS_SYMBOL, sym, PITCH_SYMBOL_LEN);
	m[PITCH_AUCTION_TYPE] = 'O';
	wire_put_le64(m + PITCH_AUCTION_UPDATE_REFERENCE, 200000);
	wire_put_le32(m + PITCH_AUCTION_UPDATE_BUY, 500);
	wire_put_le32(m + PITCH_AUCTION_UPDATE_SELL, 300);
	wire_put_le64(m + PITCH_AUCTION_UPDATE_INDICATIVE, 200100);
	wire_put_le64(m + PITCH_AUCTION_UPDATE_AUCTION_ONLY, 200200);
}

static void msg_auction_summary(struct pkt *p, uint32_t off, const char *sym, char type,
				uint64_t price4, uint32_t shares)
{
	uint8_t *m = pkt_msg(p, PITCH_AUCTION_SUMMARY, PITCH_AUCTION_SUMMARY_LEN, off);

	put_text(m + PITCH_STATUS_SYMBOL, sym, PITCH_SYMBOL_LEN);
	m[PITCH_AUCTION_TYPE] = (uint8_t)type;
	wire_put_le64(m + PITCH_AUCTION_SUMMARY_PRICE, price4);
	wire_put_le32(m + PITCH_AUCTION_SUMMARY_SHARES, shares);
}

static void msg_rpi(struct pkt *p, uint32_t off, const char *sym, char rpi)
{
	uint8_t *m = pkt_msg(p, PITCH_RPI, PITCH_RPI_LEN, off);

	put_text(m + PITCH_STATUS_SYMBOL, sym, PITCH_SYMBOL_LEN);
	m[PITCH_RPI_INDICATOR] = (uint8_t)rpi;
}

/* ---- fixture --------------------------------------------------------------- */

static struct harness h;
static int line_a, line_b;

static void setup_with_capacity(uint32_t capacity)
{
	struct feed_engine_config cfg = { .alloc = test_zalloc, .free = free,
					  .order_filter_capacity = capacity };

	harness_init(&h, HARNESS_RING_SLOTS);
	ck_assert_int_eq(feed_engine_init(h.engine, &cfg), 0);
	line_a = feed_map_add(h.engine, ipv4(224, 0, 62, 2), 30001, FEED_PROTO_PITCH, WB_VENUE_BZX, "A");
	line_b = feed_map_add(h.engine, ipv4(224, 0, 62, 130), 30001, FEED_PROTO_PITCH,
			      WB_VENUE_BZX, "B");
	ck_assert_int_ge(line_a, 0);
	ck_assert_int_ge(line_b, 0);
}

static void setup(void)
{
	setup_with_capacity(4096);
}

static void teardown(void)
{
	harness_free(&h);
}

static struct feed_counters *counters(int line)
{
	return &h.engine->lines[line].counters;
}

static void send_pkt(int line, const struct pkt *p)
{
	harness_payload(&h, line, p->b, p->len);
}

static const struct wb_event *last(void)
{
	ck_assert_uint_gt(h.n, 0);
	return &h.events[h.n - 1];
}

static uint64_t total_errors(int line)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < FEED_ERR_COUNT; i++)
		n += counters(line)->errors[i];
	return n;
}

/* Unit 1 at sequence 1: Time 09:30:00, then an Add Short of 100 sym at 20.00. */
static void start_with_order(uint64_t id, const char *sym)
{
	struct pkt p;

	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	msg_add_short(&p, 1000, id, 'B', 100, sym, 2000);
	send_pkt(line_a, &p);
}

/* ---- the real captures ----------------------------------------------------- */

static void expect_lines(const char *const *want, size_t n)
{
	char buf[WB_EVENT_TEXT_MAX];
	size_t i;

	for (i = 0; i < n && i < h.n; i++) {
		wb_event_format(&h.events[i], buf, sizeof(buf));
		ck_assert_msg(strcmp(buf, want[i]) == 0, "event %zu:\n got  %s\n want %s", i, buf,
			      want[i]);
	}
	ck_assert_uint_eq(h.n, n);
}

static void map_byx_groups(void)
{
	/* The OMI BYX captures' groups: one unit per group. */
	ck_assert_int_ge(feed_map_add(h.engine, ipv4(233, 209, 92, 196), 30217, FEED_PROTO_PITCH,
				      WB_VENUE_BYX, "U17"), 0);
	ck_assert_int_ge(feed_map_add(h.engine, ipv4(233, 209, 92, 195), 30215, FEED_PROTO_PITCH,
				      WB_VENUE_BYX, "U15"), 0);
	ck_assert_int_ge(feed_map_add(h.engine, ipv4(233, 209, 92, 199), 30231, FEED_PROTO_PITCH,
				      WB_VENUE_BYX, "U31"), 0);
	ck_assert_int_ge(feed_map_add(h.engine, ipv4(233, 209, 92, 194), 30211, FEED_PROTO_PITCH,
				      WB_VENUE_BYX, "U11"), 0);
}

START_TEST(test_pitch_byx_add_order_short_capture_decodes_every_field)
{
	static const char *const want[] = {
		"1 00:00:00.000000000 byx/2 i=0 GAP first=1 count=14002 unit=17",
		"14003 00:00:00.000000000 byx/2 i=1 SYMBOL MAT key=0 lot=100",
		"14003 00:00:00.000000000 byx/2 i=1 ADD ref=2265901215303825392 B 400 @ 20.66",
		"1 00:00:00.000000000 byx/3 i=0 GAP first=1 count=47689 unit=15",
		"47691 09:30:00.000646000 byx/3 i=2 SYMBOL JDST key=0 lot=100",
		"47691 09:30:00.000646000 byx/3 i=2 ADD ref=2002657807619050517 B 21700 @ 7.56",
		"47692 09:30:00.000674000 byx/3 i=3 SYMBOL IXN key=0 lot=100",
		"47692 09:30:00.000674000 byx/3 i=3 ADD ref=2002657807619050519 B 200 @ 59.90",
		"47693 09:30:00.000771000 byx/3 i=4 SYMBOL IWO key=0 lot=100",
		"47693 09:30:00.000771000 byx/3 i=4 ADD ref=2002657807619050523 S 100 @ 235.26",
		"47694 09:30:00.000777000 byx/3 i=4 ADD ref=2002657807619050524 B 100 @ 234.14",
		"1 00:00:00.000000000 byx/4 i=0 GAP first=1 count=35741 unit=31",
		"35743 09:30:00.000754000 byx/4 i=5 SYMBOL YANG key=0 lot=100",
		"35743 09:30:00.000754000 byx/4 i=5 ADD ref=4108605069095453401 B 8200 @ 11.33",
		"35744 09:30:00.000772000 byx/4 i=6 SYMBOL XSVN key=0 lot=100",
		"35744 09:30:00.000772000 byx/4 i=6 ADD ref=4108605069095453402 B 100 @ 46.67",
	};

	feed_subscribe(h.engine, "*", 1);
	map_byx_groups();
	ck_assert_int_eq(harness_pcap(&h, PCAP_DIR "AddOrderShortMessage.pcap"), 5);
	expect_lines(want, sizeof(want) / sizeof(want[0]));
	/* No Time on unit 17 in the capture: its exchange time is unknown (0). */
	ck_assert_uint_eq(h.events[2].exch_ts, 0);
	ck_assert_uint_eq(h.events[5].exch_ts, feed_et_midnight_of_date(2023, 8, 22) + TS(646000));
	ck_assert_int_eq(h.events[5].u.order.price, 756000000);
	ck_assert_uint_eq(h.events[5].u.order.order_id, 0x1BCADEAA5DCBCC15ull);
}
END_TEST

START_TEST(test_pitch_byx_multiple_messages_capture_decodes_time_and_two_adds)
{
	static const char *const want[] = {
		"1 00:00:00.000000000 byx/4 i=0 GAP first=1 count=35741 unit=31",
		"35743 09:30:00.000754000 byx/4 i=1 SYMBOL YANG key=0 lot=100",
		"35743 09:30:00.000754000 byx/4 i=1 ADD ref=4108605069095453401 B 8200 @ 11.33",
		"35744 09:30:00.000772000 byx/4 i=2 SYMBOL XSVN key=0 lot=100",
		"35744 09:30:00.000772000 byx/4 i=2 ADD ref=4108605069095453402 B 100 @ 46.67",
	};

	feed_subscribe(h.engine, "*", 1);
	map_byx_groups();
	harness_pcap(&h, PCAP_DIR "MultipleMessages.pcap");
	expect_lines(want, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(counters(4)->messages, 3);
	ck_assert_uint_eq(counters(4)->ignored, 1);	/* the Time message */
}
END_TEST

START_TEST(test_pitch_byx_modify_short_capture_modifies_a_known_order)
{
	static const char *const want[] = {
		"121843 00:00:00.000000000 byx/5 i=1 MODIFY ref=1476170992250056087 S 100 @ 27.87",
	};
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	map_byx_groups();
	/* The capture's Modify alone names an order nobody added: filtered. */
	harness_pcap(&h, PCAP_DIR "ModifyOrderShortMessage.pcap");
	ck_assert_uint_eq(counters(5)->filtered, 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_MODIFY), 0);

	/* With its Add seen first (one message earlier on unit 11), it applies. */
	feed_engine_reset_state(h.engine);
	h.n = 0;
	pkt_begin(&p, 11, 121842);
	msg_add_short(&p, 5, 0x147C69B244CCED97ull, 'S', 300, "ZVZZT", 2790);
	harness_payload(&h, 5, p.b, p.len);
	h.n = 0;
	harness_pcap(&h, PCAP_DIR "ModifyOrderShortMessage.pcap");
	/* Flags 0x01 (display only): the order loses its queue position. */
	expect_lines(want, 1);
	ck_assert_uint_eq(h.events[0].flags & WB_EVF_KEEPS_PRIORITY, 0);
	ck_assert_int_eq(h.events[0].u.order.price, 2787000000);
}
END_TEST

/*
 * The BATS lab's real-time capture: unit 1 heartbeats announce sequence 1,
 * the first data packet is sequence 3 (1-2 never reached the capture), and
 * then every PITCH 2.x order message of 2016 comes by: add, execute, trade,
 * modify, reduce, delete. A second source sends unit 1 heartbeats with
 * sequence 0 to the .191 group.
 */
START_TEST(test_pitch_bats_realtime_capture_decodes_with_its_one_gap)
{
	static const char *const want[] = {
		"1 00:00:00.000000000 bzx/2 i=0 GAP first=1 count=2 unit=1",
		"4 21:07:31.544822000 bzx/2 i=1 SYMBOL A key=0 lot=100",
		"4 21:07:31.544822000 bzx/2 i=1 ADD ref=245620911467925505 B 100 @ 20.00",
		"6 21:07:54.279119000 bzx/2 i=1 EXEC ref=245620911467925505 qty=100 match=146932807681 f=printable",
		"8 21:08:24.614870000 bzx/2 i=1 TRADE ref=245620911467925510 B 100 @ 20.01 match=146932807682 f=printable",
		"10 21:08:44.693912000 bzx/2 i=1 ADD ref=245620911467925511 B 100 @ 0.0025",
		"12 21:08:54.270397000 bzx/2 i=1 EXEC ref=245620911467925511 qty=100 match=146932807683 f=printable",
		"14 21:09:08.878354000 bzx/2 i=1 ADD ref=245620911467925515 B 100 @ 0.0025",
		"16 21:09:25.397857000 bzx/2 i=1 EXEC ref=245620911467925515 qty=100 match=146932807684 f=printable",
		"17 21:09:25.397857000 bzx/2 i=1 TRADE ref=245620911467925519 B 100 @ 0.0025 match=146932807685 f=printable",
		"18 21:09:25.397857000 bzx/2 i=1 TRADE ref=245620911467925520 B 200 @ 0.0025 match=146932807686 f=printable",
		"20 21:09:52.469206000 bzx/2 i=1 ADD ref=245620911467925521 B 300 @ 20.05",
		"22 21:10:11.531588000 bzx/2 i=1 MODIFY ref=245620911467925521 B 400 @ 20.05",
		"24 21:10:22.003334000 bzx/2 i=1 DELETE ref=245620911467925521",
		"26 21:10:39.300327000 bzx/2 i=1 ADD ref=245620911467925522 B 1000 @ 0.0025",
		"28 21:10:53.531568000 bzx/2 i=1 MODIFY ref=245620911467925522 B 1000 @ 0.0026",
		"30 21:11:54.138521000 bzx/2 i=1 DELETE ref=245620911467925522",
		"32 21:12:07.571882000 bzx/2 i=1 ADD ref=245620911467925523 B 1000 @ 20.04",
		"34 21:12:16.095582000 bzx/2 i=1 REDUCE ref=245620911467925523 qty=100",
		"36 21:12:22.058056000 bzx/2 i=1 DELETE ref=245620911467925523",
		"38 21:12:30.355192000 bzx/2 i=1 ADD ref=245620911467925524 B 1000 @ 0.0029",
		"40 21:12:46.936936000 bzx/2 i=1 REDUCE ref=245620911467925524 qty=100",
		"42 21:13:10.793166000 bzx/2 i=1 DELETE ref=245620911467925524",
	};
	int a, b;

	feed_subscribe(h.engine, "*", 1);
	a = feed_map_add(h.engine, ipv4(239, 39, 62, 190), 32001, FEED_PROTO_PITCH, WB_VENUE_BZX, "RT");
	b = feed_map_add(h.engine, ipv4(239, 39, 62, 191), 32001, FEED_PROTO_PITCH, WB_VENUE_BZX, "RT2");
	harness_pcap(&h, PCAP_DIR "bats-mcastpitch_realtime_useq.pcap");
	expect_lines(want, sizeof(want) / sizeof(want[0]));
	/* Modify Long: 1000 at $0.0026, the price in 1e-8 exactly. */
	ck_assert_int_eq(h.events[15].u.order.price, 260000);
	ck_assert_uint_eq(h.events[2].u.order.order_id, 0x03689EEAE9741001ull);
	ck_assert_uint_eq(counters(a)->messages, 40);
	ck_assert_uint_eq(counters(a)->ignored, 19);	/* the Time messages */
	ck_assert_uint_eq(counters(a)->gaps, 1);
	ck_assert_uint_eq(counters(a)->gap_messages, 2);
	ck_assert_uint_eq(total_errors(a), 0);
	ck_assert_uint_eq(total_errors(b), 0);
	ck_assert_uint_eq(counters(b)->heartbeats, counters(b)->packets);
	ck_assert_uint_eq(counters(b)->events, 0);
	ck_assert_uint_eq(counters(a)->duplicates, 0);
	ck_assert_uint_eq(counters(a)->filtered, 0);
}
END_TEST

/* TCP payloads of a capture, in order, fed to a PITCH line. */
static int feed_tcp_payloads(const char *path, int line)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *d;
	pcap_t *pc = pcap_open_offline(path, err);
	int payloads = 0;

	ck_assert_msg(pc != NULL, "%s: %s", path, err);
	while (pcap_next_ex(pc, &hdr, &d) == 1) {
		uint32_t ip = 14, ihl, total, tcp, doff;

		ck_assert_uint_ge(hdr->caplen, 54);
		ck_assert_uint_eq(d[12] << 8 | d[13], 0x0800);
		ck_assert_uint_eq(d[ip + 9], 6);	/* TCP */
		ihl = (d[ip] & 15u) * 4;
		total = (uint32_t)d[ip + 2] << 8 | d[ip + 3];
		tcp = ip + ihl;
		doff = (d[tcp + 12] >> 4) * 4u;
		if (total > ihl + doff) {
			harness_payload(&h, line, d + tcp + doff, total - ihl - doff);
			payloads++;
		}
	}
	pcap_close(pc);
	return payloads;
}

static void expect_not_multicast(const char *path)
{
	int n;

	/* Through the frame path these TCP frames are not for any line at all. */
	ck_assert_int_gt(harness_pcap(&h, path), 0);
	ck_assert_uint_eq(counters(line_a)->packets, 0);
	/* Their payloads handed to a PITCH line are each recognized and refused. */
	n = feed_tcp_payloads(path, line_a);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(counters(line_a)->packets, (uint64_t)n);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_NOT_MULTICAST], (uint64_t)n);
	ck_assert_uint_eq(total_errors(line_a), (uint64_t)n);
	ck_assert_uint_eq(counters(line_a)->messages, 0);
	ck_assert_uint_eq(counters(line_a)->heartbeats, 0);
	ck_assert_uint_eq(h.n, 0);
}

START_TEST(test_pitch_bats_gap_request_proxy_session_is_reported_as_not_multicast)
{
	feed_subscribe(h.engine, "*", 1);
	expect_not_multicast(PCAP_DIR "bats-mcastpitch_grp_useq.pcap");
}
END_TEST

START_TEST(test_pitch_bats_spin_session_is_reported_as_not_multicast)
{
	feed_subscribe(h.engine, "*", 1);
	expect_not_multicast(PCAP_DIR "bats-mcastpitch_spin_useq.pcap");
}
END_TEST

/* ---- one golden message per type ------------------------------------------ */

START_TEST(test_pitch_time_composes_timestamps_per_unit)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	msg_add_short(&p, 123456789, 1, 'B', 100, "AAA", 100);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->exch_ts, TS(123456789));
	/* Unit 2 has no Time yet: unknown, not unit 1's. */
	pkt_begin(&p, 2, 1);
	msg_add_short(&p, 5, 2, 'B', 100, "AAA", 100);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->exch_ts, 0);
	pkt_begin(&p, 2, 2);
	msg_time(&p, SEC_0930 + 1);
	msg_add_short(&p, 5, 3, 'B', 100, "AAA", 100);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->exch_ts, TS(1000000005));
}
END_TEST

START_TEST(test_pitch_add_order_long_normalizes_its_4dp_price)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	msg_add_long(&p, 77, 0xABCDEF0123ull, 'S', 1000000, "BRK", 7123456789ull);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(h.events[0].kind, WB_EV_SYMBOL);
	ck_assert_mem_eq(h.events[0].u.symbol.ticker, "BRK     ", 8);
	ck_assert_uint_eq(h.events[0].u.symbol.round_lot, 100);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->side, WB_SIDE_SELL);
	ck_assert_uint_eq(last()->u.order.order_id, 0xABCDEF0123ull);
	ck_assert_uint_eq(last()->u.order.qty, 1000000);
	ck_assert_int_eq(last()->u.order.price, 71234567890000ll); /* $712,345.6789 */
	ck_assert_uint_eq(last()->seq, 2);
	ck_assert_uint_eq(last()->venue, WB_VENUE_BZX);
	ck_assert_uint_eq(last()->line, line_a);
	ck_assert_uint_eq(last()->exch_ts, TS(77));
}
END_TEST

START_TEST(test_pitch_add_order_short_normalizes_its_2dp_price)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 0, 9, 'B', 65535, "ZVZZT", 65535);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->u.order.qty, 65535);
	ck_assert_int_eq(last()->u.order.price, PRICE(65535));
	ck_assert_uint_eq(last()->side, WB_SIDE_BUY);
	ck_assert_mem_eq(last()->u.order.mpid, "\0\0\0\0", 4);
}
END_TEST

START_TEST(test_pitch_add_order_expanded_reads_8_char_symbol_and_participant)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_expanded(&p, 41, 0, 10, 'B', 300, "BRK.B", 4123400, "RTAL");
	msg_add_expanded(&p, 41, 0, 11, 'S', 200, "ABCDEFGH", 10000, "    ");
	/* The 2015 layout ended at Add Flags (36 bytes): no participant. */
	msg_add_expanded(&p, 36, 0, 12, 'S', 100, "ABCDEFGH", 20000, NULL);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 5);
	ck_assert_mem_eq(h.events[0].u.symbol.ticker, "BRK.B   ", 8);
	ck_assert_int_eq(h.events[1].u.order.price, 41234000000ll);
	ck_assert_mem_eq(h.events[1].u.order.mpid, "RTAL", 4);
	ck_assert_mem_eq(h.events[2].u.symbol.ticker, "ABCDEFGH", 8);
	ck_assert_mem_eq(h.events[3].u.order.mpid, "\0\0\0\0", 4);
	ck_assert_uint_eq(h.events[4].u.order.order_id, 12);
	ck_assert_mem_eq(h.events[4].u.order.mpid, "\0\0\0\0", 4);
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

START_TEST(test_pitch_order_executed_names_the_order_instrument_and_removes_it_at_zero)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_executed(&p, 2000, 500, 40, 0x77);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(last()->side, WB_SIDE_BUY);
	ck_assert_uint_eq(last()->u.order.order_id, 500);
	ck_assert_uint_eq(last()->u.order.qty, 40);
	ck_assert_uint_eq(last()->u.order.ref, 0x77);
	ck_assert_uint_eq(last()->flags, WB_EVF_PRINTABLE);
	ck_assert_uint_eq(last()->exch_ts, TS(2000));
	/* The last 60 shares take the order out of the filter: nothing follows. */
	pkt_begin(&p, 1, 4);
	msg_executed(&p, 2001, 500, 60, 0x78);
	msg_delete(&p, 2002, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE);
	ck_assert_uint_eq(last()->u.order.qty, 60);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_pitch_order_executed_at_price_reports_trade_price_and_reduces_to_remaining)
{
	struct pkt p;
	size_t before;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");		/* 100 shares */
	pkt_begin(&p, 1, 3);
	msg_executed_at_price(&p, 3000, 500, 30, 70, 0x99, 200100);	/* remaining as expected */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_uint_eq(last()->u.order.qty, 30);
	ck_assert_int_eq(last()->u.order.price, 2001000000);
	ck_assert_uint_eq(last()->u.order.ref, 0x99);
	ck_assert_uint_eq(last()->flags, WB_EVF_PRINTABLE);
	/* 70 left, 20 executed, 10 remain: the other 40 were cancelled. */
	before = h.n;
	pkt_begin(&p, 1, 4);
	msg_executed_at_price(&p, 3001, 500, 20, 10, 0x9a, 200100);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, before + 2);
	ck_assert_uint_eq(h.events[before].kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_uint_eq(h.events[before + 1].kind, WB_EV_REDUCE);
	ck_assert_uint_eq(h.events[before + 1].u.order.qty, 40);
	ck_assert_uint_eq(h.events[before + 1].seq, 4);
	/* Remaining 0: the order is gone. */
	pkt_begin(&p, 1, 5);
	msg_executed_at_price(&p, 3002, 500, 10, 0, 0x9b, 200100);
	msg_delete(&p, 3003, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_pitch_executed_at_price_refill_flags_the_instrument_book)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");		/* 100 shares */
	pkt_begin(&p, 1, 3);
	msg_executed_at_price(&p, 3000, 500, 100, 100, 0x99, 200100);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.events[h.n - 2].kind, WB_EV_EXECUTE_AT_PRICE);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(last()->u.gap.first, 3);
	ck_assert_uint_eq(last()->u.gap.count, 1);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 1);
}
END_TEST

START_TEST(test_pitch_reduce_size_long_and_short_cancel_part_of_the_order)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_reduce_long(&p, 10, 500, 30);
	msg_reduce_short(&p, 11, 500, 20);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.events[h.n - 2].kind, WB_EV_REDUCE);
	ck_assert_uint_eq(h.events[h.n - 2].u.order.qty, 30);
	ck_assert_uint_eq(last()->kind, WB_EV_REDUCE);
	ck_assert_uint_eq(last()->u.order.qty, 20);
	ck_assert_uint_eq(last()->u.order.order_id, 500);
	ck_assert_uint_eq(last()->seq, 4);
	/* 50 left; cancelling them all removes the order. */
	pkt_begin(&p, 1, 5);
	msg_reduce_short(&p, 12, 500, 50);
	msg_delete(&p, 13, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_REDUCE);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_pitch_modify_keeps_priority_only_when_the_flag_says_so)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_modify_short(&p, 10, 500, 80, 2000, 0x03);	/* Display + Maintain Priority */
	msg_modify_long(&p, 11, 500, 120, 200500, 0x01);	/* Display only */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.events[h.n - 2].kind, WB_EV_MODIFY);
	ck_assert_uint_eq(h.events[h.n - 2].flags, WB_EVF_KEEPS_PRIORITY);
	ck_assert_uint_eq(h.events[h.n - 2].u.order.qty, 80);
	ck_assert_int_eq(h.events[h.n - 2].u.order.price, PRICE(2000));
	ck_assert_uint_eq(h.events[h.n - 2].side, WB_SIDE_BUY);
	ck_assert_uint_eq(last()->kind, WB_EV_MODIFY);
	ck_assert_uint_eq(last()->flags, 0);
	ck_assert_uint_eq(last()->u.order.qty, 120);
	ck_assert_int_eq(last()->u.order.price, 2005000000);
	/* The modified size is what an execution then takes from. */
	pkt_begin(&p, 1, 5);
	msg_executed(&p, 12, 500, 120, 1);
	msg_delete(&p, 13, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_pitch_modify_to_zero_is_a_delete)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_modify_short(&p, 10, 500, 0, 2000, 0x01);
	msg_executed(&p, 11, 500, 1, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_DELETE);
	ck_assert_uint_eq(last()->u.order.order_id, 500);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
}
END_TEST

START_TEST(test_pitch_delete_removes_the_order)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_delete(&p, 10, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_DELETE);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(last()->u.order.order_id, 500);
	ck_assert_uint_eq(last()->exch_ts, TS(10));
	/* A deleted id may come back later with a new Add (notes: Messages). */
	pkt_begin(&p, 1, 4);
	msg_add_short(&p, 11, 500, 'S', 10, "AAA", 2100);
	msg_delete(&p, 12, 500);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_DELETE);
	ck_assert_uint_eq(counters(line_a)->filtered, 0);
}
END_TEST

START_TEST(test_pitch_trades_long_short_expanded_are_printable_and_carry_the_symbol)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	msg_trade_long(&p, 1, 0, 'S', 250, "AAA", 201234, 0x1001);
	msg_trade_short(&p, 2, 0, 'B', 50, "AAA", 2012, 0x1002);
	msg_trade_expanded(&p, 3, 42, 'B', 70000, "LONGNAME", 99990000, 0x1003);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 5);
	ck_assert_uint_eq(h.events[1].kind, WB_EV_TRADE);
	ck_assert_uint_eq(h.events[1].side, WB_SIDE_SELL);
	ck_assert_uint_eq(h.events[1].u.trade.qty, 250);
	ck_assert_int_eq(h.events[1].u.trade.price, 2012340000);
	ck_assert_uint_eq(h.events[1].u.trade.match_id, 0x1001);
	ck_assert_uint_eq(h.events[1].flags, WB_EVF_PRINTABLE);
	ck_assert_int_eq(h.events[2].u.trade.price, PRICE(2012));
	ck_assert_uint_eq(h.events[2].u.trade.qty, 50);
	ck_assert_mem_eq(h.events[3].u.symbol.ticker, "LONGNAME", 8);
	ck_assert_uint_eq(h.events[4].u.trade.order_id, 42);
	ck_assert_int_eq(h.events[4].u.trade.price, 999900000000ll);
	ck_assert_uint_eq(h.events[4].u.trade.match_id, 0x1003);
	ck_assert_uint_eq(h.events[4].exch_ts, TS(3));
}
END_TEST

START_TEST(test_pitch_trade_break_is_venue_wide_with_the_execution_id)
{
	struct pkt p;

	feed_subscribe(h.engine, "AAA", 3);
	pkt_begin(&p, 1, 1);
	msg_trade_break(&p, 5, 0xBEEF);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_TRADE_BREAK);
	ck_assert_uint_eq(last()->instrument, 0);
	ck_assert_uint_eq(last()->u.trade.match_id, 0xBEEF);
}
END_TEST

START_TEST(test_pitch_trading_status_maps_every_state)
{
	static const struct {
		char code;
		uint8_t state;
	} map[] = {
		{ 'A', WB_STATE_PRE_OPEN }, { 'H', WB_STATE_HALTED }, { 'Q', WB_STATE_QUOTATION_ONLY },
		{ 'S', WB_STATE_PAUSED },   { 'T', WB_STATE_TRADING }, { 'X', WB_STATE_UNKNOWN },
	};
	struct pkt p;
	size_t i;

	feed_subscribe(h.engine, "*", 1);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		pkt_begin(&p, 1, (uint32_t)i + 1);
		msg_trading_status(&p, 0, "ABCDEFGH", map[i].code);
		send_pkt(line_a, &p);
		ck_assert_uint_eq(last()->kind, WB_EV_STATUS);
		ck_assert_uint_eq(last()->instrument, 1);
		ck_assert_uint_eq(last()->u.status.state, map[i].state);
		ck_assert_int_eq(last()->u.status.raw_state, map[i].code);
	}
}
END_TEST

START_TEST(test_pitch_auction_summary_is_a_cross_print_not_counted_twice)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_auction_summary(&p, 0, "AAA", 'C', 1234500, 98765);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_TRADE);
	ck_assert_uint_eq(last()->flags, WB_EVF_CROSS);
	ck_assert_int_eq(last()->u.trade.cross_type, 'C');
	ck_assert_int_eq(last()->u.trade.price, 12345000000ll);
	ck_assert_uint_eq(last()->u.trade.qty, 98765);
}
END_TEST

START_TEST(test_pitch_auction_update_rpi_and_symbol_mapping_are_ignored)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_auction_update(&p, 0, "AAA");
	msg_rpi(&p, 0, "AAA", 'A');
	pkt_msg(&p, 0x2E, 30, 0);	/* options-only Symbol Mapping */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_uint_eq(counters(line_a)->messages, 3);
	ck_assert_uint_eq(counters(line_a)->ignored, 3);
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

START_TEST(test_pitch_unit_clear_clears_that_units_instruments_and_orders)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");		/* unit 1, instrument 1 */
	pkt_begin(&p, 2, 1);
	msg_add_short(&p, 0, 600, 'S', 100, "BBB", 2000);	/* unit 2, instrument 2 */
	send_pkt(line_a, &p);
	h.n = 0;
	pkt_begin(&p, 1, 3);
	pkt_msg(&p, 0x97, 6, 50);
	msg_executed(&p, 51, 500, 10, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.events[0].kind, WB_EV_CLEAR);
	ck_assert_uint_eq(h.events[0].instrument, 1);
	ck_assert_uint_eq(h.events[0].seq, 3);
	ck_assert_uint_eq(h.events[0].exch_ts, TS(50));
	ck_assert_uint_eq(counters(line_a)->filtered, 1);	/* order 500 went with the clear */
	/* Unit 2's order is untouched. */
	pkt_begin(&p, 2, 2);
	msg_executed(&p, 0, 600, 10, 2);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE);
	ck_assert_uint_eq(last()->instrument, 2);
}
END_TEST

START_TEST(test_pitch_end_of_session_closes_the_units_instruments)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	h.n = 0;
	pkt_begin(&p, 1, 3);
	pkt_msg(&p, 0x2D, 6, 99);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_STATUS);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(last()->u.status.state, WB_STATE_CLOSED);
	ck_assert_uint_eq(last()->flags, WB_EVF_SESSION_END);
	ck_assert_uint_eq(counters(line_a)->end_of_session, 1);
	/* Heartbeats go on after the end of the session. */
	pkt_begin(&p, 1, 4);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->heartbeats, 1);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
}
END_TEST

/* ---- sequencing -------------------------------------------------------------- */

START_TEST(test_pitch_late_join_reports_the_missed_start_of_the_unit)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 7, 100);
	msg_time(&p, SEC_0930);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->u.gap.first, 1);
	ck_assert_uint_eq(last()->u.gap.count, 99);
	ck_assert_uint_eq(last()->u.gap.unit, 7);
}
END_TEST

START_TEST(test_pitch_gap_is_reported_per_unit_and_forgets_the_units_time)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");		/* unit 1, seq 1-2 */
	pkt_begin(&p, 2, 1);
	msg_time(&p, SEC_0930);
	send_pkt(line_a, &p);
	h.n = 0;
	pkt_begin(&p, 1, 6);
	msg_add_short(&p, 10, 501, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(h.events[0].kind, WB_EV_GAP);
	ck_assert_uint_eq(h.events[0].u.gap.first, 3);
	ck_assert_uint_eq(h.events[0].u.gap.count, 3);
	ck_assert_uint_eq(h.events[0].u.gap.unit, 1);
	/* The lost range may have held a Time: unit 1's time is unknown now. */
	ck_assert_uint_eq(h.events[1].exch_ts, 0);
	ck_assert_uint_eq(counters(line_a)->gap_messages, 3);
	/* Unit 2 lost nothing and keeps its time. */
	pkt_begin(&p, 2, 2);
	msg_add_short(&p, 10, 502, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->exch_ts, TS(10));
	ck_assert_uint_eq(counters(line_a)->gaps, 1);
}
END_TEST

START_TEST(test_pitch_b_line_copy_is_a_duplicate_and_fills_an_a_line_loss)
{
	struct pkt p1, p2, p3;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p1, 1, 1);
	msg_add_short(&p1, 1, 1, 'B', 100, "AAA", 2000);
	msg_add_short(&p1, 2, 2, 'B', 100, "AAA", 2000);
	pkt_begin(&p2, 1, 3);
	msg_add_short(&p2, 3, 3, 'B', 100, "AAA", 2000);
	pkt_begin(&p3, 1, 4);
	msg_delete(&p3, 4, 1);
	send_pkt(line_a, &p1);
	send_pkt(line_b, &p1);
	send_pkt(line_b, &p2);	/* A lost it */
	send_pkt(line_a, &p3);
	send_pkt(line_b, &p3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 3);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
	ck_assert_uint_eq(counters(line_b)->duplicates, 2);
	ck_assert_uint_eq(counters(line_b)->duplicate_messages, 3);
	ck_assert_uint_eq(counters(line_a)->messages + counters(line_b)->messages, 4);
}
END_TEST

START_TEST(test_pitch_overlapping_packet_decodes_only_its_new_messages)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	msg_add_short(&p, 2, 2, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	pkt_begin(&p, 1, 2);
	msg_add_short(&p, 2, 2, 'B', 100, "AAA", 2000);
	msg_add_short(&p, 3, 3, 'S', 100, "AAA", 2001);
	send_pkt(line_b, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 3);
	ck_assert_uint_eq(last()->u.order.order_id, 3);
	ck_assert_uint_eq(last()->seq, 3);
	ck_assert_uint_eq(counters(line_b)->duplicate_messages, 1);
	ck_assert_uint_eq(counters(line_b)->duplicates, 0);
}
END_TEST

START_TEST(test_pitch_heartbeat_carries_next_sequence_and_reveals_a_tail_gap)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);		/* heartbeat: next is 1, nothing missed */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 0);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);		/* next is 3: in step */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->gaps, 0);
	pkt_begin(&p, 1, 5);		/* messages 3 and 4 were sent and lost */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->u.gap.first, 3);
	ck_assert_uint_eq(last()->u.gap.count, 2);
	pkt_begin(&p, 1, 0);		/* sequence 0: counted, no sequence meaning */
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->heartbeats, 4);
	ck_assert_uint_eq(counters(line_a)->gaps, 1);
	ck_assert_uint_eq(total_errors(line_a), 0);
}
END_TEST

START_TEST(test_pitch_unit_clear_at_sequence_one_starts_a_new_day)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	pkt_msg(&p, 0x97, 6, 0);
	msg_add_short(&p, 5, 900, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
	ck_assert_uint_eq(counters(line_a)->duplicates, 0);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->u.order.order_id, 900);
	ck_assert_uint_eq(harness_count(&h, WB_EV_CLEAR), 1);
	/* Without a Unit Clear, sequence 1 again is just a duplicate. */
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->duplicates, 1);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
}
END_TEST

START_TEST(test_pitch_after_end_of_session_sequence_restarts)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	pkt_msg(&p, 0x2D, 6, 0);
	send_pkt(line_a, &p);
	pkt_begin(&p, 1, 1);
	msg_time(&p, SEC_0930 - 3600);
	msg_add_short(&p, 5, 1, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->session_changes, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->exch_ts, (uint64_t)(SEC_0930 - 3600) * 1000000000ull + 5);
}
END_TEST

/* ---- filtering ---------------------------------------------------------------- */

START_TEST(test_pitch_orders_of_unsubscribed_symbols_are_filtered_by_order_id)
{
	struct pkt p;

	ck_assert_int_eq(feed_subscribe(h.engine, "AAA", 3), 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	msg_add_short(&p, 2, 2, 'B', 100, "ZZZ", 2000);
	msg_executed(&p, 3, 2, 10, 1);
	msg_reduce_short(&p, 4, 2, 10);
	msg_modify_short(&p, 5, 2, 50, 2000, 0);
	msg_delete(&p, 6, 2);
	msg_trade_short(&p, 7, 0, 'B', 10, "ZZZ", 2000, 9);
	msg_trading_status(&p, 8, "ZZZ", 'T');
	msg_executed(&p, 9, 1, 10, 2);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->filtered, 7);
	ck_assert_uint_eq(h.n, 3);		/* SYMBOL, ADD, EXEC of AAA */
	ck_assert_uint_eq(last()->kind, WB_EV_EXECUTE);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(h.engine->subs.count, 1);	/* no id handed to ZZZ */
}
END_TEST

START_TEST(test_pitch_unsubscribing_drops_the_instruments_orders)
{
	struct pkt p;

	feed_subscribe(h.engine, "AAA", 3);
	start_with_order(500, "AAA");
	feed_unsubscribe(h.engine, "AAA", 3);
	pkt_begin(&p, 1, 3);
	msg_executed(&p, 1, 500, 10, 1);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	/* Subscribed again: the old order is not resurrected. */
	feed_subscribe(h.engine, "AAA", 3);
	pkt_begin(&p, 1, 4);
	msg_executed(&p, 1, 500, 10, 2);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->filtered, 2);
}
END_TEST

START_TEST(test_pitch_symbol_is_announced_once_per_venue_before_its_first_event)
{
	struct pkt p;
	int byx;

	feed_subscribe(h.engine, "*", 1);
	byx = feed_map_add(h.engine, ipv4(224, 0, 63, 2), 30101, FEED_PROTO_PITCH, WB_VENUE_BYX, "A");
	pkt_begin(&p, 1, 1);
	msg_trading_status(&p, 0, "AAA", 'T');
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	send_pkt(byx, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 2);
	ck_assert_uint_eq(h.events[0].kind, WB_EV_SYMBOL);
	ck_assert_uint_eq(h.events[0].venue, WB_VENUE_BZX);
	ck_assert_uint_eq(h.events[3].kind, WB_EV_SYMBOL);
	ck_assert_uint_eq(h.events[3].venue, WB_VENUE_BYX);
	ck_assert_uint_eq(h.events[3].instrument, h.events[0].instrument);
}
END_TEST

START_TEST(test_pitch_subscribing_before_the_session_flags_nothing)
{
	feed_subscribe(h.engine, "AAA", 3);
	start_with_order(500, "AAA");
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
	feed_subscribe(h.engine, "*", 1);	/* changed, but no packet since the start */
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
}
END_TEST

START_TEST(test_pitch_subscribing_mid_session_flags_the_new_instruments_book)
{
	struct pkt p;
	const struct wb_event *gap;
	int bbb;

	feed_subscribe(h.engine, "AAA", 3);
	start_with_order(500, "AAA");
	pkt_begin(&p, 1, 3);
	msg_add_short(&p, 1, 600, 'S', 100, "BBB", 2100);	/* not tracked */
	send_pkt(line_a, &p);
	bbb = feed_subscribe(h.engine, "BBB", 3);
	h.n = 0;
	pkt_begin(&p, 1, 4);
	msg_executed(&p, 2, 600, 10, 1);
	send_pkt(line_a, &p);
	/* BBB is named, then its book is flagged: order 600 is unknown to it. */
	ck_assert_uint_eq(h.events[0].kind, WB_EV_SYMBOL);
	ck_assert_int_eq(h.events[0].instrument, bbb);
	gap = harness_find(&h, WB_EV_GAP, 0);
	ck_assert_ptr_nonnull(gap);
	ck_assert_int_eq(gap->instrument, bbb);
	ck_assert_uint_eq(gap->u.gap.count, 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	ck_assert_uint_eq(counters(line_a)->filtered, 2);
	/* Off and on again with no packet between: nothing was missed. */
	feed_unsubscribe(h.engine, "BBB", 3);
	feed_subscribe(h.engine, "BBB", 3);
	pkt_begin(&p, 1, 5);
	send_pkt(line_a, &p);	/* a heartbeat */
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	/* Off while packets pass, then on: flagged again. */
	feed_unsubscribe(h.engine, "BBB", 3);
	send_pkt(line_a, &p);
	feed_subscribe(h.engine, "BBB", 3);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 2);
}
END_TEST

START_TEST(test_pitch_turning_on_all_mid_session_flags_the_whole_venue)
{
	struct pkt p;

	feed_subscribe(h.engine, "AAA", 3);
	start_with_order(500, "AAA");
	feed_subscribe(h.engine, "*", 1);
	h.n = 0;
	pkt_begin(&p, 1, 3);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->instrument, 0);
	ck_assert_uint_eq(last()->venue, WB_VENUE_BZX);
}
END_TEST

START_TEST(test_pitch_full_order_filter_counts_and_flags_the_instrument_book)
{
	struct pkt p;
	uint64_t id;

	teardown();
	setup_with_capacity(4);
	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	for (id = 1; id <= 5; id++)
		msg_add_short(&p, (uint32_t)id, id, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 4);
	ck_assert_uint_eq(counters(line_a)->order_filter_full, 1);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->instrument, 1);
	ck_assert_uint_eq(last()->u.gap.first, 5);
	ck_assert_uint_eq(last()->u.gap.count, 1);
	ck_assert_uint_eq(last()->u.gap.unit, 1);
	/* The untracked order's later messages are filtered, never misapplied. */
	pkt_begin(&p, 1, 6);
	msg_delete(&p, 6, 5);
	msg_delete(&p, 7, 1);
	msg_add_short(&p, 8, 6, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_DELETE), 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);	/* room again after the delete */
	ck_assert_uint_eq(counters(line_a)->order_filter_full, 1);
}
END_TEST

/* ---- malformed input ------------------------------------------------------------ */

START_TEST(test_pitch_truncated_message_loses_the_rest_of_the_packet_until_b_fills_it)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	msg_add_short(&p, 2, 2, 'B', 100, "AAA", 2000);
	/* A cut copy on A (header length adjusted to match), the whole one on B. */
	{
		struct pkt cut = p;

		cut.len -= 5;
		wire_put_le16(cut.b, cut.len);
		send_pkt(line_a, &cut);
	}
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	send_pkt(line_b, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 2);
	ck_assert_uint_eq(counters(line_b)->duplicate_messages, 1);
}
END_TEST

START_TEST(test_pitch_header_length_must_match_the_datagram)
{
	struct pkt p;
	uint8_t big[64];

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	harness_payload(&h, line_a, p.b, 20);	/* header says 34 */
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 1);
	ck_assert_uint_eq(h.n, 0);
	harness_payload(&h, line_a, p.b, 5);	/* not even a header */
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_TRUNCATED], 2);
	/* Trailing bytes after the block: counted, the block still decodes. */
	memset(big, 0xEE, sizeof(big));
	memcpy(big, p.b, p.len);
	harness_payload(&h, line_a, big, sizeof(big));
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
}
END_TEST

START_TEST(test_pitch_short_message_is_counted_and_skipped_by_its_length)
{
	struct pkt p;
	uint8_t *m;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	m = pkt_msg(&p, 0x22, 20, 0);	/* an Add Short needs 26 */
	m[14] = 'B';
	msg_add_short(&p, 2, 2, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->u.order.order_id, 2);
	ck_assert_uint_eq(last()->seq, 2);
}
END_TEST

START_TEST(test_pitch_longer_message_reads_its_known_prefix)
{
	struct pkt p;
	uint8_t *m;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	m = pkt_msg(&p, 0x22, 40, 0);	/* a future Add Short with 14 more bytes */
	wire_put_le64(m + 6, 77);
	m[14] = 'S';
	wire_put_le16(m + 15, 300);
	put_text(m + 17, "AAA", 6);
	wire_put_le16(m + 23, 1999);
	memset(m + 26, 0xFF, 14);
	msg_delete(&p, 1, 77);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(total_errors(line_a), 0);
	ck_assert_uint_eq(h.events[1].kind, WB_EV_ADD);
	ck_assert_uint_eq(h.events[1].u.order.qty, 300);
	ck_assert_int_eq(h.events[1].u.order.price, PRICE(1999));
	ck_assert_uint_eq(last()->kind, WB_EV_DELETE);
}
END_TEST

START_TEST(test_pitch_unknown_type_is_counted_and_skipped_by_its_length)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	pkt_msg(&p, 0x7A, 12, 0);
	msg_add_short(&p, 2, 2, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_UNKNOWN_TYPE], 1);
	ck_assert_uint_eq(last()->kind, WB_EV_ADD);
	ck_assert_uint_eq(last()->seq, 2);
}
END_TEST

START_TEST(test_pitch_length_below_two_stops_the_packet)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	pkt_msg(&p, 0x22, 26, 0)[0] = 1;
	msg_add_short(&p, 3, 3, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_LENGTH], 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	/* The next packet reports the two lost messages. */
	pkt_begin(&p, 1, 4);
	msg_time(&p, SEC_0930);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(last()->kind, WB_EV_GAP);
	ck_assert_uint_eq(last()->u.gap.first, 2);
	ck_assert_uint_eq(last()->u.gap.count, 2);
}
END_TEST

START_TEST(test_pitch_bad_side_and_overflowing_price_are_bad_fields)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 1, 1);
	msg_add_short(&p, 1, 1, 'X', 100, "AAA", 2000);
	msg_add_long(&p, 1, 2, 'B', 100, "AAA", 0xFFFFFFFFFFFFFFFFull);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_BAD_FIELD], 2);
	ck_assert_uint_eq(h.n, 0);
}
END_TEST

START_TEST(test_pitch_unsequenced_and_unit_zero_blocks_are_not_multicast)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	pkt_begin(&p, 0, 5);		/* unit 0: a TCP session */
	msg_time(&p, SEC_0930);
	send_pkt(line_a, &p);
	pkt_begin(&p, 1, 0);		/* sequence 0 with messages: a spin */
	msg_add_short(&p, 1, 1, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	pkt_begin(&p, 1, 1);		/* a session message inside a sequenced block */
	pkt_msg(&p, 0x80, 6, 312);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(counters(line_a)->errors[FEED_ERR_NOT_MULTICAST], 3);
	ck_assert_uint_eq(h.n, 0);
}
END_TEST

START_TEST(test_pitch_state_reset_forgets_orders_and_sequences)
{
	struct pkt p;

	feed_subscribe(h.engine, "*", 1);
	start_with_order(500, "AAA");
	feed_engine_reset_state(h.engine);
	h.n = 0;
	pkt_begin(&p, 1, 3);
	msg_delete(&p, 1, 500);
	send_pkt(line_a, &p);
	/* A fresh start: the first packet at 3 reports 1-2, the order is unknown. */
	ck_assert_uint_eq(h.events[0].kind, WB_EV_GAP);
	ck_assert_uint_eq(h.events[0].u.gap.count, 2);
	ck_assert_uint_eq(counters(line_a)->filtered, 1);
	/* And the symbol is announced again before its next event. */
	pkt_begin(&p, 1, 4);
	msg_add_short(&p, 1, 501, 'B', 100, "AAA", 2000);
	send_pkt(line_a, &p);
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 1);
}
END_TEST

/* ---- the generator's output -------------------------------------------------- */

static const uint8_t cboe_venues[] = { WB_VENUE_BZX, WB_VENUE_BYX, WB_VENUE_EDGX, WB_VENUE_EDGA };

struct gen_to_engine {
	int line[WB_VENUE_COUNT];
	uint32_t group[WB_VENUE_COUNT];
};

static int sink_to_engine(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
			  const uint8_t *payload, uint32_t len)
{
	struct gen_to_engine *g = ctx;
	int v;

	(void)ts_ns;
	(void)dst_port;
	for (v = 0; v < WB_VENUE_COUNT; v++) {
		if (g->group[v] && g->group[v] == dst_ip) {
			feed_process_payload(h.engine, g->line[v], payload, len, 0, &h.prod);
			harness_drain(&h);
			h.n = 0;	/* keep counts, not events */
			return 0;
		}
	}
	ck_abort_msg("packet to an unknown group %08x", dst_ip);
	return -1;
}

/*
 * The demo day on the four Cboe venues, through the encoder and back
 * through the decoder with every symbol subscribed: every order message
 * must find its order (replaces became Modifies of aliased ids), nothing
 * lost, nothing malformed, and the flash orders that lock and cross the
 * other venues come and go.
 */
START_TEST(test_pitch_generated_day_on_four_venues_decodes_without_loss)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DEMO, .seed = 7 };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_pitch *enc = calloc(4, sizeof(*enc));
	struct gen_to_engine ctx = { { 0 } };
	struct gen_action a;
	uint64_t last = 0, flash = 0, adds[WB_VENUE_COUNT] = { 0 };
	size_t i;

	ck_assert_ptr_nonnull(flow);
	ck_assert_ptr_nonnull(enc);
	feed_subscribe(h.engine, "*", 1);
	for (i = 0; i < 4; i++)
		fcfg.venues |= 1u << cboe_venues[i];
	ck_assert_int_eq(gen_flow_init(flow, &fcfg), 0);
	for (i = 0; i < 4; i++) {
		uint8_t v = cboe_venues[i];
		struct gen_pitch_config cfg = { .venue = v, .unit = (uint8_t)(i + 1),
						.a_ip = ipv4(224, 0, 70, v), .a_port = 30001,
						.seed = 7, .dup_every = 50,
						.sink = { .packet = sink_to_engine, .ctx = &ctx } };

		ctx.group[v] = cfg.a_ip;
		ctx.line[v] = feed_map_add(h.engine, cfg.a_ip, 30001, FEED_PROTO_PITCH, v, "A");
		ck_assert_int_ge(ctx.line[v], 0);
		ck_assert_int_eq(gen_pitch_init(&enc[i], &cfg), 0);
	}
	while (gen_flow_next(flow, &a) == 1) {
		last = a.ts;
		if (a.kind == GEN_ADD)
			adds[a.venue]++;
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(gen_pitch_action(&enc[i], flow, &a), 0);
	}
	for (i = 0; i < 4; i++) {
		uint8_t v = cboe_venues[i];
		struct feed_counters *c = counters(ctx.line[v]);

		ck_assert_int_eq(gen_pitch_finish(&enc[i], last + 1000), 0);
		ck_assert_uint_gt(adds[v], 1000);
		ck_assert_msg(total_errors(ctx.line[v]) == 0, "venue %u: errors", v);
		ck_assert_uint_eq(c->gaps, 0);
		ck_assert_uint_eq(c->filtered, 0);
		ck_assert_uint_eq(c->order_filter_full, 0);
		ck_assert_uint_eq(c->end_of_session, 1);
		ck_assert_uint_eq(c->messages, enc[i].stats.messages);
		ck_assert_uint_eq(c->duplicates, enc[i].stats.duplicated_packets);
		ck_assert_uint_gt(enc[i].stats.by_type[0x28] + enc[i].stats.by_type[0x27], 0);
		/* Every Add the decoder saw was the flow's or a flash order. */
		ck_assert_uint_eq(enc[i].stats.by_type[0x21] + enc[i].stats.by_type[0x22] +
				  enc[i].stats.by_type[0x2F],
				  adds[v] + enc[i].stats.locking_orders + enc[i].stats.crossing_orders);
		flash += enc[i].stats.locking_orders + enc[i].stats.crossing_orders;
		gen_pitch_destroy(&enc[i]);
	}
	ck_assert_uint_gt(flash, 0);
	gen_flow_destroy(flow);
	free(flow);
	free(enc);
}
END_TEST

/*
 * The same kind of day with Nasdaq ITCH next to the four Cboe venues, into
 * venue books: no venue's own book ever locks or crosses, while the NBBO
 * across venues sometimes does (the generator's flash orders), and most of
 * the time it is built from more than one venue.
 */
struct nbbo_check {
	struct venue_books *vb;
	int line[WB_VENUE_COUNT];
	uint32_t group[WB_VENUE_COUNT];
	uint64_t own_crossed, nbbo_locked, nbbo_crossed, nbbo_checks, split_nbbo;
};

static void check_instrument(struct nbbo_check *c, uint16_t inst)
{
	struct venue_level bid[WB_VENUE_COUNT], ask[WB_VENUE_COUNT];
	int64_t best_bid = 0, best_ask = 0;
	bool one_venue_at_both = false;
	int v;

	for (v = WB_VENUE_NASDAQ; v <= WB_VENUE_EDGA; v++) {
		ck_assert_int_eq(venue_books_bbo(c->vb, (uint8_t)v, inst, &bid[v], &ask[v]), 0);
		if (bid[v].qty && ask[v].qty && bid[v].price >= ask[v].price)
			c->own_crossed++;
		if (bid[v].qty && (!best_bid || bid[v].price > best_bid))
			best_bid = bid[v].price;
		if (ask[v].qty && (!best_ask || ask[v].price < best_ask))
			best_ask = ask[v].price;
	}
	if (!best_bid || !best_ask)
		return;
	for (v = WB_VENUE_NASDAQ; v <= WB_VENUE_EDGA; v++)
		one_venue_at_both |= bid[v].qty && ask[v].qty && bid[v].price == best_bid &&
				     ask[v].price == best_ask;
	c->nbbo_checks++;
	c->nbbo_locked += best_bid == best_ask;
	c->nbbo_crossed += best_bid > best_ask;
	/* No single venue shows the NBBO: it exists only across venues. */
	c->split_nbbo += !one_venue_at_both;
}

static int sink_to_books(void *ctx, uint64_t ts_ns, uint32_t dst_ip, uint16_t dst_port,
			 const uint8_t *payload, uint32_t len)
{
	struct nbbo_check *c = ctx;
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];
	size_t i;
	int v;

	(void)ts_ns;
	(void)dst_port;
	for (v = 0; v < WB_VENUE_COUNT && c->group[v] != dst_ip; v++)
		;
	ck_assert_int_lt(v, WB_VENUE_COUNT);
	feed_process_payload(h.engine, c->line[v], payload, len, 0, &h.prod);
	harness_drain(&h);
	for (i = 0; i < h.n; i++) {
		venue_books_apply(c->vb, &h.events[i], out);
		if (h.events[i].instrument && h.events[i].kind <= WB_EV_MODIFY)
			check_instrument(c, h.events[i].instrument);
	}
	h.n = 0;
	return 0;
}

START_TEST(test_pitch_generated_nbbo_locks_and_crosses_across_venues_never_within_one)
{
	struct gen_flow_config fcfg = { .profile = GEN_PROFILE_DEMO, .seed = 3,
					.venues = 1u << WB_VENUE_NASDAQ };
	struct venue_books_config bcfg = { .max_instruments = 64, .expected_orders = 1u << 16,
					   .numa_node = -1 };
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_pitch *enc = calloc(4, sizeof(*enc));
	struct gen_itch *itch = calloc(1, sizeof(*itch));
	struct gen_itch_config icfg = { .a_ip = ipv4(233, 54, 12, 111), .a_port = 26477 };
	struct nbbo_check c = { 0 };
	struct gen_action a;
	uint64_t last = 0;
	size_t i;

	ck_assert_ptr_nonnull(flow);
	ck_assert_ptr_nonnull(enc);
	ck_assert_ptr_nonnull(itch);
	c.vb = venue_books_create(&bcfg);
	ck_assert_ptr_nonnull(c.vb);
	feed_subscribe(h.engine, "*", 1);
	c.group[WB_VENUE_NASDAQ] = icfg.a_ip;
	c.line[WB_VENUE_NASDAQ] = feed_map_add(h.engine, icfg.a_ip, 26477, FEED_PROTO_ITCH50,
					       WB_VENUE_NASDAQ, "A");
	memcpy(icfg.session, "TESTPITCH1", 10);
	icfg.sink = (struct gen_packet_sink){ .packet = sink_to_books, .ctx = &c };
	gen_itch_init(itch, &icfg);
	for (i = 0; i < 4; i++) {
		uint8_t v = cboe_venues[i];
		struct gen_pitch_config cfg = { .venue = v, .a_ip = ipv4(224, 0, 70, v),
						.a_port = 30001, .seed = 3,
						.sink = { .packet = sink_to_books, .ctx = &c } };

		fcfg.venues |= 1u << v;
		c.group[v] = cfg.a_ip;
		c.line[v] = feed_map_add(h.engine, cfg.a_ip, 30001, FEED_PROTO_PITCH, v, "A");
		ck_assert_int_eq(gen_pitch_init(&enc[i], &cfg), 0);
	}
	ck_assert_int_eq(gen_flow_init(flow, &fcfg), 0);
	while (gen_flow_next(flow, &a) == 1) {
		last = a.ts;
		if (a.venue == WB_VENUE_NASDAQ)
			ck_assert_int_eq(gen_itch_action(itch, flow, &a), 0);
		for (i = 0; i < 4; i++)
			ck_assert_int_eq(gen_pitch_action(&enc[i], flow, &a), 0);
	}
	ck_assert_int_eq(gen_itch_finish(itch, last + 1000), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(gen_pitch_finish(&enc[i], last + 1000), 0);
		gen_pitch_destroy(&enc[i]);
	}
	ck_assert_uint_eq(venue_books_counters(c.vb)->unknown_order, 0);
	ck_assert_uint_eq(c.own_crossed, 0);
	ck_assert_uint_gt(c.nbbo_checks, 10000);
	ck_assert_uint_gt(c.nbbo_locked, 0);
	ck_assert_uint_gt(c.nbbo_crossed, 0);
	/* Brief moments, not the rule. */
	ck_assert_uint_lt((c.nbbo_locked + c.nbbo_crossed) * 10, c.nbbo_checks);
	ck_assert_uint_gt(c.split_nbbo * 100, c.nbbo_checks);
	printf("generated NBBO: %" PRIu64 " checks, %" PRIu64 " locked, %" PRIu64 " crossed, %"
	       PRIu64 " shown by no single venue\n", c.nbbo_checks, c.nbbo_locked, c.nbbo_crossed,
	       c.split_nbbo);
	venue_books_destroy(c.vb);
	gen_flow_destroy(flow);
	free(flow);
	free(enc);
	free(itch);
}
END_TEST

/*
 * Golden bytes: each message type written out by hand from the spec's
 * offsets (notes: Messages, Executions, Status), independent of the
 * builders above, after a setup packet on unit 1: Time 09:30:00 (seq 1)
 * and Add Short of order 171, B 100 ZVZZT at $20.00 (seq 2). The message
 * under test is sequence 3 at offset 2,000 ns.
 */
static const char golden_setup[] =
	"2800 02 01 01000000"
	"06 20 98850000"
	"1a 22 e8030000 ab00000000000000 42 6400 5a565a5a5420 d007 01";

static const struct {
	const char *name;
	const char *message;		/* after the 8-byte header */
	const char *event;		/* the last event, or NULL: none */
} golden[] = {
	{ "0x21 Add Order Long",
	  "22 21 d0070000 ac00000000000000 53 a0860100 5a565a5a5420 a086010000000000 01",
	  "3 09:30:00.000002000 bzx/0 i=1 ADD ref=172 S 100000 @ 10.00" },
	{ "0x22 Add Order Short",
	  "1a 22 d0070000 ac00000000000000 53 0a00 5a565a5a5420 e803 01",
	  "3 09:30:00.000002000 bzx/0 i=1 ADD ref=172 S 10 @ 10.00" },
	{ "0x2F Add Order Expanded",
	  "29 2f d0070000 ad00000000000000 42 64000000 5a565a5a54202020 a086010000000000 01 5254414c 20",
	  "3 09:30:00.000002000 bzx/0 i=1 ADD ref=173 B 100 @ 10.00 mpid=RTAL" },
	{ "0x23 Order Executed",
	  "1a 23 d0070000 ab00000000000000 32000000 0100000000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 EXEC ref=171 qty=50 match=1 f=printable" },
	{ "0x24 Order Executed at Price",
	  "26 24 d0070000 ab00000000000000 32000000 32000000 0200000000000000 a40f030000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 EXECP ref=171 qty=50 @ 20.0612 match=2 f=printable" },
	{ "0x25 Reduce Size Long",
	  "12 25 d0070000 ab00000000000000 0a000000",
	  "3 09:30:00.000002000 bzx/0 i=1 REDUCE ref=171 qty=10" },
	{ "0x26 Reduce Size Short",
	  "10 26 d0070000 ab00000000000000 0b00",
	  "3 09:30:00.000002000 bzx/0 i=1 REDUCE ref=171 qty=11" },
	{ "0x27 Modify Order Long",
	  "1b 27 d0070000 ab00000000000000 5a000000 204e000000000000 03",
	  "3 09:30:00.000002000 bzx/0 i=1 MODIFY ref=171 B 90 @ 2.00 f=keeps-priority" },
	{ "0x28 Modify Order Short",
	  "13 28 d0070000 ab00000000000000 c800 d107 01",
	  "3 09:30:00.000002000 bzx/0 i=1 MODIFY ref=171 B 200 @ 20.01" },
	{ "0x29 Delete Order",
	  "0e 29 d0070000 ab00000000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 DELETE ref=171" },
	{ "0x2A Trade Long",
	  "29 2a d0070000 0000000000000000 53 2c010000 5a565a5a5420 50c3000000000000 0300000000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 TRADE ref=0 S 300 @ 5.00 match=3 f=printable" },
	{ "0x2B Trade Short",
	  "21 2b d0070000 0000000000000000 42 6400 5a565a5a5420 f401 0400000000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 TRADE ref=0 B 100 @ 5.00 match=4 f=printable" },
	{ "0x30 Trade Expanded",
	  "2b 30 d0070000 0000000000000000 42 e8030000 5a565a5a54202020 50c3000000000000 0500000000000000",
	  "3 09:30:00.000002000 bzx/0 i=1 TRADE ref=0 B 1000 @ 5.00 match=5 f=printable" },
	{ "0x2C Trade Break",
	  "0e 2c d0070000 0500000000000000",
	  "3 09:30:00.000002000 bzx/0 i=0 BREAK match=5" },
	{ "0x31 Trading Status",
	  "12 31 d0070000 5a565a5a54202020 48 30 0000",
	  "3 09:30:00.000002000 bzx/0 i=1 STATUS halted raw=H" },
	{ "0x95 Auction Update",
	  "2f 95 d0070000 5a565a5a54202020 4f 50c3000000000000 64000000 c8000000 50c3000000000000 50c3000000000000",
	  NULL },
	{ "0x96 Auction Summary",
	  "1b 96 d0070000 5a565a5a54202020 43 50c3000000000000 10270000",
	  "3 09:30:00.000002000 bzx/0 i=1 TRADE ref=0 10000 @ 5.00 match=0 cross=C f=cross" },
	{ "0x98 Retail Price Improvement",
	  "0f 98 d0070000 5a565a5a54202020 41",
	  NULL },
	{ "0x20 Time",
	  "06 20 99850000",
	  NULL },
	{ "0x97 Unit Clear",
	  "06 97 d0070000",
	  "3 09:30:00.000002000 bzx/0 i=1 CLEAR" },
	{ "0x2D End of Session",
	  "06 2d d0070000",
	  "3 09:30:00.000002000 bzx/0 i=1 STATUS closed raw=- f=session-end" },
};

START_TEST(test_pitch_golden_bytes_of_every_message_type)
{
	uint8_t buf[256];
	char text[WB_EVENT_TEXT_MAX];
	size_t n, i = (size_t)_i;

	feed_subscribe(h.engine, "*", 1);
	n = harness_unhex(golden_setup, buf, sizeof(buf));
	ck_assert_uint_eq(n, 40);
	harness_payload(&h, line_a, buf, n);
	ck_assert_uint_eq(harness_count(&h, WB_EV_ADD), 1);
	h.n = 0;

	n = harness_unhex(golden[i].message, buf + 8, sizeof(buf) - 8);
	ck_assert_msg(n == buf[8], "%s: the message is %zu bytes, its length byte says %u",
		      golden[i].name, n, buf[8]);
	wire_put_le16(buf, n + 8);
	buf[2] = 1;
	buf[3] = 1;
	wire_put_le32(buf + 4, 3);
	harness_payload(&h, line_a, buf, n + 8);
	ck_assert_msg(total_errors(line_a) == 0, "%s: decode errors", golden[i].name);
	ck_assert_uint_eq(counters(line_a)->messages, 3);
	if (!golden[i].event) {
		ck_assert_msg(h.n == 0, "%s: %zu unexpected events", golden[i].name, h.n);
		return;
	}
	ck_assert_msg(h.n > 0, "%s: no event", golden[i].name);
	wb_event_format(last(), text, sizeof(text));
	ck_assert_msg(strcmp(text, golden[i].event) == 0, "%s:\n got  %s\n want %s",
		      golden[i].name, text, golden[i].event);
}
END_TEST

static Suite *pitch_suite(void)
{
	Suite *s = suite_create("pitch");
	TCase *caps = tcase_create("captures");
	TCase *msgs = tcase_create("messages");
	TCase *seq = tcase_create("sequencing");
	TCase *filt = tcase_create("filtering");
	TCase *bad = tcase_create("malformed");
	TCase *gen = tcase_create("generated");

	tcase_add_checked_fixture(caps, setup, teardown);
	tcase_add_test(caps, test_pitch_byx_add_order_short_capture_decodes_every_field);
	tcase_add_test(caps, test_pitch_byx_multiple_messages_capture_decodes_time_and_two_adds);
	tcase_add_test(caps, test_pitch_byx_modify_short_capture_modifies_a_known_order);
	tcase_add_test(caps, test_pitch_bats_realtime_capture_decodes_with_its_one_gap);
	tcase_add_test(caps, test_pitch_bats_gap_request_proxy_session_is_reported_as_not_multicast);
	tcase_add_test(caps, test_pitch_bats_spin_session_is_reported_as_not_multicast);
	suite_add_tcase(s, caps);

	tcase_add_checked_fixture(msgs, setup, teardown);
	tcase_add_loop_test(msgs, test_pitch_golden_bytes_of_every_message_type, 0,
			    (int)(sizeof(golden) / sizeof(golden[0])));
	tcase_add_test(msgs, test_pitch_time_composes_timestamps_per_unit);
	tcase_add_test(msgs, test_pitch_add_order_long_normalizes_its_4dp_price);
	tcase_add_test(msgs, test_pitch_add_order_short_normalizes_its_2dp_price);
	tcase_add_test(msgs, test_pitch_add_order_expanded_reads_8_char_symbol_and_participant);
	tcase_add_test(msgs, test_pitch_order_executed_names_the_order_instrument_and_removes_it_at_zero);
	tcase_add_test(msgs, test_pitch_order_executed_at_price_reports_trade_price_and_reduces_to_remaining);
	tcase_add_test(msgs, test_pitch_executed_at_price_refill_flags_the_instrument_book);
	tcase_add_test(msgs, test_pitch_reduce_size_long_and_short_cancel_part_of_the_order);
	tcase_add_test(msgs, test_pitch_modify_keeps_priority_only_when_the_flag_says_so);
	tcase_add_test(msgs, test_pitch_modify_to_zero_is_a_delete);
	tcase_add_test(msgs, test_pitch_delete_removes_the_order);
	tcase_add_test(msgs, test_pitch_trades_long_short_expanded_are_printable_and_carry_the_symbol);
	tcase_add_test(msgs, test_pitch_trade_break_is_venue_wide_with_the_execution_id);
	tcase_add_test(msgs, test_pitch_trading_status_maps_every_state);
	tcase_add_test(msgs, test_pitch_auction_summary_is_a_cross_print_not_counted_twice);
	tcase_add_test(msgs, test_pitch_auction_update_rpi_and_symbol_mapping_are_ignored);
	tcase_add_test(msgs, test_pitch_unit_clear_clears_that_units_instruments_and_orders);
	tcase_add_test(msgs, test_pitch_end_of_session_closes_the_units_instruments);
	suite_add_tcase(s, msgs);

	tcase_add_checked_fixture(seq, setup, teardown);
	tcase_add_test(seq, test_pitch_late_join_reports_the_missed_start_of_the_unit);
	tcase_add_test(seq, test_pitch_gap_is_reported_per_unit_and_forgets_the_units_time);
	tcase_add_test(seq, test_pitch_b_line_copy_is_a_duplicate_and_fills_an_a_line_loss);
	tcase_add_test(seq, test_pitch_overlapping_packet_decodes_only_its_new_messages);
	tcase_add_test(seq, test_pitch_heartbeat_carries_next_sequence_and_reveals_a_tail_gap);
	tcase_add_test(seq, test_pitch_unit_clear_at_sequence_one_starts_a_new_day);
	tcase_add_test(seq, test_pitch_after_end_of_session_sequence_restarts);
	suite_add_tcase(s, seq);

	tcase_add_checked_fixture(filt, setup, teardown);
	tcase_add_test(filt, test_pitch_orders_of_unsubscribed_symbols_are_filtered_by_order_id);
	tcase_add_test(filt, test_pitch_unsubscribing_drops_the_instruments_orders);
	tcase_add_test(filt, test_pitch_symbol_is_announced_once_per_venue_before_its_first_event);
	tcase_add_test(filt, test_pitch_full_order_filter_counts_and_flags_the_instrument_book);
	tcase_add_test(filt, test_pitch_subscribing_before_the_session_flags_nothing);
	tcase_add_test(filt, test_pitch_subscribing_mid_session_flags_the_new_instruments_book);
	tcase_add_test(filt, test_pitch_turning_on_all_mid_session_flags_the_whole_venue);
	suite_add_tcase(s, filt);

	tcase_add_checked_fixture(bad, setup, teardown);
	tcase_add_test(bad, test_pitch_truncated_message_loses_the_rest_of_the_packet_until_b_fills_it);
	tcase_add_test(bad, test_pitch_header_length_must_match_the_datagram);
	tcase_add_test(bad, test_pitch_short_message_is_counted_and_skipped_by_its_length);
	tcase_add_test(bad, test_pitch_longer_message_reads_its_known_prefix);
	tcase_add_test(bad, test_pitch_unknown_type_is_counted_and_skipped_by_its_length);
	tcase_add_test(bad, test_pitch_length_below_two_stops_the_packet);
	tcase_add_test(bad, test_pitch_bad_side_and_overflowing_price_are_bad_fields);
	tcase_add_test(bad, test_pitch_unsequenced_and_unit_zero_blocks_are_not_multicast);
	tcase_add_test(bad, test_pitch_state_reset_forgets_orders_and_sequences);
	suite_add_tcase(s, bad);

	tcase_add_checked_fixture(gen, setup, teardown);
	tcase_set_timeout(gen, 60);
	tcase_add_test(gen, test_pitch_generated_day_on_four_venues_decodes_without_loss);
	tcase_add_test(gen, test_pitch_generated_nbbo_locks_and_crosses_across_venues_never_within_one);
	suite_add_tcase(s, gen);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pitch_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
