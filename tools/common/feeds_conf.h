/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * feeds.conf for the tools: finding the default file, reading its entries
 * (the line syntax is lib/feed's feed_map_parse_line) and loading them into
 * a feed engine.
 */
#ifndef WIREBOOK_TOOLS_FEEDS_CONF_H
#define WIREBOOK_TOOLS_FEEDS_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "feed/feed.h"

struct feeds_conf_entry {
	uint32_t ip;		/* host byte order */
	uint16_t port;
	int protocol;		/* enum feed_protocol */
	int venue;		/* enum wb_venue */
	char name[FEED_LINE_NAME_LEN];
};

/*
 * The feeds.conf to use when none is given: ./feeds.conf, the source
 * tree's (<exe>/../feeds.conf), then relative to the install prefix the
 * binary runs from (PREFIX/bin): PREFIX/etc/wirebook/feeds.conf,
 * /etc/wirebook/feeds.conf, PREFIX/share/wirebook/feeds.conf(.sample),
 * then /usr/local and /usr. NULL if none exists.
 */
const char *feeds_conf_default_path(void);
/* The places feeds_conf_default_path looks, for a message ("a, b, c"). */
const char *feeds_conf_searched(void);

/*
 * Read every entry of path into out (up to max). Returns the number of
 * entries, or -1 with err naming the file and line of the first problem.
 */
int feeds_conf_read(const char *path, struct feeds_conf_entry *out, int max, char *err,
		    size_t err_len);

/* Read path and feed_map_add every entry. Returns entries added or -1 + err. */
int feeds_conf_load(struct feed_engine *e, const char *path, char *err, size_t err_len);

/* The entry of (protocol, venue) named name, or NULL. */
const struct feeds_conf_entry *feeds_conf_find(const struct feeds_conf_entry *entries, int n,
					       int protocol, int venue, const char *name);

#endif /* WIREBOOK_TOOLS_FEEDS_CONF_H */
