/*
 * Test harness shared by the builder tests: a builder of either path,
 * sized for a generated session, and the checksums of what it built.
 */
#ifndef WIREBOOK_TEST_BUILDER_HARNESS_H
#define WIREBOOK_TEST_BUILDER_HARNESS_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/superbook.h"

/* Unpinned defaults, 64 symbols; its book is /dev/shm/wbtest_TAG_PID, and
 * with stream_slots its event stream /dev/shm/wbtest_TAG_PID.events;
 * queue_slots: thread 1 -> 2 queue (0: the default). */
static inline struct builder *harness_builder_with(int path, uint32_t expected_orders, const char *tag,
						  uint32_t stream_slots, uint32_t queue_slots)
{
	struct builder_config bc;
	struct builder *b;
	char name[64];
	int err;

	memset(&bc, 0, sizeof(bc));
	bc.numa_node = -1;
	bc.cpus[0] = bc.cpus[1] = -1;
	bc.path = path;
	bc.books.max_instruments = 64;
	bc.books.expected_orders = expected_orders;
	bc.queue_slots = queue_slots;
	snprintf(name, sizeof(name), "wbtest_%s_%d", tag, (int)getpid());
	bc.shm.shm_name = name;
	bc.stream_slots = stream_slots;
	b = builder_create(&bc, &err);
	ck_assert_msg(b, "builder_create: %d", err);
	return b;
}

static inline struct builder *harness_builder_stream(int path, uint32_t expected_orders,
						     const char *tag, uint32_t stream_slots)
{
	return harness_builder_with(path, expected_orders, tag, stream_slots, 0);
}

static inline struct builder *harness_builder_queue(int path, uint32_t expected_orders, const char *tag,
						   uint32_t queue_slots)
{
	return harness_builder_with(path, expected_orders, tag, 0, queue_slots);
}

static inline struct builder *harness_builder(int path, uint32_t expected_orders, const char *tag)
{
	return harness_builder_with(path, expected_orders, tag, 0, 0);
}

/* The venue books' and the published Super-Book's checksums (builder stopped). */
static inline void harness_builder_checksums(struct builder *b, uint64_t sums[2])
{
	struct book_tickers t = superbook_tickers(builder_superbook(b));

	sums[0] = venue_books_checksum(builder_venue_books(b), &t);
	sums[1] = superbook_checksum(builder_superbook(b));
}

#endif /* WIREBOOK_TEST_BUILDER_HARNESS_H */
