/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Control-ABI conversions shared by the module and user space (feed_ioc.h). */
#include "feed_ioc.h"
#include "feed_internal.h"

#ifdef __KERNEL__
#include <linux/errno.h>
#else
#include <errno.h>
#endif

void feed_ioc_line(const struct feed_line *l, int index, struct wb_ioc_feed *f)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->ip = l->ip;
	f->port = l->port;
	f->protocol = l->protocol;
	f->venue = l->venue;
	__builtin_memcpy(f->name, l->name, sizeof(f->name) - 1);
	f->line = index;
	f->channel = l->channel;
}

void feed_ioc_counters(const struct feed_counters *c, struct wb_ioc_counters *o)
{
	int i;

	__builtin_memset(o, 0, sizeof(*o));
	o->packets = c->packets;
	o->bytes = c->bytes;
	o->messages = c->messages;
	o->events = c->events;
	o->filtered = c->filtered;
	o->ignored = c->ignored;
	o->heartbeats = c->heartbeats;
	o->gaps = c->gaps;
	o->gap_messages = c->gap_messages;
	o->duplicates = c->duplicates;
	o->duplicate_messages = c->duplicate_messages;
	o->session_changes = c->session_changes;
	o->end_of_session = c->end_of_session;
	o->ring_drops = c->ring_drops;
	o->order_filter_full = c->order_filter_full;
	o->gso_packets = c->gso_packets;
	o->held = c->held;
	o->hold_full = c->hold_full;
	o->stale_session = c->stale_session;
	for (i = 0; i < FEED_ERR_COUNT && i < WB_IOC_ERROR_SLOTS; i++)
		o->errors[i] = c->errors[i];
}

int feed_ioc_entry(const struct wb_ioc_feed *f, struct feed_map_entry *m)
{
	size_t n;

	if (f->reserved || !f->ip || !f->port)
		return -FEED_EINVAL;
	for (n = 0; n < sizeof(f->name) && f->name[n]; n++)
		;
	if (n == 0 || n == sizeof(f->name))
		return -FEED_EINVAL;
	__builtin_memset(m, 0, sizeof(*m));
	m->ip = f->ip;
	m->port = f->port;
	m->channel = f->channel;
	m->protocol = f->protocol;
	m->venue = f->venue;
	__builtin_memcpy(m->name, f->name, n);
	return 0;
}

int feed_ioc_feed_key(const struct wb_ioc_feed *f)
{
	return (f->reserved || !f->ip || !f->port) ? -FEED_EINVAL : 0;
}

int feed_ioc_ticker(const struct wb_ioc_symbol *s)
{
	size_t n;

	for (n = 0; n < sizeof(s->ticker) && s->ticker[n]; n++)
		;
	return (n == 0 || n == sizeof(s->ticker) || n > 8) ? -FEED_EINVAL : (int)n;
}

uint32_t feed_ioc_feed_list(const struct feed_engine *e, struct wb_ioc_feed *out, uint32_t cap)
{
	uint32_t i, n = 0;

	for (i = 0; i < e->line_count && i < FEED_MAX_LINES; i++) {
		if (!feed_line_in_use(&e->lines[i]))
			continue;
		if (n < cap)
			feed_ioc_line(&e->lines[i], (int)i, &out[n]);
		n++;
	}
	return n;
}

uint32_t feed_ioc_sub_list(const struct feed_engine *e, struct wb_ioc_symbol *out, uint32_t cap)
{
	const struct feed_subs *subs = &e->subs;
	uint32_t id, n = 0, count = feed_subs_count(e);

	if (subs->all) {
		if (n < cap) {
			__builtin_memset(&out[n], 0, sizeof(out[n]));
			out[n].ticker[0] = '*';
		}
		n++;
	}
	for (id = 1; id <= count && id < FEED_MAX_INSTRUMENTS; id++) {
		if (!subs->subscribed[id])
			continue;
		if (n < cap) {
			char text[9];

			feed_ticker_text(subs->ticker[id], text);
			__builtin_memset(&out[n], 0, sizeof(out[n]));
			__builtin_memcpy(out[n].ticker, text, sizeof(text));
			out[n].instrument = id;
		}
		n++;
	}
	return n;
}

uint32_t feed_ioc_line_list(const struct feed_engine *e, struct wb_ioc_line_stats *out,
			    uint32_t cap)
{
	uint32_t i, n = 0;

	for (i = 0; i < e->line_count && i < FEED_MAX_LINES; i++) {
		if (!feed_line_in_use(&e->lines[i]))
			continue;
		if (n < cap) {
			__builtin_memset(&out[n], 0, sizeof(out[n]));
			feed_ioc_line(&e->lines[i], (int)i, &out[n].feed);
		}
		n++;
	}
	return n;
}

void feed_ioc_line_counters(const struct feed_engine *e, int venue, struct wb_ioc_line_stats *out,
			    uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		int line = out[i].feed.line;

		if (line >= 0 && line < FEED_MAX_LINES && e->lines[line].venue == venue)
			feed_ioc_counters(&e->lines[line].counters, &out[i].counters);
	}
}

uint32_t feed_ioc_line_stats(const struct feed_engine *e, struct wb_ioc_line_stats *out,
			     uint32_t cap)
{
	uint32_t i, n = feed_ioc_line_list(e, out, cap);

	for (i = 0; i < n && i < cap; i++)
		feed_ioc_counters(&e->lines[out[i].feed.line].counters, &out[i].counters);
	return n;
}

void feed_ioc_recovery(const struct feed_engine *e, const struct feed_recovery_stream *s,
		       struct wb_ioc_recovery *o)
{
	const struct feed_fill_hist *h = feed_recovery_fill_times(e, s->line);

	__builtin_memset(o, 0, sizeof(*o));
	o->venue = s->venue;
	o->unit = s->unit;
	o->channel = s->channel;
	o->state = s->state;
	o->protocol = s->protocol;
	o->line = s->line;
	o->held = s->held;
	o->since = s->state != FEED_REC_NONE ? s->since : 0;
	o->gaps = s->gaps;
	o->filled = s->filled;
	o->unrecoverable = s->unrecoverable;
	o->messages = s->messages;
	o->lost = s->lost;
	o->snapshots = s->snapshots;
	if (h && h->count) {
		o->fills = h->count;
		o->fill_p50_ns = feed_fill_quantile(h, 500);
		o->fill_p99_ns = feed_fill_quantile(h, 990);
		o->fill_max_ns = h->max_ns;
	}
}

void feed_ioc_stats_reset(struct feed_engine *e)
{
	uint32_t i;

	for (i = 0; i < FEED_MAX_LINES; i++)
		__builtin_memset(&e->lines[i].counters, 0, sizeof(e->lines[i].counters));
}

void feed_ioc_stats_reset_venue(struct feed_engine *e, int venue)
{
	uint32_t i;

	for (i = 0; i < FEED_MAX_LINES; i++)
		if (feed_line_in_use(&e->lines[i]) && e->lines[i].venue == venue)
			__builtin_memset(&e->lines[i].counters, 0, sizeof(e->lines[i].counters));
}

int feed_ioc_trading_date(struct feed_engine *e, const struct wb_ioc_date *d)
{
	if (d->reserved[0] || d->reserved[1] || d->reserved[2])
		return -FEED_EINVAL;
	return feed_engine_set_trading_date(e, d->year, d->month, d->day);
}

/* ---- gap recovery ------------------------------------------------------------ */

int feed_ioc_rec_enable(struct feed_engine *e, const struct wb_ioc_rec_enable *r)
{
	if (r->reserved0 || r->reserved[0] || r->reserved[1])
		return -FEED_EINVAL;
	return feed_recovery_enable(e, r->venue, r->channel, r->slots);
}

void feed_ioc_rec_stream(const struct feed_recovery_stream *s, struct wb_ioc_rec_stream *o)
{
	__builtin_memset(o, 0, sizeof(*o));
	o->venue = s->venue;
	o->protocol = s->protocol;
	o->unit = s->unit;
	o->state = s->state;
	o->channel = s->channel;
	o->line = s->line;
	o->episode = s->episode;
	o->held = s->held;
	o->next_seq = s->next_seq;
	o->missing_first = s->missing_first;
	o->missing_count = s->missing_count;
	o->rec_first = s->rec_first;
	o->rec_end = s->rec_end;
	o->since = s->since;
	__builtin_memcpy(o->session, s->session, sizeof(o->session));
	o->has_session = s->has_session;
	o->gaps = s->gaps;
	o->filled = s->filled;
	o->unrecoverable = s->unrecoverable;
	o->messages = s->messages;
	o->lost = s->lost;
	o->snapshots = s->snapshots;
}

int feed_ioc_rec_list_check(const struct wb_ioc_rec_list *r)
{
	return (r->all > 1 || r->reserved[0] || r->reserved[1]) ? -FEED_EINVAL : 0;
}

int feed_ioc_rec_packet_check(const struct wb_ioc_rec_packet *r)
{
	if (r->reserved0 || r->reserved[0] || r->reserved[1] || !r->len ||
	    r->len > WB_IOC_REC_MAX_PAYLOAD || !r->data)
		return -FEED_EINVAL;
	return 0;
}

int feed_ioc_rec_packet(struct feed_engine *e, const struct wb_ioc_rec_packet *r,
			const uint8_t *payload, uint64_t now, struct wb_ring_producer *out)
{
	if (feed_ioc_rec_packet_check(r) < 0)
		return -FEED_EINVAL;
	return feed_recover_packet(e, r->line, payload, r->len, now, out);
}

int feed_ioc_rec_lost(struct feed_engine *e, const struct wb_ioc_rec_lost *r, uint64_t now,
		      struct wb_ring_producer *out)
{
	if (r->reserved0 || r->reserved1 || r->reserved[0] || r->reserved[1])
		return -FEED_EINVAL;
	return feed_recover_lost(e, r->line, r->unit, r->first, r->count, now, out);
}

int feed_ioc_rec_snapshot_check(const struct wb_ioc_rec_snapshot *r)
{
	bool packet = r->op == WB_SNAPSHOT_PACKET;

	if (r->reserved[0] || r->reserved[1] || r->op < WB_SNAPSHOT_BEGIN ||
	    r->op > WB_SNAPSHOT_ABORT)
		return -FEED_EINVAL;
	if (packet ? (!r->len || r->len > WB_IOC_REC_MAX_PAYLOAD || !r->data) :
		     (r->len || r->data))
		return -FEED_EINVAL;
	if (r->op != WB_SNAPSHOT_END && r->next_seq)
		return -FEED_EINVAL;
	return 0;
}

int feed_ioc_rec_snapshot(struct feed_engine *e, const struct wb_ioc_rec_snapshot *r,
			  const uint8_t *payload, uint64_t now, struct wb_ring_producer *out)
{
	if (feed_ioc_rec_snapshot_check(r) < 0)
		return -FEED_EINVAL;
	switch (r->op) {
	case WB_SNAPSHOT_BEGIN:
		return feed_snapshot_begin(e, r->line, r->unit, now, out);
	case WB_SNAPSHOT_PACKET:
		return feed_snapshot_packet(e, r->line, r->unit, payload, r->len, now, out);
	case WB_SNAPSHOT_END:
		return feed_snapshot_end(e, r->line, r->unit, r->next_seq, now, out);
	default:
		return feed_snapshot_abort(e, r->line, r->unit, now, out);
	}
}

int feed_ioc_errno(int rc)
{
	switch (-rc) {
	case 0: return 0;
	case FEED_EINVAL: return -EINVAL;
	case FEED_ENOSPC: return -ENOSPC;
	case FEED_EEXIST: return -EEXIST;
	case FEED_ENOENT: return -ENOENT;
	case FEED_ENOMEM: return -ENOMEM;
	case FEED_EPROTO: return -EPROTO;
	case FEED_EVENUE: return -EPROTONOSUPPORT;
	default: return rc < 0 ? -EINVAL : rc;
	}
}
