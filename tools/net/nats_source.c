/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The books from a NATS JetStream stream of normalized events; see nats_source.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/nats_client.h"
#include "net/nats_source.h"

#ifndef WB_NATS
static int nats_open(struct source *s, const struct source_options *opt)
{
	(void)opt;
	snprintf(s->err, sizeof(s->err), "this wirebookd was built without NATS (install "
		 "libnats-dev and rebuild)");
	return -1;
}

static int nats_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		     unsigned budget)
{
	(void)s;
	(void)e;
	(void)out;
	(void)budget;
	return SOURCE_ERROR;
}

static void nats_close(struct source *s)
{
	(void)s;
}

void nats_source_print(const struct source *s, FILE *f)
{
	(void)s;
	(void)f;
}

void nats_source_metrics(const struct source *s, FILE *f)
{
	(void)s;
	(void)f;
}

void nats_source_stats(const struct source *s, struct wb_nats_stats *out)
{
	(void)s;
	(void)out;
}
#else
#include "common/metrics.h"
#include "net/nats_batch.h"
#include "net/nats_order.h"
#include "net/nats_snapshot.h"
#include "wirebook/barrier.h"
#include "wirebook/ring.h"
#include "wirebook/nats.h"

/* Batches held waiting for a missing event before it is taken as lost
 * (the publisher gave up on it). */
#define SOURCE_HOLD_MAX 65536u
/* The subscription's own buffer: a late joiner's catch-up arrives fast. */
#define SOURCE_PENDING_MSGS (1 << 20)
#define SOURCE_PENDING_BYTES (512 << 20)
/* The pump blocks this long in the client for a first message when idle. */
#define SOURCE_WAIT_MS 2
#define SOURCE_SUBSCRIBE_RETRY_NS 500000000ull
/* Tries at a snapshot that fail for a reason other than "there is none"
 * (not connected yet, a chunk purged under us) before replaying from the start. */
#define SOURCE_SNAPSHOT_TRIES 20

struct nats_counters {
	uint64_t messages, batches, events, bytes;
	uint64_t duplicates;	/* events already applied (a resend, a redelivery): skipped */
	uint64_t held;		/* batches received, not applied in full */
	uint64_t waited;	/* batches that came before an earlier event and waited */
	uint64_t lost_events;	/* events given up on (a hole never filled) */
	uint64_t stale;		/* batches of an earlier publisher run */
	uint64_t bad;		/* messages that are no batch */
	uint64_t origin_runs;	/* publisher runs seen */
	uint64_t pending;	/* the stream's messages not delivered yet (lag) */
	uint64_t stream_seq;	/* the last message's stream sequence */
	int64_t lag_ns;		/* now - when the server stored the last message */
	uint64_t disconnects, reconnects;
	int connected;
	int end_seen;
	/* The book snapshot it started from (nats_snapshot.h), if any. */
	uint64_t snapshot_loaded;	/* 1 once applied */
	uint64_t snapshot_bytes, snapshot_events, snapshot_global, snapshot_start_seq;
	uint64_t snapshot_load_ns;	/* fetching it */
};

struct nats_src {
	struct nats_client_config cfg;
	struct nats_client_counters cc;
	natsConnection *nc;
	jsCtx *js;
	natsSubscription *sub;
	char stream[256];
	char subject[256];
	uint64_t next_subscribe_ns;
	int exit_at_end;
	uint64_t run;		/* the publisher run being applied */
	uint64_t next;		/* its next global index to apply (from 1) */
	uint64_t end;		/* its END's count of events */
	struct nats_order order;	/* the batches held (ctr.held their count) */
	struct nats_counters ctr;
	/* make fanout: now minus the origin's receive time of the last event
	 * of each applied chunk (log2 buckets, 4 sub-buckets; the clocks of
	 * both hosts agree, or it is one host), and the applied span. */
	uint64_t lat[64 * 4];
	uint64_t lat_n;
	uint64_t first_apply_ns, last_apply_ns;
	/* The snapshot being applied: its records, the next one, what is
	 * left of the current record's repeats; the stream sequence to read
	 * from after it (0: the start). */
	int snap_tries;
	int snap_done;		/* looked for (loaded, none, or given up) */
	uint8_t *snap;
	uint64_t snap_records, snap_i;
	uint32_t snap_left;
	struct wb_event snap_ev;
	uint64_t start_seq;
};

#define LATENCY_MAX_NS (3600ull * 1000000000ull)	/* beyond: a replay's old receive times */

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void latency_note(struct nats_src *n, uint64_t recv_ts)
{
	uint64_t now = wall_ns(), v;
	unsigned b, sub;

	if (!n->first_apply_ns)
		n->first_apply_ns = now;
	n->last_apply_ns = now;
	if (!recv_ts || now <= recv_ts || now - recv_ts > LATENCY_MAX_NS)
		return;
	v = now - recv_ts;
	b = 63u - (unsigned)__builtin_clzll(v);
	sub = b >= 2 ? (unsigned)(v >> (b - 2)) & 3u : 0;
	n->lat[b * 4 + sub]++;
	n->lat_n++;
}

/* The q-quantile's bucket's lower bound, ns. */
static uint64_t latency_quantile(const struct nats_src *n, double q)
{
	uint64_t want = (uint64_t)((double)n->lat_n * q), seen = 0;
	unsigned i;

	for (i = 0; i < 64 * 4; i++) {
		seen += n->lat[i];
		if (seen > want) {
			unsigned b = i / 4, sub = i % 4;

			return b >= 2 ? (1ull << b) + (uint64_t)sub * (1ull << (b - 2)) : 1ull << b;
		}
	}
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void add_ctr(uint64_t *c, uint64_t n)
{
	wb_store_relaxed(c, wb_load_relaxed(c) + n);
}

static int subscribe(struct source *s, struct nats_src *n)
{
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus st;

	if (n->stream[0] && !n->subject[0]) {
		jsStreamInfo *si = NULL;

		st = js_GetStreamInfo(&si, n->js, n->stream, NULL, &jerr);
		if (st != NATS_OK)
			return -1;
		if (si->Config && si->Config->SubjectsLen > 0)
			snprintf(n->subject, sizeof(n->subject), "%s", si->Config->Subjects[0]);
		jsStreamInfo_Destroy(si);
		if (!n->subject[0]) {
			snprintf(s->err, sizeof(s->err), "stream %s has no subjects", n->stream);
			return -2;
		}
	}
	jsSubOptions_Init(&so);
	so.Ordered = true;
	if (n->stream[0])
		so.Stream = n->stream;
	if (n->start_seq) {	/* after a snapshot: what it does not hold */
		so.Config.DeliverPolicy = js_DeliverByStartSequence;
		so.Config.OptStartSeq = n->start_seq;
	}
	st = js_SubscribeSync(&n->sub, n->js, n->subject, NULL, &so, &jerr);
	if (st != NATS_OK) {
		n->sub = NULL;
		return -1;
	}
	natsSubscription_SetPendingLimits(n->sub, SOURCE_PENDING_MSGS, SOURCE_PENDING_BYTES);
	if (n->start_seq)
		fprintf(stderr, "wirebookd: NATS: reading %s%s%s from sequence %llu (after the book "
			"snapshot)\n", n->subject, n->stream[0] ? " of stream " : "", n->stream,
			(unsigned long long)n->start_seq);
	else
		fprintf(stderr, "wirebookd: NATS: reading %s%s%s from its start\n", n->subject,
			n->stream[0] ? " of stream " : "", n->stream);
	return 0;
}

static int nats_open(struct source *s, const struct source_options *opt)
{
	struct nats_src *n;
	char servers[1024], inst[64];

	if (!opt->nats) {
		snprintf(s->err, sizeof(s->err), "nats source: no NATS options");
		return -1;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	n->cfg = *opt->nats;
	n->order.held = &n->ctr.held;
	n->exit_at_end = opt->nats_exit_at_end;
	if (nats_url_split(n->cfg.url, servers, sizeof(servers), n->stream, sizeof(n->stream), s->err,
			   sizeof(s->err))) {
		free(n);
		return SOURCE_EUSAGE;
	}
	if (!n->stream[0]) {
		nats_subject_token(inst, sizeof(inst), n->cfg.instance);
		snprintf(n->subject, sizeof(n->subject), "wirebook.%s.events.>", inst);
	}
	n->nc = nats_client_connect(&n->cfg, "wirebookd source", &n->cc, s->err, sizeof(s->err));
	if (!n->nc) {
		free(n);
		return -1;
	}
	if (natsConnection_JetStream(&n->js, n->nc, NULL) != NATS_OK) {
		snprintf(s->err, sizeof(s->err), "no JetStream context");
		nats_client_close(n->nc, &n->cc);
		free(n);
		return -1;
	}
	s->priv = n;
	return 0;
}

static uint64_t ring_free(const struct wb_ring_producer *out)
{
	return out->mask + 1 - (out->head - wb_load_acquire(&out->cons->tail));
}

/* Move the top batch k events on (k: at most what is left of its run). */
static void advance_top(struct nats_src *n, uint32_t k)
{
	if (nats_order_advance(&n->order, k))
		add_ctr(&n->ctr.batches, 1);
}

/* Apply, in the origin's order, every event held up to the first one
 * missing. -1: the ring is full (the rest next time). */
static int drain(struct source *s, struct nats_src *n, struct wb_ring_producer *out)
{
	while (n->order.n) {
		struct nats_held *c = nats_order_top(&n->order);
		uint64_t left = c->r.count - c->off, k, room, i;

		if (c->key < n->next) {	/* applied already */
			k = n->next - c->key < left ? n->next - c->key : left;
			add_ctr(&n->ctr.duplicates, k);
			advance_top(n, (uint32_t)k);
			continue;
		}
		if (c->key > n->next) {
			if (n->order.n < SOURCE_HOLD_MAX)
				return 0;	/* wait for the missing one */
			fprintf(stderr, "wirebookd: NATS: events %llu-%llu of the publisher's run never "
				"came (%u batches held after them): skipped\n",
				(unsigned long long)n->next, (unsigned long long)c->key - 1, n->order.n);
			add_ctr(&n->ctr.lost_events, c->key - n->next);
			n->next = c->key;
		}
		room = ring_free(out);
		k = left < room ? left : room;
		if (!k)
			return -1;
		for (i = 0; i < k; i++) {
			struct wb_event *slot = wb_ring_producer_slot(out);	/* room checked */

			memcpy(slot, nats_batch_event_at(c->data, &c->h, c->ev + (uint32_t)i),
			       sizeof(*slot));
			wb_ring_producer_commit(out);
		}
		latency_note(n, ((const struct wb_event *)(out->slots + ((out->head - 1) & out->mask)))->recv_ts);
		n->next += k;
		add_ctr(&n->ctr.events, k);
		add_ctr(&s->ctr.packets, 1);
		advance_top(n, (uint32_t)k);
	}
	return 0;
}

/* One message: taken (held or freed). */
static void handle(struct nats_src *n, natsMsg *m)
{
	const uint8_t *data = (const uint8_t *)natsMsg_GetData(m);
	size_t len = (size_t)natsMsg_GetDataLength(m);
	struct nats_batch_header h;
	struct nats_batch_run first, last;
	char err[160];

	if (nats_batch_parse(data, len, &h, err, sizeof(err)) < 0) {
		if (!n->ctr.bad)
			fprintf(stderr, "wirebookd: NATS: %s on %s: skipped\n", err, natsMsg_GetSubject(m));
		add_ctr(&n->ctr.bad, 1);
		natsMsg_Destroy(m);
		return;
	}
	if (h.run != n->run) {
		if (h.run < n->run) {	/* an earlier run's resend */
			add_ctr(&n->ctr.stale, 1);
			natsMsg_Destroy(m);
			return;
		}
		if (n->run)
			fprintf(stderr, "wirebookd: NATS: the publisher started again (run %llu): its "
				"events follow the earlier run's%s\n", (unsigned long long)h.run,
				wb_load_relaxed(&n->ctr.end_seen) ? "" : ", which ended without its END");
		add_ctr(&n->ctr.origin_runs, 1);
		nats_order_free(&n->order);
		n->run = h.run;
		n->next = 1;
		n->end = 0;
		wb_store_relaxed(&n->ctr.end_seen, 0);
	}
	if (h.flags & NATS_BATCH_END) {
		n->end = h.first;
		wb_store_relaxed(&n->ctr.end_seen, 1);
		natsMsg_Destroy(m);
		return;
	}
	nats_batch_run_at(data, h.runs - 1, &last);
	if (last.first + last.count <= n->next) {
		add_ctr(&n->ctr.duplicates, h.count);
		natsMsg_Destroy(m);
		return;
	}
	nats_batch_run_at(data, 0, &first);
	if (first.first > n->next)
		add_ctr(&n->ctr.waited, 1);
	nats_order_push(&n->order, m, data, &h);	/* m is the heap's, held or freed */
}

static int all_came(const struct nats_src *n)
{
	return wb_load_relaxed(&n->ctr.end_seen) && n->next > n->end && !n->order.n;
}

static void note_meta(struct nats_src *n, natsMsg *m)
{
	jsMsgMetaData *meta = NULL;
	struct timespec ts;

	if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	wb_store_relaxed(&n->ctr.pending, meta->NumPending);
	wb_store_relaxed(&n->ctr.stream_seq, meta->Sequence.Stream);
	wb_store_relaxed(&n->ctr.lag_ns, (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec -
						 meta->Timestamp);
	jsMsgMetaData_Destroy(meta);
}

/* Does the stream the snapshot stands for hold what this source reads? */
static int snapshot_stream_ok(struct nats_src *n, const struct nats_snap_header *h)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	int ok = 0, i;

	if (n->stream[0])
		return !strcmp(h->stream, n->stream);
	if (js_GetStreamInfo(&si, n->js, h->stream, NULL, &jerr) != NATS_OK)
		return 0;
	for (i = 0; si->Config && i < si->Config->SubjectsLen; i++)
		ok |= !strcmp(si->Config->Subjects[i], n->subject);
	jsStreamInfo_Destroy(si);
	return ok;
}

/*
 * Fetch the latest book snapshot: its head, then its chunks. 0: loaded,
 * or there is none (or none that fits: said), and the stream is read from
 * its start; -1: not now (not connected, a chunk purged by a newer
 * snapshot meanwhile), again soon.
 */
static int load_snapshot(struct nats_src *n)
{
	char inst[64], name[64], stream[160], subject[160], err[400];
	natsMsg *head = NULL;
	struct nats_snap_header h;
	uint64_t bytes, got = 0, t0 = mono_ns();
	uint8_t *buf = NULL;
	uint32_t chunks, i;
	jsErrCode jerr = 0;
	natsStatus st;

	if (natsConnection_Status(n->nc) != NATS_CONN_STATUS_CONNECTED)
		return -1;
	nats_subject_token(inst, sizeof(inst), n->cfg.instance);
	nats_stream_token(name, sizeof(name), n->cfg.instance);
	snprintf(stream, sizeof(stream), "WIREBOOK_%s_SNAPSHOTS", name);
	snprintf(subject, sizeof(subject), "wirebook.%s.snapshot.head", inst);
	st = js_GetLastMsg(&head, n->js, stream, subject, NULL, &jerr);
	if (st != NATS_OK) {
		if (st == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr || jerr == JSNoMessageFoundErr) {
			fprintf(stderr, "wirebookd: NATS: no book snapshot in %s: replaying the stream "
				"from its start\n", stream);
			return 0;
		}
		return -1;
	}
	if (nats_snap_parse_head((const uint8_t *)natsMsg_GetData(head),
				 (size_t)natsMsg_GetDataLength(head), &chunks, &bytes, err,
				 sizeof(err)) < 0)
		goto unusable;
	buf = malloc(bytes);
	if (!buf) {
		snprintf(err, sizeof(err), "out of memory for %llu bytes", (unsigned long long)bytes);
		goto unusable;
	}
	for (i = 0; i < chunks; i++) {
		uint64_t seq = nats_snap_head_seq((const uint8_t *)natsMsg_GetData(head), i);
		natsMsg *m = NULL;
		size_t len;

		if (js_GetMsg(&m, n->js, stream, seq, NULL, &jerr) != NATS_OK) {
			natsMsg_Destroy(head);
			free(buf);
			return -1;	/* purged by a newer one meanwhile: that one */
		}
		len = (size_t)natsMsg_GetDataLength(m);
		if (len > bytes - got) {
			natsMsg_Destroy(m);
			snprintf(err, sizeof(err), "its chunks hold more than its %llu bytes",
				 (unsigned long long)bytes);
			goto unusable;
		}
		memcpy(buf + got, natsMsg_GetData(m), len);
		got += len;
		natsMsg_Destroy(m);
	}
	if (nats_snap_parse(buf, got, &h, err, sizeof(err)) < 0)
		goto unusable;
	if (!snapshot_stream_ok(n, &h)) {
		snprintf(err, sizeof(err), "it stands for stream %.63s, which does not hold %.120s",
			 h.stream, n->stream[0] ? n->stream : n->subject);
		goto unusable;
	}
	natsMsg_Destroy(head);
	n->snap = buf;
	n->snap_records = h.records;
	n->run = h.run;
	n->next = h.global + 1;
	n->start_seq = h.start_seq;
	add_ctr(&n->ctr.origin_runs, 1);
	wb_store_relaxed(&n->ctr.snapshot_bytes, got);
	wb_store_relaxed(&n->ctr.snapshot_events, h.events);
	wb_store_relaxed(&n->ctr.snapshot_global, h.global);
	wb_store_relaxed(&n->ctr.snapshot_start_seq, h.start_seq);
	wb_store_relaxed(&n->ctr.snapshot_load_ns, mono_ns() - t0);
	fprintf(stderr, "wirebookd: NATS: book snapshot of %s after event %llu of run %llu: %llu "
		"events (%llu bytes), then the stream from sequence %llu\n", h.stream,
		(unsigned long long)h.global, (unsigned long long)h.run, (unsigned long long)h.events,
		(unsigned long long)got, (unsigned long long)h.start_seq);
	return 0;
unusable:
	fprintf(stderr, "wirebookd: NATS: the book snapshot in %s is not usable (%s): replaying the "
		"stream from its start\n", stream, err);
	natsMsg_Destroy(head);
	free(buf);
	return 0;
}

/* The snapshot's events into the ring, each record as often as it says.
 * -1: the ring is full (the rest next time). */
static int feed_snapshot(struct nats_src *n, struct wb_ring_producer *out)
{
	for (;;) {
		uint64_t room, k, i;

		if (!n->snap_left) {
			if (n->snap_i == n->snap_records)
				break;
			n->snap_left = nats_snap_record_at(n->snap, n->snap_i++, &n->snap_ev);
		}
		room = ring_free(out);
		k = n->snap_left < room ? n->snap_left : room;
		if (!k)
			return -1;
		for (i = 0; i < k; i++) {
			memcpy(wb_ring_producer_slot(out), &n->snap_ev, sizeof(n->snap_ev));
			wb_ring_producer_commit(out);
		}
		n->snap_left -= (uint32_t)k;
	}
	free(n->snap);
	n->snap = NULL;
	wb_store_relaxed(&n->ctr.snapshot_loaded, 1);
	return 0;
}

static int nats_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		     unsigned budget)
{
	struct nats_src *n = s->priv;
	unsigned k;

	(void)e;
	if (!n->sub) {
		int rc;

		if (mono_ns() < n->next_subscribe_ns)
			return SOURCE_IDLE;
		if (!n->snap_done && n->cfg.snapshot_s) {
			if (load_snapshot(n) < 0 && ++n->snap_tries < SOURCE_SNAPSHOT_TRIES) {
				n->next_subscribe_ns = mono_ns() + SOURCE_SUBSCRIBE_RETRY_NS;
				return SOURCE_IDLE;
			}
			n->snap_done = 1;
		}
		rc = subscribe(s, n);
		if (rc == -2)
			return SOURCE_ERROR;
		if (rc < 0) {
			n->next_subscribe_ns = mono_ns() + SOURCE_SUBSCRIBE_RETRY_NS;
			return SOURCE_IDLE;	/* no stream yet, or no server: again soon */
		}
	}
	if (n->snap && feed_snapshot(n, out) < 0)
		return SOURCE_MORE;	/* the ring is full: the books take it first */
	if (drain(s, n, out) < 0)
		return SOURCE_MORE;	/* the ring is full: the books take it first */
	for (k = 0; k < budget; k++) {
		natsMsg *m = NULL;
		natsStatus st = natsSubscription_NextMsg(&m, n->sub, k ? 0 : SOURCE_WAIT_MS);

		if (st == NATS_TIMEOUT)
			break;
		if (st != NATS_OK) {
			/* A slow-consumer drop is refetched by the ordered consumer. */
			natsMsg_Destroy(m);
			break;
		}
		add_ctr(&n->ctr.messages, 1);
		add_ctr(&n->ctr.bytes, (uint64_t)natsMsg_GetDataLength(m));
		add_ctr(&s->ctr.bytes, (uint64_t)natsMsg_GetDataLength(m));
		note_meta(n, m);
		handle(n, m);
		if (drain(s, n, out) < 0)
			return SOURCE_MORE;
	}
	if (k)
		return SOURCE_MORE;
	if (n->exit_at_end && all_came(n))
		return SOURCE_EOF;
	return SOURCE_WAITED;	/* blocked in the client for SOURCE_WAIT_MS */
}

static void nats_close(struct source *s)
{
	struct nats_src *n = s->priv;

	if (!n)
		return;
	nats_order_free(&n->order);
	free(n->snap);
	if (n->sub)
		natsSubscription_Destroy(n->sub);
	nats_client_close(n->nc, &n->cc);
	jsCtx_Destroy(n->js);
	free(n);
	s->priv = NULL;
}

static void counters(const struct source *s, struct nats_counters *c)
{
	const struct nats_src *n = s->priv;

	*c = n->ctr;	/* plain reads of counters the pump moves: a snapshot */
	c->disconnects = wb_load_relaxed(&n->cc.disconnects);
	c->reconnects = wb_load_relaxed(&n->cc.reconnects);
	c->connected = wb_load_relaxed(&n->cc.connected);
}

void nats_source_print(const struct source *s, FILE *f)
{
	struct nats_counters c;

	if (s->ops != &source_nats_ops || !s->priv)
		return;
	counters(s, &c);
	fprintf(f, "nats source: %s; messages %llu, batches %llu, events %llu, bytes %llu; "
		"duplicate events %llu, held %llu, waited %llu, LOST %llu, stale %llu, bad %llu; "
		"publisher runs %llu; lag %llu messages, %.3f s; disconnects %llu, reconnects %llu%s\n",
		c.connected ? "connected" : "NOT CONNECTED", (unsigned long long)c.messages,
		(unsigned long long)c.batches, (unsigned long long)c.events,
		(unsigned long long)c.bytes, (unsigned long long)c.duplicates,
		(unsigned long long)c.held, (unsigned long long)c.waited,
		(unsigned long long)c.lost_events, (unsigned long long)c.stale,
		(unsigned long long)c.bad, (unsigned long long)c.origin_runs,
		(unsigned long long)c.pending, (double)c.lag_ns / 1e9,
		(unsigned long long)c.disconnects, (unsigned long long)c.reconnects,
		c.end_seen ? ", end seen" : "");
	if (c.snapshot_loaded)
		fprintf(f, "nats source snapshot: loaded (after event %llu of the run: %llu events, "
			"%llu bytes, fetched in %.3f s), the stream read from sequence %llu\n",
			(unsigned long long)c.snapshot_global, (unsigned long long)c.snapshot_events,
			(unsigned long long)c.snapshot_bytes, (double)c.snapshot_load_ns / 1e9,
			(unsigned long long)c.snapshot_start_seq);
	if (((const struct nats_src *)s->priv)->lat_n) {
		const struct nats_src *n = s->priv;
		double span = (double)(n->last_apply_ns - n->first_apply_ns) / 1e9;

		fprintf(f, "nats source latency (the origin's receive to this ring, %llu chunks): "
			"p50 %.1f us, p99 %.1f us, p99.9 %.1f us; %.0f events/s over %.3f s applied\n",
			(unsigned long long)n->lat_n, (double)latency_quantile(n, 0.5) / 1e3,
			(double)latency_quantile(n, 0.99) / 1e3, (double)latency_quantile(n, 0.999) / 1e3,
			span > 0 ? (double)c.events / span : 0, span);
	}
}

void nats_source_metrics(const struct source *s, FILE *f)
{
	struct nats_counters c;

	if (s->ops != &source_nats_ops || !s->priv)
		return;
	counters(s, &c);
#define M(name, type, help, v)                                                              \
	do {                                                                                \
		metrics_family(f, "wirebook_nats_source_" name, type, help);                \
		fprintf(f, "wirebook_nats_source_" name " %llu\n", (unsigned long long)(v)); \
	} while (0)
	M("messages_total", "counter", "Messages read from JetStream", c.messages);
	M("batches_total", "counter", "Batches applied", c.batches);
	M("events_total", "counter", "Events applied", c.events);
	M("bytes_total", "counter", "Payload bytes read", c.bytes);
	M("duplicate_events_total", "counter", "Events already applied: skipped", c.duplicates);
	M("held_batches", "gauge", "Batches received, not applied in full", c.held);
	M("waited_total", "counter", "Batches that came before an earlier event and waited",
	  c.waited);
	M("lost_events_total", "counter", "Events that never came (lost by the publisher)",
	  c.lost_events);
	M("lag_messages", "gauge", "Stream messages not delivered yet", c.pending);
	M("lag_ms", "gauge", "Now minus when the server stored the last message, ms",
	  c.lag_ns > 0 ? c.lag_ns / 1000000 : 0);
	M("disconnects_total", "counter", "Times the NATS connection was lost", c.disconnects);
	M("reconnects_total", "counter", "Times it was made again", c.reconnects);
	M("connected", "gauge", "1 while connected to NATS", c.connected);
	M("snapshot_loaded", "gauge", "1 when the books started from a book snapshot",
	  c.snapshot_loaded);
	M("snapshot_bytes", "gauge", "The book snapshot's size", c.snapshot_bytes);
	M("snapshot_events", "gauge", "The book snapshot's events", c.snapshot_events);
	M("snapshot_start_seq", "gauge", "The stream sequence read from after the snapshot",
	  c.snapshot_start_seq);
#undef M
}

void nats_source_stats(const struct source *s, struct wb_nats_stats *out)
{
	struct nats_counters c;

	if (s->ops != &source_nats_ops || !s->priv)
		return;
	counters(s, &c);
	out->roles |= WB_NATS_SOURCE;
	out->src_messages = c.messages;
	out->src_batches = c.batches;
	out->src_events = c.events;
	out->src_bytes = c.bytes;
	out->src_duplicates = c.duplicates;
	out->src_held = c.held;
	out->src_waited = c.waited;
	out->src_lost = c.lost_events;
	out->src_lag_messages = c.pending;
	out->src_lag_ns = c.lag_ns;
	out->src_disconnects = c.disconnects;
	out->src_reconnects = c.reconnects;
	out->src_connected = (uint32_t)c.connected;
	out->src_end_seen = (uint32_t)c.end_seen;
	out->src_snapshot_global = c.snapshot_loaded ? c.snapshot_global : 0;
}
#endif

const struct source_ops source_nats_ops = {
	.name = "nats",
	.open = nats_open,
	.pump = nats_pump,
	.close = nats_close,
};
