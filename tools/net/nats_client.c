/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The NATS connection of wirebookd's publisher and source; see nats_client.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "net/nats_client.h"
#include "wirebook/barrier.h"

int nats_url_split(const char *url, char *servers, size_t servers_size, char *stream,
		   size_t stream_size, char *err, size_t errlen)
{
	const char *scheme = strstr(url, "://"), *last, *slash;
	size_t n;

	if (!scheme || (strncmp(url, "nats://", 7) && strncmp(url, "tls://", 6))) {
		snprintf(err, errlen, "'%s': expected nats://HOST:PORT[/STREAM] (or tls://...)", url);
		return -1;
	}
	/* The stream follows the last server (nats://a:1,nats://b:2/STREAM). */
	for (last = scheme; strstr(last + 3, "://"); last = strstr(last + 3, "://"))
		;
	slash = strchr(last + 3, '/');
	n = slash ? (size_t)(slash - url) : strlen(url);
	if (n >= servers_size || n == (size_t)(scheme + 3 - url)) {
		snprintf(err, errlen, "'%s': no server, or too long", url);
		return -1;
	}
	memcpy(servers, url, n);
	servers[n] = 0;
	snprintf(stream, stream_size, "%s", slash ? slash + 1 : "");
	if (slash && (!slash[1] || strlen(slash + 1) >= stream_size ||
		      strpbrk(slash + 1, ". */>\t"))) {
		snprintf(err, errlen, "'%s': the stream name after '/' is empty, too long or has "
			 "'.', '*', '>', '/' or a space", url);
		return -1;
	}
	return 0;
}

#ifndef WB_NATS
int nats_available(void)
{
	return 0;
}
#else
int nats_available(void)
{
	return 1;
}

static void on_disconnected(natsConnection *nc, void *closure)
{
	struct nats_client_counters *c = closure;

	(void)nc;
	wb_store_relaxed(&c->connected, 0);
	wb_store_relaxed(&c->disconnects, c->disconnects + 1);
}

static void on_reconnected(natsConnection *nc, void *closure)
{
	struct nats_client_counters *c = closure;

	(void)nc;
	wb_store_relaxed(&c->connected, 1);
	wb_store_relaxed(&c->reconnects, c->reconnects + 1);
}

/* A connection retried in the background connects here the first time. */
static void on_connected(natsConnection *nc, void *closure)
{
	struct nats_client_counters *c = closure;

	(void)nc;
	wb_store_relaxed(&c->connected, 1);
}

static void on_closed(natsConnection *nc, void *closure)
{
	struct nats_client_counters *c = closure;

	(void)nc;
	wb_store_release(&c->closed, 1);
}

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus s, void *closure)
{
	struct nats_client_counters *c = closure;

	(void)nc;
	(void)sub;
	(void)s;
	wb_store_relaxed(&c->errors, c->errors + 1);
}

static natsOptions *make_options(const struct nats_client_config *c, const char *servers,
				 const char *name, struct nats_client_counters *ctr, int retry,
				 char *err, size_t errlen)
{
	natsOptions *o = NULL;
	natsStatus s = natsOptions_Create(&o);
	const char *what = "options";

	if (s == NATS_OK)
		s = natsOptions_SetURL(o, servers);
	if (s == NATS_OK)
		s = natsOptions_SetName(o, name);
	/* Forever, every second: a NATS restart must never end the stream. */
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(o, 250);
	/* What is published while disconnected waits here (the publisher
	 * keeps what does not fit and sends it after). */
	if (s == NATS_OK)
		s = natsOptions_SetReconnectBufSize(o, 32 * 1024 * 1024);
	if (s == NATS_OK)
		s = natsOptions_SetDisconnectedCB(o, on_disconnected, ctr);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectedCB(o, on_reconnected, ctr);
	if (s == NATS_OK)
		s = natsOptions_SetErrorHandler(o, on_error, ctr);
	if (s == NATS_OK)
		s = natsOptions_SetClosedCB(o, on_closed, ctr);
	if (s == NATS_OK && retry)
		s = natsOptions_SetRetryOnFailedConnect(o, true, on_connected, ctr);
	if (s == NATS_OK && (c->user || c->password))
		s = natsOptions_SetUserInfo(o, c->user, c->password);
	if (s == NATS_OK && c->creds) {
		what = "--nats-creds";
		s = natsOptions_SetUserCredentialsFromFiles(o, c->creds, NULL);
	}
	if (s == NATS_OK && c->nkey) {
		const char *colon = strchr(c->nkey, ':');
		char pub[128];

		what = "--nats-nkey (PUBLIC_KEY:SEED_FILE)";
		if (!colon || (size_t)(colon - c->nkey) >= sizeof(pub)) {
			s = NATS_INVALID_ARG;
		} else {
			memcpy(pub, c->nkey, (size_t)(colon - c->nkey));
			pub[colon - c->nkey] = 0;
			s = natsOptions_SetNKeyFromSeed(o, pub, colon + 1);
		}
	}
	if (s == NATS_OK && (c->ca || c->cert || !strncmp(servers, "tls://", 6))) {
		what = "TLS";
		s = natsOptions_SetSecure(o, true);
	}
	if (s == NATS_OK && c->ca) {
		what = "--nats-ca";
		s = natsOptions_LoadCATrustedCertificates(o, c->ca);
	}
	if (s == NATS_OK && (c->cert || c->key)) {
		what = "--nats-cert/--nats-key";
		s = natsOptions_LoadCertificatesChain(o, c->cert, c->key);
	}
	if (s != NATS_OK) {
		snprintf(err, errlen, "%s: %s", what, nats_GetLastError(NULL) ? nats_GetLastError(NULL)
									     : natsStatus_GetText(s));
		natsOptions_Destroy(o);
		return NULL;
	}
	return o;
}

natsConnection *nats_client_connect(const struct nats_client_config *c, const char *name,
				    struct nats_client_counters *ctr, char *err, size_t errlen)
{
	char servers[1024], stream[256];
	natsConnection *nc = NULL;
	natsOptions *o;
	natsStatus s;

	if (nats_url_split(c->url, servers, sizeof(servers), stream, sizeof(stream), err, errlen))
		return NULL;
	/* Once without retrying: what the server refuses (credentials, TLS)
	 * is said now, not retried for ever. */
	o = make_options(c, servers, name, ctr, 0, err, errlen);
	if (!o)
		return NULL;
	s = natsConnection_Connect(&nc, o);
	natsOptions_Destroy(o);
	wb_store_relaxed(&ctr->closed, 0);	/* a refused first try closed */
	if (s == NATS_OK) {
		wb_store_relaxed(&ctr->connected, 1);
		return nc;
	}
	if (s != NATS_NO_SERVER) {
		const char *why = nats_GetLastError(NULL);

		snprintf(err, errlen, "%s: %s", servers, why && *why ? why : natsStatus_GetText(s));
		return NULL;
	}
	o = make_options(c, servers, name, ctr, 1, err, errlen);
	if (!o)
		return NULL;
	s = natsConnection_Connect(&nc, o);
	natsOptions_Destroy(o);
	if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
		snprintf(err, errlen, "%s: %s", servers, natsStatus_GetText(s));
		return NULL;
	}
	fprintf(stderr, "wirebookd: NATS server %s not there yet: connecting in the background\n",
		servers);
	return nc;
}

void nats_client_close(natsConnection *nc, struct nats_client_counters *ctr)
{
	int i;

	if (!nc)
		return;
	natsConnection_Close(nc);
	for (i = 0; i < 2000 && !wb_load_acquire(&ctr->closed); i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	natsConnection_Destroy(nc);
}
#endif
