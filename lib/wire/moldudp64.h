/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * MoldUDP64 1.00 (Nasdaq): the downstream packet and its message blocks,
 * which carry ITCH 5.0 and UQDF. Big-endian. Facts and sources:
 * docs/specs/itch50-notes.md. The re-request uses the header's layout.
 */
#ifndef WIREBOOK_WIRE_MOLDUDP64_H
#define WIREBOOK_WIRE_MOLDUDP64_H

/* Packet header: offsets */
#define MOLD_SESSION 0		/* ASCII, MOLD_SESSION_LEN bytes */
#define MOLD_SEQUENCE 10	/* u64: the first message's sequence number */
#define MOLD_COUNT 18		/* u16: message blocks that follow */
#define MOLD_SESSION_LEN 10
#define MOLD_HEADER_LEN 20

/* Message Count values that are not a count of blocks */
#define MOLD_HEARTBEAT 0
#define MOLD_END_OF_SESSION 0xffff

/* A message block: a u16 length (not counting itself), then the message. */
#define MOLD_BLOCK_LENGTH_LEN 2

#endif /* WIREBOOK_WIRE_MOLDUDP64_H */
