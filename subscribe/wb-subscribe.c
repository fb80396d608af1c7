/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-subscribe: add, remove and list subscribed symbols and feed-map
 * entries, and read statistics, of the kernel module (/dev/wirebook) or of
 * wirebookd's user-space capture (--daemon SOCKET). Same verbs, same
 * output, either way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/control.h"
#include "shm/orders_layout.h"	/* WB_ORD_REQUESTS, for the message that names the limit */
#include "common/options.h"
#include "common/feeds_conf.h"
#include "common/version.h"
#include "feed/feed.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: wb-subscribe [--device PATH | --daemon SOCKET] COMMAND [ARGS]\n"
"\n"
"Control what the wirebook producer decodes: the kernel module through\n"
"/dev/wirebook (default), or wirebookd's user-space capture through its\n"
"control socket (--daemon, wirebookd --control SOCKET).\n"
"\n"
"Symbols:\n"
"  add SYMBOL...             subscribe (e.g. add AAPL MSFT; '*' = every symbol)\n"
"  del SYMBOL...             unsubscribe\n"
"  list                      subscribed symbols and their instrument ids\n"
"Feed map (which multicast groups are which feed line):\n"
"  feeds add ADDR:PORT PROTOCOL VENUE LINE [channel=N]\n"
"                            e.g. feeds add 233.54.12.111:26477 itch nasdaq A\n"
"  feeds del ADDR:PORT\n"
"  feeds list\n"
"  feeds load FILE           add every entry of a feeds.conf\n"
"Trading day (of feeds that give time since midnight: ITCH, PITCH):\n"
"  date YYYY-MM-DD           replaying another day's capture: put its times on that day\n"
"  date clock                take the day from the receive clock again (the default)\n"
"Statistics:\n"
"  stats [--json]            per feed line: packets, messages, events, filtered,\n"
"                            gaps, duplicates, decode errors, ring drops, GSO\n"
"  stats reset               zero the per-line and hook counters\n"
"  recovery [--json]         per stream in gap recovery (wirebookd --recovery;\n"
"                            --daemon only): recovering now and since when (the\n"
"                            receive time, ns), gaps, filled, unrecoverable,\n"
"                            messages recovered and lost, snapshots, fill p50/p99/max\n"
"Order detail and queue positions (--daemon only, wirebookd --order-detail;\n"
"the builder applies each request between batches: the command waits until it\n"
"shows, at most --timeout):\n"
"  detail add SYMBOL...      publish the symbol's orders at each price\n"
"  detail del SYMBOL...      stop\n"
"  detail list [--json]      the symbols that carry order detail now\n"
"  track VENUE ORDERID       follow the queue position of the venue's order id\n"
"                            (e.g. track nasdaq 1234567; its symbol takes detail)\n"
"  untrack VENUE ORDERID     stop following it\n"
"  position VENUE ORDERID [--json]\n"
"                            a tracked order's state, price, shares, shares and\n"
"                            orders ahead and behind, the level's total, version\n"
"\n"
"Options:\n"
"  -d, --device PATH         the module's device (default " WB_DEVICE_PATH ")\n"
"  -D, --daemon SOCKET       talk to wirebookd's control socket instead\n"
"  -t, --timeout SECS        daemon: give up when wirebookd does not answer within\n"
"                            SECS (0.1-3600, default 5; connecting: at most 2)\n"
"  -j, --json                JSON output for stats and lists\n"
"  -h, --help\n"
"      --version\n"
"\n"
"Changing state needs write access to the device (root, or its group when\n"
"the udev rule grants mode 0660). Exit status: 0 success, 1 a request\n"
"failed, 2 usage error.\n");
}

static bool json;
static const struct wb_control *g_ctl;	/* for the daemon's failure details */
static double g_timeout_s = WB_CONTROL_REPLY_MS / 1000.0;

/* verb, or a report's "verb more" */
static bool order_verb(const char *verb)
{
	static const char *const verbs[] = { "detail", "track", "untrack", "position" };

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		size_t n = strlen(verbs[i]);

		if (!strncmp(verb, verbs[i], n) && (verb[n] == 0 || verb[n] == ' '))
			return true;
	}
	return false;
}

/* What an error means for the order detail and queue requests (control.h). */
static const char *order_hint(int rc)
{
	static char busy[160];

	switch (rc) {
	case -EOPNOTSUPP:
		return "order detail is not enabled in this wirebookd (start it with "
		       "--order-detail all|none|SYM,...)";
	case -ENOENT:
		return "unknown symbol (neither subscribed nor seen by this wirebookd yet)";
	case -EBUSY:
		snprintf(busy, sizeof(busy), "all %u request slots of the order detail are pending "
			 "(wirebookd's builder is not taking requests)", WB_ORD_REQUESTS);
		return busy;
	case -ESRCH:
		return "wirebookd's source has ended: its builder applies no more requests";
	case -ENOTTY:
		return "this wirebookd serves no order detail requests (an older version?)";
	case -EAGAIN:
		return "the position stayed mid-update: retry";
	default:
		return NULL;
	}
}

static int report(const char *what, const char *arg, int rc)
{
	if (rc >= 0)
		return 0;
	if (g_ctl && g_ctl->what[0]) {
		fprintf(stderr, "wb-subscribe: %s %s: %s\n", what, arg ? arg : "", g_ctl->what);
		return 1;
	}
	if (order_verb(what) && order_hint(rc)) {
		fprintf(stderr, "wb-subscribe: %s %s: %s\n", what, arg ? arg : "", order_hint(rc));
		return 1;
	}
	fprintf(stderr, "wb-subscribe: %s %s: %s%s\n", what, arg ? arg : "", strerror(-rc),
		rc == -EBADF || rc == -EPERM ? " (open the device read-write: run as root?)" :
		rc == -EEXIST ? " (already there)" :
		rc == -ENOENT ? " (not there)" :
		rc == -EPROTO ? " (venue already used by another protocol)" :
		rc == -ENOSPC ? " (table full)" :
		rc == -ENOTTY ? " (gap recovery lives in wirebookd: use --daemon SOCKET)" : "");
	return 1;
}

static int parse_addr_port(const char *s, uint32_t *ip, uint16_t *port)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	struct in_addr a;
	char *end;
	unsigned long p;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1)
		return -1;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || !p || p > 65535)
		return -1;
	*ip = ntohl(a.s_addr);
	*port = (uint16_t)p;
	return 0;
}

static void format_addr(uint32_t ip, uint16_t port, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
		 ip & 0xff, port);
}

/* VENUE ORDERID of track, untrack, position: 0, or -1 having said what is wrong. */
static int parse_order(const char *verb, int argc, char **argv, uint32_t *venue, uint64_t *id)
{
	char *end;
	int v;

	if (argc != 2) {
		fprintf(stderr, "wb-subscribe: %s needs VENUE ORDERID (e.g. %s nasdaq 1234567)\n", verb, verb);
		return -1;
	}
	v = feed_venue_parse(argv[0], strlen(argv[0]));
	if (v <= 0 || v >= WB_VENUE_COUNT) {
		fprintf(stderr, "wb-subscribe: %s: '%s' is no exchange venue (nasdaq, bzx, nyse, ...: the "
			"names of wb-subscribe feeds list)\n", verb, argv[0]);
		return -1;
	}
	errno = 0;
	*id = strtoull(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || argv[1][0] == '-') {
		fprintf(stderr, "wb-subscribe: %s: order id '%s': a decimal number (the venue's order id)\n",
			verb, argv[1]);
		return -1;
	}
	*venue = (uint32_t)v;
	return 0;
}

/*
 * The verb's arguments, checked before the producer is asked anything: a
 * bad one is a usage error (exit 2) that names it, not a request the
 * producer refuses with "Invalid argument".
 */
static int check_arguments(const char *verb, int argc, char **argv)
{
	int i, y, m, d;

	if (!strcmp(verb, "add") || !strcmp(verb, "del")) {
		if (!argc) {
			fprintf(stderr, "wb-subscribe: %s needs at least one SYMBOL\n", verb);
			return 2;
		}
		for (i = 0; i < argc; i++)
			if (strlen(argv[i]) > 8 || !argv[i][0]) {
				fprintf(stderr, "wb-subscribe: %s '%s': a symbol has 1 to 8 characters "
					"(or '*': every symbol)\n", verb, argv[i]);
				return 2;
			}
	}
	if (!strcmp(verb, "feeds") && argc == 2 && !strcmp(argv[0], "load")) {
		static struct feed_map_entry e[FEED_MAX_LINES];
		char err[512];

		if (feeds_conf_read(argv[1], e, FEED_MAX_LINES, err, sizeof(err)) < 0) {
			fprintf(stderr, "wb-subscribe: %s\n", err);
			return 2;
		}
	}
	if (!strcmp(verb, "date") && argc == 1 && strcmp(argv[0], "clock") &&
	    opt_date("wb-subscribe", "date", argv[0], &y, &m, &d))
		return 2;
	if (!strcmp(verb, "detail")) {
		bool change = argc >= 1 && (!strcmp(argv[0], "add") || !strcmp(argv[0], "del"));

		if (!(argc == 1 && !strcmp(argv[0], "list")) && !(change && argc >= 2)) {
			fprintf(stderr, "wb-subscribe: detail add SYMBOL..., detail del SYMBOL... or detail list\n");
			return 2;
		}
		for (i = 1; change && i < argc; i++)
			if (strlen(argv[i]) > 8 || !argv[i][0] || !strcmp(argv[i], "*")) {
				fprintf(stderr, "wb-subscribe: detail %s '%s': a symbol has 1 to 8 characters "
					"(every symbol: wirebookd --order-detail all)\n", argv[0], argv[i]);
				return 2;
			}
	}
	if (!strcmp(verb, "track") || !strcmp(verb, "untrack") || !strcmp(verb, "position")) {
		uint32_t venue;
		uint64_t id;

		if (parse_order(verb, argc, argv, &venue, &id))
			return 2;
	}
	return 0;
}

static int cmd_symbols(struct wb_control *c, bool add, int argc, char **argv)
{
	int i, failed = 0;

	for (i = 0; i < argc; i++) {
		struct wb_ioc_symbol s;
		int rc;

		memset(&s, 0, sizeof(s));
		snprintf(s.ticker, sizeof(s.ticker), "%s", argv[i]);
		rc = wb_control_call(c, add ? WB_IOC_SUB_ADD : WB_IOC_SUB_DEL, &s);
		if (report(add ? "add" : "del", argv[i], rc)) {
			failed = 1;
			continue;
		}
		if (add)
			printf("%-8s instrument %u\n", s.ticker, s.instrument);
	}
	return failed;
}

/* Run a list request, growing the array until everything fits. */
static void *fetch_list(struct wb_control *c, unsigned long cmd, size_t esize, uint32_t *count,
			void *req)
{
	uint32_t cap = 64;
	void *buf = NULL;

	for (;;) {
		uint32_t *capp, *countp;
		uint64_t *ptrp;
		void *nb = realloc(buf, (size_t)cap * esize);
		int rc;

		if (!nb) {
			free(buf);
			fprintf(stderr, "wb-subscribe: out of memory\n");
			return NULL;
		}
		buf = nb;
		if (cmd == WB_IOC_STATS) {
			struct wb_ioc_stats *st = req;

			capp = &st->capacity;
			countp = &st->count;
			ptrp = &st->lines;
		} else {
			struct wb_ioc_list *l = req;

			capp = &l->capacity;
			countp = &l->count;
			ptrp = &l->entries;
		}
		*capp = cap;
		*countp = 0;
		*ptrp = (uint64_t)(uintptr_t)buf;
		rc = wb_control_call(c, cmd, req);
		if (report(cmd == WB_CTL_DETAIL_LIST ? "detail" : "list", cmd == WB_CTL_DETAIL_LIST ? "list" : NULL,
			   rc)) {
			free(buf);
			return NULL;
		}
		if (*countp <= cap) {
			*count = *countp;
			return buf;
		}
		cap = *countp + 16;
	}
}

static int cmd_list(struct wb_control *c)
{
	struct wb_ioc_list req;
	struct wb_ioc_symbol *s;
	uint32_t i, n;

	memset(&req, 0, sizeof(req));
	s = fetch_list(c, WB_IOC_SUB_LIST, sizeof(*s), &n, &req);
	if (!s)
		return 1;
	if (json) {
		printf("[");
		for (i = 0; i < n; i++)
			printf("%s{\"symbol\":\"%s\",\"instrument\":%u}", i ? "," : "", s[i].ticker,
			       s[i].instrument);
		printf("]\n");
	} else {
		for (i = 0; i < n; i++)
			printf("%-8s %u\n", s[i].ticker, s[i].instrument);
		if (!n)
			fprintf(stderr, "wb-subscribe: no symbols subscribed (nothing is decoded; "
				"'add SYMBOL' or 'add \\*')\n");
	}
	free(s);
	return 0;
}

static int feed_add(struct wb_control *c, const struct feed_map_entry *m)
{
	struct wb_ioc_feed f;
	char addr[32];
	int rc;

	memset(&f, 0, sizeof(f));
	f.ip = m->ip;
	f.port = m->port;
	f.protocol = m->protocol;
	f.venue = m->venue;
	f.channel = m->channel;
	snprintf(f.name, sizeof(f.name), "%s", m->name);
	format_addr(m->ip, m->port, addr, sizeof(addr));
	rc = wb_control_call(c, WB_IOC_FEED_ADD, &f);
	if (report("feeds add", addr, rc))
		return 1;
	printf("line %d: %s %s %s %s", f.line, addr, feed_protocol_name(m->protocol),
	       feed_venue_name(m->venue), f.name);
	if (m->channel)
		printf(" channel=%u", m->channel);
	printf("\n");
	return 0;
}

static int cmd_feeds(struct wb_control *c, int argc, char **argv)
{
	uint32_t ip, i, n;
	uint16_t port;

	if (argc >= 1 && !strcmp(argv[0], "add")) {
		char text[256] = "", venues[256];
		struct feed_map_entry m;
		int problem, rc, k;

		if (argc != 5 && argc != 6) {
			fprintf(stderr, "wb-subscribe: feeds add ADDR:PORT PROTOCOL VENUE LINE "
				"[channel=N]\n");
			return 2;
		}
		for (k = 1; k < argc; k++) {
			strncat(text, argv[k], sizeof(text) - strlen(text) - 2);
			strcat(text, " ");
		}
		rc = feed_map_parse_line(text, strlen(text), &m, &problem);
		if (rc != 1) {
			fprintf(stderr, "wb-subscribe: feeds add '%s': %s", text,
				feed_map_problem_text(problem));
			if (problem == FEED_MAP_VENUE_NOT_SERVED) {
				feed_protocol_venue_list(m.protocol, venues, sizeof(venues));
				fprintf(stderr, " (%s serves %s)", feed_protocol_name(m.protocol),
					venues);
			}
			fprintf(stderr, "\n");
			return 2;
		}
		return feed_add(c, &m);
	}
	if (argc >= 1 && !strcmp(argv[0], "del")) {
		struct wb_ioc_feed f;

		if (argc != 2 || parse_addr_port(argv[1], &ip, &port)) {
			fprintf(stderr, "wb-subscribe: feeds del ADDR:PORT\n");
			return 2;
		}
		memset(&f, 0, sizeof(f));
		f.ip = ip;
		f.port = port;
		return report("feeds del", argv[1], wb_control_call(c, WB_IOC_FEED_DEL, &f));
	}
	if (argc >= 1 && !strcmp(argv[0], "load")) {
		struct feed_map_entry e[FEED_MAX_LINES];
		char err[512];
		int k, count, failed = 0;

		if (argc != 2) {
			fprintf(stderr, "wb-subscribe: feeds load FILE\n");
			return 2;
		}
		count = feeds_conf_read(argv[1], e, FEED_MAX_LINES, err, sizeof(err));
		if (count < 0) {
			fprintf(stderr, "wb-subscribe: %s\n", err);
			return 2;	/* a bad feed map is bad usage */
		}
		for (k = 0; k < count; k++)
			failed |= feed_add(c, &e[k]);
		return failed;
	}
	if (argc == 1 && !strcmp(argv[0], "list")) {
		struct wb_ioc_list req;
		struct wb_ioc_feed *f;

		memset(&req, 0, sizeof(req));
		f = fetch_list(c, WB_IOC_FEED_LIST, sizeof(*f), &n, &req);
		if (!f)
			return 1;
		for (i = 0; i < n; i++) {
			char addr[32];

			format_addr(f[i].ip, f[i].port, addr, sizeof(addr));
			if (json)
				printf("%s{\"line\":%d,\"address\":\"%s\",\"protocol\":\"%s\","
				       "\"venue\":\"%s\",\"name\":\"%s\",\"channel\":%u}", i ? "," : "[",
				       f[i].line, addr, feed_protocol_name(f[i].protocol),
				       feed_venue_name(f[i].venue), f[i].name, f[i].channel);
			else if (f[i].channel)
				printf("%-4d %-22s %-7s %-8s %-7s channel=%u\n", f[i].line, addr,
				       feed_protocol_name(f[i].protocol), feed_venue_name(f[i].venue),
				       f[i].name, f[i].channel);
			else
				printf("%-4d %-22s %-7s %-8s %s\n", f[i].line, addr,
				       feed_protocol_name(f[i].protocol), feed_venue_name(f[i].venue),
				       f[i].name);
		}
		if (json)
			printf("%s\n", n ? "]" : "[]");
		return 0;
	}
	fprintf(stderr, "wb-subscribe: feeds add|del|list|load (see --help)\n");
	return 2;
}

static uint64_t error_sum(const struct wb_ioc_counters *c)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < WB_IOC_ERROR_SLOTS; i++)
		s += c->errors[i];
	return s;
}

static void stats_json(const struct wb_ioc_stats *st, const struct wb_ioc_line_stats *l,
		       uint32_t n)
{
	const struct wb_ioc_hook_stats *h = &st->hook;
	uint32_t i;
	int e;

	printf("{\"lines\":[");
	for (i = 0; i < n; i++) {
		const struct wb_ioc_counters *c = &l[i].counters;
		char addr[32];

		format_addr(l[i].feed.ip, l[i].feed.port, addr, sizeof(addr));
		printf("%s{\"line\":%d,\"venue\":\"%s\",\"name\":\"%s\",\"address\":\"%s\","
		       "\"protocol\":\"%s\",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"messages\":%" PRIu64 ",\"events\":%" PRIu64 ",\"filtered\":%" PRIu64
		       ",\"ignored\":%" PRIu64 ",\"heartbeats\":%" PRIu64 ",\"gaps\":%" PRIu64
		       ",\"gap_messages\":%" PRIu64 ",\"duplicates\":%" PRIu64
		       ",\"duplicate_messages\":%" PRIu64 ",\"session_changes\":%" PRIu64
		       ",\"end_of_session\":%" PRIu64 ",\"ring_drops\":%" PRIu64
		       ",\"order_filter_full\":%" PRIu64 ",\"gso_packets\":%" PRIu64
		       ",\"decode_errors\":%" PRIu64 ",\"errors\":{",
		       i ? "," : "", l[i].feed.line, feed_venue_name(l[i].feed.venue),
		       l[i].feed.name, addr, feed_protocol_name(l[i].feed.protocol), c->packets,
		       c->bytes, c->messages, c->events, c->filtered, c->ignored, c->heartbeats,
		       c->gaps, c->gap_messages, c->duplicates, c->duplicate_messages,
		       c->session_changes, c->end_of_session, c->ring_drops, c->order_filter_full,
		       c->gso_packets, error_sum(c));
		for (e = 0; e < FEED_ERR_COUNT; e++)
			printf("%s\"%s\":%" PRIu64, e ? "," : "", feed_error_name(e), c->errors[e]);
		printf("}}");
	}
	printf("],\"hook\":{\"feed_frames\":%" PRIu64 ",\"consumed\":%" PRIu64
	       ",\"gso_frames\":%" PRIu64 ",\"gso_segments\":%" PRIu64 ",\"gso_undecoded\":%" PRIu64
	       ",\"oversize\":%" PRIu64 ",\"copy_errors\":%" PRIu64 ",\"hooked_devices\":%" PRIu64
	       ",\"tap_devices\":%" PRIu64 ",\"hook_failures\":%" PRIu64
	       ",\"ring_published\":%" PRIu64 ",\"ring_dropped\":%" PRIu64
	       ",\"ring_wakeups\":%" PRIu64 ",\"lock_waits\":%" PRIu64 "}}\n",
	       h->feed_frames, h->consumed, h->gso_frames, h->gso_segments, h->gso_undecoded,
	       h->oversize, h->copy_errors, h->hooked_devices, h->tap_devices, h->hook_failures,
	       h->ring_published, h->ring_dropped, h->ring_wakeups, h->lock_waits);
}

static int cmd_date(struct wb_control *c, int argc, char **argv)
{
	struct wb_ioc_date d;
	int y, m, day;

	memset(&d, 0, sizeof(d));
	if (argc != 1) {
		fprintf(stderr, "wb-subscribe: date YYYY-MM-DD | date clock\n");
		return 2;
	}
	if (strcmp(argv[0], "clock")) {
		if (opt_date("wb-subscribe", "date", argv[0], &y, &m, &day))
			return 2;
		d.year = (uint16_t)y;
		d.month = (uint8_t)m;
		d.day = (uint8_t)day;
	}
	return report("date", argv[0], wb_control_call(c, WB_IOC_TRADING_DATE, &d));
}

static int cmd_stats(struct wb_control *c, int argc, char **argv)
{
	struct wb_ioc_stats st;
	struct wb_ioc_line_stats *l;
	const struct wb_ioc_hook_stats *h = &st.hook;
	uint32_t i, n;

	if (argc == 1 && !strcmp(argv[0], "reset"))
		return report("stats reset", NULL, wb_control_call(c, WB_IOC_STATS_RESET, NULL));
	if (argc) {
		fprintf(stderr, "wb-subscribe: stats [--json] | stats reset\n");
		return 2;
	}
	memset(&st, 0, sizeof(st));
	l = fetch_list(c, WB_IOC_STATS, sizeof(*l), &n, &st);
	if (!l)
		return 1;
	if (json) {
		stats_json(&st, l, n);
		free(l);
		return 0;
	}
	printf("%-4s %-7s %-4s %-22s %10s %10s %10s %10s %6s %6s %6s %8s %6s\n", "line", "venue",
	       "name", "address", "packets", "messages", "events", "filtered", "gaps", "dups",
	       "errors", "drops", "gso");
	for (i = 0; i < n; i++) {
		const struct wb_ioc_counters *k = &l[i].counters;
		char addr[32];

		format_addr(l[i].feed.ip, l[i].feed.port, addr, sizeof(addr));
		printf("%-4d %-7s %-4s %-22s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %6" PRIu64 "\n",
		       l[i].feed.line, feed_venue_name(l[i].feed.venue), l[i].feed.name, addr,
		       k->packets, k->messages, k->events, k->filtered, k->gaps, k->duplicates,
		       error_sum(k), k->ring_drops, k->gso_packets);
	}
	printf("hook: %" PRIu64 " feed frames (%" PRIu64 " consumed), %" PRIu64 " GSO (%" PRIu64
	       " segments, %" PRIu64 " undecoded), %" PRIu64 " oversize, %" PRIu64 " copy errors, %"
	       PRIu64 " devices hooked (%" PRIu64 " by tap), %" PRIu64 " hook failures, %" PRIu64
	       " lock waits\n"
	       "rings: %" PRIu64 " events published, %" PRIu64 " dropped, %" PRIu64 " wakeups\n",
	       h->feed_frames, h->consumed, h->gso_frames, h->gso_segments, h->gso_undecoded,
	       h->oversize, h->copy_errors, h->hooked_devices, h->tap_devices, h->hook_failures,
	       h->lock_waits, h->ring_published, h->ring_dropped, h->ring_wakeups);
	free(l);
	return 0;
}

static const char *recovery_state_name(uint8_t state)
{
	switch (state) {
	case 0: return "no";
	case 1: return "gap";
	case 2: return "snapshot";
	default: return "?";
	}
}

static int cmd_recovery(struct wb_control *c, int argc)
{
	struct wb_ioc_list req;
	struct wb_ioc_recovery *r;
	uint32_t i, n;

	if (argc) {
		fprintf(stderr, "wb-subscribe: recovery [--json]\n");
		return 2;
	}
	memset(&req, 0, sizeof(req));
	r = fetch_list(c, WB_IOC_RECOVERY_LIST, sizeof(*r), &n, &req);
	if (!r)
		return 1;
	if (json) {
		printf("[");
		for (i = 0; i < n; i++)
			printf("%s\n  {\"venue\": \"%s\", \"channel\": %u, \"unit\": %u, "
			       "\"recovering\": %s, \"state\": \"%s\", \"since_ns\": %" PRIu64
			       ", \"held\": %u, \"gaps\": %" PRIu64 ", \"filled\": %" PRIu64
			       ", \"unrecoverable\": %" PRIu64 ", \"messages\": %" PRIu64
			       ", \"lost\": %" PRIu64 ", \"snapshots\": %" PRIu64 ", \"fills\": %" PRIu64
			       ", \"fill_p50_ns\": %" PRIu64 ", \"fill_p99_ns\": %" PRIu64
			       ", \"fill_max_ns\": %" PRIu64 "}", i ? "," : "",
			       feed_venue_name(r[i].venue), r[i].channel, r[i].unit,
			       r[i].state ? "true" : "false", recovery_state_name(r[i].state),
			       r[i].since, r[i].held, r[i].gaps, r[i].filled, r[i].unrecoverable,
			       r[i].messages, r[i].lost, r[i].snapshots, r[i].fills, r[i].fill_p50_ns,
			       r[i].fill_p99_ns, r[i].fill_max_ns);
		printf("%s]\n", n ? "\n" : "");
		free(r);
		return 0;
	}
	if (!n)
		printf("no stream in gap recovery (wirebookd runs without --recovery)\n");
	else
		printf("%-7s %4s %4s %-10s %20s %8s %8s %8s %8s %10s %8s %9s %10s %10s %10s\n",
		       "venue", "chan", "unit", "recovering", "since-ns", "held", "gaps", "filled",
		       "unrecov", "messages", "lost", "snapshots", "fill-p50us", "fill-p99us",
		       "fill-maxus");
	for (i = 0; i < n; i++)
		printf("%-7s %4u %4u %-10s %20" PRIu64 " %8u %8" PRIu64 " %8" PRIu64 " %8" PRIu64
		       " %10" PRIu64 " %8" PRIu64 " %9" PRIu64 " %10.1f %10.1f %10.1f\n",
		       feed_venue_name(r[i].venue), r[i].channel, r[i].unit,
		       recovery_state_name(r[i].state), r[i].since, r[i].held, r[i].gaps,
		       r[i].filled, r[i].unrecoverable, r[i].messages, r[i].lost, r[i].snapshots,
		       r[i].fill_p50_ns / 1e3, r[i].fill_p99_ns / 1e3, r[i].fill_max_ns / 1e3);
	free(r);
	return 0;
}

/* ---- order detail and queue positions (wirebookd only) ------------------ */

static void nap_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A price in 1e-8 dollars as a decimal without trailing zeros ("189.51"). */
static void format_price(int64_t p, char *buf, size_t n)
{
	uint64_t a = p < 0 ? -(uint64_t)p : (uint64_t)p;
	int len = snprintf(buf, n, "%s%" PRIu64 ".%08" PRIu64, p < 0 ? "-" : "", a / (uint64_t)WB_PRICE_SCALE,
			   a % (uint64_t)WB_PRICE_SCALE);

	while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
		buf[--len] = 0;
	if (len > 0 && (size_t)len < n && buf[len - 1] == '.')
		buf[--len] = 0;
}

static void print_position(const struct wb_queue_pos *q)
{
	char price[32];
	const char *side = q->side == WB_SIDE_BUY ? "B" : q->side == WB_SIDE_SELL ? "S" : "-";

	format_price(q->price, price, sizeof(price));
	if (json) {
		printf("{\"venue\":\"%s\",\"order_id\":%" PRIu64 ",\"state\":\"%s\",\"side\":\"%s\","
		       "\"sym\":%d,\"price\":%s,\"qty\":%" PRIu64 ",\"filled_qty\":%" PRIu64 ","
		       "\"shares_ahead\":%" PRIu64 ",\"orders_ahead\":%u,\"shares_behind\":%" PRIu64 ","
		       "\"orders_behind\":%u,\"level_qty\":%" PRIu64 ",\"level_orders\":%u,"
		       "\"version\":%u,\"changes\":%" PRIu64 "}\n",
		       feed_venue_name(q->venue), q->order_id, wb_queue_state_name(q->state), side, q->sym, price,
		       q->qty, q->filled_qty, q->shares_ahead, q->orders_ahead, q->shares_behind, q->orders_behind,
		       q->level_qty, q->level_orders, q->version, q->changes);
		return;
	}
	printf("%s %" PRIu64 " state=%s side=%s sym=%d price=%s qty=%" PRIu64 " filled=%" PRIu64
	       " shares_ahead=%" PRIu64 " orders_ahead=%u shares_behind=%" PRIu64 " orders_behind=%u"
	       " level_qty=%" PRIu64 " level_orders=%u version=%u\n",
	       feed_venue_name(q->venue), q->order_id, wb_queue_state_name(q->state), side, q->sym, price,
	       q->qty, q->filled_qty, q->shares_ahead, q->orders_ahead, q->shares_behind, q->orders_behind,
	       q->level_qty, q->level_orders, q->version);
}

/*
 * The builder applies a request between batches, so the reply to it says
 * only what is true now: ask again (op QUERY) until the change shows.
 */
static int cmd_detail(struct wb_control *c, int argc, char **argv)
{
	bool on = !strcmp(argv[0], "add");
	int i, failed = 0;

	if (!strcmp(argv[0], "list")) {
		struct wb_ioc_list req;
		struct wb_ioc_symbol *s;
		uint32_t n;

		memset(&req, 0, sizeof(req));
		s = fetch_list(c, WB_CTL_DETAIL_LIST, sizeof(*s), &n, &req);
		if (!s)
			return 1;
		if (json)
			printf("[");
		for (i = 0; i < (int)n; i++)
			printf(json ? "%s{\"symbol\":\"%s\",\"sym\":%u}" : "%s%-8s %u\n", json && i ? "," : "",
			       s[i].ticker, s[i].instrument);
		if (json)
			printf("]\n");
		else if (!n)
			fprintf(stderr, "wb-subscribe: no symbol carries order detail ('detail add SYMBOL', "
				"or wirebookd --order-detail all)\n");
		free(s);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		struct wb_ctl_detail d;
		uint64_t deadline = now_ms() + (uint64_t)(g_timeout_s * 1000);
		int rc;

		memset(&d, 0, sizeof(d));
		snprintf(d.ticker, sizeof(d.ticker), "%s", argv[i]);
		d.op = on ? WB_CTL_DETAIL_ON : WB_CTL_DETAIL_OFF;
		rc = wb_control_call(c, WB_CTL_DETAIL, &d);
		while (!rc && d.has_detail != on && now_ms() < deadline) {
			nap_ms(20);
			d.op = WB_CTL_DETAIL_QUERY;
			rc = wb_control_call(c, WB_CTL_DETAIL, &d);
		}
		if (report(on ? "detail add" : "detail del", argv[i], rc)) {
			failed = 1;
			continue;
		}
		if (d.has_detail != on) {
			fprintf(stderr, "wb-subscribe: detail %s %s: asked, but not applied within %g s "
				"(wirebookd's builder applies requests between batches: stalled, or in "
				"--lockstep waiting for its strategy?)\n", argv[0], argv[i], g_timeout_s);
			failed = 1;
			continue;
		}
		printf("%-8s sym %u order detail %s\n", d.ticker, d.sym, on ? "on" : "off");
	}
	return failed;
}

static int cmd_queue(struct wb_control *c, const char *verb, int argc, char **argv)
{
	struct wb_ctl_queue q;
	uint64_t deadline = now_ms() + (uint64_t)(g_timeout_s * 1000);
	uint32_t venue;
	uint64_t id;
	int want, rc;
	char what[64];

	if (parse_order(verb, argc, argv, &venue, &id))
		return 2;
	memset(&q, 0, sizeof(q));
	q.venue = venue;
	q.order_id = id;
	q.op = !strcmp(verb, "track") ? WB_CTL_QUEUE_TRACK : !strcmp(verb, "untrack") ? WB_CTL_QUEUE_UNTRACK :
									 WB_CTL_QUEUE_POSITION;
	want = q.op != WB_CTL_QUEUE_UNTRACK;
	rc = wb_control_call(c, WB_CTL_QUEUE, &q);
	while (q.op != WB_CTL_QUEUE_POSITION && (!rc || rc == -EAGAIN) && q.tracked != want &&
	       now_ms() < deadline) {
		nap_ms(20);
		q.op = WB_CTL_QUEUE_POSITION;
		rc = wb_control_call(c, WB_CTL_QUEUE, &q);
	}
	snprintf(what, sizeof(what), "%s %s", verb, argv[0]);
	if (report(what, argv[1], rc))
		return 1;
	if (q.tracked != want) {
		if (!strcmp(verb, "position"))
			fprintf(stderr, "wb-subscribe: position %s %s: not tracked (wb-subscribe track %s %s "
				"first)\n", argv[0], argv[1], argv[0], argv[1]);
		else
			fprintf(stderr, "wb-subscribe: %s %s %s: asked, but not applied within %g s (%s)\n",
				verb, argv[0], argv[1], g_timeout_s,
				want ? "the builder refused it when every tracking slot is in use, tracked "
				       "and virtual orders together; or it is stalled" :
				       "wirebookd's builder is stalled?");
		return 1;
	}
	if (want)
		print_position(&q.pos);
	else
		printf("%s %" PRIu64 " untracked\n", argv[0], id);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "daemon", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *device = NULL, *daemon_socket = NULL, *verb;
	struct wb_control c;
	char err[512];
	bool writes;
	int opt, rc;
	double timeout_s = WB_CONTROL_REPLY_MS / 1000.0;

	if (tool_version_option(argc, argv, "wb-subscribe"))
		return 0;
	/* '+': stop at the verb, so "add -x" is not taken for an option... */
	while ((opt = getopt_long(argc, argv, "+d:D:jt:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			device = optarg;
			break;
		case 'D':
			daemon_socket = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			if (opt_double("wb-subscribe", "--timeout", optarg, 0.1, 0, 3600, &timeout_s) < 0)
				return 2;
			g_timeout_s = timeout_s;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	/* ...but a trailing --json is accepted anywhere ("stats --json"). */
	for (opt = 0; opt < argc; opt++) {
		if (!strcmp(argv[opt], "--json") || !strcmp(argv[opt], "-j")) {
			json = true;
			memmove(&argv[opt], &argv[opt + 1], (size_t)(argc - opt - 1) * sizeof(*argv));
			argc--;
			opt--;
		} else if (!strcmp(argv[opt], "--help")) {
			usage(stdout);
			return 0;
		}
	}
	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	verb = argv[0];
	writes = !strcmp(verb, "add") || !strcmp(verb, "del") ||
		 (!strcmp(verb, "feeds") && argc > 1 && strcmp(argv[1], "list")) ||
		 (!strcmp(verb, "stats") && argc > 1) || !strcmp(verb, "date");
	rc = check_arguments(verb, argc - 1, argv + 1);
	if (rc)
		return rc;
	if (order_verb(verb) && !daemon_socket) {
		fprintf(stderr, "wb-subscribe: %s: order detail and queue positions are wirebookd's (the "
			"module keeps no books): use --daemon SOCKET (wirebookd --control SOCKET "
			"--order-detail ...)\n", verb);
		return 1;
	}
	if (daemon_socket) {
		unsigned reply_ms = (unsigned)(timeout_s * 1000);

		rc = wb_control_open_daemon_timeout(&c, daemon_socket,
						    reply_ms < WB_CONTROL_CONNECT_MS ? reply_ms :
						    WB_CONTROL_CONNECT_MS, reply_ms, err, sizeof(err));
		g_ctl = &c;
	}
	else
		rc = wb_control_open_kernel(&c, device, writes, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "wb-subscribe: %s\n", err);
		return 1;
	}
	if (!strcmp(verb, "add") || !strcmp(verb, "del"))
		rc = cmd_symbols(&c, !strcmp(verb, "add"), argc - 1, argv + 1);
	else if (!strcmp(verb, "list") && argc == 1)
		rc = cmd_list(&c);
	else if (!strcmp(verb, "feeds"))
		rc = cmd_feeds(&c, argc - 1, argv + 1);
	else if (!strcmp(verb, "stats"))
		rc = cmd_stats(&c, argc - 1, argv + 1);
	else if (!strcmp(verb, "date"))
		rc = cmd_date(&c, argc - 1, argv + 1);
	else if (!strcmp(verb, "detail"))
		rc = cmd_detail(&c, argc - 1, argv + 1);
	else if (!strcmp(verb, "track") || !strcmp(verb, "untrack") || !strcmp(verb, "position"))
		rc = cmd_queue(&c, verb, argc - 1, argv + 1);
	else if (!strcmp(verb, "recovery"))
		rc = cmd_recovery(&c, argc - 1);
	else {
		fprintf(stderr, "wb-subscribe: unknown command '%s' (see --help)\n", verb);
		rc = 2;
	}
	wb_control_close(&c);
	return rc;
}
