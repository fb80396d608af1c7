/* nbbo_watch AAPL [book]: print every NBBO change of one symbol. Links only
 * libwirebook: cc nbbo_watch.c $(pkg-config --cflags --libs wirebook)      */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "wirebook/book.h"

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
	int err, sym;

	if (argc < 2) {
		fprintf(stderr, "usage: nbbo_watch SYMBOL [book-name]\n");
		return 2;
	}
	book = wb_open(argc > 2 ? argv[2] : NULL, &err);
	if (!book || (sym = wb_find(book, argv[1])) < 0) {
		fprintf(stderr, "nbbo_watch: %s\n", wb_strerror(book ? WB_ENOSYM : err));
		return 1;
	}
	memset(&last, 0, sizeof(last));
	for (;;) {
		/* Polling the update counter is one load; read only when it moves. */
		err = wb_update_counter(book, sym, &counter);
		if (err == 0 && counter == seen) {
			usleep(100);
			continue;
		}
		if (err == 0)
			err = wb_nbbo(book, sym, &now);
		if (err == WB_ESTALE && wb_reopen(book) == 0 && (sym = wb_find(book, argv[1])) > 0)
			continue; /* wirebookd restarted: attached to the new book */
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
