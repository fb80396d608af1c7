#!/usr/bin/env bash
# The Python package (python/wirebook) against a live wirebookd: its ctypes
# structures match the C compiler's layout of book.h; symbols, top, depth
# and NBBO agree with the C++ example; python3 -m wirebook top prints;
# errors raise WirebookError with the library's code; make install puts a
# package that loads the prefix's libwirebook.so.1.
. "$(dirname "$0")/../service/lib.sh"
PY=${PYTHON:-python3}
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1

# Layout: sizeof and every offsetof, C against ctypes; the error codes too.
{
	echo '#include <stdio.h>'
	echo '#include <stddef.h>'
	echo '#include "wirebook/book.h"'
	echo '#include "wirebook/events.h"'
	echo '#include "wirebook/orders.h"'
	echo 'int main(void) {'
	PYTHONPATH=$ROOT/python $PY - <<'P'
from wirebook import _lib
for cname, cls in _lib.STRUCTS.items():
    print(f'printf("{cname} size %zu\\n", sizeof(struct {cname}));')
    for f in cls._fields_:
        print(f'printf("{cname}.{f[0]} %zu\\n", offsetof(struct {cname}, {f[0]}));')
import wirebook
for name in sorted(n for n in dir(wirebook) if n.startswith("WB_E")):
    print(f'printf("{name} %d\\n", {name});')
P
	echo 'return 0; }'
} >"$T/layout.c"
cc -std=c11 -I"$ROOT/include" "$T/layout.c" -o "$T/layout" 2>"$T/layout.err" &&
	"$T/layout" >"$T/layout.c.out" || { bad "layout program: $(head -3 "$T/layout.err")"; }
$PY - >"$T/layout.py.out" <<'P'
from wirebook import _lib
for cname, cls in _lib.STRUCTS.items():
    import ctypes
    print(f"{cname} size {ctypes.sizeof(cls)}")
    for f in cls._fields_:
        print(f"{cname}.{f[0]} {getattr(cls, f[0]).offset}")
import wirebook
for name in sorted(n for n in dir(wirebook) if n.startswith("WB_E")):
    print(f"{name} {getattr(wirebook, name)}")
P
n=$(wc -l <"$T/layout.c.out")
[ "$n" -gt 50 ] && diff "$T/layout.c.out" "$T/layout.py.out" >"$T/layout.diff" &&
	ok "ctypes layout and WB_E* codes = C's ($n sizes, offsets and codes)" || { bad "layout differs"; head "$T/layout.diff"; }

cap=$(demo_capture)
bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin >/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || { bad "wirebookd did not replay"; cat "$T/wbd.err"; finish; }

# The same book through C++ (book_top) and Python.
"$B/examples/book_top" --book "$SHM" >"$T/cxx.out"
$PY - "$SHM" >"$T/py.out" 2>"$T/py.err" <<'P'
import sys, wirebook
with wirebook.open(sys.argv[1]) as b:
    syms = b.symbols()
    print(f"symbols {len(syms)}")
    for s in syms:
        t, n = b.top(s), b.nbbo(s)
        assert isinstance(t.bid, float) and isinstance(t.bid_qty, int)
        print(f"{s:<8} top {t.bid_qty} @ {t.bid:.4f} / {t.ask_qty} @ {t.ask:.4f}  nbbo {n.bid:.4f} x"
              f" {n.ask:.4f} venues {(n.bid_venues or ['-'])[0]}/{(n.ask_venues or ['-'])[0]}"
              f" updates {t.updates}")
P
diff "$T/cxx.out" "$T/py.out" >"$T/cmp.diff" && ok "symbols, top and NBBO of $(head -1 "$T/py.out"): Python = C++" ||
	{ bad "Python and C++ differ"; head "$T/cmp.diff" "$T/py.err"; }

$PY - "$SHM" >"$T/depth.out" 2>&1 <<'P'
import sys, wirebook
b = wirebook.open(sys.argv[1])
bids, asks = b.depth("AAPL", 4)
n = b.nbbo("AAPL")
assert len(bids) == 4 and len(asks) == 4, (bids, asks)
assert bids[0].price == n.bid and asks[0].price == n.ask, (bids[0], asks[0], n)
assert all(bids[i].price > bids[i + 1].price for i in range(3)), bids
assert all(asks[i].price < asks[i + 1].price for i in range(3)), asks
assert bids[0].qty == n.bid_qty, (bids[0], n)
raw = wirebook.open(sys.argv[1], raw=True).top("AAPL")
assert raw.bid == round(n.bid * 100000000), raw
one, _ = b.depth("AAPL", 2, venue="NASDAQ")
assert 1 <= len(one) <= 2 and all(l.venues in ([], ["NASDAQ"]) for l in one), one
try:
    b.top("NOSUCH")
    raise SystemExit("no error for an unknown symbol")
except wirebook.WirebookError as e:
    assert e.code == wirebook.WB_ENOSYM and "unknown symbol" in str(e), (e.code, str(e))
try:
    wirebook.open(sys.argv[1] + "-none")
    raise SystemExit("no error for a missing book")
except wirebook.WirebookError as e:
    assert e.code == wirebook.WB_ENOSHM, e.code
try:  # issue 23.13: the refusal names the range
    b.depth("AAPL", 100)
    raise SystemExit("no error for 100 levels")
except wirebook.WirebookError as e:
    assert e.code == wirebook.WB_EINVAL and "from 0 to 10" in str(e), (e.code, str(e))
print("ok", b.health().state)
P
check "depth best first and equal to the NBBO, raw prices, per-venue depth, error codes" \
	grep -qx 'ok live' "$T/depth.out"
grep -qx 'ok live' "$T/depth.out" || cat "$T/depth.out"

# The event API over two rings made here (the module's layout, as
# wb_ring_format writes it): merged in recv_ts order, copied out, slots
# released; without the module, events() says WB_ENODEV.
$PY - "$ROOT/include/wirebook/event.h" >"$T/events.out" 2>&1 <<'P'
import ctypes, mmap, re, struct, sys, wirebook
from wirebook import _lib
SLOTS, PAGE = 64, 4096
size = 2 * PAGE + SLOTS * 64
rings = [mmap.mmap(-1, size) for _ in range(2)]
addr = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in rings]
for m in rings:
    abi = int(re.search(r"#define WB_ABI_VERSION (\d+)u", open(sys.argv[1]).read()).group(1))
    struct.pack_into("<IIII", m, 0, 0x57425247, abi, 64, SLOTS)  # magic, ABI, slot size, slots
heads = [0, 0]
def put(r, ts, kind=1, price=100 * 10**8, qty=5):
    e = _lib.Event.from_buffer(rings[r], 2 * PAGE + heads[r] * 64)
    e.kind, e.venue, e.side, e.seq, e.recv_ts = kind, 1, 1, ts, ts
    e.u.order.order_id, e.u.order.price, e.u.order.qty = ts, price, qty
    heads[r] += 1
    struct.pack_into("<Q", rings[r], 64, heads[r])               # head
    struct.pack_into("<Q", rings[r], 3 * 64 + 8, heads[r])       # published
for ts in range(1, 21):
    put(ts // 3 % 2, ts)
ev = wirebook.Events(rings=addr, ring_bytes=size)
got = ev.read(max=100)
assert [e.seq for e in got] == list(range(1, 21)), [e.seq for e in got]
assert got[0].kind == "ADD" and got[0].venue == "NASDAQ" and got[0].side == "B", got[0]
assert got[0].price == 100.0 and got[0].qty == 5, got[0]
tails = [struct.unpack_from("<Q", m, PAGE)[0] for m in rings]
assert tails == heads, (tails, heads)
assert ev.read(timeout_ms=5) == []
put(1, 21, kind=8)
assert [(e.seq, e.kind) for e in ev.read(timeout_ms=5)] == [(21, "TRADE")]
c = ev.counts()
assert (c.delivered, c.rings, c.published) == (21, 2, 21), c
ev.close()
try:
    wirebook.events("/nonexistent/wirebook")
    raise SystemExit("no error without a device")
except wirebook.WirebookError as e:
    assert e.code == wirebook.WB_ENODEV, e.code
print("ok")
P
check "events: two rings merged by recv_ts, copied out, released; WB_ENODEV without a device" \
	grep -qx ok "$T/events.out"
grep -qx ok "$T/events.out" || cat "$T/events.out"

# Issue 23.5 and 23.13: a ticker that is not UTF-8 (a feed decoded as the
# wrong protocol) reads as \xNN, never a traceback, and finds its book; a
# side without orders is None, not a price of 0.0. A BinaryFILE of one
# Stock Directory and one buy order for the ticker b'\xffBAD\xfe'.
$PY - "$T/odd.itch" <<'P'
import struct, sys
ts, tk = (9 * 3600 + 30 * 60) * 10**9, b"\xffBAD\xfe   "
R = (b"R" + struct.pack(">HH", 7, 0) + ts.to_bytes(6, "big") + tk + b"QN" + struct.pack(">I", 100)
     + b"NCZ PNN1N" + struct.pack(">I", 0) + b"N")
A = (b"A" + struct.pack(">HH", 7, 0) + (ts + 1).to_bytes(6, "big") + struct.pack(">QcI", 1, b"B", 100)
     + tk + struct.pack(">I", 123400))
open(sys.argv[1], "wb").write(b"".join(struct.pack(">H", len(m)) + m for m in (R, A)))
P
bg "$B/wirebookd" --itch-file "$T/odd.itch" --shm "$SHM-odd" --no-pin >/dev/null 2>"$T/odd.err"
wait_for 30 grep -q 'source ended' "$T/odd.err" || { bad "wirebookd did not read odd.itch"; cat "$T/odd.err"; }
$PY -m wirebook --book "$SHM-odd" symbols >"$T/odd.out" 2>&1
[ $? -eq 0 ] && [ "$(cat "$T/odd.out")" = '\xffBAD\xfe' ] &&
	ok "python3 -m wirebook symbols: a ticker that is not UTF-8 reads as $(cat "$T/odd.out")" ||
	bad "non-UTF-8 ticker: $(head -3 "$T/odd.out")"
$PY - "$SHM-odd" >"$T/odd2.out" 2>&1 <<'P'
import sys, wirebook
b = wirebook.open(sys.argv[1])
s, = b.symbols()
t, n, v = b.top(s), b.nbbo(s), b.venue_bbo(s, "NASDAQ")
assert (t.bid, t.bid_qty, t.ask, t.ask_qty) == (12.34, 100, None, 0), t
assert (n.bid, n.ask) == (12.34, None) and (v.bid, v.ask) == (12.34, None), (n, v)
assert wirebook.open(sys.argv[1], raw=True).top(s).ask is None
print("ok")
P
grep -qx ok "$T/odd2.out" && ok "an empty side is None in top, nbbo and venue_bbo; the odd ticker finds its book" ||
	bad "empty side: $(tail -3 "$T/odd2.out")"
$PY -m wirebook --book "$SHM-odd" top '\xffBAD\xfe' >"$T/odd3.out" 2>&1
grep -q '^\\xffBAD\\xfe 100 @ 12.3400 / 0 @ - ' "$T/odd3.out" &&
	ok "python3 -m wirebook top: an empty side prints as -" || bad "top of an empty side: $(cat "$T/odd3.out")"

$PY -m wirebook --book "$SHM" top AAPL >"$T/cli.out" 2>&1
grep -q '^AAPL [0-9]* @ [0-9.]* / [0-9]* @ [0-9.]*' "$T/cli.out" &&
	ok "python3 -m wirebook top AAPL: $(cat "$T/cli.out")" || bad "python3 -m wirebook top: $(cat "$T/cli.out")"
$PY -m wirebook --book "$SHM" top NOSUCH >"$T/cli2.out" 2>&1
[ $? -eq 1 ] && grep -q 'NOSUCH: unknown symbol' "$T/cli2.out" &&
	ok "python3 -m wirebook: an unknown symbol exits 1 with the library's words" || bad "$(cat "$T/cli2.out")"

# Installed: the package finds the prefix's library, from anywhere.
P="$T/prefix"
make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$T/install.out" 2>&1 ||
	{ bad "make install failed"; tail -5 "$T/install.out"; }
( cd / && PYTHONPATH="$P/lib/python3/dist-packages" $PY -c \
	'import sys, wirebook; print(wirebook.library()); print(wirebook.open(sys.argv[1]).top("AAPL").bid)' \
	"$SHM" ) >"$T/inst.out" 2>&1
[ "$(head -1 "$T/inst.out")" = "$P/lib/libwirebook.so.1" ] && grep -qx '[0-9]*\.[0-9]*' <(sed -n 2p "$T/inst.out") &&
	ok "the installed package uses $P/lib/libwirebook.so.1 and reads the book" ||
	bad "installed package: $(cat "$T/inst.out")"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
finish
