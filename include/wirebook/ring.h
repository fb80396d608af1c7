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
 *
 * The same layout also serves one writer and any number of readers (a
 * broadcast ring: wirebookd's published event stream); see "Broadcast
 * rings" at the end.
 */
#ifndef WIREBOOK_RING_H
#define WIREBOOK_RING_H

#include "event.h"
#include "barrier.h"

#define WB_RING_MAGIC 0x57425247u /* "WBRG" */
#define WB_RING_MAGIC_BROADCAST 0x57425242u /* "WBRB": one writer, any number of readers */
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
	/* A broadcast ring's writer (see "Broadcast rings" below): the end of
	 * the slots it may be writing, stored before it writes them. */
	uint64_t claim;
	uint8_t pad1[48];
	/* line 2: a gap line, as AF_XDP leaves, then the producer's counters */
	uint8_t gap[64];
	uint64_t dropped __attribute__((aligned(64))); /* events lost to a full ring */
	uint64_t published;	/* events published */
	uint64_t batches;	/* publish calls that made events visible */
	uint64_t wakeups;	/* times the producer woke a sleeping consumer */
	uint32_t closed;	/* broadcast rings: 1 once the writer has ended */
	/* Broadcast rings: 1 when the writer steps in lockstep with one reader
	 * (wirebookd --lockstep; see "Lockstep" at the end). Zero before, so a
	 * reader of an older writer finds none. */
	uint32_t lockstep;
	uint8_t pad3[WB_RING_PAGE - 3 * 64 - 40];
} __attribute__((aligned(4096)));

struct wb_ring_cons_page {
	uint64_t tail __attribute__((aligned(64))); /* consumer index */
	uint8_t pad0[56];
	/* Set by the consumer before it sleeps in poll(); cleared on wake. */
	uint32_t sleeping __attribute__((aligned(64)));
	uint8_t pad1[60];
	/* Broadcast rings in lockstep (see "Lockstep" at the end), written by
	 * the one reader that claimed it; zero (unused) otherwise. */
	uint64_t lockstep_acked __attribute__((aligned(64))); /* events it has consumed */
	uint32_t lockstep_reader;	/* its pid; 0: not claimed; UINT32_MAX: gone */
	uint32_t lockstep_writer_waits;	/* futex word: 1 while the writer sleeps on the ack */
	uint8_t pad2[WB_RING_PAGE - 128 - 16];
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

/* Lay out a fresh ring of the given kind in zeroed memory of wb_ring_bytes(slot_count). */
static inline void wb_ring_format_kind(void *mem, uint32_t slot_count, uint64_t created_ns,
				       uint32_t magic)
{
	struct wb_ring_prod_page *pp = (struct wb_ring_prod_page *)mem;

	pp->abi_version = WB_ABI_VERSION;
	pp->slot_size = sizeof(struct wb_event);
	pp->slot_count = slot_count;
	pp->created_ns = created_ns;
	wb_store_release(&pp->magic, magic);
}

/* Lay out a fresh ring in zeroed memory of wb_ring_bytes(slot_count). */
static inline void wb_ring_format(void *mem, uint32_t slot_count, uint64_t created_ns)
{
	wb_ring_format_kind(mem, slot_count, created_ns, WB_RING_MAGIC);
}

enum wb_ring_check {
	WB_RING_OK = 0,
	WB_RING_BAD_MAGIC = -1,
	WB_RING_ABI_MISMATCH = -2,
	WB_RING_BAD_GEOMETRY = -3,
};

/* wb_ring_check for a ring of the given kind (WB_RING_MAGIC or
 * WB_RING_MAGIC_BROADCAST). */
static inline int wb_ring_check_kind(const void *mem, uint64_t size, uint32_t magic)
{
	const struct wb_ring_prod_page *pp = (const struct wb_ring_prod_page *)mem;

	if (size < WB_RING_SLOTS_OFFSET || wb_load_acquire(&pp->magic) != magic)
		return WB_RING_BAD_MAGIC;
	if (pp->abi_version != WB_ABI_VERSION || pp->slot_size != sizeof(struct wb_event))
		return WB_RING_ABI_MISMATCH;
	if (!wb_ring_slot_count_valid(pp->slot_count) || wb_ring_bytes(pp->slot_count) > size)
		return WB_RING_BAD_GEOMETRY;
	return WB_RING_OK;
}

/* Validate a mapping before attaching to it; size is the mapping's length. */
static inline int wb_ring_check(const void *mem, uint64_t size)
{
	return wb_ring_check_kind(mem, size, WB_RING_MAGIC);
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

/* ---- broadcast rings ------------------------------------------------ */

/*
 * Broadcast rings (magic WB_RING_MAGIC_BROADCAST): the layout above, one
 * writer, any number of readers that never tell the writer where they are.
 * The writer never waits and never drops: it overwrites the oldest slots.
 * head counts every event ever written, so a reader at position pos with
 * head - pos beyond the slot count knows how many it lost.
 *
 * A reader copies slots out, then checks claim: the writer stores claim
 * (the end of the slots it is about to write) before it writes any of
 * them, so a copy of event i is whole when i >= claim - slot_count after
 * the copy (a seqlock over the ring, one store per batch on the writer's
 * side). The consumer page's tail is unused; its sleeping word is an
 * event count for the readers' futex: bit 0 set by a reader about to
 * sleep, the rest a generation the writer bumps as it wakes them, so the
 * writer makes a system call only when a reader sleeps, and a reader that
 * died asleep costs one wake that finds nobody (the writer clears the bit).
 * The writer reads that word and nothing else of the consumer page.
 */

struct wb_ring_writer {
	struct wb_ring_prod_page *prod;
	struct wb_ring_cons_page *cons;	/* its sleeping word only */
	struct wb_event *slots;
	uint64_t mask;
	uint64_t head;		/* private: the next event's index */
	uint64_t published;	/* private: head as last published */
	uint64_t dropped;	/* mirrored on publish: events lost before the ring */
};

/* Over a ring formatted with wb_ring_format_kind(.., WB_RING_MAGIC_BROADCAST). */
static inline void wb_ring_writer_init(struct wb_ring_writer *w, void *mem)
{
	w->prod = (struct wb_ring_prod_page *)mem;
	w->cons = (struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	w->slots = (struct wb_event *)((char *)mem + WB_RING_SLOTS_OFFSET);
	w->mask = w->prod->slot_count - 1;
	w->head = w->published = wb_load_relaxed(&w->prod->head);
	w->dropped = wb_load_relaxed(&w->prod->dropped);
}

/* Before writing the next n events (wb_ring_writer_put): their slots'
 * old contents stop being whole for readers. */
static inline void wb_ring_writer_claim(struct wb_ring_writer *w, uint64_t n)
{
	wb_store_relaxed(&w->prod->claim, w->head + n);
	wb_write_fence();
}

/* One event into the next claimed slot: a 64-byte copy, nothing shared. */
static inline void wb_ring_writer_put(struct wb_ring_writer *w, const struct wb_event *ev)
{
	w->slots[w->head & w->mask] = *ev;
	w->head++;
}

/*
 * Make the events put so far visible with one release store. Returns 1
 * when a reader said it sleeps: the caller wakes every waiter on the
 * consumer page's sleeping word (FUTEX_WAKE, shared); 0 otherwise.
 */
static inline int wb_ring_writer_publish(struct wb_ring_writer *w)
{
	struct wb_ring_prod_page *pp = w->prod;
	uint32_t s;

	if (w->dropped != wb_load_relaxed(&pp->dropped))
		wb_store_relaxed(&pp->dropped, w->dropped);
	if (w->head == w->published)
		return 0;
	wb_store_relaxed(&pp->published, wb_load_relaxed(&pp->published) + (w->head - w->published));
	wb_store_relaxed(&pp->batches, wb_load_relaxed(&pp->batches) + 1);
	wb_store_release(&pp->head, w->head);
	w->published = w->head;
	/* Pairs with the reader's fetch-or before its last look at head. */
	wb_full_fence();
	s = wb_load_relaxed(&w->cons->sleeping);
	if (wb_likely(!(s & 1)))
		return 0;
	wb_store_relaxed(&w->cons->sleeping, s + 1);	/* bit 0 clear, next generation */
	wb_store_relaxed(&pp->wakeups, wb_load_relaxed(&pp->wakeups) + 1);
	return 1;
}

/* The writer has ended: readers drain what is left and learn it. Returns
 * as wb_ring_writer_publish does (wake the sleepers). */
static inline int wb_ring_writer_close(struct wb_ring_writer *w)
{
	int wake = wb_ring_writer_publish(w);
	uint32_t s;

	wb_store_release(&w->prod->closed, 1);
	wb_full_fence();
	s = wb_load_relaxed(&w->cons->sleeping);
	if (s & 1) {
		wb_store_relaxed(&w->cons->sleeping, s + 1);
		wake = 1;
	}
	return wake;
}

struct wb_ring_reader {
	const struct wb_ring_prod_page *prod;
	struct wb_ring_cons_page *cons;	/* its sleeping word only */
	const struct wb_event *slots;
	uint64_t mask;
	uint64_t pos;		/* private: the next event's index */
	uint64_t lost;		/* private: events overwritten before they were read */
};

/* Start at the oldest event the ring still holds whole. */
static inline void wb_ring_reader_init(struct wb_ring_reader *r, void *mem)
{
	uint64_t head, claim;

	r->prod = (const struct wb_ring_prod_page *)mem;
	r->cons = (struct wb_ring_cons_page *)((char *)mem + WB_RING_PAGE);
	r->slots = (const struct wb_event *)((const char *)mem + WB_RING_SLOTS_OFFSET);
	r->mask = r->prod->slot_count - 1;
	r->lost = 0;
	head = wb_load_acquire(&r->prod->head);
	claim = wb_load_relaxed(&r->prod->claim);
	r->pos = claim > r->mask + 1 ? claim - (r->mask + 1) : 0;
	if (r->pos > head)
		r->pos = head;
}

/*
 * Copy up to max of the next events into out; returns how many are whole
 * (0: none now). Events overwritten before they could be copied are
 * skipped and counted in r->lost.
 */
static inline uint64_t wb_ring_reader_copy(struct wb_ring_reader *r, struct wb_event *out,
					   uint64_t max)
{
	uint64_t slots = r->mask + 1, head = wb_load_acquire(&r->prod->head);
	uint64_t n, i, claim, oldest;

	if (head <= r->pos)
		return 0;	/* nothing new (or a head gone back: not this ring's writer) */
	if (head - r->pos > slots) {
		r->lost += head - slots - r->pos;
		r->pos = head - slots;
	}
	n = head - r->pos < max ? head - r->pos : max;
	for (i = 0; i < n; i++)
		out[i] = r->slots[(r->pos + i) & r->mask];
	wb_read_fence();
	claim = wb_load_relaxed(&r->prod->claim);
	oldest = claim > slots ? claim - slots : 0;
	if (wb_unlikely(oldest > r->pos)) {
		uint64_t torn = oldest - r->pos;

		r->lost += torn;
		r->pos = oldest;
		if (torn >= n)
			return 0;
		for (i = 0; i < n - torn; i++)
			out[i] = out[i + torn];
		n -= torn;
	}
	r->pos += n;
	return n;
}

/*
 * Before sleeping on the consumer page's sleeping word: set its bit 0,
 * then look once more, so an event published between the last look and
 * the bit is not slept through. Returns 1 when there is something to read
 * after all; else 0 and *word, the value to sleep on (FUTEX_WAIT, shared)
 * until the writer changes it.
 */
static inline int wb_ring_reader_prepare_sleep(struct wb_ring_reader *r, uint32_t *word)
{
	*word = __atomic_fetch_or(&r->cons->sleeping, 1u, __ATOMIC_SEQ_CST) | 1u;
	return wb_load_acquire(&r->prod->head) != r->pos || wb_load_acquire(&r->prod->closed);
}

/* ---- lockstep ------------------------------------------------------- */

/*
 * Lockstep (a replay stepped with one strategy: wirebookd --lockstep):
 * the writer sets prod->lockstep before its first event; the first reader
 * that opens the ring read-write claims it (lockstep_reader 0 -> its pid)
 * and from then on stores lockstep_acked, the index of the first event it
 * has not yet consumed, each time it hands its events back (release, wait,
 * an empty peek) and at close (UINT64_MAX: the writer runs free). Before
 * applying the packet after one the strategy may react to, the writer
 * waits for the ack to reach its head: spins, then sleeps on
 * lockstep_writer_waits, which the reader clears and wakes after an ack.
 * Both fields sit in what was padding, so an older reader simply never
 * claims, and follows the stream as any reader does.
 */
static inline int wb_ring_reader_claim_lockstep(struct wb_ring_reader *r, uint32_t pid)
{
	uint32_t none = 0;

	if (!wb_load_acquire(&r->prod->lockstep))
		return 0;
	return __atomic_compare_exchange_n(&r->cons->lockstep_reader, &none, pid, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED);
}

/* Events consumed up to pos: store, then say so to a sleeping writer.
 * Returns 1 when the caller must wake it (FUTEX_WAKE, shared, on
 * lockstep_writer_waits). */
static inline int wb_ring_reader_ack(struct wb_ring_reader *r, uint64_t pos)
{
	wb_store_release(&r->cons->lockstep_acked, pos);
	wb_full_fence();
	if (!wb_load_relaxed(&r->cons->lockstep_writer_waits))
		return 0;
	wb_store_relaxed(&r->cons->lockstep_writer_waits, 0);
	return 1;
}

#endif /* WIREBOOK_RING_H */
