/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Reading captures (libpcap, with errors a user can act on) and writing
 * classic pcap files of Ethernet/IPv4/UDP frames, as the generators need.
 */
#ifndef WIREBOOK_TOOLS_PCAP_IO_H
#define WIREBOOK_TOOLS_PCAP_IO_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define PCAP_IO_ERR_LEN 512

/* ---- reading ---------------------------------------------------------- */

struct pcap_reader {
	void *handle;		/* pcap_t */
	int linktype;		/* DLT_* of the file */
	uint32_t link_hdr;	/* bytes of the link-layer header replaced (not Ethernet) */
	uint64_t packets;	/* records returned so far */
	uint64_t short_link;	/* records shorter than their link-layer header: skipped */
	uint8_t *frame;		/* not Ethernet: the record rebuilt as an Ethernet frame */
};

/*
 * Open a capture file for reading; nanosecond timestamps are kept when
 * the file has them. Every tool reads Ethernet frames (the feed engine
 * does), so records of other link types are handed out as Ethernet frames
 * carrying the same network-layer packet: Linux cooked captures SLL and
 * SLL2 (what tcpdump -i any writes) and raw IPv4 (DLT_RAW, LINKTYPE_IPV4)
 * are read too. Returns 0, or -1 with a message in err naming the file and
 * what is wrong (missing, unreadable, not a pcap, link type).
 */
int pcap_reader_open(struct pcap_reader *r, const char *path, char *err, size_t err_len);

/*
 * The next record: 1 with *frame and *len (captured bytes) and *ts_ns (record
 * time, ns since the epoch), 0 at the end, -1 on a read error (message in
 * err: a truncated file, for instance). The frame stays valid until the
 * next call.
 */
int pcap_reader_next(struct pcap_reader *r, const uint8_t **frame, uint32_t *len,
		     uint64_t *ts_ns, char *err, size_t err_len);

void pcap_reader_close(struct pcap_reader *r);

/* The UDP datagram inside an Ethernet frame (802.1Q tags skipped). */
struct udp_view {
	uint32_t src_ip, dst_ip;	/* host byte order */
	uint16_t src_port, dst_port;
	const uint8_t *payload;
	uint32_t len;			/* payload length from the UDP header */
};

/* 1 when frame is an unfragmented IPv4/UDP datagram that fits, else 0. */
int frame_udp_view(const uint8_t *frame, uint32_t len, struct udp_view *out);

/* ---- writing ---------------------------------------------------------- */

struct pcap_writer {
	FILE *f;
	char *buf;		/* stdio buffer: writes are batched */
	uint16_t ip_id;		/* IPv4 identification, incremented per frame */
	uint64_t packets;
	int error;		/* sticky: a write failed */
};

/*
 * Create path (or write to stdout for "-") as a classic pcap file with
 * nanosecond timestamps and Ethernet link type. Returns 0 or -1 + err.
 */
int pcap_writer_open(struct pcap_writer *w, const char *path, char *err, size_t err_len);

/*
 * Write one Ethernet/IPv4/UDP frame carrying payload from src to dst (host
 * byte order). The destination MAC is the multicast MAC of dst_ip (or a
 * fixed unicast MAC); the IPv4 header checksum is computed, the UDP
 * checksum is 0 (allowed for IPv4). Returns 0 or -1 (payload too big
 * or write error).
 */
int pcap_writer_udp(struct pcap_writer *w, uint64_t ts_ns, uint32_t src_ip, uint16_t src_port,
		    uint32_t dst_ip, uint16_t dst_port, const uint8_t *payload, uint32_t len);

/* Flush and close; returns 0 or -1 + err if anything failed to be written. */
int pcap_writer_close(struct pcap_writer *w, char *err, size_t err_len);

/* Largest UDP payload pcap_writer_udp accepts (IPv4 total length limit). */
#define PCAP_WRITER_MAX_PAYLOAD (65535u - 20u - 8u)

#endif /* WIREBOOK_TOOLS_PCAP_IO_H */
