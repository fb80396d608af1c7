/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The order-id filter (see order_filter.h). Freestanding. */
#include "order_filter.h"

uint32_t order_filter_slot_count(uint32_t capacity)
{
	uint64_t want, slots = 16;

	if (!capacity)
		capacity = ORDER_FILTER_DEFAULT_CAPACITY;
	if (capacity > ORDER_FILTER_MAX_CAPACITY)
		capacity = ORDER_FILTER_MAX_CAPACITY;
	want = (uint64_t)capacity + capacity / 2;
	while (slots < want)
		slots <<= 1;
	return (uint32_t)slots;
}

static uint32_t log2_of(uint32_t pow2)
{
	uint32_t n = 0;

	while ((1u << n) < pow2)
		n++;
	return n;
}

void order_filter_init(struct order_filter *f, void *mem, uint32_t capacity)
{
	uint32_t count;

	__builtin_memset(f, 0, sizeof(*f));
	if (!capacity)
		capacity = ORDER_FILTER_DEFAULT_CAPACITY;
	if (capacity > ORDER_FILTER_MAX_CAPACITY)
		capacity = ORDER_FILTER_MAX_CAPACITY;
	if (!mem)
		return;		/* capacity 0: every insert fails, visibly */
	count = order_filter_slot_count(capacity);
	f->slots = mem;
	f->home_count = (uint8_t *)(f->slots + count);
	f->mask = count - 1;
	f->shift = 64 - log2_of(count);
	f->capacity = capacity;
}

void order_filter_clear(struct order_filter *f)
{
	if (f->slots) {
		__builtin_memset(f->slots, 0, (size_t)(f->mask + 1) * sizeof(*f->slots));
		__builtin_memset(f->home_count, 0, (size_t)(f->mask + 1) >> ORDER_FILTER_GROUP_SHIFT);
	}
	f->live = 0;
	__builtin_memset(f->live_in_unit, 0, sizeof(f->live_in_unit));
}

static void count_home(struct order_filter *f, uint32_t home, int delta)
{
	uint8_t *c = &f->home_count[home >> ORDER_FILTER_GROUP_SHIFT];

	if (*c != ORDER_FILTER_COUNT_STUCK)
		*c = (uint8_t)(*c + delta);
}

struct order_filter_entry *order_filter_insert(struct order_filter *f, uint64_t order_id,
					       uint16_t instrument, uint8_t unit, uint32_t qty)
{
	struct order_filter_entry *e;
	uint32_t home, i;

	if (wb_unlikely(!f->slots || !instrument))
		return 0;
	home = i = order_filter_home(f, order_id);
	for (;;) {
		e = &f->slots[i];
		if (!e->instrument)
			break;
		if (e->order_id == order_id) {
			f->live_in_unit[e->unit]--;
			goto fill;
		}
		i = (i + 1) & f->mask;
	}
	if (wb_unlikely(f->live >= f->capacity))
		return 0;
	f->live++;
	count_home(f, home, 1);
	e->order_id = order_id;
fill:
	e->qty = qty;
	e->instrument = instrument;
	e->unit = unit;
	f->live_in_unit[unit]++;
	return e;
}

/*
 * Remove the entry at slot hole by shifting later entries of the same
 * probe run back into it (Knuth 6.4, algorithm R): an entry moves when
 * its home slot is not cyclically inside (hole, its slot]. Entries only
 * ever move towards their home, never past a slot a lookup would stop at.
 */
static void erase_slot(struct order_filter *f, uint32_t hole)
{
	uint32_t j = hole;

	f->live--;
	f->live_in_unit[f->slots[hole].unit]--;
	count_home(f, order_filter_home(f, f->slots[hole].order_id), -1);
	for (;;) {
		struct order_filter_entry *e;
		uint32_t home;

		j = (j + 1) & f->mask;
		e = &f->slots[j];
		if (!e->instrument)
			break;
		home = order_filter_home(f, e->order_id);
		if (((j - home) & f->mask) >= ((j - hole) & f->mask)) {
			f->slots[hole] = *e;
			hole = j;
		}
	}
	__builtin_memset(&f->slots[hole], 0, sizeof(f->slots[hole]));
}

void order_filter_erase(struct order_filter *f, struct order_filter_entry *e)
{
	erase_slot(f, (uint32_t)(e - f->slots));
}

/*
 * A single pass in slot order. Erasing at i only moves entries from slots
 * after i (in probe order) into i and the holes after it, so re-examining
 * slot i after each erase sees every entry once; entries pulled around the
 * end of the table come from slots already passed, which hold no entry of
 * this unit any more.
 */
uint32_t order_filter_clear_unit(struct order_filter *f, uint8_t unit)
{
	uint32_t i, removed = 0;

	if (!f->slots)
		return 0;
	for (i = 0; i <= f->mask && f->live_in_unit[unit]; i++) {
		while (f->slots[i].instrument && f->slots[i].unit == unit) {
			erase_slot(f, i);
			removed++;
		}
	}
	return removed;
}

void order_filter_displacement(const struct order_filter *f, uint64_t *sum, uint32_t *max)
{
	uint32_t i;

	*sum = 0;
	*max = 0;
	if (!f->slots)
		return;
	for (i = 0; i <= f->mask; i++) {
		const struct order_filter_entry *e = &f->slots[i];
		uint32_t d;

		if (!e->instrument)
			continue;
		d = (i - order_filter_home(f, e->order_id)) & f->mask;
		*sum += d;
		if (d > *max)
			*max = d;
	}
}
