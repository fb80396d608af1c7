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
finish
