/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * One control interface for both producers: the kernel module (ioctls on
 * /dev/wirebook) and wirebookd's user-space capture (a unix socket that
 * carries the very same requests). wb-subscribe is written against
 * wb_control_call and works the same in both modes.
 *
 * The socket protocol mirrors the ioctls: a request is a header and the
 * ioctl's argument struct; the reply is a header, the struct as the
 * handler left it and, for the list ioctls, the entries (the struct's user
 * pointer is meaningless across processes, so entries travel inline).
 * One request per connection; both ends are on the same machine, so
 * structs travel in host byte order.
 */
#ifndef WIREBOOK_TOOLS_CONTROL_H
#define WIREBOOK_TOOLS_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "wirebook/ioctl.h"
#include "feed/feed.h"

struct wb_control {
	int fd;			/* the device (kernel mode); -1 in daemon mode */
	char socket_path[108];	/* daemon mode: connect per call */
	/* Daemon mode: how long a call may wait to connect and for the
	 * reply (0: WB_CONTROL_CONNECT_MS / WB_CONTROL_REPLY_MS). A call
	 * never blocks longer than their sum. */
	unsigned connect_timeout_ms;
	unsigned reply_timeout_ms;
	/* Daemon mode: after a failed call, what was tried and what happened
	 * ("connect to S: timed out after 2000 ms (...)"); "" after success. */
	char what[256];
};

#define WB_CONTROL_CONNECT_MS 2000u
#define WB_CONTROL_REPLY_MS 5000u

/* path NULL: WB_DEVICE_PATH. writable: open read-write (needed to change
 * state). Returns 0, or -1 with a sentence in err. */
int wb_control_open_kernel(struct wb_control *c, const char *path, bool writable, char *err,
			   size_t errlen);
/* Checks that the daemon answers. Returns 0, or -1 with a sentence in err
 * naming the socket, what was tried and what happened. */
int wb_control_open_daemon(struct wb_control *c, const char *socket_path, char *err,
			   size_t errlen);
/* The same with explicit timeouts (ms; 0: the defaults). */
int wb_control_open_daemon_timeout(struct wb_control *c, const char *socket_path,
				   unsigned connect_ms, unsigned reply_ms, char *err, size_t errlen);
void wb_control_close(struct wb_control *c);

/* Perform one WB_IOC_* request. Returns 0 or a negative errno (-ETIMEDOUT
 * when the daemon did not accept or answer in time; c->what says which). */
int wb_control_call(struct wb_control *c, unsigned long cmd, void *arg);

/* ---- server side (wirebookd) ------------------------------------------ */

/*
 * Handles one request like the module's ioctl would: arg is the request
 * struct, and for list requests its entries/lines pointer already points
 * at a buffer of capacity entries. Returns 0 or a negative errno.
 */
typedef int (*wb_control_handler)(void *ctx, unsigned long cmd, void *arg);

/* Listen on a unix socket. A socket file nobody answers on (a crashed
 * daemon's) is replaced; one a server still accepts on, or a file that is
 * no socket, is left alone: WB_CONTROL_EINUSE (a usage error) with err
 * naming it. Returns the listening fd (non-blocking), or -1 with err. */
#define WB_CONTROL_EINUSE (-2)
int wb_control_listen(const char *socket_path, char *err, size_t errlen);
/* Close the listening socket and remove its file, unless another server
 * answers there by now (never remove a socket this process does not own). */
void wb_control_unlisten(int listen_fd, const char *socket_path);

/*
 * Serve the requests pending on listen_fd without blocking on accept
 * (call from a loop, or after poll() says it is readable). Returns the
 * number of requests served.
 */
int wb_control_serve(int listen_fd, wb_control_handler handler, void *ctx);

/* A handler for a user-space feed engine (the caller serializes it with
 * its packet path, e.g. by serving between batches). ring may be NULL. */
struct recovery_client;
struct wb_control_engine {
	struct feed_engine *engine;
	const struct wb_ring_prod_page *ring;	/* for the stats' ring counters */
	/* WB_IOC_RECOVERY_LIST's fill times from this client, when not NULL, by
	 * fill_times (recovery_client_fill_times: a pointer, so that the tools'
	 * library does not link lib/recovery, which links it) */
	const struct recovery_client *recovery;
	bool (*fill_times)(const struct recovery_client *c, int venue, uint16_t channel,
			   uint64_t *fills, uint64_t *p50, uint64_t *p99, uint64_t *max);
};
int wb_control_engine_handler(void *ctx, unsigned long cmd, void *arg);

#endif /* WIREBOOK_TOOLS_CONTROL_H */
