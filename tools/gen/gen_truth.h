/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What wb-gen knows of the day it writes (wb-gen --truth FILE): the locked
 * and crossed episodes of the NBBO across the direct feeds, so a test can
 * check that wirebook finds each one (tests/tools/sip_compare.sh).
 *
 * A model of the direct books (gen_sip.h's, at the wire prices: Cboe
 * venues shaded) follows every flow action, and the orders an encoder adds
 * of its own (gen_pitch's short-lived locking and crossing orders, through
 * a gen_order_observer): after each, the NBB and NBO of the symbol across
 * the venues; an episode runs from the first change that makes NBB >= NBO
 * to the first that ends it, in exchange time. One that starts and ends at
 * the same time is none (a state between two messages of one instant).
 *
 * The file: '#' comment lines, then one line per episode:
 *   lock SYMBOL START_NS END_NS locked|crossed NBB NBO BID_VENUES ASK_VENUES
 * times in ns since the epoch (exchange time), prices in dollars, venues
 * comma separated (those bidding at or above the NBO, offering at or below
 * the NBB, over the whole episode); an episode still open at the end of
 * the day ends at END_NS 0.
 */
#ifndef WIREBOOK_TOOLS_GEN_TRUTH_H
#define WIREBOOK_TOOLS_GEN_TRUTH_H

#include <stdbool.h>
#include <stdio.h>

#include "gen/gen_flow.h"
#include "gen/gen_sip.h"

#define GEN_TRUTH_MAX_OWN 256	/* encoders' own orders alive at once */

struct gen_truth_own {
	uint64_t id;
	int64_t price;
	uint32_t symbol;
	uint8_t venue, side;
};

struct gen_truth_symbol {
	uint64_t start;		/* ns since midnight */
	int64_t bid, ask;	/* at the start */
	uint32_t bid_venues, ask_venues;
	bool open, crossed;
};

struct gen_truth {
	FILE *out;
	uint64_t midnight_ns;
	const struct gen_flow *flow;
	struct gen_sip_book book;
	struct gen_truth_symbol *sym;	/* [flow symbols] */
	struct gen_truth_own own[GEN_TRUTH_MAX_OWN];
	uint32_t own_count;
	uint64_t episodes, crossed, own_dropped;
	bool error;
	struct gen_order_observer observer;	/* hand to the encoders */
};

/* Opens path for writing; comment (may be NULL) goes in the header. 0 or -1. */
int gen_truth_open(struct gen_truth *t, const char *path, uint64_t midnight_ns, const char *comment);
/* A flow action, before the encoders get it. 0 or -1 (out of memory). */
int gen_truth_action(struct gen_truth *t, const struct gen_flow *flow, const struct gen_action *a);
/* A comment line for the file's end ("# " added). */
void gen_truth_note(struct gen_truth *t, const char *text);
/* Writes the episodes still open and closes the file: 0 or -1. */
int gen_truth_close(struct gen_truth *t);

#endif /* WIREBOOK_TOOLS_GEN_TRUTH_H */
