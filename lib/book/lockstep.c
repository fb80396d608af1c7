/*
 * Lockstep replay (lockstep.h): the builder's side of the handshake with
 * the one strategy that claimed the event stream, and the latency model.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "book/futex.h"
#include "book/lockstep.h"
#include "shm/orders_layout.h"
#include "wirebook/barrier.h"

/* Spins on the ack before sleeping: the strategy usually answers within
 * a few microseconds when it has a core. */
#define LOCKSTEP_SPINS 4000u
/* A sleeping writer looks at its stop flag and the reader's life this often. */
#define LOCKSTEP_SLEEP_NS 100000000L

struct held_request {
	uint32_t slot;			/* in orders-req */
	uint64_t due;			/* recv_ts at or after which it takes effect */
};

struct lockstep {
	struct lockstep_config cfg;
	char req_name[256];
	struct wb_ord_requests *req;	/* NAME.orders-req, mapped here too; NULL: no detail */
	size_t req_bytes;
	struct event_stream *es;
	const struct order_detail_fast *od;
	const struct order_detail *detail;	/* its watch list */
	const int *stop;
	int gate_pending;		/* the packet last applied has a gated event */
	uint64_t last_recv_ts;		/* that packet */
	uint16_t last_line;
	uint64_t applied_recv_ts;	/* the last event applied */
	uint64_t posted_seen;		/* req->posted when last scanned */
	uint64_t rng;			/* xorshift64*: the jitter's or the samples' draws */
	uint64_t *samples;		/* the sampled delay's, or NULL */
	struct held_request held[WB_ORD_REQUESTS];
	unsigned n_held;
	int reader_gone;
	struct lockstep_counters ctr;
};

int lockstep_gate_parse(const char *arg)
{
	if (!strcmp(arg, "detail"))
		return LOCKSTEP_GATE_DETAIL;
	if (!strcmp(arg, "all"))
		return LOCKSTEP_GATE_ALL;
	return -1;
}

struct lockstep *lockstep_create(const struct lockstep_config *cfg, int *err)
{
	struct lockstep *ls = calloc(1, sizeof(*ls));

	if (!ls) {
		*err = -ENOMEM;
		return NULL;
	}
	ls->cfg = *cfg;
	ls->rng = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
	if (cfg->delay_sample_count) {
		ls->samples = malloc(cfg->delay_sample_count * sizeof(*ls->samples));
		if (!ls->samples) {
			free(ls);
			*err = -ENOMEM;
			return NULL;
		}
		memcpy(ls->samples, cfg->delay_samples, cfg->delay_sample_count * sizeof(*ls->samples));
		ls->cfg.delay_samples = ls->samples;
	}
	const char *name = cfg->shm_name ? cfg->shm_name : "wirebook";

	while (*name == '/')
		name++;
	snprintf(ls->req_name, sizeof(ls->req_name), "/%s.orders-req", name);
	*err = 0;
	return ls;
}

void lockstep_destroy(struct lockstep *ls)
{
	if (!ls)
		return;
	if (ls->req)
		munmap(ls->req, ls->req_bytes);
	free(ls->samples);
	free(ls);
}

/* The order detail's request area, as readers map it: the held requests
 * are parked there. */
static void map_requests(struct lockstep *ls)
{
	struct stat st;
	void *mem;
	int fd = shm_open(ls->req_name, O_RDWR | O_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct wb_ord_requests)) {
		close(fd);
		return;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED)
		return;
	ls->req = mem;
	ls->req_bytes = (size_t)st.st_size;
	ls->posted_seen = wb_load_acquire(&ls->req->posted);
}

static struct wb_ring_cons_page *cons_page(const struct lockstep *ls)
{
	return (struct wb_ring_cons_page *)((char *)ls->es->mem + WB_RING_PAGE);
}

static int reader_alive(struct lockstep *ls)
{
	uint32_t pid = wb_load_acquire(&cons_page(ls)->lockstep_reader);

	if (pid == UINT32_MAX || (pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH))
		ls->reader_gone = 1;
	return !ls->reader_gone;
}

void lockstep_begin(struct lockstep *ls, struct event_stream *es, struct order_detail *od, const int *stop)
{
	struct wb_ring_prod_page *pp;

	ls->es = es;
	ls->od = od ? order_detail_fast(od) : NULL;
	ls->detail = od;
	ls->stop = stop;
	if (od)
		map_requests(ls);
	if (!es || !es->mem) {
		ls->reader_gone = 1;	/* no stream (--events 0): nobody to step with */
		return;
	}
	pp = es->mem;
	/* A stream object reused from an earlier run keeps its last reader's claim. */
	wb_store_relaxed(&cons_page(ls)->lockstep_acked, 0);
	wb_store_relaxed(&cons_page(ls)->lockstep_writer_waits, 0);
	wb_store_release(&cons_page(ls)->lockstep_reader, 0);
	wb_store_release(&pp->lockstep, 1);
	/* Nothing is applied before the strategy is there to see it. A
	 * reader that opened before the flag and sleeps on the stream is woken
	 * to look again (and claim), as a publish would wake it. */
	wb_full_fence();
	while (!wb_load_acquire(&cons_page(ls)->lockstep_reader) && !wb_load_acquire(stop)) {
		struct timespec nap = { 0, 1000000 };
		uint32_t s = wb_load_relaxed(&cons_page(ls)->sleeping);

		if (s & 1) {
			wb_store_relaxed(&cons_page(ls)->sleeping, s + 1);
			futex_wake_shared_all(&cons_page(ls)->sleeping);
		}
		nanosleep(&nap, NULL);
	}
}

static int gated(const struct lockstep *ls, const struct wb_event *ev)
{
	if (ls->cfg.gate == LOCKSTEP_GATE_ALL)
		return 1;
	if (ls->od && ev->instrument < ls->od->capacity && ls->od->on[ev->instrument])
		return 1;
	/* A watched symbol's detail comes on as its definition is applied,
	 * in the packet that often brings its first orders too: the strategy
	 * reads those with detail, so that packet is a step as well. */
	return ev->kind == WB_EV_SYMBOL && ls->detail && order_detail_watches(ls->detail, ev->u.symbol.ticker);
}

static uint64_t earliest_due(const struct lockstep *ls)
{
	uint64_t due = UINT64_MAX;

	for (unsigned i = 0; i < ls->n_held; i++)
		if (ls->held[i].due < due)
			due = ls->held[i].due;
	return due;
}

static void wait_ack(struct lockstep *ls, uint64_t target);
static void hold_new(struct lockstep *ls, uint64_t now);

/* The same packet (as the builder's timing marks tell one: receive time and line)? */
static int same_packet(const struct wb_event *a, uint64_t recv_ts, uint16_t line)
{
	return a->recv_ts == recv_ts && a->line == line;
}

int lockstep_step_over(const struct lockstep *ls, const struct wb_event *next)
{
	const struct wb_ring_writer *w = &ls->es->writer;

	if (ls->reader_gone)
		return 0;
	if (ls->gate_pending)
		return !same_packet(next, ls->last_recv_ts, ls->last_line);
	/* A long run of ungated events: handed over before the ring could
	 * overwrite what the strategy has not read. */
	return w->head - w->published > (w->mask + 1) / 4;
}

void lockstep_wait(struct lockstep *ls)
{
	if (ls->gate_pending)
		ls->ctr.gates++;
	else
		ls->ctr.flushes++;
	ls->gate_pending = 0;
	wait_ack(ls, ls->es->writer.head);
	if (ls->req)
		hold_new(ls, ls->applied_recv_ts);
}

int lockstep_holding(const struct lockstep *ls)
{
	return !ls->reader_gone;
}

uint64_t lockstep_cut(struct lockstep *ls, lockstep_at_fn at, const void *ctx, uint64_t n)
{
	uint64_t due, i;

	if (ls->reader_gone)
		return n;
	due = ls->n_held ? earliest_due(ls) : UINT64_MAX;
	for (i = 0; i < n; i++) {
		const struct wb_event *ev = at(ctx, i);

		/* A held request goes in before the first event at its due time. */
		if (ev->recv_ts >= due && i)
			return i;
		if (ls->gate_pending) {
			/* The gated packet goes on (a batch cut short, or the pump's
			 * budget): to its end, and no further. */
			if (!same_packet(ev, ls->last_recv_ts, ls->last_line))
				return i;
			continue;
		}
		if (!gated(ls, ev))
			continue;
		ls->gate_pending = 1;
		ls->last_recv_ts = ev->recv_ts;
		ls->last_line = ev->line;
	}
	return n;
}

void lockstep_release(struct lockstep *ls, const struct wb_event *first)
{
	unsigned i = 0, released = 0;

	while (i < ls->n_held) {
		if (ls->held[i].due > first->recv_ts) {
			i++;
			continue;
		}
		wb_store_release(&ls->req->req[ls->held[i].slot].state, WB_ORD_REQ_READY);
		ls->held[i] = ls->held[--ls->n_held];
		released++;
	}
	if (released) {
		__atomic_fetch_add(&ls->req->posted, released, __ATOMIC_RELEASE);
		ls->posted_seen += released;	/* ours: not news for the next scan */
	}
}

/* Wait until the reader has consumed the stream up to target. */
static void wait_ack(struct lockstep *ls, uint64_t target)
{
	struct wb_ring_cons_page *c = cons_page(ls);
	unsigned spins = 0;

	if (wb_load_acquire(&c->lockstep_acked) >= target)
		return;
	ls->ctr.waits++;
	while (wb_load_acquire(&c->lockstep_acked) < target) {
		if (wb_load_acquire(ls->stop) || !reader_alive(ls))
			return;
		if (++spins < LOCKSTEP_SPINS) {
			cpu_relax();
			continue;
		}
		spins = 0;
		wb_store_relaxed(&c->lockstep_writer_waits, 1);
		wb_full_fence();	/* pairs with the reader's fence between its ack and this flag */
		if (wb_load_acquire(&c->lockstep_acked) < target) {
			ls->ctr.sleeps++;
			futex_wait_shared_timeout(&c->lockstep_writer_waits, 1, LOCKSTEP_SLEEP_NS);
		}
		wb_store_relaxed(&c->lockstep_writer_waits, 0);
	}
}

uint64_t lockstep_next_draw(struct lockstep *ls)
{
	uint64_t x;

	if (!ls->cfg.jitter_ns && !ls->cfg.delay_sample_count)
		return 0;
	ls->rng ^= ls->rng >> 12;
	ls->rng ^= ls->rng << 25;
	ls->rng ^= ls->rng >> 27;
	x = ls->rng * 0x2545f4914f6cdd1dull;
	if (ls->cfg.delay_sample_count)
		return ls->cfg.delay_samples[x % ls->cfg.delay_sample_count];
	return x % ls->cfg.jitter_ns;
}

int lockstep_delays_read(const char *path, uint64_t **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	uint64_t *v = NULL;
	size_t cap = 0, n = 0;
	unsigned long line = 0;
	char buf[256];

	*out = NULL;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *p = buf, *end;
		unsigned long long ns;

		line++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		errno = 0;
		ns = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
		if (*p < '0' || *p > '9' || errno || ns > LOCKSTEP_MAX_DELAY_NS ||
		    end[strspn(end, " \t\r\n")] != 0 || (!strchr(buf, '\n') && !feof(f))) {
			buf[strcspn(buf, "\r\n")] = 0;
			snprintf(err, errlen, "%s line %lu: '%.40s' is not a delay in ns (0 to %llu)", path, line, p,
				 LOCKSTEP_MAX_DELAY_NS);
			goto fail;
		}
		if (n == LOCKSTEP_MAX_DELAY_SAMPLES) {
			snprintf(err, errlen, "%s: more than %u delays (the limit)", path, LOCKSTEP_MAX_DELAY_SAMPLES);
			goto fail;
		}
		if (n == cap) {
			uint64_t *w = realloc(v, (cap ? cap * 2 : 1024) * sizeof(*v));

			if (!w) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			v = w;
			cap = cap ? cap * 2 : 1024;
		}
		v[n++] = ns;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	if (!n) {
		snprintf(err, errlen, "%s: no delay in it (one in ns a line)", path);
		free(v);
		return -1;
	}
	*out = v;
	return (int)n;
fail:
	fclose(f);
	free(v);
	return -1;
}

/* The reader's new requests wait for their due time: parked as CLAIMED,
 * which the order detail's poll passes over. */
static void hold_new(struct lockstep *ls, uint64_t now)
{
	uint64_t posted = wb_load_acquire(&ls->req->posted);

	if (posted == ls->posted_seen)
		return;
	ls->posted_seen = posted;
	for (uint32_t r = 0; r < WB_ORD_REQUESTS && ls->n_held < WB_ORD_REQUESTS; r++) {
		uint32_t ready = WB_ORD_REQ_READY;

		if (!__atomic_compare_exchange_n(&ls->req->req[r].state, &ready, WB_ORD_REQ_CLAIMED, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		ls->held[ls->n_held++] = (struct held_request){ .slot = r, .due = now + ls->cfg.delay_ns + lockstep_next_draw(ls) };
		ls->ctr.held++;
	}
}

void lockstep_after(struct lockstep *ls, uint64_t last_recv_ts)
{
	ls->applied_recv_ts = last_recv_ts;
}

void lockstep_get_counters(const struct lockstep *ls, struct lockstep_counters *out)
{
	*out = ls->ctr;
}
