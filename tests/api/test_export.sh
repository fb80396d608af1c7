#!/usr/bin/env bash
# wb-export --format csv: every order event wb-dump decodes is a row of
# events.csv (per kind), every trade the builder counts is a row of
# trades.csv, and the last nbbo, bbo and book rows of each symbol are what
# a live wirebookd replaying the same capture publishes (read with the
# Python package); --format hdf5 writes the same tables (read back with
# h5py); a BinaryFILE exports like its pcap; bad options fail.
. "$(dirname "$0")/../service/lib.sh"
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}

cap=$(demo_capture)
"$B/wb-export" --format csv --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/out" 2>"$T/export.err" ||
	{ bad "wb-export failed: $(cat "$T/export.err")"; finish; }
ok "exported: $(sed 's/^wb-export: //' "$T/export.err")"

# events.csv: a comment line saying what the file holds, the column names,
# then one row per event that changes a book (a venue-wide CLEAR once more
# per symbol: the rows of one event share its event_no, column 16).
rows() { grep -v '^#' "$1" | tail -n +2; }
nrows() { rows "$1" | wc -l; }
kinds='ADD|EXEC|EXECP|REDUCE|DELETE|REPLACE|MODIFY|TRADE|BREAK|STATUS|CLEAR|SYMBOL|GAP'
"$B/wb-dump" --feeds "$ROOT/feeds.conf" "$cap" | awk -v k="^($kinds)\$" '$5 ~ k { print $5 }' |
	sort | uniq -c >"$T/dump.kinds"
rows "$T/out/events.csv" | awk -F, '!seen[$16]++ { print $7 }' | sort | uniq -c >"$T/csv.kinds"
[ -s "$T/dump.kinds" ] && diff "$T/dump.kinds" "$T/csv.kinds" >/dev/null &&
	ok "events.csv: wb-dump's order, status, clear and symbol events, per kind ($(echo $(awk '{ s += $1 } END { print s }' "$T/csv.kinds")) events)" ||
	{ bad "events.csv kinds differ from wb-dump's"; diff "$T/dump.kinds" "$T/csv.kinds" | head; }
rows "$T/out/events.csv" | awk -F, 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' &&
	ok "events.csv in receive-time order" || bad "events.csv goes back in time"
head -1 "$T/out/events.csv" | grep -q '^# wirebook export: table=events trading_date=2026-02-19 schema_version=2 price_scale=100000000 .*source=.*demo.pcap' &&
	ok "events.csv says its trading date, schema, price scale and source in its first line" ||
	bad "events.csv header: $(head -1 "$T/out/events.csv")"
# Issue 24.2: every follow-on row names its order's side and resting price.
nosp=$(rows "$T/out/events.csv" | awk -F, '$7 ~ /^(EXEC|REDUCE|DELETE|REPLACE)$/ && ($8 == "" || $10 == "")' | wc -l)
nfo=$(rows "$T/out/events.csv" | awk -F, '$7 ~ /^(EXEC|REDUCE|DELETE|REPLACE)$/' | wc -l)
[ "$nfo" -gt 0 ] && [ "$nosp" -eq 0 ] && ok "all $nfo EXEC/REDUCE/DELETE/REPLACE rows have a side and a price" ||
	bad "$nosp of $nfo follow-on rows lack a side or a price"
lastp=$(rows "$T/out/events.csv" | awk -F, '$15 == 1' | wc -l)
[ "$lastp" -gt 0 ] && [ "$lastp" -lt "$(nrows "$T/out/events.csv")" ] &&
	ok "last_in_packet: $lastp rows end a packet" || bad "last_in_packet on $lastp rows"
# every table's rows say it too: the last bbo row of a packet (the rows
# before it in the packet are states the packet passed through)
lastb=$(rows "$T/out/bbo.csv" | awk -F, '$NF == 1' | wc -l)
[ "$lastb" -gt 0 ] && [ "$lastb" -le "$(nrows "$T/out/bbo.csv")" ] && head -2 "$T/out/bbo.csv" | tail -1 | grep -q ',last_in_packet$' &&
	ok "bbo.csv: last_in_packet on $lastb of $(nrows "$T/out/bbo.csv") rows" || bad "bbo.csv last_in_packet: $lastb"
agg=$(rows "$T/out/trades.csv" | awk -F, '$10 == "B" || $10 == "S"' | wc -l)
[ "$agg" -gt 0 ] && ok "trades.csv: $agg executions name the aggressor side" || bad "no trade has an aggressor side"

"$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM-t" --no-pin --exit-at-eof \
	>"$T/wbd-t.err" 2>&1
trades=$(sed -n 's/.*super-book:.* trades \([0-9]*\),.*/\1/p' "$T/wbd-t.err")
rows=$(nrows "$T/out/trades.csv")
[ -n "$trades" ] && [ "$rows" -eq "$trades" ] && ok "trades.csv: $rows rows, wirebookd's trade count" ||
	bad "trades.csv $rows rows, wirebookd counted '$trades'"

bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin >/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || { bad "wirebookd did not replay"; finish; }
cat >"$T/cmp.py" <<'P'
import csv, sys, wirebook
book, out = wirebook.open(sys.argv[1], raw=True), sys.argv[2]

def px(s):  # the CSV's dollars back to the book's 1e-8 units
    if not s:
        return 0
    whole, _, frac = s.partition(".")
    sign = -1 if whole.startswith("-") else 1
    return sign * (abs(int(whole or "0")) * 10**8 + int((frac + "0" * 8)[:8]))

def last_rows(name, key):
    rows = {}
    with open(f"{out}/{name}.csv") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            rows[key(r)] = r
    return rows

bad = 0
nbbo = last_rows("nbbo", lambda r: r["symbol"])
for s, r in nbbo.items():
    n = book.nbbo(s)
    got = (px(r["bid"]), int(r["bid_qty"]), px(r["ask"]), int(r["ask_qty"]))
    want = (n.bid, n.bid_qty, n.ask, n.ask_qty)
    if got != want:
        print("nbbo", s, got, want); bad += 1
bbo = last_rows("bbo", lambda r: (r["symbol"], r["venue"]))
for (s, v), r in bbo.items():
    b = book.venue_bbo(s, v)
    got = (px(r["bid"]), int(r["bid_qty"]), px(r["ask"]), int(r["ask_qty"]))
    if got != (b.bid, b.bid_qty, b.ask, b.ask_qty):
        print("bbo", s, v, got, b); bad += 1
books = last_rows("book", lambda r: r["symbol"])
for s, r in books.items():
    bids, asks = book.depth(s, 3)
    for side, levels in (("bid", bids), ("ask", asks)):
        for i in range(3):
            got = (px(r[f"{side}_{i + 1}"]), int(r[f"{side}_qty_{i + 1}"] or 0))
            want = (levels[i].price, levels[i].qty) if i < len(levels) else (0, 0)
            if got != want:
                print("book", s, side, i + 1, got, want); bad += 1
print(f"compared {len(nbbo)} symbols' NBBO, {len(bbo)} venue BBOs, {len(books)} books: {bad} differ")
P
$PY "$T/cmp.py" "$SHM" "$T/out" >"$T/cmp.out" 2>&1
grep -q ' 0 differ$' "$T/cmp.out" && [ "$(grep -o 'compared [0-9]*' "$T/cmp.out")" != "compared 0" ] &&
	ok "last rows = the live book: $(tail -1 "$T/cmp.out")" || { bad "CSV and the live book differ"; head "$T/cmp.out"; }

# --interval: book rows only at ticks (recv_ts a multiple of it), at most
# one per symbol and tick, fewer than at every change, the last still the
# live book's.
"$B/wb-export" --quiet --feeds "$ROOT/feeds.conf" --depth 3 --interval 1000 "$cap" "$T/outi" 2>"$T/i.err"
$PY "$T/cmp.py" "$SHM" "$T/outi" >"$T/cmpi.out" 2>&1
every=$(nrows "$T/out/book.csv") ticked=$(nrows "$T/outi/book.csv")
off=$(rows "$T/outi/book.csv" | awk -F, '$1 % 1000000000 != 0' | wc -l)
dup=$(rows "$T/outi/book.csv" | awk -F, '{ print $1, $4 }' | sort | uniq -d | wc -l)
[ "$ticked" -gt 0 ] && [ "$ticked" -lt "$every" ] && [ "$off" -eq 0 ] && [ "$dup" -eq 0 ] &&
	grep -q ' 0 differ$' "$T/cmpi.out" &&
	ok "--interval 1000: $ticked book rows at 1 s ticks (every change: $every), the last ones the live book's" ||
	bad "--interval: $ticked rows (every change $every), $off off-tick, $dup twice in a tick; $(tail -1 "$T/cmpi.out") $(cat "$T/i.err")"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null

# --start/--end: rows of that part of the day only (times of day, US/Eastern).
"$B/wb-export" --quiet --feeds "$ROOT/feeds.conf" --start 09:30 --end 09:30:05 "$cap" "$T/win" 2>"$T/win.err"
win=$(rows "$T/win/events.csv" | awk -F, '{ t = ($2 - 1771477200000000000) / 1e9; if (t < 34200 || t >= 34205) out++ } END { print out + 0 }')
[ "$(nrows "$T/win/events.csv")" -gt 0 ] && [ "$(nrows "$T/win/events.csv")" -lt "$(nrows "$T/out/events.csv")" ] &&
	[ "$win" -eq 0 ] && ok "--start 09:30 --end 09:30:05: $(nrows "$T/win/events.csv") rows, all in it" ||
	bad "--start/--end: $(nrows "$T/win/events.csv") rows, $win outside; $(cat "$T/win.err")"
"$B/wb-export" --quiet --feeds "$ROOT/feeds.conf" --start 21:00 "$cap" "$T/late" 2>"$T/late.err"
[ $? -eq 1 ] && grep -q 'nothing exported.*none between --start and --end' "$T/late.err" &&
	ok "--start after the day: exit 1, says nothing was exported" || bad "--start 21:00: $(cat "$T/late.err")"

# Issue 24.5: a capture whose addresses the feed map lacks: exit 1 and a
# warning, not silence; --proto decodes it as wb-dump --proto does.
printf '10.9.9.9:1 itch nasdaq A\n' >"$T/other.conf"
"$B/wb-gen" -s 3 -n 2000 -o "$T/itch.pcap" >/dev/null 2>&1
"$B/wb-export" --quiet --feeds "$T/other.conf" "$T/itch.pcap" "$T/unmapped" 2>"$T/unmapped.err"
[ $? -eq 1 ] && grep -q 'warning: nothing exported: .*gave no event.*--proto' "$T/unmapped.err" &&
	ok "an unmapped capture: exit 1 and a warning naming --proto" || bad "unmapped capture: $(cat "$T/unmapped.err")"
"$B/wb-export" --quiet --feeds "$T/other.conf" --proto itch:nasdaq "$T/itch.pcap" "$T/proto" 2>"$T/proto.err"
n_proto=$(rows "$T/proto/events.csv" | awk -F, '$7 == "ADD"' | wc -l)
n_dump=$("$B/wb-dump" --feeds "$T/other.conf" --proto itch:nasdaq "$T/itch.pcap" | awk '$5 == "ADD"' | wc -l)
[ "$n_proto" -gt 0 ] && [ "$n_proto" -eq "$n_dump" ] && ok "--proto itch:nasdaq: $n_proto ADD rows, as wb-dump --proto" ||
	bad "--proto: $n_proto ADD rows, wb-dump $n_dump; $(cat "$T/proto.err")"

# A BinaryFILE: no feed map needed; the same rows as wb-dump --itch-file.
"$B/wb-gen" -s 5 -n 3000 -f itch-file.gz -o "$T/day.itch.gz" >/dev/null 2>&1
"$B/wb-export" --quiet --itch-file --date 2026-02-19 "$T/day.itch.gz" "$T/itch" 2>"$T/itch.err"
n_dump=$("$B/wb-dump" --itch-file "$T/day.itch.gz" 2>/dev/null | awk -v k="^($kinds)\$" '$5 ~ k' | wc -l)
n_csv=$(rows "$T/itch/events.csv" | awk -F, -v k="^($kinds)\$" '!seen[$16]++ && $7 ~ k' | wc -l)
[ "$n_dump" -gt 0 ] && [ "$n_csv" -eq "$n_dump" ] && ! grep -qv 'trading day 2026-02-19 (--date)' "$T/itch.err" &&
	ok "--itch-file: $n_csv events, as wb-dump --itch-file" || bad "--itch-file: $n_csv rows, wb-dump $n_dump: $(cat "$T/itch.err")"

# Issue 23.3: a BinaryFILE's exchange times are on its trading day: --date,
# else the MMDDYYYY of Nasdaq's file names (said on stderr), never today's
# silently.
et_day() { python3 -c "import sys, datetime, zoneinfo; print(datetime.datetime.fromtimestamp(
	int(sys.argv[1]) / 1e9, zoneinfo.ZoneInfo('America/New_York')).date())" "$1"; }
first_exch_ts() { rows "$1/events.csv" | awk -F, 'NR == 1 { print $2 }'; }
"$B/wb-gen" -s 5 -n 3000 -f itch-file -o "$T/01302019.NASDAQ_ITCH50" >/dev/null 2>&1
"$B/wb-export" --quiet --itch-file "$T/01302019.NASDAQ_ITCH50" "$T/named" 2>"$T/named.err"
[ "$(et_day "$(first_exch_ts "$T/named")")" = 2019-01-30 ] &&
	grep -q 'trading day 2019-01-30, from the file.s name' "$T/named.err" &&
	ok "a BinaryFILE named 01302019.NASDAQ_ITCH50: exch_ts on 2019-01-30, and it says so" ||
	bad "named BinaryFILE: exch_ts $(first_exch_ts "$T/named"), $(cat "$T/named.err")"
"$B/wb-export" --quiet --itch-file --date 2020-03-04 "$T/01302019.NASDAQ_ITCH50" "$T/dated" 2>/dev/null
[ "$(et_day "$(first_exch_ts "$T/dated")")" = 2020-03-04 ] && ok "--date 2020-03-04 wins over the name" ||
	bad "--date: exch_ts $(first_exch_ts "$T/dated")"
cp "$T/01302019.NASDAQ_ITCH50" "$T/day.itch"
"$B/wb-export" --quiet --itch-file "$T/day.itch" "$T/undated" 2>"$T/undated.err"
grep -q 'warning: .*day.itch: no trading day (give --date' "$T/undated.err" &&
	ok "a BinaryFILE without a day in its name or --date: a warning naming --date" ||
	bad "no day: '$(cat "$T/undated.err")'"
"$B/wirebookd" --itch-file "$T/01302019.NASDAQ_ITCH50" --shm "$SHM-day" --no-pin --exit-at-eof \
	>/dev/null 2>"$T/wbd-day.err"
grep -q 'trading day 2019-01-30, from the file.s name' "$T/wbd-day.err" &&
	ok "wirebookd --itch-file takes the day from the name too" || bad "wirebookd: $(head -3 "$T/wbd-day.err")"
"$B/wirebookd" --pcap "$cap" --date 2020-03-04 --shm "$SHM-day" --no-pin --exit-at-eof >/dev/null 2>"$T/wbd-date.err"
[ $? -eq 2 ] && grep -q -- '--date applies to --itch-file only' "$T/wbd-date.err" &&
	ok "wirebookd --date with --pcap: exit 2" || bad "wirebookd --date --pcap: $(cat "$T/wbd-date.err")"

# HDF5: the same tables, one dataset each, read back with h5py: row
# counts equal the CSV files', and values too (prices in 1e-8 units).
H5PY=
for p in "$PY" /usr/bin/python3; do "$p" -c 'import h5py' 2>/dev/null && { H5PY=$p; break; }; done
"$B/wb-export" --format hdf5 --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/out.h5" 2>"$T/h5.err"
h5rc=$?
if [ "$h5rc" -eq 2 ] && grep -q 'built without libhdf5' "$T/h5.err"; then
	ok "--format hdf5: this build has no libhdf5 and says so (exit 2)"
elif [ "$h5rc" -ne 0 ]; then
	bad "--format hdf5 failed: $(cat "$T/h5.err")"
elif [ -z "$H5PY" ]; then
	bad "no python3 with h5py to read the HDF5 file (Debian: python3-h5py)"
else
	"$H5PY" - "$T/out.h5" "$T/out" >"$T/h5.out" 2>&1 <<'P'
import csv, sys, h5py, numpy as np
f, out = h5py.File(sys.argv[1], "r"), sys.argv[2]
scale = int(f.attrs["price_scale"])
assert scale == 10**8, scale
assert int(f.attrs["schema_version"]) == 2
assert list(f) == ["2026-02-19"], list(f)  # a group per trading date
g = f["2026-02-19"]
assert g.attrs["trading_date"] == b"2026-02-19"
assert f.attrs["venue_names"][1] == b"NASDAQ" and f.attrs["event_kind_names"][1] == b"ADD"
assert g["events"].compression == "gzip" and g["events"].shuffle
prices = {"price", "bid", "ask", "lower", "upper"} | {f"{s}_{i}" for s in ("bid", "ask") for i in range(1, 11)}
def h5val(name, v):
    if isinstance(v, bytes):
        return v.decode()
    if name in prices:
        return "" if v == 0 else ("%.8f" % (v / scale)).rstrip("0").rstrip(".")
    return str(v)
def norm(name, s):  # the CSV's text, in the same form
    if name in prices and s:
        return ("%.8f" % float(s)).rstrip("0").rstrip(".")
    return s
checked = 0
for table in ("events", "trades", "bbo", "nbbo", "status", "gaps", "quotes", "sip_nbbo", "luld", "book"):
    d = g[table][:]
    with open(f"{out}/{table}.csv") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    assert len(rows) == d.shape[0], (table, len(rows), d.shape)
    if table == "events":
        # symbol by symbol, each symbol's rows where the index says, in
        # decode order: sorted by event_no they are the CSV's rows
        ix = g["events_index"][:]
        for s, first, count in ix:
            assert (d["symbol"][first:first + count] == s).all(), s
            assert (np.diff(d["event_no"][first:first + count].astype(np.int64)) >= 0).all(), s
        assert ix["count"].sum() == len(d)
        d = d[np.argsort(d["event_no"], kind="stable")]
    for i in sorted({0, len(rows) // 2, len(rows) - 1}) if rows else ():
        for name in d.dtype.names:
            if name.endswith("venues"):
                continue  # a mask in HDF5, names in CSV
            got, want = h5val(name, d[i][name]), norm(name, rows[i][name])
            if name.endswith(tuple(f"qty_{k}" for k in range(1, 11))) and want == "":
                want = "0"
            assert got == want, (table, i, name, got, want)
            checked += 1
print(f"ok {checked}")
P
	grep -q '^ok' "$T/h5.out" &&
		ok "--format hdf5: every dataset has the CSV's rows; $(sed -n 's/^ok //p' "$T/h5.out") sampled values equal" ||
		{ bad "HDF5 and CSV differ"; tail -3 "$T/h5.out"; }
	# Without --format the output's name decides: .h5 and .hdf5 are HDF5
	# files (the same file as --format hdf5 writes), anything else a CSV
	# directory, and --format csv wins over the name.
	"$B/wb-export" -q --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/named.h5" 2>/dev/null
	"$B/wb-export" -q --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/named.hdf5" 2>/dev/null
	"$B/wb-export" -q --format csv --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/forced.h5" 2>/dev/null
	"$H5PY" - "$T/out.h5" "$T/named.h5" "$T/named.hdf5" <<'P' >"$T/named.out" 2>&1
import sys, h5py
def tables(path):
    out = {}
    h5py.File(path, "r").visititems(lambda n, o: out.__setitem__(n, o[()].tobytes()) if isinstance(o, h5py.Dataset) else None)
    return out
a = tables(sys.argv[1])
print("ok" if a and all(tables(p) == a for p in sys.argv[2:]) else "differ")
P
	grep -q '^ok' "$T/named.out" && [ -d "$T/forced.h5" ] && [ -f "$T/forced.h5/events.csv" ] &&
		ok "no --format: OUTPUT.h5 and .hdf5 are the HDF5 file --format hdf5 writes; --format csv over a .h5 name is a directory" ||
		bad "the output's name and the format: $(tail -2 "$T/named.out"); forced.h5 $(ls -d "$T/forced.h5" 2>&1)"
fi
# The SIPs (the real CQS and UQDF captures): quotes, sip_nbbo and luld
# rows equal wb-dump's QUOTE, NBBO and LULD lines, with the spec's values.
printf '224.0.203.134:45007 cqs cqs A channel=1\n233.46.176.16:55630 uqdf uqdf A channel=1\n' >"$T/sip.conf"
sip_bad=0 sip_n=0
for f in "$ROOT"/pcaps/cqs/*.pcap "$ROOT"/pcaps/uqdf/*.pcap; do
	rm -rf "$T/sip"
	"$B/wb-export" --quiet --feeds "$T/sip.conf" "$f" "$T/sip" 2>"$T/sip1.err"
	rc=$?
	cat "$T/sip1.err" >>"$T/sip.err"
	"$B/wb-dump" --feeds "$T/sip.conf" "$f" >"$T/sip.dump" 2>/dev/null
	# a capture of control messages alone gives no event: exit 1, said
	if [ ! -s "$T/sip.dump" ]; then
		[ "$rc" -eq 1 ] && grep -q 'nothing exported' "$T/sip1.err" || sip_bad=$((sip_bad + 1))
		continue
	fi
	[ "$rc" -eq 0 ] || sip_bad=$((sip_bad + 1))
	for pair in quotes:QUOTE sip_nbbo:NBBO luld:LULD; do
		rows=$(nrows "$T/sip/${pair%%:*}.csv")
		want=$(awk -v k="${pair#*:}" '$5 == k' "$T/sip.dump" | wc -l)
		[ "$rows" -eq "$want" ] || { sip_bad=$((sip_bad + 1)); echo "$(basename "$f") ${pair%%:*}: $rows rows, wb-dump $want"; }
		sip_n=$((sip_n + rows))
	done
	case "$f" in *Q_L_Long_Quote*)
		grep -q ',NYSE,LVWR.WS,,0,,0,R,224,1$' "$T/sip/quotes.csv" &&
		grep -q ',cqs,LVWR.WS,,0,,,0,,O,,3,,1$' "$T/sip/sip_nbbo.csv" || {
			sip_bad=$((sip_bad + 1)); echo "CQS Long Quote rows:"; cat "$T/sip/quotes.csv" "$T/sip/sip_nbbo.csv"; } ;;
	esac
done
[ "$sip_bad" -eq 0 ] && [ "$sip_n" -gt 0 ] &&
	ok "SIP captures: $sip_n quotes, sip_nbbo and luld rows, as wb-dump; CQS Long Quote's values" ||
	bad "SIP tables: $sip_bad problems $(head -3 "$T/sip.err")"

# A live session reads the module's rings (the VM's to test); here: its errors.
"$B/wb-export" --kernel="$T/no-device" --seconds 1 "$T/k" 2>"$T/k.err"
[ $? -eq 1 ] && grep -q 'no wirebook device' "$T/k.err" && ok "--kernel without the module: exit 1, WB_ENODEV's words" ||
	bad "--kernel without the module: $(cat "$T/k.err")"

"$B/wb-export" --interval 10 "$cap" "$T/x" 2>"$T/iv.err"
[ $? -eq 2 ] && grep -q 'give --depth' "$T/iv.err" && ok "--interval without --depth: exit 2, says why" ||
	bad "--interval without --depth: $(cat "$T/iv.err")"
"$B/wb-export" --format parquet "$cap" "$T/h" 2>"$T/fmt.err"
[ $? -eq 2 ] && grep -q 'this build writes csv' "$T/fmt.err" && ok "--format parquet: exit 2, says what it writes" ||
	bad "--format parquet: $(cat "$T/fmt.err")"
"$B/wb-export" "$T/none.pcap" "$T/n" 2>"$T/none.err"
[ $? -eq 1 ] && grep -q 'none.pcap' "$T/none.err" && ok "a missing input: exit 1, named" ||
	bad "missing input: $(cat "$T/none.err")"
finish
