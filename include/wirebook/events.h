/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The event rings as an API (libwirebook): every normalized event (add,
 * execute, cancel, ..., with both timestamps and the sequence number) in
 * the order it was decoded, zero-copy over the mapped rings.
 *
 *   int err;
 *   struct wb_events *ev = wb_events_open(NULL, &err);   (the module's rings)
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
	uint64_t dropped;	/* events the producer lost to a full ring, all rings */
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
 * The same over COUNT rings the caller has mapped itself, each RING_BYTES
 * long (wb_ring_bytes(slots)) and formatted by its producer (ring.h): a
 * user-space producer's shared memory, or a ring in this process. The
 * rings stay the caller's: wb_events_close does not unmap them.
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
 * wb_events_attach have no wakeup: the wait naps at most 1 ms at a time.
 */
int wb_events_wait(struct wb_events *ev, int timeout_ms);

/* The counters above into *out; 0 or WB_EINVAL. */
int wb_events_counts(const struct wb_events *ev, struct wb_event_counts *out);

#ifdef __cplusplus
}
#endif

#endif /* WIREBOOK_EVENTS_H */
