/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-book: a terminal view of the Super-Book wirebookd publishes: NBBO,
 * per-venue BBO, consolidated depth with the per-venue breakdown, last
 * trade and trading status, per symbol; with --sip the SIP's view beside
 * it (participants' quotes, SIP NBBO, LULD, status, SIP vs direct). Reads
 * through libwirebook only.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/options.h"
#include "common/version.h"
#include "wirebook/book.h"

#define STALE_NS 5000000000ull	/* a venue's feed this far behind the newest is flagged */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: wb-book [options] [SYMBOL...]\n"
"Show the Super-Book of each SYMBOL (default: the most active symbols).\n"
"  --shm NAME        book name (default %s)\n"
"  --once            print once and exit (default: refresh until Ctrl-C)\n"
"  --interval MS     refresh period (1-3600000, default 250)\n"
"  --depth N         consolidated levels to show (1-%d, default %d)\n"
"  --top N           without SYMBOLs: how many of the most active to show (1-64, default 5)\n"
"  --sip             show the SIP view beside each Super-Book: every participant's\n"
"                    quote through CQS/UQDF, the SIP's NBBO, LULD band and status,\n"
"                    and how the SIP's NBBO compares with the Super-Book's\n"
"  --wait-done SECS  first wait (up to SECS, 0-86400) for the book to appear and for\n"
"                    wirebookd to say its file source ended\n"
"  --help\n"
"  --version\n"
"The first line says whether the book is live, stale (no heartbeat from wirebookd:\n"
"it died or hangs), retired (stopped) or recovering (a venue rebuilt after a gap);\n"
"with --once only when it is not live.\n"
"A wirebookd restart is followed without leaving wb-book.\n"
"Exit status: 0, 1 when the book cannot be opened, 2 bad usage, 3 when a symbol\n"
"is unknown.\n",
		WB_SHM_DEFAULT_NAME, WB_BOOK_DEPTH, WB_BOOK_DEPTH);
}

/* 1e-8 fixed point as dollars, 4 decimals unless finer digits are set. */
static const char *px(int64_t p, char *buf, size_t n)
{
	uint64_t a = p < 0 ? (uint64_t)-p : (uint64_t)p;
	uint64_t whole = a / WB_PRICE_SCALE, frac = a % WB_PRICE_SCALE;

	if (frac % 10000 == 0)
		snprintf(buf, n, "%s%" PRIu64 ".%04" PRIu64, p < 0 ? "-" : "", whole, frac / 10000);
	else
		snprintf(buf, n, "%s%" PRIu64 ".%08" PRIu64, p < 0 ? "-" : "", whole, frac);
	return buf;
}

static const char *venues_text(uint16_t mask, char *buf, size_t n)
{
	size_t used = 0;
	int v;

	buf[0] = 0;
	for (v = 1; v < WB_BOOK_VENUES; v++)
		if (mask & (1u << v))
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
						 used ? "," : "", wb_venue_name(v));
	return buf;
}

static int show_symbol(const struct wb_book *bk, int sym, unsigned depth)
{
	struct wb_nbbo nb;
	struct wb_depth d;
	struct wb_trade t;
	struct wb_status st;
	char tk[9], a[32], b[32], vm[64], vm2[64];
	unsigned i;
	int v, rc;

	if ((rc = wb_symbol(bk, sym, tk)) || (rc = wb_nbbo(bk, sym, &nb)) ||
	    (rc = wb_depth(bk, sym, WB_CONSOLIDATED, depth, &d)) || (rc = wb_last_trade(bk, sym, &t)) ||
	    (rc = wb_status(bk, sym, &st)))
		return rc;
	printf("== %s (#%d)  status %s", tk, sym, wb_state_name(st.state));
	if (st.raw_state)
		printf(" ('%c' from %s)", st.raw_state, wb_venue_name(st.venue));
	printf("  updates %" PRIu64 "%s%s%s%s", nb.updates,
	       nb.flags & WB_SYMF_LOCKED ? "  LOCKED" : "", nb.flags & WB_SYMF_CROSSED ? "  CROSSED" : "",
	       nb.flags & WB_SYMF_GAP ? "  GAP(book may be incomplete)" : "",
	       nb.flags & WB_SYMF_HALTED ? "  HALTED" : "");
	/* Its own streams' recovery: the venues whose book of it is behind. */
	for (v = 1, i = 0; v < WB_VENUE_COUNT; v++)
		if (wb_symbol_recovering(bk, sym, v, NULL) == 1)
			printf("%s%s", i++ ? "," : "  RECOVERING on ", wb_venue_name(v));
	printf("%s\n", i ? " (behind until its gap is filled)" : "");
	printf("NBBO   bid %s x %" PRIu64 " [%s]   ask %s x %" PRIu64 " [%s]\n",
	       nb.bid_qty ? px(nb.bid_price, a, sizeof(a)) : "-", nb.bid_qty,
	       venues_text(nb.bid_venues, vm, sizeof(vm)),
	       nb.ask_qty ? px(nb.ask_price, b, sizeof(b)) : "-", nb.ask_qty,
	       venues_text(nb.ask_venues, vm2, sizeof(vm2)));
	/* A venue is stale when its feed is silent while another's moves:
	 * compared with the newest data of any venue, so replays work too. */
	uint64_t newest = 0, last[WB_BOOK_VENUES] = { 0 };

	for (v = 1; v < WB_BOOK_VENUES; v++) {
		struct wb_venue_status vs;

		if (wb_venue_status(bk, v, &vs) == 0) {
			last[v] = vs.last_recv_ns;
			newest = vs.last_recv_ns > newest ? vs.last_recv_ns : newest;
		}
	}
	for (v = 1; v < WB_BOOK_VENUES; v++) {
		struct wb_venue_bbo vb;
		char stale[48] = "";

		if (wb_venue_bbo(bk, sym, v, &vb) || !(vb.flags & WB_VENF_PRESENT))
			continue;
		if (last[v] && newest - last[v] > STALE_NS)
			snprintf(stale, sizeof(stale), "  STALE (feed %.1fs behind)",
				 (double)(newest - last[v]) / 1e9);
		printf("  %-7s bid %12s x %-8" PRIu64 " (%u)  ask %12s x %-8" PRIu64 " (%u)%s%s%s\n",
		       wb_venue_name(v), vb.bid_qty ? px(vb.bid_price, a, sizeof(a)) : "-", vb.bid_qty,
		       vb.bid_orders, vb.ask_qty ? px(vb.ask_price, b, sizeof(b)) : "-", vb.ask_qty,
		       vb.ask_orders, vb.flags & WB_VENF_GAP ? "  gap" : "",
		       vb.flags & WB_VENF_CROSSED ? "  crossed" : "", stale);
	}
	printf("  %3s %9s %12s | %-12s %-9s  %-30s %s\n", "lvl", "bid qty", "bid", "ask", "ask qty",
	       "bid venues", "ask venues");
	for (i = 0; i < depth && (i < d.bid_count || i < d.ask_count); i++) {
		int hb = i < d.bid_count, ha = i < d.ask_count;
		char bq[24] = "", aq[24] = "";

		if (hb)
			snprintf(bq, sizeof(bq), "%" PRIu64, d.bid[i].qty);
		if (ha)
			snprintf(aq, sizeof(aq), "%" PRIu64, d.ask[i].qty);
		printf("  %3u %9s %12s | %-12s %-9s  %-30s %s\n", i + 1, bq,
		       hb ? px(d.bid[i].price, a, sizeof(a)) : "", ha ? px(d.ask[i].price, b, sizeof(b)) : "",
		       aq, hb ? venues_text(d.bid[i].venues, vm, sizeof(vm)) : "",
		       ha ? venues_text(d.ask[i].venues, vm2, sizeof(vm2)) : "");
	}
	if (t.count)
		printf("Last trade %s x %" PRIu64 " on %s; %u trades, volume %" PRIu64 "\n",
		       px(t.price, a, sizeof(a)), t.qty, wb_venue_name(t.venue), t.count, t.volume);
	else
		printf("Last trade: none\n");
	return 0;
}

static const char *sip_name(uint8_t feed)
{
	return feed == WB_VENUE_SIP_CQS ? "CQS" : feed == WB_VENUE_SIP_UQDF ? "UQDF" : "SIP";
}

/* The SIP's view of the symbol, and the line comparing it with the Super-Book. */
static int show_sip(const struct wb_book *bk, int sym)
{
	struct wb_sip_view v;
	const struct wb_sip_nbbo *n = &v.nbbo;
	char a[32], b[32];
	int rc = wb_sip_view(bk, sym, &v);

	if (rc == WB_ENOSYM) {
		printf("SIP    (no SIP traffic for the symbol)\n");
		return 0;
	}
	if (rc)
		return rc;
	printf("SIP    NBBO bid %s x %u [%s]   ask %s x %u [%s]   (%s, indicator '%c')%s%s%s%s\n",
	       n->bid_qty ? px(n->bid_price, a, sizeof(a)) : "-", n->bid_qty,
	       n->bid_venue ? wb_venue_name(n->bid_venue) : "-",
	       n->ask_qty ? px(n->ask_price, b, sizeof(b)) : "-", n->ask_qty,
	       n->ask_venue ? wb_venue_name(n->ask_venue) : "-", sip_name(n->feed),
	       n->indicator ? n->indicator : ' ', v.flags & WB_SIPF_LOCKED ? "  LOCKED" : "",
	       v.flags & WB_SIPF_CROSSED ? "  CROSSED" : "", v.flags & WB_SIPF_HALTED ? "  HALTED" : "",
	       v.flags & WB_SIPF_STALE ? "  STALE (a CQS gap: until its next quote)" : "");
	if (v.luld.sip_ts)
		printf("       LULD band %s - %s", v.luld.lower ? px(v.luld.lower, a, sizeof(a)) : "none",
		       v.luld.upper ? px(v.luld.upper, b, sizeof(b)) : "none");
	else
		printf("       LULD band none received");
	printf("   status %s", v.status.sip_ts ? wb_state_name(v.status.state) : "none received");
	if (v.status.sip_ts && v.status.reason[0] > ' ')
		printf(" (%.4s)", v.status.reason);
	printf("\n");
	for (int q = 1; q < WB_BOOK_VENUES; q++) {
		const struct wb_sip_quote *x = &v.quote[q];

		if (!(v.quotes_present & (1u << q)))
			continue;
		printf("  %-7s sip %12s x %-8u       %12s x %-8u     cond '%c'%s%s  sip-participant %.1f us\n",
		       wb_venue_name(q), x->bid_qty ? px(x->bid_price, a, sizeof(a)) : "-", x->bid_qty,
		       x->ask_qty ? px(x->ask_price, b, sizeof(b)) : "-", x->ask_qty,
		       x->condition > ' ' ? x->condition : ' ',
		       x->flags & WB_EVF_BID_INELIGIBLE ? "  bid-inelig" : "",
		       x->flags & WB_EVF_ASK_INELIGIBLE ? "  ask-inelig" : "",
		       x->sip_ts >= x->exch_ts ? (double)(x->sip_ts - x->exch_ts) / 1e3 : 0.0);
	}
	printf("SIP vs direct: %s; %" PRIu64 " disagreements (%.1f us in all, direct ahead %" PRIu64
	       ", SIP ahead %" PRIu64 ", direct only %" PRIu64 "); locked/crossed: direct %" PRIu64
	       ", SIP %" PRIu64 "\n",
	       !(v.flags & WB_SIPF_COVERED) ? "not comparable now (a venue at the SIP's NBBO has no direct feed)"
	       : v.flags & WB_SIPF_DISAGREE ? "DIFFER now" : "agree now",
	       v.cmp.episodes, (double)v.cmp.disagree_ns / 1e3, v.cmp.direct_ahead, v.cmp.sip_ahead,
	       v.cmp.direct_only,
	       v.lc[WB_VIEW_DIRECT].episodes, v.lc[WB_VIEW_SIP].episodes);
	return 0;
}

/* The book's liveness: one line, and a warning that cannot be missed when
 * the data is not current. */
static void print_health(struct wb_book *bk, const char *name)
{
	struct wb_health h;

	if (wb_health(bk, &h) < 0)
		return;
	printf("book %s: %s (heartbeat %.2fs ago, builder pid %u%s, restarts followed %u%s)\n",
	       name ? name : WB_SHM_DEFAULT_NAME, wb_health_name(h.state), (double)h.age_ns / 1e9,
	       h.writer_pid, h.writer_alive == 0 ? " gone" : "", h.reattaches,
	       h.shm_state == WB_SHM_SOURCE_DONE ? ", source ended" : "");
	if (h.state == WB_BOOK_STALE)
		printf("!! STALE: no heartbeat for %.1fs (wirebookd died or hangs): prices below are "
		       "frozen\n", (double)h.age_ns / 1e9);
	else if (h.state == WB_BOOK_RETIRED)
		printf("!! RETIRED: wirebookd stopped; prices below are final until it restarts\n");
	else if (h.state == WB_BOOK_RECOVERING)
		printf("!! RECOVERING: venues 0x%x are being rebuilt after a gap\n",
		       h.recovering_venues);
}

/* The n symbols with the most updates. */
static int most_active(const struct wb_book *bk, int *out, int n)
{
	uint64_t best[64];
	int count = 0, i, j, total = wb_symbol_count(bk);

	for (i = 1; i < total; i++) {
		uint64_t u;

		if (wb_update_counter(bk, i, &u) || u == 0)
			continue;
		for (j = count; j > 0 && best[j - 1] < u; j--)
			if (j < n) {
				best[j] = best[j - 1];
				out[j] = out[j - 1];
			}
		if (j < n) {
			best[j] = u;
			out[j] = i;
			if (count < n)
				count++;
		}
	}
	return count;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shm", required_argument, 0, 's' },	  { "once", no_argument, 0, 'o' },
		{ "interval", required_argument, 0, 'i' }, { "depth", required_argument, 0, 'd' },
		{ "top", required_argument, 0, 't' },	  { "wait-done", required_argument, 0, 'w' },
		{ "sip", no_argument, 0, 'S' },		  { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *name = NULL;
	int once = 0, interval_ms = 250, top = 5, c, err, i, nsyms = 0, syms[64], sip = 0;
	unsigned depth = WB_BOOK_DEPTH;
	double wait_done = 0;
	struct wb_book *bk;

	if (tool_version_option(argc, argv, "wb-book"))
		return 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': name = optarg; break;
		case 'o': once = 1; break;
		case 'S': sip = 1; break;
		case 'i':
			if (opt_int("wb-book", "--interval", optarg, 1, 3600000, &interval_ms))
				return 2;
			break;
		case 'd': {
			int dd;

			if (opt_int("wb-book", "--depth", optarg, 1, WB_BOOK_DEPTH, &dd))
				return 2;
			depth = (unsigned)dd;
			break;
		}
		case 't':
			if (opt_int("wb-book", "--top", optarg, 1, 64, &top))
				return 2;
			break;
		case 'w':
			if (opt_double("wb-book", "--wait-done", optarg, 0, 0, 86400, &wait_done))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (depth < 1 || depth > WB_BOOK_DEPTH || top < 1 || top > 64 || interval_ms < 1) {
		usage(stderr);
		return 2;
	}
	/* With --wait-done, also wait for wirebookd to publish the book. */
	for (i = 0; !(bk = wb_open(name, &err)) && err == WB_ENOSHM && i < wait_done * 100; i++)
		usleep(10000);
	if (!bk) {
		fprintf(stderr, "wb-book: %s: %s\n", name ? name : WB_SHM_DEFAULT_NAME, wb_strerror(err));
		return 1;
	}
	for (i = 0; wait_done > 0 && wb_state(bk) == WB_SHM_LIVE && i < wait_done * 100; i++)
		usleep(10000);
	for (i = optind; i < argc && nsyms < 64; i++) {
		int s = wb_find(bk, argv[i]);

		if (s < 0) {
			fprintf(stderr, "wb-book: %s: %s\n", argv[i], wb_strerror(s));
			wb_close(bk);
			return 3;
		}
		syms[nsyms++] = s;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!g_stop) {
		int n, health;

		/* Follows a restart by itself (the symbol indices stay). */
		health = wb_health(bk, NULL);
		n = nsyms ? nsyms : most_active(bk, syms, top);
		if (!once)
			printf("\033[H\033[J");
		/* --once prints what scripts compare: the health line only
		 * when the book is not live (then it matters more than diffs). */
		if (!once || health != WB_BOOK_LIVE)
			print_health(bk, name);
		for (i = 0; i < n; i++) {
			int rc = show_symbol(bk, syms[i], depth);
			char tk[9];

			if (!rc && sip)
				rc = show_sip(bk, syms[i]);
			if (rc == WB_ESTALE) {
				if (wb_symbol(bk, syms[i], tk))
					snprintf(tk, sizeof(tk), "#%d", syms[i]);
				printf("== %s: not in the book %s\n", tk,
				       health == WB_BOOK_RETIRED ? "(wirebookd stopped; waiting for it)" :
				       "yet (wirebookd restarted; waiting for its first data)");
			} else if (rc) {
				fprintf(stderr, "wb-book: symbol #%d: %s\n", syms[i], wb_strerror(rc));
			}
			printf("\n");
		}
		if (!n)
			printf("(no symbol has updates yet)\n");
		fflush(stdout);
		if (once)
			break;
		usleep((useconds_t)interval_ms * 1000);
	}
	wb_close(bk);
	return 0;
}
