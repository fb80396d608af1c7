/*
 * The queue between builder thread 1 and thread 2: single producer,
 * single consumer, struct book_update slots, in process memory. Same
 * discipline as the event ring (wirebook/ring.h): each side keeps its own
 * index and a cached copy of the other's, and reads the other's shared
 * index only when its cache says full (producer) or empty (consumer).
 * A consumer that sleeps says so first (book_queue_prepare_sleep), and the
 * producer checks after publishing (book_queue_publish_check_sleeper),
 * so a wake-up call is made only when someone sleeps (as the event ring).
 * Unlike the event ring it never drops: a level change lost here would
 * leave the Super-Book wrong forever, so a full queue makes thread 1 wait
 * (and the event ring, which counts its drops, absorbs the burst).
 */
#ifndef WIREBOOK_BOOK_SPSC_H
#define WIREBOOK_BOOK_SPSC_H

#include <stdint.h>
#include "book/update.h"
#include "wirebook/barrier.h"

struct book_queue {
	struct book_update *slots;
	uint64_t mask;
	/* written by the producer, read by the consumer */
	uint64_t head __attribute__((aligned(64)));
	/* written by the consumer, read by the producer */
	uint64_t tail __attribute__((aligned(64)));
	/* Set by the consumer before it sleeps (a futex word, for whoever
	 * waits on it); read by the producer after each publish that may
	 * wake it. Its own line: written only on the way to sleep. */
	uint32_t sleeping __attribute__((aligned(64)));
	/* producer private */
	uint64_t p_head __attribute__((aligned(64)));
	uint64_t p_cached_tail;
	uint64_t p_full_waits;	/* times the producer found the queue full */
	/* consumer private */
	uint64_t c_tail __attribute__((aligned(64)));
	uint64_t c_cached_head;
};

/* slots: slot_count (a power of two) zeroed or not; the queue takes no ownership. */
static inline void book_queue_init(struct book_queue *q, struct book_update *slots,
				   uint64_t slot_count)
{
	q->slots = slots;
	q->mask = slot_count - 1;
	q->head = q->tail = q->p_head = q->p_cached_tail = q->c_tail = q->c_cached_head = 0;
	q->p_full_waits = 0;
	q->sleeping = 0;
}

/* Free slots the producer can fill without looking at the consumer again. */
static inline uint64_t book_queue_space(struct book_queue *q, uint64_t want)
{
	uint64_t space = q->mask + 1 - (q->p_head - q->p_cached_tail);

	if (space < want) {
		q->p_cached_tail = wb_load_acquire(&q->tail);
		space = q->mask + 1 - (q->p_head - q->p_cached_tail);
	}
	return space;
}

/* The caller checked book_queue_space() first. */
static inline void book_queue_push(struct book_queue *q, const struct book_update *u)
{
	q->slots[q->p_head & q->mask] = *u;
	q->p_head++;
}

static inline void book_queue_publish(struct book_queue *q)
{
	wb_store_release(&q->head, q->p_head);
}

/*
 * Publish, and say whether the consumer said it sleeps (then the caller
 * wakes it). The full fence pairs with the one in
 * book_queue_prepare_sleep: one side always sees the other.
 */
static inline int book_queue_publish_check_sleeper(struct book_queue *q)
{
	book_queue_publish(q);
	wb_full_fence();
	return wb_load_relaxed(&q->sleeping) != 0;
}

static inline uint64_t book_queue_available(struct book_queue *q)
{
	if (q->c_cached_head == q->c_tail)
		q->c_cached_head = wb_load_acquire(&q->head);
	return q->c_cached_head - q->c_tail;
}

static inline const struct book_update *book_queue_at(const struct book_queue *q, uint64_t i)
{
	return &q->slots[(q->c_tail + i) & q->mask];
}

/*
 * Consumer, before sleeping: say so, then look once more, so an update
 * published between the last look and the flag is not slept through.
 * Nonzero: there is something after all (the flag is cleared again).
 */
static inline int book_queue_prepare_sleep(struct book_queue *q)
{
	wb_store_relaxed(&q->sleeping, 1);
	wb_full_fence();
	if (book_queue_available(q)) {
		wb_store_relaxed(&q->sleeping, 0);
		return 1;
	}
	return 0;
}

static inline void book_queue_release(struct book_queue *q, uint64_t n)
{
	q->c_tail += n;
	wb_store_release(&q->tail, q->c_tail);
}

#endif /* WIREBOOK_BOOK_SPSC_H */
