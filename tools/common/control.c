/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Control of the module (ioctls) or of wirebookd (the same requests on a unix socket). */
#include "common/control.h"
#include "feed/feed_ioc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define CTL_MAGIC 0x57424354u /* "WBCT" */
#define CTL_MAX_ENTRIES (FEED_MAX_INSTRUMENTS + 1)

struct ctl_hdr {
	uint32_t magic;
	uint32_t cmd;
	int32_t status;		/* reply: 0 or -errno */
	uint32_t extra;		/* reply: bytes of entries after the struct */
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool known_cmd(unsigned long cmd)
{
	switch (cmd) {
	case WB_IOC_VERSION: case WB_IOC_RING_INFO: case WB_IOC_FEED_ADD: case WB_IOC_FEED_DEL:
	case WB_IOC_FEED_LIST: case WB_IOC_SUB_ADD: case WB_IOC_SUB_DEL: case WB_IOC_SUB_LIST:
	case WB_IOC_STATS: case WB_IOC_STATS_RESET: case WB_IOC_TRADING_DATE:
	case WB_IOC_RECOVERY_LIST:
		return true;
	default:
		return wb_control_socket_only(cmd);
	}
}

bool wb_control_socket_only(unsigned long cmd)
{
	return cmd == WB_CTL_DETAIL || cmd == WB_CTL_DETAIL_LIST || cmd == WB_CTL_QUEUE;
}

/* For list requests: the entry size, the capacity and the pointer field. */
static size_t list_geometry(unsigned long cmd, void *arg, uint32_t **capacity, uint64_t **ptr)
{
	switch (cmd) {
	case WB_IOC_FEED_LIST:
		*capacity = &((struct wb_ioc_list *)arg)->capacity;
		*ptr = &((struct wb_ioc_list *)arg)->entries;
		return sizeof(struct wb_ioc_feed);
	case WB_IOC_SUB_LIST:
	case WB_CTL_DETAIL_LIST:
		*capacity = &((struct wb_ioc_list *)arg)->capacity;
		*ptr = &((struct wb_ioc_list *)arg)->entries;
		return sizeof(struct wb_ioc_symbol);
	case WB_IOC_RECOVERY_LIST:
		*capacity = &((struct wb_ioc_list *)arg)->capacity;
		*ptr = &((struct wb_ioc_list *)arg)->entries;
		return sizeof(struct wb_ioc_recovery);
	case WB_IOC_STATS:
		*capacity = &((struct wb_ioc_stats *)arg)->capacity;
		*ptr = &((struct wb_ioc_stats *)arg)->lines;
		return sizeof(struct wb_ioc_line_stats);
	default:
		return 0;
	}
}

static uint32_t list_count(unsigned long cmd, const void *arg)
{
	if (cmd == WB_IOC_STATS)
		return ((const struct wb_ioc_stats *)arg)->count;
	return ((const struct wb_ioc_list *)arg)->count;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = recv(fd, p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Read and drop n bytes. A server that answers a request it does not know
 * must first take its argument: closing a socket with unread bytes resets
 * the connection, and the client sees EPIPE instead of the answer.
 */
static int discard(int fd, size_t n)
{
	char sink[512];

	while (n) {
		size_t chunk = n < sizeof(sink) ? n : sizeof(sink);

		if (read_all(fd, sink, chunk))
			return -1;
		n -= chunk;
	}
	return 0;
}

/* ---- client ------------------------------------------------------------- */

int wb_control_open_kernel(struct wb_control *c, const char *path, bool writable, char *err,
			   size_t errlen)
{
	struct wb_ioc_version v;

	memset(c, 0, sizeof(*c));
	if (!path)
		path = WB_DEVICE_PATH;
	c->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (c->fd < 0)
		return fail(err, errlen, "%s: %s%s", path, strerror(errno),
			    errno == ENOENT ? " (is the wirebook module loaded? modprobe wirebook)" :
			    errno == EACCES ? " (changing state needs write access: root or the "
					      "device's group with mode 0660)" : "");
	memset(&v, 0, sizeof(v));
	if (ioctl(c->fd, WB_IOC_VERSION, &v) < 0 || v.ctl_version != WB_CTL_VERSION) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		if (v.ctl_version)
			return fail(err, errlen, "%s: module control ABI v%u, this tool v%u: "
				    "rebuild one of them", path, v.ctl_version, WB_CTL_VERSION);
		return fail(err, errlen, "%s: %s (not a wirebook device?)", path, strerror(e));
	}
	return 0;
}

static uint64_t ctl_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wait until fd is ready for events or the deadline passes: 1, 0 (timed
 * out) or -1. */
static int ctl_wait(int fd, short events, uint64_t deadline_ms)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t now = ctl_mono_ms();
		int rc;

		if (now >= deadline_ms)
			return 0;
		rc = poll(&p, 1, (int)(deadline_ms - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return rc;
		return 1;
	}
}

/* Non-blocking I/O with one deadline for the whole reply: a daemon that
 * accepted but never answers cannot hold the caller. -1 with errno
 * (ETIMEDOUT, EPIPE, ECONNRESET, ...); a peer that closed early: EPROTO. */
static int io_all(int fd, void *buf, size_t n, int writing, uint64_t deadline_ms)
{
	char *p = buf;

	while (n) {
		ssize_t r = writing ? send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT)
				    : recv(fd, p, n, MSG_DONTWAIT);

		if (r > 0) {
			p += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = EPROTO;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		r = ctl_wait(fd, writing ? POLLOUT : POLLIN, deadline_ms);
		if (r == 0)
			errno = ETIMEDOUT;
		if (r <= 0)
			return -1;
	}
	return 0;
}

/*
 * Connect within timeout_ms. A unix socket whose accept queue is full
 * answers a non-blocking connect with EAGAIN at once (a blocking one would
 * wait forever): retry until the deadline.
 */
static int daemon_connect(struct wb_control *c, unsigned timeout_ms)
{
	struct sockaddr_un sa;
	uint64_t deadline = ctl_mono_ms() + timeout_ms;
	int fd, e;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->socket_path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			e = errno;
			snprintf(c->what, sizeof(c->what), "socket(): %s", strerror(e));
			errno = e;
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		e = errno;
		close(fd);
		if ((e == EAGAIN || e == EINTR) && ctl_mono_ms() < deadline) {
			struct timespec nap = { 0, 10 * 1000 * 1000 };

			nanosleep(&nap, NULL);
			continue;
		}
		if (e == EAGAIN) {
			snprintf(c->what, sizeof(c->what),
				 "connect to %s: timed out after %u ms (a process listens there but "
				 "accepts no connections: wirebookd stopped or stuck?)",
				 c->socket_path, timeout_ms);
			e = ETIMEDOUT;
		} else {
			snprintf(c->what, sizeof(c->what), "connect to %s: %s%s", c->socket_path,
				 strerror(e),
				 e == ENOENT ? " (no such socket: is wirebookd running with --control "
					       "this path?)" :
				 e == ECONNREFUSED ? " (no process listens there: wirebookd exited "
						     "and left the socket file?)" :
				 e == EACCES ? " (permission denied on the socket or its directory)" :
				 "");
		}
		errno = e;
		return -1;
	}
}

static const char *cmd_name(unsigned long cmd)
{
	switch (cmd) {
	case WB_IOC_VERSION: return "version";
	case WB_IOC_RING_INFO: return "ring info";
	case WB_IOC_FEED_ADD: return "feeds add";
	case WB_IOC_FEED_DEL: return "feeds del";
	case WB_IOC_FEED_LIST: return "feeds list";
	case WB_IOC_SUB_ADD: return "add";
	case WB_IOC_SUB_DEL: return "del";
	case WB_IOC_SUB_LIST: return "list";
	case WB_IOC_STATS: return "stats";
	case WB_IOC_STATS_RESET: return "stats reset";
	case WB_IOC_RECOVERY_LIST: return "recovery";
	case WB_CTL_DETAIL: return "detail";
	case WB_CTL_DETAIL_LIST: return "detail list";
	case WB_CTL_QUEUE: return "queue position";
	default: return "unknown";
	}
}

int wb_control_open_daemon_timeout(struct wb_control *c, const char *socket_path,
				   unsigned connect_ms, unsigned reply_ms, char *err, size_t errlen)
{
	struct wb_ioc_version v;
	int rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->connect_timeout_ms = connect_ms;
	c->reply_timeout_ms = reply_ms;
	if (strlen(socket_path) >= sizeof(c->socket_path))
		return fail(err, errlen, "%s: socket path too long (at most %zu bytes)", socket_path,
			    sizeof(c->socket_path) - 1);
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", socket_path);
	memset(&v, 0, sizeof(v));
	rc = wb_control_call(c, WB_IOC_VERSION, &v);
	if (rc < 0)
		return fail(err, errlen, "%s", c->what[0] ? c->what : strerror(-rc));
	if (v.ctl_version != WB_CTL_VERSION)
		return fail(err, errlen, "%s: daemon control ABI v%u, this tool v%u", socket_path,
			    v.ctl_version, WB_CTL_VERSION);
	return 0;
}

int wb_control_open_daemon(struct wb_control *c, const char *socket_path, char *err,
			   size_t errlen)
{
	return wb_control_open_daemon_timeout(c, socket_path, 0, 0, err, errlen);
}

void wb_control_close(struct wb_control *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int daemon_call(struct wb_control *c, unsigned long cmd, void *arg)
{
	size_t size = _IOC_SIZE(cmd), esize;
	struct ctl_hdr h = { .magic = CTL_MAGIC, .cmd = (uint32_t)cmd };
	uint32_t *cap = NULL, n;
	uint64_t *ptr = NULL, user_ptr = 0, deadline;
	unsigned reply_ms = c->reply_timeout_ms ? c->reply_timeout_ms : WB_CONTROL_REPLY_MS;
	int fd, rc = 0;

	c->what[0] = 0;
	esize = list_geometry(cmd, arg, &cap, &ptr);
	if (ptr)
		user_ptr = *ptr;
	fd = daemon_connect(c, c->connect_timeout_ms ? c->connect_timeout_ms : WB_CONTROL_CONNECT_MS);
	if (fd < 0)
		return -errno;
	deadline = ctl_mono_ms() + reply_ms;
	if (io_all(fd, &h, sizeof(h), 1, deadline) || (size && io_all(fd, arg, size, 1, deadline)) ||
	    io_all(fd, &h, sizeof(h), 0, deadline)) {
		rc = -errno;
		goto fail_io;
	}
	if (h.magic != CTL_MAGIC) {
		rc = -EPROTO;
		goto fail_io;
	}
	if (h.status < 0) {
		rc = h.status;
		goto out;
	}
	if (size && io_all(fd, arg, size, 0, deadline)) {
		rc = errno == ETIMEDOUT ? -ETIMEDOUT : -EPROTO;
		goto fail_io;
	}
	if (ptr)
		*ptr = user_ptr;	/* the server's pointer means nothing here */
	if (h.extra) {
		n = list_count(cmd, arg);
		if (!esize || h.extra % esize || h.extra / esize > *cap || h.extra / esize > n ||
		    io_all(fd, (void *)(uintptr_t)user_ptr, h.extra, 0, deadline)) {
			rc = errno == ETIMEDOUT ? -ETIMEDOUT : -EPROTO;
			goto fail_io;
		}
	}
out:
	close(fd);
	return rc;
fail_io:
	if (rc == -ETIMEDOUT)
		snprintf(c->what, sizeof(c->what),
			 "%s: connected, but no reply to the '%s' request within %u ms "
			 "(wirebookd is not serving its control socket: stopped, stuck or overloaded?)",
			 c->socket_path, cmd_name(cmd), reply_ms);
	else
		snprintf(c->what, sizeof(c->what), "%s: the '%s' request failed: %s%s", c->socket_path,
			 cmd_name(cmd), strerror(-rc),
			 rc == -EPROTO ? " (the daemon closed the connection or sent a malformed "
					 "reply: another program on this socket?)" : "");
	goto out;
}

int wb_control_call(struct wb_control *c, unsigned long cmd, void *arg)
{
	if (c->fd >= 0 && wb_control_socket_only(cmd)) {
		snprintf(c->what, sizeof(c->what),
			 "order detail and queue positions are wirebookd's (the module keeps no books): "
			 "ask its control socket (wb-subscribe --daemon SOCKET, wirebookd --control SOCKET)");
		return -ENOTTY;
	}
	if (c->fd >= 0)
		return ioctl(c->fd, cmd, arg) < 0 ? -errno : 0;
	return daemon_call(c, cmd, arg);
}

/* ---- server ------------------------------------------------------------- */

/* Does a server accept connections on the socket at path? */
static bool socket_answers(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool answers;

	if (fd < 0)
		return false;
	answers = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return answers;
}

int wb_control_listen(const char *socket_path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return fail(err, errlen, "%s: socket path too long", socket_path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
	/* Only a socket nobody serves any more (a crashed daemon's) is replaced. */
	if (lstat(socket_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fail(err, errlen, "%s exists and is not a socket: give another path",
			     socket_path);
			return WB_CONTROL_EINUSE;
		}
		if (socket_answers(&sa)) {
			fail(err, errlen, "%s is in use: another wirebookd answers on it (stop it, or "
			     "give another --control)", socket_path);
			return WB_CONTROL_EINUSE;
		}
		unlink(socket_path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail(err, errlen, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		fail(err, errlen, "%s: %s", socket_path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void wb_control_unlisten(int listen_fd, const char *socket_path)
{
	struct sockaddr_un sa;

	close(listen_fd);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
	/* Ours stopped answering with the close: one that still answers is
	 * another daemon's, bound since, and stays. */
	if (!socket_answers(&sa))
		unlink(socket_path);
}

static void serve_one(int fd, wb_control_handler handler, void *ctx)
{
	union {
		struct wb_ioc_version v;
		struct wb_ioc_ring_info ri;
		struct wb_ioc_feed f;
		struct wb_ioc_symbol s;
		struct wb_ioc_list l;
		struct wb_ioc_stats st;
		struct wb_ctl_detail d;
		struct wb_ctl_queue q;
	} arg;
	struct ctl_hdr h;
	struct timeval tv = { .tv_usec = 200000 };
	size_t size, esize;
	uint32_t *cap = NULL, n = 0;
	uint64_t *ptr = NULL;
	void *entries = NULL;

	/* A stalled client must not stall the capture loop for long. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (read_all(fd, &h, sizeof(h)) || h.magic != CTL_MAGIC)
		return;
	size = _IOC_SIZE(h.cmd);
	memset(&arg, 0, sizeof(arg));
	if (!known_cmd(h.cmd) || size > sizeof(arg)) {
		if (discard(fd, size))
			return;
		h.status = -ENOTTY;
		h.extra = 0;
		write_all(fd, &h, sizeof(h));
		return;
	}
	if (size && read_all(fd, &arg, size))
		return;
	esize = list_geometry(h.cmd, &arg, &cap, &ptr);
	if (esize) {
		if (*cap > CTL_MAX_ENTRIES)
			*cap = CTL_MAX_ENTRIES;
		entries = calloc(*cap ? *cap : 1, esize);
		if (!entries) {
			h.status = -ENOMEM;
			h.extra = 0;
			write_all(fd, &h, sizeof(h));
			return;
		}
		*ptr = (uint64_t)(uintptr_t)entries;
	}
	h.status = handler(ctx, h.cmd, &arg);
	h.extra = 0;
	if (!h.status && esize) {
		n = list_count(h.cmd, &arg);
		h.extra = (uint32_t)((n < *cap ? n : *cap) * esize);
	}
	if (!write_all(fd, &h, sizeof(h)) && !h.status && size && !write_all(fd, &arg, size) &&
	    h.extra)
		write_all(fd, entries, h.extra);
	free(entries);
}

int wb_control_serve(int listen_fd, wb_control_handler handler, void *ctx)
{
	int served = 0;

	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return served;
		/* The accepted socket must block (with the timeouts above). */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		serve_one(fd, handler, ctx);
		close(fd);
		served++;
	}
}

/* ---- a handler over a user-space feed engine ----------------------------- */

int wb_control_engine_handler(void *ctx, unsigned long cmd, void *arg)
{
	struct wb_control_engine *ce = ctx;
	struct feed_engine *e = ce->engine;
	int rc;

	switch (cmd) {
	case WB_IOC_VERSION: {
		struct wb_ioc_version *v = arg;

		memset(v, 0, sizeof(*v));
		v->ctl_version = WB_CTL_VERSION;
		v->abi_version = WB_ABI_VERSION;
		v->ring_count = ce->ring ? 1 : 0;
		return 0;
	}
	case WB_IOC_FEED_ADD: {
		struct wb_ioc_feed *f = arg;
		struct feed_map_entry m;

		rc = feed_ioc_entry(f, &m);
		if (rc == 0)
			rc = feed_map_add_entry(e, &m);
		if (rc < 0)
			return feed_ioc_errno(rc);
		f->line = rc;
		return 0;
	}
	case WB_IOC_FEED_DEL: {
		struct wb_ioc_feed *f = arg;

		rc = feed_ioc_feed_key(f);
		if (rc == 0)
			rc = feed_map_remove(e, f->ip, f->port);
		return feed_ioc_errno(rc);
	}
	case WB_IOC_FEED_LIST: {
		struct wb_ioc_list *l = arg;
		struct wb_ioc_feed *out = (struct wb_ioc_feed *)(uintptr_t)l->entries;

		l->count = feed_ioc_feed_list(e, out, l->capacity);
		return 0;
	}
	case WB_IOC_SUB_ADD:
	case WB_IOC_SUB_DEL: {
		struct wb_ioc_symbol *s = arg;
		int len = feed_ioc_ticker(s);

		if (len < 0)
			return feed_ioc_errno(len);
		rc = cmd == WB_IOC_SUB_ADD ? feed_subscribe(e, s->ticker, (size_t)len) :
					     feed_unsubscribe(e, s->ticker, (size_t)len);
		if (rc < 0)
			return feed_ioc_errno(rc);
		s->instrument = cmd == WB_IOC_SUB_ADD ? (uint32_t)rc : 0;
		return 0;
	}
	case WB_IOC_SUB_LIST: {
		struct wb_ioc_list *l = arg;
		struct wb_ioc_symbol *out = (struct wb_ioc_symbol *)(uintptr_t)l->entries;

		l->count = feed_ioc_sub_list(e, out, l->capacity);
		return 0;
	}
	case WB_IOC_STATS: {
		struct wb_ioc_stats *st = arg;
		struct wb_ioc_line_stats *out = (struct wb_ioc_line_stats *)(uintptr_t)st->lines;

		st->count = feed_ioc_line_stats(e, out, st->capacity);
		memset(&st->hook, 0, sizeof(st->hook));
		if (ce->ring) {
			st->hook.ring_published = wb_load_relaxed(&ce->ring->published);
			st->hook.ring_dropped = wb_load_relaxed(&ce->ring->dropped);
			st->hook.ring_wakeups = wb_load_relaxed(&ce->ring->wakeups);
		}
		return 0;
	}
	case WB_IOC_STATS_RESET:
		feed_ioc_stats_reset(e);
		return 0;
	case WB_IOC_RECOVERY_LIST: {
		struct wb_ioc_list *l = arg;
		struct wb_ioc_recovery *out = (struct wb_ioc_recovery *)(uintptr_t)l->entries;
		struct feed_recovery_stream *all = NULL;
		int n;

		if (l->capacity) {
			all = calloc(l->capacity, sizeof(*all));
			if (!all)
				return -ENOMEM;
		}
		n = feed_recovery_list(e, all, (int)l->capacity, true);
		for (int i = 0; i < n && (uint32_t)i < l->capacity; i++) {
			feed_ioc_recovery(e, &all[i], &out[i]);
			if (ce->fill_times)
				ce->fill_times(ce->recovery, out[i].venue, out[i].channel,
					       &out[i].fills, &out[i].fill_p50_ns,
					       &out[i].fill_p99_ns, &out[i].fill_max_ns);
		}
		free(all);
		l->count = (uint32_t)n;
		return 0;
	}
	case WB_IOC_TRADING_DATE:
		return feed_ioc_errno(feed_ioc_trading_date(e, arg));
	default:
		return -ENOTTY;
	}
}
