/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Received batches in the origin's order (nats_batch.h): a heap of the
 * batches held, keyed by the global index of each one's next event, so
 * that the top is always the next event the origin applied among those
 * received. A reader applies from the top while its key is the one it
 * expects, waits while it is later (a hole), skips while it is earlier
 * (applied already). wb-export's stream reader (nats_read.c) and
 * wirebookd's --source (nats_source.c) both use it: one heap, the
 * counters each keeps around it its own (held: see struct nats_order).
 */
#ifndef WIREBOOK_NET_NATS_ORDER_H
#define WIREBOOK_NET_NATS_ORDER_H

#ifdef WB_NATS
#include <stdint.h>
#include <nats/nats.h>
#include "net/nats_batch.h"

/* A held batch: where its next event is. */
struct nats_held {
	natsMsg *msg;
	const uint8_t *data;
	struct nats_batch_header h;
	struct nats_batch_run r;	/* the current run */
	uint32_t run;		/* its index */
	uint32_t off;		/* its events passed */
	uint32_t ev;		/* the batch's next event */
	uint64_t key;		/* that event's global index */
};

struct nats_order {
	struct nats_held **heap;	/* by key, smallest first */
	uint32_t n, cap;
	/* Or NULL: n stored here at every push and pop, for another
	 * thread to read (wirebookd --source's held batches counter). */
	uint64_t *held;
};

/* Hold message m, a parsed batch h with events (count and runs > 0): the
 * heap owns m from here, also on failure (-1: out of memory, m freed). */
int nats_order_push(struct nats_order *o, natsMsg *m, const uint8_t *data,
		    const struct nats_batch_header *h);
/* The batch holding the smallest key; n > 0. */
static inline struct nats_held *nats_order_top(const struct nats_order *o)
{
	return o->heap[0];
}
/* Move the top batch k events on (k: at most what is left of its run).
 * 1 when that finished the batch (freed), else 0. */
int nats_order_advance(struct nats_order *o, uint32_t k);
/* Free the top batch (what is left of it unread). */
void nats_order_pop(struct nats_order *o);
/* Free every batch held, and the heap. */
void nats_order_free(struct nats_order *o);
#endif

#endif /* WIREBOOK_NET_NATS_ORDER_H */
