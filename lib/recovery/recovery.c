/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The user-space recovery client (see recovery.h). */
#include "recovery/recovery.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "feedtext/address.h"
#include "recovery/recovery_internal.h"

#define UNITS RECOVERY_UNITS
#define MAX_LIST RECOVERY_MAX_LIST

/* ---- recovery.conf -------------------------------------------------------- */

static int conf_error(char *err, size_t errlen, const char *path, int lineno, const char *what,
		      const char *tok)
{
	snprintf(err, errlen, "%s:%d: %s%s%s%s", path, lineno, what, tok ? " '" : "",
		 tok ? tok : "", tok ? "'" : "");
	return -1;
}

static bool is_snapshot(const struct recovery_service *sv)
{
	return sv->snapshot;
}

static bool takes_gap(const struct recovery_service *sv)
{
	return sv->takes_gap;
}

static bool takes_login(const struct recovery_service *sv)
{
	return sv->user_max;
}

static bool takes_unit(const struct recovery_service *sv)
{
	return sv->takes_unit;
}

static int parse_entry(char *text, struct recovery_conf_entry *en, const char *path, int lineno,
		       char *err, size_t errlen)
{
	char *tok[14], *save = NULL, *t;
	bool timeout_given = false, retries_given = false;
	int n = 0;
	char why[160], names[96];
	const struct recovery_service *sv;
	const char *missing;

	for (t = strtok_r(text, " \t\r\n", &save); t && n < 14; t = strtok_r(NULL, " \t\r\n", &save))
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
	en->unit = -1;
	en->timeout_ms = RECOVERY_DEFAULT_TIMEOUT_MS;
	en->retries = RECOVERY_DEFAULT_RETRIES;
	en->venue = feed_venue_parse(tok[0], strlen(tok[0]));
	if (en->venue < 0)
		return conf_error(err, errlen, path, lineno, "unknown venue", tok[0]);
	sv = en->service = recovery_service_named(tok[1]);
	if (!sv) {
		snprintf(why, sizeof(why), "unknown service (%s)",
			 recovery_service_names(names, sizeof(names), NULL, false));
		return conf_error(err, errlen, path, lineno, why, tok[1]);
	}
	if (sv->snapshot) {
		en->max_gap = RECOVERY_DEFAULT_MAX_GAP;
		en->max_age_ms = RECOVERY_DEFAULT_MAX_AGE_MS;
	}
	if (feed_parse_address(tok[2], &en->ip, &en->port, why, sizeof(why)))
		return conf_error(err, errlen, path, lineno, why, NULL);
	if (!en->port)
		return conf_error(err, errlen, path, lineno, "a service needs a port", tok[2]);
	for (int i = 3; i < n; i++) {
		char *end;
		unsigned long v;
		const char *eq = strchr(tok[i], '=');

		if (!eq)
			return conf_error(err, errlen, path, lineno, "not KEY=VALUE", tok[i]);
		if (sv->conf_key) {
			int taken = sv->conf_key(en, tok[i], why, sizeof(why));

			if (taken < 0)
				return conf_error(err, errlen, path, lineno, why, tok[i]);
			if (taken)
				continue;
		}
		if (!strncmp(tok[i], "max-gap=", 8) || !strncmp(tok[i], "max-age=", 8)) {
			if (!sv->snapshot) {
				snprintf(why, sizeof(why), "only a snapshot service (%s) takes "
					 "max-gap=, max-age=", recovery_service_names(names,
					 sizeof(names), is_snapshot, false));
				return conf_error(err, errlen, path, lineno, why, tok[i]);
			}
			errno = 0;
			v = strtoul(eq + 1, &end, 10);
			if (eq[1] == 0 || *end || errno || v > UINT32_MAX)
				return conf_error(err, errlen, path, lineno,
						  "not a number (max-gap= messages, max-age= ms, "
						  "0 for none)", tok[i]);
			if (tok[i][6] == 'p')
				en->max_gap = v ? v : UINT64_MAX;
			else
				en->max_age_ms = (uint32_t)v;
			continue;
		}
		if (!strncmp(tok[i], "gap=", 4) || !strncmp(tok[i], "user=", 5) ||
		    !strncmp(tok[i], "password=", 9)) {
			if (tok[i][0] == 'g' ? !sv->takes_gap : !sv->user_max) {
				char logins[96];

				snprintf(why, sizeof(why), "only a %s service takes gap=; %s take user=, "
					 "password=", recovery_service_names(names, sizeof(names),
					 takes_gap, false), recovery_service_names(logins,
					 sizeof(logins), takes_login, true));
				return conf_error(err, errlen, path, lineno, why, tok[i]);
			}
			if (tok[i][0] == 'g') {
				if (feed_parse_address(eq + 1, &en->gap_ip, &en->gap_port, why,
							  sizeof(why)) || !en->gap_port)
					return conf_error(err, errlen, path, lineno,
							  "gap= wants ADDR:PORT with a port", tok[i]);
			} else if (tok[i][0] == 'u') {
				if (strlen(eq + 1) > sv->user_max) {
					snprintf(why, sizeof(why), "user= has at most %u characters%s%s%s",
						 sv->user_max, sv->user_note ? " (" : "",
						 sv->user_note ? sv->user_note : "",
						 sv->user_note ? ")" : "");
					return conf_error(err, errlen, path, lineno, why, tok[i]);
				}
				strcpy(en->user, eq + 1);
			} else {
				if (strlen(eq + 1) >= sizeof(en->password))
					return conf_error(err, errlen, path, lineno,
							  "password= has at most 10 characters",
							  NULL);
				strcpy(en->password, eq + 1);
			}
			continue;
		}
		if (!strncmp(tok[i], "unit=", 5)) {
			/* A Spin server serves one unit (docs/specs/cboe-spin-notes.md). */
			if (!sv->takes_unit) {
				snprintf(why, sizeof(why), "only a %s service takes unit=",
					 recovery_service_names(names, sizeof(names), takes_unit,
								false));
				return conf_error(err, errlen, path, lineno, why, tok[i]);
			}
			errno = 0;
			v = strtoul(eq + 1, &end, 10);
			if (eq[1] == 0 || *end || errno || v > 255)
				return conf_error(err, errlen, path, lineno,
						  "unit= wants a PITCH unit, 0-255", tok[i]);
			en->unit = (int)v;
			continue;
		}
		if (strncmp(tok[i], "channel=", 8) && strncmp(tok[i], "timeout=", 8) &&
		    strncmp(tok[i], "retries=", 8))
			return conf_error(err, errlen, path, lineno,
					  "unknown key (channel=, timeout=, retries=, gap=, user=, "
					  "password=, max-gap=, max-age=, unit=)", tok[i]);
		timeout_given |= !strncmp(tok[i], "timeout=", 8);
		retries_given |= !strncmp(tok[i], "retries=", 8);
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
	if (sv->snapshot && !timeout_given)
		en->timeout_ms = RECOVERY_SNAPSHOT_TIMEOUT_MS;
	if (sv->snapshot && !retries_given)
		en->retries = RECOVERY_SNAPSHOT_RETRIES;
	missing = sv->conf_check ? sv->conf_check(en) : NULL;
	if (missing)
		return conf_error(err, errlen, path, lineno, missing, NULL);
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
		/* A stream has at most one gap-fill service and one snapshot service. */
		for (int i = 0; i < n && rc > 0; i++)
			if (out[i].venue == out[n].venue && out[i].channel == out[n].channel &&
			    !out[i].service->snapshot == !out[n].service->snapshot &&
			    out[i].unit == out[n].unit)
				rc = conf_error(err, errlen, path, lineno,
						out[n].service->snapshot ?
						"a second snapshot service for the same stream "
						"(spin: the same unit)" : "a second service for the "
						"same stream (one gap-fill and one snapshot service at "
						"most)", NULL);
		if (rc < 0)
			break;
		n += rc;
	}
	fclose(f);
	return rc < 0 ? -1 : n;
}

/* ---- the client ------------------------------------------------------------ */

/* The stream's lines in the feed map: 0, or -1 with err. */
static int check_stream(const struct recovery_target *t, const struct recovery_conf_entry *en,
			const char *path, char *err, size_t errlen)
{
	struct wb_ioc_feed lines[FEED_MAX_LINES];
	uint32_t n = t->feed_list(t->ctx, lines, FEED_MAX_LINES);
	int found = 0;

	for (uint32_t i = 0; i < n && i < FEED_MAX_LINES; i++) {
		const struct wb_ioc_feed *l = &lines[i];

		if (l->venue != en->venue || (en->channel >= 0 && l->channel != en->channel))
			continue;
		if (!recovery_service_serves(en->service, l->protocol)) {
			snprintf(err, errlen, "%s:%d: venue %s is %s, which a %s service cannot "
				 "serve", path, en->lineno, feed_venue_name(en->venue),
				 feed_protocol_name(l->protocol), en->service->name);
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

static struct service *service_of(struct recovery_client *c, int venue, int channel)
{
	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		if (s->conf.venue == venue && (s->conf.channel < 0 ? 0 : s->conf.channel) == channel)
			return s;
	}
	return NULL;
}

struct recovery_client *recovery_client_create(struct feed_engine *e,
					       const struct recovery_conf_entry *entries, int n,
					       const char *path, char *err, size_t errlen)
{
	struct recovery_target t;

	recovery_target_engine(&t, e);
	return recovery_client_create_target(&t, entries, n, path, err, errlen);
}

struct recovery_client *recovery_client_create_target(const struct recovery_target *t,
						      const struct recovery_conf_entry *entries,
						      int n, const char *path, char *err,
						      size_t errlen)
{
	struct recovery_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		if (t->close)
			t->close(t->ctx);
		return NULL;
	}
	c->t = *t;
	/* Gap-fill services first: a snapshot service joins its stream's. */
	for (int pass = 0; pass < 2; pass++)
	for (int i = 0; i < n && i < RECOVERY_MAX_SERVICES; i++) {
		struct service *s = &c->svc[c->n];
		const struct recovery_service *sv = entries[i].service;
		bool snapshot = sv->snapshot != NULL;
		char why[200];

		if (snapshot != (pass == 1))
			continue;
		if (check_stream(&c->t, &entries[i], path, err, errlen))
			goto fail;
		if (snapshot) {
			struct service *with = service_of(c, entries[i].venue,
							  entries[i].channel < 0 ? 0 :
							  entries[i].channel);

			if (with)
				s = with;
			else
				s->conf = entries[i];	/* a stream with no gap fill */
			s->snap_service = sv;
			if (sv->snapshot->add(&s->snap, &c->t, &entries[i]) < 0) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			if (with)
				continue;
			s->fd = -1;
			s->tcp = -1;
			c->n++;
			goto enable;
		}
		s->conf = entries[i];
		s->fd = -1;
		s->tcp = -1;
		s->backoff_ns = recovery_ms_ns(s->conf.timeout_ms);
		if (sv->gap_fill->open(s, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%d: %s", path, entries[i].lineno, why);
			goto fail;
		}
		c->n++;
enable:
		rc = c->t.enable(c->t.ctx, s->conf.venue, (uint16_t)(s->conf.channel < 0 ? 0 :
									     s->conf.channel));
		if (rc < 0) {
			snprintf(err, errlen, "%s:%d: cannot put venue %s in recovery mode (error %d)",
				 path, entries[i].lineno, feed_venue_name(s->conf.venue), -rc);
			goto fail;
		}
	}
	c->seen_changes = c->t.changes(c->t.ctx) - 1;
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
		struct service *s = &c->svc[i];

		if (s->conf.service->gap_fill)
			s->conf.service->gap_fill->close(s);
		free(s->fill_ns);
		if (s->snap)
			s->snap_service->snapshot->destroy(s->snap);
	}
	if (c->t.close)
		c->t.close(c->t.ctx);
	free(c);
}

int recovery_tcp_connect(uint32_t ip, uint16_t port)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	to.sin_addr.s_addr = htonl(ip);
	to.sin_port = htons(port);
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

bool recovery_tcp_read(int fd, uint8_t *buf, uint32_t cap, uint32_t *len)
{
	ssize_t n = -1;

	while (*len < cap && (n = recv(fd, buf + *len, cap - *len, MSG_DONTWAIT)) > 0)
		*len += (uint32_t)n;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

uint64_t recovery_backoff(uint64_t *backoff_ns)
{
	uint64_t wait = *backoff_ns;

	*backoff_ns = wait * 2 < recovery_ms_ns(RECOVERY_MAX_BACKOFF_MS) ? wait * 2 :
		      recovery_ms_ns(RECOVERY_MAX_BACKOFF_MS);
	return wait;
}

/* ---- requests ---------------------------------------------------------------- */

static void send_request(struct service *s, uint8_t unit, struct unit_rec *u,
			 const struct feed_recovery_stream *rs, uint64_t now)
{
	u->req_first = rs->missing_first;
	u->req_count = rs->missing_count;
	s->conf.service->gap_fill->request(s, unit, u, rs, now);
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

static uint64_t snapshots_given_up(const struct service *s)
{
	return s->snap ? s->snap_service->snapshot->given_up(s->snap) : 0;
}

/* A snapshot (glimpse, utpsnap, or a unit's spin) is wanted or under way. */
static bool snapshot_busy(const struct service *s)
{
	return s->snap && s->snap_service->snapshot->busy(s->snap);
}

/* Every message came (none declared lost, no snapshot given up): a fill to time. */
static bool filled_whole(const struct service *s, const struct unit_rec *u)
{
	return !u->gave_up && snapshots_given_up(s) == u->snapshots_given_up;
}

void recovery_take_replies(struct recovery_client *c, struct service *s, uint64_t recv_ts,
			   struct wb_ring_producer *out)
{
	uint8_t buf[RECOVERY_MAX_REPLY];
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		s->replies++;
		if (!s->has_line ||
		    c->t.recover_packet(c->t.ctx, s->line, buf, (uint32_t)n, recv_ts, out) < 0)
			s->bad_replies++;
	}
	/* A connected UDP socket learns of a closed port (ECONNREFUSED) here. */
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		s->last_errno = errno;
}

/* What the service said, anything at all: replies, refusals, deferrals. */
static uint64_t answers_of(const struct service *s)
{
	struct recovery_totals t = { .replies = s->replies, .refused = s->refused,
				     .deferred = s->deferred };
	const struct recovery_gap_fill_ops *gap_fill = s->conf.service->gap_fill;

	if (gap_fill && gap_fill->totals)
		gap_fill->totals(s, &t);
	return t.replies + t.refused + t.deferred;
}

static void say_service(const struct service *s, const char *what)
{
	struct in_addr a = { .s_addr = htonl(s->conf.ip) };

	fprintf(stderr, "recovery %s", feed_venue_name(s->conf.venue));
	if (s->conf.channel >= 0)
		fprintf(stderr, "/%d", s->conf.channel);
	fprintf(stderr, ": %s %s:%u %s", s->conf.service->name, inet_ntoa(a), s->conf.port, what);
	if (s->last_errno)
		fprintf(stderr, " (%s)", strerror(s->last_errno));
	fputc('\n', stderr);
}

/* The range is lost: an ordinary GAP, counted unrecoverable; the stream goes on. */
static void give_up(struct recovery_client *c, struct service *s, struct unit_rec *u,
		    const struct feed_recovery_stream *rs, uint64_t recv_ts,
		    struct wb_ring_producer *out)
{
	const struct recovery_gap_fill_ops *gap_fill = s->conf.service->gap_fill;

	s->given_up++;
	u->waiting = false;
	u->gave_up = true;
	if (gap_fill->forget)
		gap_fill->forget(s);
	c->t.recover_lost(c->t.ctx, rs->line, rs->unit, rs->missing_first, rs->missing_count,
			  recv_ts ? recv_ts : rs->since, out);
}

/* One stream the engine says is recovering: ask, retry or give up. */
static void drive(struct recovery_client *c, struct service *s,
		  const struct feed_recovery_stream *rs, uint64_t now, uint64_t recv_ts,
		  struct wb_ring_producer *out)
{
	struct unit_rec *u = &s->u[rs->unit];
	const struct recovery_gap_fill_ops *gap_fill = s->conf.service->gap_fill;

	if (!u->recovering || u->episode != rs->episode) {
		if (u->recovering && filled_whole(s, u)) /* the previous one ended between two polls */
			note_fill(s, now - u->began);
		if (!u->recovering)
			s->nrec++;
		u->recovering = true;
		u->episode = rs->episode;
		u->began = now;
		u->waiting = false;
		u->gave_up = false;
		u->snapshots_given_up = snapshots_given_up(s);
	}
	u->line = rs->line;
	u->since = rs->since;
	if (s->snap && s->snap_service->snapshot->drive(s->snap, rs, gap_fill != NULL, u->began,
							  now, recv_ts, out)) {
		u->waiting = false;	/* a late reply is refused by the engine */
		return;
	}
	if (!gap_fill) {
		/* A unit no spin line serves, of a venue without gap fill: nothing will fill it. */
		if (s->conf.service->takes_unit && rs->state == FEED_REC_GAP && rs->missing_count) {
			u->gave_up = true;
			c->t.recover_lost(c->t.ctx, rs->line, rs->unit, rs->missing_first,
					  rs->missing_count, recv_ts ? recv_ts : rs->since, out);
		}
		return;
	}
	if (rs->state != FEED_REC_GAP || !rs->missing_count ||
	    (s->conf.service->needs_session && !rs->has_session))
		return;		/* a snapshot: its service drives it (xdp: a refresh; glimpse) */
	/* A late join: xdp's refresh, not the whole morning re-requested. */
	if (gap_fill->late_join && gap_fill->late_join(c, s, rs, now, recv_ts, out))
		return;
	if (!u->waiting || rs->missing_first != u->req_first) {
		/* New, or progress (a reply filled the start): ask for what is left. */
		if (s->down && now < s->probe_at) {
			give_up(c, s, u, rs, recv_ts, out);	/* not worth a wait: it is silent */
			return;
		}
		u->waiting = true;
		/* A down service's probe: one request, one wait. */
		u->tries = s->down ? s->conf.retries : 0;
		u->answers_at_request = answers_of(s);
		send_request(s, rs->unit, u, rs, now);
		u->deadline = now + recovery_ms_ns(s->conf.timeout_ms);
		return;
	}
	if (now < u->deadline)
		return;
	if (!s->said_silent && answers_of(s) == u->answers_at_request) {
		s->said_silent = true;
		say_service(s, "did not answer a request: asking again on the backoff");
	}
	if (u->tries >= s->conf.retries) {
		/* The service does not answer: the range is lost, the stream goes on. */
		if (answers_of(s) == u->answers_at_request) {
			if (!s->down) {
				s->down = true;
				s->answers_when_down = answers_of(s);
				s->probe_backoff_ns = recovery_ms_ns(s->conf.timeout_ms);
				say_service(s, "answered no request for the whole range: its "
					    "ranges are lost at once while it is silent, a "
					    "request now and then tells when it is back");
			}
			s->probe_at = now + recovery_backoff(&s->probe_backoff_ns);
		}
		give_up(c, s, u, rs, recv_ts, out);
		return;
	}
	u->tries++;
	s->retries++;
	send_request(s, rs->unit, u, rs, now);
	uint64_t wait = recovery_ms_ns(s->conf.timeout_ms) << (u->tries < 16 ? u->tries : 16);

	u->deadline = now + (wait < recovery_ms_ns(RECOVERY_MAX_BACKOFF_MS) ? wait :
			     recovery_ms_ns(RECOVERY_MAX_BACKOFF_MS));
}

void recovery_client_poll(struct recovery_client *c, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	bool active = false;
	int n;

	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		if (s->conf.service->gap_fill)
			s->conf.service->gap_fill->pump(c, s, now, recv_ts, out);
		if (s->snap)
			s->snap_service->snapshot->poll(s->snap, now, recv_ts, out);
		active |= snapshot_busy(s);
		active |= s->nrec > 0;
		if (s->down && answers_of(s) != s->answers_when_down) {
			s->down = false;
			s->said_silent = false;
			s->last_errno = 0;
			say_service(s, "answers again");
		}
	}
	/* Nothing in progress and nothing new: one look. */
	uint32_t changes = c->t.changes(c->t.ctx);

	if (!active && c->seen_changes == changes)
		return;
	c->seen_changes = changes;
	n = c->t.list(c->t.ctx, c->list, MAX_LIST, false);
	if (n > MAX_LIST)
		n = MAX_LIST;
	for (int i = 0; i < c->n; i++)
		c->svc[i].held = 0;
	if (!++c->pass)
		c->pass = 1;	/* 0 is "never" */
	for (int k = 0; k < n; k++) {
		const struct feed_recovery_stream *rs = &c->list[k];
		struct service *s = service_of(c, rs->venue, rs->channel);

		if (!s)
			continue;
		c->seen[s - c->svc][rs->unit] = c->pass;
		s->line = rs->line;
		s->has_line = true;
		s->held += rs->held;
		drive(c, s, rs, now, recv_ts ? recv_ts : rs->since, out);
	}
	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		for (int k = 0; s->nrec && k < UNITS; k++) {
			struct unit_rec *u = &s->u[k];

			if (!u->recovering || c->seen[i][k] == c->pass)
				continue;
			if (filled_whole(s, u))
				note_fill(s, now - u->began);
			u->recovering = false;
			u->waiting = false;
			s->nrec--;
		}
	}
}

int recovery_client_busy(const struct recovery_client *c, uint32_t *held)
{
	int busy = 0;
	uint32_t h = 0;

	for (int i = 0; i < c->n; i++) {
		busy += c->svc[i].nrec;
		/* A snapshot retried after an abort waits with nothing held. */
		busy += !c->svc[i].nrec && snapshot_busy(&c->svc[i]);
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
		if ((c->svc[i].nrec || snapshot_busy(&c->svc[i])) &&
		    c->svc[i].conf.venue < WB_VENUE_COUNT)
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
	int n = c->t.list(c->t.ctx, all, MAX_LIST, true);

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
		t->snapshots += all[k].snapshots;
	}
	t->requests = s->requests;
	t->retries = s->retries;
	t->replies = s->replies;
	t->given_up = s->given_up;
	t->refused = s->refused;
	t->deferred = s->deferred;
	t->connects = s->connects;
	t->disconnects = s->disconnects;
	t->logins_refused = s->logins_refused;
	if (s->conf.service->gap_fill && s->conf.service->gap_fill->totals)
		s->conf.service->gap_fill->totals(s, t);
	t->recovering = s->nrec > 0;
	for (int k = 0; k < UNITS && s->nrec; k++)
		if (s->u[k].recovering && now - s->u[k].began > t->recovering_for_ns)
			t->recovering_for_ns = now - s->u[k].began;
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
		const struct recovery_gap_fill_ops *gap_fill = c->svc[i].conf.service->gap_fill;

		recovery_client_totals(c, i, now, &t);
		fprintf(f, "recovery %s", feed_venue_name(t.venue));
		if (t.channel >= 0)
			fprintf(f, "/%d", t.channel);
		fprintf(f, " (%s %s:%u): ", c->svc[i].conf.service->name, inet_ntoa(a),
			c->svc[i].conf.port);
		if (t.recovering) {
			fprintf(f, "STALE, recovering for ");
			print_ns(f, t.recovering_for_ns);
		} else {
			fprintf(f, "in sequence");
		}
		fprintf(f, "; gaps %" PRIu64 ", filled %" PRIu64 ", unrecoverable %" PRIu64
			", messages recovered %" PRIu64 ", lost %" PRIu64 ", snapshots %" PRIu64
			"; requests %" PRIu64 ", retries %" PRIu64 ", replies %" PRIu64, t.gaps,
			t.filled, t.unrecoverable, t.messages, t.lost, t.snapshots, t.requests,
			t.retries, t.replies);
		if (gap_fill && gap_fill->print)
			gap_fill->print(&c->svc[i], &t, f);
		fprintf(f, "; fill time p50 ");
		print_ns(f, t.fill_p50_ns);
		fprintf(f, " p99 ");
		print_ns(f, t.fill_p99_ns);
		fprintf(f, " max ");
		print_ns(f, t.fill_max_ns);
		fprintf(f, " (%" PRIu64 " fills)\n", t.fills);
		if (c->svc[i].snap)
			c->svc[i].snap_service->snapshot->print(c->svc[i].snap, now, f);
	}
}
