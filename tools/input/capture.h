/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A whole input held in memory, packet by packet, for replays that must
 * not time the disk or the decompressor: benchmarks, and any tool that
 * runs the same input through the feed engine more than once.
 *
 * Inputs, told apart by their first bytes (not their names):
 *   pcap (classic or pcapng)  Ethernet frames, replayed through
 *                             feed_process_frame() and the feed map
 *   Nasdaq BinaryFILE         plain or gzip; the messages are framed as
 *                             MoldUDP64 packets (as wirebookd --itch-file
 *                             does) and replayed through
 *                             feed_process_payload() on one ITCH line
 * or filled by the caller with capture_add_payload() (a generator).
 *
 * Receive times: a pcap keeps its record times; BinaryFILE and generated
 * packets get a deterministic clock (capture_load: 1 us a packet), so two
 * replays of one input produce identical events.
 */
#ifndef WIREBOOK_TOOLS_CAPTURE_H
#define WIREBOOK_TOOLS_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "feed/feed.h"

#define CAPTURE_ERR_LEN 512

enum capture_kind {
	CAPTURE_FRAMES = 0,	/* Ethernet frames: feed_process_frame */
	CAPTURE_PAYLOADS = 1,	/* UDP payloads of one line: feed_process_payload */
};

struct capture_packet {
	uint64_t offset;	/* into capture.bytes */
	uint64_t recv_ts;
	uint32_t len;
};

struct capture {
	enum capture_kind kind;
	const char *format;	/* "pcap", "itch-file", "itch-file.gz", or the caller's */
	uint8_t *bytes;
	uint64_t size, bytes_cap;
	struct capture_packet *packets;
	uint64_t count, packets_cap;
	uint64_t file_messages;	/* BinaryFILE: messages read (pcap: 0, unknown) */
};

/*
 * Load path whole. ITCH BinaryFILE messages go to the payloads of line
 * itch_line (an 'itch' line of the engine's feed map; -1 refuses such
 * files). 0, or -1 with a sentence in err.
 */
int capture_load(struct capture *c, const char *path, int itch_line, char *err, size_t err_len);

/* An empty capture of the given kind, for capture_add_payload. */
void capture_init(struct capture *c, enum capture_kind kind, const char *format);

/* Append one packet (a frame or a payload, per c->kind). 0, or -1 out of memory. */
int capture_add(struct capture *c, const uint8_t *data, uint32_t len, uint64_t recv_ts);

/*
 * Packets [first, last) through the engine into out: events committed, not
 * published. Returns how many packets went to a mapped line.
 */
uint64_t capture_replay(const struct capture *c, uint64_t first, uint64_t last, int line,
			struct feed_engine *e, struct wb_ring_producer *out);

void capture_free(struct capture *c);

#endif /* WIREBOOK_TOOLS_CAPTURE_H */
