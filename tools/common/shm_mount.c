#include "common/shm_mount.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mount_line_fields(const char *line, struct mount_line *m)
{
	const char *p = line;

	for (int i = 0; i < 4; i++) {
		p += strspn(p, " \t");
		m->len[i] = (int)strcspn(p, " \t\n");
		if (m->len[i] == 0)
			return -1;
		m->field[i] = p;
		p += m->len[i];
	}
	return 0;
}

static bool field_is(const struct mount_line *m, int i, const char *s)
{
	return (size_t)m->len[i] == strlen(s) && strncmp(m->field[i], s, (size_t)m->len[i]) == 0;
}

int shm_mount_find(const char *root, char *type, size_t type_len, char *opts, size_t opts_len)
{
	char path[PATH_MAX], *line = NULL;
	struct mount_line m;
	size_t cap = 0;
	int i = 0, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/mounts", root);
	f = fopen(path, "r");
	if (!f)
		return -2;
	for (; getline(&line, &cap, f) > 0; i++) {
		if (mount_line_fields(line, &m) < 0 || !field_is(&m, 1, "/dev/shm"))
			continue;
		snprintf(type, type_len, "%.*s", m.len[2], m.field[2]);
		snprintf(opts, opts_len, "%.*s", m.len[3], m.field[3]);
		found = i;
	}
	free(line);
	fclose(f);
	return found;
}

const char *mount_option(const char *opts, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);

	for (const char *p = opts; *p; p += strcspn(p, ","), p += *p == ',') {
		if (strncmp(p, name, len) == 0 && p[len] == '=') {
			snprintf(out, n, "%.*s", (int)strcspn(p + len + 1, ","), p + len + 1);
			return out;
		}
	}
	return NULL;
}

bool shm_mount_allows_huge(const char *type, const char *opts)
{
	char huge[64];

	if (strcmp(type, "tmpfs") != 0 || !mount_option(opts, "huge", huge, sizeof(huge)))
		return false;	/* the kernel shows no huge= for huge=never */
	return strcmp(huge, "advise") == 0 || strcmp(huge, "always") == 0 ||
	       strcmp(huge, "within_size") == 0;
}
