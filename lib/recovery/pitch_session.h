/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The TCP sessions of Cboe PITCH, the Gap Request Proxy and the Spin
 * server (docs/specs/cboe-pitch-notes.md, "Sessions";
 * docs/specs/cboe-grp-notes.md, docs/specs/cboe-spin-notes.md): each message in a Sequenced Unit Header
 * of unit 0 and sequence 0, as on multicast; a message is a length byte
 * that counts itself, a type, then its fields, little-endian.
 *
 * Encoders write whole frames (header and one message) and return their
 * length; the decoder takes frames off a byte stream. The wire facts
 * (types, lengths, offsets): lib/wire/cboe_session.h.
 */
#ifndef WIREBOOK_RECOVERY_PITCH_SESSION_H
#define WIREBOOK_RECOVERY_PITCH_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "wire/cboe_session.h"

/* One message (type, then blen bytes of fields) in its own frame; out has room for 10 + blen. */
size_t pitch_session_message(uint8_t *out, uint8_t type, const uint8_t *body, uint8_t blen);

/* Login (Session Sub-ID "0001", user up to 4, password up to 10, space-padded): 30 bytes. */
size_t pitch_session_login(uint8_t *out, const char *user, const char *password);

/* Spin Image Available, Spin Request or Spin Finished for seq: 14 bytes. */
size_t spin_seq_message(uint8_t *out, uint8_t type, uint32_t seq);

/* Spin Response: 19 bytes. status 'A' accepted, 'O' out of range, 'S' spin in progress. */
size_t spin_response(uint8_t *out, uint32_t seq, uint32_t order_count, char status);

/* A 8-byte heartbeat (count 0): 8 bytes. */
size_t pitch_session_heartbeat(uint8_t *out);

/*
 * The frame at the start of p (len bytes): its length, 0 while it is not
 * all there, -1 when it cannot be a frame (a length below the header).
 */
long pitch_session_next(const uint8_t *p, size_t len);

/*
 * The message at *off of a frame (flen bytes): 1 and *msg, *mlen (the
 * message with its length byte), 0 at the frame's end, -1 when a length
 * byte runs past the frame or is below 2.
 */
int pitch_session_message_at(const uint8_t *f, size_t flen, size_t *off, const uint8_t **msg,
			     size_t *mlen);

/* The Sequence of a Spin Image Available, Request or Finished of that type: 0, or -1. */
int spin_seq_of(const uint8_t *m, size_t mlen, uint8_t type, uint32_t *seq);

/* A Spin Response's fields: 0, or -1 when m is not one. */
int spin_response_of(const uint8_t *m, size_t mlen, uint32_t *seq, uint32_t *order_count,
		     char *status);

#endif /* WIREBOOK_RECOVERY_PITCH_SESSION_H */
