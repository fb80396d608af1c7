/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A day back from the NATS JetStream stream wirebookd --publish fills
 * (nats_batch.h), as a file is read: wb-export nats://HOST:PORT[/STREAM].
 *
 * An ordered consumer reads the stream from a stream sequence (default
 * its first message) up to another (default: the last one it held when
 * the read got there: a live stream is read up to then, as a capture to
 * its end), and hands the events over in the origin's order, the order
 * its builder applied them: each publisher run's events by their global
 * index (nats_batch.h), a batch stored after later ones waiting for its
 * turn, one already handed over skipped. From the stream's start that is
 * exactly the origin's order. From a later sequence the first events
 * before the range's are unknown: the reader holds the first batches
 * (NATS_READ_PRIME of them) and starts at the smallest index they hold;
 * an event with a smaller index that comes after is handed over at once
 * (counted as early); a hole (events in messages outside the range) is
 * skipped once NATS_READ_PRIME batches wait behind it. Reading the whole
 * stream, a hole never filled (the publisher lost events, the stream's
 * oldest were removed) is skipped once NATS_READ_HOLD_MAX batches wait
 * behind it, or at the stream's end; counted as lost.
 */
#ifndef WIREBOOK_NET_NATS_READ_H
#define WIREBOOK_NET_NATS_READ_H

#include <stddef.h>
#include <stdint.h>
#include "net/nats_client.h"
#include "wirebook/event.h"

#define NATS_READ_PRIME 256u
#define NATS_READ_HOLD_MAX 65536u

struct nats_read_config {
	struct nats_client_config client;	/* url: nats://HOST:PORT[/STREAM] */
	uint64_t first_seq;	/* the first stream sequence to read (0: the stream's first) */
	uint64_t last_seq;	/* the last (0: the stream's last when the read gets there) */
	unsigned wait_ms;	/* how long a silent server is waited for (0: 10 s) */
};

struct nats_read_counts {
	uint64_t messages, batches, events, bytes;
	uint64_t duplicates;	/* events handed over already (a resend): skipped */
	uint64_t early;		/* events before the first of a later range, handed over late */
	uint64_t lost;		/* events of a hole never filled (the whole stream read) */
	uint64_t lost_holes;	/* such holes */
	uint64_t outside;	/* events of the run in messages outside the range read */
	uint64_t stale;		/* batches of an earlier publisher run, after a later one's */
	uint64_t bad;		/* messages that are no batch */
	uint64_t runs;		/* publisher runs seen */
	uint64_t first_seq, last_seq;	/* the stream sequences read */
	char stream[256];
};

struct nats_reader;

/* Connect and subscribe. NULL with why in err. */
struct nats_reader *nats_reader_open(const struct nats_read_config *cfg, char *err, size_t errlen);
/* Up to max events, in the origin's order, into out: how many; 0 at the
 * range's end; -1 with why in err. */
int nats_reader_read(struct nats_reader *r, struct wb_event *out, unsigned max, char *err,
		     size_t errlen);
void nats_reader_counts(const struct nats_reader *r, struct nats_read_counts *c);
void nats_reader_close(struct nats_reader *r);

#endif /* WIREBOOK_NET_NATS_READ_H */
