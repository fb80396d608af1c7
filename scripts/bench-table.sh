#!/usr/bin/env bash
# The issue's table, work / figure / target, from bench_file's rows and the
# instruction counts (as make bench-file and make bench-instructions wrote
# them), plus a timed whole wirebookd --itch-file run on the same day.
#   scripts/bench-table.sh BENCH_FILE_OUT INSTRUCTIONS_OUT WIREBOOKD DAY_FILE
set -eu
rows=$1 instr=$2 wirebookd=$3 day=$4

figure() { sed -n "s/^$1  *\([0-9.]*\) ns\/msg.*/\1/p" "$rows" | head -1; }
per_event() { sed -n 's/^venue books alone.*: \([0-9.]*\) ns\/event.*/\1/p' "$rows" | head -1; }
superbook_alone() { sed -n 's/^Super-Book alone.*: \([0-9.]*\) ns\/msg.*/\1/p' "$rows" | head -1; }
instructions() { sed -n "s/^  $1  *\([0-9.]*\) instructions.*/\1/p" "$instr" 2>/dev/null | head -1; }
met() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { if (v == "") print "-"; else if ((dir == "le" && v + 0 <= t) || (dir == "ge" && v + 0 >= t)) print "met"; else print "not met" }'; }

decode=$(figure 'decode only')
books=$(per_event)
pipeline=$(figure 'pipeline')
pipeline_mps=$(awk -v ns="$pipeline" 'BEGIN { if (ns != "") printf "%.2f", 1000 / ns }')

# The whole daemon on the day file, start to exit, wall clock: the best of
# three runs, as the other rows are best of runs on a shared machine.
shm=wb-bench-table-$$
best=
for _ in 1 2 3; do
	t0=$(date +%s%N)
	out=$("$wirebookd" --itch-file "$day" --exit-at-eof --shm "$shm" --force 2>&1) || { echo "$out" >&2; exit 1; }
	t1=$(date +%s%N)
	if [ -z "$best" ] || [ $((t1 - t0)) -lt "$best" ]; then best=$((t1 - t0)); fi
done
messages=$(echo "$out" | awk '$1 == "A" && $2 == "nasdaq" { print $5; exit }')
whole=$(awk -v ns="$best" -v m="$messages" 'BEGIN { if (m > 0) printf "%.1f", ns / m }')

echo
echo "wirebook against the issue's targets (this machine, $(nproc) cores, shared: figures are best of runs)"
sed -n 's/^book: /published book: /p' "$rows" | head -1
printf '| %-34s | %-44s | %-28s | %-7s |\n' "work" "wirebook now" "target" ""
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..30})" "$(printf -- '-%.0s' {1..9})"
printf '| %-34s | %-44s | %-28s | %-7s |\n' "ITCH decode, all symbols" \
	"$decode ns/msg, $(instructions decode) instructions/msg" "<= 5 ns/msg, event written" "$(met "$decode" 5 le)"
printf '| %-34s | %-44s | %-28s | %-7s |\n' "L3 venue books (order queues)" \
	"$books ns/event, $(instructions 'venue books') instructions/event" "<= 50 ns/event" "$(met "$books" 50 le)"
printf '| %-34s | %-44s | %-28s | %-7s |\n' "whole pipeline (two threads)" \
	"$pipeline_mps M msg/s ($pipeline ns/msg)" ">= 10 M msg/s" "$(met "$pipeline_mps" 10 ge)"
printf '| %-34s | %-44s | %-28s | %-7s |\n' "wirebookd --itch-file whole run" \
	"$whole ns/msg wall ($messages messages)" "<= 100 ns/msg wall" "$(met "$whole" 100 le)"
printf '| %-34s | %-44s | %-28s | %-7s |\n' "Super-Book (thread 2)" \
	"$(superbook_alone) ns/msg, $(instructions 'Super-Book') instructions/msg" "(pipeline: <= 100 ns/msg)" ""
