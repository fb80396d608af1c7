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
