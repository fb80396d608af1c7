#!/usr/bin/env bash
# Run each Check test program; print one summary line the CI can read.
set -u
pass=0 fail=0 failed=()
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks:' | tail -1)
	n=$(printf '%s' "$line" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p')
	set -- $n
	checks=${1:-0} failures=${2:-0} errors=${3:-0}
	if [ $rc -ne 0 ] || [ -z "$line" ]; then
		printf '%s\n' "$out" | tail -40
		echo "FAIL $(basename "$t") (exit $rc)"
		failed+=("$(basename "$t")")
		fail=$((fail + failures + errors + 1))
		pass=$((pass + checks - failures - errors))
	else
		echo "ok   $(basename "$t"): $line"
		pass=$((pass + checks))
	fi
done
echo "$pass passed, $fail failed"
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
