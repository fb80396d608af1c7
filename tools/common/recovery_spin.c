/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Late join by Cboe Spin (see recovery_spin.h). */
#include "common/recovery_spin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/pitch_session.h"
#include "common/put_bytes.h"

#define BATCH_BYTES 1472	/* a spin packet handed to the engine: one UDP payload's worth */
#define IN_BYTES (64 * 1024)
#define READ_BUDGET (256 * 1024)	/* bytes taken per poll, so real time is never starved */
#define HEARTBEAT_PERIOD_MS 1000
#define UNITS 256

enum spin_state {
	SPIN_IDLE,		/* nothing wanted */
	SPIN_WAIT,		/* wanted: connect at next_connect */
	SPIN_CONNECTING,
	SPIN_LOGIN_SENT,
	SPIN_UP,		/* logged in: waiting for a Spin Image Available to ask for */
	SPIN_REQUESTED,		/* Spin Request sent: waiting for its Spin Response */
	SPIN_RECEIVING,		/* accepted: the spin's messages until Spin Finished */
};

struct spin_session {
	const struct recovery_target *target;
	struct recovery_conf_entry conf;
	int state;
	int fd;
	int line;
	uint8_t unit;
	bool begun;		/* feed_snapshot_begin was called for the current attempt */
	uint32_t applied;	/* spin messages applied in the current attempt */
	uint32_t episode;	/* the engine's recovery episode of the current spin */
	uint32_t done_episode;	/* the episode a spin ended: its rest is gap fill's */
	uint64_t done_next_seq;	/* where the last spin left the unit (0: none yet) */
	uint64_t first_buffered;	/* the unit's first real-time sequence held back (0: unknown) */
	uint32_t image;		/* the latest Spin Image Available (0: none yet) */
	uint32_t images_behind;	/* images seen this session below first_buffered - 1 */
	uint32_t requested;	/* the sequence asked for */
	uint64_t since;
	uint64_t decided;
	uint64_t next_connect, backoff_ns, deadline, last_sent;
	uint32_t attempts;
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	uint8_t batch[BATCH_BYTES];
	uint32_t batch_len, batch_count;
	struct spin_totals t;
};

struct spin_set {
	struct spin_session *unit[UNITS];
};

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

int spin_set_add(struct spin_set **set, const struct recovery_target *t,
		 const struct recovery_conf_entry *conf)
{
	struct spin_session *ss;

	if (!*set && !(*set = calloc(1, sizeof(**set))))
		return -1;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return -1;
	ss->target = t;
	ss->conf = *conf;
	ss->fd = -1;
	ss->line = -1;
	ss->unit = (uint8_t)conf->unit;
	ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
	free((*set)->unit[ss->unit]);	/* recovery_conf_read refuses a unit twice */
	(*set)->unit[ss->unit] = ss;
	return 0;
}

void spin_set_destroy(struct spin_set *set)
{
	if (!set)
		return;
	for (int u = 0; u < UNITS; u++) {
		if (set->unit[u] && set->unit[u]->fd >= 0)
			close(set->unit[u]->fd);
		free(set->unit[u]);
	}
	free(set);
}

static uint64_t ts_of(const struct spin_session *ss, uint64_t recv_ts)
{
	return recv_ts ? recv_ts : ss->since;
}

/* ---- the spin's messages, packed as PITCH packets (the decoder's snapshot framing) ---- */

static void batch_reset(struct spin_session *ss)
{
	ss->batch_len = PITCH_SESSION_HEADER;
	ss->batch_count = 0;
}

static void batch_flush(struct spin_session *ss, uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (!ss->batch_count)
		return;
	put_le16(ss->batch, ss->batch_len);
	ss->batch[2] = (uint8_t)ss->batch_count;
	ss->batch[3] = ss->unit;
	put_le32(ss->batch + 4, 0);	/* unsequenced, as the spin sent them */
	if (ss->target->snapshot_packet(ss->target->ctx, ss->line, ss->unit, ss->batch, ss->batch_len,
				 ts_of(ss, recv_ts), out) < 0)
		ss->t.bad_packets++;
	ss->applied += ss->batch_count;
	ss->t.messages += ss->batch_count;
	batch_reset(ss);
}

static void batch_add(struct spin_session *ss, const uint8_t *m, size_t len, uint64_t recv_ts,
		      struct wb_ring_producer *out)
{
	if (ss->batch_len + len > BATCH_BYTES || ss->batch_count == 255)
		batch_flush(ss, recv_ts, out);
	memcpy(ss->batch + ss->batch_len, m, len);
	ss->batch_len += (uint32_t)len;
	ss->batch_count++;
}

/* ---- the session ---------------------------------------------------------- */

static void close_session(struct spin_session *ss)
{
	if (ss->fd >= 0) {
		close(ss->fd);
		ss->fd = -1;
	}
	ss->t.disconnects += ss->state >= SPIN_UP;
	ss->inlen = 0;
}

static void backoff(struct spin_session *ss, uint64_t now)
{
	ss->state = SPIN_WAIT;
	ss->next_connect = now + ss->backoff_ns;
	ss->backoff_ns *= 2;
	if (ss->backoff_ns > ms_ns(RECOVERY_MAX_BACKOFF_MS))
		ss->backoff_ns = ms_ns(RECOVERY_MAX_BACKOFF_MS);
}

/*
 * The attempt failed: retry after the backoff, aborting what was half
 * applied; after retries failed attempts the spin is given up and the unit
 * goes on with a GAP (a file source must not wait for ever).
 */
static void fail(struct spin_session *ss, uint64_t now, uint64_t recv_ts,
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
		ss->state = SPIN_IDLE;
		ss->done_episode = ss->episode;
		ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
		return;
	}
	if (ss->begun && ss->applied) {
		/* Half a book is not a book: a GAP until the next attempt clears it again. */
		ss->target->snapshot_abort(ss->target->ctx, ss->line, ss->unit, ts_of(ss, recv_ts), out);
		ss->t.aborted++;
		ss->begun = false;
	}
	ss->applied = 0;
	batch_reset(ss);
	backoff(ss, now);
}

static int send_all(struct spin_session *ss, const uint8_t *p, size_t len, uint64_t now)
{
	/* Client frames are tiny: an empty socket buffer takes them whole; a full one is a dead session. */
	if (send(ss->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -1;
	ss->last_sent = now;
	return 0;
}

static void begin(struct spin_session *ss, const struct feed_recovery_stream *rs, uint64_t now,
		  uint64_t recv_ts, struct wb_ring_producer *out)
{
	ss->line = rs->line;
	ss->since = rs->since;
	/* Real time from rec_end on is held back: an image at or past rec_end - 1 leaves no hole. */
	if (rs->state == FEED_REC_GAP)
		ss->first_buffered = rs->rec_end;
	if (rs->state != FEED_REC_SNAPSHOT &&
	    ss->target->snapshot_begin(ss->target->ctx, rs->line, rs->unit, ts_of(ss, recv_ts), out) < 0)
		return;
	ss->begun = true;
	ss->applied = 0;
	ss->episode = rs->episode;
	if (ss->state == SPIN_IDLE) {
		ss->decided = now;
		ss->state = SPIN_WAIT;
		ss->next_connect = now;
	}
}

static bool session_drive(struct spin_session *ss, const struct feed_recovery_stream *rs,
			  bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	uint64_t size = rs->rec_end > rs->rec_first ? rs->rec_end - rs->rec_first : 0;
	bool late_join, too_big, too_old;

	if (rs->state == FEED_REC_SNAPSHOT) {
		if (ss->state == SPIN_IDLE || ss->episode != rs->episode)
			begin(ss, rs, now, recv_ts, out);
		return true;
	}
	if (rs->state != FEED_REC_GAP)
		return false;
	if (rs->episode == ss->done_episode ||
	    (ss->done_next_seq && rs->rec_first == ss->done_next_seq)) {
		/* What a spin left before the first buffered packet is gap fill's
		 * (or lost without one): another spin would leave the same hole. */
		if (!has_gap_fill && rs->missing_count)
			ss->target->recover_lost(ss->target->ctx, rs->line, rs->unit, rs->missing_first,
					  rs->missing_count, ts_of(ss, recv_ts), out);
		return !has_gap_fill;
	}
	late_join = rs->episode == 1 && rs->rec_first <= 1;
	too_big = size > ss->conf.max_gap;
	too_old = ss->conf.max_age_ms && now - began > ms_ns(ss->conf.max_age_ms);
	if (!late_join && !too_big && !too_old && has_gap_fill)
		return false;
	begin(ss, rs, now, recv_ts, out);
	return true;
}

static void spin_finished(struct spin_session *ss, uint32_t seq, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	batch_flush(ss, recv_ts, out);
	if (seq != ss->requested ||
	    ss->target->snapshot_end(ss->target->ctx, ss->line, ss->unit, (uint64_t)seq + 1, ts_of(ss, recv_ts),
			      out) < 0) {
		ss->t.bad_packets++;
		fail(ss, now, recv_ts, out);
		return;
	}
	ss->t.spins++;
	ss->t.last_ns = now - ss->decided;
	if (ss->t.last_ns > ss->t.max_ns)
		ss->t.max_ns = ss->t.last_ns;
	ss->done_episode = ss->episode;
	ss->done_next_seq = (uint64_t)seq + 1;
	ss->begun = false;
	ss->attempts = 0;
	ss->first_buffered = 0;
	ss->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
	ss->state = SPIN_IDLE;	/* done: closing is no disconnect */
	close_session(ss);
}

/* An image to ask for: at or past the first buffered sequence, or the latest after a while. */
static void on_image(struct spin_session *ss, uint32_t seq, uint64_t now, uint64_t recv_ts,
		     struct wb_ring_producer *out)
{
	uint8_t f[PITCH_SESSION_HEADER + SPIN_SEQ_LEN];

	ss->t.images++;
	if (seq > ss->image)
		ss->image = seq;
	if (ss->state != SPIN_UP)
		return;
	if (ss->first_buffered && (uint64_t)ss->image + 1 < ss->first_buffered &&
	    ++ss->images_behind < SPIN_IMAGE_PATIENCE)
		return;
	if (!ss->begun)
		return;		/* aborted: ready_to_connect begins it again first */
	ss->requested = ss->image;
	if (send_all(ss, f, spin_seq_message(f, SPIN_REQUEST, ss->requested), now)) {
		fail(ss, now, recv_ts, out);
		return;
	}
	ss->t.requests++;
	ss->state = SPIN_REQUESTED;
}

static void on_response(struct spin_session *ss, const uint8_t *m, size_t mlen, uint64_t now,
			uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t seq, orders;
	char status;

	if (spin_response_of(m, mlen, &seq, &orders, &status) || ss->state != SPIN_REQUESTED) {
		ss->t.bad_packets++;
		return;
	}
	/* A refusal need not echo the sequence: the BATS capture's 'S' carries 0. */
	if (status == 'A' && seq != ss->requested) {
		ss->t.bad_packets++;
		return;
	}
	if (status == 'A') {
		ss->t.orders_announced += orders;
		ss->state = SPIN_RECEIVING;
		batch_reset(ss);
		return;
	}
	/* 'O': the image is gone or not yet there; 'S': a spin is running. Ask again later. */
	if (status == 'O')
		ss->t.out_of_range++;
	else if (status == 'S')
		ss->t.in_progress++;
	else
		ss->t.other_status++;
	fail(ss, now, recv_ts, out);
}

/* One message of a frame; false when the session ended (or failed) with it. */
static bool on_message(struct spin_session *ss, const uint8_t *m, size_t mlen, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t seq;

	switch (m[1]) {
	case PITCH_LOGIN_RESPONSE:
		if (ss->state != SPIN_LOGIN_SENT || mlen < 3) {
			ss->t.bad_packets++;
			return true;
		}
		if (m[2] == 'A') {
			ss->state = SPIN_UP;
			ss->images_behind = 0;
			return true;
		}
		if (!ss->t.logins_refused++)
			fprintf(stderr, "recovery %s: spin %s:%u (unit %u) refused the login '%s' "
				"(status %c); retrying\n", feed_venue_name(ss->conf.venue),
				inet_ntoa((struct in_addr){ htonl(ss->conf.ip) }), ss->conf.port,
				ss->unit, ss->conf.user, m[2]);
		fail(ss, now, recv_ts, out);
		return false;
	case SPIN_IMAGE_AVAILABLE:
		if (spin_seq_of(m, mlen, SPIN_IMAGE_AVAILABLE, &seq) == 0 && ss->state >= SPIN_UP)
			on_image(ss, seq, now, recv_ts, out);
		else
			ss->t.bad_packets++;
		return ss->state >= SPIN_UP;
	case SPIN_RESPONSE:
		on_response(ss, m, mlen, now, recv_ts, out);
		return ss->state >= SPIN_UP;
	case SPIN_FINISHED:
		if (ss->state != SPIN_RECEIVING || spin_seq_of(m, mlen, SPIN_FINISHED, &seq)) {
			ss->t.bad_packets++;
			return true;
		}
		spin_finished(ss, seq, now, recv_ts, out);
		return false;
	default:
		if (ss->state != SPIN_RECEIVING) {
			ss->t.bad_packets++;
			return true;
		}
		if (ss->begun)
			batch_add(ss, m, mlen, recv_ts, out);
		return true;
	}
}

static void connect_now(struct spin_session *ss, uint64_t now, uint64_t recv_ts,
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
	ss->state = SPIN_CONNECTING;
	ss->deadline = now + ms_ns(ss->conf.timeout_ms);
	batch_reset(ss);
}

/* After an abort the unit went on with a GAP: the next attempt clears its books again. */
static bool ready_to_connect(struct spin_session *ss, uint64_t recv_ts,
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

static void read_session(struct spin_session *ss, uint64_t now, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	size_t taken = 0;
	ssize_t n = -1;
	bool hung_up;

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
			long flen = pitch_session_next(ss->in + used, ss->inlen - used);
			size_t off = 0, mlen;
			const uint8_t *m;
			int got;

			if (flen < 0) {
				ss->t.bad_packets++;
				fail(ss, now, recv_ts, out);
				return;
			}
			if (!flen)
				break;
			while ((got = pitch_session_message_at(ss->in + used, (size_t)flen, &off,
							       &m, &mlen)) > 0)
				if (!on_message(ss, m, mlen, now, recv_ts, out))
					return;	/* ended, or failed: the buffer is gone */
			if (got < 0)
				ss->t.bad_packets++;
			used += (uint32_t)flen;
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

static void session_poll(struct spin_session *ss, uint64_t now, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	if (ss->state == SPIN_IDLE)
		return;
	if (ss->state == SPIN_WAIT) {
		if (now < ss->next_connect || !ready_to_connect(ss, recv_ts, out))
			return;
		connect_now(ss, now, recv_ts, out);
		if (ss->state != SPIN_CONNECTING)
			return;
	}
	if (ss->state == SPIN_CONNECTING) {
		struct pollfd pf = { .fd = ss->fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		uint8_t login[PITCH_SESSION_HEADER + PITCH_LOGIN_LEN];

		if (poll(&pf, 1, 0) <= 0) {
			if (now > ss->deadline) {
				ss->t.stalls++;
				fail(ss, now, recv_ts, out);
			}
			return;
		}
		if (getsockopt(ss->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr ||
		    send_all(ss, login, pitch_session_login(login, ss->conf.user,
							     ss->conf.password), now)) {
			fail(ss, now, recv_ts, out);
			return;
		}
		ss->state = SPIN_LOGIN_SENT;
		ss->image = 0;
		ss->deadline = now + ms_ns(ss->conf.timeout_ms);
	}
	read_session(ss, now, recv_ts, out);
	if (ss->state < SPIN_LOGIN_SENT)
		return;
	if (now > ss->deadline) {
		/* Not even the image announced every second: the server is gone. */
		ss->t.stalls++;
		fail(ss, now, recv_ts, out);
		return;
	}
	if (ss->state >= SPIN_UP && now - ss->last_sent >= ms_ns(HEARTBEAT_PERIOD_MS)) {
		uint8_t hb[PITCH_SESSION_HEADER];

		if (send_all(ss, hb, pitch_session_heartbeat(hb), now))
			fail(ss, now, recv_ts, out);
	}
}

/* ---- the set -------------------------------------------------------------- */

bool spin_set_drive(struct spin_set *set, const struct feed_recovery_stream *rs,
		    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
		    struct wb_ring_producer *out)
{
	struct spin_session *ss = set ? set->unit[rs->unit] : NULL;

	return ss && session_drive(ss, rs, has_gap_fill, began, now, recv_ts, out);
}

void spin_set_poll(struct spin_set *set, uint64_t now, uint64_t recv_ts,
		   struct wb_ring_producer *out)
{
	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u])
			session_poll(set->unit[u], now, recv_ts, out);
}

uint64_t spin_set_given_up(const struct spin_set *set)
{
	uint64_t n = 0;

	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u])
			n += set->unit[u]->t.given_up;
	return n;
}

bool spin_set_busy(const struct spin_set *set)
{
	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u] && set->unit[u]->state != SPIN_IDLE)
			return true;
	return false;
}

bool spin_set_totals(const struct spin_set *set, uint8_t unit, uint64_t now,
		     struct spin_totals *t)
{
	const struct spin_session *ss = set ? set->unit[unit] : NULL;

	if (!ss)
		return false;
	*t = ss->t;
	t->busy = ss->state != SPIN_IDLE;
	t->up = ss->state >= SPIN_UP;
	t->busy_for_ns = t->busy ? now - ss->decided : 0;
	return true;
}

static void print_ns(FILE *f, uint64_t ns)
{
	if (ns >= 10000000ull)
		fprintf(f, "%" PRIu64 "ms", ns / 1000000);
	else
		fprintf(f, "%" PRIu64 "us", ns / 1000);
}

void spin_set_print(const struct spin_set *set, uint64_t now, FILE *f)
{
	for (int u = 0; set && u < UNITS; u++) {
		const struct spin_session *ss = set->unit[u];
		struct spin_totals t;
		struct in_addr a;

		if (!spin_set_totals(set, (uint8_t)u, now, &t))
			continue;
		a.s_addr = htonl(ss->conf.ip);
		fprintf(f, "recovery %s", feed_venue_name(ss->conf.venue));
		if (ss->conf.channel >= 0)
			fprintf(f, "/%d", ss->conf.channel);
		fprintf(f, " unit %d snapshot (spin %s:%u): ", u, inet_ntoa(a), ss->conf.port);
		if (t.busy) {
			fprintf(f, "STALE, spin wanted for ");
			print_ns(f, t.busy_for_ns);
		} else {
			fprintf(f, "idle");
		}
		fprintf(f, "; snapshots %" PRIu64 ", messages %" PRIu64 ", orders announced %" PRIu64
			", aborted %" PRIu64 ", given up %" PRIu64 "; images %" PRIu64 ", requests %"
			PRIu64 ", refused out of range %" PRIu64 ", in progress %" PRIu64
			", other %" PRIu64 "; session %s, connects %" PRIu64 ", disconnects %" PRIu64
			", logins refused %" PRIu64 ", stalls %" PRIu64 ", hangups %" PRIu64
			", bad packets %" PRIu64 "; snapshot time last ", t.spins, t.messages,
			t.orders_announced, t.aborted, t.given_up, t.images, t.requests,
			t.out_of_range, t.in_progress, t.other_status, t.up ? "up" : "down",
			t.connects, t.disconnects, t.logins_refused, t.stalls, t.hangups,
			t.bad_packets);
		print_ns(f, t.last_ns);
		fprintf(f, " max ");
		print_ns(f, t.max_ns);
		fprintf(f, "\n");
	}
}
