/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Nasdaq GLIMPSE 5.0 over SoupBinTCP: the snapshot is ordinary ITCH 5.0
 * messages in Sequenced Data packets, ended by this message
 * (docs/specs/soupbintcp-glimpse-notes.md). Wire facts only.
 */
#ifndef WIREBOOK_WIRE_GLIMPSE_H
#define WIREBOOK_WIRE_GLIMPSE_H

#include "wire/soupbintcp.h"

/* End of Snapshot: the type, then the ITCH sequence to resume from (numeric). */
#define GLIMPSE_END_OF_SNAPSHOT 'G'
#define GLIMPSE_END_OF_SNAPSHOT_SEQ_OFF 1
#define GLIMPSE_END_OF_SNAPSHOT_LEN (1 + SOUP_SEQUENCE_LEN)

#endif /* WIREBOOK_WIRE_GLIMPSE_H */
