#!/usr/bin/env bash
# The C++ example (examples/book_top.cpp) reads a live wirebookd's book:
# it lists the symbols, and its top and NBBO agree with wb-book's; built
# as a new user would, from an installed prefix with pkg-config, against
# libwirebook.so.1, it reads the same.
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
P="$T/prefix"
make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$T/install.out" 2>&1 ||
	{ bad "make install failed"; tail -5 "$T/install.out"; }
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs wirebook)
cp "$P/share/wirebook/examples/book_top.cpp" "$T/"
( cd "$T" && c++ -std=c++11 -Wall -Wextra -Werror -pedantic book_top.cpp $flags -Wl,-rpath,"$P/lib" \
	-o book_top_inst ) 2>"$T/cxx.err" && ok "book_top.cpp builds as C++11 from the installed prefix" ||
	{ bad "book_top.cpp does not build from the prefix"; head "$T/cxx.err"; }
check "... linked to $P/lib/libwirebook.so.1" sh -c "ldd '$T/book_top_inst' | grep -q '=> $P/lib/libwirebook.so.1'"
"$T/book_top_inst" --book "$SHM" >"$T/inst.out" 2>&1
cmp -s "$T/inst.out" "$T/all.out" && ok "... and prints what the tree's build prints" ||
	bad "installed build differs: $(diff "$T/all.out" "$T/inst.out" | head -3)"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
finish
