/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
#include "recovery/recovery_table.h"

#include <string.h>

#include "book/checksum.h"
#include "recovery/recovery.h"
#include "feed/feed_ioc.h"
#include "wirebook/barrier.h"

bool recovery_client_fill_times(const struct recovery_client *c, int venue, uint16_t channel,
				uint64_t *fills, uint64_t *p50, uint64_t *p99, uint64_t *max)
{
	for (int i = 0; c && i < recovery_client_count(c); i++) {
		struct recovery_totals t;

		recovery_client_totals(c, i, 0, &t);
		if (t.venue != venue || (t.channel < 0 ? 0 : t.channel) != channel)
			continue;
		*fills = t.fills;
		*p50 = t.fill_p50_ns;
		*p99 = t.fill_p99_ns;
		*max = t.fill_max_ns;
		return true;
	}
	return false;
}

void recovery_table_init(struct recovery_table *rt, struct wb_shm_recovery *t,
			 uint8_t *symbol_stream, uint32_t capacity,
			 const struct recovery_client *client)
{
	memset(rt, 0, sizeof(*rt));
	rt->client = client;
	rt->t = t;
	rt->symbol_stream = symbol_stream;
	rt->capacity = capacity;
	rt->changes_seen = ~0u;		/* the first update publishes */
}

/* Which streams are recovering now, and in which of their episodes. */
static uint64_t recovering_signature(const struct feed_recovery_stream *l, int n)
{
	uint64_t h = 0;

	for (int i = 0; i < n; i++)
		if (l[i].state != FEED_REC_NONE)
			h = book_checksum_mix(h, (uint64_t)l[i].venue << 56 | (uint64_t)l[i].channel << 40 |
					     (uint64_t)l[i].unit << 32 | l[i].episode);
	return h;
}

/*
 * Point each (symbol, venue) at its stream's entry. Runs when a recovery
 * begins or ends, so a symbol's stream is current when it matters; the
 * engine learns streams as symbols are announced, so a symbol first seen
 * during a recovery is "not known" (0) until the next one.
 */
static void rewrite_symbol_streams(struct recovery_table *rt, const struct feed_engine *e, int n)
{
	uint8_t by_key[1u << 16];
	uint32_t venues = 0;

	memset(by_key, 0, sizeof(by_key));
	for (int i = 0; i < n; i++) {
		uint16_t key = feed_stream_key(e, rt->list[i].line, rt->list[i].unit);

		if (key && rt->list[i].venue < WB_BOOK_VENUES) {
			by_key[key] = (uint8_t)(i + 1);
			venues |= 1u << rt->list[i].venue;
		}
	}
	for (uint32_t v = 1; v < WB_BOOK_VENUES; v++) {
		if (!(venues >> v & 1))
			continue;
		for (uint32_t inst = 1; inst < rt->capacity && inst < FEED_MAX_INSTRUMENTS; inst++) {
			uint8_t *cell = &rt->symbol_stream[(size_t)inst * WB_BOOK_VENUES + v];
			uint8_t want = by_key[feed_instrument_stream(e, (int)v, (uint16_t)inst)];

			if (*cell != want)
				wb_store_relaxed(cell, want);
		}
	}
	rt->symbol_rewrites++;
}

static void refresh_fill_times(struct recovery_table *rt, uint64_t now_ns)
{
	int n = rt->client ? recovery_client_count(rt->client) : 0;

	if (now_ns < rt->next_fill_ns)
		return;
	rt->next_fill_ns = now_ns + RECOVERY_TABLE_PERIOD_NS;
	rt->nfill = 0;
	for (int i = 0; i < n && rt->nfill < RECOVERY_TABLE_FILL_GROUPS; i++) {
		struct recovery_totals t;

		recovery_client_totals(rt->client, i, now_ns, &t);
		rt->fill[rt->nfill].venue = t.venue;
		rt->fill[rt->nfill].channel = (uint16_t)(t.channel < 0 ? 0 : t.channel);
		rt->fill[rt->nfill].fills = t.fills;
		rt->fill[rt->nfill].p50 = t.fill_p50_ns;
		rt->fill[rt->nfill].p99 = t.fill_p99_ns;
		rt->fill[rt->nfill].max = t.fill_max_ns;
		rt->nfill++;
	}
}

static void fill_entry(const struct recovery_table *rt, const struct feed_engine *e,
		       const struct feed_recovery_stream *s, struct wb_recovery_stream *o)
{
	struct wb_ioc_recovery r;

	feed_ioc_recovery(e, s, &r);
	for (int i = 0; i < rt->nfill; i++) {
		if (rt->fill[i].venue != r.venue || rt->fill[i].channel != r.channel)
			continue;
		r.fills = rt->fill[i].fills;
		r.fill_p50_ns = rt->fill[i].p50;
		r.fill_p99_ns = rt->fill[i].p99;
		r.fill_max_ns = rt->fill[i].max;
		break;
	}
	memset(o, 0, sizeof(*o));
	o->venue = r.venue;
	o->unit = r.unit;
	o->channel = r.channel;
	o->state = r.state;
	o->since_ns = r.since;
	o->gaps = r.gaps;
	o->filled = r.filled;
	o->unrecoverable = r.unrecoverable;
	o->messages = r.messages;
	o->lost = r.lost;
	o->snapshots = r.snapshots;
	o->fills = r.fills;
	o->fill_p50_ns = r.fill_p50_ns;
	o->fill_p99_ns = r.fill_p99_ns;
	o->fill_max_ns = r.fill_max_ns;
}

static void table_update(struct recovery_table *rt, const struct feed_engine *e, uint64_t now_ns,
			 uint64_t wall_ns, bool force)
{
	struct wb_shm_recovery *t = rt->t;
	uint32_t changes = wb_load_relaxed(&e->recovery_changes);
	uint64_t sig;
	int n, shown;

	if (!t || (changes == rt->changes_seen && !force))
		return;
	n = feed_recovery_list(e, rt->list, WB_RECOVERY_STREAMS, true);
	shown = n < WB_RECOVERY_STREAMS ? n : WB_RECOVERY_STREAMS;
	sig = recovering_signature(rt->list, shown);
	if (sig == rt->recovering_sig && now_ns < rt->next_ns && rt->changes_seen != ~0u && !force)
		return;		/* only counts moved: wait for the period */
	if ((sig != rt->recovering_sig && now_ns >= rt->next_symbols_ns) ||
	    (uint32_t)shown != rt->streams || rt->changes_seen == ~0u) {
		/* The symbols' streams first, so the state that names them
		 * never comes before them. */
		rewrite_symbol_streams(rt, e, shown);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		rt->streams = (uint32_t)shown;
		rt->next_symbols_ns = now_ns + RECOVERY_SYMBOLS_PERIOD_NS;
	}
	rt->recovering_sig = sig;
	rt->changes_seen = changes;
	rt->next_ns = now_ns + RECOVERY_TABLE_PERIOD_NS;

	refresh_fill_times(rt, now_ns);
	wb_store_relaxed(&t->seq, t->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (int i = 0; i < shown; i++)
		fill_entry(rt, e, &rt->list[i], &t->stream[i]);
	t->count = (uint32_t)shown;
	t->omitted = (uint32_t)(n - shown);
	t->updated_ns = wall_ns;
	wb_store_release(&t->seq, t->seq + 1);
	rt->rewrites++;
}

void recovery_table_update(struct recovery_table *rt, const struct feed_engine *e, uint64_t now_ns,
			   uint64_t wall_ns)
{
	table_update(rt, e, now_ns, wall_ns, false);
}

void recovery_table_publish_now(struct recovery_table *rt, const struct feed_engine *e,
				uint64_t now_ns, uint64_t wall_ns)
{
	rt->next_fill_ns = 0;
	table_update(rt, e, now_ns, wall_ns, true);
}
