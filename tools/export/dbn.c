/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * DBN version 3 (dbn.h; the layout and its sources: docs/specs/dbn.md).
 * Records go to OUTPUT/.SCHEMA.records as they come, a packet at a time
 * (F_LAST is known only at a packet's end); at the close, when the
 * symbols and the time range are known, the metadata and the records
 * make OUTPUT/SCHEMA.dbn.zst (zstd, when built with libzstd: WB_ZSTD) or
 * OUTPUT/SCHEMA.dbn. With zstd the records file is compressed too (fast
 * level): a day's MBP-10 would otherwise need its whole size on disk
 * twice. The final file is one frame, metadata and records, as
 * Databento's are: some readers stop at a frame's end.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/dbn.h"
#include "wire/bytes.h"
#ifdef WB_ZSTD
#include <zstd.h>
#endif

#define INSTRUMENTS 65536u
#define COPY_CHUNK (1u << 20)
#define ZBUF_LEN (COPY_CHUNK + 4096)
#define MBP_MAX_LEVELS 10

enum { OUT_MBO, OUT_MBP_1, OUT_MBP_10, OUT_TRADES, OUT_COUNT };

static const struct {
	const char *name;
	uint16_t schema;
	size_t len;
	size_t flags_at;	/* offset of the flags byte */
} out_kind[OUT_COUNT] = {
	[OUT_MBO] = { "mbo", DBN_SCHEMA_MBO, DBN_MBO_LEN, 36 },
	[OUT_MBP_1] = { "mbp-1", DBN_SCHEMA_MBP_1, DBN_MBP1_LEN, 30 },
	[OUT_MBP_10] = { "mbp-10", DBN_SCHEMA_MBP_10, DBN_MBP10_LEN, 30 },
	[OUT_TRADES] = { "trades", DBN_SCHEMA_TRADES, DBN_TRADE_LEN, 30 },
};

/* ---- encoding -------------------------------------------------------------- */

static void put_header(uint8_t *p, size_t len, uint8_t rtype, const struct dbn_record *r)
{
	p[0] = (uint8_t)(len / 4);
	p[1] = rtype;
	wire_put_le16(p + 2, r->publisher_id);
	wire_put_le32(p + 4, r->instrument_id);
	wire_put_le64(p + 8, r->ts_event);
}

size_t dbn_encode_mbo(uint8_t out[DBN_MBO_LEN], const struct dbn_record *r)
{
	put_header(out, DBN_MBO_LEN, DBN_RTYPE_MBO, r);
	wire_put_le64(out + 16, r->order_id);
	wire_put_le64(out + 24, (uint64_t)r->price);
	wire_put_le32(out + 32, r->size);
	out[36] = r->flags;
	out[37] = r->channel_id;
	out[38] = (uint8_t)r->action;
	out[39] = (uint8_t)r->side;
	wire_put_le64(out + 40, r->ts_recv);
	wire_put_le32(out + 48, (uint32_t)r->ts_in_delta);
	wire_put_le32(out + 52, r->sequence);
	return DBN_MBO_LEN;
}

/* The part trades and MBP records share: after the header, 32 bytes. */
static void put_mbp_body(uint8_t *out, const struct dbn_record *r)
{
	wire_put_le64(out + 16, (uint64_t)r->price);
	wire_put_le32(out + 24, r->size);
	out[28] = (uint8_t)r->action;
	out[29] = (uint8_t)r->side;
	out[30] = r->flags;
	out[31] = r->depth;
	wire_put_le64(out + 32, r->ts_recv);
	wire_put_le32(out + 40, (uint32_t)r->ts_in_delta);
	wire_put_le32(out + 44, r->sequence);
}

size_t dbn_encode_trade(uint8_t out[DBN_TRADE_LEN], const struct dbn_record *r)
{
	put_header(out, DBN_TRADE_LEN, DBN_RTYPE_MBP_0, r);
	put_mbp_body(out, r);
	return DBN_TRADE_LEN;
}

size_t dbn_encode_mbp(uint8_t *out, const struct dbn_record *r, const struct dbn_level *levels,
		      unsigned nlevels)
{
	size_t len = 48 + (size_t)nlevels * DBN_LEVEL_LEN;

	put_header(out, len, nlevels == 1 ? DBN_RTYPE_MBP_1 : DBN_RTYPE_MBP_10, r);
	put_mbp_body(out, r);
	for (unsigned i = 0; i < nlevels; i++) {
		uint8_t *p = out + 48 + i * DBN_LEVEL_LEN;

		wire_put_le64(p, (uint64_t)levels[i].bid_px);
		wire_put_le64(p + 8, (uint64_t)levels[i].ask_px);
		wire_put_le32(p + 16, levels[i].bid_sz);
		wire_put_le32(p + 20, levels[i].ask_sz);
		wire_put_le32(p + 24, levels[i].bid_ct);
		wire_put_le32(p + 28, levels[i].ask_ct);
	}
	return len;
}

/* The metadata after its 8-byte prefix, before the padding to 8. */
static size_t metadata_body_len(const struct dbn_metadata *m)
{
	size_t n = 100 + 5 * 4;	/* fixed part; schema definition length and four counts */

	n += (size_t)m->nmappings * DBN_SYMBOL_CSTR_LEN;	/* symbols */
	n += (size_t)m->nmappings * (DBN_SYMBOL_CSTR_LEN + 4 + 8 + DBN_SYMBOL_CSTR_LEN);
	return n;
}

size_t dbn_metadata_len(const struct dbn_metadata *m)
{
	size_t n = metadata_body_len(m);

	return 8 + (n + 7) / 8 * 8;	/* version 3 pads the metadata to 8 bytes */
}

static uint8_t *put_cstr(uint8_t *p, const char *s, size_t len)
{
	size_t n = strlen(s);

	memset(p, 0, len);
	memcpy(p, s, n < len - 1 ? n : len - 1);
	return p + len;
}

size_t dbn_encode_metadata(uint8_t *out, const struct dbn_metadata *m)
{
	size_t total = dbn_metadata_len(m);
	uint8_t *p = out;
	char id[DBN_SYMBOL_CSTR_LEN];

	memset(out, 0, total);
	memcpy(p, "DBN", 3);
	p[3] = DBN_VERSION;
	wire_put_le32(p + 4, total - 8);
	p = put_cstr(p + 8, m->dataset, DBN_DATASET_CSTR_LEN);
	wire_put_le16(p, m->schema);
	wire_put_le64(p + 2, m->start);
	wire_put_le64(p + 10, m->end);
	wire_put_le64(p + 18, 0);	/* limit: none */
	p[26] = 1;			/* stype_in: raw_symbol */
	p[27] = 0;			/* stype_out: instrument_id */
	p[28] = 0;			/* ts_out */
	wire_put_le16(p + 29, DBN_SYMBOL_CSTR_LEN);
	p += 31 + 53;			/* reserved */
	wire_put_le32(p, 0);		/* schema definition length */
	wire_put_le32(p + 4, m->nmappings);
	p += 8;
	for (unsigned i = 0; i < m->nmappings; i++)
		p = put_cstr(p, m->mappings[i].raw_symbol, DBN_SYMBOL_CSTR_LEN);
	wire_put_le32(p, 0);		/* partial */
	wire_put_le32(p + 4, 0);	/* not found */
	wire_put_le32(p + 8, m->nmappings);
	p += 12;
	for (unsigned i = 0; i < m->nmappings; i++) {
		const struct dbn_mapping *mp = &m->mappings[i];

		p = put_cstr(p, mp->raw_symbol, DBN_SYMBOL_CSTR_LEN);
		wire_put_le32(p, 1);
		wire_put_le32(p + 4, mp->start_date);
		wire_put_le32(p + 8, mp->end_date);
		snprintf(id, sizeof(id), "%u", mp->instrument_id);
		p = put_cstr(p + 12, id, DBN_SYMBOL_CSTR_LEN);
	}
	return total;
}

uint16_t dbn_publisher(uint8_t venue)
{
	/* Databento's publisher ids of the venues whose direct feeds it
	 * normalizes the way this file does (publishers.rs). */
	switch (venue) {
	case WB_VENUE_NASDAQ: return 2;
	case WB_VENUE_BX: return 3;
	case WB_VENUE_PSX: return 4;
	case WB_VENUE_BZX: return 5;
	case WB_VENUE_BYX: return 6;
	case WB_VENUE_EDGA: return 7;
	case WB_VENUE_EDGX: return 8;
	case WB_VENUE_NYSE: return 9;
	case WB_VENUE_NATIONAL: return 10;
	case WB_VENUE_AMERICAN: return 11;
	case WB_VENUE_TEXAS: return 12;
	case WB_VENUE_MEMX: return 15;
	case WB_VENUE_MIAX: return 16;
	case WB_VENUE_ARCA: return 43;
	default: return 0;
	}
}

unsigned dbn_schemas(const char *list)
{
	char buf[256], *tok, *save = NULL;
	unsigned want = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned i;

		for (i = 0; i < OUT_COUNT && strcmp(tok, out_kind[i].name); i++)
			;
		if (i == OUT_COUNT)
			return 0;
		want |= 1u << i;
	}
	return want;
}

int dbn_zstd(void)
{
#ifdef WB_ZSTD
	return 1;
#else
	return 0;
#endif
}

/* ---- the writer ------------------------------------------------------------ */

struct dbn_out {
	FILE *tmp;
	char tmp_path[PATH_MAX], path[PATH_MAX];
	uint8_t *group;			/* this packet's records */
	size_t group_len, group_cap;
	uint16_t *group_inst;		/* [record of the group] */
	size_t group_n, group_inst_cap;
	uint64_t records;
	int failed;
#ifdef WB_ZSTD
	ZSTD_CCtx *tz;			/* the records file's compressor */
	uint8_t *tzbuf;
#endif
};

struct dbn_writer {
	unsigned want;
	struct dbn_out out[OUT_COUNT];
	uint32_t stamp[INSTRUMENTS], gen;	/* F_LAST: instruments seen in this pass */
	uint8_t *seen;				/* [instrument]: in some record */
	uint64_t first_recv, last_recv;
	/* the trades' MBP records, made before the event applies */
	uint8_t pend1[SINK_ACTIONS_MAX][DBN_MBP1_LEN];
	uint8_t pend10[SINK_ACTIONS_MAX][DBN_MBP10_LEN];
};

struct dbn_writer *dbn_writer_open(const char *dir, unsigned want, char *err, size_t errlen)
{
	struct dbn_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->seen = calloc(INSTRUMENTS, 1))) {
		snprintf(err, errlen, "out of memory");
		free(w);
		return NULL;
	}
	w->want = want;
	for (unsigned i = 0; i < OUT_COUNT; i++) {
		struct dbn_out *o = &w->out[i];

		if (!(want & 1u << i))
			continue;
		snprintf(o->path, sizeof(o->path), "%s/%s.dbn%s", dir, out_kind[i].name,
			 dbn_zstd() ? ".zst" : "");
		snprintf(o->tmp_path, sizeof(o->tmp_path), "%s/.%s.records", dir, out_kind[i].name);
		o->tmp = fopen(o->tmp_path, "wb");
#ifdef WB_ZSTD
		o->tz = ZSTD_createCCtx();
		o->tzbuf = malloc(ZBUF_LEN);
		if (o->tz)
			ZSTD_CCtx_setParameter(o->tz, ZSTD_c_compressionLevel, 1);
		if (!o->tz || !o->tzbuf)
			o->failed = 1;
#endif
		if (!o->tmp) {
			snprintf(err, errlen, "%s: %s", o->tmp_path, strerror(errno));
			dbn_writer_close(w, NULL, err, 0);
			return NULL;
		}
	}
	return w;
}

static uint8_t *out_record(struct dbn_out *o, size_t len, uint16_t inst)
{
	if (o->group_len + len > o->group_cap) {
		size_t cap = o->group_cap ? o->group_cap * 2 : 1u << 16;
		uint8_t *g = realloc(o->group, cap);

		if (!g) {
			o->failed = 1;
			return NULL;
		}
		o->group = g;
		o->group_cap = cap;
	}
	if (o->group_n == o->group_inst_cap) {
		size_t cap = o->group_inst_cap ? o->group_inst_cap * 2 : 1024;
		uint16_t *gi = realloc(o->group_inst, cap * sizeof(*gi));

		if (!gi) {
			o->failed = 1;
			return NULL;
		}
		o->group_inst = gi;
		o->group_inst_cap = cap;
	}
	o->group_inst[o->group_n++] = inst;
	o->group_len += len;
	return o->group + o->group_len - len;
}

/* One side's n best levels, less an order that is not there yet (minus). */
static unsigned side_levels(const struct venue_books *vb, uint8_t venue, uint16_t inst,
			    uint8_t side, struct venue_level *out, unsigned n,
			    const struct order_action *minus)
{
	unsigned k = venue_books_depth(vb, venue, inst, side, out, n + 1);

	if (minus && (minus->side == 'B' ? WB_SIDE_BUY : minus->side == 'A' ? WB_SIDE_SELL : 0) == side)
		for (unsigned i = 0; i < k; i++) {
			if (out[i].price != minus->price)
				continue;
			out[i].qty -= out[i].qty > minus->size ? minus->size : out[i].qty;
			out[i].orders -= out[i].orders ? 1 : 0;
			if (!out[i].orders) {
				memmove(&out[i], &out[i + 1], (k - i - 1) * sizeof(*out));
				k--;
			}
			break;
		}
	return k < n ? k : n;
}

/*
 * A venue's book of an instrument, n levels a side, as DBN levels. minus:
 * an add later in the same event (a replace's new order), which the book
 * after the event holds but the replace's cancel record must not show.
 */
static void book_levels(const struct venue_books *vb, uint8_t venue, uint16_t inst,
			struct dbn_level *lv, unsigned n, const struct order_action *minus)
{
	struct venue_level side[MBP_MAX_LEVELS + 1];
	unsigned k;

	for (unsigned i = 0; i < n; i++)
		lv[i] = (struct dbn_level){ .bid_px = DBN_PRICE_UNDEF, .ask_px = DBN_PRICE_UNDEF };
	k = side_levels(vb, venue, inst, WB_SIDE_BUY, side, n, minus);
	for (unsigned i = 0; i < k; i++) {
		lv[i].bid_px = dbn_price(side[i].price);
		lv[i].bid_sz = (uint32_t)side[i].qty;
		lv[i].bid_ct = side[i].orders;
	}
	k = side_levels(vb, venue, inst, WB_SIDE_SELL, side, n, minus);
	for (unsigned i = 0; i < k; i++) {
		lv[i].ask_px = dbn_price(side[i].price);
		lv[i].ask_sz = (uint32_t)side[i].qty;
		lv[i].ask_ct = side[i].orders;
	}
}

/*
 * Where PRICE stands on SIDE's levels: how many levels are better (the
 * record's depth), and whether that is within the n levels shown (a level
 * that went away was within them if what is left ends worse than it).
 */
static int level_of(const struct dbn_level *lv, unsigned n, char side, int64_t price,
		    uint8_t *depth)
{
	unsigned better = 0, have = 0;

	*depth = 0;
	if (side == 'N' || price == SINK_PRICE_NONE)
		return 1;
	price = dbn_price(price);
	for (unsigned i = 0; i < n; i++) {
		int64_t px = side == 'B' ? lv[i].bid_px : lv[i].ask_px;

		if (px == DBN_PRICE_UNDEF)
			break;
		have++;
		if (side == 'B' ? px > price : px < price)
			better++;
	}
	*depth = (uint8_t)better;
	return better < n || have < n;
}

static void record_of(struct dbn_record *r, const struct wb_event *ev, const struct order_action *a)
{
	memset(r, 0, sizeof(*r));
	r->publisher_id = dbn_publisher(ev->venue);
	r->instrument_id = a->instrument;
	r->ts_event = ev->exch_ts;
	r->ts_recv = ev->recv_ts;
	r->order_id = a->order_id;
	r->price = a->price == SINK_PRICE_NONE ? DBN_PRICE_UNDEF : dbn_price(a->price);
	r->size = a->size;
	r->channel_id = (uint8_t)ev->line;
	r->action = a->action;
	r->side = a->side;
	r->sequence = (uint32_t)ev->seq;
}

/* An MBP record of action a with the book as it stands (n levels). */
static void encode_mbp_now(uint8_t *out, const struct venue_books *vb, const struct wb_event *ev,
			   const struct order_action *a, unsigned n)
{
	struct dbn_level lv[MBP_MAX_LEVELS];
	struct dbn_record r;
	char side = a->action == 'T' ? (a->side == 'B' ? 'A' : a->side == 'A' ? 'B' : 'N') : a->side;

	book_levels(vb, ev->venue, a->instrument, lv, n, NULL);
	record_of(&r, ev, a);
	level_of(lv, n, side, a->price, &r.depth);	/* a trade's level: the resting side's */
	dbn_encode_mbp(out, &r, lv, n);
}

void dbn_writer_before(struct dbn_writer *w, const struct venue_books *vb,
		       const struct sink_event *se)
{
	for (unsigned i = 0; i < se->n; i++) {
		if (se->act[i].action != 'T')
			continue;
		if (w->want & DBN_WANT_MBP_1)
			encode_mbp_now(w->pend1[i], vb, se->ev, &se->act[i], 1);
		if (w->want & DBN_WANT_MBP_10)
			encode_mbp_now(w->pend10[i], vb, se->ev, &se->act[i], 10);
	}
}

/* The MBP-n record of a book change, when it is within the n levels. */
static void mbp_after(struct dbn_out *o, const struct venue_books *vb, const struct wb_event *ev,
		      const struct order_action *a, unsigned n, const struct order_action *minus)
{
	struct dbn_level lv[MBP_MAX_LEVELS];
	struct dbn_record r;
	uint8_t *p;

	book_levels(vb, ev->venue, a->instrument, lv, n, minus);
	record_of(&r, ev, a);
	if (!level_of(lv, n, a->side, a->price, &r.depth))
		return;
	p = out_record(o, 48 + n * DBN_LEVEL_LEN, a->instrument);
	if (p)
		dbn_encode_mbp(p, &r, lv, n);
}

void dbn_writer_after(struct dbn_writer *w, const struct venue_books *vb,
		      const struct sink_event *se)
{
	const struct wb_event *ev = se->ev;

	for (unsigned i = 0; i < se->n; i++) {
		const struct order_action *a = &se->act[i], *minus;
		struct dbn_record r;
		uint8_t *p;

		if (!w->first_recv)
			w->first_recv = ev->recv_ts;
		w->last_recv = ev->recv_ts;
		w->seen[a->instrument] = 1;
		record_of(&r, ev, a);
		if ((w->want & DBN_WANT_MBO) && (p = out_record(&w->out[OUT_MBO], DBN_MBO_LEN,
								 a->instrument)))
			dbn_encode_mbo(p, &r);
		if (a->action == 'T') {
			if ((w->want & DBN_WANT_TRADES) &&
			    (p = out_record(&w->out[OUT_TRADES], DBN_TRADE_LEN, a->instrument)))
				dbn_encode_trade(p, &r);
			if ((w->want & DBN_WANT_MBP_1) &&
			    (p = out_record(&w->out[OUT_MBP_1], DBN_MBP1_LEN, a->instrument)))
				memcpy(p, w->pend1[i], DBN_MBP1_LEN);
			if ((w->want & DBN_WANT_MBP_10) &&
			    (p = out_record(&w->out[OUT_MBP_10], DBN_MBP10_LEN, a->instrument)))
				memcpy(p, w->pend10[i], DBN_MBP10_LEN);
			continue;
		}
		if (a->action == 'F')
			continue;	/* MBP has no fills: the cancel after it shows */
		minus = i + 1 < se->n && se->act[i + 1].action == 'A' ? &se->act[i + 1] : NULL;
		if (w->want & DBN_WANT_MBP_1)
			mbp_after(&w->out[OUT_MBP_1], vb, ev, a, 1, minus);
		if (w->want & DBN_WANT_MBP_10)
			mbp_after(&w->out[OUT_MBP_10], vb, ev, a, 10, minus);
	}
}

static int put(FILE *f, void *zc, const void *buf, size_t n, int end, uint8_t *zbuf, size_t zcap);

/* Append to the records file (through its compressor; end: the frame's end). */
static void tmp_write(struct dbn_out *o, const void *buf, size_t n, int end)
{
#ifdef WB_ZSTD
	if (!o->failed && put(o->tmp, o->tz, buf, n, end, o->tzbuf, ZBUF_LEN) < 0)
		o->failed = 1;
#else
	if (!end && fwrite(buf, 1, n, o->tmp) != n)
		o->failed = 1;
#endif
}

void dbn_writer_flush(struct dbn_writer *w)
{
	for (unsigned k = 0; k < OUT_COUNT; k++) {
		struct dbn_out *o = &w->out[k];
		size_t len = out_kind[k].len;

		if (!o->tmp || !o->group_n)
			continue;
		/* F_LAST: each instrument's last record of the packet */
		w->gen++;
		for (size_t i = o->group_n; i-- > 0;) {
			uint16_t inst = o->group_inst[i];

			if (w->stamp[inst] != w->gen) {
				w->stamp[inst] = w->gen;
				o->group[i * len + out_kind[k].flags_at] |= DBN_F_LAST;
			}
		}
		tmp_write(o, o->group, o->group_len, 0);
		o->records += o->group_n;
		o->group_len = 0;
		o->group_n = 0;
	}
}

static uint32_t yyyymmdd(uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&t, &tm);
	return (uint32_t)((tm.tm_year + 1900) * 10000 + (tm.tm_mon + 1) * 100 + tm.tm_mday);
}

/* What the metadata says of this export. */
static uint8_t *metadata_bytes(const struct dbn_writer *w, unsigned k, const char (*ticker)[9],
			       size_t *len)
{
	struct dbn_mapping *mp = calloc(INSTRUMENTS, sizeof(*mp));
	struct dbn_metadata m = { .dataset = "WIREBOOK", .schema = out_kind[k].schema,
				  .start = w->first_recv,
				  .end = w->last_recv ? w->last_recv + 1 : DBN_TS_UNDEF };
	uint64_t next_day = w->last_recv + 86400ull * 1000000000ull;
	uint8_t *out;

	if (!mp)
		return NULL;
	for (uint32_t i = 1; i < INSTRUMENTS; i++) {
		if (!w->seen[i] || !ticker || !ticker[i][0])
			continue;
		mp[m.nmappings++] = (struct dbn_mapping){
			.raw_symbol = ticker[i], .start_date = yyyymmdd(w->first_recv),
			.end_date = yyyymmdd(next_day), .instrument_id = i };
	}
	m.mappings = mp;
	*len = dbn_metadata_len(&m);
	out = malloc(*len);
	if (out)
		dbn_encode_metadata(out, &m);
	free(mp);
	return out;
}

/* Write buf to f, through zstd when zc is given (end: the frame's end). */
static int put(FILE *f, void *zc, const void *buf, size_t n, int end, uint8_t *zbuf, size_t zcap)
{
#ifdef WB_ZSTD
	if (zc) {
		ZSTD_inBuffer in = { buf, n, 0 };
		size_t left;

		do {
			ZSTD_outBuffer zo = { zbuf, zcap, 0 };

			left = ZSTD_compressStream2(zc, &zo, &in, end ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(left) || fwrite(zbuf, 1, zo.pos, f) != zo.pos)
				return -1;
		} while (end ? left != 0 : in.pos < in.size);
		return 0;
	}
#else
	(void)zc;
	(void)end;
	(void)zbuf;
	(void)zcap;
#endif
	return fwrite(buf, 1, n, f) == n ? 0 : -1;
}

static int finish(struct dbn_writer *w, unsigned k, const char (*ticker)[9], char *err,
		  size_t errlen)
{
	struct dbn_out *o = &w->out[k];
	size_t mlen, n, zcap = ZBUF_LEN;
	uint8_t *meta = metadata_bytes(w, k, ticker, &mlen);
	uint8_t *buf = malloc(COPY_CHUNK), *zbuf = malloc(zcap);
	void *zc = NULL;
	FILE *f = NULL;
	int rc = -1;

	if (!meta || !buf || !zbuf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	tmp_write(o, NULL, 0, 1);
	if (o->failed || fflush(o->tmp)) {
		snprintf(err, errlen, "%s: could not write the records", o->tmp_path);
		goto out;
	}
	f = fopen(o->path, "wb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
		goto out;
	}
#ifdef WB_ZSTD
	zc = ZSTD_createCCtx();
	if (!zc) {
		snprintf(err, errlen, "zstd: out of memory");
		goto out;
	}
#endif
	/* the header and the records: one zstd frame, as Databento's .dbn.zst */
	if (put(f, zc, meta, mlen, 0, zbuf, zcap) < 0)
		goto werr;
	o->tmp = freopen(o->tmp_path, "rb", o->tmp);
	if (!o->tmp)
		goto werr;
#ifdef WB_ZSTD
	{
		/* the records file's frame, decompressed into the final frame */
		ZSTD_DCtx *dz = ZSTD_createDCtx();
		uint8_t *plain = malloc(COPY_CHUNK);
		int bad = !dz || !plain;

		while (!bad && (n = fread(buf, 1, COPY_CHUNK, o->tmp)) > 0) {
			ZSTD_inBuffer in = { buf, n, 0 };

			while (!bad && in.pos < in.size) {
				ZSTD_outBuffer po = { plain, COPY_CHUNK, 0 };

				bad = ZSTD_isError(ZSTD_decompressStream(dz, &po, &in)) ||
				      put(f, zc, plain, po.pos, 0, zbuf, zcap) < 0;
			}
		}
		ZSTD_freeDCtx(dz);
		free(plain);
		if (bad)
			goto werr;
	}
#else
	while ((n = fread(buf, 1, COPY_CHUNK, o->tmp)) > 0)
		if (put(f, zc, buf, n, 0, zbuf, zcap) < 0)
			goto werr;
#endif
	if (put(f, zc, buf, 0, 1, zbuf, zcap) < 0)
		goto werr;
	rc = 0;
	goto out;
werr:
	snprintf(err, errlen, "%s: write failed", o->path);
out:
#ifdef WB_ZSTD
	ZSTD_freeCCtx(zc);
#endif
	if (f && fclose(f) && !rc) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
		rc = -1;
	}
	free(meta);
	free(buf);
	free(zbuf);
	return rc;
}

int dbn_writer_close(struct dbn_writer *w, const char (*ticker)[9], char *err, size_t errlen)
{
	int rc = 0;

	dbn_writer_flush(w);
	for (unsigned k = 0; k < OUT_COUNT; k++) {
		struct dbn_out *o = &w->out[k];

		if (o->tmp && errlen && rc == 0 && finish(w, k, ticker, err, errlen) < 0)
			rc = -1;
		if (o->tmp)
			fclose(o->tmp);
		if (o->tmp_path[0])
			remove(o->tmp_path);
		free(o->group);
		free(o->group_inst);
#ifdef WB_ZSTD
		ZSTD_freeCCtx(o->tz);
		free(o->tzbuf);
#endif
	}
	free(w->seen);
	free(w);
	return rc;
}

uint64_t dbn_writer_records(const struct dbn_writer *w)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < OUT_COUNT; k++)
		n += w->out[k].records;
	return n;
}
