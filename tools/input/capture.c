/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* A whole input in memory, packet by packet (see capture.h). */
#include "input/capture.h"
#include "input/itch_file.h"
#include "input/pcap_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* BinaryFILE packets: one a microsecond from an arbitrary fixed epoch. */
#define CAPTURE_FILE_EPOCH_NS 1700000000000000000ull
#define CAPTURE_FILE_PACKET_NS 1000u

void capture_init(struct capture *c, enum capture_kind kind, const char *format)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->format = format;
}

static int grow(void **p, uint64_t *cap, uint64_t need, size_t unit, uint64_t first)
{
	uint64_t n = *cap ? *cap : first;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * unit);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

int capture_add(struct capture *c, const uint8_t *data, uint32_t len, uint64_t recv_ts)
{
	if (grow((void **)&c->bytes, &c->bytes_cap, c->size + len, 1, 1u << 20) < 0 ||
	    grow((void **)&c->packets, &c->packets_cap, c->count + 1, sizeof(*c->packets), 4096) < 0)
		return -1;
	memcpy(c->bytes + c->size, data, len);
	c->packets[c->count++] = (struct capture_packet){ .offset = c->size, .recv_ts = recv_ts, .len = len };
	c->size += len;
	return 0;
}

void capture_free(struct capture *c)
{
	free(c->bytes);
	free(c->packets);
	memset(c, 0, sizeof(*c));
}

static int is_pcap_magic(const uint8_t m[4])
{
	static const uint8_t magics[][4] = {
		{ 0xd4, 0xc3, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0xc3, 0xd4 },	/* us */
		{ 0x4d, 0x3c, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0x3c, 0x4d },	/* ns */
		{ 0x0a, 0x0d, 0x0d, 0x0a },				/* pcapng */
	};

	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (memcmp(m, magics[i], 4) == 0)
			return 1;
	return 0;
}

/* The first four bytes as stored (raw) and as gzread sees them (decompressed). */
static int peek(const char *path, uint8_t raw[4], uint8_t plain[4], char *err, size_t err_len)
{
	FILE *f = fopen(path, "rb");
	gzFile gz;
	size_t n;

	memset(raw, 0, 4);
	memset(plain, 0, 4);
	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(raw, 1, 4, f);
	fclose(f);
	if (n < 4)
		return 0;	/* too short for either: the BinaryFILE reader says why */
	gz = gzopen(path, "rb");
	if (gz) {
		if (gzread(gz, plain, 4) != 4)
			memset(plain, 0, 4);
		gzclose(gz);
	}
	return 0;
}

static int load_pcap(struct capture *c, const char *path, char *err, size_t err_len)
{
	struct pcap_reader rd;
	const uint8_t *frame;
	uint32_t len;
	uint64_t ts;
	int rc;

	if (pcap_reader_open(&rd, path, err, err_len) < 0)
		return -1;
	capture_init(c, CAPTURE_FRAMES, "pcap");
	while ((rc = pcap_reader_next(&rd, &frame, &len, &ts, err, err_len)) == 1)
		if (capture_add(c, frame, len, ts) < 0) {
			snprintf(err, err_len, "%s: out of memory after %llu frames", path,
				 (unsigned long long)c->count);
			rc = -1;
			break;
		}
	pcap_reader_close(&rd);
	return rc < 0 ? -1 : 0;
}

static int load_itch_file(struct capture *c, const char *path, int gz, char *err, size_t err_len)
{
	struct itch_file *f = malloc(sizeof(*f));
	uint8_t *pkt = malloc(ITCH_FILE_PACKET_MAX);
	uint64_t seq = 1;
	char why[ITCH_FILE_ERR_LEN];
	int len, rc = -1;

	capture_init(c, CAPTURE_PAYLOADS, gz ? "itch-file.gz" : "itch-file");
	if (!f || !pkt) {
		snprintf(err, err_len, "out of memory");
		goto out;
	}
	if (itch_file_open_read(f, path, err, err_len) < 0) {
		free(f);
		f = NULL;
		goto out;
	}
	while ((len = itch_file_next_packet(f, pkt, &seq, why, sizeof(why))) > 0)
		if (capture_add(c, pkt, (uint32_t)len,
				CAPTURE_FILE_EPOCH_NS + c->count * CAPTURE_FILE_PACKET_NS) < 0) {
			snprintf(err, err_len, "%s: out of memory after %llu messages", path,
				 (unsigned long long)f->messages);
			goto out;
		}
	if (len < 0) {
		snprintf(err, err_len, "%s: %s", path, why);
		goto out;
	}
	c->file_messages = f->messages;
	rc = 0;
out:
	if (f) {
		itch_file_close(f, why, sizeof(why));
		free(f);
	}
	free(pkt);
	return rc;
}

int capture_load(struct capture *c, const char *path, int itch_line, char *err, size_t err_len)
{
	uint8_t raw[4], plain[4];
	int gz, rc;

	capture_init(c, CAPTURE_FRAMES, NULL);
	if (peek(path, raw, plain, err, err_len) < 0)
		return -1;
	gz = raw[0] == 0x1f && raw[1] == 0x8b;
	if (is_pcap_magic(raw))
		rc = load_pcap(c, path, err, err_len);
	else if (gz && is_pcap_magic(plain)) {
		snprintf(err, err_len, "%s: a gzip-compressed capture: gunzip it first "
			 "(only BinaryFILEs are read compressed)", path);
		return -1;
	} else if (itch_line < 0) {
		snprintf(err, err_len, "%s: not a pcap, so read as a Nasdaq BinaryFILE, which needs "
			 "an 'itch nasdaq' line in the feed map", path);
		return -1;
	} else
		rc = load_itch_file(c, path, gz, err, err_len);
	if (rc < 0)
		capture_free(c);
	return rc;
}

uint64_t capture_replay(const struct capture *c, uint64_t first, uint64_t last, int line,
			struct feed_engine *e, struct wb_ring_producer *out)
{
	uint64_t mapped = 0;

	if (last > c->count)
		last = c->count;
	for (uint64_t i = first; i < last; i++) {
		const struct capture_packet *p = &c->packets[i];

		if (c->kind == CAPTURE_PAYLOADS) {
			feed_process_payload(e, line, c->bytes + p->offset, p->len, p->recv_ts, out);
			mapped++;
		} else if (feed_process_frame(e, c->bytes + p->offset, p->len, p->recv_ts, out) >= 0) {
			mapped++;
		}
	}
	return mapped;
}
