# Helpers for the service tests (sourced). Every name a test creates
# (shared memory, sockets, namespaces, temp dirs) carries the PID so tests
# of other worktrees running at the same time never collide.
#
#   B       build directory (absolute)
#   T       this test's temporary directory (removed at exit)
#   SHM     a book name unique to this test run
#   ok MSG / bad MSG    one PASS/FAIL line each; the test's exit status is
#                       the number of failures
set -uo pipefail

B=$(cd "${B:-build}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NAME=$(basename "$0" .sh)
T=$(mktemp -d "/tmp/wb-$NAME-$$.XXXXXX")
SHM="wb-$NAME-$$"
FAILS=0
PIDS=()

ok() { echo "PASS $NAME: $*"; }
bad() { echo "FAIL $NAME: $*"; FAILS=$((FAILS + 1)); }
check() { # check DESCRIPTION COMMAND...: PASS when the command succeeds
	local what=$1; shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# Start a background process, remembered for cleanup; its PID in $!.
bg() { "$@" & PIDS+=($!); }

cleanup_common() {
	local p
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -f "/dev/shm/$SHM"* 2>/dev/null
	rm -rf "$T"
}
trap cleanup_common EXIT

# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	local secs=$1 i; shift
	for ((i = 0; i < secs * 20; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

# A small generated capture with all five venues (ITCH + four PITCH), A/B.
demo_capture() {
	[ -s "$T/demo.pcap" ] || "$B/wb-gen" -p demo -s 7 --pitch --ab -o "$T/demo.pcap" >/dev/null 2>&1
	echo "$T/demo.pcap"
}

finish() {
	[ "$FAILS" -eq 0 ] || echo "$NAME: $FAILS check(s) failed"
	exit "$FAILS"
}
