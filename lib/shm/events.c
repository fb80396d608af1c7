/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The event rings as an API (include/wirebook/events.h): the kernel
 * module's per-CPU rings, or rings the caller mapped, merged in decode
 * order, zero-copy.
 *
 * What the module promises (ioctl.h): it publishes each packet's events
 * on the ring of the CPU that received it, under the lock of the packet's
 * venue, and stamps recv_ts strictly increasing per venue in that lock's
 * order, never going back within a ring. Across venues the CPUs race:
 * their events come out in recv_ts order only as far as they were
 * published by then, which the books do not need.
 *
 * Why the two-pass refresh: an event of a venue seen on ring A means every
 * earlier event of that venue was published before it (its lock orders
 * the publishes), but the reader may have looked at ring B's head just
 * before B published one. So the reader reads every head twice: an event
 * visible in the first pass has all its venue's predecessors visible in
 * the second, and only first-pass events are handed out, each only while
 * no event visible in the second pass has a smaller recv_ts. A venue's
 * predecessor of it then sits in its sorted ring at or behind a head with
 * a smaller recv_ts, so it goes first.
 *
 * wirebookd's stream (wb_events_open_shm) is one broadcast ring (ring.h)
 * that any number of readers follow: nothing to merge, and a slot may be
 * overwritten while it is read, so peek copies a batch out, checks it
 * whole, and hands out pointers to the copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "wirebook/events.h"
#include "wirebook/ioctl.h"
#include "wirebook/ring.h"
#include "shm/relax.h"

#define WB_EVENTS_MAX_RINGS 1024
/* A broadcast ring's events handed out between two releases, at most. */
#define WB_EVENTS_COPIES 4096u
/*
 * Lockstep: how long a strategy that has acked spins for the next step
 * before it sleeps. The writer applies one packet between steps (tens of
 * microseconds at most), and a futex wake-up costs about as much on a
 * virtual machine: without the spin every step paid two.
 */
#define WB_LOCKSTEP_SPIN_NS 200000

struct wb_events {
	int fd;				/* the device; -1 for attached rings */
	uint32_t ring_count;
	uint64_t ring_bytes;
	void **maps;			/* ring_count ring mappings */
	struct wb_ring_consumer *cons;	/* one consumer per ring */
	uint64_t *limit;		/* per ring: events safe to merge (see the top) */
	uint64_t *pending;		/* per ring: events handed out, not yet released */
	uint64_t delivered;
	/* A broadcast ring instead (ring_count 1): read by copy. */
	int broadcast;
	int can_sleep;			/* its consumer page is writable: futex waits */
	struct wb_ring_reader reader;
	struct wb_event *copies;	/* WB_EVENTS_COPIES: what peek handed out */
	unsigned held;			/* copies handed out since the last release */
	void *shm_map;			/* what wb_events_open_shm mapped, shm_bytes long */
	uint64_t shm_bytes;
	int lockstep;			/* this handle claimed the ring's lockstep (ring.h) */
	int may_claim;			/* it may still: read-write, nothing read yet */
};

/* wb_ring_check_kind's verdict as a wb_error. */
static int ring_error(const void *mem, uint64_t bytes, uint32_t magic)
{
	switch (wb_ring_check_kind(mem, bytes, magic)) {
	case WB_RING_OK: return 0;
	case WB_RING_ABI_MISMATCH: return WB_EABI;
	default: return WB_EBADMAGIC;	/* no magic, or a geometry that does not fit */
	}
}

static struct wb_events *events_alloc(uint32_t count, uint64_t ring_bytes)
{
	struct wb_events *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->fd = -1;
	ev->ring_count = count;
	ev->ring_bytes = ring_bytes;
	ev->maps = calloc(count, sizeof(*ev->maps));
	ev->cons = calloc(count, sizeof(*ev->cons));
	ev->limit = calloc(count, sizeof(*ev->limit));
	ev->pending = calloc(count, sizeof(*ev->pending));
	if (!ev->maps || !ev->cons || !ev->limit || !ev->pending) {
		free(ev->maps);
		free(ev->cons);
		free(ev->limit);
		free(ev->pending);
		free(ev);
		return NULL;
	}
	return ev;
}

static void events_free(struct wb_events *ev)
{
	uint32_t i;

	if (ev->fd >= 0) {
		for (i = 0; i < ev->ring_count; i++)
			if (ev->maps[i])
				munmap(ev->maps[i], ev->ring_bytes);
		close(ev->fd);
	}
	if (ev->shm_map)
		munmap(ev->shm_map, ev->shm_bytes);
	free(ev->copies);
	free(ev->maps);
	free(ev->cons);
	free(ev->limit);
	free(ev->pending);
	free(ev);
}

static struct wb_events *fail(struct wb_events *ev, int *err, int code)
{
	int saved = errno;

	if (ev)
		events_free(ev);
	if (err)
		*err = code;
	errno = saved;
	return NULL;
}

/* Producer page and slots read-only, consumer page read-write over it. */
static void *map_ring(int fd, const struct wb_ioc_ring_info *info, uint32_t i)
{
	off_t off = (off_t)info->mmap_stride * i;
	void *base = mmap(NULL, info->ring_bytes, PROT_READ, MAP_SHARED, fd, off);

	if (base == MAP_FAILED)
		return NULL;
	if (mmap((char *)base + WB_RING_PAGE, WB_RING_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, off + WB_RING_PAGE) == MAP_FAILED) {
		int saved = errno;

		munmap(base, info->ring_bytes);
		errno = saved;
		return NULL;
	}
	return base;
}

struct wb_events *wb_events_open(const char *device, int *err)
{
	struct wb_ioc_version ver;
	struct wb_ioc_ring_info info;
	struct wb_events *ev;
	uint32_t i;
	int fd, rc;

	fd = open(device ? device : WB_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(NULL, err, errno == ENOENT || errno == ENODEV || errno == ENXIO ? WB_ENODEV :
				       errno == EACCES || errno == EPERM ? WB_EACCES : WB_ESYS);
	memset(&ver, 0, sizeof(ver));
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, WB_IOC_VERSION, &ver) < 0) {
		close(fd);
		return fail(NULL, err, WB_EBADMAGIC);	/* not a wirebook device */
	}
	if (ver.ctl_version != WB_CTL_VERSION || ver.abi_version != WB_ABI_VERSION) {
		close(fd);
		return fail(NULL, err, WB_EABI);
	}
	if (ioctl(fd, WB_IOC_RING_INFO, &info) < 0) {
		close(fd);
		return fail(NULL, err, WB_ESYS);
	}
	if (!info.ring_count || info.ring_count > WB_EVENTS_MAX_RINGS ||
	    info.page_size != WB_RING_PAGE || info.ring_bytes != wb_ring_bytes(info.slot_count) ||
	    info.mmap_stride < info.ring_bytes) {
		close(fd);
		return fail(NULL, err, WB_EBADMAGIC);	/* implausible geometry */
	}
	ev = events_alloc(info.ring_count, info.ring_bytes);
	if (!ev) {
		close(fd);
		errno = ENOMEM;
		return fail(NULL, err, WB_ESYS);
	}
	ev->fd = fd;
	for (i = 0; i < ev->ring_count; i++) {
		ev->maps[i] = map_ring(fd, &info, i);
		if (!ev->maps[i])
			return fail(ev, err, WB_ESYS);
		rc = ring_error(ev->maps[i], info.ring_bytes, WB_RING_MAGIC);
		if (rc)
			return fail(ev, err, rc);
		wb_ring_consumer_init(&ev->cons[i], ev->maps[i]);
	}
	if (err)
		*err = 0;
	return ev;
}

/* A handle over one broadcast ring at mem (checked); map: ours to unmap. */
static struct wb_events *broadcast_attach(void *mem, uint64_t bytes, int can_sleep, void *map,
					  int *err)
{
	struct wb_events *ev = events_alloc(1, bytes);

	if (ev)
		ev->copies = malloc(WB_EVENTS_COPIES * sizeof(*ev->copies));
	if (!ev || !ev->copies) {
		if (ev)
			events_free(ev);
		if (map)
			munmap(map, bytes);
		errno = ENOMEM;
		return fail(NULL, err, WB_ESYS);
	}
	ev->broadcast = 1;
	ev->can_sleep = can_sleep;
	ev->shm_map = map;
	ev->shm_bytes = bytes;
	ev->maps[0] = mem;
	wb_ring_reader_init(&ev->reader, mem);
	/* A replay in lockstep (wirebookd --lockstep) steps with the first
	 * reader that can tell it where it is: this one, when it is first. */
	ev->may_claim = map && can_sleep;
	if (ev->may_claim)
		ev->lockstep = wb_ring_reader_claim_lockstep(&ev->reader, (uint32_t)getpid());
	if (err)
		*err = 0;
	return ev;
}

struct wb_events *wb_events_open_shm(const char *name, int *err)
{
	char path[256];
	struct stat st;
	void *mem;
	int fd, rw = 1, rc;

	if (!name)
		name = WB_SHM_DEFAULT_NAME;
	name += name[0] == '/';
	if (!*name || strchr(name, '/') || strlen(name) > 200)
		return fail(NULL, err, WB_EINVAL);
	snprintf(path, sizeof(path), "/%s%s", name, WB_EVENTS_SHM_SUFFIX);
	fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* Readable only: read it all the same, waits nap (the writer
		 * cannot learn that this reader sleeps). */
		rw = 0;
		fd = shm_open(path, O_RDONLY | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return fail(NULL, err, errno == ENOENT ? WB_ENOSHM :
				       errno == EACCES || errno == EPERM ? WB_EACCES : WB_ESYS);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return fail(NULL, err, WB_ESYS);
	}
	if ((uint64_t)st.st_size < WB_RING_SLOTS_OFFSET) {
		close(fd);	/* an empty object: wirebookd is making it */
		return fail(NULL, err, st.st_size ? WB_EBADMAGIC : WB_ENOSHM);
	}
	/* The writer's page and the slots read-only; the consumer page, whose
	 * sleeping word is all a reader writes, read-write over them. */
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (mem != MAP_FAILED && rw &&
	    mmap((char *)mem + WB_RING_PAGE, WB_RING_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, WB_RING_PAGE) == MAP_FAILED) {
		munmap(mem, (size_t)st.st_size);
		mem = MAP_FAILED;
	}
	close(fd);
	if (mem == MAP_FAILED)
		return fail(NULL, err, WB_ESYS);
	/* No magic yet: wirebookd is laying the ring out. */
	rc = wb_load_acquire((const uint32_t *)mem) ?
		     ring_error(mem, (uint64_t)st.st_size, WB_RING_MAGIC_BROADCAST) : WB_ENOSHM;
	if (rc) {
		munmap(mem, (size_t)st.st_size);
		return fail(NULL, err, rc);
	}
	return broadcast_attach(mem, (uint64_t)st.st_size, rw, mem, err);
}

struct wb_events *wb_events_attach(void *const *rings, unsigned count, uint64_t ring_bytes,
				   int *err)
{
	struct wb_events *ev;
	unsigned i;

	if (!rings || !count || count > WB_EVENTS_MAX_RINGS)
		return fail(NULL, err, WB_EINVAL);
	if (count == 1 && rings[0] && wb_ring_check_kind(rings[0], ring_bytes,
							 WB_RING_MAGIC_BROADCAST) == WB_RING_OK)
		return broadcast_attach(rings[0], ring_bytes, 1, NULL, err);
	for (i = 0; i < count; i++) {
		if (!rings[i])
			return fail(NULL, err, WB_EINVAL);
		int rc = ring_error(rings[i], ring_bytes, WB_RING_MAGIC);

		if (rc)
			return fail(NULL, err, rc);
	}
	ev = events_alloc(count, ring_bytes);
	if (!ev) {
		errno = ENOMEM;
		return fail(NULL, err, WB_ESYS);
	}
	for (i = 0; i < count; i++) {
		ev->maps[i] = rings[i];
		wb_ring_consumer_init(&ev->cons[i], rings[i]);
	}
	if (err)
		*err = 0;
	return ev;
}

/* Lockstep: everything handed out so far is consumed; a sleeping writer learns it. */
static void lockstep_ack(struct wb_events *ev, uint64_t pos)
{
	if (wb_ring_reader_ack(&ev->reader, pos))
		syscall(SYS_futex, &ev->reader.cons->lockstep_writer_waits, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void release_pending(struct wb_events *ev, uint32_t i)
{
	if (ev->pending[i]) {
		wb_ring_consumer_release(&ev->cons[i], ev->pending[i]);
		ev->pending[i] = 0;
	}
}

void wb_events_release(struct wb_events *ev)
{
	uint32_t i;

	if (!ev)
		return;
	ev->held = 0;
	if (ev->lockstep)
		lockstep_ack(ev, ev->reader.pos);
	for (i = 0; i < ev->ring_count && !ev->broadcast; i++)
		release_pending(ev, i);
}

void wb_events_close(struct wb_events *ev)
{
	if (!ev)
		return;
	wb_events_release(ev);
	if (ev->lockstep) {
		/* Gone: the writer runs free (and no later reader claims it). */
		wb_store_release(&ev->reader.cons->lockstep_reader, UINT32_MAX);
		lockstep_ack(ev, UINT64_MAX);
	}
	events_free(ev);
}

/* Unread events of ring i as of its last head read, beyond those held. */
static uint64_t visible(const struct wb_events *ev, uint32_t i)
{
	const struct wb_ring_consumer *c = &ev->cons[i];
	uint64_t n = c->cached_head - c->tail;

	/* The producer never runs more than a ring ahead; a larger value can
	 * only come from a consumer page scribbled on by someone else. */
	if (n > c->mask + 1)
		n = c->mask + 1;
	return n > ev->pending[i] ? n - ev->pending[i] : 0;
}

/* Read every head twice (see the top of the file); held slots stay held. */
static void refresh_heads(struct wb_events *ev)
{
	uint32_t i;

	for (i = 0; i < ev->ring_count; i++) {
		ev->cons[i].cached_head = wb_load_acquire(&ev->cons[i].prod->head);
		ev->limit[i] = visible(ev, i);
	}
	for (i = 0; i < ev->ring_count; i++)
		ev->cons[i].cached_head = wb_load_acquire(&ev->cons[i].prod->head);
}

/* The ring whose next visible event has the smallest recv_ts, or -1. */
static int64_t earliest_ring(const struct wb_events *ev)
{
	int64_t best = -1;
	uint64_t best_ts = 0;
	uint32_t i;

	for (i = 0; i < ev->ring_count; i++) {
		const struct wb_event *e;

		if (!visible(ev, i))
			continue;
		e = wb_ring_consumer_at(&ev->cons[i], ev->pending[i]);
		if (best < 0 || e->recv_ts < best_ts) {
			best = i;
			best_ts = e->recv_ts;
		}
	}
	return best;
}

/* Copy the next events out of a broadcast ring and hand out the copies. */
static unsigned broadcast_peek(struct wb_events *ev, const struct wb_event **evs, unsigned max)
{
	unsigned room = WB_EVENTS_COPIES - ev->held, n = 0, i;
	int tries;

	if (max < room)
		room = max;
	/* The writer may say lockstep only after this handle opened (it
	 * says so before its first event). */
	if (wb_unlikely(ev->may_claim && !ev->lockstep)) {
		if (ev->reader.pos)
			ev->may_claim = 0;
		else
			ev->lockstep = wb_ring_reader_claim_lockstep(&ev->reader, (uint32_t)getpid());
	}
	/* A copy overwritten under the reader is skipped (counted lost):
	 * look again at once, there is newer data behind it. */
	for (tries = 0; tries < 2 && !n && room; tries++)
		n = (unsigned)wb_ring_reader_copy(&ev->reader, ev->copies + ev->held, room);
	for (i = 0; i < n; i++)
		evs[i] = &ev->copies[ev->held + i];
	ev->held += n;
	ev->delivered += n;
	/* Lockstep: a look that finds nothing new says all before is consumed. */
	if (!n && ev->lockstep && !ev->held)
		lockstep_ack(ev, ev->reader.pos);
	return n;
}

unsigned wb_events_peek(struct wb_events *ev, const struct wb_event **evs, unsigned max)
{
	unsigned n = 0;
	int refreshed = 0;

	if (!ev || !evs)
		return 0;
	if (ev->broadcast)
		return broadcast_peek(ev, evs, max);
	while (n < max) {
		int64_t r = earliest_ring(ev);

		if (r >= 0 && ev->limit[r]) {
			/* The slot stays the consumer's until the release: no copy. */
			evs[n++] = wb_ring_consumer_at(&ev->cons[r], ev->pending[r]++);
			ev->limit[r]--;
			continue;
		}
		if (refreshed)
			break;
		refresh_heads(ev);
		refreshed = 1;
	}
	ev->delivered += n;
	return n;
}

/* Anything to read (or the end)? */
static int broadcast_ready(const struct wb_events *ev)
{
	const struct wb_ring_reader *r = &ev->reader;

	if (wb_load_acquire(&r->prod->head) != r->pos)
		return 1;
	return wb_load_acquire(&r->prod->closed) ? WB_ESTALE : 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The next step, if it comes within WB_LOCKSTEP_SPIN_NS (the clock read every 64 turns). */
static int lockstep_spin(const struct wb_events *ev)
{
	uint64_t until = monotonic_ns() + WB_LOCKSTEP_SPIN_NS;
	unsigned turn = 0;
	int ready;

	while (!(ready = broadcast_ready(ev))) {
		cpu_relax();
		if (!(++turn & 63) && monotonic_ns() >= until)
			break;
	}
	return ready;
}

static int broadcast_wait(struct wb_events *ev, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;
	uint32_t word;
	int ready;

	ev->held = 0;
	if (ev->lockstep)
		lockstep_ack(ev, ev->reader.pos);
	ready = broadcast_ready(ev);
	if (ready || !timeout_ms)
		return ready;
	if (ev->lockstep) {
		ready = lockstep_spin(ev);
		if (ready)
			return ready;
	}
	if (!ev->can_sleep) {
		/* No wakeup for a read-only mapping: a short nap, then look. */
		ts.tv_sec = 0;
		ts.tv_nsec = 1000000;
		nanosleep(&ts, NULL);
		return broadcast_ready(ev);
	}
	if (wb_ring_reader_prepare_sleep(&ev->reader, &word))
		return broadcast_ready(ev);
	if (timeout_ms > 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	/* Shared, not private: the writer is another process. */
	if (syscall(SYS_futex, &ev->reader.cons->sleeping, FUTEX_WAIT, word, tsp, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT)
		return WB_ESYS;
	return broadcast_ready(ev);
}

int wb_events_wait(struct wb_events *ev, int timeout_ms)
{
	uint32_t i;
	int ready = 0, rc;

	if (!ev)
		return WB_EINVAL;
	if (ev->broadcast)
		return broadcast_wait(ev, timeout_ms);
	for (i = 0; i < ev->ring_count; i++) {
		release_pending(ev, i);
		if (wb_ring_consumer_prepare_sleep(&ev->cons[i]))
			ready = 1;
	}
	if (!ready && ev->fd >= 0) {
		struct pollfd pfd = { .fd = ev->fd, .events = POLLIN };

		rc = poll(&pfd, 1, timeout_ms);
		if (rc < 0 && errno != EINTR)
			ready = WB_ESYS;
		else
			ready = rc > 0;
	} else if (!ready && timeout_ms) {
		/* No wakeup for attached rings: a short nap, then look. */
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		for (i = 0; i < ev->ring_count && !ready; i++)
			ready = wb_load_acquire(&ev->cons[i].prod->head) != ev->cons[i].tail;
	}
	for (i = 0; i < ev->ring_count; i++)
		wb_ring_consumer_woke(&ev->cons[i]);
	return ready;
}

int wb_events_counts(const struct wb_events *ev, struct wb_event_counts *out)
{
	uint32_t i;

	if (!ev || !out)
		return WB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->delivered = ev->delivered;
	out->rings = ev->ring_count;
	if (ev->broadcast) {
		const struct wb_ring_prod_page *pp = ev->reader.prod;

		out->dropped = ev->reader.lost + wb_load_acquire(&pp->dropped);
		out->published = wb_load_acquire(&pp->published);
		return 0;
	}
	for (i = 0; i < ev->ring_count; i++) {
		out->dropped += wb_ring_consumer_dropped(&ev->cons[i]);
		out->published += wb_load_acquire(&ev->cons[i].prod->published);
	}
	return 0;
}
