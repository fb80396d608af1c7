/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Sequence streams, the same for every protocol.
 *
 * A stream is (venue, channel, unit): a MoldUDP64 session for ITCH, a
 * matching unit for PITCH, a channel for XDP, a line for CQS. The lines of
 * the feed map with the same (venue, channel) form a group and share its
 * streams, so the A and B copies of a packet are one packet to the books.
 * A protocol's frame() says where a packet's sequence is; this file owns
 * what follows from it:
 *
 * - In order: the packet is decoded. A packet wholly seen already (the
 *   other line's copy) is a duplicate; one that overlaps has its seen
 *   messages skipped.
 * - A hole (a packet beyond the next expected sequence): while another
 *   line of the group that has not yet passed the hole may still deliver
 *   it, and for at most hold_ns of receive time, the packet is held (a
 *   copy, up to hold_packets per group). When the missing packets arrive,
 *   everything is decoded in sequence order. When every line has passed
 *   the hole, or the time or the room runs out, the hole becomes one GAP
 *   event for the whole lost range, and what was held is decoded.
 * - Heartbeats and ends of session carry the next sequence: a heartbeat
 *   beyond the expected sequence opens a hole the same way (tail loss).
 * - The first packet of a stream above the session's first sequence is a
 *   GAP from that first sequence (the stream was joined late).
 * - A new session id (MoldUDP64) starts the stream over; packets of the
 *   session it replaced are dropped as stale. A reset (XDP Sequence Number
 *   Reset, CQS Reset, a PITCH unit's Unit Clear at sequence 1) restarts it
 *   at the packet's sequence without a gap; its copy on the other line,
 *   recognized by its reset token, is not a second reset. After an end of
 *   session, a packet at the first sequence starts a new day. A line that
 *   has not yet delivered the restart itself still sends the old epoch:
 *   its packets are stale until its copy of the restart arrives.
 *
 * The decoder hears of gaps and restarts through stream_event() and
 * clears what belonged to the stream.
 */
#include "feed_internal.h"

#define DEFAULT_HOLD_NS 1000000ull	/* 1 ms */

static void notify(struct feed_packet *pk, uint8_t unit, enum feed_stream_event ev)
{
	if (pk->proto->stream_event)
		pk->proto->stream_event(pk, unit, ev);
}

static uint64_t hold_ns(const struct feed_engine *e)
{
	return e->cfg.hold_ns ? e->cfg.hold_ns : DEFAULT_HOLD_NS;
}

static void open_hole(struct feed_packet *pk, struct feed_stream *s)
{
	if (s->hole_since)
		return;
	s->hole_since = pk->recv_ts ? pk->recv_ts : 1;
	s->hole_line = pk->line_index;
	pk->group->holes++;
	pk->engine->holes++;
}

static void close_hole(struct feed_packet *pk, struct feed_stream *s)
{
	if (!s->hole_since)
		return;
	s->hole_since = 0;
	pk->group->holes--;
	pk->engine->holes--;
}

/*
 * May the hole still be filled: another line of the group delivered on
 * this stream but has not passed the hole, and the hole is younger than
 * hold_ns.
 */
static bool may_wait(const struct feed_packet *pk, const struct feed_stream *s)
{
	const struct feed_group *g = pk->group;
	uint64_t now = pk->recv_ts;
	uint32_t j;

	if (pk->engine->cfg.no_hold)
		return false;
	if (now > s->hole_since && now - s->hole_since >= hold_ns(pk->engine))
		return false;
	for (j = 0; j < g->nlines; j++)
		if (s->line_next[j] && s->line_next[j] <= s->next_seq)
			return true;
	return false;
}

static bool hold_put(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		     const uint8_t *p, uint32_t len)
{
	struct feed_group *g = pk->group;
	uint32_t i;

	if (len > FEED_HOLD_BYTES)
		return false;
	for (i = 0; i < g->hold_slots; i++) {
		struct feed_hold *h = &g->hold[i];

		if (h->used)
			continue;
		h->frame = *f;
		h->recv_ts = pk->recv_ts;
		h->len = (uint16_t)len;
		h->line = (uint8_t)pk->line_index;
		__builtin_memcpy(h->data, p, len);
		h->used = true;
		s->held++;
		return true;
	}
	return false;
}

/* The held packet of a unit with the lowest sequence. */
static struct feed_hold *hold_first(struct feed_group *g, uint8_t unit)
{
	struct feed_hold *best = 0;
	uint32_t i;

	for (i = 0; i < g->hold_slots; i++) {
		struct feed_hold *h = &g->hold[i];

		if (h->used && h->frame.unit == unit && (!best || h->frame.seq < best->frame.seq))
			best = h;
	}
	return best;
}

static void hold_drop_unit(struct feed_group *g, struct feed_stream *s, uint8_t unit)
{
	uint32_t i;

	for (i = 0; i < g->hold_slots && s->held; i++) {
		if (g->hold[i].used && g->hold[i].frame.unit == unit) {
			g->hold[i].used = false;
			s->held--;
		}
	}
}

/* Decode the part of a packet the stream has not seen (f->seq <= next). */
static inline __attribute__((always_inline)) void decode_new(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		       const uint8_t *p, uint32_t len)
{
	uint64_t skip = s->next_seq - f->seq;
	uint32_t framed;

	pk->counters->duplicate_messages += skip;
	pk->v->session_seen = true;
	framed = pk->proto->decode(pk, p, len, f, (uint32_t)skip);
	if (f->seq + framed > s->next_seq)
		s->next_seq = f->seq + framed;
}

/* A held packet, decoded as it would have been when it arrived. */
static void hold_release(struct feed_packet *pk, struct feed_stream *s, struct feed_hold *h)
{
	struct feed_engine *e = pk->engine;
	struct feed_packet held = *pk;

	held.line = &e->lines[h->line];
	held.line_index = h->line;
	held.counters = &held.line->counters;
	held.recv_ts = h->recv_ts;
	h->used = false;
	s->held--;
	if (h->frame.seq + h->frame.count <= s->next_seq) {
		held.counters->duplicates++;
		held.counters->duplicate_messages += h->frame.count;
		return;
	}
	decode_new(&held, s, &h->frame, h->data, h->len);
}

/*
 * The hole [next, target) is lost. The line whose packet opened the hole
 * names it: which packet or timer tick finally declares it depends on
 * arrival timing, and the GAP (its line, the per-line count) must not.
 */
static void declare(struct feed_packet *pk, struct feed_stream *s, uint8_t unit, uint64_t target)
{
	struct feed_packet at = *pk;

	if (s->hole_since && s->hole_line != pk->line_index) {
		at.line = &pk->engine->lines[s->hole_line];
		at.line_index = s->hole_line;
		at.counters = &at.line->counters;
	}
	feed_emit_gap(&at, s->next_seq, target - s->next_seq, unit);
	s->next_seq = target;
	notify(pk, unit, FEED_STREAM_GAP);
}

/*
 * Decode what is held in order, and turn holes into GAPs: every hole below
 * force_below, and the others once nothing may fill them any more.
 */
static void advance(struct feed_packet *pk, struct feed_stream *s, uint8_t unit,
		    uint64_t force_below)
{
	struct feed_group *g = pk->group;

	for (;;) {
		struct feed_hold *h = s->held ? hold_first(g, unit) : 0;
		uint64_t target = ~0ull;

		if (h && h->frame.seq <= s->next_seq) {
			hold_release(pk, s, h);
			continue;
		}
		if (h)
			target = h->frame.seq;
		if (s->hole_end > s->next_seq && s->hole_end < target)
			target = s->hole_end;
		if (target == ~0ull) {
			close_hole(pk, s);
			return;
		}
		if (s->next_seq >= force_below && may_wait(pk, s))
			return;
		declare(pk, s, unit, target);
		/* What remains beyond it is a new hole, as of now. */
		close_hole(pk, s);
		if (s->held || s->hole_end > s->next_seq)
			open_hole(pk, s);
	}
}

/* The stream's first packet: anything before it in the session was missed. */
static void start(struct feed_packet *pk, struct feed_stream *s, uint8_t unit, uint64_t seq)
{
	uint64_t first = pk->proto->first_seq;

	s->started = true;
	s->next_seq = seq;
	if (seq > first) {
		feed_emit_gap(pk, first, seq - first, unit);
		notify(pk, unit, FEED_STREAM_GAP);
	}
}

static void restart(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		    enum feed_stream_event ev)
{
	struct feed_group *g = pk->group;

	if (s->started)
		pk->counters->session_changes++;
	hold_drop_unit(g, s, f->unit);
	close_hole(pk, s);
	if (ev == FEED_STREAM_NEW_SESSION) {
		/* The session id tells old packets apart: no epochs needed. */
		__builtin_memset(s->line_next, 0, sizeof(s->line_next));
	} else {
		s->epoch++;
		s->line_epoch[pk->line->group_line] = s->epoch;
		s->line_next[pk->line->group_line] = 0;
		s->restart_seq = f->seq;
	}
	s->hole_end = 0;
	s->ended = false;
	s->started = ev == FEED_STREAM_RESET;
	s->next_seq = f->seq;
	if (ev == FEED_STREAM_RESET)
		s->reset_token = f->reset_token;
	if (ev != FEED_STREAM_RESET) {
		/* A new day may have begun: learn its date again. */
		pk->v->midnight_ns = FEED_MIDNIGHT_UNKNOWN;
		feed_packet_midnight(pk);
	}
	if (ev == FEED_STREAM_NEW_SESSION)
		pk->v->session_seen = false;
	notify(pk, f->unit, ev);
}

/* False when the packet belongs to a session already replaced. */
static bool session_current(struct feed_packet *pk, struct feed_stream *s,
			    const struct feed_frame *f)
{
	if (!s->has_session) {
		s->session = f->session;
		s->session_tail = f->session_tail;
		s->has_session = true;
		return true;
	}
	if (s->has_prev_session && s->prev_session == f->session &&
	    s->prev_session_tail == f->session_tail) {
		pk->counters->stale_session++;
		return false;
	}
	s->prev_session = s->session;
	s->prev_session_tail = s->session_tail;
	s->has_prev_session = true;
	s->session = f->session;
	s->session_tail = f->session_tail;
	restart(pk, s, f, FEED_STREAM_NEW_SESSION);
	return true;
}

/*
 * A packet of a line still in the epoch before the last restart: its copy
 * of the restart moves it to the current epoch (and is then a duplicate);
 * anything else it sends belongs to the old epoch and is dropped. A line
 * that never delivered on the stream joins at once.
 */
static bool joins_epoch(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f)
{
	uint8_t li = pk->line->group_line;
	bool copy = f->seq == s->restart_seq &&
		    (f->kind != FEED_FRAME_RESET || f->reset_token == s->reset_token);

	if (s->line_next[li] && !copy) {
		pk->counters->stale_session++;
		return false;
	}
	s->line_epoch[li] = s->epoch;
	s->line_next[li] = 0;
	return true;
}

/* A heartbeat or an end of session: the stream has sent everything before seq. */
static void reached(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f)
{
	uint8_t li = pk->line->group_line;

	if (!s->started) {
		start(pk, s, f->unit, f->seq);
		return;
	}
	if (f->seq > s->line_next[li])
		s->line_next[li] = f->seq;
	if (f->seq <= s->next_seq)
		return;
	if (f->seq > s->hole_end)
		s->hole_end = f->seq;
	open_hole(pk, s);
	advance(pk, s, f->unit, 0);
}

/* A data packet beyond the next expected sequence. */
static void ahead(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		  const uint8_t *p, uint32_t len)
{
	bool wait;

	open_hole(pk, s);
	wait = may_wait(pk, s);
	if (hold_put(pk, s, f, p, len)) {
		if (wait) {
			pk->counters->held++;
			return;
		}
		/* Nothing can fill the hole: it is lost, and the packet follows it. */
		advance(pk, s, f->unit, f->seq);
		return;
	}
	if (wait)
		pk->counters->hold_full++;
	/* No room to hold it: what is missing before it is lost now. */
	advance(pk, s, f->unit, f->seq);
	if (f->seq + f->count > s->next_seq)
		decode_new(pk, s, f, p, len);
	else
		pk->counters->duplicates++;
	advance(pk, s, f->unit, 0);
}

void feed_stream_packet(struct feed_packet *pk, const struct feed_frame *f, const uint8_t *p,
			uint32_t len)
{
	struct feed_group *g = pk->group;
	uint8_t li = pk->line->group_line;
	struct feed_stream *s;
	uint64_t end;

	if (wb_unlikely(f->unit >= g->units)) {
		feed_count_error(pk, FEED_ERR_BAD_FIELD);
		return;
	}
	s = &g->stream[f->unit];
	if (f->has_session && wb_unlikely(!s->has_session || s->session != f->session ||
					  s->session_tail != f->session_tail) &&
	    !session_current(pk, s, f))
		return;
	end = f->seq + f->count;
	/* The common case: the next packet of a quiet stream. */
	if (wb_likely(f->kind == FEED_FRAME_DATA && f->seq == s->next_seq && s->started &&
		      !s->hole_since && s->line_epoch[li] == s->epoch)) {
		s->line_next[li] = end;
		decode_new(pk, s, f, p, len);
		return;
	}
	if (wb_unlikely(s->line_epoch[li] != s->epoch) && !joins_epoch(pk, s, f))
		return;
	switch (f->kind) {
	case FEED_FRAME_HEARTBEAT:
		pk->counters->heartbeats++;
		if (f->seq)
			reached(pk, s, f);
		return;
	case FEED_FRAME_END:
		pk->counters->end_of_session++;
		if (f->seq)
			reached(pk, s, f);
		s->ended = true;
		return;
	case FEED_FRAME_RESET:
		if (!s->started || f->reset_token != s->reset_token || !f->reset_token)
			restart(pk, s, f, FEED_STREAM_RESET);
		break;
	default:
		if (wb_unlikely(s->ended && f->seq < s->next_seq &&
				f->seq == pk->proto->first_seq))
			restart(pk, s, f, FEED_STREAM_NEW_DAY);
		break;
	}
	if (wb_unlikely(!s->started))
		start(pk, s, f->unit, f->seq);
	if (end > s->line_next[li])
		s->line_next[li] = end;
	if (wb_unlikely(f->seq != s->next_seq)) {
		if (f->seq > s->next_seq) {
			ahead(pk, s, f, p, len);
			return;
		}
		if (end <= s->next_seq) {
			pk->counters->duplicates++;
			pk->counters->duplicate_messages += f->count;
			return;
		}
	}
	decode_new(pk, s, f, p, len);
	if (wb_unlikely(s->hole_since))
		advance(pk, s, f->unit, 0);
}

void feed_stream_ended(struct feed_packet *pk, uint8_t unit)
{
	if (unit < pk->group->units)
		pk->group->stream[unit].ended = true;
}

void feed_group_release(struct feed_engine *e, struct feed_group *g, uint64_t now, bool flush,
			struct wb_ring_producer *out)
{
	struct feed_packet pk;
	uint32_t unit;

	if (!g->holes || !g->nlines)
		return;
	__builtin_memset(&pk, 0, sizeof(pk));
	pk.engine = e;
	pk.proto = feed_protocol_get(g->protocol);
	pk.line_index = g->line[0];
	pk.line = &e->lines[pk.line_index];
	pk.counters = &pk.line->counters;
	pk.v = e->venue[g->venue];
	pk.group = g;
	pk.state = pk.v->state;
	pk.out = out;
	pk.recv_ts = now;
	pk.venue = g->venue;
	feed_packet_midnight(&pk);
	for (unit = 0; unit < g->units && g->holes; unit++) {
		struct feed_stream *s = &g->stream[unit];

		if (s->hole_since)
			advance(&pk, s, (uint8_t)unit, flush ? ~0ull : 0);
	}
}
