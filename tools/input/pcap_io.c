/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Capture file reading (libpcap) and classic pcap writing (see pcap_io.h). */
#include "input/pcap_io.h"
#include "wire/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pcap/pcap.h>

/* ---- reading ---------------------------------------------------------- */

#define ETH_HDR_LEN 14u
#define SLL_HDR_LEN 16u
#define SLL2_HDR_LEN 20u
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif

int pcap_reader_open(struct pcap_reader *r, const char *path, char *err, size_t err_len)
{
	char pcap_err[PCAP_ERRBUF_SIZE];
	struct stat st;
	FILE *f;
	pcap_t *p;

	memset(r, 0, sizeof(*r));
	/* Open the file ourselves first: errno says "no such file" or
	 * "permission denied", which libpcap's message does not always. */
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: is a directory, not a capture file", path);
		fclose(f);
		return -1;
	}
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, pcap_err);
	if (!p) {
		/* libpcap closes nothing on failure. */
		if (f != stdin)
			fclose(f);
		snprintf(err, err_len, "%s: not a readable pcap/pcapng capture (%s)", path, pcap_err);
		return -1;
	}
	r->linktype = pcap_datalink(p);
	switch (r->linktype) {
	case DLT_EN10MB:
		break;
	case DLT_LINUX_SLL:
		r->link_hdr = SLL_HDR_LEN;
		break;
	case DLT_LINUX_SLL2:
		r->link_hdr = SLL2_HDR_LEN;
		break;
	case DLT_RAW:
	case DLT_IPV4:
		r->link_hdr = 0;
		break;
	default: {
		const char *name = pcap_datalink_val_to_name(r->linktype);

		snprintf(err, err_len, "%s: link type %s (%d) not supported; readable: Ethernet "
			 "(EN10MB), Linux cooked (LINUX_SLL, LINUX_SLL2: tcpdump -i any), raw IPv4",
			 path, name ? name : "unknown", r->linktype);
		pcap_close(p);
		return -1;
	}
	}
	if (r->linktype != DLT_EN10MB) {
		r->frame = malloc(ETH_HDR_LEN + 65536 + 262144);
		if (!r->frame) {
			snprintf(err, err_len, "%s: out of memory", path);
			pcap_close(p);
			return -1;
		}
	}
	r->handle = p;
	return 0;
}

/*
 * A record of another link type as an Ethernet frame: zero MAC addresses
 * and the ethertype the link header names (SLL, SLL2) or IPv4 (raw), then
 * the packet. 0 when the record is shorter than its link header.
 */
static int as_ethernet(struct pcap_reader *r, const uint8_t **frame, uint32_t *len)
{
	const uint8_t *p = *frame;
	uint16_t proto;

	if (*len < r->link_hdr)
		return 0;
	switch (r->linktype) {
	case DLT_LINUX_SLL:	/* type, ARPHRD, addr len, addr[8], protocol */
		proto = (uint16_t)(p[14] << 8 | p[15]);
		break;
	case DLT_LINUX_SLL2:	/* protocol, reserved, ifindex, ARPHRD, type, addr len, addr[8] */
		proto = (uint16_t)(p[0] << 8 | p[1]);
		break;
	default:		/* raw: the version nibble says */
		proto = *len && (p[0] >> 4) == 6 ? 0x86dd : 0x0800;
		break;
	}
	memset(r->frame, 0, 12);
	r->frame[12] = (uint8_t)(proto >> 8);
	r->frame[13] = (uint8_t)proto;
	memcpy(r->frame + ETH_HDR_LEN, p + r->link_hdr, *len - r->link_hdr);
	*len = *len - r->link_hdr + ETH_HDR_LEN;
	*frame = r->frame;
	return 1;
}

int pcap_reader_next(struct pcap_reader *r, const uint8_t **frame, uint32_t *len,
		     uint64_t *ts_ns, char *err, size_t err_len)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int rc = pcap_next_ex((pcap_t *)r->handle, &hdr, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(err, err_len, "read error after %llu records: %s",
			 (unsigned long long)r->packets, pcap_geterr((pcap_t *)r->handle));
		return -1;
	}
	r->packets++;
	*frame = data;
	*len = hdr->caplen;
	/* Opened with nanosecond precision: tv_usec holds nanoseconds. */
	*ts_ns = (uint64_t)hdr->ts.tv_sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec;
	if (r->frame && !as_ethernet(r, frame, len)) {
		/* Cut inside its link header: an empty frame, counted, so
		 * every tool still counts one frame per record. */
		r->short_link++;
		*frame = r->frame;
		*len = 0;
	}
	return 1;
}

void pcap_reader_close(struct pcap_reader *r)
{
	if (r->handle)
		pcap_close((pcap_t *)r->handle);
	r->handle = NULL;
	free(r->frame);
	r->frame = NULL;
}

int frame_udp_view(const uint8_t *frame, uint32_t len, struct udp_view *out)
{
	uint32_t off = 12, ihl, ip_len, udp_len;
	uint16_t ethertype;

	if (len < 14)
		return 0;
	ethertype = wire_be16(frame + off);
	off += 2;
	while (ethertype == 0x8100 || ethertype == 0x88a8) {
		if (len < off + 4)
			return 0;
		ethertype = wire_be16(frame + off + 2);
		off += 4;
	}
	if (ethertype != 0x0800 || len < off + 20)
		return 0;
	const uint8_t *ip = frame + off;

	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	ip_len = wire_be16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != 17 || ip_len < ihl + 8 ||
	    len < off + ip_len)
		return 0;
	/* A fragment (more-fragments flag or an offset) is not a whole datagram. */
	if (wire_be16(ip + 6) & 0x3fff)
		return 0;
	const uint8_t *udp = ip + ihl;

	udp_len = wire_be16(udp + 4);
	if (udp_len < 8 || udp_len > ip_len - ihl)
		return 0;
	out->src_ip = wire_be32(ip + 12);
	out->dst_ip = wire_be32(ip + 16);
	out->src_port = wire_be16(udp);
	out->dst_port = wire_be16(udp + 2);
	out->payload = udp + 8;
	out->len = udp_len - 8;
	return 1;
}

/* ---- writing ---------------------------------------------------------- */

#define PCAP_MAGIC_NSEC 0xa1b23c4du
#define WRITER_BUF_BYTES (1u << 20)

int pcap_writer_open(struct pcap_writer *w, const char *path, char *err, size_t err_len)
{
	memset(w, 0, sizeof(*w));
	w->f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
	if (!w->f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Not for stdout: the buffer is freed at close, stdout lives on. */
	w->buf = w->f == stdout ? NULL : malloc(WRITER_BUF_BYTES);
	if (w->buf)
		setvbuf(w->f, w->buf, _IOFBF, WRITER_BUF_BYTES);
	/* Global header, little-endian: magic, v2.4, thiszone, sigfigs,
	 * snaplen, linktype Ethernet. */
	const uint32_t global[6] = { PCAP_MAGIC_NSEC, 2u | 4u << 16, 0, 0, 65535, 1 };
	uint8_t head[sizeof(global)];

	for (int i = 0; i < 6; i++)
		wire_put_le32(head + 4 * i, global[i]);
	if (fwrite(head, 1, sizeof(head), w->f) != sizeof(head)) {
		snprintf(err, err_len, "%s: write failed: %s", path, strerror(errno));
		w->error = 1;
		return -1;
	}
	return 0;
}

/* RFC 1071 one's complement sum over the 20-byte IPv4 header. */
static uint16_t ipv4_header_checksum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += wire_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int pcap_writer_udp(struct pcap_writer *w, uint64_t ts_ns, uint32_t src_ip, uint16_t src_port,
		    uint32_t dst_ip, uint16_t dst_port, const uint8_t *payload, uint32_t len)
{
	uint8_t hdr[16 + 14 + 20 + 8];
	uint8_t *rec = hdr, *eth = hdr + 16, *ip = eth + 14, *udp = ip + 20;
	uint32_t frame_len = 14 + 20 + 8 + len;

	if (len > PCAP_WRITER_MAX_PAYLOAD || w->error)
		return -1;
	/* Record header: seconds, nanoseconds, captured and original length. */
	uint32_t sec = (uint32_t)(ts_ns / 1000000000ull), nsec = (uint32_t)(ts_ns % 1000000000ull);
	uint32_t le[4] = { sec, nsec, frame_len, frame_len };

	for (int i = 0; i < 4; i++)
		wire_put_le32(rec + 4 * i, le[i]);

	/* Ethernet: a multicast group maps to 01:00:5e + its low 23 bits. */
	if ((dst_ip >> 28) == 0xe) {
		eth[0] = 0x01, eth[1] = 0x00, eth[2] = 0x5e;
		eth[3] = (uint8_t)((dst_ip >> 16) & 0x7f);
		eth[4] = (uint8_t)(dst_ip >> 8);
		eth[5] = (uint8_t)dst_ip;
	} else {
		memcpy(eth, "\x02\x00\x00\x00\x00\x02", 6);
	}
	memcpy(eth + 6, "\x02\x00\x00\x00\x00\x01", 6); /* locally administered */
	wire_put_be16(eth + 12, 0x0800);

	ip[0] = 0x45;
	ip[1] = 0;
	wire_put_be16(ip + 2, (uint16_t)(20 + 8 + len));
	wire_put_be16(ip + 4, w->ip_id++);
	wire_put_be16(ip + 6, 0x4000); /* don't fragment */
	ip[8] = 32;	      /* TTL */
	ip[9] = 17;	      /* UDP */
	wire_put_be16(ip + 10, 0);
	wire_put_be32(ip + 12, src_ip);
	wire_put_be32(ip + 16, dst_ip);
	wire_put_be16(ip + 10, ipv4_header_checksum(ip));

	wire_put_be16(udp, src_port);
	wire_put_be16(udp + 2, dst_port);
	wire_put_be16(udp + 4, (uint16_t)(8 + len));
	wire_put_be16(udp + 6, 0); /* no checksum: allowed over IPv4 */

	if (fwrite(hdr, 1, sizeof(hdr), w->f) != sizeof(hdr) ||
	    (len && fwrite(payload, 1, len, w->f) != len)) {
		w->error = 1;
		return -1;
	}
	w->packets++;
	return 0;
}

int pcap_writer_close(struct pcap_writer *w, char *err, size_t err_len)
{
	int rc = w->error ? -1 : 0;

	if (w->f) {
		if (fflush(w->f) != 0)
			rc = -1;
		if (w->f != stdout && fclose(w->f) != 0)
			rc = -1;
		if (rc)
			snprintf(err, err_len, "write failed: %s", strerror(errno ? errno : EIO));
	}
	free(w->buf);
	w->f = NULL;
	w->buf = NULL;
	return rc;
}
