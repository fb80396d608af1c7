/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Late join by a snapshot over SoupBinTCP: GLIMPSE, UTP Snap-Shot (see recovery_snapshot.h). */
#include "recovery/recovery_snapshot.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "wire/bytes.h"
#include "wire/moldudp64.h"
#include "recovery/recovery_internal.h"
#include "recovery/recovery_session.h"
#include "recovery/soupbin.h"
#define BATCH_BYTES 1472	/* a snapshot packet handed to the engine: one UDP payload's worth */

struct snapshot_session {
	struct rsess s;		/* first: the frame callback's session is ours */
	const struct snapshot_service *service;
	uint8_t batch[BATCH_BYTES];
	uint32_t batch_len, batch_count;
};

/*
 * What differs between the snapshot services: the protocol they serve, and
 * the message that ends the snapshot with the sequence to resume from.
 * Both send the protocol's own messages, packed here as MoldUDP64 blocks.
 */
struct snapshot_service {
	const char *name;	/* its row in the services table */
	int (*end)(const uint8_t *m, size_t len, uint64_t *next_seq);
};

static const struct snapshot_service services[] = {
	{ "glimpse", glimpse_end_of_snapshot },
	{ "utpsnap", utp_snapshot_end },
};

static const struct snapshot_service *service_named(const char *name)
{
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++)
		if (!strcmp(services[i].name, name))
			return &services[i];
	return NULL;
}

static long soup_frame(struct rsess *s, const uint8_t *p, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out);

_Static_assert(2 + SOUP_LOGIN_REQUEST_LEN <= RSESS_LOGIN_BYTES, "a Login Request fits");

static size_t soup_login(uint8_t *buf, const struct recovery_conf_entry *conf)
{
	return soup_login_request(buf, conf->user, conf->password, "", 1);
}

static size_t soup_heartbeat(uint8_t *buf)
{
	return soup_empty(buf, SOUP_CLIENT_HEARTBEAT);
}

static const struct rsess_proto soup_proto = {
	.login = soup_login,
	.heartbeat = soup_heartbeat,
	.heartbeat_period_ms = SOUP_HEARTBEAT_PERIOD_MS,
	.count_heartbeats = true,
	.frame = soup_frame,
};

struct snapshot_session *snapshot_session_create(const struct recovery_target *t,
						 const struct recovery_conf_entry *conf)
{
	const struct snapshot_service *service = service_named(conf->service->name);
	struct snapshot_session *ss = service ? calloc(1, sizeof(*ss)) : NULL;

	if (!ss)
		return NULL;
	ss->service = service;
	rsess_init(&ss->s, t, conf, &soup_proto);
	return ss;
}

void snapshot_session_destroy(struct snapshot_session *ss)
{
	if (!ss)
		return;
	rsess_destroy(&ss->s);
	free(ss);
}

static void batch_reset(struct snapshot_session *ss)
{
	ss->batch_len = MOLD_HEADER_LEN;
	ss->batch_count = 0;
}

static void batch_flush(struct snapshot_session *ss, uint64_t recv_ts,
			struct wb_ring_producer *out)
{
	if (!ss->batch_count)
		return;
	/* The session and sequence of a snapshot packet mean nothing to the engine. */
	memset(ss->batch + MOLD_SESSION, ' ', MOLD_SESSION_LEN);
	wire_put_be64(ss->batch + MOLD_SEQUENCE, 0);
	wire_put_be16(ss->batch + MOLD_COUNT, ss->batch_count);
	rsess_apply(&ss->s, ss->batch, ss->batch_len, ss->batch_count, recv_ts, out);
	batch_reset(ss);
}

static void batch_add(struct snapshot_session *ss, const uint8_t *m, size_t len, uint64_t recv_ts,
		      struct wb_ring_producer *out)
{
	if (len > BATCH_BYTES - MOLD_HEADER_LEN - MOLD_BLOCK_LENGTH_LEN) {
		ss->s.c.bad_packets++;	/* no ITCH or UQDF message is this long */
		return;
	}
	if (ss->batch_len + 2 + len > BATCH_BYTES || ss->batch_count == 0xfffe)
		batch_flush(ss, recv_ts, out);
	wire_put_be16(ss->batch + ss->batch_len, len);
	memcpy(ss->batch + ss->batch_len + 2, m, len);
	ss->batch_len += (uint32_t)(2 + len);
	ss->batch_count++;
}

bool snapshot_session_drive(struct snapshot_session *ss, const struct feed_recovery_stream *rs,
			    bool has_gap_fill, uint64_t began, uint64_t now, uint64_t recv_ts,
			    struct wb_ring_producer *out)
{
	return rsess_drive(&ss->s, rs, has_gap_fill, began, now, recv_ts, out);
}

static void on_message(struct snapshot_session *ss, const uint8_t *m, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct rsess *s = &ss->s;
	uint64_t next_seq;

	if (ss->service->end(m, len, &next_seq) == 0) {
		uint8_t bye[SOUP_HEADER];

		batch_flush(ss, recv_ts, out);
		if (s->target->snapshot_end(s->target->ctx, s->line, s->unit, next_seq,
					    rsess_ts(s, recv_ts), out) < 0) {
			s->c.bad_packets++;
			rsess_fail(s, now, recv_ts, out);
			return;
		}
		rsess_done(s, next_seq, now);
		(void)rsess_send(s, bye, soup_empty(bye, SOUP_LOGOUT_REQUEST), now);
		rsess_close(s);
		s->state = RSESS_IDLE;
		return;
	}
	if (!len) {
		s->c.bad_packets++;
		return;
	}
	if (!s->begun)
		return;		/* aborted meanwhile: the next attempt starts over */
	batch_add(ss, m, len, recv_ts, out);
}

/* One SoupBinTCP packet: its length, 0 (not whole yet), or RSESS_FRAME_*. */
static long soup_frame(struct rsess *s, const uint8_t *buf, size_t len, uint64_t now,
		       uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct snapshot_session *ss = (struct snapshot_session *)s;
	uint8_t type;
	const uint8_t *p;
	size_t plen;
	long got = soup_next(buf, len, &type, &p, &plen);

	if (got <= 0)
		return got < 0 ? RSESS_FRAME_BAD : 0;
	switch (type) {
	case SOUP_LOGIN_ACCEPTED:
		if (s->state == RSESS_LOGIN_SENT) {
			s->state = RSESS_UP;
			batch_reset(ss);
		}
		break;
	case SOUP_LOGIN_REJECTED:
		if (!s->c.logins_refused++)
			fprintf(stderr, "recovery %s: %s %s:%u refused the login "
				"'%s' (reason %c); retrying\n",
				feed_venue_name(s->conf.venue), ss->service->name,
				inet_ntoa((struct in_addr){ htonl(s->conf.ip) }),
				s->conf.port, s->conf.user, plen ? p[0] : '?');
		rsess_fail(s, now, recv_ts, out);
		return RSESS_FRAME_STOP;
	case SOUP_SEQUENCED_DATA:
		if (s->state != RSESS_UP) {
			s->c.bad_packets++;
			break;
		}
		on_message(ss, p, plen, now, recv_ts, out);
		if (s->state != RSESS_UP)
			return RSESS_FRAME_STOP;	/* ended (or failed) */
		break;
	case SOUP_SERVER_HEARTBEAT:
		s->c.heartbeats_received++;
		break;
	case SOUP_END_OF_SESSION:
		/* Before the End of Snapshot: the snapshot is incomplete. */
		s->c.hangups++;
		rsess_fail(s, now, recv_ts, out);
		return RSESS_FRAME_STOP;
	case SOUP_DEBUG:
		break;
	default:
		s->c.bad_packets++;
		break;
	}
	return got;
}

void snapshot_session_poll(struct snapshot_session *ss, uint64_t now, uint64_t recv_ts,
			   struct wb_ring_producer *out)
{
	rsess_poll(&ss->s, now, recv_ts, out);
}

uint64_t snapshot_session_given_up(const struct snapshot_session *ss)
{
	return ss->s.c.given_up;
}

bool snapshot_session_busy(const struct snapshot_session *ss)
{
	return ss->s.state != RSESS_IDLE;
}

void snapshot_session_totals(const struct snapshot_session *ss, uint64_t now,
			     struct snapshot_totals *t)
{
	t->c = ss->s.c;
	t->busy = ss->s.state != RSESS_IDLE;
	t->up = ss->s.state == RSESS_UP;
	t->busy_for_ns = t->busy ? now - ss->s.decided : 0;
}

void snapshot_session_print(const struct snapshot_session *ss, uint64_t now, FILE *f)
{
	const struct rsess_counts *c = &ss->s.c;

	rsess_print_head(&ss->s, now, -1, ss->service->name, "snapshot", f);
	fprintf(f, "; snapshots %" PRIu64 ", messages %" PRIu64 ", aborted %" PRIu64
		", given up %" PRIu64 "; session %s, connects %" PRIu64 ", disconnects %" PRIu64 ", logins refused %"
		PRIu64 ", stalls %" PRIu64 ", hangups %" PRIu64 ", bad packets %" PRIu64
		", heartbeats in %" PRIu64 " out %" PRIu64, c->snapshots,
		c->messages, c->aborted, c->given_up, ss->s.state == RSESS_UP ? "up" : "down",
		c->connects, c->disconnects, c->logins_refused, c->stalls, c->hangups,
		c->bad_packets, c->heartbeats_received, c->heartbeats_sent);
	rsess_print_tail(&ss->s, f);
}

/* ---- the services table's rows "glimpse" and "utpsnap" -------------------------- */

static int soup_add(void **snap, const struct recovery_target *t,
		    const struct recovery_conf_entry *conf)
{
	*snap = snapshot_session_create(t, conf);
	return *snap ? 0 : -1;
}

static void soup_destroy(void *snap)
{
	snapshot_session_destroy(snap);
}

static bool soup_drive(void *snap, const struct feed_recovery_stream *rs, bool has_gap_fill,
		       uint64_t began, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	return snapshot_session_drive(snap, rs, has_gap_fill, began, now, recv_ts, out);
}

static void soup_poll(void *snap, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out)
{
	snapshot_session_poll(snap, now, recv_ts, out);
}

static uint64_t soup_given_up(const void *snap)
{
	return snapshot_session_given_up(snap);
}

static bool soup_busy(const void *snap)
{
	return snapshot_session_busy(snap);
}

static void soup_print(const void *snap, uint64_t now, FILE *f)
{
	snapshot_session_print(snap, now, f);
}

const struct recovery_snapshot_ops recovery_soup_snapshot_ops = {
	.add = soup_add,
	.destroy = soup_destroy,
	.drive = soup_drive,
	.poll = soup_poll,
	.given_up = soup_given_up,
	.busy = soup_busy,
	.print = soup_print,
};
