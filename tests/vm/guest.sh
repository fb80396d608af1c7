#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
# The module scenarios, run as root inside the test VM by /init (busybox sh).
# Prints one "VMTEST PASS|FAIL <scenario> <detail>" line per scenario.
# Layout of the initramfs: /bin (busybox applets), /usr/sbin/ip,
# /usr/bin/tcpreplay, /wb/{wb-subscribe,vm-read}, /mod/*.ko, /data/*.
IP=/usr/sbin/ip
SUB=/wb/wb-subscribe
READ=/wb/vm-read
KO=/mod/wirebook.ko
D=/data
T=/tmp

# The guest's uptime in each verdict shows where the time goes.
pass() { echo "VMTEST PASS $* [t=$(cut -d' ' -f1 /proc/uptime)s]"; }
fail() { echo "VMTEST FAIL $* [t=$(cut -d' ' -f1 /proc/uptime)s]"; }

veth_up() {
	$IP link add wbtx type veth peer name wbrx || return 1
	$IP link set wbtx up && $IP link set wbrx up
}

veth_down() { $IP link del wbtx 2>/dev/null; }

# Replay a capture from one CPU: the receive side runs on the sending CPU
# (veth), so the CPU chooses the ring and pinning keeps the order.
replay() { # cpu pcap [extra tcpreplay options]
	cpu=$1; pcap=$2; shift 2
	taskset -c "$cpu" /usr/bin/tcpreplay -q -i wbtx --pps=3000 "$@" "$pcap" >$T/tcpreplay.log 2>&1
}

rings_sum() { # column: 5 published, 6 dropped
	awk -v c="$1" 'NR > 1 { s += $c } END { print s + 0 }' /proc/wirebook/rings
}

load() { insmod $KO "$@"; }
unload() { rmmod wirebook 2>/dev/null; }

configure() { # load the feed map and subscribe to everything, as wb-dump does
	$SUB feeds load $D/feeds.conf >$T/feeds.log 2>&1 && $SUB add '*' >$T/sub.log 2>&1
}

kernel_clean() {
	! dmesg | grep -E -q 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:'
}

echo 1000000 >/proc/sys/net/core/netdev_max_backlog
expected_events=$(wc -l <$D/expected.txt)

# ---- 1. load, hook, wb-subscribe verbs --------------------------------------
veth_up
if load ifaces=wbrx && grep -q 'iface wbrx rx_handler' /proc/wirebook/hooks &&
   [ -c /dev/wirebook ] && configure && $SUB feeds list | grep -q '233.54.12.111:26477' &&
   $SUB list | grep -q '^\*' && $SUB add AAPL MSFT >/dev/null && $SUB del AAPL MSFT &&
   ! $SUB del NOSUCH 2>/dev/null && ! $SUB feeds add 1.2.3.4:5 itch nasdaq TOOLONGNAME 2>/dev/null &&
   $SUB stats --json | grep -q '"lines":\[{' && $SUB stats reset; then
	pass load-and-control "hooked wbrx, /dev/wirebook present, feeds/symbols/stats verbs work"
else
	fail load-and-control "$(cat $T/feeds.log $T/sub.log 2>/dev/null | tail -3)"
fi
ls -l /dev/wirebook

# ---- 2. the module's events are exactly wb-dump's ---------------------------
# Two halves from two CPUs: the events land in two rings and the reader
# must merge them back into decode order.
replay 0 $D/feed1.pcap
replay 1 $D/feed2.pcap
$READ --idle-ms 1500 >$T/kernel.txt 2>$T/read.log
got=$(wc -l <$T/kernel.txt)
rings_used=$(awk 'NR > 1 && $5 > 0 { n++ } END { print n + 0 }' /proc/wirebook/rings)
if cmp -s $T/kernel.txt $D/expected.txt; then
	pass events-equal-wb-dump "$got events identical to wb-dump's, from $rings_used rings"
else
	fail events-equal-wb-dump "module $got events vs wb-dump $expected_events; $(cat $T/read.log)"
	diff $T/kernel.txt $D/expected.txt | head -20
fi
$SUB stats

# ---- 3. counters: per-line stats agree with the events ----------------------
published=$(rings_sum 5)
line_events=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"events\"" { s += $2 } END { print s + 0 }')
if [ "$published" -eq "$expected_events" ] && [ "$line_events" -eq "$expected_events" ]; then
	pass stats-consistent "rings published $published = per-line events $line_events"
else
	fail stats-consistent "rings published $published, per-line events $line_events, expected $expected_events"
fi
unload

# ---- 4. overflow accounting: tiny rings, no reader --------------------------
if load ifaces=wbrx ring_slots=64 && configure; then
	replay 0 $D/feed.pcap
	published=$(rings_sum 5)
	dropped=$(rings_sum 6)
	line_drops=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"ring_drops\"" { s += $2 } END { print s + 0 }')
	$READ --idle-ms 500 >$T/overflow.txt 2>$T/read.log
	delivered=$(wc -l <$T/overflow.txt)
	if [ "$dropped" -gt 0 ] && [ $((published + dropped)) -eq "$expected_events" ] &&
	   [ "$delivered" -eq "$published" ] && [ "$line_drops" -eq "$dropped" ] &&
	   head -n "$delivered" $D/expected.txt | cmp -s - $T/overflow.txt; then
		pass overflow-accounting "delivered $delivered + dropped $dropped = $expected_events events; the delivered ones are the first ones"
	else
		fail overflow-accounting "published $published dropped $dropped (line drops $line_drops) delivered $delivered, expected total $expected_events"
	fi
else
	fail overflow-accounting "could not load with ring_slots=64"
fi
unload

# ---- 5. rmmod under traffic with a reader mapped ----------------------------
if load ifaces=wbrx && configure; then
	taskset -c 0 /usr/bin/tcpreplay -q -i wbtx --pps=2000 --loop=0 $D/feed.pcap >/dev/null 2>&1 &
	traffic=$!
	$READ --hold 2>$T/hold.log &
	reader=$!
	sleep 2
	if rmmod wirebook 2>$T/rmmod.log; then refused=no; else refused=yes; fi
	kill $reader; wait $reader
	sleep 1
	if rmmod wirebook 2>>$T/rmmod.log; then removed=yes; else removed=no; fi
	sleep 1
	kill $traffic; wait $traffic 2>/dev/null
	if [ $refused = yes ] && [ $removed = yes ] && ! [ -e /dev/wirebook ] && kernel_clean; then
		pass rmmod-under-traffic "refused while the reader mapped the rings, removed under traffic once it left"
	else
		fail rmmod-under-traffic "refused=$refused removed=$removed $(cat $T/rmmod.log)"
	fi
else
	fail rmmod-under-traffic "could not load"
fi
unload

# ---- 6. device deletion while hooked, and re-creation -----------------------
if load ifaces=wbrx && configure; then
	taskset -c 0 /usr/bin/tcpreplay -q -i wbtx --pps=2000 --loop=0 $D/feed.pcap >/dev/null 2>&1 &
	traffic=$!
	sleep 1
	veth_down
	# tcpreplay --loop=0 keeps retrying a vanished device: stop it.
	kill $traffic 2>/dev/null
	wait $traffic 2>/dev/null
	gone=$(grep -c 'iface wbrx not-hooked' /proc/wirebook/hooks)
	veth_up
	back=$(grep -c 'iface wbrx rx_handler' /proc/wirebook/hooks)
	before=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"feed_frames\"" { print $2 }')
	replay 0 $D/feed1.pcap
	after=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"feed_frames\"" { print $2 }')
	if [ "$gone" = 1 ] && [ "$back" = 1 ] && [ "$after" -gt "$before" ] && unload && kernel_clean; then
		pass device-deletion "unhooked when wbrx was deleted under traffic, re-hooked when it came back ($before -> $after feed frames)"
	else
		fail device-deletion "gone=$gone back=$back frames $before -> $after"
	fi
else
	fail device-deletion "could not load"
fi
unload

# ---- 7. rx_handler slot taken: clear error, then the tap fallback -----------
$IP link add mv0 link wbrx type macvlan mode bridge
if load ifaces=wbrx 2>$T/busy.log; then
	fail busy-rx-handler "loaded on a device whose rx_handler belongs to macvlan"
	unload
elif dmesg | grep -q 'rx_handler slot is taken' && load ifaces=wbrx tap_fallback=1 &&
     grep -q 'iface wbrx tap' /proc/wirebook/hooks && configure; then
	replay 0 $D/feed1.pcap
	frames=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"feed_frames\"" { print $2 }')
	consumed=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"consumed\"" { print $2 }')
	if [ "$frames" -gt 0 ] && [ "$consumed" -eq 0 ]; then
		pass busy-rx-handler "load refused with a clear message; tap_fallback=1 decoded $frames frames without consuming"
	else
		fail busy-rx-handler "tap saw $frames feed frames, consumed $consumed"
	fi
	unload
else
	fail busy-rx-handler "$(cat $T/busy.log) $(dmesg | tail -3)"
	unload
fi
$IP link del mv0

# ---- 8. malformed packets ---------------------------------------------------
if load ifaces=wbrx && configure; then
	replay 0 $D/malformed.pcap
	replay 1 $D/malformed.pcap
	$READ --idle-ms 500 >/dev/null 2>$T/read.log
	errors=$($SUB stats --json | tr '{,' '\n\n' | awk -F: '$1 == "\"decode_errors\"" { s += $2 } END { print s + 0 }')
	if [ "$errors" -gt 0 ] && unload && kernel_clean; then
		pass malformed-packets "$(cat $D/malformed.count) frames twice: $errors decode errors counted, no WARN/BUG/Oops"
	else
		fail malformed-packets "decode errors $errors; $(dmesg | grep -E 'WARNING|BUG|Oops' | head -3)"
	fi
else
	fail malformed-packets "could not load"
fi
unload

# ---- 9. the kernel log over the whole run -----------------------------------
if kernel_clean; then
	pass kernel-log-clean "no WARN, BUG, Oops or call trace in dmesg"
else
	fail kernel-log-clean "$(dmesg | grep -E -m3 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:')"
fi
echo "VMTEST-DMESG-BEGIN"
dmesg | grep -E 'wirebook|WARNING|BUG|Oops|RIP' | tail -60
echo "VMTEST-DMESG-END"
