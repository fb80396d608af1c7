/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The Cboe Multicast PITCH encoder of the generator: turns the gen_flow
 * actions of one Cboe venue (BZX, BYX, EDGX or EDGA) into PITCH 2.x
 * messages in Sequenced Unit Header packets on one unit, with Time
 * messages, heartbeats, Unit Clear at the start and End of Session at the
 * end, and the packet faults a receiver must survive (loss, duplicates,
 * A/B copies). The encoder interface is described in gen_flow.h.
 *
 * What the flow says and what PITCH says differ in two places:
 *  - PITCH has no replace. A replace becomes a Modify of the original
 *    order id (Display, no Maintain Priority: it goes to the back of the
 *    queue, as a replace does); the flow's new id is kept as an alias of
 *    the wire id for the rest of the order's life.
 *  - PITCH has no directory or system events (skipped); Auction Summary is
 *    sent on BZX and BYX only.
 *
 * So that a Super-Book built from several venues looks real, prices are
 * shaded per (venue, symbol): on each side a venue sits at the flow's
 * touch or one or two ticks behind it, so the NBBO is built from different
 * venues on the bid and the ask. And now and then the encoder adds a
 * short-lived order of its own one tick through the touch (a locked market
 * against the other venues) or two (crossed), and deletes it a few
 * messages later; only where the venue's other side sits far enough
 * behind, so the venue's own book never locks or crosses.
 */
#ifndef WIREBOOK_TOOLS_GEN_PITCH_H
#define WIREBOOK_TOOLS_GEN_PITCH_H

#include "gen/gen_flow.h"

#define GEN_PITCH_MAX_MESSAGE 48	/* longest message the encoder writes */
#define GEN_PITCH_DEFAULT_PAYLOAD 1400	/* bytes per packet, header included */
#define GEN_PITCH_PACKET_WINDOW_NS 50000 /* messages further apart start a new packet */
#define GEN_PITCH_HEARTBEAT_NS 1000000000ull
#define GEN_PITCH_MAX_HEARTBEATS 3	/* per idle stretch */
#define GEN_PITCH_FLASH_EVERY 150	/* adds between two locking/crossing orders, about */
#define GEN_PITCH_FLASH_LIFE 24		/* messages a locking/crossing order lives, about */
#define GEN_PITCH_MAX_FLASH 16

struct gen_pitch_config {
	uint8_t venue;			/* enum wb_venue: BZX, BYX, EDGX, EDGA */
	uint8_t unit;			/* matching unit, 1..255 (0: 1) */
	uint32_t a_ip, b_ip;		/* destination groups, host byte order */
	uint16_t a_port, b_port;
	bool ab;			/* send each packet on A and on B */
	bool no_flash;			/* no locking/crossing orders, no shading */
	uint32_t gap_every;		/* drop every Nth data packet (0: never) */
	uint32_t dup_every;		/* send every Nth data packet twice (0: never) */
	uint32_t max_payload;		/* 0: GEN_PITCH_DEFAULT_PAYLOAD */
	uint64_t midnight_ns;		/* epoch ns of the exchange day's midnight */
	uint64_t seed;			/* for the locking/crossing orders */
	struct gen_packet_sink sink;
	const struct gen_order_observer *observer; /* told of the locking/crossing orders */
};

struct gen_pitch_stats {
	uint64_t messages;		/* PITCH messages encoded (Time included) */
	uint64_t packets;		/* data packets made (before faults) */
	uint64_t packets_sent;		/* datagrams handed to the sink, all copies */
	uint64_t dropped_packets;
	uint64_t dropped_messages;
	uint64_t duplicated_packets;
	uint64_t heartbeats;
	uint64_t locking_orders;	/* flash orders one tick through the touch */
	uint64_t crossing_orders;	/* two ticks through */
	uint64_t by_type[256];		/* messages per PITCH type */
};

struct gen_pitch_flash {
	uint64_t id;
	int64_t price;
	uint32_t expires;		/* stats.messages at which it is deleted */
	uint32_t symbol;
	uint8_t side;
};

/* new flow order id -> wire order id, for replaced orders (open addressing) */
struct gen_pitch_alias {
	uint64_t flow_id;		/* 0: empty */
	uint64_t wire_id;
};

struct gen_pitch {
	struct gen_pitch_config cfg;
	uint8_t pkt[65536];
	uint32_t len;			/* bytes in pkt, header included */
	uint32_t count;			/* messages in pkt */
	uint32_t pkt_seq;		/* sequence of the packet's first message */
	uint64_t pkt_first_ts, pkt_last_ts;
	uint32_t next_seq;		/* sequence of the next message */
	uint32_t time_sec;		/* last Time message sent */
	bool time_sent;
	bool started;			/* Unit Clear sent */
	uint64_t last_sent_ts;
	bool sent_any;
	int error;			/* sticky: the sink or memory failed */

	struct gen_rng rng;
	uint64_t next_flash_id;
	uint32_t adds_until_flash;
	struct gen_pitch_flash flash[GEN_PITCH_MAX_FLASH];
	uint32_t flash_count;

	struct gen_pitch_alias *alias;
	uint64_t alias_mask, alias_count;

	struct gen_pitch_stats stats;
};

/* Returns 0, or -1 when memory runs out. */
int gen_pitch_init(struct gen_pitch *g, const struct gen_pitch_config *cfg);
void gen_pitch_destroy(struct gen_pitch *g);

/* Encode one action of cfg.venue (others are ignored); 0 or -1 (output failed). */
int gen_pitch_action(struct gen_pitch *g, const struct gen_flow *flow, const struct gen_action *a);

/* Delete the flash orders, flush, send End of Session at exchange time ts. */
int gen_pitch_finish(struct gen_pitch *g, uint64_t ts);

/* Venue shading (see above): ticks a venue sits behind the flow's touch. */
uint32_t gen_pitch_shade(uint8_t venue, uint32_t symbol, uint8_t side);

#endif /* WIREBOOK_TOOLS_GEN_PITCH_H */
