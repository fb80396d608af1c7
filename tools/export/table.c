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
#include <pthread.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef WB_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif
#endif

#define CSV_LINE_MAX 4096
#define H5_CHUNK_ROWS 8192u	/* a chunk under HDF5's 1 MB default cache for most tables */
#define H5_BUFFER_ROWS (2 * H5_CHUNK_ROWS)	/* written whole chunks at a time */
#define KEYS 65536u

struct table_file {
	int hdf5;
	FILE *csv;
	char *line;
	const struct table_meta *meta;
	int header_written;
#ifdef WB_HDF5
	hid_t file;		/* shared by every table of the set */
	hid_t group;		/* the current date's, shared too */
	hid_t dset, index;	/* index: keyed tables' (symbol, first, count) runs */
	hid_t mtype;		/* the row struct's layout */
	hid_t itype;		/* an index row's */
	char *buf;
	uint64_t buffered, cap;	/* rows in buf; keyed: up to the segment's */
	uint16_t *keys;		/* keyed: each buffered row's */
	uint32_t *order;	/* keyed: the rows of a segment, sorted by key */
	struct h5_writer *w;	/* the thread that makes every HDF5 call */
	uint64_t written, index_written;	/* rows handed to the dataset so far */
	/* direct: whole chunks shuffled and deflated here (by the writer's
	 * compressor threads) and stored with H5Dwrite_chunk, bypassing
	 * HDF5's own filter pipeline; the chunk filling up on the writer */
	int direct;
	uint64_t chunk_rows, chunk_fill;
	char *chunk;
	size_t chunk_cap;
	struct cz_pool *cz;	/* the writer's compressors, shared by the set */
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

static void csv_header(struct table *t, const char *date);

static void csv_row(struct table *t, const void *row)
{
	const char *r = row;
	char *p = t->f->line;

	if (!t->f->header_written)
		csv_header(t, NULL);

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
		case COL_I64:
			memcpy(&s, f, 8);
			if (s < 0)
				*p++ = '-';
			p = put_u64(p, s < 0 ? -(uint64_t)s : (uint64_t)s);
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
	return 0;
}

/* The file's meta as one comment line ("# wirebook export: name=value ..."),
 * then the column names: readers skip it with comment='#'. */
static void csv_header(struct table *t, const char *date)
{
	const struct table_meta *m = t->f->meta;
	FILE *f = t->f->csv;

	if (t->f->header_written) {
		fprintf(f, "# trading_date=%s\n", date);
		return;
	}
	t->f->header_written = 1;
	fprintf(f, "# wirebook export: table=%s", t->name);
	if (date)
		fprintf(f, " trading_date=%s", date);
	for (unsigned i = 0; m && i < m->n; i++) {
		fprintf(f, " %s=", m->item[i].name);
		if (!m->item[i].values)
			fprintf(f, "%lld", (long long)m->item[i].number);
		for (unsigned k = 0; m->item[i].values && k < m->item[i].nvalues; k++) {
			if (k)
				fputc('|', f);	/* a list: names joined by | */
			for (const char *c = m->item[i].values[k]; *c; c++)
				fputc(*c == ' ' || *c == '\n' ? '_' : *c, f);
		}
	}
	fputc('\n', f);
	for (unsigned i = 0; i < t->ncols; i++)
		fprintf(f, "%s%s", i ? "," : "", t->cols[i].name);
	fputc('\n', f);
}

/* ---- HDF5 ---------------------------------------------------------------- */

#ifdef WB_HDF5
static size_t h5_size_of(int type)
{
	switch (type) {
	case COL_U32:
	case COL_VENUES:
		return 4;
	case COL_U8:
	case COL_CHAR:
		return 1;
	default:
		return 8;
	}
}

static hid_t h5_col_type(const struct col *c)
{
	hid_t s;

	switch (c->type) {
	case COL_U64:
	case COL_QTY:
		return H5Tcopy(H5T_NATIVE_UINT64);
	case COL_PRICE:
	case COL_I64:
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

/* A fixed-length string attribute, or a list of them. */
static void h5_attr_strings(hid_t obj, const char *name, const char *const *v, unsigned n)
{
	size_t longest = 1;
	hsize_t dim = n;
	hid_t type, space, attr;
	char *flat;

	for (unsigned i = 0; i < n; i++)
		if (strlen(v[i]) > longest)
			longest = strlen(v[i]);
	flat = calloc(n ? n : 1, longest);
	if (!flat)
		return;
	for (unsigned i = 0; i < n; i++)
		memcpy(flat + i * longest, v[i], strlen(v[i]));
	type = H5Tcopy(H5T_C_S1);
	H5Tset_size(type, longest);
	H5Tset_strpad(type, H5T_STR_NULLPAD);
	space = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
	attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
	H5Awrite(attr, type, flat);
	H5Aclose(attr);
	H5Sclose(space);
	H5Tclose(type);
	free(flat);
}

static void h5_attr_number(hid_t obj, const char *name, int64_t v)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t attr = H5Acreate2(obj, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(attr, H5T_NATIVE_INT64, &v);
	H5Aclose(attr);
	H5Sclose(space);
}

/* The bytes of a row's columns, without the struct's padding. */
static size_t row_bytes(const struct table *t)
{
	size_t n = 0;

	for (unsigned i = 0; i < t->ncols; i++)
		n += t->cols[i].type == COL_STR ? t->cols[i].size : h5_size_of(t->cols[i].type);
	return n;
}

struct h5_index_row {
	char symbol[16];
	uint64_t first, count;
};

static int h5_types(struct table *t)
{
	struct table_file *f = t->f;
	hid_t s;

	f->mtype = H5Tcreate(H5T_COMPOUND, t->row_size);
	for (unsigned i = 0; i < t->ncols; i++) {
		hid_t ct = h5_col_type(&t->cols[i]);

		H5Tinsert(f->mtype, t->cols[i].name, t->cols[i].off, ct);
		H5Tclose(ct);
	}
	if (!t->keyed)
		return f->mtype < 0 ? -1 : 0;
	f->itype = H5Tcreate(H5T_COMPOUND, sizeof(struct h5_index_row));
	s = H5Tcopy(H5T_C_S1);
	H5Tset_size(s, t->cols[t->key_col].size);
	H5Tset_strpad(s, H5T_STR_NULLPAD);
	H5Tinsert(f->itype, "symbol", offsetof(struct h5_index_row, symbol), s);
	H5Tclose(s);
	H5Tinsert(f->itype, "first", offsetof(struct h5_index_row, first), H5T_NATIVE_UINT64);
	H5Tinsert(f->itype, "count", offsetof(struct h5_index_row, count), H5T_NATIVE_UINT64);
	return f->mtype < 0 || f->itype < 0 ? -1 : 0;
}

/* A 1-D extendible chunked dataset of TYPE, shuffled and deflated; or the
 * existing one of that name (a date seen again), appended to. */
static hid_t h5_dataset(hid_t group, const char *name, hid_t mtype, size_t row_size, size_t row_bytes,
			int deflate, uint64_t *rows, uint64_t *chunk_rows, int *direct)
{
	hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = H5_CHUNK_ROWS, dims;
	hid_t space, dcpl, ftype, d;

	*direct = 0;
	if (H5Lexists(group, name, H5P_DEFAULT) > 0) {
		d = H5Dopen2(group, name, H5P_DEFAULT);
		space = H5Dget_space(d);
		H5Sget_simple_extent_dims(space, &dims, NULL);
		H5Sclose(space);
		*rows = dims;
		return d;	/* appended to through HDF5 (its last chunk may be partial) */
	}
	*rows = 0;
	/* at most 1 MB, so that HDF5's default chunk cache holds one; a
	 * power of two, so that a buffer's rows fill whole chunks */
	while (chunk > 64 && chunk * row_size > (1u << 20))
		chunk /= 2;
	ftype = H5Tcopy(mtype);
	/* The row struct as it is, its few bytes of padding included (zeros,
	 * which deflate makes nothing of): a packed type costs a conversion,
	 * field by field, of every row written. A struct mostly unused (the
	 * book's levels past --depth) is packed all the same. */
	if (H5Tget_size(mtype) > 2 * row_bytes)
		H5Tpack(ftype);
	else
		*direct = 1;	/* the file's rows are the struct's bytes: chunks can be made here */
	*chunk_rows = chunk;
	space = H5Screate_simple(1, &zero, &unlimited);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_obj_track_times(dcpl, 0);	/* no clock in the file: two exports are the same bytes */
	H5Pset_chunk(dcpl, 1, &chunk);
	if (deflate > 0) {
		/* byte planes of a column compress far better than rows */
		H5Pset_shuffle(dcpl);
		H5Pset_deflate(dcpl, (unsigned)deflate);
	}
	d = H5Dcreate2(group, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Tclose(ftype);
	return d;
}

static int h5_append(hid_t dset, hid_t mtype, uint64_t *written, const void *rows, uint64_t n)
{
	hsize_t start = *written, count = n, size = *written + n;
	hid_t fs, ms;
	herr_t rc;

	if (!n)
		return 0;
	if (H5Dset_extent(dset, &size) < 0)
		return -1;
	fs = H5Dget_space(dset);
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
	ms = H5Screate_simple(1, &count, NULL);
	rc = H5Dwrite(dset, mtype, ms, fs, H5P_DEFAULT, rows);
	H5Sclose(ms);
	H5Sclose(fs);
	*written += n;
	return rc < 0 ? -1 : 0;
}

/*
 * Chunks made here: HDF5's filter pipeline would shuffle and deflate each
 * chunk on the writer thread, one at a time, with a copy and a type
 * conversion in between. Instead the writer fills each dataset's chunk
 * itself, compressor threads shuffle and deflate whole chunks in
 * parallel (as HDF5's shuffle and deflate filters do, so that any reader
 * decodes them with the standard filters), and the writer stores them in
 * order with H5Dwrite_chunk: the file is the same whatever the number of
 * threads. With libdeflate (WB_LIBDEFLATE) the zlib streams come about
 * 1.7 times faster than zlib's own (docs/tools.md).
 */
#define CZ_THREADS_MAX 8u
#define CZ_SLOTS 16u	/* chunks in flight */

struct cz_job {
	hid_t dset;
	hsize_t first;		/* the chunk's first row */
	uint64_t rows;		/* its rows (the last of a date's may be partial) */
	size_t row_size, len;	/* len: the whole chunk's bytes, padding rows zero */
	char *raw, *out;
	size_t raw_cap, out_cap, out_len;
	const char *stored;	/* out, or raw when nothing is filtered */
	int done;		/* 1 compressed, -1 failed */
};

struct cz_pool {
	pthread_t thread[CZ_THREADS_MAX];
	unsigned threads;
	int level;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct cz_job job[CZ_SLOTS];
	uint64_t head, next, tail;	/* jobs submitted, taken by a compressor, stored */
	int stop;
};

/*
 * HDF5's shuffle filter: byte b of every row, then byte b + 1 ... With
 * SSE2, 16 rows by 16 bytes at a time: four rounds of interleaving vector
 * k with vector k + 8 transpose the block (each round rotates the bits of
 * (vector, byte) by one), so that the writes go 16 bytes at a time.
 */
static void shuffle_rows(const unsigned char *in, unsigned char *out, size_t row_size, size_t rows)
{
	size_t i = 0, b0 = 0;

#ifdef __SSE2__
	b0 = row_size - row_size % 16;
	for (; i + 16 <= rows; i += 16)
		for (size_t b = 0; b < b0; b += 16) {
			__m128i x[16], y[16];

			for (unsigned k = 0; k < 16; k++)
				x[k] = _mm_loadu_si128((const __m128i *)(in + (i + k) * row_size + b));
			for (unsigned round = 0; round < 4; round++) {
				for (unsigned k = 0; k < 8; k++) {
					y[2 * k] = _mm_unpacklo_epi8(x[k], x[k + 8]);
					y[2 * k + 1] = _mm_unpackhi_epi8(x[k], x[k + 8]);
				}
				memcpy(x, y, sizeof(x));
			}
			for (unsigned c = 0; c < 16; c++)
				_mm_storeu_si128((__m128i *)(out + (b + c) * rows + i), x[c]);
		}
	/* the last bytes of a row not a multiple of 16, for those rows */
	for (size_t r = 0; r < i; r++)
		for (size_t b = b0; b < row_size; b++)
			out[b * rows + r] = in[r * row_size + b];
#endif
	(void)b0;
	for (; i < rows; i++)
		for (size_t b = 0; b < row_size; b++)
			out[b * rows + i] = in[i * row_size + b];
}

/* BUF holds at least N bytes (its contents not kept); 0, or -1 out of memory. */
static int buffer_at_least(char **buf, size_t *cap, size_t n)
{
	if (*cap >= n)
		return 0;
	free(*buf);
	*buf = malloc(n);
	*cap = *buf ? n : 0;
	return *buf ? 0 : -1;
}

struct cz_state {
	char *shuffled;
	size_t cap;
#ifdef WB_LIBDEFLATE
	struct libdeflate_compressor *c;
#endif
};

/* Shuffle and deflate one chunk, as HDF5's filters would (one zlib stream). */
static int cz_compress(const struct cz_pool *p, struct cz_state *st, struct cz_job *j)
{
	size_t bound;

	if (p->level <= 0) {
		j->stored = j->raw;
		j->out_len = j->len;
		return 0;
	}
	if (buffer_at_least(&st->shuffled, &st->cap, j->len) < 0)
		return -1;
	shuffle_rows((const unsigned char *)j->raw, (unsigned char *)st->shuffled, j->row_size,
		     j->len / j->row_size);
#ifdef WB_LIBDEFLATE
	bound = libdeflate_zlib_compress_bound(st->c, j->len);
#else
	bound = compressBound(j->len);
#endif
	if (buffer_at_least(&j->out, &j->out_cap, bound) < 0)
		return -1;
#ifdef WB_LIBDEFLATE
	j->out_len = libdeflate_zlib_compress(st->c, st->shuffled, j->len, j->out, j->out_cap);
	if (!j->out_len)
		return -1;
#else
	{
		uLongf n = j->out_cap;

		if (compress2((Bytef *)j->out, &n, (const Bytef *)st->shuffled, j->len, p->level) != Z_OK)
			return -1;
		j->out_len = n;
	}
#endif
	j->stored = j->out;
	return 0;
}

static void *cz_main(void *arg)
{
	struct cz_pool *p = arg;
	struct cz_state st = { 0 };

#ifdef WB_LIBDEFLATE
	st.c = libdeflate_alloc_compressor(p->level > 0 ? p->level : 1);
#endif
	for (;;) {
		struct cz_job *j;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (p->next == p->head && !p->stop)
			pthread_cond_wait(&p->changed, &p->lock);
		if (p->next == p->head) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		j = &p->job[p->next++ % CZ_SLOTS];
		pthread_mutex_unlock(&p->lock);
#ifdef WB_LIBDEFLATE
		rc = st.c ? cz_compress(p, &st, j) : -1;
#else
		rc = cz_compress(p, &st, j);
#endif
		pthread_mutex_lock(&p->lock);
		j->done = rc < 0 ? -1 : 1;
		pthread_cond_broadcast(&p->changed);
		pthread_mutex_unlock(&p->lock);
	}
#ifdef WB_LIBDEFLATE
	if (st.c)
		libdeflate_free_compressor(st.c);
#endif
	free(st.shuffled);
	return NULL;
}

static struct cz_pool *cz_start(int level)
{
	struct cz_pool *p = calloc(1, sizeof(*p));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!p)
		return NULL;
	p->level = level;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->changed, NULL);
	if (cpus < 1)
		cpus = 1;
	for (unsigned i = 0; i < CZ_THREADS_MAX && i < (unsigned)cpus; i++) {
		if (pthread_create(&p->thread[i], NULL, cz_main, p) != 0)
			break;
		p->threads++;
	}
	if (!p->threads) {
		free(p);
		return NULL;
	}
	return p;
}

/* Store the oldest chunk in flight (waiting for its compressor); 0 or -1. */
static int cz_retire(struct cz_pool *p)
{
	struct cz_job *j = &p->job[p->tail % CZ_SLOTS];
	hsize_t size;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	while (!j->done)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
	size = j->first + j->rows;
	if (j->done < 0 || H5Dset_extent(j->dset, &size) < 0 ||
	    H5Dwrite_chunk(j->dset, H5P_DEFAULT, 0, &j->first, j->out_len, j->stored) < 0)
		rc = -1;
	pthread_mutex_lock(&p->lock);
	j->done = 0;
	p->tail++;
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Every chunk in flight stored; 0 or -1. */
static int cz_drain(struct cz_pool *p)
{
	int rc = 0;

	while (p && p->tail != p->head)
		if (cz_retire(p) < 0)
			rc = -1;
	return rc;
}

static void cz_stop(struct cz_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->threads; i++)
		pthread_join(p->thread[i], NULL);
	for (unsigned i = 0; i < CZ_SLOTS; i++) {
		free(p->job[i].raw);
		free(p->job[i].out);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->changed);
	free(p);
}

/* The table's chunk (its rows so far, zeros after) to a compressor. */
static int chunk_submit(struct table *t)
{
	struct table_file *f = t->f;
	struct cz_pool *p = f->cz;
	size_t len = f->chunk_rows * t->row_size;
	struct cz_job *j;
	char *swap;
	size_t swap_cap;
	int rc = 0;

	if (!f->chunk_fill)
		return 0;
	if (p->head - p->tail == CZ_SLOTS)
		rc = cz_retire(p);
	j = &p->job[p->head % CZ_SLOTS];
	memset(f->chunk + f->chunk_fill * t->row_size, 0, len - f->chunk_fill * t->row_size);
	/* the chunk goes with the job; the job's last buffer becomes the table's */
	swap = j->raw;
	swap_cap = j->raw_cap;
	j->raw = f->chunk;
	j->raw_cap = f->chunk_cap;
	f->chunk = swap;
	f->chunk_cap = swap_cap;
	if (buffer_at_least(&f->chunk, &f->chunk_cap, len) < 0)
		return -1;
	j->dset = f->dset;
	j->first = f->written - f->chunk_fill;
	j->rows = f->chunk_fill;
	j->row_size = t->row_size;
	j->len = len;
	f->chunk_fill = 0;
	pthread_mutex_lock(&p->lock);
	p->head++;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* ROWS rows into the table's chunks, each full one to a compressor. */
static int chunk_add(struct table *t, const char *rows, uint64_t n)
{
	struct table_file *f = t->f;
	int rc = 0;

	while (n) {
		uint64_t k = f->chunk_rows - f->chunk_fill;

		if (k > n)
			k = n;
		memcpy(f->chunk + f->chunk_fill * t->row_size, rows, k * t->row_size);
		f->chunk_fill += k;
		f->written += k;
		rows += k * t->row_size;
		n -= k;
		if (f->chunk_fill == f->chunk_rows && chunk_submit(t) < 0)
			rc = -1;
	}
	return rc;
}

/*
 * A keyed table's segment: its rows key by key (a counting sort, stable:
 * each symbol's rows stay in decode order), written through a staging
 * buffer, and one index row per key that has rows.
 */
static int h5_write_keyed(struct table *t, const char *buf, const uint16_t *keys, uint64_t rows)
{
	struct table_file *f = t->f;
	uint64_t *start = calloc(KEYS + 1, sizeof(*start));
	struct h5_index_row *idx = NULL;
	char *stage = f->direct ? NULL : malloc(t->row_size * H5_BUFFER_ROWS);
	uint32_t nidx = 0, staged = 0;
	const struct col *kc = &t->cols[t->key_col];
	int rc = 0;

	f->order = realloc(f->order, (rows ? rows : 1) * sizeof(*f->order));
	if (!start || (!stage && !f->direct) || !f->order) {
		free(start);
		free(stage);
		return -1;
	}
	for (uint64_t i = 0; i < rows; i++)
		start[keys[i] + 1]++;
	for (uint32_t k = 0; k < KEYS; k++) {
		nidx += start[k + 1] != 0;
		start[k + 1] += start[k];
	}
	idx = calloc(nidx ? nidx : 1, sizeof(*idx));
	for (uint64_t i = 0; i < rows; i++)
		f->order[start[keys[i]]++] = (uint32_t)i;
	/* start[k] is now the end of key k's run */
	for (uint32_t k = 0, j = 0, prev = 0; idx && k < KEYS; k++) {
		if (start[k] == prev)
			continue;
		memcpy(idx[j].symbol, buf + (size_t)f->order[prev] * t->row_size + kc->off,
		       kc->size < sizeof(idx[j].symbol) ? kc->size : sizeof(idx[j].symbol));
		idx[j].first = f->written + prev;
		idx[j].count = start[k] - prev;
		j++;
		prev = (uint32_t)start[k];
	}
	for (uint64_t i = 0; f->direct && idx && i < rows && rc == 0; i++) {
		/* a gather across the segment: ask for the rows ahead early */
		if (i + 16 < rows) {
			const char *ahead = buf + (size_t)f->order[i + 16] * t->row_size;

			for (size_t b = 0; b < t->row_size; b += 64)
				__builtin_prefetch(ahead + b);
		}
		rc = chunk_add(t, buf + (size_t)f->order[i] * t->row_size, 1);
	}
	for (uint64_t i = 0; !f->direct && idx && i < rows && rc == 0; i++) {
		memcpy(stage + (size_t)staged * t->row_size, buf + (size_t)f->order[i] * t->row_size,
		       t->row_size);
		if (++staged == H5_BUFFER_ROWS || i + 1 == rows) {
			rc = h5_append(f->dset, f->mtype, &f->written, stage, staged);
			staged = 0;
		}
	}
	if (!idx || (rc == 0 && h5_append(f->index, f->itype, &f->index_written, idx, nidx) < 0))
		rc = -1;
	free(idx);
	free(start);
	free(stage);
	return rc;
}

/* The writer thread: rows handed over by h5_submit(). */
static int h5_write(struct table *t, const char *buf, const uint16_t *keys, uint64_t rows)
{
	struct table_file *f = t->f;

	if (!rows || f->dset <= 0)
		return 0;
	if (t->keyed)
		return h5_write_keyed(t, buf, keys, rows);
	if (f->direct)
		return chunk_add(t, buf, rows);
	return h5_append(f->dset, f->mtype, &f->written, buf, rows);
}

/*
 * Every HDF5 call after the file is open happens on one writer thread
 * (libhdf5 is not thread-safe, and deflate is half of an export's CPU):
 * the exporting thread hands it full buffers, and the date changes in
 * between, through a short queue, and goes on with the next events.
 */
#define H5_QUEUE 8u

struct h5_job {
	struct table *t;		/* rows of t; NULL: a date change (date) or the end */
	char *buf;
	uint16_t *keys;
	uint64_t rows;
	struct table *ts;		/* a date change: the set */
	unsigned n;
	char date[16];			/* "" with t NULL: end the last date and stop */
};

struct h5_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct h5_job q[H5_QUEUE];
	unsigned head, tail;		/* jobs [tail, head) wait */
	int failed, running;
	char err[256];
};

static int h5_begin_date_now(struct table *ts, unsigned n, const char *date, char *err, size_t errlen);
static int h5_end_date(struct table *ts, unsigned n);

static void *h5_writer_main(void *arg)
{
	struct h5_writer *w = arg;

	for (;;) {
		struct h5_job j;
		int rc = 0;

		pthread_mutex_lock(&w->lock);
		while (w->head == w->tail)
			pthread_cond_wait(&w->changed, &w->lock);
		j = w->q[w->tail % H5_QUEUE];
		pthread_mutex_unlock(&w->lock);
		if (j.t) {
			rc = h5_write(j.t, j.buf, j.keys, j.rows);
			if (rc < 0)
				snprintf(w->err, sizeof(w->err), "writing the HDF5 dataset %s failed", j.t->name);
		} else if (j.date[0]) {
			rc = h5_begin_date_now(j.ts, j.n, j.date, w->err, sizeof(w->err));
		} else if (h5_end_date(j.ts, j.n) < 0) {
			rc = -1;
			snprintf(w->err, sizeof(w->err), "writing the HDF5 file failed");
		}
		free(j.buf);
		free(j.keys);
		pthread_mutex_lock(&w->lock);
		w->tail++;
		if (rc < 0)
			w->failed = 1;
		pthread_cond_broadcast(&w->changed);
		pthread_mutex_unlock(&w->lock);
		if (!j.t && !j.date[0])
			return NULL;
	}
}

static void h5_submit(struct h5_writer *w, const struct h5_job *j)
{
	pthread_mutex_lock(&w->lock);
	while (w->head - w->tail == H5_QUEUE)
		pthread_cond_wait(&w->changed, &w->lock);
	w->q[w->head++ % H5_QUEUE] = *j;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

/* Hand the table's buffered rows to the writer and start a new buffer. */
static void h5_flush(struct table *t)
{
	struct table_file *f = t->f;
	struct h5_job j = { .t = t, .buf = f->buf, .keys = f->keys, .rows = f->buffered };

	if (!f->buffered)
		return;
	h5_submit(f->w, &j);
	f->cap = H5_BUFFER_ROWS;
	if (t->keyed && f->cap > f->meta->segment_rows)	/* a segment is sorted whole */
		f->cap = f->meta->segment_rows ? f->meta->segment_rows : 1;
	f->buf = malloc(f->cap * t->row_size);
	f->keys = t->keyed ? malloc(f->cap * sizeof(*f->keys)) : NULL;
	f->buffered = 0;
	if (!f->buf || (t->keyed && !f->keys)) {
		fprintf(stderr, "wb-export: out of memory for the HDF5 dataset %s\n", t->name);
		exit(1);
	}
}

static void h5_row(struct table *t, const void *row, uint16_t key)
{
	struct table_file *f = t->f;

	if (f->buffered == f->cap) {
		uint64_t cap = f->cap * 2;
		char *b;

		if (cap > f->meta->segment_rows)
			cap = f->meta->segment_rows;
		if (!t->keyed || f->cap >= cap) {
			h5_flush(t);
		} else {	/* a keyed table's segment grows up to segment_rows */
			b = realloc(f->buf, cap * t->row_size);
			if (b)
				f->buf = b;
			f->keys = realloc(f->keys, cap * sizeof(*f->keys));
			if (!b || !f->keys) {
				fprintf(stderr, "wb-export: out of memory for the HDF5 dataset %s\n", t->name);
				exit(1);
			}
			f->cap = cap;
		}
	}
	memcpy(f->buf + (size_t)f->buffered * t->row_size, row, t->row_size);
	if (t->keyed)
		f->keys[f->buffered] = key;
	f->buffered++;
}

static int h5_open_all(struct table *ts, unsigned n, const char *path, const struct table_meta *m,
		       char *err, size_t errlen)
{
	struct h5_writer *w;
	struct cz_pool *cz;
	hid_t file;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);	/* our messages, not HDF5's stack */
	file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (file < 0)
		return fail(err, errlen, "%s: cannot create the HDF5 file", path);
	for (unsigned i = 0; m && i < m->n; i++) {
		if (m->item[i].values)
			h5_attr_strings(file, m->item[i].name, m->item[i].values, m->item[i].nvalues);
		else
			h5_attr_number(file, m->item[i].name, m->item[i].number);
	}
	for (unsigned i = 0; i < n; i++) {
		struct table_file *f = ts[i].f;

		f->file = file;
		f->group = -1;
		f->dset = f->index = -1;
		f->cap = H5_BUFFER_ROWS;
		if (ts[i].keyed && f->cap > m->segment_rows)	/* a segment is sorted whole */
			f->cap = m->segment_rows ? m->segment_rows : 1;
		f->buf = malloc(ts[i].row_size * f->cap);
		f->keys = ts[i].keyed ? malloc(f->cap * sizeof(*f->keys)) : NULL;
		if (!f->buf || (ts[i].keyed && !f->keys) || h5_types(&ts[i]) < 0)
			return fail(err, errlen, "cannot make the HDF5 types of %s", ts[i].name);
	}
	if (!n)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail(err, errlen, "out of memory");
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	if (pthread_create(&w->thread, NULL, h5_writer_main, w) != 0) {
		free(w);
		return fail(err, errlen, "cannot start the HDF5 writer thread");
	}
	w->running = 1;
	cz = cz_start(m ? m->deflate : 0);	/* none: HDF5 filters each chunk on the writer */
	for (unsigned i = 0; i < n; i++) {
		ts[i].f->w = w;
		ts[i].f->cz = cz;
	}
	return 0;
}

/* The rows still buffered, the last date ended, the writer stopped; 0 or -1. */
static int h5_stop(struct table *ts, unsigned n, char *err, size_t errlen)
{
	struct h5_writer *w = n ? ts[0].f->w : NULL;
	struct h5_job end = { .ts = ts, .n = n };
	int rc;

	if (!w)
		return 0;
	for (unsigned i = 0; i < n; i++)
		h5_flush(&ts[i]);
	h5_submit(w, &end);
	pthread_join(w->thread, NULL);
	cz_stop(ts[0].f->cz);
	rc = w->failed ? fail(err, errlen, "%s", w->err) : 0;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->changed);
	free(w);
	for (unsigned i = 0; i < n; i++) {
		ts[i].f->w = NULL;
		ts[i].f->cz = NULL;
	}
	return rc;
}

/* Close the date's datasets (flushed) and group. */
static int h5_end_date(struct table *ts, unsigned n)
{
	hid_t group = -1;
	int rc = 0;

	for (unsigned i = 0; i < n; i++)
		if (ts[i].f->direct && ts[i].f->dset > 0 && chunk_submit(&ts[i]) < 0)
			rc = -1;
	if (n && cz_drain(ts[0].f->cz) < 0)
		rc = -1;
	for (unsigned i = 0; i < n; i++) {
		struct table_file *f = ts[i].f;

		if (f->dset > 0)
			H5Dclose(f->dset);
		if (f->index > 0)
			H5Dclose(f->index);
		f->dset = f->index = -1;
		if (f->group > 0)
			group = f->group;
		f->group = -1;
	}
	if (group > 0)
		H5Gclose(group);
	return rc;
}

/* On the writer thread: the rows before it went to the last date. */
static int h5_begin_date_now(struct table *ts, unsigned n, const char *date, char *err, size_t errlen)
{
	hid_t file = ts[0].f->file, group;
	const char *dates[1] = { date };
	char name[64];

	if (h5_end_date(ts, n) < 0)
		return fail(err, errlen, "writing the HDF5 file failed");
	if (H5Lexists(file, date, H5P_DEFAULT) > 0) {
		group = H5Gopen2(file, date, H5P_DEFAULT);
	} else {
		hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);

		H5Pset_obj_track_times(gcpl, 0);
		group = H5Gcreate2(file, date, H5P_DEFAULT, gcpl, H5P_DEFAULT);
		H5Pclose(gcpl);
		if (group > 0)
			h5_attr_strings(group, "trading_date", dates, 1);
	}
	if (group < 0)
		return fail(err, errlen, "cannot create the HDF5 group %s", date);
	for (unsigned i = 0; i < n; i++) {
		struct table *t = &ts[i];
		struct table_file *f = t->f;
		uint64_t chunk_rows = 0;
		int direct;

		f->group = group;
		f->dset = h5_dataset(group, t->name, f->mtype, t->row_size, row_bytes(t), f->meta->deflate,
				     &f->written, &chunk_rows, &direct);
		f->direct = direct && f->cz;
		f->chunk_rows = chunk_rows;
		f->chunk_fill = 0;
		if (f->direct && buffer_at_least(&f->chunk, &f->chunk_cap, chunk_rows * t->row_size) < 0)
			return fail(err, errlen, "out of memory");
		if (t->keyed) {
			snprintf(name, sizeof(name), "%s_index", t->name);
			f->index = h5_dataset(group, name, f->itype, sizeof(struct h5_index_row),
					      sizeof(struct h5_index_row), f->meta->deflate, &f->index_written,
					      &chunk_rows, &direct);
		}
		if (f->dset < 0 || (t->keyed && f->index < 0))
			return fail(err, errlen, "cannot create the HDF5 dataset %s/%s", date, t->name);
	}
	return 0;
}

/* On the exporting thread: a date change, in order with the rows. */
static int h5_begin_date(struct table *ts, unsigned n, const char *date, char *err, size_t errlen)
{
	struct h5_job j = { .ts = ts, .n = n };
	struct h5_writer *w = ts[0].f->w;

	for (unsigned i = 0; i < n; i++)
		h5_flush(&ts[i]);
	snprintf(j.date, sizeof(j.date), "%s", date);
	h5_submit(w, &j);
	pthread_mutex_lock(&w->lock);
	if (w->failed)
		fail(err, errlen, "%s", w->err);
	pthread_mutex_unlock(&w->lock);
	return w->failed ? -1 : 0;
}
#endif

/* ---- the set ------------------------------------------------------------- */

void table_meta_number(struct table_meta *m, const char *name, int64_t v)
{
	if (m->n >= TABLE_META_MAX)
		return;
	m->item[m->n].name = name;
	m->item[m->n].values = NULL;
	m->item[m->n++].number = v;
}

void table_meta_strings(struct table_meta *m, const char *name, const char *const *v, unsigned n)
{
	if (m->n >= TABLE_META_MAX)
		return;
	m->item[m->n].name = name;
	m->item[m->n].values = v;
	m->item[m->n++].nvalues = n;
}

int tables_open(struct table *ts, unsigned n, const char *format, const char *path,
		const struct table_meta *meta, char *err, size_t errlen)
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
		ts[i].f->meta = meta;
	}
#ifdef WB_HDF5
	if (hdf5)
		return h5_open_all(ts, n, path, meta, err, errlen);
#endif
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	for (unsigned i = 0; i < n; i++)
		if (csv_open(&ts[i], path, err, errlen) < 0)
			return -1;
	return 0;
}

int tables_begin_date(struct table *ts, unsigned n, const char *date, char *err, size_t errlen)
{
	if (!n || !ts[0].f)
		return 0;
#ifdef WB_HDF5
	if (ts[0].f->hdf5)
		return h5_begin_date(ts, n, date, err, errlen);
#endif
	(void)err;	/* CSV cannot fail here (a build without HDF5 has only CSV) */
	(void)errlen;
	for (unsigned i = 0; i < n; i++)
		csv_header(&ts[i], date);
	return 0;
}

void table_row(struct table *t, const void *row)
{
	table_row_keyed(t, row, 0);
}

void table_row_keyed(struct table *t, const void *row, uint16_t key)
{
	t->rows++;
#ifdef WB_HDF5
	if (t->f->hdf5) {
		h5_row(t, row, key);
		return;
	}
#endif
	(void)key;
	csv_row(t, row);
}

int tables_close(struct table *ts, unsigned n, char *err, size_t errlen)
{
	int rc = 0;
#ifdef WB_HDF5
	hid_t file = -1;

	if (n && ts[0].f && ts[0].f->hdf5 && h5_stop(ts, n, err, errlen) < 0)
		rc = -1;
#endif
	for (unsigned i = 0; i < n; i++) {
		struct table_file *f = ts[i].f;

		if (!f)
			continue;
#ifdef WB_HDF5
		if (f->hdf5) {
			if (f->mtype > 0)
				H5Tclose(f->mtype);
			if (f->itype > 0)
				H5Tclose(f->itype);
			if (f->file > 0)
				file = f->file;
			free(f->buf);
			free(f->keys);
			free(f->order);
			free(f->chunk);
		}
#endif
		if (f->csv && !f->header_written)
			csv_header(&ts[i], NULL);	/* an empty table still names its columns */
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
