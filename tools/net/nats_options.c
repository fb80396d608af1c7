/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The NATS client options of every tool; see nats_options.h. */
#include <stdio.h>

#include "net/nats_options.h"

const char nats_client_options_help[] =
"    --nats-instance NAME  the subjects' INSTANCE (default: wirebookd's --shm name,\n"
"                       wirebook unless given)\n"
"    --nats-user USER, --nats-password PASSWORD (or nats://USER:PASSWORD@HOST:PORT;\n"
"                       better in the --config file than on the command line)\n"
"    --nats-creds FILE  a credentials file (JWT and NKey seed)\n"
"    --nats-nkey PUBLIC_KEY:SEED_FILE  a user NKey\n"
"    --nats-ca FILE     TLS, trusting this CA (tls://HOST:PORT: TLS, the system's CAs)\n"
"    --nats-cert FILE, --nats-key FILE  a client certificate (mutual TLS)\n";

int nats_client_option(struct nats_client_config *c, int index, const char *arg)
{
	const char **field[NATS_CLIENT_OPTION_COUNT] = {
		&c->instance, &c->user, &c->password, &c->creds, &c->nkey, &c->ca, &c->cert, &c->key,
	};

	if (index < 0 || index >= NATS_CLIENT_OPTION_COUNT)
		return -1;
	*field[index] = arg;
	return 0;
}

int nats_client_options_given(const struct nats_client_config *c)
{
	return c->instance || c->user || c->password || c->creds || c->nkey || c->ca || c->cert ||
	       c->key;
}

int nats_client_options_check(const struct nats_client_config *c, char *err, size_t errlen)
{
	if (!!c->cert != !!c->key) {
		snprintf(err, errlen, "--nats-cert and --nats-key go together");
		return -1;
	}
	return 0;
}
