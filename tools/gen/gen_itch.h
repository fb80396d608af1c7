/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The ITCH 5.0 / MoldUDP64 encoder of the generator: turns gen_flow
 * actions of one venue into ITCH messages, packs them into MoldUDP64
 * packets (or writes them as a BinaryFILE) and injects the packet-level
 * faults a receiver must survive: lost packets, duplicates, A/B copies.
 * The encoder interface is described in gen_flow.h.
 */
#ifndef WIREBOOK_TOOLS_GEN_ITCH_H
#define WIREBOOK_TOOLS_GEN_ITCH_H

#include "gen/gen_flow.h"
#include "input/itch_file.h"

#define GEN_ITCH_MAX_MESSAGE 64		/* longest message the encoder writes */
#define GEN_ITCH_DEFAULT_PAYLOAD 1400	/* MoldUDP64 payload bytes per packet */
#define GEN_ITCH_PACKET_WINDOW_NS 50000	/* messages further apart start a new packet */
#define GEN_ITCH_HEARTBEAT_NS 1000000000ull
#define GEN_ITCH_MAX_HEARTBEATS 3	/* per idle stretch, so a quiet hour stays small */

struct gen_itch_config {
	char session[10];		/* MoldUDP64 session, ASCII */
	uint32_t a_ip, b_ip;		/* destination groups, host byte order */
	uint16_t a_port, b_port;
	bool ab;			/* send each packet on A and on B */
	uint32_t gap_every;		/* drop every Nth data packet (0: never) */
	uint32_t dup_every;		/* send every Nth data packet twice (0: never) */
	uint32_t max_payload;		/* 0: GEN_ITCH_DEFAULT_PAYLOAD */
	uint64_t midnight_ns;		/* epoch ns of the exchange day's midnight (pcap times) */
	struct gen_packet_sink sink;	/* where packets go (packet mode) */
	struct itch_file *file;		/* if set: write a BinaryFILE instead of packets */
};

struct gen_itch_stats {
	uint64_t messages;		/* ITCH messages encoded */
	uint64_t packets;		/* data packets made (before faults) */
	uint64_t packets_sent;		/* datagrams handed to the sink, all copies */
	uint64_t dropped_packets;	/* --gap-every */
	uint64_t dropped_messages;
	uint64_t duplicated_packets;	/* --dup-every */
	uint64_t heartbeats;
	uint64_t end_of_session;
	uint64_t by_type[128];		/* messages per ITCH type */
};

struct gen_itch {
	struct gen_itch_config cfg;
	uint8_t pkt[65536];
	uint32_t len;			/* bytes in pkt, header included */
	uint16_t count;			/* messages in pkt */
	uint64_t pkt_first_ts;		/* exchange time of its first message */
	uint64_t pkt_last_ts;
	uint64_t next_seq;		/* sequence number of the next message */
	uint64_t last_sent_ts;		/* exchange time of the last packet sent */
	bool sent_any;
	int error;			/* sticky: the sink or the file failed */
	struct gen_itch_stats stats;
};

void gen_itch_init(struct gen_itch *g, const struct gen_itch_config *cfg);

/* Encode one action; returns 0 or -1 (output failed). */
int gen_itch_action(struct gen_itch *g, const struct gen_flow *flow, const struct gen_action *a);

/* Flush and send the end-of-session packet at exchange time ts. */
int gen_itch_finish(struct gen_itch *g, uint64_t ts);

/*
 * One ITCH message for a into out (GEN_ITCH_MAX_MESSAGE bytes). Returns
 * its length, or 0 for an action ITCH has no message for.
 */
uint32_t gen_itch_encode(const struct gen_flow *flow, const struct gen_action *a, uint8_t *out);

#endif /* WIREBOOK_TOOLS_GEN_ITCH_H */
