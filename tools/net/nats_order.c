/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Received batches in the origin's order; see nats_order.h. */
#include <stdlib.h>

#include "net/nats_order.h"

#ifdef WB_NATS
#include "wirebook/barrier.h"

static void note_held(struct nats_order *o)
{
	if (o->held)
		wb_store_relaxed(o->held, o->n);
}

static void swap(struct nats_order *o, uint32_t i, uint32_t j)
{
	struct nats_held *t = o->heap[i];

	o->heap[i] = o->heap[j];
	o->heap[j] = t;
}

static void sift_down(struct nats_order *o, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l < o->n && o->heap[l]->key < o->heap[m]->key)
			m = l;
		if (l + 1 < o->n && o->heap[l + 1]->key < o->heap[m]->key)
			m = l + 1;
		if (m == i)
			return;
		swap(o, i, m);
		i = m;
	}
}

int nats_order_push(struct nats_order *o, natsMsg *m, const uint8_t *data,
		    const struct nats_batch_header *h)
{
	struct nats_held *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (c && o->n == o->cap) {
		uint32_t cap = o->cap ? 2 * o->cap : 64;
		struct nats_held **heap = realloc(o->heap, cap * sizeof(*heap));

		if (heap) {
			o->heap = heap;
			o->cap = cap;
		}
	}
	if (!c || o->n == o->cap) {
		free(c);
		natsMsg_Destroy(m);
		return -1;
	}
	c->msg = m;
	c->data = data;
	c->h = *h;
	nats_batch_run_at(data, 0, &c->r);
	c->key = c->r.first;
	i = o->n++;
	o->heap[i] = c;
	while (i && o->heap[(i - 1) / 2]->key > o->heap[i]->key) {
		swap(o, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	note_held(o);
	return 0;
}

void nats_order_pop(struct nats_order *o)
{
	struct nats_held *c = o->heap[0];

	natsMsg_Destroy(c->msg);
	free(c);
	o->heap[0] = o->heap[--o->n];
	sift_down(o, 0);
	note_held(o);
}

int nats_order_advance(struct nats_order *o, uint32_t k)
{
	struct nats_held *c = o->heap[0];

	c->off += k;
	c->ev += k;
	c->key += k;
	if (c->off == c->r.count) {
		if (++c->run == c->h.runs) {
			nats_order_pop(o);
			return 1;
		}
		nats_batch_run_at(c->data, c->run, &c->r);
		c->off = 0;
		c->key = c->r.first;
	}
	sift_down(o, 0);
	return 0;
}

void nats_order_free(struct nats_order *o)
{
	while (o->n)
		nats_order_pop(o);
	free(o->heap);
	o->heap = NULL;
	o->cap = 0;
}
#endif
