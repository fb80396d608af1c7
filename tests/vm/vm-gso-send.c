/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * vm-gso-send: replay a capture on an interface, sending each run of
 * consecutive same-flow UDP datagrams of equal payload size (plus a
 * shorter last one) as ONE UDP GSO super-packet (virtio_net_hdr
 * GSO_UDP_L4 on a PACKET_VNET_HDR socket). Over a veth pair the receiver
 * gets the super-packet unsegmented, exactly as GRO would hand it to the
 * hook, so the VM test can check that the module splits it back into the
 * original datagrams. Frames are sent in capture order.
 *
 *   vm-gso-send IFACE CAPTURE.pcap
 * Reports on stderr: frames, sends, super-packets and their segments.
 * Exit status 3: the kernel cannot send UDP GSO this way (before 6.2).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "input/pcap_io.h"

/* Linux 6.2 added UDP_L4 to virtio_net_hdr; older headers lack the name. */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

#define MAX_FRAMES 200000
#define MAX_SEGMENTS 16
#define HDR_LEN (14 + 20 + 8)

struct frame {
	uint8_t *data;
	uint32_t len;
	struct udp_view udp;
	int is_udp;	/* plain IPv4 (IHL 5) / UDP, untagged */
};

static int same_flow(const struct frame *a, const struct frame *b)
{
	return a->is_udp && b->is_udp && a->udp.src_ip == b->udp.src_ip &&
	       a->udp.dst_ip == b->udp.dst_ip && a->udp.src_port == b->udp.src_port &&
	       a->udp.dst_port == b->udp.dst_port;
}

static void pace(void)
{
	struct timespec ts = { .tv_nsec = 300000 };

	nanosleep(&ts, NULL);
}

static int send_frame(int fd, const struct virtio_net_hdr *vh, const uint8_t *frame, uint32_t len)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + 65536];

	memcpy(buf, vh, sizeof(*vh));
	memcpy(buf + sizeof(*vh), frame, len);
	if (send(fd, buf, sizeof(*vh) + len, 0) < 0) {
		int e = errno;

		/* Kernels before 6.2 refuse UDP_L4 GSO from packet sockets. */
		if (e == EINVAL && vh->gso_type == VIRTIO_NET_HDR_GSO_UDP_L4)
			fprintf(stderr, "vm-gso-send: this kernel cannot send UDP GSO from a packet "
				"socket (needs 6.2+)\n");
		else
			fprintf(stderr, "vm-gso-send: send: %s\n", strerror(e));
		errno = e;
		return -1;
	}
	pace();
	return 0;
}

int main(int argc, char **argv)
{
	static struct frame frames[MAX_FRAMES];
	static uint8_t super[65536];
	struct pcap_reader r;
	struct sockaddr_ll sll;
	char err[PCAP_IO_ERR_LEN];
	const uint8_t *data;
	uint32_t len, n = 0, i, sends = 0, supers = 0, segments = 0;
	uint64_t ts;
	int fd, one = 1, rc;

	if (argc != 3 || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr, "usage: vm-gso-send IFACE CAPTURE.pcap\n");
		return argc == 2 ? 0 : 2;
	}
	if (pcap_reader_open(&r, argv[2], err, sizeof(err))) {
		fprintf(stderr, "vm-gso-send: %s\n", err);
		return 1;
	}
	while (n < MAX_FRAMES && (rc = pcap_reader_next(&r, &data, &len, &ts, err, sizeof(err))) > 0) {
		struct frame *f = &frames[n++];

		f->data = malloc(len);
		if (!f->data)
			return 1;
		memcpy(f->data, data, len);
		f->len = len;
		f->is_udp = frame_udp_view(f->data, len, &f->udp) && len >= HDR_LEN &&
			    f->data[12] == 0x08 && f->data[13] == 0x00 && f->data[14] == 0x45 &&
			    f->udp.payload == f->data + HDR_LEN;
	}
	pcap_reader_close(&r);

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0 || setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0) {
		perror("vm-gso-send: packet socket");
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "vm-gso-send: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	for (i = 0; i < n;) {
		struct virtio_net_hdr vh;
		const struct frame *first = &frames[i];
		uint32_t j = i + 1, k, total;

		memset(&vh, 0, sizeof(vh));
		if (first->is_udp && first->udp.len) {
			/* Equal sizes, then at most one shorter datagram ends the run. */
			while (j < n && j - i < MAX_SEGMENTS && same_flow(first, &frames[j]) &&
			       frames[j].udp.len == first->udp.len)
				j++;
			if (j < n && j - i < MAX_SEGMENTS && same_flow(first, &frames[j]) &&
			    frames[j].udp.len && frames[j].udp.len < first->udp.len)
				j++;
		}
		if (j - i < 2) {
			if (send_frame(fd, &vh, first->data, first->len))
				return 1;
			sends++;
			i++;
			continue;
		}
		memcpy(super, first->data, HDR_LEN);
		total = HDR_LEN;
		for (k = i; k < j; k++) {
			memcpy(super + total, frames[k].udp.payload, frames[k].udp.len);
			total += frames[k].udp.len;
		}
		super[16] = (uint8_t)((total - 14) >> 8);
		super[17] = (uint8_t)(total - 14);
		super[38] = (uint8_t)((total - 34) >> 8);
		super[39] = (uint8_t)(total - 34);
		vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh.gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
		vh.hdr_len = HDR_LEN;
		vh.gso_size = (uint16_t)first->udp.len;
		vh.csum_start = 14 + 20;
		vh.csum_offset = 6;
		if (send_frame(fd, &vh, super, total))
			return errno == EINVAL ? 3 : 1;
		sends++;
		supers++;
		segments += j - i;
		i = j;
	}
	fprintf(stderr, "vm-gso-send: %u frames in %u sends: %u super-packets of %u datagrams\n",
		n, sends, supers, segments);
	close(fd);
	return 0;
}
