#!/usr/bin/env bash
# The dates and times of file sources (make dates-test, part of make check):
#   issue 23.1  a generated day's capture starts with its session (no
#               heartbeats hours before it), and --skip-idle replays an idle
#               stretch of a capture as a short one;
#   issue 24.3  at --speed every protocol's exch_ts is on the capture's day;
#   issue 23.3  a BinaryFILE's day: --date, else its name's, said by every
#               tool that reads one; without either no day, never today's;
#   issue 24.4  its recv_ts is the exchange's: two exports are the same bytes.
# No time is asserted: frames are counted, days compared.
. "$(dirname "$0")/../service/lib.sh"
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1 WIREBOOK_LIB=$B/libwirebook.so
FEEDS=$ROOT/feeds.conf
DAY=2023-11-03

# The first frame's capture time and the ET session start (09:29:46, the
# demo profile's) of DAY, in epoch seconds.
first_frame_s() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read(40)
print(struct.unpack('<I', d[24:28])[0])
PY
}
et_epoch() { python3 -c "import sys, datetime, zoneinfo; print(int(datetime.datetime.fromisoformat(
	sys.argv[1]).replace(tzinfo=zoneinfo.ZoneInfo('America/New_York')).timestamp()))" "$1"; }

# ---- 23.1: the generated session's first frame is the session's
"$B/wb-gen" -q --date $DAY --venues nasdaq,bzx,byx,edgx,edga,cqs,uqdf --xdp --feeds "$FEEDS" \
	-o "$T/multi.pcap" || bad "wb-gen the nine-venue day"
first=$(first_frame_s "$T/multi.pcap")
start=$(et_epoch "${DAY}T09:29:46")
[ "$first" -ge "$start" ] && [ "$first" -lt $((start + 60)) ] &&
	ok "a generated nine-venue day (UQDF too) starts with its session: first frame at $first, session $start" ||
	bad "first frame at $first, session at $start ($(( (start - first) / 60 )) min before)"
for v in nasdaq bzx nyse cqs uqdf; do
	"$B/wb-gen" -q --date $DAY --venues $v --feeds "$FEEDS" -o "$T/one.pcap"
	f=$(first_frame_s "$T/one.pcap")
	[ "$f" -ge "$start" ] || bad "$v alone: first frame $((start - f)) s before the session"
done

# ---- 23.1: --skip-idle. The demo with an hour of silence after its third frame.
"$B/wb-gen" -q -p demo -s 7 --pitch -o "$T/demo.pcap"
python3 - "$T/demo.pcap" "$T/idle.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, off, i = [d[:24]], 24, 0
while off < len(d):
    s, us, n, orig = struct.unpack('<IIII', d[off:off + 16])
    out.append(struct.pack('<IIII', s + (3600 if i >= 3 else 0), us, n, orig) + d[off + 16:off + 16 + n])
    off += 16 + n
    i += 1
open(sys.argv[2], 'wb').write(b''.join(out))
PY
# The packets of the last --stats table: its feed lines' rows (A, B, A:1, ...),
# not the summary lines after it.
packets() { awk '/^line / { n = 0; next } $1 ~ /^[AB](:[0-9]+)?$/ && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$1"; }
bg "$B/wirebookd" --pcap "$T/idle.pcap" --feeds "$FEEDS" --shm "$SHM-skip" --no-pin --speed 1 \
	--skip-idle 0.5 --stats 0.2 >"$T/skip.out" 2>"$T/skip.err"
skip=$!
wait_for 60 bash -c "[ \$(awk '/^line / { n = 0; next } \$1 ~ /^[AB](:[0-9]+)?\$/ && \$4 ~ /^[0-9]+\$/ { n += \$4 } END { print n + 0 }' '$T/skip.out') -gt 10 ]" &&
	ok "--speed 1 --skip-idle 0.5: past the hour of silence ($(packets "$T/skip.out") frames)" ||
	bad "--skip-idle: $(packets "$T/skip.out") frames; $(cat "$T/skip.err")"
grep -q -- '--skip-idle 0.5: the capture idles 3600.0 s before its next frame: replayed as 0.5 s' "$T/skip.err" &&
	ok "--skip-idle says what it skips" || bad "--skip-idle said: $(grep -v hint "$T/skip.err")"
kill -TERM "$skip"; wait "$skip" 2>/dev/null
bg "$B/wirebookd" --pcap "$T/idle.pcap" --feeds "$FEEDS" --shm "$SHM-wait" --no-pin --speed 1 \
	--stats 0.2 >"$T/wait.out" 2>"$T/wait.err"
wait_pid=$!
wait_for 30 grep -q 'waiting' "$T/wait.err"
sleep 1
kill -TERM "$wait_pid"; wait "$wait_pid" 2>/dev/null
[ "$(packets "$T/wait.out")" -eq 3 ] && grep -q -- '--skip-idle SECONDS shortens' "$T/wait.err" &&
	ok "without --skip-idle: 3 frames, waiting for the hour, and --skip-idle named" ||
	bad "without --skip-idle: $(packets "$T/wait.out") frames; $(grep waiting "$T/wait.err")"
expect_usage() { # DESCRIPTION TEXT CMD...
	local what=$1 text=$2; shift 2
	"$@" >/dev/null 2>"$T/usage.err"
	local rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$text" "$T/usage.err" && ok "$what: exit 2" ||
		bad "$what: exit $rc, $(cat "$T/usage.err")"
}
expect_usage "--skip-idle without --speed" "--skip-idle applies to --pcap with --speed only" \
	"$B/wirebookd" --pcap "$T/idle.pcap" --feeds "$FEEDS" --shm "$SHM-u" --no-pin --skip-idle 1
expect_usage "--skip-idle 0" "--skip-idle" \
	"$B/wirebookd" --pcap "$T/idle.pcap" --feeds "$FEEDS" --shm "$SHM-u" --no-pin --speed 1 --skip-idle 0

# ---- 24.3: at --speed, every venue's exchange times are on the capture's day.
# The books after the replay: each venue's BBO and last trade (ITCH, PITCH,
# XDP), each participant's quote through the SIPs (CQS, UQDF).
bg "$B/wirebookd" --pcap "$T/multi.pcap" --feeds "$FEEDS" --shm "$SHM-pace" --no-pin \
	--speed 1000000 >/dev/null 2>"$T/pace.err"
pace=$!
"$B/wb-book" --shm "$SHM-pace" --wait-done 120 --once AAPL >/dev/null 2>&1
python3 - "$SHM-pace" $DAY >"$T/pace.txt" 2>&1 <<'PY'
import ctypes, datetime, sys, zoneinfo
from ctypes import c_int64, c_uint32, c_uint64, c_uint8, c_char
import wirebook
from wirebook import _lib

class SipQuote(ctypes.Structure):  # struct wb_sip_quote (sip.h), 64 bytes
    _fields_ = [("bid_price", c_int64), ("ask_price", c_int64), ("bid_qty", c_uint32),
                ("ask_qty", c_uint32), ("exch_ts", c_uint64), ("sip_ts", c_uint64),
                ("recv_ts", c_uint64), ("quotes", c_uint32), ("condition", c_char),
                ("flags", c_uint8), ("feed", c_uint8), ("state", c_uint8),
                ("reserved", c_uint8 * 8)]
assert ctypes.sizeof(SipQuote) == 64

ny = zoneinfo.ZoneInfo("America/New_York")
day = sys.argv[2]
# WB_VENUE_SIP_CQS is WB_VENUE_COUNT, the first id without a venue name; UQDF follows.
SIP_CQS = next(v for v in range(1, 64) if wirebook.venue_name(v) == "?")
def on(ts):
    return str(datetime.datetime.fromtimestamp(ts / 1e9, ny).date())
seen, wrong = {}, []
with wirebook.open(sys.argv[1]) as b:
    lib = b._lib
    lib.wb_sip_quote.restype = ctypes.c_int
    lib.wb_sip_quote.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(SipQuote)]
    for t in b.symbols():
        for v in range(1, _lib.BOOK_VENUES):
            name = wirebook.venue_name(v)
            try:
                ts = b.venue_bbo(t, v).exch_ts
            except wirebook.WirebookError:
                continue
            if ts:
                seen[name] = seen.get(name, 0) + 1
                if on(ts) != day:
                    wrong.append(f"{t} {name} bbo {on(ts)}")
            q = SipQuote()
            if lib.wb_sip_quote(b._h, b._sym(t), v, ctypes.byref(q)) == 0 and q.exch_ts:
                key = {SIP_CQS: "SIP CQS", SIP_CQS + 1: "SIP UQDF"}.get(q.feed, f"SIP {q.feed}")
                seen[key] = seen.get(key, 0) + 1
                for what, ts in (("exch", q.exch_ts), ("sip", q.sip_ts)):
                    if on(ts) != day:
                        wrong.append(f"{t} {name} {key} {what} {on(ts)}")
        tr = b.last_trade(t)
        if tr.count:
            seen["trade " + tr.venue] = seen.get("trade " + tr.venue, 0) + 1
            if on(tr.exch_ts) != day:
                wrong.append(f"{t} trade {tr.venue} {on(tr.exch_ts)}")
print(" ".join(f"{k}:{n}" for k, n in sorted(seen.items())))
for w in wrong[:10]:
    print("WRONG", w)
need = {"NASDAQ", "BZX", "BYX", "EDGX", "EDGA", "NYSE", "ARCA", "SIP CQS", "SIP UQDF"}
missing = need - set(seen)
if missing:
    print("MISSING", " ".join(sorted(missing)))
sys.exit(1 if wrong or missing else 0)
PY
prc=$?
[ $prc -eq 0 ] && ok "--speed 1000000: every venue's exch_ts on $DAY ($(head -1 "$T/pace.txt"))" ||
	bad "--speed: $(cat "$T/pace.txt")"
kill -TERM "$pace"; wait "$pace" 2>/dev/null

# ---- 23.3: a BinaryFILE's day, said by every tool that reads one
"$B/wb-gen" -q -s 5 -n 3000 -f itch-file -o "$T/01302019.NASDAQ_ITCH50"
cp "$T/01302019.NASDAQ_ITCH50" "$T/day.itch"
for tool in wb-dump wb-export wirebookd; do
	case $tool in
	wb-dump) run() { "$B/wb-dump" "$@" --itch-file "$F" >/dev/null; } ;;
	wb-export) run() { rm -rf "$T/x"; "$B/wb-export" --quiet "$@" --itch-file "$F" "$T/x"; } ;;
	wirebookd) run() { "$B/wirebookd" "$@" --itch-file "$F" --shm "$SHM-f" --no-pin --exit-at-eof \
		>/dev/null; } ;;
	esac
	F=$T/01302019.NASDAQ_ITCH50 run 2>"$T/name.err"
	F=$T/01302019.NASDAQ_ITCH50 run --date 2020-03-04 2>"$T/date.err"
	F=$T/day.itch run 2>"$T/none.err"
	grep -q "trading day 2019-01-30, from the file's name" "$T/name.err" &&
		grep -q "trading day 2020-03-04 (--date)" "$T/date.err" &&
		grep -q "warning: .*day.itch: no trading day (give --date YYYY-MM-DD" "$T/none.err" &&
		[ "$(cat "$T/name.err" "$T/date.err" "$T/none.err" | grep -c 'trading day')" -eq 3 ] &&
		ok "$tool --itch-file says the day once: the name's, --date's, or none" ||
		bad "$tool: name '$(cat "$T/name.err")' date '$(cat "$T/date.err")' none '$(cat "$T/none.err")'"
done
# Without a day: times since midnight, never today's.
"$B/wb-export" --quiet --itch-file "$T/day.itch" "$T/undated" 2>/dev/null
# (the table's first lines: '# wirebook export: ...', then the header)
[ "$(awk -F, '!/^#/ && !/^recv_ts/ && ($1 >= 86400e9 || $2 >= 86400e9)' "$T/undated/events.csv" | wc -l)" -eq 0 ] &&
	[ "$(wc -l <"$T/undated/events.csv")" -gt 100 ] &&
	ok "a BinaryFILE without a day: exch_ts and recv_ts are times since midnight, not today's" ||
	bad "undated: $(sed -n 3p "$T/undated/events.csv")"

# ---- 24.4: two exports of one BinaryFILE are the same bytes; recv_ts is the exchange's
for i in 1 2; do
	"$B/wb-export" --quiet --itch-file "$T/01302019.NASDAQ_ITCH50" "$T/e$i" 2>"$T/e$i.err"
done
diff -r "$T/e1" "$T/e2" >/dev/null && ok "two exports of one BinaryFILE are byte-identical" ||
	bad "two exports differ: $(diff -r "$T/e1" "$T/e2" | head -3)"
grep -q "recv_ts: the exchange time of each packet's last message" "$T/e1.err" &&
	ok "the export says how recv_ts was made" || bad "recv_ts note: $(cat "$T/e1.err")"
# recv_ts never before exch_ts, within the packet's span, on the file's day.
python3 - "$T/e1/events.csv" <<'PY' >"$T/recv.txt" && ok "recv_ts >= exch_ts, on the file's day: $(cat "$T/recv.txt")" ||
import csv, datetime, sys, zoneinfo
ny = zoneinfo.ZoneInfo("America/New_York")
rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("#")))
bad = [r for r in rows if int(r["recv_ts"]) < int(r["exch_ts"]) or
       str(datetime.datetime.fromtimestamp(int(r["recv_ts"]) / 1e9, ny).date()) != "2019-01-30"]
print(f"{len(rows)} rows, {len(bad)} wrong")
sys.exit(1 if bad or not rows else 0)
PY
	bad "recv_ts: $(cat "$T/recv.txt")"
finish
