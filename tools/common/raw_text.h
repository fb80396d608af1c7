/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A raw message as one line of text, for wb-dump --raw: every field of the
 * wire message as its spec names it, no normalization, for every protocol
 * of the protocol table (their layout tables, lib/feed/raw.h). This is a
 * printer for people, not the decoder.
 *
 *   <seq> <fields in the layout's order> <each trailing part's fields>
 *   14757721 09:29:59.999894278 A locate=5528 track=0 ref=23508286 B 1600 IVOO @ 87.39
 *
 * Trailing parts are those the message's indicators announce (a SIP
 * quote's NBBO appendage); bytes past them print as "(+N extra bytes)".
 */
#ifndef WIREBOOK_TOOLS_RAW_TEXT_H
#define WIREBOOK_TOOLS_RAW_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "feed/raw.h"

/* Format message m (len bytes, sequence seq) of protocol into buf; returns the line length. */
size_t raw_message_format(int protocol, const uint8_t *m, uint32_t len, uint64_t seq, char *buf,
			  size_t n);

/* The same without the sequence: " <fields>" (a heartbeat's message, wb-dump). */
size_t raw_fields_format(int protocol, const uint8_t *m, uint32_t len, char *buf, size_t n);

/* The message's symbol as a ticker key (feed_ticker_key), or 0 if it names
 * none; *symbol_key gets a feed symbol key (ITCH locate) when it has one. */
uint64_t raw_message_ticker(int protocol, const uint8_t *m, uint32_t len, uint32_t *symbol_key,
			    int *has_symbol_key);

#endif /* WIREBOOK_TOOLS_RAW_TEXT_H */
