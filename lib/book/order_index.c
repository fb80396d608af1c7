/* Slow paths of the order index: init, teardown, capacity doubling. */
#include "book/order_index.h"
#include "book/venue_mem.h"

#include <errno.h>
#include <string.h>

#define ORDER_INDEX_MIN_ORDERS 1024u
#define ORDER_INDEX_MAX_ORDERS (1u << 30)	/* slots and buckets stay 32-bit */

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

int order_index_init(struct order_index *ix, uint32_t expected_orders, int numa_node)
{
	uint32_t orders, buckets;

	memset(ix, 0, sizeof(*ix));
	ix->numa_node = numa_node;
	if (expected_orders < ORDER_INDEX_MIN_ORDERS)
		expected_orders = ORDER_INDEX_MIN_ORDERS;
	if (expected_orders > ORDER_INDEX_MAX_ORDERS) {
		errno = EINVAL;
		return -1;
	}
	orders = pow2_at_least(expected_orders + 1);
	buckets = 2 * orders;
	ix->orders = venue_mem_alloc((size_t)orders * sizeof(struct order), numa_node);
	ix->buckets = venue_mem_alloc((size_t)buckets * sizeof(struct order_index_bucket), numa_node);
	if (!ix->orders || !ix->buckets) {
		int err = errno;

		order_index_fini(ix);
		errno = err;
		return -1;
	}
	ix->order_cap = orders;
	ix->order_bump = 1;
	ix->mask = buckets - 1;
	ix->grow_at = buckets / 2;
	return 0;
}

void order_index_fini(struct order_index *ix)
{
	venue_mem_free(ix->orders, (size_t)ix->order_cap * sizeof(struct order), ix->numa_node);
	venue_mem_free(ix->buckets, ((size_t)ix->mask + 1) * sizeof(struct order_index_bucket),
		       ix->numa_node);
	ix->orders = NULL;
	ix->buckets = NULL;
}

int order_index_grow_pool(struct order_index *ix)
{
	uint32_t cap = ix->order_cap * 2;
	struct order *bigger;

	if (ix->order_cap >= ORDER_INDEX_MAX_ORDERS) {
		errno = ENOSPC;
		return -1;
	}
	bigger = venue_mem_alloc((size_t)cap * sizeof(struct order), ix->numa_node);
	if (!bigger)
		return -1;
	memcpy(bigger, ix->orders, (size_t)ix->order_bump * sizeof(struct order));
	venue_mem_free(ix->orders, (size_t)ix->order_cap * sizeof(struct order), ix->numa_node);
	ix->orders = bigger;
	ix->order_cap = cap;
	ix->pool_grows++;
	return 0;
}

int order_index_grow_buckets(struct order_index *ix)
{
	size_t old_n = (size_t)ix->mask + 1;
	size_t n = 2 * old_n;
	struct order_index_bucket *old = ix->buckets, *bigger;
	uint32_t mask;

	if (old_n > ORDER_INDEX_MAX_ORDERS) {
		errno = ENOSPC;
		return -1;
	}
	bigger = venue_mem_alloc(n * sizeof(*bigger), ix->numa_node);
	if (!bigger)
		return -1;
	mask = (uint32_t)(n - 1);
	/* The tag is the hash's low 32 bits, so rehashing reads no order. */
	for (size_t i = 0; i < old_n; i++) {
		uint32_t b;

		if (!old[i].slot)
			continue;
		b = old[i].tag & mask;
		while (bigger[b].slot)
			b = (b + 1) & mask;
		bigger[b] = old[i];
	}
	venue_mem_free(old, old_n * sizeof(*old), ix->numa_node);
	ix->buckets = bigger;
	ix->mask = mask;
	ix->grow_at = (uint32_t)(n / 2);
	ix->index_grows++;
	return 0;
}

