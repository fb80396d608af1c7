/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * SoupBinTCP 4.0 packets, the GLIMPSE 5.0 End of Snapshot and the UTP
 * Snap-Shot message, as the snapshot client (recovery_snapshot.c) and
 * wb-recoveryd's snapshot servers (sim/glimpse_server.c,
 * sim/utpsnap_server.c) put them on the wire and read them back. The wire
 * facts (types, widths, offsets) are lib/wire/soupbintcp.h, glimpse.h and
 * utpsnap.h; here the encoders and decoders.
 */
#ifndef WIREBOOK_RECOVERY_SOUPBIN_H
#define WIREBOOK_RECOVERY_SOUPBIN_H

#include <stddef.h>
#include <stdint.h>

#include "wire/glimpse.h"
#include "wire/soupbintcp.h"
#include "wire/utpsnap.h"

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

/* The Snap-Shot message's sequence (UQDF's next to process); -1 if not one. */
int utp_snapshot_end(const uint8_t *m, size_t len, uint64_t *next_seq);
/* A Snap-Shot message into out (UTP_SNAPSHOT_LEN bytes) with the SIP time sip_ns. */
size_t utp_put_snapshot_end(uint8_t *out, uint64_t next_seq, uint64_t sip_ns);

#endif /* WIREBOOK_RECOVERY_SOUPBIN_H */
