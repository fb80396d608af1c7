/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* feeds.conf lookup, reading and loading (see feeds_conf.h). */
#include "common/feeds_conf.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/*
 * Where a feed map is looked for, in order: the working directory, the
 * source tree (a build/ binary), then the install prefix the binary runs
 * from (PREFIX/bin/TOOL: PREFIX/etc, then /etc, then PREFIX/share), then
 * the usual prefixes. Paths relative to the binary make an install under
 * any PREFIX (or DESTDIR staged, then moved) find its own files.
 */
static int search_paths(char paths[][PATH_MAX + 48], int max)
{
	static const char *const beside[] = {
		"%s/../feeds.conf",			/* build/ in the source tree */
		"%s/../etc/wirebook/feeds.conf",	/* PREFIX/etc */
		"/etc/wirebook/feeds.conf",
		"%s/../share/wirebook/feeds.conf",
		"%s/../share/wirebook/feeds.conf.sample",
	};
	static const char *const fixed[] = {
		"/usr/local/share/wirebook/feeds.conf",
		"/usr/local/share/wirebook/feeds.conf.sample",
		"/usr/share/wirebook/feeds.conf",
		"/usr/share/wirebook/feeds.conf.sample",
	};
	char exe[PATH_MAX];
	ssize_t n;
	int k = 0;
	size_t i;

	snprintf(paths[k++], PATH_MAX + 48, "feeds.conf");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		for (i = 0; i < sizeof(beside) / sizeof(beside[0]) && k < max; i++)
			snprintf(paths[k++], PATH_MAX + 48, beside[i], exe);
	}
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && k < max; i++)
		snprintf(paths[k++], PATH_MAX + 48, "%s", fixed[i]);
	return k;
}

const char *feeds_conf_default_path(void)
{
	static char paths[12][PATH_MAX + 48];
	int n = search_paths(paths, 12);

	for (int i = 0; i < n; i++)
		if (readable(paths[i]))
			return paths[i];
	return NULL;
}

const char *feeds_conf_searched(void)
{
	static char list[4096];
	char paths[12][PATH_MAX + 48];
	size_t used = 0;
	int n = search_paths(paths, 12);

	list[0] = 0;
	for (int i = 0; i < n && used < sizeof(list); i++) {
		char real[PATH_MAX];
		const char *shown = realpath(paths[i], real) ? real : paths[i];
		int k = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", shown);

		if (k > 0)
			used += (size_t)k;
	}
	return list;
}

static bool is_directory(FILE *f)
{
	struct stat st;

	return fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
}

int feeds_conf_read(const char *path, struct feed_map_entry *out, int max, char *err,
		    size_t err_len)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0, lineno = 0;

	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (is_directory(f)) {	/* it opens, then reads as no line at all: an empty map */
		snprintf(err, err_len, "%s: is a directory, not a feed map", path);
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct feed_map_entry e;
		size_t len = strcspn(line, "\r\n");
		int rc, problem;

		lineno++;
		rc = feed_map_parse_line(line, len, &e, &problem);
		if (rc == 0)
			continue;
		if (rc < 0) {
			char venues[256];

			if (problem == FEED_MAP_VENUE_NOT_SERVED) {
				feed_protocol_venue_list(e.protocol, venues, sizeof(venues));
				snprintf(err, err_len,
					 "%s:%d: protocol %s cannot serve venue %s (it serves %s): %.*s",
					 path, lineno, feed_protocol_name(e.protocol),
					 feed_venue_name(e.venue), venues, (int)len, line);
			} else {
				snprintf(err, err_len, "%s:%d: %s: %.*s", path, lineno,
					 feed_map_problem_text(problem), (int)len, line);
			}
			fclose(f);
			return -1;
		}
		if (n == max) {
			snprintf(err, err_len, "%s:%d: more than %d entries", path, lineno, max);
			fclose(f);
			return -1;
		}
		out[n++] = e;
	}
	fclose(f);
	return n;
}

int feeds_conf_load(struct feed_engine *e, const char *path, char *err, size_t err_len)
{
	struct feed_map_entry entries[FEED_MAX_LINES];
	int n = feeds_conf_read(path, entries, FEED_MAX_LINES, err, err_len);

	for (int i = 0; i < n; i++) {
		const struct feed_map_entry *c = &entries[i];
		int rc = feed_map_add_entry(e, c);

		if (rc < 0) {
			snprintf(err, err_len, "%s: entry %d (%s %s %s): %s", path, i + 1,
				 feed_protocol_name(c->protocol), feed_venue_name(c->venue), c->name,
				 rc == -FEED_EEXIST  ? "address listed twice"
				 : rc == -FEED_EPROTO ? "venue already used with another protocol"
				 : rc == -FEED_ENOSPC ? "too many lines (or more than 4 in one stream)"
				 : rc == -FEED_ENOMEM ? "out of memory"
						      : "invalid entry");
			return -1;
		}
	}
	return n;
}

const struct feed_map_entry *feeds_conf_find(const struct feed_map_entry *entries, int n,
					       int protocol, int venue, const char *name)
{
	for (int i = 0; i < n; i++)
		if (entries[i].protocol == protocol && entries[i].venue == venue &&
		    strncmp(entries[i].name, name, FEED_LINE_NAME_LEN) == 0)
			return &entries[i];
	return NULL;
}

int feeds_conf_add_proto(struct feed_engine *e, const char *arg, char *err, size_t err_len)
{
	const char *colon = strchr(arg, ':');
	size_t plen = colon ? (size_t)(colon - arg) : strlen(arg);
	int p = feed_protocol_parse(arg, plen), v, rc;
	struct feed_map_entry m;
	char venues[256];

	if (p < 0) {
		snprintf(err, err_len, "--proto: unknown protocol '%.*s' (see --help)", (int)plen, arg);
		return -1;
	}
	feed_protocol_venue_list(p, venues, sizeof(venues));
	v = colon ? feed_venue_parse(colon + 1, strlen(colon + 1)) :
		    __builtin_ctz(feed_protocol_venues(p));
	if (v < 0 || !(feed_protocol_venues(p) & (1u << v))) {
		snprintf(err, err_len, "--proto: %s serves %s, not '%s'", feed_protocol_name(p), venues,
			 colon + 1);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.any = true;
	m.protocol = (uint8_t)p;
	m.venue = (uint8_t)v;
	memcpy(m.name, "any", 3);
	rc = feed_map_add_entry(e, &m);
	if (rc < 0) {
		snprintf(err, err_len, "--proto: %s", rc == -FEED_EPROTO ?
			 "the feed map already uses that venue with another protocol" :
			 "cannot add the line");
		return -1;
	}
	return rc;
}
