/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Frames that went to no feed-map line: which destinations they had, so a
 * tool whose input is all unmapped can say which addresses it saw instead
 * of building empty books in silence. Off the decode path: only frames the
 * engine did not take are noted.
 */
#ifndef WIREBOOK_TOOLS_UNMAPPED_H
#define WIREBOOK_TOOLS_UNMAPPED_H

#include <stddef.h>
#include <stdint.h>

#define UNMAPPED_KEEP 8		/* distinct destinations remembered */

struct unmapped_seen {
	uint64_t frames;	/* every unmapped frame */
	uint64_t non_udp;	/* not IPv4/UDP at all (ARP, IPv6, TCP, fragments) */
	uint64_t other;		/* UDP to destinations past the first UNMAPPED_KEEP */
	uint32_t count;
	struct {
		uint32_t ip;	/* host byte order */
		uint16_t port;
		uint64_t frames;
	} dst[UNMAPPED_KEEP];
};

void unmapped_note(struct unmapped_seen *u, const uint8_t *frame, uint32_t len);
/* "239.39.62.190:32001 (375 frames), ...; 4 frames not IPv4/UDP". */
void unmapped_describe(const struct unmapped_seen *u, char *buf, size_t n);

#endif /* WIREBOOK_TOOLS_UNMAPPED_H */
