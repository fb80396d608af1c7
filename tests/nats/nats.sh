#!/usr/bin/env bash
# The normalized stream over NATS JetStream (make nats-test, part of make
# check; issue 26). A real nats-server -js (file store, a user and password
# required) on a free loopback port, started and stopped here; a generated
# day of every protocol (ITCH, PITCH, XDP, CQS, UQDF) replayed by an origin
# wirebookd --publish, and wirebookd --source rebuilding the books from the
# stream, in a second network namespace where one can be made (over a veth
# pair; else on loopback, said). Each case ends with the two daemons'
# book checksums equal (venue books, Super-Book; the SIP view's too when
# neither daemon's SIP-view thread dropped updates, which depends on load):
#   1. the source started after the origin ended (late join), replaying the
#      stream from its start, then again from the origin's latest book
#      snapshot (both catch-up times said)
#   2. the source following live, killed with -9 mid-day and started again
#      (from a book snapshot)
#   3. the NATS server killed and started again mid-day (both reconnect)
#   4. wrong credentials: both daemons refused, exit 1
#   5. NATS away when the origin starts: its books unaffected, all published after
#   6. NATS away for the whole replay with a small backlog: the loss said, counted
#   8. conflated book subjects (--publish-books): a light consumer's last
#      message of every symbol is the origin's book at the end of the day
# Skipped (exit 0, said) without nats-server or a wirebookd built with NATS.
set -u
B=${B:-build}
WBD=$B/wirebookd
GEN=$B/wb-gen
# The replay's pace: the generated day spans ~20 hours of capture time;
# this many times faster it takes a few seconds, long enough to act mid-day.
SPEED=${NATS_TEST_SPEED:-15000}
MESSAGES=${NATS_TEST_MESSAGES:-30000}

if ! command -v nats-server >/dev/null; then
	echo "nats-test: SKIPPED: no nats-server (scripts/deps.sh installs it)"
	exit 0
fi
if ! "$WBD" --help | grep -q -- '--publish'; then
	echo "nats-test: FAIL: $WBD has no --publish"
	exit 1
fi
if "$WBD" --pcap /dev/null --publish nats://127.0.0.1:1 2>&1 | grep -q 'built without NATS'; then
	echo "nats-test: SKIPPED: $WBD was built without NATS (no libnats-dev when it was built)"
	exit 0
fi

T=$(mktemp -d /tmp/wb-nats-test.XXXXXX)
NS=wbnats$$
server_pid=
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	ip link del "${NS}h" 2>/dev/null
	rm -f /dev/shm/wbnats-$$-*
	[ -n "${NATS_TEST_KEEP:-}" ] && echo "nats-test: kept $T" || rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# A second network namespace, the server reachable from it over a veth
# pair; the origin stays on loopback in this one.
host_addr=127.0.0.1 source_addr=127.0.0.1 in_ns=()
if ip netns add "$NS" 2>/dev/null &&
   ip link add "${NS}h" type veth peer name "${NS}n" 2>/dev/null &&
   ip link set "${NS}n" netns "$NS" &&
   ip addr add 10.231.0.1/30 dev "${NS}h" && ip link set "${NS}h" up &&
   ip -n "$NS" addr add 10.231.0.2/30 dev "${NS}n" && ip -n "$NS" link set "${NS}n" up &&
   ip -n "$NS" link set lo up; then
	source_addr=10.231.0.1
	in_ns=(ip netns exec "$NS")
	echo "nats-test: the --source runs in network namespace $NS (10.231.0.2 -> server 10.231.0.1)"
else
	echo "nats-test: no second network namespace here (not root?): the --source runs on loopback"
fi
listen=127.0.0.1
[ "$source_addr" != 127.0.0.1 ] && listen=0.0.0.0

cat > "$T/server.conf" <<EOF
listen: $listen:$port
jetstream { store_dir: "$T/store" }
authorization { users = [ { user: wb, password: s3cret } ] }
EOF
start_server() {
	nats-server -c "$T/server.conf" >> "$T/server.log" 2>&1 &
	server_pid=$!
	local i
	for i in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null &&
			return 0
		sleep 0.1
	done
	echo "nats-test: FAIL: nats-server did not start:"; tail -5 "$T/server.log"
	exit 1
}
start_server

"$GEN" -q -p day -n "$MESSAGES" --venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf \
	-o "$T/day.pcap" || { echo "nats-test: FAIL: wb-gen"; exit 1; }

creds=(--nats-user wb --nats-password s3cret)
# origin INSTANCE [wirebookd options...]: the day, published, in the background
origin() {
	local inst=$1; shift
	"$WBD" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnats-$$-o$inst" --no-pin --exit-at-eof \
		--publish "nats://127.0.0.1:$port" --nats-instance "$inst" "${creds[@]}" "$@" \
		> "$T/origin-$inst.out" 2> "$T/origin-$inst.err" &
	origin_pid=$!
	pids+=("$origin_pid")
}
# source INSTANCE TAG [wirebookd options...]: the books from the stream, in the background
source_() {
	local inst=$1 tag=$2; shift 2
	"${in_ns[@]}" "$WBD" --source "nats://$source_addr:$port" --nats-instance "$inst" "${creds[@]}" \
		--shm "wbnats-$$-s$inst" --force --no-pin --exit-at-eof --stats 0.2 "$@" \
		> "$T/source-$inst-$tag.out" 2> "$T/source-$inst-$tag.err" &
	source_pid=$!
	pids+=("$source_pid")
}
# wait_for PID SECONDS: it exited within SECONDS (else killed): its status
wait_for() {
	local pid=$1 i
	for i in $(seq $(($2 * 10))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 124
}
# The events the source applied so far (its last --stats line), 0 before any.
source_events() {
	sed -n 's/^nats source:.*, events \([0-9]*\),.*/\1/p' "$1" | tail -1 | grep . || echo 0
}
# mid_day FILE WHAT: wait until the source of FILE applied events (at most
# 30 s), and say when the origin had already ended (a fast machine).
mid_day() {
	local i
	for i in $(seq 300); do
		[ "$(source_events "$1")" -gt 0 ] && break
		sleep 0.1
	done
	kill -0 "$origin_pid" 2>/dev/null ||
		echo "nats-test: note: the origin ended before the $2: not mid-day"
}
sums() { grep '^books: checksum venue books' "$1"; }
sip_sums() { grep '^books: checksum sip-view' "$1"; }
# A source that started from a book snapshot applied fewer SIP updates than
# the origin: its SIP view's state, not its update counts, is the origin's.
sip_state() { sed -n 's/^books: checksum sip-view .*, sip-view state //p' "$1"; }
from_snapshot() { grep -q '^nats source snapshot: loaded' "$1"; }
# Its SIP-view thread dropped nothing (the final stats: --stats prints others before).
sip_clean() { ! grep -q '^sip view:' "$1" || grep '^sip view:' "$1" | tail -1 | grep -q 'dropped 0 '; }
# same CASE ORIGIN-OUT SOURCE-OUT
same() {
	local what=$1 a=$2 b=$3
	if [ -z "$(sums "$a")" ] || [ "$(sums "$a")" != "$(sums "$b")" ]; then
		bad "$what: books differ: origin '$(sums "$a")', source '$(sums "$b")'"
		grep -E '^nats ' "$a" "$b" | sed 's/^/    /'
		return
	fi
	if from_snapshot "$b"; then
		if sip_clean "$a" && sip_clean "$b" && [ "$(sip_state "$a")" != "$(sip_state "$b")" ]; then
			bad "$what: SIP view states differ: '$(sip_sums "$a")' vs '$(sip_sums "$b")'"
			return
		fi
	elif sip_clean "$a" && sip_clean "$b" && [ "$(sip_sums "$a")" != "$(sip_sums "$b")" ]; then
		bad "$what: SIP views differ: '$(sip_sums "$a")' vs '$(sip_sums "$b")'"
		return
	fi
	ok "$what: books identical ($(sums "$a" | sed 's/^books: checksum //'))"
}
origin_done() {
	wait_for "$origin_pid" 120 || { bad "$1: origin exit $?"; tail -5 "$T/origin-$2.err"; return 1; }
	grep -q 'LOST 0;' "$T/origin-$2.out" || bad "$1: the publisher lost events: $(grep '^nats publish' "$T/origin-$2.out" | tail -1)"
	grep -q 'end sent' "$T/origin-$2.out" || bad "$1: the publisher sent no END"
}

# 1. Late join: the whole day published first, the source started after:
#    once replaying the stream from its start (--nats-snapshot 0), once from
#    the origin's latest book snapshot (one every SNAP_EVENTS events).
SNAP_EVENTS=${NATS_TEST_SNAPSHOT_EVENTS:-100000}
origin late --nats-snapshot-events "$SNAP_EVENTS"
origin_done "late join" late
grep -Eq '^nats publish snapshots: [1-9]' "$T/origin-late.out" &&
	ok "book snapshots stored ($(sed -n 's/^nats publish snapshots: //p' "$T/origin-late.out"))" ||
	bad "no book snapshot stored: $(grep '^nats publish snapshots' "$T/origin-late.out")"
late_join() {	# TAG WHAT [options]: catch up, compare, say the time
	local tag=$1 what=$2 t0 t1; shift 2
	t0=$(date +%s.%N)
	source_ late "$tag" "$@"
	if wait_for "$source_pid" 120; then
		t1=$(date +%s.%N)
		same "late join, $what" "$T/origin-late.out" "$T/source-late-$tag.out"
		late_time[$tag]="$(python3 -c "print(f'{$t1 - $t0:.2f}')") s ($(sed -n 's/.*source ended after \([0-9.]*s\).*/\1/p' "$T/source-late-$tag.err" | head -1) of it the source's own)"
	else
		bad "late join, $what: source exit $?"; tail -5 "$T/source-late-$tag.err"
	fi
}
declare -A late_time
late_join 1 "replaying the stream from its start" --nats-snapshot 0
late_join 2 "from the latest book snapshot"
if from_snapshot "$T/source-late-2.out" && ! from_snapshot "$T/source-late-1.out"; then
	ok "late join: started from the book snapshot ($(sed -n 's/^nats source snapshot: //p' "$T/source-late-2.out" | tail -1))"
else
	bad "late join: the book snapshot was not loaded (or loaded with --nats-snapshot 0)"
fi
echo "nats-test: late join caught up with $(grep -o 'events [0-9]*' "$T/origin-late.out" | head -1): replaying from the start ${late_time[1]:-?}, from the book snapshot ${late_time[2]:-?} (the daemon's run from start to exit; this machine, shared: not a measurement)"

# 2. The source follows live, is killed with -9 mid-day, and started again.
source_ kill 1
origin kill --speed "$SPEED" --metrics 127.0.0.1:0 --nats-snapshot-events 20000
mid_day "$T/source-kill-1.out" kill
# The publisher's counters on the metrics endpoint, while it publishes.
metrics_at=$(sed -n 's|.*metrics at \(http://[^ ]*\).*|\1|p' "$T/origin-kill.err" | head -1)
if [ -n "$metrics_at" ] && python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$metrics_at', timeout=5).read().decode())" > "$T/metrics" 2>/dev/null &&
   grep -Eq '^wirebook_nats_publish_events_total [1-9]' "$T/metrics" &&
   grep -q '^wirebook_nats_publish_connected 1' "$T/metrics"; then
	ok "the publisher's counters on the metrics endpoint ($(grep -c '^wirebook_nats_publish_' "$T/metrics") series)"
else
	bad "the publisher's counters are not on the metrics endpoint ($metrics_at)"
fi
kill -9 "$source_pid" 2>/dev/null
wait "$source_pid" 2>/dev/null
echo "nats-test: source killed with -9 after $(source_events "$T/source-kill-1.out") events"
# Started again once the origin stored a book snapshot (at most 30 s).
for i in $(seq 300); do
	python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$metrics_at', timeout=5).read().decode())" 2>/dev/null |
		grep -Eq '^wirebook_nats_publish_snapshots_total [1-9]' && break
	kill -0 "$origin_pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$origin_pid" 2>/dev/null || echo "nats-test: note: the origin ended before the restart: not mid-day"
source_ kill 2
origin_done "kill -9" kill
if wait_for "$source_pid" 120; then
	same "source killed -9 and restarted" "$T/origin-kill.out" "$T/source-kill-2.out"
	from_snapshot "$T/source-kill-2.out" &&
		ok "kill -9: the restarted source started from a book snapshot ($(sed -n 's/^nats source snapshot: //p' "$T/source-kill-2.out" | tail -1))" ||
		bad "kill -9: the restarted source did not load a book snapshot"
else
	bad "kill -9: restarted source exit $?"; tail -5 "$T/source-kill-2.err"
fi

# 3. The NATS server killed and started again mid-day.
source_ restart 1
origin restart --speed "$SPEED"
mid_day "$T/source-restart-1.out" restart
kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null
sleep 1
start_server
origin_done "NATS restart" restart
if wait_for "$source_pid" 120; then
	same "NATS server restarted mid-day" "$T/origin-restart.out" "$T/source-restart-1.out"
	grep -q 'reconnects [1-9]' "$T/source-restart-1.out" || bad "NATS restart: the source did not reconnect"
	grep -h '^nats ' "$T/origin-restart.out" "$T/source-restart-1.out" | tail -2 | sed 's/^/    /'
else
	bad "NATS restart: source exit $?"; tail -5 "$T/source-restart-1.err"
fi

# 4. Wrong credentials: refused, both ways.
creds=(--nats-user wb --nats-password wrong)
"${in_ns[@]}" "$WBD" --source "nats://$source_addr:$port" --nats-instance late "${creds[@]}" \
	--shm "wbnats-$$-bad" --no-pin --exit-at-eof > "$T/bad.out" 2> "$T/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -qi 'authorization' "$T/bad.err"; then
	ok "wrong credentials: --source refused ($(grep -io 'authorization[a-z ]*' "$T/bad.err" | head -1))"
else
	bad "wrong credentials: --source exit $rc: $(head -c 300 "$T/bad.err")"
fi
"$WBD" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnats-$$-bad" --no-pin --exit-at-eof \
	--publish "nats://127.0.0.1:$port" "${creds[@]}" > "$T/bad.out" 2> "$T/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -qi 'authorization' "$T/bad.err"; then
	ok "wrong credentials: --publish refused"
else
	bad "wrong credentials: --publish exit $rc: $(head -c 300 "$T/bad.err")"
fi
"$WBD" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnats-$$-bad" --no-pin --exit-at-eof \
	--publish "nats://127.0.0.1:$port" > "$T/bad.out" 2> "$T/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -qi 'authorization' "$T/bad.err"; then
	ok "no credentials: --publish refused"
else
	bad "no credentials: --publish exit $rc: $(head -c 300 "$T/bad.err")"
fi

# 5. NATS away when the origin starts: its books are the same as with NATS
#    there (case 2's), the backlog goes out once the server comes, nothing lost.
creds=(--nats-user wb --nats-password s3cret)
kill "$server_pid"; wait "$server_pid" 2>/dev/null
origin down --speed "$SPEED"
for i in $(seq 300); do
	grep -q 'not there yet' "$T/origin-down.err" && break
	sleep 0.1
done
sleep 1
kill -0 "$origin_pid" 2>/dev/null || echo "nats-test: note: the origin ended its day before the server came back"
start_server
origin_done "NATS away at the start" down
# (Against case 2's origin, also paced: a paced replay's receive clock is
# today's, and ITCH and PITCH trade times take their day from it.)
if [ "$(sums "$T/origin-down.out")" = "$(sums "$T/origin-kill.out")" ]; then
	ok "NATS away at the start: the origin's books are the ones built with NATS there"
else
	bad "NATS away at the start: the origin's books differ from case 2's"
fi
grep -q 'not there yet' "$T/origin-down.err" || bad "NATS away at the start: no 'not there yet' said"
source_ down 1
if wait_for "$source_pid" 120; then
	same "NATS away at the start, published after" "$T/origin-down.out" "$T/source-down-1.out"
else
	bad "NATS away at the start: source exit $?"; tail -5 "$T/source-down-1.err"
fi

# 6. The bounded backlog: NATS away for the whole replay, a backlog of 2048
#    events (the event stream, --events 1024 raised to --publish-backlog):
#    the rest is lost, counted and said loudly; the origin's books are case
#    1's all the same, and the newest 2048, which the stream held, go out after.
kill "$server_pid"; wait "$server_pid" 2>/dev/null
origin full --events 1024 --publish-backlog 2048
for i in $(seq 600); do
	grep -q 'source ended' "$T/origin-full.err" && break
	kill -0 "$origin_pid" 2>/dev/null || break
	sleep 0.1
done
start_server
wait_for "$origin_pid" 120 || bad "backlog full: origin exit $?"
if grep -q 'backlog FULL' "$T/origin-full.err" && grep -Eq 'LOST [1-9]' "$T/origin-full.out"; then
	ok "backlog full: said ($(grep -o 'LOST [0-9]*' "$T/origin-full.out" | tail -1) events)"
else
	bad "backlog full: not said: $(grep '^nats publish' "$T/origin-full.out" | tail -1)"
fi
[ "$(sums "$T/origin-full.out")" = "$(sums "$T/origin-late.out")" ] &&
	ok "backlog full: the origin's books unaffected" || bad "backlog full: the origin's books differ"
grep -Eq '^nats publish: .*events 2048, .*end sent' "$T/origin-full.out" &&
	ok "backlog full: the 2048 it held published after, and END" ||
	bad "backlog full: $(grep '^nats publish' "$T/origin-full.out" | tail -1)"

# 8. Conflated book subjects: a light consumer (tests/nats/nats_books_sub.c,
#    core NATS, subscribed before the origin starts) keeps the last message
#    of each symbol; once none came for 3 s, each equals the origin's book
#    (read from its shared memory as wb-book reads it; the origin stays up).
if [ -x "$B/nats_books_sub" ]; then
	"$B/nats_books_sub" --url "nats://127.0.0.1:$port" "${creds[@]/--nats-/--}" --instance books \
		--idle 3 --compare "wbnats-$$-obooks" --levels 5 > "$T/books-sub.out" 2> "$T/books-sub.err" &
	sub_pid=$!
	pids+=("$sub_pid")
	for i in $(seq 100); do grep -q '^subscribed' "$T/books-sub.out" && break; sleep 0.1; done
	"$WBD" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnats-$$-obooks" --no-pin \
		--publish "nats://127.0.0.1:$port" --nats-instance books "${creds[@]}" \
		--publish-books 5 --publish-books-interval 50 > "$T/origin-books.out" 2> "$T/origin-books.err" &
	origin_pid=$!
	pids+=("$origin_pid")
	wait_for "$sub_pid" 120
	rc=$?
	kill "$origin_pid" 2>/dev/null
	wait_for "$origin_pid" 60 > /dev/null
	if [ $rc -eq 0 ] && grep -Eq '^compared [1-9]' "$T/books-sub.out"; then
		ok "book subjects: the last message of each symbol is the origin's book ($(grep '^received' "$T/books-sub.out"); $(grep '^compared' "$T/books-sub.out"); $(sed -n 's/^nats publish books: //p' "$T/origin-books.out"))"
		sed -n 's/^for example: /    /p' "$T/books-sub.out" | cut -c1-300
	else
		bad "book subjects: consumer exit $rc: $(grep -v '^equal' "$T/books-sub.out" | head -8) $(head -c 300 "$T/books-sub.err")"
	fi
else
	echo "nats-test: note: no $B/nats_books_sub (make nats-test builds it): book subjects not tested"
fi

# 7. Options that do not go together: bad usage (exit 2), said.
usage_refused() {
	local what=$1; shift
	"$WBD" "$@" > /dev/null 2> "$T/usage.err"
	local rc=$?
	[ $rc -eq 2 ] && [ -s "$T/usage.err" ] && ok "refused: $what" || bad "$what: exit $rc"
}
usage_refused "--subscribe with --source" --source "nats://127.0.0.1:$port" --subscribe AAPL
usage_refused "--publish with --source" --source "nats://127.0.0.1:$port" --publish "nats://127.0.0.1:$port"
usage_refused "--nats-user without NATS" --pcap "$T/day.pcap" --nats-user wb
usage_refused "a stream in --publish's address" --pcap "$T/day.pcap" --publish "nats://127.0.0.1:$port/S"
usage_refused "--events 0 with --publish" --pcap "$T/day.pcap" --publish "nats://127.0.0.1:$port" --events 0
usage_refused "not a nats:// address" --source "http://127.0.0.1:$port"
usage_refused "--publish-books beyond the book's depth" --pcap "$T/day.pcap" --publish "nats://127.0.0.1:$port" --publish-books 11

echo "nats-test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
