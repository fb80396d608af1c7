// SPDX-License-Identifier: GPL-2.0
/*
 * The receive hook: an rx_handler on each configured interface (or a
 * packet tap when the rx_handler slot is taken and tap_fallback is set),
 * kept in step with device registration and renames by a netdevice
 * notifier. Frames are handed whole to the engine, which owns every
 * IPv4/UDP/feed decision: it routes a frame to its line and venue without
 * a lock (feed_route_frame), and decodes it under that venue's lock
 * (feed_process_route). This file only prefilters on the UDP destination
 * port (lock-free), copies non-linear frames and takes the venue's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_ether.h>
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/skbuff.h>
#include <linux/rtnetlink.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/version.h>
#include <net/net_namespace.h>
#include <net/ip.h>

#include "wb.h"

/*
 * A packet held behind a hole waits for the other line at most the
 * engine's hold time; when the stream then goes quiet, nothing else would
 * release it. This timer does, as feed_engine_poll() does for the
 * user-space producers: armed while a venue has a hole, every tick.
 */
static struct timer_list wb_hole_timer;
static bool wb_hole_timer_stopping;

static void wb_hole_timer_arm(void)
{
	if (!READ_ONCE(wb_hole_timer_stopping) && !timer_pending(&wb_hole_timer))
		mod_timer(&wb_hole_timer, jiffies + 1);
}

/* Each venue with a hole, under its lock in turn (not counted as a frame's wait). */
static void wb_hole_timer_fire(struct timer_list *t)
{
	struct wb_ring *ring = &wb.rings[smp_processor_id()];
	bool wake = false, holes = false;
	int v;

	wb_for_each_venue_id(v) {
		/* A hint: a hole opened after this read arms the timer again. */
		if (!feed_venue_holes(wb.engine, v))
			continue;
		wb_venue_lock_rx(v, NULL);
		feed_venue_poll(wb.engine, v, wb_next_recv_ts(v, ring), &ring->prod);
		if (wb_ring_producer_publish(&ring->prod))
			wake = true;
		if (feed_venue_holes(wb.engine, v))
			holes = true;
		wb_venue_unlock_rx(v);
	}
	if (wake)
		wake_up_interruptible(&wb.readers);
	if (holes)
		wb_hole_timer_arm();
}

/*
 * Route a frame (or, frame NULL, an address) to its line and take its
 * venue's lock. The route is found without a lock: when the feed map
 * changed before the lock was taken, it is found again. Returns 0 with the
 * lock held, or -1: no feed line.
 */
static int wb_route_lock(struct feed_route *r, const u8 *frame, u32 len, u32 ip, u16 port,
			 struct wb_hook_pcpu *stats)
{
	int *hint = &this_cpu_ptr(wb.cpu)->line_hint;
	int line;

	for (;;) {
		if (frame)
			line = feed_route_frame(wb.engine, frame, len, hint, r);
		else
			line = feed_route_addr(wb.engine, ip, port, hint, r);
		if (line < 0)
			return -1;
		wb_venue_lock_rx(r->venue, stats);
		if (likely(feed_route_current(wb.engine, r)))
			return 0;
		wb_venue_unlock_rx(r->venue);
	}
}

/*
 * The frame's events are in the ring: publish them before the venue's lock
 * goes (a reader merging the rings must never see a venue's later event
 * first), then wake the readers and keep the hole timer going.
 */
static void wb_route_publish_unlock(const struct feed_route *r, struct wb_ring *ring,
				    struct wb_hook_pcpu *stats)
{
	bool wake = wb_ring_producer_publish(&ring->prod);
	bool holes = feed_venue_holes(wb.engine, r->venue) != 0;

	wb_venue_unlock_rx(r->venue);
	if (wake)
		wake_up_interruptible(&wb.readers);
	if (unlikely(holes))
		wb_hole_timer_arm();
	stats->feed_frames++;
}

/* One frame, contiguous: decoded under its venue's lock. */
static bool wb_receive_frame(const u8 *frame, u32 len, struct wb_hook_pcpu *stats)
{
	struct wb_ring *ring = &wb.rings[smp_processor_id()];
	struct feed_route r;

	if (wb_route_lock(&r, frame, len, 0, 0, stats) < 0)
		return false;
	feed_process_route(wb.engine, &r, wb_next_recv_ts(r.venue, ring), &ring->prod);
	wb_route_publish_unlock(&r, ring, stats);
	return true;
}

/* Can a GSO super-packet be split back into its datagrams? */
static bool wb_gso_splittable(const struct skb_shared_info *si, unsigned int hdr)
{
	return (si->gso_type & SKB_GSO_UDP_L4) && !(si->gso_type & SKB_GSO_FRAGLIST) &&
	       si->gso_size && si->gso_size <= wb_scratch_bytes() - ETH_HLEN - hdr;
}

/*
 * Split a super-packet of route's line into frames with their own lengths
 * in buf (its IP/UDP header already there) and decode them. Caller holds
 * the venue's lock (a rare path: the copies are made under it).
 */
static void wb_decode_gso(struct sk_buff *skb, u8 *buf, unsigned int ihl,
			  const struct feed_route *route, u64 recv_ts, struct wb_ring_producer *prod)
{
	struct wb_hook_pcpu *stats = this_cpu_ptr(wb.pcpu);
	unsigned int hdr = ihl + sizeof(struct udphdr), off, seg;
	unsigned int gso_size = skb_shinfo(skb)->gso_size;
	struct iphdr *iph = (struct iphdr *)(buf + ETH_HLEN);
	struct udphdr *uh = (struct udphdr *)(buf + ETH_HLEN + ihl);
	int *hint = &this_cpu_ptr(wb.cpu)->line_hint;
	struct feed_route r;

	memset(buf, 0, ETH_HLEN);
	buf[12] = ETH_P_IP >> 8;
	buf[13] = ETH_P_IP & 0xff;
	for (off = hdr; off < skb->len; off += seg) {
		seg = min(gso_size, skb->len - off);
		if (skb_copy_bits(skb, off, buf + ETH_HLEN + hdr, seg)) {
			stats->copy_errors++;
			break;
		}
		iph->tot_len = htons(hdr + seg);
		iph->frag_off &= htons(IP_DF);
		uh->len = htons(sizeof(*uh) + seg);
		/* The map cannot change under the lock: the same line. */
		if (feed_route_frame(wb.engine, buf, ETH_HLEN + hdr + seg, hint, &r) == route->line)
			feed_process_route(wb.engine, &r, recv_ts, prod);
		stats->gso_segments++;
	}
}

/*
 * A GSO/GRO super-packet: UDP GRO (SKB_GSO_UDP_L4) concatenates datagrams
 * of gso_size bytes behind one IP/UDP header. Split it back into frames
 * with their own lengths, so the engine never decodes two datagrams as
 * one. Anything else (fraglist GRO, other GSO types) is counted and
 * passed on undecoded: the feed sees a sequence gap, never a bad decode.
 */
static bool wb_receive_gso(struct sk_buff *skb, unsigned int ihl, struct wb_hook_pcpu *stats)
{
	struct wb_ring *ring = &wb.rings[smp_processor_id()];
	unsigned int hdr = ihl + sizeof(struct udphdr);
	u8 *buf = this_cpu_read(wb.cpu->scratch);
	struct iphdr *iph = (struct iphdr *)(buf + ETH_HLEN);
	struct udphdr *uh = (struct udphdr *)(buf + ETH_HLEN + ihl);
	struct feed_route r;

	stats->gso_frames++;
	if (skb_copy_bits(skb, 0, iph, hdr)) {
		stats->copy_errors++;
		return false;
	}
	if (wb_route_lock(&r, NULL, 0, ntohl(iph->daddr), ntohs(uh->dest), stats) < 0)
		return false;
	/* Counted on its line (the map decides whether it is a feed's). */
	wb.engine->lines[r.line].counters.gso_packets++;
	if (unlikely(!wb_gso_splittable(skb_shinfo(skb), hdr))) {
		wb_venue_unlock_rx(r.venue);
		stats->gso_undecoded++;
		pr_warn_ratelimited("undecodable GSO super-packet (type %#x) to a feed on %s: "
				    "turn GRO off on the device (ethtool -K %s gro off)\n",
				    skb_shinfo(skb)->gso_type, skb->dev->name, skb->dev->name);
		return false;
	}
	wb_decode_gso(skb, buf, ihl, &r, wb_next_recv_ts(r.venue, ring), &ring->prod);
	wb_route_publish_unlock(&r, ring, stats);
	return true;
}

/*
 * Hand one received frame to the engine if its UDP destination port is in
 * the feed map. Returns true when the engine claimed it (a feed line).
 * Runs in softirq context; never sleeps.
 */
static bool wb_receive(struct sk_buff *skb)
{
	struct wb_hook_pcpu *stats;
	struct iphdr _iph;
	const struct iphdr *iph;
	struct udphdr _uh;
	const struct udphdr *uh;
	unsigned int ihl;
	u8 *buf;

	if (skb->protocol != htons(ETH_P_IP) || skb->pkt_type == PACKET_LOOPBACK ||
	    skb->pkt_type == PACKET_OUTGOING)
		return false;
	iph = skb_header_pointer(skb, 0, sizeof(_iph), &_iph);
	if (!iph || iph->protocol != IPPROTO_UDP || iph->ihl < 5)
		return false;
	/* A later fragment carries no UDP header: never a feed packet's start. */
	if (iph->frag_off & htons(IP_OFFSET))
		return false;
	ihl = iph->ihl * 4;
	uh = skb_header_pointer(skb, ihl, sizeof(_uh), &_uh);
	if (!uh || !test_bit(ntohs(uh->dest), wb.port_map))
		return false;

	stats = this_cpu_ptr(wb.pcpu);
	if (unlikely(skb_is_gso(skb)))
		return wb_receive_gso(skb, ihl, stats);
	/* The common case: the frame is contiguous in the head. */
	if (!skb_is_nonlinear(skb) && skb_mac_header_was_set(skb) &&
	    skb_mac_header(skb) + ETH_HLEN == skb->data)
		return wb_receive_frame(skb_mac_header(skb), ETH_HLEN + skb->len, stats);
	if (ETH_HLEN + skb->len > wb_scratch_bytes()) {
		stats->oversize++;
		return false;
	}
	/* Non-linear: copied into this CPU's buffer before the lock is taken,
	 * behind a minimal Ethernet header (the engine reads only its type). */
	buf = this_cpu_read(wb.cpu->scratch);
	memset(buf, 0, ETH_HLEN);
	buf[12] = ETH_P_IP >> 8;
	buf[13] = ETH_P_IP & 0xff;
	if (skb_copy_bits(skb, 0, buf + ETH_HLEN, skb->len)) {
		stats->copy_errors++;
		return false;
	}
	return wb_receive_frame(buf, ETH_HLEN + skb->len, stats);
}

static rx_handler_result_t wb_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;

	if (!wb_receive(skb) || !READ_ONCE(wb_consume))
		return RX_HANDLER_PASS;
	this_cpu_inc(wb.pcpu->consumed);
	consume_skb(skb);
	return RX_HANDLER_CONSUMED;
}

/* The tap fallback: sees the same frames, cannot keep them from the stack. */
static int wb_tap_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
		      struct net_device *orig_dev)
{
	wb_receive(skb);
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* ---- hooking, under RTNL ------------------------------------------------ */

static struct wb_hook *wb_hook_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < wb.hook_count; i++)
		if (!strcmp(wb.hooks[i].name, name))
			return &wb.hooks[i];
	return NULL;
}

static struct wb_hook *wb_hook_by_dev(const struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < wb.hook_count; i++)
		if (wb.hooks[i].dev == dev)
			return &wb.hooks[i];
	return NULL;
}

static int wb_hook_attach(struct wb_hook *h, struct net_device *dev)
{
	int rc;

	ASSERT_RTNL();
	if (!net_eq(dev_net(dev), &init_net))
		return 0;
	if (dev->type != ARPHRD_ETHER) {
		pr_err("cannot hook %s: not an Ethernet device\n", dev->name);
		rc = -EINVAL;
		goto fail;
	}
	rc = netdev_rx_handler_register(dev, wb_rx_handler, h);
	if (rc == -EBUSY && wb_tap_fallback) {
		memset(&h->pt, 0, sizeof(h->pt));
		h->pt.type = htons(ETH_P_IP);
		h->pt.dev = dev;
		h->pt.func = wb_tap_rcv;
		dev_add_pack(&h->pt);
		WRITE_ONCE(h->tap, true);
		pr_warn("%s already has an rx_handler (bridge, bond, team or macvlan): hooked "
			"with a packet tap; feed packets also reach the IP stack\n", dev->name);
	} else if (rc == -EBUSY) {
		pr_err("cannot hook %s: its rx_handler slot is taken (bridge, bond, team or "
		       "macvlan on it); hook the upper device instead, or load with "
		       "tap_fallback=1 to use a packet tap\n", dev->name);
		goto fail;
	} else if (rc) {
		pr_err("cannot hook %s: error %d\n", dev->name, rc);
		goto fail;
	} else {
		WRITE_ONCE(h->tap, false);
	}
	h->error = 0;
	WRITE_ONCE(h->dev, dev);
	pr_info("hooked %s (%s, %s feed packets)\n", dev->name,
		h->tap ? "packet tap" : "rx_handler",
		h->tap || !wb_consume ? "passing on" : "consuming");
	return 0;
fail:
	h->error = rc;
	WRITE_ONCE(wb.hook_failures, wb.hook_failures + 1);
	return rc;
}

static void wb_hook_detach(struct wb_hook *h, const char *why)
{
	struct net_device *dev = h->dev;

	ASSERT_RTNL();
	if (!dev)
		return;
	/* Both wait for receive handlers still running (synchronize_net). */
	if (h->tap)
		dev_remove_pack(&h->pt);
	else
		netdev_rx_handler_unregister(dev);
	WRITE_ONCE(h->dev, NULL);
	WRITE_ONCE(h->tap, false);
	pr_info("unhooked %s (%s)\n", dev->name, why);
}

/* Set under RTNL at unload: the notifier hooks nothing new from then on. */
static bool wb_unloading;

static int wb_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct wb_hook *h;

	if (wb_unloading && event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_REGISTER:
		h = wb_hook_by_name(dev->name);
		if (h && !h->dev)
			wb_hook_attach(h, dev);
		break;
	case NETDEV_CHANGENAME:
		h = wb_hook_by_dev(dev);
		if (h && strcmp(h->name, dev->name))
			wb_hook_detach(h, "renamed");
		h = wb_hook_by_name(dev->name);
		if (h && !h->dev)
			wb_hook_attach(h, dev);
		break;
	case NETDEV_UNREGISTER:
		h = wb_hook_by_dev(dev);
		if (h)
			wb_hook_detach(h, "device going away");
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block wb_netdev_nb = {
	.notifier_call = wb_netdev_event,
};

static int wb_parse_ifaces(const char *list)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchrnul(p, ',');
		size_t len = end - p;
		struct wb_hook *h;

		if (len) {
			if (wb.hook_count == WB_MAX_IFACES) {
				pr_err("ifaces: at most %d interfaces\n", WB_MAX_IFACES);
				return -EINVAL;
			}
			if (len >= IFNAMSIZ) {
				pr_err("ifaces: '%.*s' is longer than an interface name\n",
				       (int)len, p);
				return -EINVAL;
			}
			h = &wb.hooks[wb.hook_count];
			memcpy(h->name, p, len);
			h->name[len] = '\0';
			if (!dev_valid_name(h->name)) {
				pr_err("ifaces: '%s' is not a valid interface name\n", h->name);
				return -EINVAL;
			}
			wb.hook_count++;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

int wb_hooks_init(const char *ifaces)
{
	unsigned int i;
	int rc;

	rc = wb_parse_ifaces(ifaces);
	if (rc)
		return rc;
	timer_setup(&wb_hole_timer, wb_hole_timer_fire, 0);
	/* Registration replays NETDEV_REGISTER: existing devices get hooked. */
	rc = register_netdevice_notifier(&wb_netdev_nb);
	if (rc)
		return rc;
	/* A device that exists but could not be hooked fails the load. */
	rtnl_lock();
	for (i = 0; i < wb.hook_count; i++) {
		if (wb.hooks[i].error) {
			rc = wb.hooks[i].error;
			break;
		}
		if (!wb.hooks[i].dev)
			pr_info("%s does not exist yet: hooked when it appears\n",
				wb.hooks[i].name);
	}
	rtnl_unlock();
	if (rc)
		wb_hooks_exit();
	return rc;
}

void wb_hooks_exit(void)
{
	unsigned int i;

	rtnl_lock();
	wb_unloading = true;
	for (i = 0; i < wb.hook_count; i++)
		wb_hook_detach(&wb.hooks[i], "module unload");
	rtnl_unlock();
	/* Unregistering also replays NETDEV_UNREGISTER for every device,
	 * which would unhook anything still hooked. */
	unregister_netdevice_notifier(&wb_netdev_nb);
	synchronize_net();
	WRITE_ONCE(wb_hole_timer_stopping, true);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	timer_delete_sync(&wb_hole_timer);
#else
	del_timer_sync(&wb_hole_timer);
#endif
}
