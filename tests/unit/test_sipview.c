/*
 * The SIP view beside the Super-Book and its comparison with the direct
 * books: SIP updates and direct level changes go into a superbook; what
 * libwirebook reads back (wb_sip_view, wb_sip_summary, wb_sip_venue_stats,
 * wb_sip_episode) must say what a reader of both feeds saw.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book/checksum.h"
#include "book/sipview.h"
#include "book/spsc.h"
#include "book/superbook.h"
#include "book/venue_book.h"
#include "wirebook/book.h"

#define C (WB_PRICE_SCALE / 100)	/* one cent */
#define P(d, c) ((int64_t)(d) * WB_PRICE_SCALE + (int64_t)(c) * C)
#define T0 1771509600000000000ull	/* 2026-02-19 09:00 ET */

static char shm_name[64];
static struct superbook *sb;
static struct wb_book *bk;

static void setup(void)
{
	struct superbook_config cfg = { .shm_name = shm_name, .capacity = 64, .numa_node = -1 };
	int err = 0;

	snprintf(shm_name, sizeof(shm_name), "wbtest_sip_%d", (int)getpid());
	sb = superbook_create(&cfg, &err);
	ck_assert_msg(sb, "superbook_create: %d", err);
	superbook_add_symbol(sb, 1, "AAPL    ");
	bk = wb_open(shm_name, &err);
	ck_assert_msg(bk, "wb_open: %s", wb_strerror(err));
}

static void teardown(void)
{
	wb_close(bk);
	superbook_destroy(sb);
}

static void apply(struct book_update u)
{
	superbook_apply(sb, &u);
}

static void publish(void)
{
	apply((struct book_update){ .kind = BOOK_UP_BATCH_END });
}

/* A direct venue's level (qty 0 removes it) at receive time t (exchange time t - 100). */
static void level(uint8_t venue, uint8_t side, int64_t price, uint64_t qty, uint64_t t)
{
	apply((struct book_update){ .kind = BOOK_UP_LEVEL, .venue = venue, .side = side,
				    .instrument = 1, .price = price, .qty = qty, .order_count = qty ? 1 : 0,
				    .exch_ts = t - 100, .recv_ts = t });
}

/* A participant's quote through the SIP, received at t (SIP time t - 50, participant t - 80). */
static void sip_quote(uint8_t venue, int64_t bid, uint32_t bq, int64_t ask, uint32_t aq, uint64_t t)
{
	struct book_update u = { .kind = BOOK_UP_SIP_QUOTE, .venue = venue, .side = 'R',
				 .flags = WB_EVF_SIP, .instrument = 1, .price = bid, .order_count = bq,
				 .round_lot = aq, .qty = t - 50, .exch_ts = t - 80, .recv_ts = t };

	u.u.ask_price = ask;
	apply(u);
}

static void sip_nbbo(int64_t bid, uint8_t bv, int64_t ask, uint8_t av, uint64_t t)
{
	struct wb_ev_nbbo n = { .bid_venue = bv, .ask_venue = av, .indicator = '4',
				.sides = WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED };
	struct book_update u = { .kind = BOOK_UP_SIP_NBBO, .venue = WB_VENUE_SIP_UQDF,
				 .flags = WB_EVF_SIP, .instrument = 1, .price = bid, .order_count = 100,
				 .round_lot = 100, .qty = book_sip_nbbo_pack(&n), .exch_ts = t - 50,
				 .recv_ts = t };

	u.u.ask_price = ask;
	apply(u);
}

static struct wb_sip_view view(void)
{
	struct wb_sip_view v;

	ck_assert_int_eq(wb_sip_view(bk, 1, &v), WB_OK);
	return v;
}

static struct wb_sip_summary summary(void)
{
	struct wb_sip_summary s;

	ck_assert_int_eq(wb_sip_summary(bk, &s), WB_OK);
	return s;
}

static struct wb_sip_venue_stats *venue_stats(int venue)
{
	static struct wb_sip_venue_stats vs;

	ck_assert_int_eq(wb_sip_venue_stats(bk, venue, &vs), WB_OK);
	return &vs;
}

/* ---- the view ---------------------------------------------------------------- */

START_TEST(test_sipview_symbol_without_sip_traffic_has_no_view)
{
	struct wb_sip_view v;

	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0);
	publish();
	ck_assert_int_eq(wb_sip_view(bk, 1, &v), WB_ENOSYM);
	ck_assert_int_eq(summary().symbols, 0);
}
END_TEST

START_TEST(test_sipview_quote_nbbo_luld_and_status_are_published_with_every_timestamp)
{
	struct book_update luld = { .kind = BOOK_UP_SIP_LULD, .venue = WB_VENUE_SIP_UQDF, .side = 'A',
				    .flags = WB_EVF_SIP, .instrument = 1, .price = P(9, 50),
				    .exch_ts = T0 + 7, .recv_ts = T0 + 9 };
	struct book_update halt = { .kind = BOOK_UP_SIP_STATUS, .venue = WB_VENUE_SIP_UQDF,
				    .flags = WB_EVF_SIP, .instrument = 1, .exch_ts = T0 + 20,
				    .recv_ts = T0 + 21 };
	struct wb_sip_quote q;
	struct wb_sip_nbbo n;
	struct wb_sip_view v;
	uint32_t flags;

	luld.u.ask_price = P(10, 50);
	halt.u.status.state = WB_STATE_HALTED;
	halt.u.status.raw_state = 'H';
	memcpy(halt.u.status.reason, "LUDP", 4);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 300, P(10, 2), 500, T0 + 1000);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 1001);
	apply(luld);
	apply(halt);

	ck_assert_int_eq(wb_sip_quote(bk, 1, WB_VENUE_NASDAQ, &q), WB_OK);
	ck_assert_int_eq(q.bid_price, P(10, 0));
	ck_assert_int_eq(q.ask_price, P(10, 2));
	ck_assert_uint_eq(q.bid_qty, 300);
	ck_assert_uint_eq(q.ask_qty, 500);
	ck_assert_uint_eq(q.exch_ts, T0 + 920);
	ck_assert_uint_eq(q.sip_ts, T0 + 950);
	ck_assert_uint_eq(q.recv_ts, T0 + 1000);
	ck_assert_int_eq(q.condition, 'R');
	ck_assert_uint_eq(q.quotes, 1);
	ck_assert_uint_eq(q.state, WB_STATE_UNKNOWN);

	ck_assert_int_eq(wb_sip_nbbo(bk, 1, &n, &flags), WB_OK);
	ck_assert_int_eq(n.bid_price, P(10, 0));
	ck_assert_uint_eq(n.bid_venue, WB_VENUE_NASDAQ);
	ck_assert_int_eq(n.indicator, '4');
	ck_assert_uint_eq(n.feed, WB_VENUE_SIP_UQDF);
	ck_assert_uint_eq(n.sip_ts, T0 + 951);
	ck_assert_uint_eq(n.recv_ts, T0 + 1001);
	ck_assert_uint_eq(flags & WB_SIPF_HALTED, WB_SIPF_HALTED);

	v = view();
	ck_assert_uint_eq(v.quotes_present, 1u << WB_VENUE_NASDAQ);
	ck_assert_int_eq(v.luld.lower, P(9, 50));
	ck_assert_int_eq(v.luld.upper, P(10, 50));
	ck_assert_int_eq(v.luld.indicator, 'A');
	ck_assert_uint_eq(v.status.state, WB_STATE_HALTED);
	ck_assert_mem_eq(v.status.reason, "LUDP", 4);
	ck_assert_uint_eq(v.status.sip_ts, T0 + 20);
	ck_assert_uint_eq(v.updates, 4);
	ck_assert_uint_eq(summary().symbols, 1);
	ck_assert_uint_eq(venue_stats(WB_VENUE_NASDAQ)->sip_quotes, 1);
	/* the SIP's own latency: sip_ts - participant time */
	ck_assert_uint_eq(venue_stats(WB_VENUE_NASDAQ)->sip_latency.max_ns, 30);
}
END_TEST

START_TEST(test_sipview_market_wide_status_is_the_summarys)
{
	struct book_update mwcb = { .kind = BOOK_UP_SIP_STATUS, .venue = WB_VENUE_SIP_CQS,
				    .flags = WB_EVF_SIP, .instrument = 0, .exch_ts = T0 + 5,
				    .recv_ts = T0 + 6 };

	mwcb.u.status.state = WB_STATE_HALTED;
	memcpy(mwcb.u.status.reason, "MWC1", 4);
	apply(mwcb);
	struct wb_sip_summary s = summary();

	ck_assert_uint_eq(s.mwcb.state, WB_STATE_HALTED);
	ck_assert_mem_eq(s.mwcb.reason, "MWC1", 4);
	ck_assert_uint_eq(s.mwcb.sip_ts, T0 + 5);
	ck_assert_uint_eq(s.mwcb.venue, WB_VENUE_SIP_CQS);
}
END_TEST

START_TEST(test_sipview_clear_from_the_sip_drops_its_quotes_and_nbbo)
{
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 300, P(10, 2), 500, T0 + 1000);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 1001);
	sip_quote(WB_VENUE_BZX, P(10, 0), 100, P(10, 3), 100, T0 + 1002);
	ck_assert_uint_eq(view().quotes_present, 1u << WB_VENUE_NASDAQ | 1u << WB_VENUE_BZX);
	apply((struct book_update){ .kind = BOOK_UP_SIP_CLEAR, .venue = WB_VENUE_SIP_UQDF,
				    .flags = WB_EVF_SIP, .instrument = 0 });
	struct wb_sip_view v = view();

	ck_assert_uint_eq(v.quotes_present, 0);
	ck_assert_int_eq(v.nbbo.bid_price, 0);
	ck_assert_uint_eq(v.nbbo.feed, 0);
}
END_TEST

/*
 * A UQDF snapshot (feed_snapshot_begin) clears its stream with a SIP clear
 * of instrument 0: through the venue books it reaches the SIP view, which
 * empties, and the snapshot's quotes build it again. The same clear without
 * WB_EVF_SIP (what the engine sent before) is no venue's and never got here.
 */
START_TEST(test_sipview_snapshot_clear_of_a_sip_stream_empties_then_its_quotes_rebuild)
{
	struct venue_books_config cfg = { .max_instruments = 16, .expected_orders = 1024, .numa_node = -1 };
	struct venue_books *vb = venue_books_create(&cfg);
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];
	struct wb_event clear = { .kind = WB_EV_CLEAR, .venue = WB_VENUE_SIP_UQDF, .instrument = 0 };

	ck_assert_ptr_nonnull(vb);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 300, P(10, 2), 500, T0 + 1000);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 1001);
	ck_assert_uint_eq(venue_books_apply(vb, &clear, out), 0);
	clear.flags = WB_EVF_SIP;
	ck_assert_uint_eq(venue_books_apply(vb, &clear, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_CLEAR);
	ck_assert_uint_eq(out[0].instrument, 0);
	apply(out[0]);
	ck_assert_uint_eq(view().quotes_present, 0);
	ck_assert_uint_eq(view().nbbo.feed, 0);
	sip_quote(WB_VENUE_BZX, P(10, 1), 100, P(10, 3), 200, T0 + 2000);
	sip_nbbo(P(10, 1), WB_VENUE_BZX, P(10, 3), WB_VENUE_BZX, T0 + 2001);
	ck_assert_uint_eq(view().quotes_present, 1u << WB_VENUE_BZX);
	ck_assert_int_eq(view().nbbo.bid_price, P(10, 1));
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_sipview_sip_updates_leave_the_direct_book_and_venue_freshness_alone)
{
	struct wb_venue_status vs;
	struct wb_nbbo n;

	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 300, P(10, 2), 500, T0 + 1000);
	publish();
	ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_NASDAQ, &vs), WB_OK);
	ck_assert_uint_eq(vs.last_recv_ns, 0);
	ck_assert_int_eq(wb_nbbo(bk, 1, &n), WB_OK);
	ck_assert_int_eq(n.bid_price, 0);
	ck_assert_uint_eq(superbook_counters(sb)->sip, 1);
}
END_TEST

START_TEST(test_venue_books_pass_sip_events_on_unchanged)
{
	struct venue_books_config cfg = { .max_instruments = 16, .expected_orders = 1024, .numa_node = -1 };
	struct venue_books *vb = venue_books_create(&cfg);
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];
	struct wb_event ev = { .kind = WB_EV_QUOTE, .venue = WB_VENUE_NYSE, .side = 'R',
			       .flags = WB_EVF_SIP | WB_EVF_ASK_INELIGIBLE, .instrument = 3,
			       .exch_ts = 11, .recv_ts = 22 };
	struct wb_event nb = { .kind = WB_EV_NBBO, .venue = WB_VENUE_SIP_CQS, .flags = WB_EVF_SIP,
			       .instrument = 3, .exch_ts = 33 };
	struct wb_ev_nbbo back;

	ck_assert_ptr_nonnull(vb);
	ev.u.quote = (struct wb_ev_quote){ P(5, 1), P(5, 3), 700, 800, 17 };
	ck_assert_uint_eq(venue_books_apply(vb, &ev, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_QUOTE);
	ck_assert_uint_eq(out[0].venue, WB_VENUE_NYSE);
	ck_assert_uint_eq(out[0].instrument, 3);
	ck_assert_int_eq(out[0].price, P(5, 1));
	ck_assert_int_eq(out[0].u.ask_price, P(5, 3));
	ck_assert_uint_eq(out[0].order_count, 700);
	ck_assert_uint_eq(out[0].round_lot, 800);
	ck_assert_uint_eq(out[0].qty, 17);
	ck_assert_uint_eq(out[0].flags, WB_EVF_SIP | WB_EVF_ASK_INELIGIBLE);
	nb.u.nbbo = (struct wb_ev_nbbo){ .bid_price = P(5, 1), .ask_price = P(5, 2), .bid_qty = 1,
					 .ask_qty = 2, .bid_venue = WB_VENUE_NYSE,
					 .ask_venue = WB_VENUE_ARCA, .indicator = 'G', .condition = 'R',
					 .sides = 3, .luld = 'A' };
	ck_assert_uint_eq(venue_books_apply(vb, &nb, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_NBBO);
	book_sip_nbbo_unpack(out[0].qty, &back);
	ck_assert_uint_eq(back.ask_venue, WB_VENUE_ARCA);
	ck_assert_int_eq(back.indicator, 'G');
	ck_assert_int_eq(back.luld, 'A');
	ck_assert_uint_eq(venue_books_counters(vb)->sip, 2);
	ck_assert_uint_eq(venue_books_counters(vb)->live_orders, 0);
	venue_books_destroy(vb);
}
END_TEST

/* ---- CQS gaps ------------------------------------------------------------------ */

/* The SIP's NBBO of symbol inst through SIP feed (WB_VENUE_SIP_CQS or _UQDF). */
static void sip_nbbo_of(uint16_t inst, uint8_t feed, int64_t bid, int64_t ask, uint64_t t)
{
	struct wb_ev_nbbo n = { .bid_venue = WB_VENUE_NYSE, .ask_venue = WB_VENUE_NYSE,
				.indicator = '4', .sides = WB_NBBO_BID_STATED | WB_NBBO_ASK_STATED };
	struct book_update u = { .kind = BOOK_UP_SIP_NBBO, .venue = feed, .flags = WB_EVF_SIP,
				 .instrument = inst, .price = bid, .order_count = 100,
				 .round_lot = 100, .qty = book_sip_nbbo_pack(&n), .exch_ts = t - 50,
				 .recv_ts = t };

	u.u.ask_price = ask;
	apply(u);
}

static void cqs_gap(uint16_t inst, uint64_t lost)
{
	apply((struct book_update){ .kind = BOOK_UP_SIP_GAP, .venue = WB_VENUE_SIP_CQS,
				    .instrument = inst, .qty = lost });
}

static uint32_t sip_flags(int sym)
{
	struct wb_sip_view v;

	ck_assert_int_eq(wb_sip_view(bk, sym, &v), WB_OK);
	return v.flags;
}

START_TEST(test_sipview_cqs_gap_marks_its_symbols_stale_until_their_next_quote)
{
	superbook_add_symbol(sb, 2, "MSFT    ");
	sip_nbbo_of(1, WB_VENUE_SIP_CQS, P(10, 0), P(10, 2), T0 + 1000);	/* AAPL through CQS */
	sip_nbbo_of(2, WB_VENUE_SIP_UQDF, P(20, 0), P(20, 2), T0 + 1001);	/* MSFT through UQDF */
	ck_assert_uint_eq(sip_flags(1) & WB_SIPF_STALE, 0);

	cqs_gap(0, 5);
	ck_assert_uint_eq(sip_flags(1) & WB_SIPF_STALE, WB_SIPF_STALE);
	ck_assert_uint_eq(sip_flags(2) & WB_SIPF_STALE, 0);	/* another SIP's symbol */
	ck_assert_uint_eq(summary().total.sip_gaps, 1);
	ck_assert_uint_eq(summary().total.stale_marked, 1);
	cqs_gap(0, 2);				/* already stale: counted once */
	ck_assert_uint_eq(summary().total.sip_gaps, 2);
	ck_assert_uint_eq(summary().total.stale_marked, 1);

	sip_quote(WB_VENUE_NYSE, P(10, 0), 100, P(10, 2), 100, T0 + 2000);
	ck_assert_uint_eq(sip_flags(1) & WB_SIPF_STALE, 0);	/* the next quote: current */

	cqs_gap(2, 1);				/* a gap of one symbol marks that one */
	ck_assert_uint_eq(sip_flags(2) & WB_SIPF_STALE, WB_SIPF_STALE);
	ck_assert_uint_eq(sip_flags(1) & WB_SIPF_STALE, 0);
	sip_nbbo_of(2, WB_VENUE_SIP_UQDF, P(20, 0), P(20, 3), T0 + 3000);
	ck_assert_uint_eq(sip_flags(2) & WB_SIPF_STALE, 0);
	ck_assert_uint_eq(summary().total.stale_marked, 2);
}
END_TEST

START_TEST(test_venue_books_pass_a_cqs_gap_on_as_a_sip_gap)
{
	struct venue_books_config cfg = { .max_instruments = 16, .expected_orders = 1024, .numa_node = -1 };
	struct venue_books *vb = venue_books_create(&cfg);
	struct book_update out[BOOK_MAX_UPDATES_PER_EVENT];
	struct wb_event gap = { .kind = WB_EV_GAP, .venue = WB_VENUE_SIP_CQS, .seq = 10 };

	ck_assert_ptr_nonnull(vb);
	gap.u.gap = (struct wb_ev_gap){ .first = 10, .count = 7, .reason = WB_GAP_SEQUENCE };
	ck_assert_uint_eq(venue_books_apply(vb, &gap, out), 1);
	ck_assert_uint_eq(out[0].kind, BOOK_UP_SIP_GAP);
	ck_assert_uint_eq(out[0].venue, WB_VENUE_SIP_CQS);
	ck_assert_uint_eq(out[0].instrument, 0);
	ck_assert_uint_eq(out[0].qty, 7);
	/* a gap being recovered is no loss (yet); UQDF's gaps are recovered */
	gap.u.gap.reason = WB_GAP_RECOVERING;
	ck_assert_uint_eq(venue_books_apply(vb, &gap, out), 0);
	gap.u.gap.reason = WB_GAP_SEQUENCE;
	gap.venue = WB_VENUE_SIP_UQDF;
	ck_assert_uint_eq(venue_books_apply(vb, &gap, out), 0);
	venue_books_destroy(vb);
}
END_TEST

START_TEST(test_sipview_checksum_follows_what_the_sip_said_not_the_comparison)
{
	const struct sipview *sv = superbook_sipview(sb);
	uint64_t empty = sipview_checksum(sv, NULL), quoted, compared;

	sip_nbbo_of(1, WB_VENUE_SIP_CQS, P(10, 0), P(10, 2), T0 + 1000);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 2), 100, T0 + 1001);
	quoted = sipview_checksum(sv, NULL);
	ck_assert_uint_ne(quoted, empty);
	/* a direct book moving changes the comparison, not the SIP's view */
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 1), 100, T0 + 1002);
	publish();
	compared = sipview_checksum(sv, NULL);
	ck_assert_uint_eq(compared, quoted);
	cqs_gap(0, 1);
	ck_assert_uint_ne(sipview_checksum(sv, NULL), quoted);	/* stale is what the SIP left us */
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 2), 200, T0 + 1003);
	ck_assert_uint_ne(sipview_checksum(sv, NULL), quoted);	/* another size */
}
END_TEST

/* The state sum leaves out how many updates built the view, nothing else. */
START_TEST(test_sipview_state_checksum_ignores_the_update_count_only)
{
	const struct sipview *sv = superbook_sipview(sb);
	uint64_t all, state;

	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 2), 100, T0 + 1001);
	all = sipview_checksum(sv, NULL);
	state = sipview_state_checksum(sv, NULL);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 2), 100, T0 + 1001);	/* again */
	ck_assert_uint_ne(sipview_checksum(sv, NULL), all);
	ck_assert_uint_eq(sipview_state_checksum(sv, NULL), state);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 2), 300, T0 + 1001);
	ck_assert_uint_ne(sipview_state_checksum(sv, NULL), state);
}
END_TEST

/* By ticker, not instrument id: the same views under the other ids, the same sum. */
START_TEST(test_sipview_checksum_follows_tickers_not_instrument_ids)
{
	static const uint64_t aapl = 0x202020204c504141ull, msft = 0x202020205446534dull;
	static const uint64_t ids[] = { 0, aapl, msft }, swapped[] = { 0, msft, aapl };
	const struct book_tickers by_id = { ids, 3 }, by_swapped = { swapped, 3 };
	const struct sipview *sv = superbook_sipview(sb);
	uint64_t state;

	superbook_add_symbol(sb, 2, "MSFT    ");
	sip_nbbo_of(1, WB_VENUE_SIP_UQDF, P(10, 0), P(10, 2), T0 + 1000);	/* AAPL */
	sip_nbbo_of(2, WB_VENUE_SIP_UQDF, P(20, 0), P(20, 5), T0 + 1000);	/* MSFT */
	state = sipview_state_checksum(sv, &by_id);
	/* Now 1 holds what MSFT held and 2 what AAPL held: swapped ids. */
	sip_nbbo_of(1, WB_VENUE_SIP_UQDF, P(20, 0), P(20, 5), T0 + 1000);
	sip_nbbo_of(2, WB_VENUE_SIP_UQDF, P(10, 0), P(10, 2), T0 + 1000);
	ck_assert_uint_eq(sipview_state_checksum(sv, &by_swapped), state);
	ck_assert_uint_ne(sipview_state_checksum(sv, &by_id), state);
	/* A changed view is another sum. */
	sip_nbbo_of(2, WB_VENUE_SIP_UQDF, P(10, 0), P(10, 3), T0 + 1000);
	ck_assert_uint_ne(sipview_state_checksum(sv, &by_swapped), state);
}
END_TEST

/* ---- the comparison ---------------------------------------------------------- */

START_TEST(test_sipview_delay_is_sip_receive_minus_direct_receive_of_the_same_bbo)
{
	sip_nbbo(0, 0, 0, 0, T0);	/* the symbol gets its SIP view */
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 1000);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 1), 200, T0 + 2000);
	sip_quote(WB_VENUE_NASDAQ, P(10, 1), 100, 0, 0, T0 + 2000);	/* shows nothing the book had */
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, P(10, 1), 200, T0 + 2000 + 640000);

	struct wb_sip_venue_stats *vs = venue_stats(WB_VENUE_NASDAQ);

	ck_assert_uint_eq(vs->sip_quotes, 2);
	ck_assert_uint_eq(vs->compared, 2);
	ck_assert_uint_eq(vs->unmatched, 1);
	ck_assert_uint_eq(vs->matched, 1);
	/* the first direct BBO (bid only) was never shown */
	ck_assert_uint_eq(vs->never_shown, 1);
	ck_assert_uint_eq(vs->delay.count, 1);
	ck_assert_uint_eq(vs->delay.max_ns, 640000);
	ck_assert_uint_eq(vs->delay.min_ns, 640000);
	uint64_t p50 = wb_delay_quantile(&vs->delay, 500000);

	ck_assert_msg(p50 >= 640000 * 0.984 && p50 <= 640000 * 1.016, "p50 %lu", (unsigned long)p50);
}
END_TEST

START_TEST(test_sipview_updates_of_one_message_are_one_direct_bbo)
{
	sip_nbbo(0, 0, 0, 0, T0);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 1000);
	/* a replace: the old level goes, the new one comes, same message times */
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 0, T0 + 2000);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 1), 100, T0 + 2000);
	sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100, 0, 0, T0 + 1500);
	sip_quote(WB_VENUE_NASDAQ, P(10, 1), 100, 0, 0, T0 + 2500);

	struct wb_sip_venue_stats *vs = venue_stats(WB_VENUE_NASDAQ);

	ck_assert_uint_eq(vs->direct_changes, 2);
	ck_assert_uint_eq(vs->matched, 2);
	ck_assert_uint_eq(vs->never_shown, 0);
	ck_assert_uint_eq(vs->delay.max_ns, 500);
}
END_TEST

START_TEST(test_sipview_size_only_match_and_sip_first_are_told_apart)
{
	sip_nbbo(0, 0, 0, 0, T0);
	level(WB_VENUE_BZX, WB_SIDE_BUY, P(10, 0), 100, T0 + 1000);
	sip_quote(WB_VENUE_BZX, P(10, 0), 300, 0, 0, T0 + 1400);	/* other size */
	level(WB_VENUE_BZX, WB_SIDE_BUY, P(10, 1), 100, T0 + 3000);
	sip_quote(WB_VENUE_BZX, P(10, 1), 100, 0, 0, T0 + 3000);	/* same receive time */

	struct wb_sip_venue_stats *vs = venue_stats(WB_VENUE_BZX);

	ck_assert_uint_eq(vs->size_differs, 1);
	ck_assert_uint_eq(vs->matched, 1);
	ck_assert_uint_eq(vs->delay.count, 2);
	ck_assert_uint_eq(vs->delay.min_ns, 0);
	ck_assert_uint_eq(vs->delay.max_ns, 400);
}
END_TEST

START_TEST(test_sipview_disagreement_ended_by_the_sip_means_direct_was_ahead)
{
	struct wb_sip_episode e;

	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 2), 100, T0 + 100);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 500);
	ck_assert_uint_eq(view().flags & (WB_SIPF_COVERED | WB_SIPF_DISAGREE), WB_SIPF_COVERED);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 1), 100, T0 + 2000);	/* direct moves first */
	ck_assert_uint_eq(view().flags & WB_SIPF_DISAGREE, WB_SIPF_DISAGREE);
	ck_assert_uint_eq(view().cmp.open_recv_ts, T0 + 2000);
	sip_nbbo(P(10, 1), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 2700);

	struct wb_sip_view v = view();
	struct wb_sip_summary s = summary();

	ck_assert_uint_eq(v.cmp.episodes, 1);
	ck_assert_uint_eq(v.cmp.direct_ahead, 1);
	ck_assert_uint_eq(v.cmp.sip_ahead, 0);
	ck_assert_uint_eq(v.cmp.disagree_ns, 700);
	ck_assert_int_eq(v.cmp.max_price_diff, C);
	ck_assert_uint_eq(v.cmp.open_recv_ts, 0);
	ck_assert_uint_eq(s.total.direct_ahead_ns, 700);
	ck_assert_uint_eq(s.disagree_written, 1);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DISAGREE, 0, &e), WB_OK);
	ck_assert_uint_eq(e.kind, WB_EPI_DISAGREE);
	ck_assert_uint_eq(e.flags, WB_EPF_DIRECT_AHEAD);
	ck_assert_uint_eq(e.instrument, 1);
	ck_assert_uint_eq(e.start_recv_ts, T0 + 2000);
	ck_assert_uint_eq(e.start_exch_ts, T0 + 1900);
	ck_assert_uint_eq(e.end_recv_ts, T0 + 2700);
	ck_assert_uint_eq(e.end_exch_ts, T0 + 2650);
	ck_assert_int_eq(e.price_diff, C);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DISAGREE, 1, &e), WB_EINVAL);
}
END_TEST

START_TEST(test_sipview_disagreement_ended_by_the_direct_books_means_sip_was_ahead)
{
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 2), 100, T0 + 100);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 1), WB_VENUE_NASDAQ, T0 + 500);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 1), 100, T0 + 800);

	struct wb_sip_view v = view();

	ck_assert_uint_eq(v.cmp.sip_ahead, 1);
	ck_assert_uint_eq(v.cmp.sip_ahead_ns, 300);
	ck_assert_uint_eq(v.cmp.direct_ahead, 0);
}
END_TEST

START_TEST(test_sipview_a_direct_quote_the_sip_never_showed_is_direct_only)
{
	struct wb_sip_episode e;

	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 2), 100, T0 + 100);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 500);
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 1), 100, T0 + 1000);	/* a flash */
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 1), 0, T0 + 1300);

	struct wb_sip_view v = view();

	ck_assert_uint_eq(v.cmp.direct_only, 1);
	ck_assert_uint_eq(v.cmp.direct_only_ns, 300);
	ck_assert_uint_eq(v.cmp.sip_ahead + v.cmp.direct_ahead, 0);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DISAGREE, 0, &e), WB_OK);
	ck_assert_uint_eq(e.flags, WB_EPF_DIRECT_ONLY);
}
END_TEST

START_TEST(test_sipview_nbbo_at_a_venue_without_direct_feed_is_not_compared)
{
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	sip_nbbo(P(10, 1), WB_VENUE_NYSE, P(10, 2), WB_VENUE_NASDAQ, T0 + 500);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 200, T0 + 900);

	struct wb_sip_view v = view();

	ck_assert_uint_eq(v.flags & (WB_SIPF_COVERED | WB_SIPF_DISAGREE), 0);
	ck_assert_uint_eq(v.cmp.uncovered, 1);
	ck_assert_uint_eq(v.cmp.compared, 0);
	ck_assert_uint_eq(v.cmp.episodes, 0);
}
END_TEST

START_TEST(test_sipview_direct_locked_then_crossed_episode_names_its_venues)
{
	struct wb_sip_episode e;

	sip_nbbo(0, 0, 0, 0, T0);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 2), 100, T0 + 200);
	level(WB_VENUE_EDGX, WB_SIDE_SELL, P(10, 0), 100, T0 + 1000);	/* locks */
	ck_assert_uint_eq(view().lc[WB_VIEW_DIRECT].open_recv_ts, T0 + 1000);
	level(WB_VENUE_EDGX, WB_SIDE_SELL, P(9, 99), 100, T0 + 1500);	/* crosses */
	level(WB_VENUE_EDGX, WB_SIDE_SELL, P(10, 0), 0, T0 + 1500);
	level(WB_VENUE_EDGX, WB_SIDE_SELL, P(9, 99), 0, T0 + 4000);	/* ends */

	struct wb_sip_view v = view();

	ck_assert_uint_eq(v.lc[WB_VIEW_DIRECT].episodes, 1);
	ck_assert_uint_eq(v.lc[WB_VIEW_DIRECT].crossed, 1);
	ck_assert_uint_eq(v.lc[WB_VIEW_DIRECT].total_ns, 3000);
	ck_assert_uint_eq(v.lc[WB_VIEW_DIRECT].open_recv_ts, 0);
	ck_assert_uint_eq(summary().lock_written, 1);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DIRECT_LOCK, 0, &e), WB_OK);
	ck_assert_uint_eq(e.kind, WB_EPI_DIRECT_LOCK);
	ck_assert_uint_eq(e.flags, WB_EPF_CROSSED);
	ck_assert_uint_eq(e.bid_venues, 1u << WB_VENUE_NASDAQ);
	ck_assert_uint_eq(e.ask_venues, 1u << WB_VENUE_EDGX);
	ck_assert_int_eq(e.bid_price, P(10, 0));
	ck_assert_int_eq(e.ask_price, P(10, 0));
	ck_assert_uint_eq(e.start_exch_ts, T0 + 900);
	ck_assert_uint_eq(e.end_recv_ts, T0 + 4000);
}
END_TEST

START_TEST(test_sipview_a_lock_between_two_updates_of_one_message_is_no_episode)
{
	sip_nbbo(0, 0, 0, 0, T0);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 2), 100, T0 + 200);
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 0), 100, T0 + 300);
	level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 0), 0, T0 + 300);
	ck_assert_uint_eq(view().lc[WB_VIEW_DIRECT].episodes, 0);
	ck_assert_uint_eq(summary().lock_written, 0);
}
END_TEST

START_TEST(test_sipview_sip_locked_nbbo_names_the_participants_that_lock_it)
{
	struct wb_sip_episode e;

	sip_quote(WB_VENUE_NYSE, P(20, 0), 100, P(20, 5), 100, T0 + 100);
	sip_quote(WB_VENUE_ARCA, P(19, 90), 100, P(20, 0), 100, T0 + 200);
	sip_nbbo(P(20, 0), WB_VENUE_NYSE, P(20, 0), WB_VENUE_ARCA, T0 + 200);
	ck_assert_uint_eq(view().flags & WB_SIPF_LOCKED, WB_SIPF_LOCKED);
	sip_quote(WB_VENUE_ARCA, P(19, 90), 100, P(20, 1), 100, T0 + 900);
	sip_nbbo(P(20, 0), WB_VENUE_NYSE, P(20, 1), WB_VENUE_ARCA, T0 + 900);
	ck_assert_uint_eq(view().flags & WB_SIPF_LOCKED, 0);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_SIP_LOCK, 0, &e), WB_OK);
	ck_assert_uint_eq(e.kind, WB_EPI_SIP_LOCK);
	ck_assert_uint_eq(e.flags, 0);
	ck_assert_uint_eq(e.bid_venues, 1u << WB_VENUE_NYSE);
	ck_assert_uint_eq(e.ask_venues, 1u << WB_VENUE_ARCA);
	ck_assert_uint_eq(e.end_recv_ts - e.start_recv_ts, 700);
	ck_assert_uint_eq(summary().lc[WB_VIEW_SIP].total_ns, 700);
}
END_TEST

START_TEST(test_sipview_episode_ring_keeps_the_newest_and_refuses_overwritten)
{
	struct wb_sip_episode e;
	uint64_t t = T0 + 1000;

	sip_nbbo(0, 0, 0, 0, T0);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	for (int i = 0; i < WB_SIP_EPISODES + 3; i++) {
		level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 0), 100, t);
		level(WB_VENUE_BZX, WB_SIDE_SELL, P(10, 0), 0, t + 10);
		t += 100;
	}
	ck_assert_uint_eq(summary().lock_written, WB_SIP_EPISODES + 3);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DIRECT_LOCK, 2, &e), WB_ENOSYM);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DIRECT_LOCK, 3, &e), WB_OK);
	ck_assert_uint_eq(e.start_recv_ts, T0 + 1000 + 300);
	ck_assert_int_eq(wb_sip_episode(bk, WB_EPI_DIRECT_LOCK, WB_SIP_EPISODES + 2, &e), WB_OK);
	ck_assert_uint_eq(e.end_recv_ts - e.start_recv_ts, 10);
}
END_TEST

/* As in the builder: thread 2 only queues, whoever drains the queue applies. */
START_TEST(test_sipview_with_a_queue_sees_nothing_until_drained_then_the_same)
{
	static struct book_update slots[64] __attribute__((aligned(64)));
	struct book_queue q;
	struct wb_sip_view v;
	uint64_t n;

	book_queue_init(&q, slots, 64);
	superbook_set_sip_queue(sb, &q);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 0), 100, T0 + 100);
	level(WB_VENUE_NASDAQ, WB_SIDE_SELL, P(10, 2), 100, T0 + 100);
	sip_nbbo(P(10, 0), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 500);
	level(WB_VENUE_NASDAQ, WB_SIDE_BUY, P(10, 1), 100, T0 + 2000);
	sip_nbbo(P(10, 1), WB_VENUE_NASDAQ, P(10, 2), WB_VENUE_NASDAQ, T0 + 2700);
	publish();
	ck_assert_int_eq(wb_sip_view(bk, 1, &v), WB_ENOSYM);
	n = book_queue_available(&q);
	/* the two direct tops as they stood, two NBBOs, one top change */
	ck_assert_uint_eq(n, 5);
	for (uint64_t i = 0; i < n; i++)
		sipview_apply(superbook_sipview(sb), book_queue_at(&q, i));
	book_queue_release(&q, n);
	v = view();
	ck_assert_uint_eq(v.cmp.episodes, 1);
	ck_assert_uint_eq(v.cmp.direct_ahead, 1);
	ck_assert_uint_eq(v.cmp.disagree_ns, 700);
}
END_TEST

START_TEST(test_sipview_full_queue_drops_and_counts_never_waits)
{
	static struct book_update slots[64] __attribute__((aligned(64)));
	struct book_queue q;

	book_queue_init(&q, slots, 64);
	superbook_set_sip_queue(sb, &q);
	for (int i = 0; i < 70; i++)
		sip_quote(WB_VENUE_NASDAQ, P(10, 0), 100 + i, P(10, 2), 100, T0 + 1000 * i);
	publish();
	ck_assert_uint_eq(book_queue_available(&q), 64);
	ck_assert_uint_eq(superbook_counters(sb)->sip_dropped, 6);
	ck_assert_uint_eq(summary().dropped, 6);
}
END_TEST

START_TEST(test_delay_buckets_hold_their_values_within_a_32nd)
{
	uint64_t v = 1;

	for (int i = 0; i < 4000; i++) {
		unsigned b = wb_delay_bucket(v);
		uint64_t lo = wb_delay_bucket_low(b), w = wb_delay_bucket_width(b);

		ck_assert_uint_lt(b, WB_DELAY_BUCKETS);
		ck_assert_msg(lo <= v && v < lo + w, "%lu in bucket %u [%lu, +%lu)", (unsigned long)v, b,
			      (unsigned long)lo, (unsigned long)w);
		ck_assert_uint_le(w * 32, lo < 32 ? 32 : lo);
		v += v / 97 + 1;
		if (v >= 1ull << 41)
			break;
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sipview");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sipview_symbol_without_sip_traffic_has_no_view);
	tcase_add_test(tc, test_sipview_quote_nbbo_luld_and_status_are_published_with_every_timestamp);
	tcase_add_test(tc, test_sipview_market_wide_status_is_the_summarys);
	tcase_add_test(tc, test_sipview_clear_from_the_sip_drops_its_quotes_and_nbbo);
	tcase_add_test(tc, test_sipview_snapshot_clear_of_a_sip_stream_empties_then_its_quotes_rebuild);
	tcase_add_test(tc, test_sipview_sip_updates_leave_the_direct_book_and_venue_freshness_alone);
	tcase_add_test(tc, test_venue_books_pass_sip_events_on_unchanged);
	tcase_add_test(tc, test_sipview_cqs_gap_marks_its_symbols_stale_until_their_next_quote);
	tcase_add_test(tc, test_venue_books_pass_a_cqs_gap_on_as_a_sip_gap);
	tcase_add_test(tc, test_sipview_checksum_follows_what_the_sip_said_not_the_comparison);
	tcase_add_test(tc, test_sipview_state_checksum_ignores_the_update_count_only);
	tcase_add_test(tc, test_sipview_checksum_follows_tickers_not_instrument_ids);
	tcase_add_test(tc, test_sipview_delay_is_sip_receive_minus_direct_receive_of_the_same_bbo);
	tcase_add_test(tc, test_sipview_updates_of_one_message_are_one_direct_bbo);
	tcase_add_test(tc, test_sipview_size_only_match_and_sip_first_are_told_apart);
	tcase_add_test(tc, test_sipview_disagreement_ended_by_the_sip_means_direct_was_ahead);
	tcase_add_test(tc, test_sipview_disagreement_ended_by_the_direct_books_means_sip_was_ahead);
	tcase_add_test(tc, test_sipview_a_direct_quote_the_sip_never_showed_is_direct_only);
	tcase_add_test(tc, test_sipview_nbbo_at_a_venue_without_direct_feed_is_not_compared);
	tcase_add_test(tc, test_sipview_direct_locked_then_crossed_episode_names_its_venues);
	tcase_add_test(tc, test_sipview_a_lock_between_two_updates_of_one_message_is_no_episode);
	tcase_add_test(tc, test_sipview_sip_locked_nbbo_names_the_participants_that_lock_it);
	tcase_add_test(tc, test_sipview_episode_ring_keeps_the_newest_and_refuses_overwritten);
	tcase_add_test(tc, test_sipview_with_a_queue_sees_nothing_until_drained_then_the_same);
	tcase_add_test(tc, test_sipview_full_queue_drops_and_counts_never_waits);
	tcase_add_test(tc, test_delay_buckets_hold_their_values_within_a_32nd);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
