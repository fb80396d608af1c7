/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Nasdaq BinaryFILE reading and writing, plain or gzip (see itch_file.h). */
#include "input/itch_file.h"
#include "feed/feed.h"
#include "wire/bytes.h"
#include "wire/moldudp64.h"
#include "wire/itch50.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <zlib.h>

#define GZ_BUFFER_BYTES (256u * 1024u)

static void gz_error_text(gzFile gz, char *err, size_t err_len, const char *what)
{
	int code;
	const char *msg = gzerror(gz, &code);

	if (code == Z_ERRNO)
		msg = strerror(errno);
	snprintf(err, err_len, "%s: %s", what, msg && *msg ? msg : "unknown error");
}

#define READ_BUFFER_BYTES (1u << 20)	/* > the longest message and its length */

static ssize_t fill(struct itch_file *f, size_t want, char *err, size_t err_len);

/*
 * A pcap or pcapng capture given as a BinaryFILE would decode as garbage
 * messages (its magic reads as a length of thousands of bytes); no ITCH
 * message is that long, so these four bytes never start a BinaryFILE.
 */
static int starts_like_a_capture(struct itch_file *f, const char *path, char *err, size_t err_len)
{
	static const uint32_t capture_magic[] = {
		0xa1b2c3d4u, 0xd4c3b2a1u,	/* pcap, microseconds (either byte order) */
		0xa1b23c4du, 0x4d3cb2a1u,	/* pcap, nanoseconds */
		0x0a0d0d0au,			/* pcapng section header block */
	};
	char ignored[8];
	uint32_t magic;

	if (fill(f, 4, ignored, sizeof(ignored)) < 4)
		return 0;	/* short or unreadable: itch_file_next says what */
	magic = wire_be32(f->buf);
	for (size_t i = 0; i < sizeof(capture_magic) / sizeof(capture_magic[0]); i++)
		if (magic == capture_magic[i]) {
			snprintf(err, err_len, "%s is a %s capture, not a Nasdaq BinaryFILE: give it as "
				 "a capture (wirebookd --pcap FILE; wb-dump and wb-export: FILE "
				 "without --itch-file)", path, i == 4 ? "pcapng" : "pcap");
			return 1;
		}
	return 0;
}

int itch_file_name_date(const char *path, int *year, int *month, int *day)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	for (p = base; *p; p++) {
		size_t digits = strspn(p, "0123456789");

		if (digits == 8) {
			*month = (p[0] - '0') * 10 + (p[1] - '0');
			*day = (p[2] - '0') * 10 + (p[3] - '0');
			*year = atoi(p + 4) % 10000;
			if (feed_et_midnight_of_date(*year, *month, *day))
				return 1;
		}
		if (digits)
			p += digits - 1;
	}
	return 0;
}

int itch_file_trading_day(const char *path, const int given[3], int day[3], const char *also)
{
	const char *sep = also ? "; " : "", *tail = also ? also : "";

	if (given[0]) {
		memcpy(day, given, 3 * sizeof(day[0]));
		fprintf(stderr, "%s: %s: trading day %04d-%02d-%02d (--date)%s%s\n",
			program_invocation_short_name, path, day[0], day[1], day[2], sep, tail);
		return 1;
	}
	if (itch_file_name_date(path, &day[0], &day[1], &day[2])) {
		fprintf(stderr, "%s: %s: trading day %04d-%02d-%02d, from the file's name (MMDDYYYY; "
			"--date gives another)%s%s\n", program_invocation_short_name, path, day[0], day[1],
			day[2], sep, tail);
		return 1;
	}
	day[0] = day[1] = day[2] = 0;
	fprintf(stderr, "%s: warning: %s: no trading day (give --date YYYY-MM-DD; Nasdaq's names "
		"hold it as MMDDYYYY): exch_ts is the time since midnight, on no day (1970-01-01 read "
		"as epoch time)%s%s\n", program_invocation_short_name, path, sep, tail);
	return 0;
}

int itch_file_open_read(struct itch_file *f, const char *path, char *err, size_t err_len)
{
	struct stat st;

	f->gz = NULL;
	f->messages = 0;
	f->pending_error = 0;
	f->buf = NULL;
	f->pos = f->len = 0;
	f->eof = 0;
	if (stat(path, &st) != 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: is a directory, not an ITCH file", path);
		return -1;
	}
	f->buf = malloc(READ_BUFFER_BYTES);
	if (!f->buf) {
		snprintf(err, err_len, "%s: out of memory", path);
		return -1;
	}
	f->gz = gzopen(path, "rb");
	if (!f->gz) {
		snprintf(err, err_len, "%s: %s", path, errno ? strerror(errno) : "cannot open");
		free(f->buf);
		f->buf = NULL;
		return -1;
	}
	gzbuffer(f->gz, GZ_BUFFER_BYTES);
	if (starts_like_a_capture(f, path, err, err_len)) {
		gzclose(f->gz);
		f->gz = NULL;
		free(f->buf);
		f->buf = NULL;
		return ITCH_FILE_NOT_BINARYFILE;
	}
	return 0;
}

/* At least want bytes unread in the buffer, unless the file ends first:
 * returns the bytes unread, or -1 on a read error (err set). */
static ssize_t fill(struct itch_file *f, size_t want, char *err, size_t err_len)
{
	while (f->len - f->pos < want && !f->eof) {
		int got;

		if (f->pos) {
			memmove(f->buf, f->buf + f->pos, f->len - f->pos);
			f->len -= f->pos;
			f->pos = 0;
		}
		got = gzread(f->gz, f->buf + f->len, (unsigned)(READ_BUFFER_BYTES - f->len));
		if (got < 0) {
			gz_error_text(f->gz, err, err_len, "read error");
			return -1;
		}
		if (got == 0)
			f->eof = 1;
		f->len += (size_t)got;
	}
	return (ssize_t)(f->len - f->pos);
}

int itch_file_next(struct itch_file *f, const uint8_t **msg, uint16_t *len, char *err,
		   size_t err_len)
{
	ssize_t have = fill(f, 2, err, err_len);
	uint16_t n;

	if (have < 0)
		return -1;
	if (have == 0)
		return 0;
	if (have == 1) {
		snprintf(err, err_len, "file ends inside the length of message %llu",
			 (unsigned long long)f->messages + 1);
		return -1;
	}
	n = wire_be16(f->buf + f->pos);
	have = fill(f, 2u + n, err, err_len);
	if (have < 0)
		return -1;
	if ((size_t)have < 2u + n) {
		snprintf(err, err_len, "file ends inside message %llu (%d of %u bytes)",
			 (unsigned long long)f->messages + 1, (int)have - 2, n);
		return -1;
	}
	f->messages++;
	*msg = f->buf + f->pos + 2;
	*len = n;
	f->pos += 2u + n;
	return 1;
}

int itch_file_open_write(struct itch_file *f, const char *path, bool gzip, char *err,
			 size_t err_len)
{
	f->messages = 0;
	f->buf = NULL;
	/* "T" writes plain bytes through the same gz interface; level 1 keeps a
	 * generated day well under a minute at little cost in size. */
	f->gz = gzopen(path, gzip ? "wb1" : "wbT");
	if (!f->gz) {
		snprintf(err, err_len, "%s: %s", path, errno ? strerror(errno) : "cannot create");
		return -1;
	}
	gzbuffer(f->gz, GZ_BUFFER_BYTES);
	return 0;
}

int itch_file_write(struct itch_file *f, const uint8_t *msg, uint16_t len)
{
	uint8_t hdr[2] = { (uint8_t)(len >> 8), (uint8_t)len };

	if (gzwrite(f->gz, hdr, 2) != 2 || (len && gzwrite(f->gz, msg, len) != (int)len))
		return -1;
	f->messages++;
	return 0;
}

int itch_file_close(struct itch_file *f, char *err, size_t err_len)
{
	int rc;

	free(f->buf);
	f->buf = NULL;
	if (!f->gz)
		return 0;
	rc = gzclose(f->gz);
	f->gz = NULL;
	if (rc != Z_OK) {
		snprintf(err, err_len, "close failed: %s",
			 rc == Z_ERRNO ? strerror(errno) : zError(rc));
		return -1;
	}
	return 0;
}

int itch_file_next_packet(struct itch_file *f, uint8_t *pkt, uint64_t *next_seq, char *err,
			  size_t err_len)
{
	uint32_t len = MOLD_HEADER_LEN, count = 0;
	int rc = 1;

	f->packet_time_ns = 0;
	if (f->pending_error) {
		f->pending_error = 0;
		return -1;
	}
	/* BinaryFILE messages carry the same 2-byte length prefix MoldUDP64
	 * uses inside a packet: a packet is a header and the messages as read. */
	while (count < ITCH_FILE_PACKET_MESSAGES && len < ITCH_FILE_PACKET_PAYLOAD) {
		const uint8_t *msg;
		uint16_t mlen;

		rc = itch_file_next(f, &msg, &mlen, err, err_len);
		if (rc <= 0)
			break;
		wire_put_be16(pkt + len, mlen);
		memcpy(pkt + len + MOLD_BLOCK_LENGTH_LEN, msg, mlen);
		len += MOLD_BLOCK_LENGTH_LEN + mlen;
		count++;
		if (mlen >= ITCH_TIMESTAMP + ITCH_TIMESTAMP_LEN &&
		    wire_be48(msg + ITCH_TIMESTAMP) > f->packet_time_ns)
			f->packet_time_ns = wire_be48(msg + ITCH_TIMESTAMP);
	}
	if (!count)
		return rc;
	if (rc < 0)
		f->pending_error = 1;	/* err already says what; reported on the next call */
	memcpy(pkt + MOLD_SESSION, "BINFILE   ", MOLD_SESSION_LEN);
	wire_put_be64(pkt + MOLD_SEQUENCE, *next_seq);
	wire_put_be16(pkt + MOLD_COUNT, count);
	*next_seq += count;
	return (int)len;
}

bool itch_file_path_is_gz(const char *path)
{
	size_t n = strlen(path);

	return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}
