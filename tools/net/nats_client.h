/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What wirebookd's NATS publisher and source share: the server address
 * (nats://[USER:PASSWORD@]HOST:PORT[,...][/STREAM], tls:// for TLS), the
 * credentials and TLS files passed through to the NATS C client, and the
 * connection itself: reconnecting forever, a server absent at the start
 * waited for in the background, refused credentials an error at once.
 */
#ifndef WIREBOOK_NET_NATS_CLIENT_H
#define WIREBOOK_NET_NATS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct nats_client_config {
	const char *url;	/* as given, /STREAM included */
	const char *user;	/* --nats-user (or USER:PASSWORD@ in the URL) */
	const char *password;	/* --nats-password */
	const char *creds;	/* --nats-creds: a JWT + NKey seed credentials file */
	const char *nkey;	/* --nats-nkey PUBLIC_KEY:SEED_FILE: a user NKey */
	const char *ca;		/* --nats-ca: trust this CA, and use TLS */
	const char *cert, *key;	/* --nats-cert, --nats-key: a client certificate (mutual TLS) */
	const char *instance;	/* --nats-instance: the subjects' INSTANCE token */
	/* --nats-snapshot SECONDS: a publisher stores a book snapshot at most
	 * this often (0: none); a source loads the latest one (0: it replays
	 * from the stream's start). nats_snapshot.h. */
	unsigned snapshot_s;
};

/* Connection events, counted by the client's own threads. */
struct nats_client_counters {
	uint64_t disconnects;
	uint64_t reconnects;
	uint64_t errors;	/* asynchronous errors the client reported */
	int connected;		/* 1 while connected */
	int closed;		/* the client's last callback ran: none follows */
};

/* Split URL into the servers (what the client is given) and the /STREAM
 * path after the last server, "" when none. 0, or -1 with why in err. */
int nats_url_split(const char *url, char *servers, size_t servers_size, char *stream,
		   size_t stream_size, char *err, size_t errlen);

/* 1 when this build has the NATS client (libnats was there when built). */
int nats_available(void);

#ifdef WB_NATS
#include <nats/nats.h>

/* Connect; a server not there yet is retried in the background (the
 * call returns a connection that is not connected yet), refused
 * credentials or bad TLS files fail here. NULL with why in err. */
natsConnection *nats_client_connect(const struct nats_client_config *c, const char *name,
				    struct nats_client_counters *ctr, char *err, size_t errlen);
/* Close and free the connection once its callbacks, which write ctr,
 * are done (they run on the client's own thread, after the close). */
void nats_client_close(natsConnection *nc, struct nats_client_counters *ctr);
#endif

#endif /* WIREBOOK_NET_NATS_CLIENT_H */
