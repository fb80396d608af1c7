#!/usr/bin/env bash
# Instructions per message of the decode and book paths, counted by
# callgrind on a fixed generated sample (tests/bench/callgrind_sample.c):
# deterministic, so every change to a hot path shows a number that does
# not depend on what else the machine is doing.
#   scripts/bench-instructions.sh SAMPLE_BINARY [MESSAGES]
# The sample is built for x86-64-v3 (valgrind does not decode every
# -march=native instruction, AVX-512 for one), so counts are comparable
# from machine to machine of that level, not with a native build's.
set -eu
sample=$1
messages=${2:-200000}
if ! command -v valgrind >/dev/null; then
	echo "bench-instructions: valgrind is not installed (apt-get install valgrind)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/wb-bench-instructions.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

count() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --toggle-collect="$1" \
		"$sample" "$messages" >"$tmp/$1.out" 2>"$tmp/$1.err" ||
		{ cat "$tmp/$1.err" >&2; exit 1; }
	sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/$1.err"
}

decode=$(count phase_decode)
books=$(count phase_venue_books)
super=$(count phase_super_book)
read -r _ _ msgs _ events _ updates _ levels _ publishes _ live < "$tmp/phase_decode.out"
awk -v m="$msgs" -v e="$events" -v u="$levels" -v p="$publishes" -v d="$decode" -v b="$books" -v s="$super" \
	-v n="$messages" 'BEGIN {
	printf "instructions (callgrind, exact; sample: generated ITCH day of %d order messages, %d messages, %d events)\n", n, m, e
	printf "  %-12s %8.1f instructions/msg\n", "decode", d / m
	printf "  %-12s %8.1f instructions/event  (%.1f/msg)\n", "venue books", b / e, b / m
	printf "  %-12s %8.1f instructions/msg    (%.1f per level update, %d level updates, %d symbol publishes)\n", \
		"Super-Book", s / m, s / u, u, p
}'
