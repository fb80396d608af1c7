/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * soak-send: the soak test's exchange. Sends a Nasdaq TotalView-ITCH 5.0
 * session over MoldUDP64 on an interface (AF_PACKET), every packet on the
 * A and the B line of feeds.conf's nasdaq entries, at a steady message
 * rate for a given time, with sequence numbers that never restart. Each
 * message's timestamp is the wall clock (ns since ET midnight, as Nasdaq's) when its
 * packet was built, so a reader can measure sender-to-book latency. The
 * flow adds orders on a set of symbols and deletes the oldest once a
 * number are live, so the books stay the same size for hours.
 *
 *   soak-send --iface IF --rate MSGS/S --seconds S [--batch N] [--symbols N]
 *
 * SIGTERM/SIGINT stop it early. At exit it prints the messages and packets
 * sent and the last sequence number on stdout (key=value), and how far it
 * fell behind the requested rate.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/options.h"
#include "feed/feed.h"
#include "wire/bytes.h"
#include "wire/itch50.h"
#include "wire/moldudp64.h"

#define A_GROUP 0xe9360c6fu	/* 233.54.12.111:26477, feeds.conf nasdaq A */
#define A_PORT 26477
#define B_GROUP 0xe931c46fu	/* 233.49.196.111:26478, nasdaq B */
#define B_PORT 26478
#define SRC_IP 0x0a000001u
#define MAX_BATCH 40
#define FRAME_MAX (14 + 20 + 8 + MOLD_HEADER_LEN + \
		   MAX_BATCH * (MOLD_BLOCK_LENGTH_LEN + ITCH_ADD_LEN))
#define LIVE_MAX 20000u		/* orders kept live; older ones are deleted */
#define BURST 16		/* packets per sendmmsg (each on A and B) */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


/* Ethernet/IPv4/UDP headers for a datagram of len bytes to group:port. */
static void headers(uint8_t *f, uint32_t group, uint16_t port, uint32_t len)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint32_t sum = 0;
	int i;

	f[0] = 0x01; f[1] = 0x00; f[2] = 0x5e;
	f[3] = (uint8_t)((group >> 16) & 0x7f); f[4] = (uint8_t)(group >> 8); f[5] = (uint8_t)group;
	memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
	wire_put_be16(f + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	wire_put_be16(ip + 2, (uint16_t)(20 + 8 + len));
	ip[8] = 16;
	ip[9] = 17;
	wire_put_be32(ip + 12, SRC_IP);
	wire_put_be32(ip + 16, group);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	wire_put_be16(ip + 10, (uint16_t)~sum);
	wire_put_be16(udp, 40000);
	wire_put_be16(udp + 2, port);
	wire_put_be16(udp + 4, (uint16_t)(8 + len));
	wire_put_be16(udp + 6, 0);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: soak-send --iface IF --rate MSGS_PER_S --seconds S [--batch N (1-%d, 20)]\n"
		   "                 [--symbols N (1-1000, 50)]\n"
		   "Send an endless ITCH session on the A and B lines (see the file's comment).\n",
		MAX_BATCH);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, 0, 'i' }, { "rate", required_argument, 0, 'r' },
		{ "seconds", required_argument, 0, 's' }, { "batch", required_argument, 0, 'b' },
		{ "symbols", required_argument, 0, 'y' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	static uint8_t frames[2 * BURST][FRAME_MAX];
	static uint64_t live[LIVE_MAX];
	struct mmsghdr msgs[2 * BURST];
	struct iovec iov[2 * BURST];
	struct sockaddr_ll sll;
	const char *iface = NULL;
	double rate = 0, seconds = 0;
	int batch = 20, nsym = 50, c, fd;
	uint64_t seq = 1, sent_msgs = 0, sent_pkts = 0, send_errors = 0, next_ref = 1;
	uint64_t live_head = 0, live_count = 0, msg_no = 0, t0, deadline, interval, due;
	uint64_t behind_max = 0, midnight_base;
	struct sigaction sa;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': iface = optarg; break;
		case 'r':
			if (opt_double("soak-send", "--rate", optarg, 0, 1, 1e8, &rate))
				return 2;
			break;
		case 's':
			if (opt_double("soak-send", "--seconds", optarg, 0, 1, 1e6, &seconds))
				return 2;
			break;
		case 'b':
			if (opt_int("soak-send", "--batch", optarg, 1, MAX_BATCH, &batch))
				return 2;
			break;
		case 'y':
			if (opt_int("soak-send", "--symbols", optarg, 1, 1000, &nsym))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!iface || rate <= 0 || seconds <= 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	if (fd < 0) {
		fprintf(stderr, "soak-send: socket: %s (needs root or CAP_NET_RAW)\n", strerror(errno));
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = (int)if_nametoindex(iface);
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "soak-send: %s: %s\n", iface, strerror(errno ? errno : ENODEV));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	{
		uint64_t wall = now_ns(CLOCK_REALTIME);

		midnight_base = feed_et_midnight_ns(wall);
	}
	interval = (uint64_t)(1e9 * batch / rate);
	t0 = now_ns(CLOCK_MONOTONIC);
	deadline = t0 + (uint64_t)(seconds * 1e9);
	due = t0;
	while (!g_stop) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int n = 0, k, r;

		if (now >= deadline)
			break;
		if (now < due) {
			if (due - now > 200000) {
				struct timespec nap = { 0, 100000 };

				nanosleep(&nap, NULL);
			}
			continue;
		}
		if (now - due > behind_max)
			behind_max = now - due;
		/* Packets due now, up to a burst; the schedule is kept, so a
		 * late sender catches up (and says how late it got). */
		for (k = 0; k < BURST && due <= now; k++, due += interval) {
			uint8_t *a = frames[2 * k], *pay = a + 42, *m = pay + MOLD_HEADER_LEN;
			uint64_t ts = now_ns(CLOCK_REALTIME) - midnight_base;
			int i;

			memcpy(pay + MOLD_SESSION, "SOAK000001", MOLD_SESSION_LEN);
			wire_put_be64(pay + MOLD_SEQUENCE, seq);
			wire_put_be16(pay + MOLD_COUNT, (uint16_t)batch);
			for (i = 0; i < batch; i++, msg_no++) {
				uint8_t *msg = m + MOLD_BLOCK_LENGTH_LEN;

				if (live_count < LIVE_MAX || (msg_no & 1)) {
					uint32_t sym = (uint32_t)((next_ref - 1) % (uint64_t)nsym);
					char stock[9];

					if (live_count == LIVE_MAX) { /* keep the window: drop one */
						live_head++;
						live_count--;
					}
					wire_put_be16(m, ITCH_ADD_LEN);
					msg[ITCH_TYPE] = ITCH_ADD;
					wire_put_be16(msg + ITCH_LOCATE, (uint16_t)(sym + 1));
					wire_put_be16(msg + ITCH_TRACKING, 0);
					wire_put_be48(msg + ITCH_TIMESTAMP, ts);
					wire_put_be64(msg + ITCH_ORDER_REF, next_ref);
					msg[ITCH_ADD_SIDE] = ((next_ref - 1) / (uint64_t)nsym) & 1 ? 'S' : 'B';
					wire_put_be32(msg + ITCH_ADD_SHARES, 100);
					snprintf(stock, sizeof(stock), "SK%03u   ", sym);
					memcpy(msg + ITCH_ADD_STOCK, stock, ITCH_STOCK_LEN);
					/* bids 10.00-10.49, asks 10.50-10.99: books never cross */
					wire_put_be32(msg + ITCH_ADD_PRICE,
						      (uint32_t)(100000 + (msg[ITCH_ADD_SIDE] == 'S' ? 5000 : 0) +
								 (next_ref * 7 % 50) * 100));
					live[(live_head + live_count) % LIVE_MAX] = next_ref++;
					live_count++;
					m += MOLD_BLOCK_LENGTH_LEN + ITCH_ADD_LEN;
				} else {
					uint64_t ref = live[live_head % LIVE_MAX];
					uint32_t sym = (uint32_t)((ref - 1) % (uint64_t)nsym);

					/* the locate the add of ref used */
					wire_put_be16(m, ITCH_DELETE_LEN);
					msg[ITCH_TYPE] = ITCH_DELETE;
					wire_put_be16(msg + ITCH_LOCATE, (uint16_t)(sym + 1));
					wire_put_be16(msg + ITCH_TRACKING, 0);
					wire_put_be48(msg + ITCH_TIMESTAMP, ts);
					wire_put_be64(msg + ITCH_ORDER_REF, ref);
					live_head++;
					live_count--;
					m += MOLD_BLOCK_LENGTH_LEN + ITCH_DELETE_LEN;
				}
			}
			seq += (uint64_t)batch;
			{
				uint32_t len = (uint32_t)(m - pay);

				headers(a, A_GROUP, A_PORT, len);
				memcpy(frames[2 * k + 1], a, 42 + len);
				headers(frames[2 * k + 1], B_GROUP, B_PORT, len);
				iov[2 * k].iov_base = a;
				iov[2 * k].iov_len = 42 + len;
				iov[2 * k + 1].iov_base = frames[2 * k + 1];
				iov[2 * k + 1].iov_len = 42 + len;
			}
			n += 2;
		}
		memset(msgs, 0, sizeof(msgs));
		for (k = 0; k < n; k++) {
			msgs[k].msg_hdr.msg_iov = &iov[k];
			msgs[k].msg_hdr.msg_iovlen = 1;
		}
		for (k = 0; k < n; ) {
			r = sendmmsg(fd, msgs + k, (unsigned)(n - k), 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == ENOBUFS || errno == EAGAIN)) {
				struct timespec nap = { 0, 20000 };

				nanosleep(&nap, NULL);
				continue;
			}
			if (r <= 0) {
				send_errors++;
				break;
			}
			k += r;
		}
		sent_pkts += (uint64_t)n / 2;
		sent_msgs += (uint64_t)(n / 2) * (uint64_t)batch;
	}
	{
		double el = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;

		printf("sent_messages=%llu\nsent_packets=%llu\nlast_seq=%llu\nsend_errors=%llu\n"
		       "elapsed_s=%.3f\nrate_msgs_s=%.0f\nrequested_rate=%.0f\nmax_behind_ms=%.3f\n",
		       (unsigned long long)sent_msgs, (unsigned long long)sent_pkts,
		       (unsigned long long)(seq - 1), (unsigned long long)send_errors, el,
		       el > 0 ? (double)sent_msgs / el : 0.0, rate, (double)behind_max / 1e6);
	}
	close(fd);
	return send_errors ? 1 : 0;
}
