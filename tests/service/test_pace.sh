#!/usr/bin/env bash
# Issue 23.1: a replay at the recorded pace (--speed) that must wait long
# for the capture's next frame says so, once, at once, rather than look hung.
. "$(dirname "$0")/lib.sh"

cap=$(demo_capture)
# The demo's first three frames, the third an hour of capture time later.
python3 - "$cap" "$T/idle.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, off = [d[:24]], 24
for i in range(3):
    s, us, n, orig = struct.unpack('<IIII', d[off:off + 16])
    out.append(struct.pack('<IIII', s + (3600 if i == 2 else 0), us, n, orig) + d[off + 16:off + 16 + n])
    off += 16 + n
open(sys.argv[2], 'wb').write(b''.join(out))
PY
bg "$B/wirebookd" --pcap "$T/idle.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin --speed 1 \
	>/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'waiting' "$T/wbd.err" &&
	ok "--speed 1 says it waits for a frame an hour later: $(grep -o 'waiting [0-9]* s' "$T/wbd.err")" ||
	{ bad "--speed 1 said nothing of its wait"; cat "$T/wbd.err"; }
grep -q 'next frame comes 3600.0 s of its time after the last one' "$T/wbd.err" &&
	ok "the message gives the capture's idle time" || bad "message: $(grep waiting "$T/wbd.err")"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
[ "$(grep -c waiting "$T/wbd.err")" -eq 1 ] && ok "said once" || bad "said $(grep -c waiting "$T/wbd.err") times"
finish
