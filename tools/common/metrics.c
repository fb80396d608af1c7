/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The Prometheus endpoint and wirebook's counters in its format (see metrics.h). */
#include "common/metrics.h"
#include "feedtext/address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "feed/feed.h"

/*
 * Connections are served together, each as its request head arrives: one
 * that idles (a scraper's keep-alive, a port scan) never delays another's
 * scrape. A request head must come whole within METRICS_REQUEST_MS; with
 * every slot taken, a new connection displaces the oldest.
 */
#define METRICS_CLIENTS 16
#define METRICS_REQUEST_MS 2000
#define METRICS_REQUEST_BYTES 4096

struct metrics_client {
	int fd;			/* -1: a free slot */
	size_t used;
	uint64_t deadline_ms;
	char req[METRICS_REQUEST_BYTES];
};

struct metrics_server {
	int fd;
	int stop;
	pthread_t thread;
	metrics_render_fn render;
	void *ctx;
	uint64_t scrapes, bad_requests;
	char address[64];
	struct metrics_client clients[METRICS_CLIENTS];
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void reply(int fd, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", status, type, len);

	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

/* Answer the request head in req (what came of it, at worst). */
static void serve(struct metrics_server *m, int fd, const char *req)
{
	struct timeval tv = { 1, 0 };
	char method[8], path[256];
	char *body = NULL;
	size_t len = 0;
	FILE *out;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!req[0] || sscanf(req, "%7s %255s", method, path) != 2) {
		m->bad_requests++;
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		m->bad_requests++;
		reply(fd, "405 Method Not Allowed", "text/plain", "GET /metrics\n", 13);
		return;
	}
	if (!strcmp(path, "/")) {
		static const char home[] = "wirebookd: Prometheus metrics at /metrics\n";

		reply(fd, "200 OK", "text/plain", home, sizeof(home) - 1);
		return;
	}
	if (strcmp(path, "/metrics") && strncmp(path, "/metrics?", 9)) {
		m->bad_requests++;
		reply(fd, "404 Not Found", "text/plain", "not found: try /metrics\n", 24);
		return;
	}
	out = open_memstream(&body, &len);
	if (!out) {
		reply(fd, "500 Internal Server Error", "text/plain", "out of memory\n", 14);
		return;
	}
	m->scrapes++;
	m->render(m->ctx, out);
	metrics_family(out, "wirebook_metrics_scrapes_total", "counter",
		       "Scrapes served by this endpoint");
	fprintf(out, "wirebook_metrics_scrapes_total %" PRIu64 "\n", m->scrapes);
	metrics_family(out, "wirebook_metrics_bad_requests_total", "counter",
		       "Requests to this endpoint that were not GET /metrics");
	fprintf(out, "wirebook_metrics_bad_requests_total %" PRIu64 "\n", m->bad_requests);
	fclose(out);
	reply(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body,
	      strcmp(method, "HEAD") ? len : 0);
	free(body);
}

static void client_close(struct metrics_client *c)
{
	close(c->fd);
	c->fd = -1;
}

/* A slot for a new connection: a free one, else the oldest's. */
static struct metrics_client *client_slot(struct metrics_server *m)
{
	struct metrics_client *oldest = &m->clients[0];

	for (int i = 0; i < METRICS_CLIENTS; i++) {
		if (m->clients[i].fd < 0)
			return &m->clients[i];
		if (m->clients[i].deadline_ms < oldest->deadline_ms)
			oldest = &m->clients[i];
	}
	m->bad_requests++;	/* displaced before its request came whole */
	client_close(oldest);
	return oldest;
}

static void accept_clients(struct metrics_server *m, uint64_t now)
{
	int fd;

	while ((fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct metrics_client *c = client_slot(m);

		c->fd = fd;
		c->used = 0;
		c->req[0] = 0;
		c->deadline_ms = now + METRICS_REQUEST_MS;
	}
}

/* Read what came; serve once the head is whole, or the peer stopped sending. */
static void client_read(struct metrics_server *m, struct metrics_client *c)
{
	ssize_t r = recv(c->fd, c->req + c->used, sizeof(c->req) - 1 - c->used, MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r > 0) {
		c->used += (size_t)r;
		c->req[c->used] = 0;
		if (!strstr(c->req, "\r\n\r\n") && !strstr(c->req, "\n\n") &&
		    c->used + 1 < sizeof(c->req))
			return;
	}
	serve(m, c->fd, c->req);
	client_close(c);
}

static void *server_main(void *arg)
{
	struct metrics_server *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p[1 + METRICS_CLIENTS];
		struct metrics_client *owner[1 + METRICS_CLIENTS];
		uint64_t now;
		int n = 1;

		p[0] = (struct pollfd){ .fd = m->fd, .events = POLLIN };
		for (int i = 0; i < METRICS_CLIENTS; i++)
			if (m->clients[i].fd >= 0) {
				p[n] = (struct pollfd){ .fd = m->clients[i].fd, .events = POLLIN };
				owner[n++] = &m->clients[i];
			}
		if (poll(p, (nfds_t)n, 100) < 0)
			continue;
		now = mono_ms();
		for (int i = 1; i < n; i++)
			if (p[i].revents)
				client_read(m, owner[i]);
		for (int i = 0; i < METRICS_CLIENTS; i++)
			if (m->clients[i].fd >= 0 && now >= m->clients[i].deadline_ms) {
				/* too slow: answered with what came, if anything did */
				serve(m, m->clients[i].fd, m->clients[i].req);
				client_close(&m->clients[i]);
			}
		if (p[0].revents & POLLIN)
			accept_clients(m, now);
	}
	for (int i = 0; i < METRICS_CLIENTS; i++)
		if (m->clients[i].fd >= 0)
			client_close(&m->clients[i]);
	return NULL;
}

struct metrics_server *metrics_start(const char *addr_port, metrics_render_fn render, void *ctx,
				     char *err, size_t errlen)
{
	struct metrics_server *m;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	uint32_t ip;
	uint16_t port;
	int one = 1;

	if (feed_parse_address(addr_port, &ip, &port, err, errlen))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->render = render;
	m->ctx = ctx;
	for (int i = 0; i < METRICS_CLIENTS; i++)
		m->clients[i].fd = -1;
	m->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(ip);
	sa.sin_port = htons(port);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(m->fd, 16) ||
	    getsockname(m->fd, (struct sockaddr *)&sa, &sl)) {
		snprintf(err, errlen, "%s: %s", addr_port, strerror(errno));
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		return NULL;
	}
	snprintf(m->address, sizeof(m->address), "%s:%u", inet_ntoa(sa.sin_addr), ntohs(sa.sin_port));
	if (pthread_create(&m->thread, NULL, server_main, m)) {
		snprintf(err, errlen, "cannot start the metrics thread");
		close(m->fd);
		free(m);
		return NULL;
	}
	return m;
}

const char *metrics_address(const struct metrics_server *m)
{
	return m->address;
}

void metrics_stop(struct metrics_server *m)
{
	if (!m)
		return;
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	pthread_join(m->thread, NULL);
	close(m->fd);
	free(m);
}

/* ---- renderers ----------------------------------------------------------- */

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void metrics_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void line_labels(char *buf, size_t n, const struct wb_ioc_feed *fd)
{
	char name[9];

	memcpy(name, fd->name, 8);
	name[8] = 0;
	snprintf(buf, n, "line=\"%s\",venue=\"%s\",protocol=\"%s\",group=\"%u.%u.%u.%u:%u\"", name,
		 feed_venue_name(fd->venue), feed_protocol_name(fd->protocol), fd->ip >> 24,
		 (fd->ip >> 16) & 255, (fd->ip >> 8) & 255, fd->ip & 255, fd->port);
}

/* One counter summed over each venue's lines. */
static void stream_sum(FILE *f, const char *name, const char *help,
		       const struct wb_ioc_line_stats *lines, uint32_t n, size_t off)
{
	uint32_t i;
	int v;

	metrics_family(f, name, "counter", help);
	for (v = 1; v < WB_VENUE_COUNT; v++) {
		uint64_t sum = 0;
		int seen = 0;

		for (i = 0; i < n; i++)
			if (lines[i].feed.venue == v) {
				sum += *(const uint64_t *)((const char *)&lines[i].counters + off);
				seen = 1;
			}
		if (seen)
			fprintf(f, "%s{venue=\"%s\"} %" PRIu64 "\n", name, feed_venue_name(v), sum);
	}
}

#define LINE_COUNTER(field, help)                                                          \
	{ "wirebook_line_" #field "_total", help, offsetof(struct wb_ioc_counters, field) }

void metrics_render_lines(FILE *f, const struct wb_ioc_stats *st,
			  const struct wb_ioc_line_stats *lines, uint32_t n, int kernel)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} c[] = {
		LINE_COUNTER(packets, "UDP packets to the line's group"),
		LINE_COUNTER(bytes, "UDP payload bytes"),
		LINE_COUNTER(messages, "Source messages decoded (duplicates excluded)"),
		LINE_COUNTER(events, "Normalized events written to the ring"),
		LINE_COUNTER(filtered, "Messages of symbols not subscribed"),
		LINE_COUNTER(ignored, "Messages nothing in a book needs"),
		LINE_COUNTER(heartbeats, "Heartbeat packets"),
		LINE_COUNTER(gaps, "Sequence gaps"),
		LINE_COUNTER(gap_messages, "Messages lost in sequence gaps"),
		LINE_COUNTER(duplicates, "Whole packets already seen (A/B copies)"),
		LINE_COUNTER(duplicate_messages, "Messages skipped in duplicate or overlapping packets"),
		LINE_COUNTER(session_changes, "Session changes"),
		LINE_COUNTER(end_of_session, "End-of-session packets"),
		LINE_COUNTER(ring_drops, "Events lost to a full ring"),
		LINE_COUNTER(order_filter_full, "PITCH subscribed orders not tracked: filter full"),
		LINE_COUNTER(gso_packets, "GSO super-packets (module)"),
	};
	char lab[160];
	uint32_t i, k;
	int e;

	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		metrics_family(f, c[k].name, "counter", c[k].help);
		for (i = 0; i < n; i++) {
			line_labels(lab, sizeof(lab), &lines[i].feed);
			fprintf(f, "%s{%s} %" PRIu64 "\n", c[k].name, lab,
				rd((const uint64_t *)((const char *)&lines[i].counters + c[k].off)));
		}
	}
	metrics_family(f, "wirebook_line_decode_errors_total", "counter",
		       "Decode errors by kind (truncated, bad_length, ...)");
	for (i = 0; i < n; i++) {
		line_labels(lab, sizeof(lab), &lines[i].feed);
		for (e = 0; e < FEED_ERR_COUNT; e++)
			fprintf(f, "wirebook_line_decode_errors_total{%s,kind=\"%s\"} %" PRIu64 "\n", lab,
				feed_error_name(e), rd(&lines[i].counters.errors[e]));
	}
	/* A venue's lines (A and B) are one sequenced stream: arbitrated,
	 * gap-checked and deduplicated together. */
	stream_sum(f, "wirebook_stream_messages_total",
		   "Messages decoded on the venue's sequenced stream (all its lines)", lines, n,
		   offsetof(struct wb_ioc_counters, messages));
	stream_sum(f, "wirebook_stream_gap_messages_total",
		   "Messages the venue's stream lost in gaps (all lines)", lines, n,
		   offsetof(struct wb_ioc_counters, gap_messages));
	metrics_family(f, "wirebook_feed_lines", "gauge", "Feed-map lines");
	fprintf(f, "wirebook_feed_lines %u\n", st->count);
	if (!kernel)
		return;
#define HOOK(field, help)                                                                   \
	do {                                                                                \
		metrics_family(f, "wirebook_module_" #field "_total", "counter", help);      \
		fprintf(f, "wirebook_module_" #field "_total %" PRIu64 "\n", st->hook.field); \
	} while (0)
	HOOK(feed_frames, "Frames to a mapped UDP port handed to the engine");
	HOOK(consumed, "Feed frames kept from the IP stack");
	HOOK(gso_frames, "GSO/GRO super-packets to a mapped port");
	HOOK(gso_segments, "Segments decoded out of super-packets");
	HOOK(gso_undecoded, "Super-packets that could not be split");
	HOOK(oversize, "Frames larger than the copy buffer");
	HOOK(copy_errors, "Packets whose data could not be read");
	HOOK(hook_failures, "Devices that could not be hooked");
	HOOK(ring_published, "Events published on the module's rings");
	HOOK(ring_dropped, "Events dropped on the module's full rings");
	HOOK(ring_wakeups, "Reader wakeups");
	HOOK(lock_waits, "Feed frames whose CPU waited for their venue's lock in the module");
#undef HOOK
	metrics_family(f, "wirebook_module_hooked_devices", "gauge", "Devices hooked now");
	fprintf(f, "wirebook_module_hooked_devices %" PRIu64 "\n", st->hook.hooked_devices);
	metrics_family(f, "wirebook_module_tap_devices", "gauge", "Devices hooked by the tap fallback");
	fprintf(f, "wirebook_module_tap_devices %" PRIu64 "\n", st->hook.tap_devices);
}

void metrics_render_ring(FILE *f, const struct wb_ring_prod_page *ring)
{
	metrics_family(f, "wirebook_ring_published_total", "counter", "Events published on the event ring");
	fprintf(f, "wirebook_ring_published_total %" PRIu64 "\n", rd(&ring->published));
	metrics_family(f, "wirebook_ring_dropped_total", "counter", "Events dropped on a full event ring");
	fprintf(f, "wirebook_ring_dropped_total %" PRIu64 "\n", rd(&ring->dropped));
	metrics_family(f, "wirebook_ring_batches_total", "counter", "Publish calls that made events visible");
	fprintf(f, "wirebook_ring_batches_total %" PRIu64 "\n", rd(&ring->batches));
	metrics_family(f, "wirebook_ring_slots", "gauge", "Event ring size");
	fprintf(f, "wirebook_ring_slots %u\n", ring->slot_count);
}

void metrics_render_book(FILE *f, const struct wb_shm_header *h)
{
	struct timespec ts;
	uint64_t now, hb;
	int v;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	hb = rd(&h->heartbeat_ns);
	metrics_family(f, "wirebook_book_state", "gauge",
		       "Published book state: 1 live, 2 source done (replay over), 3 retired");
	fprintf(f, "wirebook_book_state %u\n", __atomic_load_n(&h->state, __ATOMIC_RELAXED));
	metrics_family(f, "wirebook_book_heartbeat_age_seconds", "gauge",
		       "Seconds since the builder's last heartbeat in shared memory");
	fprintf(f, "wirebook_book_heartbeat_age_seconds %.6f\n", now > hb ? (double)(now - hb) / 1e9 : 0.0);
	metrics_family(f, "wirebook_book_updates_total", "counter",
		       "Changes published to readers, all symbols");
	fprintf(f, "wirebook_book_updates_total %" PRIu64 "\n", rd(&h->updates));
	metrics_family(f, "wirebook_book_symbols", "gauge", "Symbol directory entries in use");
	fprintf(f, "wirebook_book_symbols %" PRIu64 "\n", rd(&h->symbols) ? rd(&h->symbols) - 1 : 0);
	metrics_family(f, "wirebook_book_recovering_venues", "gauge",
		       "Bit mask of venues being rebuilt by gap recovery");
	fprintf(f, "wirebook_book_recovering_venues %u\n",
		__atomic_load_n(&h->recovering_venues, __ATOMIC_RELAXED));
	metrics_family(f, "wirebook_venue_gaps_total", "counter", "Sequence gaps seen per venue (book)");
	for (v = 1; v < WB_VENUE_COUNT; v++)
		if (rd(&h->venue_recv_ns[v]) || rd(&h->venue_gaps[v]))
			fprintf(f, "wirebook_venue_gaps_total{venue=\"%s\"} %" PRIu64 "\n",
				feed_venue_name(v), rd(&h->venue_gaps[v]));
	metrics_family(f, "wirebook_venue_data_age_seconds", "gauge",
		       "Seconds since the receive time of the venue's newest published data");
	for (v = 1; v < WB_VENUE_COUNT; v++) {
		uint64_t t = rd(&h->venue_recv_ns[v]);

		if (t)
			fprintf(f, "wirebook_venue_data_age_seconds{venue=\"%s\"} %.6f\n",
				feed_venue_name(v), now > t ? (double)(now - t) / 1e9 : 0.0);
	}
}

/* The table under its seqlock; 0 streams when there is none or it stays busy. */
static uint32_t recovery_snapshot(const struct wb_shm_header *h, struct wb_recovery_stream *out)
{
	const struct wb_shm_recovery *t;

	if (!h->recovery_offset)
		return 0;
	t = (const struct wb_shm_recovery *)((const char *)h + h->recovery_offset);
	for (int tries = 0; tries < 1000; tries++) {
		uint64_t seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);
		uint32_t n;

		if (seq & 1)
			continue;
		n = __atomic_load_n(&t->count, __ATOMIC_RELAXED);
		if (n > WB_RECOVERY_STREAMS)
			n = WB_RECOVERY_STREAMS;
		memcpy(out, t->stream, n * sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->seq, __ATOMIC_RELAXED) == seq)
			return n;
	}
	return 0;
}

void metrics_render_recovery(FILE *f, const struct wb_shm_header *h)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} fam[] = {
		{ "wirebook_recovery_gaps_total", "counter",
		  "Recoveries begun per stream (holes to fill, late joins)",
		  offsetof(struct wb_recovery_stream, gaps) },
		{ "wirebook_recovery_filled_total", "counter",
		  "Recoveries that got every message", offsetof(struct wb_recovery_stream, filled) },
		{ "wirebook_recovery_unrecoverable_total", "counter",
		  "Recoveries that ended with messages lost",
		  offsetof(struct wb_recovery_stream, unrecoverable) },
		{ "wirebook_recovery_messages_total", "counter", "Messages recovered",
		  offsetof(struct wb_recovery_stream, messages) },
		{ "wirebook_recovery_lost_messages_total", "counter",
		  "Messages given up (refused, too old, buffer full)",
		  offsetof(struct wb_recovery_stream, lost) },
		{ "wirebook_recovery_snapshots_total", "counter", "Snapshots applied",
		  offsetof(struct wb_recovery_stream, snapshots) },
		{ "wirebook_recovery_fills_total", "counter",
		  "Fill times measured (the stream's venue and channel)",
		  offsetof(struct wb_recovery_stream, fills) },
	};
	static const struct {
		const char *name, *help;
		size_t off;
	} fill[] = {
		{ "wirebook_recovery_fill_p50_seconds", "Median fill time, gap to in sequence (upper bound of its bucket)",
		  offsetof(struct wb_recovery_stream, fill_p50_ns) },
		{ "wirebook_recovery_fill_p99_seconds", "99th percentile fill time (upper bound of its bucket)",
		  offsetof(struct wb_recovery_stream, fill_p99_ns) },
		{ "wirebook_recovery_fill_max_seconds", "Longest fill time",
		  offsetof(struct wb_recovery_stream, fill_max_ns) },
	};
	struct wb_recovery_stream *r = calloc(WB_RECOVERY_STREAMS, sizeof(*r));
	uint32_t n = r ? recovery_snapshot(h, r) : 0;
	char labels[WB_RECOVERY_STREAMS][64];

	for (uint32_t i = 0; i < n; i++)
		snprintf(labels[i], sizeof(labels[i]), "{venue=\"%s\",channel=\"%u\",unit=\"%u\"}",
			 feed_venue_name(r[i].venue), r[i].channel, r[i].unit);
	for (size_t k = 0; n && k < sizeof(fam) / sizeof(fam[0]); k++) {
		metrics_family(f, fam[k].name, fam[k].type, fam[k].help);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%s %" PRIu64 "\n", fam[k].name, labels[i],
				*(const uint64_t *)((const char *)&r[i] + fam[k].off));
	}
	for (size_t k = 0; n && k < sizeof(fill) / sizeof(fill[0]); k++) {
		metrics_family(f, fill[k].name, "gauge", fill[k].help);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%s %.9f\n", fill[k].name, labels[i],
				(double)*(const uint64_t *)((const char *)&r[i] + fill[k].off) / 1e9);
	}
	if (n) {
		metrics_family(f, "wirebook_recovery_recovering", "gauge",
			       "1 while the stream is recovering (its books behind or being rebuilt)");
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "wirebook_recovery_recovering%s %d\n", labels[i], r[i].state != 0);
		metrics_family(f, "wirebook_recovery_since_seconds", "gauge",
			       "Receive time (seconds since the epoch) the current recovery began; 0: none");
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "wirebook_recovery_since_seconds%s %.9f\n", labels[i],
				(double)r[i].since_ns / 1e9);
	}
	free(r);
	if (h->sipstats_offset) {
		const struct wb_shm_sipstats *ss =
			(const struct wb_shm_sipstats *)((const char *)h + h->sipstats_offset);

		metrics_family(f, "wirebook_sip_cqs_gaps_total", "counter",
			       "CQS sequence gaps (no retransmission: the SIP view goes stale)");
		fprintf(f, "wirebook_sip_cqs_gaps_total %" PRIu64 "\n", rd(&ss->summary.total.sip_gaps));
		metrics_family(f, "wirebook_sip_stale_marked_total", "counter",
			       "Symbols whose SIP view a CQS gap marked stale (until their next quote)");
		fprintf(f, "wirebook_sip_stale_marked_total %" PRIu64 "\n",
			rd(&ss->summary.total.stale_marked));
	}
}
