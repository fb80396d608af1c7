#!/usr/bin/env bash
# Run each benchmark program; they print their own figures. bench_file
# takes a day file: make bench-file runs it (mk/bench.mk) on the days whose
# wb-gen recipes are kept here, so every run of it reads the same bytes.
#
#   scripts/bench.sh BENCH...                       run the benchmark programs
#   scripts/bench.sh --day NAME WB_GEN FILE         write the NAME day to FILE
#   scripts/bench.sh --file-rows NAME BENCH_FILE DAY OUT
#                                                   bench_file's rows on DAY,
#                                                   saved in OUT, under a heading
# Days (ITCH BinaryFILEs, 5,000,000 order messages, 8,000 symbols):
#   friendly  the generated day the benchmarks have always used: Zipf-like
#             symbol activity, orders near the touch, ~1M live at the peak
#   hostile   ~1M live orders from before the open to the close, spread
#             evenly over the 8,000 symbols and 32 levels a side: every
#             event touches a cold order, level and symbol (issue 21)
set -eu

day_recipe() {
	case $1 in
	friendly) echo "-p day -n 5000000 --symbols 8000" ;;
	hostile) echo "-p hostile -n 5000000 --symbols 8000" ;;
	*) echo "bench.sh: no day named '$1' (friendly, hostile)" >&2; return 1 ;;
	esac
}

case ${1:-} in
--day)
	[ $# -eq 4 ] || { echo "usage: scripts/bench.sh --day NAME WB_GEN FILE" >&2; exit 2; }
	recipe=$(day_recipe "$2")
	mkdir -p "$(dirname "$4")"
	# shellcheck disable=SC2086
	exec "$3" -q $recipe -f itch-file -o "$4"
	;;
--file-rows)
	[ $# -eq 5 ] || { echo "usage: scripts/bench.sh --file-rows NAME BENCH_FILE DAY OUT" >&2; exit 2; }
	recipe=$(day_recipe "$2")
	echo "== bench_file, $2 day (wb-gen $recipe): $4"
	"$3" "$4" > "$5"
	cat "$5"
	exit 0
	;;
esac

for b in "$@"; do
	case $(basename "$b") in
	bench_file) continue ;;
	esac
	echo "== $(basename "$b")"
	"$b"
done
