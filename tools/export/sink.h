/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-export's order-level formats (--format dbn, --format hftbacktest):
 * instead of tables, every order event of a direct feed becomes a few
 * order actions in Databento's MBO vocabulary (Add, Cancel, Modify, cleaR,
 * Trade, Fill), which each writer encodes its own way. The writers see
 * every event twice, before the venue books apply it (to look its order
 * up and to take the book a trade met) and after (the book it left).
 */
#ifndef WIREBOOK_EXPORT_SINK_H
#define WIREBOOK_EXPORT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "book/update.h"
#include "book/venue_book.h"
#include "wirebook/event.h"

#define SINK_ACTIONS_MAX 4
#define SINK_PRICE_NONE INT64_MAX

struct order_action {
	char action;		/* 'A' add, 'C' cancel, 'M' modify, 'R' clear, 'T' trade, 'F' fill */
	char side;		/* 'B' buy, 'A' sell (ask), 'N' none or unknown */
	uint16_t instrument;
	uint32_t size;		/* A, M: displayed size; C: size removed; T, F: size traded */
	uint32_t remaining;	/* C: the order's size after it (0: the order is gone) */
	int64_t price;		/* 1e-8 dollars; SINK_PRICE_NONE: none */
	uint64_t order_id;	/* 0 for T and R */
};

struct sink_event {
	const struct wb_event *ev;
	const struct book_update *up;	/* after: the venue books' updates */
	unsigned nup;
	unsigned n;
	struct order_action act[SINK_ACTIONS_MAX];
};

/*
 * The actions of one event, looked up in vb before it applies: 0 for an
 * event that changes no order (and for a clear of instrument 0, which the
 * caller expands). An unknown order's side is 'N' and its price NONE.
 */
unsigned order_actions(const struct venue_books *vb, const struct wb_event *ev,
		       struct order_action *out);

struct export_sink;

/* 1 for the formats a sink writes (dbn, hftbacktest). */
int export_sink_format(const char *format);
/* 1 when a dbn --schema LIST names only known schemas. */
int export_sink_schemas_known(const char *list);
/* OUTPUT is a directory (made if missing). schemas: dbn's --schema list or NULL. */
struct export_sink *export_sink_open(const char *format, const char *path, const char *schemas,
				     char *err, size_t errlen);
void export_sink_before(struct export_sink *s, const struct venue_books *vb,
			const struct wb_event *ev);
void export_sink_after(struct export_sink *s, const struct venue_books *vb,
		       const struct wb_event *ev, const struct book_update *up, unsigned nup);
/* ticker: [instrument] -> symbol. 0, or -1 with a sentence in err. Frees s. */
int export_sink_close(struct export_sink *s, const char (*ticker)[9], char *err, size_t errlen);
uint64_t export_sink_rows(const struct export_sink *s);

#endif /* WIREBOOK_EXPORT_SINK_H */
