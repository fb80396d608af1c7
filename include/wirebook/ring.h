/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The event ring: single producer, single consumer, shared between the
 * kernel module and user space (or between two user-space threads or
 * processes through shared memory). The fast path is here, inline.
 *
 * Memory layout (offsets from the start of the mapping):
 *
 *   0              struct wb_ring_prod_page   written only by the producer
 *   WB_RING_PAGE   struct wb_ring_cons_page   written only by the consumer
 *   2*WB_RING_PAGE slot_count x struct wb_event
 *
 * The producer page can be mapped read-only to the consumer, and the
 * producer never trusts what the consumer page says beyond using it to
 * decide "full": a bogus tail can only make the ring look full (drops are
 * counted) and can never make the producer write outside the slots.
 *
 * Each side keeps a private copy of its own index and a cached copy of the
 * peer's, and reads the peer's shared index only when its cached view says
 * full (producer) or empty (consumer). One release store publishes a batch.
 * On overflow the producer drops the newest event and counts it.
 */
#ifndef WIREBOOK_RING_H
#define WIREBOOK_RING_H

#include "event.h"
#include "barrier.h"

#define WB_RING_MAGIC 0x57425247u /* "WBRG" */
#define WB_RING_PAGE 4096u
#define WB_RING_SLOTS_OFFSET (2u * WB_RING_PAGE)

struct wb_ring_prod_page {
	/* line 0: immutable after init */
	uint32_t magic;
	uint32_t abi_version;
	uint32_t slot_size;
	uint32_t slot_count;	/* power of two */
	uint64_t created_ns;	/* identifies this ring instance across restarts */
	uint8_t pad0[40];
	/* line 1: the published producer index */
	uint64_t head __attribute__((aligned(64)));
	uint8_t pad1[56];
	/* line 2: a gap line, as AF_XDP leaves, then the producer's counters */
	uint8_t gap[64];
	uint64_t dropped __attribute__((aligned(64))); /* events lost to a full ring */
	uint64_t published;	/* events published */
	uint64_t batches;	/* publish calls that made events visible */
	uint64_t wakeups;	/* times the producer woke a sleeping consumer */
	uint8_t pad3[WB_RING_PAGE - 3 * 64 - 32];
} __attribute__((aligned(4096)));

struct wb_ring_cons_page {
	uint64_t tail __attribute__((aligned(64))); /* consumer index */
	uint8_t pad0[56];
	/* Set by the consumer before it sleeps in poll(); cleared on wake. */
	uint32_t sleeping __attribute__((aligned(64)));
	uint8_t pad1[WB_RING_PAGE - 64 - 4];
} __attribute__((aligned(4096)));

WB_STATIC_ASSERT(sizeof(struct wb_ring_prod_page) == WB_RING_PAGE, "producer page");
WB_STATIC_ASSERT(sizeof(struct wb_ring_cons_page) == WB_RING_PAGE, "consumer page");

static inline uint64_t wb_ring_bytes(uint32_t slot_count)
{
	return WB_RING_SLOTS_OFFSET + (uint64_t)slot_count * sizeof(struct wb_event);
}

static inline int wb_ring_slot_count_valid(uint32_t n)
{
	return n >= 2 && (n & (n - 1)) == 0 && n <= (1u << 28);
}

/* Lay out a fresh ring in zeroed memory of wb_ring_bytes(slot_count). */
static inline void wb_ring_format(void *mem, uint32_t slot_count, uint64_t created_ns)
{
	struct wb_ring_prod_page *pp = (struct wb_ring_prod_page *)mem;

	pp->abi_version = WB_ABI_VERSION;
	pp->slot_size = sizeof(struct wb_event);
	pp->slot_count = slot_count;
	pp->created_ns = created_ns;
	wb_store_release(&pp->magic, WB_RING_MAGIC);
}

enum wb_ring_check {
	WB_RING_OK = 0,
	WB_RING_BAD_MAGIC = -1,
	WB_RING_ABI_MISMATCH = -2,
	WB_RING_BAD_GEOMETRY = -3,
};

/* Validate a mapping before attaching to it; size is the mapping's length. */
static inline int wb_ring_check(const void *mem, uint64_t size)
{
	const struct wb_ring_prod_page *pp = (const struct wb_ring_prod_page *)mem;

	if (size < WB_RING_SLOTS_OFFSET || wb_load_acquire(&pp->magic) != WB_RING_MAGIC)
		return WB_RING_BAD_MAGIC;
	if (pp->abi_version != WB_ABI_VERSION || pp->slot_size != sizeof(struct wb_event))
		return WB_RING_ABI_MISMATCH;
	if (!wb_ring_slot_count_valid(pp->slot_count) || wb_ring_bytes(pp->slot_count) > size)
		return WB_RING_BAD_GEOMETRY;
	return WB_RING_OK;
}

/* ---- producer side -------------------------------------------------- */

struct wb_ring_producer {
	struct wb_ring_prod_page *prod;
	const struct wb_ring_cons_page *cons;
	struct wb_event *slots;
	uint64_t mask;
	uint64_t head;		/* private: next slot to fill */
	uint64_t cached_tail;	/* private: last tail read from the consumer page */
	uint64_t published;	/* private: head as last published */
	uint64_t dropped;	/* private running total, mirrored on publish */
};

static inline void wb_ring_producer_init(struct wb_ring_producer *p, void *mem)
{
	p->prod = (struct wb_ring_prod_page *)mem;
	p->cons = (const struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	p->slots = (struct wb_event *)((char *)mem + WB_RING_SLOTS_OFFSET);
	p->mask = p->prod->slot_count - 1;
	p->head = p->published = wb_load_relaxed(&p->prod->head);
	p->cached_tail = wb_load_acquire(&p->cons->tail);
	p->dropped = wb_load_relaxed(&p->prod->dropped);
}

/*
 * The next free slot, or NULL when the ring is full (the caller counts the
 * drop with wb_ring_producer_drop). The slot becomes visible to the
 * consumer only after wb_ring_producer_commit + wb_ring_producer_publish.
 */
static inline struct wb_event *wb_ring_producer_slot(struct wb_ring_producer *p)
{
	if (wb_unlikely(p->head - p->cached_tail > p->mask)) {
		p->cached_tail = wb_load_acquire(&p->cons->tail);
		/* A tail ahead of head or more than a ring behind is garbage
		 * from user space: treat the ring as full. */
		if (p->head - p->cached_tail > p->mask)
			return 0;
	}
	return &p->slots[p->head & p->mask];
}

static inline void wb_ring_producer_commit(struct wb_ring_producer *p)
{
	p->head++;
}

static inline void wb_ring_producer_drop(struct wb_ring_producer *p)
{
	p->dropped++;
}

/*
 * Make every committed slot visible with one release store, for a
 * consumer that never sleeps on the ring (it polls): no wakeup check, so
 * no full fence. Returns nonzero when anything new became visible.
 */
static inline int wb_ring_producer_publish_no_wakeup(struct wb_ring_producer *p)
{
	struct wb_ring_prod_page *pp = p->prod;

	if (p->head == p->published) {
		if (p->dropped != wb_load_relaxed(&pp->dropped))
			wb_store_release(&pp->dropped, p->dropped);
		return 0;
	}
	wb_store_relaxed(&pp->published, wb_load_relaxed(&pp->published) + (p->head - p->published));
	wb_store_relaxed(&pp->batches, wb_load_relaxed(&pp->batches) + 1);
	wb_store_relaxed(&pp->dropped, p->dropped);
	wb_store_release(&pp->head, p->head);
	p->published = p->head;
	return 1;
}

/*
 * Publish (as above) and report whether the consumer said it sleeps and
 * needs a wakeup.
 */
static inline int wb_ring_producer_publish(struct wb_ring_producer *p)
{
	if (!wb_ring_producer_publish_no_wakeup(p))
		return 0;
	/* Pairs with the consumer's fence between setting sleeping and
	 * re-reading head: one of the two sides sees the other. */
	wb_full_fence();
	if (wb_load_relaxed(&p->cons->sleeping)) {
		wb_store_relaxed(&p->prod->wakeups, wb_load_relaxed(&p->prod->wakeups) + 1);
		return 1;
	}
	return 0;
}

/* ---- consumer side -------------------------------------------------- */

struct wb_ring_consumer {
	const struct wb_ring_prod_page *prod;
	struct wb_ring_cons_page *cons;
	const struct wb_event *slots;
	uint64_t mask;
	uint64_t tail;		/* private: next slot to read */
	uint64_t cached_head;	/* private: last head read from the producer page */
};

static inline void wb_ring_consumer_init(struct wb_ring_consumer *c, void *mem)
{
	c->prod = (const struct wb_ring_prod_page *)mem;
	c->cons = (struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	c->slots = (const struct wb_event *)((const char *)mem + WB_RING_SLOTS_OFFSET);
	c->mask = c->prod->slot_count - 1;
	c->tail = wb_load_relaxed(&c->cons->tail);
	c->cached_head = wb_load_acquire(&c->prod->head);
}

/* Number of events ready to read; re-reads head only when the cache is empty. */
static inline uint64_t wb_ring_consumer_available(struct wb_ring_consumer *c)
{
	if (c->cached_head == c->tail)
		c->cached_head = wb_load_acquire(&c->prod->head);
	return c->cached_head - c->tail;
}

/* The i-th unread event, 0 <= i < wb_ring_consumer_available(). */
static inline const struct wb_event *wb_ring_consumer_at(const struct wb_ring_consumer *c,
							 uint64_t i)
{
	return &c->slots[(c->tail + i) & c->mask];
}

/* Hand n read slots back to the producer with one release store. */
static inline void wb_ring_consumer_release(struct wb_ring_consumer *c, uint64_t n)
{
	c->tail += n;
	wb_store_release(&c->cons->tail, c->tail);
}

static inline uint64_t wb_ring_consumer_dropped(const struct wb_ring_consumer *c)
{
	return wb_load_acquire(&c->prod->dropped);
}

/*
 * Before sleeping in poll(): say so, then look once more, so an event
 * published between the last look and the flag is not slept through.
 * Returns nonzero if there is something to read after all.
 */
static inline int wb_ring_consumer_prepare_sleep(struct wb_ring_consumer *c)
{
	wb_store_relaxed(&c->cons->sleeping, 1);
	wb_full_fence();
	c->cached_head = wb_load_acquire(&c->prod->head);
	if (c->cached_head != c->tail) {
		wb_store_relaxed(&c->cons->sleeping, 0);
		return 1;
	}
	return 0;
}

static inline void wb_ring_consumer_woke(struct wb_ring_consumer *c)
{
	wb_store_relaxed(&c->cons->sleeping, 0);
}

#endif /* WIREBOOK_RING_H */
