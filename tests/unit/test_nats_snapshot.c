/*
 * Book snapshots over NATS (issue 26; tools/net/nats_snapshot.h,
 * nats_shadow.h), the parts that need no server (tests/nats/nats.sh loads
 * real ones):
 *
 * - a snapshot's header and records (each with its repeat) read back as
 *   written; one cut short anywhere, a record repeated 0 times, or a
 *   header whose event count its records do not hold, refused;
 * - a snapshot head (the chunks' sequences) reads back, and one cut short
 *   or claiming more bytes than its chunks hold is refused;
 * - the shadow books' snapshot, applied to empty venue books, gives the
 *   books the events gave (the same checksum), the trades as many and of
 *   the same printable volume, and no order left of the one that marks a
 *   venue that had levels; a symbol a CQS gap left stale is stale again
 *   after the snapshot, one quoted since is not;
 * - the conflated book messages' prices (nats_books.h): exact decimals of
 *   the 1e-8 fixed point, no trailing zeros, negative ones signed.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "book/update.h"
#include "book/venue_book.h"
#include "net/nats_books.h"
#include "net/nats_shadow.h"
#include "net/nats_snapshot.h"

static void order_event(struct wb_event *ev, uint8_t kind, uint16_t inst, uint64_t id, int64_t price,
			uint32_t qty)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->venue = WB_VENUE_NASDAQ;
	ev->side = id & 1 ? WB_SIDE_BUY : WB_SIDE_SELL;
	ev->instrument = inst;
	ev->u.order.order_id = id;
	ev->u.order.price = price * WB_PRICE_SCALE;
	ev->u.order.qty = qty;
}

/* A snapshot of n records, record i repeated i % 3 + 1 times. */
static size_t make_snapshot(struct nats_snap_writer *w, uint64_t n, struct nats_snap_header *h)
{
	uint64_t i;

	memset(w, 0, sizeof(*w));
	memset(h, 0, sizeof(*h));
	for (i = 0; i < n; i++) {
		struct wb_event ev;

		order_event(&ev, WB_EV_ADD, 1, i + 1, 100 + (int64_t)i, 100);
		nats_snap_writer_add(w, (uint32_t)(i % 3 + 1), &ev);
	}
	h->run = 7;
	h->global = 1234;
	h->start_seq = 99;
	h->taken_ns = 5;
	strcpy(h->stream, "WIREBOOK_T_20260101");
	return nats_snap_writer_finish(w, h);
}

START_TEST(test_snapshot_reads_back_as_written)
{
	struct nats_snap_writer w;
	struct nats_snap_header h, back;
	char err[200];
	size_t len = make_snapshot(&w, 10, &h);
	uint64_t i;

	ck_assert_uint_eq(len, nats_snap_size(10));
	ck_assert_int_eq(nats_snap_parse(w.buf, len, &back, err, sizeof(err)), 0);
	ck_assert_uint_eq(back.run, 7);
	ck_assert_uint_eq(back.global, 1234);
	ck_assert_uint_eq(back.start_seq, 99);
	ck_assert_uint_eq(back.records, 10);
	ck_assert_uint_eq(back.events, 1 + 2 + 3 + 1 + 2 + 3 + 1 + 2 + 3 + 1);
	ck_assert_str_eq(back.stream, "WIREBOOK_T_20260101");
	for (i = 0; i < 10; i++) {
		struct wb_event ev, want;

		order_event(&want, WB_EV_ADD, 1, i + 1, 100 + (int64_t)i, 100);
		ck_assert_uint_eq(nats_snap_record_at(w.buf, i, &ev), i % 3 + 1);
		ck_assert_mem_eq(&ev, &want, sizeof(ev));
	}
	nats_snap_writer_free(&w);
}
END_TEST

START_TEST(test_snapshot_cut_short_or_wrong_is_refused)
{
	struct nats_snap_writer w;
	struct nats_snap_header h, back;
	char err[200];
	size_t len = make_snapshot(&w, 5, &h), cut;

	for (cut = 0; cut < len; cut++)
		ck_assert_int_eq(nats_snap_parse(w.buf, cut, &back, err, sizeof(err)), -1);
	/* a record repeated 0 times */
	w.buf[NATS_SNAP_HEADER + 2 * NATS_SNAP_RECORD] = 0;
	ck_assert_int_eq(nats_snap_parse(w.buf, len, &back, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "repeats 0"));
	w.buf[NATS_SNAP_HEADER + 2 * NATS_SNAP_RECORD] = 3;
	ck_assert_int_eq(nats_snap_parse(w.buf, len, &back, err, sizeof(err)), 0);
	/* the header's event count not what the records hold */
	h.events++;
	nats_snap_put_header(w.buf, &h);
	ck_assert_int_eq(nats_snap_parse(w.buf, len, &back, err, sizeof(err)), -1);
	/* not a snapshot at all */
	memset(w.buf, 0, 4);
	ck_assert_int_eq(nats_snap_parse(w.buf, len, &back, err, sizeof(err)), -1);
	nats_snap_writer_free(&w);
}
END_TEST

START_TEST(test_snapshot_head_reads_back_and_refuses_short)
{
	uint64_t seqs[3] = { 10, 11, 15 }, bytes;
	uint8_t head[64];
	uint32_t chunks;
	char err[200];
	size_t len = nats_snap_head_size(3), cut;

	nats_snap_put_head(head, 3, 2 * NATS_SNAP_CHUNK + 17, seqs);
	ck_assert_int_eq(nats_snap_parse_head(head, len, &chunks, &bytes, err, sizeof(err)), 0);
	ck_assert_uint_eq(chunks, 3);
	ck_assert_uint_eq(bytes, 2 * NATS_SNAP_CHUNK + 17);
	ck_assert_uint_eq(nats_snap_head_seq(head, 2), 15);
	for (cut = 0; cut < len; cut++)
		ck_assert_int_eq(nats_snap_parse_head(head, cut, &chunks, &bytes, err, sizeof(err)), -1);
	/* more bytes than three chunks carry */
	nats_snap_put_head(head, 3, 3 * (uint64_t)NATS_SNAP_CHUNK + 1, seqs);
	ck_assert_int_eq(nats_snap_parse_head(head, len, &chunks, &bytes, err, sizeof(err)), -1);
}
END_TEST

static struct book_update *keep_none(void *ctx, const struct wb_event *ev, struct book_update *u,
				     unsigned k)
{
	(void)ctx;
	(void)ev;
	(void)k;
	return u;
}

START_TEST(test_shadow_snapshot_rebuilds_the_books)
{
	struct venue_books_config c = { .max_instruments = 64, .expected_orders = 1024,
					.numa_node = -1 };
	struct venue_books *direct = venue_books_create(&c), *rebuilt = venue_books_create(&c);
	struct nats_shadow *sh = nats_shadow_create(64);
	struct book_update up[BOOK_MAX_UPDATES_PER_EVENT];
	struct nats_snap_writer w;
	struct nats_snap_header h;
	uint64_t trades = 0, volume = 0, id, i;
	struct wb_event ev;
	size_t len;

	ck_assert_ptr_nonnull(direct);
	ck_assert_ptr_nonnull(rebuilt);
	ck_assert_ptr_nonnull(sh);
	/* Orders on two symbols, some executed (trades), some deleted: one
	 * symbol's orders all gone (its venue had levels: still present). */
	for (id = 1; id <= 200; id++) {
		order_event(&ev, WB_EV_ADD, (uint16_t)(id % 2 + 1), id, 100 + (int64_t)(id % 7),
			    (uint32_t)(100 + id));
		venue_books_apply(direct, &ev, up);
		nats_shadow_apply(sh, &ev);
	}
	for (id = 1; id <= 200; id += 3) {
		order_event(&ev, id % 2 ? WB_EV_DELETE : WB_EV_EXECUTE, 0, id, 0, 10);
		ev.flags = WB_EVF_PRINTABLE;
		venue_books_apply(direct, &ev, up);
		nats_shadow_apply(sh, &ev);
	}
	for (id = 2; id <= 200; id += 2) {	/* instrument 1: every order gone */
		order_event(&ev, WB_EV_DELETE, 0, id, 0, 0);
		venue_books_apply(direct, &ev, up);
		nats_shadow_apply(sh, &ev);
	}
	memset(&w, 0, sizeof(w));
	memset(&h, 0, sizeof(h));
	nats_shadow_snapshot(sh, &w, 1);
	h.run = 1;
	h.start_seq = 1;
	len = nats_snap_writer_finish(&w, &h);
	ck_assert_uint_gt(len, NATS_SNAP_HEADER);
	for (i = 0; i < h.records; i++) {
		uint32_t r = nats_snap_record_at(w.buf, i, &ev);

		while (r--) {
			venue_books_apply_batch(rebuilt, &ev, UINT64_MAX, 0, 1, 1, up, keep_none, NULL);
			if (ev.kind == WB_EV_TRADE) {
				trades++;
				volume += ev.flags & WB_EVF_PRINTABLE ? ev.u.trade.qty : 0;
			}
		}
	}
	ck_assert_uint_eq(venue_books_checksum(rebuilt, NULL), venue_books_checksum(direct, NULL));
	ck_assert_uint_eq(venue_books_counters(rebuilt)->live_orders,
			  venue_books_counters(direct)->live_orders);
	/* The executes of even ids (instrument 1): 10 shares each, printable. */
	ck_assert_uint_eq(trades, 33);
	ck_assert_uint_eq(volume, 33 * 10);
	nats_snap_writer_free(&w);
	nats_shadow_destroy(sh);
	venue_books_destroy(direct);
	venue_books_destroy(rebuilt);
}
END_TEST

/* The CQS gap records of a snapshot: instrument -> 1 when there is one. */
static void stale_marks(struct nats_shadow *sh, uint8_t *marked, unsigned n)
{
	struct nats_snap_writer w;
	struct nats_snap_header h;
	struct wb_event ev;
	uint64_t i;

	memset(&w, 0, sizeof(w));
	memset(&h, 0, sizeof(h));
	memset(marked, 0, n);
	nats_shadow_snapshot(sh, &w, 1);
	nats_snap_writer_finish(&w, &h);
	for (i = 0; i < h.records; i++) {
		nats_snap_record_at(w.buf, i, &ev);
		if (ev.kind == WB_EV_GAP && ev.venue == WB_VENUE_SIP_CQS && ev.instrument < n)
			marked[ev.instrument] = 1;
	}
	nats_snap_writer_free(&w);
}

START_TEST(test_shadow_keeps_cqs_stale_marks)
{
	struct nats_shadow *sh = nats_shadow_create(64);
	struct wb_event ev;
	uint8_t marked[4];
	uint16_t inst;

	ck_assert_ptr_nonnull(sh);
	for (inst = 1; inst <= 2; inst++) {	/* two symbols quoted through CQS */
		memset(&ev, 0, sizeof(ev));
		ev.kind = WB_EV_NBBO;
		ev.flags = WB_EVF_SIP;
		ev.venue = WB_VENUE_SIP_CQS;
		ev.instrument = inst;
		nats_shadow_apply(sh, &ev);
		ev.kind = WB_EV_QUOTE;
		ev.venue = WB_VENUE_NYSE;
		nats_shadow_apply(sh, &ev);
	}
	stale_marks(sh, marked, 4);
	ck_assert(!marked[1] && !marked[2]);
	memset(&ev, 0, sizeof(ev));	/* a CQS gap: every symbol through CQS */
	ev.kind = WB_EV_GAP;
	ev.venue = WB_VENUE_SIP_CQS;
	ev.u.gap.reason = WB_GAP_SEQUENCE;
	ev.u.gap.count = 5;
	nats_shadow_apply(sh, &ev);
	memset(&ev, 0, sizeof(ev));	/* symbol 2 quoted again: current */
	ev.kind = WB_EV_QUOTE;
	ev.flags = WB_EVF_SIP;
	ev.venue = WB_VENUE_NYSE;
	ev.instrument = 2;
	nats_shadow_apply(sh, &ev);
	stale_marks(sh, marked, 4);
	ck_assert(marked[1]);
	ck_assert(!marked[2]);
	nats_shadow_destroy(sh);
}
END_TEST

START_TEST(test_book_prices_are_exact_decimals)
{
	static const struct {
		int64_t price;
		const char *text;
	} cases[] = {
		{ 18952000000, "189.52" },	{ 100 * WB_PRICE_SCALE, "100" },
		{ 1, "0.00000001" },		{ 12345678912345678, "123456789.12345678" },
		{ -150000000, "-1.5" },		{ 0, "0" },
		{ INT64_MIN, "-92233720368.54775808" },
	};
	char out[40];
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		nats_books_price(out, sizeof(out), cases[i].price);
		ck_assert_str_eq(out, cases[i].text);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nats_snapshot");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_snapshot_reads_back_as_written);
	tcase_add_test(tc, test_snapshot_cut_short_or_wrong_is_refused);
	tcase_add_test(tc, test_snapshot_head_reads_back_and_refuses_short);
	tcase_add_test(tc, test_shadow_snapshot_rebuilds_the_books);
	tcase_add_test(tc, test_shadow_keeps_cqs_stale_marks);
	tcase_add_test(tc, test_book_prices_are_exact_decimals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
