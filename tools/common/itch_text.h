/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A raw ITCH 5.0 message as one line of text, for wb-dump --raw: every
 * field of the wire message, as Nasdaq names it, with no normalization.
 * This is a printer for people, not the decoder (that is lib/feed/itch50.c).
 *
 *   <seq> <time> <type> locate=<n> track=<n> <fields...>
 *   14757721 09:29:59.999894278 A locate=5528 track=0 ref=23508286 B 1600 IVOO @ 87.39
 */
#ifndef WIREBOOK_TOOLS_ITCH_TEXT_H
#define WIREBOOK_TOOLS_ITCH_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Format message m (len bytes, sequence seq) into buf; returns the line length. */
size_t itch_message_format(const uint8_t *m, uint32_t len, uint64_t seq, char *buf, size_t n);

/* The Stock field of message m if its type has one (8 bytes, space padded), else NULL. */
const uint8_t *itch_message_stock(const uint8_t *m, uint32_t len);

/* Wire length of ITCH type t, or 0 if t is not an ITCH 5.0 type. */
uint32_t itch_message_length(uint8_t type);

#endif /* WIREBOOK_TOOLS_ITCH_TEXT_H */
