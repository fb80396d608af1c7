/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The instrument cache, the same for every protocol.
 *
 * Each venue keeps a directory fed by its protocol's directory messages
 * (ITCH Stock Directory, XDP Symbol Index Mapping, ...): the feed's symbol
 * key -> ticker, round lot, price scale and the stream it is on. Next to
 * it a per-key instrument cache answers "does this message pass the
 * filter, and as which instrument" with one load. The cache is rebuilt,
 * off the per-message path, whenever the subscriptions change, so
 * subscribing before or after the directory both work. Keys below the
 * protocol's directory_keys live in flat arrays; larger ones in a small
 * open-addressing table.
 *
 * Announcements: an instrument is named on a venue (a SYMBOL event) before
 * its first event there: by its directory entry, or, for protocols that
 * carry the ticker in every message (PITCH), on first use.
 *
 * Late subscriptions: an instrument that starts passing the filter after
 * its venue's data began missed the messages before (its orders were
 * filtered): it gets a GAP of its own (reason WB_GAP_LATE_SUBSCRIBE) and
 * its venue book is incomplete until that stream is cleared or recovered.
 * Turning '*' on mid-session is one venue-wide such GAP.
 */
#include "feed_internal.h"

#define DEFAULT_ROUND_LOT 100

int feed_directory_init(struct feed_directory *d, uint32_t dense, const struct feed_engine_config *cfg)
{
	__builtin_memset(d, 0, sizeof(*d));
	if (!dense)
		return 0;
	d->dense = dense;
	d->instrument = cfg->alloc((size_t)dense * sizeof(*d->instrument));
	d->symbol = cfg->alloc((size_t)dense * sizeof(*d->symbol));
	d->overflow_key = cfg->alloc(FEED_DIR_OVERFLOW * sizeof(*d->overflow_key));
	d->overflow_instrument = cfg->alloc(FEED_DIR_OVERFLOW * sizeof(*d->overflow_instrument));
	d->overflow_symbol = cfg->alloc(FEED_DIR_OVERFLOW * sizeof(*d->overflow_symbol));
	if (!d->instrument || !d->symbol || !d->overflow_key || !d->overflow_instrument ||
	    !d->overflow_symbol) {
		feed_directory_free(d, cfg);
		return -FEED_ENOMEM;
	}
	return 0;
}

void feed_directory_free(struct feed_directory *d, const struct feed_engine_config *cfg)
{
	if (d->instrument)
		cfg->free(d->instrument);
	if (d->symbol)
		cfg->free(d->symbol);
	if (d->overflow_key)
		cfg->free(d->overflow_key);
	if (d->overflow_instrument)
		cfg->free(d->overflow_instrument);
	if (d->overflow_symbol)
		cfg->free(d->overflow_symbol);
	__builtin_memset(d, 0, sizeof(*d));
}

void feed_directory_clear(struct feed_directory *d)
{
	if (!d->dense)
		return;
	__builtin_memset(d->instrument, 0, (size_t)d->dense * sizeof(*d->instrument));
	__builtin_memset(d->symbol, 0, (size_t)d->dense * sizeof(*d->symbol));
	__builtin_memset(d->overflow_key, 0, FEED_DIR_OVERFLOW * sizeof(*d->overflow_key));
	__builtin_memset(d->overflow_instrument, 0,
			 FEED_DIR_OVERFLOW * sizeof(*d->overflow_instrument));
	__builtin_memset(d->overflow_symbol, 0, FEED_DIR_OVERFLOW * sizeof(*d->overflow_symbol));
	d->dense_end = 0;
	d->overflow_used = 0;
}

/* The overflow slot of key (inserted when insert), or -1. Keys there are >= dense > 0. */
static int overflow_slot(struct feed_directory *d, uint32_t key, bool insert)
{
	uint32_t h = (key * 0x9E3779B1u) >> 20 & (FEED_DIR_OVERFLOW - 1), n;

	if (!d->overflow_key)
		return -1;
	for (n = 0; n < FEED_DIR_OVERFLOW; n++, h = (h + 1) & (FEED_DIR_OVERFLOW - 1)) {
		if (d->overflow_key[h] == key)
			return (int)h;
		if (!d->overflow_key[h]) {
			/* Keep the table at most 3/4 full so misses stay short. */
			if (!insert || d->overflow_used >= FEED_DIR_OVERFLOW / 4 * 3)
				return -1;
			d->overflow_key[h] = key;
			d->overflow_used++;
			return (int)h;
		}
	}
	return -1;
}

uint16_t feed_dir_instrument_slow(const struct feed_directory *d, uint32_t key)
{
	int slot = overflow_slot((struct feed_directory *)d, key, false);

	return slot < 0 ? 0 : d->overflow_instrument[slot];
}

/* The entry and cache cell of key; NULL when it has no room. */
static struct feed_symbol *entry(struct feed_directory *d, uint32_t key, bool insert,
				 uint16_t **inst)
{
	int slot;

	if (key < d->dense) {
		*inst = &d->instrument[key];
		return &d->symbol[key];
	}
	slot = overflow_slot(d, key, insert);
	if (slot < 0)
		return 0;
	*inst = &d->overflow_instrument[slot];
	return &d->overflow_symbol[slot];
}

struct feed_symbol *feed_dir_symbol(struct feed_directory *d, uint32_t key)
{
	uint16_t *inst;
	struct feed_symbol *s = entry(d, key, false, &inst);

	return s && s->ticker ? s : 0;
}

static void emit_symbol(struct feed_packet *pk, uint16_t inst, uint32_t key,
			const struct feed_symbol *sym, uint64_t seq, uint64_t ts)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_SYMBOL, inst, seq, ts);

	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	__builtin_memcpy(ev->u.symbol.ticker, &sym->ticker, 8);
	ev->u.symbol.round_lot = sym->round_lot;
	ev->u.symbol.feed_key = key;
	ev->u.symbol.listing_market = sym->market;
	feed_commit(pk);
	pk->v->announced[inst >> 3] |= (uint8_t)(1u << (inst & 7));
}

uint16_t feed_dir_define(struct feed_packet *pk, uint32_t key, const struct feed_symbol *sym,
			 uint64_t seq, uint64_t ts)
{
	struct feed_directory *d = &pk->v->dir;
	struct feed_symbol *e;
	uint16_t *cell, inst;

	e = entry(d, key, true, &cell);
	if (wb_unlikely(!e)) {
		/* More keys above directory_keys than the overflow table holds. */
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return 0;
	}
	*e = *sym;
	if (!e->stream)
		e->stream = feed_stream_id(pk->group, 0);
	if (key < d->dense && key >= d->dense_end)
		d->dense_end = key + 1;
	inst = feed_instrument_for_key(pk->engine, e->ticker);
	*cell = inst;
	if (inst) {
		pk->v->stream_of[inst] = e->stream;
		emit_symbol(pk, inst, key, e, seq, ts);
	}
	return inst;
}

uint16_t feed_dir_learn(struct feed_packet *pk, uint32_t key, uint64_t ticker, uint32_t round_lot,
			uint64_t seq, uint64_t ts)
{
	struct feed_symbol sym = { .ticker = ticker, .round_lot = round_lot };

	feed_count_error(pk, FEED_ERR_UNKNOWN_SYMBOL);
	return feed_dir_define(pk, key, &sym, seq, ts);
}

void feed_announce(struct feed_packet *pk, uint16_t inst, uint8_t unit, uint64_t seq, uint64_t ts)
{
	struct feed_venue *v = pk->v;
	struct wb_event *ev;

	v->stream_of[inst] = feed_stream_id(pk->group, unit);
	if (wb_likely(feed_announced(v, inst)))
		return;
	ev = feed_emit(pk, WB_EV_SYMBOL, inst, seq, ts);
	if (!ev)
		return;		/* ring full: announce again with the next event */
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	__builtin_memcpy(ev->u.symbol.ticker, &pk->engine->subs.ticker[inst], 8);
	ev->u.symbol.round_lot = DEFAULT_ROUND_LOT;
	feed_commit(pk);
	v->announced[inst >> 3] |= (uint8_t)(1u << (inst & 7));
}

/* Point every defined key at its instrument under the new subscriptions. */
static void rebuild_cache(struct feed_packet *pk, uint64_t seq)
{
	struct feed_directory *d = &pk->v->dir;
	uint32_t key;

	for (key = 0; key < d->dense_end; key++) {
		uint16_t before = d->instrument[key], inst = 0;

		if (d->symbol[key].ticker)
			inst = feed_instrument_for_key(pk->engine, d->symbol[key].ticker);
		d->instrument[key] = inst;
		if (inst && inst != before) {
			pk->v->stream_of[inst] = d->symbol[key].stream;
			emit_symbol(pk, inst, key, &d->symbol[key], seq, 0);
		}
	}
	for (key = 0; d->overflow_used && key < FEED_DIR_OVERFLOW; key++) {
		uint16_t before = d->overflow_instrument[key], inst = 0;

		if (!d->overflow_key[key] || !d->overflow_symbol[key].ticker)
			continue;
		inst = feed_instrument_for_key(pk->engine, d->overflow_symbol[key].ticker);
		d->overflow_instrument[key] = inst;
		if (inst && inst != before) {
			pk->v->stream_of[inst] = d->overflow_symbol[key].stream;
			emit_symbol(pk, inst, d->overflow_key[key], &d->overflow_symbol[key], seq, 0);
		}
	}
}

void feed_venue_refresh(struct feed_packet *pk)
{
	const struct feed_subs *subs = &pk->engine->subs;
	struct feed_venue *v = pk->v;
	bool late = v->session_seen;
	uint32_t inst, count = feed_subs_count(pk->engine);

	v->subs_generation = subs->generation;
	rebuild_cache(pk, 0);
	if (subs->all && !v->was_all && late)
		feed_emit_instrument_gap(pk, 0, 0, 0, 0, WB_GAP_LATE_SUBSCRIBE);
	v->was_all = subs->all;
	for (inst = 1; inst <= count && inst < FEED_MAX_INSTRUMENTS; inst++) {
		uint8_t bit = (uint8_t)(1u << (inst & 7));
		bool now = subs->all || subs->subscribed[inst];

		if (now && !(v->was_subscribed[inst >> 3] & bit)) {
			v->was_subscribed[inst >> 3] |= bit;
			if (late && !subs->all) {
				if (!feed_announced(v, (uint16_t)inst))
					feed_announce(pk, (uint16_t)inst, 0, 0, 0);
				feed_emit_instrument_gap(pk, (uint16_t)inst, 0, 0, 0,
							 WB_GAP_LATE_SUBSCRIBE);
			}
		} else if (!now) {
			v->was_subscribed[inst >> 3] &= (uint8_t)~bit;
		}
	}
}
