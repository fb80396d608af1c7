/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * ADDR:PORT as an operator writes it in an option or a config file (the
 * metrics endpoint, recovery servers, the simulators' listeners). User
 * space only; feeds.conf's own stricter form is names.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedtext/address.h"

int feed_parse_address(const char *addr_port, uint32_t *ip, uint16_t *port, char *err,
		       size_t errlen)
{
	const char *colon = strrchr(addr_port, ':');
	char host[64], *end;
	unsigned long p;
	struct in_addr in;

	if (!colon || (size_t)(colon - addr_port) >= sizeof(host)) {
		snprintf(err, errlen, "'%s': expected ADDR:PORT, e.g. 127.0.0.1:9464", addr_port);
		return -1;
	}
	memcpy(host, addr_port, (size_t)(colon - addr_port));
	host[colon - addr_port] = 0;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p > 65535 || colon[1] == '-' || colon[1] == '+') {
		snprintf(err, errlen, "'%s': port must be a number from 0 to 65535 (0: any free port)",
			 addr_port);
		return -1;
	}
	if (!host[0] || !strcmp(host, "*"))
		in.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		in.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &in) != 1) {
		snprintf(err, errlen, "'%s': '%s' is not an IPv4 address (or localhost, or * for all)",
			 addr_port, host);
		return -1;
	}
	*ip = ntohl(in.s_addr);
	*port = (uint16_t)p;
	return 0;
}
