/*
 * The Super-Book against a brute-force consolidation: random per-venue
 * level changes are applied to the Super-Book and to a plain table of
 * (venue, side, price) -> qty; after every batch what libwirebook reads
 * back from shared memory must equal the table sorted and summed.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "book/book_shm.h"
#include "book/superbook.h"
#include "shm/shm_layout.h"

#define NVENUES 4		/* venues 1..4 */
#define NPRICES 40		/* price ticks 0..39 */
#define NSYMS 3
#define TICK 1000000LL		/* $0.01 */
#define BASE (100 * WB_PRICE_SCALE)

static char shm_name[64];

static void make_name(const char *what)
{
	snprintf(shm_name, sizeof(shm_name), "wbtest_sb_%s_%d", what, (int)getpid());
}

static struct superbook *make_book(void)
{
	struct superbook_config cfg = { .shm_name = shm_name, .capacity = 64, .numa_node = -1 };
	int err = 0;
	struct superbook *sb = superbook_create(&cfg, &err);

	ck_assert_msg(sb, "superbook_create: %d", err);
	return sb;
}

static struct book_update level(uint16_t inst, uint8_t venue, uint8_t side, int64_t price,
				uint64_t qty, uint32_t orders)
{
	struct book_update u = { .kind = BOOK_UP_LEVEL, .venue = venue, .side = side,
				 .instrument = inst, .price = price, .qty = qty,
				 .order_count = orders };
	return u;
}

static void batch_end(struct superbook *sb)
{
	struct book_update u = { .kind = BOOK_UP_BATCH_END };

	superbook_apply(sb, &u);
}

/* Reference: qty and orders per symbol, venue, side, tick. */
static uint64_t ref_qty[NSYMS + 1][NVENUES + 1][2][NPRICES];
static uint32_t ref_orders[NSYMS + 1][NVENUES + 1][2][NPRICES];

static void check_against_reference(struct wb_book *bk, int sym)
{
	struct wb_depth d;
	int side, v, t, n;

	ck_assert_int_eq(wb_depth(bk, sym, WB_CONSOLIDATED, WB_BOOK_DEPTH, &d), 0);
	for (side = 0; side < 2; side++) {
		const struct wb_level *got = side ? d.ask : d.bid;
		uint64_t (*vq)[WB_BOOK_DEPTH] = side ? d.ask_venue_qty : d.bid_venue_qty;
		int count = side ? d.ask_count : d.bid_count;

		n = 0;
		/* best first: bids from the highest tick, asks from the lowest */
		for (t = 0; t < NPRICES && n < WB_BOOK_DEPTH; t++) {
			int tick = side ? t : NPRICES - 1 - t;
			uint64_t total = 0;
			uint32_t orders = 0;

			for (v = 1; v <= NVENUES; v++) {
				total += ref_qty[sym][v][side][tick];
				orders += ref_orders[sym][v][side][tick];
			}
			if (!total)
				continue;
			ck_assert_int_lt(n, count);
			ck_assert_int_eq(got[n].price, BASE + tick * TICK);
			ck_assert_uint_eq(got[n].qty, total);
			ck_assert_uint_eq(got[n].orders, orders);
			for (v = 1; v <= NVENUES; v++) {
				ck_assert_uint_eq(vq[v][n], ref_qty[sym][v][side][tick]);
				ck_assert_int_eq(!!(got[n].venues & (1u << v)),
						 ref_qty[sym][v][side][tick] != 0);
			}
			n++;
		}
		ck_assert_int_eq(n, count);
	}
	/* Per venue: the venue's own levels, best first. */
	for (v = 1; v <= NVENUES; v++) {
		ck_assert_int_eq(wb_depth(bk, sym, v, WB_BOOK_DEPTH, &d), 0);
		for (side = 0; side < 2; side++) {
			const struct wb_level *got = side ? d.ask : d.bid;
			int count = side ? d.ask_count : d.bid_count;

			n = 0;
			for (t = 0; t < NPRICES && n < WB_BOOK_DEPTH; t++) {
				int tick = side ? t : NPRICES - 1 - t;

				if (!ref_qty[sym][v][side][tick])
					continue;
				ck_assert_int_eq(got[n].price, BASE + tick * TICK);
				ck_assert_uint_eq(got[n].qty, ref_qty[sym][v][side][tick]);
				n++;
			}
			ck_assert_int_eq(n, count);
		}
	}
}

/* Random level changes on venues 1..venues, checked after every batch. */
static void brute_force_rounds(unsigned venues, unsigned seed, unsigned rounds)
{
	struct superbook *sb;
	struct wb_book *bk;
	unsigned round, i;
	int err, sym;

	memset(ref_qty, 0, sizeof(ref_qty));
	memset(ref_orders, 0, sizeof(ref_orders));
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_msg(bk, "wb_open: %s", wb_strerror(err));
	for (round = 0; round < rounds; round++) {
		unsigned n = 1 + rand_r(&seed) % 12;

		for (i = 0; i < n; i++) {
			int s = 1 + rand_r(&seed) % NSYMS;
			int v = 1 + rand_r(&seed) % venues;
			int side = rand_r(&seed) % 2;
			/* bids mostly low, asks mostly high, with overlap so the
			 * book locks and crosses now and then */
			int tick = side ? 15 + rand_r(&seed) % 25 : rand_r(&seed) % 25;
			int remove = rand_r(&seed) % 3 == 0;
			uint64_t qty = remove ? 0 : 1 + rand_r(&seed) % 5000;
			uint32_t orders = remove ? 0 : 1 + rand_r(&seed) % 9;
			struct book_update u = level((uint16_t)s, (uint8_t)v,
						     side ? WB_SIDE_SELL : WB_SIDE_BUY,
						     BASE + tick * TICK, qty, orders);

			superbook_apply(sb, &u);
			ref_qty[s][v][side][tick] = qty;
			ref_orders[s][v][side][tick] = orders;
		}
		batch_end(sb);
		for (sym = 1; sym <= NSYMS; sym++)
			check_against_reference(bk, sym);
		/* NBBO flags agree with the top of the consolidated book */
		for (sym = 1; sym <= NSYMS; sym++) {
			struct wb_nbbo nb;

			ck_assert_int_eq(wb_nbbo(bk, sym, &nb), 0);
			if (nb.bid_qty && nb.ask_qty) {
				ck_assert_int_eq(!!(nb.flags & WB_SYMF_LOCKED), nb.bid_price == nb.ask_price);
				ck_assert_int_eq(!!(nb.flags & WB_SYMF_CROSSED), nb.bid_price > nb.ask_price);
			} else {
				ck_assert_int_eq(nb.flags & (WB_SYMF_LOCKED | WB_SYMF_CROSSED), 0);
			}
		}
	}
	ck_assert_uint_gt(superbook_counters(sb)->level_missing, 0); /* removals of absent levels happened */
	wb_close(bk);
	superbook_destroy(sb);
}

START_TEST(test_superbook_matches_brute_force_consolidation)
{
	make_name("brute");
	brute_force_rounds(NVENUES, 12345, 8000);
}
END_TEST

/* One venue a symbol: only the levels that changed are rewritten (a new
 * size at a standing price rewrites that level alone); what readers see
 * must still be the whole book. */
START_TEST(test_superbook_single_venue_symbols_match_brute_force)
{
	make_name("brute1");
	brute_force_rounds(1, 777, 3000);
}
END_TEST

START_TEST(test_superbook_deep_levels_surface_when_top_levels_go)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_depth d;
	struct book_update u;
	int err, i;

	make_name("deep");
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_ptr_nonnull(bk);
	for (i = 0; i < 25; i++) {
		u = level(1, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE - i * TICK, 100 + i, 1);
		superbook_apply(sb, &u);
	}
	batch_end(sb);
	ck_assert_int_eq(wb_depth(bk, 1, WB_CONSOLIDATED, 10, &d), 0);
	ck_assert_int_eq(d.bid_count, 10);
	ck_assert_int_eq(d.bid[9].price, BASE - 9 * TICK);
	for (i = 0; i < 12; i++) {
		u = level(1, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE - i * TICK, 0, 0);
		superbook_apply(sb, &u);
	}
	batch_end(sb);
	ck_assert_int_eq(wb_depth(bk, 1, WB_CONSOLIDATED, 10, &d), 0);
	ck_assert_int_eq(d.bid_count, 10);
	ck_assert_int_eq(d.bid[0].price, BASE - 12 * TICK);
	ck_assert_int_eq(d.bid[9].price, BASE - 21 * TICK);
	ck_assert_uint_eq(d.bid[0].qty, 112);
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_locked_market_names_both_venues)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_nbbo nb;
	struct wb_venue_bbo vb;
	struct book_update u;
	int err;

	make_name("locked");
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_ptr_nonnull(bk);
	u = level(2, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE, 300, 2);
	superbook_apply(sb, &u);
	u = level(2, WB_VENUE_BZX, WB_SIDE_SELL, BASE, 200, 1);
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_nbbo(bk, 2, &nb), 0);
	ck_assert(nb.flags & WB_SYMF_LOCKED);
	ck_assert_int_eq(nb.bid_venues, 1u << WB_VENUE_NASDAQ);
	ck_assert_int_eq(nb.ask_venues, 1u << WB_VENUE_BZX);
	ck_assert_int_eq(wb_venue_bbo(bk, 2, WB_VENUE_NASDAQ, &vb), 0);
	ck_assert_uint_eq(vb.bid_qty, 300);
	ck_assert_uint_eq(vb.ask_qty, 0);
	ck_assert(vb.flags & WB_VENF_PRESENT);
	/* BZX bids higher: now crossed */
	u = level(2, WB_VENUE_BZX, WB_SIDE_BUY, BASE + TICK, 100, 1);
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_nbbo(bk, 2, &nb), 0);
	ck_assert(nb.flags & WB_SYMF_CROSSED);
	ck_assert_int_eq(nb.bid_venues, 1u << WB_VENUE_BZX);
	ck_assert_int_eq(wb_venue_bbo(bk, 2, WB_VENUE_BZX, &vb), 0);
	ck_assert(vb.flags & WB_VENF_CROSSED); /* BZX alone is crossed too */
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_gap_flags_venue_until_clear_and_venue_status_counts_it)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_venue_bbo vb;
	struct wb_top top;
	struct book_update u;
	int err;

	make_name("gap");
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_ptr_nonnull(bk);
	u = level(3, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE, 100, 1);
	u.recv_ts = 5000;
	superbook_apply(sb, &u);
	u = level(4, WB_VENUE_BZX, WB_SIDE_BUY, BASE, 100, 1);
	u.recv_ts = 4000;
	superbook_apply(sb, &u);
	u = (struct book_update){ .kind = BOOK_UP_GAP, .venue = WB_VENUE_NASDAQ, .instrument = 0 };
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_venue_bbo(bk, 3, WB_VENUE_NASDAQ, &vb), 0);
	ck_assert(vb.flags & WB_VENF_GAP);
	ck_assert_uint_eq(vb.gaps, 1);
	ck_assert_int_eq(wb_top(bk, 3, &top), 0);
	ck_assert(top.flags & WB_SYMF_GAP);
	ck_assert_int_eq(wb_top(bk, 4, &top), 0);
	ck_assert(top.flags & WB_SYMF_GAP); /* symbol 4 could have lost NASDAQ adds too */
	ck_assert_int_eq(wb_venue_bbo(bk, 4, WB_VENUE_BZX, &vb), 0);
	ck_assert(!(vb.flags & WB_VENF_GAP));
	{
		struct wb_venue_status vs;

		ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_NASDAQ, &vs), 0);
		ck_assert_uint_eq(vs.gaps, 1);
		ck_assert_uint_eq(vs.last_recv_ns, 5000); /* the newest NASDAQ data */
		ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_BZX, &vs), 0);
		ck_assert_uint_eq(vs.gaps, 0);
		ck_assert_uint_eq(vs.last_recv_ns, 4000);
		ck_assert_int_eq(wb_venue_status(bk, WB_VENUE_EDGX, &vs), 0);
		ck_assert_uint_eq(vs.last_recv_ns, 0); /* never heard from */
		ck_assert_int_eq(wb_venue_status(bk, WB_CONSOLIDATED, &vs), WB_EINVAL);
	}
	/* a symbol NASDAQ first shows after the gap may have lost messages too */
	u = level(6, WB_VENUE_NASDAQ, WB_SIDE_SELL, BASE, 100, 1);
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_top(bk, 6, &top), 0);
	ck_assert(top.flags & WB_SYMF_GAP);
	u = (struct book_update){ .kind = BOOK_UP_CLEAR, .venue = WB_VENUE_NASDAQ, .instrument = 0 };
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_top(bk, 3, &top), 0);
	ck_assert(!(top.flags & WB_SYMF_GAP));
	ck_assert_uint_eq(top.bid_qty, 0);
	ck_assert_int_eq(wb_top(bk, 4, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 100); /* BZX untouched by a NASDAQ clear */
	u = level(7, WB_VENUE_NASDAQ, WB_SIDE_SELL, BASE, 100, 1);
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_top(bk, 7, &top), 0);
	ck_assert(!(top.flags & WB_SYMF_GAP)); /* after the clear, a fresh book */
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_trade_and_status_are_published)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_trade t;
	struct wb_status st;
	struct book_update u;
	char tk[9];
	int err;

	make_name("trade");
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_ptr_nonnull(bk);
	u = (struct book_update){ .kind = BOOK_UP_SYMBOL, .instrument = 5 };
	memcpy(u.u.ticker, "MSFT    ", 8);
	superbook_apply(sb, &u);
	u = (struct book_update){ .kind = BOOK_UP_TRADE, .venue = WB_VENUE_NASDAQ, .instrument = 5,
				  .flags = WB_EVF_PRINTABLE, .price = BASE, .qty = 300 };
	superbook_apply(sb, &u);
	u.qty = 200;
	u.flags = 0; /* not printable: last trade, not volume */
	superbook_apply(sb, &u);
	u = (struct book_update){ .kind = BOOK_UP_STATUS, .venue = WB_VENUE_NASDAQ, .instrument = 5 };
	u.u.status.state = WB_STATE_HALTED;
	u.u.status.raw_state = 'H';
	superbook_apply(sb, &u);
	batch_end(sb);
	ck_assert_int_eq(wb_find(bk, "MSFT"), 5);
	ck_assert_int_eq(wb_symbol(bk, 5, tk), 0);
	ck_assert_str_eq(tk, "MSFT");
	ck_assert_int_eq(wb_last_trade(bk, 5, &t), 0);
	ck_assert_uint_eq(t.qty, 200);
	ck_assert_uint_eq(t.volume, 300);
	ck_assert_uint_eq(t.count, 2);
	ck_assert_int_eq(wb_status(bk, 5, &st), 0);
	ck_assert_int_eq(st.state, WB_STATE_HALTED);
	ck_assert_int_eq(st.raw_state, 'H');
	ck_assert(st.flags & WB_SYMF_HALTED);
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

static void status(struct superbook *sb, uint16_t inst, uint8_t venue, uint8_t state, char raw)
{
	struct book_update u = { .kind = BOOK_UP_STATUS, .venue = venue, .instrument = inst };

	u.u.status.state = state;
	u.u.status.raw_state = raw;
	superbook_apply(sb, &u);
	batch_end(sb);
}

START_TEST(test_superbook_halt_on_one_venue_is_not_lifted_by_another)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_status st;
	int err;

	make_name("halt");
	sb = make_book();
	bk = wb_open(shm_name, &err);
	ck_assert_ptr_nonnull(bk);
	status(sb, 8, WB_VENUE_NASDAQ, WB_STATE_TRADING, 'T');
	status(sb, 8, WB_VENUE_NASDAQ, WB_STATE_HALTED, 'H');
	status(sb, 8, WB_VENUE_BZX, WB_STATE_TRADING, 'T');
	ck_assert_int_eq(wb_status(bk, 8, &st), 0);
	ck_assert_int_eq(st.state, WB_STATE_HALTED);
	ck_assert_int_eq(st.venue, WB_VENUE_NASDAQ);
	ck_assert(st.flags & WB_SYMF_HALTED);
	status(sb, 8, WB_VENUE_NASDAQ, WB_STATE_TRADING, 'T');
	ck_assert_int_eq(wb_status(bk, 8, &st), 0);
	ck_assert_int_eq(st.state, WB_STATE_TRADING);
	ck_assert(!(st.flags & WB_SYMF_HALTED));
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_counts_and_skips_bad_updates)
{
	struct superbook *sb;
	struct book_update u;

	make_name("bad");
	sb = make_book();
	u = level(0, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE, 1, 1);
	superbook_apply(sb, &u);
	u = level(64, WB_VENUE_NASDAQ, WB_SIDE_BUY, BASE, 1, 1); /* capacity is 64 */
	superbook_apply(sb, &u);
	u = level(1, 200, WB_SIDE_BUY, BASE, 1, 1);
	superbook_apply(sb, &u);
	u = level(1, WB_VENUE_NONE, WB_SIDE_BUY, BASE, 1, 1);
	superbook_apply(sb, &u);
	u = level(1, WB_VENUE_NASDAQ, 7, BASE, 1, 1);
	superbook_apply(sb, &u);
	u = (struct book_update){ .kind = 99 };
	superbook_apply(sb, &u);
	ck_assert_uint_eq(superbook_counters(sb)->bad_instrument, 2);
	ck_assert_uint_eq(superbook_counters(sb)->bad_venue, 2);
	ck_assert_uint_eq(superbook_counters(sb)->bad_side, 1);
	ck_assert_uint_eq(superbook_counters(sb)->bad_kind, 1);
	ck_assert_uint_eq(superbook_publish(sb), 0);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_checksum_follows_the_book_not_the_publish_cadence)
{
	struct superbook *every, *once;
	char every_name[64];
	unsigned seed = 777;
	uint64_t before;

	/* The same updates, published after each one and once at the end:
	 * the same book, so the same checksum (stale levels past a side's
	 * count and publish counters stay out). */
	make_name("sum_every");
	snprintf(every_name, sizeof(every_name), "%s", shm_name);
	every = make_book();
	make_name("sum_once");
	once = make_book();
	for (int i = 0; i < 3000; i++) {
		int side = rand_r(&seed) % 2, remove = rand_r(&seed) % 3 == 0;
		struct book_update u = level((uint16_t)(1 + rand_r(&seed) % NSYMS),
					     (uint8_t)(1 + rand_r(&seed) % NVENUES),
					     side ? WB_SIDE_SELL : WB_SIDE_BUY,
					     BASE + (side ? 15 + rand_r(&seed) % 25 : rand_r(&seed) % 25) * TICK,
					     remove ? 0 : 1 + rand_r(&seed) % 5000, remove ? 0 : 1 + rand_r(&seed) % 9);

		superbook_apply(every, &u);
		batch_end(every);
		superbook_apply(once, &u);
	}
	batch_end(once);
	ck_assert_uint_eq(superbook_checksum(every), superbook_checksum(once));

	/* A share more anywhere is another book. */
	before = superbook_checksum(once);
	{
		struct book_update u = level(1, 1, WB_SIDE_BUY, BASE + 60 * TICK, 1, 1);

		superbook_apply(once, &u);
		batch_end(once);
	}
	ck_assert_uint_ne(superbook_checksum(once), before);
	superbook_destroy(every);
	superbook_destroy(once);
}
END_TEST

/*
 * superbook_apply_ring on a queue's ring (wrapping, marks between runs)
 * applies each run up to its mark and no further: applied run by run, the
 * marks skipped, the book is the one superbook_apply_run builds from the
 * same updates.
 */
START_TEST(test_superbook_apply_ring_stops_at_each_mark_and_builds_the_same_book)
{
	enum { SLOTS = 64, UPDATES = 2000 };
	static struct book_update ring[SLOTS], plain[UPDATES];
	struct superbook *by_ring, *by_run;
	unsigned seed = 4242, marks = 0;
	uint64_t head = 40, tail = 40, n_plain = 0;

	make_name("ring");
	by_ring = make_book();
	make_name("run");
	by_run = make_book();
	for (int i = 0; i < UPDATES; i++) {
		int side = rand_r(&seed) % 2, remove = rand_r(&seed) % 3 == 0;
		struct book_update u = level((uint16_t)(1 + rand_r(&seed) % NSYMS),
					     (uint8_t)(1 + rand_r(&seed) % NVENUES),
					     side ? WB_SIDE_SELL : WB_SIDE_BUY,
					     BASE + (side ? 15 + rand_r(&seed) % 25 : rand_r(&seed) % 25) * TICK,
					     remove ? 0 : 1 + rand_r(&seed) % 5000, remove ? 0 : 1 + rand_r(&seed) % 9);

		plain[n_plain++] = u;
		ring[head++ % SLOTS] = u;
		if (rand_r(&seed) % 7 == 0) {
			memset(&u, 0, sizeof(u));
			u.kind = rand_r(&seed) % 2 ? BOOK_UP_PACKET : BOOK_UP_BATCH_END;
			ring[head++ % SLOTS] = u;
		}
		/* drain when nearly full, as thread 2 would */
		while (head - tail > SLOTS - 2 || (i == UPDATES - 1 && tail < head)) {
			uint64_t k = superbook_apply_ring(by_ring, ring, SLOTS - 1, tail, head - tail);

			tail += k;
			if (tail < head) {
				uint8_t kind = ring[tail % SLOTS].kind;

				ck_assert(kind == BOOK_UP_PACKET || kind == BOOK_UP_BATCH_END);
				marks++;
				tail++;
			}
		}
	}
	ck_assert_uint_gt(marks, 100);
	superbook_apply_run(by_run, plain, n_plain);
	superbook_publish(by_ring);
	superbook_publish(by_run);
	ck_assert_uint_eq(superbook_counters(by_ring)->levels, UPDATES);
	ck_assert_uint_eq(superbook_checksum(by_ring), superbook_checksum(by_run));
	superbook_destroy(by_ring);
	superbook_destroy(by_run);
}
END_TEST

/* Pages of [p, p + len) in memory (mincore), and how many there are. */
static unsigned resident_pages(const void *p, size_t len, unsigned *pages)
{
	uintptr_t first = (uintptr_t)p & ~(uintptr_t)4095;
	size_t span = (uintptr_t)p + len - first;
	unsigned char vec[64];
	unsigned n = 0;

	*pages = (unsigned)((span + 4095) / 4096);
	ck_assert_uint_le(*pages, sizeof(vec));
	ck_assert_int_eq(mincore((void *)first, span, vec), 0);
	for (unsigned i = 0; i < *pages; i++)
		n += vec[i] & 1;
	return n;
}

/* A symbol's record is faulted in when the symbol is announced, so the
 * publish of its first book change takes no page fault. (On a /dev/shm
 * mounted huge=advise the ticker's write brings the whole huge page in
 * anyway; this tells the difference on 4 KiB pages, the default.) */
START_TEST(test_superbook_record_is_faulted_in_when_the_symbol_is_announced)
{
	/* 512 records span more than a huge page: the last one shares no
	 * page with anything superbook_create touched. */
	struct superbook_config cfg = { .shm_name = shm_name, .capacity = 512, .numa_node = -1 };
	const uint16_t inst = 500;
	struct superbook *sb;
	struct book_shm *m;
	const char *rec;
	unsigned pages;
	int err = 0;

	make_name("prefault");
	sb = superbook_create(&cfg, &err);
	ck_assert_msg(sb, "superbook_create: %d", err);
	m = superbook_shm(sb);
	rec = m->records + (size_t)inst * sizeof(struct wb_shm_symbol);
	ck_assert_uint_eq(resident_pages(rec, sizeof(struct wb_shm_symbol), &pages), 0);
	ck_assert_int_eq(superbook_add_symbol(sb, inst, "LASTSYM "), 0);
	ck_assert_uint_eq(resident_pages(rec, sizeof(struct wb_shm_symbol), &pages), pages);
	ck_assert_uint_eq(superbook_counters(sb)->prefault_failures, 0);
	/* A range not wholly inside the book is refused, not touched. */
	ck_assert_int_eq(book_shm_prefault(m, (char *)m->hdr + m->size - 8, 4096), -EINVAL);
	ck_assert_int_eq(book_shm_prefault(m, (char *)m->hdr - 4096, 64), -EINVAL);
	ck_assert_int_eq(book_shm_prefault(m, (void *)rec, sizeof(struct wb_shm_symbol)), 0);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_superbook_checksum_follows_tickers_not_instrument_ids)
{
	struct superbook *a, *b;
	struct book_update u;
	uint64_t sum;

	/* Two symbols whose ids came in the other order: equal books. */
	make_name("sum_ids_a");
	a = make_book();
	make_name("sum_ids_b");
	b = make_book();
	ck_assert_int_eq(superbook_add_symbol(a, 1, "AAPL    "), 0);
	ck_assert_int_eq(superbook_add_symbol(a, 2, "MSFT    "), 0);
	ck_assert_int_eq(superbook_add_symbol(b, 1, "MSFT    "), 0);
	ck_assert_int_eq(superbook_add_symbol(b, 2, "AAPL    "), 0);
	u = level(1, 1, WB_SIDE_BUY, BASE, 100, 1);	/* AAPL */
	superbook_apply(a, &u);
	u = level(2, 1, WB_SIDE_BUY, BASE, 100, 1);
	superbook_apply(b, &u);
	u = level(2, 2, WB_SIDE_SELL, BASE + 20 * TICK, 300, 2);	/* MSFT */
	superbook_apply(a, &u);
	u = level(1, 2, WB_SIDE_SELL, BASE + 20 * TICK, 300, 2);
	superbook_apply(b, &u);
	batch_end(a);
	batch_end(b);
	sum = superbook_checksum(a);
	ck_assert_uint_eq(superbook_checksum(b), sum);

	/* A share more is another book. */
	u = level(1, 2, WB_SIDE_SELL, BASE + 20 * TICK, 301, 2);
	superbook_apply(b, &u);
	batch_end(b);
	ck_assert_uint_ne(superbook_checksum(b), sum);
	superbook_destroy(a);
	superbook_destroy(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("superbook");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_superbook_matches_brute_force_consolidation);
	tcase_add_test(tc, test_superbook_single_venue_symbols_match_brute_force);
	tcase_add_test(tc, test_superbook_deep_levels_surface_when_top_levels_go);
	tcase_add_test(tc, test_superbook_locked_market_names_both_venues);
	tcase_add_test(tc, test_superbook_gap_flags_venue_until_clear_and_venue_status_counts_it);
	tcase_add_test(tc, test_superbook_trade_and_status_are_published);
	tcase_add_test(tc, test_superbook_halt_on_one_venue_is_not_lifted_by_another);
	tcase_add_test(tc, test_superbook_counts_and_skips_bad_updates);
	tcase_add_test(tc, test_superbook_checksum_follows_the_book_not_the_publish_cadence);
	tcase_add_test(tc, test_superbook_apply_ring_stops_at_each_mark_and_builds_the_same_book);
	tcase_add_test(tc, test_superbook_checksum_follows_tickers_not_instrument_ids);
	tcase_add_test(tc, test_superbook_record_is_faulted_in_when_the_symbol_is_announced);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
