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

#include "common/metrics.h"
#include "common/put_bytes.h"
#include "recovery/recovery_xdp.h"
#include "recovery/recovery_snapshot.h"
#include "recovery/recovery_spin.h"
#include "recovery/pitch_session.h"

#define MOLD_HEADER 20
#define MAX_REPLY 2048
#define MAX_LIST 256
#define UNITS 256		/* a PITCH unit is a byte; Mold streams are unit 0 */

/* Cboe GRP (docs/specs/cboe-grp-notes.md): framed in Sequenced Unit Headers. */
#define PITCH_HEADER 8
#define GRP_LOGIN_RESPONSE 0x02
#define GRP_GAP_REQUEST 0x03
#define GRP_GAP_RESPONSE 0x04
#define GRP_MAX_COUNT 65535
#define GRP_RCVBUF (4 << 20)

enum grp_state { GRP_DOWN, GRP_CONNECTING, GRP_LOGIN_SENT, GRP_UP };

/* One stream's recovery in progress (a Mold stream is unit 0). */
struct unit_rec {
	bool recovering;
	bool gave_up;		/* part of it was declared lost: no fill time */
	bool waiting;		/* a request is in flight */
	uint16_t line;		/* a line of the stream's group */
	uint32_t episode;
	uint32_t tries;		/* unanswered sends of this request */
	uint64_t began;		/* now_ns when the client first saw it */
	uint64_t since;		/* the engine's receive time of its start */
	uint64_t req_first, req_count;
	uint64_t deadline;
	uint64_t snapshots_given_up;	/* the snapshot service's count when it began */
};

struct service {
	struct recovery_conf_entry conf;
	int fd;			/* mold: the socket to the service; grp: the gap-response one */
	int tcp;		/* grp: the session, -1 while down */
	int state;		/* grp: enum grp_state */
	uint64_t next_connect, backoff_ns, login_deadline;
	uint8_t in[512];	/* grp: what the session sent, not yet a whole frame */
	uint32_t inlen;
	int line;		/* a line of the stream's group (to name the stream) */
	bool has_line;
	int nrec;		/* units recovering */
	uint32_t held;
	struct unit_rec u[UNITS];
	struct xdp_client *xdp;	/* xdp: its session and retransmission channel */
	struct snapshot_session *snap;	/* the stream's snapshot service (glimpse), or NULL */
	struct spin_set *spin;	/* its Spin servers (PITCH, one per unit), or NULL */
	/* counters */
	uint64_t requests, retries, replies, bad_replies, given_up, refused, deferred;
	uint64_t connects, disconnects, logins_refused;
	uint64_t *fill_ns;	/* every fill time, sorted when reported */
	size_t fills, fill_cap;
};

struct recovery_client {
	struct recovery_target t;
	int n;
	struct service svc[RECOVERY_MAX_SERVICES];
	uint32_t seen_changes;
	uint32_t pass;		/* bumped by every look at the engine's list */
	uint32_t seen[RECOVERY_MAX_SERVICES][UNITS];	/* the pass a unit was last listed in */
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
	char *tok[14], *save = NULL, *t;
	bool timeout_given = false, retries_given = false;
	int n = 0;
	char why[160];

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
	if (strcmp(tok[1], "mold") == 0) {
		en->kind = RECOVERY_MOLD;
	} else if (strcmp(tok[1], "grp") == 0) {
		en->kind = RECOVERY_GRP;
	} else if (strcmp(tok[1], "xdp") == 0) {
		en->kind = RECOVERY_XDP;
	} else if (strcmp(tok[1], "glimpse") == 0 || strcmp(tok[1], "utpsnap") == 0) {
		en->kind = tok[1][0] == 'g' ? RECOVERY_GLIMPSE : RECOVERY_UTPSNAP;
		en->max_gap = RECOVERY_DEFAULT_MAX_GAP;
		en->max_age_ms = RECOVERY_DEFAULT_MAX_AGE_MS;
	} else if (!strcmp(tok[1], "spin")) {
		en->kind = RECOVERY_SPIN;
		en->max_gap = RECOVERY_DEFAULT_MAX_GAP;
		en->max_age_ms = RECOVERY_DEFAULT_MAX_AGE_MS;
	} else {
		return conf_error(err, errlen, path, lineno,
				  "unknown service (mold, grp, xdp, glimpse, utpsnap, spin)", tok[1]);
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
		if (en->kind == RECOVERY_XDP) {
			int taken = xdp_conf_key(en, tok[i], why, sizeof(why));

			if (taken < 0)
				return conf_error(err, errlen, path, lineno, why, tok[i]);
			if (taken)
				continue;
		}
		if (!strncmp(tok[i], "max-gap=", 8) || !strncmp(tok[i], "max-age=", 8)) {
			if (!recovery_kind_is_snapshot(en->kind))
				return conf_error(err, errlen, path, lineno,
						  "only a snapshot service (glimpse, utpsnap, spin) "
						  "takes max-gap=, max-age=", tok[i]);
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
			/* SoupBinTCP logins (glimpse, utpsnap) take 6-character names, GRP's 4. */
			bool glimpse_login = (en->kind == RECOVERY_GLIMPSE ||
					      en->kind == RECOVERY_UTPSNAP) && tok[i][0] != 'g';
			bool spin_login = en->kind == RECOVERY_SPIN && tok[i][0] != 'g';

			if (en->kind != RECOVERY_GRP && !glimpse_login && !spin_login)
				return conf_error(err, errlen, path, lineno,
						  "only a grp service takes gap=; grp, glimpse, "
						  "utpsnap and spin take user=, password=", tok[i]);
			if (tok[i][0] == 'g') {
				if (metrics_parse_address(eq + 1, &en->gap_ip, &en->gap_port, why,
							  sizeof(why)) || !en->gap_port)
					return conf_error(err, errlen, path, lineno,
							  "gap= wants ADDR:PORT with a port", tok[i]);
			} else if (tok[i][0] == 'u') {
				if (strlen(eq + 1) > (glimpse_login ? 6u : 4u))
					return conf_error(err, errlen, path, lineno, glimpse_login ?
							  "user= has at most 6 characters (SoupBinTCP)" :
							  "user= has at most 4 characters", tok[i]);
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
			if (en->kind != RECOVERY_SPIN)
				return conf_error(err, errlen, path, lineno,
						  "only a spin service takes unit=", tok[i]);
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
	if (recovery_kind_is_snapshot(en->kind) && !timeout_given)
		en->timeout_ms = RECOVERY_SNAPSHOT_TIMEOUT_MS;
	if (recovery_kind_is_snapshot(en->kind) && !retries_given)
		en->retries = RECOVERY_SNAPSHOT_RETRIES;
	if (en->kind == RECOVERY_SPIN && en->unit < 0)
		return conf_error(err, errlen, path, lineno,
				  "a spin service needs unit=N (a Spin server serves one unit; one "
				  "line per unit)", NULL);
	if (en->kind == RECOVERY_GRP && !en->gap_port)
		return conf_error(err, errlen, path, lineno,
				  "a grp service needs gap=ADDR:PORT (where its gap responses arrive)",
				  NULL);
	if (en->kind == RECOVERY_XDP && (!en->gap_port || !en->source_id[0]))
		return conf_error(err, errlen, path, lineno,
				  "an xdp service needs retrans=ADDR:PORT (where its retransmissions "
				  "arrive) and user=SOURCEID", NULL);
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
			    recovery_kind_is_snapshot(out[i].kind) ==
			    recovery_kind_is_snapshot(out[n].kind) && out[i].unit == out[n].unit)
				rc = conf_error(err, errlen, path, lineno,
						recovery_kind_is_snapshot(out[n].kind) ?
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

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

static const char *kind_name(int kind)
{
	return kind == RECOVERY_GRP ? "grp" : kind == RECOVERY_XDP ? "xdp" :
	       kind == RECOVERY_GLIMPSE ? "glimpse" : kind == RECOVERY_UTPSNAP ? "utpsnap" :
	       kind == RECOVERY_SPIN ? "spin" : "mold";
}

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
		/* A snapshot service serves one protocol (GLIMPSE: ITCH, UTP Snap-Shot:
		 * UQDF, Spin: PITCH). */
		const char *wants = en->kind == RECOVERY_SPIN ? "pitch" :
				    snapshot_service_protocol(en->kind);
		const char *serves = !recovery_kind_is_snapshot(en->kind) ?
				     feed_protocol_recovery(l->protocol) :
				     !strcmp(feed_protocol_name(l->protocol), wants) ?
				     kind_name(en->kind) : NULL;

		if (!serves || strcmp(serves, kind_name(en->kind))) {
			snprintf(err, errlen, "%s:%d: venue %s is %s, which a %s service cannot "
				 "serve", path, en->lineno, feed_venue_name(en->venue),
				 feed_protocol_name(l->protocol), kind_name(en->kind));
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

/* grp: the socket the gap responses arrive on, bound (and joined when multicast). */
static int gap_socket(const struct recovery_conf_entry *en)
{
	struct sockaddr_in at = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, rcv = GRP_RCVBUF;
	bool multicast = (en->gap_ip >> 28) == 0xe;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	at.sin_addr.s_addr = htonl(en->gap_ip);
	at.sin_port = htons(en->gap_port);
	if (bind(fd, (struct sockaddr *)&at, sizeof(at)) < 0)
		goto fail;
	if (multicast) {
		struct ip_mreq mr = { .imr_multiaddr.s_addr = htonl(en->gap_ip) };

		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
			goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* mold: a socket connected to the service (replies from anyone else are not ours). */
static int mold_socket(const struct recovery_conf_entry *en)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	to.sin_addr.s_addr = htonl(en->ip);
	to.sin_port = htons(en->port);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
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
		bool snapshot = recovery_kind_is_snapshot(entries[i].kind);

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
			if (entries[i].kind == RECOVERY_SPIN ?
			    spin_set_add(&s->spin, &c->t, &entries[i]) < 0 :
			    !(s->snap = snapshot_session_create(&c->t, &entries[i]))) {
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
		s->tcp = -1;
		s->state = GRP_DOWN;
		s->backoff_ns = ms_ns(s->conf.timeout_ms);
		if (s->conf.kind == RECOVERY_XDP) {
			char why[200];

			s->fd = -1;
			s->xdp = xdp_client_create(&s->conf, why, sizeof(why));
			if (!s->xdp) {
				snprintf(err, errlen, "%s:%d: %s", path, entries[i].lineno, why);
				goto fail;
			}
		} else {
			s->fd = s->conf.kind == RECOVERY_GRP ? gap_socket(&s->conf) :
				mold_socket(&s->conf);
		}
		if (s->fd < 0 && !s->xdp) {
			snprintf(err, errlen, "%s:%d: %s: %s", path, entries[i].lineno,
				 s->conf.kind == RECOVERY_GRP ? "the gap-response socket (gap=)" :
				 "socket to the service", strerror(errno));
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
		if (c->svc[i].fd >= 0)
			close(c->svc[i].fd);
		xdp_client_destroy(c->svc[i].xdp);
		if (c->svc[i].tcp >= 0)
			close(c->svc[i].tcp);
		free(c->svc[i].fill_ns);
		snapshot_session_destroy(c->svc[i].snap);
		spin_set_destroy(c->svc[i].spin);
	}
	if (c->t.close)
		c->t.close(c->t.ctx);
	free(c);
}

/* ---- the GRP session ------------------------------------------------------- */

/* One message in a Sequenced Unit Header of unit 0, sequence 0; -1: the session broke. */
static int grp_send(struct service *s, uint8_t type, const uint8_t *body, uint8_t blen)
{
	uint8_t f[PITCH_HEADER + 2 + 32];
	size_t len = pitch_session_message(f, type, body, blen);

	/* Frames this small never part-fill an empty socket buffer; a full one is a dead session. */
	return send(s->tcp, f, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len ? 0 : -1;
}

static void grp_down(struct service *s, uint64_t now)
{
	if (s->tcp >= 0) {
		close(s->tcp);
		s->tcp = -1;
		s->disconnects += s->state == GRP_UP;
	}
	s->state = GRP_DOWN;
	s->inlen = 0;
	s->next_connect = now + recovery_backoff(&s->backoff_ns);
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

uint64_t recovery_backoff(uint64_t *backoff_ns)
{
	uint64_t wait = *backoff_ns;

	*backoff_ns = wait * 2 < ms_ns(RECOVERY_MAX_BACKOFF_MS) ? wait * 2 :
		      ms_ns(RECOVERY_MAX_BACKOFF_MS);
	return wait;
}

static void grp_connect(struct service *s, uint64_t now)
{
	s->connects++;
	s->tcp = recovery_tcp_connect(s->conf.ip, s->conf.port);
	if (s->tcp < 0) {
		grp_down(s, now);
		return;
	}
	s->state = GRP_CONNECTING;
	s->login_deadline = now + ms_ns(RECOVERY_MAX_BACKOFF_MS);
}

static void grp_login(struct service *s, uint64_t now)
{
	uint8_t f[PITCH_SESSION_HEADER + PITCH_LOGIN_LEN];
	size_t len = pitch_session_login(f, s->conf.user, s->conf.password);

	if (send(s->tcp, f, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len) {
		grp_down(s, now);
		return;
	}
	s->state = GRP_LOGIN_SENT;
}

static bool grp_send_request(struct service *s, uint8_t unit, const struct unit_rec *u,
			     uint64_t now)
{
	uint8_t body[7];

	if (s->state != GRP_UP)
		return false;
	body[0] = unit;
	put_le32(body + 1, (uint32_t)u->req_first);
	put_le16(body + 5, (uint16_t)u->req_count);
	if (grp_send(s, GRP_GAP_REQUEST, body, sizeof(body))) {
		grp_down(s, now);
		return false;
	}
	return true;
}

static void send_request(struct service *s, uint8_t unit, struct unit_rec *u,
			 const struct feed_recovery_stream *rs, uint64_t now);

/* A Gap Response: a refusal declares the range lost (the stream goes on). */
static void grp_gap_response(struct recovery_client *c, struct service *s, const uint8_t *m,
			     uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint8_t unit = m[2];
	uint64_t seq = (uint64_t)m[3] | (uint64_t)m[4] << 8 | (uint64_t)m[5] << 16 |
		       (uint64_t)m[6] << 24;
	struct unit_rec *u = &s->u[unit];

	if (m[9] == 'A' || !u->waiting || seq != u->req_first)
		return;		/* accepted (the messages come on gap=), or an old answer */
	if (m[9] == 'M' || m[9] == 'S' || m[9] == 'U') {
		/* Quota per minute or second, unit unavailable: for now. Asked again at the
		 * unit's deadline, with its backoff, within its retries. */
		s->deferred++;
		return;
	}
	s->refused++;
	u->waiting = false;
	u->gave_up = true;
	c->t.recover_lost(c->t.ctx, u->line, unit, u->req_first, u->req_count,
			  recv_ts ? recv_ts : u->since, out);
}

static void grp_message(struct recovery_client *c, struct service *s, const uint8_t *m,
			uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (m[1] == GRP_LOGIN_RESPONSE && m[0] >= 3 && s->state == GRP_LOGIN_SENT) {
		if (m[2] != 'A') {
			if (!s->logins_refused++)
				fprintf(stderr, "recovery %s: grp %s:%u refused the login '%s' (status "
					"%c); retrying\n", feed_venue_name(s->conf.venue),
					inet_ntoa((struct in_addr){ htonl(s->conf.ip) }),
					s->conf.port, s->conf.user, m[2]);
			grp_down(s, now);
			return;
		}
		/* The backoff is reset by an answer, not a login: a proxy that logs in and hangs up is down. */
		s->state = GRP_UP;
		/* What waited for the session is asked for now. */
		for (int k = 0; k < UNITS; k++)
			if (s->u[k].waiting && grp_send_request(s, (uint8_t)k, &s->u[k], now)) {
				s->requests++;
				s->u[k].deadline = now + ms_ns(s->conf.timeout_ms);
			}
	} else if (m[1] == GRP_GAP_RESPONSE && m[0] >= 10 && s->state == GRP_UP) {
		s->backoff_ns = ms_ns(s->conf.timeout_ms);
		grp_gap_response(c, s, m, recv_ts, out);
	}
}

/* The session: connect, log in, read what it says. Never blocks. */
static void grp_pump(struct recovery_client *c, struct service *s, uint64_t now,
		     uint64_t recv_ts, struct wb_ring_producer *out)
{
	ssize_t n = -1;
	uint32_t used = 0;
	bool hung_up;

	if (s->state == GRP_DOWN) {
		if (s->nrec && now >= s->next_connect)
			grp_connect(s, now);
		if (s->state == GRP_DOWN)
			return;
	}
	if (s->state == GRP_CONNECTING) {
		struct pollfd pf = { .fd = s->tcp, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (poll(&pf, 1, 0) <= 0) {
			if (now > s->login_deadline)
				grp_down(s, now);
			return;
		}
		if (getsockopt(s->tcp, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			grp_down(s, now);
			return;
		}
		grp_login(s, now);
		if (s->state != GRP_LOGIN_SENT)
			return;
	}
	while (s->inlen < sizeof(s->in) &&
	       (n = recv(s->tcp, s->in + s->inlen, sizeof(s->in) - s->inlen, MSG_DONTWAIT)) > 0)
		s->inlen += (uint32_t)n;
	/* What came before a hang-up (a refused login's response) is read first. */
	hung_up = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
	while (s->inlen - used >= PITCH_HEADER) {
		const uint8_t *f = s->in + used;
		uint16_t flen = (uint16_t)(f[0] | f[1] << 8);
		uint32_t off = PITCH_HEADER;

		if (flen < PITCH_HEADER || flen > sizeof(s->in)) {
			grp_down(s, now);
			return;
		}
		if (s->inlen - used < flen)
			break;
		for (uint8_t k = 0; k < f[2]; k++) {
			if (off + 2 > flen || f[off] < 2 || off + f[off] > flen)
				break;
			grp_message(c, s, f + off, now, recv_ts, out);
			if (s->state == GRP_DOWN)
				return;
			off += f[off];
		}
		used += flen;
	}
	memmove(s->in, s->in + used, s->inlen - used);
	s->inlen -= used;
	if (hung_up || (s->state == GRP_LOGIN_SENT && now > s->login_deadline))
		grp_down(s, now);
}

/* ---- requests ---------------------------------------------------------------- */

static void mold_send_request(struct service *s, const struct feed_recovery_stream *rs)
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

static void send_request(struct service *s, uint8_t unit, struct unit_rec *u,
			 const struct feed_recovery_stream *rs, uint64_t now)
{
	u->req_first = rs->missing_first;
	u->req_count = rs->missing_count;
	if (s->conf.kind == RECOVERY_MOLD) {
		mold_send_request(s, rs);
		return;
	}
	if (s->conf.kind == RECOVERY_XDP) {
		if (u->req_count > XDP_MAX_RETRANS)
			u->req_count = XDP_MAX_RETRANS;
		/* Without a session the request goes when one is up. */
		if (xdp_client_request(s->xdp, u->req_first, u->req_count, now))
			s->requests++;
		return;
	}
	if (u->req_count > GRP_MAX_COUNT)
		u->req_count = GRP_MAX_COUNT;
	/* Without a session the request goes when the login is accepted. */
	if (grp_send_request(s, unit, u, now))
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

static uint64_t snapshots_given_up(const struct service *s)
{
	return (s->snap ? snapshot_session_given_up(s->snap) : 0) + spin_set_given_up(s->spin);
}

/* A snapshot (glimpse, or a unit's spin) is wanted or under way. */
static bool snapshot_busy(const struct service *s)
{
	return (s->snap && snapshot_session_busy(s->snap)) || spin_set_busy(s->spin);
}

/* Every message came (none declared lost, no snapshot given up): a fill to time. */
static bool filled_whole(const struct service *s, const struct unit_rec *u)
{
	return !u->gave_up && snapshots_given_up(s) == u->snapshots_given_up;
}

static void take_replies(struct recovery_client *c, struct service *s, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	uint8_t buf[MAX_REPLY];
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		s->replies++;
		if (!s->has_line ||
		    c->t.recover_packet(c->t.ctx, s->line, buf, (uint32_t)n, recv_ts, out) < 0)
			s->bad_replies++;
	}
}

/* One stream the engine says is recovering: ask, retry or give up. */
static void drive(struct recovery_client *c, struct service *s,
		  const struct feed_recovery_stream *rs, uint64_t now, uint64_t recv_ts,
		  struct wb_ring_producer *out)
{
	struct unit_rec *u = &s->u[rs->unit];

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
	if (s->snap && snapshot_session_drive(s->snap, rs, !recovery_kind_is_snapshot(s->conf.kind),
					      u->began, now, recv_ts, out)) {
		u->waiting = false;	/* a late reply is refused by the engine */
		return;
	}
	if (spin_set_drive(s->spin, rs, !recovery_kind_is_snapshot(s->conf.kind), u->began, now,
			   recv_ts, out)) {
		u->waiting = false;
		return;
	}
	if (recovery_kind_is_snapshot(s->conf.kind)) {
		/* A unit no spin line serves, of a venue without gap fill: nothing will fill it. */
		if (s->conf.kind == RECOVERY_SPIN && rs->state == FEED_REC_GAP && rs->missing_count) {
			u->gave_up = true;
			c->t.recover_lost(c->t.ctx, rs->line, rs->unit, rs->missing_first,
					  rs->missing_count, recv_ts ? recv_ts : rs->since, out);
		}
		return;
	}
	if (rs->state != FEED_REC_GAP || !rs->missing_count ||
	    (s->conf.kind == RECOVERY_MOLD && !rs->has_session))
		return;		/* a snapshot: its service drives it (xdp: a refresh; glimpse) */
	if (s->xdp && xdp_client_refresh_wanted(s->xdp, rs)) {
		/* A late join: the channel's refresh, not the whole morning re-requested. */
		xdp_client_refresh_begin(s->xdp, &c->t, rs->line, now, recv_ts, out);
		return;
	}
	if (!u->waiting || rs->missing_first != u->req_first) {
		/* New, or progress (a reply filled the start): ask for what is left. */
		u->waiting = true;
		u->tries = 0;
		send_request(s, rs->unit, u, rs, now);
		u->deadline = now + ms_ns(s->conf.timeout_ms);
		return;
	}
	if (now < u->deadline)
		return;
	if (u->tries >= s->conf.retries) {
		/* The service does not answer: the range is lost, the stream goes on. */
		s->given_up++;
		u->waiting = false;
		u->gave_up = true;
		if (s->xdp)
			xdp_client_forget(s->xdp);
		c->t.recover_lost(c->t.ctx, rs->line, rs->unit, rs->missing_first,
				  rs->missing_count, recv_ts ? recv_ts : rs->since, out);
		return;
	}
	u->tries++;
	s->retries++;
	send_request(s, rs->unit, u, rs, now);
	uint64_t wait = ms_ns(s->conf.timeout_ms) << (u->tries < 16 ? u->tries : 16);

	u->deadline = now + (wait < ms_ns(RECOVERY_MAX_BACKOFF_MS) ? wait :
			     ms_ns(RECOVERY_MAX_BACKOFF_MS));
}

void recovery_client_poll(struct recovery_client *c, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	bool active = false;
	int n;

	for (int i = 0; i < c->n; i++) {
		struct service *s = &c->svc[i];

		if (s->conf.kind == RECOVERY_GRP &&
		    (s->nrec || s->state == GRP_CONNECTING || s->state == GRP_LOGIN_SENT))
			grp_pump(c, s, now, recv_ts, out);
		if (s->xdp) {
			int got = xdp_client_pump(s->xdp, &c->t, s->line, s->has_line, s->nrec > 0,
						  now, recv_ts ? recv_ts : s->u[0].since, out);

			if (got & XDP_PUMP_LOST) {
				/* Refused or unavailable: what is left is asked for anew. */
				s->u[0].gave_up = true;
				s->u[0].waiting = false;
			}
			if (got & XDP_PUMP_SENT) {
				s->requests++;
				s->u[0].deadline = now + ms_ns(s->conf.timeout_ms);
			}
			active |= s->nrec > 0;
			continue;
		}
		if (s->nrec && s->fd >= 0)
			take_replies(c, s, recv_ts ? recv_ts : 1, out);
		if (s->snap)
			snapshot_session_poll(s->snap, now, recv_ts, out);
		spin_set_poll(s->spin, now, recv_ts, out);
		active |= snapshot_busy(s);
		active |= s->nrec > 0;
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
	if (s->xdp) {
		struct xdp_client_counts x;

		xdp_client_counts(s->xdp, &x);
		t->replies = x.replies;
		t->refused = x.refused;
		t->connects = x.connects;
		t->disconnects = x.disconnects;
	}
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

		recovery_client_totals(c, i, now, &t);
		fprintf(f, "recovery %s", feed_venue_name(t.venue));
		if (t.channel >= 0)
			fprintf(f, "/%d", t.channel);
		fprintf(f, " (%s %s:%u): ", kind_name(c->svc[i].conf.kind), inet_ntoa(a),
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
		if (c->svc[i].conf.kind == RECOVERY_GRP)
			fprintf(f, "; refused %" PRIu64 ", deferred %" PRIu64 "; session %s, connects %"
				PRIu64 ", disconnects %" PRIu64 ", logins refused %" PRIu64
				"; fill time p50 ", t.refused, t.deferred,
				c->svc[i].state == GRP_UP ? "up" : "down", t.connects,
				t.disconnects, t.logins_refused);
		if (c->svc[i].xdp)
			xdp_client_print(c->svc[i].xdp, f);
		if (c->svc[i].conf.kind != RECOVERY_GRP)
			fprintf(f, "; fill time p50 ");
		print_ns(f, t.fill_p50_ns);
		fprintf(f, " p99 ");
		print_ns(f, t.fill_p99_ns);
		fprintf(f, " max ");
		print_ns(f, t.fill_max_ns);
		fprintf(f, " (%" PRIu64 " fills)\n", t.fills);
		if (c->svc[i].snap)
			snapshot_session_print(c->svc[i].snap, now, f);
		spin_set_print(c->svc[i].spin, now, f);
	}
}
