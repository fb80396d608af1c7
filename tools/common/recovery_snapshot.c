/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Late join by a snapshot over SoupBinTCP: GLIMPSE, UTP Snap-Shot (see recovery_snapshot.h). */
#include "common/recovery_snapshot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/put_bytes.h"
#include "common/soupbin.h"

#define MOLD_HEADER 20
#define BATCH_BYTES 1472	/* a snapshot packet handed to the engine: one UDP payload's worth */
#define IN_BYTES (64 * 1024)
#define READ_BUDGET (256 * 1024)	/* bytes taken per poll, so real time is never starved */

enum soup_state { SOUP_IDLE, SOUP_WAIT, SOUP_CONNECTING, SOUP_LOGIN_SENT, SOUP_UP };

struct snapshot_session {
	const struct recovery_target *target;
	struct recovery_conf_entry conf;
	const struct snapshot_service *service;
	int state;
	int fd;
	/* the stream being snapshotted */
	int line;
	uint8_t unit;
	bool begun;		/* feed_snapshot_begin was called for the current attempt */
	uint32_t applied;	/* snapshot messages applied in the current attempt */
	uint32_t episode;	/* the engine's recovery episode of the current snapshot */
	uint32_t done_episode;	/* the episode a snapshot ended: its rest is gap fill's */
	uint64_t done_next_seq;	/* where the last snapshot left the stream (0: none yet) */
	uint64_t since;		/* receive time of the recovery (file sources' clock) */
	uint64_t decided;	/* now_ns the snapshot was decided */
	uint64_t next_connect, backoff_ns, deadline, last_sent;
	uint32_t attempts;	/* failed attempts at the current snapshot */
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	uint8_t batch[BATCH_BYTES];
	uint32_t batch_len, batch_count;
	struct snapshot_totals t;
};

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

/*
 * What differs between the snapshot services: the protocol they serve, and
 * the message that ends the snapshot with the sequence to resume from.
 * Both send the protocol's own messages, packed here as MoldUDP64 blocks.
 */
struct snapshot_service {
	int kind;
	const char *name, *protocol;
	int (*end)(const uint8_t *m, size_t len, uint64_t *next_seq);
};

static const struct snapshot_service services[] = {
	{ RECOVERY_GLIMPSE, "glimpse", "itch", glimpse_end_of_snapshot },
	{ RECOVERY_UTPSNAP, "utpsnap", "uqdf", utp_snapshot_end },
};

static const struct snapshot_service *service_of_kind(int kind)
{
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++)
		if (services[i].kind == kind)
			return &services[i];
	return NULL;
}

const char *snapshot_service_protocol(int kind)
{
	const struct snapshot_service *sv = service_of_kind(kind);

	return sv ? sv->protocol : "";
}

struct snapshot_session *snapshot_session_create(const struct recovery_target *t,
						 const struct recovery_conf_entry *conf)
{
	const struct snapshot_service *service = service_of_kind(conf->kind);
	struct snapshot_session *ss = service ? calloc(1, sizeof(*ss)) : NULL;

	if (!ss)
		return NULL;
	ss->service = service;
	ss->target = t;
	ss->conf = *conf;
	ss->fd = -1;
	ss->line = -1;
	ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
	return ss;
}

void snapshot_session_destroy(struct snapshot_session *ss)
{
	if (!ss)
		return;
	if (ss->fd >= 0)
		close(ss->fd);
	free(ss);
}

static uint64_t ts_of(const struct snapshot_session *ss, uint64_t recv_ts)
{
	return recv_ts ? recv_ts : ss->since;
}

static void batch_reset(struct snapshot_session *ss)
{
	ss->batch_len = MOLD_HEADER;
	ss->batch_count = 0;
}

static void batch_flush(struct snapshot_session *ss, uint64_t recv_ts,
			struct wb_ring_producer *out)
{
	if (!ss->batch_count)
		return;
	/* The session and sequence of a snapshot packet mean nothing to the engine. */
	memset(ss->batch, ' ', 10);
	put_be64(ss->batch + 10, 0);
	put_be16(ss->batch + 18, ss->batch_count);
	if (ss->target->snapshot_packet(ss->target->ctx, ss->line, ss->unit, ss->batch, ss->batch_len,
				 ts_of(ss, recv_ts), out) < 0)
		ss->t.bad_packets++;
	ss->applied += ss->batch_count;
	ss->t.messages += ss->batch_count;
	batch_reset(ss);
}

static void batch_add(struct snapshot_session *ss, const uint8_t *m, size_t len, uint64_t recv_ts,
		      struct wb_ring_producer *out)
{
	if (len > BATCH_BYTES - MOLD_HEADER - 2) {
		ss->t.bad_packets++;	/* no ITCH or UQDF message is this long */
		return;
	}
	if (ss->batch_len + 2 + len > BATCH_BYTES || ss->batch_count == 0xfffe)
		batch_flush(ss, recv_ts, out);
	put_be16(ss->batch + ss->batch_len, len);
	memcpy(ss->batch + ss->batch_len + 2, m, len);
	ss->batch_len += (uint32_t)(2 + len);
	ss->batch_count++;
}

static void close_session(struct snapshot_session *ss)
{
	if (ss->fd >= 0) {
		close(ss->fd);
		ss->fd = -1;
	}
	ss->t.disconnects += ss->state == SOUP_UP;
	ss->inlen = 0;
}

/*
 * The attempt failed: retry after the backoff, aborting what was half
 * applied. After retries failed attempts the snapshot is given up: what it
 * should have covered is a GAP and the stream goes on (a file source must
 * not wait for ever; a later hole tries again).
 */
static void fail(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
		 struct wb_ring_producer *out)
{
	close_session(ss);
	if (++ss->attempts > ss->conf.retries) {
		if (ss->begun)
			ss->target->snapshot_abort(ss->target->ctx, ss->line, ss->unit, ts_of(ss, recv_ts), out);
		ss->t.given_up++;
		ss->begun = false;
		ss->applied = 0;
		ss->attempts = 0;
		ss->state = SOUP_IDLE;
		ss->done_episode = ss->episode;
		ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
		return;
	}
	if (ss->begun && ss->applied) {
		/* Half a book is not a book: what it should have covered is a GAP
		 * until the next attempt clears the books again. */
		ss->target->snapshot_abort(ss->target->ctx, ss->line, ss->unit, ts_of(ss, recv_ts), out);
		ss->t.aborted++;
		ss->begun = false;
	}
	ss->applied = 0;
	batch_reset(ss);
	ss->state = SOUP_WAIT;
	ss->next_connect = now + ss->backoff_ns;
	ss->backoff_ns *= 2;
	if (ss->backoff_ns > ms_ns(RECOVERY_MAX_BACKOFF_MS))
		ss->backoff_ns = ms_ns(RECOVERY_MAX_BACKOFF_MS);
}

static int send_all(struct snapshot_session *ss, const uint8_t *p, size_t len, uint64_t now)
{
	/* Client packets are tiny: an empty socket buffer takes them whole; a full one is a dead session. */
	if (send(ss->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -1;
	ss->last_sent = now;
	return 0;
}

static void begin(struct snapshot_session *ss, const struct feed_recovery_stream *rs, uint64_t now,
		  uint64_t recv_ts, struct wb_ring_producer *out)
{
	ss->line = rs->line;
	ss->unit = rs->unit;
	ss->since = rs->since;
	if (rs->state != FEED_REC_SNAPSHOT &&
	    ss->target->snapshot_begin(ss->target->ctx, rs->line, rs->unit, ts_of(ss, recv_ts), out) < 0)
		return;
	ss->begun = true;
	ss->applied = 0;
	ss->episode = rs->episode;
	if (ss->state == SOUP_IDLE) {
		ss->decided = now;
		ss->state = SOUP_WAIT;
		ss->next_connect = now;
	}
}

bool snapshot_session_drive(struct snapshot_session *ss, const struct feed_recovery_stream *rs,
			    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
			    struct wb_ring_producer *out)
{
	uint64_t size = rs->rec_end > rs->rec_first ? rs->rec_end - rs->rec_first : 0;
	bool late_join, too_big, too_old;

	if (rs->state == FEED_REC_SNAPSHOT) {
		/* Ours (or begun by someone else: take it over). */
		if (ss->state == SOUP_IDLE || ss->episode != rs->episode)
			begin(ss, rs, now, recv_ts, out);
		return true;
	}
	if (rs->state != FEED_REC_GAP)
		return false;
	if (rs->episode == ss->done_episode ||
	    (ss->done_next_seq && rs->rec_first == ss->done_next_seq)) {
		/* What a snapshot left (it ended before the first buffered packet)
		 * is gap fill's, or lost without one, whatever its size: another
		 * snapshot of the same age would leave the same hole. */
		if (!has_gap_fill && rs->missing_count)
			ss->target->recover_lost(ss->target->ctx, rs->line, rs->unit, rs->missing_first,
					  rs->missing_count, ts_of(ss, recv_ts), out);
		return has_gap_fill ? false : true;
	}
	late_join = rs->episode == 1 && rs->rec_first <= 1;
	too_big = size > ss->conf.max_gap;
	too_old = ss->conf.max_age_ms && now - began > ms_ns(ss->conf.max_age_ms);
	if (!late_join && !too_big && !too_old && has_gap_fill)
		return false;
	begin(ss, rs, now, recv_ts, out);
	return true;
}

static void on_message(struct snapshot_session *ss, const uint8_t *m, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint64_t next_seq;

	if (ss->service->end(m, len, &next_seq) == 0) {
		batch_flush(ss, recv_ts, out);
		if (ss->target->snapshot_end(ss->target->ctx, ss->line, ss->unit, next_seq, ts_of(ss, recv_ts),
				      out) < 0) {
			ss->t.bad_packets++;
			fail(ss, now, recv_ts, out);
			return;
		}
		ss->t.snapshots++;
		ss->t.last_ns = now - ss->decided;
		if (ss->t.last_ns > ss->t.max_ns)
			ss->t.max_ns = ss->t.last_ns;
		ss->done_episode = ss->episode;
		ss->done_next_seq = next_seq;
		ss->begun = false;
		ss->attempts = 0;
		ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
		uint8_t bye[3];

		(void)send_all(ss, bye, soup_empty(bye, SOUP_LOGOUT_REQUEST), now);
		close_session(ss);
		ss->state = SOUP_IDLE;
		return;
	}
	if (!len) {
		ss->t.bad_packets++;
		return;
	}
	if (!ss->begun)
		return;		/* aborted meanwhile: the next attempt starts over */
	batch_add(ss, m, len, recv_ts, out);
}

static void connect_now(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
			struct wb_ring_producer *out)
{
	struct sockaddr_in to = { .sin_family = AF_INET };

	ss->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ss->t.connects++;
	if (ss->fd < 0) {
		fail(ss, now, recv_ts, out);
		return;
	}
	to.sin_addr.s_addr = htonl(ss->conf.ip);
	to.sin_port = htons(ss->conf.port);
	if (connect(ss->fd, (struct sockaddr *)&to, sizeof(to)) < 0 && errno != EINPROGRESS) {
		fail(ss, now, recv_ts, out);
		return;
	}
	ss->state = SOUP_CONNECTING;
	ss->deadline = now + ms_ns(ss->conf.timeout_ms);
	batch_reset(ss);
}

/* After an abort the stream went on with a GAP: the next attempt clears its books again. */
static bool ready_to_connect(struct snapshot_session *ss, uint64_t recv_ts,
			     struct wb_ring_producer *out)
{
	if (ss->begun)
		return true;
	if (ss->target->snapshot_begin(ss->target->ctx, ss->line, ss->unit, ts_of(ss, recv_ts), out) < 0)
		return false;
	ss->begun = true;
	ss->applied = 0;
	return true;
}

static void read_session(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	size_t taken = 0;
	ssize_t n = -1;
	bool hung_up = false;

	for (;;) {
		uint32_t used = 0;

		while (ss->inlen < sizeof(ss->in) && taken < READ_BUDGET &&
		       (n = recv(ss->fd, ss->in + ss->inlen, sizeof(ss->in) - ss->inlen,
				 MSG_DONTWAIT)) > 0) {
			ss->inlen += (uint32_t)n;
			taken += (size_t)n;
		}
		hung_up = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
				     errno != EINTR);
		if (taken)
			ss->deadline = now + ms_ns(ss->conf.timeout_ms);
		for (;;) {
			uint8_t type;
			const uint8_t *p;
			size_t plen;
			long got = soup_next(ss->in + used, ss->inlen - used, &type, &p, &plen);

			if (got == 0 && used == 0 && ss->inlen == sizeof(ss->in))
				got = -1;	/* longer than any snapshot packet: not a server we know */
			if (got < 0) {
				ss->t.bad_packets++;
				fail(ss, now, recv_ts, out);
				return;
			}
			if (!got)
				break;
			used += (uint32_t)got;
			switch (type) {
			case SOUP_LOGIN_ACCEPTED:
				if (ss->state == SOUP_LOGIN_SENT)
					ss->state = SOUP_UP;
				break;
			case SOUP_LOGIN_REJECTED:
				if (!ss->t.logins_refused++)
					fprintf(stderr, "recovery %s: %s %s:%u refused the login "
						"'%s' (reason %c); retrying\n",
						feed_venue_name(ss->conf.venue), ss->service->name,
						inet_ntoa((struct in_addr){ htonl(ss->conf.ip) }),
						ss->conf.port, ss->conf.user, plen ? p[0] : '?');
				fail(ss, now, recv_ts, out);
				return;
			case SOUP_SEQUENCED_DATA:
				if (ss->state != SOUP_UP) {
					ss->t.bad_packets++;
					break;
				}
				on_message(ss, p, plen, now, recv_ts, out);
				if (ss->state != SOUP_UP)
					return;	/* ended (or failed) */
				break;
			case SOUP_SERVER_HEARTBEAT:
				ss->t.heartbeats_received++;
				break;
			case SOUP_END_OF_SESSION:
				/* Before the End of Snapshot: the snapshot is incomplete. */
				ss->t.hangups++;
				fail(ss, now, recv_ts, out);
				return;
			case SOUP_DEBUG:
				break;
			default:
				ss->t.bad_packets++;
				break;
			}
		}
		memmove(ss->in, ss->in + used, ss->inlen - used);
		ss->inlen -= used;
		if (hung_up || n <= 0 || taken >= READ_BUDGET)
			break;
	}
	if (hung_up) {
		ss->t.hangups++;
		fail(ss, now, recv_ts, out);
	}
}

void snapshot_session_poll(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
			   struct wb_ring_producer *out)
{
	if (ss->state == SOUP_IDLE)
		return;
	if (ss->state == SOUP_WAIT) {
		if (now < ss->next_connect || !ready_to_connect(ss, recv_ts, out))
			return;
		connect_now(ss, now, recv_ts, out);
		if (ss->state != SOUP_CONNECTING)
			return;
	}
	if (ss->state == SOUP_CONNECTING) {
		struct pollfd pf = { .fd = ss->fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		uint8_t login[2 + SOUP_LOGIN_REQUEST_LEN];

		if (poll(&pf, 1, 0) <= 0) {
			if (now > ss->deadline) {
				ss->t.stalls++;
				fail(ss, now, recv_ts, out);
			}
			return;
		}
		if (getsockopt(ss->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr ||
		    send_all(ss, login, soup_login_request(login, ss->conf.user, ss->conf.password,
							    "", 1), now)) {
			fail(ss, now, recv_ts, out);
			return;
		}
		ss->state = SOUP_LOGIN_SENT;
		ss->deadline = now + ms_ns(ss->conf.timeout_ms);
	}
	read_session(ss, now, recv_ts, out);
	if (ss->state != SOUP_LOGIN_SENT && ss->state != SOUP_UP)
		return;
	if (now > ss->deadline) {
		/* Nothing, not even a heartbeat: the server is gone. */
		ss->t.stalls++;
		fail(ss, now, recv_ts, out);
		return;
	}
	if (ss->state == SOUP_UP && now - ss->last_sent >= ms_ns(SOUP_HEARTBEAT_PERIOD_MS)) {
		uint8_t hb[3];

		if (send_all(ss, hb, soup_empty(hb, SOUP_CLIENT_HEARTBEAT), now))
			fail(ss, now, recv_ts, out);
		else
			ss->t.heartbeats_sent++;
	}
}

uint64_t snapshot_session_given_up(const struct snapshot_session *ss)
{
	return ss->t.given_up;
}

bool snapshot_session_busy(const struct snapshot_session *ss)
{
	return ss->state != SOUP_IDLE;
}

void snapshot_session_totals(const struct snapshot_session *ss, uint64_t now,
			     struct snapshot_totals *t)
{
	*t = ss->t;
	t->busy = ss->state != SOUP_IDLE;
	t->up = ss->state == SOUP_UP;
	t->busy_for_ns = t->busy ? now - ss->decided : 0;
}

static void print_ns(FILE *f, uint64_t ns)
{
	if (ns >= 10000000ull)
		fprintf(f, "%" PRIu64 "ms", ns / 1000000);
	else
		fprintf(f, "%" PRIu64 "us", ns / 1000);
}

void snapshot_session_print(const struct snapshot_session *ss, uint64_t now, FILE *f)
{
	struct snapshot_totals t;
	struct in_addr a = { .s_addr = htonl(ss->conf.ip) };

	snapshot_session_totals(ss, now, &t);
	fprintf(f, "recovery %s", feed_venue_name(ss->conf.venue));
	if (ss->conf.channel >= 0)
		fprintf(f, "/%d", ss->conf.channel);
	fprintf(f, " snapshot (%s %s:%u): ", ss->service->name, inet_ntoa(a), ss->conf.port);
	if (t.busy) {
		fprintf(f, "STALE, snapshot wanted for ");
		print_ns(f, t.busy_for_ns);
	} else {
		fprintf(f, "idle");
	}
	fprintf(f, "; snapshots %" PRIu64 ", messages %" PRIu64 ", aborted %" PRIu64
		", given up %" PRIu64 "; session %s, connects %" PRIu64 ", disconnects %" PRIu64 ", logins refused %"
		PRIu64 ", stalls %" PRIu64 ", hangups %" PRIu64 ", bad packets %" PRIu64
		", heartbeats in %" PRIu64 " out %" PRIu64 "; snapshot time last ", t.snapshots,
		t.messages, t.aborted, t.given_up, t.up ? "up" : "down", t.connects, t.disconnects,
		t.logins_refused, t.stalls, t.hangups, t.bad_packets, t.heartbeats_received,
		t.heartbeats_sent);
	print_ns(f, t.last_ns);
	fprintf(f, " max ");
	print_ns(f, t.max_ns);
	fprintf(f, "\n");
}
