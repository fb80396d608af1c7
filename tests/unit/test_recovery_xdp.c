/*
 * NYSE XDP gap recovery (lib/recovery/recovery_xdp.c): the Request Server's
 * messages against golden bytes written from the layouts of
 * docs/specs/nyse-xdp-notes.md, "Recovery" (packet header: "Framing"), and what the
 * parsers make of the server's answers, refusals and malformed input.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "recovery/recovery_xdp.h"

/* 2025-11-25 01:00:00 UTC and 123456789 ns: SendTime 0x6924ff90, SendTimeNS 0x075bcd15. */
#define SEND_NS (1764032400ull * 1000000000ull + 123456789ull)

START_TEST(test_retransmission_request_bytes)
{
	static const uint8_t golden[40] = {
		0x28, 0x00,			/* PktSize 40 */
		0x0b,				/* DeliveryFlag 11 */
		0x01,				/* NumberMsgs 1 */
		0x07, 0x00, 0x00, 0x00,		/* SeqNum 7: the client's 7th request */
		0x90, 0xff, 0x24, 0x69,		/* SendTime */
		0x15, 0xcd, 0x5b, 0x07,		/* SendTimeNS */
		0x18, 0x00,			/* MsgSize 24 */
		0x0a, 0x00,			/* MsgType 10 */
		0xb0, 0x04, 0x00, 0x00,		/* BeginSeqNum 1200 */
		0x97, 0x08, 0x00, 0x00,		/* EndSeqNum 2199 */
		'W', 'I', 'R', 'E', 'B', 'O', 'O', 'K', 0, 0,	/* SourceID, NUL padded */
		0x9d,				/* ProductID 157 (Arca) */
		0x02,				/* ChannelID 2 */
	};
	uint8_t out[64];

	memset(out, 0xee, sizeof(out));
	ck_assert_uint_eq(xdp_encode_retrans_request(out, 7, 1200, 2199, "WIREBOOK", 157, 2,
						     SEND_NS), sizeof(golden));
	ck_assert_mem_eq(out, golden, sizeof(golden));
	ck_assert_uint_eq(out[sizeof(golden)], 0xee);
}
END_TEST

START_TEST(test_heartbeat_response_bytes)
{
	static const uint8_t golden[30] = {
		0x1e, 0x00, 0x0b, 0x01,		/* PktSize 30, flag 11, 1 message */
		0x03, 0x00, 0x00, 0x00,		/* SeqNum 3 */
		0x90, 0xff, 0x24, 0x69, 0x15, 0xcd, 0x5b, 0x07,
		0x0e, 0x00, 0x0c, 0x00,		/* MsgSize 14, MsgType 12 */
		'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J',	/* SourceID, 10 characters */
	};
	uint8_t out[64];

	ck_assert_uint_eq(xdp_encode_heartbeat_response(out, 3, "ABCDEFGHIJ", SEND_NS),
			  sizeof(golden));
	ck_assert_mem_eq(out, golden, sizeof(golden));
}
END_TEST

static const uint8_t response_refused[45] = {
	0x2d, 0x00, 0x0b, 0x01,			/* PktSize 45, flag 11, 1 message */
	0x02, 0x00, 0x00, 0x00,			/* the server's SeqNum 2 */
	0x90, 0xff, 0x24, 0x69, 0x15, 0xcd, 0x5b, 0x07,
	0x1d, 0x00, 0x0b, 0x00,			/* MsgSize 29, MsgType 11 */
	0x07, 0x00, 0x00, 0x00,			/* RequestSeqNum 7 */
	0xb0, 0x04, 0x00, 0x00,			/* BeginSeqNum 1200 */
	0x97, 0x08, 0x00, 0x00,			/* EndSeqNum 2199 */
	'W', 'I', 'R', 'E', 'B', 'O', 'O', 'K', 0, 0,
	0x9d, 0x02,				/* ProductID 157, ChannelID 2 */
	'4',					/* Status: daily limit */
};

START_TEST(test_request_response_bytes_both_ways)
{
	struct xdp_response r = {
		.request_seq = 7, .begin = 1200, .end = 2199, .product = 157, .channel = 2,
		.status = XDP_ST_DAILY_LIMIT,
	};
	struct xdp_response back;
	uint8_t out[64];

	memcpy(r.source_id, "WIREBOOK\0\0", XDP_SOURCE_ID_LEN);
	ck_assert_uint_eq(xdp_encode_request_response(out, 2, &r, SEND_NS),
			  sizeof(response_refused));
	ck_assert_mem_eq(out, response_refused, sizeof(response_refused));

	ck_assert_int_eq(xdp_parse_response(response_refused + 16, 29, &back), 0);
	ck_assert_uint_eq(back.request_seq, 7);
	ck_assert_uint_eq(back.begin, 1200);
	ck_assert_uint_eq(back.end, 2199);
	ck_assert_mem_eq(back.source_id, "WIREBOOK\0\0", XDP_SOURCE_ID_LEN);
	ck_assert_uint_eq(back.product, 157);
	ck_assert_uint_eq(back.channel, 2);
	ck_assert_uint_eq(back.status, '4');
	ck_assert_str_eq(xdp_status_text(back.status), "daily request limit");
}
END_TEST

START_TEST(test_response_parser_refuses_what_is_not_a_response)
{
	uint8_t m[29];
	struct xdp_response r;

	memcpy(m, response_refused + 16, sizeof(m));
	ck_assert_int_eq(xdp_parse_response(m, 28, &r), -1);		/* cut short */
	m[2] = 12;							/* another type */
	ck_assert_int_eq(xdp_parse_response(m, 29, &r), -1);
	m[2] = 11;
	m[0] = 20;							/* MsgSize too small */
	ck_assert_int_eq(xdp_parse_response(m, 29, &r), -1);
	m[0] = 29;
	m[28] = 0;		/* a binary status reads as its digit */
	ck_assert_int_eq(xdp_parse_response(m, 29, &r), 0);
	ck_assert_uint_eq(r.status, XDP_ST_ACCEPTED);
}
END_TEST

START_TEST(test_message_unavailable_bytes_and_parse)
{
	static const uint8_t golden[30] = {
		0x1e, 0x00,			/* PktSize 30 */
		0x15,				/* DeliveryFlag 21: message unavailable */
		0x01,
		0xe8, 0x03, 0x00, 0x00,		/* SeqNum: the range's first, 1000 */
		0x90, 0xff, 0x24, 0x69, 0x15, 0xcd, 0x5b, 0x07,
		0x0e, 0x00, 0x1f, 0x00,		/* MsgSize 14, MsgType 31 */
		0xe8, 0x03, 0x00, 0x00,		/* BeginSeqNum 1000 */
		0xf1, 0x03, 0x00, 0x00,		/* EndSeqNum 1009 */
		0x0b, 0x01,			/* ProductID 11 (NYSE), ChannelID 1 */
	};
	uint8_t out[64];
	uint32_t begin, end;
	uint8_t product, channel;

	ck_assert_uint_eq(xdp_encode_unavailable(out, 1000, 1009, 11, 1, SEND_NS), sizeof(golden));
	ck_assert_mem_eq(out, golden, sizeof(golden));
	ck_assert(xdp_parse_unavailable(golden, sizeof(golden), &begin, &end, &product, &channel));
	ck_assert_uint_eq(begin, 1000);
	ck_assert_uint_eq(end, 1009);
	ck_assert_uint_eq(product, 11);
	ck_assert_uint_eq(channel, 1);
	/* A retransmitted data packet is no Message Unavailable. */
	memcpy(out, golden, sizeof(golden));
	out[18] = 100;
	ck_assert(!xdp_parse_unavailable(out, sizeof(golden), &begin, &end, &product, &channel));
	ck_assert(!xdp_parse_unavailable(golden, 29, &begin, &end, &product, &channel));
}
END_TEST

START_TEST(test_request_parser_reads_each_request_and_refuses_others)
{
	static const uint8_t refresh[20] = {
		0x14, 0x00, 0x0f, 0x00,		/* MsgSize 20, MsgType 15 */
		0x00, 0x00, 0x00, 0x00,		/* SymbolIndex 0: all */
		'W', 'B', 0, 0, 0, 0, 0, 0, 0, 0,
		0x3b, 0x05,			/* ProductID 59 (American), ChannelID 5 */
	};
	uint8_t pkt[64];
	struct xdp_request r;

	xdp_encode_retrans_request(pkt, 1, 5, 9, "WB", 11, 3, SEND_NS);
	ck_assert_int_eq(xdp_parse_request(pkt + 16, 24, &r), 0);
	ck_assert_uint_eq(r.type, XDP_RETRANSMISSION_REQUEST);
	ck_assert_uint_eq(r.begin, 5);
	ck_assert_uint_eq(r.end, 9);
	ck_assert_str_eq(r.source_id, "WB");
	ck_assert_uint_eq(r.product, 11);
	ck_assert_uint_eq(r.channel, 3);

	ck_assert_int_eq(xdp_parse_request(refresh, sizeof(refresh), &r), 0);
	ck_assert_uint_eq(r.type, XDP_REFRESH_REQUEST);
	ck_assert_uint_eq(r.symbol_index, 0);
	ck_assert_uint_eq(r.product, 59);
	ck_assert_uint_eq(r.channel, 5);

	/* A Retransmission Request of another size, and a type no request has: status 9. */
	pkt[16] = 25;
	ck_assert_int_eq(xdp_parse_request(pkt + 16, 25, &r), -1);
	pkt[16] = 24;
	pkt[18] = 100;
	ck_assert_int_eq(xdp_parse_request(pkt + 16, 24, &r), -1);
	ck_assert_int_eq(xdp_parse_request(pkt + 16, 3, &r), -1);
}
END_TEST

START_TEST(test_product_ids_of_the_nyse_markets)
{
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_NYSE), 11);
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_AMERICAN), 59);
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_NATIONAL), 109);
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_ARCA), 157);
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_TEXAS), 209);
	ck_assert_uint_eq(xdp_product_of_venue(WB_VENUE_NASDAQ), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recovery_xdp");
	TCase *tc = tcase_create("wire");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_retransmission_request_bytes);
	tcase_add_test(tc, test_heartbeat_response_bytes);
	tcase_add_test(tc, test_request_response_bytes_both_ways);
	tcase_add_test(tc, test_response_parser_refuses_what_is_not_a_response);
	tcase_add_test(tc, test_message_unavailable_bytes_and_parse);
	tcase_add_test(tc, test_request_parser_reads_each_request_and_refuses_others);
	tcase_add_test(tc, test_product_ids_of_the_nyse_markets);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
