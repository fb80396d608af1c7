/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * hftbacktest's event arrays, as wb-export --format hftbacktest writes
 * them: one asset a venue's book of a symbol, two files each,
 * OUTPUT/SYMBOL.VENUE.l3.npz (order by order) and SYMBOL.VENUE.l2.npz
 * (price levels), each a zip holding data.npy, a 1-D array of
 * hftbacktest's event_dtype (docs/specs/hftbacktest.md).
 */
#ifndef WIREBOOK_EXPORT_HFTBACKTEST_H
#define WIREBOOK_EXPORT_HFTBACKTEST_H

#include <stddef.h>
#include <stdint.h>

#include "export/sink.h"

/* ev: the kind in the low byte, side and processor flags in the high bits */
#define HBT_DEPTH_EVENT 1ull
#define HBT_TRADE_EVENT 2ull
#define HBT_DEPTH_CLEAR_EVENT 3ull
#define HBT_ADD_ORDER_EVENT 10ull
#define HBT_CANCEL_ORDER_EVENT 11ull
#define HBT_MODIFY_ORDER_EVENT 12ull
#define HBT_FILL_EVENT 13ull
#define HBT_EXCH_EVENT (1ull << 31)
#define HBT_LOCAL_EVENT (1ull << 30)
#define HBT_BUY_EVENT (1ull << 29)
#define HBT_SELL_EVENT (1ull << 28)

#define HBT_ROW_LEN 64

struct hbt_row {
	uint64_t ev;
	int64_t exch_ts, local_ts;
	double px, qty;
	uint64_t order_id;
	int64_t ival;
	double fval;
};

/* A row as the array holds it (little-endian, 64 bytes). */
void hbt_encode_row(uint8_t out[HBT_ROW_LEN], const struct hbt_row *r);
/* The .npy header of an array of n rows: len bytes, a multiple of 64. */
size_t hbt_npy_header(char *out, size_t cap, uint64_t n);

struct hbt_writer;
struct hbt_writer *hbt_writer_open(const char *dir, char *err, size_t errlen);
void hbt_writer_after(struct hbt_writer *w, const struct sink_event *se);
int hbt_writer_close(struct hbt_writer *w, const char (*ticker)[9], char *err, size_t errlen);
uint64_t hbt_writer_rows(const struct hbt_writer *w);

#endif /* WIREBOOK_EXPORT_HFTBACKTEST_H */
