/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Destinations of unmapped frames (see unmapped.h). */
#include "input/unmapped.h"

#include <inttypes.h>
#include <stdio.h>

#include "input/pcap_io.h"

void unmapped_note(struct unmapped_seen *u, const uint8_t *frame, uint32_t len)
{
	struct udp_view v;
	uint32_t i;

	u->frames++;
	if (!frame_udp_view(frame, len, &v)) {
		u->non_udp++;
		return;
	}
	for (i = 0; i < u->count; i++)
		if (u->dst[i].ip == v.dst_ip && u->dst[i].port == v.dst_port) {
			u->dst[i].frames++;
			return;
		}
	if (u->count == UNMAPPED_KEEP) {
		u->other++;
		return;
	}
	u->dst[u->count].ip = v.dst_ip;
	u->dst[u->count].port = v.dst_port;
	u->dst[u->count].frames = 1;
	u->count++;
}

void unmapped_describe(const struct unmapped_seen *u, char *buf, size_t n)
{
	size_t used = 0;
	uint32_t i;

#define PUT(...) do { int k_ = snprintf(buf + used, used < n ? n - used : 0, __VA_ARGS__); \
		      if (k_ > 0) used += (size_t)k_; } while (0)
	if (n)
		buf[0] = 0;
	for (i = 0; i < u->count; i++) {
		uint32_t ip = u->dst[i].ip;

		PUT("%s%u.%u.%u.%u:%u (%" PRIu64 " frames)", i ? ", " : "", ip >> 24, (ip >> 16) & 255,
		    (ip >> 8) & 255, ip & 255, u->dst[i].port, u->dst[i].frames);
	}
	if (u->other)
		PUT("%s%" PRIu64 " frames to other UDP destinations", u->count ? ", " : "", u->other);
	if (u->non_udp)
		PUT("%s%" PRIu64 " frames not IPv4/UDP", used ? "; " : "", u->non_udp);
	if (!used)
		PUT("no frames");
#undef PUT
}
