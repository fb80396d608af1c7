# Sourced by the recovery CLI tests (tests/tools/recovery*.sh) with the
# test's name: the binaries, a scratch directory, the servers to stop at
# exit, the pass/fail counts and the helpers they all use.
#   . tests/tools/recovery-lib.sh NAME
set -u
B=${B:-build}
GEN=$B/wb-gen
SRV=$B/wb-recoveryd
WBD=$B/wirebookd
FEEDS=feeds.conf
T=$(mktemp -d "/tmp/wb-recovery-$1.XXXXXX")
servers=()
cleanup() {
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_exit DESCRIPTION CODE STDERR-TEXT CMD...
expect_exit() {
	local what=$1 code=$2 text=$3; shift 3
	"$@" > "$T/out" 2> "$T/err"
	local rc=$?
	if [ $rc -ne "$code" ]; then bad "$what: exit $rc, expected $code: $(head -c 300 "$T/err")"; return; fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$T/err"; then
		bad "$what: stderr lacks '$text': $(head -c 300 "$T/err")"; return
	fi
	ok
}

# start_recoveryd ARGS...: wb-recoveryd ARGS on a free loopback port, in the
# background (stopped at exit); sets $port once it serves, and
# $recoveryd_log to its stderr.
start_recoveryd() {
	local log="$T/srv.$RANDOM"
	recoveryd_log=$log
	"$SRV" "$@" --listen 127.0.0.1:0 2> "$log" &
	servers+=($!)
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
		[ -n "$port" ] && return 0
		sleep 0.05
	done
	bad "wb-recoveryd $* did not start: $(cat "$log")"
	return 1
}

# watch_recovering SHM BOOK [MASK]: read the book SHM (wb-book --once into
# BOOK) every 50 ms for up to 4 s until it says RECOVERING, or RECOVERING
# for the venue bits MASK exactly (another venue may be filling a gap of
# its own at the moment of a look); sets $state to the last one it said,
# e.g. "RECOVERING: venues 0x4".
watch_recovering() {
	local shm=$1 book=$2 want=${3:-}
	state=
	for _ in $(seq 80); do
		sleep 0.05
		"$B/wb-book" --shm "$shm" --once > "$book" 2>&1 || continue
		state=$(grep -o 'RECOVERING: venues 0x[0-9a-f]*' "$book") || continue
		if [ -z "$want" ] || [ "$state" = "RECOVERING: venues $want" ]; then
			break
		fi
	done
}
