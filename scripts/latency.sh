#!/usr/bin/env bash
# Per-feed latency, end to end: replay a multi-feed capture into wirebookd
# and summarize the latency logs it writes. By default the same generated
# capture at a series of rates (--rates), once per builder path (--paths),
# one table for all; with one rate option (--mps, --pps, ...) one run and
# its per-feed table.
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

Replay a capture into wirebookd --latency-dir, stop it, and print the
latency table.

Series of rates (the default when no single rate is given):
  --rates LIST        messages per second, comma or space separated (default
                      "$default_rates"); each rate replays the start of
                      the same generated capture into a fresh wirebookd, and
                      one table (latency-scripts/rates) gives, per rate and
                      path, each stage's p50, p90, p99, p99.9 and max and end
                      to end, or "did not keep up" and why (the replay fell
                      short of the rate, or packets were dropped on the way)
  --paths "LIST"      wirebookd --path values to measure side by side, each
                      (rate, path) one row (default: "rtc pipeline" when
                      wirebookd --help offers --path, else its one path,
                      shown as "default")
  --seconds S         seconds per rate (default: 10 up to 100k msg/s,
                      3 up to 300k, 2 above)
  --max-loss PCT      drops tolerated before a run did not keep up, percent
                      of the packets sent (default 0.1)

Single rate (one of; the per-feed table of one run, as before):
  --mps N             source messages per second (converted to packets/s from
                      the capture's own messages per packet)
  --pps N             packets per second (tcpreplay --pps)
  --mbps N            megabits per second (tcpreplay --mbps)
  --multiplier X      X times the capture's recorded pace (tcpreplay --multiplier)
  --topspeed          as fast as tcpreplay can

Input:
  --seconds S         length of the generated capture at the chosen rate
                      (default 10; with --mps only); live traffic: how long
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
  --cpus LIST         builder cpus (wirebookd --cpus); with --sender-cpus N
                      on a veth pair the default is N for rtc and N,N+1 for the
                      pipeline: thread 1, the one that reads the packets, on
                      the sender's cpu
  --sender-cpus LIST  cpus of tcpreplay (taskset -c), default any (unpinned).
                      On a veth pair the receive (the skb's stamp, AF_PACKET's
                      ring, the reader's wake-up) runs on the sender's cpu, as
                      a NIC queue's interrupt runs on the core it is steered
                      to: one cpu number places "the interrupt" and thread 1
                      together (a local wake-up, no cross-core one: the low
                      rates' tails), at the price of sharing that core with
                      tcpreplay's own work at high rates
  --daemon-args "ARGS" extra wirebookd arguments (e.g. --busy-poll)
  --no-latency        run without --latency-dir (overhead comparison)
  --plot              also write PNGs with latency-scripts/plot (a series of
                      rates: the end-to-end CDFs per rate and path, and
                      latency against time)
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

default_rates="1000 10000 100000 300000 1000000"
rate_kind= rate= seconds= messages= pcap= feeds=$repo/feeds.conf
gen_args="--pitch --xdp --max-payload 200" loop=1 out= cpus= sender_cpus= daemon_args= latency=1 plot=0 text=0
kernel=0 iface= replay_iface= rates= paths= paths_given=0 max_loss=0.1

while [ $# -gt 0 ]; do
	case $1 in
	--mps|--pps|--mbps|--multiplier) rate_kind=${1#--}; rate=${2:?$1 needs a value}; shift ;;
	--topspeed) rate_kind=topspeed rate= ;;
	--rates) rates=${2:?--rates needs a list}; shift ;;
	--paths) paths=${2?}; paths_given=1; shift ;;
	--max-loss) max_loss=${2:?}; shift ;;
	--seconds) seconds=${2:?}; shift ;;
	--messages) messages=${2:?}; shift ;;
	--pcap) pcap=${2:?}; shift ;;
	--feeds) feeds=${2:?}; shift ;;
	--gen-args) gen_args=${2?}; shift ;;
	--loop) loop=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	--cpus) cpus=${2:?}; shift ;;
	--sender-cpus) sender_cpus=${2:?}; shift ;;
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
# Where the sender runs (taskset), and by default thread 1 with it.
sender_cpus=${sender_cpus:-any}
sender_pin=()
if [ "$sender_cpus" != any ]; then
	command -v taskset >/dev/null || die "--sender-cpus needs taskset (util-linux)"
	[[ $sender_cpus =~ ^[0-9]+([,-][0-9]+)*$ ]] || die "--sender-cpus: '$sender_cpus' is not a cpu list (or any)"
	sender_pin=(taskset -c "$sender_cpus")
fi
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

# wirebookd --path rtc|pipeline|auto: the builder path, when this one has it.
wirebookd_has_path() {
	"$build/wirebookd" --help 2>&1 | grep -qE -- '--path[ =]'
}

# A series of rates unless one rate was asked for, or there is nothing to
# replay (live traffic on --iface).
replays=0
{ [ $veth -eq 1 ] || [ -n "$replay_iface" ]; } && replays=1
multi=0
if [ -n "$rates" ]; then
	[ -z "$rate_kind" ] || die "--rates and --$rate_kind: one or the other"
	[ $replays -eq 1 ] || die "--rates needs a replay (a veth pair, or --replay-iface)"
	multi=1
elif [ -z "$rate_kind" ] && [ $replays -eq 1 ] && [ -z "$pcap" ]; then
	multi=1
	rates=$default_rates
fi
if [ $multi -eq 1 ]; then
	[ $latency -eq 1 ] || die "--no-latency measures one rate: give it --mps N"
	[ "$loop" -eq 1 ] || die "--loop replays one rate: give it --mps N"
	rates=${rates//,/ }
	for r in $rates; do
		[[ $r =~ ^[0-9]+$ ]] && [ "$r" != 0 ] || die "--rates: '$r' is not a positive integer"
	done
	if [ $paths_given -eq 0 ]; then
		if wirebookd_has_path; then
			paths="rtc pipeline"
		else
			paths=default
		fi
	fi
	paths=${paths//,/ }
	[ -n "${paths// /}" ] || die "--paths: no path"
	if [[ " $paths " != " default " ]] && ! wirebookd_has_path; then
		die "--paths $paths: this wirebookd has no --path option (use --paths default)"
	fi
else
	[ -n "$rate_kind" ] || rate_kind=mps rate=100000
	[ $paths_given -eq 0 ] || die "--paths measures a series of rates (--rates)"
	seconds=${seconds:-10}
fi

# Seconds a rate is replayed for: long enough for a steady p99.9 at low
# rates, short at high ones (the capture must hold rate x seconds).
rate_seconds() {
	if [ -n "$seconds" ]; then echo "$seconds"
	elif [ "$1" -le 100000 ]; then echo 10
	elif [ "$1" -le 300000 ]; then echo 3
	else echo 2
	fi
}

# The clock that stamps recv_ts (tools/input/source.c: the AF_PACKET ring's
# tp_sec/tp_nsec, the kernel's software receive time; the module: its
# hook's ktime_get_real_ns()), and what the NIC could offer instead.
clock_label() {
	if [ $kernel -eq 1 ]; then
		echo "kernel module hook (ktime_get_real_ns, software)"
	else
		echo "software receive (AF_PACKET)"
	fi
}
clock_note() {
	if [ $veth -eq 1 ]; then
		echo "$iface: a veth pair, no NIC timestamps"
	elif ! command -v ethtool >/dev/null; then
		echo "$iface: hardware timestamping unknown (ethtool not installed)"
	elif ethtool -T "$iface" 2>/dev/null | grep -q 'hardware-receive'; then
		echo "$iface offers hardware receive timestamps (ethtool -T), not used: wirebookd does not enable SO_TIMESTAMPING (latency-scripts/README.md)"
	else
		echo "$iface: no hardware receive timestamps (ethtool -T)"
	fi
}

stamp=$(date -u +%Y%m%dT%H%M%S)
if [ $multi -eq 1 ]; then
	out=${out:-/tmp/wb-latency-rates-$stamp}
else
	out=${out:-/tmp/wb-latency-${rate_kind}${rate}-$stamp}
fi
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
if [ -z "$pcap" ] && [ $replays -eq 1 ]; then
	if [ -z "$messages" ]; then
		if [ $multi -eq 1 ]; then
			# One capture for every rate: each replays its start.
			messages=0
			for r in $rates; do
				need=$((r * $(rate_seconds "$r")))
				[ "$need" -gt "$messages" ] && messages=$need
			done
		elif [ "$rate_kind" = mps ]; then
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
	capture_made="$messages messages (wb-gen $gen_args)"
else
	capture_made=${pcap:+$pcap}
fi

# Packets and unique source messages in the capture: converts --mps to packets/s.
capture_counts() {
	"$build/wb-dump" --feeds "$feeds" --stats -q "$1" 2>&1 | awk '
		/^# frames/ { frames = $3 }
		$2 == "messages" { msgs += $3 }
		END { printf "%d %d\n", frames, msgs }'
}

# Packets per second for N messages per second.
mps_to_pps() {
	awk -v r="$1" -v f="$frames" -v m="$msgs" 'BEGIN { p = int(r * f / m + 0.5); print (p > 0 ? p : 1) }'
}

replay_args=()
if [ -n "$pcap" ]; then
	read -r frames msgs < <(capture_counts "$pcap")
	[ "${frames:-0}" -gt 0 ] && [ "${msgs:-0}" -gt 0 ] \
		|| die "$pcap: no packets of a mapped feed (check --feeds)"
	per_packet=$(awk -v f="$frames" -v m="$msgs" 'BEGIN { printf "%.2f", m / f }')
	case $rate_kind in
	mps)
		pps=$(mps_to_pps "$rate")
		replay_args=(--pps="$pps")
		log "capture: $frames packets, $msgs messages ($per_packet per packet): $rate messages/s = $pps packets/s" ;;
	pps) replay_args=(--pps="$rate") ;;
	mbps) replay_args=(--mbps="$rate") ;;
	multiplier) replay_args=(--multiplier="$rate") ;;
	topspeed) replay_args=(--topspeed) ;;
	'') log "capture: $frames packets, $msgs messages ($per_packet per packet)" ;;
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

# ---- one run: a fresh daemon, the replay, the daemon's stop ----------------
# run_once DIR PATH REPLAY_ARGS...: PATH is a wirebookd --path value or
# "default"; DIR gets the latency logs, wirebookd.log and tcpreplay.log.
# Returns 1 when the replay failed (its log says why); a daemon that exits
# before it is ready ends the script, or in a series of rates only its run
# (its log says why, and the table says it did not keep up).
run_once() {
	local dir=$1 path=$2 rc=0
	shift 2
	local daemon=("$build/wirebookd" --feeds "$feeds" --shm "wirebook-latency-$$")
	if [ $kernel -eq 1 ]; then
		daemon+=(--kernel)
	else
		daemon+=(--iface "$iface")
	fi
	[ $latency -eq 1 ] && daemon+=(--latency-dir "$dir")
	local run_cpus=$cpus
	# Thread 1 beside the sender's receive, the pipeline's thread 2 on the next cpu.
	if [ -z "$run_cpus" ] && [ $veth -eq 1 ] && [ "$sender_cpus" != any ] && [[ $sender_cpus =~ ^[0-9]+$ ]]; then
		case $path in
		rtc) run_cpus=$sender_cpus ;;
		pipeline) run_cpus=$sender_cpus,$(( (sender_cpus + 1) % $(nproc) )) ;;
		esac
	fi
	[ -n "$run_cpus" ] && daemon+=(--cpus "$run_cpus")
	placement="sender on cpu $sender_cpus, wirebookd --cpus ${run_cpus:-(its choice)}"
	[ -f "$dir/run.meta" ] && echo "placement=$placement" >>"$dir/run.meta"
	[ "$path" != default ] && daemon+=(--path "$path")
	# shellcheck disable=SC2206
	[ -n "$daemon_args" ] && daemon+=($daemon_args)

	log "starting: ${daemon[*]}"
	"${in_rx[@]}" "${daemon[@]}" >"$dir/wirebookd.log" 2>&1 &
	daemon_pid=$!
	# Give it time to open its socket, map its rings and warm its books
	# before any packet flies: up to 30 s for its "started" line.
	for _ in $(seq 1 300); do
		sleep 0.1
		if ! kill -0 "$daemon_pid" 2>/dev/null; then
			daemon_pid=
			cat "$dir/wirebookd.log" >&2
			[ $multi -eq 1 ] || die "wirebookd exited early"
			log "wirebookd exited early: this run is left out"
			return 1
		fi
		grep -qE ' -> /dev/shm/' "$dir/wirebookd.log" 2>/dev/null && break	# its "started" line
	done
	sleep 0.5

	if [ -n "$replay_iface" ] && [ -n "$pcap" ]; then
		log "replaying on $replay_iface: tcpreplay $*"
		if ! "${in_tx[@]}" "${sender_pin[@]}" tcpreplay --intf1="$replay_iface" "$@" "$pcap" >"$dir/tcpreplay.log" 2>&1; then
			cat "$dir/tcpreplay.log" >&2
			rc=1
		fi
		[ $multi -eq 1 ] || grep -E 'Actual|Rated|Flows|Statistics|Successful|Failed' "$dir/tcpreplay.log" \
			| sed 's/^/  tcpreplay: /' >&2 || true
		sleep 1	# let the builder drain what is in flight
	else
		log "no replay: measuring live traffic on $iface for $seconds s"
		sleep "$seconds"
	fi

	kill -INT "$daemon_pid"
	if ! wait "$daemon_pid"; then
		log "wirebookd exited with an error; its log:"
		tail -20 "$dir/wirebookd.log" >&2
	fi
	daemon_pid=
	return $rc
}

# ---- a series of rates ------------------------------------------------------
if [ $multi -eq 1 ]; then
	clock=$(clock_label) note=$(clock_note)
	for r in $rates; do
		secs=$(rate_seconds "$r")
		pps=$(mps_to_pps "$r")
		limit=$(awk -v p="$pps" -v s="$secs" 'BEGIN { printf "%d", p * s }')
		[ "$limit" -gt "$frames" ] && log "the capture holds $frames packets, fewer than $limit: $r msg/s runs shorter"
		order=0
		for path in $paths; do
			dir=$out/r$r-$path
			rm -rf "$dir"
			mkdir -p "$dir"
			cat >"$dir/run.meta" <<META
rate_mps=$r
path=$path
path_order=$order
seconds=$secs
pps=$pps
messages_per_packet=$per_packet
clock=$clock
clock_note=$note
capture=$capture_made, $per_packet per packet
META
			order=$((order + 1))
			log "--- $r msg/s ($pps packets/s) for $secs s, path $path"
			run_once "$dir" "$path" --pps="$pps" --limit="$limit" || log "$r msg/s, path $path: no complete run (see $dir)"
		done
	done
	echo "latency logs: $out (one directory per rate and path)"
	[ $plot -eq 1 ] && "$repo/latency-scripts/plot" --rates --max-loss "$max_loss" "$out"
	"$repo/latency-scripts/rates" --max-loss "$max_loss" "$out"
	exit 0
fi

# ---- one rate ---------------------------------------------------------------
run_once "$out" default "${replay_args[@]}" || die "tcpreplay failed"
tail -30 "$out/wirebookd.log" | sed 's/^/  wirebookd: /' >&2

[ $latency -eq 1 ] || { log "done (no latency logs: --no-latency)"; exit 0; }
ls "$out"/latency_*.bin >/dev/null 2>&1 || die "no latency_*.bin in $out (did any packet reach wirebookd?)"
[ $text -eq 1 ] && "$build/wb-latency-text" --dir "$out"
[ $plot -eq 1 ] && "$repo/latency-scripts/plot" "$out"
echo "latency logs: $out"
echo "clock that starts the measurement: $(clock_label); $(clock_note)"
echo "placement: $placement"
"$repo/latency-scripts/summarize" "$out"
