#!/usr/bin/env bash
# Issue 13: wirebookd killed with SIGKILL mid-day and started again joins
# late by GLIMPSE snapshot. A generated Nasdaq day is replayed live
# (tcpreplay, A and B lines) through a veth pair into a network namespace,
# where wirebookd captures it (--iface) with --recovery (mold gap fill and
# a glimpse snapshot, both from wb-recoveryd in the namespace). Half way,
# while the replay goes on, wirebookd is killed -9 and a new one started:
# its first packet is far past sequence 1, so it takes the snapshot (the
# book after message S, about where the day was when it was killed), fills
# what lies between the snapshot and its first packet by re-request, and
# applies the rest. At the end its venue books equal the whole day's. The
# time from the restart to the book being live again (wb-book no longer
# says RECOVERING) is printed, not asserted.
#
# Needs root (namespace, veth) and tcpreplay; says SKIP otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v tcpreplay >/dev/null || ! command -v ip >/dev/null; then
	echo "SKIP $NAME: needs root, ip and tcpreplay"
	finish
fi
ns=wbsr$$ va=wbsra$$ vb=wbsrb$$
cleanup() {
	cleanup_common
	ip link del "$va" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$ns" && ip link add "$va" type veth peer name "$vb" netns "$ns" &&
	ip link set "$va" up && ip netns exec "$ns" ip link set lo up &&
	ip netns exec "$ns" ip link set "$vb" up || { bad "cannot make the veth pair"; finish; }
# Not a shell function: bg's $! must be the process itself, for kill -9.
inns=(ip netns exec "$ns")

"$B/wb-gen" -q -p day -n 60000 --symbols 200 -s 5 --ab --feeds "$ROOT/feeds.conf" --venues nasdaq \
	-o "$T/day.pcap" || { bad "wb-gen failed"; finish; }
"$B/wirebookd" --pcap "$T/day.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-whole" --force --no-pin \
	--exit-at-eof >"$T/whole.out" 2>"$T/whole.err" || bad "the whole day's run failed"
read -r _ open close _ _ _ < <(python3 "$ROOT/scripts/itch-pcap.py" points "$T/day.pcap")
kill_at=$(((open + close) / 2))
python3 "$ROOT/scripts/itch-pcap.py" head "$T/day.pcap" "$T/first.pcap" "$kill_at"
python3 "$ROOT/scripts/itch-pcap.py" cut "$T/day.pcap" "$T/rest.pcap" "$kill_at"

# serve NAME ARGS...: wb-recoveryd in the namespace; its port in $port.
serve() {
	local name=$1; shift
	bg "${inns[@]}" "$B/wb-recoveryd" --pcap "$T/day.pcap" --venue nasdaq --listen 127.0.0.1:0 \
		--feeds "$ROOT/feeds.conf" "$@" 2>"$T/$name.log"
	wait_for 30 grep -q 'serving' "$T/$name.log" || { bad "wb-recoveryd $name did not start"; finish; }
	port=$(sed -n 's/.*on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/$name.log")
}
serve mold
echo "nasdaq mold 127.0.0.1:$port" >"$T/recovery.conf"
# GLIMPSE answers with the book as of now: a little past the kill.
serve glimpse --service glimpse --snapshot-at $((kill_at + 2000)) --user WB0001 --password restart
echo "nasdaq glimpse 127.0.0.1:$port user=WB0001 password=restart" >>"$T/recovery.conf"

start_wbd() { # LOG
	bg "${inns[@]}" "$B/wirebookd" --iface "$vb" --feeds "$ROOT/feeds.conf" --shm "$SHM" --force --no-pin \
		--recovery "$T/recovery.conf" >"$1.out" 2>"$1.err"
	wbd=$!
	wait_for 10 test -e "/dev/shm/$SHM" || bad "wirebookd did not publish its book ($(tail -2 "$1.err"))"
}
start_wbd "$T/wbd1"
sleep 0.5
tcpreplay -q -i "$va" --pps 10000 "$T/first.pcap" >/dev/null 2>&1 || bad "tcpreplay of the morning failed"
bg tcpreplay -q -i "$va" --pps 10000 "$T/rest.pcap" >/dev/null 2>&1
replay=$!
sleep 0.3
kill -KILL "$wbd"
wait "$wbd" 2>/dev/null
restart=$(date +%s%N)
start_wbd "$T/wbd2"
# Live again: the book says RECOVERING while the snapshot is taken, then
# nothing about its health. The recovery may be over before a poll sees it.
health() { "$B/wb-book" --shm "$SHM" --once AAPL 2>&1; }
seen=no
for _ in $(seq 400); do
	health | grep -qi 'recovering' && { seen=yes; break; }
	sleep 0.005
done
if wait_for 30 sh -c "'$B/wb-book' --shm '$SHM' --once AAPL 2>&1 | grep -qi 'recovering\|stale\|retired' && exit 1 || exit 0"; then
	ms=$((($(date +%s%N) - restart) / 1000000))
	ok "the restarted wirebookd is live again ${ms} ms after the restart (RECOVERING seen: $seen; the bound: 30 s)"
else
	bad "the restarted wirebookd did not become live within 30 s"
fi
wait "$replay"
sleep 0.5
kill -TERM "$wbd"
wait "$wbd" 2>/dev/null
grep '^recovery nasdaq' "$T/wbd2.out" | sed 's/^/  /'
echo "  restart to in sequence, as the client timed it (its longest fill): $(sed -n 's/^recovery nasdaq (mold.* max \([0-9a-z]*\) .*/\1/p' "$T/wbd2.out")"
check "the restart took one snapshot" grep -q '^recovery nasdaq snapshot (.*; snapshots 1,' "$T/wbd2.out"
check "nothing was left unrecovered" grep -q '^recovery nasdaq (mold.*unrecoverable 0,' "$T/wbd2.out"
want=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/whole.out")
got=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/wbd2.out")
[ -n "$want" ] && [ "$want" = "$got" ] && ok "the venue books equal the whole day's ($got)" ||
	bad "venue books $got, the whole day's $want"
finish
