/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Packet sources: pcap file, Nasdaq BinaryFILE, live AF_PACKET ring.
 * See source.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "input/source.h"
#include "input/pcap_io.h"
#include "input/itch_file.h"

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int source_open(struct source *s, const struct source_ops *ops, const struct source_options *opt)
{
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	return ops->open(s, opt);
}

void source_close(struct source *s)
{
	if (s->ops && s->ops->close)
		s->ops->close(s);
	s->ops = NULL;
}

int source_find_line(const struct feed_engine *e, int protocol, int venue)
{
	uint32_t i;

	for (i = 0; i < e->line_count; i++)
		if (feed_line_in_use(&e->lines[i]) && e->lines[i].protocol == protocol &&
		    e->lines[i].venue == venue)
			return (int)i;
	return -1;
}

/* ---- pcap file ------------------------------------------------------------ */

struct pcap_src {
	struct pcap_reader rd;
	double speed;
	int no_flush_at_eof;
	/* pacing: a record read but not yet due */
	const uint8_t *held;
	uint32_t held_len;
	uint64_t held_ts;
	uint64_t first_ts, start_mono;
	uint64_t last_ts;	/* the last frame's capture time */
	int said_wait;
	uint64_t skip_idle_ns;	/* see source_options */
	uint64_t skipped_ns;	/* capture time skipped so far (--skip-idle) */
	int said_skip;
	/* The capture's trading day, [day_start, day_end) of its clock: the
	 * engine's, since the receive times are now's. */
	uint64_t day_start, day_end;
};

/*
 * A wait this long at --speed is said, once: a capture that idles for
 * hours (heartbeats long before the open) otherwise looks hung.
 */
#define PACE_WAIT_SAID_NS (5 * 1000000000ull)

static int pcap_src_open(struct source *s, const struct source_options *opt)
{
	struct pcap_src *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	if (pcap_reader_open(&p->rd, opt->path, s->err, sizeof(s->err)) < 0) {
		free(p);
		return -1;
	}
	p->speed = opt->speed;
	p->skip_idle_ns = opt->skip_idle_ns;
	p->no_flush_at_eof = opt->no_flush_at_eof;
	s->priv = p;
	return 0;
}

static void process_frame(struct source *s, struct feed_engine *e, const uint8_t *frame,
			  uint32_t len, uint64_t ts, struct wb_ring_producer *out)
{
	s->ctr.packets++;
	s->ctr.bytes += len;
	if (feed_process_frame(e, frame, len, ts, out) < 0) {
		s->ctr.unmapped++;
		unmapped_note(&s->unmapped, frame, len);
	}
}

/*
 * At the recorded pace the receive times are now's, so the feeds that give
 * time since midnight (ITCH, PITCH) would take the replay's day while the
 * ones with whole timestamps (XDP, CQS, UQDF) keep the capture's: the
 * engine takes the capture's day instead, again when the capture's clock
 * passes midnight. A capture without a wall clock has no day to give.
 */
static void pace_capture_day(struct pcap_src *p, struct feed_engine *e, uint64_t ts)
{
	uint64_t midnight;

	if (ts >= p->day_start && ts < p->day_end)
		return;
	midnight = feed_et_midnight_ns(ts);
	if (!midnight || feed_engine_set_trading_day_of(e, ts) < 0) {
		p->day_start = p->day_end = 0;
		return;
	}
	p->day_start = midnight;
	/* Noon of the next day is on the next day, whatever the clock change. */
	p->day_end = feed_et_midnight_ns(midnight + 36 * 3600 * 1000000000ull);
}

/* A frame read for pacing: where the replay's clock starts, the idle
 * stretch --skip-idle shortens, the capture's day. */
static void pace_new_frame(struct pcap_src *p, struct feed_engine *e, uint64_t ts)
{
	if (!p->first_ts) {
		p->first_ts = ts;
		p->start_mono = mono_ns();
	} else if (p->skip_idle_ns && ts > p->last_ts + p->skip_idle_ns) {
		uint64_t skip = ts - p->last_ts - p->skip_idle_ns;

		if (!p->said_skip) {
			p->said_skip = 1;
			fprintf(stderr, "%s: --skip-idle %g: the capture idles %.1f s before its next "
				"frame: replayed as %g s (every such stretch; said once)\n",
				program_invocation_short_name, (double)p->skip_idle_ns / 1e9,
				(double)(ts - p->last_ts) / 1e9, (double)p->skip_idle_ns / 1e9);
		}
		p->skipped_ns += skip;
	}
	p->last_ts = ts;
	pace_capture_day(p, e, ts);
}

static int pcap_src_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
			 unsigned budget)
{
	struct pcap_src *p = s->priv;
	unsigned done = 0;

	while (done < budget) {
		const uint8_t *frame;
		uint32_t len;
		uint64_t ts;
		int rc;

		if (p->held) {
			frame = p->held;
			len = p->held_len;
			ts = p->held_ts;
		} else {
			rc = pcap_reader_next(&p->rd, &frame, &len, &ts, s->err, sizeof(s->err));
			if (rc == 0 && done)
				return SOURCE_MORE;
			if (rc == 0) {
				/* Packets held behind a hole are decoded, the hole reported. */
				if (!p->no_flush_at_eof)
					feed_engine_flush(e, out);
				return SOURCE_EOF;
			}
			if (rc < 0)
				return SOURCE_ERROR;
		}
		if (p->speed > 0) {
			/* Recorded pace times speed: the record is due when the
			 * wall clock has advanced (ts - first) / speed. Packets
			 * then carry the time they were "received" now. */
			uint64_t due, now, elapsed, idle = p->held ? 0 : ts - p->last_ts;

			if (!p->held)
				pace_new_frame(p, e, ts);
			now = mono_ns();
			/* A frame older than the first (an unordered capture) is due at once. */
			elapsed = ts > p->first_ts + p->skipped_ns ? ts - p->first_ts - p->skipped_ns : 0;
			due = p->start_mono + (uint64_t)((double)elapsed / p->speed);
			if (now < due && !p->held && !p->said_wait && due - now > PACE_WAIT_SAID_NS) {
				p->said_wait = 1;
				fprintf(stderr, "%s: --speed %g: the capture's next frame comes %.1f s of its "
					"time after the last one: waiting %.0f s for it (the recorded pace; "
					"--skip-idle SECONDS shortens such waits; said once)\n",
					program_invocation_short_name, p->speed, (double)idle / 1e9,
					(double)(due - now) / 1e9);
			}
			if (now < due) {
				p->held = frame;
				p->held_len = len;
				p->held_ts = ts;
				if (due - now > 200000) { /* sleep in slices so a stop is noticed */
					struct timespec sl = { 0, 100000 };

					nanosleep(&sl, NULL);
				}
				return SOURCE_MORE;
			}
			p->held = NULL;
			ts = wall_ns();
		}
		process_frame(s, e, frame, len, ts, out);
		done++;
	}
	return SOURCE_MORE;
}

static void pcap_src_close(struct source *s)
{
	struct pcap_src *p = s->priv;

	if (!p)
		return;
	pcap_reader_close(&p->rd);
	free(p);
	s->priv = NULL;
}

const struct source_ops source_pcap_ops = {
	.name = "pcap",
	.open = pcap_src_open,
	.pump = pcap_src_pump,
	.close = pcap_src_close,
};

/* ---- Nasdaq BinaryFILE ---------------------------------------------------- */

struct itch_src {
	struct itch_file f;
	int line;
	int date[3];		/* the trading day to set at the first pump; 0s: none */
	uint64_t midnight_ns;	/* ET midnight of that day; 0: no day */
	uint64_t recv_ns;	/* the last packet's receive time */
	uint64_t next_seq;
	uint8_t pkt[ITCH_FILE_PACKET_MAX];
};

#define ITCH_SRC_RECV_NOTE "recv_ts: the exchange time of each packet's last message (a " \
	"BinaryFILE keeps no receive times)"

/*
 * A BinaryFILE gives times since midnight, not the day
 * (itch_file_trading_day): without one, exch_ts stays the time since
 * midnight, as wb-dump prints it. It keeps no receive times either: they
 * are the exchange's (ITCH_SRC_RECV_NOTE), so that two runs over one file
 * give the same bytes.
 */
static void itch_src_trading_day(struct itch_src *p, const struct source_options *opt,
				 struct source *s)
{
	if (itch_file_trading_day(opt->path, opt->date, p->date, ITCH_SRC_RECV_NOTE))
		p->midnight_ns = feed_et_midnight_of_date(p->date[0], p->date[1], p->date[2]);
	s->recv_ts_note = ITCH_SRC_RECV_NOTE;
}

static int itch_src_open(struct source *s, const struct source_options *opt)
{
	struct itch_src *p;
	int rc;

	if (opt->line < 0) {
		snprintf(s->err, sizeof(s->err),
			 "--itch-file needs an 'itch nasdaq' line in feeds.conf to decode the messages as");
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	rc = itch_file_open_read(&p->f, opt->path, s->err, sizeof(s->err));
	if (rc < 0) {
		free(p);
		return rc == ITCH_FILE_NOT_BINARYFILE ? SOURCE_EUSAGE : -1;
	}
	p->line = opt->line;
	p->next_seq = 1;
	s->priv = p;
	itch_src_trading_day(p, opt, s);
	return 0;
}

static int itch_src_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
			 unsigned budget)
{
	struct itch_src *p = s->priv;
	unsigned done;

	if (p->date[0]) {	/* once, before the first message: the engine is the pump's */
		feed_engine_set_trading_date(e, p->date[0], p->date[1], p->date[2]);
		p->date[0] = 0;
	}
	for (done = 0; done < budget; done++) {
		int len = itch_file_next_packet(&p->f, p->pkt, &p->next_seq, s->err, sizeof(s->err));
		uint64_t recv;

		if (len < 0)
			return SOURCE_ERROR;
		if (len == 0 && done)
			return SOURCE_MORE;
		if (len == 0) {
			/* Packets held behind a hole are decoded, the hole reported. */
			feed_engine_flush(e, out);
			return SOURCE_EOF;
		}
		s->ctr.packets++;
		s->ctr.bytes += (uint64_t)len;
		/* Received once its last message was sent (the latest exchange time
		 * of its messages); never before the packet before it. */
		recv = p->midnight_ns + p->f.packet_time_ns;
		if (recv > p->recv_ns)
			p->recv_ns = recv;
		feed_process_payload(e, p->line, p->pkt, (uint32_t)len, p->recv_ns, out);
	}
	return SOURCE_MORE;
}

static void itch_src_close(struct source *s)
{
	struct itch_src *p = s->priv;
	char err[ITCH_FILE_ERR_LEN];

	if (!p)
		return;
	itch_file_close(&p->f, err, sizeof(err));
	free(p);
	s->priv = NULL;
}

const struct source_ops source_itch_file_ops = {
	.name = "itch-file",
	.open = itch_src_open,
	.pump = itch_src_pump,
	.close = itch_src_close,
};

/* ---- live AF_PACKET (TPACKET_V2) ------------------------------------------ */

/*
 * A ring of fixed frames, each handed to user space the moment the kernel
 * fills it. TPACKET_V3's blocks batch better but hold a part-full block
 * until its retire timer (1 ms at the least) fires: at the rates of a real
 * feed line that timer, not wirebook, set the median latency.
 */
#define AFP_FRAME_SIZE 2048u
#define AFP_BLOCK_SIZE (1u << 18)
#define AFP_BLOCK_NR 64u
#define AFP_FRAME_NR (AFP_BLOCK_SIZE / AFP_FRAME_SIZE * AFP_BLOCK_NR)
#define AFP_POLL_MS 1
/*
 * After the last frame, spin this long on the ring before blocking in
 * poll(): the next frame of a burst is read without a wakeup. A quiet
 * ring (a poll timed out) is polled at once until the next frame.
 */
#define AFP_SPIN_NS 20000u

struct afp_src {
	int fd;
	int mcast_fd;			/* holds the IGMP joins of the feed groups */
	int busy_poll;
	uint8_t *map;
	size_t map_len;
	unsigned frame;			/* next frame to read */
	int quiet;			/* a poll found nothing since the last frame */
};

/* Join every multicast group of the feed map on the interface, so the
 * switch forwards them; a UDP socket holds the memberships. */
static void afp_join_groups(struct afp_src *p, const struct feed_engine *e, int ifindex)
{
	uint32_t i;

	p->mcast_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (p->mcast_fd < 0)
		return;
	for (i = 0; i < e->line_count; i++) {
		struct ip_mreqn m;

		if (!e->lines[i].ip || (e->lines[i].ip >> 28) != 0xe)
			continue;
		memset(&m, 0, sizeof(m));
		m.imr_multiaddr.s_addr = htonl(e->lines[i].ip);
		m.imr_ifindex = ifindex;
		setsockopt(p->mcast_fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	}
}

static int afp_open(struct source *s, const struct source_options *opt)
{
	struct tpacket_req req;
	struct sockaddr_ll sll;
	struct afp_src *p;
	int version = TPACKET_V2, ifindex;

	ifindex = (int)if_nametoindex(opt->iface);
	if (!ifindex) {
		snprintf(s->err, sizeof(s->err), "interface %s: %s", opt->iface, strerror(errno));
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	p->mcast_fd = -1;
	p->busy_poll = opt->busy_poll;
	/* Protocol 0: capture nothing until bind() names the interface and
	 * the protocol. A socket made with ETH_P_ALL captures every interface
	 * at once, and the bind that narrows it drops what arrives meanwhile:
	 * a restarted wirebookd saw a sequence gap in its first milliseconds. */
	p->fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (p->fd < 0) {
		snprintf(s->err, sizeof(s->err), "AF_PACKET socket: %s%s", strerror(errno),
			 errno == EPERM ? " (needs root or CAP_NET_RAW)" : "");
		goto fail;
	}
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0) {
		snprintf(s->err, sizeof(s->err), "TPACKET_V2: %s", strerror(errno));
		goto fail;
	}
	memset(&req, 0, sizeof(req));
	req.tp_block_size = AFP_BLOCK_SIZE;
	req.tp_block_nr = AFP_BLOCK_NR;
	req.tp_frame_size = AFP_FRAME_SIZE;
	req.tp_frame_nr = AFP_FRAME_NR;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		snprintf(s->err, sizeof(s->err), "PACKET_RX_RING: %s", strerror(errno));
		goto fail;
	}
	p->map_len = (size_t)AFP_BLOCK_SIZE * AFP_BLOCK_NR;
	p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, p->fd, 0);
	if (p->map == MAP_FAILED)
		p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		snprintf(s->err, sizeof(s->err), "mmap of the packet ring: %s", strerror(errno));
		goto fail;
	}
	/* Warm before ready: map every frame's page now (MAP_LOCKED did where
	 * it was allowed), not as the first packets land on them. */
	for (size_t off = 0; off < p->map_len; off += AFP_FRAME_SIZE) {
		const struct tpacket2_hdr *h = (const struct tpacket2_hdr *)(p->map + off);

		(void)__atomic_load_n(&h->tp_status, __ATOMIC_RELAXED);
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(s->err, sizeof(s->err), "bind to %s: %s", opt->iface, strerror(errno));
		goto fail;
	}
	if (opt->busy_poll) {
		int usecs = 50;

		setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs));
	}
	if (opt->engine)
		afp_join_groups(p, opt->engine, ifindex);
	s->priv = p;
	return 0;
fail:
	if (p->map)
		munmap(p->map, p->map_len);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
	return -1;
}

static struct tpacket2_hdr *afp_frame(struct afp_src *p)
{
	return (struct tpacket2_hdr *)(p->map + (size_t)p->frame * AFP_FRAME_SIZE);
}

static int afp_frame_ready(struct afp_src *p)
{
	return __atomic_load_n(&afp_frame(p)->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER;
}

/* Whether a frame landed within AFP_SPIN_NS. */
static int afp_spin_for_frame(struct afp_src *p)
{
	uint64_t until = mono_ns() + AFP_SPIN_NS;

	do {
		for (int i = 0; i < 64; i++)
			if (afp_frame_ready(p))
				return 1;
	} while (mono_ns() < until);
	return 0;
}

static int afp_pump(struct source *s, struct feed_engine *e, struct wb_ring_producer *out,
		    unsigned budget)
{
	struct afp_src *p = s->priv;
	unsigned done = 0;

	if (!afp_frame_ready(p)) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN | POLLERR };

		if (p->busy_poll) {
			feed_engine_poll(e, wall_ns(), out);
			return SOURCE_IDLE;
		}
		/* A bounded spin, then sleep in the kernel until a frame lands,
		 * so it is handled the moment it does. The caller naps on no
		 * timer on top (SOURCE_WAITED). */
		if ((p->quiet || !afp_spin_for_frame(p)) &&
		    (poll(&pfd, 1, AFP_POLL_MS) <= 0 || !afp_frame_ready(p))) {
			p->quiet = 1;
			/* Silence: a hole nothing can fill any more is a gap now. */
			feed_engine_poll(e, wall_ns(), out);
			return SOURCE_WAITED;
		}
	}
	p->quiet = 0;
	while (done < budget && afp_frame_ready(p)) {
		struct tpacket2_hdr *h = afp_frame(p);
		const struct sockaddr_ll *ll =
			(const struct sockaddr_ll *)((uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		uint64_t ts = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;

		/* Our own transmissions (lo, or a replay on this host) come
		 * back as PACKET_OUTGOING copies: not received traffic. */
		if (ll->sll_pkttype != PACKET_OUTGOING) {
			if (h->tp_snaplen < h->tp_len)
				s->ctr.truncated++;
			process_frame(s, e, (const uint8_t *)h + h->tp_mac, h->tp_snaplen, ts, out);
		}
		/* The frame goes back to the kernel only after it was decoded:
		 * the events hold copies, not pointers. */
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		p->frame = (p->frame + 1) % AFP_FRAME_NR;
		done++;
	}
	if ((s->ctr.packets & 0x3ff) < done) {
		struct tpacket_stats st;
		socklen_t sl = sizeof(st);

		if (getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl) == 0)
			s->ctr.kernel_drops += st.tp_drops; /* the kernel resets them on read */
	}
	return SOURCE_MORE;
}

static void afp_close(struct source *s)
{
	struct afp_src *p = s->priv;

	if (!p)
		return;
	munmap(p->map, p->map_len);
	close(p->fd);
	if (p->mcast_fd >= 0)
		close(p->mcast_fd);
	free(p);
	s->priv = NULL;
}

const struct source_ops source_afpacket_ops = {
	.name = "afpacket",
	.open = afp_open,
	.pump = afp_pump,
	.close = afp_close,
};
