/*
 * The Super-Book's shared-memory object and its lifetime, apart from the
 * book logic (superbook.c) that writes into it:
 *
 *   create    retire a previous builder's book under the same name (unless
 *             a live builder still owns it), create the object, lay out
 *             the header, directory, symbol records, SIP records and SIP
 *             statistics, bind it to the builder's node
 *   publish   fill the header and store its magic last, so a reader that
 *             sees the magic sees a whole header
 *   retire    mark the header and every record retired, so readers learn
 *             (WB_ESTALE) and readers mid-read recheck
 *   unlink    remove the name, only while it is still our own object (a
 *             newer builder may own it by then)
 *
 * book_shm_destroy() retires, unlinks and unmaps.
 */
#ifndef WIREBOOK_BOOK_SHM_H
#define WIREBOOK_BOOK_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "shm/shm_layout.h"

struct book_shm {
	struct wb_shm_header *hdr;	/* the mapping; NULL: none */
	uint64_t size;			/* bytes mapped */
	uint64_t *dir;			/* symbol directory, capacity entries */
	char *records;			/* struct wb_shm_symbol[capacity] */
	struct wb_shm_sip *sip;		/* struct wb_shm_sip[capacity] */
	struct wb_shm_sipstats *sipstats;
	struct wb_shm_recovery *recovery;	/* the gap-recovery table */
	uint8_t *symbol_stream;			/* [capacity][WB_BOOK_VENUES] */
	struct wb_shm_nats *nats;		/* the NATS counters */
	dev_t dev;			/* the object's identity, for the unlink */
	ino_t ino;
	char name[256];			/* "/name" */
};

/*
 * Create and publish the book named name (with or without its leading
 * '/'; checked by the caller: at most 200 characters, no other '/') for
 * capacity symbols, its pages bound to numa_node (-1: no placement).
 * Returns 0, SUPERBOOK_EBUSY (a live builder owns the name and force is
 * 0), WB_EACCES or WB_ESYS; on failure nothing is left mapped or created.
 */
int book_shm_create(struct book_shm *m, const char *name, uint32_t capacity, int numa_node,
		    int force);
/*
 * Fault [p, p + len) of the mapping in now (MADV_POPULATE_WRITE), so that
 * its first write later is not a page fault (on huge pages, the clearing
 * of 2 MiB). Contents are unchanged; readers may be reading. 0 ok;
 * -EINVAL for a range outside the mapping; -ENOMEM (or another -errno)
 * when the pages cannot be had now (no memory, /dev/shm full): the first
 * write will fault them in, or fail the same way.
 */
int book_shm_prefault(const struct book_shm *m, void *p, size_t len);
/* Retire the book, unlink it if the name is still ours, unmap it. */
void book_shm_destroy(struct book_shm *m);

#endif /* WIREBOOK_BOOK_SHM_H */
