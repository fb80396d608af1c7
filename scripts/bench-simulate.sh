#!/bin/sh
# make bench's simulate row (issue 25): a generated day replayed by
# wirebookd --lockstep with examples/join_bid stepping with it, order
# detail for the day's first 600 symbols (the most active of wb-gen's
# Zipf-like day), up to 1,000 virtual orders; against the same day with no
# strategy (wirebookd --itch-file alone). Prints messages/s (wall) and the
# CPU seconds of both processes: the machine may be shared.
#
#   scripts/bench-simulate.sh BUILD_DIR DAY.itch [SYMBOLS_WITH_DETAIL]
set -eu
B=$1
DAY=$2
NDETAIL=${3:-600}
T=$(mktemp -d /tmp/wb-bench-sim.XXXXXX)
trap 'rm -rf "$T"' EXIT
# wb-gen lists the most active symbols first in its directory.
"$B/wb-dump" --itch-file "$DAY" 2>/dev/null | awk -v n="$NDETAIL" '$5=="SYMBOL"{print $6; if (++k==n) exit}' \
	| paste -sd, > "$T/detail"
msgs=$("$B/wb-dump" --itch-file "$DAY" 2>/dev/null | wc -l)
now() { date +%s.%N; }
cpu() { awk '{print ($14+$15)/100}' "/proc/$1/stat"; }

run() {	# $1: tag, rest: extra wirebookd args; strategy when tag=sim
	tag=$1; shift
	t0=$(now)
	"$B/wirebookd" --itch-file "$DAY" --shm "wb-bench-sim-$$-$tag" --no-pin --exit-at-eof \
		--expected-orders 2000000 --order-detail "$(cat "$T/detail")" "$@" \
		> "$T/$tag.out" 2> "$T/$tag.err" &
	wpid=$!
	if [ "$tag" = sim ]; then
		/usr/bin/time -f "%U %S" -o "$T/jb.time" "$B/examples/join_bid" --book "wb-bench-sim-$$-$tag" \
			--max 1000 > "$T/jb.out"
	fi
	wait "$wpid"
	t1=$(now)
	echo "$t0 $t1"
}

base=$(run base)
sim=$(run sim --lockstep detail)
ended() { sed -n 's/.*source ended after \([0-9.]*\)s.*/\1/p' "$T/$1.err"; }
awk -v m="$msgs" -v b="$base" -v s="$sim" -v be="$(ended base)" -v se="$(ended sim)" -v jt="$(cat "$T/jb.time")" -v n="$NDETAIL" \
	-v orders="$(grep -c '^[0-9]' "$T/jb.out" || true)" 'BEGIN {
	split(b, x, " "); split(s, y, " "); split(jt, j, " ");
	bw = x[2] - x[1]; sw = y[2] - y[1];
	printf "simulate: %d messages (events), detail for %d symbols, %d virtual orders placed\n", m, n, orders;
	printf "  wirebookd --itch-file alone:   replay %6.2f s, %6.2f M msg/s (%.2f s with start and exit)\n", be, m / be / 1e6, bw;
	printf "  --lockstep detail + join_bid:  replay %6.2f s, %6.2f M msg/s (%.2f s with start and exit; join_bid CPU %.2f s user, %.2f s sys)\n",
		se, m / se / 1e6, sw, j[1], j[2];
}'
tail -1 "$T/jb.out"
