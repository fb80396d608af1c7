/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * NYSE XDP gap recovery: the Pillar Request Server's messages (TCP) and
 * the retransmission channel's (UDP), and the client half of the
 * recovery.conf service "xdp" (recovery.c drives it like its other
 * services). Layouts and their sources: docs/specs/nyse-xdp-notes.md,
 * "Recovery" (cited below as "notes: Recovery"); what the spec leaves
 * open: docs/specs/nyse-xdp-recovery-notes.md.
 *
 * Everything is little-endian and framed like the feed: a 16-byte packet
 * header (PktSize, DeliveryFlag, NumberMsgs, SeqNum, SendTime, SendTimeNS)
 * and messages that start with MsgSize and MsgType; the messages' wire
 * facts are lib/wire/xdp_request.h. A request packet's SeqNum numbers the
 * client's requests on its session; the Request Response echoes it.
 */
#ifndef WIREBOOK_RECOVERY_RECOVERY_XDP_H
#define WIREBOOK_RECOVERY_RECOVERY_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "feed/feed.h"
#include "wire/xdp.h"
#include "wire/xdp_request.h"

struct recovery_target;

/* A Retransmission Request, a Refresh Request or a Heartbeat Response as read. */
struct xdp_request {
	uint16_t type;
	uint32_t begin, end;		/* retransmission: inclusive */
	uint32_t symbol_index;		/* refresh: 0 = all */
	char source_id[XDP_SOURCE_ID_LEN]; /* NUL padded */
	uint8_t product, channel;
};

/* A Request Response. */
struct xdp_response {
	uint32_t request_seq;		/* the SeqNum of the request's packet */
	uint32_t begin, end;
	char source_id[XDP_SOURCE_ID_LEN];
	uint8_t product, channel;
	uint8_t status;			/* enum xdp_status */
};

/* The Integrated Feed's ProductID of a venue (notes: Feed messages), 0 if it has none. */
uint8_t xdp_product_of_venue(int venue);

/* A packet header; send_ns: epoch ns of SendTime. */
void xdp_put_header(uint8_t *p, uint16_t size, uint8_t flag, uint8_t count, uint32_t seq,
		    uint64_t send_ns);

/* Whole packets (header + one message) into out; each returns its length. */
size_t xdp_encode_retrans_request(uint8_t *out, uint32_t request_seq, uint32_t begin,
				  uint32_t end, const char *source_id, uint8_t product,
				  uint8_t channel, uint64_t send_ns);
size_t xdp_encode_heartbeat_response(uint8_t *out, uint32_t request_seq, const char *source_id,
				     uint64_t send_ns);
size_t xdp_encode_request_response(uint8_t *out, uint32_t seq, const struct xdp_response *r,
				   uint64_t send_ns);
size_t xdp_encode_unavailable(uint8_t *out, uint32_t begin, uint32_t end, uint8_t product,
			      uint8_t channel, uint64_t send_ns);

/*
 * One message (MsgSize at 0) of a request packet: 0, or -1 when its type
 * is not a request or its size is not its type's (status 9).
 */
int xdp_parse_request(const uint8_t *m, uint32_t len, struct xdp_request *r);
/* One message of a Request Server packet: 0 for a Request Response, else -1. */
int xdp_parse_response(const uint8_t *m, uint32_t len, struct xdp_response *r);
/* A retransmission-channel packet that is a Message Unavailable: true, with its range. */
bool xdp_parse_unavailable(const uint8_t *p, uint32_t len, uint32_t *begin, uint32_t *end,
			   uint8_t *product, uint8_t *channel);

/* Text of a status (a refusal's reason). */
const char *xdp_status_text(uint8_t status);

/* ---- the client of one XDP stream (recovery.c's service "xdp") ------------- */

struct recovery_conf_entry;
struct xdp_client;

/*
 * recovery.conf keys only an xdp service takes: retrans=ADDR:PORT (where
 * the retransmitted packets arrive, bound; a multicast group is joined),
 * refresh=ADDR:PORT (the refresh channel, the same way; optional) and
 * user=SOURCEID (up to 10 characters). 1: taken into en; 0: not such a
 * key; -1 with why.
 */
int xdp_conf_key(struct recovery_conf_entry *en, const char *tok, char *why, size_t whylen);

/* Its session and retransmission socket; NULL with err. */
struct xdp_client *xdp_client_create(const struct recovery_conf_entry *en, char *err,
				     size_t errlen);
void xdp_client_destroy(struct xdp_client *x);

/*
 * Ask for [first, first + count) (count at most XDP_MAX_RETRANS). True
 * when it went out now; without a session it goes when one is up.
 */
bool xdp_client_request(struct xdp_client *x, uint64_t first, uint64_t count, uint64_t now);
/* The request in flight is answered or given up: nothing waits for a session. */
void xdp_client_forget(struct xdp_client *x);

#define XDP_PUMP_LOST 1		/* a range was declared lost (refused, unavailable) */
#define XDP_PUMP_SENT 2		/* a waiting request went out on a new session */

/*
 * Late join by Refresh (refresh= given): a stream whose hole starts at the
 * session's first sequence and is larger than one request takes the
 * channel's refresh instead: the engine's snapshot begins (books cleared,
 * real time buffered), a Refresh Request goes out, the refresh packets are
 * applied as they come and, at the refresh's last packet, the stream
 * resumes after the lowest LastSeqNum (feed_snapshot_end); later messages
 * a symbol's refresh covers are skipped by the decoder. A refresh packet
 * missing (its SeqNum skips) or a refresh not complete within the
 * service's timeout begins it again, up to retries times; then, or when
 * the request is refused, the snapshot is abandoned (its range lost).
 */
bool xdp_client_refresh_wanted(const struct xdp_client *x, const struct feed_recovery_stream *rs);
void xdp_client_refresh_begin(struct xdp_client *x, const struct recovery_target *t, int line, uint64_t now,
			      uint64_t recv_ts, struct wb_ring_producer *out);

/*
 * Connect (with backoff), read the Request Server (responses, heartbeats,
 * answered at once), and when recovering take the retransmitted packets
 * to the engine (line: a line of the stream, valid when has_line). Never
 * blocks. Returns XDP_PUMP_* bits.
 */
int xdp_client_pump(struct xdp_client *x, const struct recovery_target *t, int line, bool has_line,
		    bool recovering, uint64_t now, uint64_t recv_ts, struct wb_ring_producer *out);

struct xdp_client_counts {
	uint64_t replies;		/* retransmitted packets taken */
	uint64_t refused;		/* requests refused (every status but 0) */
	uint64_t unavailable;		/* Message Unavailable ranges */
	uint64_t connects, disconnects, heartbeats;
	uint64_t refreshes, refresh_packets, refresh_restarts;	/* refreshes applied whole */
	bool up;
};
void xdp_client_counts(const struct xdp_client *x, struct xdp_client_counts *c);
/* "; refused N (status ...), unavailable N; session up, connects N, ..." for the stats line. */
void xdp_client_print(const struct xdp_client *x, FILE *f);

#endif /* WIREBOOK_RECOVERY_RECOVERY_XDP_H */
