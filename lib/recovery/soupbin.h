/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * SoupBinTCP 4.0 packets, the GLIMPSE 5.0 End of Snapshot and the UTP
 * Snap-Shot message, as the snapshot client (recovery_snapshot.c) and
 * wb-recoveryd's snapshot servers (glimpse_server.c, utpsnap_server.c) put
 * them on the wire and read them back. Field
 * widths and padding, with their sources: docs/specs/soupbintcp-glimpse-notes.md.
 *
 * A packet: a 2-byte big-endian length (of what follows it), a type byte,
 * the payload. Alpha fields are left-justified and space-padded; numeric
 * fields are ASCII digits, right-justified and space-padded on the left.
 */
#ifndef WIREBOOK_RECOVERY_SOUPBIN_H
#define WIREBOOK_RECOVERY_SOUPBIN_H

#include <stddef.h>
#include <stdint.h>

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

#define SOUP_USER_LEN 6
#define SOUP_PASSWORD_LEN 10
#define SOUP_SESSION_LEN 10
#define SOUP_SEQUENCE_LEN 20
/* Type byte and payload of a Login Request: user, password, session, sequence. */
#define SOUP_LOGIN_REQUEST_LEN (1 + SOUP_USER_LEN + SOUP_PASSWORD_LEN + SOUP_SESSION_LEN + \
				SOUP_SEQUENCE_LEN)
#define SOUP_LOGIN_ACCEPTED_LEN (1 + SOUP_SESSION_LEN + SOUP_SEQUENCE_LEN)
#define SOUP_LOGIN_REJECTED_LEN 2
#define SOUP_REJECT_NOT_AUTHORIZED 'A'
#define SOUP_REJECT_SESSION_UNAVAILABLE 'S'
#define SOUP_HEARTBEAT_PERIOD_MS 1000	/* either side, after this long without sending */

/* GLIMPSE 5.0: the message ending the snapshot (an ITCH-style message in Sequenced Data). */
#define GLIMPSE_END_OF_SNAPSHOT 'G'
#define GLIMPSE_END_OF_SNAPSHOT_LEN (1 + SOUP_SEQUENCE_LEN)

/* Space-padded copies of text into a fixed-width field (text longer is cut). */
void soup_put_alpha(uint8_t *field, size_t width, const char *text);
void soup_put_numeric(uint8_t *field, size_t width, uint64_t v);
/* A numeric field's value; -1 when it holds anything but spaces then digits. */
int soup_get_numeric(const uint8_t *field, size_t width, uint64_t *v);

/* A packet header for type with plen payload bytes at out (3 bytes); returns 3. */
size_t soup_put_header(uint8_t *out, uint8_t type, size_t plen);

/* A whole Login Request into out (2 + SOUP_LOGIN_REQUEST_LEN bytes); returns its length. */
size_t soup_login_request(uint8_t *out, const char *user, const char *password,
			  const char *session, uint64_t sequence);
size_t soup_login_accepted(uint8_t *out, const char *session, uint64_t sequence);
size_t soup_login_rejected(uint8_t *out, uint8_t reason);
/* A packet with no payload (heartbeats, End of Session, Logout Request). */
size_t soup_empty(uint8_t *out, uint8_t type);

/*
 * The packet at the start of buf: 0 while it is not all there, -1 when its
 * length cannot be (0: no type byte), else its whole length with *type,
 * *payload and *plen set.
 */
long soup_next(const uint8_t *buf, size_t len, uint8_t *type, const uint8_t **payload,
	       size_t *plen);

/* GLIMPSE's End of Snapshot, its sequence (ITCH's next to process); -1 if not one. */
int glimpse_end_of_snapshot(const uint8_t *m, size_t len, uint64_t *next_seq);
size_t glimpse_put_end_of_snapshot(uint8_t *out, uint64_t next_seq);

/*
 * The UTP Snap-Shot message that ends a UQDF snapshot: a UQDF message
 * (the 29-byte header, version '1', category 'S', type 'S', originator 'E')
 * whose body is the UQDF sequence to resume from, u64 big-endian at 29.
 * The category, type and width are UNCONFIRMED (the Snap-Shot spec's
 * layout was not found publicly): docs/specs/utp-snapshot-notes.md.
 */
#define UTP_SNAPSHOT_CATEGORY 'S'
#define UTP_SNAPSHOT_TYPE 'S'
#define UTP_SNAPSHOT_LEN (29 + 8)

/* The Snap-Shot message's sequence (UQDF's next to process); -1 if not one. */
int utp_snapshot_end(const uint8_t *m, size_t len, uint64_t *next_seq);
/* A Snap-Shot message into out (UTP_SNAPSHOT_LEN bytes) with the SIP time sip_ns. */
size_t utp_put_snapshot_end(uint8_t *out, uint64_t next_seq, uint64_t sip_ns);

#endif /* WIREBOOK_RECOVERY_SOUPBIN_H */
