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
#include <stdint.h>

/*
 * Resolve a requested node: the node itself when libnuma works and the node
 * exists, else -1 (plain allocation). Call once, pass the result around.
 */
int venue_mem_node(int requested_node);

/* Zeroed, 64-byte aligned, pre-faulted; NULL + errno on failure. */
void *venue_mem_alloc(size_t bytes, int node);
void venue_mem_free(void *p, size_t bytes, int node);
/*
 * Fault in the pages of [p, p + bytes) for writing without changing a
 * byte (memory that was allocated but maybe never touched: calloc'd
 * tables); bytes faulted in, counted by page.
 */
size_t venue_mem_prefault(void *p, size_t bytes);

/*
 * Small variable-sized arrays that grow and shrink on the hot path (a
 * book side's levels, a long price level's queue): power-of-two blocks,
 * a free list per size, carved from large chunks of venue_mem_alloc (so on
 * the builder's node, on huge pages, pre-faulted). One thread, no locks.
 */
#define VENUE_ARENA_MIN_BLOCK 64u
#define VENUE_ARENA_CLASSES 26u			/* blocks of 64 B .. 2 GiB */

struct venue_arena_chunk;

struct venue_arena {
	void *free_blocks[VENUE_ARENA_CLASSES];	/* singly linked through the first word */
	char *bump, *end;
	struct venue_arena_chunk *chunks;
	int node;
	uint64_t chunks_added;			/* after the first: each a one-off stall */
};

/* 0 ok (one chunk ready), -1 + errno. */
int venue_arena_init(struct venue_arena *a, int node);
void venue_arena_destroy(struct venue_arena *a);

/* A block of at least bytes (a power of two, >= 64, 64-byte aligned); NULL when out of memory. */
void *venue_arena_alloc(struct venue_arena *a, size_t bytes);
/* Give back a block venue_arena_alloc(a, bytes) returned. */
void venue_arena_free(struct venue_arena *a, void *p, size_t bytes);

#endif /* WIREBOOK_VENUE_MEM_H */
