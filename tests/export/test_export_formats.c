/*
 * wb-export's order-level formats: each DBN record kind and the metadata
 * against bytes written out by hand from the published layout
 * (docs/specs/dbn.md), an hftbacktest row and .npy header likewise
 * (docs/specs/hftbacktest.md), and the order actions an execution, a
 * partial cancel, a delete and a replace of a resting order become.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export/dbn.h"
#include "export/hftbacktest.h"
#include "export/sink.h"

static struct dbn_record sample(char action, char side)
{
	return (struct dbn_record){
		.publisher_id = 2, .instrument_id = 0x01020304, .ts_event = 0x1122334455667788ull,
		.ts_recv = 0x1122334455667799ull, .order_id = 0x0102030405060708ull,
		.price = 1500000000, .size = 100, .flags = DBN_F_LAST, .channel_id = 3,
		.action = action, .side = side, .sequence = 0x0a0b0c0d,
	};
}

START_TEST(mbo_golden)
{
	static const uint8_t want[DBN_MBO_LEN] = {
		0x0e, 0xa0, 0x02, 0x00, 0x04, 0x03, 0x02, 0x01,		/* length/4, rtype, pub, inst */
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,		/* ts_event */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,		/* order_id */
		0x00, 0x2f, 0x68, 0x59, 0x00, 0x00, 0x00, 0x00,		/* price 1.5 in 1e-9 */
		0x64, 0x00, 0x00, 0x00, 0x80, 0x03, 'A', 'B',		/* size, flags, channel, action, side */
		0x99, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,		/* ts_recv */
		0x00, 0x00, 0x00, 0x00, 0x0d, 0x0c, 0x0b, 0x0a,		/* ts_in_delta, sequence */
	};
	struct dbn_record r = sample('A', 'B');
	uint8_t out[DBN_MBO_LEN];

	ck_assert_uint_eq(dbn_encode_mbo(out, &r), sizeof(want));
	ck_assert_mem_eq(out, want, sizeof(want));
}
END_TEST

/* What trades and MBP records share: 48 bytes. */
static const uint8_t mbp_head[48] = {
	0x00, 0x00, 0x02, 0x00, 0x04, 0x03, 0x02, 0x01,		/* length, rtype: per test */
	0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	0x00, 0x2f, 0x68, 0x59, 0x00, 0x00, 0x00, 0x00,		/* price */
	0x64, 0x00, 0x00, 0x00, 'T', 'A', 0x80, 0x02,		/* size, action, side, flags, depth */
	0x99, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,		/* ts_recv */
	0x00, 0x00, 0x00, 0x00, 0x0d, 0x0c, 0x0b, 0x0a,
};

START_TEST(trade_golden)
{
	struct dbn_record r = sample('T', 'A');
	uint8_t want[48], out[DBN_TRADE_LEN];

	memcpy(want, mbp_head, sizeof(want));
	want[0] = 12;
	want[1] = 0x00;
	r.depth = 2;
	ck_assert_uint_eq(dbn_encode_trade(out, &r), sizeof(want));
	ck_assert_mem_eq(out, want, sizeof(want));
}
END_TEST

static const uint8_t level0[DBN_LEVEL_LEN] = {
	0x00, 0xe4, 0x0b, 0x54, 0x02, 0x00, 0x00, 0x00,		/* bid_px 10.0 */
	0x80, 0x7a, 0xa4, 0x54, 0x02, 0x00, 0x00, 0x00,		/* ask_px 10.01 */
	0xc8, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,		/* bid_sz 200, ask_sz 300 */
	0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,		/* bid_ct 2, ask_ct 3 */
};
static const uint8_t level_undef[DBN_LEVEL_LEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
};

START_TEST(mbp_golden)
{
	struct dbn_record r = sample('T', 'A');
	struct dbn_level lv[10];
	uint8_t out[DBN_MBP10_LEN];

	r.depth = 2;
	lv[0] = (struct dbn_level){ .bid_px = 10000000000, .ask_px = 10010000000, .bid_sz = 200,
				    .ask_sz = 300, .bid_ct = 2, .ask_ct = 3 };
	for (int i = 1; i < 10; i++)
		lv[i] = (struct dbn_level){ .bid_px = DBN_PRICE_UNDEF, .ask_px = DBN_PRICE_UNDEF };

	ck_assert_uint_eq(dbn_encode_mbp(out, &r, lv, 1), DBN_MBP1_LEN);
	ck_assert_uint_eq(out[0], 20);
	ck_assert_uint_eq(out[1], 0x01);
	ck_assert_mem_eq(out + 2, mbp_head + 2, 46);
	ck_assert_mem_eq(out + 48, level0, DBN_LEVEL_LEN);

	ck_assert_uint_eq(dbn_encode_mbp(out, &r, lv, 10), DBN_MBP10_LEN);
	ck_assert_uint_eq(out[0], 92);
	ck_assert_uint_eq(out[1], 0x0a);
	ck_assert_mem_eq(out + 2, mbp_head + 2, 46);
	ck_assert_mem_eq(out + 48, level0, DBN_LEVEL_LEN);
	for (int i = 1; i < 10; i++)
		ck_assert_mem_eq(out + 48 + i * DBN_LEVEL_LEN, level_undef, DBN_LEVEL_LEN);
}
END_TEST

static int zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

START_TEST(metadata_golden)
{
	const struct dbn_mapping mp = { "AAPL", 20260127, 20260128, 7 };
	const struct dbn_metadata m = { .dataset = "WIREBOOK", .schema = DBN_SCHEMA_MBO,
					.start = 1, .end = 2, .mappings = &mp, .nmappings = 1 };
	static const uint8_t prefix[8] = { 'D', 'B', 'N', 3, 0x60, 0x01, 0x00, 0x00 };
	static const uint8_t fixed[32] = {
		'W', 'I', 'R', 'E', 'B', 'O', 'O', 'K', 0, 0, 0, 0, 0, 0, 0, 0,	/* dataset[16] */
		0x00, 0x00,							/* schema mbo */
		0x01, 0, 0, 0, 0, 0, 0, 0,					/* start */
		0x02, 0, 0, 0, 0, 0,						/* end ... */
	};
	uint8_t out[512];

	/* 100 fixed + 5 counts + one symbol (71) + one mapping (71 + 4 + 4 + 4 + 71) = 345, padded to 352 */
	ck_assert_uint_eq(dbn_metadata_len(&m), 360);
	ck_assert_uint_eq(dbn_encode_metadata(out, &m), 360);
	ck_assert_mem_eq(out, prefix, sizeof(prefix));
	ck_assert_mem_eq(out + 8, fixed, sizeof(fixed));
	ck_assert(zeros(out + 40, 10));			/* end's top bytes, limit */
	ck_assert_uint_eq(out[50], 1);			/* stype_in raw_symbol */
	ck_assert_uint_eq(out[51], 0);			/* stype_out instrument_id */
	ck_assert_uint_eq(out[52], 0);			/* ts_out */
	ck_assert_uint_eq(out[53], 71);			/* symbol_cstr_len */
	ck_assert_uint_eq(out[54], 0);
	ck_assert(zeros(out + 55, 53 + 4));		/* reserved, schema definition length */
	ck_assert_uint_eq(out[112], 1);			/* symbols */
	ck_assert_mem_eq(out + 116, "AAPL\0", 5);
	ck_assert(zeros(out + 121, 66 + 8));		/* the cstr's rest; partial, not_found */
	ck_assert_uint_eq(out[195], 1);			/* mappings */
	ck_assert_mem_eq(out + 199, "AAPL\0", 5);
	ck_assert_uint_eq(out[270], 1);			/* intervals */
	/* 20260127 = 0x0135251f, 20260128 = 0x01352520 */
	ck_assert_mem_eq(out + 274, "\x1f\x25\x35\x01\x20\x25\x35\x01", 8);
	ck_assert_mem_eq(out + 282, "7\0", 2);
	ck_assert(zeros(out + 284, 360 - 284));
}
END_TEST

START_TEST(publishers_and_schemas)
{
	ck_assert_uint_eq(dbn_publisher(WB_VENUE_NASDAQ), 2);
	ck_assert_uint_eq(dbn_publisher(WB_VENUE_BZX), 5);
	ck_assert_uint_eq(dbn_publisher(WB_VENUE_ARCA), 43);
	ck_assert_uint_eq(dbn_publisher(WB_VENUE_LTSE), 0);
	ck_assert_uint_eq(dbn_schemas("mbo,trades"), DBN_WANT_MBO | DBN_WANT_TRADES);
	ck_assert_uint_eq(dbn_schemas("mbp-10"), DBN_WANT_MBP_10);
	ck_assert_uint_eq(dbn_schemas("mbo,bogus"), 0);
	ck_assert_int_eq(dbn_price(12345678), 123456780);
	ck_assert_int_eq(dbn_price(INT64_MAX), DBN_PRICE_UNDEF);
}
END_TEST

START_TEST(hftbacktest_golden)
{
	static const uint8_t want[HBT_ROW_LEN] = {
		0x0a, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0x00,		/* ADD | BUY | EXCH | LOCAL */
		0x01, 0, 0, 0, 0, 0, 0, 0,				/* exch_ts */
		0x02, 0, 0, 0, 0, 0, 0, 0,				/* local_ts */
		0, 0, 0, 0, 0, 0, 0xf8, 0x3f,				/* px 1.5 */
		0, 0, 0, 0, 0, 0, 0x59, 0x40,				/* qty 100 */
		0x07, 0, 0, 0, 0, 0, 0, 0,				/* order_id */
		0, 0, 0, 0, 0, 0, 0, 0,					/* ival */
		0, 0, 0, 0, 0, 0, 0, 0,					/* fval */
	};
	const struct hbt_row r = { .ev = HBT_ADD_ORDER_EVENT | HBT_BUY_EVENT | HBT_EXCH_EVENT |
				   HBT_LOCAL_EVENT, .exch_ts = 1, .local_ts = 2, .px = 1.5,
				   .qty = 100, .order_id = 7 };
	uint8_t out[HBT_ROW_LEN];
	char hdr[1024];
	size_t n;

	hbt_encode_row(out, &r);
	ck_assert_mem_eq(out, want, sizeof(want));
	n = hbt_npy_header(hdr, sizeof(hdr), 12345);
	ck_assert_uint_eq(n % 64, 0);
	ck_assert_mem_eq(hdr, "\x93NUMPY\x01\x00", 8);
	ck_assert_uint_eq((size_t)(uint8_t)hdr[8] | (size_t)(uint8_t)hdr[9] << 8, n - 10);
	ck_assert_int_eq(hdr[n - 1], '\n');
	hdr[n - 1] = 0;
	ck_assert_ptr_nonnull(strstr(hdr + 10, "'shape': (12345,)"));
	ck_assert_ptr_nonnull(strstr(hdr + 10, "('ev', '<u8'), ('exch_ts', '<i8')"));
	ck_assert_ptr_nonnull(strstr(hdr + 10, "'fortran_order': False"));
}
END_TEST

static struct wb_event order_event(uint8_t kind, uint64_t id, int64_t price, uint32_t qty)
{
	struct wb_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.venue = WB_VENUE_NASDAQ;
	ev.instrument = 5;
	ev.u.order.order_id = id;
	ev.u.order.price = price;
	ev.u.order.qty = qty;
	return ev;
}

START_TEST(actions_follow_the_order)
{
	struct venue_books_config cfg = { .numa_node = -1, .max_instruments = 16 };
	struct venue_books *vb = venue_books_create(&cfg);
	struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];
	struct order_action a[SINK_ACTIONS_MAX];
	struct wb_event ev = order_event(WB_EV_ADD, 11, 1000000000, 300);

	ck_assert_ptr_nonnull(vb);
	ev.side = WB_SIDE_SELL;
	ck_assert_uint_eq(order_actions(vb, &ev, a), 1);
	ck_assert_int_eq(a[0].action, 'A');
	ck_assert_int_eq(a[0].side, 'A');
	venue_books_apply(vb, &ev, up);

	/* an execution without side or price (as ITCH's): the order's own */
	ev = order_event(WB_EV_EXECUTE, 11, 0, 100);
	ck_assert_uint_eq(order_actions(vb, &ev, a), 3);
	ck_assert_int_eq(a[0].action, 'T');
	ck_assert_int_eq(a[0].side, 'B');		/* the aggressor bought */
	ck_assert_int_eq(a[0].price, 1000000000);
	ck_assert_int_eq(a[1].action, 'F');
	ck_assert_int_eq(a[1].side, 'A');
	ck_assert_uint_eq(a[1].order_id, 11);
	ck_assert_int_eq(a[2].action, 'C');
	ck_assert_uint_eq(a[2].size, 100);
	ck_assert_uint_eq(a[2].remaining, 200);
	venue_books_apply(vb, &ev, up);

	ev = order_event(WB_EV_REPLACE, 11, 1010000000, 50);
	ev.u.order.ref = 12;
	ck_assert_uint_eq(order_actions(vb, &ev, a), 2);
	ck_assert_int_eq(a[0].action, 'C');
	ck_assert_uint_eq(a[0].size, 200);
	ck_assert_int_eq(a[0].price, 1000000000);
	ck_assert_int_eq(a[1].action, 'A');
	ck_assert_int_eq(a[1].side, 'A');
	ck_assert_uint_eq(a[1].order_id, 12);
	ck_assert_int_eq(a[1].price, 1010000000);
	venue_books_apply(vb, &ev, up);

	ev = order_event(WB_EV_DELETE, 12, 0, 0);
	ck_assert_uint_eq(order_actions(vb, &ev, a), 1);
	ck_assert_int_eq(a[0].action, 'C');
	ck_assert_uint_eq(a[0].size, 50);
	ck_assert_uint_eq(a[0].remaining, 0);
	ck_assert_int_eq(a[0].price, 1010000000);
	venue_books_apply(vb, &ev, up);

	/* gone: unknown side and price */
	ck_assert_uint_eq(order_actions(vb, &ev, a), 1);
	ck_assert_int_eq(a[0].side, 'N');
	ck_assert_int_eq(a[0].price, SINK_PRICE_NONE);
	/* a replace of an unknown order: its price is the new order's, not the old one's */
	ev = order_event(WB_EV_REPLACE, 12, 1020000000, 10);
	ev.u.order.ref = 14;
	ck_assert_uint_eq(order_actions(vb, &ev, a), 2);
	ck_assert_int_eq(a[0].price, SINK_PRICE_NONE);
	ck_assert_int_eq(a[1].side, 'N');
	ck_assert_int_eq(a[1].price, 1020000000);

	ev = order_event(WB_EV_TRADE_BREAK, 0, 0, 0);
	ck_assert_uint_eq(order_actions(vb, &ev, a), 0);
	ev = order_event(WB_EV_ADD, 13, 1, 1);
	ev.flags = WB_EVF_SIP;
	ck_assert_uint_eq(order_actions(vb, &ev, a), 0);
	venue_books_destroy(vb);
}
END_TEST

static Suite *formats_suite(void)
{
	Suite *s = suite_create("export_formats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, mbo_golden);
	tcase_add_test(tc, trade_golden);
	tcase_add_test(tc, mbp_golden);
	tcase_add_test(tc, metadata_golden);
	tcase_add_test(tc, publishers_and_schemas);
	tcase_add_test(tc, hftbacktest_golden);
	tcase_add_test(tc, actions_follow_the_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(formats_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
