#!/usr/bin/env bash
# Instructions per message of the decode and book paths, counted by
# callgrind on a fixed generated sample (tests/bench/callgrind_sample.c):
# deterministic, so every change to a hot path shows a number that does
# not depend on what else the machine is doing.
#   scripts/bench-instructions.sh SAMPLE_BINARY [MESSAGES [PROFILE [SYMBOLS]]]
# PROFILE is wb-gen's (day, the default; hostile: issue 21's cold day,
# whose per-symbol depth a smaller sample keeps with fewer symbols: 1M
# messages over 1,600 symbols is 125 live orders a symbol, as 5M over
# 8,000). One callgrind run counts the three phases (inclusive costs).
# The sample is built for x86-64-v3 (valgrind does not decode every
# -march=native instruction, AVX-512 for one), so counts are comparable
# from machine to machine of that level, not with a native build's.
set -eu
sample=$1
messages=${2:-200000}
profile=${3:-day}
symbols=${4:-}
if ! command -v valgrind >/dev/null; then
	echo "bench-instructions: valgrind is not installed (apt-get install valgrind)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/wb-bench-instructions.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect=phase_decode \
	--toggle-collect=phase_venue_books --toggle-collect=phase_super_book \
	"$sample" "$messages" "$profile" $symbols >"$tmp/sample.out" 2>"$tmp/sample.err" ||
	{ cat "$tmp/sample.err" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg.out" >"$tmp/annotate.out"
count() {
	sed -n "s/^ *\([0-9,]*\) .*:$1 .*/\1/p" "$tmp/annotate.out" | head -1 | tr -d ,
}

decode=$(count phase_decode)
books=$(count phase_venue_books)
super=$(count phase_super_book)
read -r _ _ msgs _ events _ updates _ levels _ publishes _ live < "$tmp/sample.out"
awk -v m="$msgs" -v e="$events" -v u="$levels" -v p="$publishes" -v d="$decode" -v b="$books" -v s="$super" \
	-v n="$messages" -v prof="$profile${symbols:+, $symbols symbols}" -v live="$live" 'BEGIN {
	printf "instructions (callgrind, exact; sample: generated ITCH day (wb-gen profile %s) of %d order messages, %d messages, %d events, %d live orders at the end)\n", prof, n, m, e, live
	printf "  %-12s %8.1f instructions/msg\n", "decode", d / m
	printf "  %-12s %8.1f instructions/event  (%.1f/msg)\n", "venue books", b / e, b / m
	printf "  %-12s %8.1f instructions/msg    (%.1f per level update, %d level updates, %d symbol publishes)\n", \
		"Super-Book", s / m, s / u, u, p
}'
