/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The control ABI of the kernel module: ioctls on /dev/wirebook.
 *
 * Versioned: WB_IOC_VERSION returns WB_CTL_VERSION; a tool refuses a
 * module whose control version differs from the one it was built with.
 * Every struct has fixed-width fields only, explicit padding and reserved
 * words that must be zero (the module rejects nonzero reserved fields, so
 * they can gain a meaning later without breaking old tools).
 *
 * Mapping the rings (see ring.h for the layout of one ring):
 *   WB_IOC_RING_INFO gives ring_count, the geometry and mmap_stride. Ring i
 *   lives at mmap offset i * mmap_stride. Within a ring the producer page
 *   and the slots may only be mapped read-only; the consumer page (offset
 *   WB_RING_PAGE) may be mapped read-write (file opened O_RDWR). A mapping
 *   may not span two rings. The usual way: map the whole ring PROT_READ,
 *   then map the consumer page PROT_READ|PROT_WRITE with MAP_FIXED over it.
 *
 * Ordering across rings: the module keeps one ring per CPU, and a last one
 * for the events its control path makes (recovered packets). It decodes a
 * venue's packets under a lock of that venue's (a feed-map venue: a SIP's
 * lines are one, whatever venues their quotes name), and stamps and
 * publishes each packet's events under it: recv_ts is strictly increasing
 * per venue, in that venue's decode order, and never goes back within a
 * ring. A reader merging the rings by recv_ts (wb_events_peek) sees every
 * venue's events in the order the module decoded them. Across venues, CPUs
 * decoding at once may publish out of recv_ts order: the merge's order of
 * two venues' events is then not their decode order, which no book needs.
 *
 * Ioctls that change state (feed map, subscriptions, stats reset, gap
 * recovery) need the device opened for writing.
 *
 * Gap recovery (WB_IOC_REC_*): the module holds no recovery sessions; a
 * user-space client does (wirebookd --kernel --recovery). It puts a stream
 * group in recovery mode (REC_ENABLE), reads which streams wait for what
 * (REC_LIST) and hands in what it got: recovered packets (REC_PACKET),
 * ranges that will not come (REC_LOST), snapshots (REC_SNAPSHOT). The
 * events these produce come out of the rings in sequence with the rest.
 * Recovery mode belongs to the file that enabled it: when that file is
 * closed (the client exits or dies), its groups go back to reporting gaps,
 * and what they still held is decoded behind a GAP.
 */
#ifndef WIREBOOK_IOCTL_H
#define WIREBOOK_IOCTL_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <stdint.h>
#include <sys/ioctl.h>
#endif

#define WB_DEVICE_PATH "/dev/wirebook"
#define WB_CTL_VERSION 3u	/* 3: gap recovery (WB_IOC_REC_*, WB_IOC_RECOVERY_LIST) */
#define WB_IOC_MAGIC 0xB7

struct wb_ioc_version {
	uint32_t ctl_version;	/* WB_CTL_VERSION of the module */
	uint32_t abi_version;	/* WB_ABI_VERSION of its events and rings */
	uint32_t ring_count;
	uint32_t reserved[5];
};

struct wb_ioc_ring_info {
	uint32_t ring_count;	/* one ring per possible CPU, and the control path's */
	uint32_t slot_count;	/* per ring, a power of two */
	uint32_t slot_size;	/* sizeof(struct wb_event) */
	uint32_t page_size;	/* WB_RING_PAGE: the protection granule */
	uint64_t ring_bytes;	/* wb_ring_bytes(slot_count) */
	uint64_t mmap_stride;	/* ring i is at mmap offset i * mmap_stride */
	uint64_t reserved[4];
};

/* One feed-map entry. protocol and venue take enum feed_protocol and enum
 * wb_venue values (names: feed_protocol_name / feed_venue_name). Lines of
 * one (venue, channel) are arbitrated as one sequence stream. */
struct wb_ioc_feed {
	uint32_t ip;		/* destination IPv4, host byte order */
	uint16_t port;		/* destination UDP port */
	uint8_t protocol;
	uint8_t venue;
	char name[8];		/* line name, NUL-terminated (1..7 characters) */
	int32_t line;		/* out: the feed-map index (wb_event.line) */
	uint16_t channel;	/* 0: the venue's default stream */
	uint16_t reserved;	/* must be zero */
};

/* A symbol: subscribe, unsubscribe, or one entry of the list. */
struct wb_ioc_symbol {
	char ticker[12];	/* NUL-terminated, 1..8 characters, or "*" for all */
	uint32_t instrument;	/* out: the instrument id (0 for "*") */
};

/*
 * A list request: the module fills at most 'capacity' entries of the array
 * at user address 'entries' and sets 'count' to how many exist; call again
 * with a larger array when count > capacity.
 */
struct wb_ioc_list {
	uint32_t capacity;
	uint32_t count;		/* out */
	uint64_t entries;	/* user pointer */
};

#define WB_IOC_ERROR_SLOTS 16	/* errors[i] is enum feed_error i */

/* Per feed line; mirrors struct feed_counters (see lib/feed/feed.h). */
struct wb_ioc_counters {
	uint64_t packets;
	uint64_t bytes;
	uint64_t messages;
	uint64_t events;
	uint64_t filtered;
	uint64_t ignored;
	uint64_t heartbeats;
	uint64_t gaps;
	uint64_t gap_messages;
	uint64_t duplicates;
	uint64_t duplicate_messages;
	uint64_t session_changes;
	uint64_t end_of_session;
	uint64_t ring_drops;
	uint64_t order_filter_full;
	uint64_t gso_packets;
	uint64_t held;
	uint64_t hold_full;
	uint64_t stale_session;
	uint64_t errors[WB_IOC_ERROR_SLOTS];
};

struct wb_ioc_line_stats {
	struct wb_ioc_feed feed;
	struct wb_ioc_counters counters;
};

/* What the hook saw, summed over CPUs and devices. */
struct wb_ioc_hook_stats {
	uint64_t feed_frames;	/* frames to a mapped UDP port handed to the engine */
	uint64_t consumed;	/* feed frames kept from the IP stack */
	uint64_t gso_frames;	/* GSO/GRO super-packets to a mapped port */
	uint64_t gso_segments;	/* segments decoded out of them */
	uint64_t gso_undecoded;	/* super-packets that could not be split: passed, counted */
	uint64_t oversize;	/* frames larger than the copy buffer: not decoded */
	uint64_t copy_errors;	/* skb data could not be read */
	uint64_t hooked_devices; /* devices hooked now (rx_handler or tap) */
	uint64_t tap_devices;	/* of which through the packet-tap fallback */
	uint64_t hook_failures;	/* devices that could not be hooked */
	uint64_t ring_published; /* events published, all rings */
	uint64_t ring_dropped;	/* events dropped on full rings, all rings */
	uint64_t ring_wakeups;	/* reader wakeups */
	uint64_t lock_waits;	/* feed frames whose CPU waited for their venue's lock */
	uint64_t reserved[2];
};

struct wb_ioc_stats {
	uint32_t capacity;	/* wb_ioc_line_stats entries at 'lines' */
	uint32_t count;		/* out: feed lines that exist */
	uint64_t lines;		/* user pointer */
	struct wb_ioc_hook_stats hook; /* out */
};

/*
 * The trading day of feeds that give time since midnight (ITCH, PITCH),
 * for replays of another day's capture; all zero: take it from the receive
 * clock again (the default).
 */
struct wb_ioc_date {
	uint16_t year;
	uint8_t month;
	uint8_t day;
	uint32_t reserved[3];	/* must be zero */
};

/*
 * Gap recovery of one sequence stream (a feed map's venue and channel; a
 * PITCH unit is a stream of its own), for WB_IOC_RECOVERY_LIST (a struct
 * wb_ioc_list of these): the streams of the (venue, channel) groups in
 * recovery mode. Counts since the engine started; fill times of the
 * stream's group, receive clock, upper bounds of log-linear buckets.
 */
struct wb_ioc_recovery {
	uint8_t venue;
	uint8_t unit;		/* PITCH matching unit, else 0 */
	uint16_t channel;
	uint8_t state;		/* 0 in sequence, 1 filling a gap, 2 taking a snapshot */
	uint8_t protocol;
	uint16_t line;		/* a line of the stream's group */
	uint32_t held;		/* packets held back behind the hole now */
	uint32_t reserved;
	uint64_t since;		/* receive time the current recovery began; 0 in sequence */
	uint64_t gaps;		/* recoveries begun (holes, late joins) */
	uint64_t filled;	/* of them, ended with every message */
	uint64_t unrecoverable;	/* ended with messages lost */
	uint64_t messages;	/* messages recovered */
	uint64_t lost;		/* messages given up */
	uint64_t snapshots;	/* snapshots applied */
	uint64_t fills;		/* fill times measured (the group's) */
	uint64_t fill_p50_ns;
	uint64_t fill_p99_ns;
	uint64_t fill_max_ns;
	uint64_t reserved2[2];
};

/* WB_IOC_REC_ENABLE: the group of (venue, channel) into recovery mode. */
struct wb_ioc_rec_enable {
	uint8_t venue;		/* enum wb_venue, or a SIP source */
	uint8_t reserved0;	/* must be zero */
	uint16_t channel;	/* 0: the venue's default stream */
	uint32_t slots;		/* recovery buffer, packets (0: the engine's default) */
	uint32_t reserved[2];	/* must be zero */
};

/* One stream's recovery: struct feed_recovery_stream (lib/feed/feed.h). */
struct wb_ioc_rec_stream {
	uint8_t venue;
	uint8_t protocol;
	uint8_t unit;
	uint8_t state;		/* 0 in sequence, 1 a hole is being filled, 2 a snapshot */
	uint16_t channel;
	uint16_t line;		/* a line of the stream's group: names it in REC_PACKET etc. */
	uint32_t episode;	/* bumped by every recovery of the stream */
	uint32_t held;		/* packets buffered */
	uint64_t next_seq;	/* next expected sequence (0: not started) */
	uint64_t missing_first;	/* state 1: ask for [first, first + count) now */
	uint64_t missing_count;
	uint64_t rec_first;	/* the recovery's range as announced (end 0: a snapshot) */
	uint64_t rec_end;
	uint64_t since;		/* recv_ts the recovery began */
	char session[10];	/* MoldUDP64 session, when has_session */
	uint8_t has_session;
	uint8_t reserved[5];
	uint64_t gaps, filled, unrecoverable, messages, lost, snapshots; /* per stream, ever */
};

/*
 * WB_IOC_REC_LIST: streams with a recovery in progress (all: every started
 * stream of a group in recovery mode), as struct wb_ioc_list does it.
 * changes says whether anything moved since the last call (it is bumped
 * whenever a recovery begins, moves or ends).
 */
struct wb_ioc_rec_list {
	uint32_t capacity;
	uint32_t count;		/* out */
	uint64_t entries;	/* user pointer to struct wb_ioc_rec_stream[capacity] */
	uint32_t all;		/* 0 or 1 */
	uint32_t changes;	/* out */
	uint32_t reserved[2];	/* must be zero */
};

#define WB_IOC_REC_MAX_PAYLOAD 65535u

/* WB_IOC_REC_PACKET: a recovered packet (a re-request reply, a gap response) in the line's framing. */
struct wb_ioc_rec_packet {
	uint16_t line;		/* a line of the stream's group (wb_ioc_rec_stream.line) */
	uint16_t reserved0;	/* must be zero */
	uint32_t len;		/* 1..WB_IOC_REC_MAX_PAYLOAD */
	uint64_t data;		/* user pointer to the UDP payload */
	uint64_t reserved[2];	/* must be zero */
};

/* WB_IOC_REC_LOST: messages [first, first + count) of the stream will not come. */
struct wb_ioc_rec_lost {
	uint16_t line;
	uint8_t unit;
	uint8_t reserved0;	/* must be zero */
	uint32_t reserved1;	/* must be zero */
	uint64_t first;
	uint64_t count;
	uint64_t reserved[2];	/* must be zero */
};

/* WB_IOC_REC_SNAPSHOT: one step of a snapshot (feed_snapshot_* in lib/feed/feed.h). */
enum wb_ioc_snapshot_op {
	WB_SNAPSHOT_BEGIN = 1,	/* clear the stream's books, buffer real time */
	WB_SNAPSHOT_PACKET = 2,	/* snapshot messages (data, len) in the protocol's framing */
	WB_SNAPSHOT_END = 3,	/* the snapshot holds every message before next_seq */
	WB_SNAPSHOT_ABORT = 4,	/* no snapshot will come: a GAP */
};

struct wb_ioc_rec_snapshot {
	uint16_t line;
	uint8_t unit;
	uint8_t op;		/* enum wb_ioc_snapshot_op */
	uint32_t len;		/* WB_SNAPSHOT_PACKET: 1..WB_IOC_REC_MAX_PAYLOAD; else 0 */
	uint64_t data;		/* WB_SNAPSHOT_PACKET: user pointer; else 0 */
	uint64_t next_seq;	/* WB_SNAPSHOT_END; else 0 */
	uint64_t reserved[2];	/* must be zero */
};

#define WB_IOC_VERSION		_IOR(WB_IOC_MAGIC, 0, struct wb_ioc_version)
#define WB_IOC_RING_INFO	_IOR(WB_IOC_MAGIC, 1, struct wb_ioc_ring_info)
#define WB_IOC_FEED_ADD		_IOWR(WB_IOC_MAGIC, 2, struct wb_ioc_feed)
#define WB_IOC_FEED_DEL		_IOW(WB_IOC_MAGIC, 3, struct wb_ioc_feed)
#define WB_IOC_FEED_LIST	_IOWR(WB_IOC_MAGIC, 4, struct wb_ioc_list)
#define WB_IOC_SUB_ADD		_IOWR(WB_IOC_MAGIC, 5, struct wb_ioc_symbol)
#define WB_IOC_SUB_DEL		_IOW(WB_IOC_MAGIC, 6, struct wb_ioc_symbol)
#define WB_IOC_SUB_LIST		_IOWR(WB_IOC_MAGIC, 7, struct wb_ioc_list)
#define WB_IOC_STATS		_IOWR(WB_IOC_MAGIC, 8, struct wb_ioc_stats)
#define WB_IOC_STATS_RESET	_IO(WB_IOC_MAGIC, 9)
#define WB_IOC_TRADING_DATE	_IOW(WB_IOC_MAGIC, 10, struct wb_ioc_date)
#define WB_IOC_REC_ENABLE	_IOW(WB_IOC_MAGIC, 11, struct wb_ioc_rec_enable)
#define WB_IOC_REC_LIST		_IOWR(WB_IOC_MAGIC, 12, struct wb_ioc_rec_list)
#define WB_IOC_REC_PACKET	_IOW(WB_IOC_MAGIC, 13, struct wb_ioc_rec_packet)
#define WB_IOC_REC_LOST		_IOW(WB_IOC_MAGIC, 14, struct wb_ioc_rec_lost)
#define WB_IOC_REC_SNAPSHOT	_IOW(WB_IOC_MAGIC, 15, struct wb_ioc_rec_snapshot)
/* wirebookd's control socket; the module answers ENOTTY (its engine has no
 * recovery client: recovery lives in user space) */
#define WB_IOC_RECOVERY_LIST	_IOWR(WB_IOC_MAGIC, 16, struct wb_ioc_list)

#endif /* WIREBOOK_IOCTL_H */
