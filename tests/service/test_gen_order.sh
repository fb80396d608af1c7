#!/usr/bin/env bash
# Issue 14.4: every capture wb-gen writes is in time order. For each
# protocol and option that changes packet timing: the pcap record times
# never step back, and each venue's exchange times (as wb-dump decodes
# them) never step back either; the BinaryFILE's ITCH timestamps too.
. "$(dirname "$0")/lib.sh"

order_py=$(cat <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, prev, back, worst, n = 24, 0, 0, 0, 0
while off < len(d):
    s, ns, cl, ol = struct.unpack('<IIII', d[off:off + 16])
    t = s * 10**9 + ns
    off += 16 + cl
    n += 1
    if t < prev:
        back += 1
        worst = max(worst, prev - t)
    prev = max(prev, t)
print(f"{n} records, {back} step back (worst {worst / 1e9:.6f} s)")
sys.exit(1 if back or n == 0 else 0)
PY
)
# wb-dump lines: "<seq> <hh:mm:ss.nnnnnnnnn> <venue>/<line> ...": per venue.
exch_py=$(cat <<'PY'
import sys
last, back, n = {}, 0, 0
for line in sys.stdin:
    f = line.split()
    if len(f) < 3 or f[0].startswith('#') or ':' not in f[1]:
        continue
    h, m, s = f[1].split(':')
    t = (int(h) * 3600 + int(m) * 60) * 10**9 + int(s.replace('.', ''))
    v = f[2].split('/')[0]
    n += 1
    if t == 0:
        continue  # PITCH: unknown before a unit's first Time message
    if t < last.get(v, 0):
        back += 1
    last[v] = max(last.get(v, 0), t)
print(f"{n} events, {back} exchange-time steps back")
sys.exit(1 if back or n == 0 else 0)
PY
)

for args in "-p demo" "-p demo --ab" "-p demo --pitch" "-p demo --pitch --ab" \
	"-p demo --pitch --ab --gap-every 40 --dup-every 25" "-p demo --pitch --max-payload 120" \
	"-p day -n 300000 --symbols 300 --pitch --ab"; do
	if ! "$B/wb-gen" $args -s 3 -o "$T/g.pcap" >/dev/null 2>"$T/gen.err"; then
		bad "wb-gen $args failed: $(tail -1 "$T/gen.err")"
		continue
	fi
	r=$(python3 -c "$order_py" "$T/g.pcap") && ok "pcap times in order: wb-gen $args ($r)" ||
		bad "pcap times step back: wb-gen $args ($r)"
	r=$("$B/wb-dump" --symbols AAPL,MSFT,SPY "$T/g.pcap" 2>/dev/null | python3 -c "$exch_py") &&
		ok "exchange times in order per venue: wb-gen $args ($r)" ||
		bad "exchange times step back per venue: wb-gen $args ($r)"
done

for fmt in itch-file itch-file.gz; do
	"$B/wb-gen" -p demo -s 3 -f "$fmt" -o "$T/g.bin" >/dev/null 2>&1 || bad "wb-gen -f $fmt failed"
	r=$("$B/wb-dump" --itch-file "$T/g.bin" 2>/dev/null | python3 -c "$exch_py") &&
		ok "BinaryFILE ($fmt) exchange times in order ($r)" ||
		bad "BinaryFILE ($fmt) exchange times step back ($r)"
done
finish
