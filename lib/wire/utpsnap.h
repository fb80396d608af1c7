/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The UTP Snap-Shot service over SoupBinTCP: a UQDF channel's state as
 * ordinary UQDF messages, ended by the Snap-Shot message: a UQDF message
 * (its 29-byte header: version '1', category, type, originator 'E') whose
 * body is the UQDF sequence to resume from, u64 big-endian. The category,
 * type and width are UNCONFIRMED (the spec's layout was not found
 * publicly): docs/specs/utp-snapshot-notes.md. Wire facts only.
 */
#ifndef WIREBOOK_WIRE_UTPSNAP_H
#define WIREBOOK_WIRE_UTPSNAP_H

#include "wire/uqdf.h"

#define UTP_SNAPSHOT_VERSION UQDF_VERSION
#define UTP_SNAPSHOT_CATEGORY 'S'
#define UTP_SNAPSHOT_TYPE 'S'
#define UTP_SNAPSHOT_ORIGINATOR 'E'
/* The header's fields this message sets (offsets in the UQDF message header). */
#define UTP_SNAPSHOT_VERSION_OFF UQDF_VERSION_BYTE
#define UTP_SNAPSHOT_CATEGORY_OFF UQDF_CATEGORY
#define UTP_SNAPSHOT_TYPE_OFF UQDF_TYPE
#define UTP_SNAPSHOT_ORIGINATOR_OFF UQDF_ORIGINATOR
/* The body: the sequence to resume from, right after the UQDF header. */
#define UTP_SNAPSHOT_SEQ_OFF UQDF_HEADER_LEN
#define UTP_SNAPSHOT_LEN (UTP_SNAPSHOT_SEQ_OFF + 8)

#endif /* WIREBOOK_WIRE_UTPSNAP_H */
