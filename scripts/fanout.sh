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
# A paced replay keeps the capture's shape (--speed): the generated day
# idles for hours and comes in bursts, so the idle stretches are cut to
# IDLE_S capture seconds (--skip-idle) and the pace is set so that the
# rest averages RATE; bursts within it still run faster (the table says
# the busiest 10 ms). FANOUT_KEEP=1 keeps the files. With fewer than 4
# cores the daemons run --no-pin (pinned, two daemons and the server on
# the same cores starve each other). Figures from a shared or busy machine
# mean little: say what ran beside.
set -eu
B=${1:-build}
MESSAGES=${2:-200000}
shift $(( $# > 2 ? 2 : $# ))
RATES=("$@")
[ ${#RATES[@]} -gt 0 ] || RATES=(100000 1000000)
IDLE_S=${IDLE_S:-0.00001}
command -v nats-server >/dev/null || { echo "fanout: no nats-server (scripts/deps.sh)"; exit 1; }
T=$(mktemp -d /tmp/wb-fanout.XXXXXX)
server_pid=
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; [ -n "${FANOUT_KEEP:-}" ] && echo "fanout: kept $T" || rm -rf "$T"; rm -f /dev/shm/wbfanout-$$-*' EXIT
pin=()
[ "$(nproc)" -lt 4 ] && pin=(--no-pin)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nats-server -js -a 127.0.0.1 -p "$port" -sd "$T/store" > "$T/server.log" 2>&1 &
server_pid=$!
sleep 1
"$B/wb-gen" -q -p day -n "$MESSAGES" --venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf -o "$T/day.pcap"
# pcap_shape [RATE EVENTS]: the capture's span with idle stretches cut to
# IDLE_S, its packets, and (paced at RATE for EVENTS events) the packets
# of its busiest 10 ms of replay.
pcap_shape() {
	python3 - "$T/day.pcap" "$IDLE_S" "${1:-0}" "${2:-1}" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb'); cap, rate, events = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
div = 1e9 if struct.unpack('<I', f.read(24)[:4])[0] == 0xa1b23c4d else 1e6
t = []
while True:
    h = f.read(16)
    if len(h) < 16: break
    s, frac, il, _ = struct.unpack('<IIII', h); f.seek(il, 1); t.append(s + frac / div)
x = [0.0]
for a, b in zip(t, t[1:]):
    x.append(x[-1] + min(b - a, cap))
span, peak, j = x[-1], 0, 0
win = span * 0.01 * rate / events  # 10 ms of replay, in cut capture time
for i in range(len(x)):
    while x[i] - x[j] > win: j += 1
    peak = max(peak, i - j + 1)
print(span, len(t), peak)
PY
}
read -r span packets _ < <(pcap_shape)

# run NAME [origin options]: one origin and one source; their figures in $T/NAME.*
run() {
	local name=$1; shift
	"$B/wirebookd" --source "nats://127.0.0.1:$port" --nats-instance "$name" --shm "wbfanout-$$-s$name" \
		"${pin[@]}" --exit-at-eof > "$T/s-$name.out" 2> "$T/s-$name.err" &
	local spid=$! t0 t1
	t0=$(date +%s.%N)
	"$B/wirebookd" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbfanout-$$-o$name" --exit-at-eof \
		"${pin[@]}" --publish "nats://127.0.0.1:$port" --nats-instance "$name" "$@" \
		> "$T/o-$name.out" 2> "$T/o-$name.err" || echo "fanout: $name: the origin failed: $(tail -2 "$T/o-$name.err")"
	wait "$spid" || echo "fanout: $name: the source failed: $(tail -2 "$T/s-$name.err")"
	t1=$(date +%s.%N)
	python3 - "$name" "$t0" "$t1" "$T/o-$name.out" "$T/s-$name.out" "${target:-}" "${peak:-}" <<'PY'
import re, sys
name, t0, t1, o, s, target, peak = sys.argv[1:8]
o, s = open(o).read(), open(s).read()
def num(pat, text, conv=int, default=None):
    m = re.findall(pat, text)
    return conv(m[-1]) if m else default
pub = num(r'nats publish:.*?events (\d+),', o, default=0)
lost = num(r'nats publish:.*?LOST (\d+);', o, default=-1)
got = num(r'nats source:.*?events (\d+),', s, default=0)
lat = re.findall(r'p50 ([\d.]+) us, p99 ([\d.]+) us, p99.9 ([\d.]+) us; (\d+) events/s over ([\d.]+) s', s)
same = [l for l in o.splitlines() if l.startswith('books: checksum venue')] == \
       [l for l in s.splitlines() if l.startswith('books: checksum venue')] and 'checksum' in o
wall = float(t1) - float(t0)
rate = f"{int(lat[-1][3]):,}" if lat else f"{int(got / wall):,} (wall)"
p = [f"{float(v) / 1000:.1f}" for v in lat[-1][:3]] if lat else ["-"] * 3
print(f"| {name} | {target or 'unpaced'} | {peak or '-'} | {pub:,} | {got:,} | {lost} | {rate} | {p[0]} | {p[1]} | {p[2]} | {'yes' if same else 'NO'} |")
PY
}

echo "fanout: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); daemons ${pin[*]:-pinned}; the day: $MESSAGES messages, $packets packets, ${span%.*} s of capture time with idle stretches cut to $IDLE_S s"
echo
echo "| run | target events/s | busiest 10 ms, events/s | published | applied | lost | events/s applied | p50 ms | p99 ms | p99.9 ms | books equal |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
# Unpaced: as fast as the origin goes (--speed at its most, so that the
# receive times are now's and the latency is measured: the backlog's).
target= peak= run unpaced --speed 1000000 --skip-idle "$IDLE_S"
events=$(sed -n 's/^nats publish:.*, events \([0-9]*\),.*/\1/p' "$T/o-unpaced.out" | tail -1)
for rate in "${RATES[@]}"; do
	# the replay lasts events/rate s: speed = span / that
	speed=$(python3 -c "print(max(1e-6, min(1e6, $rate * $span / $events)))")
	read -r _ _ peak10 < <(pcap_shape "$rate" "$events")
	peak=$(python3 -c "print(f'{int($peak10 * $events / $packets / 0.01):,}')")
	target=$(python3 -c "print(f'{$rate:,}')") run "r$rate" --speed "$speed" --skip-idle "$IDLE_S"
done
echo
echo "(events/s applied: over the span the source applied them; latency: the origin's receive time"
echo " to the source's ring, per applied chunk, log2 buckets of 4 (a figure is its bucket's lower"
echo " bound); unpaced: the day as fast as the origin replays it, its latency the backlog's; the"
echo " busiest 10 ms: the capture's packets at that pace times the day's events per packet)"
