/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
#ifndef WIREBOOK_FEEDTEXT_ADDRESS_H
#define WIREBOOK_FEEDTEXT_ADDRESS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Check an ADDR:PORT without binding: an IPv4 address, "localhost", or "*"
 * / empty for every address; PORT 0 to 65535 (0: any free port, where the
 * caller allows it). 0, or -1 with a message naming the value in err.
 */
int feed_parse_address(const char *addr_port, uint32_t *ip, uint16_t *port, char *err,
		       size_t errlen);

#endif /* WIREBOOK_FEEDTEXT_ADDRESS_H */
