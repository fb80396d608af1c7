/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Conflated book subjects for light consumers (issue 26): wirebookd
 * --publish-books N publishes, per symbol, the top N levels per side of
 * the Super-Book and its NBBO on core NATS subject
 * wirebook.INSTANCE.book.TICKER (the ticker as a subject token: '.'
 * becomes '_'), at most once every --publish-books-interval MS per symbol
 * and only when what it publishes changed. Core NATS, not JetStream: a
 * light consumer wants the book now, not a history of them (the stream
 * holds the events for that); a late subscriber gets each symbol's next
 * change.
 *
 * The publisher thread does it (nats_publish.h), off the path: it reads
 * the published book in shared memory as any reader does (libwirebook,
 * lock-free; a reader never holds the builder up), polling each symbol's
 * update counter once per interval, so a symbol that changes a thousand
 * times in an interval costs one message.
 *
 * The message, JSON (one object, no newline; prices in dollars, exact
 * decimals of the book's 1e-8 fixed point; sizes in shares):
 *   {"symbol":"AAPL","state":"trading","locked":false,"crossed":false,
 *    "gap":false,"halted":false,
 *    "nbbo":{"bid":189.52,"bid_size":500,"bid_venues":["BZX","EDGX"],
 *            "ask":189.54,"ask_size":100,"ask_venues":["EDGX"]},
 *    "bids":[[189.52,500,3],...],"asks":[[189.54,100,1],...]}
 * levels: [price, shares, orders], best first, at most N per side; a side
 * without a price: "bid":null, "bid_size":0, "bid_venues":[].
 */
#ifndef WIREBOOK_NET_NATS_BOOKS_H
#define WIREBOOK_NET_NATS_BOOKS_H

#include <stddef.h>
#include <stdint.h>
#include "wirebook/book.h"

/* Levels per side at most (the book's depth). */
#define NATS_BOOKS_MAX_LEVELS WB_BOOK_DEPTH
/* A message's size at most, N = WB_BOOK_DEPTH. */
#define NATS_BOOKS_JSON_MAX 4096u

/* The JSON of symbol sym of book, levels per side; its length, or -1
 * (no such symbol, or the book could not be read). */
int nats_books_json(const struct wb_book *book, int sym, unsigned levels, char *out, size_t size);
/* A price of the book's fixed point (1e-8 dollars) as an exact decimal. */
void nats_books_price(char *out, size_t size, int64_t price);

struct nats_books_counters {
	uint64_t messages, bytes;
	uint64_t failed;	/* publishes the client refused (disconnected, its buffer full) */
};

#ifdef WB_NATS
#include <nats/nats.h>

struct nats_books;

/* NULL with why in err. The book is attached on the first tick (it
 * belongs to the thread that ticks). */
struct nats_books *nats_books_create(const char *shm_name, const char *instance,
				     unsigned levels, unsigned interval_ms, char *err,
				     size_t errlen);
/* On the publisher thread: every interval, the symbols whose book changed. */
void nats_books_tick(struct nats_books *b, natsConnection *nc, uint64_t now_ns, int force);
void nats_books_counters(const struct nats_books *b, struct nats_books_counters *out);
/* When the next tick has something to do (CLOCK_MONOTONIC ns; 0: now):
 * the publisher sleeps on the event stream until then at most. */
uint64_t nats_books_next_ns(const struct nats_books *b);
void nats_books_destroy(struct nats_books *b);
#endif

#endif /* WIREBOOK_NET_NATS_BOOKS_H */
