/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The fills and queue tables of a simulation's run (simout.h): each a row
 * struct described column by column like wb-export's own tables, and the
 * CSV a run wrote parsed by the same description, so that its columns,
 * their order and their types are said in one place.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/simout.h"

/* examples/join_bid --fills: a row per fill of a virtual order */
struct row_fill {
	uint32_t order;			/* the run's order number, from 0 */
	uint64_t virtual_id;		/* wb_virtual_place's id (unique per run) */
	uint64_t event;			/* the stream position the strategy saw it at */
	char symbol[9], venue[12], side;
	int64_t price;
	uint64_t fill_qty, filled_qty, left_qty;
	int64_t fill_exch_ts, fill_recv_ts;	/* of the event that filled it */
	uint64_t fill_seq;
	char state[16];
};

/* examples/join_bid --queue: a row per change of an order's place in the queue */
struct row_queue {
	uint32_t order;
	uint64_t event;
	char state[16];
	uint64_t shares_ahead;
	uint32_t orders_ahead;
	uint64_t shares_behind;
	uint32_t orders_behind;
	uint64_t level_qty;
	uint32_t level_orders;
	uint64_t left_qty, filled_qty;
};

struct sim_rows {
	struct table t;		/* the description (never opened: a copy is) */
	char *rows;
	uint64_t n, cap;
};

struct sim_out {
	struct sim_rows table[SIM_TABLES];
	unsigned n;
};

static void define_fills(struct table *t)
{
	table_init(t, "fills", sizeof(struct row_fill));
	TABLE_COL(t, struct row_fill, order, COL_U32);
	TABLE_COL(t, struct row_fill, virtual_id, COL_U64);
	TABLE_COL(t, struct row_fill, event, COL_U64);
	TABLE_COL(t, struct row_fill, symbol, COL_STR);
	TABLE_COL(t, struct row_fill, venue, COL_STR);
	TABLE_COL(t, struct row_fill, side, COL_CHAR);
	TABLE_COL(t, struct row_fill, price, COL_PRICE);
	TABLE_COL(t, struct row_fill, fill_qty, COL_U64);
	TABLE_COL(t, struct row_fill, filled_qty, COL_U64);
	TABLE_COL(t, struct row_fill, left_qty, COL_U64);
	TABLE_COL(t, struct row_fill, fill_exch_ts, COL_I64);
	TABLE_COL(t, struct row_fill, fill_recv_ts, COL_I64);
	TABLE_COL(t, struct row_fill, fill_seq, COL_U64);
	TABLE_COL(t, struct row_fill, state, COL_STR);
}

static void define_queue(struct table *t)
{
	table_init(t, "queue", sizeof(struct row_queue));
	TABLE_COL(t, struct row_queue, order, COL_U32);
	TABLE_COL(t, struct row_queue, event, COL_U64);
	TABLE_COL(t, struct row_queue, state, COL_STR);
	TABLE_COL(t, struct row_queue, shares_ahead, COL_U64);
	TABLE_COL(t, struct row_queue, orders_ahead, COL_U32);
	TABLE_COL(t, struct row_queue, shares_behind, COL_U64);
	TABLE_COL(t, struct row_queue, orders_behind, COL_U32);
	TABLE_COL(t, struct row_queue, level_qty, COL_U64);
	TABLE_COL(t, struct row_queue, level_orders, COL_U32);
	TABLE_COL(t, struct row_queue, left_qty, COL_U64);
	TABLE_COL(t, struct row_queue, filled_qty, COL_U64);
}

/* Decimal digits to *v, at most max: 0, or -1 (none, other characters, too large). */
static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*v = n;
	return 0;
}

static int parse_i64(const char *s, int64_t *v)
{
	int neg = *s == '-';
	uint64_t u;

	if (parse_u64(s + neg, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &u) < 0)
		return -1;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* Dollars ("12.34", "-0.0001", "12") exactly, in 1e-8 dollars. */
static int parse_price(const char *s, int64_t *v)
{
	char whole[24], *dot = strchr(s, '.');
	uint64_t w, frac = 0;
	int neg = *s == '-', digits = 0;

	if (!dot) {
		if (parse_u64(s + neg, (uint64_t)INT64_MAX / 100000000u, &w) < 0)
			return -1;
	} else {
		if ((size_t)(dot - s - neg) >= sizeof(whole) || dot == s + neg)
			return -1;
		memcpy(whole, s + neg, (size_t)(dot - s - neg));
		whole[dot - s - neg] = 0;
		if (parse_u64(whole, (uint64_t)INT64_MAX / 100000000u - 1, &w) < 0)
			return -1;
		for (const char *p = dot + 1; *p; p++, digits++)
			if (*p < '0' || *p > '9' || digits == 8)
				return -1;	/* finer than wirebook's prices */
			else
				frac = frac * 10 + (uint64_t)(*p - '0');
		for (; digits < 8; digits++)
			frac *= 10;
	}
	*v = (int64_t)(w * 100000000u + frac);
	if (neg)
		*v = -*v;
	return 0;
}

/* One field into the row at the column's place; 0, or -1 when it is not the column's type. */
static int parse_field(const struct col *c, const char *s, char *row)
{
	char *f = row + c->off;
	uint64_t u;
	int64_t i;
	uint32_t u32;

	switch (c->type) {
	case COL_U64:
	case COL_QTY:
		if (!*s && c->type == COL_QTY)
			s = "0";	/* wb-export's CSV: 0 shares is an empty field */
		if (parse_u64(s, UINT64_MAX, &u) < 0)
			return -1;
		memcpy(f, &u, 8);
		return 0;
	case COL_U32:
		if (parse_u64(s, UINT32_MAX, &u) < 0)
			return -1;
		u32 = (uint32_t)u;
		memcpy(f, &u32, 4);
		return 0;
	case COL_U8:
		if (parse_u64(s, UINT8_MAX, &u) < 0)
			return -1;
		*(uint8_t *)f = (uint8_t)u;
		return 0;
	case COL_I64:
		if (parse_i64(s, &i) < 0)
			return -1;
		memcpy(f, &i, 8);
		return 0;
	case COL_PRICE:
		i = 0;
		if (*s && parse_price(s, &i) < 0)
			return -1;
		memcpy(f, &i, 8);
		return 0;
	case COL_CHAR:
		if (strlen(s) > 1)
			return -1;
		*f = s[0];
		return 0;
	case COL_STR:
		if (strlen(s) > c->size)
			return -1;
		memset(f, 0, c->size);
		memcpy(f, s, strlen(s));
		return 0;
	default:
		return -1;	/* no simulation column is a venue mask */
	}
}

static const char *type_words(int type)
{
	switch (type) {
	case COL_U32: return "an unsigned 32-bit number";
	case COL_U8: return "a number 0-255";
	case COL_I64: return "a signed 64-bit number";
	case COL_PRICE: return "a price in dollars (at most 8 decimals)";
	case COL_CHAR: return "one character";
	case COL_STR: return "a string of at most its size";
	default: return "an unsigned 64-bit number";
	}
}

/* Split LINE at commas in place: the number of fields (up to max). */
static unsigned split(char *line, char **field, unsigned max)
{
	unsigned n = 0;

	line[strcspn(line, "\r\n")] = 0;
	for (char *p = line; n < max;) {
		field[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = 0;
	}
	return n;
}

static int fail(char *err, size_t errlen, const char *path, unsigned long line, const char *fmt,
		const char *a, const char *b)
{
	int n = snprintf(err, errlen, "%s:%lu: ", path, line);

	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, fmt, a, b);
	return -1;
}

static int load(struct sim_rows *r, const char *path, char *err, size_t errlen)
{
	const struct table *t = &r->t;
	FILE *f = fopen(path, "r");
	char *line = NULL, *field[TABLE_MAX_COLS + 1], cols[TABLE_MAX_COLS * 25];
	size_t cap = 0;
	unsigned long lineno = 0;
	int header = 0, rc = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	cols[0] = 0;
	for (unsigned i = 0; i < t->ncols; i++)
		snprintf(cols + strlen(cols), sizeof(cols) - strlen(cols), "%s%s", i ? "," : "", t->cols[i].name);
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		unsigned n;
		char *row;

		lineno++;
		if (line[0] == '#')
			continue;	/* wb-export's own CSV says what it holds first */
		if (!header) {
			line[strcspn(line, "\r\n")] = 0;
			if (strcmp(line, cols))
				rc = fail(err, errlen, path, lineno, "not a %s table: the header must be %s", t->name, cols);
			header = 1;
			continue;
		}
		n = split(line, field, TABLE_MAX_COLS + 1);
		if (n == 1 && !field[0][0])
			continue;	/* a blank line */
		if (n != t->ncols) {
			rc = fail(err, errlen, path, lineno, "%s fields, the header names %s", n < t->ncols ? "fewer" : "more",
				  cols);
			break;
		}
		if (r->n == r->cap) {
			uint64_t want = r->cap ? r->cap * 2 : 1024;
			char *more = realloc(r->rows, want * t->row_size);

			if (!more) {
				rc = fail(err, errlen, path, lineno, "out of memory%s%s", "", "");
				break;
			}
			r->rows = more;
			r->cap = want;
		}
		row = r->rows + r->n * t->row_size;
		memset(row, 0, t->row_size);	/* padding too: the HDF5 chunks are the struct's bytes */
		for (unsigned i = 0; i < n && rc == 0; i++)
			if (parse_field(&t->cols[i], field[i], row) < 0) {
				char what[128];

				snprintf(what, sizeof(what), "column %s: '%.40s'", t->cols[i].name, field[i]);
				rc = fail(err, errlen, path, lineno, "%s is not %s", what, type_words(t->cols[i].type));
			}
		r->n++;
	}
	if (rc == 0 && ferror(f))
		rc = fail(err, errlen, path, lineno, "%s%s", strerror(errno), "");
	if (rc == 0 && !header)
		rc = fail(err, errlen, path, lineno, "empty: no header (the %s table's is %s)", t->name, cols);
	free(line);
	fclose(f);
	return rc;
}

struct sim_out *sim_out_load(const char *fills_csv, const char *queue_csv, char *err, size_t errlen)
{
	struct sim_out *s = calloc(1, sizeof(*s));
	const char *path[SIM_TABLES] = { fills_csv, queue_csv };
	void (*define[SIM_TABLES])(struct table *) = { define_fills, define_queue };

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (unsigned i = 0; i < SIM_TABLES; i++) {
		struct sim_rows *r = &s->table[s->n];

		if (!path[i])
			continue;
		define[i](&r->t);
		s->n++;
		if (load(r, path[i], err, errlen) < 0) {
			sim_out_free(s);
			return NULL;
		}
	}
	return s;
}

unsigned sim_out_define(const struct sim_out *s, struct table *ts)
{
	for (unsigned i = 0; s && i < s->n; i++)
		ts[i] = s->table[i].t;
	return s ? s->n : 0;
}

void sim_out_write(const struct sim_out *s, struct table *ts)
{
	for (unsigned i = 0; s && i < s->n; i++)
		for (uint64_t k = 0; k < s->table[i].n; k++)
			table_row(&ts[i], s->table[i].rows + k * s->table[i].t.row_size);
}

void sim_out_free(struct sim_out *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < SIM_TABLES; i++)
		free(s->table[i].rows);
	free(s);
}
