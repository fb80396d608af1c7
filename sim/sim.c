/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* What the exchange simulators share (see sim.h). */
#include "sim/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

volatile sig_atomic_t sim_stop;

void sim_on_signal(int sig)
{
	(void)sig;
	sim_stop = 1;
}

int sim_store_grow(struct sim_store *s, uint64_t need_seq, size_t need_bytes)
{
	if (need_seq > s->cap) {
		uint64_t cap = s->cap ? s->cap : 1u << 16;

		while (cap < need_seq)
			cap *= 2;
		uint64_t *off = realloc(s->off, cap * sizeof(*off));
		uint16_t *len = off ? realloc(s->len, cap * sizeof(*len)) : NULL;

		if (off)
			s->off = off;
		if (!len)
			return -1;
		s->len = len;
		for (uint64_t i = s->cap; i < cap; i++)
			s->off[i] = UINT64_MAX;
		s->cap = cap;
	}
	if (s->used + need_bytes > s->bytes_cap) {
		size_t cap = s->bytes_cap ? s->bytes_cap : 1u << 20;
		uint8_t *b;

		while (cap < s->used + need_bytes)
			cap *= 2;
		b = realloc(s->bytes, cap);
		if (!b)
			return -1;
		s->bytes = b;
		s->bytes_cap = cap;
	}
	return 0;
}

void sim_store_free(struct sim_store *s)
{
	free(s->off);
	free(s->len);
	free(s->bytes);
}

int sim_tcp_listen(const char *listen_at, uint32_t ip, uint16_t port, struct sockaddr_in *addr)
{
	socklen_t alen = sizeof(*addr);
	struct sigaction sa;
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(ip);
	addr->sin_port = htons(port);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)addr, sizeof(*addr)) < 0 || listen(lfd, 8) < 0 ||
	    getsockname(lfd, (struct sockaddr *)addr, &alen) < 0) {
		fprintf(stderr, "wb-recoveryd: --listen %s: %s\n", listen_at, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sim_on_signal;	/* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return lfd;
}
