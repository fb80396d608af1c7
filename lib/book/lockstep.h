/*
 * Lockstep replay (issue 25, wirebookd --lockstep): a recorded day stepped
 * with one strategy, so that the strategy's unchanged live code (a loop on
 * the event stream that reads books and places virtual orders) sees every
 * change it would have seen live, in order, and two runs give identical
 * fills.
 *
 * Builder thread 1 applies the replay in batches. A batch ends after the
 * first packet holding an event the strategy may react to (a gated event:
 * every event with "all", else the events of the symbols that carry order
 * detail), and before applying anything of the next packet the builder
 * waits until the strategy has consumed the event stream up to there (its
 * ack, include/wirebook/ring.h "Lockstep"). A packet is what the
 * builder's timing marks call one: events with the same receive time and
 * line (a batch cut short, or the pump's budget, never splits a gate).
 * What it asked for
 * meanwhile (virtual orders, tracking: orders-req) then takes effect
 * before the next packet, or, with a latency model, at the first event
 * whose receive time is at least the reaction's time plus the delay: the
 * requests are held (their slot state CLAIMED, which the order detail's
 * poll skips) until then. Nothing here changes the order detail: requests
 * still go through order_detail_poll.
 *
 * One writer, thread 1; the builder calls:
 *   lockstep_step_over() before each batch: 1 when the last packet was
 *                      gated and the next starts another (or a long
 *                      ungated run fills a quarter of the stream); then
 *                      the builder publishes the stream (which it
 *                      publishes only there: lockstep_holding) and calls
 *                      lockstep_wait()
 *   lockstep_cut()     how many of the available events to apply (to a
 *                      gated packet's end, or before a due time)
 *   lockstep_release() right before the batch: due requests become ready
 *   lockstep_after()   after the batch was put in the stream
 */
#ifndef WIREBOOK_BOOK_LOCKSTEP_H
#define WIREBOOK_BOOK_LOCKSTEP_H

#include <stdint.h>
#include "book/event_stream.h"
#include "book/order_detail.h"
#include "wirebook/event.h"
#include "wirebook/ring.h"

struct lockstep;

/* What the strategy reacts to: the gate. */
enum lockstep_gate {
	LOCKSTEP_GATE_DETAIL = 0,	/* packets with events of symbols carrying order detail */
	LOCKSTEP_GATE_ALL = 1,		/* every packet */
};

struct lockstep_config {
	const char *shm_name;		/* the book's: its NAME.orders-req holds the requests */
	int gate;			/* enum lockstep_gate */
	uint64_t delay_ns;		/* a reaction reaches the queue this much later (recv_ts) */
	uint64_t jitter_ns;		/* plus a uniform draw in [0, jitter_ns) from the seed */
	uint64_t seed;
	/* Or a sampled delay (--lockstep-delay-file): each request's delay is
	 * one of these, drawn with the same seeded xorshift (copied). */
	const uint64_t *delay_samples;
	uint32_t delay_sample_count;
};

/* A sampled delay's file holds at most this many. */
#define LOCKSTEP_MAX_DELAY_SAMPLES 1000000u
/* A delay (fixed, jitter or sampled) is at most a minute. */
#define LOCKSTEP_MAX_DELAY_NS 60000000000ull

/*
 * Read a sampled delay's file: one delay in ns a line (blank lines and
 * lines starting with '#' skipped). The count and *out (malloc'd), or -1
 * with a message in err: the file cannot be read, has no delay, a bad
 * line (its number), more than LOCKSTEP_MAX_DELAY_SAMPLES.
 */
int lockstep_delays_read(const char *path, uint64_t **out, char *err, size_t errlen);

/* Parse "detail", "all" (a --lockstep argument): the gate, or -1. */
int lockstep_gate_parse(const char *arg);

/* NULL + *err (-errno) on failure. */
struct lockstep *lockstep_create(const struct lockstep_config *cfg, int *err);
void lockstep_destroy(struct lockstep *ls);

/*
 * Thread 1, before its first event: mark the stream lockstep and wait for
 * a reader to claim it (checking *stop now and then). The order detail
 * (NULL: none) gives the gated symbols, the stream the acks.
 */
void lockstep_begin(struct lockstep *ls, struct event_stream *es, struct order_detail *od, const int *stop);

/*
 * Of the n events ready at(ctx, 0..n-1), how many to apply now: up to and
 * including the packet of the first gated event, and never past a held
 * request's due time.
 */
int lockstep_step_over(const struct lockstep *ls, const struct wb_event *next);
/* The stream is published up to the gated packet's end: wait for the
 * reader to consume it, then hold what it asked meanwhile. */
void lockstep_wait(struct lockstep *ls);
/* 1 while a strategy steps with the builder: the stream is published only
 * at its steps (lockstep_step_over), so it never reads a book while the
 * builder changes it, and what it asks at any event takes effect at the
 * end of that event's step. */
int lockstep_holding(const struct lockstep *ls);

typedef const struct wb_event *(*lockstep_at_fn)(const void *ctx, uint64_t i);
uint64_t lockstep_cut(struct lockstep *ls, lockstep_at_fn at, const void *ctx, uint64_t n);

/* Before applying a batch whose first event is first: make due requests ready. */
void lockstep_release(struct lockstep *ls, const struct wb_event *first);

/* After the batch (its last event received at last_recv_ts) went to the stream. */
void lockstep_after(struct lockstep *ls, uint64_t last_recv_ts);

struct lockstep_counters {
	uint64_t gates;		/* batches that ended at a gate */
	uint64_t waits;		/* gates where the reader had not acked yet */
	uint64_t sleeps;	/* of those, futex sleeps */
	uint64_t held;		/* requests held for the latency model */
	uint64_t flushes;	/* steps without a gate: a long ungated run handed over */
};
void lockstep_get_counters(const struct lockstep *ls, struct lockstep_counters *out);

/* The latency model's next draw past the fixed delay (a request's, as
 * they are held in turn): the jitter's uniform draw or a sample; 0 with
 * neither. */
uint64_t lockstep_next_draw(struct lockstep *ls);

#endif /* WIREBOOK_BOOK_LOCKSTEP_H */
