#!/usr/bin/env bash
# Per-feed latency, end to end: replay a multi-feed capture at a chosen rate
# into wirebookd and summarize the latency logs it writes.
#
# Default (this machine, no NIC needed): two network namespaces joined by a
# veth pair; wirebookd captures on one end (user-space AF_PACKET), tcpreplay
# sends on the other. --iface runs the same measurement on a real server's
# NIC, --kernel through the kernel module (runbook:
# latency-scripts/README.md). Needs root (namespaces, raw sockets).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${WB_BUILD:-$repo/build}

usage() {
	cat <<EOF
usage: scripts/latency.sh [options]

Replay a capture at a chosen rate into wirebookd --latency-dir, stop it, and
print the per-feed latency table (latency-scripts/summarize).

Rate (one of; default --mps 100000):
  --mps N             source messages per second (converted to packets/s from
                      the capture's own messages per packet)
  --pps N             packets per second (tcpreplay --pps)
  --mbps N            megabits per second (tcpreplay --mbps)
  --multiplier X      X times the capture's recorded pace (tcpreplay --multiplier)
  --topspeed          as fast as tcpreplay can

Input:
  --seconds S         length of the generated capture at the chosen rate
                      (default 10; with --mps only)
  --messages N        order messages to generate (default: mps x seconds)
  --pcap FILE         replay FILE instead of generating one with wb-gen
  --feeds FILE        feed map for wb-gen and wirebookd (default: feeds.conf)
  --gen-args "ARGS"   wb-gen arguments (default: "--pitch --xdp --max-payload 200":
                      Nasdaq ITCH, Cboe PITCH for BZX, BYX, EDGX, EDGA and the NYSE
                      Integrated Feed (XDP) for NYSE and Arca over their channels,
                      about 3 messages per packet, like the real feeds)
  --loop N            replay the capture N times (tcpreplay --loop)

Daemon and output:
  --out DIR           latency directory (default /tmp/wb-latency-<rate>-<time>)
  --cpus LIST         builder cpus (wirebookd --cpus)
  --daemon-args "ARGS" extra wirebookd arguments (e.g. --busy-poll)
  --no-latency        run without --latency-dir (overhead comparison)
  --plot              also write PNGs with latency-scripts/plot
  --text              also write latency_<feed>.txt with wb-latency-text

Real server (runbook in latency-scripts/README.md):
  --iface IF          the NIC the feed arrives on, instead of a veth pair:
                      wirebookd captures there (user space, AF_PACKET)
  --kernel            use the kernel module (wirebookd --kernel) instead of
                      user-space capture (needs --iface)
  --replay-iface IF   send the capture from this local port (cabled to --iface
                      or to the same switch); without it, nothing is replayed
                      and the run lasts --seconds of live traffic
  -h, --help
EOF
}

rate_kind=mps rate=100000 seconds=10 messages= pcap= feeds=$repo/feeds.conf
gen_args="--pitch --xdp --max-payload 200" loop=1 out= cpus= daemon_args= latency=1 plot=0 text=0
kernel=0 iface= replay_iface=

while [ $# -gt 0 ]; do
	case $1 in
	--mps|--pps|--mbps|--multiplier) rate_kind=${1#--}; rate=${2:?$1 needs a value}; shift ;;
	--topspeed) rate_kind=topspeed rate= ;;
	--seconds) seconds=${2:?}; shift ;;
	--messages) messages=${2:?}; shift ;;
	--pcap) pcap=${2:?}; shift ;;
	--feeds) feeds=${2:?}; shift ;;
	--gen-args) gen_args=${2?}; shift ;;
	--loop) loop=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	--cpus) cpus=${2:?}; shift ;;
	--daemon-args) daemon_args=${2?}; shift ;;
	--no-latency) latency=0 ;;
	--plot) plot=1 ;;
	--text) text=1 ;;
	--kernel) kernel=1 ;;
	--iface) iface=${2:?}; shift ;;
	--replay-iface) replay_iface=${2:?}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "latency.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

die() { echo "latency.sh: $*" >&2; exit 1; }
log() { echo "latency.sh: $*" >&2; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, raw sockets, tcpreplay)"
for t in wirebookd wb-gen wb-dump; do
	[ -x "$build/$t" ] || die "$build/$t missing: run make first"
done
command -v tcpreplay >/dev/null || die "tcpreplay missing: apt-get install tcpreplay (scripts/deps.sh)"
[ -r "$feeds" ] || die "feed map $feeds not readable"
# No --iface: a veth pair on this machine. With one: that NIC, as it is.
veth=0
[ -z "$iface" ] && veth=1
[ -n "$replay_iface" ] && [ $veth -eq 1 ] && die "--replay-iface needs --iface"
[ -n "$iface" ] && [ $kernel -eq 0 ] && [ ! -e "/sys/class/net/$iface" ] && die "no interface $iface"
if [ $kernel -eq 1 ]; then
	[ -n "$iface" ] || die "--kernel needs --iface (the NIC the feed arrives on)"
	[ -e "/sys/class/net/$iface" ] || die "no interface $iface"
	"$build/wirebookd" --help 2>&1 | grep -q -- '--kernel' \
		|| die "this wirebookd has no --kernel source (the module's rings) yet"
	[ -e /dev/wirebook ] || die "/dev/wirebook missing: load the module (latency-scripts/README.md)"
fi
case $rate_kind in
mps|pps|mbps|multiplier)
	[[ $rate =~ ^[0-9]+([.][0-9]+)?$ ]] && [ "$rate" != 0 ] || die "--$rate_kind needs a positive number"
esac

stamp=$(date -u +%Y%m%dT%H%M%S)
out=${out:-/tmp/wb-latency-${rate_kind}${rate}-$stamp}
mkdir -p "$out"
work=$(mktemp -d /tmp/wb-latency-work.XXXXXX)
ns_rx=wblat-rx-$$ ns_tx=wblat-tx-$$
daemon_pid=

cleanup() {
	set +e
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	if [ $veth -eq 1 ]; then
		ip netns del "$ns_rx" 2>/dev/null
		ip netns del "$ns_tx" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the capture --------------------------------------------------------
if [ -z "$pcap" ] && { [ $veth -eq 1 ] || [ -n "$replay_iface" ]; }; then
	if [ -z "$messages" ]; then
		if [ "$rate_kind" = mps ]; then
			messages=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { printf "%d", r * s }')
		else
			messages=1000000
		fi
	fi
	pcap=$work/latency.pcap
	log "generating $messages messages: wb-gen $gen_args"
	# shellcheck disable=SC2086
	"$build/wb-gen" -o "$pcap" -n "$messages" --feeds "$feeds" $gen_args -q \
		|| die "wb-gen failed"
fi

# Packets and unique source messages in the capture: converts --mps to packets/s.
capture_counts() {
	"$build/wb-dump" --feeds "$feeds" --stats -q "$1" 2>&1 | awk '
		/^# frames/ { frames = $3 }
		$2 == "messages" { msgs += $3 }
		END { printf "%d %d\n", frames, msgs }'
}

replay_args=()
if [ -n "$pcap" ]; then
	read -r frames msgs < <(capture_counts "$pcap")
	[ "${frames:-0}" -gt 0 ] && [ "${msgs:-0}" -gt 0 ] \
		|| die "$pcap: no packets of a mapped feed (check --feeds)"
	case $rate_kind in
	mps)
		pps=$(awk -v r="$rate" -v f="$frames" -v m="$msgs" 'BEGIN { printf "%d", r * f / m + 0.5 }')
		[ "$pps" -gt 0 ] || pps=1
		replay_args=(--pps="$pps")
		log "capture: $frames packets, $msgs messages ($(awk -v f="$frames" -v m="$msgs" \
			'BEGIN { printf "%.2f", m / f }') per packet): $rate messages/s = $pps packets/s" ;;
	pps) replay_args=(--pps="$rate") ;;
	mbps) replay_args=(--mbps="$rate") ;;
	multiplier) replay_args=(--multiplier="$rate") ;;
	topspeed) replay_args=(--topspeed) ;;
	esac
	[ "$loop" -gt 1 ] && replay_args+=(--loop="$loop")
fi

# ---- the network ----------------------------------------------------------
in_rx=() in_tx=()
if [ $veth -eq 1 ]; then
	ip netns add "$ns_rx" || die "cannot create network namespace (is this a container without CAP_SYS_ADMIN?)"
	ip netns add "$ns_tx"
	ip link add wbrx netns "$ns_rx" type veth peer name wbtx netns "$ns_tx" \
		|| die "cannot create a veth pair (kernel without veth?)"
	in_rx=(ip netns exec "$ns_rx") in_tx=(ip netns exec "$ns_tx")
	for cmd in "${in_rx[*]} ip link set lo up" "${in_rx[*]} ip link set wbrx up promisc on" \
		   "${in_tx[*]} ip link set lo up" "${in_tx[*]} ip link set wbtx up"; do
		$cmd || die "failed: $cmd"
	done
	# Room for the biggest generated frame, and no IPv6 chatter in the capture.
	"${in_rx[@]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true
	"${in_tx[@]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true
	iface=wbrx replay_iface=wbtx
fi

# ---- the daemon -------------------------------------------------------------
# A book name of its own: never collides with a wirebookd already serving readers.
daemon=("$build/wirebookd" --feeds "$feeds" --shm "wirebook-latency-$$")
if [ $kernel -eq 1 ]; then
	daemon+=(--kernel)
else
	daemon+=(--iface "$iface")
fi
[ $latency -eq 1 ] && daemon+=(--latency-dir "$out")
[ -n "$cpus" ] && daemon+=(--cpus "$cpus")
# shellcheck disable=SC2206
[ -n "$daemon_args" ] && daemon+=($daemon_args)

log "starting: ${daemon[*]}"
"${in_rx[@]}" "${daemon[@]}" >"$out/wirebookd.log" 2>&1 &
daemon_pid=$!
# Give it time to open its socket and map its rings before any packet flies.
for _ in $(seq 1 50); do
	sleep 0.1
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$out/wirebookd.log" >&2; die "wirebookd exited early"; }
	grep -qE ' -> /dev/shm/' "$out/wirebookd.log" 2>/dev/null && break	# its "started" line
done
sleep 0.5

# ---- the replay -------------------------------------------------------------
if [ -n "$replay_iface" ] && [ -n "$pcap" ]; then
	log "replaying on $replay_iface: tcpreplay ${replay_args[*]}"
	"${in_tx[@]}" tcpreplay --intf1="$replay_iface" "${replay_args[@]}" "$pcap" >"$out/tcpreplay.log" 2>&1 \
		|| { cat "$out/tcpreplay.log" >&2; die "tcpreplay failed"; }
	grep -E 'Actual|Rated|Flows|Statistics|Successful|Failed' "$out/tcpreplay.log" | sed 's/^/  tcpreplay: /' >&2 || true
	sleep 1	# let the builder drain what is in flight
else
	log "no replay: measuring live traffic on $iface for $seconds s"
	sleep "$seconds"
fi

kill -INT "$daemon_pid"
if ! wait "$daemon_pid"; then
	log "wirebookd exited with an error; its log:"
	tail -20 "$out/wirebookd.log" >&2
fi
daemon_pid=
tail -30 "$out/wirebookd.log" | sed 's/^/  wirebookd: /' >&2

[ $latency -eq 1 ] || { log "done (no latency logs: --no-latency)"; exit 0; }
ls "$out"/latency_*.bin >/dev/null 2>&1 || die "no latency_*.bin in $out (did any packet reach wirebookd?)"
[ $text -eq 1 ] && "$build/wb-latency-text" --dir "$out"
[ $plot -eq 1 ] && "$repo/latency-scripts/plot" "$out"
echo "latency logs: $out"
"$repo/latency-scripts/summarize" "$out"
