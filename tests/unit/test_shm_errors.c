/*
 * libwirebook error cases: every way attaching or reading can fail gives
 * its own clear error, and a reader survives builder restarts.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "book/superbook.h"
#include "shm/shm_layout.h"

static char name[64];

static void set_name(const char *what)
{
	snprintf(name, sizeof(name), "wbtest_err_%s_%d", what, (int)getpid());
	shm_unlink(name);
}

static struct superbook *builder(int force, int *err)
{
	struct superbook_config cfg = { .shm_name = name, .capacity = 32, .numa_node = -1,
					.force = force };

	return superbook_create(&cfg, err);
}

static struct superbook *builder_with_symbol(void)
{
	int err;
	struct superbook *sb = builder(0, &err);
	struct book_update u = { .kind = BOOK_UP_LEVEL, .venue = WB_VENUE_NASDAQ, .side = WB_SIDE_BUY,
				 .instrument = 3, .price = 100 * WB_PRICE_SCALE, .qty = 100,
				 .order_count = 1 };

	ck_assert_msg(sb, "superbook_create: %d", err);
	ck_assert_int_eq(superbook_add_symbol(sb, 3, "AAPL    "), 0);
	superbook_apply(sb, &u);
	superbook_publish(sb);
	return sb;
}

static void make_raw_object(size_t size, const void *bytes, size_t n)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	if (n)
		ck_assert_int_eq(pwrite(fd, bytes, n, 0), (ssize_t)n);
	close(fd);
}

START_TEST(test_open_without_a_book_is_enoshm)
{
	int err = 0;

	set_name("none");
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_ENOSHM);
	ck_assert_str_ne(wb_strerror(err), wb_strerror(WB_EBADMAGIC));
}
END_TEST

START_TEST(test_open_of_a_book_still_being_created_is_enoshm)
{
	int err = 0;

	set_name("creating");
	make_raw_object(0, NULL, 0); /* created, not sized yet */
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_ENOSHM);
	make_raw_object(sizeof(struct wb_shm_header) + 4096, NULL, 0); /* sized, magic not stored yet */
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_ENOSHM);
	shm_unlink(name);
}
END_TEST

START_TEST(test_open_of_a_foreign_object_is_ebadmagic)
{
	char junk[8192];
	int err = 0;

	set_name("junk");
	memset(junk, 0x5a, sizeof(junk));
	make_raw_object(sizeof(junk), junk, sizeof(junk));
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_EBADMAGIC);
	shm_unlink(name);
}
END_TEST

START_TEST(test_open_of_a_truncated_object_is_ebadmagic)
{
	int err = 0;

	set_name("short");
	make_raw_object(100, NULL, 0);
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_EBADMAGIC);
	shm_unlink(name);
}
END_TEST

START_TEST(test_open_of_another_abi_version_is_eabi)
{
	struct superbook *sb;
	struct wb_shm_header *h;
	int err = 0, fd;

	set_name("abi");
	sb = builder(0, &err);
	ck_assert_ptr_nonnull(sb);
	/* what a builder of the next ABI would have written */
	fd = shm_open(name, O_RDWR, 0);
	ck_assert_int_ge(fd, 0);
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert(h != MAP_FAILED);
	h->abi_version = WB_BOOK_ABI_VERSION + 1;
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_EABI);
	h->abi_version = WB_BOOK_ABI_VERSION;
	h->record_size += 64; /* same version, other layout: refused too */
	ck_assert_ptr_null(wb_open(name, &err));
	ck_assert_int_eq(err, WB_EABI);
	h->record_size -= 64;
	munmap(h, sizeof(*h));
	close(fd);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_reader_across_builder_restart_follows_it)
{
	struct superbook *sb1, *sb2;
	struct wb_book *bk;
	struct wb_top top;
	uint64_t n;
	int err = 0, sym;

	set_name("restart");
	sb1 = builder_with_symbol();
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	sym = wb_find(bk, "AAPL");
	ck_assert_int_eq(sym, 3);
	ck_assert_int_eq(wb_top(bk, sym, &top), 0);
	ck_assert_uint_eq(top.bid_qty, 100);
	ck_assert_int_eq(wb_check(bk), 0);

	sb2 = builder(0, &err); /* a new run under the same name */
	ck_assert_ptr_nonnull(sb2);
	/* The read follows the restart; the new run has not seen AAPL yet. */
	ck_assert_int_eq(wb_top(bk, sym, &top), WB_ESTALE);
	ck_assert_int_eq(wb_update_counter(bk, sym, &n), WB_ESTALE);
	ck_assert_int_eq(wb_update_counter(bk, WB_ANY_SYMBOL, &n), 0);
	ck_assert_int_eq(wb_check(bk), 0);
	ck_assert_int_eq(wb_state(bk), WB_SHM_LIVE);

	ck_assert_int_eq(wb_reopen(bk), 0);
	ck_assert_int_eq(wb_check(bk), 0);
	ck_assert_int_eq(wb_find(bk, "AAPL"), sym); /* the reader's index stays */
	ck_assert_int_eq(wb_top(bk, sym, &top), WB_ESTALE);
	wb_close(bk);
	superbook_destroy(sb2);
	superbook_destroy(sb1); /* must not unlink the newer run's object (already gone here) */
}
END_TEST

START_TEST(test_reader_after_builder_exit_gets_estale_and_keeps_the_retired_book)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_depth d;
	int err = 0;

	set_name("exit");
	sb = builder_with_symbol();
	{
		/* a symbol whose directory entry has not come yet */
		struct book_update u = { .kind = BOOK_UP_LEVEL, .venue = WB_VENUE_BZX,
					 .side = WB_SIDE_SELL, .instrument = 9,
					 .price = WB_PRICE_SCALE, .qty = 5, .order_count = 1 };

		superbook_apply(sb, &u);
		superbook_publish(sb);
	}
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	superbook_destroy(sb);
	ck_assert_int_eq(wb_depth(bk, 3, WB_CONSOLIDATED, 5, &d), WB_ESTALE);
	ck_assert_int_eq(wb_depth(bk, 9, WB_CONSOLIDATED, 5, &d), WB_ESTALE); /* data, no ticker */
	ck_assert_int_eq(wb_find(bk, "ZZZZ"), WB_ESTALE);
	ck_assert_int_eq(wb_reopen(bk), WB_ENOSHM);
	/* the handle keeps the retired book, not dangling, not inert */
	ck_assert_int_eq(wb_depth(bk, 3, WB_CONSOLIDATED, 5, &d), WB_ESTALE);
	ck_assert_int_eq(wb_symbol_count(bk), 10);
	wb_close(bk);
}
END_TEST

START_TEST(test_crashed_builder_replaced_is_followed_by_wb_check)
{
	struct superbook *crashed, *fresh;
	struct wb_book *bk;
	struct wb_top top;
	int err = 0;

	set_name("crash");
	crashed = builder_with_symbol();
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	/* the builder "dies" without retiring; an operator removes its
	 * object and a new builder starts */
	shm_unlink(name);
	fresh = builder(0, &err);
	ck_assert_ptr_nonnull(fresh);
	ck_assert_int_eq(wb_top(bk, 3, &top), 0); /* the old mapping still reads */
	ck_assert_int_eq(wb_check(bk), 0); /* wb_check notices and follows */
	ck_assert_int_eq(wb_top(bk, 3, &top), WB_ESTALE); /* the new run lacks AAPL */
	ck_assert_int_eq(wb_reopen(bk), 0);
	ck_assert_int_eq(wb_check(bk), 0);
	superbook_destroy(crashed); /* retires its own object, leaves the new one */
	ck_assert_int_eq(wb_check(bk), 0);
	wb_close(bk);
	superbook_destroy(fresh);
}
END_TEST

START_TEST(test_second_live_builder_is_refused_unless_forced)
{
	struct superbook *sb;
	int err = 0, pipefd[2], status;
	pid_t child;
	char c;

	set_name("owner");
	ck_assert_int_eq(pipe(pipefd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct superbook *mine = builder(0, &err);

		c = mine ? 'y' : 'n';
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
	ck_assert_int_eq(c, 'y');
	ck_assert_ptr_null(builder(0, &err));
	ck_assert_int_eq(err, SUPERBOOK_EBUSY);
	sb = builder(1, &err);
	ck_assert_ptr_nonnull(sb);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_unknown_symbol_is_enosym)
{
	struct superbook *sb;
	struct wb_book *bk;
	char tk[9];
	int err;

	set_name("nosym");
	sb = builder_with_symbol();
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	ck_assert_int_eq(wb_find(bk, "NOPE"), WB_ENOSYM);
	ck_assert_int_eq(wb_find(bk, "AAP"), WB_ENOSYM);
	ck_assert_int_eq(wb_symbol(bk, 2, tk), WB_ENOSYM);
	ck_assert_int_eq(wb_symbol(bk, 3, tk), 0);
	ck_assert_str_eq(tk, "AAPL");
	wb_close(bk);
	superbook_destroy(sb);
}
END_TEST

START_TEST(test_bad_arguments_are_einval)
{
	struct superbook *sb;
	struct wb_book *bk;
	struct wb_top top;
	struct wb_depth d;
	struct wb_venue_bbo vb;
	struct wb_nbbo nb;
	struct wb_trade t;
	struct wb_status st;
	uint64_t n;
	int err = 0;

	set_name("args");
	ck_assert_ptr_null(wb_open("a/b", &err));
	ck_assert_int_eq(err, WB_EINVAL);
	ck_assert_ptr_null(wb_open("", &err));
	ck_assert_int_eq(err, WB_EINVAL);
	sb = builder_with_symbol();
	bk = wb_open(name, &err);
	ck_assert_ptr_nonnull(bk);
	ck_assert_int_eq(wb_top(NULL, 3, &top), WB_EINVAL);
	ck_assert_int_eq(wb_top(bk, 3, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_top(bk, 0, &top), WB_EINVAL);
	ck_assert_int_eq(wb_top(bk, -1, &top), WB_EINVAL);
	ck_assert_int_eq(wb_top(bk, 32, &top), WB_EINVAL); /* capacity 32: ids 1..31 */
	ck_assert_int_eq(wb_top(bk, 31, &top), 0);
	ck_assert_int_eq(wb_depth(bk, 3, WB_BOOK_VENUES, 5, &d), WB_EINVAL);
	ck_assert_int_eq(wb_depth(bk, 3, -1, 5, &d), WB_EINVAL);
	ck_assert_int_eq(wb_depth(bk, 3, WB_CONSOLIDATED, WB_BOOK_DEPTH + 1, &d), WB_EINVAL);
	ck_assert_int_eq(wb_venue_bbo(bk, 3, WB_CONSOLIDATED, &vb), WB_EINVAL);
	ck_assert_int_eq(wb_nbbo(bk, 3, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_last_trade(bk, 99, &t), WB_EINVAL);
	ck_assert_int_eq(wb_status(bk, 3, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_update_counter(bk, 3, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_find(bk, "TOOLONGXX"), WB_EINVAL);
	ck_assert_int_eq(wb_find(bk, ""), WB_EINVAL);
	ck_assert_int_eq(wb_find(bk, NULL), WB_EINVAL);
	ck_assert_int_eq(wb_reopen(NULL), WB_EINVAL);
	/* and the valid calls on the same handle work */
	ck_assert_int_eq(wb_nbbo(bk, 3, &nb), 0);
	ck_assert_int_eq(wb_status(bk, 3, &st), 0);
	ck_assert_int_eq(wb_update_counter(bk, 3, &n), 0);
	ck_assert_uint_eq(n, 1);
	wb_close(bk);
	wb_close(NULL);
	superbook_destroy(sb);
}
END_TEST

/* Every code wirebook's public calls return. A new one goes here too. */
static const int wb_codes[] = {
	WB_ENOSHM, WB_EACCES, WB_EBADMAGIC, WB_EABI, WB_ESTALE,
	WB_ENOSYM, WB_EINVAL, WB_EBUSY, WB_ESYS, WB_ENODEV,
};
#define N_CODES (sizeof(wb_codes) / sizeof(wb_codes[0]))

START_TEST(test_every_error_has_its_own_message)
{
	unsigned a, b;

	for (a = 0; a < N_CODES; a++) {
		ck_assert_int_lt(wb_codes[a], 0);
		ck_assert_str_ne(wb_strerror(wb_codes[a]), wb_strerror(1));
		ck_assert_str_ne(wb_strerror(wb_codes[a]), wb_strerror(WB_OK));
		for (b = a + 1; b < N_CODES; b++) {
			ck_assert_int_ne(wb_codes[a], wb_codes[b]);
			ck_assert_str_ne(wb_strerror(wb_codes[a]), wb_strerror(wb_codes[b]));
		}
	}
}
END_TEST

/* One convention: the codes are -errno values, so a -errno from anywhere
 * in wirebook never reads as another wirebook error (WB_EACCES used to be
 * -2, which is -ENOENT), and wb_strerror describes any -errno. */
START_TEST(test_error_codes_are_negated_errno_values)
{
	ck_assert_int_eq(WB_ENOSHM, -ENOENT);
	ck_assert_int_eq(WB_EACCES, -EACCES);
	ck_assert_int_eq(WB_EINVAL, -EINVAL);
	ck_assert_int_eq(WB_ESTALE, -ESTALE);
	ck_assert_int_ne(WB_EACCES, -ENOENT);
	ck_assert_int_ne(SUPERBOOK_EBUSY, WB_EBUSY);
	ck_assert_str_eq(wb_strerror(-ENOMEM), strerror(ENOMEM));
	ck_assert_str_eq(wb_strerror(-ENOSPC), strerror(ENOSPC));
	ck_assert_str_eq(wb_strerror(7), "unknown wirebook error");
	ck_assert_str_eq(wb_strerror(-100000), "unknown wirebook error");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shm_errors");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_open_without_a_book_is_enoshm);
	tcase_add_test(tc, test_open_of_a_book_still_being_created_is_enoshm);
	tcase_add_test(tc, test_open_of_a_foreign_object_is_ebadmagic);
	tcase_add_test(tc, test_open_of_a_truncated_object_is_ebadmagic);
	tcase_add_test(tc, test_open_of_another_abi_version_is_eabi);
	tcase_add_test(tc, test_reader_across_builder_restart_follows_it);
	tcase_add_test(tc, test_reader_after_builder_exit_gets_estale_and_keeps_the_retired_book);
	tcase_add_test(tc, test_crashed_builder_replaced_is_followed_by_wb_check);
	tcase_add_test(tc, test_second_live_builder_is_refused_unless_forced);
	tcase_add_test(tc, test_unknown_symbol_is_enosym);
	tcase_add_test(tc, test_bad_arguments_are_einval);
	tcase_add_test(tc, test_every_error_has_its_own_message);
	tcase_add_test(tc, test_error_codes_are_negated_errno_values);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
