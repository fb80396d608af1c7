/*
 * The book builder, pipeline or run to completion; see builder.h.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <hwloc.h>

#include "book/builder.h"
#include "book/futex.h"
#include "book/offpath.h"
#include "book/order_detail.h"
#include "book/lockstep.h"
#include "book/sipview.h"
#include "book/spsc.h"
#include "book/venue_mem.h"

#define BUILDER_DEFAULT_QUEUE (1u << 16)
/* Events applied before a BATCH_END: bounds how long thread 2 waits to
 * publish when the ring holds a large backlog (file replay). */
#define BUILDER_MAX_BATCH 256u
/* Idle loops spinning (a few tens of microseconds) before sleeping. */
#define BUILDER_IDLE_SPINS 4096u
#define BUILDER_IDLE_SLEEP_NS 10000L
/*
 * The SIP view's thread backs off to this when its queue stays empty (a
 * day with no SIP line): at 10 us a sleep it woke 100,000 times a second,
 * a third of a core on a two-core machine, taken from threads 1 and 2.
 * 1 ms of SIP updates is a few hundred of the queue's 64 Ki slots.
 */
#define BUILDER_SIP_IDLE_SLEEP_MAX_NS 1000000L
/* The kernel's default 50 us timer slack would dwarf the idle sleep. */
#define BUILDER_TIMER_SLACK_NS 1000
/* Thread 2 publishes at a BATCH_END when it has caught up with thread 1;
 * while more batches are already queued behind it, publishing the
 * intermediate states would only be overwritten, so it defers (on the day
 * capture's backlog: 0.9 -> 1.6 M messages/s, thread 2 no longer the
 * bottleneck), but never for more than this many updates, nor for more
 * latency samples than it can hold. */
#define BUILDER_PUBLISH_EVERY 4096u
#define BUILDER_PENDING_SAMPLES (4u * BUILDER_MAX_BATCH)
/* Thread 2 -> thread 3 (the SIP view): at a few hundred thousand SIP
 * quotes a second, 64 Ki slots are ~0.1 s of slack. */
#define BUILDER_SIP_QUEUE (1u << 16)

/* A packet of the current batch, kept by the publisher until the batch is published. */
struct packet_mark {
	uint64_t recv_ts;
	uint64_t seq;
	uint16_t line;
	uint8_t venue;
};

/* The publisher's bookkeeping between publishes (thread 2's, or thread 1's in rtc mode). */
struct t2_state {
	/* Copies, not pointers: a batch may span two queue releases. */
	struct packet_mark marks[BUILDER_MAX_BATCH];	/* packets of the current batch */
	unsigned n_marks;
	struct latency_sample pending[BUILDER_PENDING_SAMPLES]; /* applied, not yet published */
	unsigned n_pending;
	uint64_t since_publish;		/* updates applied since the last publish */
};

struct builder {
	struct builder_config cfg;
	int rtc;		/* BUILDER_PATH_RTC: thread 1 publishes, no thread 2 */
	struct t2_state *pub;	/* the publisher's bookkeeping */
	struct venue_books *vb;
	struct superbook *sb;
	struct order_detail *od;	/* NULL: no order detail */
	struct book_update *queue_mem;
	size_t queue_bytes;
	struct book_queue q;
	struct book_update *sipq_mem;	/* the Super-Book's thread (2, or 1 in rtc) -> thread 3 */
	size_t sipq_bytes;
	struct book_queue sipq;
	struct wb_ring_consumer ring;
	builder_pump_fn pump;
	void *pump_ctx;
	struct builder_source src;	/* builder_start_source: read in place */
	struct event_stream stream;	/* mem NULL: none; its writer is thread 1's */
	hwloc_topology_t topo;
	int have_topo;
	pthread_t th[3];
	int started;
	int stop;		/* set by builder_stop */
	int t1_done;		/* thread 1 queued its last update */
	int t2_done;		/* the publisher (thread 2, or 1 in rtc) published it */
	int done;		/* and thread 3 applied the SIP view's last update */
	struct builder_counters ctr;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin a while, then sleep a little: keeps latency low under traffic
 * without owning a core forever when the feed is quiet (unless busy_poll).
 * Each sleep in a row doubles, up to max_sleep_ns. Only for waits nothing
 * can wake: a pump that cannot block, a full queue (thread 2 is busy), and
 * the SIP view (off the path). */
static void idle_wait(struct builder *b, unsigned *idle, uint64_t *sleeps, long max_sleep_ns)
{
	long ns = BUILDER_IDLE_SLEEP_NS;

	if (b->cfg.busy_poll || ++*idle < BUILDER_IDLE_SPINS) {
		cpu_relax();
		return;
	}
	for (unsigned k = *idle - BUILDER_IDLE_SPINS; k && ns < max_sleep_ns; k--)
		ns *= 2;
	if (ns > max_sleep_ns)
		ns = max_sleep_ns;
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
	wb_store_relaxed(sleeps, *sleeps + 1);
}

/* Thread 1 (or whoever ends it): thread 2 said it sleeps on the queue. */
static void wake_thread2(struct builder *b)
{
	wb_store_relaxed(&b->q.sleeping, 0);
	futex_wake(&b->q.sleeping);
	wb_store_relaxed(&b->ctr.t2_wakes, b->ctr.t2_wakes + 1);
}

/* Thread 1's publish of the queue, waking thread 2 if it sleeps. */
static void queue_publish(struct builder *b)
{
	if (book_queue_publish_check_sleeper(&b->q))
		wake_thread2(b);
}

/* ---- placement ---------------------------------------------------------- */

/* The last two cores (one PU each) of the node's cpuset, else of the machine. */
static void choose_cpus(struct builder *b, int out[2])
{
	hwloc_const_cpuset_t set = hwloc_topology_get_allowed_cpuset(b->topo);
	hwloc_obj_t core = NULL, node;
	int pus[64], n = 0;

	out[0] = out[1] = -1;
	if (b->cfg.numa_node >= 0) {
		node = hwloc_get_numanode_obj_by_os_index(b->topo, (unsigned)b->cfg.numa_node);
		if (node && node->cpuset && !hwloc_bitmap_iszero(node->cpuset))
			set = node->cpuset;
	}
	while (n < 64 && (core = hwloc_get_next_obj_inside_cpuset_by_type(b->topo, set, HWLOC_OBJ_CORE, core))) {
		int pu = hwloc_bitmap_first(core->cpuset);

		if (pu >= 0 && hwloc_bitmap_isset(set, (unsigned)pu))
			pus[n++] = pu;
	}
	if (n == 0)
		return;
	if (n == 1) {
		out[0] = out[1] = pus[0];
		return;
	}
	out[0] = pus[n - 2];
	out[1] = pus[n - 1];
}

/*
 * A path thread asked to run SCHED_FIFO (cfg.rt_priority): woken by a
 * packet, it preempts whatever time-shared thread holds its core (a sender
 * on the same host, housekeeping) instead of waiting for that thread's
 * slice. Refused without CAP_SYS_NICE: counted, and the thread runs on.
 */
static void path_priority(struct builder *b)
{
	struct sched_param sp = { .sched_priority = b->cfg.rt_priority };
	int rc;

	if (b->cfg.rt_priority <= 0)
		return;
	rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc)
		wb_store_relaxed(&b->ctr.rt_errno, rc);
}

static void pin_self(struct builder *b, int cpu)
{
	hwloc_bitmap_t set;

	prctl(PR_SET_TIMERSLACK, BUILDER_TIMER_SLACK_NS, 0, 0, 0);
	path_priority(b);
	if (!b->have_topo || cpu < 0)
		return;
	set = hwloc_bitmap_alloc();
	if (!set)
		return;
	hwloc_bitmap_only(set, (unsigned)cpu);
	hwloc_set_cpubind(b->topo, set, HWLOC_CPUBIND_THREAD);
	hwloc_bitmap_free(set);
}

/* ---- publishing: thread 2, or thread 1 in rtc mode ------------------------ */

static void pend_sample(struct t2_state *t, const struct packet_mark *m,
			const struct book_update *end)
{
	struct latency_sample *s = &t->pending[t->n_pending++];

	memset(s, 0, sizeof(*s));
	s->recv_ts = m->recv_ts;
	s->book_applied_ts = end->applied_ts;
	s->ring_read_ts = end->applied_ts - end->order_count;
	s->seq = m->seq;
	s->line = m->line;
	s->venue = m->venue;
}

/* A batch ended: its packets (PACKET marks in queue order, then the last
 * one) wait for the publish that makes them visible. */
static void end_batch_samples(struct t2_state *t, const struct book_update *end)
{
	struct packet_mark last = { end->recv_ts, end->u.seq, end->line, end->venue };

	for (unsigned i = 0; i < t->n_marks; i++)
		pend_sample(t, &t->marks[i], end);
	if (end->recv_ts) /* else a stop's closing mark, or a packet the next batch ends */
		pend_sample(t, &last, end);
	t->n_marks = 0;
}

/* A PACKET mark reached the publisher: kept until its batch ends. At most
 * BUILDER_MAX_BATCH - 1 per batch: one per packet boundary inside a batch
 * of at most BUILDER_MAX_BATCH events. */
static void pub_packet(struct t2_state *t, const struct book_update *u)
{
	if (t->n_marks < BUILDER_MAX_BATCH)
		t->marks[t->n_marks++] = (struct packet_mark){ u->recv_ts, u->u.seq, u->line, u->venue };
}

/* A BATCH_END reached the publisher: its packets' samples wait for the publish. */
static void pub_batch_end(const struct builder *b, struct t2_state *t, const struct book_update *u)
{
	if (b->cfg.latency && u->applied_ts)
		end_batch_samples(t, u);
	t->n_marks = 0;
}

static void t2_publish(struct builder *b, struct t2_state *t)
{
	uint64_t published_ts;

	superbook_publish(b->sb);
	t->since_publish = 0;
	if (!t->n_pending)
		return;
	published_ts = now_ns();
	for (unsigned i = 0; i < t->n_pending; i++) {
		t->pending[i].published_ts = published_ts;
		latency_log_record(b->cfg.latency, &t->pending[i]);
	}
	wb_store_relaxed(&b->ctr.latency_samples, b->ctr.latency_samples + t->n_pending);
	t->n_pending = 0;
}

void builder_move_off_path(const struct builder *b, pthread_t th)
{
	cpu_set_t set;

	if (pthread_getaffinity_np(th, sizeof(set), &set) != 0)
		return;
	for (int i = 0; i < 2; i++)
		if (b->ctr.cpu[i] >= 0 && b->ctr.cpu[i] < CPU_SETSIZE)
			CPU_CLR(b->ctr.cpu[i], &set);
	/* No core left (two cores, two path threads): stay; the priority says. */
	if (CPU_COUNT(&set) > 0)
		(void)pthread_setaffinity_np(th, sizeof(set), &set);
}

void builder_leave_path(const struct builder *b)
{
	builder_move_off_path(b, pthread_self());
	offpath_lower_priority();
}

/* ---- thread 1: ring -> venue books -> queue ------------------------------ */

static void queue_wait_space_slow(struct builder *b, uint64_t want)
{
	unsigned idle = 0;

	/* Let thread 2 see what is queued before waiting on it. */
	queue_publish(b);
	b->q.p_full_waits++;
	wb_store_relaxed(&b->ctr.queue_full_waits, b->q.p_full_waits);
	while (book_queue_space(&b->q, want) < want)
		idle_wait(b, &idle, &b->ctr.t1_idle_sleeps, BUILDER_IDLE_SLEEP_NS);
}

/* Once per event: the room is nearly always there, so no call for it. */
static inline void queue_wait_space(struct builder *b, uint64_t want)
{
	if (wb_unlikely(book_queue_space(&b->q, want) < want))
		queue_wait_space_slow(b, want);
}

/* The BATCH_END closing a batch whose last event is last (NULL: a stop's
 * closing mark). packet_continues: the batch ends inside a packet, whose
 * last change comes with the next batch; recv_ts 0 then tells the
 * publisher not to time it here. */
static void make_batch_end(struct book_update *u, const struct wb_event *last, uint64_t read_ts,
			   int packet_continues)
{
	memset(u, 0, sizeof(*u));
	u->kind = BOOK_UP_BATCH_END;
	if (last) {
		u->venue = last->venue;
		u->line = last->line;
		u->exch_ts = last->exch_ts;
		u->recv_ts = packet_continues ? 0 : last->recv_ts;
		u->u.seq = last->seq;
	}
	if (read_ts) {
		u->applied_ts = now_ns();
		u->order_count = u->applied_ts - read_ts > UINT32_MAX ? UINT32_MAX
									: (uint32_t)(u->applied_ts - read_ts);
	}
}

/* The PACKET mark of a packet (its last event) that ended inside a batch. */
static void make_packet_mark(struct book_update *u, const struct wb_event *last)
{
	memset(u, 0, sizeof(*u));
	u->kind = BOOK_UP_PACKET;
	u->venue = last->venue;
	u->line = last->line;
	u->recv_ts = last->recv_ts;
	u->u.seq = last->seq;
}

static void queue_push_one(struct builder *b, const struct book_update *u)
{
	queue_wait_space(b, 1);
	book_queue_push(&b->q, u);
}

/* What thread 1 keeps across the events of one ring batch. */
struct t1_batch {
	struct builder *b;
	const struct wb_event *prev;	/* the event before, for packet boundaries */
	uint64_t queued;		/* updates pushed for the batch */
	int timed;			/* latency samples wanted */
	/* the batch's events, for the order detail's look-ahead */
	const struct wb_event *slots;	/* ring slots, or NULL for list */
	const struct wb_event *const *list;
	uint64_t mask, first, avail, next;	/* next: the index of the event emitted next */
	struct book_update room[BOOK_MAX_UPDATES_PER_EVENT];	/* where the books write an event's updates */
};

static inline const struct wb_event *t1_event(const struct t1_batch *t, uint64_t i)
{
	return t->slots ? &t->slots[(t->first + i) & t->mask] : t->list[i];
}

/*
 * Where the books write the next event's updates: straight into thread 2's
 * queue when BOOK_MAX_UPDATES_PER_EVENT slots are free there before it
 * wraps (t1_emit then only moves the head: no copy of every update, about
 * a tenth of thread 1's instructions on the hostile day), else the batch's
 * room, copied by t1_emit. With latency samples a packet's mark goes in
 * before its first event's updates, so those always use the room, as
 * does run to completion, which applies them from there.
 */
static struct book_update *t1_room(struct t1_batch *t)
{
	struct builder *b = t->b;
	uint64_t at;

	if (b->rtc || t->timed)
		return t->room;
	queue_wait_space(b, BOOK_MAX_UPDATES_PER_EVENT);
	at = b->q.p_head & b->q.mask;
	if (at + BOOK_MAX_UPDATES_PER_EVENT > b->q.mask + 1)
		return t->room;
	return &b->q.slots[at];
}

/* Each event's updates go to the Super-Book (rtc) or to thread 2; a new
 * packet first closes the last one's timing. */
static struct book_update *t1_emit(void *arg, const struct wb_event *ev, struct book_update *ups, unsigned k)
{
	struct t1_batch *t = arg;
	struct builder *b = t->b;

	if (t->timed && t->prev && (ev->recv_ts != t->prev->recv_ts || ev->line != t->prev->line)) {
		struct book_update mark;

		make_packet_mark(&mark, t->prev);
		if (b->rtc) {
			pub_packet(b->pub, &mark);
		} else {
			queue_push_one(b, &mark);
			t->queued++;
		}
	}
	t->prev = ev;
	if (b->od) {
		uint64_t i = t->next++;

		/* The detail's own misses, started ahead as the books' are. */
		order_detail_lookahead(b->od, i + ORDER_DETAIL_PREFETCH_AHEAD < t->avail ?
					      t1_event(t, i + ORDER_DETAIL_PREFETCH_AHEAD) : NULL);
	}
	if (!k)
		return ups;
	if (b->od)
		order_detail_event(b->od, b->vb, ev, ups, k);
	if (b->rtc) {
		superbook_apply_run(b->sb, ups, k);
		t->queued += k;
		return ups;
	}
	if (ups != t->room) {
		/* written in place by the books: t1_room kept the slots free */
		b->q.p_head += k;
	} else {
		queue_wait_space(b, k);
		for (unsigned j = 0; j < k; j++)
			book_queue_push(&b->q, &ups[j]);
	}
	t->queued += k;
	return t1_room(t);
}

/* Close a batch of n applied events with its BATCH_END: published here
 * (rtc), or one publish of the queue to thread 2. */
static void end_batch(struct builder *b, const struct t1_batch *t, uint64_t read_ts, int split, uint64_t n)
{
	struct book_update end;

	make_batch_end(&end, t->prev, read_ts, split);
	if (b->rtc) {
		pub_batch_end(b, b->pub, &end);
		t2_publish(b, b->pub);
	} else {
		queue_push_one(b, &end);
		queue_publish(b);
	}
	wb_store_relaxed(&b->ctr.ring_batches, b->ctr.ring_batches + 1);
	wb_store_relaxed(&b->ctr.events, b->ctr.events + n);
	wb_store_relaxed(&b->ctr.updates_queued, b->ctr.updates_queued + t->queued + 1);
}

/* The stream's publish: its readers learn of the batch (and of the
 * input ring's drops); a futex wake only when one of them sleeps. */
static void stream_publish(struct builder *b)
{
	struct wb_ring_writer *w = &b->stream.writer;

	w->dropped = b->ctr.ring_dropped;
	if (wb_ring_writer_publish(w))
		futex_wake_shared_all(&w->cons->sleeping);
}

/* Apply n events; avail (>= n) are readable in the ring, for prefetching. */
static void apply_batch(struct builder *b, uint64_t n, uint64_t avail)
{
	uint64_t read_ts = b->cfg.latency ? now_ns() : 0;
	struct t1_batch t = { .b = b, .timed = read_ts != 0, .slots = b->ring.slots, .mask = b->ring.mask,
			      .first = b->ring.tail, .avail = avail };
	int split = 0;

	if (b->od)
		order_detail_poll(b->od, b->vb);
	venue_books_apply_batch(b->vb, b->ring.slots, b->ring.mask, b->ring.tail, n, avail, t1_room(&t), t1_emit,
				&t);
	/* A batch cut at BUILDER_MAX_BATCH can end inside a packet. */
	if (read_ts && t.prev && wb_ring_consumer_available(&b->ring) > n) {
		const struct wb_event *next = wb_ring_consumer_at(&b->ring, n);

		split = next->recv_ts == t.prev->recv_ts && next->line == t.prev->line;
	}
	end_batch(b, &t, read_ts, split, n);
	if (b->stream.mem) {
		uint64_t i;

		wb_ring_writer_claim(&b->stream.writer, n);
		for (i = 0; i < n; i++)
			wb_ring_writer_put(&b->stream.writer, wb_ring_consumer_at(&b->ring, i));
		/* Lockstep: a gated packet is published whole, at its gate. */
		if (!b->cfg.lockstep || !lockstep_holding(b->cfg.lockstep))
			stream_publish(b);
	}
	wb_ring_consumer_release(&b->ring, n);
}

/* Apply n events read in place from a builder_source. */
static void apply_source_batch(struct builder *b, const struct wb_event *const *evs, uint64_t n)
{
	uint64_t read_ts = b->cfg.latency ? now_ns() : 0;
	struct t1_batch t = { .b = b, .timed = read_ts != 0, .list = evs, .avail = n };

	if (b->od)
		order_detail_poll(b->od, b->vb);
	venue_books_apply_list(b->vb, evs, n, t1_room(&t), t1_emit, &t);
	/* A full batch may end inside a packet, and what follows is not
	 * looked at: its last packet is timed when it ends (a packet that
	 * did end here goes untimed; only under a backlog). */
	end_batch(b, &t, read_ts, n == BUILDER_MAX_BATCH, n);
	if (b->stream.mem) {
		uint64_t i;

		wb_ring_writer_claim(&b->stream.writer, n);
		for (i = 0; i < n; i++)
			wb_ring_writer_put(&b->stream.writer, evs[i]);
		stream_publish(b);
	}
	b->src.release(b->src.ctx);
}

/* Thread 1 ends: the closing BATCH_END to thread 2, or (rtc) the last
 * publish and beat, thread 2's part. */
static void t1_finish(struct builder *b)
{
	struct book_update end;

	if (b->rtc) {
		t2_publish(b, b->pub);
		superbook_heartbeat(b->sb, now_ns());
	} else {
		make_batch_end(&end, NULL, 0, 0);
		queue_push_one(b, &end);
		queue_publish(b);
	}
	b->ctr.cpu_ns[0] = thread_cpu_ns();
	wb_store_release(&b->t1_done, 1);
	if (b->rtc) {
		wb_store_release(&b->t2_done, 1);
		return;
	}
	/* Thread 2 may have gone to sleep after the last publish, before
	 * t1_done: it looks at t1_done after saying it sleeps. */
	wb_full_fence();
	if (wb_load_relaxed(&b->q.sleeping))
		wake_thread2(b);
}

/* lockstep_cut's view of the ring's unread events. */
static const struct wb_event *ring_event_at(const void *ring, uint64_t i)
{
	return wb_ring_consumer_at(ring, i);
}

/* A batch in lockstep (lockstep.h): cut at the strategy's gate, its due
 * requests in first, and the wait for it after. */
static void apply_lockstep_batch(struct builder *b, uint64_t n, uint64_t avail)
{
	struct lockstep *ls = b->cfg.lockstep;
	uint64_t last_recv_ts;

	if (lockstep_step_over(ls, wb_ring_consumer_at(&b->ring, 0))) {
		if (b->stream.mem)
			stream_publish(b);
		lockstep_wait(ls);
	}
	n = lockstep_cut(ls, ring_event_at, &b->ring, n);
	last_recv_ts = wb_ring_consumer_at(&b->ring, n - 1)->recv_ts;
	lockstep_release(ls, wb_ring_consumer_at(&b->ring, 0));
	apply_batch(b, n, avail);
	lockstep_after(ls, last_recv_ts);
}

static void *thread1_main(void *arg)
{
	struct builder *b = arg;
	int pump_state = b->pump ? BUILDER_PUMP_MORE : BUILDER_PUMP_IDLE;
	unsigned idle = 0;

	pin_self(b, b->ctr.cpu[0]);
	if (b->cfg.lockstep)
		lockstep_begin(b->cfg.lockstep, b->stream.mem ? &b->stream : NULL, b->od, &b->stop);
	for (;;) {
		uint64_t n = wb_ring_consumer_available(&b->ring);

		if (n == 0) {
			if (wb_load_acquire(&b->stop))
				break;
			if (b->pump && pump_state != BUILDER_PUMP_EOF && pump_state != BUILDER_PUMP_ERROR)
				pump_state = b->pump(b->pump_ctx);
			n = wb_ring_consumer_available(&b->ring);
			if (n == 0) {
				if (pump_state == BUILDER_PUMP_EOF || pump_state == BUILDER_PUMP_ERROR)
					break;
				/* A pump that blocked in the kernel (WAITED) gets no nap on top. */
				if (pump_state == BUILDER_PUMP_IDLE)
					idle_wait(b, &idle, &b->ctr.t1_idle_sleeps, BUILDER_IDLE_SLEEP_NS);
				/* A quiet feed still serves readers' order-detail requests
				 * (in lockstep, only at the strategy's steps). */
				if (b->od && !b->cfg.lockstep)
					order_detail_poll(b->od, b->vb);
				continue;
			}
		}
		idle = 0;
		if (b->cfg.lockstep)
			apply_lockstep_batch(b, n < BUILDER_MAX_BATCH ? n : BUILDER_MAX_BATCH, n);
		else
			apply_batch(b, n < BUILDER_MAX_BATCH ? n : BUILDER_MAX_BATCH, n);
		wb_store_relaxed(&b->ctr.ring_dropped, wb_ring_consumer_dropped(&b->ring));
	}
	wb_store_relaxed(&b->ctr.ring_dropped, wb_ring_consumer_dropped(&b->ring));
	if (b->cfg.lockstep && b->stream.mem) {
		stream_publish(b);	/* the last packet, gated or not */
		/* The end is a step too: the strategy reads the last books
		 * before anything is closed or retired under it. */
		lockstep_wait(b->cfg.lockstep);
	}
	t1_finish(b);
	return NULL;
}

/* Thread 1 on a builder_source: the same, reading events in place. */
static void *thread1_source_main(void *arg)
{
	struct builder *b = arg;
	const struct wb_event *evs[BUILDER_MAX_BATCH];
	unsigned idle = 0;

	pin_self(b, b->ctr.cpu[0]);
	for (;;) {
		uint64_t n = b->src.peek(b->src.ctx, evs, BUILDER_MAX_BATCH);

		if (n == 0) {
			if (wb_load_acquire(&b->stop))
				break;
			if (!b->src.wait || b->cfg.busy_poll) {
				idle_wait(b, &idle, &b->ctr.t1_idle_sleeps, BUILDER_IDLE_SLEEP_NS);
			} else if (++idle < BUILDER_IDLE_SPINS) {
				cpu_relax();
			} else {
				/* In the kernel until the producer writes: no timer. */
				b->src.wait(b->src.ctx);
				wb_store_relaxed(&b->ctr.t1_idle_sleeps, b->ctr.t1_idle_sleeps + 1);
			}
			if (b->od)
				order_detail_poll(b->od, b->vb);
			continue;
		}
		idle = 0;
		apply_source_batch(b, evs, n);
		wb_store_relaxed(&b->ctr.ring_dropped, b->src.dropped(b->src.ctx));
	}
	wb_store_relaxed(&b->ctr.ring_dropped, b->src.dropped(b->src.ctx));
	t1_finish(b);
	return NULL;
}

/* ---- thread 2: queue -> Super-Book -> shm -------------------------------- */

/*
 * Thread 2 has spun long enough on an empty queue: sleep in a futex until
 * thread 1 publishes (it wakes only a thread that said it sleeps), or
 * ends (t1_done is read after the flag; thread 1 looks at the flag after
 * setting it).
 */
static void t2_sleep(struct builder *b)
{
	if (book_queue_prepare_sleep(&b->q))
		return;
	if (!wb_load_acquire(&b->t1_done))
		futex_wait(&b->q.sleeping, 1);
	wb_store_relaxed(&b->q.sleeping, 0);
	wb_store_relaxed(&b->ctr.t2_idle_sleeps, b->ctr.t2_idle_sleeps + 1);
}

static void *thread2_main(void *arg)
{
	struct builder *b = arg;
	struct t2_state *t = b->pub;
	unsigned idle = 0, beats = 0;

	pin_self(b, b->ctr.cpu[1]);
	for (;;) {
		uint64_t n = book_queue_available(&b->q), i;

		if (n == 0) {
			if (wb_load_acquire(&b->t1_done) && book_queue_available(&b->q) == 0)
				break;
			if (b->cfg.busy_poll || ++idle < BUILDER_IDLE_SPINS) {
				cpu_relax();
				continue;
			}
			superbook_heartbeat(b->sb, now_ns());
			t2_sleep(b);
			idle = 0;
			continue;
		}
		idle = 0;
		for (i = 0; i < n; i++) {
			const struct book_update *u;
			/* The updates up to the next mark, in one call that runs
			 * the prefetch stages inline. */
			uint64_t k = superbook_apply_ring(b->sb, b->q.slots, b->q.mask, b->q.c_tail + i, n - i);

			t->since_publish += k;
			i += k;
			if (i == n)
				break;
			u = book_queue_at(&b->q, i);
			if (u->kind == BOOK_UP_PACKET) {
				pub_packet(t, u);
				continue;
			}
			pub_batch_end(b, t, u);
			/* Caught up (nothing queued behind this batch), or deferred
			 * long enough: make it visible. */
			if (i + 1 == n || t->since_publish >= BUILDER_PUBLISH_EVERY ||
			    t->n_pending > BUILDER_PENDING_SAMPLES - BUILDER_MAX_BATCH)
				t2_publish(b, t);
		}
		book_queue_release(&b->q, n);
		if (++beats % 4096 == 0)
			superbook_heartbeat(b->sb, now_ns());
	}
	t2_publish(b, t);
	superbook_heartbeat(b->sb, now_ns());
	b->ctr.cpu_ns[1] = thread_cpu_ns();
	wb_store_release(&b->t2_done, 1);
	return NULL;
}

/* ---- thread 3: the Super-Book's updates for the SIP view -> its records in shm */

static void *thread3_main(void *arg)
{
	struct builder *b = arg;
	struct sipview *sv = superbook_sipview(b->sb);
	unsigned idle = 0;

	builder_leave_path(b);
	for (;;) {
		uint64_t n = book_queue_available(&b->sipq), i;

		if (n == 0) {
			if (wb_load_acquire(&b->t2_done) && book_queue_available(&b->sipq) == 0)
				break;
			idle_wait(b, &idle, &b->ctr.t3_idle_sleeps, BUILDER_SIP_IDLE_SLEEP_MAX_NS);
			continue;
		}
		idle = 0;
		for (i = 0; i < n; i++) {
			if (i + 8 < n)
				sipview_prefetch_update(sv, book_queue_at(&b->sipq, i + 8), 0);
			if (i + 4 < n)
				sipview_prefetch_update(sv, book_queue_at(&b->sipq, i + 4), 1);
			sipview_apply(sv, book_queue_at(&b->sipq, i));
		}
		book_queue_release(&b->sipq, n);
	}
	b->ctr.t3_cpu_ns = thread_cpu_ns();
	wb_store_release(&b->done, 1);
	return NULL;
}

/* ---- lifetime ------------------------------------------------------------ */

struct builder *builder_create(const struct builder_config *cfg, int *err)
{
	/* struct builder holds 64-byte aligned queue indices: calloc's 16-byte
	 * alignment let the compiler's aligned vector stores fault. */
	struct builder *b = aligned_alloc(_Alignof(struct builder),
					  (sizeof(*b) + _Alignof(struct builder) - 1) &
						  ~(_Alignof(struct builder) - 1));
	struct venue_books_config vbc;
	struct superbook_config sbc;
	uint32_t slots;
	int rc = 0, node;

	if (!b) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(b, 0, sizeof(*b));
	b->cfg = *cfg;
	b->rtc = cfg->path == BUILDER_PATH_RTC;
	b->ctr.path = b->rtc ? BUILDER_PATH_RTC : BUILDER_PATH_PIPELINE;
	slots = cfg->queue_slots ? cfg->queue_slots : BUILDER_DEFAULT_QUEUE;
	if (slots < 64 || (slots & (slots - 1)) || cfg->rt_priority < 0 || cfg->rt_priority > 99) {
		rc = -EINVAL;
		goto fail;
	}
	node = venue_mem_node(cfg->numa_node);
	b->ctr.numa_node = node;
	vbc = cfg->books;
	vbc.numa_node = node;
	sbc = cfg->shm;
	sbc.numa_node = node;
	if (!sbc.capacity)
		sbc.capacity = vbc.max_instruments ? vbc.max_instruments : VENUE_BOOKS_DEFAULT_INSTRUMENTS;

	b->vb = venue_books_create(&vbc);
	if (!b->vb) {
		rc = -errno;
		goto fail;
	}
	b->pub = venue_mem_alloc(sizeof(*b->pub), node);
	if (!b->pub) {
		rc = -ENOMEM;
		goto fail;
	}
	if (!b->rtc) {	/* run to completion hands nothing to another thread */
		b->queue_bytes = (size_t)slots * sizeof(struct book_update);
		b->queue_mem = venue_mem_alloc(b->queue_bytes, node);
		if (!b->queue_mem) {
			rc = -ENOMEM;
			goto fail;
		}
		book_queue_init(&b->q, b->queue_mem, slots);
	}
	b->sb = superbook_create(&sbc, &rc);
	if (!b->sb)
		goto fail;
	/* After the book, whose create refused a live owner of the name. */
	if (cfg->stream_slots) {
		rc = event_stream_create(&b->stream, cfg->shm.shm_name, cfg->stream_slots, node);
		if (rc)
			goto fail;
	}
	b->sipq_bytes = (size_t)BUILDER_SIP_QUEUE * sizeof(struct book_update);
	b->sipq_mem = venue_mem_alloc(b->sipq_bytes, node);
	if (!b->sipq_mem) {
		rc = -ENOMEM;
		goto fail;
	}
	book_queue_init(&b->sipq, b->sipq_mem, BUILDER_SIP_QUEUE);
	superbook_set_sip_queue(b->sb, &b->sipq);
	if (cfg->order_detail) {
		struct order_detail_config odc = {
			.shm_name = sbc.shm_name,
			.capacity = vbc.max_instruments ? vbc.max_instruments : VENUE_BOOKS_DEFAULT_INSTRUMENTS,
			.order_slots = cfg->order_detail_slots ? cfg->order_detail_slots : vbc.expected_orders,
			.all = strcmp(cfg->order_detail, "all") == 0,
		};

		b->od = order_detail_create(&odc, &rc);
		if (!b->od)
			goto fail;
		if (!odc.all && strcmp(cfg->order_detail, "none") && order_detail_watch(b->od, cfg->order_detail) < 0) {
			rc = -EINVAL;
			goto fail;
		}
	}

	b->ctr.cpu[0] = cfg->cpus[0];
	b->ctr.cpu[1] = b->rtc ? -1 : cfg->cpus[1];
	if (cfg->pin && hwloc_topology_init(&b->topo) == 0) {
		if (hwloc_topology_load(b->topo) == 0) {
			int chosen[2];

			b->have_topo = 1;
			choose_cpus(b, chosen);
			if (b->rtc) {
				/* The one thread on the path: the last core, farthest from core 0. */
				if (b->ctr.cpu[0] < 0)
					b->ctr.cpu[0] = chosen[1];
			} else {
				if (b->ctr.cpu[0] < 0)
					b->ctr.cpu[0] = chosen[0];
				if (b->ctr.cpu[1] < 0)
					b->ctr.cpu[1] = chosen[1];
			}
		} else {
			hwloc_topology_destroy(b->topo);
		}
	}
	if (!b->have_topo)
		b->ctr.cpu[0] = b->ctr.cpu[1] = -1;
	if (err)
		*err = 0;
	return b;
fail:
	builder_destroy(b);
	if (err)
		*err = rc;
	return NULL;
}

static int start_threads(struct builder *b, void *(*thread1)(void *))
{
	int rc = pthread_create(&b->th[2], NULL, thread3_main, b);

	if (rc)
		return -rc;
	if (!b->rtc) {
		rc = pthread_create(&b->th[1], NULL, thread2_main, b);
		if (rc) {
			wb_store_release(&b->t2_done, 1);
			pthread_join(b->th[2], NULL);
			return -rc;
		}
	}
	rc = pthread_create(&b->th[0], NULL, thread1, b);
	if (rc) {
		wb_store_release(&b->t1_done, 1);
		if (b->rtc) {
			wb_store_release(&b->t2_done, 1);
		} else {
			wake_thread2(b);
			pthread_join(b->th[1], NULL);
		}
		pthread_join(b->th[2], NULL);
		return -rc;
	}
	pthread_setname_np(b->th[0], b->rtc ? "wb-path" : "wb-books");
	if (!b->rtc)
		pthread_setname_np(b->th[1], "wb-superbook");
	pthread_setname_np(b->th[2], "wb-sipview");
	b->started = 1;
	return 0;
}

int builder_start(struct builder *b, void *ring_mem, builder_pump_fn pump, void *pump_ctx)
{
	if (b->started || wb_ring_check(ring_mem, UINT64_MAX) != WB_RING_OK)
		return -EINVAL;
	wb_ring_consumer_init(&b->ring, ring_mem);
	b->pump = pump;
	b->pump_ctx = pump_ctx;
	return start_threads(b, thread1_main);
}

int builder_start_source(struct builder *b, const struct builder_source *src)
{
	if (b->started || !src || !src->peek || !src->release || !src->dropped)
		return -EINVAL;
	b->src = *src;
	return start_threads(b, thread1_source_main);
}

/* The program's own code (GNU ld's symbols): mapped now, not page by page
 * as the first packets run through it. */
extern const char __executable_start[], etext[];

static uint64_t prefault_code(void)
{
	uintptr_t first = (uintptr_t)__executable_start & ~(uintptr_t)4095, end = (uintptr_t)etext;

	if (end <= first || madvise((void *)first, end - first, MADV_POPULATE_READ) != 0)
		return 0;
	return end - first;
}

int builder_auto_path(int cpus_named, int cpus_allowed)
{
	/* Two named cpus: one for each pipeline thread, as asked. */
	if (cpus_named)
		return cpus_named == 1 ? BUILDER_PATH_RTC : BUILDER_PATH_PIPELINE;
	return cpus_allowed < BUILDER_PIPELINE_MIN_CPUS ? BUILDER_PATH_RTC : BUILDER_PATH_PIPELINE;
}

void builder_warm(struct builder *b, int lock, struct builder_warm_report *out)
{
	/* On fault: what is mapped now stays; the rest is locked as it is
	 * first touched, instead of populating every reserved mapping (thread
	 * arenas, stacks), which took seconds for nothing. */
	int flags = MCL_CURRENT | MCL_ONFAULT;
	struct rlimit rl;

	memset(out, 0, sizeof(*out));
	/* The venue books, the order index, the queues and the publisher's
	 * bookkeeping are venue_mem, written at allocation; the Super-Book's
	 * shared memory is only faulted in symbol by symbol as they are
	 * announced: the first packets of a symbol paid for it. */
	out->bytes = superbook_prefault(b->sb);
	out->bytes += venue_mem_prefault(b, sizeof(*b));
	out->bytes += prefault_code();
	out->lock_errno = -1;
	if (!lock)
		return;
	/* Future mappings (a doubling order index) too where the limit cannot
	 * refuse them: else a growth would fail, not stall. */
	if (geteuid() == 0 || (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY))
		flags |= MCL_FUTURE;
	out->lock_errno = mlockall(flags) == 0 ? 0 : errno;
}

int builder_done(const struct builder *b)
{
	return wb_load_acquire(&b->done);
}

void builder_stop(struct builder *b)
{
	if (!b || !b->started)
		return;
	wb_store_release(&b->stop, 1);
	pthread_join(b->th[0], NULL);
	if (!b->rtc)
		pthread_join(b->th[1], NULL);
	pthread_join(b->th[2], NULL);
	b->started = 0;
	event_stream_close(&b->stream);
}

void builder_destroy(struct builder *b)
{
	if (!b)
		return;
	builder_stop(b);
	event_stream_destroy(&b->stream);
	order_detail_destroy(b->od);
	superbook_destroy(b->sb);
	if (b->sipq_mem)
		venue_mem_free(b->sipq_mem, b->sipq_bytes, b->ctr.numa_node);
	if (b->queue_mem)
		venue_mem_free(b->queue_mem, b->queue_bytes, b->ctr.numa_node);
	if (b->pub)
		venue_mem_free(b->pub, sizeof(*b->pub), b->ctr.numa_node);
	venue_books_destroy(b->vb);
	if (b->have_topo)
		hwloc_topology_destroy(b->topo);
	free(b);
}

const struct event_stream *builder_event_stream(const struct builder *b)
{
	return b->stream.mem ? &b->stream : NULL;
}

struct order_detail *builder_order_detail(struct builder *b)
{
	return b->od;
}

struct superbook *builder_superbook(struct builder *b)
{
	return b->sb;
}

void builder_get_counters(const struct builder *b, struct builder_counters *out)
{
	out->ring_batches = wb_load_relaxed(&b->ctr.ring_batches);
	out->events = wb_load_relaxed(&b->ctr.events);
	out->updates_queued = wb_load_relaxed(&b->ctr.updates_queued);
	out->queue_full_waits = wb_load_relaxed(&b->ctr.queue_full_waits);
	out->t1_idle_sleeps = wb_load_relaxed(&b->ctr.t1_idle_sleeps);
	out->t2_idle_sleeps = wb_load_relaxed(&b->ctr.t2_idle_sleeps);
	out->t2_wakes = wb_load_relaxed(&b->ctr.t2_wakes);
	out->t2_asleep = b->rtc ? 0 : (int)wb_load_relaxed(&b->q.sleeping);
	out->latency_samples = wb_load_relaxed(&b->ctr.latency_samples);
	out->ring_dropped = wb_load_relaxed(&b->ctr.ring_dropped);
	out->cpu_ns[0] = wb_load_acquire(&b->t1_done) ? b->ctr.cpu_ns[0] : 0;
	out->cpu_ns[1] = wb_load_acquire(&b->t2_done) ? b->ctr.cpu_ns[1] : 0;
	out->t3_cpu_ns = wb_load_acquire(&b->done) ? b->ctr.t3_cpu_ns : 0;
	out->t3_idle_sleeps = wb_load_relaxed(&b->ctr.t3_idle_sleeps);
	out->cpu[0] = b->ctr.cpu[0];
	out->cpu[1] = b->ctr.cpu[1];
	out->path = b->ctr.path;
	out->rt_errno = wb_load_relaxed(&b->ctr.rt_errno);
	out->numa_node = b->ctr.numa_node;
}

const struct venue_books_counters *builder_venue_counters(const struct builder *b)
{
	return venue_books_counters(b->vb);
}

const struct venue_books *builder_venue_books(const struct builder *b)
{
	return b->vb;
}

const struct superbook_counters *builder_superbook_counters(const struct builder *b)
{
	return superbook_counters(b->sb);
}
