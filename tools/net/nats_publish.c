/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The NATS JetStream publisher of the normalized events; see nats_publish.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/nats_publish.h"

#ifndef WB_NATS
struct nats_publisher {
	int unused;
};

struct nats_publisher *nats_publisher_start(const struct nats_publish_config *cfg, char *err,
					    size_t errlen)
{
	(void)cfg;
	snprintf(err, errlen, "this wirebookd was built without NATS (install libnats-dev and "
		 "rebuild)");
	return NULL;
}

void nats_publisher_source_ended(struct nats_publisher *p)
{
	(void)p;
}

void nats_publisher_stop(struct nats_publisher *p, double wait_s)
{
	(void)p;
	(void)wait_s;
}

void nats_publisher_counters(struct nats_publisher *p, struct nats_publish_counters *out)
{
	(void)p;
	memset(out, 0, sizeof(*out));
}

void nats_publisher_print(struct nats_publisher *p, FILE *f)
{
	(void)p;
	(void)f;
}

void nats_publisher_metrics(struct nats_publisher *p, FILE *f)
{
	(void)p;
	(void)f;
}
#else
#include <pthread.h>

#include "common/metrics.h"
#include "feed/feed.h"
#include "net/nats_batch.h"
#include "net/nats_books.h"
#include "net/nats_shadow.h"
#include "net/nats_snapshot.h"
#include "book/futex.h"
#include "wirebook/barrier.h"
#include "wirebook/ring.h"

/* Acknowledgement wait before a batch counts as not received and is sent again. */
#define PUBLISH_ACK_WAIT_MS 3000
/* Batches in flight at most; beyond, a publish waits (StallWait) and then
 * fails, and the batch waits in the resend list. */
#define PUBLISH_MAX_INFLIGHT 4096
/* The thread's nap where nothing can wake it: the server away (before
 * the stream is made), the event stream ended (wirebookd stopping). */
#define PUBLISH_IDLE_NS 100000L
#define PUBLISH_IDLE_MAX_NS 1000000L
/* Looks at the event stream's head before sleeping on its futex (issue
 * 21: a bounded spin, a few tens of microseconds, as the builder's). */
#define PUBLISH_IDLE_SPINS 4096u
/* The longest futex sleep with nothing due sooner (the books' tick, a
 * snapshot): the resend list the acknowledgement thread fills, the loss
 * report, the END once the source ended. A quiet daemon's publisher wakes
 * ten times a second, not the thousand of a nap doubling to 1 ms. */
#define PUBLISH_DUTY_NS 100000000ull
#define PUBLISH_RETRY_NS 20000000L
#define PUBLISH_DUPLICATE_WINDOW_NS (600ll * 1000000000ll)
/* Events read from the stream before the batches are looked at again. */
#define PUBLISH_READ_MAX 16384u
/* A snapshot's chunk and head: stored, acknowledged, within this; the
 * whole snapshot within SNAPSHOT_MAX_NS, else it is given up (counted):
 * while it goes out this thread publishes no events (the event stream
 * keeps them). */
#define SNAPSHOT_PUBLISH_WAIT_MS 2000
#define SNAPSHOT_MAX_NS (5ull * 1000000000ull)

struct line_batch {
	uint64_t next;		/* the line's next event number (from 1) */
	uint32_t n;
	uint32_t n_runs;
	uint64_t seq_first, seq_last;
	uint8_t venue;
	struct nats_batch_run runs[NATS_BATCH_MAX_EVENTS];
	struct wb_event events[NATS_BATCH_MAX_EVENTS];
};

struct resend {
	natsMsg *msg;
	struct resend *next;
};

struct nats_publisher {
	struct nats_publish_config cfg;
	struct nats_client_counters cc;
	natsConnection *nc;
	jsCtx *js;
	jsPubOptions po;
	/* The event stream's reader: ring.h's own, not wb_events_attach's
	 * handle, whose loss count also holds what wirebookd lost before its
	 * books; reader.lost is this publisher's alone. */
	struct wb_ring_reader reader;
	struct wb_event *read_buf;	/* PUBLISH_READ_MAX events copied out */
	uint32_t read_n, read_i;	/* copied, and added to the batches so far */
	pthread_t th;
	uint64_t run;
	uint64_t global;	/* events read from the stream: the last one's global index */
	uint8_t *send_buf;	/* a batch being made: header, runs, events */
	char instance[64];
	char subject_prefix[96];
	int stream_ready;
	int source_ended;	/* set by wirebookd's main thread */
	int stop;
	uint64_t stop_deadline_ns;
	struct line_batch *lines[1u << 16];
	uint16_t used_lines[1u << 16];	/* the lines that published, in first-use order */
	uint32_t n_used;
	pthread_mutex_t lock;	/* the resend list: the ack thread adds, this one takes */
	struct resend *resend_head, *resend_tail;
	uint64_t last_lost_said;
	uint64_t last_said_ns;
	struct nats_publish_counters ctr;
	/* Book snapshots: the shadow books (NULL: none), when and at which
	 * event the last one was taken, the highest stream sequence
	 * JetStream acknowledged (the acknowledgement thread raises it) and
	 * the name of the stream it acknowledged from. */
	struct nats_shadow *shadow;
	struct nats_books *books;	/* --publish-books, or NULL */
	uint64_t snap_last_ns, snap_last_global;
	uint64_t acked_seq;
	char acked_stream[128];
	int acked_stream_set;
	int snap_stream_ready;
	char snap_stream[160];
	char snap_subject[128];	/* wirebook.INSTANCE.snapshot */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/* The publisher thread and the client's threads (acknowledgements, their
 * timeouts) move the same counters: an atomic add, off the path. */
static void add_ctr(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* Keep msg to send again, after those already waiting (their order). */
static void resend_push(struct nats_publisher *p, natsMsg *msg)
{
	struct resend *r = malloc(sizeof(*r));

	if (!r) {	/* nowhere to keep it: it is lost, and said */
		fprintf(stderr, "wirebookd: NATS publish: out of memory keeping a batch to resend\n");
		natsMsg_Destroy(msg);
		return;
	}
	r->msg = msg;
	r->next = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->resend_tail)
		p->resend_tail->next = r;
	else
		p->resend_head = r;
	p->resend_tail = r;
	add_ctr(&p->ctr.waiting, 1);
	pthread_mutex_unlock(&p->lock);
}

/* The client's thread, once per published batch: acknowledged, or kept to send again. */
static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct nats_publisher *p = closure;

	(void)js;
	add_ctr(&p->ctr.inflight, (uint64_t)-1);
	if (pa) {
		uint64_t seen = wb_load_relaxed(&p->acked_seq);

		while (pa->Sequence > seen &&
		       !__atomic_compare_exchange_n(&p->acked_seq, &seen, pa->Sequence, 0,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		if (!wb_load_acquire(&p->acked_stream_set) && pa->Stream) {
			snprintf(p->acked_stream, sizeof(p->acked_stream), "%s", pa->Stream);
			wb_store_release(&p->acked_stream_set, 1);
		}
		add_ctr(&p->ctr.acked, 1);
		if (pa->Duplicate)
			add_ctr(&p->ctr.duplicates, 1);
		natsMsg_Destroy(msg);
		return;
	}
	(void)pae;
	resend_push(p, msg);
}

static int send_msg(struct nats_publisher *p, natsMsg **msg)
{
	natsStatus s;

	add_ctr(&p->ctr.inflight, 1);
	s = js_PublishMsgAsync(p->js, msg, &p->po);
	if (s != NATS_OK) {
		add_ctr(&p->ctr.inflight, (uint64_t)-1);
		return -1;
	}
	return 0;
}

/* Send again what waits, in order; 0 once none waits. */
static int resend_waiting(struct nats_publisher *p)
{
	for (;;) {
		struct resend *r;
		natsMsg *msg;

		pthread_mutex_lock(&p->lock);
		r = p->resend_head;
		if (r) {
			p->resend_head = r->next;
			if (!p->resend_head)
				p->resend_tail = NULL;
			add_ctr(&p->ctr.waiting, (uint64_t)-1);
		}
		pthread_mutex_unlock(&p->lock);
		if (!r)
			return 0;
		msg = r->msg;
		free(r);
		if (send_msg(p, &msg) < 0) {
			/* Not taken: first in line again. */
			struct resend *back = malloc(sizeof(*back));

			if (!back) {
				natsMsg_Destroy(msg);
				return -1;
			}
			back->msg = msg;
			pthread_mutex_lock(&p->lock);
			back->next = p->resend_head;
			p->resend_head = back;
			if (!p->resend_tail)
				p->resend_tail = back;
			add_ctr(&p->ctr.waiting, 1);
			pthread_mutex_unlock(&p->lock);
			return -1;
		}
		add_ctr(&p->ctr.resent, 1);
	}
}

/* Make and send one message; what is not taken waits to be sent again. */
static void publish(struct nats_publisher *p, const char *venue, const uint8_t *data, size_t len,
		    const char *id)
{
	char subject[192];
	natsMsg *msg = NULL;

	snprintf(subject, sizeof(subject), "%s.%s", p->subject_prefix, venue);
	if (natsMsg_Create(&msg, subject, NULL, (const char *)data, (int)len) != NATS_OK ||
	    natsMsgHeader_Set(msg, "Nats-Msg-Id", id) != NATS_OK) {
		fprintf(stderr, "wirebookd: NATS publish: cannot make a message (out of memory)\n");
		natsMsg_Destroy(msg);
		return;
	}
	if (wb_load_relaxed(&p->ctr.waiting) || send_msg(p, &msg) < 0)
		resend_push(p, msg);	/* behind the others waiting: the line's order */
}

static void flush_line(struct nats_publisher *p, uint16_t line)
{
	struct line_batch *b = p->lines[line];
	struct nats_batch_header h;
	char id[96], venue[32];
	size_t len;
	uint32_t i;

	if (!b || !b->n)
		return;
	memset(&h, 0, sizeof(h));
	h.line = line;
	h.venue = b->venue;
	h.count = b->n;
	h.run = p->run;
	h.first = b->next - b->n;
	h.seq_first = b->seq_first;
	h.seq_last = b->seq_last;
	h.runs = b->n_runs;
	nats_batch_put_header(p->send_buf, &h);
	for (i = 0; i < b->n_runs; i++)
		nats_batch_put_run(p->send_buf, i, &b->runs[i]);
	memcpy((uint8_t *)nats_batch_event_at(p->send_buf, &h, 0), b->events,
	       (size_t)b->n * sizeof(b->events[0]));
	len = nats_batch_size(h.runs, h.count);
	snprintf(id, sizeof(id), "%llu.%u.%llu", (unsigned long long)p->run, line,
		 (unsigned long long)h.first);
	nats_subject_token(venue, sizeof(venue), feed_venue_name(b->venue));
	publish(p, venue, p->send_buf, len, id);
	add_ctr(&p->ctr.batches, 1);
	add_ctr(&p->ctr.events, b->n);
	add_ctr(&p->ctr.bytes, len);
	b->n = b->n_runs = 0;
	b->seq_first = b->seq_last = 0;
}

static void flush_all(struct nats_publisher *p)
{
	uint32_t i;

	for (i = 0; i < p->n_used; i++)
		flush_line(p, p->used_lines[i]);
}

static int add_event(struct nats_publisher *p, const struct wb_event *ev)
{
	struct line_batch *b = p->lines[ev->line];

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return -1;
		b->next = 1;
		b->venue = ev->line < sizeof(p->cfg.line_venue) && p->cfg.line_venue[ev->line] ?
				   p->cfg.line_venue[ev->line] : ev->venue;
		p->lines[ev->line] = b;
		p->used_lines[p->n_used++] = ev->line;
	}
	b->events[b->n++] = *ev;
	p->global++;
	if (p->shadow)
		nats_shadow_apply(p->shadow, ev);
	if (b->n_runs && b->runs[b->n_runs - 1].first + b->runs[b->n_runs - 1].count == p->global) {
		b->runs[b->n_runs - 1].count++;
	} else {
		b->runs[b->n_runs].first = p->global;
		b->runs[b->n_runs].count = 1;
		b->n_runs++;
	}
	b->next++;
	if (ev->seq) {
		if (!b->seq_first)
			b->seq_first = ev->seq;
		b->seq_last = ev->seq;
	}
	if (b->n == NATS_BATCH_MAX_EVENTS)
		flush_line(p, ev->line);
	return 0;
}

static void send_end(struct nats_publisher *p)
{
	uint8_t buf[NATS_BATCH_HEADER];
	struct nats_batch_header h;
	char id[64];

	memset(&h, 0, sizeof(h));
	h.flags = NATS_BATCH_END;
	h.run = p->run;
	h.first = p->global;	/* the run's events, all of them */
	nats_batch_put_header(buf, &h);
	snprintf(id, sizeof(id), "%llu.end", (unsigned long long)p->run);
	publish(p, "end", buf, sizeof(buf), id);
	wb_store_relaxed(&p->ctr.end_sent, 1);
}

/* Stream NAME of subjects PREFIX.> exists, or is made (file storage;
 * duplicates: its deduplication window, 0 the server's). 1 made, 0 there,
 * -1 not now (not connected, no JetStream, refused: *jerr says). */
static int find_or_make_stream(struct nats_publisher *p, const char *name, const char *prefix,
			       int64_t duplicates, jsErrCode *jerr)
{
	char subject[192];
	const char *subjects[1] = { subject };
	jsStreamInfo *si = NULL;
	jsStreamConfig sc;
	natsStatus s;

	s = js_GetStreamInfo(&si, p->js, name, NULL, jerr);
	if (s == NATS_OK) {
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s != NATS_NOT_FOUND && *jerr != JSStreamNotFoundErr)
		return -1;	/* not connected yet, or no JetStream: again later */
	snprintf(subject, sizeof(subject), "%s.>", prefix);
	jsStreamConfig_Init(&sc);
	sc.Name = name;
	sc.Subjects = subjects;
	sc.SubjectsLen = 1;
	sc.Storage = js_FileStorage;
	sc.Duplicates = duplicates;
	s = js_AddStream(&si, p->js, &sc, NULL, jerr);
	if (s != NATS_OK)
		return -1;
	jsStreamInfo_Destroy(si);
	fprintf(stderr, "wirebookd: NATS stream %s made (subjects %s, file storage)\n", name,
		subject);
	return 1;
}

/* The stream exists, or is made; the day from the first event. 0 when ready. */
static int ensure_stream(struct nats_publisher *p, uint64_t first_recv_ns)
{
	jsErrCode jerr = 0;

	if (!p->ctr.stream[0]) {
		if (p->cfg.stream) {
			snprintf(p->ctr.stream, sizeof(p->ctr.stream), "%s", p->cfg.stream);
		} else {
			time_t t = (time_t)((first_recv_ns ? first_recv_ns : (uint64_t)time(NULL) *
							 1000000000ull) / 1000000000ull);
			struct tm tm;
			char name[48];

			gmtime_r(&t, &tm);
			nats_stream_token(name, sizeof(name), p->instance);
			snprintf(p->ctr.stream, sizeof(p->ctr.stream), "WIREBOOK_%s_%04d%02d%02d", name,
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		}
	}
	if (find_or_make_stream(p, p->ctr.stream, p->subject_prefix, PUBLISH_DUPLICATE_WINDOW_NS,
				&jerr) >= 0)
		return 0;
	if (jerr == JSStreamSubjectOverlapErr) {
		/* JetStream stores by subject: the events go to the stream that
		 * holds them, nothing is lost; the day's own stream is the
		 * operator's to make room for. */
		fprintf(stderr, "wirebookd: NATS: another stream (an earlier day's?) holds %s.>: "
			"publishing into it, not into %s (remove it or change its subjects, "
			"nats stream rm / edit, for a stream per day)\n", p->subject_prefix,
			p->ctr.stream);
		snprintf(p->ctr.stream, sizeof(p->ctr.stream), "(the stream holding %.80s.>)",
			 p->subject_prefix);
		return 0;
	}
	return -1;
}

/* Events the stream holds that this thread has not published yet: those
 * not copied out (at most the ring: older ones are lost) and those copied. */
static uint64_t unread(const struct nats_publisher *p)
{
	uint64_t head = wb_load_acquire(&p->reader.prod->head), slots = p->reader.mask + 1;
	uint64_t n = head > p->reader.pos ? head - p->reader.pos : 0;

	return (n < slots ? n : slots) + (p->read_n - p->read_i);
}

/* The first event's receive time, for the stream's day, without reading it away. */
static uint64_t first_recv_ns(const struct nats_publisher *p)
{
	struct wb_ring_reader look = p->reader;
	struct wb_event ev;

	if (p->read_i < p->read_n)
		return p->read_buf[p->read_i].recv_ts;
	return wb_ring_reader_copy(&look, &ev, 1) ? ev.recv_ts : 0;
}

/* Loudly: events lost falling more than the stream behind (at most once a second). */
static void say_lost(struct nats_publisher *p)
{
	uint64_t lost = p->reader.lost, now = mono_ns();

	wb_store_relaxed(&p->ctr.lost, lost);
	if (lost != p->last_lost_said && now - p->last_said_ns > 1000000000ull) {
		fprintf(stderr, "wirebookd: NATS publish backlog FULL (the event stream's %u "
			"events): %llu events NOT published so far (the local books are not "
			"affected; readers of stream %s will see the gap)\n",
			p->reader.prod->slot_count, (unsigned long long)lost, p->ctr.stream);
		p->last_lost_said = lost;
		p->last_said_ns = now;
	}
}

/* The snapshots' stream: made when missing. 0 when ready. */
static int ensure_snap_stream(struct nats_publisher *p)
{
	jsErrCode jerr = 0;

	return find_or_make_stream(p, p->snap_stream, p->snap_subject, 0, &jerr) >= 0 ? 0 : -1;
}

static int snap_publish(struct nats_publisher *p, const char *what, const uint8_t *data,
			size_t len, uint64_t *seq)
{
	char subject[192];
	jsPubOptions po;
	jsPubAck *pa = NULL;
	jsErrCode jerr = 0;

	snprintf(subject, sizeof(subject), "%s.%s", p->snap_subject, what);
	jsPubOptions_Init(&po);
	po.MaxWait = SNAPSHOT_PUBLISH_WAIT_MS;
	if (js_Publish(&pa, p->js, subject, data, (int)len, &po, &jerr) != NATS_OK)
		return -1;
	*seq = pa->Sequence;
	jsPubAck_Destroy(pa);
	return 0;
}

/*
 * Store a snapshot of the shadow books as they stand after event
 * p->global. Everything up to it is flushed (sent) first, so every later
 * event goes out in a batch sent after now, which JetStream stores after
 * every batch it acknowledged so far: a reader that starts right after
 * the highest acknowledged sequence misses none of them (it skips those
 * of the snapshot's events it meets there).
 */
static void take_snapshot(struct nats_publisher *p)
{
	struct nats_snap_writer w;
	struct nats_snap_header h;
	struct timespec ts;
	uint64_t *seqs = NULL, head_seq;
	uint8_t *head = NULL;
	uint32_t chunks, i;
	size_t len;
	jsOptions jo;
	jsErrCode jerr = 0;

	p->snap_last_ns = mono_ns();
	if (!p->snap_stream_ready) {
		if (ensure_snap_stream(p) < 0) {
			add_ctr(&p->ctr.snapshot_failures, 1);
			return;
		}
		p->snap_stream_ready = 1;
	}
	flush_all(p);
	memset(&w, 0, sizeof(w));
	memset(&h, 0, sizeof(h));
	clock_gettime(CLOCK_REALTIME, &ts);
	h.run = p->run;
	h.global = p->global;
	h.start_seq = wb_load_acquire(&p->acked_seq) + 1;
	h.taken_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	snprintf(h.stream, sizeof(h.stream), "%.63s",
		 wb_load_acquire(&p->acked_stream_set) ? p->acked_stream : p->ctr.stream);
	if (h.stream[0] == '(') {	/* not known yet: the next time */
		p->snap_last_ns = 0;
		return;
	}
	nats_shadow_snapshot(p->shadow, &w, h.taken_ns);
	len = nats_snap_writer_finish(&w, &h);
	chunks = (uint32_t)((len + NATS_SNAP_CHUNK - 1) / NATS_SNAP_CHUNK);
	seqs = len ? malloc(chunks * sizeof(*seqs)) : NULL;
	head = seqs ? malloc(nats_snap_head_size(chunks)) : NULL;
	if (!head) {
		fprintf(stderr, "wirebookd: NATS: no book snapshot (out of memory)\n");
		add_ctr(&p->ctr.snapshot_failures, 1);
		goto out;
	}
	for (i = 0; i < chunks; i++) {
		size_t off = (size_t)i * NATS_SNAP_CHUNK, n = len - off < NATS_SNAP_CHUNK ?
								len - off : NATS_SNAP_CHUNK;

		if (mono_ns() - p->snap_last_ns > SNAPSHOT_MAX_NS ||
		    snap_publish(p, "data", w.buf + off, n, &seqs[i]) < 0)
			break;
	}
	nats_snap_put_head(head, chunks, len, seqs);
	if (i < chunks || snap_publish(p, "head", head, nats_snap_head_size(chunks), &head_seq) < 0) {
		add_ctr(&p->ctr.snapshot_failures, 1);
		goto out;
	}
	/* The newest only: what came before its first chunk goes. A reader
	 * still fetching an older one finds it gone and takes this one. */
	jsOptions_Init(&jo);
	jo.Stream.Purge.Subject = NULL;
	jo.Stream.Purge.Sequence = seqs[0];
	js_PurgeStream(p->js, p->snap_stream, &jo, &jerr);
	p->snap_last_global = h.global;
	add_ctr(&p->ctr.snapshots, 1);
	wb_store_relaxed(&p->ctr.snapshot_bytes, len);
	wb_store_relaxed(&p->ctr.snapshot_events, h.events);
	wb_store_relaxed(&p->ctr.snapshot_start_seq, h.start_seq);
out:
	free(head);
	free(seqs);
	nats_snap_writer_free(&w);
}

/* A snapshot is due: the time or the events since the last one, with
 * something new, and NATS taking what is sent (else it waits). */
static void maybe_snapshot(struct nats_publisher *p)
{
	uint64_t now;

	if (!p->shadow || p->global == p->snap_last_global || !wb_load_relaxed(&p->cc.connected) ||
	    wb_load_relaxed(&p->ctr.waiting))
		return;
	now = mono_ns();
	if ((p->cfg.snapshot_events && p->global - p->snap_last_global >= p->cfg.snapshot_events) ||
	    (p->cfg.client.snapshot_s &&
	     now - p->snap_last_ns >= (uint64_t)p->cfg.client.snapshot_s * 1000000000ull))
		take_snapshot(p);
}

/*
 * Nothing new in the event stream: spin a while, then sleep in its futex
 * until the writer (wirebookd's thread 2, having applied an event to the
 * books) wakes this reader, or the next periodic duty is due. The writer
 * wakes only a reader that said it sleeps (wb_ring_reader_prepare_sleep),
 * so the path pays nothing while this thread is busy.
 */
static void wait_for_events(struct nats_publisher *p)
{
	const struct wb_ring_prod_page *prod = p->reader.prod;
	uint64_t now, due;
	uint32_t word;
	unsigned i;

	for (i = 0; i < PUBLISH_IDLE_SPINS; i++) {
		if (wb_load_acquire(&prod->head) != p->reader.pos)
			return;
		cpu_relax();
	}
	if (wb_load_acquire(&prod->closed) || wb_load_acquire(&p->stop) ||
	    (!p->ctr.end_sent && wb_load_acquire(&p->source_ended))) {
		/* Ended, or END to send (NATS away): no writer wakes this
		 * thread for what it waits on now (the acknowledgements, the
		 * server). */
		nap(PUBLISH_IDLE_MAX_NS);
		return;
	}
	now = mono_ns();
	due = now + PUBLISH_DUTY_NS;
	if (p->books && nats_books_next_ns(p->books) < due)
		due = nats_books_next_ns(p->books);
	if (p->shadow && p->cfg.client.snapshot_s && p->global != p->snap_last_global &&
	    p->snap_last_ns + (uint64_t)p->cfg.client.snapshot_s * 1000000000ull < due)
		due = p->snap_last_ns + (uint64_t)p->cfg.client.snapshot_s * 1000000000ull;
	if (due < now + PUBLISH_IDLE_MAX_NS)	/* due, and not done (NATS away): as a nap */
		due = now + PUBLISH_IDLE_MAX_NS;
	if (wb_ring_reader_prepare_sleep(&p->reader, &word))
		return;
	/* Stop and the source's end wake the futex too (a wake between the
	 * look above and the wait is slept through until the timeout). */
	futex_wait_shared_timeout(&p->reader.cons->sleeping, word, due - now);
}

static void *publisher_main(void *arg)
{
	struct nats_publisher *p = arg;

	for (;;) {
		uint64_t n = unread(p);
		int stopping = wb_load_acquire(&p->stop);

		wb_store_relaxed(&p->ctr.backlog, n);
		say_lost(p);
		if (!p->stream_ready) {
			if (n == 0 && !stopping) {
				nap(PUBLISH_IDLE_NS);
				continue;
			}
			if (ensure_stream(p, n ? first_recv_ns(p) : 0) == 0) {
				p->stream_ready = 1;
			} else {
				if (stopping && mono_ns() > p->stop_deadline_ns)
					break;
				nap(PUBLISH_RETRY_NS);
				continue;
			}
		}
		if (resend_waiting(p) < 0) {
			if (stopping && mono_ns() > p->stop_deadline_ns)
				break;
			nap(PUBLISH_RETRY_NS);	/* the server is away: the stream waits */
			continue;
		}
		/* Copied out only now, when they can go: while NATS is away the
		 * stream alone is the backlog (the oldest are lost beyond it). */
		if (p->read_i == p->read_n) {
			p->read_i = 0;
			p->read_n = (uint32_t)wb_ring_reader_copy(&p->reader, p->read_buf, PUBLISH_READ_MAX);
		}
		if (p->read_i < p->read_n) {
			while (p->read_i < p->read_n && add_event(p, &p->read_buf[p->read_i]) == 0)
				p->read_i++;
			maybe_snapshot(p);
			if (p->books)
				nats_books_tick(p->books, p->nc, mono_ns(), 0);
			continue;
		}
		/* Nothing new: what was read goes out now, whole batches or not. */
		flush_all(p);
		maybe_snapshot(p);
		if (p->books)
			nats_books_tick(p->books, p->nc, mono_ns(), 0);
		if (!p->ctr.end_sent && wb_load_acquire(&p->source_ended) && unread(p) == 0)
			send_end(p);
		if (stopping) {
			if (p->ctr.end_sent && !wb_load_relaxed(&p->ctr.waiting) &&
			    !wb_load_relaxed(&p->ctr.inflight))
				break;
			if (mono_ns() > p->stop_deadline_ns)
				break;
		}
		wait_for_events(p);
	}
	return NULL;
}

struct nats_publisher *nats_publisher_start(const struct nats_publish_config *cfg, char *err,
					    size_t errlen)
{
	struct nats_publisher *p = calloc(1, sizeof(*p));
	jsOptions jo;
	struct timespec ts;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	pthread_mutex_init(&p->lock, NULL);
	if (!cfg->events_ring || wb_ring_check_kind(cfg->events_ring, cfg->events_bytes,
						    WB_RING_MAGIC_BROADCAST) != WB_RING_OK) {
		free(p);
		snprintf(err, errlen, "no event stream to read (--events 0?)");
		return NULL;
	}
	p->send_buf = malloc(nats_batch_size(NATS_BATCH_MAX_EVENTS, NATS_BATCH_MAX_EVENTS));
	p->read_buf = malloc(PUBLISH_READ_MAX * sizeof(*p->read_buf));
	if (!p->send_buf || !p->read_buf) {
		free(p->send_buf);
		free(p->read_buf);
		free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	p->run = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	nats_subject_token(p->instance, sizeof(p->instance), cfg->client.instance);
	snprintf(p->subject_prefix, sizeof(p->subject_prefix), "wirebook.%s.events", p->instance);
	snprintf(p->snap_subject, sizeof(p->snap_subject), "wirebook.%s.snapshot", p->instance);
	{
		char name[64];

		nats_stream_token(name, sizeof(name), cfg->client.instance);
		snprintf(p->snap_stream, sizeof(p->snap_stream), "WIREBOOK_%s_SNAPSHOTS", name);
	}
	if (cfg->client.snapshot_s || cfg->snapshot_events) {
		p->shadow = nats_shadow_create(cfg->max_instruments);
		if (!p->shadow) {
			free(p->send_buf);
			free(p->read_buf);
			free(p);
			snprintf(err, errlen, "out of memory (the book snapshots' shadow books)");
			return NULL;
		}
	}
	p->snap_last_ns = mono_ns();
	if (cfg->books_levels) {
		p->books = nats_books_create(cfg->book_shm, cfg->client.instance, cfg->books_levels,
					     cfg->books_interval_ms, err, errlen);
		if (!p->books) {
			nats_shadow_destroy(p->shadow);
			free(p->send_buf);
			free(p->read_buf);
			free(p);
			return NULL;
		}
	}
	/* From the run's first event (the stream is made fresh for each run),
	 * not the oldest it still holds: events overwritten before this
	 * thread started are counted lost too, not skipped unsaid. */
	wb_ring_reader_init(&p->reader, cfg->events_ring);
	p->reader.pos = 0;
	p->nc = nats_client_connect(&cfg->client, "wirebookd publish", &p->cc, err, errlen);
	if (!p->nc) {
		free(p->send_buf);
		free(p->read_buf);
		free(p);
		return NULL;
	}
	jsOptions_Init(&jo);
	jo.PublishAsync.MaxPending = PUBLISH_MAX_INFLIGHT;
	jo.PublishAsync.AckHandler = on_ack;
	jo.PublishAsync.AckHandlerClosure = p;
	jo.PublishAsync.StallWait = 50;
	if (natsConnection_JetStream(&p->js, p->nc, &jo) != NATS_OK) {
		snprintf(err, errlen, "no JetStream context (out of memory)");
		nats_client_close(p->nc, &p->cc);
		free(p->send_buf);
		free(p->read_buf);
		free(p);
		return NULL;
	}
	jsPubOptions_Init(&p->po);
	p->po.MaxWait = PUBLISH_ACK_WAIT_MS;
	if (pthread_create(&p->th, NULL, publisher_main, p)) {
		snprintf(err, errlen, "cannot start the publisher thread");
		jsCtx_Destroy(p->js);
		nats_client_close(p->nc, &p->cc);
		free(p->send_buf);
		free(p->read_buf);
		free(p);
		return NULL;
	}
	return p;
}

void nats_publisher_source_ended(struct nats_publisher *p)
{
	if (p) {
		wb_store_release(&p->source_ended, 1);
		futex_wake_shared_all(&p->reader.cons->sleeping);
	}
}

void nats_publisher_stop(struct nats_publisher *p, double wait_s)
{
	struct resend *r;
	uint64_t unsent;
	uint32_t i;

	if (!p)
		return;
	p->stop_deadline_ns = mono_ns() + (uint64_t)(wait_s * 1e9);
	wb_store_release(&p->source_ended, 1);
	wb_store_release(&p->stop, 1);
	futex_wake_shared_all(&p->reader.cons->sleeping);
	pthread_join(p->th, NULL);
	say_lost(p);
	if (p->books) {	/* the books as they end */
		nats_books_tick(p->books, p->nc, mono_ns(), 1);
		natsConnection_FlushTimeout(p->nc, 2000);
	}
	p->ctr.backlog = unread(p);
	unsent = p->ctr.backlog + wb_load_relaxed(&p->ctr.waiting) + wb_load_relaxed(&p->ctr.inflight);
	if (unsent)
		fprintf(stderr, "wirebookd: NATS publish: gave up after %.0f s with %llu events in "
			"the event stream, %llu batches to resend and %llu not acknowledged: NOT all "
			"published\n", wait_s, (unsigned long long)p->ctr.backlog,
			(unsigned long long)p->ctr.waiting, (unsigned long long)p->ctr.inflight);
	nats_publisher_print(p, stdout);
	nats_client_close(p->nc, &p->cc);
	jsCtx_Destroy(p->js);
	while ((r = p->resend_head)) {
		p->resend_head = r->next;
		natsMsg_Destroy(r->msg);
		free(r);
	}
	for (i = 0; i < p->n_used; i++)
		free(p->lines[p->used_lines[i]]);
	nats_shadow_destroy(p->shadow);
	nats_books_destroy(p->books);
	free(p->send_buf);
	free(p->read_buf);
	free(p);
}

void nats_publisher_counters(struct nats_publisher *p, struct nats_publish_counters *out)
{
	if (!p) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = p->ctr;	/* plain reads of counters other threads move: a snapshot */
	out->lost = wb_load_relaxed(&p->ctr.lost);
	if (p->books) {
		struct nats_books_counters bc;

		nats_books_counters(p->books, &bc);
		out->book_messages = bc.messages;
		out->book_bytes = bc.bytes;
		out->book_failed = bc.failed;
	}
	out->disconnects = wb_load_relaxed(&p->cc.disconnects);
	out->reconnects = wb_load_relaxed(&p->cc.reconnects);
	out->connected = wb_load_relaxed(&p->cc.connected);
}

void nats_publisher_print(struct nats_publisher *p, FILE *f)
{
	struct nats_publish_counters c;

	if (!p)
		return;
	nats_publisher_counters(p, &c);
	fprintf(f, "nats publish: stream %s, %s; batches %llu (acked %llu, duplicates %llu, resent "
		"%llu), events %llu, bytes %llu; backlog %llu events, %llu batches to resend, %llu "
		"in flight; LOST %llu; disconnects %llu, reconnects %llu%s\n",
		c.stream[0] ? c.stream : "(not made yet)", c.connected ? "connected" : "NOT CONNECTED",
		(unsigned long long)c.batches, (unsigned long long)c.acked,
		(unsigned long long)c.duplicates, (unsigned long long)c.resent,
		(unsigned long long)c.events, (unsigned long long)c.bytes,
		(unsigned long long)c.backlog, (unsigned long long)c.waiting,
		(unsigned long long)c.inflight, (unsigned long long)c.lost,
		(unsigned long long)c.disconnects, (unsigned long long)c.reconnects,
		c.end_sent ? ", end sent" : "");
	if (p->shadow)
		fprintf(f, "nats publish snapshots: %llu stored (the last %llu bytes, %llu events, "
			"readers start at stream sequence %llu), %llu failed\n",
			(unsigned long long)c.snapshots, (unsigned long long)c.snapshot_bytes,
			(unsigned long long)c.snapshot_events, (unsigned long long)c.snapshot_start_seq,
			(unsigned long long)c.snapshot_failures);
	if (p->books)
		fprintf(f, "nats publish books: %llu messages, %llu bytes, %llu refused\n",
			(unsigned long long)c.book_messages, (unsigned long long)c.book_bytes,
			(unsigned long long)c.book_failed);
}

void nats_publisher_metrics(struct nats_publisher *p, FILE *f)
{
	struct nats_publish_counters c;

	if (!p)
		return;
	nats_publisher_counters(p, &c);
#define M(name, type, help, v)                                                               \
	do {                                                                                 \
		metrics_family(f, "wirebook_nats_publish_" name, type, help);                \
		fprintf(f, "wirebook_nats_publish_" name " %llu\n", (unsigned long long)(v)); \
	} while (0)
	M("batches_total", "counter", "Batches published to JetStream", c.batches);
	M("events_total", "counter", "Events published to JetStream", c.events);
	M("bytes_total", "counter", "Payload bytes published", c.bytes);
	M("acked_total", "counter", "Batches JetStream acknowledged", c.acked);
	M("duplicates_total", "counter", "Acknowledged as already held (a resend)", c.duplicates);
	M("resent_total", "counter", "Batches sent again", c.resent);
	M("lost_events_total", "counter", "Events never published: the backlog was full", c.lost);
	M("backlog_events", "gauge", "Events in the event stream not published yet", c.backlog);
	M("resend_batches", "gauge", "Batches waiting to be sent again", c.waiting);
	M("inflight_batches", "gauge", "Batches sent, not acknowledged yet", c.inflight);
	M("disconnects_total", "counter", "Times the NATS connection was lost", c.disconnects);
	M("reconnects_total", "counter", "Times it was made again", c.reconnects);
	M("connected", "gauge", "1 while connected to NATS", c.connected);
	M("snapshots_total", "counter", "Book snapshots stored in JetStream", c.snapshots);
	M("snapshot_failures_total", "counter", "Book snapshots that could not be stored",
	  c.snapshot_failures);
	M("snapshot_bytes", "gauge", "The last book snapshot's size", c.snapshot_bytes);
	M("snapshot_events", "gauge", "The last book snapshot's events", c.snapshot_events);
	M("book_messages_total", "counter", "Conflated book messages published", c.book_messages);
	M("book_bytes_total", "counter", "Conflated book message bytes", c.book_bytes);
	M("book_failed_total", "counter", "Conflated book messages the client refused",
	  c.book_failed);
#undef M
}
#endif
