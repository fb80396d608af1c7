/*
 * libFuzzer target: MoldUDP64 + ITCH 5.0. The first byte picks how the
 * input is presented (a raw UDP payload, or split into several packets on
 * the A and B lines) so sequencing, A/B arbitration and the filter cache
 * are exercised along with message decoding.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"

#define RING_SLOTS 1024u

static struct feed_engine *engine;
static void *ring_mem;
static struct wb_ring_producer prod;
static struct wb_ring_consumer cons;
static int line_a, line_b;
static uint8_t last_mode;

static void *zalloc(size_t n)
{
	return calloc(1, n);
}

static void setup(void)
{
	struct feed_engine_config cfg = { .alloc = zalloc, .free = free };

	engine = calloc(1, sizeof(*engine));
	feed_engine_init(engine, &cfg);
	line_a = feed_map_add(engine, 0xe9360c6f, 26477, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A");
	line_b = feed_map_add(engine, 0xe931c46f, 26477, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "B");
	ring_mem = aligned_alloc(4096, wb_ring_bytes(RING_SLOTS));
	memset(ring_mem, 0, wb_ring_bytes(RING_SLOTS));
	wb_ring_format(ring_mem, RING_SLOTS, 1);
	wb_ring_producer_init(&prod, ring_mem);
	wb_ring_consumer_init(&cons, ring_mem);
}

static void drain(void)
{
	wb_ring_producer_publish(&prod);
	wb_ring_consumer_release(&cons, wb_ring_consumer_available(&cons));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mode;

	if (!engine)
		setup();
	if (size < 1)
		return 0;
	mode = data[0];
	data++;
	size--;
	feed_engine_reset_state(engine);
	/* Change subscriptions only when the mode does: each change costs a
	 * filter-cache rebuild, which would otherwise dominate every run. */
	if ((mode & 1) != (last_mode & 1)) {
		if (mode & 1)
			feed_subscribe(engine, "*", 1);
		else
			feed_unsubscribe(engine, "*", 1);
	}
	if ((mode & 2) && !(last_mode & 2))
		feed_subscribe(engine, "META", 4);
	else if (!(mode & 2) && (last_mode & 2))
		feed_unsubscribe(engine, "META", 4);
	last_mode = mode;
	if (mode & 4) {
		/* Split at 0xff 0xfe markers into packets alternating lines. */
		size_t start = 0, i = 0;
		int n = 0;

		while (i <= size) {
			if (i == size || (i + 1 < size && data[i] == 0xff && data[i + 1] == 0xfe)) {
				feed_process_payload(engine, (n++ & 1) ? line_b : line_a, data + start,
						     (uint32_t)(i - start), 0, &prod);
				drain();
				start = i + 2;
				i += 2;
			} else {
				i++;
			}
		}
	} else if (mode & 8) {
		feed_process_frame(engine, data, (uint32_t)size, 0, &prod);
	} else {
		feed_process_payload(engine, line_a, data, (uint32_t)size, 0, &prod);
	}
	drain();
	return 0;
}
