/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The snapshot servers' order image (see order_image.h). */
#include "sim/order_image.h"

#include <stdlib.h>
#include <string.h>

static uint64_t id_hash(uint64_t id)
{
	return id * 0x9e3779b97f4a7c15ull;
}

struct image_order *order_image_find(struct order_image *im, uint64_t id)
{
	if (!im->slots)
		return NULL;
	for (size_t i = id_hash(id) & (im->slots - 1); im->slot[i]; i = (i + 1) & (im->slots - 1))
		if (im->o[im->slot[i] - 1].id == id)
			return &im->o[im->slot[i] - 1];
	return NULL;
}

static int grow_slots(struct order_image *im)
{
	size_t slots = im->slots ? im->slots * 2 : 1u << 16;
	uint32_t *slot = calloc(slots, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t k = 0; k < im->n; k++) {
		size_t i = id_hash(im->o[k].id) & (slots - 1);

		while (slot[i])
			i = (i + 1) & (slots - 1);
		slot[i] = (uint32_t)(k + 1);
	}
	free(im->slot);
	im->slot = slot;
	im->slots = slots;
	return 0;
}

struct image_order *order_image_add(struct order_image *im, uint64_t id)
{
	struct image_order *o = order_image_find(im, id);
	size_t i;

	if (!o) {
		if ((im->n + 1) * 2 > im->slots && grow_slots(im))
			return NULL;
		if (im->n == im->cap) {
			size_t cap = im->cap ? im->cap * 2 : 4096;
			struct image_order *m = realloc(im->o, cap * sizeof(*m));

			if (!m)
				return NULL;
			im->o = m;
			im->cap = cap;
		}
		o = &im->o[im->n++];
		for (i = id_hash(id) & (im->slots - 1); im->slot[i]; i = (i + 1) & (im->slots - 1))
			;
		im->slot[i] = (uint32_t)im->n;
	}
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->live = true;
	o->stamp = ++im->stamp;
	return o;
}

void order_image_restamp(struct order_image *im, struct image_order *o)
{
	o->stamp = ++im->stamp;
}

int order_image_by_stamp(const void *a, const void *b)
{
	const struct image_order *x = *(const struct image_order *const *)a;
	const struct image_order *y = *(const struct image_order *const *)b;

	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

int order_image_by_key_then_stamp(const void *a, const void *b)
{
	const struct image_order *x = *(const struct image_order *const *)a;
	const struct image_order *y = *(const struct image_order *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return order_image_by_stamp(a, b);
}

long order_image_live(const struct order_image *im,
		      bool (*keep)(const struct image_order *o, const void *ctx), const void *ctx,
		      int (*cmp)(const void *a, const void *b), struct image_order ***out)
{
	struct image_order **live = malloc((im->n + 1) * sizeof(*live));
	size_t n = 0;

	*out = live;
	if (!live)
		return -1;
	for (size_t i = 0; i < im->n; i++)
		if (im->o[i].live && (!keep || keep(&im->o[i], ctx)))
			live[n++] = &im->o[i];
	qsort(live, n, sizeof(*live), cmp ? cmp : order_image_by_stamp);
	return (long)n;
}

void order_image_free(struct order_image *im)
{
	free(im->o);
	free(im->slot);
	memset(im, 0, sizeof(*im));
}
