/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The NYSE Integrated Feed (XDP/Pillar) encoder of the generator: turns the
 * gen_flow actions of one NYSE group venue (nyse, arca, american, national,
 * texas) into Pillar 2.5 messages in XDP packets, spread over the venue's
 * channels, each with its own sequence numbers and A/B lines. The encoder
 * interface is described in gen_flow.h; the layouts are those of
 * lib/feed/xdp.c (docs/specs/nyse-xdp-notes.md, with their sources; "notes:"
 * below cites its sections).
 *
 * What a day holds, as the feed publishes it:
 *  - each channel opens with a Sequence Number Reset (SeqNum 1, its own
 *    packet, DeliveryFlag 12), then the start-of-day spin: Symbol Index
 *    Mapping, Symbol Clear and Security Status 'P' for every symbol of the
 *    channel (the flow's directory actions);
 *  - a Source Time Reference at the start of every second a channel
 *    publishes in; order messages carry only their nanoseconds;
 *  - prices at each symbol's PriceScaleCode: 6 below $500, 4 from $500, so
 *    both scales run side by side;
 *  - adds, modifies (the flow's partial cancels: the remaining volume at
 *    the same price), replaces, executions, deletes, non-displayed trades,
 *    the opening and closing cross prints;
 *  - session changes: early ('E') with the flow's trading actions, core
 *    ('O') at the open, late ('L') at the end of market hours, and the
 *    closing 'X' for every symbol at the end of the late session (its
 *    orders go without Delete messages);
 *  - a regulatory halt ('4') and resume ('5') of one symbol mid-day;
 *  - a mid-day failover on the venue's last channel: a Sequence Number
 *    Reset (DeliveryFlag 10), then for each symbol of the channel its
 *    mapping, a Symbol Clear, its last Security Status and an Add Order
 *    Refresh for each live order, then the last Source Time Reference;
 *    the channel's sequence starts over at 1;
 *  - heartbeats (DeliveryFlag 1) on a channel idle for a second, a few
 *    per idle stretch (as the ITCH and PITCH encoders do).
 *
 * Channels come from the feed map (gen_encoder_config.map): each channel=N
 * of the venue with a line A (and B); symbols are dealt to the channels by
 * their index. Without such lines, GEN_XDP_DEFAULT_CHANNELS channels on
 * consecutive groups after the configured A and B.
 *
 * Output is in time order: before a packet (or heartbeat) of time T is
 * written, every channel's pending packet of time <= T is.
 */
#ifndef WIREBOOK_TOOLS_GEN_XDP_H
#define WIREBOOK_TOOLS_GEN_XDP_H

#include "gen/gen_flow.h"

#define GEN_XDP_MAX_CHANNELS 16
#define GEN_XDP_DEFAULT_CHANNELS 3
#define GEN_XDP_DEFAULT_PAYLOAD 1400	/* the spec's largest packet */
#define GEN_XDP_PACKET_WINDOW_NS 50000	/* messages further apart start a new packet */
#define GEN_XDP_HEARTBEAT_NS 1000000000ull
#define GEN_XDP_MAX_HEARTBEATS 3	/* per idle stretch, so a quiet hour stays small (as ITCH) */
#define GEN_XDP_MAX_MESSAGE 46		/* Security Status, the longest written */
#define GEN_XDP_HALT_PERMILLE 450	/* of the day's order flow: the halt... */
#define GEN_XDP_RESUME_PERMILLE 470	/* ...and the resume */
#define GEN_XDP_FAILOVER_PERMILLE 600	/* the mid-day sequence reset and refresh */

struct gen_xdp_line {
	uint32_t ip;			/* host byte order */
	uint16_t port;
};

struct gen_xdp_channel {
	uint16_t channel;		/* the feed map's channel= (0: none) */
	uint8_t system_id;		/* its matching-engine partition: the time reference ID */
	struct gen_xdp_line a, b;
	bool has_b;
	uint8_t pkt[2048];
	uint32_t len;			/* bytes in pkt, header included */
	uint32_t count;			/* messages in pkt */
	uint8_t flag;			/* DeliveryFlag of the packet being filled */
	uint32_t pkt_seq;
	uint64_t pkt_first_ts, pkt_last_ts;
	uint32_t next_seq;
	uint32_t ref_sec;		/* second of the last Source Time Reference */
	bool ref_sent;
	bool started;			/* Sequence Number Reset sent */
	bool sent_any;
	uint32_t idle_heartbeats;	/* sent since the channel's last data packet */
	uint64_t last_sent_ts;
	uint64_t packets;		/* data packets made, for gap/dup faults */
};

struct gen_xdp_stats {
	uint64_t messages;
	uint64_t packets;		/* data packets made (before faults) */
	uint64_t packets_sent;		/* datagrams handed to the sink, all copies */
	uint64_t dropped_packets;
	uint64_t dropped_messages;
	uint64_t duplicated_packets;
	uint64_t heartbeats;
	uint64_t resets;		/* Sequence Number Resets, start of day and failover */
	uint64_t refreshed_orders;	/* Add Order Refresh in the failover */
	uint64_t scale4, scale6;	/* symbols mapped at each PriceScaleCode */
	uint64_t by_type[256];
};

struct gen_xdp {
	uint8_t venue;
	uint8_t product;		/* ProductID of the venue's Integrated Feed */
	uint16_t market;		/* Market ID of the mappings */
	bool ab;
	uint32_t gap_every, dup_every, max_payload;
	uint64_t midnight_ns;
	struct gen_packet_sink sink;
	struct gen_xdp_channel ch[GEN_XDP_MAX_CHANNELS];
	uint32_t nch;
	uint32_t *symbol_seq;		/* per flow symbol: its SymbolSeqNum */
	uint8_t *session;		/* per flow symbol: its session code ('P', 'E', 'O', ...) */
	uint32_t halt_symbol;
	int halt_stage;			/* 0 before, 1 halted, 2 resumed */
	bool failover_done;
	int error;			/* sticky: the sink or memory failed */
	struct gen_xdp_stats stats;
};

/* The venue's channel of a flow symbol. */
static inline uint32_t gen_xdp_channel_of(const struct gen_xdp *g, uint32_t symbol)
{
	return symbol % g->nch;
}

/* The SymbolIndex of a flow symbol: the same on every NYSE market (notes: Control messages, type 3). */
static inline uint32_t gen_xdp_symbol_index(uint32_t symbol)
{
	return symbol + 1;
}

#endif /* WIREBOOK_TOOLS_GEN_XDP_H */
