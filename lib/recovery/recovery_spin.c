/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Late join by Cboe Spin (see recovery_spin.h). */
#include "recovery/recovery_spin.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "recovery/pitch_session.h"
#include "wire/bytes.h"
#include "wire/pitch.h"
#include "recovery/recovery_internal.h"
#include "recovery/recovery_session.h"

#define BATCH_BYTES 1472	/* a spin packet handed to the engine: one UDP payload's worth */
#define UNITS 256

enum spin_state {
	/* RSESS_UP: logged in, waiting for a Spin Image Available to ask for */
	SPIN_REQUESTED = RSESS_UP + 1,	/* Spin Request sent: waiting for its Spin Response */
	SPIN_RECEIVING,		/* accepted: the spin's messages until Spin Finished */
};

struct spin_session {
	struct rsess s;		/* first: the frame callback's session is ours */
	uint64_t first_buffered;	/* the unit's first real-time sequence held back (0: unknown) */
	uint32_t image;		/* the latest Spin Image Available (0: none yet) */
	uint32_t images_behind;	/* images seen this session below first_buffered - 1 */
	uint32_t requested;	/* the sequence asked for */
	uint8_t batch[BATCH_BYTES];
	uint32_t batch_len, batch_count;
	/* what only a spin counts */
	uint64_t orders_announced, images, requests, out_of_range, in_progress, other_status;
};

struct spin_set {
	struct spin_session *unit[UNITS];
};

static long spin_frame(struct rsess *s, const uint8_t *p, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out);

_Static_assert(PITCH_HEADER_LEN + PITCH_LOGIN_LEN <= RSESS_LOGIN_BYTES, "a Login fits");
_Static_assert(PITCH_HEADER_LEN <= RSESS_HEARTBEAT_BYTES, "a heartbeat fits");

static size_t spin_login(uint8_t *buf, const struct recovery_conf_entry *conf)
{
	return pitch_session_login(buf, conf->user, conf->password);
}

/* Real time from rec_end on is held back: an image at or past rec_end - 1 leaves no hole. */
static void spin_begin(struct rsess *s, const struct feed_recovery_stream *rs)
{
	if (rs->state == FEED_REC_GAP)
		((struct spin_session *)s)->first_buffered = rs->rec_end;
}

static const struct rsess_proto spin_proto = {
	.login = spin_login,
	.heartbeat = pitch_session_heartbeat,
	.heartbeat_period_ms = PITCH_SESSION_HEARTBEAT_MS,
	.frame = spin_frame,
	.begin = spin_begin,
};

int spin_set_add(struct spin_set **set, const struct recovery_target *t,
		 const struct recovery_conf_entry *conf)
{
	struct spin_session *ss;

	if (!*set && !(*set = calloc(1, sizeof(**set))))
		return -1;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return -1;
	rsess_init(&ss->s, t, conf, &spin_proto);
	ss->s.unit = (uint8_t)conf->unit;
	free((*set)->unit[ss->s.unit]);	/* recovery_conf_read refuses a unit twice */
	(*set)->unit[ss->s.unit] = ss;
	return 0;
}

void spin_set_destroy(struct spin_set *set)
{
	if (!set)
		return;
	for (int u = 0; u < UNITS; u++) {
		if (set->unit[u])
			rsess_destroy(&set->unit[u]->s);
		free(set->unit[u]);
	}
	free(set);
}

/* ---- the spin's messages, packed as PITCH packets (the decoder's snapshot framing) ---- */

static void batch_reset(struct spin_session *ss)
{
	ss->batch_len = PITCH_HEADER_LEN;
	ss->batch_count = 0;
}

static void batch_flush(struct spin_session *ss, uint64_t recv_ts, struct wb_ring_producer *out)
{
	if (!ss->batch_count)
		return;
	wire_put_le16(ss->batch + PITCH_HDR_LENGTH, ss->batch_len);
	ss->batch[PITCH_HDR_COUNT] = (uint8_t)ss->batch_count;
	ss->batch[PITCH_HDR_UNIT] = ss->s.unit;
	wire_put_le32(ss->batch + PITCH_HDR_SEQUENCE, 0);	/* unsequenced, as the spin sent them */
	rsess_apply(&ss->s, ss->batch, ss->batch_len, ss->batch_count, recv_ts, out);
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

/* ---- the spin ------------------------------------------------------------- */

static void spin_finished(struct spin_session *ss, uint32_t seq, uint64_t now, uint64_t recv_ts,
			  struct wb_ring_producer *out)
{
	struct rsess *s = &ss->s;

	batch_flush(ss, recv_ts, out);
	if (seq != ss->requested ||
	    s->target->snapshot_end(s->target->ctx, s->line, s->unit, (uint64_t)seq + 1,
				    rsess_ts(s, recv_ts), out) < 0) {
		s->c.bad_packets++;
		rsess_fail(s, now, recv_ts, out);
		return;
	}
	rsess_done(s, (uint64_t)seq + 1, now);
	ss->first_buffered = 0;
	s->state = RSESS_IDLE;	/* done: closing is no disconnect */
	rsess_close(s);
}

/* An image to ask for: at or past the first buffered sequence, or the latest after a while. */
static void on_image(struct spin_session *ss, uint32_t seq, uint64_t now, uint64_t recv_ts,
		     struct wb_ring_producer *out)
{
	struct rsess *s = &ss->s;
	uint8_t f[PITCH_HEADER_LEN + SPIN_SEQ_LEN];

	ss->images++;
	if (seq > ss->image)
		ss->image = seq;
	if (s->state != RSESS_UP)
		return;
	if (ss->first_buffered && (uint64_t)ss->image + 1 < ss->first_buffered &&
	    ++ss->images_behind < SPIN_IMAGE_PATIENCE)
		return;
	if (!s->begun)
		return;		/* aborted: ready_to_connect begins it again first */
	ss->requested = ss->image;
	if (rsess_send(s, f, spin_seq_message(f, SPIN_REQUEST, ss->requested), now)) {
		rsess_fail(s, now, recv_ts, out);
		return;
	}
	ss->requests++;
	s->state = SPIN_REQUESTED;
}

/* A Spin Response; false when it ended the session (a refusal). */
static bool on_response(struct spin_session *ss, const uint8_t *m, size_t mlen, uint64_t now,
			uint64_t recv_ts, struct wb_ring_producer *out)
{
	uint32_t seq, orders;
	char status;

	if (spin_response_of(m, mlen, &seq, &orders, &status) || ss->s.state != SPIN_REQUESTED) {
		ss->s.c.bad_packets++;
		return true;
	}
	/* A refusal need not echo the sequence: the BATS capture's 'S' carries 0. */
	if (status == 'A' && seq != ss->requested) {
		ss->s.c.bad_packets++;
		return true;
	}
	if (status == 'A') {
		ss->orders_announced += orders;
		ss->s.state = SPIN_RECEIVING;
		batch_reset(ss);
		return true;
	}
	/* 'O': the image is gone or not yet there; 'S': a spin is running. Ask again later. */
	if (status == 'O')
		ss->out_of_range++;
	else if (status == 'S')
		ss->in_progress++;
	else
		ss->other_status++;
	rsess_fail(&ss->s, now, recv_ts, out);
	return false;
}

/* One message of a frame; false when the session ended (or failed) with it. */
static bool on_message(struct spin_session *ss, const uint8_t *m, size_t mlen, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct rsess *s = &ss->s;
	uint32_t seq;

	switch (m[PITCH_MSG_TYPE]) {
	case PITCH_LOGIN_RESPONSE:
		if (s->state != RSESS_LOGIN_SENT || mlen < PITCH_LOGIN_RESPONSE_LEN) {
			s->c.bad_packets++;
			return true;
		}
		if (m[PITCH_LOGIN_RESPONSE_STATUS_OFF] == 'A') {
			s->state = RSESS_UP;
			ss->image = 0;
			ss->images_behind = 0;
			return true;
		}
		if (!s->c.logins_refused++)
			fprintf(stderr, "recovery %s: spin %s:%u (unit %u) refused the login '%s' "
				"(status %c); retrying\n", feed_venue_name(s->conf.venue),
				inet_ntoa((struct in_addr){ htonl(s->conf.ip) }), s->conf.port,
				s->unit, s->conf.user, m[PITCH_LOGIN_RESPONSE_STATUS_OFF]);
		rsess_fail(s, now, recv_ts, out);
		return false;
	case SPIN_IMAGE_AVAILABLE:
		/* Out of place (before the login's answer) it is counted and
		 * passed over: the session goes on with the next message. */
		if (spin_seq_of(m, mlen, SPIN_IMAGE_AVAILABLE, &seq) || s->state < RSESS_UP) {
			s->c.bad_packets++;
			return true;
		}
		on_image(ss, seq, now, recv_ts, out);
		return s->state >= RSESS_UP;	/* a failed request ends it */
	case SPIN_RESPONSE:
		return on_response(ss, m, mlen, now, recv_ts, out);
	case SPIN_FINISHED:
		if (s->state != SPIN_RECEIVING || spin_seq_of(m, mlen, SPIN_FINISHED, &seq)) {
			s->c.bad_packets++;
			return true;
		}
		spin_finished(ss, seq, now, recv_ts, out);
		return false;
	default:
		if (s->state != SPIN_RECEIVING) {
			s->c.bad_packets++;
			return true;
		}
		if (s->begun)
			batch_add(ss, m, mlen, recv_ts, out);
		return true;
	}
}

/* One Sequenced Unit Header frame, message by message: its length, 0 or RSESS_FRAME_*. */
static long spin_frame(struct rsess *s, const uint8_t *p, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	long flen = pitch_session_next(p, len);
	size_t off = 0, mlen;
	const uint8_t *m;
	int got;

	if (flen <= 0)
		return flen < 0 ? RSESS_FRAME_BAD : 0;
	while ((got = pitch_session_message_at(p, (size_t)flen, &off, &m, &mlen)) > 0)
		if (!on_message((struct spin_session *)s, m, mlen, now, recv_ts, out))
			return RSESS_FRAME_STOP;	/* ended, or failed: the buffer is gone */
	if (got < 0)
		s->c.bad_packets++;
	return flen;
}

/* ---- the set -------------------------------------------------------------- */

bool spin_set_drive(struct spin_set *set, const struct feed_recovery_stream *rs,
		    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
		    struct wb_ring_producer *out)
{
	struct spin_session *ss = set ? set->unit[rs->unit] : NULL;

	return ss && rsess_drive(&ss->s, rs, has_gap_fill, began, now, recv_ts, out);
}

void spin_set_poll(struct spin_set *set, uint64_t now, uint64_t recv_ts,
		   struct wb_ring_producer *out)
{
	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u])
			rsess_poll(&set->unit[u]->s, now, recv_ts, out);
}

uint64_t spin_set_given_up(const struct spin_set *set)
{
	uint64_t n = 0;

	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u])
			n += set->unit[u]->s.c.given_up;
	return n;
}

bool spin_set_busy(const struct spin_set *set)
{
	for (int u = 0; set && u < UNITS; u++)
		if (set->unit[u] && set->unit[u]->s.state != RSESS_IDLE)
			return true;
	return false;
}

bool spin_set_totals(const struct spin_set *set, uint8_t unit, uint64_t now,
		     struct spin_totals *t)
{
	const struct spin_session *ss = set ? set->unit[unit] : NULL;

	if (!ss)
		return false;
	t->c = ss->s.c;
	t->orders_announced = ss->orders_announced;
	t->images = ss->images;
	t->requests = ss->requests;
	t->out_of_range = ss->out_of_range;
	t->in_progress = ss->in_progress;
	t->other_status = ss->other_status;
	t->busy = ss->s.state != RSESS_IDLE;
	t->up = ss->s.state >= RSESS_UP;
	t->busy_for_ns = t->busy ? now - ss->s.decided : 0;
	return true;
}

void spin_set_print(const struct spin_set *set, uint64_t now, FILE *f)
{
	for (int u = 0; set && u < UNITS; u++) {
		struct spin_totals t;

		if (!spin_set_totals(set, (uint8_t)u, now, &t))
			continue;
		rsess_print_head(&set->unit[u]->s, now, u, "spin", "spin", f);
		fprintf(f, "; snapshots %" PRIu64 ", messages %" PRIu64 ", orders announced %" PRIu64
			", aborted %" PRIu64 ", given up %" PRIu64 "; images %" PRIu64 ", requests %"
			PRIu64 ", refused out of range %" PRIu64 ", in progress %" PRIu64
			", other %" PRIu64 "; session %s, connects %" PRIu64 ", disconnects %" PRIu64
			", logins refused %" PRIu64 ", stalls %" PRIu64 ", hangups %" PRIu64
			", bad packets %" PRIu64, t.c.snapshots, t.c.messages,
			t.orders_announced, t.c.aborted, t.c.given_up, t.images, t.requests,
			t.out_of_range, t.in_progress, t.other_status, t.up ? "up" : "down",
			t.c.connects, t.c.disconnects, t.c.logins_refused, t.c.stalls, t.c.hangups,
			t.c.bad_packets);
		rsess_print_tail(&set->unit[u]->s, f);
	}
}

/* ---- the services table's row "spin" ------------------------------------------------ */

static int spin_add(void **snap, const struct recovery_target *t,
		    const struct recovery_conf_entry *conf)
{
	struct spin_set *set = *snap;
	int rc = spin_set_add(&set, t, conf);

	*snap = set;
	return rc;
}

static void spin_destroy(void *snap)
{
	spin_set_destroy(snap);
}

static bool spin_drive(void *snap, const struct feed_recovery_stream *rs, bool has_gap_fill,
		       uint64_t began, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	return spin_set_drive(snap, rs, has_gap_fill, began, now, recv_ts, out);
}

static void spin_poll(void *snap, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	spin_set_poll(snap, now, recv_ts, out);
}

static uint64_t spin_given_up(const void *snap)
{
	return spin_set_given_up(snap);
}

static bool spin_busy(const void *snap)
{
	return spin_set_busy(snap);
}

static void spin_print(const void *snap, uint64_t now, FILE *f)
{
	spin_set_print(snap, now, f);
}

const char *recovery_spin_conf_check(const struct recovery_conf_entry *en)
{
	return en->unit >= 0 ? NULL :
	       "a spin service needs unit=N (a Spin server serves one unit; one line per unit)";
}

const struct recovery_snapshot_ops recovery_spin_ops = {
	.add = spin_add,
	.destroy = spin_destroy,
	.drive = spin_drive,
	.poll = spin_poll,
	.given_up = spin_given_up,
	.busy = spin_busy,
	.print = spin_print,
};
