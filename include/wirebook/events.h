/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The event rings as an API (libwirebook): every normalized event (add,
 * execute, cancel, ..., with both timestamps and the sequence number) in
 * the order it was decoded, zero-copy over the mapped rings.
 *
 *   int err;
 *   struct wb_events *ev = wb_events_open(NULL, &err);   (the module's rings)
 *   (or wb_events_open_shm(NULL, &err): wirebookd's stream, any source)
 *   const struct wb_event *batch[64];
 *   for (;;) {
 *       unsigned n = wb_events_peek(ev, batch, 64);
 *       if (!n) { wb_events_wait(ev, 100); continue; }
 *       for (unsigned i = 0; i < n; i++) use(batch[i]);
 *       wb_events_release(ev);      (hands the slots back to the producer)
 *   }
 *   wb_events_close(ev);
 *
 * The kernel module keeps one ring per CPU (and one for the events its
 * control path makes) and stamps recv_ts strictly increasing per venue
 * (each venue's events are decoded under a lock of its own), each ring's
 * never going back; peek merges the rings by recv_ts (each event is handed
 * out only once every ring's head has been read after it, so a venue's
 * late publish on another ring can never be overtaken): every venue's
 * events come out in the order the module decoded them. Across venues the
 * order is the merge's by recv_ts of what was published by then, not the
 * module's exact decode order. The pointers peek
 * gives point into the rings' slots: valid, and the slots held (the
 * producer cannot reuse them), until wb_events_release. Hold them briefly:
 * a producer that finds a ring full drops events and counts them
 * (wb_events_counts().dropped).
 *
 * A handle belongs to one thread: the rings are single-consumer.
 * Errors: 0 or a negative WB_E* code (book.h), the library's convention.
 */
#ifndef WIREBOOK_EVENTS_H
#define WIREBOOK_EVENTS_H

#include <stdint.h>
#include "event.h"
#include "book.h"
#include "ioctl.h"	/* WB_DEVICE_PATH */

#ifdef __cplusplus
extern "C" {
#endif

struct wb_events;		/* opaque: the mapped rings and the merge state */

struct wb_event_counts {
	uint64_t delivered;	/* events handed out by wb_events_peek on this handle */
	uint64_t dropped;	/* events the producer lost to a full ring, all rings;
				 * wirebookd's stream: the events this handle lost
				 * falling behind, plus those wirebookd lost before
				 * its books (its input ring's drops) */
	uint64_t published;	/* events the producer published, all rings */
	uint32_t rings;		/* rings merged (the module: one per possible CPU, + 1) */
	uint32_t reserved;
};

/*
 * Map the kernel module's rings: DEVICE, or WB_DEVICE_PATH ("/dev/wirebook")
 * when NULL. On failure NULL, and *err (when not NULL): WB_ENODEV (no such
 * device: the module is not loaded), WB_EACCES (opened read-write, it
 * needs permission), WB_EABI (the module speaks another event or control
 * ABI version), WB_EBADMAGIC (not a wirebook device, or a ring fails its
 * check), WB_ESYS (errno tells).
 */
struct wb_events *wb_events_open(const char *device, int *err);

/*
 * wirebookd's event stream: every event its books applied, whatever its
 * source (--pcap, --itch-file, --iface, --kernel), from the shared-memory
 * broadcast ring it publishes beside the book NAME (wirebookd --shm NAME;
 * NULL: WB_SHM_DEFAULT_NAME), /dev/shm/NAME.events. Any number of readers
 * follow it; none can slow or block wirebookd, which overwrites the
 * oldest events rather than wait: a reader that falls more than the ring
 * (wirebookd --events SLOTS) behind loses the events it missed, and
 * wb_events_counts().dropped counts them. A new handle starts at the
 * oldest event the ring still holds. peek copies events out (a batch at a
 * time, at most 4096 held until wb_events_release), so its pointers stay
 * valid until the release whatever wirebookd writes meanwhile.
 * wb_events_wait sleeps in a futex wirebookd wakes only when a reader
 * sleeps, and returns WB_ESTALE once wirebookd has ended and every event
 * was read (open the stream again for the next run). On failure NULL and
 * *err: WB_ENOSHM (no stream: is wirebookd running, with --events?),
 * WB_EACCES, WB_EABI, WB_EBADMAGIC, WB_EINVAL (a bad name), WB_ESYS.
 */
struct wb_events *wb_events_open_shm(const char *name, int *err);

/* The shared-memory object of a stream: "/" NAME WB_EVENTS_SHM_SUFFIX. */
#define WB_EVENTS_SHM_SUFFIX ".events"

/*
 * The same over COUNT rings the caller has mapped itself, each RING_BYTES
 * long (wb_ring_bytes(slots)) and formatted by its producer (ring.h): a
 * user-space producer's shared memory, or a ring in this process. The
 * rings stay the caller's: wb_events_close does not unmap them. One
 * broadcast ring (ring.h; wirebookd's stream inside wirebookd itself)
 * is read as wb_events_open_shm reads it.
 */
struct wb_events *wb_events_attach(void *const *rings, unsigned count, uint64_t ring_bytes,
				   int *err);

/* Hands back every held slot and unmaps what wb_events_open mapped. */
void wb_events_close(struct wb_events *ev);

/*
 * Up to MAX events in decode order (each venue's; see above), as pointers
 * into the rings' slots;
 * returns how many (0: none ready now). Further peeks continue after the
 * last one handed out; every slot stays held until wb_events_release.
 */
unsigned wb_events_peek(struct wb_events *ev, const struct wb_event **evs, unsigned max);

/* Hand back every slot peeked so far; the pointers become invalid. */
void wb_events_release(struct wb_events *ev);

/*
 * Sleep until events may be ready or TIMEOUT_MS passes (-1: forever),
 * flagging the rings so the producer wakes this reader only while it
 * sleeps. Releases held slots first. Returns 1 when events may be ready,
 * 0 on timeout or signal, or a negative WB_E* code. Rings attached with
 * wb_events_attach have no wakeup: the wait naps at most 1 ms at a time
 * (a broadcast ring's readers sleep in its futex, as wb_events_open_shm's
 * do, and get WB_ESTALE at its end).
 */
int wb_events_wait(struct wb_events *ev, int timeout_ms);

/* The counters above into *out; 0 or WB_EINVAL. */
int wb_events_counts(const struct wb_events *ev, struct wb_event_counts *out);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_EVENTS_H */
