/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The TCP session of the snapshot clients (see recovery_session.h). */
#include "recovery/recovery_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_BUDGET (256 * 1024)	/* bytes taken per poll, so real time is never starved */

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000ull;
}

void rsess_init(struct rsess *s, const struct recovery_target *t,
		const struct recovery_conf_entry *conf, const struct rsess_proto *proto)
{
	s->target = t;
	s->proto = proto;
	s->conf = *conf;
	s->fd = -1;
	s->line = -1;
	s->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
}

void rsess_destroy(struct rsess *s)
{
	if (s->fd >= 0)
		close(s->fd);
}

uint64_t rsess_ts(const struct rsess *s, uint64_t recv_ts)
{
	return recv_ts ? recv_ts : s->since;
}

void rsess_close(struct rsess *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	s->c.disconnects += s->state >= RSESS_UP;
	s->inlen = 0;
}

/* "recovery VENUE[/CHANNEL]: SERVICE IP:PORT[ (unit U)] WHAT" on stderr. */
static void say_server(const struct rsess *s, const char *what)
{
	struct in_addr a = { .s_addr = htonl(s->conf.ip) };

	fprintf(stderr, "recovery %s", feed_venue_name(s->conf.venue));
	if (s->conf.channel >= 0)
		fprintf(stderr, "/%d", s->conf.channel);
	fprintf(stderr, ": %s %s:%u", s->conf.service->name, inet_ntoa(a), s->conf.port);
	if (s->conf.unit >= 0)
		fprintf(stderr, " (unit %d)", s->conf.unit);
	fprintf(stderr, " %s\n", what);
}

/*
 * The attempt failed: retry after the backoff, aborting what was half
 * applied. After retries failed attempts the snapshot is given up: what it
 * should have covered is a GAP and the stream goes on (a file source must
 * not wait for ever; a later hole tries again).
 */
void rsess_fail(struct rsess *s, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	bool silent = s->bytes_in == s->bytes_at_begin;

	rsess_close(s);
	if (silent && !s->said_silent) {
		s->said_silent = true;
		say_server(s, "did not answer: trying again on the backoff");
	}
	if (++s->attempts > s->conf.retries) {
		if (silent) {
			if (!s->down) {
				s->down = true;
				s->probe_backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
				say_server(s, "answered none of a snapshot's attempts: its snapshots "
					   "are given up at once while it is silent, an attempt now "
					   "and then tells when it is back");
			}
			s->probe_at = now + recovery_backoff(&s->probe_backoff_ns);
		}
		if (s->begun)
			s->target->snapshot_abort(s->target->ctx, s->line, s->unit, rsess_ts(s, recv_ts), out);
		s->c.given_up++;
		s->begun = false;
		s->applied = 0;
		s->attempts = 0;
		s->state = RSESS_IDLE;
		s->done_episode = s->episode;
		s->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
		return;
	}
	if (s->begun && s->applied) {
		/* Half a book is not a book: what it should have covered is a GAP
		 * until the next attempt clears the books again. */
		s->target->snapshot_abort(s->target->ctx, s->line, s->unit, rsess_ts(s, recv_ts), out);
		s->c.aborted++;
		s->begun = false;
	}
	s->applied = 0;
	s->state = RSESS_WAIT;
	s->next_connect = now + recovery_backoff(&s->backoff_ns);
}

void rsess_apply(struct rsess *s, const uint8_t *pkt, uint32_t len, uint32_t count,
		 uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (s->target->snapshot_packet(s->target->ctx, s->line, s->unit, pkt, len,
				       rsess_ts(s, recv_ts), out) < 0)
		s->c.bad_packets++;
	s->applied += count;
	s->c.messages += count;
}

void rsess_done(struct rsess *s, uint64_t next_seq, uint64_t now)
{
	s->c.snapshots++;
	s->c.last_ns = now - s->decided;
	if (s->c.last_ns > s->c.max_ns)
		s->c.max_ns = s->c.last_ns;
	s->done_episode = s->episode;
	s->done_next_seq = next_seq;
	s->begun = false;
	s->attempts = 0;
	s->backoff_ns = ms_ns(RECOVERY_DEFAULT_TIMEOUT_MS);
}

int rsess_send(struct rsess *s, const uint8_t *p, size_t len, uint64_t now)
{
	/* Client frames are tiny: an empty socket buffer takes them whole; a full one is a dead session. */
	if (send(s->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)len)
		return -1;
	s->last_sent = now;
	return 0;
}

static void begin(struct rsess *s, const struct feed_recovery_stream *rs, uint64_t now,
		  uint64_t recv_ts, struct wb_ring_producer *out)
{
	s->line = rs->line;
	s->unit = rs->unit;
	s->since = rs->since;
	if (s->proto->begin)
		s->proto->begin(s, rs);
	if (rs->state != FEED_REC_SNAPSHOT &&
	    s->target->snapshot_begin(s->target->ctx, rs->line, rs->unit, rsess_ts(s, recv_ts), out) < 0)
		return;
	s->begun = true;
	s->applied = 0;
	s->episode = rs->episode;
	if (s->state == RSESS_IDLE) {
		s->decided = now;
		s->state = RSESS_WAIT;
		s->next_connect = now;
		s->bytes_at_begin = s->bytes_in;
		if (s->down)
			s->attempts = s->conf.retries;	/* a probe: one attempt */
	}
}

bool rsess_drive(struct rsess *s, const struct feed_recovery_stream *rs, bool has_gap_fill,
		 uint64_t began, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint64_t size = rs->rec_end > rs->rec_first ? rs->rec_end - rs->rec_first : 0;
	bool late_join, too_big, too_old;

	if (rs->state == FEED_REC_SNAPSHOT) {
		/* Ours (or begun by someone else: take it over). */
		if (s->state == RSESS_IDLE || s->episode != rs->episode)
			begin(s, rs, now, recv_ts, out);
		return true;
	}
	if (rs->state != FEED_REC_GAP)
		return false;
	if (rs->episode == s->done_episode ||
	    (s->done_next_seq && rs->rec_first == s->done_next_seq)) {
		/* What a snapshot left (it ended before the first buffered packet)
		 * is gap fill's, or lost without one, whatever its size: another
		 * snapshot of the same age would leave the same hole. */
		if (!has_gap_fill && rs->missing_count)
			s->target->recover_lost(s->target->ctx, rs->line, rs->unit, rs->missing_first,
						rs->missing_count, rsess_ts(s, recv_ts), out);
		return !has_gap_fill;
	}
	late_join = rs->episode == 1 && rs->rec_first <= 1;
	too_big = size > s->conf.max_gap;
	too_old = s->conf.max_age_ms && now - began > ms_ns(s->conf.max_age_ms);
	if (!late_join && !too_big && !too_old && has_gap_fill)
		return false;
	if (s->down && now < s->probe_at && s->state == RSESS_IDLE) {
		/* Not worth a wait: the server is silent. Gap fill's, or lost. */
		s->c.given_up++;
		if (!has_gap_fill && rs->missing_count)
			s->target->recover_lost(s->target->ctx, rs->line, rs->unit, rs->missing_first,
						rs->missing_count, rsess_ts(s, recv_ts), out);
		return !has_gap_fill;
	}
	begin(s, rs, now, recv_ts, out);
	return true;
}

static void connect_now(struct rsess *s, uint64_t now, uint64_t recv_ts,
			struct wb_ring_producer *out)
{
	s->c.connects++;
	s->fd = recovery_tcp_connect(s->conf.ip, s->conf.port);
	if (s->fd < 0) {
		rsess_fail(s, now, recv_ts, out);
		return;
	}
	s->state = RSESS_CONNECTING;
	s->deadline = now + ms_ns(s->conf.timeout_ms);
}

/* After an abort the stream went on with a GAP: the next attempt clears its books again. */
static bool ready_to_connect(struct rsess *s, uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (s->begun)
		return true;
	if (s->target->snapshot_begin(s->target->ctx, s->line, s->unit, rsess_ts(s, recv_ts), out) < 0)
		return false;
	s->begun = true;
	s->applied = 0;
	return true;
}

static void read_session(struct rsess *s, uint64_t now, uint64_t recv_ts,
			 struct wb_ring_producer *out)
{
	size_t taken = 0;
	ssize_t n = -1;
	bool hung_up;

	for (;;) {
		uint32_t used = 0;

		while (s->inlen < sizeof(s->in) && taken < READ_BUDGET &&
		       (n = recv(s->fd, s->in + s->inlen, sizeof(s->in) - s->inlen,
				 MSG_DONTWAIT)) > 0) {
			s->inlen += (uint32_t)n;
			taken += (size_t)n;
			s->bytes_in += (size_t)n;
		}
		hung_up = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
				     errno != EINTR);
		if (taken) {
			s->deadline = now + ms_ns(s->conf.timeout_ms);
			s->said_silent = false;
			if (s->down) {
				s->down = false;
				say_server(s, "answers again");
			}
		}
		for (;;) {
			long got = s->proto->frame(s, s->in + used, s->inlen - used, now, recv_ts, out);

			if (got == 0 && used == 0 && s->inlen == sizeof(s->in))
				got = RSESS_FRAME_BAD;	/* longer than any frame: not a server we know */
			if (got == RSESS_FRAME_STOP)
				return;	/* ended, or failed: the buffer is gone */
			if (got < 0) {
				s->c.bad_packets++;
				rsess_fail(s, now, recv_ts, out);
				return;
			}
			if (!got)
				break;
			used += (uint32_t)got;
		}
		memmove(s->in, s->in + used, s->inlen - used);
		s->inlen -= used;
		if (hung_up || n <= 0 || taken >= READ_BUDGET)
			break;
	}
	if (hung_up) {
		s->c.hangups++;
		rsess_fail(s, now, recv_ts, out);
	}
}

void rsess_poll(struct rsess *s, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (s->state == RSESS_IDLE)
		return;
	if (s->state == RSESS_WAIT) {
		if (now < s->next_connect || !ready_to_connect(s, recv_ts, out))
			return;
		connect_now(s, now, recv_ts, out);
		if (s->state != RSESS_CONNECTING)
			return;
	}
	if (s->state == RSESS_CONNECTING) {
		struct pollfd pf = { .fd = s->fd, .events = POLLOUT };
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		uint8_t login[RSESS_LOGIN_BYTES];

		if (poll(&pf, 1, 0) <= 0) {
			if (now > s->deadline) {
				s->c.stalls++;
				rsess_fail(s, now, recv_ts, out);
			}
			return;
		}
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr ||
		    rsess_send(s, login, s->proto->login(login, &s->conf), now)) {
			rsess_fail(s, now, recv_ts, out);
			return;
		}
		s->state = RSESS_LOGIN_SENT;
		s->deadline = now + ms_ns(s->conf.timeout_ms);
	}
	read_session(s, now, recv_ts, out);
	if (s->state < RSESS_LOGIN_SENT)
		return;
	if (now > s->deadline) {
		/* Nothing, not even a heartbeat: the server is gone. */
		s->c.stalls++;
		rsess_fail(s, now, recv_ts, out);
		return;
	}
	if (s->state >= RSESS_UP && now - s->last_sent >= ms_ns(s->proto->heartbeat_period_ms)) {
		uint8_t hb[RSESS_HEARTBEAT_BYTES];

		if (rsess_send(s, hb, s->proto->heartbeat(hb), now))
			rsess_fail(s, now, recv_ts, out);
		else if (s->proto->count_heartbeats)
			s->c.heartbeats_sent++;
	}
}

static void print_ns(FILE *f, uint64_t ns)
{
	if (ns >= 10000000ull)
		fprintf(f, "%" PRIu64 "ms", ns / 1000000);
	else
		fprintf(f, "%" PRIu64 "us", ns / 1000);
}

void rsess_print_head(const struct rsess *s, uint64_t now, int unit, const char *service,
		      const char *what, FILE *f)
{
	struct in_addr a = { .s_addr = htonl(s->conf.ip) };

	fprintf(f, "recovery %s", feed_venue_name(s->conf.venue));
	if (s->conf.channel >= 0)
		fprintf(f, "/%d", s->conf.channel);
	if (unit >= 0)
		fprintf(f, " unit %d", unit);
	fprintf(f, " snapshot (%s %s:%u): ", service, inet_ntoa(a), s->conf.port);
	if (s->state != RSESS_IDLE) {
		fprintf(f, "STALE, %s wanted for ", what);
		print_ns(f, now - s->decided);
	} else {
		fprintf(f, "idle");
	}
}

void rsess_print_tail(const struct rsess *s, FILE *f)
{
	fprintf(f, "; snapshot time last ");
	print_ns(f, s->c.last_ns);
	fprintf(f, " max ");
	print_ns(f, s->c.max_ns);
	fprintf(f, "\n");
}
