/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd's UTP Snap-Shot: the UQDF SIP state after message S (see utpsnap_server.h). */
#include "sim/utpsnap_server.h"

#include <stdlib.h>
#include <string.h>

#include "wire/bytes.h"
#include "recovery/soupbin.h"

/* UQDF (docs/specs/cqs-uqdf-notes.md, "UQDF types"). */
#define UQDF_HEADER 29
#define UQDF_QF_LEN 79
#define SYMBOL_LEN 11

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
	char symbol[SYMBOL_LEN + 1];
};

struct keys {
	struct key *slot;
	size_t mask;
};

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

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
		    !memcmp(s->symbol, want->symbol, SYMBOL_LEN))
			return false;
	}
}

/* A quote of the four forms the engine decodes: its symbol's offset and width, else 0. */
static int quote_form(const uint8_t *m, uint16_t len, bool *is_long)
{
	if (len < UQDF_HEADER || m[1] != 'Q')
		return 0;
	*is_long = m[2] == 'F' || m[2] == 'D';
	if ((m[2] == 'E' && len >= 48) || (m[2] == 'C' && len >= 52))
		return 5;
	if ((m[2] == 'F' && len >= 79) || (m[2] == 'D' && len >= 83))
		return SYMBOL_LEN;
	return 0;
}

/* Which of the kinds above the message is (as a mask), with its key; 0: not restated. */
static uint8_t classify(const uint8_t *m, uint16_t len, struct key *k, struct key *quote_key)
{
	bool is_long = false;
	int width;

	memset(k, 0, sizeof(*k));
	memset(k->symbol, ' ', SYMBOL_LEN);
	if (len < UQDF_HEADER || m[0] != '1')
		return 0;
	k->type = m[2];
	if (m[1] == 'C')
		return m[2] == 'P' ? 0 : (k->what = KEEP_CONTROL);
	if (m[1] == 'A') {
		if (m[2] == 'C' || m[2] == 'D')
			return k->what = KEEP_MARKET;
		if (len < UQDF_HEADER + SYMBOL_LEN + 1)
			return 0;
		memcpy(k->symbol, m + UQDF_HEADER, SYMBOL_LEN);
		if (m[2] == 'B' && len >= 90)
			return k->what = KEEP_DIRECTORY;
		if ((m[2] == 'V' && len >= 41) || (m[2] == 'H' && len >= 59) ||
		    (m[2] == 'P' && len >= 65) || (m[2] == 'E' && len >= 69))
			return k->what = KEEP_STATE;
		if (m[2] == 'K' && len >= 50) {
			k->centre = m[49];
			return k->what = KEEP_STATE;
		}
		return 0;
	}
	width = quote_form(m, len, &is_long);
	if (!width)
		return 0;
	memcpy(k->symbol, m + (is_long ? 37 : 29), (size_t)width);
	*quote_key = *k;
	quote_key->what = KEEP_QUOTE;
	quote_key->type = 'Q';
	quote_key->centre = m[3];
	k->what = KEEP_NBBO;
	k->type = 'N';
	return (uint8_t)(KEEP_QUOTE | (m[is_long ? 76 : 46] != '0' ? KEEP_NBBO : 0));
}

/*
 * A quote as a Quote Long Form (79) saying the NBBO is unchanged: the
 * snapshot's NBBO is the one its NBBO quote set. Short prices have 2
 * decimals, long 6; sizes are the same units in both forms.
 */
static void long_form(const uint8_t *m, uint8_t *out)
{
	bool is_long = m[2] == 'F' || m[2] == 'D';

	memcpy(out, m, UQDF_HEADER);
	out[2] = 'F';
	if (is_long) {
		memcpy(out + 29, m + 29, UQDF_QF_LEN - 29);
	} else {
		memset(out + 29, 0, 8);
		memset(out + 37, ' ', SYMBOL_LEN);
		memcpy(out + 37, m + 29, 5);
		wire_put_be64(out + 48, (uint64_t)get_be16(m + 34) * 10000);
		wire_put_be32(out + 56, get_be16(m + 36));
		wire_put_be64(out + 60, (uint64_t)get_be16(m + 38) * 10000);
		wire_put_be32(out + 68, get_be16(m + 40));
		memcpy(out + 72, m + 42, 6);	/* condition .. LULD NBBO indicator */
		out[78] = ' ';			/* not a FINRA quote */
	}
	out[76] = '0';
	if (out[78] == '2')
		out[78] = '0';	/* its ADF MPID appendage is not sent */
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
	if ((m = glimpse_source_message(src, at, &len)) && len >= UQDF_HEADER)
		for (int i = 0; i < 8; i++)
			sip_ns = sip_ns << 8 | m[5 + i];
	if (soup_snapshot_put(out, end, utp_put_snapshot_end(end, at + 1, sip_ns)))
		goto out;
	rc = 0;
out:
	free(keep);
	free(keys.slot);
	return rc;
}
