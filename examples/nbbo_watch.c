/* nbbo_watch SYMBOL [book-name]: print every NBBO change of one symbol, and
 * the book's health when it changes (live / stale / retired / recovering).
 * Links only libwirebook: cc nbbo_watch.c $(pkg-config --cflags --libs wirebook) */
#define _POSIX_C_SOURCE 200809L	/* nanosleep under -std=c11 too */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "wirebook/book.h"

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

static void print_px(int64_t p)
{
	printf("%lld.%04lld", (long long)(p / WB_PRICE_SCALE),
	       (long long)(p % WB_PRICE_SCALE / 10000));
}

int main(int argc, char **argv)
{
	struct wb_nbbo last, now;
	uint64_t seen = ~0ull, counter;
	struct wb_book *book;
	int err, sym, health = -1, polls = 0;

	if (argc < 2 || argc > 3 || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 || argc > 3 ? stderr : stdout, "usage: nbbo_watch SYMBOL [book-name]\n");
		return argc < 2 || argc > 3 ? 2 : 0;
	}
	/* wirebookd may still be starting: wait for its book. */
	while (!(book = wb_open(argc > 2 ? argv[2] : NULL, &err)) && err == WB_ENOSHM) {
		if (health != -2)
			fprintf(stderr, "nbbo_watch: waiting for the book (is wirebookd running?)\n");
		health = -2;
		nap_us(100000);
	}
	if (!book) {
		fprintf(stderr, "nbbo_watch: %s\n", wb_strerror(err));
		return 1;
	}
	/* A new book learns its symbols from the feed: wait for this one. */
	while ((sym = wb_find(book, argv[1])) == WB_ENOSYM || sym == WB_ESTALE) {
		if (health != -3)
			fprintf(stderr, "nbbo_watch: waiting for %s to appear in the book\n", argv[1]);
		health = -3;
		nap_us(100000);
	}
	if (sym < 0) {
		fprintf(stderr, "nbbo_watch: %s: %s\n", argv[1], wb_strerror(sym));
		return 1;
	}
	health = -1;
	memset(&last, 0, sizeof(last));
	for (;;) {
		/* Health every ~100 ms; a wirebookd restart is followed inside the calls. */
		if (polls++ % 1000 == 0 && (err = wb_health(book, NULL)) != health && err >= 0) {
			printf("%s book %s\n", argv[1], wb_health_name(err));
			fflush(stdout);
			health = err;
		}
		/* Polling the update counter is one load; read only when it moves. */
		err = wb_update_counter(book, sym, &counter);
		if (err == 0 && counter == seen) {
			nap_us(100);
			continue;
		}
		if (err == 0)
			err = wb_nbbo(book, sym, &now);
		if (err == WB_ESTALE) {	/* restarting: not in the new book yet */
			nap_us(100);
			continue;
		}
		if (err) {
			fprintf(stderr, "nbbo_watch: %s\n", wb_strerror(err));
			return 1;
		}
		seen = counter;
		if (now.bid_price == last.bid_price && now.ask_price == last.ask_price &&
		    now.bid_qty == last.bid_qty && now.ask_qty == last.ask_qty)
			continue;
		printf("%s %llu x ", argv[1], (unsigned long long)now.bid_qty);
		print_px(now.bid_price), printf(" / "), print_px(now.ask_price);
		printf(" x %llu%s\n", (unsigned long long)now.ask_qty,
		       now.flags & WB_SYMF_CROSSED ? " CROSSED" : now.flags & WB_SYMF_LOCKED ? " LOCKED" : "");
		fflush(stdout);
		last = now;
	}
}
