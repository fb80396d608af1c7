/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The book snapshot's format; see nats_snapshot.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/nats_snapshot.h"
#include "wire/bytes.h"

size_t nats_snap_size(uint64_t records)
{
	return NATS_SNAP_HEADER + (size_t)records * NATS_SNAP_RECORD;
}

void nats_snap_put_header(uint8_t *out, const struct nats_snap_header *h)
{
	memset(out, 0, NATS_SNAP_HEADER);
	wire_put_le32(out + 0, NATS_SNAP_MAGIC);
	wire_put_le16(out + 4, NATS_SNAP_VERSION);
	wire_put_le64(out + 8, h->run);
	wire_put_le64(out + 16, h->global);
	wire_put_le64(out + 24, h->start_seq);
	wire_put_le64(out + 32, h->records);
	wire_put_le64(out + 40, h->events);
	wire_put_le64(out + 48, h->taken_ns);
	memcpy(out + 56, h->stream, strnlen(h->stream, sizeof(h->stream) - 1));
}

int nats_snap_parse(const uint8_t *buf, size_t len, struct nats_snap_header *h, char *err,
		    size_t errlen)
{
	uint64_t i, events = 0;

	if (len < NATS_SNAP_HEADER || wire_le32(buf) != NATS_SNAP_MAGIC) {
		snprintf(err, errlen, "not a wirebook snapshot (%zu bytes, no WBNS header)", len);
		return -1;
	}
	if (wire_le16(buf + 4) != NATS_SNAP_VERSION) {
		snprintf(err, errlen, "snapshot version %u, this wirebook reads %u", wire_le16(buf + 4),
			 NATS_SNAP_VERSION);
		return -1;
	}
	memset(h, 0, sizeof(*h));
	h->run = wire_le64(buf + 8);
	h->global = wire_le64(buf + 16);
	h->start_seq = wire_le64(buf + 24);
	h->records = wire_le64(buf + 32);
	h->events = wire_le64(buf + 40);
	h->taken_ns = wire_le64(buf + 48);
	memcpy(h->stream, buf + 56, sizeof(h->stream) - 1);
	if (h->records > (len - NATS_SNAP_HEADER) / NATS_SNAP_RECORD ||
	    len != nats_snap_size(h->records)) {
		snprintf(err, errlen, "snapshot of %llu records in %zu bytes (truncated?)",
			 (unsigned long long)h->records, len);
		return -1;
	}
	for (i = 0; i < h->records; i++) {
		uint32_t repeat = wire_le32(buf + NATS_SNAP_HEADER + i * NATS_SNAP_RECORD);

		if (!repeat) {
			snprintf(err, errlen, "snapshot record %llu repeats 0 times",
				 (unsigned long long)i);
			return -1;
		}
		events += repeat;
	}
	if (events != h->events || !h->run || !h->start_seq) {
		snprintf(err, errlen, "snapshot says %llu events (run %llu, from sequence %llu), its "
			 "records hold %llu", (unsigned long long)h->events,
			 (unsigned long long)h->run, (unsigned long long)h->start_seq,
			 (unsigned long long)events);
		return -1;
	}
	return 0;
}

uint32_t nats_snap_record_at(const uint8_t *snap, uint64_t i, struct wb_event *ev)
{
	const uint8_t *p = snap + NATS_SNAP_HEADER + i * NATS_SNAP_RECORD;

	memcpy(ev, p + 8, sizeof(*ev));
	return wire_le32(p);
}

void nats_snap_writer_add(struct nats_snap_writer *w, uint32_t repeat, const struct wb_event *ev)
{
	size_t need = nats_snap_size(w->records + 1);
	uint8_t *p;

	if (w->failed || !repeat)
		return;
	if (need > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1u << 20;
		uint8_t *nb;

		while (cap < need)
			cap *= 2;
		nb = realloc(w->buf, cap);
		if (!nb) {
			w->failed = 1;
			return;
		}
		w->buf = nb;
		w->cap = cap;
	}
	p = w->buf + nats_snap_size(w->records);
	wire_put_le32(p, repeat);
	wire_put_le32(p + 4, 0);
	memcpy(p + 8, ev, sizeof(*ev));
	w->records++;
	w->events += repeat;
}

size_t nats_snap_writer_finish(struct nats_snap_writer *w, struct nats_snap_header *h)
{
	if (!w->buf && !w->failed) {
		w->buf = malloc(NATS_SNAP_HEADER);
		w->cap = NATS_SNAP_HEADER;
		w->failed = !w->buf;
	}
	if (w->failed)
		return 0;
	h->records = w->records;
	h->events = w->events;
	nats_snap_put_header(w->buf, h);
	return nats_snap_size(w->records);
}

void nats_snap_writer_free(struct nats_snap_writer *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

size_t nats_snap_head_size(uint32_t chunks)
{
	return NATS_SNAP_HEAD_HEADER + (size_t)chunks * 8u;
}

void nats_snap_put_head(uint8_t *out, uint32_t chunks, uint64_t bytes, const uint64_t *seqs)
{
	uint32_t i;

	memset(out, 0, NATS_SNAP_HEAD_HEADER);
	wire_put_le32(out, NATS_SNAP_HEAD_MAGIC);
	wire_put_le16(out + 4, NATS_SNAP_VERSION);
	wire_put_le32(out + 8, chunks);
	wire_put_le64(out + 16, bytes);
	for (i = 0; i < chunks; i++)
		wire_put_le64(out + NATS_SNAP_HEAD_HEADER + (size_t)i * 8u, seqs[i]);
}

int nats_snap_parse_head(const uint8_t *msg, size_t len, uint32_t *chunks, uint64_t *bytes,
			 char *err, size_t errlen)
{
	if (len < NATS_SNAP_HEAD_HEADER || wire_le32(msg) != NATS_SNAP_HEAD_MAGIC ||
	    wire_le16(msg + 4) != NATS_SNAP_VERSION) {
		snprintf(err, errlen, "not a wirebook snapshot head (%zu bytes)", len);
		return -1;
	}
	*chunks = wire_le32(msg + 8);
	*bytes = wire_le64(msg + 16);
	if (*chunks > (len - NATS_SNAP_HEAD_HEADER) / 8u || len != nats_snap_head_size(*chunks) ||
	    *bytes < NATS_SNAP_HEADER || *bytes > (uint64_t)*chunks * NATS_SNAP_CHUNK) {
		snprintf(err, errlen, "snapshot head of %u chunks, %llu bytes, in %zu bytes", *chunks,
			 (unsigned long long)*bytes, len);
		return -1;
	}
	return 0;
}

uint64_t nats_snap_head_seq(const uint8_t *msg, uint32_t i)
{
	return wire_le64(msg + NATS_SNAP_HEAD_HEADER + (size_t)i * 8u);
}

void nats_stream_token(char *out, size_t size, const char *name)
{
	size_t i;

	if (!size)
		return;
	for (i = 0; name[i] && i + 1 < size; i++)
		out[i] = (name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
				 (name[i] >= '0' && name[i] <= '9') || name[i] == '-' ?
			 name[i] : '_';
	out[i] = 0;
}
