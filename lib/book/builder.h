/*
 * The book builder, in one of two shapes (struct builder_config.path):
 *
 * Pipeline (BUILDER_PATH_PIPELINE), for throughput, two threads on the path:
 *
 *   event ring ──▶ thread 1: venue books ──▶ book_queue ──▶ thread 2: Super-Book ──▶ shm
 *
 * Run to completion (BUILDER_PATH_RTC), for latency where cores are few,
 * one thread on the path:
 *
 *   event ring ──▶ thread 1: venue books ──▶ Super-Book ──▶ shm
 *
 * Thread 1 drains a wb_ring of normalized events (whoever fills it: a
 * decoder thread, the kernel module, or thread 1 itself through the pump
 * callback: then it reads a packet, decodes it, and builds and publishes
 * its books before it reads the next), applies each event to the venue
 * books and hands the level changes on, closing every ring batch with a
 * BATCH_END that carries the batch's timestamps. In the pipeline, thread
 * 2 folds them into the Super-Book and publishes at each BATCH_END; in
 * run-to-completion mode thread 1 does that itself, the changes going
 * straight from the venue books to the Super-Book. Whoever publishes
 * records the latency samples (the same stages either way). Thread 3
 * keeps the SIP view and its comparison with the direct books
 * (sipview.h) from what the Super-Book hands it (the SIP updates, the
 * direct top-of-book changes of symbols with SIP traffic): off the path,
 * at a lower priority, off the path's cores when there are others.
 *
 * Waiting, none that the traffic does not cause: thread 2 waits for thread
 * 1 in a futex after a bounded spin, woken only when it said it sleeps;
 * thread 1 waits in the pump (poll on the packet socket, or wirebookd's
 * futex a source thread wakes; the pump then says BUILDER_PUMP_WAITED) or
 * in the builder_source's wait (the kernel rings), and naps on a timer
 * only for a pump that cannot block.
 *
 * Placement: the path's threads are pinned with hwloc to cores of
 * cfg.numa_node (the NIC's node; -1: the whole machine), the last cores of
 * the set so core 0's interrupts and housekeeping stay away; cfg.cpus
 * overrides. Their memory comes from that node (libnuma). On a
 * single-node machine the defaults just work.
 */
#ifndef WIREBOOK_BUILDER_H
#define WIREBOOK_BUILDER_H

#include <pthread.h>
#include <stdint.h>
#include "book/superbook.h"
#include "book/venue_book.h"
#include "book/latency_log.h"
#include "book/event_stream.h"
#include "wirebook/ring.h"

struct builder;

/* What a pump callback reports (see builder_start). */
enum builder_pump {
	BUILDER_PUMP_MORE = 0,	/* made progress or may have more: call again soon */
	BUILDER_PUMP_IDLE = 1,	/* nothing available now (live source) */
	BUILDER_PUMP_EOF = 2,	/* the source ended: drain and finish */
	BUILDER_PUMP_ERROR = 3,	/* the source failed: drain and finish */
	BUILDER_PUMP_WAITED = 4, /* nothing now, after blocking in the kernel for it
				  * (poll): call again at once, no nap on top */
};

/* The shape of the path (see the top of this file). */
enum builder_path {
	BUILDER_PATH_PIPELINE = 0,	/* venue books and Super-Book on two threads */
	BUILDER_PATH_RTC = 1,		/* both on thread 1, packet by packet */
};

/*
 * The path for the cores given (wirebookd --path auto): run to completion
 * when the pipeline's threads would outnumber them. cpus_named: the cpus
 * named for the path's threads (0: none, 1: one for both, 2: one each);
 * cpus_allowed: the process's affinity mask's count.
 */
#define BUILDER_PIPELINE_MIN_CPUS 3
int builder_auto_path(int cpus_named, int cpus_allowed);

/*
 * Runs on thread 1 before each ring drain, with the ring empty: fill it
 * (commit + publish events). NULL when another thread or the kernel
 * fills the ring.
 */
typedef int (*builder_pump_fn)(void *ctx);

struct builder_config {
	struct venue_books_config books;
	struct superbook_config shm;
	uint32_t queue_slots;		/* thread 1 -> 2 queue, power of two; 0: 65536 */
	int numa_node;			/* the NIC's node: cores and memory; -1: any */
	int cpus[2];			/* cores for thread 1 and 2; -1: choose (rtc: cpus[0] only) */
	int path;			/* enum builder_path */
	int pin;			/* 0: leave the threads unpinned */
	int busy_poll;			/* never sleep when idle (burns both cores) */
	int rt_priority;		/* 1-99: the path's threads run SCHED_FIFO at it; 0: not */
	struct latency_log *latency;	/* NULL: no latency samples */
	/* Slots of the event stream (event_stream.h) beside the book, which
	 * thread 1 copies every applied event to, a batch at a time, after
	 * the batch's books are published or queued (off the latency path);
	 * 0: none. Readers in this process (the NATS publisher) read it too:
	 * builder_event_stream. */
	uint32_t stream_slots;
	/* Order detail (order_detail.h) beside the book: NULL none (no cost,
	 * and readers cannot ask for it); "all"; a watch list of tickers
	 * ("AAPL,MSFT"); "" none at start, readers may ask. */
	const char *order_detail;
	uint32_t order_detail_slots;	/* order slots; 0: the books' expected_orders */
	/* Lockstep replay (lockstep.h): thread 1 steps with the stream's
	 * lockstep reader; NULL: never waits. The ring's path only (a pump),
	 * run to completion, with the stream. */
	struct lockstep *lockstep;
};

struct builder_counters {
	uint64_t ring_batches;		/* ring batches applied by thread 1 */
	uint64_t events;		/* events applied */
	uint64_t updates_queued;	/* book_update records sent to thread 2 (rtc: applied) */
	uint64_t queue_full_waits;	/* thread 1 waited on a full queue */
	uint64_t t1_idle_sleeps;	/* thread 1's naps, or waits in builder_source.wait */
	uint64_t t2_idle_sleeps;	/* thread 2's futex sleeps */
	uint64_t t2_wakes;		/* futex wakes thread 1 made (thread 2 said it slept) */
	int t2_asleep;			/* thread 2 says it sleeps now */
	uint64_t latency_samples;
	uint64_t ring_dropped;		/* the event ring's producer drop counter */
	uint64_t cpu_ns[2];		/* CPU time of thread 1 and 2, set when they end */
	int cpu[2];			/* cores the threads run on (-1 unpinned; rtc: no thread 2) */
	int path;			/* enum builder_path */
	int rt_errno;			/* the path's threads could not get SCHED_FIFO: why */
	int numa_node;
	/* thread 3, the SIP view (off the path's cores where there are others,
	 * lower priority; idle unless there is SIP traffic) */
	uint64_t t3_cpu_ns;		/* its CPU time, set when it ends */
	uint64_t t3_idle_sleeps;
};

/* Creates the books and the shared memory (the superbook). NULL + *err
 * (a wb_error, SUPERBOOK_EBUSY, or -errno) on failure. */
struct builder *builder_create(const struct builder_config *cfg, int *err);

/* Start the threads on ring_mem (a formatted wb_ring). 0 or -errno. */
int builder_start(struct builder *b, void *ring_mem, builder_pump_fn pump, void *pump_ctx);
/*
 * An event producer thread 1 reads in place, instead of a ring (the kernel
 * module's per-CPU rings, merged): no event is copied on the way to the
 * books. peek() hands out up to max events in order as pointers that stay
 * valid until release(), which thread 1 calls once a peeked batch is
 * applied; 0 events means none now. dropped() is the producer's count of
 * events lost to full rings. All three run on thread 1.
 */
struct builder_source {
	uint64_t (*peek)(void *ctx, const struct wb_event **evs, uint64_t max);
	void (*release)(void *ctx);
	uint64_t (*dropped)(void *ctx);
	/* Optional: block in the kernel until events may be ready (or a
	 * timeout short enough for a stop to be noticed). Thread 1 calls it
	 * after a bounded spin instead of napping on a timer. */
	void (*wait)(void *ctx);
	void *ctx;
};

/* Start the threads on a builder_source (copied). 0 or -errno. */
int builder_start_source(struct builder *b, const struct builder_source *src);

/* True once the pump reported EOF/ERROR and everything was published. */
int builder_done(const struct builder *b);
/* Stop (after draining what is in the ring and queue) and join; the
 * event stream's readers learn that it ended. */
void builder_stop(struct builder *b);
void builder_destroy(struct builder *b);

/*
 * Before builder_start (single thread): fault in every page the path will
 * write that is not faulted in yet (the Super-Book's shared memory and
 * tables; the books, the order index, the queues and the publisher's
 * bookkeeping are written when allocated) without changing a byte, so the
 * first packets pay no page faults; with lock, mlockall the process (best
 * effort: the report says). The caller warms its own ring and buffers.
 */
struct builder_warm_report {
	uint64_t bytes;		/* bytes faulted in here */
	int lock_errno;		/* mlockall: 0 locked, else why not (-1: not asked) */
};
void builder_warm(struct builder *b, int lock, struct builder_warm_report *out);

/*
 * For a thread that is not on the path (the main loop, the SIP view, the
 * latency writer, metrics): leave the path's cores when there are others
 * and lower its priority (SCHED_BATCH, nice), so it never takes time the
 * path needs. Call it on the thread itself, after builder_start (threads
 * made afterwards inherit it).
 */
void builder_leave_path(const struct builder *b);
/* The cores part of it, for an off-path thread made before the builder
 * started (which lowered its own priority: the latency writer). */
void builder_move_off_path(const struct builder *b, pthread_t th);

/* Before builder_start only (single thread): make a ticker findable. */
struct superbook *builder_superbook(struct builder *b);
/* Readable from any thread while running (plain 64-bit reads, monotonic). */
void builder_get_counters(const struct builder *b, struct builder_counters *out);
const struct venue_books_counters *builder_venue_counters(const struct builder *b);
/* Thread 1's books, for reading after builder_stop (or before start) only. */
const struct venue_books *builder_venue_books(const struct builder *b);
const struct superbook_counters *builder_superbook_counters(const struct builder *b);
/* The event stream (mapping and size, for a reader in this process:
 * wb_events_attach), or NULL when cfg.stream_slots was 0. */
const struct event_stream *builder_event_stream(const struct builder *b);
/* The order detail (NULL when cfg.order_detail was): before start, or from thread 1. */
struct order_detail *builder_order_detail(struct builder *b);

#endif /* WIREBOOK_BUILDER_H */
