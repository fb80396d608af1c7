/*
 * The harness every decoder fuzz target shares (fuzz_feed.c, built once per
 * row of the protocol table): one engine with an A and a B line of the
 * protocol's first venue, a small ring drained after each packet, and one
 * way to present an input. The input's first byte is the mode:
 *   bit 0  subscribe '*'           bits 1, 4  subscribe the protocol's first
 *                                             and second sample tickers
 *   bit 2  split the rest at 0xff 0xfe markers into packets alternating
 *          the A and B lines (sequencing, A/B arbitration)
 *   bit 3  the rest is an Ethernet frame (frame parsing)
 *   else   the rest is one UDP payload on line A
 * Subscriptions change only when the mode's bits do: each change costs a
 * filter-cache rebuild that would otherwise dominate every run.
 */
#ifndef WIREBOOK_FUZZ_FEED_H
#define WIREBOOK_FUZZ_FEED_H

#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"
#include "test_util.h"

#define FUZZ_RING_SLOTS 1024u

struct fuzz_target {
	int protocol;
	int venue;
	uint32_t ip_b;		/* line B's group; line A takes every address */
	uint16_t port;
	uint32_t order_filter_capacity;	/* 0: the engine's default */
	const char *ticker_bit1;	/* subscribed while mode bit 1 is set */
	const char *ticker_bit4;	/* subscribed while mode bit 4 is set, or NULL */
};

static struct feed_engine *fuzz_engine;
static struct wb_ring_producer fuzz_prod;
static struct wb_ring_consumer fuzz_cons;
static int fuzz_line_a, fuzz_line_b;
static uint8_t fuzz_last_mode;

static void fuzz_setup(const struct fuzz_target *t)
{
	struct feed_engine_config cfg = { .alloc = test_zalloc, .free = free,
					  .order_filter_capacity = t->order_filter_capacity };
	void *mem = aligned_alloc(4096, wb_ring_bytes(FUZZ_RING_SLOTS));

	fuzz_engine = calloc(1, sizeof(*fuzz_engine));
	if (!mem || !fuzz_engine || feed_engine_init(fuzz_engine, &cfg))
		abort();
	/* Line A takes every address, so frames of any capture map to it. */
	struct feed_map_entry any = { .any = true, .protocol = (uint8_t)t->protocol,
				      .venue = (uint8_t)t->venue, .name = "A" };

	fuzz_line_a = feed_map_add_entry(fuzz_engine, &any);
	fuzz_line_b = feed_map_add(fuzz_engine, t->ip_b, t->port, t->protocol, t->venue, "B");
	if (fuzz_line_a < 0 || fuzz_line_b < 0)
		abort();
	memset(mem, 0, wb_ring_bytes(FUZZ_RING_SLOTS));
	wb_ring_format(mem, FUZZ_RING_SLOTS, 1);
	wb_ring_producer_init(&fuzz_prod, mem);
	wb_ring_consumer_init(&fuzz_cons, mem);
}

static void fuzz_drain(void)
{
	wb_ring_producer_publish(&fuzz_prod);
	wb_ring_consumer_release(&fuzz_cons, wb_ring_consumer_available(&fuzz_cons));
}

static void fuzz_toggle(uint8_t mode, uint8_t bit, const char *ticker)
{
	if (!ticker)
		return;
	if ((mode & bit) && !(fuzz_last_mode & bit))
		feed_subscribe(fuzz_engine, ticker, strlen(ticker));
	else if (!(mode & bit) && (fuzz_last_mode & bit))
		feed_unsubscribe(fuzz_engine, ticker, strlen(ticker));
}

static int fuzz_one_input(const struct fuzz_target *t, const uint8_t *data, size_t size)
{
	uint8_t mode;

	if (!fuzz_engine)
		fuzz_setup(t);
	if (size < 1)
		return 0;
	mode = data[0];
	data++;
	size--;
	feed_engine_reset_state(fuzz_engine);
	fuzz_toggle(mode, 1, "*");
	fuzz_toggle(mode, 2, t->ticker_bit1);
	fuzz_toggle(mode, 16, t->ticker_bit4);
	fuzz_last_mode = mode;
	if (mode & 4) {
		size_t start = 0, i = 0;
		int n = 0;

		while (i <= size) {
			if (i == size || (i + 1 < size && data[i] == 0xff && data[i + 1] == 0xfe)) {
				feed_process_payload(fuzz_engine, (n++ & 1) ? fuzz_line_b : fuzz_line_a,
						     data + start, (uint32_t)(i - start), 0, &fuzz_prod);
				fuzz_drain();
				start = i + 2;
				i += 2;
			} else {
				i++;
			}
		}
	} else if (mode & 8) {
		feed_process_frame(fuzz_engine, data, (uint32_t)size, 0, &fuzz_prod);
	} else {
		feed_process_payload(fuzz_engine, fuzz_line_a, data, (uint32_t)size, 0, &fuzz_prod);
	}
	fuzz_drain();
	/* What a hole held back comes out too. */
	feed_engine_flush(fuzz_engine, &fuzz_prod);
	fuzz_drain();
	return 0;
}

#endif
