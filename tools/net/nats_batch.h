/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The normalized stream over NATS JetStream (issue 26): what one message
 * carries. wirebookd --publish sends the events of one feed line in
 * batches on the subject wirebook.INSTANCE.events.VENUE (the line's
 * venue): a 56-byte header, RUNS run records, then COUNT struct wb_event
 * records as the ABI lays them out (64 bytes, little-endian, event.h).
 *
 * Every event the publisher sends has a number in the order the
 * origin's builder applied them, counted from 1 in each run of the
 * publisher (its "global" index): the run records say which (a run: a
 * first global index and a count of consecutive ones; a batch's events
 * are its runs' in order). A reader that wants the origin's books exactly
 * (the Super-Book's last trade and trading state follow the order across
 * venues) applies them in that order: it waits for a missing index (a
 * batch resent after a NATS restart is stored after later ones), skips
 * one it has applied, and sees a hole as a hole. A reader of some venues
 * only ignores the runs. The line's own event numbers (first, first +
 * count - 1) and the feed sequence numbers the batch covers are in the
 * header for such readers and for people.
 *
 * Header, little-endian:
 *   0  u32 magic "WBNB"    4  u16 version (1)   6  u16 flags
 *   8  u16 line           10  u8 venue          11 u8 zero
 *  12  u32 count          16  u64 run (the publisher's start, ns since the epoch)
 *  24  u64 the line's first event number (from 1)
 *  32  u64 first feed sequence number (0: none)   40  u64 last one
 *  48  u32 runs           52  u32 zero
 * Run record: u64 first global index, u32 count, u32 zero.
 *
 * The END batch (flags NATS_BATCH_END, subject wirebook.INSTANCE.events.end,
 * no runs or events) says the publisher's source ended; its "first" field
 * holds the number of events the run published, so a reader knows when it
 * holds all of them.
 */
#ifndef WIREBOOK_NET_NATS_BATCH_H
#define WIREBOOK_NET_NATS_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include "wirebook/event.h"

#define NATS_BATCH_MAGIC 0x424e4257u	/* "WBNB" as little-endian bytes */
#define NATS_BATCH_VERSION 1u
#define NATS_BATCH_HEADER 56u
#define NATS_BATCH_END 0x0001u
#define NATS_BATCH_RUN_SIZE 16u
/* Events per batch at most: 64 KiB of events, well under NATS's 1 MB
 * default max_payload. */
#define NATS_BATCH_MAX_EVENTS 1024u

struct nats_batch_header {
	uint16_t flags;
	uint16_t line;
	uint8_t venue;
	uint32_t count;
	uint64_t run;
	uint64_t first;
	uint64_t seq_first;
	uint64_t seq_last;
	uint32_t runs;
};

struct nats_batch_run {
	uint64_t first;		/* global index of its first event */
	uint32_t count;
};

void nats_batch_put_header(uint8_t *out, const struct nats_batch_header *h);

/* Parse a message's header and check that its length matches what it
 * says it holds. 0, or -1 with why in err. */
int nats_batch_parse(const uint8_t *msg, size_t len, struct nats_batch_header *h, char *err,
		     size_t errlen);
/* The length of a batch of so many runs and events. */
size_t nats_batch_size(uint32_t runs, uint32_t count);
/* The i-th run record of a batch (parsed, i < runs). */
void nats_batch_run_at(const uint8_t *msg, uint32_t i, struct nats_batch_run *out);
void nats_batch_put_run(uint8_t *msg, uint32_t i, const struct nats_batch_run *r);
/* Where the i-th event of a parsed batch (i < count) starts; the bytes
 * need not be aligned: copy them out. */
const uint8_t *nats_batch_event_at(const uint8_t *msg, const struct nats_batch_header *h,
				   uint32_t i);

/* A subject token from a name: NATS forbids '.', '*', '>' and white
 * space in one; those become '_'. Truncated to size - 1. */
void nats_subject_token(char *out, size_t size, const char *name);

#endif /* WIREBOOK_NET_NATS_BATCH_H */
