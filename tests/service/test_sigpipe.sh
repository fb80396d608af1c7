#!/usr/bin/env bash
# Issue 23.11: a closed stdout ('wirebookd --stats 0.2 ... | head -1') stops
# wirebookd as SIGTERM does: the final stats are attempted, the book is
# retired and its shared memory removed, not left behind by a kill.
. "$(dirname "$0")/lib.sh"

cap=$(demo_capture)
timeout 60 "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin \
	--stats 0.2 2>"$T/wbd.err" | head -1 >"$T/first"
rc=${PIPESTATUS[0]}
[ "$rc" -ne 124 ] && [ "$rc" -lt 128 ] && ok "wirebookd stopped when its stdout closed (exit $rc)" ||
	{ bad "wirebookd did not stop cleanly when its stdout closed (exit $rc)"; tail -3 "$T/wbd.err"; }
grep -q '^--- wirebookd stats' "$T/first" && ok "head -1 got the first stats line" ||
	bad "head -1 got '$(cat "$T/first")'"
[ ! -e "/dev/shm/$SHM" ] && ok "the book /dev/shm/$SHM is gone" || bad "the book /dev/shm/$SHM was left behind"
finish
