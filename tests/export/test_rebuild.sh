#!/usr/bin/env bash
# Issue 24, done when: every book of a generated nine-venue day (Nasdaq,
# four Cboe, NYSE and Arca over their channels, both SIPs), rebuilt at ten
# random times from the exported order-level table alone, equals the book
# and bbo tables (tests/export/rebuild_books.py, a reference in Python).
# The day runs 04:00-20:00: XDP sequence resets and the close clear books.
. "$(dirname "$0")/../service/lib.sh"

H5PY=
for p in "${PYTHON:-python3}" /usr/bin/python3; do "$p" -c 'import h5py, numpy' 2>/dev/null && { H5PY=$p; break; }; done
"$B/wb-gen" -p day -s 24 -n 150000 --symbols 30 \
	--venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf -o "$T/day.pcap" >/dev/null 2>&1 ||
	{ bad "wb-gen failed"; finish; }
"$B/wb-export" --quiet --format hdf5 --depth 10 --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/day.h5" 2>"$T/export.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'built without libhdf5' "$T/export.err"; then
	bad "this wb-export has no HDF5 (Debian: libhdf5-dev)"; finish
fi
[ "$rc" -eq 0 ] || { bad "wb-export failed: $(cat "$T/export.err")"; finish; }
[ -n "$H5PY" ] || { bad "no python3 with h5py and numpy (Debian: python3-h5py)"; finish; }
"$H5PY" "$ROOT/tests/export/rebuild_books.py" --times 10 "$T/day.h5" >"$T/rebuild.out" 2>&1
rc=$?
clears=$(sed -n 's/.*rows (\([0-9]*\) CLEAR).*/\1/p' "$T/rebuild.out")
[ "$rc" -eq 0 ] && [ "${clears:-0}" -gt 0 ] && grep -q '^ok$' "$T/rebuild.out" &&
	ok "every venue and symbol book rebuilt from the events table at 10 random times and the end equals the bbo and book tables ($(grep -c ' 0 differ$' "$T/rebuild.out") times, $clears CLEAR rows; $(grep -o 'seed [0-9]*' "$T/rebuild.out"))" ||
	{ bad "books rebuilt from the events table differ"; grep -v ' 0 differ$' "$T/rebuild.out" | head -12; }

# A venue-wide clear: a new MoldUDP64 session part way through a Nasdaq
# day empties every Nasdaq book at once (no instrument in the event); the
# bbo, nbbo and book tables must say so, not keep the tops of before.
"$B/wb-gen" -p day -s 24 -n 20000 --symbols 30 --venues nasdaq -o "$T/ns.pcap" >/dev/null 2>&1 &&
	"$H5PY" "$ROOT/scripts/itch-pcap.py" newsession "$T/ns.pcap" "$T/ns2.pcap" 12000 &&
	"$B/wb-export" --quiet --format hdf5 --depth 10 --feeds "$ROOT/feeds.conf" "$T/ns2.pcap" "$T/ns2.h5" 2>"$T/ns.err" ||
	{ bad "the new-session day: $(cat "$T/ns.err")"; finish; }
"$H5PY" "$ROOT/tests/export/rebuild_books.py" --times 3 "$T/ns2.h5" >"$T/ns.out" 2>&1
grep -q '^ok$' "$T/ns.out" &&
	ok "a new Nasdaq session part way: every book rebuilt from the events table equals the bbo and book tables after the venue-wide clear" ||
	{ bad "after a venue-wide clear the bbo or book tables keep the old tops"; grep -v ' 0 differ$' "$T/ns.out" | head -6; }

# wirebook.read: one symbol's runs through the index, a time window, a
# datetime; the same rows as the whole table filtered by hand.
PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1 "$H5PY" - "$T/day.h5" >"$T/read.out" 2>&1 <<'P'
import datetime, sys, h5py, numpy as np, wirebook
path = sys.argv[1]
g = h5py.File(path, "r")["2026-02-19"]
allrows = g["events"][:]
sym = g["events_index"][1]["symbol"].decode()
mid = wirebook.export._midnight_ns("2026-02-19")
t = np.where(allrows["exch_ts"] >= 86400 * 10**9, allrows["exch_ts"], allrows["recv_ts"])
want = allrows[(allrows["symbol"] == sym.encode()) & (t >= mid + 34200 * 10**9) & (t < mid + 36000 * 10**9)]
want = want[np.argsort(want["event_no"], kind="stable")]
got = wirebook.read(path, sym, "09:30", "10:00")
assert len(want) > 0 and np.array_equal(got, want), (len(got), len(want))
got2 = wirebook.read(path, [sym], datetime.datetime(2026, 2, 19, 9, 30), datetime.datetime(2026, 2, 19, 10, 0))
assert np.array_equal(got2, want)
every = wirebook.read(path)
assert len(every) == len(allrows) and (np.diff(every["event_no"].astype(np.int64)) >= 0).all()
trades = wirebook.read(path, sym, table="trades")
assert len(trades) and (trades["symbol"] == sym.encode()).all()
print(f"ok {sym} {len(got)} rows from 09:30 to 10:00, {len(every)} in all, {len(trades)} trades")
P
grep -q '^ok' "$T/read.out" && ok "wirebook.read: $(sed -n 's/^ok //p' "$T/read.out"), equal to the table filtered by hand" ||
	{ bad "wirebook.read"; tail -5 "$T/read.out"; }
finish
