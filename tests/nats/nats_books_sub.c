/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A light consumer of wirebookd --publish-books (tools/net/nats_books.h),
 * for tests/nats/nats.sh: it subscribes to wirebook.INSTANCE.book.>, keeps
 * the last message of each symbol until none came for --idle seconds,
 * then, with --compare SHM, reads each of those symbols from the book in
 * shared memory (libwirebook, as wb-book does) and says whether the last
 * message it got is that book.
 *
 *   nats_books_sub --url nats://HOST:PORT [--user U --password P]
 *                  --instance NAME [--idle SECONDS] [--compare SHM --levels N]
 *
 * It prints "subscribed" once it is (core NATS keeps nothing for a
 * subscriber that comes late), then "received M messages, S symbols",
 * "equal TICKER" or "DIFFERENT TICKER" with both, and "compared K, E equal".
 * Exit 0 when every symbol compared is equal (or there was no --compare
 * and some message came), 1 otherwise, 2 bad usage.
 */
#include <getopt.h>
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/nats_books.h"

#define MAX_SYMBOLS 16384

struct last {
	char subject[192];
	char *json;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The "symbol" of a message, into out. */
static int symbol_of(const char *json, char *out, size_t size)
{
	const char *p = strstr(json, "\"symbol\":\""), *e;

	if (!p)
		return -1;
	p += 10;
	e = strchr(p, '"');
	if (!e || (size_t)(e - p) >= size)
		return -1;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = 0;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, 0, 'u' },	{ "user", required_argument, 0, 'U' },
		{ "password", required_argument, 0, 'P' }, { "instance", required_argument, 0, 'i' },
		{ "idle", required_argument, 0, 'd' },	{ "compare", required_argument, 0, 'c' },
		{ "levels", required_argument, 0, 'l' }, { 0, 0, 0, 0 },
	};
	const char *url = NULL, *user = NULL, *password = NULL, *instance = NULL, *shm = NULL;
	double idle = 3, last_msg = 0, start;
	unsigned levels = 5;
	static struct last last[MAX_SYMBOLS];
	unsigned n_last = 0, i, compared = 0, equal = 0;
	uint64_t messages = 0;
	natsConnection *nc = NULL;
	natsSubscription *sub = NULL;
	natsOptions *o = NULL;
	char subject[192];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'u': url = optarg; break;
		case 'U': user = optarg; break;
		case 'P': password = optarg; break;
		case 'i': instance = optarg; break;
		case 'd': idle = atof(optarg); break;
		case 'c': shm = optarg; break;
		case 'l': levels = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (!url || !instance) {
		fprintf(stderr, "usage: nats_books_sub --url nats://HOST:PORT --instance NAME "
			"[--user U --password P] [--idle S] [--compare SHM --levels N]\n");
		return 2;
	}
	if (natsOptions_Create(&o) != NATS_OK || natsOptions_SetURL(o, url) != NATS_OK ||
	    (user && natsOptions_SetUserInfo(o, user, password) != NATS_OK) ||
	    natsConnection_Connect(&nc, o) != NATS_OK) {
		fprintf(stderr, "nats_books_sub: cannot connect to %s: %s\n", url,
			nats_GetLastError(NULL));
		return 1;
	}
	snprintf(subject, sizeof(subject), "wirebook.%s.book.>", instance);
	if (natsConnection_SubscribeSync(&sub, nc, subject) != NATS_OK ||
	    natsConnection_Flush(nc) != NATS_OK) {
		fprintf(stderr, "nats_books_sub: cannot subscribe to %s\n", subject);
		return 1;
	}
	natsSubscription_SetPendingLimits(sub, -1, -1);
	printf("subscribed %s\n", subject);
	fflush(stdout);
	start = now_s();
	while (now_s() - start < 300 && (!last_msg || now_s() - last_msg < idle)) {
		natsMsg *m = NULL;
		const char *subj;

		if (natsSubscription_NextMsg(&m, sub, 100) != NATS_OK)
			continue;
		messages++;
		last_msg = now_s();
		subj = natsMsg_GetSubject(m);
		for (i = 0; i < n_last && strcmp(last[i].subject, subj); i++)
			;
		if (i == n_last && n_last < MAX_SYMBOLS)
			snprintf(last[n_last++].subject, sizeof(last[0].subject), "%s", subj);
		if (i < n_last) {
			free(last[i].json);
			last[i].json = strndup(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
		}
		natsMsg_Destroy(m);
	}
	printf("received %llu messages, %u symbols\n", (unsigned long long)messages, n_last);
	if (shm) {
		int err;
		struct wb_book *book = wb_open(shm, &err);
		char json[NATS_BOOKS_JSON_MAX], ticker[16];

		if (!book) {
			printf("cannot open the book %s (%d)\n", shm, err);
			return 1;
		}
		for (i = 0; i < n_last; i++) {
			int sym;

			if (!last[i].json || symbol_of(last[i].json, ticker, sizeof(ticker)) < 0)
				continue;
			sym = wb_find(book, ticker);
			compared++;
			if (sym > 0 && nats_books_json(book, sym, levels, json, sizeof(json)) >= 0 &&
			    !strcmp(json, last[i].json)) {
				equal++;
				printf("equal %s\n", ticker);
			} else {
				printf("DIFFERENT %s\n  got  %s\n  book %s\n", ticker, last[i].json,
				       sym > 0 ? json : "(not in the book)");
			}
		}
		printf("compared %u, %u equal\n", compared, equal);
		if (n_last)
			printf("for example: %s\n", last[0].json);
		wb_close(book);
	}
	natsSubscription_Destroy(sub);
	natsConnection_Destroy(nc);
	natsOptions_Destroy(o);
	if (shm)
		return compared && compared == equal ? 0 : 1;
	return messages ? 0 : 1;
}
