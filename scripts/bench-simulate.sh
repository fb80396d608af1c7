#!/bin/sh
# make bench's simulate row (issue 25): a generated day replayed by
# wirebookd --lockstep with examples/join_bid stepping with it, order
# detail for the day's 600 most active symbols (wb-gen lists them first),
# up to 1,000 virtual orders; against the same day with no strategy. Two
# book sets: the detailed symbols only (--subscribe: a desk keeps the books
# of its 600 symbols) and every symbol of the day. Prints messages/s
# (the replay's own time, from its first packet to the end of the file),
# the CPU of both processes and wirebookd's peak RSS: the machine may be
# shared, so compare rows of one run only.
#
#   scripts/bench-simulate.sh BUILD_DIR DAY.itch [SYMBOLS_WITH_DETAIL]
set -eu
B=$1
DAY=$2
NDETAIL=${3:-600}
T=$(mktemp -d /tmp/wb-bench-sim.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$B/wb-dump" --itch-file "$DAY" 2>/dev/null | awk -v n="$NDETAIL" '$5=="SYMBOL"{print $6; if (++k==n) exit}' \
	| paste -sd, > "$T/detail"

# $1: tag; $2: books (detail or all); $3: sim or alone
run() {
	tag=$1
	if [ "$2" = detail ]; then sub=$(cat "$T/detail"); else sub='*'; fi
	if [ "$3" = sim ]; then ls="--lockstep detail"; else ls=""; fi
	# shellcheck disable=SC2086
	/usr/bin/time -f "%M %U %S" -o "$T/$tag.time" "$B/wirebookd" --itch-file "$DAY" \
		--shm "wb-bench-sim-$$-$tag" --no-pin --exit-at-eof --expected-orders 2000000 \
		--subscribe "$sub" --order-detail "$(cat "$T/detail")" $ls > "$T/$tag.out" 2> "$T/$tag.err" &
	wpid=$!
	if [ "$3" = sim ]; then
		/usr/bin/time -f "%U %S" -o "$T/$tag.jb" "$B/examples/join_bid" --book "wb-bench-sim-$$-$tag" \
			--max 1000 > "$T/$tag.report"
	else
		echo "0 0" > "$T/$tag.jb"
	fi
	wait "$wpid"
	msgs=$(awk '$3 == "itch" { m += $5 } END { print m + 0 }' "$T/$tag.out")
	secs=$(sed -n 's/.*source ended after \([0-9.]*\)s.*/\1/p' "$T/$tag.err")
	steps=$(sed -n 's/^lockstep: \([0-9]*\) steps.*/\1/p' "$T/$tag.out")
	if [ "$2" = detail ]; then books="$NDETAIL detailed"; else books="every symbol"; fi
	if [ "$3" = sim ]; then what="lockstep + join_bid"; else what="replay alone"; fi
	awk -v tag="$books, $what" -v m="$msgs" -v s="$secs" -v t="$(cat "$T/$tag.time")" -v j="$(cat "$T/$tag.jb")" \
		-v steps="${steps:--}" 'BEGIN {
		split(t, w, " "); split(j, x, " ");
		printf "| %-42s | %10d | %7.2f | %6.2f | %5s | %6.1f | %5.1f | %6.0f |\n", tag, m, s, m / s / 1e6,
			steps, w[2] + w[3], x[1] + x[2], w[1] / 1024;
	}'
}

echo "simulate: $(basename "$DAY"), order detail for $NDETAIL symbols, join_bid --max 1000"
echo "| books, run                                 |   messages | replay s | M msg/s | steps | wbd CPU s | strategy CPU s | wbd peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
run a detail alone
run b detail sim
tail -1 "$T/b.report" | sed 's/^/  books of the detailed symbols: /'
run c all alone
run d all sim
tail -1 "$T/d.report" | sed 's/^/  books of every symbol: /'
