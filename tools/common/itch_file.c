/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Nasdaq BinaryFILE reading and writing, plain or gzip (see itch_file.h). */
#include "common/itch_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

int itch_file_open_read(struct itch_file *f, const char *path, char *err, size_t err_len)
{
	struct stat st;

	f->gz = NULL;
	f->messages = 0;
	if (stat(path, &st) != 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: is a directory, not an ITCH file", path);
		return -1;
	}
	f->gz = gzopen(path, "rb");
	if (!f->gz) {
		snprintf(err, err_len, "%s: %s", path, errno ? strerror(errno) : "cannot open");
		return -1;
	}
	gzbuffer(f->gz, GZ_BUFFER_BYTES);
	return 0;
}

int itch_file_next(struct itch_file *f, const uint8_t **msg, uint16_t *len, char *err,
		   size_t err_len)
{
	uint8_t hdr[2];
	int got = gzread(f->gz, hdr, 2);
	uint16_t n;

	if (got == 0)
		return 0;
	if (got < 0) {
		gz_error_text(f->gz, err, err_len, "read error");
		return -1;
	}
	if (got == 1) {
		snprintf(err, err_len, "file ends inside the length of message %llu",
			 (unsigned long long)f->messages + 1);
		return -1;
	}
	n = (uint16_t)(hdr[0] << 8 | hdr[1]);
	got = n ? gzread(f->gz, f->msg, n) : 0;
	if (got < 0) {
		gz_error_text(f->gz, err, err_len, "read error");
		return -1;
	}
	if (got != n) {
		snprintf(err, err_len, "file ends inside message %llu (%d of %u bytes)",
			 (unsigned long long)f->messages + 1, got, n);
		return -1;
	}
	f->messages++;
	*msg = f->msg;
	*len = n;
	return 1;
}

int itch_file_open_write(struct itch_file *f, const char *path, bool gzip, char *err,
			 size_t err_len)
{
	f->messages = 0;
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

bool itch_file_path_is_gz(const char *path)
{
	size_t n = strlen(path);

	return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}
