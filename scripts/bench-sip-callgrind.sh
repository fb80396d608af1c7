#!/usr/bin/env bash
# Instructions per message of the CQS and UQDF decoders, counted by
# callgrind (deterministic, and there where the machine has no PMU): one
# pass of each case of bench_sip, only its decode loop collected. The
# binary is built without -march=native (valgrind does not know AVX-512).
set -eu
BIN=${1:-build/cg/bench/bench_sip}
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
	echo "bench-sip-callgrind: valgrind missing: skipped"
	exit 0
fi
out=$(mktemp -d /tmp/wb-sip-callgrind.XXXXXX)
trap 'rm -rf "$out"' EXIT
printf '%-5s %-12s %10s %10s\n' feed subscribed messages Ir/msg
for c in cqs-all cqs-100 uqdf-all uqdf-100; do
	line=$(WB_BENCH_ONLY=$c valgrind --tool=callgrind --toggle-collect=decode_all \
		--callgrind-out-file="$out/$c" "$BIN" --callgrind 2>/dev/null | grep -E '^(cqs|uqdf) ')
	msgs=$(echo "$line" | awk '{ print $4 }')
	ir=$(callgrind_annotate "$out/$c" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
	printf '%-5s %-12s %10s %10.1f\n' "${c%%-*}" "${c#*-}" "$msgs" "$(echo "$ir $msgs" | awk '{ print $1 / $2 }')"
done
