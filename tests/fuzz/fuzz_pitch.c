/*
 * libFuzzer target: Cboe Multicast PITCH (Sequenced Unit Header). The first
 * byte picks how the input is presented (one raw UDP payload, several
 * packets split at 0xff 0xfe markers alternating the A and B lines, or an
 * Ethernet frame) and what is subscribed, so sequencing per unit, A/B
 * arbitration and the order-id filter are exercised along with message
 * decoding. The filter holds only 64 orders, so its overflow path runs too.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"

#define RING_SLOTS 1024u
#define FILTER_CAPACITY 64u

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
	struct feed_engine_config cfg = { .alloc = zalloc, .free = free,
					  .order_filter_capacity = FILTER_CAPACITY };

	engine = calloc(1, sizeof(*engine));
	feed_engine_init(engine, &cfg);
	line_a = feed_map_add(engine, 0xe0003e02, 30001, FEED_PROTO_PITCH, WB_VENUE_BZX, "A");
	line_b = feed_map_add(engine, 0xe0003e82, 30001, FEED_PROTO_PITCH, WB_VENUE_BZX, "B");
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

static void toggle(uint8_t mode, uint8_t bit, const char *ticker)
{
	if ((mode & bit) && !(last_mode & bit))
		feed_subscribe(engine, ticker, strlen(ticker));
	else if (!(mode & bit) && (last_mode & bit))
		feed_unsubscribe(engine, ticker, strlen(ticker));
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
	toggle(mode, 1, "*");
	toggle(mode, 2, "A");		/* the BATS lab captures' symbol */
	toggle(mode, 16, "JDST");	/* one of the BYX captures' symbols */
	last_mode = mode;
	if (mode & 4) {
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
