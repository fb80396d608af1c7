/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The NATS client options every tool that talks to NATS takes (wirebookd
 * --publish and --source, wb-export nats://...): one table, one parser,
 * one help text, so that a tool cannot take them differently.
 *
 * A tool puts NATS_CLIENT_LONG_OPTIONS(FIRST) in its getopt_long table,
 * FIRST the first of NATS_CLIENT_OPTION_COUNT consecutive option values
 * of its own, and hands each of them to nats_client_option.
 */
#ifndef WIREBOOK_NET_NATS_OPTIONS_H
#define WIREBOOK_NET_NATS_OPTIONS_H

#include <getopt.h>
#include "net/nats_client.h"

#define NATS_CLIENT_OPTION_COUNT 8
#define NATS_CLIENT_LONG_OPTIONS(first)                                   \
	{ "nats-instance", required_argument, 0, (first) + 0 },          \
	{ "nats-user", required_argument, 0, (first) + 1 },              \
	{ "nats-password", required_argument, 0, (first) + 2 },          \
	{ "nats-creds", required_argument, 0, (first) + 3 },             \
	{ "nats-nkey", required_argument, 0, (first) + 4 },              \
	{ "nats-ca", required_argument, 0, (first) + 5 },                \
	{ "nats-cert", required_argument, 0, (first) + 6 },              \
	{ "nats-key", required_argument, 0, (first) + 7 }

/* The help lines of those options, indented as wirebookd's. */
extern const char nats_client_options_help[];

/* Option INDEX (its value minus FIRST) with its argument into c.
 * 0, or -1 when INDEX is none of them. */
int nats_client_option(struct nats_client_config *c, int index, const char *arg);
/* 1 when any of them was given (the tool may want an address with them). */
int nats_client_options_given(const struct nats_client_config *c);
/* They agree with each other: 0, or -1 with why in err. */
int nats_client_options_check(const struct nats_client_config *c, char *err, size_t errlen);

#endif /* WIREBOOK_NET_NATS_OPTIONS_H */
