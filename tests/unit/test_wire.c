/*
 * lib/wire alone (no engine, no decoder): every protocol's worked example
 * from the specs (sources in docs/specs), read field by field through the wire headers' names.
 * The decoders, generators and test builders all take their offsets from
 * these headers, so this is where a wrong one shows against the spec text.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "wire/bytes.h"
#include "wire/cqs.h"
#include "wire/itch50.h"
#include "wire/moldudp64.h"
#include "wire/pitch.h"
#include "wire/uqdf.h"
#include "wire/xdp.h"

/* Hex digits (spaces ignored) into bytes; returns the length. */
static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (*hex == ' ')
			continue;
		v = *hex <= '9' ? *hex - '0' : (*hex | 0x20) - 'a' + 10;
		ck_assert_msg(v >= 0 && v < 16, "bad hex digit '%c'", *hex);
		if (hi < 0) {
			hi = v;
		} else {
			ck_assert_uint_lt(n, max);
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return n;
}

/* moldudp64-itch50.md section 4: AddOrderNoMpidAttributionMessage.pcap's payload. */
START_TEST(test_wire_itch_add_order_worked_example)
{
	uint8_t p[64];
	const uint8_t *m = p + MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN;
	size_t n = unhex("30 30 30 30 31 30 30 35 39 42 00 00 00 00 00 e1"
			 "2f 59 00 01 00 24 41 15 98 00 00 1f 1a ce d8 53"
			 "06 00 00 00 00 01 66 b5 3e 42 00 00 06 40 49 56"
			 "4f 4f 20 20 20 20 00 0d 55 ac", p, sizeof(p));

	ck_assert_uint_eq(n, MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN + ITCH_ADD_LEN);
	ck_assert_int_eq(memcmp(p + MOLD_SESSION, "000010059B", MOLD_SESSION_LEN), 0);
	ck_assert_uint_eq(wire_be64(p + MOLD_SEQUENCE), 14757721);
	ck_assert_uint_eq(wire_be16(p + MOLD_COUNT), 1);
	ck_assert_uint_eq(wire_be16(p + MOLD_HEADER_LEN), ITCH_ADD_LEN);
	ck_assert_int_eq(m[ITCH_TYPE], ITCH_ADD);
	ck_assert_uint_eq(wire_be16(m + ITCH_LOCATE), 5528);
	ck_assert_uint_eq(wire_be16(m + ITCH_TRACKING), 0);
	ck_assert_uint_eq(wire_be48(m + ITCH_TIMESTAMP), 34199999894278ull);
	ck_assert_uint_eq(wire_be64(m + ITCH_ORDER_REF), 23508286);
	ck_assert_int_eq(m[ITCH_ADD_SIDE], 'B');
	ck_assert_uint_eq(wire_be32(m + ITCH_ADD_SHARES), 1600);
	ck_assert_int_eq(memcmp(m + ITCH_ADD_STOCK, "IVOO    ", ITCH_STOCK_LEN), 0);
	ck_assert_uint_eq(wire_be32(m + ITCH_ADD_PRICE), 873900);
}
END_TEST

/*
 * The same section's second example, an Order Executed message alone, as
 * OrderExecutedMessage.pcap holds it: the spec's quoted bytes carry one 00
 * too many before the Match Number, whose value (255547) both agree on.
 */
START_TEST(test_wire_itch_order_executed_worked_example)
{
	uint8_t m[ITCH_EXECUTED_LEN];

	ck_assert_uint_eq(unhex("45 0929 0002 1f1aced8f061 000000000166929a 00000019 "
				"000000000003e63b", m, sizeof(m)), ITCH_EXECUTED_LEN);
	ck_assert_int_eq(m[ITCH_TYPE], ITCH_EXECUTED);
	ck_assert_uint_eq(wire_be16(m + ITCH_LOCATE), 2345);
	ck_assert_uint_eq(wire_be16(m + ITCH_TRACKING), 2);
	ck_assert_uint_eq(wire_be48(m + ITCH_TIMESTAMP), 34199999934561ull);
	ck_assert_uint_eq(wire_be64(m + ITCH_ORDER_REF), 23499418);
	ck_assert_uint_eq(wire_be32(m + ITCH_EXECUTED_SHARES), 25);
	ck_assert_uint_eq(wire_be64(m + ITCH_EXECUTED_MATCH), 255547);
}
END_TEST

/* cboe-pitch.md section 5: mcastpitch_realtime_useq.pcap frame 93. */
START_TEST(test_wire_pitch_realtime_worked_example)
{
	uint8_t p[64];
	const uint8_t *time = p + PITCH_HEADER_LEN, *add = time + PITCH_TIME_LEN;
	size_t n = unhex("28 00 02 01 03 00 00 00  06 20 13 29 01 00  1a 22 f0 52 79 20 01 10 74 e9"
			 "ea 9e 68 03 42 64 00 41 20 20 20 20 20 d0 07 01", p, sizeof(p));

	ck_assert_uint_eq(n, 40);
	ck_assert_uint_eq(wire_le16(p + PITCH_HDR_LENGTH), n);
	ck_assert_uint_eq(p[PITCH_HDR_COUNT], 2);
	ck_assert_uint_eq(p[PITCH_HDR_UNIT], 1);
	ck_assert_uint_eq(wire_le32(p + PITCH_HDR_SEQUENCE), 3);
	ck_assert_uint_eq(time[PITCH_MSG_LENGTH], PITCH_TIME_LEN);
	ck_assert_uint_eq(time[PITCH_MSG_TYPE], PITCH_TIME);
	ck_assert_uint_eq(wire_le32(time + PITCH_TIME_SECONDS), 76051);
	ck_assert_uint_eq(add[PITCH_MSG_LENGTH], PITCH_ADD_SHORT_LEN);
	ck_assert_uint_eq(add[PITCH_MSG_TYPE], PITCH_ADD_SHORT);
	ck_assert_uint_eq(wire_le32(add + PITCH_TIME_OFFSET), 544822000);
	ck_assert_uint_eq(wire_le64(add + PITCH_ORDER_ID), 0x03689EEAE9741001ull);
	ck_assert_int_eq(add[PITCH_SIDE], 'B');
	ck_assert_uint_eq(wire_le16(add + PITCH_ADD_SHORT_QTY), 100);
	ck_assert_int_eq(memcmp(add + PITCH_ADD_SHORT_SYMBOL, "A     ", PITCH_SYMBOL_SHORT_LEN), 0);
	ck_assert_uint_eq(wire_le16(add + PITCH_ADD_SHORT_PRICE), 2000);
	ck_assert_uint_eq(add[PITCH_ADD_SHORT_FLAGS], 0x01);
}
END_TEST

/* nyse-xdp.md section 7: SymbolIndexMappingMessage.pcap's payload. */
START_TEST(test_wire_xdp_mapping_worked_example)
{
	uint8_t p[64];
	const uint8_t *m = p + XDP_HEADER_LEN;
	size_t n = unhex("3c 00 0b 01 02 00 00 00 a7 56 ce 59 bb a8 3b 05"
			 "2c 00 03 00 91 04 00 00 41 42 47 00 00 00 00 00"
			 "00 00 00 41 01 00 07 4e 04 41 64 00 54 c2 07 00"
			 "00 00 00 00 00 4e f4 01 01 00 00 00", p, sizeof(p));

	ck_assert_uint_eq(n, 60);
	ck_assert_uint_eq(wire_le16(p + XDP_PKT_SIZE), n);
	ck_assert_uint_eq(p[XDP_PKT_DELIVERY_FLAG], XDP_DELIVERY_ORIGINAL);
	ck_assert_uint_eq(p[XDP_PKT_NUMBER_MSGS], 1);
	ck_assert_uint_eq(wire_le32(p + XDP_PKT_SEQ_NUM), 2);
	ck_assert_uint_eq(wire_le32(p + XDP_PKT_SEND_TIME), 0x59ce56a7);
	ck_assert_uint_eq(wire_le16(m + XDP_MSG_SIZE), XDP_SYMBOL_MAPPING_LEN);
	ck_assert_uint_eq(wire_le16(m + XDP_MSG_TYPE), XDP_SYMBOL_MAPPING);
	ck_assert_uint_eq(wire_le32(m + XDP_MAPPING_INDEX), 1169);
	ck_assert_str_eq((const char *)m + XDP_MAPPING_SYMBOL, "ABG");
	ck_assert_uint_eq(wire_le16(m + XDP_MAPPING_MARKET_ID), 1);
	ck_assert_uint_eq(m[XDP_MAPPING_SYSTEM_ID], 7);
	ck_assert_int_eq(m[XDP_MAPPING_EXCHANGE], 'N');
	ck_assert_uint_eq(m[XDP_MAPPING_SCALE], 4);
	ck_assert_int_eq(m[XDP_MAPPING_SECURITY_TYPE], 'A');
	ck_assert_uint_eq(wire_le16(m + XDP_MAPPING_LOT_SIZE), 100);
	ck_assert_uint_eq(wire_le32(m + XDP_MAPPING_PREV_CLOSE), 508500);
	ck_assert_int_eq(m[XDP_MAPPING_ROUND_LOT], 'N');
	ck_assert_uint_eq(wire_le16(m + XDP_MAPPING_MPV), 500);
	ck_assert_uint_eq(wire_le16(m + XDP_MAPPING_UNIT_OF_TRADE), 1);
}
END_TEST

/* The same section: AddOrderMessage.pcap's payload. */
START_TEST(test_wire_xdp_add_order_worked_example)
{
	uint8_t p[64];
	const uint8_t *m = p + XDP_HEADER_LEN;
	size_t n = unhex("37 00 0b 01 7e f7 12 00 9f 57 ce 59 5f 56 86 2d"
			 "27 00 64 00 40 92 4d 2b cf 09 00 00 1b 1a 00 00"
			 "0b 39 15 00 00 00 00 00 fc 74 07 00 3d 00 00 00"
			 "42 20 20 20 20 20 00", p, sizeof(p));

	ck_assert_uint_eq(n, XDP_HEADER_LEN + XDP_ADD_ORDER_LEN);
	ck_assert_uint_eq(wire_le32(p + XDP_PKT_SEQ_NUM), 1243006);
	ck_assert_uint_eq(wire_le16(m + XDP_MSG_SIZE), XDP_ADD_ORDER_LEN);
	ck_assert_uint_eq(wire_le16(m + XDP_MSG_TYPE), XDP_ADD_ORDER);
	ck_assert_uint_eq(wire_le32(m + XDP_SOURCE_TIME_NS), 726504000);
	ck_assert_uint_eq(wire_le32(m + XDP_SYMBOL_INDEX), 2511);
	ck_assert_uint_eq(wire_le32(m + XDP_SYMBOL_SEQ_NUM), 6683);
	ck_assert_uint_eq(wire_le64(m + XDP_ORDER_ID), 1390859);
	ck_assert_uint_eq(wire_le32(m + XDP_ADD_PRICE), 488700);
	ck_assert_uint_eq(wire_le32(m + XDP_ADD_VOLUME), 61);
	ck_assert_int_eq(m[XDP_ADD_SIDE], 'B');
	ck_assert_int_eq(memcmp(m + XDP_ADD_FIRM, "     ", XDP_FIRM_LEN), 0);
}
END_TEST

/* cqs-uqdf.md A.6: Q_L_Long_Quote.pcap's block, checksum included. */
START_TEST(test_wire_cqs_long_quote_worked_example)
{
	uint8_t p[128];
	const uint8_t *m = p + CQS_BLOCK_HEADER_LEN;
	uint32_t sum = 0;
	size_t n = unhex("02 00 6c 51 4f 00 00 00 cb 01 69 d4 96 5c 1c f3 c8 49 12 ea"
			 "00 57 51 4c 4e 69 d4 87 af 11 66 bb bd 01 41 00 00 04 01 00 30 30 30 30"
			 "30 31 4c 56 57 52 2e 57 53 20 20 20 20 30 52 20"
			 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
			 "20 20 20 20 20 20 20 20 00 00 00 00 00 00 00 00"
			 "43 4e 30 20 20 20 4f 00", p, sizeof(p));

	ck_assert_uint_eq(n, 108);
	ck_assert_uint_eq(p[CQS_BLOCK_VERSION], CQS_MAX_VERSION);
	ck_assert_uint_eq(wire_be16(p + CQS_BLOCK_SIZE), n);
	ck_assert_int_eq(p[CQS_BLOCK_FEED], CQS_FEED_INDICATOR);
	ck_assert_int_eq(p[CQS_BLOCK_RETRANSMISSION], CQS_ORIGINAL);
	ck_assert_uint_eq(wire_be32(p + CQS_BLOCK_SEQUENCE), 203);
	ck_assert_uint_eq(p[CQS_BLOCK_MESSAGES], 1);
	ck_assert_uint_eq(wire_be32(p + CQS_BLOCK_SIP_TIME), 0x69d4965c);
	for (size_t i = 0; i < n; i++)
		if (i != CQS_BLOCK_CHECKSUM && i != CQS_BLOCK_CHECKSUM + 1)
			sum += p[i];
	ck_assert_uint_eq(wire_be16(p + CQS_BLOCK_CHECKSUM), sum & 0xffff);
	ck_assert_uint_eq(wire_be16(p + CQS_BLOCK_CHECKSUM), 0x12ea);
	ck_assert_uint_eq(wire_be16(m + CQS_MSG_LENGTH), CQS_LONG_QUOTE_LEN);
	ck_assert_int_eq(m[CQS_MSG_CATEGORY], 'Q');
	ck_assert_int_eq(m[CQS_MSG_TYPE], 'L');
	ck_assert_int_eq(m[CQS_MSG_PARTICIPANT], 'N');
	ck_assert_uint_eq(m[CQS_MSG_ID], 1);
	ck_assert_int_eq(memcmp(m + CQS_SYMBOL, "LVWR.WS    ", CQS_SYMBOL_LEN), 0);
	ck_assert_int_eq(m[CQS_LONG_INSTRUMENT_TYPE], '0');
	ck_assert_int_eq(m[CQS_LONG_CONDITION], 'R');
	ck_assert_int_eq(m[CQS_LONG_STATUS], ' ');
	ck_assert_uint_eq(wire_be64(m + CQS_LONG_BID_PRICE), 0);
	ck_assert_uint_eq(wire_be64(m + CQS_LONG_TIMESTAMP2), 0);
	ck_assert_int_eq(m[CQS_LONG_SSR], 'C');
	ck_assert_int_eq(m[CQS_LONG_LISTING], 'N');
	ck_assert_int_eq(m[CQS_LONG_FSI], '0');
	ck_assert_int_eq(m[CQS_LONG_NBBO], 'O');
	/* 20 + 87 is odd: one pad byte makes the block even. */
	ck_assert_uint_eq(CQS_BLOCK_HEADER_LEN + CQS_LONG_QUOTE_LEN + 1, n);
}
END_TEST

/* cqs-uqdf.md B.5: QuoteShortFormMessage.pcap's payload. */
START_TEST(test_wire_uqdf_short_quote_worked_example)
{
	uint8_t p[80];
	const uint8_t *m = p + MOLD_HEADER_LEN + MOLD_BLOCK_LENGTH_LEN;
	size_t n = unhex("30 30 30 30 30 37 35 32 37 51 00 00 00 00 01 2e 6b 4d 00 01"
			 "00 30 31 51 45 4b 20"
			 "14 74 8f 30 d3 47 85 aa 14 74 8f 30 d3 44 94 60 00 00 00 00 00 00 00 00"
			 "41 4b 41 4d 20 14 03 00 01 14 04 00 01 52 20 20 20 30 41", p, sizeof(p));

	ck_assert_uint_eq(n, 70);
	ck_assert_int_eq(memcmp(p + MOLD_SESSION, "000007527Q", MOLD_SESSION_LEN), 0);
	ck_assert_uint_eq(wire_be64(p + MOLD_SEQUENCE), 19819341);
	ck_assert_uint_eq(wire_be16(p + MOLD_HEADER_LEN), UQDF_QE_LEN);
	ck_assert_int_eq(m[UQDF_VERSION_BYTE], UQDF_VERSION);
	ck_assert_int_eq(m[UQDF_CATEGORY], 'Q');
	ck_assert_int_eq(m[UQDF_TYPE], 'E');
	ck_assert_int_eq(m[UQDF_ORIGINATOR], 'K');
	ck_assert_uint_eq(wire_be64(m + UQDF_SIP_TIME), 1473960417922876842ull);
	ck_assert_int_eq(memcmp(m + UQDF_QE_SYMBOL, "AKAM ", UQDF_SHORT_SYMBOL_LEN), 0);
	ck_assert_uint_eq(wire_be16(m + UQDF_QE_BID_PRICE), 5123);
	ck_assert_uint_eq(wire_be16(m + UQDF_QE_BID_SIZE), 1);
	ck_assert_uint_eq(wire_be16(m + UQDF_QE_ASK_PRICE), 5124);
	ck_assert_uint_eq(wire_be16(m + UQDF_QE_ASK_SIZE), 1);
	ck_assert_int_eq(m[UQDF_QE_CONDITION], 'R');
	ck_assert_int_eq(m[UQDF_QE_NBBO], '0');
	ck_assert_int_eq(m[UQDF_QE_NBBO_LULD], 'A');
}
END_TEST

/* The writers put back what the readers read, at any alignment. */
START_TEST(test_wire_put_round_trips)
{
	uint8_t b[16];

	for (int off = 0; off < 8; off++) {
		wire_put_be48(b + off, 0x123456789abcull);
		ck_assert_uint_eq(wire_be48(b + off), 0x123456789abcull);
		wire_put_le64(b + off, 0x0102030405060708ull);
		ck_assert_uint_eq(wire_le64(b + off), 0x0102030405060708ull);
		ck_assert_uint_eq(b[off], 0x08);
		wire_put_be32(b + off, 0xa1b2c3d4u);
		ck_assert_uint_eq(b[off], 0xa1);
		ck_assert_uint_eq(wire_be32(b + off), 0xa1b2c3d4u);
	}
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("specs");

	tcase_add_test(tc, test_wire_itch_add_order_worked_example);
	tcase_add_test(tc, test_wire_itch_order_executed_worked_example);
	tcase_add_test(tc, test_wire_pitch_realtime_worked_example);
	tcase_add_test(tc, test_wire_xdp_mapping_worked_example);
	tcase_add_test(tc, test_wire_xdp_add_order_worked_example);
	tcase_add_test(tc, test_wire_cqs_long_quote_worked_example);
	tcase_add_test(tc, test_wire_uqdf_short_quote_worked_example);
	tcase_add_test(tc, test_wire_put_round_trips);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
