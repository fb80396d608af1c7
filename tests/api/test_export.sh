#!/usr/bin/env bash
# wb-export --format csv: every order event wb-dump decodes is a row of
# events.csv (per kind), every trade the builder counts is a row of
# trades.csv, and the last nbbo, bbo and book rows of each symbol are what
# a live wirebookd replaying the same capture publishes (read with the
# Python package); a BinaryFILE exports like its pcap; bad options fail.
. "$(dirname "$0")/../service/lib.sh"
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}

cap=$(demo_capture)
"$B/wb-export" --format csv --feeds "$ROOT/feeds.conf" --depth 3 "$cap" "$T/out" 2>"$T/export.err" ||
	{ bad "wb-export failed: $(cat "$T/export.err")"; finish; }
ok "exported: $(sed 's/^wb-export: //' "$T/export.err")"

kinds='ADD|EXEC|EXECP|REDUCE|DELETE|REPLACE|MODIFY|TRADE|BREAK'
"$B/wb-dump" --feeds "$ROOT/feeds.conf" "$cap" | awk -v k="^($kinds)\$" '$5 ~ k { print $5 }' |
	sort | uniq -c >"$T/dump.kinds"
tail -n +2 "$T/out/events.csv" | cut -d, -f7 | sort | uniq -c >"$T/csv.kinds"
[ -s "$T/dump.kinds" ] && diff "$T/dump.kinds" "$T/csv.kinds" >/dev/null &&
	ok "events.csv: wb-dump's order events, per kind ($(echo $(awk '{ s += $1 } END { print s }' "$T/csv.kinds")) rows)" ||
	{ bad "events.csv kinds differ from wb-dump's"; diff "$T/dump.kinds" "$T/csv.kinds" | head; }
awk -F, 'NR > 2 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' "$T/out/events.csv" &&
	ok "events.csv in receive-time order" || bad "events.csv goes back in time"

"$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM-t" --no-pin --exit-at-eof \
	>"$T/wbd-t.err" 2>&1
trades=$(sed -n 's/.*super-book:.* trades \([0-9]*\),.*/\1/p' "$T/wbd-t.err")
rows=$(($(wc -l <"$T/out/trades.csv") - 1))
[ -n "$trades" ] && [ "$rows" -eq "$trades" ] && ok "trades.csv: $rows rows, wirebookd's trade count" ||
	bad "trades.csv $rows rows, wirebookd counted '$trades'"

bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin >/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || { bad "wirebookd did not replay"; finish; }
$PY - "$SHM" "$T/out" >"$T/cmp.out" 2>&1 <<'P'
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
        for r in csv.DictReader(f):
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
grep -q ' 0 differ$' "$T/cmp.out" && [ "$(grep -o 'compared [0-9]*' "$T/cmp.out")" != "compared 0" ] &&
	ok "last rows = the live book: $(tail -1 "$T/cmp.out")" || { bad "CSV and the live book differ"; head "$T/cmp.out"; }
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null

# A BinaryFILE: no feed map needed; the same rows as wb-dump --itch-file.
"$B/wb-gen" -s 5 -n 3000 -f itch-file.gz -o "$T/day.itch.gz" >/dev/null 2>&1
"$B/wb-export" --quiet --itch-file "$T/day.itch.gz" "$T/itch" 2>"$T/itch.err"
n_dump=$("$B/wb-dump" --itch-file "$T/day.itch.gz" | awk -v k="^($kinds)\$" '$5 ~ k' | wc -l)
n_csv=$(($(wc -l <"$T/itch/events.csv") - 1))
[ "$n_dump" -gt 0 ] && [ "$n_csv" -eq "$n_dump" ] && [ ! -s "$T/itch.err" ] &&
	ok "--itch-file: $n_csv events, as wb-dump --itch-file" || bad "--itch-file: $n_csv rows, wb-dump $n_dump: $(cat "$T/itch.err")"

"$B/wb-export" --format hdf5 "$cap" "$T/h" 2>"$T/fmt.err"
[ $? -eq 2 ] && grep -q 'only csv' "$T/fmt.err" && ok "--format hdf5: exit 2, says only csv" ||
	bad "--format hdf5: $(cat "$T/fmt.err")"
"$B/wb-export" "$T/none.pcap" "$T/n" 2>"$T/none.err"
[ $? -eq 1 ] && grep -q 'none.pcap' "$T/none.err" && ok "a missing input: exit 1, named" ||
	bad "missing input: $(cat "$T/none.err")"
finish
