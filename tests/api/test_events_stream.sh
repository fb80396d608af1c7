#!/usr/bin/env bash
# wirebookd's event stream (issue 24): a C reader (examples/events_tail
# --book) and a Python reader (wirebook.events(name=...)) attached from the
# start of a paced generated day both see every event the books applied,
# the same events in the same order, and end when wirebookd does; a reader
# that attaches after the day gets the ring's last SLOTS events, none
# counted lost (and python3 -m wirebook events prints them); a BinaryFILE
# source streams every event too; --events 0 makes no stream; a bad --events is refused. Then
# the numpy calls on a nine-venue day with SIP feeds: snapshot, depth and
# SIP arrays of every symbol in one call agree with the one-symbol calls.
. "$(dirname "$0")/../service/lib.sh"
PY=${PYTHON:-python3}
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1

"$B/wb-gen" -p demo -s 11 --venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf -o "$T/day.pcap" \
	>/dev/null 2>"$T/gen.err" || { bad "wb-gen failed: $(tail -1 "$T/gen.err")"; finish; }

# 1. Readers from the start: the ring holds the day, the replay is paced
# (the five-venue demo capture: 49 s of traffic, 2.5 s at --speed 20).
bg "$B/wirebookd" --pcap "$(demo_capture)" --speed 20 --feeds "$ROOT/feeds.conf" --shm "$SHM" \
	--no-pin --events 131072 >"$T/wbd.out" 2>"$T/wbd.err"
wbd=$!
wait_for 30 $PY -c 'import sys, wirebook; wirebook.events(name=sys.argv[1])' "$SHM" ||
	{ bad "no stream /dev/shm/$SHM.events"; cat "$T/wbd.err"; finish; }
bg "$B/examples/events_tail" --book "$SHM" >"$T/c.out" 2>"$T/c.err"
ctail=$!
$PY - "$SHM" >"$T/py.out" 2>"$T/py.err" <<'P' &
import sys, wirebook
n = 0
with wirebook.events(name=sys.argv[1]) as ev:
    for e in ev:  # ends when wirebookd's stream does
        print(e.seq, e.kind, e.venue, f"i={e.instrument}", "recv", e.recv_ts)
        n += 1
    c = ev.counts()
print(f"python: {n} events, delivered {c.delivered}, dropped {c.dropped}, published {c.published}",
      file=sys.stderr)
P
pyr=$!
wait_for 120 grep -q 'source ended' "$T/wbd.err" || bad "the replay did not end"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
wait "$ctail" "$pyr"
books=$(sed -n 's/^books: events \([0-9]*\),.*/\1/p' "$T/wbd.out")
cn=$(wc -l <"$T/c.out")
[ -n "$books" ] && [ "$books" -gt 10000 ] && [ "$cn" -eq "$books" ] &&
	grep -q "events_tail: $books events, 0 dropped" "$T/c.err" &&
	ok "C reader from the start: all $books events wirebookd applied, 0 dropped, ended with it" ||
	bad "C reader: $cn lines, wirebookd $books; $(cat "$T/c.err")"
grep -q "^python: $books events, delivered $books, dropped 0, published $books$" "$T/py.err" &&
	ok "Python reader at the same time: the same $books events, iteration ends with wirebookd" ||
	bad "Python reader: $(tail -3 "$T/py.err") (wirebookd: $books)"
# The readers slept between the paced packets: wirebookd woke them (a
# futex across processes), not their 100 ms timeouts.
grep -q "^event stream: published $books in [0-9]* batches, [1-9][0-9]* reader wakeups$" "$T/wbd.out" &&
	ok "wirebookd woke the sleeping readers: $(grep -o '[0-9]* reader wakeups' "$T/wbd.out")" ||
	bad "no reader wakeups: $(grep '^event stream' "$T/wbd.out")"
cmp -s "$T/c.out" "$T/py.out" && ok "C and Python readers saw the same events in the same order" ||
	bad "C and Python readers differ: $(diff "$T/c.out" "$T/py.out" | head -3)"
[ ! -e "/dev/shm/$SHM.events" ] && ok "wirebookd's exit removed /dev/shm/$SHM.events" ||
	bad "/dev/shm/$SHM.events left behind"

# 2. A late reader, a small ring: the ring's last 1024 events, none counted lost.
bg "$B/wirebookd" --pcap "$T/day.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-late" --no-pin \
	--events 1024 >"$T/late.out" 2>"$T/late.err"
late=$!
wait_for 60 grep -q 'source ended' "$T/late.err" || bad "the late replay did not end"
$PY - "$SHM-late" >"$T/late.py" 2>&1 <<'P'
import sys, wirebook
ev = wirebook.events(name=sys.argv[1])
got = []
while True:
    batch = ev.read(max=256)
    if not batch:
        break
    got += batch
c = ev.counts()
seqs = [(e.recv_ts) for e in got]
assert len(got) == 1024 and c.delivered == 1024 and c.dropped == 0, (len(got), c)
assert c.published > 1024, c
assert seqs == sorted(seqs), "out of order"
print("ok", c.published)
P
$PY -m wirebook --book "$SHM-late" events 5 >"$T/cli.out" 2>"$T/cli.err"
[ $? -eq 0 ] && [ "$(grep -c '^[0-9]* [A-Z]* [A-Z]* i=[0-9]* recv [0-9]*$' "$T/cli.out")" -eq 5 ] &&
	grep -qx 'wirebook: 5 events, 0 dropped' "$T/cli.err" &&
	ok "python3 -m wirebook events 5: five events of the stream, then the counts" ||
	bad "python3 -m wirebook events: $(head -3 "$T/cli.out" "$T/cli.err")"
kill -TERM "$late"; wait "$late" 2>/dev/null
books=$(sed -n 's/^books: events \([0-9]*\),.*/\1/p' "$T/late.out")
grep -qx "ok $books" "$T/late.py" &&
	ok "a reader after the day (--events 1024) gets the ring's last 1024 of $books events, 0 dropped" ||
	bad "late reader: $(tail -3 "$T/late.py") (wirebookd: $books)"

# 2b. A BinaryFILE source: the same stream, every event of the file.
"$B/wb-gen" -p demo -s 11 -f itch-file -o "$T/day.itch" >/dev/null 2>&1 || bad "wb-gen itch-file failed"
bg "$B/wirebookd" --itch-file "$T/day.itch" --date 2026-02-19 --shm "$SHM-itch" --no-pin \
	>"$T/itch.out" 2>"$T/itch.err"
itch=$!
wait_for 60 grep -q 'source ended' "$T/itch.err" || bad "the BinaryFILE replay did not end"
$PY - "$SHM-itch" >"$T/itch.py" 2>&1 <<'P'
import sys, wirebook
ev = wirebook.events(name=sys.argv[1])
n = 0
while True:
    got = ev.read(max=256)
    if not got:
        break
    n += len(got)
c = ev.counts()
print("ok", n, c.dropped)
P
kill -TERM "$itch"; wait "$itch" 2>/dev/null
books=$(sed -n 's/^books: events \([0-9]*\),.*/\1/p' "$T/itch.out")
[ -n "$books" ] && grep -qx "ok $books 0" "$T/itch.py" &&
	ok "--itch-file: a reader after the file gets all $books events the books applied" ||
	bad "--itch-file stream: $(tail -2 "$T/itch.py") (wirebookd: $books)"

# 3. No stream, and a bad ring size.
bg "$B/wirebookd" --pcap "$T/day.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-none" --no-pin \
	--events 0 >/dev/null 2>"$T/none.err"
none=$!
wait_for 60 grep -q 'source ended' "$T/none.err"
$PY -c 'import sys, wirebook
try:
    wirebook.events(name=sys.argv[1]); print("opened")
except wirebook.WirebookError as e:
    print("code", e.code == wirebook.WB_ENOSHM)' "$SHM-none" >"$T/none.py" 2>&1
kill -TERM "$none"; wait "$none" 2>/dev/null
grep -qx 'code True' "$T/none.py" && ok "--events 0: no stream, events(name) raises WB_ENOSHM" ||
	bad "--events 0: $(cat "$T/none.py")"
"$B/wirebookd" --pcap "$T/day.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-bad" --events 1000 \
	>/dev/null 2>"$T/bad.err"
[ $? -eq 2 ] && grep -q -- "--events '1000': 0 (no stream) or a power of two" "$T/bad.err" &&
	ok "--events 1000: refused, exit 2" || bad "--events 1000: $(cat "$T/bad.err")"

# 4. numpy: many symbols in one call, equal to the one-symbol calls.
NPY=
for p in "$PY" /usr/bin/python3; do "$p" -c 'import numpy' 2>/dev/null && { NPY=$p; break; }; done
if [ -z "$NPY" ]; then
	bad "no python3 with numpy (Debian: python3-numpy)"
	finish
fi
bg "$B/wirebookd" --pcap "$T/day.pcap" --feeds "$ROOT/feeds.conf" --shm "$SHM-np" --no-pin \
	>"$T/np.out" 2>"$T/np.err"
npd=$!
wait_for 60 grep -q 'source ended' "$T/np.err" || bad "the numpy replay did not end"
$NPY - "$SHM-np" >"$T/np.py" 2>&1 <<'P'
import math, sys
import numpy as np
import wirebook
assert "pandas" not in sys.modules
b = wirebook.open(sys.argv[1])
syms = b.symbols()
s = b.snapshot()
assert list(s["symbol"]) == syms and len(syms) >= 5, (s["symbol"], syms)
for row in s:
    n, t = b.nbbo(row["symbol"]), b.last_trade(row["symbol"])
    assert (row["bid"], row["bid_qty"], row["ask"], row["ask_qty"]) == (n.bid, n.bid_qty, n.ask, n.ask_qty), (row, n)
    assert wirebook._venues(int(row["bid_venues"])) == n.bid_venues and row["updates"] == n.updates
    assert (row["last_price"], row["volume"], row["trades"]) == (t.price, t.volume, t.count), (row, t)
d = b.depth_array(n=5)
assert d.shape == (len(syms),) and d["bid_price"].shape == (len(syms), 5)
for row in d:
    bids, asks = b.depth(row["symbol"], 5)
    assert row["bid_count"] == len(bids) and row["ask_count"] == len(asks)
    assert list(row["bid_price"][:len(bids)]) == [l.price for l in bids], (row, bids)
    assert list(row["ask_qty"][:len(asks)]) == [l.qty for l in asks], (row, asks)
    assert all(math.isnan(p) for p in row["bid_price"][len(bids):])
v = b.depth_array(syms[:2], n=3, venue="NASDAQ", by_venue=True)
assert v["bid_venue_qty"].shape == (2, 24, 3)
bids, _ = b.depth(syms[0], 3, venue="NASDAQ")
assert list(v[0]["bid_qty"][:len(bids)]) == [l.qty for l in bids]
raw = wirebook.open(sys.argv[1], raw=True).depth_array(syms[:1], n=1)
assert raw["bid_price"].dtype == np.int64 and raw["bid_price"][0, 0] == round(d[0]["bid_price"][0] * 1e8)
sa = b.sip_array()
with_sip = sa[sa["updates"] > 0]
assert len(with_sip) > 0, sa
for row in with_sip:
    view = b.sip_view(row["symbol"])
    assert row["bid"] == view["nbbo"]["bid_price"] and row["updates"] == view["updates"], (row, view["nbbo"])
    assert row["direct_bid"] == b.nbbo(row["symbol"]).bid
assert b.sip_summary()["sip_events"] > 0
st = b.venue_status()
assert "NASDAQ" in st and "NYSE" in st and st["NASDAQ"].last_recv_ns > 0, st
q = b.sip_venue_stats("NASDAQ")["delay"]
assert q["count"] > 0 and q["min_ns"] <= q["p50"] <= q["max_ns"], q
ev = wirebook.events(name=sys.argv[1])
a = ev.read_array(1000000)
c = ev.counts()
assert len(a) == c.delivered == c.published and c.dropped == 0, (len(a), c)
assert (np.diff(a["recv_ts"].astype(np.int64)) >= 0).all()
print("ok", len(syms), len(with_sip), len(a))
P
kill -TERM "$npd"; wait "$npd" 2>/dev/null
books=$(sed -n 's/^books: events \([0-9]*\),.*/\1/p' "$T/np.out")
grep -q '^ok ' "$T/np.py" &&
	ok "numpy: snapshot, depth (consolidated, per venue, raw) and SIP arrays of $(awk '/^ok/{print $2}' "$T/np.py") symbols = the one-symbol calls; venue status; read_array got all $books events" ||
	bad "numpy: $(tail -5 "$T/np.py")"
grep -q "^ok .* $books\$" "$T/np.py" || bad "read_array count differs from wirebookd's $books"
finish
