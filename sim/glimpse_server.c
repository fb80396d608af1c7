/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* wb-recoveryd's GLIMPSE server over SoupBinTCP (see glimpse_server.h). */
#include "sim/glimpse_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire/bytes.h"
#include "wire/itch50.h"
#include "recovery/soupbin.h"
#include "sim/order_image.h"

#define MAX_CLIENTS 8
#define LOCATES 65536
#define STATE_BYTES 40		/* the longest per-stock state message kept (R, 39) */
#define IN_BYTES 512

/* The per-stock state a snapshot repeats, by slot, in the order it sends it. */
static const struct {
	uint8_t type, len;
} state_types[] = {
	{ ITCH_STOCK_DIRECTORY, ITCH_STOCK_DIRECTORY_LEN },
	{ ITCH_TRADING_ACTION, ITCH_TRADING_ACTION_LEN },
	{ ITCH_REG_SHO, ITCH_REG_SHO_LEN },
	{ ITCH_OPERATIONAL_HALT, ITCH_OPERATIONAL_HALT_LEN },
};
#define STATE_TYPES 4
_Static_assert(sizeof(state_types) / sizeof(state_types[0]) == STATE_TYPES, "one slot a type");

/* An order of the day in the image: stamp, when it joined the book (its priority);
 * qty, its shares; extra, its Add Order as it will be sent (extra_len bytes). */

struct book {
	/* per stock: the last message of each state type, by type slot */
	uint8_t (*state)[STATE_TYPES][STATE_BYTES];
	uint8_t system_event[ITCH_SYSTEM_EVENT_LEN];
	bool has_system_event;
	struct order_image orders;	/* by ref; refs are unique per day */
};

static int state_slot(uint8_t type)
{
	for (int slot = 0; slot < STATE_TYPES; slot++)
		if (state_types[slot].type == type)
			return slot;
	return -1;
}

static struct image_order *find(struct book *b, uint64_t ref)
{
	return order_image_find(&b->orders, ref);
}

/* -1: no memory. */
static int add(struct book *b, const uint8_t *m, uint64_t ref, uint32_t shares)
{
	struct image_order *o = order_image_add(&b->orders, ref);

	if (!o)
		return -1;
	o->extra_len = m[ITCH_TYPE] == ITCH_ADD_MPID ? ITCH_ADD_MPID_LEN : ITCH_ADD_LEN;
	memcpy(o->extra, m, o->extra_len);
	o->qty = shares;
	o->live = shares > 0;
	return 0;
}

static void set_shares(struct image_order *o, uint32_t shares)
{
	o->qty = shares;
	o->live = shares > 0;
}

static void reduce(struct image_order *o, uint32_t by)
{
	set_shares(o, by >= o->qty ? 0 : o->qty - by);
}

/* Apply one ITCH message to the book. */
static int apply(struct book *b, const uint8_t *m, uint16_t len)
{
	uint16_t locate = len >= ITCH_LOCATE + 2 ? wire_be16(m + ITCH_LOCATE) : 0;
	struct image_order *o;
	int slot;

	switch (m[ITCH_TYPE]) {
	case ITCH_ADD:
	case ITCH_ADD_MPID:
		if (len >= (m[ITCH_TYPE] == ITCH_ADD_MPID ? ITCH_ADD_MPID_LEN : ITCH_ADD_LEN))
			return add(b, m, wire_be64(m + ITCH_ORDER_REF),
				   wire_be32(m + ITCH_ADD_SHARES));
		return 0;
	case ITCH_EXECUTED:
	case ITCH_EXECUTED_PRICE:
	case ITCH_CANCEL:
		/* the shares are where all three have them; X is the shortest */
		if (len >= ITCH_CANCEL_LEN && (o = find(b, wire_be64(m + ITCH_ORDER_REF))))
			reduce(o, wire_be32(m + ITCH_EXECUTED_SHARES));
		return 0;
	case ITCH_DELETE:
		if (len >= ITCH_DELETE_LEN && (o = find(b, wire_be64(m + ITCH_ORDER_REF))))
			set_shares(o, 0);
		return 0;
	case ITCH_REPLACE:
		if (len < ITCH_REPLACE_LEN || !(o = find(b, wire_be64(m + ITCH_ORDER_REF))))
			return 0;
		{
			/* The new order: the old one's side, stock and attribution, at the
			 * back of its new price's queue (it joins the book now). */
			uint8_t nm[ITCH_ADD_MPID_LEN];

			memcpy(nm, o->extra, o->extra_len);
			/* locate, tracking, timestamp */
			memcpy(nm + ITCH_LOCATE, m + ITCH_LOCATE, ITCH_BODY - ITCH_LOCATE);
			memcpy(nm + ITCH_ORDER_REF, m + ITCH_REPLACE_NEW_REF, 8);
			memcpy(nm + ITCH_ADD_SHARES, m + ITCH_REPLACE_SHARES, 4);
			memcpy(nm + ITCH_ADD_PRICE, m + ITCH_REPLACE_PRICE, 4);
			set_shares(o, 0);	/* before the add, which may move o */
			return add(b, nm, wire_be64(m + ITCH_REPLACE_NEW_REF),
				   wire_be32(m + ITCH_REPLACE_SHARES));
		}
	case ITCH_SYSTEM_EVENT:
		if (len >= ITCH_SYSTEM_EVENT_LEN) {
			memcpy(b->system_event, m, ITCH_SYSTEM_EVENT_LEN);
			b->has_system_event = true;
		}
		return 0;
	default:
		slot = state_slot(m[ITCH_TYPE]);
		if (slot >= 0 && len <= STATE_BYTES)
			memcpy(b->state[locate][slot], m, len);
		return 0;
	}
}

int soup_snapshot_put(struct soup_snapshot *s, const uint8_t *m, size_t len)
{
	if (s->len + 3 + len > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1 << 20;
		uint8_t *p = realloc(s->bytes, cap);

		if (!p)
			return -1;
		s->bytes = p;
		s->cap = cap;
	}
	if (s->count == s->ends_cap) {
		size_t cap = s->ends_cap ? s->ends_cap * 2 : 4096;
		size_t *p = realloc(s->ends, cap * sizeof(*p));

		if (!p)
			return -1;
		s->ends = p;
		s->ends_cap = cap;
	}
	s->len += soup_put_header(s->bytes + s->len, SOUP_SEQUENCED_DATA, len);
	memcpy(s->bytes + s->len, m, len);
	s->len += len;
	s->ends[s->count++] = s->len;
	return 0;
}

const uint8_t *glimpse_source_message(const struct glimpse_source *src, uint64_t q, uint16_t *len)
{
	if (q == 0 || q > src->cap || src->off[q - 1] == UINT64_MAX)
		return NULL;
	*len = src->len[q - 1];
	return src->bytes + src->off[q - 1];
}

static int build_itch_book(const struct glimpse_source *src, uint64_t at,
			   struct soup_snapshot *out, uint64_t *live)
{
	struct book b = { 0 };
	struct image_order **orders = NULL;
	uint16_t len;
	const uint8_t *m;
	long n;
	int rc = -1;
	uint8_t end[GLIMPSE_END_OF_SNAPSHOT_LEN];

	b.state = calloc(LOCATES, sizeof(*b.state));
	if (!b.state)
		goto out;
	for (uint64_t q = 1; q <= at; q++)
		if ((m = glimpse_source_message(src, q, &len)) && len && apply(&b, m, len))
			goto out;
	/* The directory first (a decoder learns its stocks), then the states, then the orders. */
	if (b.has_system_event && soup_snapshot_put(out, b.system_event, ITCH_SYSTEM_EVENT_LEN))
		goto out;
	for (int slot = 0; slot < STATE_TYPES; slot++)
		for (size_t l = 1; l < LOCATES; l++)
			if (b.state[l][slot][ITCH_TYPE] &&
			    soup_snapshot_put(out, b.state[l][slot], state_types[slot].len))
				goto out;
	*live = 0;
	/* In priority order: when each joined the book. */
	n = order_image_live(&b.orders, NULL, NULL, order_image_by_stamp, &orders);
	if (n < 0)
		goto out;
	for (long i = 0; i < n; i++) {
		struct image_order *o = orders[i];

		wire_put_be32(o->extra + ITCH_ADD_SHARES, o->qty);
		o->extra[ITCH_TYPE] = o->extra_len == ITCH_ADD_MPID_LEN ? ITCH_ADD_MPID : ITCH_ADD;
		if (soup_snapshot_put(out, o->extra, o->extra_len))
			goto out;
		++*live;
	}
	if (soup_snapshot_put(out, end, glimpse_put_end_of_snapshot(end, at + 1)))
		goto out;
	rc = 0;
out:
	free(b.state);
	free(orders);
	order_image_free(&b.orders);
	return rc;
}

struct client {
	int fd;
	bool up, first;
	uint8_t in[IN_BYTES];
	uint32_t inlen;
	size_t sent;		/* bytes of the snapshot sent */
	size_t stop_at;		/* send no further (hang-up or stall point) */
	bool hangup;		/* at stop_at: close (else fall silent) */
	bool silent;		/* stalled: sends nothing more, not even heartbeats */
	uint64_t last_sent;
};

struct counters {
	uint64_t sessions, logins, logins_refused, snapshots, hangups, stalls, heartbeats_in;
	uint64_t malformed;
};

static const char *title_of(const struct glimpse_opts *o)
{
	return o->title ? o->title : "nasdaq GLIMPSE";
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop(struct client *cl)
{
	close(cl->fd);
	cl->fd = -1;
}

static void login(struct client *cl, const uint8_t *p, size_t plen, const struct glimpse_source *src,
		  const struct glimpse_opts *o, const struct soup_snapshot *snap, struct counters *c,
		  bool *first_used)
{
	uint8_t user[SOUP_USER_LEN], password[SOUP_PASSWORD_LEN], out[64];
	uint8_t reason = 0;
	uint64_t seq = 0;
	const uint8_t *session = p + SOUP_USER_LEN + SOUP_PASSWORD_LEN;
	bool blank = true;

	soup_put_alpha(user, sizeof(user), o->user);
	soup_put_alpha(password, sizeof(password), o->password);
	for (int i = 0; i < SOUP_SESSION_LEN; i++)
		blank &= session[i] == ' ';
	/* SoupBinTCP 4.1 appends a heartbeat timeout: taken, not used. */
	if (plen < SOUP_LOGIN_REQUEST_LEN - 1 ||
	    soup_get_numeric(session + SOUP_SESSION_LEN, SOUP_SEQUENCE_LEN, &seq)) {
		c->malformed++;
		drop(cl);
		return;
	}
	if (memcmp(p, user, sizeof(user)) || memcmp(p + SOUP_USER_LEN, password, sizeof(password)))
		reason = SOUP_REJECT_NOT_AUTHORIZED;
	else if (!blank && memcmp(session, src->session, SOUP_SESSION_LEN))
		reason = SOUP_REJECT_SESSION_UNAVAILABLE;
	if (reason) {
		c->logins_refused++;
		if (o->verbose)
			fprintf(stderr, "wb-recoveryd: %s login '%.6s' refused (%c)\n",
				title_of(o), (const char *)p, reason);
		(void)!send(cl->fd, out, soup_login_rejected(out, reason), MSG_NOSIGNAL);
		drop(cl);
		return;
	}
	{
		char session_text[SOUP_SESSION_LEN + 1];

		memcpy(session_text, src->session, SOUP_SESSION_LEN);
		session_text[SOUP_SESSION_LEN] = 0;
		if (seq == 0)
			seq = 1;	/* 0: "the next", which for a new session is the first */
		if (send(cl->fd, out, soup_login_accepted(out, session_text, seq), MSG_NOSIGNAL) < 0) {
			drop(cl);
			return;
		}
	}
	c->logins++;
	cl->up = true;
	/* The snapshot from the requested sequence (GLIMPSE clients ask for 1). */
	cl->sent = seq - 1 == 0 ? 0 : seq - 1 <= snap->count ? snap->ends[seq - 2] : snap->len;
	cl->stop_at = snap->len;
	cl->first = !*first_used;
	*first_used = true;
	if (cl->first && (o->hangup_after || o->stall_after)) {
		uint64_t n = o->hangup_after ? o->hangup_after : o->stall_after;

		cl->stop_at = n < snap->count ? snap->ends[n - 1] : snap->len;
		cl->hangup = o->hangup_after != 0;
	}
}

/* Take what a client sent; its session ends when it logs out or breaks. */
static void client_read(struct client *cl, const struct glimpse_source *src,
			const struct glimpse_opts *o, const struct soup_snapshot *snap, struct counters *c,
			bool *first_used)
{
	ssize_t n = recv(cl->fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, MSG_DONTWAIT);
	uint32_t used = 0;

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop(cl);
		return;
	}
	cl->inlen += (uint32_t)n;
	for (;;) {
		uint8_t type;
		const uint8_t *p;
		size_t plen;
		long got = soup_next(cl->in + used, cl->inlen - used, &type, &p, &plen);

		if (got == 0 && cl->inlen - used == sizeof(cl->in))
			got = -1;	/* no client packet is this long */
		if (got < 0) {
			c->malformed++;
			drop(cl);
			return;
		}
		if (!got)
			break;
		used += (uint32_t)got;
		if (type == SOUP_LOGIN_REQUEST && !cl->up) {
			login(cl, p, plen, src, o, snap, c, first_used);
			if (cl->fd < 0)
				return;
		} else if (type == SOUP_CLIENT_HEARTBEAT && cl->up) {
			c->heartbeats_in++;
		} else if (type == SOUP_LOGOUT_REQUEST) {
			drop(cl);
			return;
		} else {
			c->malformed++;
			if (o->verbose)
				fprintf(stderr, "wb-recoveryd: %s: unexpected packet '%c': session "
					"dropped\n", title_of(o), type);
			drop(cl);
			return;
		}
	}
	memmove(cl->in, cl->in + used, cl->inlen - used);
	cl->inlen -= used;
}

static void client_write(struct client *cl, const struct soup_snapshot *snap, struct counters *c,
			 uint64_t now)
{
	if (cl->silent)
		return;
	while (cl->sent < cl->stop_at) {
		ssize_t n = send(cl->fd, snap->bytes + cl->sent, cl->stop_at - cl->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				drop(cl);
			return;
		}
		cl->sent += (size_t)n;
		cl->last_sent = now;
		if (cl->sent == snap->len)
			c->snapshots++;
	}
	if (cl->stop_at < snap->len) {
		if (cl->hangup) {
			c->hangups++;
			drop(cl);
		} else {
			c->stalls++;
			cl->silent = true;
		}
		return;
	}
	if (now - cl->last_sent >= SOUP_HEARTBEAT_PERIOD_MS * 1000000ull) {
		uint8_t hb[SOUP_HEADER];

		if (send(cl->fd, hb, soup_empty(hb, SOUP_SERVER_HEARTBEAT), MSG_NOSIGNAL |
			 MSG_DONTWAIT) == 3)
			cl->last_sent = now;
	}
}

int glimpse_serve(uint32_t ip, uint16_t port, const struct glimpse_source *src,
		  const struct glimpse_opts *o, volatile sig_atomic_t *stop)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	struct soup_snapshot snap = { 0 };
	struct client cl[MAX_CLIENTS];
	struct counters c = { 0 };
	uint64_t at = o->snapshot_at ? o->snapshot_at : src->end - 1, live = 0;
	bool first_used = false;
	int one = 1, lfd;

	if (at >= src->end) {
		fprintf(stderr, "wb-recoveryd: --snapshot-at %" PRIu64 ": the capture ends at %" PRIu64
			"\n", at, src->end - 1);
		return 1;
	}
	if ((o->build ? o->build : build_itch_book)(src, at, &snap, &live)) {
		fprintf(stderr, "wb-recoveryd: out of memory building the snapshot\n");
		return 1;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addr.sin_addr.s_addr = htonl(ip);
	addr.sin_port = htons(port);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 8) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
		fprintf(stderr, "wb-recoveryd: --listen: %s\n", strerror(errno));
		free(snap.bytes);
		free(snap.ends);
		return 1;
	}
	memset(cl, 0, sizeof(cl));
	for (int i = 0; i < MAX_CLIENTS; i++)
		cl[i].fd = -1;
	fprintf(stderr, "wb-recoveryd: serving %s, session %.10s, the state after "
		"message %" PRIu64 " (%zu messages, %" PRIu64 " %s), on %s:%u\n",
		title_of(o), src->session, at, snap.count, live,
		o->items ? o->items : "live orders", inet_ntoa(addr.sin_addr),
		ntohs(addr.sin_port));
	while (!*stop) {
		struct pollfd pf[MAX_CLIENTS + 1];
		uint64_t now;

		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (int i = 0; i < MAX_CLIENTS; i++) {
			pf[i + 1].fd = cl[i].fd;
			pf[i + 1].events = POLLIN | (cl[i].up && !cl[i].silent &&
						     cl[i].sent < cl[i].stop_at ? POLLOUT : 0);
		}
		if (poll(pf, MAX_CLIENTS + 1, 100) < 0 && errno != EINTR) {
			fprintf(stderr, "wb-recoveryd: poll: %s\n", strerror(errno));
			break;
		}
		now = mono_ns();
		for (int i = 0; i < MAX_CLIENTS; i++) {
			if (cl[i].fd < 0)
				continue;
			if (pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
				client_read(&cl[i], src, o, &snap, &c, &first_used);
			if (cl[i].fd >= 0 && cl[i].up)
				client_write(&cl[i], &snap, &c, now);
		}
		if (pf[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			int i;

			for (i = 0; i < MAX_CLIENTS && cl[i].fd >= 0; i++)
				;
			if (fd >= 0 && i == MAX_CLIENTS) {
				close(fd);	/* too many sessions */
			} else if (fd >= 0) {
				memset(&cl[i], 0, sizeof(cl[i]));
				cl[i].fd = fd;
				cl[i].last_sent = now;
				c.sessions++;
			}
		}
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (cl[i].fd >= 0)
			close(cl[i].fd);
	close(lfd);
	fprintf(stderr, "wb-recoveryd: %" PRIu64 " sessions, %" PRIu64 " logins, %" PRIu64
		" refused; %" PRIu64 " snapshots sent whole; %" PRIu64 " dropped (--hangup-after), %"
		PRIu64 " stalled (--stall-after); %" PRIu64 " client heartbeats, %" PRIu64
		" malformed\n", c.sessions, c.logins, c.logins_refused, c.snapshots, c.hangups,
		c.stalls, c.heartbeats_in, c.malformed);
	free(snap.bytes);
	free(snap.ends);
	return 0;
}
