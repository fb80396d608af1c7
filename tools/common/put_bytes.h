/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Writing wire integers at any alignment: the generators, the recovery
 * server and client build exchange messages with these (the decoders read
 * with lib/feed's feed_be16 and friends).
 */
#ifndef WIREBOOK_TOOLS_PUT_BYTES_H
#define WIREBOOK_TOOLS_PUT_BYTES_H

#include <stdint.h>

static inline void put_be16(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint64_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

/* The low 48 bits (ITCH timestamps). */
static inline void put_be48(uint8_t *p, uint64_t v)
{
	put_be16(p, v >> 32);
	put_be32(p + 2, v);
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static inline void put_le16(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint64_t v)
{
	put_le16(p, v);
	put_le16(p + 2, v >> 16);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

#endif /* WIREBOOK_TOOLS_PUT_BYTES_H */
