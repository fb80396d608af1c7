#!/usr/bin/env bash
# make fanout (issue 26): events per second carried from the origin's
# ring to a remote book over NATS JetStream, and the added latency (the
# origin's receive time to the --source's ring, per applied chunk) p50,
# p99, p99.9; a benchmark, not a test: both daemons and the server on this
# machine (one clock), a temporary nats-server -js on a free loopback port.
#
#   scripts/fanout.sh [BUILD_DIR] [MESSAGES] [RATE...]
#
# First the generated day unpaced (as fast as it goes: the sustained
# rate), then paced replays at each RATE events/s (default 100000 1000000).
# Figures from a shared or busy machine mean little: say what ran beside.
set -eu
B=${1:-build}
MESSAGES=${2:-200000}
shift $(( $# > 2 ? 2 : $# ))
RATES=("$@")
[ ${#RATES[@]} -gt 0 ] || RATES=(100000 1000000)
command -v nats-server >/dev/null || { echo "fanout: no nats-server (scripts/deps.sh)"; exit 1; }
T=$(mktemp -d /tmp/wb-fanout.XXXXXX)
server_pid=
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; rm -rf "$T" /dev/shm/wbfanout-$$-*' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nats-server -js -a 127.0.0.1 -p "$port" -sd "$T/store" > "$T/server.log" 2>&1 &
server_pid=$!
sleep 1
"$B/wb-gen" -q -p day -n "$MESSAGES" --venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf -o "$T/day.pcap"
span=$(python3 - "$T/day.pcap" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb'); magic = struct.unpack('<I', f.read(24)[:4])[0]
div = 1e9 if magic == 0xa1b23c4d else 1e6
first = last = None
while True:
    h = f.read(16)
    if len(h) < 16: break
    s, us, il, _ = struct.unpack('<IIII', h); f.seek(il, 1)
    t = s + us / div; first = t if first is None else first; last = t
print(last - first)
PY
)

# run NAME [origin options]: one origin and one source, the source's figures
run() {
	local name=$1; shift
	"$B/wirebookd" --source "nats://127.0.0.1:$port" --nats-instance "$name" --shm "wbfanout-$$-s$name" \
		--exit-at-eof > "$T/s-$name.out" 2> "$T/s-$name.err" &
	local spid=$!
	"$B/wirebookd" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbfanout-$$-o$name" --exit-at-eof \
		--publish "nats://127.0.0.1:$port" --nats-instance "$name" "$@" > "$T/o-$name.out" 2> "$T/o-$name.err"
	wait "$spid"
	printf '%-24s %s\n' "$name" "$(grep '^nats source latency' "$T/s-$name.out" | sed 's/^nats source latency //')"
	grep -h '^nats publish' "$T/o-$name.out" | sed 's/^/    /'
	[ "$(grep 'checksum venue' "$T/o-$name.out")" = "$(grep 'checksum venue' "$T/s-$name.out")" ] ||
		echo "    BOOKS DIFFER"
}

run unpaced
events=$(sed -n 's/^nats publish:.*, events \([0-9]*\),.*/\1/p' "$T/o-unpaced.out")
echo "($events events over a ${span%.*} s day; the unpaced row's latency is the backlog's, not a path's)"
for rate in "${RATES[@]}"; do
	speed=$(python3 -c "print(max(1e-6, min(1e6, $rate * $span / $events)))")
	run "r$rate" --speed "$speed"
done
