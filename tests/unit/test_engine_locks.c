/*
 * The engine's side of the module's per-venue locking (feed.h,
 * struct feed_engine_config and feed_route_frame):
 *
 * - a frame is routed to its line and venue without writing to the engine
 *   (the module does it before it takes a lock), decodes as
 *   feed_process_frame decodes it, and the route is found stale when the
 *   feed map changed in between;
 * - the engine takes exactly the locks the config gives it: every venue's
 *   around a feed-map change, one venue's around a hold-buffer swap, the
 *   intern lock only when '*' meets a ticker new to the engine; never
 *   allocates while one is held;
 * - holes are counted per venue, and one venue's poll releases only its own.
 *
 * Two ITCH venues (Nasdaq and BX), each with an A and a B line.
 */
#include "feed_harness.h"

#define PKT_MAX HARNESS_PACKET_MAX

static const uint32_t NASDAQ_A = 0xe9360c6f, NASDAQ_B = 0xe931c46f, BX_A = 0xe9360d01,
		      BX_B = 0xe9360d02;
static const uint16_t PORT = 26477;

/* A Stock Directory naming locate `locate` ticker. */
static void itch_directory(struct packet *p, uint16_t locate, const char *ticker)
{
	uint8_t *m = mold_message(p, 39);

	m[0] = 'R';
	wire_put_be16(m + 1, locate);
	put_text(m + 11, ticker, 8);
	m[19] = 'Q';
	wire_put_be32(m + 21, 100);
}

static void itch_add(struct packet *p, uint16_t locate, uint64_t id, const char *ticker)
{
	uint8_t *m = mold_message(p, 36);

	m[0] = 'A';
	wire_put_be16(m + 1, locate);
	wire_put_be64(m + 11, id);
	m[19] = 'B';
	wire_put_be32(m + 20, 100);
	put_text(m + 24, ticker, 8);
	wire_put_be32(m + 32, 1000000);
}

/* count Add Orders of STRM at seq, seq+1, ... */
static void itch_data(struct packet *p, uint64_t seq, uint32_t count)
{
	mold_header(p, "SESSION001", seq, (uint16_t)count);
	for (uint32_t i = 0; i < count; i++)
		itch_add(p, 7, seq + i, "STRM");
}

/* An Ethernet/IPv4/UDP frame around a payload, to ip:port. */
static size_t frame_of(uint8_t *f, uint32_t ip, uint16_t port, const struct packet *p)
{
	memset(f, 0, 42);
	wire_put_be16(f + 12, 0x0800);
	f[14] = 0x45;
	wire_put_be16(f + 16, 20 + 8 + p->len);
	f[23] = 17;
	wire_put_be32(f + 26, 0x0a000001);
	wire_put_be32(f + 30, ip);
	wire_put_be16(f + 34, 40000);
	wire_put_be16(f + 36, port);
	wire_put_be16(f + 38, 8 + p->len);
	memcpy(f + 42, p->b, p->len);
	return 42 + p->len;
}

/* ---- the config's locks, counted ---------------------------------------- */

static struct {
	int all, venue[FEED_SOURCE_COUNT], intern;
	int held;		/* locks held now */
	int alloc_under_lock;
} locks;

static void lock_all(void) { locks.all++; locks.held++; }
static void unlock_all(void) { locks.held--; }
static void lock_venue(int v) { ck_assert(v > 0 && v < FEED_SOURCE_COUNT); locks.venue[v]++; locks.held++; }
static void unlock_venue(int v) { (void)v; locks.held--; }
static void lock_intern(void) { locks.intern++; locks.held++; }
static void unlock_intern(void) { locks.held--; }

static void *counted_alloc(size_t bytes)
{
	if (locks.held)
		locks.alloc_under_lock++;
	return calloc(1, bytes);
}

static struct harness h;
static int line_na, line_nb, line_xa, line_xb;

static void setup_with(bool with_locks)
{
	struct feed_engine_config cfg = {
		.alloc = counted_alloc, .free = free, .hold_ns = 1000000,
	};

	if (with_locks) {
		cfg.lock = lock_all;
		cfg.unlock = unlock_all;
		cfg.lock_venue = lock_venue;
		cfg.unlock_venue = unlock_venue;
		cfg.lock_intern = lock_intern;
		cfg.unlock_intern = unlock_intern;
	}
	memset(&locks, 0, sizeof(locks));
	harness_init(&h, 4096);
	ck_assert_int_eq(feed_engine_init(h.engine, &cfg), 0);
	line_na = feed_map_add(h.engine, NASDAQ_A, PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	line_nb = feed_map_add(h.engine, NASDAQ_B, PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "B");
	line_xa = feed_map_add(h.engine, BX_A, PORT, FEED_PROTO_ITCH50, WB_VENUE_BX, "A");
	line_xb = feed_map_add(h.engine, BX_B, PORT, FEED_PROTO_ITCH50, WB_VENUE_BX, "B");
	ck_assert_int_ge(line_xb, 0);
	ck_assert_int_eq(feed_subscribe(h.engine, "*", 1), 0);
}

static void setup(void) { setup_with(true); }
static void teardown(void) { harness_free(&h); }

static void payload(int line, const struct packet *p, uint64_t ts)
{
	feed_process_payload(h.engine, line, p->b, (uint32_t)p->len, ts, &h.prod);
	harness_drain(&h);
}

/* ---- routing ------------------------------------------------------------ */

START_TEST(test_route_finds_line_and_venue_without_writing_the_engine)
{
	uint8_t f[PKT_MAX + 64];
	struct feed_engine *copy = malloc(sizeof(*copy));
	struct packet p;
	struct feed_route r;
	int hint = -1;
	size_t len;

	itch_data(&p, 1, 2);
	len = frame_of(f, BX_B, PORT, &p);
	memcpy(copy, h.engine, sizeof(*copy));
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xb);
	/* Read only: the lookup cache is the caller's. */
	ck_assert_mem_eq(copy, h.engine, sizeof(*copy));
	ck_assert_int_eq(hint, line_xb);
	ck_assert_int_eq(r.venue, WB_VENUE_BX);
	ck_assert(!r.bad_frame);
	ck_assert_uint_eq(r.len, p.len);
	ck_assert_ptr_eq(r.payload, f + 42);
	ck_assert(feed_route_current(h.engine, &r));
	/* The hint is only a hint: another address is still found. */
	len = frame_of(f, NASDAQ_A, PORT, &p);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_na);
	ck_assert_int_eq(r.venue, WB_VENUE_NASDAQ);
	ck_assert_int_eq(hint, line_na);
	/* Not a mapped address, not UDP. */
	len = frame_of(f, NASDAQ_A, PORT + 1, &p);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), -1);
	len = frame_of(f, NASDAQ_A, PORT, &p);
	f[23] = 6;
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), -1);
	free(copy);
}
END_TEST

START_TEST(test_routed_frames_decode_as_process_frame_does)
{
	uint8_t f[PKT_MAX + 64];
	struct packet p;
	struct feed_route r;
	struct wb_event *first;
	size_t len, n1, i;
	int hint = -1;

	mold_header(&p, "SESSION001", 1, 1);
	itch_directory(&p, 7, "STRM");
	len = frame_of(f, NASDAQ_A, PORT, &p);
	ck_assert_int_eq(feed_process_frame(h.engine, f, (uint32_t)len, 5, &h.prod), line_na);
	harness_drain(&h);
	itch_data(&p, 2, 3);
	len = frame_of(f, NASDAQ_A, PORT, &p);
	ck_assert_int_eq(feed_process_frame(h.engine, f, (uint32_t)len, 6, &h.prod), line_na);
	harness_drain(&h);
	n1 = h.n;
	ck_assert_uint_eq(n1, 4);	/* SYMBOL and three ADDs */
	first = calloc(n1, sizeof(*first));
	memcpy(first, h.events, n1 * sizeof(*first));

	/* The same on BX's B line, in two steps. */
	mold_header(&p, "SESSION001", 1, 1);
	itch_directory(&p, 7, "STRM");
	len = frame_of(f, BX_B, PORT, &p);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xb);
	feed_process_route(h.engine, &r, 5, &h.prod);
	harness_drain(&h);
	itch_data(&p, 2, 3);
	len = frame_of(f, BX_B, PORT, &p);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xb);
	feed_process_route(h.engine, &r, 6, &h.prod);
	harness_drain(&h);
	ck_assert_uint_eq(h.n, 2 * n1);
	for (i = 0; i < n1; i++) {
		const struct wb_event *a = &first[i], *b = &h.events[n1 + i];

		ck_assert_int_eq(b->kind, a->kind);
		ck_assert_int_eq(b->venue, WB_VENUE_BX);
		ck_assert_int_eq(b->line, line_xb);
		ck_assert_uint_eq(b->seq, a->seq);
		ck_assert_uint_eq(b->recv_ts, a->recv_ts);
		ck_assert_mem_eq(&b->u, &a->u, sizeof(a->u));
	}
	ck_assert_uint_eq(h.engine->lines[line_xb].counters.packets, 2);
	free(first);
}
END_TEST

START_TEST(test_bad_frame_is_routed_and_counted_only_when_processed)
{
	uint8_t f[PKT_MAX + 64];
	struct packet p;
	struct feed_route r;
	int hint = -1;
	size_t len;

	itch_data(&p, 1, 1);
	len = frame_of(f, BX_A, PORT, &p);
	wire_put_be16(f + 20, 0x2000);	/* a first fragment: more to come */
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xa);
	ck_assert(r.bad_frame);
	ck_assert_uint_eq(h.engine->lines[line_xa].counters.errors[FEED_ERR_BAD_FRAME], 0);
	feed_process_route(h.engine, &r, 1, &h.prod);
	ck_assert_uint_eq(h.engine->lines[line_xa].counters.errors[FEED_ERR_BAD_FRAME], 1);
	ck_assert_uint_eq(h.engine->lines[line_xa].counters.packets, 0);
}
END_TEST

START_TEST(test_route_is_stale_once_the_map_changed)
{
	uint8_t f[PKT_MAX + 64];
	struct packet p;
	struct feed_route r;
	int hint = -1;
	size_t len;

	itch_data(&p, 1, 1);
	len = frame_of(f, BX_A, PORT, &p);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xa);
	/* Removed, and its slot taken by another venue's line: stale. */
	ck_assert_int_eq(feed_map_remove(h.engine, BX_A, PORT), 0);
	ck_assert(!feed_route_current(h.engine, &r));
	ck_assert_int_eq(feed_map_add(h.engine, 0xe9360d07, PORT, FEED_PROTO_ITCH50,
				      WB_VENUE_NASDAQ, "C"), line_xa);
	ck_assert(!feed_route_current(h.engine, &r));
	/* Routed again, the hint (now naming the new line) does not mislead. */
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), -1);
	ck_assert_int_eq(feed_map_remove(h.engine, 0xe9360d07, PORT), 0);
	/* The same address back on its venue: current again. */
	ck_assert_int_eq(feed_map_add(h.engine, BX_A, PORT, FEED_PROTO_ITCH50, WB_VENUE_BX, "A"),
			 line_xa);
	ck_assert_int_eq(feed_route_frame(h.engine, f, (uint32_t)len, &hint, &r), line_xa);
	ck_assert(feed_route_current(h.engine, &r));
	feed_process_route(h.engine, &r, 1, &h.prod);
	ck_assert_uint_eq(h.engine->lines[line_xa].counters.packets, 1);
}
END_TEST

/* ---- the config's locks -------------------------------------------------- */

START_TEST(test_map_changes_take_every_venue_lock_and_allocate_outside)
{
	/* setup added four lines: each published under every venue's lock. */
	ck_assert_int_eq(locks.all, 4);
	ck_assert_int_eq(feed_map_remove(h.engine, BX_B, PORT), 0);
	ck_assert_int_eq(locks.all, 5);
	ck_assert_int_eq(locks.held, 0);
	ck_assert_int_eq(locks.alloc_under_lock, 0);
	ck_assert_int_eq(locks.venue[WB_VENUE_NASDAQ] + locks.venue[WB_VENUE_BX], 0);
}
END_TEST

START_TEST(test_recovery_swaps_under_its_venue_lock_only)
{
	int all = locks.all;

	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_BX, 0, 64), 0);
	ck_assert_int_eq(locks.venue[WB_VENUE_BX], 1);
	ck_assert_int_eq(feed_recovery_disable(h.engine, WB_VENUE_BX, 0, 10, &h.prod), 0);
	ck_assert_int_eq(locks.venue[WB_VENUE_BX], 2);
	ck_assert_int_eq(locks.venue[WB_VENUE_NASDAQ], 0);
	ck_assert_int_eq(locks.all, all);
	ck_assert_int_eq(locks.held, 0);
	ck_assert_int_eq(locks.alloc_under_lock, 0);
}
END_TEST

START_TEST(test_star_takes_the_intern_lock_only_for_a_new_ticker)
{
	struct packet p;
	uint32_t count = h.engine->subs.count;

	mold_header(&p, "SESSION001", 1, 2);
	itch_directory(&p, 7, "STRM");
	itch_directory(&p, 8, "OTHER");
	payload(line_na, &p, 1);
	ck_assert_int_eq(locks.intern, 2);
	ck_assert_uint_eq(h.engine->subs.count, count + 2);
	/* BX names the same tickers: known, no lock. */
	mold_header(&p, "SESSION001", 1, 2);
	itch_directory(&p, 9, "OTHER");
	itch_directory(&p, 7, "STRM");
	payload(line_xa, &p, 2);
	ck_assert_int_eq(locks.intern, 2);
	ck_assert_uint_eq(h.engine->subs.count, count + 2);
	/* And the ids are the engine's, shared by both venues. */
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 4);
	ck_assert_uint_eq(h.events[0].instrument, h.events[3].instrument);
	ck_assert_uint_eq(h.events[1].instrument, h.events[2].instrument);
	/* Without '*' a new ticker is filtered: no id, no lock. */
	ck_assert_int_eq(feed_unsubscribe(h.engine, "*", 1), 0);
	mold_header(&p, "SESSION001", 3, 1);
	itch_directory(&p, 10, "NEWONE");
	payload(line_na, &p, 3);
	ck_assert_int_eq(locks.intern, 2);
	ck_assert_int_eq(locks.held, 0);
}
END_TEST

START_TEST(test_engine_without_locks_runs_single_threaded)
{
	struct packet p;

	teardown();
	setup_with(false);
	mold_header(&p, "SESSION001", 1, 1);
	itch_directory(&p, 7, "STRM");
	payload(line_na, &p, 1);
	ck_assert_int_eq(feed_recovery_enable(h.engine, WB_VENUE_NASDAQ, 0, 64), 0);
	ck_assert_int_eq(feed_recovery_disable(h.engine, WB_VENUE_NASDAQ, 0, 2, &h.prod), 0);
	ck_assert_int_eq(locks.all + locks.intern + locks.venue[WB_VENUE_NASDAQ], 0);
	ck_assert_uint_eq(harness_count(&h, WB_EV_SYMBOL), 1);
}
END_TEST

/* ---- holes per venue ------------------------------------------------------ */

/* A hole on venue's A line, held while its B line may still fill it. */
static void open_hole(int a, int b, uint64_t ts)
{
	struct packet p;

	mold_header(&p, "SESSION001", 1, 1);
	itch_directory(&p, 7, "STRM");
	payload(a, &p, ts);
	payload(b, &p, ts);
	itch_data(&p, 2, 2);
	payload(a, &p, ts);
	payload(b, &p, ts);
	itch_data(&p, 6, 1);	/* 4 and 5 missing */
	payload(a, &p, ts);
}

START_TEST(test_holes_are_counted_and_polled_per_venue)
{
	uint64_t t0 = 1000000000;

	open_hole(line_na, line_nb, t0);
	ck_assert_uint_eq(feed_venue_holes(h.engine, WB_VENUE_NASDAQ), 1);
	ck_assert_uint_eq(feed_venue_holes(h.engine, WB_VENUE_BX), 0);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 1);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
	open_hole(line_xa, line_xb, t0 + 500000);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 2);

	/* BX's poll past Nasdaq's hold time, not BX's: nothing moves. */
	feed_venue_poll(h.engine, WB_VENUE_BX, t0 + 1200000, &h.prod);
	harness_drain(&h);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 0);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 2);
	/* Nasdaq's: its hole is a GAP, BX's still held. */
	feed_venue_poll(h.engine, WB_VENUE_NASDAQ, t0 + 1200000, &h.prod);
	harness_drain(&h);
	ck_assert_uint_eq(harness_count(&h, WB_EV_GAP), 1);
	ck_assert_int_eq(harness_find(&h, WB_EV_GAP, 0)->venue, WB_VENUE_NASDAQ);
	ck_assert_uint_eq(harness_find(&h, WB_EV_GAP, 0)->u.gap.first, 4);
	ck_assert_uint_eq(feed_venue_holes(h.engine, WB_VENUE_NASDAQ), 0);
	ck_assert_uint_eq(feed_venue_holes(h.engine, WB_VENUE_BX), 1);
	/* A venue without lines, or out of range, has none and polls nothing. */
	ck_assert_uint_eq(feed_venue_holes(h.engine, WB_VENUE_PSX), 0);
	ck_assert_uint_eq(feed_venue_holes(h.engine, FEED_SOURCE_COUNT), 0);
	feed_venue_poll(h.engine, WB_VENUE_PSX, t0 + 9000000, &h.prod);
	/* Removing BX's lines takes its hole with them. */
	ck_assert_int_eq(feed_map_remove(h.engine, BX_A, PORT), 0);
	ck_assert_int_eq(feed_map_remove(h.engine, BX_B, PORT), 0);
	ck_assert_uint_eq(feed_engine_holes(h.engine), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("engine_locks");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_route_finds_line_and_venue_without_writing_the_engine);
	tcase_add_test(tc, test_routed_frames_decode_as_process_frame_does);
	tcase_add_test(tc, test_bad_frame_is_routed_and_counted_only_when_processed);
	tcase_add_test(tc, test_route_is_stale_once_the_map_changed);
	tcase_add_test(tc, test_map_changes_take_every_venue_lock_and_allocate_outside);
	tcase_add_test(tc, test_recovery_swaps_under_its_venue_lock_only);
	tcase_add_test(tc, test_star_takes_the_intern_lock_only_for_a_new_ticker);
	tcase_add_test(tc, test_engine_without_locks_runs_single_threaded);
	tcase_add_test(tc, test_holes_are_counted_and_polled_per_venue);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
