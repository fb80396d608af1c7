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
