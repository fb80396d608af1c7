/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wb-export's tables (table.h): CSV files, or one HDF5 file (when built
 * with libhdf5: WB_HDF5) whose datasets are the tables, each a 1-D
 * extendible array of a compound type made from the same column list.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/table.h"
#include "feed/feed.h"
#include "wirebook/book.h"
#ifdef WB_HDF5
#include <hdf5.h>
#endif

#define CSV_LINE_MAX 4096
#define H5_BUFFER_ROWS 16384u
#define H5_CHUNK_ROWS 16384u

struct table_file {
	int hdf5;
	FILE *csv;
	char *line;
#ifdef WB_HDF5
	hid_t file;		/* shared by every table of the set */
	hid_t dset;
	hid_t mtype;		/* the row struct's layout */
	char *buf;
	unsigned buffered;
	uint64_t written;
#endif
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void table_init(struct table *t, const char *name, size_t row_size)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->row_size = row_size;
}

void table_col(struct table *t, const char *name, int type, size_t size, size_t off)
{
	struct col *c;

	if (t->ncols >= TABLE_MAX_COLS)
		return;
	c = &t->cols[t->ncols++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->type = (uint8_t)type;
	c->size = (uint8_t)size;
	c->off = (uint16_t)off;
}

int table_format_known(const char *format)
{
#ifdef WB_HDF5
	if (!strcmp(format, "hdf5"))
		return 1;
#endif
	return !strcmp(format, "csv");
}

/* ---- CSV ----------------------------------------------------------------- */

static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* 1e-8 dollars exactly, with at least the cents ("189.50", "-0.0001", "12.00"). */
static char *put_price(char *p, int64_t v)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v, frac = a % 100000000u;
	int digits = 8;

	if (v < 0)
		*p++ = '-';
	p = put_u64(p, a / 100000000u);
	while (digits > 2 && frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	*p++ = '.';
	for (int i = digits - 1; i >= 0; i--) {
		p[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	return p + digits;
}

static char *put_str(char *p, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++)
		*p++ = s[i] == ',' || s[i] == '\n' ? ' ' : s[i];
	return p;
}

static char *put_venues(char *p, uint32_t mask)
{
	int first = 1;

	for (int v = 0; v < 32; v++) {
		const char *name;

		if (!(mask >> v & 1))
			continue;
		name = v < WB_VENUE_COUNT ? wb_venue_name(v) : feed_venue_name(v);
		if (!first)
			*p++ = ' ';
		p = put_str(p, name, 16);
		first = 0;
	}
	return p;
}

static void csv_row(struct table *t, const void *row)
{
	const char *r = row;
	char *p = t->f->line;

	for (unsigned i = 0; i < t->ncols; i++) {
		const struct col *c = &t->cols[i];
		const void *f = r + c->off;
		uint64_t u;
		int64_t s;
		uint32_t u32;

		if (i)
			*p++ = ',';
		switch (c->type) {
		case COL_U64:
		case COL_QTY:
			memcpy(&u, f, 8);
			if (u || c->type == COL_U64)
				p = put_u64(p, u);
			break;
		case COL_U32:
			memcpy(&u32, f, 4);
			p = put_u64(p, u32);
			break;
		case COL_U8:
			p = put_u64(p, *(const uint8_t *)f);
			break;
		case COL_PRICE:
			memcpy(&s, f, 8);
			if (s)
				p = put_price(p, s);
			break;
		case COL_CHAR:
			if (*(const char *)f > ' ' && *(const char *)f != ',')
				*p++ = *(const char *)f;
			break;
		case COL_STR:
			p = put_str(p, f, c->size);
			break;
		case COL_VENUES:
			memcpy(&u32, f, 4);
			p = put_venues(p, u32);
			break;
		}
	}
	*p++ = '\n';
	fwrite(t->f->line, 1, (size_t)(p - t->f->line), t->f->csv);
}

static int csv_open(struct table *t, const char *dir, char *err, size_t errlen)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.csv", dir, t->name);
	t->f->csv = fopen(path, "w");
	t->f->line = malloc(CSV_LINE_MAX);
	if (!t->f->csv || !t->f->line)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	setvbuf(t->f->csv, NULL, _IOFBF, 1 << 20);
	for (unsigned i = 0; i < t->ncols; i++)
		fprintf(t->f->csv, "%s%s", i ? "," : "", t->cols[i].name);
	fputc('\n', t->f->csv);
	return 0;
}

/* ---- HDF5 ---------------------------------------------------------------- */

#ifdef WB_HDF5
static hid_t h5_col_type(const struct col *c)
{
	hid_t s;

	switch (c->type) {
	case COL_U64:
	case COL_QTY:
		return H5Tcopy(H5T_NATIVE_UINT64);
	case COL_PRICE:
		return H5Tcopy(H5T_NATIVE_INT64);
	case COL_U32:
	case COL_VENUES:
		return H5Tcopy(H5T_NATIVE_UINT32);
	case COL_U8:
		return H5Tcopy(H5T_NATIVE_UINT8);
	default:	/* COL_CHAR, COL_STR: fixed-size strings */
		s = H5Tcopy(H5T_C_S1);
		H5Tset_size(s, c->type == COL_CHAR ? 1 : c->size);
		H5Tset_strpad(s, H5T_STR_NULLPAD);
		return s;
	}
}

static int h5_open(struct table *t, hid_t file, char *err, size_t errlen)
{
	hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = H5_CHUNK_ROWS;
	struct table_file *f = t->f;
	hid_t space, dcpl, ftype;

	f->file = file;
	f->mtype = H5Tcreate(H5T_COMPOUND, t->row_size);
	for (unsigned i = 0; i < t->ncols; i++) {
		hid_t ct = h5_col_type(&t->cols[i]);

		H5Tinsert(f->mtype, t->cols[i].name, t->cols[i].off, ct);
		H5Tclose(ct);
	}
	ftype = H5Tcopy(f->mtype);
	H5Tpack(ftype);		/* no padding in the file */
	space = H5Screate_simple(1, &zero, &unlimited);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 1, &chunk);
	f->dset = H5Dcreate2(file, t->name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Tclose(ftype);
	f->buf = malloc(t->row_size * H5_BUFFER_ROWS);
	if (f->dset < 0 || f->mtype < 0 || !f->buf)
		return fail(err, errlen, "cannot create the HDF5 dataset %s", t->name);
	return 0;
}

static int h5_flush(struct table *t)
{
	struct table_file *f = t->f;
	hsize_t start = f->written, count = f->buffered, size = f->written + f->buffered;
	hid_t fs, ms;
	herr_t rc;

	if (!f->buffered)
		return 0;
	if (H5Dset_extent(f->dset, &size) < 0)
		return -1;
	fs = H5Dget_space(f->dset);
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
	ms = H5Screate_simple(1, &count, NULL);
	rc = H5Dwrite(f->dset, f->mtype, ms, fs, H5P_DEFAULT, f->buf);
	H5Sclose(ms);
	H5Sclose(fs);
	f->written += f->buffered;
	f->buffered = 0;
	return rc < 0 ? -1 : 0;
}

static void h5_row(struct table *t, const void *row)
{
	struct table_file *f = t->f;

	memcpy(f->buf + (size_t)f->buffered * t->row_size, row, t->row_size);
	if (++f->buffered == H5_BUFFER_ROWS && h5_flush(t) < 0)
		fprintf(stderr, "wb-export: writing the HDF5 dataset %s failed\n", t->name);
}

static int h5_open_all(struct table *ts, unsigned n, const char *path, char *err, size_t errlen)
{
	hid_t file, space, attr;
	long long scale = WB_PRICE_SCALE;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);	/* our messages, not HDF5's stack */
	file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (file < 0)
		return fail(err, errlen, "%s: cannot create the HDF5 file", path);
	/* Prices are int64 in units of 1e-8 dollars: divide by price_scale. */
	space = H5Screate(H5S_SCALAR);
	attr = H5Acreate2(file, "price_scale", H5T_NATIVE_LLONG, space, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(attr, H5T_NATIVE_LLONG, &scale);
	H5Aclose(attr);
	H5Sclose(space);
	for (unsigned i = 0; i < n; i++)
		if (h5_open(&ts[i], file, err, errlen) < 0)
			return -1;
	return 0;
}
#endif

/* ---- the set ------------------------------------------------------------- */

int tables_open(struct table *ts, unsigned n, const char *format, const char *path,
		char *err, size_t errlen)
{
	int hdf5 = !strcmp(format, "hdf5");

	if (!table_format_known(format))
		return fail(err, errlen, "--format %s: this build writes %s", format,
			    table_format_known("hdf5") ? "csv and hdf5" : "csv only (built without libhdf5)");
	for (unsigned i = 0; i < n; i++) {
		ts[i].f = calloc(1, sizeof(*ts[i].f));
		if (!ts[i].f)
			return fail(err, errlen, "out of memory");
		ts[i].f->hdf5 = hdf5;
	}
#ifdef WB_HDF5
	if (hdf5)
		return h5_open_all(ts, n, path, err, errlen);
#endif
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	for (unsigned i = 0; i < n; i++)
		if (csv_open(&ts[i], path, err, errlen) < 0)
			return -1;
	return 0;
}

void table_row(struct table *t, const void *row)
{
	t->rows++;
#ifdef WB_HDF5
	if (t->f->hdf5) {
		h5_row(t, row);
		return;
	}
#endif
	csv_row(t, row);
}

int tables_close(struct table *ts, unsigned n, char *err, size_t errlen)
{
	int rc = 0;
#ifdef WB_HDF5
	hid_t file = -1;
#endif

	for (unsigned i = 0; i < n; i++) {
		struct table_file *f = ts[i].f;

		if (!f)
			continue;
#ifdef WB_HDF5
		if (f->hdf5) {
			if (f->dset > 0 && h5_flush(&ts[i]) < 0)
				rc = fail(err, errlen, "writing the HDF5 dataset %s failed", ts[i].name);
			if (f->dset > 0)
				H5Dclose(f->dset);
			if (f->mtype > 0)
				H5Tclose(f->mtype);
			if (f->file > 0)
				file = f->file;
			free(f->buf);
		}
#endif
		if (f->csv && fclose(f->csv) != 0)
			rc = fail(err, errlen, "writing %s.csv: %s", ts[i].name, strerror(errno));
		free(f->line);
		free(f);
		ts[i].f = NULL;
	}
#ifdef WB_HDF5
	if (file > 0 && H5Fclose(file) < 0)
		rc = fail(err, errlen, "closing the HDF5 file failed");
#endif
	return rc;
}
