/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Wire integers at any alignment, read and written: the one set every
 * layer uses (decoders, generators, recovery clients and servers, tests).
 * Freestanding: compiled into the kernel module as into user space.
 * Reads are not bounds-checked here: a caller checks a message's length
 * once against its fixed layout, then reads fields at constant offsets.
 */
#ifndef WIREBOOK_WIRE_BYTES_H
#define WIREBOOK_WIRE_BYTES_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

static inline uint16_t wire_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t wire_be32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

/* The low 48 bits (ITCH timestamps). */
static inline uint64_t wire_be48(const uint8_t *p)
{
	return (uint64_t)wire_be16(p) << 32 | wire_be32(p + 2);
}

static inline uint64_t wire_be64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline uint16_t wire_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t wire_le32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

static inline uint64_t wire_le64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline void wire_put_be16(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wire_put_be32(uint8_t *p, uint64_t v)
{
	wire_put_be16(p, v >> 16);
	wire_put_be16(p + 2, v);
}

/* The low 48 bits (ITCH timestamps). */
static inline void wire_put_be48(uint8_t *p, uint64_t v)
{
	wire_put_be16(p, v >> 32);
	wire_put_be32(p + 2, v);
}

static inline void wire_put_be64(uint8_t *p, uint64_t v)
{
	wire_put_be32(p, v >> 32);
	wire_put_be32(p + 4, v);
}

static inline void wire_put_le16(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void wire_put_le32(uint8_t *p, uint64_t v)
{
	wire_put_le16(p, v);
	wire_put_le16(p + 2, v >> 16);
}

static inline void wire_put_le64(uint8_t *p, uint64_t v)
{
	wire_put_le32(p, v);
	wire_put_le32(p + 4, v >> 32);
}

#endif /* WIREBOOK_WIRE_BYTES_H */
