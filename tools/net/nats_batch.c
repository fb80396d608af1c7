/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The batch format of the normalized stream over NATS; see nats_batch.h. */
#include <stdio.h>
#include <string.h>

#include "net/nats_batch.h"
#include "wire/bytes.h"

void nats_batch_put_header(uint8_t *out, const struct nats_batch_header *h)
{
	memset(out, 0, NATS_BATCH_HEADER);
	wire_put_le32(out + 0, NATS_BATCH_MAGIC);
	wire_put_le16(out + 4, NATS_BATCH_VERSION);
	wire_put_le16(out + 6, h->flags);
	wire_put_le16(out + 8, h->line);
	out[10] = h->venue;
	wire_put_le32(out + 12, h->count);
	wire_put_le64(out + 16, h->run);
	wire_put_le64(out + 24, h->first);
	wire_put_le64(out + 32, h->seq_first);
	wire_put_le64(out + 40, h->seq_last);
	wire_put_le32(out + 48, h->runs);
}

size_t nats_batch_size(uint32_t runs, uint32_t count)
{
	return NATS_BATCH_HEADER + (size_t)runs * NATS_BATCH_RUN_SIZE +
	       (size_t)count * sizeof(struct wb_event);
}

int nats_batch_parse(const uint8_t *msg, size_t len, struct nats_batch_header *h, char *err,
		     size_t errlen)
{
	if (len < NATS_BATCH_HEADER || wire_le32(msg) != NATS_BATCH_MAGIC) {
		snprintf(err, errlen, "not a wirebook batch (%zu bytes, no WBNB header)", len);
		return -1;
	}
	if (wire_le16(msg + 4) != NATS_BATCH_VERSION) {
		snprintf(err, errlen, "batch version %u, this wirebook reads %u", wire_le16(msg + 4),
			 NATS_BATCH_VERSION);
		return -1;
	}
	h->flags = wire_le16(msg + 6);
	h->line = wire_le16(msg + 8);
	h->venue = msg[10];
	h->count = wire_le32(msg + 12);
	h->run = wire_le64(msg + 16);
	h->first = wire_le64(msg + 24);
	h->seq_first = wire_le64(msg + 32);
	h->seq_last = wire_le64(msg + 40);
	h->runs = wire_le32(msg + 48);
	if (h->runs > h->count || len != nats_batch_size(h->runs, h->count)) {
		snprintf(err, errlen, "batch of %u runs and %u events in %zu bytes", h->runs, h->count,
			 len);
		return -1;
	}
	if (!(h->flags & NATS_BATCH_END)) {
		uint64_t in_runs = 0;
		uint32_t i;

		for (i = 0; i < h->runs; i++) {
			struct nats_batch_run r;

			nats_batch_run_at(msg, i, &r);
			if (!r.first || !r.count) {
				snprintf(err, errlen, "batch run %u: %u events from %llu", i, r.count,
					 (unsigned long long)r.first);
				return -1;
			}
			in_runs += r.count;
		}
		if (h->count == 0 || h->first == 0 || in_runs != h->count) {
			snprintf(err, errlen, "data batch of %u events from event %llu, %llu in its runs",
				 h->count, (unsigned long long)h->first, (unsigned long long)in_runs);
			return -1;
		}
	}
	return 0;
}

void nats_batch_run_at(const uint8_t *msg, uint32_t i, struct nats_batch_run *out)
{
	const uint8_t *p = msg + NATS_BATCH_HEADER + (size_t)i * NATS_BATCH_RUN_SIZE;

	out->first = wire_le64(p);
	out->count = wire_le32(p + 8);
}

void nats_batch_put_run(uint8_t *msg, uint32_t i, const struct nats_batch_run *r)
{
	uint8_t *p = msg + NATS_BATCH_HEADER + (size_t)i * NATS_BATCH_RUN_SIZE;

	memset(p, 0, NATS_BATCH_RUN_SIZE);
	wire_put_le64(p, r->first);
	wire_put_le32(p + 8, r->count);
}

const uint8_t *nats_batch_event_at(const uint8_t *msg, const struct nats_batch_header *h,
				   uint32_t i)
{
	return msg + NATS_BATCH_HEADER + (size_t)h->runs * NATS_BATCH_RUN_SIZE +
	       (size_t)i * sizeof(struct wb_event);
}

void nats_subject_token(char *out, size_t size, const char *name)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; name[i] && i + 1 < size; i++)
		out[i] = name[i] == '.' || name[i] == '*' || name[i] == '>' || name[i] <= ' ' ?
				 '_' : name[i];
	out[i] = 0;
}
