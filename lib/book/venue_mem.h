/*
 * Large, long-lived arrays of the venue books (order pool, order index,
 * level pool, level arenas): placed on the builder's NUMA node, backed by
 * transparent huge pages where the kernel allows it (the books are read at
 * random, so 4 KiB pages would cost a TLB miss on nearly every access), and
 * faulted in at allocation time so the hot path never takes a page fault.
 *
 * Used only off the hot path (creation and capacity doubling).
 */
#ifndef WIREBOOK_VENUE_MEM_H
#define WIREBOOK_VENUE_MEM_H

#include <stddef.h>

/*
 * Resolve a requested node: the node itself when libnuma works and the node
 * exists, else -1 (plain allocation). Call once, pass the result around.
 */
int venue_mem_node(int requested_node);

/* Zeroed, 64-byte aligned, pre-faulted; NULL + errno on failure. */
void *venue_mem_alloc(size_t bytes, int node);
void venue_mem_free(void *p, size_t bytes, int node);

#endif /* WIREBOOK_VENUE_MEM_H */
