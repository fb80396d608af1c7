/*
 * The two-thread builder end to end: a generated ITCH session (wb-gen's
 * demo profile) is decoded on thread 1 through the pump, applied to the
 * venue books, folded into the Super-Book by thread 2 and read back
 * through libwirebook. Once the session is over, what readers see must be
 * exactly thread 1's books: every symbol's per-venue and consolidated
 * depth, and nothing lost on the way (no ring drops, no unknown orders).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/superbook.h"
#include "builder_harness.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "feed/feed.h"
#include "wirebook/book.h"
#include "wirebook/ring.h"
#include "test_util.h"

#define ITCH_IP 0xe9360c6fu
#define ITCH_PORT 26477
#define SLOTS (1u << 14)
#define ACTIONS_PER_PUMP 64

static struct feed_engine engine;
static struct wb_ring_producer prod;
static struct gen_flow flow;
static struct gen_itch gi;
static int flow_done;

static int sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		uint32_t len)
{
	(void)ctx;
	(void)ip;
	(void)port;
	feed_process_payload(&engine, 0, payload, len, ts, &prod);
	return 0;
}

/* Thread 1's pump: generate a few actions' packets, publish them. */
static int pump(void *arg)
{
	struct gen_action a;
	int i;

	(void)arg;
	if (flow_done)
		return BUILDER_PUMP_EOF;
	for (i = 0; i < ACTIONS_PER_PUMP; i++) {
		if (gen_flow_next(&flow, &a) != 1) {
			gen_itch_finish(&gi, flow.ts);
			flow_done = 1;
			break;
		}
		gen_itch_action(&gi, &flow, &a);
	}
	wb_ring_producer_publish(&prod);
	return BUILDER_PUMP_MORE;
}

static void check_side(const struct venue_level *want, unsigned nwant, const struct wb_level *got,
		       unsigned ngot, const char *what, int sym)
{
	unsigned i;

	ck_assert_msg(nwant == ngot, "%s of #%d: %u levels published, books have %u", what, sym,
		      ngot, nwant);
	for (i = 0; i < nwant; i++) {
		ck_assert_msg(want[i].price == got[i].price && want[i].qty == got[i].qty &&
				      want[i].orders == got[i].orders,
			      "%s of #%d level %u: published %lld x %llu (%u), books %lld x %llu (%u)",
			      what, sym, i, (long long)got[i].price, (unsigned long long)got[i].qty,
			      got[i].orders, (long long)want[i].price, (unsigned long long)want[i].qty,
			      want[i].orders);
	}
}

START_TEST(test_builder_publishes_exactly_the_venue_books_of_a_session)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DEMO, .seed = 3 };
	struct gen_itch_config ic;
	struct builder_counters ctr;
	struct builder *b;
	struct wb_book *bk;
	struct wb_depth d, c;
	struct venue_level lv[WB_BOOK_DEPTH];
	char name[64];
	void *ring;
	int err, sym, n, checked = 0;

	ck_assert_int_eq(feed_engine_init(&engine, &ecfg), 0);
	ck_assert_int_eq(feed_map_add(&engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A"), 0);
	ck_assert_int_ge(feed_subscribe(&engine, "*", 1), 0);
	ck_assert_int_eq(gen_flow_init(&flow, &fc), 0);
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "TESTPIPE01", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.sink.packet = sink;
	gen_itch_init(&gi, &ic);
	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(SLOTS));
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, wb_ring_bytes(SLOTS));
	wb_ring_format(ring, SLOTS, 1);
	wb_ring_producer_init(&prod, ring);

	b = harness_builder(BUILDER_PATH_PIPELINE, 1u << 14, "pipeline");
	snprintf(name, sizeof(name), "wbtest_pipeline_%d", (int)getpid());	/* the harness's name */
	ck_assert_int_eq(builder_start(b, ring, pump, NULL), 0);
	for (n = 0; !builder_done(b) && n < 60000; n++)
		usleep(1000);
	ck_assert_msg(builder_done(b), "the builder did not finish the session in 60 s");
	builder_stop(b);

	builder_get_counters(b, &ctr);
	ck_assert_uint_eq(ctr.ring_dropped, 0);
	ck_assert_uint_eq(builder_venue_counters(b)->unknown_order, 0);
	ck_assert_uint_gt(ctr.events, 20000);
	bk = wb_open(name, &err);
	ck_assert_msg(bk, "wb_open: %s", wb_strerror(err));
	for (sym = 1; sym < wb_symbol_count(bk); sym++) {
		unsigned nb, na;
		char tk[9];

		if (wb_symbol(bk, sym, tk) != 0)
			continue;
		ck_assert_int_eq(wb_depth(bk, sym, WB_VENUE_NASDAQ, WB_BOOK_DEPTH, &d), 0);
		ck_assert_int_eq(wb_depth(bk, sym, WB_CONSOLIDATED, WB_BOOK_DEPTH, &c), 0);
		nb = venue_books_depth(builder_venue_books(b), WB_VENUE_NASDAQ, (uint16_t)sym,
				       WB_SIDE_BUY, lv, WB_BOOK_DEPTH);
		check_side(lv, nb, d.bid, d.bid_count, "NASDAQ bid", sym);
		check_side(lv, nb, c.bid, c.bid_count, "consolidated bid", sym);
		na = venue_books_depth(builder_venue_books(b), WB_VENUE_NASDAQ, (uint16_t)sym,
				       WB_SIDE_SELL, lv, WB_BOOK_DEPTH);
		check_side(lv, na, d.ask, d.ask_count, "NASDAQ ask", sym);
		check_side(lv, na, c.ask, c.ask_count, "consolidated ask", sym);
		checked += nb + na > 0;
	}
	ck_assert_int_ge(checked, 5); /* the demo session's symbols have books */
	wb_close(bk);
	builder_destroy(b);
	gen_flow_destroy(&flow);
	feed_engine_destroy(&engine);
	free(ring);
}
END_TEST

/* A builder_source over an array of decoded events: pointers into it, as
 * the kernel rings hand out theirs. Checks the in-place contract. */
struct array_source {
	const struct wb_event *events;
	uint64_t n, next;
	uint64_t held;		/* peeked, not released */
	uint64_t peeks, releases;
	int misuse;		/* a peek while events were held, or a release of nothing */
};

static uint64_t array_peek(void *ctx, const struct wb_event **evs, uint64_t max)
{
	struct array_source *a = ctx;
	uint64_t k = 0;

	if (a->held)
		a->misuse = 1;
	/* Hand out odd-sized runs, so batches end anywhere. */
	if (max > 1 + a->peeks % 97)
		max = 1 + a->peeks % 97;
	while (k < max && a->next < a->n)
		evs[k++] = &a->events[a->next++];
	a->held = k;
	a->peeks++;
	return k;
}

static void array_release(void *ctx)
{
	struct array_source *a = ctx;

	if (!a->held)
		a->misuse = 1;
	a->held = 0;
	a->releases++;
}

static uint64_t array_dropped(void *ctx)
{
	(void)ctx;
	return 0;
}

static int pump_nothing(void *arg)
{
	(void)arg;
	return BUILDER_PUMP_EOF;
}

/*
 * Run a builder on the decoded session, from the ring or in place, with a
 * queue of queue_slots (0: the default); its checksums. Returns how often
 * thread 1 found the queue full.
 */
static uint64_t run_builder(void *ring, struct array_source *in_place, uint64_t sums[2], uint32_t queue_slots)
{
	struct builder *b = harness_builder_queue(BUILDER_PATH_PIPELINE, 1u << 14,
						  in_place ? "in_place_1" : "in_place_0", queue_slots);
	struct builder_counters ctr;
	int n;

	if (in_place) {
		struct builder_source src = { .peek = array_peek, .release = array_release,
					      .dropped = array_dropped, .ctx = in_place };

		/* A source never ends: the stop drains what it still holds. */
		ck_assert_int_eq(builder_start_source(b, &src), 0);
	} else {
		ck_assert_int_eq(builder_start(b, ring, pump_nothing, NULL), 0);
		for (n = 0; !builder_done(b) && n < 60000; n++)
			usleep(1000);
	}
	builder_stop(b);
	ck_assert_uint_eq(builder_venue_counters(b)->unknown_order, 0);
	ck_assert_uint_gt(builder_venue_counters(b)->events, 20000);
	harness_builder_checksums(b, sums);
	builder_get_counters(b, &ctr);
	builder_destroy(b);
	return ctr.queue_full_waits;
}

START_TEST(test_builder_reading_events_in_place_builds_the_books_a_ring_builds)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	struct gen_flow_config fc = { .profile = GEN_PROFILE_DEMO, .seed = 5 };
	struct gen_itch_config ic;
	struct gen_action a;
	struct array_source src;
	uint64_t from_ring[2], in_place[2], small_queue[2];
	void *ring;

	ck_assert_int_eq(feed_engine_init(&engine, &ecfg), 0);
	ck_assert_int_eq(feed_map_add(&engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A"), 0);
	ck_assert_int_ge(feed_subscribe(&engine, "*", 1), 0);
	ck_assert_int_eq(gen_flow_init(&flow, &fc), 0);
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "TESTPLACE1", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.sink.packet = sink;
	gen_itch_init(&gi, &ic);
	/* The whole session decoded into one ring first. */
	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes(1u << 16));
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, wb_ring_bytes(1u << 16));
	wb_ring_format(ring, 1u << 16, 1);
	wb_ring_producer_init(&prod, ring);
	while (gen_flow_next(&flow, &a) == 1)
		gen_itch_action(&gi, &flow, &a);
	gen_itch_finish(&gi, flow.ts);
	wb_ring_producer_publish(&prod);
	ck_assert_uint_eq(prod.dropped, 0);
	ck_assert_uint_gt(prod.head, 20000);

	memset(&src, 0, sizeof(src));
	src.events = (const struct wb_event *)((const char *)ring + WB_RING_SLOTS_OFFSET);
	src.n = prod.head;
	run_builder(NULL, &src, in_place, 0);
	ck_assert_int_eq(src.misuse, 0);
	ck_assert_uint_eq(src.held, 0);
	ck_assert_uint_ge(src.releases, src.n / 97);
	run_builder(ring, NULL, from_ring, 0);
	ck_assert_uint_eq(in_place[0], from_ring[0]);
	ck_assert_uint_eq(in_place[1], from_ring[1]);
	/* Thread 1's books write their updates straight into the queue
	 * until it wraps, then into a room that is copied: a queue of 64
	 * slots (the least) wraps every few dozen events and is full most of
	 * the time. */
	memset(&src, 0, sizeof(src));
	src.events = (const struct wb_event *)((const char *)ring + WB_RING_SLOTS_OFFSET);
	src.n = prod.head;
	ck_assert_uint_gt(run_builder(NULL, &src, small_queue, 64), 0);
	ck_assert_int_eq(src.misuse, 0);
	ck_assert_uint_eq(small_queue[0], from_ring[0]);
	ck_assert_uint_eq(small_queue[1], from_ring[1]);
	gen_flow_destroy(&flow);
	feed_engine_destroy(&engine);
	free(ring);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("builder_pipeline");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_builder_publishes_exactly_the_venue_books_of_a_session);
	tcase_add_test(tc, test_builder_reading_events_in_place_builds_the_books_a_ring_builds);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
