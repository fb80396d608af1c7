/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The user-space recovery client (see recovery.h). */
#include "common/recovery.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/metrics.h"

#define MOLD_HEADER 20
#define MAX_REPLY 2048
#define MAX_LIST 256

struct service {
	struct recovery_conf_entry conf;
	int fd;
	int line;		/* a line of the stream's group (to name the stream) */
	bool has_line;
	/* the recovery in progress */
	bool recovering;
	uint32_t episode;
	uint64_t began;		/* now_ns when the client first saw it */
	bool gave_up;		/* part of it was declared lost: no fill time */
	bool waiting;		/* a request is in flight */
	uint64_t req_first;
	uint32_t tries;		/* unanswered sends of this request */
	uint64_t deadline;
	uint32_t held;
	/* counters */
	uint64_t requests, retries, replies, bad_replies, given_up;
	uint64_t *fill_ns;	/* every fill time, sorted when reported */
	size_t fills, fill_cap;
};

struct recovery_client {
	struct feed_engine *e;
	int n;
	struct service svc[RECOVERY_MAX_SERVICES];
	uint32_t seen_changes;
	struct feed_recovery_stream list[MAX_LIST];
};

/* ---- recovery.conf -------------------------------------------------------- */

static int conf_error(char *err, size_t errlen, const char *path, int lineno, const char *what,
		      const char *tok)
{
	snprintf(err, errlen, "%s:%d: %s%s%s%s", path, lineno, what, tok ? " '" : "",
		 tok ? tok : "", tok ? "'" : "");
	return -1;
}

static int parse_entry(char *text, struct recovery_conf_entry *en, const char *path, int lineno,
		       char *err, size_t errlen)
{
	char *tok[8], *save = NULL, *t;
	int n = 0;
	char why[160];

	for (t = strtok_r(text, " \t\r\n", &save); t && n < 8; t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (!n)
		return 0;
	if (n < 3)
		return conf_error(err, errlen, path, lineno,
				  "want VENUE SERVICE HOST:PORT [channel=N] [timeout=MS] [retries=N]",
				  NULL);
	memset(en, 0, sizeof(*en));
	en->lineno = lineno;
	en->channel = -1;
	en->timeout_ms = RECOVERY_DEFAULT_TIMEOUT_MS;
	en->retries = RECOVERY_DEFAULT_RETRIES;
	en->venue = feed_venue_parse(tok[0], strlen(tok[0]));
	if (en->venue < 0)
		return conf_error(err, errlen, path, lineno, "unknown venue", tok[0]);
	if (strcmp(tok[1], "mold") == 0) {
		en->kind = RECOVERY_MOLD;
	} else if (!strcmp(tok[1], "glimpse") || !strcmp(tok[1], "grp") || !strcmp(tok[1], "spin") ||
		   !strcmp(tok[1], "xdp")) {
		return conf_error(err, errlen, path, lineno,
				  "service not implemented yet (only mold: MoldUDP64 re-request)",
				  tok[1]);
	} else {
		return conf_error(err, errlen, path, lineno, "unknown service (mold)", tok[1]);
	}
	if (metrics_parse_address(tok[2], &en->ip, &en->port, why, sizeof(why)))
		return conf_error(err, errlen, path, lineno, why, NULL);
	if (!en->port)
		return conf_error(err, errlen, path, lineno, "a service needs a port", tok[2]);
	for (int i = 3; i < n; i++) {
		char *end;
		unsigned long v;
		const char *eq = strchr(tok[i], '=');

		if (!eq)
			return conf_error(err, errlen, path, lineno, "not KEY=VALUE", tok[i]);
		if (strncmp(tok[i], "channel=", 8) && strncmp(tok[i], "timeout=", 8) &&
		    strncmp(tok[i], "retries=", 8))
			return conf_error(err, errlen, path, lineno,
					  "unknown key (channel=, timeout=, retries=)", tok[i]);
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (eq[1] == 0 || *end || errno)
			return conf_error(err, errlen, path, lineno, "not a number", tok[i]);
		if (!strncmp(tok[i], "channel=", 8) && v <= 65535)
			en->channel = (int)v;
		else if (!strncmp(tok[i], "timeout=", 8) && v >= 1 && v <= 60000)
			en->timeout_ms = (uint32_t)v;
		else if (!strncmp(tok[i], "retries=", 8) && v <= 100)
			en->retries = (uint32_t)v;
		else
			return conf_error(err, errlen, path, lineno,
					  "value out of range (channel=0-65535, timeout=1-60000 ms, "
					  "retries=0-100)", tok[i]);
	}
	return 1;
}

int recovery_conf_read(const char *path, struct recovery_conf_entry *out, int max, char *err,
		       size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0, lineno = 0, rc = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = 0;
		if (n == max) {
			rc = conf_error(err, errlen, path, lineno, "too many services", NULL);
			break;
		}
		rc = parse_entry(line, &out[n], path, lineno, err, errlen);
		if (rc < 0)
			break;
		for (int i = 0; i < n && rc > 0; i++)
			if (out[i].venue == out[n].venue && out[i].channel == out[n].channel)
				rc = conf_error(err, errlen, path, lineno,
						"a second service for the same stream", NULL);
		if (rc < 0)
			break;
		n += rc;
	}
	fclose(f);
	return rc < 0 ? -1 : n;
}

/* ---- the client ------------------------------------------------------------ */

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

/* The stream's lines in the feed map: 0, or -1 with err. */
static int check_stream(struct feed_engine *e, const struct recovery_conf_entry *en,
			const char *path, char *err, size_t errlen)
{
	int found = 0;

	for (uint32_t i = 0; i < e->line_count; i++) {
		const struct feed_line *l = &e->lines[i];

		if (!feed_line_in_use(l) || l->venue != en->venue ||
		    (en->channel >= 0 && l->channel != en->channel))
			continue;
		if (l->protocol != FEED_PROTO_ITCH50 && l->protocol != FEED_PROTO_UQDF) {
			snprintf(err, errlen, "%s:%d: venue %s is %s, which a mold service cannot "
				 "serve (its recovery is not implemented yet)", path, en->lineno,
				 feed_venue_name(en->venue), feed_protocol_name(l->protocol));
			return -1;
		}
		if (en->channel < 0 && l->channel) {
			snprintf(err, errlen, "%s:%d: venue %s's lines name channels: give channel=N",
				 path, en->lineno, feed_venue_name(en->venue));
			return -1;
		}
		found++;
	}
	if (!found) {
		snprintf(err, errlen, "%s:%d: the feed map has no line of venue %s%s", path,
			 en->lineno, feed_venue_name(en->venue),
			 en->channel >= 0 ? " on that channel" : "");
		return -1;
	}
	return 0;
}

struct recovery_client *recovery_client_create(struct feed_engine *e,
					       const struct recovery_conf_entry *entries, int n,
					       const char *path, char *err, size_t errlen)
{
	struct recovery_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->e = e;
	for (int i = 0; i < n && i < RECOVERY_MAX_SERVICES; i++) {
		struct service *s = &c->svc[c->n];
		struct sockaddr_in to = { .sin_family = AF_INET };

		if (check_stream(e, &entries[i], path, err, errlen))
			goto fail;
		s->conf = entries[i];
		s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		to.sin_addr.s_addr = htonl(s->conf.ip);
		to.sin_port = htons(s->conf.port);
		/* Connected: replies from anyone else are not ours. */
		if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
			snprintf(err, errlen, "%s:%d: socket to the service: %s", path,
				 entries[i].lineno, strerror(errno));
			if (s->fd >= 0)
				close(s->fd);
			goto fail;
		}
		c->n++;
		rc = feed_recovery_enable(e, s->conf.venue, (uint16_t)(s->conf.channel < 0 ? 0 :
								       s->conf.channel), 0);
		if (rc < 0) {
			snprintf(err, errlen, "%s:%d: cannot put venue %s in recovery mode (error %d)",
				 path, entries[i].lineno, feed_venue_name(s->conf.venue), -rc);
			goto fail;
		}
	}
	c->seen_changes = e->recovery_changes - 1;
	return c;
fail:
	recovery_client_destroy(c);
	return NULL;
}

void recovery_client_destroy(struct recovery_client *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++) {
		close(c->svc[i].fd);
		free(c->svc[i].fill_ns);
	}
	free(c);
}

static struct service *service_of(struct recovery_client *c, int venue, int channel)
{
	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		if (s->conf.venue == venue && (s->conf.channel < 0 ? 0 : s->conf.channel) == channel)
			return s;
	}
	return NULL;
}

static void send_request(struct service *s, const struct feed_recovery_stream *rs)
{
	uint8_t req[MOLD_HEADER];
	uint64_t seq = rs->missing_first, count = rs->missing_count;

	memcpy(req, rs->session, 10);
	for (int i = 0; i < 8; i++)
		req[10 + i] = (uint8_t)(seq >> (56 - 8 * i));
	if (count > 0xfffe)
		count = 0xfffe;	/* 0xffff means end of session in Mold */
	req[18] = (uint8_t)(count >> 8);
	req[19] = (uint8_t)count;
	/* A send that fails (the service's port closed) is retried like a lost one. */
	(void)!send(s->fd, req, sizeof(req), 0);
	s->requests++;
}

static void note_fill(struct service *s, uint64_t ns)
{
	if (s->fills == s->fill_cap) {
		size_t cap = s->fill_cap ? s->fill_cap * 2 : 256;
		uint64_t *p = realloc(s->fill_ns, cap * sizeof(*p));

		if (!p)
			return;
		s->fill_ns = p;
		s->fill_cap = cap;
	}
	s->fill_ns[s->fills++] = ns;
}

static void take_replies(struct recovery_client *c, struct service *s, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	uint8_t buf[MAX_REPLY];
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		s->replies++;
		if (!s->has_line ||
		    feed_recover_packet(c->e, s->line, buf, (uint32_t)n, recv_ts, out) < 0)
			s->bad_replies++;
	}
}

/* One stream the engine says is recovering: ask, retry or give up. */
static void drive(struct recovery_client *c, struct service *s,
		  const struct feed_recovery_stream *rs, uint64_t now, uint64_t recv_ts,
		  struct wb_ring_producer *out)
{
	if (!s->recovering || s->episode != rs->episode) {
		if (s->recovering && !s->gave_up) /* the previous one ended between two polls */
			note_fill(s, now - s->began);
		s->recovering = true;
		s->episode = rs->episode;
		s->began = now;
		s->waiting = false;
		s->gave_up = false;
	}
	if (rs->state != FEED_REC_GAP || !rs->has_session || !rs->missing_count)
		return;		/* a snapshot: no snapshot service yet */
	if (!s->waiting || rs->missing_first != s->req_first) {
		/* New, or progress (a reply filled the start): ask for what is left. */
		s->waiting = true;
		s->req_first = rs->missing_first;
		s->tries = 0;
		send_request(s, rs);
		s->deadline = now + ms_ns(s->conf.timeout_ms);
		return;
	}
	if (now < s->deadline)
		return;
	if (s->tries >= s->conf.retries) {
		/* The service does not answer: the range is lost, the stream goes on. */
		s->given_up++;
		s->waiting = false;
		s->gave_up = true;
		feed_recover_lost(c->e, rs->line, rs->unit, rs->missing_first, rs->missing_count,
				  recv_ts ? recv_ts : rs->since, out);
		return;
	}
	s->tries++;
	s->retries++;
	send_request(s, rs);
	uint64_t wait = ms_ns(s->conf.timeout_ms) << (s->tries < 16 ? s->tries : 16);

	s->deadline = now + (wait < ms_ns(RECOVERY_MAX_BACKOFF_MS) ? wait :
			     ms_ns(RECOVERY_MAX_BACKOFF_MS));
}

void recovery_client_poll(struct recovery_client *c, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	bool active = false;
	int n;

	for (int i = 0; i < c->n; i++) {
		if (c->svc[i].waiting) {
			take_replies(c, &c->svc[i], recv_ts ? recv_ts : 1, out);
			active = true;
		}
		active |= c->svc[i].recovering;
	}
	/* Nothing in progress and nothing new: one load. */
	if (!active && c->seen_changes == c->e->recovery_changes)
		return;
	c->seen_changes = c->e->recovery_changes;
	n = feed_recovery_list(c->e, c->list, MAX_LIST, false);
	if (n > MAX_LIST)
		n = MAX_LIST;
	for (int i = 0; i < c->n; i++)
		c->svc[i].held = 0;
	bool seen[RECOVERY_MAX_SERVICES] = { false };

	for (int k = 0; k < n; k++) {
		const struct feed_recovery_stream *rs = &c->list[k];
		struct service *s = service_of(c, rs->venue, rs->channel);

		if (!s)
			continue;
		seen[s - c->svc] = true;
		s->line = rs->line;
		s->has_line = true;
		s->held += rs->held;
		drive(c, s, rs, now, recv_ts ? recv_ts : rs->since, out);
	}
	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		if (s->recovering && !seen[i]) {
			if (!s->gave_up)
				note_fill(s, now - s->began);
			s->recovering = false;
			s->waiting = false;
		}
	}
}

int recovery_client_busy(const struct recovery_client *c, uint32_t *held)
{
	int busy = 0;
	uint32_t h = 0;

	for (int i = 0; i < c->n; i++) {
		busy += c->svc[i].recovering;
		h += c->svc[i].held;
	}
	if (held)
		*held = h;
	return busy;
}

uint32_t recovery_client_recovering_venues(const struct recovery_client *c)
{
	uint32_t mask = 0;

	for (int i = 0; i < c->n; i++)
		if (c->svc[i].recovering && c->svc[i].conf.venue < WB_VENUE_COUNT)
			mask |= 1u << c->svc[i].conf.venue;
	return mask;
}

int recovery_client_count(const struct recovery_client *c)
{
	return c->n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void recovery_client_totals(const struct recovery_client *c, int i, uint64_t now,
			    struct recovery_totals *t)
{
	const struct service *s = &c->svc[i];
	struct feed_recovery_stream all[MAX_LIST];
	int n = feed_recovery_list(c->e, all, MAX_LIST, true);

	memset(t, 0, sizeof(*t));
	t->venue = s->conf.venue;
	t->channel = s->conf.channel;
	for (int k = 0; k < n && k < MAX_LIST; k++) {
		if (all[k].venue != s->conf.venue ||
		    all[k].channel != (s->conf.channel < 0 ? 0 : s->conf.channel))
			continue;
		t->gaps += all[k].gaps;
		t->filled += all[k].filled;
		t->unrecoverable += all[k].unrecoverable;
		t->messages += all[k].messages;
		t->lost += all[k].lost;
	}
	t->requests = s->requests;
	t->retries = s->retries;
	t->replies = s->replies;
	t->given_up = s->given_up;
	t->recovering = s->recovering;
	t->recovering_for_ns = s->recovering ? now - s->began : 0;
	t->fills = s->fills;
	if (s->fills) {
		/* Sorting in place is fine: order carries no meaning. */
		qsort(s->fill_ns, s->fills, sizeof(uint64_t), cmp_u64);
		t->fill_p50_ns = s->fill_ns[(s->fills - 1) / 2];
		t->fill_p99_ns = s->fill_ns[(s->fills * 99 + 99) / 100 - 1];
		t->fill_max_ns = s->fill_ns[s->fills - 1];
	}
}

static void print_ns(FILE *f, uint64_t ns)
{
	if (ns >= 10000000ull)
		fprintf(f, "%.0fms", ns / 1e6);
	else if (ns >= 10000)
		fprintf(f, "%.0fus", ns / 1e3);
	else
		fprintf(f, "%" PRIu64 "ns", ns);
}

void recovery_client_print(const struct recovery_client *c, FILE *f)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	for (int i = 0; i < c->n; i++) {
		struct recovery_totals t;
		struct in_addr a = { .s_addr = htonl(c->svc[i].conf.ip) };

		recovery_client_totals(c, i, now, &t);
		fprintf(f, "recovery %s", feed_venue_name(t.venue));
		if (t.channel >= 0)
			fprintf(f, "/%d", t.channel);
		fprintf(f, " (mold %s:%u): ", inet_ntoa(a), c->svc[i].conf.port);
		if (t.recovering) {
			fprintf(f, "STALE, recovering for ");
			print_ns(f, t.recovering_for_ns);
		} else {
			fprintf(f, "in sequence");
		}
		fprintf(f, "; gaps %" PRIu64 ", filled %" PRIu64 ", unrecoverable %" PRIu64
			", messages recovered %" PRIu64 ", lost %" PRIu64 "; requests %" PRIu64
			", retries %" PRIu64 ", replies %" PRIu64 "; fill time p50 ", t.gaps, t.filled,
			t.unrecoverable, t.messages, t.lost, t.requests, t.retries, t.replies);
		print_ns(f, t.fill_p50_ns);
		fprintf(f, " p99 ");
		print_ns(f, t.fill_p99_ns);
		fprintf(f, " max ");
		print_ns(f, t.fill_max_ns);
		fprintf(f, " (%" PRIu64 " fills)\n", t.fills);
	}
}
