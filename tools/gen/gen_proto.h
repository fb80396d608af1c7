/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-gen's encoders, one per protocol of the protocol table
 * (lib/feed/protocols.h): the generator entry of a protocol is
 * gen_proto_<stem>, defined next to its encoder (gen_<stem>.c). wb-gen
 * drives every venue's encoder through this interface alone.
 */
#ifndef WIREBOOK_TOOLS_GEN_PROTO_H
#define WIREBOOK_TOOLS_GEN_PROTO_H

#include <stdbool.h>
#include <stdio.h>

#include "gen/gen_flow.h"
#include "gen/gen_sip.h"
#include "input/itch_file.h"
#include "feed/feed.h"

struct gen_encoder_config {
	uint8_t venue;			/* enum wb_venue the encoder writes */
	uint32_t a_ip, b_ip;		/* destination groups, host byte order */
	uint16_t a_port, b_port;
	uint16_t channel;		/* the feed map's channel, for protocols that carry one */
	bool ab;			/* send each packet on A and on B */
	uint32_t gap_every;		/* drop every Nth data packet (0: never) */
	uint32_t dup_every;		/* send every Nth data packet twice (0: never) */
	uint32_t max_payload;		/* 0: the encoder's default */
	uint64_t midnight_ns;		/* epoch ns of the exchange day's midnight */
	uint64_t seed;
	char session[10];		/* MoldUDP64 session, for protocols on MoldUDP64 */
	struct gen_packet_sink sink;
	struct itch_file *file;		/* messages without transport (BinaryFILE), if writes_files */
	/* The feed map wb-gen read (may be empty): an encoder that spreads a
	 * venue over several channels (XDP) takes each channel's lines from it. */
	const struct feed_map_entry *map;
	int map_len;
	/* The SIP encoders' lag after the participant's time (NULL: the fixed
	 * GEN_SIP_LATENCY_NS). */
	const struct gen_lag *sip_lag;
	struct gen_lag_record *sip_lag_record;	/* the lags applied, NULL: not kept */
	/* Told of orders an encoder adds of its own (NULL: nobody). */
	const struct gen_order_observer *observer;
};

struct gen_proto {
	size_t size;			/* bytes of encoder state */
	bool writes_files;		/* can write a BinaryFILE (gen_encoder_config.file) */
	uint32_t min_payload;		/* smallest max_payload that holds its longest message */
	/* 0, or -1 (out of memory). */
	int (*init)(void *enc, const struct gen_encoder_config *cfg);
	/* Encode one action of the encoder's venue (others are ignored): 0 or -1. */
	int (*action)(void *enc, const struct gen_flow *flow, const struct gen_action *a);
	/* Flush and close the session at exchange time ts: 0 or -1. */
	int (*finish)(void *enc, uint64_t ts);
	/* Send what is buffered and stop without closing the session, as a
	 * capture that ends mid-session (wb-gen --until): 0 or -1. */
	int (*stop)(void *enc);
	void (*destroy)(void *enc);
	/* A few lines on what was written, for wb-gen's summary. */
	void (*summary)(const void *enc, const struct gen_flow *flow, FILE *out);
};

#define GEN_PROTO_DECLARE(id, stem) extern const struct gen_proto gen_proto_##stem;
FEED_PROTOCOLS(GEN_PROTO_DECLARE)
#undef GEN_PROTO_DECLARE

/* The encoder of a protocol id, or NULL. */
const struct gen_proto *gen_proto_get(int protocol);

#endif /* WIREBOOK_TOOLS_GEN_PROTO_H */
