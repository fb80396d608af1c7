#!/usr/bin/env bash
# Run each libFuzzer target for a bounded time on a copy of its seed corpus.
set -eu
secs=$1; shift
for f in "$@"; do
	name=$(basename "$f")
	seed=tests/fuzz/corpus/$name
	work=build/fuzz/work-$name
	rm -rf "$work"; mkdir -p "$work"
	[ -d "$seed" ] && cp -r "$seed"/. "$work"/
	echo "fuzz $name for ${secs}s"
	if ! "$f" -max_total_time="$secs" -print_final_stats=0 "$work" > "build/fuzz/$name.log" 2>&1; then
		tail -40 "build/fuzz/$name.log"
		echo "FAIL fuzz $name"
		exit 1
	fi
	grep -E '^#[0-9]+.*DONE' "build/fuzz/$name.log" | tail -1 || true
done
