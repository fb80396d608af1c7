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

/* ---- wirebookd-only requests: order detail and queue positions -------- */

/*
 * Socket-only requests (issue 25): the module keeps no books, so these
 * never reach the device (wb_control_call answers -ENOTTY there, c->what
 * saying why). Their numbers start at 0x80, clear of the module's.
 * wirebookd serves them with libwirebook's own reader calls
 * (wirebook/orders.h): a request goes through the order detail's request
 * slots like any reader's, and the builder applies it between batches;
 * the reply says what is true now, so a client that wants the effect
 * asks again until it shows.
 */
#include "wirebook/orders.h"

#define WB_CTL_DETAIL_QUERY 0u	/* only say whether the symbol carries detail */
#define WB_CTL_DETAIL_ON 1u
#define WB_CTL_DETAIL_OFF 2u

struct wb_ctl_detail {
	char ticker[12];	/* NUL-terminated, 1..8 characters */
	uint32_t op;		/* WB_CTL_DETAIL_* */
	uint32_t sym;		/* out: the symbol index */
	int32_t has_detail;	/* out: 1 when the symbol carries order detail now */
};

#define WB_CTL_QUEUE_POSITION 0u
#define WB_CTL_QUEUE_TRACK 1u
#define WB_CTL_QUEUE_UNTRACK 2u

struct wb_ctl_queue {
	uint32_t op;		/* WB_CTL_QUEUE_* */
	uint32_t venue;		/* WB_VENUE_* */
	uint64_t order_id;	/* the venue's order id */
	int32_t tracked;	/* out: 1 pos holds its position now, 0 not tracked (yet) */
	uint32_t reserved;
	struct wb_queue_pos pos;	/* out */
};

#define WB_CTL_DETAIL		_IOWR(WB_IOC_MAGIC, 0x80, struct wb_ctl_detail)
/* The symbols carrying order detail now: struct wb_ioc_symbol entries. */
#define WB_CTL_DETAIL_LIST	_IOWR(WB_IOC_MAGIC, 0x81, struct wb_ioc_list)
#define WB_CTL_QUEUE		_IOWR(WB_IOC_MAGIC, 0x82, struct wb_ctl_queue)

bool wb_control_socket_only(unsigned long cmd);

/*
 * wirebookd's handler: the requests above over the book shm_name, every
 * other one handed to next. Called on the thread that serves the socket.
 * Errors: -EOPNOTSUPP order
 * detail not enabled (enabled false), -ENOENT unknown symbol, -EBUSY
 * every request slot pending (WB_ORD_REQUESTS), -ESRCH the source has
 * ended (the builder applies no more requests), -EINVAL a bad venue or
 * op, -EIO the book could not be attached.
 */
struct wb_book;
struct wb_control_orders {
	const char *shm_name;
	bool enabled;		/* wirebookd runs with --order-detail */
	bool source_done;	/* set once the builder stopped taking requests */
	wb_control_handler next;
	void *next_ctx;
	struct wb_book *book;
	struct wb_orders *orders;
};
int wb_control_orders_handler(void *ctx, unsigned long cmd, void *arg);
/* Attach now (0 or the handler's error), e.g. before the thread that
 * serves the socket runs; else the first request does. */
int wb_control_orders_attach(struct wb_control_orders *co);
void wb_control_orders_close(struct wb_control_orders *co);

#endif /* WIREBOOK_TOOLS_CONTROL_H */
