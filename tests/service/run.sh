#!/usr/bin/env bash
# Run the service tests (tests/service/test_*.sh, or those named): each
# prints PASS/FAIL lines; the summary counts the checks.
cd "$(dirname "$0")/../.." || exit 1
export B=${B:-build}
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/service/test_*.sh)
out=$(mktemp /tmp/wb-service-run-$$.XXXXXX)
status=0
for t in "${tests[@]}"; do
	echo "== $t"
	bash "$t" 2>&1 | tee -a "$out"
	[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
passed=$(grep -c '^PASS ' "$out")
failed=$(grep -c '^FAIL ' "$out")
rm -f "$out"
echo "service: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
