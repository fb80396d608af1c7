#!/usr/bin/env bash
# wb-export --format dbn and --format hftbacktest on a generated nine-venue
# day: the files, read back by decoders written from the published specs
# (dbn_read.py, check_formats.py: struct, zipfile, the zstd command), equal
# the CSV events of the same day event for event; a second export is byte
# for byte the same; --schema picks the files; bad options fail.
. "$(dirname "$0")/../service/lib.sh"
PY=${PYTHON:-python3}
HERE=$ROOT/tests/export

"$B/wb-gen" -s 3 --venues nasdaq,bx,psx,bzx,byx,edgx,edga,nyse,arca -n 30000 --symbols 20 \
	-o "$T/day.pcap" >/dev/null 2>&1 || { bad "wb-gen failed"; finish; }
for f in csv dbn hftbacktest; do
	"$B/wb-export" --format $f --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/$f" 2>"$T/$f.err" ||
		{ bad "--format $f failed: $(cat "$T/$f.err")"; finish; }
	ok "--format $f: $(sed 's/^wb-export: //' "$T/$f.err")"
done
if [ -f "$T/dbn/mbo.dbn.zst" ]; then
	ok "built with libzstd: mbo.dbn.zst"
	command -v zstd >/dev/null || { bad "no zstd command to read .dbn.zst (Debian: zstd)"; finish; }
elif [ -f "$T/dbn/mbo.dbn" ]; then
	ok "built without libzstd: plain mbo.dbn"
else
	bad "no mbo.dbn[.zst] in $(ls "$T/dbn")"
fi

"$PY" "$HERE/check_formats.py" "$T/csv" "$T/dbn" "$T/hftbacktest" >"$T/check.out" 2>&1
sed "s/^\(PASS\|FAIL\|SKIP\) /\1 $NAME: /" "$T/check.out"
grep -q '^PASS' "$T/check.out" && ! grep -q '^FAIL' "$T/check.out" && [ "$(grep -c . "$T/check.out")" -gt 5 ] ||
	{ FAILS=$((FAILS + 1)); grep -v '^\(PASS\|FAIL\|SKIP\)' "$T/check.out" | head -20; }

# a lossy day (gaps, duplicates): orders the books never saw
"$B/wb-gen" -s 5 --pitch --xdp -n 40000 --symbols 30 --gap-every 97 --dup-every 50 \
	-o "$T/lossy.pcap" >/dev/null 2>&1 || bad "wb-gen (lossy) failed"
for f in csv dbn hftbacktest; do
	"$B/wb-export" -q --format $f --feeds "$ROOT/feeds.conf" "$T/lossy.pcap" "$T/lossy-$f" ||
		bad "lossy day: --format $f failed"
done
"$PY" "$HERE/check_formats.py" "$T/lossy-csv" "$T/lossy-dbn" "$T/lossy-hftbacktest" >"$T/lossy.out" 2>&1
grep -q '^PASS' "$T/lossy.out" && ! grep -q '^FAIL' "$T/lossy.out" &&
	ok "a lossy day (gaps, duplicates): $(grep -c '^PASS' "$T/lossy.out") checks of check_formats.py pass" ||
	{ bad "a lossy day:"; grep -v '^PASS' "$T/lossy.out" | head -20; }

"$B/wb-export" -q --format dbn --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/dbn2" &&
	"$B/wb-export" -q --format hftbacktest --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/hbt2" &&
	diff -r "$T/dbn" "$T/dbn2" >/dev/null && diff -r "$T/hftbacktest" "$T/hbt2" >/dev/null &&
	ok "a second export of the day is byte for byte the same" || bad "two exports differ"
ls -A "$T/dbn" "$T/hftbacktest" | grep -q '^\.' && bad "temporary files left in OUTPUT" ||
	ok "no temporary files left in OUTPUT"

"$B/wb-export" -q --format dbn --schema mbo,trades --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/two" &&
	[ "$(ls "$T/two" | sed 's/\.dbn.*//' | sort | tr '\n' ' ')" = "mbo trades " ] &&
	cmp -s "$T/two/mbo.dbn"* "$T/dbn/mbo.dbn"* &&
	ok "--schema mbo,trades: those two files, the same mbo" || bad "--schema mbo,trades: $(ls "$T/two")"

"$B/wb-export" --format dbn --schema mbp-5 --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/bad1" 2>"$T/bad1.err"
[ $? -eq 2 ] && grep -q 'expected a list of mbo' "$T/bad1.err" && ok "--schema mbp-5: exit 2" ||
	bad "--schema mbp-5: $(cat "$T/bad1.err")"
"$B/wb-export" --format csv --schema mbo --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/bad2" 2>"$T/bad2.err"
[ $? -eq 2 ] && grep -q -- '--schema applies to --format dbn' "$T/bad2.err" &&
	ok "--schema with csv: exit 2" || bad "--schema with csv: $(cat "$T/bad2.err")"
"$B/wb-export" --format hftbacktest --depth 3 --feeds "$ROOT/feeds.conf" "$T/day.pcap" "$T/bad3" 2>"$T/bad3.err"
[ $? -eq 2 ] && grep -q -- '--depth applies to the tables' "$T/bad3.err" &&
	ok "--depth with hftbacktest: exit 2" || bad "--depth with hftbacktest: $(cat "$T/bad3.err")"
finish
