#!/usr/bin/env bash
# What order detail (wirebookd --order-detail; issue 25) costs the live
# path, in instructions counted by callgrind: deterministic, so the figure
# does not depend on what else the machine is doing (it says nothing of
# cache misses: compare ns only within one quiet sitting).
#   scripts/bench-order-detail.sh BENCH_FILE [MESSAGES [DETAIL...]]
# BENCH_FILE: bench_file built for callgrind (make bench-order-detail does);
# DETAIL: bench_file --order-detail values (default: 600 all) against off.
# Runs bench_file's single-thread "decode + venue books + Super-Book" row on
# a generated ITCH day (8,000 symbols; instruments 1-600 carry about 60 %
# of the events) and prints per event: decode, venue books (the detail's
# work happens in their emit, so it is counted there), Super-Book, the
# whole path, and the detail's part of the books and of the whole.
set -eu
bench=$1
messages=${2:-200000}
shift $(( $# >= 2 ? 2 : $# ))
details=${*:-600 all}
if ! command -v valgrind >/dev/null; then
	echo "bench-order-detail: valgrind is not installed (apt-get install valgrind)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/wb-bench-order-detail.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# incl FILE FUNCTION: its inclusive instructions
incl() {
	sed -n "s/^ *\([0-9,]*\) ([^)]*) *[^ ]*:$2 \[.*/\1/p" "$1" | head -1 | tr -d ,
}

measure() {	# TAG [bench_file args]: "events decode books super"
	local tag=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/$tag.cg" "$bench" --generate "$messages" \
		--rows superbook --runs 1 "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err" ||
		{ cat "$tmp/$tag.err" >&2; exit 1; }
	callgrind_annotate --inclusive=yes --threshold=100 "$tmp/$tag.cg" >"$tmp/$tag.ann"
	echo "$(sed -n 's/.*CPU, \([0-9]*\) events.*/\1/p' "$tmp/$tag.out" | head -1)" \
		"$(incl "$tmp/$tag.ann" capture_replay)" "$(incl "$tmp/$tag.ann" venue_books_apply_batch)" \
		"$(( $(incl "$tmp/$tag.ann" superbook_apply_run) + $(incl "$tmp/$tag.ann" superbook_publish) ))"
}

read -r ev0 dec0 books0 super0 <<<"$(measure off)"
echo "instructions per event (callgrind, exact; generated ITCH day of $messages order messages, 8000 symbols, $ev0 events; bench_file row decode + venue books + Super-Book)"
printf '  %-18s %8s %8s %8s %8s %10s %10s\n' detail decode books super whole "books +" "whole +"
for d in off $details; do
	if [ "$d" = off ]; then
		read -r ev dec books super <<<"$ev0 $dec0 $books0 $super0"
	else
		read -r ev dec books super <<<"$(measure "d$d" --order-detail "$d")"
	fi
	awk -v d="$d" -v e="$ev" -v dec="$dec" -v b="$books" -v s="$super" -v b0="$books0" -v dec0="$dec0" -v s0="$super0" 'BEGIN {
		whole = dec + b + s; whole0 = dec0 + b0 + s0
		printf "  %-18s %8.1f %8.1f %8.1f %8.1f %9.1f%% %9.1f%%\n", (d == "off" ? "off" : "--order-detail " d), \
			dec / e, b / e, s / e, whole / e, 100 * (b - b0) / b0, 100 * (whole - whole0) / whole0
	}'
done
