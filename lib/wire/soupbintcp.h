/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * SoupBinTCP 4.0, the session layer of Nasdaq's TCP services (GLIMPSE,
 * the UTP Snap-Shot): wire facts only. Sources and what the spec leaves
 * open: docs/specs/soupbintcp-glimpse-notes.md.
 *
 * A packet: a 2-byte big-endian length (of what follows it), a type byte,
 * the payload. Alpha fields are left-justified and space-padded; numeric
 * fields are ASCII digits, right-justified and space-padded on the left.
 */
#ifndef WIREBOOK_WIRE_SOUPBINTCP_H
#define WIREBOOK_WIRE_SOUPBINTCP_H

/* The packet header: the length (of type and payload), then the type. */
#define SOUP_LENGTH_OFF 0
#define SOUP_TYPE_OFF 2
#define SOUP_HEADER 3		/* length and type: the payload starts here */

/* Packet types. */
#define SOUP_LOGIN_REQUEST 'L'
#define SOUP_LOGIN_ACCEPTED 'A'
#define SOUP_LOGIN_REJECTED 'J'
#define SOUP_SEQUENCED_DATA 'S'
#define SOUP_UNSEQUENCED_DATA 'U'
#define SOUP_SERVER_HEARTBEAT 'H'
#define SOUP_CLIENT_HEARTBEAT 'R'
#define SOUP_END_OF_SESSION 'Z'
#define SOUP_LOGOUT_REQUEST 'O'
#define SOUP_DEBUG '+'

/* Field widths. */
#define SOUP_USER_LEN 6
#define SOUP_PASSWORD_LEN 10
#define SOUP_SESSION_LEN 10
#define SOUP_SEQUENCE_LEN 20

/* Type byte and payload of a Login Request: user, password, session, sequence. */
#define SOUP_LOGIN_REQUEST_LEN (1 + SOUP_USER_LEN + SOUP_PASSWORD_LEN + SOUP_SESSION_LEN + \
				SOUP_SEQUENCE_LEN)
/* Type byte and payload of a Login Accepted: session, sequence. */
#define SOUP_LOGIN_ACCEPTED_LEN (1 + SOUP_SESSION_LEN + SOUP_SEQUENCE_LEN)
/* Type byte and the reject reason. */
#define SOUP_LOGIN_REJECTED_LEN 2

/* Login Rejected reasons. */
#define SOUP_REJECT_NOT_AUTHORIZED 'A'
#define SOUP_REJECT_SESSION_UNAVAILABLE 'S'

/* Either side sends a heartbeat after this long without sending. */
#define SOUP_HEARTBEAT_PERIOD_MS 1000

#endif /* WIREBOOK_WIRE_SOUPBINTCP_H */
