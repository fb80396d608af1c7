/*
 * wirebookd's event stream: every event the books apply, in a broadcast
 * ring (include/wirebook/ring.h) in its own shared-memory object beside
 * the book, /dev/shm/NAME.events, which readers follow with
 * wb_events_open_shm (events.h). The builder makes it
 * (builder_config.stream_slots) and its thread 1 is the only writer; this
 * file makes the object, and closes, unlinks and unmaps it.
 *
 * A reader inside wirebookd (a publisher to other hosts) follows the same
 * ring with the public API, over the mapping:
 *
 *   struct wb_events *ev = wb_events_attach(&es->mem, 1, es->bytes, &err);
 *
 * and, like every reader, can never slow or block the writer.
 */
#ifndef WIREBOOK_BOOK_EVENT_STREAM_H
#define WIREBOOK_BOOK_EVENT_STREAM_H

#include <stdint.h>
#include <sys/types.h>
#include "wirebook/ring.h"

/* wirebookd --events: slots of the ring (16 MiB of events), and the range. */
#define EVENT_STREAM_DEFAULT_SLOTS (1u << 18)
#define EVENT_STREAM_MIN_SLOTS 1024u
#define EVENT_STREAM_MAX_SLOTS (1u << 28)

struct event_stream {
	void *mem;			/* the ring; NULL: none */
	uint64_t bytes;			/* wb_ring_bytes(slots) */
	struct wb_ring_writer writer;	/* thread 1's while the builder runs */
	dev_t dev;			/* the object's identity, for the unlink */
	ino_t ino;
	char name[256];			/* "/NAME.events" */
};

/*
 * Make the stream of the book book_name (a name wirebookd accepted for
 * --shm) with slots slots (a power of two in the range above), its pages
 * faulted in (no page fault on the path's first lap) and bound to
 * numa_node (-1: anywhere). An older stream under the name is closed (its
 * readers drain it and learn) and replaced: the book's own create has
 * already refused a live owner. 0, or a WB_E* code (errno tells).
 */
int event_stream_create(struct event_stream *es, const char *book_name, uint32_t slots,
			int numa_node);

/*
 * Once the writer has stopped: close the ring (readers drain it, then
 * wb_events_wait says WB_ESTALE) and wake its sleepers. Safe on a stream
 * never made, and twice.
 */
void event_stream_close(struct event_stream *es);
/* Close, unlink the name if it is still ours, unmap. Safe on a stream never made. */
void event_stream_destroy(struct event_stream *es);

#endif /* WIREBOOK_BOOK_EVENT_STREAM_H */
