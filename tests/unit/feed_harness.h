/*
 * Test harness shared by the decoder tests: an engine with one ring, a way
 * to feed payloads or pcap files through it, and the events that came out.
 */
#ifndef WIREBOOK_TEST_FEED_HARNESS_H
#define WIREBOOK_TEST_FEED_HARNESS_H

#include <check.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"
#include "wire/bytes.h"
#include "wire/moldudp64.h"
#include "test_util.h"

#define HARNESS_RING_SLOTS 4096u
#define HARNESS_MAX_EVENTS 100000u

struct harness {
	struct feed_engine *engine;
	void *ring_mem;
	struct wb_ring_producer prod;
	struct wb_ring_consumer cons;
	struct wb_event *events;	/* everything drained so far */
	size_t n;
};

static inline void harness_init(struct harness *h, uint32_t ring_slots)
{
	struct feed_engine_config cfg = { .alloc = test_zalloc, .free = free };

	memset(h, 0, sizeof(*h));
	h->engine = calloc(1, sizeof(*h->engine));
	ck_assert_ptr_nonnull(h->engine);
	ck_assert_int_eq(feed_engine_init(h->engine, &cfg), 0);
	h->ring_mem = aligned_alloc(4096, (wb_ring_bytes(ring_slots) + 4095) & ~(size_t)4095);
	ck_assert_ptr_nonnull(h->ring_mem);
	memset(h->ring_mem, 0, wb_ring_bytes(ring_slots));
	wb_ring_format(h->ring_mem, ring_slots, 1);
	wb_ring_producer_init(&h->prod, h->ring_mem);
	wb_ring_consumer_init(&h->cons, h->ring_mem);
	h->events = calloc(HARNESS_MAX_EVENTS, sizeof(*h->events));
	ck_assert_ptr_nonnull(h->events);
}

static inline void harness_free(struct harness *h)
{
	feed_engine_destroy(h->engine);
	free(h->engine);
	free(h->ring_mem);
	free(h->events);
}

/* Publish what the decoder committed and move it into h->events. */
static inline void harness_drain(struct harness *h)
{
	uint64_t i, n;

	wb_ring_producer_publish(&h->prod);
	n = wb_ring_consumer_available(&h->cons);
	for (i = 0; i < n && h->n < HARNESS_MAX_EVENTS; i++)
		h->events[h->n++] = *wb_ring_consumer_at(&h->cons, i);
	wb_ring_consumer_release(&h->cons, n);
}

static inline void harness_payload(struct harness *h, int line, const void *p, size_t len)
{
	feed_process_payload(h->engine, line, p, (uint32_t)len, 42, &h->prod);
	harness_drain(h);
}

/* Feed every frame of a pcap; returns the number of frames. */
static inline int harness_pcap(struct harness *h, const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const u_char *data;
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	int frames = 0;

	ck_assert_msg(pc != NULL, "%s: %s", path, err);
	while (pcap_next_ex(pc, &hdr, &data) == 1) {
		uint64_t ts = (uint64_t)hdr->ts.tv_sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec;

		feed_process_frame(h->engine, data, hdr->caplen, ts, &h->prod);
		harness_drain(h);
		frames++;
	}
	pcap_close(pc);
	return frames;
}

/* The first drained event of a kind at or after index from, or NULL. */
static inline const struct wb_event *harness_find(const struct harness *h, int kind, size_t from)
{
	size_t i;

	for (i = from; i < h->n; i++)
		if (h->events[i].kind == kind)
			return &h->events[i];
	return NULL;
}

static inline size_t harness_count(const struct harness *h, int kind)
{
	size_t i, c = 0;

	for (i = 0; i < h->n; i++)
		c += h->events[i].kind == kind;
	return c;
}

static inline uint32_t ipv4(int a, int b, int c, int d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | (uint32_t)d;
}

/* A datagram being built, message by message. */
#define HARNESS_PACKET_MAX 1472
struct packet {
	uint8_t b[HARNESS_PACKET_MAX];
	size_t len;
};

/* A MoldUDP64 header (session, sequence, count); messages follow. */
static inline void mold_header(struct packet *p, const char *session, uint64_t seq, uint16_t count)
{
	memcpy(p->b + MOLD_SESSION, session, MOLD_SESSION_LEN);
	wire_put_be64(p->b + MOLD_SEQUENCE, seq);
	wire_put_be16(p->b + MOLD_COUNT, count);
	p->len = MOLD_HEADER_LEN;
}

/* Room for one MoldUDP64 message block of len bytes, zeroed, after its length. */
static inline uint8_t *mold_message(struct packet *p, uint16_t len)
{
	uint8_t *m = p->b + p->len + MOLD_BLOCK_LENGTH_LEN;

	wire_put_be16(p->b + p->len, len);
	memset(m, 0, len);
	p->len += MOLD_BLOCK_LENGTH_LEN + len;
	return m;
}

static inline void put_text(uint8_t *p, const char *s, int width)
{
	int i, n = (int)strlen(s);

	for (i = 0; i < width; i++)
		p[i] = (uint8_t)(i < n ? s[i] : ' ');
}

/* Hex digits (spaces ignored) into bytes, for golden vectors; returns the length. */
static inline size_t harness_unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (*hex == ' ')
			continue;
		v = *hex <= '9' ? *hex - '0' : (*hex | 0x20) - 'a' + 10;
		ck_assert_msg(v >= 0 && v < 16, "bad hex digit '%c'", *hex);
		if (hi < 0) {
			hi = v;
		} else {
			ck_assert_uint_lt(n, max);
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	ck_assert_int_lt(hi, 0);
	return n;
}

#endif
