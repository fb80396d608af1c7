/*
 * callgrind_sample: the decode and book paths on a fixed sample, one phase
 * a function, so that `valgrind --tool=callgrind --toggle-collect=PHASE`
 * counts the instructions of one phase alone (scripts/bench-instructions.sh,
 * `make bench-instructions`). Instruction counts are deterministic, where
 * times on a shared machine are not.
 *
 * The sample: a generated ITCH day (day profile, or the one named by the
 * second argument, e.g. hostile; seed 1; the first argument's order
 * messages, default 200,000; the third argument's symbols, default the
 * profile's), decoded whole into memory, then
 *   phase_decode       feed engine: packets -> events
 *   phase_venue_books  builder thread 1's apply (prefetch hints included)
 *   phase_super_book   builder thread 2's apply and publish (a publish per
 *                      256 events, as thread 2 at most defers on a backlog
 *                      of one symbol a batch)
 * and the counts each phase divides by are printed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book/builder.h"
#include "book/superbook.h"
#include "book/venue_book.h"
#include "input/capture.h"
#include "gen/gen_flow.h"
#include "gen/gen_itch.h"
#include "feed/feed.h"
#include "../unit/test_util.h"

#define ITCH_IP 0xe9360c6fu
#define ITCH_PORT 26477
#define PUBLISH_EVERY 256u

static struct feed_engine engine;
static struct capture cap;
static struct wb_ring_producer prod;
static struct wb_event *events;
static struct book_update *updates;
static uint64_t n_events, n_updates;
static int line;

static int gen_sink(void *ctx, uint64_t ts, uint32_t ip, uint16_t port, const uint8_t *payload,
		    uint32_t len)
{
	(void)ip;
	(void)port;
	return capture_add(ctx, payload, len, ts);
}

static int generate(uint64_t messages, enum gen_profile profile, uint32_t symbols)
{
	struct gen_flow_config fc = { .profile = profile, .seed = 1, .messages = messages, .symbols = symbols };
	static struct gen_itch gi;
	static struct gen_flow flow;
	struct gen_itch_config ic;
	struct gen_action a;

	capture_init(&cap, CAPTURE_PAYLOADS, "generated");
	if (gen_flow_init(&flow, &fc) < 0)
		return -1;
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.session, "CALLGRIND1", 10);
	ic.a_ip = ITCH_IP;
	ic.a_port = ITCH_PORT;
	ic.sink.packet = gen_sink;
	ic.sink.ctx = &cap;
	gen_itch_init(&gi, &ic);
	while (gen_flow_next(&flow, &a) == 1)
		gen_itch_action(&gi, &flow, &a);
	gen_itch_finish(&gi, flow.ts);
	gen_flow_destroy(&flow);
	return 0;
}

__attribute__((noinline)) void phase_decode(void);
__attribute__((noinline)) void phase_venue_books(struct venue_books *vb);
__attribute__((noinline)) void phase_super_book(struct superbook *sb);

void phase_decode(void)
{
	capture_replay(&cap, 0, cap.count, line, &engine, &prod);
}

/* The books write each event's updates straight after the last one's. */
static struct book_update *keep_updates(void *ctx, const struct wb_event *ev, struct book_update *u, unsigned k)
{
	(void)ctx;
	(void)ev;
	n_updates += k;
	return u + k;
}

void phase_venue_books(struct venue_books *vb)
{
	for (uint64_t i = 0; i < n_events; i += PUBLISH_EVERY) {
		uint64_t n = n_events - i < PUBLISH_EVERY ? n_events - i : PUBLISH_EVERY;

		venue_books_apply_batch(vb, events, UINT64_MAX, i, n, n_events - i, &updates[n_updates], keep_updates,
					NULL);
		updates[n_updates++] = (struct book_update){ .kind = BOOK_UP_BATCH_END };
	}
}

void phase_super_book(struct superbook *sb)
{
	superbook_apply_run(sb, updates, n_updates);
	superbook_publish(sb);
}

int main(int argc, char **argv)
{
	struct feed_engine_config ecfg = { .alloc = test_zalloc, .free = free };
	struct venue_books_config vc = { .numa_node = -1 };
	struct superbook_config sc = { .numa_node = -1 };
	uint64_t messages = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000, slots = 1024, level_updates;
	int profile = argc > 2 ? gen_profile_parse(argv[2]) : GEN_PROFILE_DAY;
	uint32_t symbols = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
	struct venue_books *vb;
	struct superbook *sb;
	void *ring;
	char name[64];
	int err;

	if (profile < 0) {
		fprintf(stderr, "callgrind_sample: unknown profile '%s'\n", argv[2]);
		return 2;
	}
	if (feed_engine_init(&engine, &ecfg) < 0 ||
	    (line = feed_map_add(&engine, ITCH_IP, ITCH_PORT, FEED_PROTO_ITCH50, WB_VENUE_NASDAQ, "A")) < 0 ||
	    feed_subscribe(&engine, "*", 1) < 0 || generate(messages, (enum gen_profile)profile, symbols) < 0) {
		fprintf(stderr, "callgrind_sample: setup failed\n");
		return 1;
	}
	while (slots < 2 * messages + 4 * cap.count)
		slots *= 2;
	ring = aligned_alloc(WB_RING_PAGE, wb_ring_bytes((uint32_t)slots));
	if (!ring)
		return 1;
	memset(ring, 0, wb_ring_bytes((uint32_t)slots));
	wb_ring_format(ring, (uint32_t)slots, 1);
	wb_ring_producer_init(&prod, ring);

	phase_decode();
	events = (struct wb_event *)((char *)ring + WB_RING_SLOTS_OFFSET);
	n_events = prod.head;
	updates = aligned_alloc(64, (n_events * BOOK_MAX_UPDATES_PER_EVENT + n_events / PUBLISH_EVERY + 1) *
					    sizeof(*updates));
	vb = venue_books_create(&vc);
	snprintf(name, sizeof(name), "wb-callgrind-%d", (int)getpid());
	sc.shm_name = name;
	sb = superbook_create(&sc, &err);
	if (!updates || !vb || !sb || prod.dropped) {
		fprintf(stderr, "callgrind_sample: setup failed\n");
		return 1;
	}
	phase_venue_books(vb);
	phase_super_book(sb);
	level_updates = superbook_counters(sb)->levels;
	printf("sample: messages %" PRIu64 " events %" PRIu64 " updates %" PRIu64 " level_updates %" PRIu64
	       " publishes %" PRIu64 " live_orders %" PRIu64 "\n",
	       engine.lines[line].counters.messages, n_events, n_updates, level_updates,
	       superbook_counters(sb)->publishes, venue_books_counters(vb)->live_orders);
	superbook_destroy(sb);
	venue_books_destroy(vb);
	free(updates);
	free(ring);
	capture_free(&cap);
	feed_engine_destroy(&engine);
	return 0;
}
