/*
 * Order detail (issue 25): the orders at each price in time priority and
 * the queue positions of tracked orders, for readers, published in
 * shared memory beside the book (lib/shm/orders_layout.h; the reader API
 * is include/wirebook/orders.h).
 *
 * It follows the venue books rather than living in them: after the venue
 * books applied an event, order_detail_event() looks at the updates the
 * event produced, and only when they concern a symbol that carries detail
 * (or a tracked order not seen yet) does it read the venue books' verdict
 * on the event's order ids (venue_books_order) and mirror it. So the
 * venue books' hot path is unchanged, a symbol without detail costs a
 * byte load per event, and the detail is what the books hold by
 * construction. A symbol whose detail is turned on mid-day is seeded
 * from the venue books (join times unknown: 0).
 *
 * One writer: the thread that applies the venue books (builder thread 1).
 */
#ifndef WIREBOOK_ORDER_DETAIL_H
#define WIREBOOK_ORDER_DETAIL_H

#include <stdint.h>
#include "book/update.h"
#include "book/venue_book.h"
#include "wirebook/event.h"

struct order_detail;

struct order_detail_config {
	const char *shm_name;		/* the book's name; the objects are NAME.orders, NAME.orders-req */
	uint32_t capacity;		/* instrument ids < this (the venue books' max_instruments) */
	uint32_t order_slots;		/* 0: 1 Mi; at most 16 Mi */
	uint32_t track_slots;		/* 0: 4096 */
	int all;			/* every symbol carries detail */
};

/* NULL + *err (-errno) on failure. */
struct order_detail *order_detail_create(const struct order_detail_config *cfg, int *err);
/* Retire and unlink the objects. */
void order_detail_destroy(struct order_detail *od);

/*
 * Before the events start (or from the writer): the symbols that carry
 * detail, as a watch list of tickers (comma separated) whose ids are
 * learned from the SYMBOL events, or by id. 0 ok, -1 bad ticker.
 */
int order_detail_watch(struct order_detail *od, const char *tickers);
/* 1 when a symbol of this ticker (8 bytes, space-padded, as a SYMBOL
 * event gives it) gets detail as it is defined: it is on the watch list. */
int order_detail_watches(const struct order_detail *od, const char ticker[8]);
/* Turn a symbol's detail on (seeded from vb) or off. 0 ok, -1 bad id. */
int order_detail_set(struct order_detail *od, const struct venue_books *vb, uint16_t instrument, int on);
/* Track (venue, id)'s queue position. 0 ok, -1 no slot left. */
int order_detail_track(struct order_detail *od, const struct venue_books *vb, uint8_t venue, uint64_t id);
void order_detail_untrack(struct order_detail *od, uint8_t venue, uint64_t id);
/*
 * A reader's virtual order (wirebook/orders.h, wb_virtual_place): placed
 * in a free tracking slot, resting or refused (marketable); -1 when bad
 * or no slot is free. Cancel: a live one is cancelled, a done one's slot
 * freed; -1 unknown id.
 */
int order_detail_virtual_place(struct order_detail *od, const struct venue_books *vb, uint64_t id,
			       uint16_t instrument, uint8_t venue, uint8_t side, int64_t price, uint32_t qty);
int order_detail_virtual_cancel(struct order_detail *od, uint64_t id);
/* Serve readers' requests (one load when there are none): call between batches. */
void order_detail_poll(struct order_detail *od, const struct venue_books *vb);
/* The source ended (enum wb_shm_state). */
void order_detail_set_state(struct order_detail *od, uint32_t state);

/* What the venue books' apply of ev produced (k updates): mirror it where detail is kept. */
void order_detail_apply(struct order_detail *od, const struct venue_books *vb, const struct wb_event *ev,
			const struct book_update *ups, unsigned k);

struct order_detail_fast {
	const uint8_t *on;		/* [capacity]: 1 when the instrument carries detail */
	uint32_t capacity;
	uint32_t pending;		/* tracked orders not seen yet (unknown_add/unknown_drop keep it) */
	uint32_t symbols_on;		/* symbols carrying detail: 0, nothing to prefetch */
};

static inline const struct order_detail_fast *order_detail_fast(const struct order_detail *od)
{
	return (const struct order_detail_fast *)od;
}

/*
 * Optional: warm what order_detail_event() will need, in stages run on
 * events ahead of the one applied, as venue_books_prefetch_stage: stage
 * 0 (16 events ahead) the order's index bucket, an ADD's price bucket;
 * 1 (8 ahead) the order's slot and level, an ADD's level; 2 (3 ahead)
 * its neighbours in the queue, the level's last order and the slot an
 * ADD takes. (Without it the detail cost ~1.5x more time on the
 * generated day; 16/8/3 and 24/12/4 were within the shared machine's
 * noise of each other.)
 *
 * One call per event applied, before its order_detail_event(), with the
 * event ORDER_DETAIL_PREFETCH_AHEAD ahead of it, or NULL when that one
 * is not readable yet: the call runs stage 0 on it and the later stages
 * on the events it was given 8 and 13 calls earlier, from what stage 0
 * kept of them (its filter's verdict, hashes, what stage 1 found), so an
 * event is filtered and hashed once, not at every stage. What it keeps
 * are hints about the events, not book state, hence the const.
 */
#define ORDER_DETAIL_PREFETCH_AHEAD 16u
#define ORDER_DETAIL_PREFETCH_AHEAD1 8u
#define ORDER_DETAIL_PREFETCH_AHEAD2 3u
void order_detail_lookahead_detail(const struct order_detail *od, const struct wb_event *ev);

/* Inline, nothing at all while no symbol carries detail. */
static inline void order_detail_lookahead(const struct order_detail *od, const struct wb_event *ev)
{
	if (order_detail_fast(od)->symbols_on)
		order_detail_lookahead_detail(od, ev);
}

/* The live path's check, inline: most events of most symbols end here. */
static inline void order_detail_event(struct order_detail *od, const struct venue_books *vb,
				      const struct wb_event *ev, const struct book_update *ups, unsigned k)
{
	const struct order_detail_fast *f = order_detail_fast(od);
	uint16_t i;

	if (!k)
		return;
	i = ups[0].instrument;
	if (__builtin_expect(ups[0].kind == BOOK_UP_LEVEL, 1)) {
		if (__builtin_expect(i < f->capacity && !f->on[i] && !f->pending, 1))
			return;
	} else if (ups[0].kind != BOOK_UP_CLEAR && ups[0].kind != BOOK_UP_SYMBOL) {
		return;
	}
	order_detail_apply(od, vb, ev, ups, k);
}

#endif /* WIREBOOK_ORDER_DETAIL_H */
