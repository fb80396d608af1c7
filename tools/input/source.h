/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Packet sources for the user-space producer: each one reads its input
 * and runs it through the feed engine into an event ring. A source is a
 * small table of operations, so a new one (the kernel module's rings, a
 * socket per group, ...) plugs in without touching the daemon:
 *
 *   pcap        a capture file, as fast as possible or at recorded pace x speed
 *   itch-file   a Nasdaq BinaryFILE (plain or gzip), framed as MoldUDP64
 *               packets of the ITCH line of feeds.conf
 *   afpacket    live capture on an AF_PACKET TPACKET_V2 ring: spins a
 *               moment after traffic, then blocks in poll() (or busy polls)
 *
 * pump() decodes up to a budget of packets and commits their events to
 * the ring; the caller publishes. It is called from one thread only.
 */
#ifndef WIREBOOK_TOOLS_SOURCE_H
#define WIREBOOK_TOOLS_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "feed/feed.h"
#include "input/unmapped.h"

/* pump() results; the values match enum builder_pump. */
enum source_status {
	SOURCE_MORE = 0,	/* progress made (or pacing): call again */
	SOURCE_IDLE = 1,	/* nothing to read right now */
	SOURCE_EOF = 2,		/* input ended */
	SOURCE_ERROR = 3,	/* input failed: message in source.err */
	SOURCE_WAITED = 4,	/* nothing to read, after blocking in the kernel
				 * for it: call again at once, no nap on top */
};

struct nats_client_config;

struct source_options {
	const char *path;	/* pcap, itch-file */
	const char *iface;	/* afpacket */
	double speed;		/* pcap: 0 = as fast as possible, X = recorded pace times X */
	uint64_t skip_idle_ns;	/* pcap with speed: capture-time gaps longer than this are
				 * replayed as this long (0: the recorded pace throughout) */
	int busy_poll;		/* afpacket: spin on the ring, SO_BUSY_POLL on the socket */
	int line;		/* itch-file: feed line index the messages belong to */
	int date[3];		/* itch-file: the trading day (--date: year, month, day);
				 * 0s: from the file's name, if Nasdaq's (MMDDYYYY) */
	const struct feed_engine *engine; /* afpacket: multicast groups to join */
	int no_flush_at_eof;	/* pcap: leave holes open at the end (a recovery client
				 * may still fill them); the caller flushes the engine */
	const struct nats_client_config *nats;	/* nats (tools/net/nats_source.h) */
	int nats_exit_at_end;	/* nats: end at the publisher's END, once all of it came */
};

struct source_counters {
	uint64_t packets;	/* frames or packets read */
	uint64_t bytes;
	uint64_t unmapped;	/* frames to no feeds.conf line: ignored */
	uint64_t truncated;	/* frames cut short by the capture (snaplen) */
	uint64_t kernel_drops;	/* afpacket: the kernel's ring drops */
};

struct source;

struct source_ops {
	const char *name;
	int (*open)(struct source *s, const struct source_options *opt);
	int (*pump)(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		    unsigned budget);
	void (*close)(struct source *s);
};

struct source {
	const struct source_ops *ops;
	void *priv;
	struct source_counters ctr;
	struct unmapped_seen unmapped;	/* where the unmapped frames went */
	/* How recv_ts was made when the input keeps no receive times (a
	 * BinaryFILE), for a tool to record beside its output; NULL: the
	 * receive clock, or the capture's record times. */
	const char *recv_ts_note;
	char err[512];
};

extern const struct source_ops source_pcap_ops;
extern const struct source_ops source_itch_file_ops;
extern const struct source_ops source_afpacket_ops;

/* 0, or -1 with s->err saying what is wrong; SOURCE_EUSAGE when the input
 * is of another kind than the source's (a pcap given as a BinaryFILE): a
 * usage error, s->err names the option to give it with. */
#define SOURCE_EUSAGE (-2)
int source_open(struct source *s, const struct source_ops *ops, const struct source_options *opt);
static inline int source_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
			      unsigned budget)
{
	return s->ops->pump(s, e, out, budget);
}
void source_close(struct source *s);

/* The first line of feed map entries with (protocol, venue), or -1. */
int source_find_line(const struct feed_engine *e, int protocol, int venue);

#endif /* WIREBOOK_TOOLS_SOURCE_H */
