/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The Cboe PITCH TCP sessions: the Gap Request Proxy (GRP) and the Spin
 * server, wire facts only (../shared/specs/cboe-pitch.md section 4,
 * docs/specs/cboe-grp-notes.md, docs/specs/cboe-spin-notes.md).
 *
 * Each message travels in a Sequenced Unit Header, as on multicast (unit 0
 * and sequence 0 on a session); a message is a length byte that counts
 * itself, a type, then its fields, little-endian. Offsets below are from
 * the start of the frame (header) or of the message (its length byte).
 */
#ifndef WIREBOOK_WIRE_CBOE_SESSION_H
#define WIREBOOK_WIRE_CBOE_SESSION_H

/* The frame is a Sequenced Unit Header and a message is the feed's (length byte, type):
 * their offsets are lib/wire/pitch.h's. */
#include "wire/pitch.h"

/* The largest frame either side sends: a 16-bit length. */
#define PITCH_SESSION_MAX_FRAME 65535
/* Either side sends a heartbeat (a frame with no message) after this long without sending. */
#define PITCH_SESSION_HEARTBEAT_MS 1000

/* Login (GRP and Spin): Session Sub-ID, username, filler, password; alpha, space-padded. */
#define PITCH_LOGIN 0x01
#define PITCH_LOGIN_LEN 22
#define PITCH_LOGIN_SUB_ID_OFF 2
#define PITCH_LOGIN_SUB_ID_LEN 4
#define PITCH_LOGIN_USER_OFF 6
#define PITCH_LOGIN_USER_LEN 4
#define PITCH_LOGIN_FILLER_OFF 10
#define PITCH_LOGIN_FILLER_LEN 2
#define PITCH_LOGIN_PASSWORD_OFF 12
#define PITCH_LOGIN_PASSWORD_LEN 10

/* Login Response: 'A' accepted, else refused (the session is closed). */
#define PITCH_LOGIN_RESPONSE 0x02
#define PITCH_LOGIN_RESPONSE_LEN 3
#define PITCH_LOGIN_RESPONSE_STATUS_OFF 2

/* ---- the Gap Request Proxy ------------------------------------------------- */
/* Gap Request: unit, first sequence (u32), count (u16). */
#define GRP_GAP_REQUEST 0x03
#define GRP_GAP_REQUEST_LEN 9
#define GRP_GAP_UNIT_OFF 2		/* Gap Request and Gap Response alike */
#define GRP_GAP_SEQ_OFF 3
#define GRP_GAP_COUNT_OFF 7
#define GRP_MAX_COUNT 65535		/* a count is 16 bits */
/* Gap Response: the request's unit, sequence and count, and a status byte. */
#define GRP_GAP_RESPONSE 0x04
#define GRP_GAP_RESPONSE_LEN 10
#define GRP_GAP_RESPONSE_STATUS_OFF 9

/* ---- the Spin server ------------------------------------------------------- */
#define SPIN_IMAGE_AVAILABLE 0x80
#define SPIN_REQUEST 0x81
#define SPIN_RESPONSE 0x82
#define SPIN_FINISHED 0x83
/* Image Available, Request, Finished: length, type, Sequence (u32). */
#define SPIN_SEQ_LEN 6
#define SPIN_SEQ_OFF 2
/* Spin Response: Sequence, Order Count (u32 each), status 'A', 'O' or 'S'. */
#define SPIN_RESPONSE_LEN 11
#define SPIN_RESPONSE_SEQ_OFF 2
#define SPIN_RESPONSE_ORDERS_OFF 6
#define SPIN_RESPONSE_STATUS_OFF 10

#endif /* WIREBOOK_WIRE_CBOE_SESSION_H */
