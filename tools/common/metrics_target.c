/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The metrics endpoint's discovery file (see metrics_target.h). */
#include "common/metrics_target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* s as a JSON string's contents. */
static void json_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

int metrics_target_write(const char *path, const char *addr_port, const char *book, char *err,
			 size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int bad;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "[{\"targets\": [\"%s\"], \"labels\": {\"book\": \"", addr_port);
	json_text(f, book);
	fprintf(f, "\"}}]\n");
	bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		return -1;
	}
	return 0;
}
