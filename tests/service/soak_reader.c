/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * soak-reader: a strategy-like reader for the soak test. Attaches to the
 * book (waiting for it), watches the soak symbols' update counters and,
 * on each change, reads the NBBO and measures sender-to-reader latency:
 * now (CLOCK_REALTIME) minus the exchange time (ns since the epoch) of the
 * change, which soak-send stamps with its wall clock. It checks what a
 * reader may rely on: counters never go back within one builder run, reads
 * succeed or say why. A builder restart is followed inside the library.
 *
 *   soak-reader BOOK [SYMBOLS]      (SYMBOLS: how many of SK000.. to watch, default 10)
 *
 * On SIGTERM it prints key=value stats and a latency histogram (us
 * buckets) on stdout.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wirebook/book.h"

#define MAX_SYMS 64
#define BUCKETS 100000		/* 1 us each: up to 100 ms; beyond: the last */

static volatile sig_atomic_t g_stop;
static uint32_t hist[BUCKETS];

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/* Say a followed restart at once: a reader may be killed any moment. */
static uint32_t say_reattaches(const struct wb_health *h, uint32_t said)
{
	if (h->reattaches > said) {
		printf("followed_restart=%u\n", h->reattaches);
		fflush(stdout);
	}
	return h->reattaches > said ? h->reattaches : said;
}

int main(int argc, char **argv)
{
	struct wb_book *bk;
	int err, nsym = 10, sym[MAX_SYMS], i;
	uint64_t last[MAX_SYMS], samples = 0, changes = 0, polls = 0, regressions = 0;
	uint64_t errors = 0, stale = 0, instance = 0;
	struct sigaction sa;
	struct wb_health h = { 0 };
	uint32_t said = 0;

	if (argc < 2 || argc > 3 || !strcmp(argv[1], "--help")) {
		int help = argc >= 2 && !strcmp(argv[1], "--help");

		fprintf(help ? stdout : stderr, "usage: soak-reader BOOK [SYMBOLS (1-%d, 10)]\n"
			"Watch the soak symbols SK000.. and measure sender-to-reader latency; "
			"stats on SIGTERM.\n", MAX_SYMS);
		return help ? 0 : 2;
	}
	if (argc == 3)
		nsym = atoi(argv[2]);
	if (nsym < 1 || nsym > MAX_SYMS)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!(bk = wb_open(argv[1], &err)) && !g_stop)
		nap(10000000);
	if (!bk)
		return 1;
	for (i = 0; i < nsym; i++) {
		sym[i] = -1;
		last[i] = 0;
	}
	while (!g_stop) {
		if (polls++ % 1024 == 0) {
			wb_health(bk, &h);
			said = say_reattaches(&h, said);
			if (h.instance_id != instance) { /* a new run: counters start again */
				instance = h.instance_id;
				memset(last, 0, sizeof(last));
			}
		}
		for (i = 0; i < nsym; i++) {
			struct wb_nbbo nb;
			uint64_t u, now;

			if (sym[i] < 0) {
				char t[9];

				snprintf(t, sizeof(t), "SK%03d", i);
				sym[i] = wb_find(bk, t);
				if (sym[i] < 0) {
					sym[i] = -1;
					continue;
				}
			}
			err = wb_update_counter(bk, sym[i], &u);
			if (err == WB_ESTALE) {
				stale++;
				continue;
			}
			if (err) {
				errors++;
				continue;
			}
			if (u == last[i])
				continue;
			if (u < last[i]) {
				/* Within one run a counter never goes back; across a
				 * restart it starts again. */
				wb_health(bk, &h);
				said = say_reattaches(&h, said);
				if (h.instance_id != instance) {
					instance = h.instance_id;
					memset(last, 0, sizeof(last));
				} else {
					regressions++;
				}
			}
			last[i] = u;
			changes++;
			err = wb_nbbo(bk, sym[i], &nb);
			if (err) {
				err == WB_ESTALE ? stale++ : errors++;
				continue;
			}
			if (!nb.exch_ts)
				continue;
			now = wall_ns();
			if (now >= nb.exch_ts) {
				uint64_t us = (now - nb.exch_ts) / 1000;

				hist[us < BUCKETS ? us : BUCKETS - 1]++;
				samples++;
			}
		}
		nap(20000);
	}
	wb_health(bk, &h);
	printf("polls=%llu\nchanges=%llu\nsamples=%llu\nregressions=%llu\nerrors=%llu\nstale_reads=%llu\n"
	       "reattaches=%u\nhealth=%s\n", (unsigned long long)polls, (unsigned long long)changes,
	       (unsigned long long)samples, (unsigned long long)regressions,
	       (unsigned long long)errors, (unsigned long long)stale, h.reattaches,
	       wb_health_name(h.state));
	for (i = 0; i < BUCKETS; i++)
		if (hist[i])
			printf("hist %d %u\n", i, hist[i]);
	wb_close(bk);
	return 0;
}
