/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-recoveryd's UTP Snap-Shot service (--service utpsnap): the SIP state
 * of a UQDF channel after its message S, for glimpse_serve()'s SoupBinTCP
 * side (login, refusals, heartbeats, hang-up and stall are the same).
 *
 * In UQDF formats, as the Snap-Shot service replays them: the last
 * control message of each kind (not Quote Wipe-Out: the quotes after it
 * say what it left), the last MWCB decline level and status, every Issue
 * Symbol Directory, each symbol's last Reg SHO, Cross-SRO and Market
 * Center Trading Action (per market centre), LULD band and auction
 * collar, then per symbol the quote that last set its NBBO (as published:
 * the NBBO, its indicator and appendage are the SIP's) and the latest
 * quote of each market centre as a Quote Long Form with NBBO '0'
 * (unchanged), then the Snap-Shot message naming S + 1. Odd-lot quotes,
 * BOLO and FINRA ADF MPID quotes are left out (the engine keeps none).
 */
#ifndef WIREBOOK_SIM_UTPSNAP_SERVER_H
#define WIREBOOK_SIM_UTPSNAP_SERVER_H

#include "sim/glimpse_server.h"

int utpsnap_build(const struct glimpse_source *src, uint64_t at, struct soup_snapshot *out,
		  uint64_t *symbols);

#endif /* WIREBOOK_SIM_UTPSNAP_SERVER_H */
