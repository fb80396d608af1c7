/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Databento Binary Encoding (DBN), version 3, as wb-export --format dbn
 * writes it: the metadata header and the MBO, MBP-1, MBP-10 and trades
 * records (docs/specs/dbn.md has the layout and its sources). The encoders
 * are pure (bytes out, no I/O) so that unit tests can hold them to golden
 * bytes; the writer (dbn_writer_*) keeps one file per schema.
 */
#ifndef WIREBOOK_EXPORT_DBN_H
#define WIREBOOK_EXPORT_DBN_H

#include <stddef.h>
#include <stdint.h>

#include "export/sink.h"

#define DBN_VERSION 3
#define DBN_PRICE_UNDEF INT64_MAX
#define DBN_TS_UNDEF UINT64_MAX
#define DBN_SYMBOL_CSTR_LEN 71
#define DBN_DATASET_CSTR_LEN 16

/* rtype */
#define DBN_RTYPE_MBP_0 0x00	/* trades */
#define DBN_RTYPE_MBP_1 0x01
#define DBN_RTYPE_MBP_10 0x0a
#define DBN_RTYPE_MBO 0xa0

/* the metadata's schema */
enum dbn_schema {
	DBN_SCHEMA_MBO = 0,
	DBN_SCHEMA_MBP_1 = 1,
	DBN_SCHEMA_MBP_10 = 2,
	DBN_SCHEMA_TRADES = 4,
};

/* flags */
#define DBN_F_LAST 0x80
#define DBN_F_MAYBE_BAD_BOOK 0x04

/* record sizes in bytes (the header's length byte is a quarter of it) */
#define DBN_MBO_LEN 56
#define DBN_TRADE_LEN 48
#define DBN_MBP1_LEN 80
#define DBN_MBP10_LEN 368
#define DBN_LEVEL_LEN 32

struct dbn_level {
	int64_t bid_px, ask_px;		/* 1e-9; DBN_PRICE_UNDEF: no level */
	uint32_t bid_sz, ask_sz, bid_ct, ask_ct;
};

/* The fields of an MBO, MBP or trade record (each encoder takes its own). */
struct dbn_record {
	uint16_t publisher_id;
	uint32_t instrument_id;
	uint64_t ts_event, ts_recv;
	uint64_t order_id;		/* MBO */
	int64_t price;			/* 1e-9 */
	uint32_t size;
	uint8_t flags;
	uint8_t channel_id;		/* MBO */
	uint8_t depth;			/* MBP, trades */
	char action, side;
	int32_t ts_in_delta;
	uint32_t sequence;
};

size_t dbn_encode_mbo(uint8_t out[DBN_MBO_LEN], const struct dbn_record *r);
size_t dbn_encode_trade(uint8_t out[DBN_TRADE_LEN], const struct dbn_record *r);
/* nlevels 1 (MBP-1) or 10 (MBP-10) */
size_t dbn_encode_mbp(uint8_t *out, const struct dbn_record *r, const struct dbn_level *levels,
		      unsigned nlevels);

struct dbn_mapping {
	const char *raw_symbol;
	uint32_t start_date, end_date;	/* YYYYMMDD, end exclusive */
	uint32_t instrument_id;		/* the interval's symbol, in decimal */
};

struct dbn_metadata {
	const char *dataset;
	uint16_t schema;		/* enum dbn_schema */
	uint64_t start, end;		/* ns; end DBN_TS_UNDEF when unknown */
	const struct dbn_mapping *mappings;
	unsigned nmappings;		/* also the symbols list, in the same order */
};

/* Bytes the metadata takes (prefix included). */
size_t dbn_metadata_len(const struct dbn_metadata *m);
/* Encode into out (dbn_metadata_len bytes); returns the length. */
size_t dbn_encode_metadata(uint8_t *out, const struct dbn_metadata *m);

/* Databento's publisher id of a wirebook venue (0 when it has none). */
uint16_t dbn_publisher(uint8_t venue);

/* Wirebook's 1e-8 dollars to DBN's 1e-9 (INT64_MAX stays undefined). */
static inline int64_t dbn_price(int64_t wb_price)
{
	return wb_price == INT64_MAX ? DBN_PRICE_UNDEF : wb_price * 10;
}

/* The writer: OUTPUT/SCHEMA.dbn[.zst] for each schema asked for. */
#define DBN_WANT_MBO (1u << 0)
#define DBN_WANT_MBP_1 (1u << 1)
#define DBN_WANT_MBP_10 (1u << 2)
#define DBN_WANT_TRADES (1u << 3)
#define DBN_WANT_ALL 0xfu

/* A --schema list ("mbo,mbp-1,mbp-10,trades") as DBN_WANT_* bits; 0 if a name is unknown. */
unsigned dbn_schemas(const char *list);
/* 1 when this build compresses (libzstd). */
int dbn_zstd(void);

struct dbn_writer;
struct dbn_writer *dbn_writer_open(const char *dir, unsigned want, char *err, size_t errlen);
/* The trades' MBP records need the book before the event applies. */
void dbn_writer_before(struct dbn_writer *w, const struct venue_books *vb,
		       const struct sink_event *se);
void dbn_writer_after(struct dbn_writer *w, const struct venue_books *vb,
		      const struct sink_event *se);
/* The end of a packet: F_LAST on each instrument's last record, then out. */
void dbn_writer_flush(struct dbn_writer *w);
int dbn_writer_close(struct dbn_writer *w, const char (*ticker)[9], char *err, size_t errlen);
uint64_t dbn_writer_records(const struct dbn_writer *w);

#endif /* WIREBOOK_EXPORT_DBN_H */
