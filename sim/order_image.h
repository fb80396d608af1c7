/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The order image every snapshot server builds from the capture: the book
 * of live orders it restates (GLIMPSE's Add Orders, a Spin, an XDP
 * Refresh). Orders by id in one table (open addressing over a dense array);
 * each has a stamp, its place in its queue, that a server renews when an
 * order loses its place, and the fields the server restates it with. A
 * server applies its protocol's messages to it and asks for the live
 * orders in its order.
 */
#ifndef WIREBOOK_SIM_ORDER_IMAGE_H
#define WIREBOOK_SIM_ORDER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_EXTRA 40		/* the longest add a server keeps whole (ITCH 'F') */

struct image_order {
	uint64_t id;
	uint64_t stamp;		/* its place in its queue: lower is older */
	uint32_t key;		/* its symbol, as the server names it (XDP SymbolIndex) */
	uint32_t qty;
	int64_t price;
	uint8_t side, flags;
	bool live;
	uint8_t extra_len;
	uint8_t extra[IMAGE_EXTRA];	/* what else restates it: an add message, a symbol, a firm */
};

struct order_image {
	struct image_order *o;	/* in the order they were first added */
	size_t n, cap;
	uint32_t *slot;		/* id -> index + 1 (0: empty) */
	size_t slots;
	uint64_t stamp;		/* the last stamp given */
};

/* The order of id, live or not, or NULL. */
struct image_order *order_image_find(struct order_image *im, uint64_t id);

/*
 * An order of id at the back of its queue (a new stamp), live, its fields
 * zero: a new one, or the one of that id made over. NULL: no memory.
 */
struct image_order *order_image_add(struct order_image *im, uint64_t id);

/* The order loses its place in its queue. */
void order_image_restamp(struct order_image *im, struct image_order *o);

/*
 * The live orders that keep (NULL: all) takes, sorted by cmp (NULL: by
 * stamp), into *out (malloc'd, the caller frees it): their count, or -1
 * when out of memory.
 */
long order_image_live(const struct order_image *im,
		      bool (*keep)(const struct image_order *o, const void *ctx), const void *ctx,
		      int (*cmp)(const void *a, const void *b), struct image_order ***out);

/* qsort comparators over struct image_order *: by stamp; by key, then stamp. */
int order_image_by_stamp(const void *a, const void *b);
int order_image_by_key_then_stamp(const void *a, const void *b);

void order_image_free(struct order_image *im);

#endif /* WIREBOOK_SIM_ORDER_IMAGE_H */
