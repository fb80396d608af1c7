/* Slow paths of the order index: init, teardown, doubling. */
#include "book/order_index.h"
#include "book/venue_mem.h"

#include <errno.h>
#include <string.h>

#define ORDER_INDEX_MIN_BUCKETS 2048u
#define ORDER_INDEX_MAX_BUCKETS (1u << 31)	/* bucket numbers stay 32-bit */

int order_index_init(struct order_index *ix, uint32_t expected_orders, int numa_node)
{
	uint64_t buckets = ORDER_INDEX_MIN_BUCKETS;

	memset(ix, 0, sizeof(*ix));
	ix->numa_node = numa_node;
	while (buckets / 2 < expected_orders)
		buckets *= 2;
	if (buckets > ORDER_INDEX_MAX_BUCKETS) {
		errno = EINVAL;
		return -1;
	}
	ix->buckets = venue_mem_alloc(buckets * sizeof(struct order), numa_node);
	if (!ix->buckets)
		return -1;
	ix->mask = (uint32_t)(buckets - 1);
	ix->shift = 32u - (uint32_t)__builtin_ctzll(buckets);
	ix->grow_at = (uint32_t)(buckets / 2);
	return 0;
}

void order_index_fini(struct order_index *ix)
{
	venue_mem_free(ix->buckets, ((size_t)ix->mask + 1) * sizeof(struct order), ix->numa_node);
	ix->buckets = NULL;
}

int order_index_grow(struct order_index *ix)
{
	size_t old_n = (size_t)ix->mask + 1;
	size_t n = 2 * old_n;
	struct order *old = ix->buckets, *bigger;

	if (n > ORDER_INDEX_MAX_BUCKETS) {
		errno = ENOSPC;
		return -1;
	}
	bigger = venue_mem_alloc(n * sizeof(*bigger), ix->numa_node);
	if (!bigger)
		return -1;
	ix->buckets = bigger;
	ix->mask = (uint32_t)(n - 1);
	ix->shift--;
	for (size_t i = 0; i < old_n; i++) {
		uint32_t b;

		if (!old[i].level_venue)
			continue;
		b = order_index_home(ix, order_venue(&old[i]), old[i].id);
		while (bigger[b].level_venue)
			b = (b + 1) & ix->mask;
		bigger[b] = old[i];
	}
	venue_mem_free(old, old_n * sizeof(*old), ix->numa_node);
	ix->grow_at = (uint32_t)(n / 2);
	ix->grows++;
	return 0;
}
