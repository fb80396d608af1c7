/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The Cboe US equities Multicast PITCH groups, as the exchange's own
 * Wireshark dissector names them (BATS/bats-dissectors, packet-mcastpitch.c,
 * its table of mcpitch.<dc>.u<lo>.u<hi>.<rt|gap>.<market><shape> names; see
 * docs/specs/cboe-pitch-notes.md): each realtime or gap-response group of
 * BZX, BYX, EDGX and EDGA carries four matching units. wb-dump --auto names
 * an unmapped PITCH group's venue from it, and the units it carries.
 */
#ifndef WIREBOOK_TOOLS_CBOE_GROUPS_H
#define WIREBOOK_TOOLS_CBOE_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The venue (enum wb_venue) of group ip (host byte order), and the first of
 * the four units it carries (1, 5, ..., 29); false for a group the table
 * lacks (another plan, an options market, a rewritten address).
 */
bool cboe_group_lookup(uint32_t ip, int *venue, int *first_unit);

#endif /* WIREBOOK_TOOLS_CBOE_GROUPS_H */
