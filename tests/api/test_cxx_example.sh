#!/usr/bin/env bash
# The C++ example (examples/book_top.cpp) reads a live wirebookd's book:
# it lists the symbols, and its top and NBBO agree with wb-book's.
. "$(dirname "$0")/../service/lib.sh"

cap=$(demo_capture)
bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin >/dev/null 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || { bad "wirebookd did not replay"; cat "$T/wbd.err"; finish; }

"$B/examples/book_top" --book "$SHM" >"$T/all.out" 2>&1
n=$(sed -n 's/^symbols //p' "$T/all.out")
rows=$(grep -c ' top ' "$T/all.out")
[ -n "$n" ] && [ "$n" -gt 1 ] && [ "$rows" -eq "$n" ] &&
	ok "book_top lists $n symbols, one row each" || { bad "book_top: symbols '$n', rows $rows"; head "$T/all.out"; }
check "AAPL among them" grep -q '^AAPL ' "$T/all.out"

"$B/examples/book_top" --book "$SHM" AAPL >"$T/aapl.out" 2>&1
line=$(grep '^AAPL ' "$T/aapl.out")
# wb-book's NBBO of the same (final) book: bid and ask prices must match.
"$B/wb-book" --shm "$SHM" --once AAPL >"$T/book.out" 2>&1
bid=$(echo "$line" | sed -n 's/.* nbbo \([0-9.]*\) x .*/\1/p')
ask=$(echo "$line" | sed -n 's/.* nbbo [0-9.]* x \([0-9.]*\) .*/\1/p')
[ -n "$bid" ] && [ -n "$ask" ] && awk -v b="$bid" -v a="$ask" 'BEGIN { exit !(b > 0 && a > b) }' &&
	ok "AAPL NBBO $bid x $ask (bid > 0, ask > bid)" || bad "AAPL line: '$line'"
grep -q -- "$bid" "$T/book.out" && grep -q -- "$ask" "$T/book.out" &&
	ok "wb-book shows the same prices" || { bad "wb-book differs"; head -20 "$T/book.out"; }
"$B/examples/book_top" --book "$SHM" NOSUCH >"$T/nosym.out" 2>&1
[ $? -eq 1 ] && grep -q 'NOSUCH: unknown symbol' "$T/nosym.out" &&
	ok "an unknown symbol fails with wb_strerror's words" || bad "NOSUCH: $(cat "$T/nosym.out")"
"$B/examples/book_top" --book "$SHM-none" >"$T/nobook.out" 2>&1
[ $? -eq 1 ] && grep -q 'no book of that name' "$T/nobook.out" &&
	ok "a missing book fails clearly" || bad "missing book: $(cat "$T/nobook.out")"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
finish
