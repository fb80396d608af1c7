/*
 * The tools' shared code (tools/common, tools/input, tools/gen): the event text line, the raw ITCH
 * printer on the real captures, pcap reading and writing, BinaryFILE, the
 * feed map file, and the generator: deterministic, realistic, and decoded
 * by the engine into exactly the events it meant.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed_harness.h"
#include "common/config.h"
#include "common/event_text.h"
#include "common/feeds_conf.h"
#include "common/options.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "input/itch_file.h"
#include "common/raw_text.h"
#include "input/pcap_io.h"
#include "wire/cqs.h"
#include "wire/uqdf.h"

#define PCAPS "pcaps/itch50/"
#define A_IP 0xe9360c6fu	/* 233.54.12.111: the group of the real captures */
#define A_PORT 26477
#define B_IP 0xe931c46fu
#define B_PORT 26478

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/wb-test-tools-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static const char *tmp_path(const char *name)
{
	static char path[2][128];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", tmpdir, name);
	return path[which];
}

/* ---- the event text line ------------------------------------------------ */

static struct wb_event event(uint8_t kind)
{
	struct wb_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.venue = WB_VENUE_NASDAQ;
	ev.seq = 14757721;
	ev.exch_ts = 34199999894278ull;
	ev.recv_ts = 123456789;
	ev.instrument = 3;
	return ev;
}

START_TEST(test_event_text_add_prints_every_field_with_decimal_dollars)
{
	struct wb_event ev = event(WB_EV_ADD);
	char buf[WB_EVENT_TEXT_MAX];

	ev.side = WB_SIDE_BUY;
	ev.u.order.order_id = 23508286;
	ev.u.order.qty = 1600;
	ev.u.order.price = 873900LL * 10000;
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_str_eq(buf, "14757721 09:29:59.999894278 nasdaq/0 i=3 ADD ref=23508286 B 1600 @ 87.39");
	memcpy(ev.u.order.mpid, "UBSS", 4);
	ev.line = 1;
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_str_eq(buf, "14757721 09:29:59.999894278 nasdaq/1 i=3 ADD ref=23508286 B 1600 @ 87.39 mpid=UBSS");
}
END_TEST

START_TEST(test_event_text_leaves_out_receive_time_so_producers_compare)
{
	struct wb_event a = event(WB_EV_DELETE), b = a;
	char ta[WB_EVENT_TEXT_MAX], tb[WB_EVENT_TEXT_MAX];

	b.recv_ts = a.recv_ts + 999;
	wb_event_format(&a, ta, sizeof(ta));
	wb_event_format(&b, tb, sizeof(tb));
	ck_assert_str_eq(ta, tb);
}
END_TEST

START_TEST(test_event_text_prints_each_kind_with_its_fields)
{
	struct wb_event ev;
	char buf[WB_EVENT_TEXT_MAX];

	ev = event(WB_EV_EXECUTE);
	ev.u.order.order_id = 23499418;
	ev.u.order.qty = 25;
	ev.u.order.ref = 255547;
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " EXEC ref=23499418 qty=25 match=255547"));

	ev = event(WB_EV_REPLACE);
	ev.side = WB_SIDE_SELL;
	ev.u.order.order_id = 1;
	ev.u.order.ref = 2;
	ev.u.order.qty = 300;
	ev.u.order.price = 5; /* 0.00000005 */
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " REPLACE ref=1 new=2 S 300 @ 0.00000005"));

	ev = event(WB_EV_SYMBOL);
	memcpy(ev.u.symbol.ticker, "AAPL    ", 8);
	ev.u.symbol.feed_key = 13;
	ev.u.symbol.round_lot = 100;
	ev.u.symbol.listing_market = 'Q';
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " i=3 SYMBOL AAPL key=13 lot=100 mkt=Q"));

	ev = event(WB_EV_TRADE);
	ev.flags = WB_EVF_PRINTABLE | WB_EVF_CROSS;
	ev.u.trade.qty = 7;
	ev.u.trade.price = 10000000000LL;
	ev.u.trade.match_id = 9;
	ev.u.trade.cross_type = 'O';
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " TRADE ref=0 7 @ 100.00 match=9 cross=O f=printable,cross"));

	ev = event(WB_EV_GAP);
	ev.u.gap.first = 5;
	ev.u.gap.count = 10;
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " GAP first=5 count=10"));

	ev = event(WB_EV_STATUS);
	ev.u.status.state = WB_STATE_HALTED;
	ev.u.status.raw_state = 'H';
	memcpy(ev.u.status.reason, "LUDP", 4);
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " STATUS halted raw=H reason=LUDP"));
}
END_TEST

START_TEST(test_event_text_escapes_wire_bytes_that_would_break_the_line)
{
	struct wb_event ev = event(WB_EV_SYMBOL);
	char buf[WB_EVENT_TEXT_MAX];

	memcpy(ev.u.symbol.ticker, "A\nB\x01    ", 8);
	wb_event_format(&ev, buf, sizeof(buf));
	ck_assert_ptr_null(strchr(buf, '\n'));
	ck_assert_ptr_nonnull(strstr(buf, "A\\x0aB\\x01"));
}
END_TEST

START_TEST(test_event_text_cut_line_stays_terminated_and_reports_full_length)
{
	struct wb_event ev = event(WB_EV_ADD);
	char full[WB_EVENT_TEXT_MAX], small[10];
	size_t n = wb_event_format(&ev, full, sizeof(full));

	memset(small, 'x', sizeof(small));
	ck_assert_uint_eq(wb_event_format(&ev, small, sizeof(small)), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(strncmp(small, full, sizeof(small) - 1), 0);
	ck_assert_uint_eq(wb_event_format(&ev, NULL, 0), n);
}
END_TEST

START_TEST(test_price_text_uses_two_to_eight_decimals_and_integer_math)
{
	char buf[40];

	wb_price_format(873900LL * 10000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "87.39");
	wb_price_format(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.00");
	wb_price_format(100000000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.00");
	wb_price_format(1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.00000001");
	wb_price_format(-123456789012LL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "-1234.56789012");
	wb_price_format(2000000000000LL, buf, sizeof(buf)); /* ITCH maximum 200,000.0000 */
	ck_assert_str_eq(buf, "20000.00");
	wb_price_format(INT64_MIN, buf, sizeof(buf));
	ck_assert_str_eq(buf, "-92233720368.54775808");
	wb_price_format(INT64_MAX, buf, sizeof(buf));
	ck_assert_str_eq(buf, "92233720368.54775807");
}
END_TEST

/* ---- the real captures --------------------------------------------------- */

/* The raw lines of every message of a capture, joined with '\n'. */
static void raw_lines(const char *path, char *out, size_t n)
{
	struct pcap_reader r;
	char err[PCAP_IO_ERR_LEN], line[512];
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	size_t used = 0;

	ck_assert_msg(pcap_reader_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	out[0] = 0;
	while (pcap_reader_next(&r, &frame, &len, &ts, err, sizeof(err)) == 1) {
		struct udp_view u;

		ck_assert(frame_udp_view(frame, len, &u));
		ck_assert_uint_eq(u.dst_ip, A_IP);
		ck_assert_uint_eq(u.dst_port, A_PORT);
		ck_assert_uint_ge(u.len, 20);
		uint64_t seq = 0;
		uint32_t count = (uint32_t)u.payload[18] << 8 | u.payload[19], off = 20;

		for (int i = 10; i < 18; i++)
			seq = seq << 8 | u.payload[i];
		for (uint32_t i = 0; i < count && count != 0xffff; i++) {
			uint32_t mlen = (uint32_t)u.payload[off] << 8 | u.payload[off + 1];

			ck_assert_uint_le(off + 2 + mlen, u.len);
			raw_message_format(FEED_PROTO_ITCH50, u.payload + off + 2, mlen, seq + i, line,
					   sizeof(line));
			used += (size_t)snprintf(out + used, n - used, "%s\n", line);
			off += 2 + mlen;
		}
	}
	pcap_reader_close(&r);
}

START_TEST(test_raw_printer_shows_the_spec_values_of_the_real_captures)
{
	static char text[1 << 16];

	raw_lines(PCAPS "AddOrderNoMpidAttributionMessage.pcap", text, sizeof(text));
	ck_assert_str_eq(text, "14757721 09:29:59.999894278 A locate=5528 track=0 ref=23508286 B 1600 IVOO @ 87.39\n");

	raw_lines(PCAPS "OrderExecutedMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " 09:29:59.999934561 E locate=2345 track=2 ref=23499418 executed=25 match=255547\n"));

	raw_lines(PCAPS "OrderDeleteMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " D locate="));
	raw_lines(PCAPS "OrderReplaceMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " U locate="));
	ck_assert_ptr_nonnull(strstr(text, " new_ref="));
	raw_lines(PCAPS "StockTradingActionMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " H locate="));
	raw_lines(PCAPS "NetOrderImbalanceIndicatorMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " I locate="));
	raw_lines(PCAPS "MarketParticipantPositionMessage.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, " L locate=3731 track=0 mpid=MAXM FGMC primary=Y mode=N state=A\n"));
	raw_lines(PCAPS "Multiple.Packets.pcap", text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "19009117 09:30:38.952381153 A locate=6514 track=0 ref=7942047 B 1 META @ 80.52\n"));
}
END_TEST

/* wb-dump --raw --symbols: an 11-byte SIP symbol longer than a key names no ticker. */
START_TEST(test_raw_ticker_of_a_sip_symbol_longer_than_a_key_is_none)
{
	uint8_t m[87];
	uint32_t key;
	int has_key;

	memset(m, ' ', sizeof(m));
	m[0] = 0;
	m[1] = 87;
	m[2] = 'Q';
	m[3] = 'L';
	memcpy(m + 26, "ABCDEFGHI.W", 11);
	ck_assert_uint_eq(raw_message_ticker(FEED_PROTO_CQS, m, sizeof(m), &key, &has_key), 0);
	memcpy(m + 26, "LVWR.WS    ", 11);
	ck_assert_uint_eq(raw_message_ticker(FEED_PROTO_CQS, m, sizeof(m), &key, &has_key),
			  feed_ticker_key("LVWR.WS", 7));
}
END_TEST

/* A CQS Long Quote of NBBO indicator code with a body of spaces and the STOR quote. */
static uint32_t cqs_long_quote(uint8_t *m, uint8_t code, uint32_t appendages)
{
	uint32_t len = CQS_LONG_QUOTE_LEN + appendages;

	memset(m, ' ', len);
	wire_put_be16(m + CQS_MSG_LENGTH, len);
	m[CQS_MSG_CATEGORY] = 'Q';
	m[CQS_MSG_TYPE] = 'L';
	m[CQS_MSG_PARTICIPANT] = 'P';
	memset(m + CQS_MSG_TIMESTAMP1, 0, CQS_MSG_HEADER_LEN - CQS_MSG_TIMESTAMP1);
	memset(m + CQS_LONG_BID_PRICE, 0, CQS_LONG_RETAIL_INTEREST - CQS_LONG_BID_PRICE);
	memset(m + CQS_LONG_TIMESTAMP2, 0, CQS_TIME_LEN);
	memcpy(m + CQS_SYMBOL, "STOR", 4);
	m[CQS_LONG_NBBO] = code;
	return len;
}

/* issue 22: the NBBO appendages printed as "+36 extra bytes"; each field is shown now. */
START_TEST(test_raw_printer_shows_the_cqs_nbbo_appendages_the_indicator_announces)
{
	uint8_t m[CQS_LONG_QUOTE_LEN + 2 * CQS_LONG_APPENDAGE_LEN + 3];
	uint8_t *bid = m + CQS_LONG_QUOTE_LEN, *ask = bid + CQS_LONG_APPENDAGE_LEN;
	char line[1024];
	uint32_t len;

	/* U: a long appendage for each side */
	len = cqs_long_quote(m, 'U', 2 * CQS_LONG_APPENDAGE_LEN);
	bid[CQS_APPENDAGE_PARTICIPANT] = 'Z';
	bid[CQS_LONG_APPENDAGE_CONDITION] = 'R';
	wire_put_be64(bid + CQS_LONG_APPENDAGE_PRICE, 29460000);
	wire_put_be32(bid + CQS_LONG_APPENDAGE_SIZE, 3);
	memcpy(bid + CQS_LONG_APPENDAGE_MMID, "ABCD", 4);
	ask[CQS_APPENDAGE_PARTICIPANT] = 'Y';
	ask[CQS_LONG_APPENDAGE_CONDITION] = 'A';
	wire_put_be64(ask + CQS_LONG_APPENDAGE_PRICE, 29470000);
	wire_put_be32(ask + CQS_LONG_APPENDAGE_SIZE, 2);
	raw_message_format(FEED_PROTO_CQS, m, len, 1, line, sizeof(line));
	ck_assert_msg(strstr(line, " nbbo=U nbb_mc=Z nbb_cond=R nbb=3 @ 29.46 nbb_mmid=ABCD "
			     "nbo_mc=Y nbo_cond=A nbo=2 @ 29.47 nbo_mmid=") &&
		      !strstr(line, "extra"), "%s", line);
	/* Bytes past the appendages are still counted. */
	m[len] = m[len + 1] = 0;
	raw_message_format(FEED_PROTO_CQS, m, len + 2, 1, line, sizeof(line));
	ck_assert_msg(strstr(line, "nbo_mmid= (+2 extra bytes)"), "%s", line);

	/* T: a short appendage for each side */
	len = cqs_long_quote(m, 'T', 2 * CQS_SHORT_APPENDAGE_LEN);
	bid[CQS_APPENDAGE_PARTICIPANT] = 'N';
	wire_put_be16(bid + CQS_SHORT_APPENDAGE_PRICE, 2946);
	wire_put_be16(bid + CQS_SHORT_APPENDAGE_SIZE, 5);
	bid += CQS_SHORT_APPENDAGE_LEN;
	bid[CQS_APPENDAGE_PARTICIPANT] = 'T';
	wire_put_be16(bid + CQS_SHORT_APPENDAGE_PRICE, 2947);
	wire_put_be16(bid + CQS_SHORT_APPENDAGE_SIZE, 6);
	raw_message_format(FEED_PROTO_CQS, m, len, 1, line, sizeof(line));
	ck_assert_msg(strstr(line, " nbbo=T nbb_mc=N nbb=5 @ 29.46 nbo_mc=T nbo=6 @ 29.47") &&
		      !strstr(line, "extra"), "%s", line);

	/* S: a long bid appendage, the offer is this quote's; an appendage cut short is not read */
	len = cqs_long_quote(m, 'S', CQS_LONG_APPENDAGE_LEN - 1);
	raw_message_format(FEED_PROTO_CQS, m, len, 1, line, sizeof(line));
	ck_assert_msg(strstr(line, " nbbo=S (+17 extra bytes)") && !strstr(line, "nbb_mc"),
		      "%s", line);
	/* O: no appendage */
	len = cqs_long_quote(m, 'O', 0);
	raw_message_format(FEED_PROTO_CQS, m, len, 1, line, sizeof(line));
	ck_assert_msg(strstr(line, " nbbo=O") && !strstr(line, "nbb_mc"), "%s", line);
}
END_TEST

/* issue 22: UQDF's best market centers, in the quote's NBBO appendage. */
START_TEST(test_raw_printer_shows_the_uqdf_nbbo_appendage_market_centers)
{
	uint8_t m[UQDF_QF_LEN + UQDF_NBBO_LONG_LEN];
	uint8_t *a = m + UQDF_QF_LEN;
	char line[1024];

	memset(m, ' ', sizeof(m));
	m[UQDF_VERSION_BYTE] = UQDF_VERSION;
	m[UQDF_CATEGORY] = 'Q';
	m[UQDF_TYPE] = 'F';
	m[UQDF_ORIGINATOR] = 'K';
	memset(m + UQDF_SIP_TIME, 0, UQDF_HEADER_LEN - UQDF_SIP_TIME);
	memset(m + UQDF_QF_TIMESTAMP2, 0, 8);
	memcpy(m + UQDF_QF_SYMBOL, "AMZN", 4);
	memset(m + UQDF_QF_BID_PRICE, 0, UQDF_QF_CONDITION - UQDF_QF_BID_PRICE);
	m[UQDF_QF_NBBO] = '3';
	a[UQDF_NBBO_CONDITION] = 'R';
	a[UQDF_NBBO_BID_CENTER] = 'K';
	wire_put_be64(a + UQDF_NBBO_BID_PRICE, 767250000);
	wire_put_be32(a + UQDF_NBBO_LONG_BID_SIZE, 3);
	a[UQDF_NBBO_LONG_ASK_CENTER] = 'Z';
	wire_put_be64(a + UQDF_NBBO_LONG_ASK_PRICE, 767260000);
	wire_put_be32(a + UQDF_NBBO_LONG_ASK_SIZE, 1);
	raw_message_format(FEED_PROTO_UQDF, m, sizeof(m), 1, line, sizeof(line));
	ck_assert_msg(strstr(line, " nbbo_cond=R nbb_mc=K nbb=3 @ 767.25 nbo_mc=Z nbo=1 @ 767.26") &&
		      !strstr(line, "extra"), "%s", line);

	/* Quote Short Form with a short appendage */
	memset(m + UQDF_QE_SYMBOL, ' ', sizeof(m) - UQDF_QE_SYMBOL);
	m[UQDF_TYPE] = 'E';
	memcpy(m + UQDF_QE_SYMBOL, "AKAM", 4);
	memset(m + UQDF_QE_BID_PRICE, 0, UQDF_QE_CONDITION - UQDF_QE_BID_PRICE);
	m[UQDF_QE_NBBO] = '2';
	a = m + UQDF_QE_LEN;
	a[UQDF_NBBO_CONDITION] = 'R';
	a[UQDF_NBBO_BID_CENTER] = 'Q';
	wire_put_be16(a + UQDF_NBBO_BID_PRICE, 5123);
	wire_put_be16(a + UQDF_NBBO_SHORT_BID_SIZE, 4);
	a[UQDF_NBBO_SHORT_ASK_CENTER] = 'P';
	wire_put_be16(a + UQDF_NBBO_SHORT_ASK_PRICE, 5124);
	wire_put_be16(a + UQDF_NBBO_SHORT_ASK_SIZE, 2);
	raw_message_format(FEED_PROTO_UQDF, m, UQDF_QE_LEN + UQDF_NBBO_SHORT_LEN, 1, line,
			   sizeof(line));
	ck_assert_msg(strstr(line, " nbbo=2 nbbo_luld=\\x20 nbbo_cond=R nbb_mc=Q nbb=4 @ 51.23 "
			     "nbo_mc=P nbo=2 @ 51.24") && !strstr(line, "extra"), "%s", line);
}
END_TEST

/* wb-dump prints a CQS Line Integrity (a heartbeat to the framing) with its fields. */
START_TEST(test_raw_fields_of_a_line_integrity_name_its_participant)
{
	uint8_t m[CQS_CONTROL_LEN];
	char line[256];

	memset(m, 0, sizeof(m));
	wire_put_be16(m + CQS_MSG_LENGTH, CQS_CONTROL_LEN);
	m[CQS_MSG_CATEGORY] = 'C';
	m[CQS_MSG_TYPE] = 'T';
	m[CQS_MSG_PARTICIPANT] = 'S';
	raw_fields_format(FEED_PROTO_CQS, m, sizeof(m), line, sizeof(line));
	ck_assert_str_eq(line, " len=26 C T participant=S ts1=00:00:00.000000000 ns=0 id=0 txid=0 "
			 "prn=0");
}
END_TEST

START_TEST(test_raw_printer_never_reads_past_a_short_message)
{
	uint8_t m[64];
	char line[256];

	memset(m, 0, sizeof(m));
	m[0] = 'A';
	raw_message_format(FEED_PROTO_ITCH50, m, 20, 7, line, sizeof(line));
	ck_assert_str_eq(line, "7 Add Order truncated: 20 bytes, type needs 36");
	m[0] = 'z';
	raw_message_format(FEED_PROTO_ITCH50, m, 5, 8, line, sizeof(line));
	ck_assert_str_eq(line, "8 unknown type 0x7a length 5");
	m[0] = 0x21;	/* PITCH Add Order Long, cut short */
	m[1] = 0x21;
	raw_message_format(FEED_PROTO_PITCH, m, 10, 9, line, sizeof(line));
	ck_assert_str_eq(line, "9 Add Order Long truncated: 10 bytes, type needs 34");
}
END_TEST

START_TEST(test_engine_decodes_add_order_capture_to_the_spec_values)
{
	struct harness h;
	struct wb_event *add = NULL;
	char buf[WB_EVENT_TEXT_MAX];

	harness_init(&h, HARNESS_RING_SLOTS);
	ck_assert_int_ge(feed_map_add(h.engine, A_IP, A_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A"), 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	harness_pcap(&h, PCAPS "AddOrderNoMpidAttributionMessage.pcap");
	for (size_t i = 0; i < h.n; i++)
		if (h.events[i].kind == WB_EV_ADD)
			add = &h.events[i];
	ck_assert_ptr_nonnull(add);
	wb_event_format(add, buf, sizeof(buf));
	ck_assert_str_eq(strchr(buf, ' '), " 09:29:59.999894278 nasdaq/0 i=1 ADD ref=23508286 B 1600 @ 87.39");
	ck_assert_uint_eq(add->seq, 14757721);
	harness_free(&h);
}
END_TEST

/* ---- pcap reading and writing -------------------------------------------- */

START_TEST(test_pcap_reader_says_why_a_file_cannot_be_read)
{
	struct pcap_reader r;
	char err[PCAP_IO_ERR_LEN];
	FILE *f;

	make_tmpdir();
	ck_assert_int_eq(pcap_reader_open(&r, tmp_path("missing.pcap"), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	ck_assert_int_eq(pcap_reader_open(&r, tmpdir, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "is a directory"));
	f = fopen(tmp_path("text.pcap"), "w");
	fputs("this is not a capture, just some text long enough for a header\n", f);
	fclose(f);
	ck_assert_int_eq(pcap_reader_open(&r, tmp_path("text.pcap"), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a readable pcap"));
	f = fopen(tmp_path("empty.pcap"), "w");
	fclose(f);
	ck_assert_int_eq(pcap_reader_open(&r, tmp_path("empty.pcap"), err, sizeof(err)), -1);
}
END_TEST

static uint16_t ipv4_sum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

START_TEST(test_pcap_writer_frames_read_back_with_valid_ipv4_checksum)
{
	struct pcap_writer w;
	struct pcap_reader r;
	char err[PCAP_IO_ERR_LEN];
	const uint8_t payload[5] = { 1, 2, 3, 4, 5 };
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	struct udp_view u;

	make_tmpdir();
	ck_assert_int_eq(pcap_writer_open(&w, tmp_path("w.pcap"), err, sizeof(err)), 0);
	ck_assert_int_eq(pcap_writer_udp(&w, 1771477200123456789ull, 0x0a010101, 40001, A_IP, A_PORT, payload, 5), 0);
	ck_assert_int_eq(pcap_writer_udp(&w, 1771477200123456790ull, 0x0a010101, 40001, 0x0a000002, 9, payload, 0), 0);
	ck_assert_int_eq(pcap_writer_close(&w, err, sizeof(err)), 0);

	ck_assert_int_eq(pcap_reader_open(&r, tmp_path("w.pcap"), err, sizeof(err)), 0);
	ck_assert_int_eq(pcap_reader_next(&r, &frame, &len, &ts, err, sizeof(err)), 1);
	ck_assert_uint_eq(ts, 1771477200123456789ull);
	ck_assert_uint_eq(len, 14 + 20 + 8 + 5);
	/* Multicast MAC of 233.54.12.111: 01:00:5e:36:0c:6f */
	ck_assert_int_eq(memcmp(frame, "\x01\x00\x5e\x36\x0c\x6f", 6), 0);
	ck_assert_uint_eq(ipv4_sum(frame + 14), 0xffff);
	ck_assert(frame_udp_view(frame, len, &u));
	ck_assert_uint_eq(u.src_ip, 0x0a010101);
	ck_assert_uint_eq(u.dst_ip, A_IP);
	ck_assert_uint_eq(u.src_port, 40001);
	ck_assert_uint_eq(u.dst_port, A_PORT);
	ck_assert_uint_eq(u.len, 5);
	ck_assert_int_eq(memcmp(u.payload, payload, 5), 0);
	ck_assert_int_eq(pcap_reader_next(&r, &frame, &len, &ts, err, sizeof(err)), 1);
	ck_assert_uint_eq(ipv4_sum(frame + 14), 0xffff);
	ck_assert(frame_udp_view(frame, len, &u));
	ck_assert_uint_eq(u.len, 0);
	ck_assert_int_eq(pcap_reader_next(&r, &frame, &len, &ts, err, sizeof(err)), 0);
	pcap_reader_close(&r);
}
END_TEST

START_TEST(test_udp_view_refuses_fragments_and_short_frames)
{
	uint8_t f[64];
	struct udp_view u;

	memset(f, 0, sizeof(f));
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 28 + 4;	/* IPv4 total length */
	f[23] = 17;	/* UDP */
	f[38] = 0;
	f[39] = 12;	/* UDP length */
	ck_assert(frame_udp_view(f, 14 + 32, &u));
	ck_assert_uint_eq(u.len, 4);
	ck_assert(!frame_udp_view(f, 14 + 31, &u));	/* shorter than IPv4 says */
	f[20] = 0x20;					/* more fragments */
	ck_assert(!frame_udp_view(f, 14 + 32, &u));
	f[20] = 0;
	f[39] = 200;					/* UDP longer than IPv4 */
	ck_assert(!frame_udp_view(f, 14 + 32, &u));
}
END_TEST

/* ---- BinaryFILE ----------------------------------------------------------- */

static void binaryfile_round_trip(bool gzip)
{
	struct itch_file *f = malloc(sizeof(*f));
	char err[ITCH_FILE_ERR_LEN];
	const char *path = tmp_path(gzip ? "x.itch.gz" : "x.itch");
	uint8_t msg[300];
	const uint8_t *m;
	uint16_t len;
	FILE *raw;
	uint8_t magic[2];

	ck_assert_int_eq(itch_file_open_write(f, path, gzip, err, sizeof(err)), 0);
	for (int i = 0; i < 1000; i++) {
		for (int k = 0; k < i % 300; k++)
			msg[k] = (uint8_t)(i + k);
		ck_assert_int_eq(itch_file_write(f, msg, (uint16_t)(i % 300)), 0);
	}
	ck_assert_int_eq(itch_file_close(f, err, sizeof(err)), 0);

	raw = fopen(path, "rb");
	ck_assert_uint_eq(fread(magic, 1, 2, raw), 2);
	fclose(raw);
	if (gzip)
		ck_assert(magic[0] == 0x1f && magic[1] == 0x8b);
	else
		ck_assert(magic[0] == 0 && magic[1] == 0); /* length of the empty first message */

	ck_assert_int_eq(itch_file_open_read(f, path, err, sizeof(err)), 0);
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), 1);
		ck_assert_uint_eq(len, i % 300);
		for (int k = 0; k < len; k++)
			ck_assert_uint_eq(m[k], (uint8_t)(i + k));
	}
	ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), 0);
	itch_file_close(f, err, sizeof(err));
	free(f);
}

START_TEST(test_binaryfile_round_trips_plain_and_gzip)
{
	make_tmpdir();
	binaryfile_round_trip(false);
	binaryfile_round_trip(true);
}
END_TEST

START_TEST(test_binaryfile_cut_inside_a_message_is_an_error)
{
	struct itch_file *f = malloc(sizeof(*f));
	char err[ITCH_FILE_ERR_LEN];
	const uint8_t *m;
	uint16_t len;
	FILE *raw;

	make_tmpdir();
	raw = fopen(tmp_path("cut.itch"), "wb");
	fwrite("\x00\x03" "abc" "\x00\x05" "ab", 1, 9, raw);
	fclose(raw);
	ck_assert_int_eq(itch_file_open_read(f, tmp_path("cut.itch"), err, sizeof(err)), 0);
	ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), 1);
	ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "inside message 2"));
	itch_file_close(f, err, sizeof(err));
	ck_assert_int_eq(itch_file_open_read(f, tmp_path("nothing.itch"), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	free(f);
}
END_TEST

START_TEST(test_binaryfile_refuses_a_pcap_or_pcapng_capture_as_a_usage_error)
{
	static const uint8_t magics[][4] = {
		{ 0xd4, 0xc3, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0xc3, 0xd4 }, { 0x4d, 0x3c, 0xb2, 0xa1 },
		{ 0xa1, 0xb2, 0x3c, 0x4d }, { 0x0a, 0x0d, 0x0d, 0x0a },
	};
	struct itch_file *f = malloc(sizeof(*f));
	char err[ITCH_FILE_ERR_LEN];
	const uint8_t *m;
	uint16_t len;
	FILE *raw;

	make_tmpdir();
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++) {
		raw = fopen(tmp_path("capture"), "wb");
		fwrite(magics[i], 1, 4, raw);
		fwrite("\x02\x00\x04\x00\x00\x00\x00\x00", 1, 8, raw);
		fclose(raw);
		ck_assert_int_eq(itch_file_open_read(f, tmp_path("capture"), err, sizeof(err)),
				 ITCH_FILE_NOT_BINARYFILE);
		ck_assert_msg(strstr(err, "--pcap") && strstr(err, i == 4 ? "pcapng" : "pcap capture"),
			      "%s", err);
	}
	/* The first bytes a BinaryFILE starts with are still read from the start. */
	raw = fopen(tmp_path("short.itch"), "wb");
	fwrite("\x00\x03" "abc", 1, 5, raw);
	fclose(raw);
	ck_assert_int_eq(itch_file_open_read(f, tmp_path("short.itch"), err, sizeof(err)), 0);
	ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), 1);
	ck_assert_int_eq(len, 3);
	ck_assert_int_eq(memcmp(m, "abc", 3), 0);
	ck_assert_int_eq(itch_file_next(f, &m, &len, err, sizeof(err)), 0);
	itch_file_close(f, err, sizeof(err));
	free(f);
}
END_TEST

START_TEST(test_binaryfile_name_gives_the_trading_day_as_nasdaq_writes_it)
{
	int y, m, d;

	ck_assert_int_eq(itch_file_name_date("/data/01302019.NASDAQ_ITCH50.gz", &y, &m, &d), 1);
	ck_assert(y == 2019 && m == 1 && d == 30);
	ck_assert_int_eq(itch_file_name_date("S12312020-v50.txt", &y, &m, &d), 1);
	ck_assert(y == 2020 && m == 12 && d == 31);
	/* not a day, not eight digits, or a date only in the directory */
	ck_assert_int_eq(itch_file_name_date("02302019.NASDAQ_ITCH50", &y, &m, &d), 0);
	ck_assert_int_eq(itch_file_name_date("123456789.itch", &y, &m, &d), 0);
	ck_assert_int_eq(itch_file_name_date("/01302019/day.itch", &y, &m, &d), 0);
	ck_assert_int_eq(opt_date("t", "--date", "2024-02-29", &y, &m, &d), 0);
	ck_assert_int_eq(opt_date("t", "--date", "2023-02-29", &y, &m, &d), -1);
	ck_assert_int_eq(opt_date("t", "--date", "2024-02-29x", &y, &m, &d), -1);
}
END_TEST

/* ---- feeds.conf ------------------------------------------------------------ */

START_TEST(test_feeds_conf_refuses_a_directory_rather_than_reading_an_empty_map)
{
	struct feed_map_entry e[4];
	char err[256];

	make_tmpdir();
	ck_assert_int_eq(feeds_conf_read(tmpdir, e, 4, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "is a directory, not a feed map"), "%s", err);
}
END_TEST

START_TEST(test_feeds_conf_sample_has_nasdaq_a_and_b_on_different_groups)
{
	struct feed_map_entry e[FEED_MAX_LINES];
	char err[256];
	int n = feeds_conf_read("feeds.conf", e, FEED_MAX_LINES, err, sizeof(err));
	const struct feed_map_entry *a, *b;

	ck_assert_msg(n >= 2, "%s", err);
	a = feeds_conf_find(e, n, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	b = feeds_conf_find(e, n, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "B");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(a->ip, A_IP);
	ck_assert_uint_eq(a->port, A_PORT);
	ck_assert(a->ip != b->ip && a->port != b->port);
}
END_TEST

START_TEST(test_feeds_conf_names_the_line_of_a_bad_entry)
{
	char err[256];
	struct feed_map_entry e[4];
	FILE *f;

	make_tmpdir();
	f = fopen(tmp_path("f.conf"), "w");
	fputs("# comment\n\n233.54.12.111:26477 itch nasdaq A\n233.54.12.112 itch nasdaq B\n", f);
	fclose(f);
	ck_assert_int_eq(feeds_conf_read(tmp_path("f.conf"), e, 4, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "f.conf:4:"));
}
END_TEST

/* ---- option values and config files --------------------------------------- */

START_TEST(test_opt_list_refuses_an_empty_list_and_empty_items)
{
	ck_assert_int_eq(opt_list("t", "--symbols", "AAPL,MSFT"), 0);
	ck_assert_int_eq(opt_list("t", "--symbols", "*"), 0);
	ck_assert_int_eq(opt_list("t", "--symbols", ""), -1);
	ck_assert_int_eq(opt_list("t", "--symbols", ","), -1);
	ck_assert_int_eq(opt_list("t", "--symbols", "AAPL,,MSFT"), -1);
	ck_assert_int_eq(opt_list("t", "--symbols", "AAPL,"), -1);
	ck_assert_int_eq(opt_list("t", "--symbols", NULL), -1);
}
END_TEST

START_TEST(test_config_values_expand_the_environment_and_name_an_unset_variable)
{
	static const struct option opts[] = {
		{ "shm", required_argument, 0, 1 }, { "control", required_argument, 0, 2 }, { 0, 0, 0, 0 },
	};
	struct config_args a;
	char conf[160], dir_arg[] = "--config", *argv[3] = { "t", dir_arg, conf };
	char err[512];
	FILE *f;

	make_tmpdir();
	snprintf(conf, sizeof(conf), "%s", tmp_path("c.conf"));
	f = fopen(conf, "w");
	fputs("shm ${WB_TEST_INSTANCE}\ncontrol /run/${WB_TEST_INSTANCE}/c.sock$1\n", f);
	fclose(f);
	setenv("WB_TEST_INSTANCE", "two", 1);
	ck_assert_msg(config_args_build(&a, 3, argv, opts, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(a.argc, 5);
	ck_assert_str_eq(a.argv[2], "two");
	ck_assert_str_eq(a.argv[4], "/run/two/c.sock$1");	/* a '$' alone stays */
	config_args_free(&a);
	unsetenv("WB_TEST_INSTANCE");
	ck_assert_int_eq(config_args_build(&a, 3, argv, opts, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "c.conf:1: ${WB_TEST_INSTANCE} is not set"), "%s", err);
	/* A directory opens and reads as nothing: refused, not an empty config. */
	snprintf(conf, sizeof(conf), "%s", tmpdir);
	ck_assert_int_eq(config_args_build(&a, 3, argv, opts, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "is a directory"), "%s", err);
}
END_TEST

START_TEST(test_config_source_given_on_the_command_line_replaces_the_files)
{
	static const struct option opts[] = {
		{ "pcap", required_argument, 0, 1 }, { "itch-file", required_argument, 0, 2 },
		{ "kernel", optional_argument, 0, 3 }, { "shm", required_argument, 0, 4 },
		{ 0, 0, 0, 0 },
	};
	static const char *const one_of[] = { "pcap", "itch-file", "kernel", NULL };
	char conf[160], c_opt[] = "--config", itch_opt[] = "--itch-file", day[] = "day.itch";
	char *argv[5] = { "t", c_opt, conf, itch_opt, day };
	struct config_args a;
	char err[512];
	FILE *f;

	make_tmpdir();
	snprintf(conf, sizeof(conf), "%s", tmp_path("s.conf"));
	f = fopen(conf, "w");
	fputs("pcap old.pcap\nkernel\nshm x\n", f);
	fclose(f);
	/* without a source on the command line, the file's stay */
	ck_assert_msg(config_args_build(&a, 3, argv, opts, err, sizeof(err)) == 0, "%s", err);
	config_args_override_one_of(&a, opts, one_of);
	ck_assert_int_eq(a.argc, 6);
	config_args_free(&a);
	ck_assert_msg(config_args_build(&a, 5, argv, opts, err, sizeof(err)) == 0, "%s", err);
	config_args_override_one_of(&a, opts, one_of);
	ck_assert_int_eq(a.argc, 5);
	ck_assert_str_eq(a.argv[1], "--shm");
	ck_assert_str_eq(a.argv[2], "x");
	ck_assert_ptr_nonnull(a.origin[1]);
	ck_assert_str_eq(a.argv[3], "--itch-file");
	ck_assert_str_eq(a.argv[4], "day.itch");
	ck_assert_ptr_null(a.origin[3]);
	ck_assert_ptr_null(a.argv[5]);
	config_args_free(&a);
}
END_TEST

/* ---- the generator ------------------------------------------------------------ */

struct packets {
	uint8_t *bytes;
	size_t len, cap;
	uint64_t count;
};

/* Sink: [dst ip 4][dst port 2][len 4][payload] records, back to back. */
static int memory_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *p,
		       uint32_t len)
{
	struct packets *pk = ctx;

	(void)ts;
	if (pk->len + 10 + len > pk->cap) {
		pk->cap = (pk->cap + 10 + len) * 2;
		pk->bytes = realloc(pk->bytes, pk->cap);
		ck_assert_ptr_nonnull(pk->bytes);
	}
	memcpy(pk->bytes + pk->len, &ip, 4);
	memcpy(pk->bytes + pk->len + 4, &port, 2);
	memcpy(pk->bytes + pk->len + 6, &len, 4);
	memcpy(pk->bytes + pk->len + 10, p, len);
	pk->len += 10 + len;
	pk->count++;
	return 0;
}

struct generated {
	struct packets pk;
	struct gen_flow_stats flow;
	struct gen_itch_stats itch;
};

static void generate(struct generated *out, enum gen_profile profile, uint64_t seed,
		     uint64_t messages, uint32_t gap_every, uint32_t dup_every, bool ab)
{
	struct gen_flow_config fcfg = { .profile = profile, .seed = seed, .messages = messages };
	struct gen_itch_config icfg = {
		.a_ip = A_IP, .a_port = A_PORT, .b_ip = B_IP, .b_port = B_PORT, .ab = ab,
		.gap_every = gap_every, .dup_every = dup_every,
	};
	struct gen_flow *flow = calloc(1, sizeof(*flow));
	struct gen_itch *g = calloc(1, sizeof(*g));
	struct gen_action a;
	uint64_t last = 0;

	memset(out, 0, sizeof(*out));
	memcpy(icfg.session, "TESTSESS01", 10);
	icfg.sink.packet = memory_sink;
	icfg.sink.ctx = &out->pk;
	ck_assert_int_eq(gen_flow_init(flow, &fcfg), 0);
	gen_itch_init(g, &icfg);
	while (gen_flow_next(flow, &a) == 1) {
		ck_assert_uint_ge(a.ts, last); /* exchange time never goes back */
		last = a.ts;
		ck_assert_int_eq(gen_itch_action(g, flow, &a), 0);
	}
	ck_assert_int_eq(gen_itch_finish(g, last + 1), 0);
	out->flow = flow->stats;
	out->itch = g->stats;
	gen_flow_destroy(flow);
	free(flow);
	free(g);
}

START_TEST(test_gen_same_seed_gives_the_same_bytes_and_another_seed_does_not)
{
	struct generated a, b, c;

	generate(&a, GEN_PROFILE_DEMO, 7, 0, 0, 0, false);
	generate(&b, GEN_PROFILE_DEMO, 7, 0, 0, 0, false);
	generate(&c, GEN_PROFILE_DEMO, 8, 0, 0, 0, false);
	ck_assert_uint_eq(a.pk.len, b.pk.len);
	ck_assert_int_eq(memcmp(a.pk.bytes, b.pk.bytes, a.pk.len), 0);
	ck_assert(a.pk.len != c.pk.len || memcmp(a.pk.bytes, c.pk.bytes, a.pk.len) != 0);
	free(a.pk.bytes);
	free(b.pk.bytes);
	free(c.pk.bytes);
}
END_TEST

/* Decode generated packets; per-kind event counts into kinds[]. */
static void decode_generated(const struct generated *g, uint64_t kinds[WB_EV_KIND_COUNT],
			     struct feed_counters *total, bool ab)
{
	struct harness h;
	size_t off = 0;
	int a, b = -1;

	harness_init(&h, 1u << 16);
	a = feed_map_add(h.engine, A_IP, A_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	if (ab)
		b = feed_map_add(h.engine, B_IP, B_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "B");
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(feed_subscribe(h.engine, "*", 1), 0);
	memset(kinds, 0, sizeof(uint64_t) * WB_EV_KIND_COUNT);
	while (off < g->pk.len) {
		uint32_t ip, len;
		uint16_t port;

		memcpy(&ip, g->pk.bytes + off, 4);
		memcpy(&port, g->pk.bytes + off + 4, 2);
		memcpy(&len, g->pk.bytes + off + 6, 4);
		ck_assert(ip == A_IP || (ab && ip == B_IP));
		feed_process_payload(h.engine, ip == A_IP ? a : b, g->pk.bytes + off + 10, len, 1, &h.prod);
		wb_ring_producer_publish(&h.prod);
		uint64_t n = wb_ring_consumer_available(&h.cons);

		for (uint64_t i = 0; i < n; i++)
			kinds[wb_ring_consumer_at(&h.cons, i)->kind]++;
		wb_ring_consumer_release(&h.cons, n);
		off += 10 + len;
	}
	memset(total, 0, sizeof(*total));
	for (int l = 0; l < (ab ? 2 : 1); l++) {
		const struct feed_counters *c = &h.engine->lines[l].counters;

		total->messages += c->messages;
		total->gaps += c->gaps;
		total->gap_messages += c->gap_messages;
		total->duplicates += c->duplicates;
		total->duplicate_messages += c->duplicate_messages;
		total->ring_drops += c->ring_drops;
		total->end_of_session += c->end_of_session;
		total->heartbeats += c->heartbeats;
		for (int k = 0; k < FEED_ERR_COUNT; k++)
			total->errors[k] += c->errors[k];
	}
	harness_free(&h);
}

static uint64_t errors_of(const struct feed_counters *c)
{
	uint64_t n = 0;

	for (int k = 0; k < FEED_ERR_COUNT; k++)
		n += c->errors[k];
	return n;
}

START_TEST(test_gen_round_trip_engine_emits_one_event_per_generated_message)
{
	struct generated g;
	uint64_t kinds[WB_EV_KIND_COUNT];
	struct feed_counters c;
	const uint64_t *t = g.itch.by_type;

	generate(&g, GEN_PROFILE_DEMO, 1, 0, 0, 0, false);
	decode_generated(&g, kinds, &c, false);
	ck_assert_uint_eq(errors_of(&c), 0);
	ck_assert_uint_eq(c.messages, g.itch.messages);
	ck_assert_uint_eq(c.gaps, 0);
	ck_assert_uint_eq(c.duplicates, 0);
	ck_assert_uint_eq(c.ring_drops, 0);
	ck_assert_uint_eq(c.end_of_session, 1);
	/* The demo idles for seconds before the open: heartbeats, as Nasdaq sends. */
	ck_assert_uint_gt(g.itch.heartbeats, 0);
	ck_assert_uint_eq(c.heartbeats, g.itch.heartbeats);
	ck_assert_uint_eq(kinds[WB_EV_ADD], t['A'] + t['F']);
	ck_assert_uint_eq(kinds[WB_EV_DELETE], t['D']);
	ck_assert_uint_eq(kinds[WB_EV_EXECUTE], t['E']);
	ck_assert_uint_eq(kinds[WB_EV_EXECUTE_AT_PRICE], t['C']);
	ck_assert_uint_eq(kinds[WB_EV_REDUCE], t['X']);
	ck_assert_uint_eq(kinds[WB_EV_REPLACE], t['U']);
	ck_assert_uint_eq(kinds[WB_EV_TRADE], t['P'] + t['Q']);
	ck_assert_uint_eq(kinds[WB_EV_SYMBOL], t['R']);
	ck_assert_uint_eq(t['R'], 10);
	ck_assert_uint_eq(t['H'], 10);
	ck_assert_uint_gt(t['Q'], 0);
	ck_assert_uint_eq(t['S'], 6); /* O S Q M E C */
	ck_assert_uint_eq(g.flow.flow_messages, 20000);
	free(g.pk.bytes);
}
END_TEST

START_TEST(test_gen_injected_gaps_and_duplicates_are_what_the_engine_counts)
{
	struct generated g;
	uint64_t kinds[WB_EV_KIND_COUNT];
	struct feed_counters c;

	generate(&g, GEN_PROFILE_DEMO, 3, 0, 50, 7, false);
	ck_assert_uint_gt(g.itch.dropped_packets, 0);
	ck_assert_uint_gt(g.itch.duplicated_packets, 0);
	decode_generated(&g, kinds, &c, false);
	ck_assert_uint_eq(errors_of(&c), 0);
	/* Every 50th packet lost (never two in a row): one gap each. */
	ck_assert_uint_eq(c.gaps, g.itch.dropped_packets);
	ck_assert_uint_eq(c.gap_messages, g.itch.dropped_messages);
	ck_assert_uint_eq(kinds[WB_EV_GAP], g.itch.dropped_packets);
	/* Packets that are both 7th and 50th are dropped, not duplicated. */
	ck_assert_uint_eq(c.duplicates, g.itch.duplicated_packets);
	ck_assert_uint_eq(c.messages, g.itch.messages - g.itch.dropped_messages);
	free(g.pk.bytes);
}
END_TEST

START_TEST(test_gen_ab_copies_decode_to_the_same_events_as_one_line)
{
	struct generated one, two;
	uint64_t k1[WB_EV_KIND_COUNT], k2[WB_EV_KIND_COUNT];
	struct feed_counters c1, c2;

	generate(&one, GEN_PROFILE_DEMO, 5, 0, 0, 0, false);
	generate(&two, GEN_PROFILE_DEMO, 5, 0, 0, 0, true);
	ck_assert_uint_eq(two.itch.packets_sent, 2 * one.itch.packets_sent);
	decode_generated(&one, k1, &c1, false);
	decode_generated(&two, k2, &c2, true);
	ck_assert_int_eq(memcmp(k1, k2, sizeof(k1)), 0);
	ck_assert_uint_eq(c2.messages, c1.messages);
	/* Every data packet arrives twice: the second copy is a duplicate. */
	ck_assert_uint_eq(c2.duplicates, two.itch.packets);
	ck_assert_uint_eq(errors_of(&c2), 0);
	free(one.pk.bytes);
	free(two.pk.bytes);
}
END_TEST

START_TEST(test_gen_packets_stay_within_the_payload_limit)
{
	struct generated g;
	size_t off = 0;

	generate(&g, GEN_PROFILE_DAY, 2, 200000, 0, 0, false);
	while (off < g.pk.len) {
		uint32_t len;

		memcpy(&len, g.pk.bytes + off + 6, 4);
		ck_assert_uint_le(len, GEN_ITCH_DEFAULT_PAYLOAD);
		off += 10 + len;
	}
	ck_assert_uint_gt(g.itch.messages, 2 * g.itch.packets); /* bursts share packets */
	free(g.pk.bytes);
}
END_TEST

/* The whole day profile, without encoding: size, peak and mix. */
START_TEST(test_gen_day_profile_has_8000_symbols_a_million_live_orders_and_nasdaq_mix)
{
	struct gen_flow_config cfg = { .profile = GEN_PROFILE_DAY, .seed = 1 };
	struct gen_flow *f = calloc(1, sizeof(*f));
	struct gen_action a;
	uint64_t old_hits = 0, updates = 0, n;
	uint64_t at_open_burst = 0, at_midday = 0;

	ck_assert_int_eq(gen_flow_init(f, &cfg), 0);
	ck_assert_uint_eq(f->symbol_count, 8000);
	while (gen_flow_next(f, &a) == 1) {
		if (a.kind == GEN_DELETE || a.kind == GEN_CANCEL || a.kind == GEN_EXECUTE ||
		    a.kind == GEN_REPLACE) {
			updates++;
			/* "Old": added more than half a live set of orders ago. */
			if (a.order_id + f->live_count / 2 < f->next_order_id[a.venue])
				old_hits++;
		}
		if (a.ts >= 34200000000000ull && a.ts < 34500000000000ull)
			at_open_burst++;	/* 09:30-09:35 */
		if (a.ts >= 43200000000000ull && a.ts < 43500000000000ull)
			at_midday++;		/* 12:00-12:05 */
	}
	n = f->stats.flow_messages;
	ck_assert_uint_ge(n, 6000000);
	ck_assert_uint_ge(f->stats.peak_live, 1000000);
#define SHARE(kind) (100.0 * (double)f->stats.actions[kind] / (double)n)
	ck_assert_double_ge(SHARE(GEN_ADD), 38);
	ck_assert_double_le(SHARE(GEN_ADD), 45);
	ck_assert_double_ge(SHARE(GEN_DELETE), 35);
	ck_assert_double_le(SHARE(GEN_DELETE), 41);
	ck_assert_double_ge(SHARE(GEN_REPLACE), 7);
	ck_assert_double_le(SHARE(GEN_REPLACE), 9);
	ck_assert_double_ge(SHARE(GEN_EXECUTE), 2);
	ck_assert_double_le(SHARE(GEN_EXECUTE), 4);
	ck_assert_double_ge(SHARE(GEN_CANCEL), 2);
	ck_assert_double_le(SHARE(GEN_CANCEL), 4);
	ck_assert_uint_gt(f->stats.actions[GEN_TRADE], 0);
	ck_assert_uint_gt(f->stats.actions[GEN_EXECUTE_AT_PRICE], 0);
	ck_assert_uint_gt(f->stats.attributed_adds, 0);
#undef SHARE
	/* Updates reach old orders, not only the newest. */
	ck_assert_double_ge((double)old_hits / (double)updates, 0.2);
	/* The open is a burst: many times the traffic of a midday stretch. */
	ck_assert_uint_gt(at_open_burst, 10 * at_midday);
	gen_flow_destroy(f);
	free(f);
}
END_TEST

struct level_key {
	uint32_t symbol;
	uint8_t side;
	int64_t price;
};

static int level_key_cmp(const void *a, const void *b)
{
	const struct level_key *x = a, *y = b;

	if (x->symbol != y->symbol)
		return x->symbol < y->symbol ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return x->price < y->price ? -1 : x->price > y->price;
}

/* Price levels (symbol, side, price) the live orders rest on. */
static uint64_t live_levels(const struct gen_flow *f)
{
	struct level_key *k = calloc(f->live_count, sizeof(*k));
	uint64_t i, levels = 0;

	ck_assert_ptr_nonnull(k);
	for (i = 0; i < f->live_count; i++)
		k[i] = (struct level_key){ f->live[i].symbol, f->live[i].side, f->live[i].price };
	qsort(k, f->live_count, sizeof(*k), level_key_cmp);
	for (i = 0; i < f->live_count; i++)
		levels += i == 0 || level_key_cmp(&k[i - 1], &k[i]) != 0;
	free(k);
	return levels;
}

/*
 * The hostile day of the benchmarks: the book is full (messages / 5 live
 * orders) from the open to the end, adds spread evenly over every symbol
 * and over many levels, updates reach old orders.
 */
START_TEST(test_gen_hostile_profile_holds_a_full_book_spread_evenly_over_symbols_and_levels)
{
	struct gen_flow_config cfg = { .profile = GEN_PROFILE_HOSTILE, .seed = 1,
				       .messages = 500000 };
	struct gen_flow *f = calloc(1, sizeof(*f));
	uint32_t *adds;
	struct gen_action a;
	uint64_t live_at_open = 0, old_hits = 0, updates = 0, total_adds = 0, max_adds = 0;
	uint64_t levels;
	uint32_t i, untouched = 0;

	ck_assert_int_eq(gen_profile_parse("hostile"), GEN_PROFILE_HOSTILE);
	ck_assert_uint_eq(gen_profile_default_messages(GEN_PROFILE_HOSTILE), 5000000);
	ck_assert_int_eq(gen_flow_init(f, &cfg), 0);
	ck_assert_uint_eq(f->symbol_count, 8000);
	ck_assert_uint_eq(f->peak_target, 100000);
	adds = calloc(f->symbol_count, sizeof(*adds));
	ck_assert_ptr_nonnull(adds);
	while (gen_flow_next(f, &a) == 1) {
		if (a.kind == GEN_SYSTEM && a.code == 'Q')
			live_at_open = f->live_count;
		if (a.kind == GEN_ADD) {
			adds[a.symbol]++;
			total_adds++;
		}
		if (a.kind == GEN_DELETE || a.kind == GEN_CANCEL || a.kind == GEN_EXECUTE ||
		    a.kind == GEN_REPLACE) {
			updates++;
			if (a.order_id + f->live_count / 2 < f->next_order_id[a.venue])
				old_hits++;
		}
	}
	/* Full from the open to the end of the day. */
	ck_assert_uint_ge(live_at_open, 95000);
	ck_assert_uint_ge(f->live_count, 95000);
	ck_assert_uint_le(f->live_count, 105000);
	/* Every symbol is traded, none much more than the others. */
	for (i = 0; i < f->symbol_count; i++) {
		untouched += adds[i] == 0;
		if (adds[i] > max_adds)
			max_adds = adds[i];
	}
	ck_assert_uint_eq(untouched, 0);
	ck_assert_uint_lt(max_adds, 2 * total_adds / f->symbol_count);
	/* Updates reach old orders. */
	ck_assert_double_ge((double)old_hits / (double)updates, 0.4);
	/* Few orders share a level: 100k orders over 8,000 x 2 x 32 levels. */
	levels = live_levels(f);
	ck_assert_uint_ge(levels, f->live_count / 2);
	gen_flow_destroy(f);
	free(adds);
	free(f);
}
END_TEST

START_TEST(test_gen_books_never_cross_and_keep_the_tick_rules)
{
	struct gen_flow_config cfg = { .profile = GEN_PROFILE_DAY, .seed = 11, .messages = 300000 };
	struct gen_flow *f = calloc(1, sizeof(*f));
	struct gen_action a;

	ck_assert_int_eq(gen_flow_init(f, &cfg), 0);
	while (gen_flow_next(f, &a) == 1) {
		const struct gen_symbol *s = &f->symbols[a.symbol];

		if (a.kind != GEN_ADD && a.kind != GEN_REPLACE)
			continue;
		ck_assert_int_gt(a.price, 0);
		ck_assert_int_eq(a.price % s->tick, 0);
		if (a.price >= WB_PRICE_SCALE)
			ck_assert_int_eq(a.price % (WB_PRICE_SCALE / 100), 0); /* no sub-penny above $1 */
		if (a.side == WB_SIDE_BUY)
			ck_assert_int_le(a.price, s->mid);
		else
			ck_assert_int_gt(a.price, s->mid);
	}
	gen_flow_destroy(f);
	free(f);
}
END_TEST

static Suite *tools_suite(void)
{
	Suite *s = suite_create("tools");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_event_text_add_prints_every_field_with_decimal_dollars);
	tcase_add_test(tc, test_event_text_leaves_out_receive_time_so_producers_compare);
	tcase_add_test(tc, test_event_text_prints_each_kind_with_its_fields);
	tcase_add_test(tc, test_event_text_escapes_wire_bytes_that_would_break_the_line);
	tcase_add_test(tc, test_event_text_cut_line_stays_terminated_and_reports_full_length);
	tcase_add_test(tc, test_price_text_uses_two_to_eight_decimals_and_integer_math);
	tcase_add_test(tc, test_raw_printer_shows_the_spec_values_of_the_real_captures);
	tcase_add_test(tc, test_raw_printer_never_reads_past_a_short_message);
	tcase_add_test(tc, test_raw_printer_shows_the_cqs_nbbo_appendages_the_indicator_announces);
	tcase_add_test(tc, test_raw_printer_shows_the_uqdf_nbbo_appendage_market_centers);
	tcase_add_test(tc, test_raw_fields_of_a_line_integrity_name_its_participant);
	tcase_add_test(tc, test_raw_ticker_of_a_sip_symbol_longer_than_a_key_is_none);
	tcase_add_test(tc, test_engine_decodes_add_order_capture_to_the_spec_values);
	tcase_add_test(tc, test_pcap_reader_says_why_a_file_cannot_be_read);
	tcase_add_test(tc, test_pcap_writer_frames_read_back_with_valid_ipv4_checksum);
	tcase_add_test(tc, test_udp_view_refuses_fragments_and_short_frames);
	tcase_add_test(tc, test_binaryfile_round_trips_plain_and_gzip);
	tcase_add_test(tc, test_binaryfile_cut_inside_a_message_is_an_error);
	tcase_add_test(tc, test_feeds_conf_sample_has_nasdaq_a_and_b_on_different_groups);
	tcase_add_test(tc, test_feeds_conf_names_the_line_of_a_bad_entry);
	tcase_add_test(tc, test_binaryfile_refuses_a_pcap_or_pcapng_capture_as_a_usage_error);
	tcase_add_test(tc, test_feeds_conf_refuses_a_directory_rather_than_reading_an_empty_map);
	tcase_add_test(tc, test_binaryfile_name_gives_the_trading_day_as_nasdaq_writes_it);
	tcase_add_test(tc, test_opt_list_refuses_an_empty_list_and_empty_items);
	tcase_add_test(tc, test_config_values_expand_the_environment_and_name_an_unset_variable);
	tcase_add_test(tc, test_config_source_given_on_the_command_line_replaces_the_files);
	tcase_add_test(tc, test_gen_same_seed_gives_the_same_bytes_and_another_seed_does_not);
	tcase_add_test(tc, test_gen_round_trip_engine_emits_one_event_per_generated_message);
	tcase_add_test(tc, test_gen_injected_gaps_and_duplicates_are_what_the_engine_counts);
	tcase_add_test(tc, test_gen_ab_copies_decode_to_the_same_events_as_one_line);
	tcase_add_test(tc, test_gen_packets_stay_within_the_payload_limit);
	tcase_add_test(tc, test_gen_books_never_cross_and_keep_the_tick_rules);
	tcase_add_test(tc, test_gen_day_profile_has_8000_symbols_a_million_live_orders_and_nasdaq_mix);
	tcase_add_test(tc, test_gen_hostile_profile_holds_a_full_book_spread_evenly_over_symbols_and_levels);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tools_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (tmpdir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		(void)!system(cmd);
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
