/*
 * Reader processes check every snapshot they take while the builder
 * rewrites the books as fast as it can. The writer stamps each round of
 * a venue's levels with the round number (qty = round * 16 + level), so
 * a snapshot mixing two rounds of one venue (a torn read) is caught, as
 * are unsorted depth, per-venue sums that differ from the consolidated
 * total, and a crossed or locked top that is not flagged.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "book/superbook.h"
#include "wirebook/book.h"
#include "test_util.h"

#define NSYMS 4
#define NVENUES 3
#define LEVELS 8		/* per side per venue and round */
#define READERS 2
#define TICK 1000000LL
#define RUN_SECONDS 1.5

static char name[64];

#define FAIL(...) do { fprintf(stderr, "reader %d: ", (int)getpid()); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

static int check_side(const struct wb_level *lv, uint64_t (*vq)[WB_BOOK_DEPTH], int n, int ask,
		      int64_t round_of[WB_BOOK_VENUES])
{
	int i, v;

	for (i = 0; i < n; i++) {
		uint64_t sum = 0;

		if (lv[i].qty == 0)
			FAIL("empty level %d published", i);
		if (i && (ask ? lv[i].price <= lv[i - 1].price : lv[i].price >= lv[i - 1].price))
			FAIL("%s depth not sorted at level %d", ask ? "ask" : "bid", i);
		for (v = 0; v < WB_BOOK_VENUES; v++) {
			sum += vq[v][i];
			if (!!vq[v][i] != !!(lv[i].venues & (1u << v)))
				FAIL("venue mask disagrees with the breakdown at level %d", i);
			if (!vq[v][i])
				continue;
			if (round_of[v] < 0)
				round_of[v] = (int64_t)(vq[v][i] / 16);
			else if (round_of[v] != (int64_t)(vq[v][i] / 16))
				FAIL("torn read: venue %d shows rounds %lld and %llu", v,
				     (long long)round_of[v], (unsigned long long)(vq[v][i] / 16));
		}
		if (sum != lv[i].qty)
			FAIL("per-venue sum %llu != consolidated %llu at level %d",
			     (unsigned long long)sum, (unsigned long long)lv[i].qty, i);
	}
	return 0;
}

static int reader_main(void)
{
	struct wb_book *bk;
	struct wb_depth d;
	uint64_t snapshots = 0, changes = 0, last[NSYMS + 1] = { 0 };
	int err, s, rc;

	bk = wb_open(name, &err);
	if (!bk)
		FAIL("wb_open: %s", wb_strerror(err));
	while (wb_state(bk) == WB_SHM_LIVE) {
		for (s = 1; s <= NSYMS; s++) {
			int64_t round_of[WB_BOOK_VENUES];

			rc = wb_depth(bk, s, WB_CONSOLIDATED, WB_BOOK_DEPTH, &d);
			if (rc == WB_ESTALE)
				break;
			/* The writer was preempted mid-update for longer than the
			 * reader spins (a loaded 2-core machine): the API says retry. */
			if (rc == WB_EBUSY)
				continue;
			if (rc)
				FAIL("wb_depth: %s", wb_strerror(rc));
			memset(round_of, 0xff, sizeof(round_of));
			if (check_side(d.bid, d.bid_venue_qty, d.bid_count, 0, round_of) ||
			    check_side(d.ask, d.ask_venue_qty, d.ask_count, 1, round_of))
				return 1;
			if (d.bid_count && d.ask_count) {
				int64_t b = d.bid[0].price, a = d.ask[0].price;

				if ((b == a) != !!(d.flags & WB_SYMF_LOCKED) ||
				    (b > a) != !!(d.flags & WB_SYMF_CROSSED))
					FAIL("top %lld/%lld flags %#x", (long long)b, (long long)a, d.flags);
			}
			snapshots++;
			if (d.updates != last[s])
				changes++;
			last[s] = d.updates;
		}
	}
	wb_close(bk);
	/* a reader that never overlapped the writer proves nothing */
	if (snapshots < 1000 || changes < 100)
		FAIL("only %llu snapshots, %llu changes seen", (unsigned long long)snapshots,
		     (unsigned long long)changes);
	return 0;
}

static void write_round(struct superbook *sb, unsigned *seed, uint64_t round,
			int64_t mids[NSYMS + 1][NVENUES + 1])
{
	struct book_update u = { .kind = BOOK_UP_LEVEL };
	int s, v, k, side;

	for (s = 1; s <= NSYMS; s++) {
		for (v = 1; v <= NVENUES; v++) {
			int64_t old = mids[s][v];
			/* venues wander independently, so the consolidated
			 * book locks and crosses now and then */
			int64_t mid = 100 * WB_PRICE_SCALE + (int64_t)(rand_r(seed) % 21) * TICK;

			u.instrument = (uint16_t)s;
			u.venue = (uint8_t)v;
			for (side = 0; side < 2; side++) {
				u.side = side ? WB_SIDE_SELL : WB_SIDE_BUY;
				if (old)
					for (k = 0; k < LEVELS; k++) {
						u.price = side ? old + (1 + k) * TICK : old - k * TICK;
						u.qty = 0;
						superbook_apply(sb, &u);
					}
				for (k = 0; k < LEVELS; k++) {
					u.price = side ? mid + (1 + k) * TICK : mid - k * TICK;
					u.qty = round * 16 + (uint64_t)k + 1;
					u.order_count = 1;
					superbook_apply(sb, &u);
				}
			}
			mids[s][v] = mid;
		}
	}
	superbook_publish(sb);
}

START_TEST(test_shm_readers_never_see_a_torn_or_inconsistent_book)
{
	struct superbook_config cfg = { .capacity = 16, .numa_node = -1 };
	static int64_t mids[NSYMS + 1][NVENUES + 1];
	struct superbook *sb;
	pid_t pids[READERS];
	unsigned seed = 99;
	uint64_t round = 1;
	uint64_t end;
	int i, err, status;

	snprintf(name, sizeof(name), "wbtest_readers_%d", (int)getpid());
	cfg.shm_name = name;
	sb = superbook_create(&cfg, &err);
	ck_assert_ptr_nonnull(sb);
	write_round(sb, &seed, round++, mids);
	for (i = 0; i < READERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0)
			_exit(reader_main());
	}
	end = test_monotonic_ns() + (uint64_t)(RUN_SECONDS * 1e9);
	while (test_monotonic_ns() < end)
		for (i = 0; i < 64; i++)
			write_round(sb, &seed, round++, mids);
	superbook_set_state(sb, WB_SHM_SOURCE_DONE);
	for (i = 0; i < READERS; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "reader %d failed (status %#x)", i, status);
	}
	ck_assert_uint_gt(round, 1000);
	superbook_destroy(sb);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shm_concurrent_readers");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_shm_readers_never_see_a_torn_or_inconsistent_book);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
