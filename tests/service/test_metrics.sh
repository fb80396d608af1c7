#!/usr/bin/env bash
# The Prometheus endpoint: wirebookd --metrics ADDR:PORT serves the
# per-line, per-stream, book, ring, builder and source counters in the
# text exposition format, and they agree with what wirebookd and wb-dump
# count for the same capture.
. "$(dirname "$0")/lib.sh"

cap=$(demo_capture)
bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin \
	--metrics 127.0.0.1:0 >/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || bad "wirebookd did not finish the capture"
url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$T/wbd.err")
[ -n "$url" ] && ok "wirebookd says where the metrics are ($url)" || bad "no metrics address printed"

scrape() { python3 - "$1" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
    print(r.status, r.headers.get("Content-Type"), file=sys.stderr)
    sys.stdout.write(r.read().decode())
PY
}
scrape "$url" >"$T/m1" 2>"$T/h1" && ok "GET /metrics answers" || bad "GET /metrics failed: $(cat "$T/h1")"
check "status 200, Prometheus text format 0.0.4" grep -q '^200 text/plain; version=0.0.4' "$T/h1"

# Every sample line is NAME{labels} VALUE, and every family has HELP and TYPE.
python3 - "$T/m1" >"$T/fmt" 2>&1 <<'PY'
import re, sys
families, typed, bad = set(), set(), []
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? (-?[0-9.e+]+)$')
for line in open(sys.argv[1]):
    line = line.rstrip('\n')
    if line.startswith('# TYPE '):
        typed.add(line.split()[2])
    elif line.startswith('# HELP '):
        pass
    else:
        m = sample.match(line)
        if not m:
            bad.append(line)
        else:
            families.add(m.group(1))
missing = families - typed
print(f"{len(families)} families; malformed {bad[:3]}; without TYPE {sorted(missing)[:3]}")
sys.exit(1 if bad or missing or not families else 0)
PY
[ $? -eq 0 ] && ok "well-formed exposition: $(cat "$T/fmt")" || bad "malformed exposition: $(cat "$T/fmt")"

val() { awk -v k="$1" '$1 == k { print $2 }' "$T/m1"; }
for fam in wirebook_line_packets_total wirebook_line_gaps_total wirebook_line_decode_errors_total \
	wirebook_stream_messages_total wirebook_ring_published_total wirebook_ring_dropped_total \
	wirebook_book_heartbeat_age_seconds wirebook_book_state wirebook_books_live_orders \
	wirebook_superbook_publishes_total wirebook_source_frames_total wirebook_latency_samples_total \
	wirebook_venue_data_age_seconds; do
	grep -q "^$fam" "$T/m1" && ok "has $fam" || bad "no $fam"
done
# The numbers are the ones the tools count.
want=$("$B/wb-dump" -q --stats --feeds "$ROOT/feeds.conf" "$cap" 2>/dev/null |
	awk '/^# line/ { l = $4 "/" $7 } /^#   packets / { print l, $3 }' | sort)
got=$(awk -F'[{}",= ]+' '/^wirebook_line_packets_total\{/ { print $3 "/" $5, $NF }' "$T/m1" | sort)
[ -n "$want" ] && [ "$want" = "$got" ] && ok "per-line packets equal wb-dump's" ||
	bad "per-line packets differ: metrics '$got' wb-dump '$want'"
frames=$(val wirebook_source_frames_total)
[ "$frames" = "$(python3 -c "
import struct; d=open('$cap','rb').read(); o=24; n=0
while o < len(d): o += 16 + struct.unpack('<I', d[o+8:o+12])[0]; n += 1
print(n)")" ] && ok "source frames = records in the capture ($frames)" || bad "source frames $frames"
[ "$(val wirebook_book_state)" = 2 ] && ok "book state 2 (source done)" || bad "book state $(val wirebook_book_state)"
[ "$(val wirebook_ring_dropped_total)" = 0 ] && ok "no ring drops" || bad "ring drops"

# Scrapes count, bad paths are 404 and counted.
python3 -c "
import urllib.request, urllib.error, sys
try: urllib.request.urlopen('${url%/metrics}/nope', timeout=10)
except urllib.error.HTTPError as e: sys.exit(0 if e.code == 404 else 1)
sys.exit(1)" && ok "unknown path: 404" || bad "unknown path not 404"
scrape "$url" >"$T/m2" 2>/dev/null
s1=$(awk '$1 == "wirebook_metrics_scrapes_total" { print $2 }' "$T/m1")
s2=$(awk '$1 == "wirebook_metrics_scrapes_total" { print $2 }' "$T/m2")
b2=$(awk '$1 == "wirebook_metrics_bad_requests_total" { print $2 }' "$T/m2")
[ "$s2" = $((s1 + 1)) ] && [ "$b2" = 1 ] && ok "scrapes and bad requests counted" ||
	bad "scrapes $s1 -> $s2, bad requests $b2"
# Issue 23.12: a scrape is answered while other connections idle or trickle
# a request byte by byte (one at a time was served: each held the next).
python3 - "$url" >"$T/idle.out" 2>&1 <<'PY'
import socket, sys, threading, time, urllib.parse, urllib.request
u = urllib.parse.urlparse(sys.argv[1])
idle = [socket.create_connection((u.hostname, u.port)) for _ in range(3)]
slow = socket.create_connection((u.hostname, u.port))
done = threading.Event()
def trickle():  # a request that never ends, for as long as the scrape may take
    for c in b"GET /metrics HTTP/1.0\r\nX-Slow: " + b"x" * 120:
        if done.wait(0.25):
            return
        try:
            slow.send(bytes([c]))
        except OSError:
            return
threading.Thread(target=trickle, daemon=True).start()
time.sleep(0.3)
with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
    body = r.read().decode()
done.set()
print("ok" if "wirebook_metrics_scrapes_total" in body else "no metrics")
PY
grep -qx ok "$T/idle.out" && ok "a scrape is answered while other connections idle and trickle" ||
	bad "scrape beside idle connections: $(tail -2 "$T/idle.out")"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
check "the endpoint closes with wirebookd" sh -c "! python3 -c \"import urllib.request; urllib.request.urlopen('$url', timeout=3)\" 2>/dev/null"
finish
