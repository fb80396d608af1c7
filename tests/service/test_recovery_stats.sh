#!/usr/bin/env bash
# Issue 13's counts where users look: a day that lost 2 % of its Nasdaq
# packets on both lines, recovered from wb-recoveryd, gives one set of
# per-stream counts in wirebookd's final report, its control socket
# (wb-subscribe recovery, text and JSON), its Prometheus metrics
# (wirebook_recovery_*) and the C API (wb_recovery_streams, through the
# Python binding), and no symbol is left recovering. A recovery that
# cannot end leaves its symbols recovering (wb_symbol_recovering).
. "$(dirname "$0")/lib.sh"

gen=(-q -p day -n 20000 --symbols 40 -s 13 --ab --venues nasdaq --feeds "$ROOT/feeds.conf")
"$B/wb-gen" "${gen[@]}" -o "$T/whole.pcap" || bad "wb-gen whole day"
"$B/wb-gen" "${gen[@]}" --loss 2 -o "$T/lossy.pcap" || bad "wb-gen lossy day"
bg "$B/wb-recoveryd" --pcap "$T/whole.pcap" --venue nasdaq --listen 127.0.0.1:0 \
	--feeds "$ROOT/feeds.conf" 2>"$T/server.err"
wait_for 10 grep -q 'serving .* on 127.0.0.1:[0-9]*$' "$T/server.err" || bad "wb-recoveryd did not start"
port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/server.err")
echo "nasdaq mold 127.0.0.1:$port" >"$T/recovery.conf"

sock="$T/ctl.sock"
bg "$B/wirebookd" --pcap "$T/lossy.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin \
	--recovery "$T/recovery.conf" --control "$sock" --metrics 127.0.0.1:0 >"$T/wbd.out" 2>"$T/wbd.err"
wbd=$!
wait_for 60 grep -q 'source ended' "$T/wbd.err" || bad "wirebookd did not finish the day"
url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$T/wbd.err")

# the control socket
timeout 30 "$B/wb-subscribe" --daemon "$sock" recovery >"$T/sub.txt" 2>"$T/sub.err" ||
	bad "wb-subscribe recovery: $(cat "$T/sub.err")"
read -r c_gaps c_filled c_unrec c_msgs c_state <<<"$(awk '$1 == "NASDAQ" || $1 == "nasdaq" {
	print $7, $8, $9, $10, $4 }' "$T/sub.txt")"
[ "${c_gaps:-0}" -gt 0 ] && [ "$c_filled" = "$c_gaps" ] && [ "$c_unrec" = 0 ] && [ "$c_state" = no ] &&
	ok "wb-subscribe recovery: nasdaq $c_gaps gaps, all filled, $c_msgs messages, not recovering" ||
	bad "wb-subscribe recovery: $(cat "$T/sub.txt")"
timeout 30 "$B/wb-subscribe" --daemon "$sock" recovery --json >"$T/sub.json" 2>&1
python3 - "$T/sub.json" "$c_gaps" "$c_msgs" <<'PY' && ok "--json says the same" || bad "--json: $(cat "$T/sub.json")"
import json, sys
s = [x for x in json.load(open(sys.argv[1])) if x["venue"].lower() == "nasdaq"]
sys.exit(0 if len(s) == 1 and s[0]["gaps"] == int(sys.argv[2]) and s[0]["messages"] == int(sys.argv[3])
         and s[0]["recovering"] is False and s[0]["fills"] > 0 and s[0]["fill_max_ns"] > 0 else 1)
PY

# the metrics
python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('$url', timeout=10).read().decode())" \
	>"$T/metrics" 2>/dev/null || bad "GET $url"
m() { awk -v k="$1" 'index($1, k "{venue=\"nasdaq\"") == 1 { print $2 }' "$T/metrics"; }
[ "$(m wirebook_recovery_gaps_total)" = "$c_gaps" ] &&
	[ "$(m wirebook_recovery_filled_total)" = "$c_filled" ] &&
	[ "$(m wirebook_recovery_messages_total)" = "$c_msgs" ] &&
	[ "$(m wirebook_recovery_recovering)" = 0 ] &&
	ok "wirebook_recovery_* metrics agree with the control socket" ||
	bad "metrics: $(grep '^wirebook_recovery' "$T/metrics" | head -8)"
grep -q '^# TYPE wirebook_recovery_fill_p99_seconds gauge' "$T/metrics" &&
	grep -q '^wirebook_recovery_fill_max_seconds{venue="nasdaq",channel="[0-9]*",unit="0"} 0\.[0-9]*[1-9]' "$T/metrics" &&
	ok "fill times in the metrics" || bad "no fill times in the metrics"

# the C API, through the Python binding
PYTHONPATH="$ROOT/python" WIREBOOK_LIB="$B/libwirebook.so" python3 - "$SHM" "$c_gaps" "$c_msgs" \
	>"$T/api.out" 2>&1 <<'PY' && ok "wb_recovery_streams agrees; no symbol recovering" || bad "C API: $(cat "$T/api.out")"
import sys, wirebook
with wirebook.open(sys.argv[1]) as b:
    s = [r for r in b.recovery() if r.venue.lower() == "nasdaq"]
    print(s)
    assert len(s) == 1 and s[0].gaps == int(sys.argv[2]) and s[0].messages == int(sys.argv[3]), s
    assert s[0].state == "in sequence" and s[0].since_ns == 0, s
    syms = b.symbols()
    assert syms and not any(b.recovering(t)[0] for t in syms), "a symbol left recovering"
PY
PYTHONPATH="$ROOT/python" WIREBOOK_LIB="$B/libwirebook.so" python3 -m wirebook --book "$SHM" recovery \
	>"$T/pyrec.out" 2>&1
grep -q "^NASDAQ channel [0-9]* unit 0: in sequence; gaps $c_gaps, filled $c_filled, unrecoverable 0, messages $c_msgs," \
	"$T/pyrec.out" && ok "python3 -m wirebook recovery" || bad "python3 -m wirebook recovery: $(cat "$T/pyrec.out")"

kill -INT "$wbd"; wait "$wbd" 2>/dev/null
# the final report says the same, and it has every count
grep -q "^recovery nasdaq .*: in sequence; gaps $c_gaps, filled $c_filled, unrecoverable 0, messages recovered $c_msgs,.*snapshots 0" "$T/wbd.out" &&
	ok "the final report has the same counts" || bad "final report: $(grep '^recovery' "$T/wbd.out")"

# A recovery that cannot end (no service answers; 100 retries): the
# Nasdaq stream stays recovering, its symbols say so on NASDAQ (since
# when), not on BZX, which is not in recovery mode.
"$B/wb-gen" -q -p day -n 20000 --symbols 40 -s 13 --ab --venues nasdaq,bzx --feeds "$ROOT/feeds.conf" \
	--loss 2 -o "$T/two.pcap" || bad "wb-gen two venues"
dead=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "nasdaq mold 127.0.0.1:$dead retries=100" >"$T/dead.conf"
bg "$B/wirebookd" --pcap "$T/two.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-stuck" --no-pin \
	--recovery "$T/dead.conf" >"$T/stuck.out" 2>"$T/stuck.err"
stuck=$!
PYTHONPATH="$ROOT/python" WIREBOOK_LIB="$B/libwirebook.so" python3 - "$SHM-stuck" >"$T/stuck.py" 2>&1 <<'PY' &&
import sys, time, wirebook
deadline = time.time() + 20
while True:
    try:
        with wirebook.open(sys.argv[1]) as b:
            s = [r for r in b.recovery() if r.venue.lower() == "nasdaq"]
            known = [t for t in b.symbols() if b.recovering(t, "NASDAQ")[0]]
            if s and s[0].state == "gap" and known:
                t = known[0]
                rec, since = b.recovering(t, "NASDAQ")
                print(t, s[0], rec, since, b.recovering(t, "BZX"), b.health().state)
                assert since == s[0].since_ns > 0, (since, s[0])
                assert b.recovering(t, "BZX") == (False, 0), "BZX is not recovering"
                assert b.recovering(t)[0], "WB_CONSOLIDATED: any venue"
                assert b.health().state == "recovering"
                sys.exit(0)
    except wirebook.WirebookError:
        pass
    if time.time() > deadline:
        print("no symbol seen recovering on NASDAQ")
        sys.exit(1)
    time.sleep(0.1)
PY
	ok "a stuck Nasdaq recovery: its symbols recovering on NASDAQ since its start, not on BZX" ||
	bad "stuck recovery: $(tail -5 "$T/stuck.py")"
sym=$(awk 'NR == 1 { print $1 }' "$T/stuck.py")
"$B/wb-book" --shm "$SHM-stuck" --once "$sym" >"$T/stuck.book" 2>&1
grep -q "^== $sym .*  RECOVERING on NASDAQ (behind" "$T/stuck.book" && ! grep -q 'RECOVERING on .*BZX' "$T/stuck.book" &&
	ok "wb-book says $sym is recovering on NASDAQ" || bad "wb-book: $(head -3 "$T/stuck.book")"
kill -INT "$stuck"; wait "$stuck" 2>/dev/null
finish
