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
 * entries, or -1 with err naming the file, the line and what is wrong
 * (for a venue its protocol cannot serve: the venues it serves).
 */
int feeds_conf_read(const char *path, struct feed_map_entry *out, int max, char *err,
		    size_t err_len);

/* Read path and feed_map_add every entry. Returns entries added or -1 + err. */
int feeds_conf_load(struct feed_engine *e, const char *path, char *err, size_t err_len);

/* The entry of (protocol, venue) named name, or NULL. */
const struct feed_map_entry *feeds_conf_find(const struct feed_map_entry *entries, int n,
					       int protocol, int venue, const char *name);

/*
 * --proto PROTOCOL[:VENUE] (wb-dump, wirebookd): decode every UDP payload
 * the feed map does not name as that protocol, whatever its address
 * (anonymized captures). VENUE defaults to the protocol's first. Returns the
 * line's index, or -1 with err saying what is wrong.
 */
int feeds_conf_add_proto(struct feed_engine *e, const char *arg, char *err, size_t err_len);

#endif /* WIREBOOK_TOOLS_FEEDS_CONF_H */
