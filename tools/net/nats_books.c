/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Conflated book subjects for light consumers; see nats_books.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/nats_batch.h"
#include "net/nats_books.h"
#include "wirebook/barrier.h"

void nats_books_price(char *out, size_t size, int64_t price)
{
	uint64_t mag = price < 0 ? (uint64_t)0 - (uint64_t)price : (uint64_t)price;
	uint64_t whole = mag / (uint64_t)WB_PRICE_SCALE, frac = mag % (uint64_t)WB_PRICE_SCALE;
	char f[16];
	int n;

	n = snprintf(f, sizeof(f), "%08llu", (unsigned long long)frac);
	while (n > 0 && f[n - 1] == '0')
		f[--n] = 0;
	snprintf(out, size, "%s%llu%s%s", price < 0 ? "-" : "", (unsigned long long)whole,
		 n ? "." : "", f);
}

struct json {
	char *p;
	size_t size, len;
	int overflow;
};

__attribute__((format(printf, 2, 3))) static void put(struct json *j, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(j->p + j->len, j->len < j->size ? j->size - j->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= j->size - j->len) {
		j->overflow = 1;
		j->len = j->size;
		return;
	}
	j->len += (size_t)n;
}

static void put_venues(struct json *j, uint32_t venues)
{
	const char *sep = "";

	put(j, "[");
	for (; venues; venues &= venues - 1) {
		put(j, "%s\"%s\"", sep, wb_venue_name(__builtin_ctz(venues)));
		sep = ",";
	}
	put(j, "]");
}

static void put_side(struct json *j, const char *name, int64_t price, uint64_t qty,
		     uint32_t venues)
{
	char px[40];

	if (price || qty) {
		nats_books_price(px, sizeof(px), price);
		put(j, "\"%s\":%s,", name, px);
	} else {
		put(j, "\"%s\":null,", name);
	}
	put(j, "\"%s_size\":%llu,\"%s_venues\":", name, (unsigned long long)qty, name);
	put_venues(j, venues);
}

static void put_levels(struct json *j, const struct wb_level *lv, unsigned n)
{
	char px[40];
	unsigned i;

	put(j, "[");
	for (i = 0; i < n; i++) {
		nats_books_price(px, sizeof(px), lv[i].price);
		put(j, "%s[%s,%llu,%u]", i ? "," : "", px, (unsigned long long)lv[i].qty,
		    lv[i].orders);
	}
	put(j, "]");
}

int nats_books_json(const struct wb_book *book, int sym, unsigned levels, char *out, size_t size)
{
	struct json j = { out, size, 0, 0 };
	struct wb_depth *d;
	struct wb_nbbo nb;
	char ticker[9];

	if (levels > NATS_BOOKS_MAX_LEVELS)
		levels = NATS_BOOKS_MAX_LEVELS;
	d = malloc(sizeof(*d));
	if (!d || wb_symbol(book, sym, ticker) != 0 || !ticker[0] || wb_nbbo(book, sym, &nb) != 0 ||
	    wb_depth(book, sym, WB_CONSOLIDATED, levels, d) != 0) {
		free(d);
		return -1;
	}
	put(&j, "{\"symbol\":\"%s\",\"state\":\"%s\",\"locked\":%s,\"crossed\":%s,\"gap\":%s,"
	    "\"halted\":%s,\"nbbo\":{", ticker, wb_state_name(nb.state),
	    nb.flags & WB_SYMF_LOCKED ? "true" : "false", nb.flags & WB_SYMF_CROSSED ? "true" : "false",
	    d->flags & WB_SYMF_GAP ? "true" : "false", nb.flags & WB_SYMF_HALTED ? "true" : "false");
	put_side(&j, "bid", nb.bid_price, nb.bid_qty, nb.bid_venues);
	put(&j, ",");
	put_side(&j, "ask", nb.ask_price, nb.ask_qty, nb.ask_venues);
	put(&j, "},\"bids\":");
	put_levels(&j, d->bid, d->bid_count);
	put(&j, ",\"asks\":");
	put_levels(&j, d->ask, d->ask_count);
	put(&j, "}");
	free(d);
	return j.overflow ? -1 : (int)j.len;
}

#ifdef WB_NATS
struct sym_state {
	uint64_t updates;	/* the update counter last looked at */
	uint64_t hash;		/* of the JSON last published; 0: none */
};

struct nats_books {
	char shm_name[128];
	char prefix[128];	/* wirebook.INSTANCE.book */
	unsigned levels;
	uint64_t interval_ns, next_ns;
	struct wb_book *book;
	struct sym_state *sym;
	uint32_t n_sym;
	char json[NATS_BOOKS_JSON_MAX];
	struct nats_books_counters ctr;
};

struct nats_books *nats_books_create(const char *shm_name, const char *instance,
				     unsigned levels, unsigned interval_ms, char *err,
				     size_t errlen)
{
	struct nats_books *b = calloc(1, sizeof(*b));
	char inst[64];

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!levels || levels > NATS_BOOKS_MAX_LEVELS) {
		snprintf(err, errlen, "--publish-books %u: 1 to %u levels", levels,
			 NATS_BOOKS_MAX_LEVELS);
		free(b);
		return NULL;
	}
	snprintf(b->shm_name, sizeof(b->shm_name), "%s", shm_name);
	nats_subject_token(inst, sizeof(inst), instance);
	snprintf(b->prefix, sizeof(b->prefix), "wirebook.%s.book", inst);
	b->levels = levels;
	b->interval_ns = (uint64_t)interval_ms * 1000000ull;
	return b;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (uint8_t)*p++) * 0x100000001b3ull;
	return h | 1;	/* never 0: "none published" */
}

void nats_books_tick(struct nats_books *b, natsConnection *nc, uint64_t now_ns, int force)
{
	int count, sym, err;

	if (!force && now_ns < b->next_ns)
		return;
	b->next_ns = now_ns + b->interval_ns;
	if (!b->book) {
		b->book = wb_open(b->shm_name, &err);
		if (!b->book)
			return;	/* not there yet: the next tick */
	}
	count = wb_symbol_count(b->book);
	if (count > 0 && (uint32_t)count > b->n_sym) {
		struct sym_state *s = realloc(b->sym, (size_t)count * sizeof(*s));

		if (!s)
			return;
		memset(s + b->n_sym, 0, ((size_t)count - b->n_sym) * sizeof(*s));
		b->sym = s;
		b->n_sym = (uint32_t)count;
	}
	for (sym = 1; sym < count; sym++) {
		struct sym_state *s = &b->sym[sym];
		char subject[192], token[32], ticker[9];
		uint64_t updates, h;
		int len;

		if (wb_update_counter(b->book, sym, &updates) != 0 || updates == s->updates)
			continue;
		len = nats_books_json(b->book, sym, b->levels, b->json, sizeof(b->json));
		if (len < 0 || wb_symbol(b->book, sym, ticker) != 0)
			continue;
		s->updates = updates;
		h = fnv1a(b->json, (size_t)len);
		if (h == s->hash)	/* the counter moved for what is not published (a trade) */
			continue;
		nats_subject_token(token, sizeof(token), ticker);
		snprintf(subject, sizeof(subject), "%s.%s", b->prefix, token);
		if (natsConnection_Publish(nc, subject, b->json, len) != NATS_OK) {
			/* said again next tick: the counter is not taken as seen */
			s->updates = 0;
			wb_store_relaxed(&b->ctr.failed, b->ctr.failed + 1);
			continue;
		}
		s->hash = h;
		wb_store_relaxed(&b->ctr.messages, b->ctr.messages + 1);
		wb_store_relaxed(&b->ctr.bytes, b->ctr.bytes + (uint64_t)len);
	}
}

void nats_books_counters(const struct nats_books *b, struct nats_books_counters *out)
{
	out->messages = wb_load_relaxed(&b->ctr.messages);
	out->bytes = wb_load_relaxed(&b->ctr.bytes);
	out->failed = wb_load_relaxed(&b->ctr.failed);
}

uint64_t nats_books_next_ns(const struct nats_books *b)
{
	return b->next_ns;
}

void nats_books_destroy(struct nats_books *b)
{
	if (!b)
		return;
	if (b->book)
		wb_close(b->book);
	free(b->sym);
	free(b);
}
#endif
