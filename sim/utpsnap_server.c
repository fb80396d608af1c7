/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd's UTP Snap-Shot: the UQDF SIP state after message S (see utpsnap_server.h). */
#include "sim/utpsnap_server.h"

#include <stdlib.h>
#include <string.h>

#include "wire/bytes.h"
#include "wire/uqdf.h"
#include "recovery/soupbin.h"

#define SHORT_TO_LONG_PRICE 10000	/* a short form's 2 decimals to the long form's 6 */

/* What a message restates, in the order the snapshot sends them. */
enum {
	KEEP_CONTROL = 1 << 0,		/* C I/J/O/C/Z: the last of each */
	KEEP_MARKET = 1 << 1,		/* A C, A D: MWCB level and status */
	KEEP_DIRECTORY = 1 << 2,	/* A B per symbol */
	KEEP_STATE = 1 << 3,		/* A V, A H, A P, A E per symbol; A K per symbol and centre */
	KEEP_NBBO = 1 << 4,		/* the quote that last set the symbol's NBBO */
	KEEP_QUOTE = 1 << 5,		/* the latest quote of each centre in each symbol */
};
static const uint8_t send_order[] = { KEEP_CONTROL, KEEP_MARKET, KEEP_DIRECTORY, KEEP_STATE,
				      KEEP_NBBO, KEEP_QUOTE };

struct key {
	uint8_t what, type, centre, used;
	char symbol[UQDF_SYMBOL_LEN + 1];
};

struct keys {
	struct key *slot;
	size_t mask;
};

/* true the first time the key is seen (walking back from S: the latest). */
static bool first_seen(struct keys *k, const struct key *want)
{
	const uint8_t *b = (const uint8_t *)want;
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < sizeof(*want); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	for (i = h & k->mask;; i = (i + 1) & k->mask) {
		struct key *s = &k->slot[i];

		if (!s->used) {
			*s = *want;
			s->used = 1;
			return true;
		}
		if (s->what == want->what && s->type == want->type && s->centre == want->centre &&
		    !memcmp(s->symbol, want->symbol, UQDF_SYMBOL_LEN))
			return false;
	}
}

/* A quote of the four forms the engine decodes: its symbol's offset and width, else 0. */
static int quote_form(const uint8_t *m, uint16_t len, bool *is_long)
{
	uint8_t type;

	if (len < UQDF_HEADER_LEN || m[UQDF_CATEGORY] != 'Q')
		return 0;
	type = m[UQDF_TYPE];
	*is_long = type == 'F' || type == 'D';
	if ((type == 'E' && len >= UQDF_QE_LEN) || (type == 'C' && len >= UQDF_QC_LEN))
		return UQDF_SHORT_SYMBOL_LEN;
	if ((type == 'F' && len >= UQDF_QF_LEN) || (type == 'D' && len >= UQDF_QD_LEN))
		return UQDF_SYMBOL_LEN;
	return 0;
}

/* Which of the kinds above the message is (as a mask), with its key; 0: not restated. */
static uint8_t classify(const uint8_t *m, uint16_t len, struct key *k, struct key *quote_key)
{
	bool is_long = false;
	uint8_t type;
	int width;

	memset(k, 0, sizeof(*k));
	memset(k->symbol, ' ', UQDF_SYMBOL_LEN);
	if (len < UQDF_HEADER_LEN || m[UQDF_VERSION_BYTE] != UQDF_VERSION)
		return 0;
	type = k->type = m[UQDF_TYPE];
	if (m[UQDF_CATEGORY] == 'C')
		return type == 'P' ? 0 : (k->what = KEEP_CONTROL);
	if (m[UQDF_CATEGORY] == 'A') {
		if (type == 'C' || type == 'D')
			return k->what = KEEP_MARKET;
		if (len < UQDF_ADMIN_SYMBOL + UQDF_SYMBOL_LEN + 1)
			return 0;
		memcpy(k->symbol, m + UQDF_ADMIN_SYMBOL, UQDF_SYMBOL_LEN);
		if (type == 'B' && len >= UQDF_AB_LEN)
			return k->what = KEEP_DIRECTORY;
		if ((type == 'V' && len >= UQDF_AV_LEN) || (type == 'H' && len >= UQDF_AH_LEN) ||
		    (type == 'P' && len >= UQDF_AP_LEN) || (type == 'E' && len >= UQDF_AE_LEN))
			return k->what = KEEP_STATE;
		if (type == 'K' && len >= UQDF_AK_LEN) {
			k->centre = m[UQDF_AK_MARKET_CENTER];
			return k->what = KEEP_STATE;
		}
		return 0;
	}
	width = quote_form(m, len, &is_long);
	if (!width)
		return 0;
	memcpy(k->symbol, m + (is_long ? UQDF_QF_SYMBOL : UQDF_QE_SYMBOL), (size_t)width);
	*quote_key = *k;
	quote_key->what = KEEP_QUOTE;
	quote_key->type = 'Q';
	quote_key->centre = m[UQDF_ORIGINATOR];
	k->what = KEEP_NBBO;
	k->type = 'N';
	return (uint8_t)(KEEP_QUOTE |
			 (m[is_long ? UQDF_QF_NBBO : UQDF_QE_NBBO] != '0' ? KEEP_NBBO : 0));
}

/*
 * A quote as a Quote Long Form saying the NBBO is unchanged: the
 * snapshot's NBBO is the one its NBBO quote set. Short prices have 2
 * decimals, long 6; sizes are the same units in both forms.
 */
static void long_form(const uint8_t *m, uint8_t *out)
{
	bool is_long = m[UQDF_TYPE] == 'F' || m[UQDF_TYPE] == 'D';

	memcpy(out, m, UQDF_HEADER_LEN);
	out[UQDF_TYPE] = 'F';
	if (is_long) {
		memcpy(out + UQDF_HEADER_LEN, m + UQDF_HEADER_LEN, UQDF_QF_LEN - UQDF_HEADER_LEN);
	} else {
		memset(out + UQDF_QF_TIMESTAMP2, 0, 8);
		memset(out + UQDF_QF_SYMBOL, ' ', UQDF_SYMBOL_LEN);
		memcpy(out + UQDF_QF_SYMBOL, m + UQDF_QE_SYMBOL, UQDF_SHORT_SYMBOL_LEN);
		wire_put_be64(out + UQDF_QF_BID_PRICE,
			      (uint64_t)wire_be16(m + UQDF_QE_BID_PRICE) * SHORT_TO_LONG_PRICE);
		wire_put_be32(out + UQDF_QF_BID_SIZE, wire_be16(m + UQDF_QE_BID_SIZE));
		wire_put_be64(out + UQDF_QF_ASK_PRICE,
			      (uint64_t)wire_be16(m + UQDF_QE_ASK_PRICE) * SHORT_TO_LONG_PRICE);
		wire_put_be32(out + UQDF_QF_ASK_SIZE, wire_be16(m + UQDF_QE_ASK_SIZE));
		/* condition .. LULD NBBO indicator */
		memcpy(out + UQDF_QF_CONDITION, m + UQDF_QE_CONDITION,
		       UQDF_QE_NBBO_LULD + 1 - UQDF_QE_CONDITION);
		out[UQDF_QF_ADF_MPID] = ' ';	/* not a FINRA quote */
	}
	out[UQDF_QF_NBBO] = '0';
	if (out[UQDF_QF_ADF_MPID] == '2')
		out[UQDF_QF_ADF_MPID] = '0';	/* its ADF MPID appendage is not sent */
}

int utpsnap_build(const struct glimpse_source *src, uint64_t at, struct soup_snapshot *out,
		  uint64_t *symbols)
{
	struct keys keys = { 0 };
	uint8_t *keep = calloc(at + 1, 1);
	size_t cap = 1024;
	uint8_t end[UTP_SNAPSHOT_LEN], qf[UQDF_QF_LEN];
	uint64_t sip_ns = 0;
	uint16_t len;
	const uint8_t *m;
	int rc = -1;

	/* Two keys at most a message; the table at most half full. */
	while (cap < 4 * at)
		cap *= 2;
	keys.slot = calloc(cap, sizeof(*keys.slot));
	keys.mask = cap - 1;
	if (!keep || !keys.slot)
		goto out;
	*symbols = 0;
	for (uint64_t q = at; q >= 1; q--) {
		struct key k, quote_key;
		uint8_t kinds;

		if (!(m = glimpse_source_message(src, q, &len)))
			continue;
		kinds = classify(m, len, &k, &quote_key);
		if ((kinds & ~KEEP_QUOTE) && first_seen(&keys, &k))
			keep[q] |= kinds & ~KEEP_QUOTE;
		if ((kinds & KEEP_QUOTE) && first_seen(&keys, &quote_key))
			keep[q] |= KEEP_QUOTE;
		*symbols += (keep[q] & KEEP_DIRECTORY) != 0;
	}
	for (size_t g = 0; g < sizeof(send_order); g++)
		for (uint64_t q = 1; q <= at; q++) {
			if (!(keep[q] & send_order[g]) || !(m = glimpse_source_message(src, q, &len)))
				continue;
			if (send_order[g] == KEEP_QUOTE) {
				long_form(m, qf);
				m = qf;
				len = UQDF_QF_LEN;
			}
			if (soup_snapshot_put(out, m, len))
				goto out;
		}
	if ((m = glimpse_source_message(src, at, &len)) && len >= UQDF_HEADER_LEN)
		sip_ns = wire_be64(m + UQDF_SIP_TIME);
	if (soup_snapshot_put(out, end, utp_put_snapshot_end(end, at + 1, sip_ns)))
		goto out;
	rc = 0;
out:
	free(keep);
	free(keys.slot);
	return rc;
}
