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
 *
 * Recovery mode (a group with a recovery buffer, feed_recovery_enable):
 * where a hole would become a GAP, it becomes a recovery instead. The
 * stream says so once (GAP, reason WB_GAP_RECOVERING, the missing range),
 * keeps every later packet in the group's buffer (in sequence order, A/B
 * copies kept once) and waits, without a deadline, for the missing
 * packets: recovered ones (feed_recover_packet) or late real-time copies.
 * When the range is in, everything held is decoded in order and the
 * recovery ends (WB_GAP_FILLED). One recovery at a time per stream: a
 * second hole found among the held packets starts the next. What the
 * caller says will not come (feed_recover_lost, feed_snapshot_abort), and
 * what the buffer cannot hold, is lost: an ordinary GAP, then the rest.
 *
 * The buffer's bound: when it is full, the stream holding the most packets
 * gives up: every hole of it is declared lost (GAPs), everything it held
 * is decoded, and its recovery ends. Then the new packet is stored. During
 * a snapshot the stream's oldest packet goes first instead (the snapshot
 * may well cover it).
 *
 * A snapshot (feed_snapshot_begin/packet/end) takes the stream out of
 * sequencing: its books are cleared, its real-time packets buffered, the
 * snapshot's messages decoded as they come, and at the end the stream
 * resumes at the snapshot's sequence: buffered packets before it are
 * dropped, the others decoded in order (a hole after it is recovered).
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
	pk->v->holes++;
}

static void close_hole(struct feed_packet *pk, struct feed_stream *s)
{
	if (!s->hole_since)
		return;
	s->hole_since = 0;
	pk->group->holes--;
	pk->v->holes--;
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

/* ---- the hold buffer: per-stream lists of held packets ----------------- */

static inline struct feed_hold *slot(struct feed_group *g, uint32_t link)
{
	return &g->hold[link - 1];
}

void feed_hold_init(struct feed_group *g)
{
	uint32_t i;

	for (i = 0; i < g->hold_slots; i++)
		g->hold[i].next = i + 2 <= g->hold_slots ? i + 2 : 0;
	g->hold_free = g->hold_slots ? 1 : 0;
	g->hold_used = 0;
}

static struct feed_hold *hold_head(struct feed_group *g, const struct feed_stream *s)
{
	return s->hold_head ? slot(g, s->hold_head) : 0;
}

/* Unlink the stream's first held packet and put its slot back. */
static void hold_pop(struct feed_group *g, struct feed_stream *s)
{
	uint32_t link = s->hold_head;
	struct feed_hold *h = slot(g, link);

	s->hold_head = h->next;
	if (!s->hold_head)
		s->hold_tail = 0;
	s->held--;
	h->next = g->hold_free;
	g->hold_free = link;
	g->hold_used--;
}

enum hold_result { HOLD_STORED, HOLD_DUPLICATE, HOLD_FULL, HOLD_TOO_BIG };

/*
 * Keep a copy of a packet in its stream's list, in sequence order. A
 * packet whose first sequence is held already (the other line's copy, a
 * recovered one) is kept once: the copy with more messages stays.
 */
static enum hold_result hold_put(struct feed_packet *pk, struct feed_stream *s,
				 const struct feed_frame *f, const uint8_t *p, uint32_t len,
				 bool recovered)
{
	struct feed_group *g = pk->group;
	uint32_t prev = 0, cur = s->hold_head, link;
	struct feed_hold *h;

	if (len > FEED_HOLD_BYTES)
		return HOLD_TOO_BIG;
	if (s->hold_tail && slot(g, s->hold_tail)->frame.seq < f->seq) {
		prev = s->hold_tail;
		cur = 0;
	} else {
		while (cur && slot(g, cur)->frame.seq < f->seq) {
			prev = cur;
			cur = slot(g, cur)->next;
		}
		if (cur && slot(g, cur)->frame.seq == f->seq) {
			h = slot(g, cur);
			if (h->frame.count >= f->count)
				return HOLD_DUPLICATE;
			/* This copy carries more (the other was cut short): it replaces it. */
			goto fill;
		}
	}
	if (!g->hold_free)
		return HOLD_FULL;
	link = g->hold_free;
	h = slot(g, link);
	g->hold_free = h->next;
	g->hold_used++;
	h->next = cur;
	if (prev)
		slot(g, prev)->next = link;
	else
		s->hold_head = link;
	if (!cur)
		s->hold_tail = link;
	s->held++;
fill:
	h->frame = *f;
	h->recv_ts = pk->recv_ts;
	h->len = (uint16_t)len;
	h->line = (uint8_t)pk->line_index;
	h->recovered = recovered;
	__builtin_memcpy(h->data, p, len);
	return HOLD_STORED;
}

static void hold_drop_all(struct feed_group *g, struct feed_stream *s)
{
	while (s->hold_head)
		hold_pop(g, s);
}

/*
 * Decode the part of a packet the stream has not seen (f->seq <= next).
 * Returns the messages it moved the stream on by.
 */
static inline __attribute__((always_inline)) uint64_t
decode_new(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
	   const uint8_t *p, uint32_t len)
{
	uint64_t skip = s->next_seq - f->seq, before = s->next_seq;
	uint32_t framed;

	pk->counters->duplicate_messages += skip;
	pk->v->session_seen = true;
	framed = pk->proto->decode(pk, p, len, f, (uint32_t)skip);
	if (f->seq + framed > s->next_seq)
		s->next_seq = f->seq + framed;
	return s->next_seq - before;
}

/* The stream's first held packet, decoded as it would have been when it arrived. */
static void hold_release(struct feed_packet *pk, struct feed_stream *s)
{
	struct feed_group *g = pk->group;
	struct feed_hold *h = hold_head(g, s);
	struct feed_engine *e = pk->engine;
	struct feed_packet held = *pk;

	held.line = &e->lines[h->line];
	held.line_index = h->line;
	held.counters = &held.line->counters;
	held.recv_ts = h->recv_ts;
	if (h->frame.seq + h->frame.count <= s->next_seq) {
		held.counters->duplicates++;
		held.counters->duplicate_messages += h->frame.count;
	} else {
		uint64_t n = decode_new(&held, s, &h->frame, h->data, h->len);

		if (h->recovered) {
			held.counters->rec_messages += n;
			s->rc_messages += n;
		}
	}
	hold_pop(g, s);
}

/* ---- recoveries ------------------------------------------------------------ */

static void emit_recovery(struct feed_packet *pk, uint8_t unit, uint8_t reason, uint64_t first,
			  uint64_t count, uint64_t lost)
{
	struct wb_event *ev = feed_emit(pk, WB_EV_GAP, 0, first, 0);

	if (!ev)
		return;
	__builtin_memset(&ev->u, 0, sizeof(ev->u));
	ev->u.gap.first = first;
	ev->u.gap.count = count;
	ev->u.gap.channel = pk->line->channel;
	ev->u.gap.unit = unit;
	ev->u.gap.reason = reason;
	ev->u.gap.lost = lost > 0xffffffffu ? 0xffffffffu : (uint32_t)lost;
	feed_commit(pk);
}

/* A recovery of [first, end) begins (end 0: a snapshot, whose end is not known). */
static void recovery_begin(struct feed_packet *pk, struct feed_stream *s, uint8_t unit,
			   uint8_t state, uint64_t first, uint64_t end)
{
	s->rec = state;
	s->rec_first = first;
	s->rec_end = end;
	s->rec_since = pk->recv_ts;
	s->rec_lost = 0;
	s->rec_episode++;
	s->rc_gaps++;
	pk->counters->rec_gaps++;
	pk->group->recovering++;
	feed_recovery_changed(pk->engine);
	emit_recovery(pk, unit, WB_GAP_RECOVERING, first, end > first ? end - first : 0, 0);
	/* Not quiet until it ends: the fast path must not decode around it. */
	open_hole(pk, s);
}

static void fill_hist_add(struct feed_fill_hist *h, uint64_t ns)
{
	uint32_t b = 0;

	if (ns >= 4) {
		uint32_t msb = 63 - (uint32_t)__builtin_clzll(ns);

		b = (msb - 1) * 4 + (uint32_t)((ns >> (msb - 2)) & 3);
	} else {
		b = (uint32_t)ns;
	}
	if (b >= FEED_FILL_BUCKETS)
		b = FEED_FILL_BUCKETS - 1;
	h->bucket[b]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* The upper bound of bucket b, in ns. */
static uint64_t fill_bucket_top(uint32_t b)
{
	uint32_t msb, sub;

	if (b < 4)
		return b;
	msb = b / 4 + 1;
	sub = b % 4;
	if (msb >= 63)
		return ~0ull;
	return ((4ull + sub + 1) << (msb - 2)) - 1;
}

uint64_t feed_fill_quantile(const struct feed_fill_hist *h, uint32_t permille)
{
	uint64_t want, seen = 0;
	uint32_t b;

	if (!h->count)
		return 0;
	want = (h->count * permille + 999) / 1000;
	if (!want)
		want = 1;
	for (b = 0; b < FEED_FILL_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			uint64_t top = fill_bucket_top(b);

			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}

/* The recovery is over: the stream is in sequence again (FILLED, with what was lost). */
static void recovery_end(struct feed_packet *pk, struct feed_stream *s, uint8_t unit)
{
	uint64_t end = s->rec_end > s->rec_first ? s->rec_end : s->next_seq;

	if (s->rec_lost) {
		s->rc_unrecoverable++;
		pk->counters->rec_unrecoverable++;
	} else {
		s->rc_filled++;
		pk->counters->rec_filled++;
		if (pk->recv_ts > s->rec_since)
			fill_hist_add(&pk->group->fill, pk->recv_ts - s->rec_since);
	}
	emit_recovery(pk, unit, WB_GAP_FILLED, s->rec_first,
		      end > s->rec_first ? end - s->rec_first : 0, s->rec_lost);
	s->rec = FEED_REC_NONE;
	pk->group->recovering--;
	feed_recovery_changed(pk->engine);
}

/*
 * The hole [next, target) is lost. The line whose packet opened the hole
 * names it: which packet or timer tick finally declares it depends on
 * arrival timing, and the GAP (its line, the per-line count) must not.
 */
static void declare(struct feed_packet *pk, struct feed_stream *s, uint8_t unit, uint64_t target)
{
	uint64_t n = target - s->next_seq;
	struct feed_packet at = *pk;

	if (s->hole_since && s->hole_line != pk->line_index) {
		at.line = &pk->engine->lines[s->hole_line];
		at.line_index = s->hole_line;
		at.counters = &at.line->counters;
	}
	feed_emit_gap(&at, s->next_seq, n, unit);
	if (s->rec) {
		s->rec_lost += n;
		s->rc_lost += n;
		at.counters->rec_lost += n;
	}
	s->next_seq = target;
	notify(pk, unit, FEED_STREAM_GAP);
}

/* Where the hole at next_seq ends: the first held packet, or what a heartbeat said. */
static uint64_t hole_target(struct feed_group *g, const struct feed_stream *s)
{
	struct feed_hold *h = hold_head(g, s);
	uint64_t target = h ? h->frame.seq : ~0ull;

	if (s->hole_end > s->next_seq && s->hole_end < target)
		target = s->hole_end;
	return target;
}

/*
 * Decode what is held in order, and act on the holes between: wait while
 * another line may fill one; then, in recovery mode, recover it (one
 * recovery at a time), else declare it a GAP. Holes below force_below may
 * not wait for another line; with lose set they are lost even in recovery
 * mode, up to force_below at most (the input ended, the buffer is full,
 * the caller said they will not come).
 */
static void advance(struct feed_packet *pk, struct feed_stream *s, uint8_t unit,
		    uint64_t force_below, bool lose)
{
	struct feed_group *g = pk->group;

	if (s->rec == FEED_REC_SNAPSHOT)
		return;
	for (;;) {
		struct feed_hold *h = hold_head(g, s);
		uint64_t target;
		bool forced;

		if (h && h->frame.seq <= s->next_seq) {
			hold_release(pk, s);
			continue;
		}
		if (s->rec == FEED_REC_GAP && s->next_seq >= s->rec_end)
			recovery_end(pk, s, unit);
		target = hole_target(g, s);
		if (target == ~0ull) {
			close_hole(pk, s);
			return;
		}
		forced = s->next_seq < force_below;
		if (lose && forced) {
			declare(pk, s, unit, target < force_below ? target : force_below);
		} else if (s->rec == FEED_REC_GAP) {
			return;		/* being recovered: wait for it */
		} else if (!forced && may_wait(pk, s)) {
			return;
		} else if (g->recovery) {
			recovery_begin(pk, s, unit, FEED_REC_GAP, s->next_seq, target);
			return;
		} else {
			declare(pk, s, unit, target);
		}
		/* What remains beyond it is a new hole, as of now. */
		close_hole(pk, s);
		if (s->hold_head || s->hole_end > s->next_seq)
			open_hole(pk, s);
	}
}

/*
 * A stream gives up: every hole it has is lost, everything it holds is
 * decoded, its recovery (if any) ends. For the buffer's bound, and when
 * recovery mode goes.
 */
static void give_up(struct feed_packet *pk, struct feed_stream *s, uint8_t unit)
{
	if (s->rec == FEED_REC_SNAPSHOT) {
		/* Its books were cleared for a snapshot that will not come. */
		if (!s->started) {
			s->started = true;
			s->next_seq = s->rec_first;
		}
		s->rec = FEED_REC_GAP;
		s->rec_end = hole_target(pk->group, s);
		if (s->rec_end == ~0ull || s->rec_end < s->next_seq)
			s->rec_end = s->next_seq;
		if (s->rec_end == s->next_seq) {
			/* Nothing held, nothing known to be missing: count one lost. */
			s->rec_lost++;
			s->rc_lost++;
			pk->counters->rec_lost++;
		}
	}
	advance(pk, s, unit, ~0ull, true);
	if (s->rec)
		recovery_end(pk, s, unit);
}

/* The buffer is full: the stream holding the most gives up. False when none holds any. */
static bool make_room(struct feed_packet *pk)
{
	struct feed_group *g = pk->group;
	uint32_t u, best = 0, most = 0;

	for (u = 0; u < g->units; u++) {
		if (g->stream[u].held > most) {
			most = g->stream[u].held;
			best = u;
		}
	}
	if (!most)
		return false;
	pk->counters->rec_buffer_full++;
	give_up(pk, &g->stream[best], (uint8_t)best);
	return true;
}

/* ---- sequencing ------------------------------------------------------------ */

/* The stream's first packet: anything before it in the session was missed. */
static void start(struct feed_packet *pk, struct feed_stream *s, uint8_t unit, uint64_t seq)
{
	uint64_t first = pk->proto->first_seq;

	s->started = true;
	if (seq > first && pk->group->recovery) {
		/* The packet is then ahead of the stream: the start is recovered. */
		s->next_seq = first;
		return;
	}
	s->next_seq = seq;
	if (seq > first) {
		feed_emit_gap(pk, first, seq - first, unit);
		notify(pk, unit, FEED_STREAM_GAP);
	}
}

/* A recovery of a stream that starts over is moot: it ends, its range lost. */
static void recovery_abandon(struct feed_packet *pk, struct feed_stream *s, uint8_t unit)
{
	uint64_t end = s->rec_end > s->next_seq ? s->rec_end : s->next_seq;
	uint64_t n = end > s->next_seq ? end - s->next_seq : 1;

	s->rec_lost += n;
	s->rc_lost += n;
	pk->counters->rec_lost += n;
	if (s->rec == FEED_REC_SNAPSHOT)
		s->rec_end = 0;
	recovery_end(pk, s, unit);
}

static void restart(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		    enum feed_stream_event ev)
{
	struct feed_group *g = pk->group;

	if (s->started)
		pk->counters->session_changes++;
	if (s->rec)
		recovery_abandon(pk, s, f->unit);
	hold_drop_all(g, s);
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
		if (!pk->group->recovery)
			return;
	}
	if (f->seq > s->line_next[li])
		s->line_next[li] = f->seq;
	if (f->seq > s->hole_end)
		s->hole_end = f->seq;
	if (f->seq <= s->next_seq || s->rec == FEED_REC_SNAPSHOT)
		return;
	open_hole(pk, s);
	advance(pk, s, f->unit, 0, false);
}

/* A data packet beyond the next expected sequence. */
static void ahead(struct feed_packet *pk, struct feed_stream *s, const struct feed_frame *f,
		  const uint8_t *p, uint32_t len)
{
	enum hold_result r;
	bool wait;

	open_hole(pk, s);
	wait = s->rec == FEED_REC_NONE && may_wait(pk, s);
	r = hold_put(pk, s, f, p, len, false);
	if (r == HOLD_FULL && pk->group->recovery && make_room(pk)) {
		/* The stream that gave up may have been this one: it moved on. */
		if (f->seq + f->count <= s->next_seq) {
			pk->counters->duplicates++;
			return;
		}
		if (f->seq <= s->next_seq) {
			decode_new(pk, s, f, p, len);
			advance(pk, s, f->unit, 0, false);
			return;
		}
		open_hole(pk, s);
		r = hold_put(pk, s, f, p, len, false);
	}
	if (r == HOLD_DUPLICATE || r == HOLD_STORED) {
		if (r == HOLD_DUPLICATE) {
			/* The other line's copy of a held packet: it has passed the hole. */
			pk->counters->duplicates++;
			pk->counters->duplicate_messages += f->count;
		}
		if (wait) {
			if (r == HOLD_STORED)
				pk->counters->held++;
			return;
		}
		/* Nothing can fill the hole from the lines: it is lost or recovered. */
		advance(pk, s, f->unit, f->seq, false);
		return;
	}
	if (wait)
		pk->counters->hold_full++;
	/* No room to hold it: what is missing before it is lost now. */
	advance(pk, s, f->unit, f->seq, true);
	if (s->next_seq < f->seq)
		declare(pk, s, f->unit, f->seq);	/* a hole nothing held marks */
	if (f->seq + f->count > s->next_seq)
		decode_new(pk, s, f, p, len);
	else
		pk->counters->duplicates++;
	advance(pk, s, f->unit, 0, false);
}

/* A real-time packet of a stream taking a snapshot: kept until the snapshot ends. */
static void snapshot_buffer(struct feed_packet *pk, struct feed_stream *s,
			    const struct feed_frame *f, const uint8_t *p, uint32_t len)
{
	struct feed_group *g = pk->group;
	uint8_t li = pk->line->group_line;
	enum hold_result r;

	if (f->kind == FEED_FRAME_HEARTBEAT || f->kind == FEED_FRAME_END) {
		if (f->kind == FEED_FRAME_HEARTBEAT)
			pk->counters->heartbeats++;
		else
			pk->counters->end_of_session++;
		if (f->seq > s->line_next[li])
			s->line_next[li] = f->seq;
		if (f->seq > s->hole_end)
			s->hole_end = f->seq;
		return;
	}
	if (f->seq + f->count > s->line_next[li])
		s->line_next[li] = f->seq + f->count;
	r = hold_put(pk, s, f, p, len, false);
	if (r == HOLD_FULL && s->held) {
		/* Its oldest packet goes: the snapshot may well cover it. */
		pk->counters->rec_buffer_full++;
		hold_pop(g, s);
		r = hold_put(pk, s, f, p, len, false);
	}
	if (r == HOLD_FULL && make_room(pk))
		r = hold_put(pk, s, f, p, len, false);
	if (r == HOLD_DUPLICATE) {
		pk->counters->duplicates++;
		pk->counters->duplicate_messages += f->count;
	} else if (r != HOLD_STORED) {
		pk->counters->rec_buffer_full++;
	}
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
	if (wb_unlikely(s->rec == FEED_REC_SNAPSHOT) && f->kind != FEED_FRAME_RESET) {
		snapshot_buffer(pk, s, f, p, len);
		return;
	}
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
		advance(pk, s, f->unit, 0, false);
}

void feed_stream_ended(struct feed_packet *pk, uint8_t unit)
{
	if (unit < pk->group->units)
		pk->group->stream[unit].ended = true;
}

static void group_packet(struct feed_packet *pk, struct feed_engine *e, struct feed_group *g,
			 uint64_t now, struct wb_ring_producer *out)
{
	__builtin_memset(pk, 0, sizeof(*pk));
	pk->engine = e;
	pk->proto = feed_protocol_get(g->protocol);
	pk->line_index = g->line[0];
	pk->line = &e->lines[pk->line_index];
	pk->counters = &pk->line->counters;
	pk->v = e->venue[g->venue];
	pk->group = g;
	pk->state = pk->v->state;
	pk->out = out;
	pk->recv_ts = now;
	pk->venue = g->venue;
	feed_packet_midnight(pk);
}

void feed_group_release(struct feed_engine *e, struct feed_group *g, uint64_t now, bool flush,
			struct wb_ring_producer *out)
{
	struct feed_packet pk;
	uint32_t unit;

	if (!g->holes || !g->nlines)
		return;
	group_packet(&pk, e, g, now, out);
	for (unit = 0; unit < g->units && g->holes; unit++) {
		struct feed_stream *s = &g->stream[unit];

		if (!s->hole_since)
			continue;
		if (flush)
			give_up(&pk, s, (uint8_t)unit);
		else
			advance(&pk, s, (uint8_t)unit, 0, false);
	}
}

/* ---- gap recovery and snapshots: the calls (feed.h) ------------------------ */

/* The packet context and stream of (line, unit) for a recovery call; NULL if none. */
static struct feed_stream *recovery_stream(struct feed_engine *e, int line, uint8_t unit,
					   uint64_t now, struct wb_ring_producer *out,
					   struct feed_packet *pk)
{
	struct feed_group *g;

	if (line < 0 || line >= FEED_MAX_LINES || !feed_line_in_use(&e->lines[line]))
		return 0;
	feed_packet_init(pk, e, line, now, out);
	g = pk->group;
	if (unit >= g->units)
		return 0;
	return &g->stream[unit];
}

static int rejected(struct feed_packet *pk, int rc)
{
	pk->counters->rec_rejected++;
	return rc;
}

/* Count the events and drops of a call on its line, as the packet path does. */
struct call_ctx {
	struct wb_ring_producer *out;
	uint64_t head, dropped;
};

static void call_begin(struct call_ctx *c, struct wb_ring_producer *out)
{
	c->out = out;
	c->head = out->head;
	c->dropped = out->dropped;
}

static void call_end(struct call_ctx *c, struct feed_packet *pk)
{
	pk->counters->events += c->out->head - c->head;
	pk->counters->ring_drops += c->out->dropped - c->dropped;
}

int feed_recover_packet(struct feed_engine *e, int line, const uint8_t *payload, uint32_t len,
			uint64_t recv_ts, struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s;
	struct feed_frame f;
	struct call_ctx c;
	enum hold_result r;
	int err;

	if (line < 0 || line >= FEED_MAX_LINES || !feed_line_in_use(&e->lines[line]))
		return -FEED_ENOENT;
	feed_packet_init(&pk, e, line, recv_ts, out);
	err = pk.proto->frame(payload, len, &f);
	if (err) {
		feed_count_error(&pk, FEED_FRAME_ERROR_OF(err));
		return rejected(&pk, -FEED_EINVAL);
	}
	if (f.length < len)
		len = f.length;
	/* A reset frame (a PITCH unit's day starting at 1) is data here: the
	 * stream asked for that range. */
	if (f.unit >= pk.group->units || !f.count ||
	    (f.kind != FEED_FRAME_DATA && f.kind != FEED_FRAME_RESET))
		return rejected(&pk, -FEED_EINVAL);
	f.kind = FEED_FRAME_DATA;
	s = &pk.group->stream[f.unit];
	if (!pk.group->recovery || !s->started || s->rec == FEED_REC_SNAPSHOT)
		return rejected(&pk, -FEED_EINVAL);
	if (f.has_session && (!s->has_session || s->session != f.session ||
			      s->session_tail != f.session_tail))
		return rejected(&pk, -FEED_EPROTO);	/* another session's packet */
	if (wb_unlikely(pk.v->subs_generation != e->subs.generation))
		feed_venue_refresh(&pk);
	call_begin(&c, out);
	if (f.seq + f.count <= s->next_seq) {
		pk.counters->duplicates++;
		pk.counters->duplicate_messages += f.count;
	} else if (f.seq <= s->next_seq) {
		uint64_t n = decode_new(&pk, s, &f, payload, len);

		pk.counters->rec_messages += n;
		s->rc_messages += n;
		feed_recovery_changed(e);
		advance(&pk, s, f.unit, 0, false);
	} else {
		/* A later part of the hole (or of one after it): kept in order. */
		r = hold_put(&pk, s, &f, payload, len, true);
		if (r == HOLD_FULL && make_room(&pk) && f.seq > s->next_seq)
			r = hold_put(&pk, s, &f, payload, len, true);
		if (r == HOLD_DUPLICATE) {
			pk.counters->duplicates++;
		} else if (r != HOLD_STORED && f.seq > s->next_seq) {
			call_end(&c, &pk);
			return rejected(&pk, -FEED_ENOSPC);
		}
		feed_recovery_changed(e);
		advance(&pk, s, f.unit, 0, false);
	}
	call_end(&c, &pk);
	return 0;
}

int feed_recover_lost(struct feed_engine *e, int line, uint8_t unit, uint64_t first,
		      uint64_t count, uint64_t now, struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s = recovery_stream(e, line, unit, now, out, &pk);
	struct call_ctx c;

	if (!s)
		return -FEED_ENOENT;
	if (s->rec != FEED_REC_GAP || first > s->next_seq || first + count < first)
		return rejected(&pk, -FEED_EINVAL);
	if (first + count <= s->next_seq)
		return 0;	/* it came after all */
	call_begin(&c, out);
	advance(&pk, s, unit, first + count, true);
	advance(&pk, s, unit, 0, false);
	feed_recovery_changed(e);
	call_end(&c, &pk);
	return 0;
}

/*
 * Clear the books of a stream's instruments: all of the venue's when it is
 * its only stream. A SIP's stream (UQDF) has no books of its own: its clear
 * says so (WB_EVF_SIP), so the SIP view drops that SIP's quotes and NBBO of
 * those symbols, where a plain clear of a SIP source would be no venue's.
 */
static void clear_stream_books(struct feed_packet *pk, uint8_t unit)
{
	struct feed_engine *e = pk->engine;
	uint32_t i, groups = 0;
	uint8_t flags = pk->venue >= WB_VENUE_SIP_CQS ? WB_EVF_SIP : 0;

	for (i = 0; i < FEED_MAX_LINES; i++)
		groups += e->group[i] && e->group[i]->venue == pk->venue;
	if (groups == 1 && pk->group->units == 1)
		feed_emit_clear(pk, 0, 0, 0, flags);
	else
		feed_clear_stream(pk, unit, 0, 0, flags);
}

int feed_snapshot_begin(struct feed_engine *e, int line, uint8_t unit, uint64_t now,
			struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s = recovery_stream(e, line, unit, now, out, &pk);
	struct call_ctx c;

	if (!s)
		return -FEED_ENOENT;
	if (!pk.group->recovery || !pk.proto->snapshot_frame)
		return rejected(&pk, -FEED_EINVAL);
	call_begin(&c, out);
	if (s->rec == FEED_REC_NONE)
		recovery_begin(&pk, s, unit, FEED_REC_SNAPSHOT,
			       s->started ? s->next_seq : pk.proto->first_seq, 0);
	/* A gap being filled goes on as the snapshot; a snapshot begins again. */
	s->rec = FEED_REC_SNAPSHOT;
	s->rec_end = 0;
	open_hole(&pk, s);
	notify(&pk, unit, FEED_STREAM_SNAPSHOT);
	clear_stream_books(&pk, unit);
	feed_recovery_changed(e);
	call_end(&c, &pk);
	return 0;
}

int feed_snapshot_packet(struct feed_engine *e, int line, uint8_t unit, const uint8_t *payload,
			 uint32_t len, uint64_t now, struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s = recovery_stream(e, line, unit, now, out, &pk);
	struct feed_frame f;
	struct call_ctx c;
	uint32_t framed;
	int err;

	if (!s)
		return -FEED_ENOENT;
	if (s->rec != FEED_REC_SNAPSHOT)
		return rejected(&pk, -FEED_EINVAL);
	err = pk.proto->snapshot_frame(payload, len, &f);
	if (err) {
		feed_count_error(&pk, FEED_FRAME_ERROR_OF(err));
		return rejected(&pk, -FEED_EINVAL);
	}
	if (f.length < len)
		len = f.length;
	/* Its messages belong to this stream, unsequenced. */
	f.unit = unit;
	f.seq = 0;
	f.kind = FEED_FRAME_DATA;
	if (wb_unlikely(pk.v->subs_generation != e->subs.generation))
		feed_venue_refresh(&pk);
	call_begin(&c, out);
	pk.counters->packets++;
	pk.counters->bytes += len;
	pk.v->session_seen = true;
	framed = pk.proto->decode(&pk, payload, len, &f, 0);
	(void)framed;
	call_end(&c, &pk);
	return 0;
}

int feed_snapshot_end(struct feed_engine *e, int line, uint8_t unit, uint64_t next_seq,
		      uint64_t now, struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s = recovery_stream(e, line, unit, now, out, &pk);
	struct call_ctx c;

	if (!s)
		return -FEED_ENOENT;
	if (s->rec != FEED_REC_SNAPSHOT || next_seq < pk.proto->first_seq)
		return rejected(&pk, -FEED_EINVAL);
	call_begin(&c, out);
	s->started = true;
	s->next_seq = next_seq;
	s->rec = FEED_REC_GAP;
	s->rec_end = next_seq;
	s->rc_snapshots++;
	pk.counters->snapshots++;
	if (s->rec_first > next_seq)
		s->rec_first = next_seq;
	/* What is held before next_seq is dropped, the rest decoded in order; the
	 * recovery ends when what was held is in (a hole after it is the next). */
	close_hole(&pk, s);
	open_hole(&pk, s);
	advance(&pk, s, unit, 0, false);
	feed_recovery_changed(e);
	call_end(&c, &pk);
	return 0;
}

int feed_snapshot_abort(struct feed_engine *e, int line, uint8_t unit, uint64_t now,
			struct wb_ring_producer *out)
{
	struct feed_packet pk;
	struct feed_stream *s = recovery_stream(e, line, unit, now, out, &pk);
	struct call_ctx c;
	uint64_t target;

	if (!s)
		return -FEED_ENOENT;
	if (s->rec != FEED_REC_SNAPSHOT)
		return rejected(&pk, -FEED_EINVAL);
	call_begin(&c, out);
	if (!s->started) {
		s->started = true;
		s->next_seq = s->rec_first;
	}
	/* The cleared books lack everything before the first buffered packet. */
	s->rec = FEED_REC_GAP;
	target = hole_target(pk.group, s);
	s->rec_end = target == ~0ull ? s->next_seq : target;
	if (s->rec_end > s->next_seq) {
		declare(&pk, s, unit, s->rec_end);
	} else {
		s->rec_lost++;
		s->rc_lost++;
		pk.counters->rec_lost++;
	}
	advance(&pk, s, unit, 0, false);
	feed_recovery_changed(e);
	call_end(&c, &pk);
	return 0;
}

/* ---- recovery mode and the list ------------------------------------------- */

static struct feed_group *group_of(const struct feed_engine *e, int venue, uint16_t channel)
{
	int i;

	for (i = 0; i < FEED_MAX_LINES; i++)
		if (e->group[i] && e->group[i]->venue == venue && e->group[i]->channel == channel)
			return e->group[i];
	return 0;
}

/* Move what old holds into the fresh buffer of g (slots, all free). */
static void hold_move(struct feed_group *g, struct feed_hold *old)
{
	uint32_t u;

	for (u = 0; u < g->units; u++) {
		struct feed_stream *s = &g->stream[u];
		uint32_t link = s->hold_head, prev = 0;

		s->hold_head = s->hold_tail = 0;
		while (link) {
			struct feed_hold *from = &old[link - 1];
			uint32_t to = g->hold_free;

			g->hold_free = slot(g, to)->next;
			g->hold_used++;
			link = from->next;
			*slot(g, to) = *from;
			slot(g, to)->next = 0;
			if (prev)
				slot(g, prev)->next = to;
			else
				s->hold_head = to;
			s->hold_tail = to;
			prev = to;
		}
	}
}

/* The group's venue lock (feed_engine_config): a hold buffer swap. */
static void lock_venue(struct feed_engine *e, const struct feed_group *g)
{
	if (e->cfg.lock_venue)
		e->cfg.lock_venue(g->venue);
}

static void unlock_venue(struct feed_engine *e, const struct feed_group *g)
{
	if (e->cfg.unlock_venue)
		e->cfg.unlock_venue(g->venue);
}

/* Swap in a buffer of slots (allocated by the caller): 0, or -FEED_ENOSPC when it is too small. */
static int hold_swap(struct feed_engine *e, struct feed_group *g, struct feed_hold *mem,
		     uint32_t slots, bool recovery, struct feed_hold **old)
{
	struct feed_group tmp;

	if (g->hold_used > slots)
		return -FEED_ENOSPC;
	*old = g->hold;
	tmp = *g;
	g->hold = mem;
	g->hold_slots = slots;
	feed_hold_init(g);
	hold_move(g, tmp.hold);
	g->recovery = recovery;
	feed_recovery_changed(e);
	return 0;
}

int feed_recovery_enable(struct feed_engine *e, int venue, uint16_t channel, uint32_t slots)
{
	struct feed_group *g = group_of(e, venue, channel);
	struct feed_hold *mem, *old = 0;
	int rc;

	if (!g)
		return -FEED_ENOENT;
	if (!slots)
		slots = e->cfg.recovery_slots ? e->cfg.recovery_slots : FEED_RECOVERY_DEFAULT_SLOTS;
	if (slots < e->cfg.hold_packets || slots > FEED_RECOVERY_MAX_SLOTS)
		return -FEED_EINVAL;
	mem = e->cfg.alloc((size_t)slots * sizeof(*mem));
	if (!mem)
		return -FEED_ENOMEM;
	lock_venue(e, g);
	rc = hold_swap(e, g, mem, slots, true, &old);
	unlock_venue(e, g);
	e->cfg.free(rc ? mem : old);
	return rc;
}

int feed_recovery_disable(struct feed_engine *e, int venue, uint16_t channel, uint64_t now,
			  struct wb_ring_producer *out)
{
	struct feed_group *g = group_of(e, venue, channel);
	uint32_t slots = e->cfg.hold_packets;
	struct feed_hold *mem, *old = 0;
	struct feed_packet pk;
	struct call_ctx c;
	uint32_t u;
	int rc;

	if (!g)
		return -FEED_ENOENT;
	if (!g->recovery)
		return 0;
	mem = e->cfg.alloc((size_t)slots * sizeof(*mem));
	if (!mem)
		return -FEED_ENOMEM;
	lock_venue(e, g);
	if (g->nlines) {
		group_packet(&pk, e, g, now, out);
		call_begin(&c, out);
		for (u = 0; u < g->units; u++)
			if (g->stream[u].rec || g->stream[u].held)
				give_up(&pk, &g->stream[u], (uint8_t)u);
		call_end(&c, &pk);
	}
	rc = hold_swap(e, g, mem, slots, false, &old);
	unlock_venue(e, g);
	e->cfg.free(rc ? mem : old);
	return rc;
}

static void list_entry(const struct feed_engine *e, const struct feed_group *g, uint32_t unit,
		       struct feed_recovery_stream *o)
{
	const struct feed_stream *s = &g->stream[unit];
	uint64_t target;

	__builtin_memset(o, 0, sizeof(*o));
	o->venue = g->venue;
	o->protocol = g->protocol;
	o->unit = (uint8_t)unit;
	o->state = s->rec;
	o->channel = g->channel;
	o->line = g->line[0];
	o->episode = s->rec_episode;
	o->held = s->held;
	o->next_seq = s->started ? s->next_seq : 0;
	o->rec_first = s->rec_first;
	o->rec_end = s->rec_end;
	o->since = s->rec_since;
	if (s->rec == FEED_REC_GAP) {
		target = s->hold_head ? g->hold[s->hold_head - 1].frame.seq : ~0ull;
		if (s->hole_end > s->next_seq && s->hole_end < target)
			target = s->hole_end;
		if (s->rec_end > s->next_seq && s->rec_end < target)
			target = s->rec_end;
		o->missing_first = s->next_seq;
		o->missing_count = target != ~0ull && target > s->next_seq ? target - s->next_seq : 0;
	}
	if (s->has_session) {
		__builtin_memcpy(o->session, &s->session, 8);
		__builtin_memcpy(o->session + 8, &s->session_tail, 2);
		o->has_session = 1;
	}
	o->gaps = s->rc_gaps;
	o->filled = s->rc_filled;
	o->unrecoverable = s->rc_unrecoverable;
	o->messages = s->rc_messages;
	o->lost = s->rc_lost;
	o->snapshots = s->rc_snapshots;
	(void)e;
}

int feed_recovery_list(const struct feed_engine *e, struct feed_recovery_stream *out, int max,
		       bool all)
{
	return feed_recovery_list_venue(e, -1, out, max, all);
}

/* venue -1: every venue's groups. */
int feed_recovery_list_venue(const struct feed_engine *e, int venue,
			     struct feed_recovery_stream *out, int max, bool all)
{
	int i, n = 0;
	uint32_t u;

	for (i = 0; i < FEED_MAX_LINES; i++) {
		const struct feed_group *g = e->group[i];

		if (!g || !g->nlines || !g->recovery || (venue >= 0 && g->venue != venue))
			continue;
		if (!all && !g->recovering)
			continue;
		for (u = 0; u < g->units; u++) {
			const struct feed_stream *s = &g->stream[u];

			if (all ? !(s->started || s->rec || s->rc_gaps) : !s->rec)
				continue;
			if (n < max)
				list_entry(e, g, u, &out[n]);
			n++;
		}
	}
	return n;
}

const struct feed_fill_hist *feed_recovery_fill_times(const struct feed_engine *e, int line)
{
	if (line < 0 || line >= FEED_MAX_LINES || !feed_line_in_use(&e->lines[line]))
		return 0;
	return &e->group[e->lines[line].group]->fill;
}

uint16_t feed_instrument_stream(const struct feed_engine *e, int venue, uint16_t inst)
{
	if (venue < 0 || venue >= FEED_SOURCE_COUNT || !e->venue[venue] ||
	    inst >= FEED_MAX_INSTRUMENTS)
		return 0;
	return e->venue[venue]->stream_of[inst];
}

uint16_t feed_stream_key(const struct feed_engine *e, int line, uint8_t unit)
{
	if (line < 0 || line >= FEED_MAX_LINES || !feed_line_in_use(&e->lines[line]) ||
	    !e->group[e->lines[line].group])
		return 0;
	return feed_stream_id(e->group[e->lines[line].group], unit);
}
