/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Book snapshots in JetStream (issue 26): what a --source that starts late
 * or again loads instead of replaying the day from the stream's start.
 *
 * A snapshot is a list of normalized events that rebuild the origin's
 * books from empty (the symbols, each venue's gap marks, the resting
 * orders of every book in queue order, the trade totals and last trade,
 * the statuses, the SIP's last quotes, NBBO, bands and statuses), tagged
 * with the publisher run and the last of its events (its "global" index,
 * nats_batch.h) the books stand after, and the event stream's sequence a
 * reader starts from to get every later event (it skips, as ever, those
 * it holds already). A record is an event and how many times to apply it
 * (the Super-Book's trade count and a venue's gap count are counts of
 * events: the snapshot says "this, N times" rather than carrying N).
 *
 * Snapshot, little-endian:
 *   0  u32 magic "WBNS"   4  u16 version (1)   6  u16 zero
 *   8  u64 run           16  u64 global (events of the run applied)
 *  24  u64 start_seq (the event stream's sequence to read from)
 *  32  u64 records       40  u64 events (the records' repeats summed)
 *  48  u64 taken (ns since the epoch)   56  char stream[64] (NUL padded)
 * 120  u64 zero
 * then the records: u32 repeat (>= 1), u32 zero, struct wb_event (64 bytes).
 *
 * In JetStream (stream WIREBOOK_<INSTANCE>_SNAPSHOTS, subjects
 * wirebook.INSTANCE.snapshot.>), cut in chunks of at most
 * NATS_SNAP_CHUNK bytes on wirebook.INSTANCE.snapshot.data, then a head on
 * wirebook.INSTANCE.snapshot.head that lists them, which a reader finds
 * with "last message of the subject":
 *   0  u32 magic "WBNH"   4  u16 version (1)   6  u16 zero
 *   8  u32 chunks        12  u32 zero          16  u64 the snapshot's bytes
 *  24  u64 each chunk's stream sequence, in order.
 */
#ifndef WIREBOOK_NET_NATS_SNAPSHOT_H
#define WIREBOOK_NET_NATS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include "wirebook/event.h"

#define NATS_SNAP_MAGIC 0x534e4257u	/* "WBNS" as little-endian bytes */
#define NATS_SNAP_HEAD_MAGIC 0x484e4257u	/* "WBNH" */
#define NATS_SNAP_VERSION 1u
#define NATS_SNAP_HEADER 128u
#define NATS_SNAP_RECORD 72u
#define NATS_SNAP_HEAD_HEADER 24u
/* Bytes per chunk message: under NATS's 1 MB default max_payload. */
#define NATS_SNAP_CHUNK (512u * 1024u)

struct nats_snap_header {
	uint64_t run;
	uint64_t global;
	uint64_t start_seq;
	uint64_t records;
	uint64_t events;
	uint64_t taken_ns;
	char stream[64];
};

size_t nats_snap_size(uint64_t records);
void nats_snap_put_header(uint8_t *out, const struct nats_snap_header *h);
/* Check a whole snapshot: header, length, every record's repeat, the
 * events count. 0, or -1 with why in err. */
int nats_snap_parse(const uint8_t *buf, size_t len, struct nats_snap_header *h, char *err,
		    size_t errlen);
/* Record i of a parsed snapshot: its event copied out, its repeat returned. */
uint32_t nats_snap_record_at(const uint8_t *snap, uint64_t i, struct wb_event *ev);

/* A snapshot being made: records appended to a growing buffer, the header
 * written last (nats_snap_writer_finish). */
struct nats_snap_writer {
	uint8_t *buf;
	size_t cap;
	uint64_t records, events;
	int failed;		/* out of memory: the snapshot is not made */
};
void nats_snap_writer_add(struct nats_snap_writer *w, uint32_t repeat, const struct wb_event *ev);
/* The header in place; the snapshot's length, 0 when it failed. */
size_t nats_snap_writer_finish(struct nats_snap_writer *w, struct nats_snap_header *h);
void nats_snap_writer_free(struct nats_snap_writer *w);

size_t nats_snap_head_size(uint32_t chunks);
void nats_snap_put_head(uint8_t *out, uint32_t chunks, uint64_t bytes, const uint64_t *seqs);
int nats_snap_parse_head(const uint8_t *msg, size_t len, uint32_t *chunks, uint64_t *bytes,
			 char *err, size_t errlen);
uint64_t nats_snap_head_seq(const uint8_t *msg, uint32_t i);

/* A JetStream stream name from a name: letters, digits and '-' kept, the rest '_'. */
void nats_stream_token(char *out, size_t size, const char *name);

#endif /* WIREBOOK_NET_NATS_SNAPSHOT_H */
