/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The raw view's lookups by protocol id (raw.h): every wire field of a
 * message, for wb-dump --raw and the tests.
 * User space only (lib/feedtext: never built into the module); what the
 * module also needs (feed_venue_name, feed_error_name) stays in engine.c.
 */
#include "feed/feed_internal.h"

int feed_raw_frame(int protocol, const uint8_t *p, uint32_t len, struct feed_frame *f)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto ? proto->frame(p, len, f) : FEED_FRAME_ERROR(FEED_ERR_BAD_FRAME);
}

int feed_raw_next(int protocol, const uint8_t *p, uint32_t len, uint32_t *off,
		  const uint8_t **msg, uint32_t *mlen)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto ? proto->next_message(p, len, off, msg, mlen) : -1;
}

const struct feed_msg_layout *feed_raw_layout(int protocol, const uint8_t *msg, uint32_t len)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto ? proto->layout(msg, len) : 0;
}

int feed_raw_parts(int protocol, const uint8_t *msg, uint32_t len, struct feed_raw_part *parts,
		   int max)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto && proto->parts ? proto->parts(msg, len, parts, max) : 0;
}

uint32_t feed_raw_type(int protocol, const uint8_t *msg, uint32_t len)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	if (!proto || len < (uint32_t)proto->type_offset + proto->type_width)
		return 0;
	if (proto->type_width == 1)
		return msg[proto->type_offset];
	return proto->big_endian ? wire_be16(msg + proto->type_offset) :
		wire_le16(msg + proto->type_offset);
}

bool feed_raw_looks_like(int protocol, const uint8_t *p, uint32_t len)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto && proto->looks_like && proto->looks_like(p, len);
}

bool feed_raw_big_endian(int protocol)
{
	const struct feed_proto *proto = feed_protocol_get(protocol);

	return proto && proto->big_endian;
}
