/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * MoldUDP64 framing, shared by the protocols that ride on it (ITCH 5.0,
 * UQDF): the header and message blocks as wire/moldudp64.h lays them out.
 * Count 0 is a heartbeat and 0xFFFF the end of the session, both carrying
 * the next sequence number.
 */
#ifndef WIREBOOK_FEED_MOLDUDP64_H
#define WIREBOOK_FEED_MOLDUDP64_H

#include "feed_internal.h"
#include "wire/moldudp64.h"

static inline int mold_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	uint16_t count;

	if (len < MOLD_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	/* Every field is set: this runs for every packet. */
	f->seq = wire_be64(p + MOLD_SEQUENCE);
	count = wire_be16(p + MOLD_COUNT);
	f->count = count;
	f->offset = MOLD_HEADER_LEN;
	f->length = len;
	f->kind = FEED_FRAME_DATA;
	f->unit = 0;
	f->has_session = true;
	f->session = wire_le64(p + MOLD_SESSION);
	f->session_tail = wire_le16(p + MOLD_SESSION + 8);
	f->reset_token = 0;
	if (wb_likely(count - 1u < MOLD_END_OF_SESSION - 1u)) {
		if (wb_likely(f->seq))
			return 0;
		/* Sessions number their messages from 1: 0 is no sequence at all. */
		f->kind = FEED_FRAME_UNSEQUENCED;
		return FEED_FRAME_ERROR(FEED_ERR_BAD_FIELD);
	}
	f->kind = count ? FEED_FRAME_END : FEED_FRAME_HEARTBEAT;
	f->count = 0;
	return 0;
}

/*
 * A packet of snapshot messages (GLIMPSE's or the UTP Snap-Shot's, packed
 * by the recovery client into MoldUDP64 blocks): any sequence, at least
 * one message.
 */
static inline int mold_snapshot_frame(const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	uint16_t count;

	if (len < MOLD_HEADER_LEN)
		return FEED_FRAME_ERROR(FEED_ERR_TRUNCATED);
	count = wire_be16(p + MOLD_COUNT);
	if (count == MOLD_HEARTBEAT || count == MOLD_END_OF_SESSION)
		return FEED_FRAME_ERROR(FEED_ERR_BAD_COUNT);
	__builtin_memset(f, 0, sizeof(*f));
	f->seq = wire_be64(p + MOLD_SEQUENCE);
	f->count = count;
	f->offset = MOLD_HEADER_LEN;
	f->length = len;
	f->kind = FEED_FRAME_DATA;
	return 0;
}

/* The message block at *off: 0 with *msg and *mlen, -1 when it runs past len. */
static inline int mold_next(const uint8_t *p, uint32_t len, uint32_t *off, const uint8_t **msg,
			    uint32_t *mlen)
{
	uint32_t n;

	if (*off + MOLD_BLOCK_LENGTH_LEN > len)
		return -1;
	n = wire_be16(p + *off);
	if (n > len - *off - MOLD_BLOCK_LENGTH_LEN)
		return -1;
	*msg = p + *off + MOLD_BLOCK_LENGTH_LEN;
	*mlen = n;
	*off += MOLD_BLOCK_LENGTH_LEN + n;
	return 0;
}

/* A MoldUDP64 packet whose header is printable and whose blocks exactly fill it. */
static inline bool mold_looks_like(const uint8_t *p, uint32_t len)
{
	struct feed_frame f;
	const uint8_t *m;
	uint32_t off = MOLD_HEADER_LEN, mlen, i;

	if (mold_frame(p, len, &f) < 0)
		return false;
	for (i = 0; i < MOLD_SESSION_LEN; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	for (i = 0; i < f.count; i++)
		if (mold_next(p, len, &off, &m, &mlen) < 0)
			return false;
	return off == len;
}

#endif /* WIREBOOK_FEED_MOLDUDP64_H */
