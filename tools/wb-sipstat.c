/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-sipstat: the SIP NBBO against the direct feeds' NBBO, as wirebookd
 * measures it (see "The SIP view" in wirebook/book.h): disagreements, the
 * SIP's delay per venue, quotes it never showed, locked and crossed
 * episodes. Reads a live book through libwirebook, or builds one from a
 * capture by running wirebookd on it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/options.h"
#include "common/version.h"
#include "wirebook/book.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: wb-sipstat [options]\n"
"       wb-sipstat --pcap FILE [--feeds FILE] [options]\n"
"Print how the SIP's NBBO (CQS, UQDF) compares with the NBBO wirebook builds\n"
"from the direct feeds: per venue the SIP's delay (p50, p99, max) and the direct\n"
"quotes it never showed; how often and how long the two NBBOs disagreed and\n"
"which was ahead; locked and crossed episodes of both, with their venues.\n"
"  --shm NAME        read the live book NAME (default %s)\n"
"  --pcap FILE       build the book from a capture first: runs wirebookd on it\n"
"                    (--feeds FILE passed on; default feeds.conf) under a private\n"
"                    book name, reads the result, stops it\n"
"  --feeds FILE      the feed map for --pcap\n"
"  --wirebookd PATH  the wirebookd to run (default: the one beside wb-sipstat)\n"
"  --wait-done SECS  wait up to SECS for the book and the end of its file source\n"
"                    (default 0 live, 120 with --pcap)\n"
"  --episodes N      list the N newest episodes of each kind (default 10; all\n"
"                    the rings hold with --json)\n"
"  --symbols N       the N symbols that disagreed longest (default 5)\n"
"  --json            one JSON object instead of text\n"
"  --help\n"
"  --version\n"
"Times are on the receive clock in microseconds; episode start times are also\n"
"given as exchange (or SIP) time, ns since the epoch.\n"
"Exit status: 0, 1 when the book cannot be opened or built, 2 bad usage.\n",
		WB_SHM_DEFAULT_NAME);
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static double px(int64_t p)
{
	return (double)p / (double)WB_PRICE_SCALE;
}

static const char *venues(uint32_t mask, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int v = 1; v < WB_BOOK_VENUES; v++)
		if (mask & (1u << v))
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
						 used ? "," : "", wb_venue_name(v));
	return buf;
}

/* Who began and who ended a disagreement (wirebook/book.h). */
static const char *ahead_name(uint8_t flags)
{
	return flags & WB_EPF_DIRECT_AHEAD ? "direct-ahead" : flags & WB_EPF_SIP_AHEAD ? "sip-ahead" :
	       flags & WB_EPF_DIRECT_ONLY ? "direct-only" : "sip-only";
}

static const char *kind_name(int kind)
{
	switch (kind) {
	case WB_EPI_DIRECT_LOCK: return "direct";
	case WB_EPI_SIP_LOCK: return "sip";
	default: return "disagree";
	}
}

/* ---- running wirebookd on a capture -------------------------------------------- */

static pid_t g_child;

static void stop_child(void)
{
	int st;

	if (g_child > 0) {
		kill(g_child, SIGTERM);
		waitpid(g_child, &st, 0);
		g_child = 0;
	}
}

static void on_signal(int sig)
{
	if (g_child > 0)
		kill(g_child, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int default_wirebookd(char *out, size_t n)
{
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (len <= 0)
		return -1;
	self[len] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(out, n, "%s/wirebookd", self) >= n)
		return -1;
	return access(out, X_OK);
}

static int run_wirebookd(const char *bin, const char *pcap, const char *feeds, const char *shm)
{
	const char *argv[12];
	int i = 0;

	argv[i++] = bin;
	argv[i++] = "--pcap";
	argv[i++] = pcap;
	argv[i++] = "--shm";
	argv[i++] = shm;
	argv[i++] = "--no-pin";
	argv[i++] = "--subscribe";
	argv[i++] = "*";
	if (feeds) {
		argv[i++] = "--feeds";
		argv[i++] = feeds;
	}
	argv[i] = NULL;
	g_child = fork();
	if (g_child < 0)
		return -1;
	if (g_child == 0) {
		/* its own stats go to stderr; keep our stdout for the report */
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execv(bin, (char *const *)argv);
		fprintf(stderr, "wb-sipstat: %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	atexit(stop_child);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	return 0;
}

/* ---- the report -------------------------------------------------------------------- */

struct sym_row {
	int sym;
	struct wb_sip_compare cmp;
	struct wb_sip_lockcross lc[2];
};

static int by_disagree_ns(const void *a, const void *b)
{
	const struct sym_row *x = a, *y = b;

	return x->cmp.disagree_ns < y->cmp.disagree_ns ? 1 : x->cmp.disagree_ns > y->cmp.disagree_ns ? -1 : 0;
}

static void json_delay(const char *name, const struct wb_sip_delay *d)
{
	printf("\"%s\":{\"count\":%" PRIu64 ",\"p50_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f,"
	       "\"min_us\":%.3f,\"mean_us\":%.3f}",
	       name, d->count, us(wb_delay_quantile(d, 500000)), us(wb_delay_quantile(d, 990000)),
	       us(d->max_ns), us(d->min_ns), d->count ? us(d->sum_ns) / (double)d->count : 0.0);
}

static void json_compare(const struct wb_sip_compare *c)
{
	printf("{\"compared\":%" PRIu64 ",\"uncovered\":%" PRIu64 ",\"episodes\":%" PRIu64
	       ",\"disagree_us\":%.3f,\"mean_us\":%.3f,\"max_us\":%.3f,\"direct_ahead\":%" PRIu64
	       ",\"direct_ahead_us\":%.3f,\"sip_ahead\":%" PRIu64 ",\"sip_ahead_us\":%.3f,"
	       "\"direct_only\":%" PRIu64 ",\"direct_only_us\":%.3f,\"sip_only\":%" PRIu64
	       ",\"sip_only_us\":%.3f,\"mean_price_diff\":%.8f,\"max_price_diff\":%.8f}",
	       c->compared, c->uncovered, c->episodes, us(c->disagree_ns),
	       c->episodes ? us(c->disagree_ns) / (double)c->episodes : 0.0, us(c->max_ns),
	       c->direct_ahead, us(c->direct_ahead_ns), c->sip_ahead, us(c->sip_ahead_ns),
	       c->direct_only, us(c->direct_only_ns), c->sip_only, us(c->sip_only_ns),
	       c->episodes ? px((int64_t)(c->price_diff_sum / c->episodes)) : 0.0, px(c->max_price_diff));
}

static void json_lockcross(const struct wb_sip_lockcross *l)
{
	printf("{\"episodes\":%" PRIu64 ",\"crossed\":%" PRIu64 ",\"total_us\":%.3f,\"max_us\":%.3f}",
	       l->episodes, l->crossed, us(l->total_ns), us(l->max_ns));
}

static void json_episode(const struct wb_book *bk, const struct wb_sip_episode *e)
{
	char tk[9] = "", bv[128], av[128];

	if (wb_symbol(bk, e->instrument, tk))
		snprintf(tk, sizeof(tk), "#%u", e->instrument);
	printf("{\"kind\":\"%s\",\"symbol\":\"%s\",\"start_recv_ns\":%" PRIu64
	       ",\"start_exch_ns\":%" PRIu64 ",\"end_recv_ns\":%" PRIu64 ",\"end_exch_ns\":%" PRIu64
	       ",\"duration_us\":%.3f,\"bid\":%.8f,\"ask\":%.8f",
	       kind_name(e->kind), tk, e->start_recv_ts, e->start_exch_ts, e->end_recv_ts,
	       e->end_exch_ts, us(e->end_recv_ts - e->start_recv_ts), px(e->bid_price),
	       px(e->ask_price));
	if (e->kind == WB_EPI_DISAGREE)
		printf(",\"ahead\":\"%s\",\"price_diff\":%.8f}", ahead_name(e->flags), px(e->price_diff));
	else
		printf(",\"crossed\":%s,\"bid_venues\":\"%s\",\"ask_venues\":\"%s\"}",
		       e->flags & WB_EPF_CROSSED ? "true" : "false", venues(e->bid_venues, bv, sizeof(bv)),
		       venues(e->ask_venues, av, sizeof(av)));
}

static void text_episode(const struct wb_book *bk, const struct wb_sip_episode *e)
{
	char tk[9] = "", bv[128], av[128];

	if (wb_symbol(bk, e->instrument, tk))
		snprintf(tk, sizeof(tk), "#%u", e->instrument);
	printf("  %-8s %-8s start %" PRIu64 " (exch %" PRIu64 ")  %10.1f us  bid %.4f ask %.4f", kind_name(e->kind),
	       tk, e->start_recv_ts, e->start_exch_ts, us(e->end_recv_ts - e->start_recv_ts),
	       px(e->bid_price), px(e->ask_price));
	if (e->kind == WB_EPI_DISAGREE)
		printf("  %s, by %.4f\n", ahead_name(e->flags), px(e->price_diff));
	else
		printf("  %s  bids %s  asks %s\n", e->flags & WB_EPF_CROSSED ? "crossed" : "locked",
		       venues(e->bid_venues, bv, sizeof(bv)), venues(e->ask_venues, av, sizeof(av)));
}

/* Episodes n in [from, to) of a ring, those of the kind asked (0: all). */
static void episodes(const struct wb_book *bk, int ring, int kind, uint64_t from, uint64_t to, int json,
		     int *first)
{
	struct wb_sip_episode e;

	for (uint64_t n = from; n < to; n++) {
		if (wb_sip_episode(bk, ring, n, &e) || (kind && e.kind != kind))
			continue;
		if (json) {
			printf("%s", *first ? "" : ",");
			json_episode(bk, &e);
		} else {
			text_episode(bk, &e);
		}
		*first = 0;
	}
}

static uint64_t ring_from(uint64_t written, uint64_t want)
{
	uint64_t from = written > WB_SIP_EPISODES ? written - WB_SIP_EPISODES : 0;

	return want && written - from > want ? written - want : from;
}

static int report(struct wb_book *bk, int json, unsigned n_episodes, unsigned n_symbols)
{
	struct wb_sip_summary s;
	static struct wb_sip_venue_stats vs[WB_BOOK_VENUES];
	struct sym_row *rows;
	int nrows = 0, total = wb_symbol_count(bk), rc, first, stale_now = 0;

	if ((rc = wb_sip_summary(bk, &s)))
		return rc;
	for (int v = 1; v < WB_BOOK_VENUES; v++)
		if ((rc = wb_sip_venue_stats(bk, v, &vs[v])))
			return rc;
	rows = calloc((size_t)(total > 0 ? total : 1), sizeof(*rows));
	if (!rows)
		return WB_ESYS;
	for (int i = 1; i < total; i++) {
		struct wb_sip_view v;

		if (wb_sip_view(bk, i, &v))
			continue;
		stale_now += !!(v.flags & WB_SIPF_STALE);
		rows[nrows].sym = i;
		rows[nrows].cmp = v.cmp;
		memcpy(rows[nrows].lc, v.lc, sizeof(v.lc));
		nrows++;
	}
	qsort(rows, (size_t)nrows, sizeof(*rows), by_disagree_ns);

	if (json) {
		printf("{\"sip_events\":%" PRIu64 ",\"symbols\":%" PRIu64 ",\"cqs_gaps\":%" PRIu64
		       ",\"stale_marked\":%" PRIu64 ",\"stale_now\":%d,\"nbbo\":", s.sip_events, s.symbols,
		       s.total.sip_gaps, s.total.stale_marked, stale_now);
		json_compare(&s.total);
		printf(",\"locked_crossed\":{\"direct\":");
		json_lockcross(&s.lc[WB_VIEW_DIRECT]);
		printf(",\"sip\":");
		json_lockcross(&s.lc[WB_VIEW_SIP]);
		printf("},\"mwcb\":{\"state\":\"%s\",\"reason\":\"%.4s\",\"sip_ns\":%" PRIu64 "}",
		       s.mwcb.sip_ts ? wb_state_name(s.mwcb.state) : "none", s.mwcb.reason, s.mwcb.sip_ts);
		printf(",\"venues\":{");
		first = 1;
		for (int v = 1; v < WB_BOOK_VENUES; v++) {
			const struct wb_sip_venue_stats *x = &vs[v];

			if (!x->sip_quotes && !x->direct_changes)
				continue;
			printf("%s\"%s\":{\"sip_quotes\":%" PRIu64 ",\"compared\":%" PRIu64 ",\"matched\":%" PRIu64
			       ",\"size_differs\":%" PRIu64 ",\"unmatched\":%" PRIu64 ",\"sip_first\":%" PRIu64
			       ",\"never_shown\":%" PRIu64 ",\"direct_changes\":%" PRIu64 ",",
			       first ? "" : ",", wb_venue_name(v), x->sip_quotes, x->compared, x->matched,
			       x->size_differs, x->unmatched, x->sip_first, x->never_shown, x->direct_changes);
			json_delay("delay", &x->delay);
			printf(",");
			json_delay("sip_latency", &x->sip_latency);
			printf("}");
			first = 0;
		}
		printf("},\"symbols_by_disagreement\":[");
		for (int i = 0; i < nrows && i < (int)n_symbols; i++) {
			char tk[9] = "";

			wb_symbol(bk, rows[i].sym, tk);
			printf("%s{\"symbol\":\"%s\",\"nbbo\":", i ? "," : "", tk);
			json_compare(&rows[i].cmp);
			printf(",\"locked_crossed\":{\"direct\":");
			json_lockcross(&rows[i].lc[WB_VIEW_DIRECT]);
			printf(",\"sip\":");
			json_lockcross(&rows[i].lc[WB_VIEW_SIP]);
			printf("}}");
		}
		printf("],\"lock_episodes_ended\":%" PRIu64 ",\"lock_episodes\":[", s.lock_written);
		first = 1;
		episodes(bk, WB_EPI_DIRECT_LOCK, 0, ring_from(s.lock_written, n_episodes), s.lock_written, 1,
			 &first);
		printf("],\"disagree_episodes_ended\":%" PRIu64 ",\"disagree_episodes\":[", s.disagree_written);
		first = 1;
		episodes(bk, WB_EPI_DISAGREE, 0, ring_from(s.disagree_written, n_episodes),
			 s.disagree_written, 1, &first);
		printf("]}\n");
		free(rows);
		return 0;
	}

	printf("SIP events %" PRIu64 ", symbols with a SIP view %" PRIu64 "\n", s.sip_events, s.symbols);
	if (s.total.sip_gaps)
		printf("CQS gaps %" PRIu64 " (no retransmission): symbols marked stale %" PRIu64
		       ", stale now %d (until their next quote)\n", s.total.sip_gaps, s.total.stale_marked,
		       stale_now);
	if (s.mwcb.sip_ts)
		printf("market-wide (MWCB): %s %.4s\n", wb_state_name(s.mwcb.state), s.mwcb.reason);
	printf("\nNBBO, direct vs SIP: compared %" PRIu64 " changes (%" PRIu64 " SIP NBBOs at venues "
	       "without a direct feed not compared)\n", s.total.compared, s.total.uncovered);
	printf("  disagreed %" PRIu64 " times, %.1f us in all, mean %.1f us, longest %.1f us\n",
	       s.total.episodes, us(s.total.disagree_ns),
	       s.total.episodes ? us(s.total.disagree_ns) / (double)s.total.episodes : 0.0, us(s.total.max_ns));
	printf("  direct ahead %" PRIu64 " times (%.1f us), SIP ahead %" PRIu64 " times (%.1f us);\n"
	       "  shown by the direct feeds only %" PRIu64 " times (%.1f us), by the SIP only %" PRIu64
	       " times (%.1f us);\n  price difference mean %.4f, max %.4f\n",
	       s.total.direct_ahead, us(s.total.direct_ahead_ns), s.total.sip_ahead, us(s.total.sip_ahead_ns),
	       s.total.direct_only, us(s.total.direct_only_ns), s.total.sip_only, us(s.total.sip_only_ns),
	       s.total.episodes ? px((int64_t)(s.total.price_diff_sum / s.total.episodes)) : 0.0,
	       px(s.total.max_price_diff));
	printf("\nper venue: direct BBO vs its quote through the SIP (delay = SIP receive - direct receive)\n");
	printf("  %-9s %10s %10s %9s %9s %9s %9s %11s %11s %11s %11s\n", "venue", "sip quotes", "matched",
	       "size-diff", "unmatched", "never", "sip-first", "p50 us", "p99 us", "max us", "sip-lat p50");
	for (int v = 1; v < WB_BOOK_VENUES; v++) {
		const struct wb_sip_venue_stats *x = &vs[v];

		if (!x->sip_quotes && !x->direct_changes)
			continue;
		printf("  %-9s %10" PRIu64 " %10" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		       " %11.1f %11.1f %11.1f %11.1f\n",
		       wb_venue_name(v), x->sip_quotes, x->matched, x->size_differs, x->unmatched,
		       x->never_shown, x->sip_first, us(wb_delay_quantile(&x->delay, 500000)),
		       us(wb_delay_quantile(&x->delay, 990000)), us(x->delay.max_ns),
		       us(wb_delay_quantile(&x->sip_latency, 500000)));
	}
	printf("\nlocked/crossed: direct %" PRIu64 " episodes (%" PRIu64 " crossed, %.1f us), "
	       "SIP %" PRIu64 " episodes (%" PRIu64 " crossed, %.1f us)\n",
	       s.lc[WB_VIEW_DIRECT].episodes, s.lc[WB_VIEW_DIRECT].crossed, us(s.lc[WB_VIEW_DIRECT].total_ns),
	       s.lc[WB_VIEW_SIP].episodes, s.lc[WB_VIEW_SIP].crossed, us(s.lc[WB_VIEW_SIP].total_ns));
	first = 1;
	episodes(bk, WB_EPI_DIRECT_LOCK, 0, ring_from(s.lock_written, n_episodes), s.lock_written, 0, &first);
	if (nrows) {
		printf("\nsymbols that disagreed longest\n");
		for (int i = 0; i < nrows && i < (int)n_symbols; i++) {
			char tk[9] = "";
			const struct wb_sip_compare *c = &rows[i].cmp;

			wb_symbol(bk, rows[i].sym, tk);
			printf("  %-8s %8" PRIu64 " times %12.1f us  direct ahead %" PRIu64 ", SIP ahead %" PRIu64
			       ", direct only %" PRIu64 "; locked/crossed direct %" PRIu64 ", SIP %" PRIu64 "\n",
			       tk, c->episodes, us(c->disagree_ns), c->direct_ahead, c->sip_ahead, c->direct_only,
			       rows[i].lc[WB_VIEW_DIRECT].episodes, rows[i].lc[WB_VIEW_SIP].episodes);
		}
	}
	if (n_episodes && s.disagree_written) {
		printf("\nnewest disagreements\n");
		first = 1;
		episodes(bk, WB_EPI_DISAGREE, 0, ring_from(s.disagree_written, n_episodes),
			 s.disagree_written, 0, &first);
	}
	free(rows);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shm", required_argument, 0, 's' },	    { "pcap", required_argument, 0, 'p' },
		{ "feeds", required_argument, 0, 'f' },	    { "wirebookd", required_argument, 0, 'W' },
		{ "wait-done", required_argument, 0, 'w' }, { "episodes", required_argument, 0, 'e' },
		{ "symbols", required_argument, 0, 'y' },   { "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },	    { 0, 0, 0, 0 },
	};
	const char *name = NULL, *pcap = NULL, *feeds = NULL, *bin = NULL;
	char shm[64], binbuf[PATH_MAX];
	int json = 0, c, err = 0, n_episodes = -1, n_symbols = 5, rc;
	double wait_done = -1;
	struct wb_book *bk;

	if (tool_version_option(argc, argv, "wb-sipstat"))
		return 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': name = optarg; break;
		case 'p': pcap = optarg; break;
		case 'f': feeds = optarg; break;
		case 'W': bin = optarg; break;
		case 'w':
			if (opt_double("wb-sipstat", "--wait-done", optarg, 0, 0, 86400, &wait_done))
				return 2;
			break;
		case 'e':
			if (opt_int("wb-sipstat", "--episodes", optarg, 0, WB_SIP_EPISODES, &n_episodes))
				return 2;
			break;
		case 'y':
			if (opt_int("wb-sipstat", "--symbols", optarg, 0, 1000000, &n_symbols))
				return 2;
			break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "wb-sipstat: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (n_episodes < 0)
		n_episodes = json ? 0 : 10;	/* 0 with --json: all the rings hold */
	if (pcap) {
		if (name) {
			fprintf(stderr, "wb-sipstat: --pcap builds its own book: no --shm with it\n");
			return 2;
		}
		if (access(pcap, R_OK)) {
			fprintf(stderr, "wb-sipstat: %s: %s\n", pcap, strerror(errno));
			return 1;
		}
		if (!bin) {
			if (default_wirebookd(binbuf, sizeof(binbuf))) {
				fprintf(stderr, "wb-sipstat: no wirebookd beside wb-sipstat: give --wirebookd PATH\n");
				return 1;
			}
			bin = binbuf;
		}
		snprintf(shm, sizeof(shm), "wb-sipstat-%d", (int)getpid());
		name = shm;
		if (wait_done < 0)
			wait_done = 120;
		if (run_wirebookd(bin, pcap, feeds, shm)) {
			fprintf(stderr, "wb-sipstat: cannot start %s: %s\n", bin, strerror(errno));
			return 1;
		}
	}
	if (wait_done < 0)
		wait_done = 0;
	for (int i = 0; !(bk = wb_open(name, &err)) && err == WB_ENOSHM && i < wait_done * 100; i++) {
		if (g_child > 0 && waitpid(g_child, &rc, WNOHANG) == g_child) {
			g_child = 0;
			fprintf(stderr, "wb-sipstat: wirebookd exited before its book was up\n");
			return 1;
		}
		usleep(10000);
	}
	if (!bk) {
		fprintf(stderr, "wb-sipstat: %s: %s\n", name ? name : WB_SHM_DEFAULT_NAME, wb_strerror(err));
		return 1;
	}
	for (int i = 0; wait_done > 0 && wb_state(bk) == WB_SHM_LIVE && i < wait_done * 100; i++)
		usleep(10000);
	if (pcap && wb_state(bk) == WB_SHM_LIVE) {
		fprintf(stderr, "wb-sipstat: %s: wirebookd did not finish the capture in %.0f s\n", pcap,
			wait_done);
		wb_close(bk);
		return 1;
	}
	rc = report(bk, json, (unsigned)n_episodes, (unsigned)n_symbols);
	wb_close(bk);
	stop_child();
	if (rc) {
		fprintf(stderr, "wb-sipstat: %s\n", wb_strerror(rc));
		return 1;
	}
	return 0;
}
