/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * hftbacktest's event arrays (hftbacktest.h; the dtype and the flags and
 * their sources: docs/specs/hftbacktest.md). Each asset's rows gather in
 * a small buffer that spills to OUTPUT/.SYMBOL.VENUE.LEVEL.rows; at the
 * close, when the row counts are known, each asset's .npz is written: a
 * zip archive with one deflated member, data.npy (as numpy.savez_compressed).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/hftbacktest.h"
#include "wire/bytes.h"
#include "wirebook/book.h"

#define INSTRUMENTS 65536u
#define VENUE_SLOTS 32u
#define BUF_ROWS 256u
#define COPY_CHUNK (1u << 20)
#define NPY_NAME "data.npy"

enum { L3, L2, LEVELS };
static const char *const level_name[LEVELS] = { "l3", "l2" };

struct hbt_stream {
	uint8_t buf[BUF_ROWS][HBT_ROW_LEN];
	unsigned buffered;
	uint64_t rows;
	int spilled;
};

struct hbt_asset {
	uint8_t venue;
	uint16_t instrument;
	struct hbt_stream s[LEVELS];
};

struct hbt_writer {
	char dir[PATH_MAX - 256];
	struct hbt_asset **asset;	/* [venue * INSTRUMENTS + instrument] */
	uint64_t rows;
	int failed;
	char err[256];
};

void hbt_encode_row(uint8_t out[HBT_ROW_LEN], const struct hbt_row *r)
{
	uint64_t px, qty, fval;

	memcpy(&px, &r->px, 8);
	memcpy(&qty, &r->qty, 8);
	memcpy(&fval, &r->fval, 8);
	wire_put_le64(out, r->ev);
	wire_put_le64(out + 8, (uint64_t)r->exch_ts);
	wire_put_le64(out + 16, (uint64_t)r->local_ts);
	wire_put_le64(out + 24, px);
	wire_put_le64(out + 32, qty);
	wire_put_le64(out + 40, r->order_id);
	wire_put_le64(out + 48, (uint64_t)r->ival);
	wire_put_le64(out + 56, fval);
}

size_t hbt_npy_header(char *out, size_t cap, uint64_t n)
{
	static const char descr[] =
		"[('ev', '<u8'), ('exch_ts', '<i8'), ('local_ts', '<i8'), ('px', '<f8'), "
		"('qty', '<f8'), ('order_id', '<u8'), ('ival', '<i8'), ('fval', '<f8')]";
	char dict[512];
	int d = snprintf(dict, sizeof(dict), "{'descr': %s, 'fortran_order': False, 'shape': (%llu,), }",
			 descr, (unsigned long long)n);
	size_t total = (10 + (size_t)d + 1 + 63) / 64 * 64;	/* magic..dict..'\n', to 64 */

	if (total > cap || total - 10 > 65535)
		return 0;
	memcpy(out, "\x93NUMPY\x01\x00", 8);
	wire_put_le16((uint8_t *)out + 8, total - 10);
	memcpy(out + 10, dict, (size_t)d);
	memset(out + 10 + d, ' ', total - 10 - (size_t)d - 1);
	out[total - 1] = '\n';
	return total;
}

struct hbt_writer *hbt_writer_open(const char *dir, char *err, size_t errlen)
{
	struct hbt_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->asset = calloc((size_t)VENUE_SLOTS * INSTRUMENTS, sizeof(*w->asset)))) {
		snprintf(err, errlen, "out of memory");
		free(w);
		return NULL;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	return w;
}

static void rows_path(const struct hbt_writer *w, const struct hbt_asset *a, unsigned lv,
		      char *out, size_t n)
{
	snprintf(out, n, "%s/.%u.%u.%s.rows", w->dir, a->venue, a->instrument, level_name[lv]);
}

static void spill(struct hbt_writer *w, struct hbt_asset *a, unsigned lv)
{
	struct hbt_stream *s = &a->s[lv];
	char path[PATH_MAX];
	FILE *f;

	if (!s->buffered)
		return;
	rows_path(w, a, lv, path, sizeof(path));
	f = fopen(path, s->spilled ? "ab" : "wb");
	if (!f || fwrite(s->buf, HBT_ROW_LEN, s->buffered, f) != s->buffered) {
		if (!w->failed)
			snprintf(w->err, sizeof(w->err), "%.200s: %s", path, strerror(errno));
		w->failed = 1;
	}
	if (f && fclose(f) && !w->failed) {
		snprintf(w->err, sizeof(w->err), "%.200s: %s", path, strerror(errno));
		w->failed = 1;
	}
	s->spilled = 1;
	s->buffered = 0;
}

static void add_row(struct hbt_writer *w, uint8_t venue, uint16_t inst, unsigned lv,
		    const struct hbt_row *r)
{
	struct hbt_asset **slot;
	struct hbt_stream *s;

	if (venue >= VENUE_SLOTS || !inst)
		return;
	slot = &w->asset[(size_t)venue * INSTRUMENTS + inst];
	if (!*slot) {
		*slot = calloc(1, sizeof(**slot));
		if (!*slot) {
			w->failed = 1;
			snprintf(w->err, sizeof(w->err), "out of memory");
			return;
		}
		(*slot)->venue = venue;
		(*slot)->instrument = inst;
	}
	s = &(*slot)->s[lv];
	if (s->buffered == BUF_ROWS)
		spill(w, *slot, lv);
	hbt_encode_row(s->buf[s->buffered++], r);
	s->rows++;
	w->rows++;
}

static uint64_t side_flag(char side)
{
	return side == 'B' ? HBT_BUY_EVENT : side == 'A' ? HBT_SELL_EVENT : 0;
}

static double dollars(int64_t price)
{
	return price == SINK_PRICE_NONE ? 0.0 : (double)price / (double)WB_PRICE_SCALE;
}

static void base_row(struct hbt_row *r, const struct wb_event *ev, uint64_t kind)
{
	memset(r, 0, sizeof(*r));
	r->ev = kind | HBT_EXCH_EVENT | HBT_LOCAL_EVENT;
	r->exch_ts = (int64_t)ev->exch_ts;
	r->local_ts = (int64_t)ev->recv_ts;
}

void hbt_writer_after(struct hbt_writer *w, const struct sink_event *se)
{
	const struct wb_event *ev = se->ev;
	struct hbt_row r;

	for (unsigned i = 0; i < se->n; i++) {
		const struct order_action *a = &se->act[i];
		uint64_t kind;

		/* L3: hftbacktest's cancel removes the whole order, its modify
		 * sets the size: a partial cancel or fill leaves a modify */
		switch (a->action) {
		case 'A': kind = HBT_ADD_ORDER_EVENT; break;
		case 'C': kind = a->remaining ? HBT_MODIFY_ORDER_EVENT : HBT_CANCEL_ORDER_EVENT; break;
		case 'M': kind = HBT_MODIFY_ORDER_EVENT; break;
		case 'R': kind = HBT_DEPTH_CLEAR_EVENT; break;
		case 'T': kind = HBT_TRADE_EVENT; break;
		default: kind = HBT_FILL_EVENT; break;
		}
		base_row(&r, ev, kind | side_flag(a->side));
		r.px = dollars(a->price);
		r.qty = a->action == 'C' && a->remaining ? a->remaining : a->size;
		r.order_id = a->order_id;
		add_row(w, ev->venue, a->instrument, L3, &r);
		/* L2: the prints and the clears; the levels come from the book */
		if (a->action == 'T' || a->action == 'R') {
			r.order_id = 0;
			add_row(w, ev->venue, a->instrument, L2, &r);
		}
	}
	for (unsigned i = 0; i < se->nup; i++) {
		const struct book_update *u = &se->up[i];

		if (u->kind != BOOK_UP_LEVEL || !u->instrument)
			continue;
		base_row(&r, ev, HBT_DEPTH_EVENT |
			 (u->side == WB_SIDE_BUY ? HBT_BUY_EVENT : HBT_SELL_EVENT));
		r.px = dollars(u->price);
		r.qty = (double)u->qty;
		add_row(w, u->venue, u->instrument, L2, &r);
	}
}

/* ---- .npz: a zip of data.npy, deflated ------------------------------------- */

struct zip_entry {
	uint32_t crc;
	uint64_t csize, usize;
};

static void zip_local(uint8_t *p, const struct zip_entry *e)
{
	wire_put_le32(p, 0x04034b50);
	wire_put_le16(p + 4, 20);	/* version needed: 2.0 */
	wire_put_le16(p + 6, 0);	/* flags */
	wire_put_le16(p + 8, 8);	/* method: deflate */
	wire_put_le16(p + 10, 0);	/* time 00:00 */
	wire_put_le16(p + 12, 0x21);	/* date 1980-01-01: files equal for equal input */
	wire_put_le32(p + 14, e->crc);
	wire_put_le32(p + 18, e->csize);
	wire_put_le32(p + 22, e->usize);
	wire_put_le16(p + 26, sizeof(NPY_NAME) - 1);
	wire_put_le16(p + 28, 0);
	memcpy(p + 30, NPY_NAME, sizeof(NPY_NAME) - 1);
}

/* The central directory and its end: 46 + name + 22 bytes. */
static void zip_central(uint8_t *p, const struct zip_entry *e)
{
	size_t name = sizeof(NPY_NAME) - 1, cd = 46 + name;

	wire_put_le32(p, 0x02014b50);
	wire_put_le16(p + 4, 20);	/* made by */
	wire_put_le16(p + 6, 20);	/* needed */
	wire_put_le16(p + 8, 0);
	wire_put_le16(p + 10, 8);
	wire_put_le16(p + 12, 0);
	wire_put_le16(p + 14, 0x21);
	wire_put_le32(p + 16, e->crc);
	wire_put_le32(p + 20, e->csize);
	wire_put_le32(p + 24, e->usize);
	wire_put_le16(p + 28, name);
	memset(p + 30, 0, 12);		/* extra, comment, disk, attributes */
	wire_put_le32(p + 42, 0);	/* the local header's offset */
	memcpy(p + 46, NPY_NAME, name);
	p += cd;
	wire_put_le32(p, 0x06054b50);
	wire_put_le16(p + 4, 0);
	wire_put_le16(p + 6, 0);
	wire_put_le16(p + 8, 1);
	wire_put_le16(p + 10, 1);
	wire_put_le32(p + 12, cd);
	wire_put_le32(p + 16, 30 + name + e->csize);
	wire_put_le16(p + 20, 0);
}

/* Deflate n bytes (flush: the stream's end) into f. */
static int deflate_out(z_stream *z, FILE *f, const void *in, size_t n, int flush,
		       struct zip_entry *e, uint8_t *out, size_t cap)
{
	int r;

	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)n;
	if (n)	/* crc32() of a null buffer is the initial value, not crc */
		e->crc = (uint32_t)crc32(e->crc, (const Bytef *)in, (uInt)n);
	e->usize += n;
	do {
		z->next_out = out;
		z->avail_out = (uInt)cap;
		r = deflate(z, flush ? Z_FINISH : Z_NO_FLUSH);
		if (r == Z_STREAM_ERROR)
			return -1;
		n = cap - z->avail_out;
		if (fwrite(out, 1, n, f) != n)
			return -1;
		e->csize += n;
	} while (z->avail_out == 0 || (flush && r != Z_STREAM_END));
	return 0;
}

static int write_npz(struct hbt_writer *w, struct hbt_asset *a, unsigned lv, const char *symbol)
{
	struct hbt_stream *s = &a->s[lv];
	char path[PATH_MAX], rows[PATH_MAX], hdr[1024];
	uint8_t local[64], central[128], *buf = NULL, *zout = NULL;
	size_t hlen = hbt_npy_header(hdr, sizeof(hdr), s->rows), n;
	struct zip_entry e = { 0, 0, 0 };
	const size_t name = sizeof(NPY_NAME) - 1;
	z_stream z;
	int zinit = 0, rc = -1;
	FILE *f = NULL, *in = NULL;

	snprintf(path, sizeof(path), "%s/%s.%s.%s.npz", w->dir, symbol,
		 wb_venue_name(a->venue), level_name[lv]);
	if (hlen + s->rows * HBT_ROW_LEN > 0xffffffffull - 1024) {	/* zip64 is not written */
		snprintf(w->err, sizeof(w->err), "%.200s: over 4 GB (zip64 is not written)", path);
		return -1;
	}
	spill(w, a, lv);
	rows_path(w, a, lv, rows, sizeof(rows));
	buf = malloc(COPY_CHUNK);
	zout = malloc(COPY_CHUNK);
	f = fopen(path, "wb");
	in = s->spilled ? fopen(rows, "rb") : NULL;
	if (!buf || !zout || !f || (s->spilled && !in)) {
		snprintf(w->err, sizeof(w->err), "%.200s: %s", f ? rows : path, strerror(errno));
		goto out;
	}
	memset(&z, 0, sizeof(z));
	/* raw deflate (zip has its own header), fast: rows repeat a lot */
	if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto werr;
	zinit = 1;
	e.crc = (uint32_t)crc32(0L, Z_NULL, 0);
	/* sizes and CRC are known only after the data: patched after */
	zip_local(local, &e);
	if (fwrite(local, 1, 30 + name, f) != 30 + name ||
	    deflate_out(&z, f, hdr, hlen, 0, &e, zout, COPY_CHUNK) < 0)
		goto werr;
	while (in && (n = fread(buf, 1, COPY_CHUNK, in)) > 0)
		if (deflate_out(&z, f, buf, n, 0, &e, zout, COPY_CHUNK) < 0)
			goto werr;
	if (deflate_out(&z, f, NULL, 0, 1, &e, zout, COPY_CHUNK) < 0)
		goto werr;
	zip_central(central, &e);
	if (fwrite(central, 1, 46 + name + 22, f) != 46 + name + 22)
		goto werr;
	zip_local(local, &e);
	if (fseek(f, 14, SEEK_SET) || fwrite(local + 14, 1, 12, f) != 12)
		goto werr;
	rc = 0;
	goto out;
werr:
	snprintf(w->err, sizeof(w->err), "%.200s: write failed", path);
out:
	if (zinit)
		deflateEnd(&z);
	if (f && fclose(f) && !rc) {
		snprintf(w->err, sizeof(w->err), "%.200s: %s", path, strerror(errno));
		rc = -1;
	}
	if (in)
		fclose(in);
	if (s->spilled)
		remove(rows);
	free(buf);
	free(zout);
	return rc;
}

int hbt_writer_close(struct hbt_writer *w, const char (*ticker)[9], char *err, size_t errlen)
{
	int rc = w->failed ? -1 : 0;

	for (size_t i = 0; i < (size_t)VENUE_SLOTS * INSTRUMENTS; i++) {
		struct hbt_asset *a = w->asset[i];
		char sym[16];

		if (!a)
			continue;
		if (ticker && ticker[a->instrument][0])
			snprintf(sym, sizeof(sym), "%s", ticker[a->instrument]);
		else
			snprintf(sym, sizeof(sym), "%u", a->instrument);
		for (unsigned lv = 0; lv < LEVELS; lv++)
			if (!rc && a->s[lv].rows && write_npz(w, a, lv, sym) < 0)
				rc = -1;
		for (unsigned lv = 0; lv < LEVELS; lv++)
			if (a->s[lv].spilled) {
				char rows[PATH_MAX];

				rows_path(w, a, lv, rows, sizeof(rows));
				remove(rows);
			}
		free(a);
	}
	if (rc)
		snprintf(err, errlen, "%s", w->err);
	free(w->asset);
	free(w);
	return rc;
}

uint64_t hbt_writer_rows(const struct hbt_writer *w)
{
	return w->rows;
}
