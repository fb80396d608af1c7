// SPDX-License-Identifier: GPL-2.0
/*
 * The receive hook: an rx_handler on each configured interface (or a
 * packet tap when the rx_handler slot is taken and tap_fallback is set),
 * kept in step with device registration and renames by a netdevice
 * notifier. Frames are handed whole to the engine (feed_process_frame),
 * which owns every IPv4/UDP/feed decision; this file only prefilters on
 * the UDP destination port (lock-free) and copies non-linear frames.
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
 * user-space producers: armed while the engine has a hole, every tick.
 */
static struct timer_list wb_hole_timer;
static bool wb_hole_timer_stopping;

static void wb_hole_timer_arm(void)
{
	if (!READ_ONCE(wb_hole_timer_stopping) && !timer_pending(&wb_hole_timer))
		mod_timer(&wb_hole_timer, jiffies + 1);
}

static void wb_hole_timer_fire(struct timer_list *t)
{
	struct wb_hook_pcpu *stats = this_cpu_ptr(wb.pcpu);
	struct wb_ring_producer *prod;
	bool wake = false, holes;

	wb_engine_lock_rx(stats);
	prod = &wb.rings[smp_processor_id()].prod;
	feed_engine_poll(wb.engine, wb_next_recv_ts(), prod);
	if (wb_ring_producer_publish(prod))
		wake = true;
	holes = feed_engine_holes(wb.engine) != 0;
	wb_engine_unlock_rx(stats);
	if (wake)
		wake_up_interruptible(&wb.readers);
	if (holes)
		wb_hole_timer_arm();
}

/* Caller holds the engine lock. Returns the line index or -1. */
static int wb_decode_frame(const u8 *frame, u32 len, u64 recv_ts, bool *wake)
{
	struct wb_ring_producer *prod = &wb.rings[smp_processor_id()].prod;
	int line;

	line = feed_process_frame(wb.engine, frame, len, recv_ts, prod);
	if (wb_ring_producer_publish(prod))
		*wake = true;
	return line;
}

/*
 * A GSO/GRO super-packet: UDP GRO (SKB_GSO_UDP_L4) concatenates datagrams
 * of gso_size bytes behind one IP/UDP header. Split it back into frames
 * with their own lengths, so the engine never decodes two datagrams as
 * one. Anything else (fraglist GRO, other GSO types) is counted and
 * passed on undecoded: the feed sees a sequence gap, never a bad decode.
 * Caller holds the engine lock (a rare path: the copies are made under it).
 */
static int wb_decode_gso(struct sk_buff *skb, unsigned int ihl, u64 recv_ts, bool *wake)
{
	struct wb_hook_pcpu *stats = this_cpu_ptr(wb.pcpu);
	const struct skb_shared_info *si = skb_shinfo(skb);
	unsigned int hdr = ihl + sizeof(struct udphdr), off, seg, gso_size = si->gso_size;
	u8 *buf = this_cpu_read(wb.cpu->scratch);
	struct iphdr *iph;
	struct udphdr *uh;
	int line = -1;

	stats->gso_frames++;
	/* Count it on its line (the map decides whether it is a feed's). */
	iph = (struct iphdr *)(buf + ETH_HLEN);
	if (skb_copy_bits(skb, 0, iph, hdr)) {
		stats->copy_errors++;
		return -1;
	}
	uh = (struct udphdr *)(buf + ETH_HLEN + ihl);
	line = feed_map_lookup(wb.engine, ntohl(iph->daddr), ntohs(uh->dest));
	if (line < 0)
		return -1;
	wb.engine->lines[line].counters.gso_packets++;
	if (!(si->gso_type & SKB_GSO_UDP_L4) || (si->gso_type & SKB_GSO_FRAGLIST) ||
	    !gso_size || gso_size > wb_scratch_bytes() - ETH_HLEN - hdr) {
		stats->gso_undecoded++;
		pr_warn_ratelimited("undecodable GSO super-packet (type %#x) to a feed on %s: "
				    "turn GRO off on the device (ethtool -K %s gro off)\n",
				    si->gso_type, skb->dev->name, skb->dev->name);
		return -1;
	}
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
		wb_decode_frame(buf, ETH_HLEN + hdr + seg, recv_ts, wake);
		stats->gso_segments++;
	}
	return line;
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
	const u8 *frame;
	u32 frame_len = 0;
	bool wake = false, holes;
	int line;
	u64 ts;

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
	frame = NULL;
	if (unlikely(skb_is_gso(skb))) {
		/* split under the lock, below */
	} else if (!skb_is_nonlinear(skb) && skb_mac_header_was_set(skb) &&
		   skb_mac_header(skb) + ETH_HLEN == skb->data) {
		/* The common case: the frame is contiguous in the head. */
		frame = skb_mac_header(skb);
		frame_len = ETH_HLEN + skb->len;
	} else if (ETH_HLEN + skb->len > wb_scratch_bytes()) {
		stats->oversize++;
		return false;
	} else {
		/* Non-linear: copied into this CPU's buffer before the lock is
		 * taken, behind a minimal Ethernet header (the engine reads only
		 * its type). */
		u8 *buf = this_cpu_read(wb.cpu->scratch);

		memset(buf, 0, ETH_HLEN);
		buf[12] = ETH_P_IP >> 8;
		buf[13] = ETH_P_IP & 0xff;
		if (skb_copy_bits(skb, 0, buf + ETH_HLEN, skb->len)) {
			stats->copy_errors++;
			return false;
		}
		frame = buf;
		frame_len = ETH_HLEN + skb->len;
	}

	wb_engine_lock_rx(stats);
	ts = wb_next_recv_ts();
	if (frame)
		line = wb_decode_frame(frame, frame_len, ts, &wake);
	else
		line = wb_decode_gso(skb, ihl, ts, &wake);
	holes = feed_engine_holes(wb.engine) != 0;
	wb_engine_unlock_rx(stats);

	if (wake)
		wake_up_interruptible(&wb.readers);
	if (unlikely(holes))
		wb_hole_timer_arm();
	if (line < 0)
		return false;
	stats->feed_frames++;
	return true;
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
