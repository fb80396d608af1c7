#!/usr/bin/env bash
# make soak: wirebookd under a steady feed for a long time, as a service
# runs. A veth pair, its receiving end in a network namespace of its own;
# soak-send plays an exchange on the other end (ITCH over MoldUDP64, every
# packet on the A and the B line); wirebookd --iface builds the books in
# the namespace; several soak-readers read them from outside, one of them
# killed (-9) and a new one started every --kill-every seconds; wirebookd
# is restarted once, half way. At the end it reports:
#
#   messages sent and received, loss during the restart (explained) and
#   unexplained loss (must be 0: a gap inside a run, ring or kernel drops,
#   or a tail not received), wirebookd's RSS after warm-up and at the end
#   of each run (flat within 5 %), end-to-end latency (sender's wall clock
#   to a reader seeing the change) and wirebookd's receive-to-published
#   latency (--latency-dir), p50 / p99 / p99.9.
#
#   scripts/soak.sh [--seconds 600] [--rate 1000000] [--readers 3]
#                   [--kill-every 10] [--batch 20] [--out DIR]
#
# Needs root (namespaces, veth, raw sockets). Every name carries the PID.
# Exit 0 when the run passed, 1 when a check failed, 2 on bad usage.
set -uo pipefail

seconds=600 rate=1000000 readers=3 kill_every=10 batch=20 out=
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) seconds=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--readers) readers=$2; shift 2 ;;
	--kill-every) kill_every=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
for v in seconds rate readers kill_every batch; do
	[[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -gt 0 ] ||
		{ echo "soak: --${v//_/-} '${!v}': expected a whole number above 0" >&2; exit 2; }
done
[ "$seconds" -ge 20 ] || { echo "soak: --seconds: at least 20 (a restart half way)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (network namespaces, veth)" >&2; exit 2; }

cd "$(dirname "$0")/.." || exit 1
B=$(cd "${B:-build}" && pwd)
for t in "$B/wirebookd" "$B/wb-latency-text" "$B/soak/soak-send" "$B/soak/soak-reader"; do
	[ -x "$t" ] || { echo "soak: $t not built (make all build/soak/soak-send build/soak/soak-reader)" >&2; exit 2; }
done
T=$(mktemp -d "/tmp/wb-soak-$$.XXXXXX")
[ -n "$out" ] && mkdir -p "$out" && T=$(cd "$out" && pwd)
ns="wbsoak$$"
va="wbsA$$"
vb="wbsB$$"
shm="wb-soak-$$"
wbd= sender=
rpids=()

log() { echo "soak: $*"; }
cleanup() {
	local p
	for p in "${rpids[@]}" $sender $wbd; do kill -TERM "$p" 2>/dev/null; done
	for p in "${rpids[@]}" $sender $wbd; do wait "$p" 2>/dev/null; done
	ip link del "$va" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -f "/dev/shm/$shm"
	[ -n "$out" ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns" || exit 1
ip link add "$va" type veth peer name "$vb" netns "$ns" || exit 1
ip link set "$va" up
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip link set "$vb" up

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

start_wbd() { # RUN: wirebookd in the namespace, on the receiving end
	ip netns exec "$ns" "$B/wirebookd" --iface "$vb" --feeds feeds.conf --shm "$shm" --no-pin \
		--latency-dir "$T/lat$1" >"$T/wbd$1.out" 2>"$T/wbd$1.err" &
	wbd=$!
	for _ in $(seq 1 200); do
		[ -e "/dev/shm/$shm" ] && grep -q 'afpacket' "$T/wbd$1.err" && return 0
		kill -0 "$wbd" 2>/dev/null || break
		sleep 0.05
	done
	log "wirebookd run $1 did not start:"; cat "$T/wbd$1.err"; exit 1
}
stop_wbd() { # RUN
	kill -TERM "$wbd"; wait "$wbd"; local rc=$?
	[ "$rc" -eq 0 ] || log "wirebookd run $1 exited $rc"
	wbd=
}
start_reader() {
	"$B/soak/soak-reader" "$shm" >"$T/reader.$1.out" 2>&1 &
	rpids+=($!)
	rindex+=($1)
}
rindex=()

mkdir -p "$T/lat1" "$T/lat2"
log "veth $va <-> $vb (namespace $ns), $seconds s at $rate msg/s (batches of $batch, A and B), $readers readers"
start_wbd 1
n_readers=0
for _ in $(seq 1 "$readers"); do n_readers=$((n_readers + 1)); start_reader $n_readers; done
"$B/soak/soak-send" --iface "$va" --rate "$rate" --seconds "$seconds" --batch "$batch" \
	>"$T/send.out" 2>"$T/send.err" &
sender=$!

half=$((seconds / 2))
warm=$(( seconds / 10 < 5 ? 5 : seconds / 10 ))
[ "$warm" -lt "$((half - 2))" ] || warm=$((half / 3))
rss1a= rss1b= rss2a= rss2b= killed=0 restart_at= at_restart=()
t=0
while kill -0 "$sender" 2>/dev/null; do
	sleep 1
	t=$((t + 1))
	if [ "$t" -eq "$warm" ]; then rss1a=$(rss_kb "$wbd"); fi
	if [ "$t" -eq "$half" ]; then
		rss1b=$(rss_kb "$wbd")
		log "t=${t}s: restarting wirebookd (SIGTERM, start again)"
		at_restart=("${rindex[@]}")	# the readers that must follow it
		stop_wbd 1
		start_wbd 2
		restart_at=$t
	fi
	if [ -n "$restart_at" ] && [ "$t" -eq $((restart_at + warm)) ]; then rss2a=$(rss_kb "$wbd"); fi
	if [ $((t % kill_every)) -eq 0 ] && [ ${#rpids[@]} -gt 0 ]; then
		victim=$((RANDOM % ${#rpids[@]}))
		kill -KILL "${rpids[$victim]}" 2>/dev/null
		wait "${rpids[$victim]}" 2>/dev/null
		unset "rpids[$victim]" "rindex[$victim]"
		rpids=("${rpids[@]}")
		rindex=("${rindex[@]}")
		killed=$((killed + 1))
		n_readers=$((n_readers + 1))
		start_reader $n_readers
	fi
done
wait "$sender"; send_rc=$?
sender=
sleep 2	# let the last packets reach the book
rss2b=$(rss_kb "$wbd")
for p in "${rpids[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${rpids[@]}"; do wait "$p" 2>/dev/null; done
rpids=()
stop_wbd 2

# ---- the report --------------------------------------------------------------
kv() { awk -F= -v k="$1" '$1 == k { print $2 }' "$2"; }
# nasdaq lines of a run's final stats: messages gaps ring-drops gap-msgs, summed
stream() { awk '/^--- wirebookd stats/ { m = g = d = gm = 0 }
	$2 == "nasdaq" && $3 == "itch" { m += $5; g += $8; d += $9; gm += $11 }
	END { print m + 0, g + 0, d + 0, gm + 0 }' "$1"; }
kdrops() { grep -o '[0-9]* kernel drops' "$1" | tail -1 | awk '{ print $1 + 0 }'; }
sent=$(kv sent_messages "$T/send.out")
last_seq=$(kv last_seq "$T/send.out")
read -r m1 g1 d1 gm1 < <(stream "$T/wbd1.out")
read -r m2 g2 d2 gm2 < <(stream "$T/wbd2.out")
k1=$(kdrops "$T/wbd1.out"); k2=$(kdrops "$T/wbd2.out")
received=$((m1 + m2))
# Run 1 starts before the first packet: any gap in it is loss. Run 2 starts
# mid-stream: its first gap, [1, first), is the restart (first: the lowest
# sequence in its latency log); any other gap is loss, and so is a tail it
# did not get (decoded + gap messages = the last sequence it saw).
first2=$("$B/wb-latency-text" "$T/lat2/latency_nasdaq.bin" >/dev/null 2>&1;
	awk '!/^#/ { print $1; exit }' "$T/lat2/latency_nasdaq.txt" 2>/dev/null)
# (the log names a packet by its last message: soak-send's packets hold $batch)
first2=$(( ${first2:-$batch} - batch + 1 ))
internal1=$gm1
internal2=$(( gm2 - (first2 - 1) ))
tail_missing=$(( ${last_seq:-0} - (m2 + gm2) ))
[ "$tail_missing" -ge 0 ] || tail_missing=0
lost=$(( internal1 + internal2 + tail_missing ))
# Counted drops explain loss: a packet is lost only when both its A and its
# B frame were dropped, so kernel drops of k frames explain at most
# k/2 packets of $batch messages; ring drops lose events, counted apart.
explained=$(( (k1 + k2) / 2 * batch ))
unexplained=$(( lost > explained ? lost - explained : 0 ))
fail=0
why=()
[ "$internal1" -eq 0 ] || why+=("run 1: $g1 gaps, $gm1 messages")
[ "$internal2" -eq 0 ] || why+=("run 2: $((g2 - 1)) gaps after the restart, $internal2 messages")
[ "$tail_missing" -eq 0 ] || why+=("run 2 ended $tail_missing messages before the sender")
[ "$unexplained" -eq 0 ] || fail=1
[ $((d1 + d2)) -eq 0 ] || { fail=1; why+=("event ring drops $((d1 + d2))"); }
restart_loss=$(( sent - received - lost ))
followed=0
for i in "${at_restart[@]}"; do grep -q '^followed_restart=' "$T/reader.$i.out" 2>/dev/null && followed=$((followed + 1)); done
[ "$followed" -eq "${#at_restart[@]}" ] || { fail=1; why+=("readers that missed the restart"); }

growth() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%+.1f", (b - a) * 100 / a; else print "n/a" }'; }
flat() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b <= a * 1.05) }'; }
g_rss1=$(growth "${rss1a:-0}" "${rss1b:-0}"); g_rss2=$(growth "${rss2a:-0}" "${rss2b:-0}")
flat "${rss1a:-0}" "${rss1b:-0}" && flat "${rss2a:-0}" "${rss2b:-0}" || { fail=1; why+=("RSS grew"); }

# Readers: merge the histograms of those that lived to the end (and the
# killed ones' are lost with them, as a crashed strategy's would be).
cat "$T"/reader.*.out 2>/dev/null | awk '
	/^hist / { h[$2] += $3; n += $3 }
	/^samples=/ { split($0, a, "="); s += a[2] }
	/^regressions=/ { split($0, a, "="); r += a[2] }
	/^errors=/ { split($0, a, "="); e += a[2] }
	/^reattaches=/ { split($0, a, "="); if (a[2] > 0) ra++; rn++ }
	END {
		c = 0; p50 = p99 = p999 = -1
		for (i = 0; i < 100000 && n; i++) { c += h[i]
			if (p50 < 0 && c >= n * 0.5) p50 = i
			if (p99 < 0 && c >= n * 0.99) p99 = i
			if (p999 < 0 && c >= n * 0.999) p999 = i }
		printf "%d %d %d %d %d %d %d %d\n", n, p50, p99, p999, r, e, ra, rn
	}' >"$T/readers.sum"
read -r rs rp50 rp99 rp999 rreg rerr rreat rn <"$T/readers.sum"
[ "$rreg" -eq 0 ] && [ "$rerr" -eq 0 ] || { fail=1; why+=("readers: $rreg counter regressions, $rerr errors"); }
[ "$rs" -gt 0 ] || { fail=1; why+=("readers saw no updates"); }

lat=$(python3 latency-scripts/summarize --format csv "$T/lat1" "$T/lat2" 2>/dev/null |
	awk -F, '$1 == "all" && $2 == "end_to_end" { printf "p50 %s us, p99 %s us, p99.9 %s us (%s packets)", $5, $7, $8, $3 }')

echo
echo "== soak report: ${seconds} s, requested $rate msg/s, A/B, $readers readers, $killed killed and restarted, 1 wirebookd restart"
printf '  sent              %s messages (%s packets per line, achieved %s msg/s, at most %s ms behind schedule)\n' \
	"$sent" "$(kv sent_packets "$T/send.out")" "$(kv rate_msgs_s "$T/send.out")" "$(kv max_behind_ms "$T/send.out")"
printf '  received          %s messages (run 1: %s, run 2: %s)\n' "$received" "$m1" "$m2"
printf '  lost in restart   %s messages (sent while wirebookd was down; explained)\n' "$restart_loss"
printf '  lost otherwise    %s messages; counted kernel drops %s frames (explain up to %s); event ring drops %s\n' \
	"$lost" "$((k1 + k2))" "$explained" "$((d1 + d2))"
printf '  unexplained loss  %s%s\n' "$unexplained" "${why[*]:+  (${why[*]})}"
printf '  RSS run 1         %s kB after %s s, %s kB at the restart (%s%%)\n' "${rss1a:-?}" "$warm" "${rss1b:-?}" "$g_rss1"
printf '  RSS run 2         %s kB after %s s, %s kB at the end (%s%%)\n' "${rss2a:-?}" "$warm" "${rss2b:-?}" "$g_rss2"
printf '  e2e latency       sender clock to reader: p50 %s us, p99 %s us, p99.9 %s us (%s samples, readers poll every ~20 us)\n' \
	"$rp50" "$rp99" "$rp999" "$rs"
printf '  book latency      packet receive to published in shared memory (wirebookd --latency-dir): %s\n' "${lat:-n/a}"
printf '  readers           %s alive at the restart, %s followed it; %s alive at the end; counter regressions %s, errors %s\n' \
	"${#at_restart[@]}" "$followed" "$rn" "$rreg" "$rerr"
[ "$send_rc" -eq 0 ] || { fail=1; echo "  sender exited $send_rc: $(cat "$T/send.err")"; }
if [ "$fail" -eq 0 ]; then echo "soak: PASS"; else echo "soak: FAIL"; fi
exit "$fail"
