#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
# The module scenarios, run as root inside the test VM by /init (busybox sh).
# Prints one "VMTEST PASS|FAIL|SKIP <scenario> <detail>" line per scenario.
# "vmtest.only=a,b" on the kernel command line runs only those scenarios.
# Layout of the initramfs: /bin (busybox applets), /usr/sbin/ip,
# /usr/bin/tcpreplay, /wb/{wb-subscribe,vm-read,vm-gso-send,wirebookd,wb-book,wb-kread,
# wb-recoveryd},
# /mod/*.ko, /data/*.
IP=/usr/sbin/ip
SUB=/wb/wb-subscribe
READ=/wb/vm-read
KREAD=/wb/wb-kread	# the user-facing reader: the main equality check goes through it
KO=/mod/wirebook.ko
D=/data
T=/tmp
RATE=--pps=3000

# The guest's uptime in each verdict shows where the time goes.
verdict() { v=$1; shift; echo "VMTEST $v $* [t=$(cut -d' ' -f1 /proc/uptime)s]"; }
pass() { verdict PASS "$@"; }
fail() { verdict FAIL "$@"; }

# Events of each venue in their order, venue after venue. The module and
# wb-dump agree stream by stream; across venues, a hole held up to hold_us
# (by the module's timer, by wb-dump's capture clock) may let another
# venue's events pass first, so the global interleaving is not compared.
per_venue() { awk '{ v = $3; sub(/\/.*/, "", v); print v, $0 }' "$1" | sort -s -k1,1; }
same_streams() { # GOT WANT
	per_venue "$1" >$T/got.venues && per_venue "$2" >$T/want.venues &&
		cmp -s $T/got.venues $T/want.venues
}
skip() { verdict SKIP "$@"; }

veth_up() {
	$IP link add wbtx type veth peer name wbrx || return 1
	$IP link set wbtx up && $IP link set wbrx up
}

veth_down() { $IP link del wbtx 2>/dev/null; }

# Replay a capture from one CPU: the receive side runs on the sending CPU
# (veth), so the CPU chooses the ring and pinning keeps the order.
replay() { # cpu pcap [extra tcpreplay options]
	cpu=$1; pcap=$2; shift 2
	taskset -c "$cpu" /usr/bin/tcpreplay -q -i wbtx $RATE "$@" "$pcap" >$T/tcpreplay.log 2>&1
}

# Two replays, CPU 0 and CPU 1, started together (each waits for $T/go,
# so neither is done before the other has begun), at full speed.
replay_both() { # pcap0 pcap1
	rm -f $T/go
	for cpu in 0 1; do
		[ $cpu = 0 ] && pcap=$1 || pcap=$2
		taskset -c $cpu sh -c "while [ ! -e $T/go ]; do usleep 1000; done;
			exec /usr/bin/tcpreplay -q -i wbtx --topspeed $pcap" >$T/tcpreplay$cpu.log 2>&1 &
		eval r$cpu=\$!
	done
	usleep 500000
	touch $T/go
	wait $r0 $r1
}

rings_sum() { # column: 5 published, 6 dropped, 7 batches, 8 wakeups
	awk -v c="$1" 'NR > 1 { s += $c } END { print s + 0 }' /proc/wirebook/rings
}

stat_sum() { # a JSON counter of wb-subscribe stats, summed over lines
	$SUB stats --json | tr '{,' '\n\n' | awk -F: -v k="\"$1\"" '$1 == k { s += $2 } END { print s + 0 }'
}

load() { insmod $KO "$@"; }
unload() { rmmod wirebook 2>/dev/null; }

configure() { # the feed map and '*', as wb-dump uses by default
	$SUB feeds load $D/feeds.conf >$T/feeds.log 2>&1 && $SUB add '*' >$T/sub.log 2>&1
}

kernel_clean() {
	! dmesg | grep -E -q 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:'
}

expected_events=$(wc -l <$D/expected.txt)

# ---- scenarios ----------------------------------------------------------------

scenario_control() {
	if load ifaces=wbrx && grep -q 'iface wbrx rx_handler' /proc/wirebook/hooks &&
	   [ -c /dev/wirebook ] && configure && $SUB feeds list | grep -q '233.54.12.111:26477' &&
	   $SUB list | grep -q '^\*' && $SUB add AAPL MSFT >/dev/null && $SUB del AAPL MSFT &&
	   ! $SUB del NOSUCH 2>/dev/null && ! $SUB add TOOLONGSYMBOL 2>/dev/null &&
	   ! $SUB feeds add 1.2.3.4:5 itch nasdaq TOOLONGNAME 2>/dev/null &&
	   ! $SUB feeds add 233.54.12.111:26477 itch nasdaq A 2>/dev/null &&
	   $SUB feeds del 233.54.12.111:26477 && ! $SUB feeds list | grep -q 26477 &&
	   $SUB feeds add 233.54.12.111:26477 itch nasdaq A >/dev/null &&
	   $SUB stats --json | grep -q '"lines":\[{' && $SUB stats reset &&
	   $READ --check-protection >$T/prot.log 2>&1 && $READ --check-ioctls >>$T/prot.log 2>&1; then
		pass control "hooked wbrx; feeds add/del/list/load, add/del/list, stats --json/reset; malformed ioctls refused with the right errno; only the consumer page maps writable"
	else
		fail control "$(cat $T/feeds.log $T/sub.log $T/prot.log 2>/dev/null | tail -4)"
	fi
	ls -l /dev/wirebook
}

# Two halves from two CPUs: the events land in two rings and the reader
# must merge them back into decode order.
scenario_equal() {
	if ! load ifaces=wbrx || ! configure; then
		fail events-equal-wb-dump "could not load and configure"
		return
	fi
	replay 0 $D/feed1.pcap
	replay 1 $D/feed2.pcap
	$KREAD --idle-ms 1500 >$T/kernel.txt 2>$T/read.log
	got=$(wc -l <$T/kernel.txt)
	rings_used=$(awk 'NR > 1 && $5 > 0 { n++ } END { print n + 0 }' /proc/wirebook/rings)
	if same_streams $T/kernel.txt $D/expected.txt; then
		pass events-equal-wb-dump "$got events identical to wb-dump's, from $rings_used rings"
	else
		fail events-equal-wb-dump "module $got events vs wb-dump $expected_events; $(cat $T/read.log)"
		diff $T/got.venues $T/want.venues | head -20
	fi
	$SUB stats
	published=$(rings_sum 5)
	line_events=$(stat_sum events)
	if [ "$published" -eq "$expected_events" ] && [ "$line_events" -eq "$expected_events" ]; then
		pass stats-consistent "rings published $published = per-line events $line_events"
	else
		fail stats-consistent "rings published $published, per-line events $line_events, expected $expected_events"
	fi
}

# Events without their line (venue/line -> venue): which line's copy of a
# packet is decoded first depends on which CPU got there first.
no_lines() { sed 's#^\([^ ]* [^ ]* [^/ ]*\)/[0-9]* #\1 #' "$1"; }

# Two CPUs at once, each with its own venues (Nasdaq on one, the Cboe
# venues on the other): every venue's events are still wb-dump's. Each
# venue has a lock of its own, so the CPUs should not meet on one: how
# often a CPU found its venue's lock taken (lock_waits) is reported; only
# the hole timer, which takes a venue's lock too, can make one wait.
scenario_concurrent() {
	if ! load ifaces=wbrx || ! configure; then
		fail concurrent-cpus "could not load and configure"
		return
	fi
	taskset -c 0 /usr/bin/tcpreplay -q -i wbtx $RATE $D/feed-itch.pcap >$T/tcpreplay0.log 2>&1 &
	first=$!
	taskset -c 1 /usr/bin/tcpreplay -q -i wbtx $RATE $D/feed-pitch.pcap >$T/tcpreplay1.log 2>&1
	wait $first
	$KREAD --idle-ms 1500 >$T/kernel.txt 2>$T/read.log
	rings_used=$(awk 'NR > 1 && $5 > 0 { n++ } END { print n + 0 }' /proc/wirebook/rings)
	waits=$($SUB stats --json | sed -n 's/.*"lock_waits":\([0-9]*\).*/\1/p')
	frames=$($SUB stats --json | sed -n 's/.*"feed_frames":\([0-9]*\).*/\1/p')
	if [ -s $D/feed-itch.pcap ] && [ -s $D/feed-pitch.pcap ] &&
	   same_streams $T/kernel.txt $D/expected.txt && [ "$rings_used" -ge 2 ]; then
		pass concurrent-cpus "Nasdaq on CPU 0 and the Cboe venues on CPU 1 at once: $(wc -l <$T/kernel.txt) events identical to wb-dump's per venue, from $rings_used rings; a venue's lock was found taken for $waits of $frames feed frames"
	else
		fail concurrent-cpus "$(wc -l <$T/kernel.txt) events vs $expected_events from $rings_used rings; $(cat $T/read.log)"
		diff $T/got.venues $T/want.venues | head -10
	fi
}

# Two CPUs on the same venues at once: every venue's A lines from CPU 0,
# its B lines from CPU 1, as fast as they go (a longer day, so that they
# overlap). Both go through the same streams (arbitration, duplicates,
# holes, held packets) under the venue's lock: the CPUs should meet on it
# (lock_waits; a run where they never did is a SKIP: nothing was tested),
# every venue's events must still be wb-dump's (but for which line a
# packet's first copy came on: the CPU ahead decodes, the other finds
# duplicates, so the events may all land in one ring), and every event
# published must be counted on a line (a
# counter two CPUs bump without the lock loses counts). A hole one CPU
# sees while the other lags is held up to 200 ms (or 16 packets), so only
# real losses become GAPs.
scenario_same_venue() {
	if ! load ifaces=wbrx hold_us=200000 || ! configure; then
		fail same-venue-two-cpus "could not load and configure"
		return
	fi
	replay_both $D/long-a.pcap $D/long-b.pcap
	want=$(wc -l <$D/expected-long.txt)
	$KREAD --idle-ms 1500 >$T/kernel.txt 2>$T/read.log
	no_lines $T/kernel.txt >$T/kernel-nolines.txt
	no_lines $D/expected-long.txt >$T/expected-nolines.txt
	rings_used=$(awk 'NR > 1 && $5 > 0 { n++ } END { print n + 0 }' /proc/wirebook/rings)
	waits=$($SUB stats --json | sed -n 's/.*"lock_waits":\([0-9]*\).*/\1/p')
	frames=$($SUB stats --json | sed -n 's/.*"feed_frames":\([0-9]*\).*/\1/p')
	published=$(rings_sum 5)
	line_events=$(stat_sum events)
	if [ -s $D/long-a.pcap ] && [ -s $D/long-b.pcap ] &&
	   same_streams $T/kernel-nolines.txt $T/expected-nolines.txt &&
	   [ "$published" -eq "$line_events" ] && [ "$published" -eq "$want" ] &&
	   [ "${waits:-0}" -eq 0 ]; then
		# Correct, but nothing contended: a host too busy to run both
		# vCPUs at once. Not a failure of the module; not a test of it either.
		skip same-venue-two-cpus "events identical to wb-dump's, but the CPUs never met on a venue's lock in $frames feed frames (the host did not run both vCPUs at once): contention not exercised"
	elif [ -s $D/long-a.pcap ] && [ -s $D/long-b.pcap ] &&
	   same_streams $T/kernel-nolines.txt $T/expected-nolines.txt &&
	   [ "$published" -eq "$line_events" ] && [ "$published" -eq "$want" ]; then
		pass same-venue-two-cpus "every venue's A lines on CPU 0 and B lines on CPU 1 at once: $(wc -l <$T/kernel.txt) events identical to wb-dump's per venue, from $rings_used rings; the CPUs met on a venue's lock $waits times in $frames feed frames; rings published $published = per-line events"
	else
		fail same-venue-two-cpus "$(wc -l <$T/kernel.txt) events vs $want from $rings_used rings; lock_waits ${waits:-?} of $frames frames; published $published, per-line events $line_events; $(cat $T/read.log)"
		diff $T/got.venues $T/want.venues | head -10
	fi
}

# Frames longer than their datagrams (Ethernet padding, trailers): the
# payload ends where the UDP header says, so the events do not change.
scenario_padded() {
	if ! load ifaces=wbrx || ! configure; then
		fail padded-frames "could not load"
		return
	fi
	replay 0 $D/padded.pcap
	$READ --idle-ms 1000 >$T/kernel.txt 2>$T/read.log
	errors=$(stat_sum decode_errors)
	if same_streams $T/kernel.txt $D/expected.txt && [ "$errors" -eq 0 ]; then
		pass padded-frames "1-46 junk bytes after every datagram: $(wc -l <$T/kernel.txt) events identical to wb-dump's, no decode error"
	else
		fail padded-frames "$(wc -l <$T/kernel.txt) events vs $expected_events, $errors decode errors"
		diff $T/got.venues $T/want.venues | head -10
	fi
}

# Two hooked interfaces: the halves of the capture arrive on different
# devices (and CPUs); one engine, so the events are still wb-dump's.
scenario_two_ifaces() {
	$IP link add wbtx2 type veth peer name wbrx2 && $IP link set wbtx2 up && $IP link set wbrx2 up
	if ! load ifaces=wbrx,wbrx2 || ! configure; then
		fail two-interfaces "could not load"
		$IP link del wbtx2
		return
	fi
	hooked=$(grep -c 'rx_handler' /proc/wirebook/hooks)
	replay 0 $D/feed1.pcap
	taskset -c 1 /usr/bin/tcpreplay -q -i wbtx2 $RATE $D/feed2.pcap >$T/tcpreplay.log 2>&1
	$READ --idle-ms 1000 >$T/kernel.txt 2>$T/read.log
	if [ "$hooked" -eq 2 ] && same_streams $T/kernel.txt $D/expected.txt; then
		pass two-interfaces "wbrx and wbrx2 hooked; halves on each: $(wc -l <$T/kernel.txt) events identical to wb-dump's"
	else
		fail two-interfaces "$hooked hooked; $(wc -l <$T/kernel.txt) events vs $expected_events"
	fi
	unload
	$IP link del wbtx2
}

# A symbol subset: the filter in the kernel equals wb-dump --symbols.
scenario_filtered() {
	if ! load ifaces=wbrx || ! $SUB feeds load $D/feeds.conf >/dev/null ||
	   ! $SUB add $(cat $D/symbols.txt) >/dev/null; then
		fail filtered-equal-wb-dump "could not load and configure"
		return
	fi
	replay 0 $D/feed.pcap
	$READ --idle-ms 1000 >$T/kernel.txt 2>$T/read.log
	got=$(wc -l <$T/kernel.txt)
	filtered=$(stat_sum filtered)
	if same_streams $T/kernel.txt $D/expected-symbols.txt && [ "$filtered" -gt 0 ]; then
		pass filtered-equal-wb-dump "$got events for $(cat $D/symbols.txt) identical to wb-dump --symbols; $filtered messages filtered"
	else
		fail filtered-equal-wb-dump "module $got events vs wb-dump $(wc -l <$D/expected-symbols.txt), filtered $filtered"
		diff $T/kernel.txt $D/expected-symbols.txt | head -10
	fi
}

# The SIPs' quotes through the module, filter on (CQS for SPY and IWM, UQDF
# for AAPL): wb-dump's events, with QUOTE and NBBO events of both SIPs.
scenario_sip() {
	if [ ! -s $D/sip.pcap ] || ! grep -q ' NBBO ' $D/expected-sip.txt; then
		skip sip-equal-wb-dump "the capture has no SIP lines"
		return
	fi
	if ! load ifaces=wbrx || ! $SUB feeds load $D/feeds.conf >/dev/null ||
	   ! $SUB add $(cat $D/sip-symbols.txt) >/dev/null; then
		fail sip-equal-wb-dump "could not load and configure"
		return
	fi
	replay 0 $D/sip.pcap
	$KREAD --idle-ms 1000 >$T/kernel.txt 2>$T/read.log
	quotes=$(grep -c ' QUOTE ' $T/kernel.txt)
	cqs=$(grep -c ' cqs/[0-9]* i=[0-9]* NBBO ' $T/kernel.txt)
	uqdf=$(grep -c ' uqdf/[0-9]* i=[0-9]* NBBO ' $T/kernel.txt)
	if cmp -s $T/kernel.txt $D/expected-sip.txt && [ "$quotes" -gt 0 ] && [ "$cqs" -gt 0 ] &&
	   [ "$uqdf" -gt 0 ]; then
		pass sip-equal-wb-dump "$(cat $D/sip-symbols.txt): $(wc -l <$T/kernel.txt) events identical to wb-dump --symbols; $quotes SIP quotes, $cqs CQS and $uqdf UQDF NBBOs"
	else
		fail sip-equal-wb-dump "module $(wc -l <$T/kernel.txt) events vs wb-dump $(wc -l <$D/expected-sip.txt); quotes $quotes, NBBO cqs $cqs uqdf $uqdf"
		diff $T/kernel.txt $D/expected-sip.txt | head -10
	fi
}

# Tiny rings, no reader. The ITCH-only capture: every event the engine
# attempts is then one wb-dump prints (PITCH re-announces a SYMBOL whose
# event was dropped, so under overflow it attempts more events than
# wb-dump prints; the ring and line counters still agree, checked too).
scenario_overflow() {
	if ! load ifaces=wbrx ring_slots=64 || ! configure; then
		fail overflow-accounting "could not load with ring_slots=64"
		return
	fi
	expected=$(wc -l <$D/expected-small.txt)
	replay 0 $D/small.pcap
	published=$(rings_sum 5)
	dropped=$(rings_sum 6)
	line_events=$(stat_sum events)
	line_drops=$(stat_sum ring_drops)
	$READ --idle-ms 500 >$T/overflow.txt 2>$T/read.log
	delivered=$(wc -l <$T/overflow.txt)
	if [ "$dropped" -gt 0 ] && [ $((published + dropped)) -eq "$expected" ] &&
	   [ "$delivered" -eq "$published" ] && [ "$line_drops" -eq "$dropped" ] &&
	   [ "$line_events" -eq "$published" ] &&
	   head -n "$delivered" $D/expected-small.txt | cmp -s - $T/overflow.txt; then
		pass overflow-accounting "delivered $delivered + dropped $dropped = $expected events; the delivered ones are the first ones"
	else
		fail overflow-accounting "published $published (line events $line_events) dropped $dropped (line drops $line_drops) delivered $delivered, expected total $expected"
	fi
	unload
	# The multi-feed capture: ring and per-line counters agree.
	load ifaces=wbrx ring_slots=64 && configure && replay 0 $D/feed.pcap
	published=$(rings_sum 5)
	dropped=$(rings_sum 6)
	line_events=$(stat_sum events)
	line_drops=$(stat_sum ring_drops)
	if [ "$dropped" -gt 0 ] && [ "$line_events" -eq "$published" ] && [ "$line_drops" -eq "$dropped" ]; then
		pass overflow-accounting-multifeed "ring published $published = line events, ring dropped $dropped = line ring drops"
	else
		fail overflow-accounting-multifeed "ring published $published vs line events $line_events, dropped $dropped vs line drops $line_drops"
	fi
}

# Subscriptions, the feed map and the trading date change, and the
# statistics are read and reset, while packets flow from both CPUs into the
# same venues, with a reader. Each change takes every venue's lock against
# two packet paths; each read, one venue's at a time. Afterwards the map and
# the subscriptions must be what the last changes made them.
scenario_control_under_traffic() {
	if ! load ifaces=wbrx || ! configure; then
		fail control-under-traffic "could not load"
		return
	fi
	taskset -c 0 /usr/bin/tcpreplay -q -i wbtx --pps=5000 --loop=0 $D/feed.pcap >/dev/null 2>&1 &
	traffic0=$!
	taskset -c 1 /usr/bin/tcpreplay -q -i wbtx --pps=5000 --loop=0 $D/feed-b.pcap >/dev/null 2>&1 &
	traffic1=$!
	$READ --hold 2>/dev/null &
	reader=$!
	i=0
	ok=yes
	while [ $i -lt 8 ]; do
		$SUB del '*' >/dev/null && $SUB add AAPL MSFT SPY >/dev/null &&
		$SUB feeds del 233.49.196.111:26478 && $SUB stats reset &&
		$SUB date 2026-02-19 && cat /proc/wirebook/stats /proc/wirebook/recovery >/dev/null &&
		$SUB feeds add 233.49.196.111:26478 itch nasdaq B >/dev/null && $SUB date clock &&
		$SUB stats --json >/dev/null && $SUB del AAPL MSFT SPY && $SUB add '*' >/dev/null || ok=no
		i=$((i + 1))
	done
	lines=$($SUB feeds list | grep -c ':[0-9]')
	subs=$($SUB list | awk '{ printf "%s ", $1 }')
	kill $traffic0 $traffic1 $reader
	wait $traffic0 $traffic1 $reader 2>/dev/null
	entries=$(grep -c '^[0-9]' $D/feeds.conf)
	# The reader slept in poll() between bursts: the module woke it (only
	# when its sleeping flag was set, so at most once per published batch).
	wakeups=$(rings_sum 8)
	batches=$(rings_sum 7)
	if [ $ok = yes ] && [ "$lines" -eq "$entries" ] && [ "$subs" = "* " ] &&
	   [ "$wakeups" -gt 0 ] && [ "$wakeups" -le "$batches" ] && unload && kernel_clean; then
		pass control-under-traffic "8 rounds of subscribe/unsubscribe/feed del+add/date/stats read+reset under traffic from both CPUs with a reader ($wakeups wakeups for $batches batches); then $lines feed lines and '*' as configured"
	else
		fail control-under-traffic "ok=$ok lines=$lines of $entries subs='$subs' wakeups=$wakeups batches=$batches; $(dmesg | tail -3)"
	fi
}

scenario_rmmod() {
	if ! load ifaces=wbrx || ! configure; then
		fail rmmod-under-traffic "could not load"
		return
	fi
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
}

scenario_device_deletion() {
	if ! load ifaces=wbrx || ! configure; then
		fail device-deletion "could not load"
		return
	fi
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
	before=$(stat_sum feed_frames)
	replay 0 $D/feed1.pcap
	after=$(stat_sum feed_frames)
	# A rename away from the configured name unhooks too.
	$IP link set wbrx down; $IP link set wbrx name wbrx2
	renamed=$(grep -c 'iface wbrx not-hooked' /proc/wirebook/hooks)
	$IP link set wbrx2 name wbrx; $IP link set wbrx up
	if [ "$gone" = 1 ] && [ "$back" = 1 ] && [ "$renamed" = 1 ] && [ "$after" -gt "$before" ] &&
	   unload && kernel_clean; then
		pass device-deletion "unhooked when wbrx was deleted under traffic or renamed, re-hooked when it came back ($before -> $after feed frames)"
	else
		fail device-deletion "gone=$gone back=$back renamed=$renamed frames $before -> $after"
	fi
}

scenario_busy() {
	$IP link add mv0 link wbrx type macvlan mode bridge
	if load ifaces=wbrx 2>$T/busy.log; then
		fail busy-rx-handler "loaded on a device whose rx_handler belongs to macvlan"
	elif dmesg | grep -q 'rx_handler slot is taken' && load ifaces=wbrx tap_fallback=1 &&
	     grep -q 'iface wbrx tap' /proc/wirebook/hooks && configure; then
		replay 0 $D/feed1.pcap
		frames=$(stat_sum feed_frames)
		consumed=$(stat_sum consumed)
		if [ "$frames" -gt 0 ] && [ "$consumed" -eq 0 ]; then
			pass busy-rx-handler "load refused with a clear message; tap_fallback=1 decoded $frames frames without consuming"
		else
			fail busy-rx-handler "tap saw $frames feed frames, consumed $consumed"
		fi
	else
		fail busy-rx-handler "$(cat $T/busy.log) $(dmesg | tail -3)"
	fi
	unload
	$IP link del mv0
}

# GSO super-packets reach the hook when GRO merges datagrams (UDP GRO
# forwarding on) or when a local sender hands veth a GSO packet. The latter
# is deterministic: vm-gso-send sends runs of equal-size datagrams as UDP
# GSO super-packets, and the module must split them back into datagrams;
# the events must still be exactly wb-dump's for the same capture.
scenario_gso() {
	if ! load ifaces=wbrx || ! configure; then
		fail gso-super-packets "could not load"
		return
	fi
	taskset -c 0 /wb/vm-gso-send wbtx $D/small.pcap 2>$T/gso.log
	if [ $? -eq 3 ]; then
		skip gso-super-packets "$(cat $T/gso.log)"
		return
	fi
	$READ --idle-ms 1000 >$T/kernel.txt 2>$T/read.log
	gso=$(stat_sum gso_frames)
	segments=$(stat_sum gso_segments)
	undecoded=$(stat_sum gso_undecoded)
	line_gso=$(stat_sum gso_packets)
	sent=$(sed -n 's/.*: \([0-9]*\) super-packets of \([0-9]*\) datagrams/\1 \2/p' $T/gso.log)
	if [ "$gso" -gt 0 ] && [ "$sent" = "$gso $segments" ] && [ "$line_gso" -eq "$gso" ] &&
	   [ "$undecoded" -eq 0 ] && cmp -s $T/kernel.txt $D/expected-small.txt; then
		pass gso-super-packets "$gso super-packets split into $segments datagrams; $(wc -l <$T/kernel.txt) events identical to wb-dump's"
	else
		fail gso-super-packets "hook saw $gso super-packets / $segments segments (sent: $sent), undecoded $undecoded, line gso $line_gso; $(wc -l <$T/kernel.txt) events vs $(wc -l <$D/expected-small.txt); $(cat $T/gso.log)"
		diff $T/kernel.txt $D/expected-small.txt | head -10
	fi
}

# wirebookd --kernel consumes the module's rings into its books: they must
# equal the books wirebookd built from the same capture in user space.
scenario_books() {
	if ! [ -x /wb/wirebookd ] || ! [ -s $D/expected-books.txt ]; then
		skip books-match "wirebookd or the host's books are missing"
		return
	fi
	if ! load ifaces=wbrx || ! configure; then
		fail books-match "could not load"
		return
	fi
	/wb/wirebookd --kernel --feeds $D/feeds.conf --no-pin --shm vmbook --force \
		--expected-orders 100000 >$T/wirebookd.log 2>&1 &
	wbd=$!
	usleep 500000
	replay 0 $D/feed1.pcap
	replay 1 $D/feed2.pcap
	# Until the daemon has consumed every ring (head == tail), at most 10 s.
	i=0
	while [ $i -lt 50 ] && ! awk 'NR > 1 && $3 != $4 { busy = 1 } END { exit busy }' /proc/wirebook/rings; do
		usleep 200000
		i=$((i + 1))
	done
	usleep 500000
	/wb/wb-book --shm vmbook --once --depth 5 $(cat $D/book-symbols.txt) 2>&1 |
		sed 's/ updates [0-9]*//' >$T/books.txt
	kill $wbd
	wait $wbd 2>/dev/null
	if cmp -s $T/books.txt $D/expected-books.txt; then
		pass books-match "wirebookd --kernel books of $(cat $D/book-symbols.txt) equal wirebookd --pcap's ($(grep -c '^==' $T/books.txt) books, depth 5)"
	else
		fail books-match "wirebookd --kernel books differ from wirebookd --pcap's"
		diff $T/books.txt $D/expected-books.txt | head -20
		tail -5 $T/wirebookd.log
	fi
}

# Until wirebookd says it runs (its recovery groups are enabled by then), at most 30 s.
wait_wirebookd() { # log
	i=0
	while [ $i -lt 150 ] && ! grep -q '^wirebookd: kernel ' "$1"; do
		usleep 200000
		i=$((i + 1))
	done
}

# Gap recovery in kernel mode: a Nasdaq day that lost 1 % of its packets on
# both lines goes through the module, whose stream waits behind each hole
# while wirebookd --kernel --recovery gets the missing packets from
# wb-recoveryd (serving the whole day on loopback) and hands them to the
# module. The books must be the whole day's as wirebookd --pcap built them.
# One venue's recovery: NAME VENUE STEM [wb-recoveryd options] -- [recovery.conf options].
# $D/STEM-whole.pcap is served, $D/STEM-lossy.pcap replayed; the books must
# be $D/expected-STEM-books.txt, and $D/lossy-STEM-books.txt must differ.
recovery_run() {
	name=$1; venue=$2; stem=$3; shift 3
	server_args=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do server_args="$server_args $1"; shift; done
	[ $# -gt 0 ] && shift
	if cmp -s $D/expected-$stem-books.txt $D/lossy-$stem-books.txt; then
		fail $name "the lossy day's books equal the whole day's without recovery: nothing to recover"
		return
	fi
	if ! load ifaces=wbrx || ! configure; then
		fail $name "could not load"
		return
	fi
	/wb/wb-recoveryd --pcap $D/$stem-whole.pcap --venue $venue --listen 127.0.0.1:0 \
		--feeds $D/feeds.conf $server_args 2>$T/recoveryd.log &
	server=$!
	port=
	i=0
	while [ $i -lt 100 ] && [ -z "$port" ]; do
		usleep 100000
		port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' $T/recoveryd.log)
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		fail $name "wb-recoveryd did not start: $(cat $T/recoveryd.log)"
		kill $server 2>/dev/null
		unload
		return
	fi
	echo "$venue $(echo $server_args | grep -q grp && echo grp || echo mold) 127.0.0.1:$port $*" \
		>$T/recovery.conf
	/wb/wirebookd --kernel --recovery $T/recovery.conf --feeds $D/feeds.conf --no-pin \
		--stats 1 --shm vmrec --force --expected-orders 100000 >$T/wirebookd-rec.log 2>&1 &
	wbd=$!
	wait_wirebookd $T/wirebookd-rec.log
	replay 0 $D/$stem-lossy.pcap
	# Until the daemon has consumed every ring and no stream waits, at most 20 s.
	i=0
	while [ $i -lt 100 ]; do
		usleep 200000
		i=$((i + 1))
		awk 'NR > 1 && $3 != $4 { busy = 1 } END { exit busy }' /proc/wirebook/rings || continue
		[ -e /dev/shm/vmrec ] && /wb/wb-book --shm vmrec --once AAPL 2>&1 | grep -q RECOVERING || break
	done
	usleep 500000
	/wb/wb-book --shm vmrec --once --depth 5 $(cat $D/book-symbols.txt) 2>&1 |
		sed 's/ updates [0-9]*//' >$T/rec-books.txt
	kill $wbd
	wait $wbd 2>/dev/null
	kill $server
	wait $server 2>/dev/null
	line=$(grep "^recovery $venue (" $T/wirebookd-rec.log | tail -1)
	gaps=$(echo "$line" | sed -n 's/.*; gaps \([0-9]*\),.*/\1/p')
	filled=$(echo "$line" | sed -n 's/.*, filled \([0-9]*\),.*/\1/p')
	unrec=$(echo "$line" | sed -n 's/.*, unrecoverable \([0-9]*\),.*/\1/p')
	if cmp -s $T/rec-books.txt $D/expected-$stem-books.txt && [ "${gaps:-0}" -gt 0 ] &&
	   [ "$gaps" = "$filled" ] && [ "$unrec" = 0 ] && unload && kernel_clean; then
		pass $name "wirebookd --kernel --recovery over a 1 % lossy $venue replay ($(cut -d' ' -f2 $T/recovery.conf)): $gaps gaps, $filled filled, 0 unrecoverable; books of $(cat $D/book-symbols.txt) equal wirebookd --pcap's on the whole day"
	else
		fail $name "gaps=$gaps filled=$filled unrecoverable=$unrec; $(tail -3 $T/wirebookd-rec.log)"
		diff $T/rec-books.txt $D/expected-$stem-books.txt | head -20
		grep '^recovery' $T/wirebookd-rec.log | tail -12
		tail -3 $T/recoveryd.log
		unload
	fi
}

scenario_recovery() {
	if ! [ -x /wb/wb-recoveryd ] || ! [ -s $D/expected-rec-books.txt ]; then
		skip recovery "wb-recoveryd or the host's books are missing"
		return
	fi
	recovery_run recovery nasdaq rec
	if [ -s $D/rec-pitch-whole.pcap ]; then
		recovery_run recovery-pitch bzx rec-pitch --service grp --reply-to 127.0.0.1:30999 \
			--user WB01 --password recovery -- gap=127.0.0.1:30999 user=WB01 password=recovery
	fi
	# A client that dies while the module's stream waits for it (a service
	# that never answers, retried for 100 s): closing its device file takes
	# the module's group out of recovery mode, so what it held is decoded
	# behind an ordinary GAP instead of waiting for good.
	if ! load ifaces=wbrx || ! configure; then
		fail recovery-client-gone "could not load"
		return
	fi
	echo "nasdaq mold 127.0.0.1:9 timeout=1000 retries=100" >$T/silent.conf
	/wb/wirebookd --kernel --recovery $T/silent.conf --feeds $D/feeds.conf --no-pin \
		--shm vmrec --force --expected-orders 100000 >$T/wirebookd-silent.log 2>&1 &
	wbd=$!
	wait_wirebookd $T/wirebookd-silent.log
	replay 0 $D/rec-lossy.pcap
	usleep 1000000
	published=$(rings_sum 5)
	gaps=$(stat_sum gaps)
	kill -9 $wbd
	wait $wbd 2>/dev/null
	usleep 1000000
	published_after=$(rings_sum 5)
	gaps_after=$(stat_sum gaps)
	if [ "$published_after" -gt "$published" ] && [ "$gaps_after" -gt "$gaps" ] && unload &&
	   kernel_clean; then
		pass recovery-client-gone "kill -9 of the client: the module declared $((gaps_after - gaps)) gaps and decoded what it held ($((published_after - published)) events)"
	else
		fail recovery-client-gone "events published $published -> $published_after, gaps $gaps -> $gaps_after; $(tail -3 $T/wirebookd-silent.log)"
	fi
}

scenario_malformed() {
	if ! load ifaces=wbrx hold_us=0 || ! configure || ! $SUB date 2026-02-19 >$T/date.log 2>&1; then
		fail malformed-packets "could not load"
		return
	fi
	replay 0 $D/malformed.pcap
	replay 1 $D/malformed.pcap
	$READ --idle-ms 1000 >$T/malformed.txt 2>$T/read.log
	errors=$(stat_sum decode_errors)
	if [ "$errors" -gt 0 ] && unload && kernel_clean; then
		pass malformed-packets "$(cat $D/malformed.count) frames twice: $errors decode errors counted, no WARN/BUG/Oops"
	else
		fail malformed-packets "decode errors $errors; $(dmesg | grep -E 'WARNING|BUG|Oops' | head -3)"
	fi
	# What the module made of the garbage is what wb-dump made of it.
	if cmp -s $T/malformed.txt $D/expected-malformed.txt; then
		pass malformed-equal-wb-dump "$(wc -l <$T/malformed.txt) events from the malformed frames identical to wb-dump's"
	else
		fail malformed-equal-wb-dump "$(wc -l <$T/malformed.txt) events vs wb-dump $(wc -l <$D/expected-malformed.txt)"
		diff $T/malformed.txt $D/expected-malformed.txt | head -10
	fi
}

# NYSE and Arca over XDP: the module decodes every channel as its own
# stream (A/B arbitration, gaps) with the user-space code; with every
# symbol and with a subset (the SymbolIndex filter in the kernel), its
# events are wb-dump's.
scenario_xdp() {
	if ! load ifaces=wbrx hold_us=0 || ! configure; then
		fail xdp-equal-wb-dump "could not load and configure"
		return
	fi
	replay 0 $D/xdp.pcap
	$KREAD --idle-ms 1500 >$T/kernel-xdp.txt 2>$T/read.log
	got=$(wc -l <$T/kernel-xdp.txt)
	if cmp -s $T/kernel-xdp.txt $D/expected-xdp.txt && grep -q ' nyse/' $T/kernel-xdp.txt &&
	   grep -q ' arca/' $T/kernel-xdp.txt && grep -q ' GAP ' $T/kernel-xdp.txt; then
		pass xdp-equal-wb-dump "$got NYSE and Arca events over $(grep -c '^[^#]* xdp ' $D/feeds.conf) XDP lines identical to wb-dump's, gaps included"
	else
		fail xdp-equal-wb-dump "module $got events vs wb-dump $(wc -l <$D/expected-xdp.txt); $(cat $T/read.log)"
		diff $T/kernel-xdp.txt $D/expected-xdp.txt | head -20
	fi
	unload
	if ! load ifaces=wbrx hold_us=0 || ! $SUB feeds load $D/feeds.conf >/dev/null ||
	   ! $SUB add $(cat $D/symbols.txt) >/dev/null; then
		fail xdp-filtered-equal-wb-dump "could not load and configure"
		return
	fi
	replay 0 $D/xdp.pcap
	$KREAD --idle-ms 1500 >$T/kernel-xdp.txt 2>$T/read.log
	got=$(wc -l <$T/kernel-xdp.txt)
	filtered=$(stat_sum filtered)
	if cmp -s $T/kernel-xdp.txt $D/expected-xdp-symbols.txt && [ "$filtered" -gt 0 ]; then
		pass xdp-filtered-equal-wb-dump "$got events for $(cat $D/symbols.txt) identical to wb-dump --symbols; $filtered messages filtered by SymbolIndex"
	else
		fail xdp-filtered-equal-wb-dump "module $got events vs wb-dump $(wc -l <$D/expected-xdp-symbols.txt), filtered $filtered"
		diff $T/kernel-xdp.txt $D/expected-xdp-symbols.txt | head -10
	fi
}

# A reader asleep in poll() on empty rings is woken by the first packet:
# the module publishes into an empty ring, sees the reader's sleeping flag
# and wakes the device's wait queue. The reader waits at most 60 s, so
# returning at all with the capture's first event proves the wakeup.
scenario_poll_wakeup() {
	if ! load ifaces=wbrx || ! configure; then
		fail poll-wakeup "could not load"
		return
	fi
	$READ --wake-ms 60000 >$T/wake.txt 2>$T/wake.log &
	reader=$!
	i=0
	until grep -q blocking $T/wake.log && [ "$(cut -d' ' -f3 /proc/$reader/stat 2>/dev/null)" = S ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || break
		usleep 100000
	done
	# Past its message the reader is on its way into poll(): let it get there.
	usleep 500000
	wchan=$(cat /proc/$reader/wchan 2>/dev/null)
	before=$(rings_sum 8)
	replay 0 $D/feed.pcap --limit=1
	wait $reader
	rc=$?
	wakeups=$(rings_sum 8)
	first=$(head -1 $D/expected.txt)
	if [ $rc -eq 0 ] && [ "$(sed 's/^woke after [0-9]* ms: //' $T/wake.txt)" = "$first" ] &&
	   [ "$before" -eq 0 ] && [ "$wakeups" -ge 1 ] && kernel_clean; then
		pass poll-wakeup "reader asleep in poll (wchan ${wchan:-?}) woken by one packet: $(cut -c1-90 $T/wake.txt)"
	else
		fail poll-wakeup "rc=$rc wakeups $before->$wakeups wchan=${wchan:-?} $(cat $T/wake.log $T/wake.txt | tail -3); want '$first'"
	fi
}

# ---- run ----------------------------------------------------------------------

echo 1000000 >/proc/sys/net/core/netdev_max_backlog
only=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^vmtest\.only=//p' | tr ',' ' ')
veth_up
for s in control equal concurrent same_venue padded two_ifaces filtered sip overflow control_under_traffic rmmod device_deletion busy gso books recovery malformed xdp poll_wakeup; do
	if [ -n "$only" ] && ! echo " $only " | grep -q " $s "; then
		continue
	fi
	scenario_$s
	unload
done

if kernel_clean; then
	pass kernel-log-clean "no WARN, BUG, Oops or call trace in dmesg"
else
	fail kernel-log-clean "$(dmesg | grep -E -m3 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:')"
fi
echo "VMTEST-DMESG-BEGIN"
dmesg | grep -E 'wirebook|WARNING|BUG|Oops|RIP' | tail -60
echo "VMTEST-DMESG-END"
