/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-export's tables: a table is a row struct described column by column,
 * written as CSV (one file a table in a directory) or HDF5 (one compound
 * dataset a table in one file) from the same description.
 */
#ifndef WIREBOOK_EXPORT_TABLE_H
#define WIREBOOK_EXPORT_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum col_type {
	COL_U64,
	COL_U32,
	COL_U8,
	COL_PRICE,	/* int64 in 1e-8 dollars: CSV dollars, empty for 0; HDF5 int64 */
	COL_QTY,	/* uint64: CSV empty for 0 (a level that is not there) */
	COL_CHAR,	/* one character: CSV empty for a space or 0 */
	COL_STR,	/* char[size], NUL-terminated or full */
	COL_VENUES,	/* uint32 venue mask: CSV names ("NASDAQ BZX"), HDF5 the mask */
	COL_I64,	/* signed 64-bit: timestamps, so that a difference never wraps */
};

#define TABLE_MAX_COLS 48

struct col {
	char name[24];
	uint8_t type;		/* enum col_type */
	uint8_t size;		/* COL_STR: bytes */
	uint16_t off;		/* offset in the row struct */
};

struct table_file;

struct table {
	const char *name;
	struct col cols[TABLE_MAX_COLS];
	unsigned ncols;
	size_t row_size;
	uint64_t rows;
	/*
	 * Indexed by symbol (table_row_keyed): in HDF5 the rows of a segment
	 * (up to segment_rows of them, in decode order within a symbol) are
	 * written symbol by symbol, and NAME_index says where each symbol's
	 * run is (symbol, first, count; one run per symbol and segment), so
	 * that reading one symbol reads its runs, not the day. CSV keeps
	 * decode order.
	 */
	int keyed;
	unsigned key_col;	/* the column naming the key (the symbol) */
	struct table_file *f;	/* the sink's state */
};

/* What every file says of itself: HDF5 attributes of the file (and of each
 * date's group: trading_date), a comment line atop each CSV file. */
#define TABLE_META_MAX 16
struct table_meta {
	unsigned n;
	struct {
		const char *name;
		const char *const *values;	/* a list of nvalues strings, or one */
		unsigned nvalues;
		int64_t number;			/* when values is NULL */
	} item[TABLE_META_MAX];
	int deflate;			/* HDF5: deflate level 1-9 after shuffle; 0 none */
	uint64_t segment_rows;		/* HDF5 keyed tables: rows sorted at a time */
};

void table_meta_number(struct table_meta *m, const char *name, int64_t v);
void table_meta_strings(struct table_meta *m, const char *name, const char *const *v, unsigned n);

#define TABLE_COL(t, row_type, field, typ) \
	table_col(t, #field, typ, sizeof(((row_type *)0)->field), offsetof(row_type, field))

void table_init(struct table *t, const char *name, size_t row_size);
void table_col(struct table *t, const char *name, int type, size_t size, size_t off);

/* The formats this build writes: "csv", and "hdf5" when built with HDF5. */
int table_format_known(const char *format);

/*
 * Open every table of ts (n of them) for writing: csv into the directory
 * PATH (made if missing), hdf5 into the file PATH. 0, or -1 with a
 * sentence in err.
 */
int tables_open(struct table *ts, unsigned n, const char *format, const char *path,
		const struct table_meta *meta, char *err, size_t errlen);
/*
 * Rows from now on belong to the trading date DATE (YYYY-MM-DD): HDF5
 * puts each date's tables in a group of that name (closing the last
 * date's); CSV says the date in a comment line. Called before the first
 * row. 0, or -1 with a sentence in err.
 */
int tables_begin_date(struct table *ts, unsigned n, const char *date, char *err, size_t errlen);
void table_row(struct table *t, const void *row);
/* A row of a keyed table, KEY its symbol's number (< 65536). */
void table_row_keyed(struct table *t, const void *row, uint16_t key);
/* Flush and close; 0, or -1 with a sentence in err. */
int tables_close(struct table *ts, unsigned n, char *err, size_t errlen);

#endif /* WIREBOOK_EXPORT_TABLE_H */
