/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd --publish nats://HOST:PORT: the normalized events, as the
 * builder applied them, into a JetStream stream (issue 26), from a thread
 * of its own that never holds the books up.
 *
 * This thread is one more reader of wirebookd's event stream
 * (book/event_stream.h: every event thread 1 applied, in a broadcast ring
 * that never waits for its readers; with nothing new it sleeps in the
 * ring's futex, which the writer wakes): it cuts each feed line's
 * events into batches (nats_batch.h) and publishes them asynchronously,
 * each with a message id JetStream deduplicates on. What the server did
 * not acknowledge (down, restarted, slow) is sent again, in order, as soon
 * as it takes it: nothing is dropped while JetStream accepts it. The
 * stream is the bounded backlog (wirebookd --events, at least
 * --publish-backlog): while this thread cannot publish it stops reading,
 * and once it falls more than the stream behind the oldest events are
 * overwritten, counted as lost and said on stderr every second (the local
 * books are never affected).
 *
 * The stream: --nats-stream NAME, else WIREBOOK_<INSTANCE>_<YYYYMMDD> of
 * the first event's receive day (UTC); subjects wirebook.INSTANCE.events.>
 * (a subject per venue, .end for the END batch); file storage, a 10
 * minute duplicate window; made when missing.
 *
 * Book snapshots: the thread keeps shadow books of what it read
 * (nats_shadow.h) and stores a snapshot of them (nats_snapshot.h) every
 * client.snapshot_s seconds (or snapshot_events events) in the stream
 * WIREBOOK_<INSTANCE>_SNAPSHOTS, the newest only (older ones purged).
 */
#ifndef WIREBOOK_NET_NATS_PUBLISH_H
#define WIREBOOK_NET_NATS_PUBLISH_H

#include <stdint.h>
#include <stdio.h>
#include "net/nats_client.h"

struct nats_publish_config {
	struct nats_client_config client;
	const char *stream;	/* --nats-stream; NULL: by instance and day */
	void *events_ring;	/* the event stream's ring (builder_event_stream: mem) */
	uint64_t events_bytes;	/* and its size */
	/* The venue of each feed-map line, for the subjects (the SIP lines'
	 * events name each quote's venue, not the line's); 0: the event's. */
	uint8_t line_venue[256];
	/* Book snapshots (nats_snapshot.h; client.snapshot_s the interval):
	 * also one after this many events (0: by time only); the books'
	 * instrument ids are below max_instruments (0: the default). */
	uint64_t snapshot_events;
	uint32_t max_instruments;
	/* Conflated book subjects (nats_books.h): levels per side (0: none),
	 * the interval per symbol, and the book to read them from. */
	unsigned books_levels;
	unsigned books_interval_ms;
	const char *book_shm;
};

struct nats_publish_counters {
	uint64_t batches;	/* batches published (sent; resends not counted) */
	uint64_t events;
	uint64_t bytes;		/* payload bytes */
	uint64_t acked;		/* batches JetStream acknowledged */
	uint64_t duplicates;	/* of which it already held (a resend that had arrived) */
	uint64_t resent;	/* batches sent again (not acknowledged, or refused while down) */
	uint64_t lost;		/* events overwritten in the stream before they were read: never published */
	uint64_t backlog;	/* events in the stream not published yet */
	uint64_t waiting;	/* batches to send again */
	uint64_t inflight;	/* batches sent, not acknowledged yet */
	uint64_t disconnects, reconnects;
	int connected;
	int end_sent;		/* the END batch went out */
	char stream[128];	/* the stream's name, once known */
	/* Book snapshots stored (nats_snapshot.h): how many, the last one's
	 * size, events and the event stream sequence a reader starts from,
	 * and the attempts that failed (NATS away, too slow). */
	uint64_t snapshots, snapshot_bytes, snapshot_events, snapshot_start_seq;
	uint64_t snapshot_failures;
	/* Conflated book messages (nats_books.h): sent, their bytes, refused. */
	uint64_t book_messages, book_bytes, book_failed;
};

struct nats_publisher;

/* Connect and start the thread (after builder_leave_path: it stays off
 * the path's cores). NULL with why in err. */
struct nats_publisher *nats_publisher_start(const struct nats_publish_config *cfg, char *err,
					    size_t errlen);
/* The source ended: publish END once everything before it is out. */
void nats_publisher_source_ended(struct nats_publisher *p);
/* After builder_stop, before builder_destroy (the stream holds the last events): publish what is
 * left, END, wait at most wait_s for the acknowledgements; say on stderr
 * what could not be published. Frees p. */
void nats_publisher_stop(struct nats_publisher *p, double wait_s);
void nats_publisher_counters(struct nats_publisher *p, struct nats_publish_counters *out);
void nats_publisher_print(struct nats_publisher *p, FILE *f);
void nats_publisher_metrics(struct nats_publisher *p, FILE *f);

#endif /* WIREBOOK_NET_NATS_PUBLISH_H */
