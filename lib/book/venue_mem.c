#include "book/venue_mem.h"

#include <errno.h>
#include <numa.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE_BYTES (2u << 20)

int venue_mem_node(int requested_node)
{
	if (requested_node < 0 || numa_available() < 0)
		return -1;
	if (requested_node > numa_max_node())
		return -1;
	return requested_node;
}

static size_t round_to_pages(size_t bytes)
{
	size_t unit = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 4096;
	return (bytes + unit - 1) & ~(unit - 1);
}

void *venue_mem_alloc(size_t bytes, int node)
{
	size_t len;
	void *p;

	if (bytes == 0) {
		errno = EINVAL;
		return NULL;
	}
	len = round_to_pages(bytes);
	if (node >= 0) {
		p = numa_alloc_onnode(len, node);
		if (!p) {
			errno = ENOMEM;
			return NULL;
		}
	} else {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	}
	/* Advisory: a kernel without THP just keeps 4 KiB pages. */
	if (len >= HUGE_PAGE_BYTES)
		(void)madvise(p, len, MADV_HUGEPAGE);
	/* Fault every page in now (anonymous memory reads as zero already). */
	memset(p, 0, len);
	return p;
}

void venue_mem_free(void *p, size_t bytes, int node)
{
	size_t len;

	if (!p)
		return;
	len = round_to_pages(bytes);
	if (node >= 0)
		numa_free(p, len);
	else
		munmap(p, len);
}

size_t venue_mem_prefault(void *p, size_t bytes)
{
	uintptr_t first = (uintptr_t)p & ~(uintptr_t)4095, end = (uintptr_t)p + bytes;

	if (!p || !bytes)
		return 0;
	if (madvise((void *)first, end - first, MADV_POPULATE_WRITE) != 0) {
		/* Before Linux 5.14: one write per page, of the byte already there. */
		for (uintptr_t a = first; a < end; a += 4096) {
			volatile uint8_t *q = (volatile uint8_t *)(a > (uintptr_t)p ? a : (uintptr_t)p);

			*q = *q;
		}
	}
	return end - first;
}

/* ---- arena ---------------------------------------------------------------- */

#define ARENA_CHUNK_BYTES ((size_t)4 << 20)

struct venue_arena_chunk {
	struct venue_arena_chunk *next;
	size_t bytes;
	uint8_t pad[48];			/* blocks start 64-byte aligned */
};

static size_t arena_block_bytes(size_t bytes)
{
	size_t b = VENUE_ARENA_MIN_BLOCK;

	while (b < bytes)
		b <<= 1;
	return b;
}

static unsigned arena_class(size_t block_bytes)
{
	return (unsigned)(__builtin_ctzll(block_bytes) - __builtin_ctz(VENUE_ARENA_MIN_BLOCK));
}

static int arena_add_chunk(struct venue_arena *a, size_t min_bytes)
{
	size_t bytes = ARENA_CHUNK_BYTES;
	struct venue_arena_chunk *ch;

	if (bytes < min_bytes + sizeof(*ch))
		bytes = min_bytes + sizeof(*ch);
	ch = venue_mem_alloc(bytes, a->node);
	if (!ch)
		return -1;
	ch->next = a->chunks;
	ch->bytes = bytes;
	a->chunks = ch;
	a->bump = (char *)(ch + 1);
	a->end = (char *)ch + bytes;
	return 0;
}

int venue_arena_init(struct venue_arena *a, int node)
{
	memset(a, 0, sizeof(*a));
	a->node = node;
	return arena_add_chunk(a, 0);
}

void venue_arena_destroy(struct venue_arena *a)
{
	struct venue_arena_chunk *ch, *next;

	for (ch = a->chunks; ch; ch = next) {
		next = ch->next;
		venue_mem_free(ch, ch->bytes, a->node);
	}
	a->chunks = NULL;
}

void *venue_arena_alloc(struct venue_arena *a, size_t bytes)
{
	size_t block = arena_block_bytes(bytes);
	unsigned k = arena_class(block);
	void *p;

	if (k >= VENUE_ARENA_CLASSES)
		return NULL;
	p = a->free_blocks[k];
	if (p) {
		a->free_blocks[k] = *(void **)p;
		/* The next allocation of this size reads the new head's link. */
		if (a->free_blocks[k])
			__builtin_prefetch(a->free_blocks[k], 1, 3);
		return p;
	}
	if ((size_t)(a->end - a->bump) < block) {
		if (arena_add_chunk(a, block) < 0)
			return NULL;
		a->chunks_added++;
	}
	p = a->bump;
	a->bump += block;
	return p;
}

void venue_arena_free(struct venue_arena *a, void *p, size_t bytes)
{
	unsigned k = arena_class(arena_block_bytes(bytes));

	*(void **)p = a->free_blocks[k];
	a->free_blocks[k] = p;
}
