#!/usr/bin/env bash
# Every public header (include/wirebook/*.h) compiles on its own, and all of
# them together, as C11 and C17 and as C++11/14/17/20, with gcc and clang,
# -Wall -Wextra -Werror -pedantic. The translation unit also calls the
# ring's inline fast path, so its bodies are compiled as C++ too, not only
# parsed declarations.
#
#   tests/api/headers.sh [include-dir]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
INC=${1:-include}
T=$(mktemp -d /tmp/wb-headers-$$.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0 runs=0

compilers=()
for c in gcc clang; do command -v "$c" >/dev/null && compilers+=("$c"); done
cxx_of() { case "$1" in gcc) echo g++ ;; clang) echo clang++ ;; esac; }

# One translation unit per header, one with all of them.
tus=()
for h in "$INC"/wirebook/*.h; do
	b=$(basename "$h" .h)
	printf '#include "wirebook/%s.h"\n#include "wirebook/%s.h" /* guarded twice */\nint wb_header_test_%s;\n' \
		"$b" "$b" "$b" >"$T/one_$b.c"
	tus+=("$T/one_$b.c")
done
{
	for h in "$INC"/wirebook/*.h; do echo "#include \"wirebook/$(basename "$h")\""; done
	cat <<'C'
int wb_header_test_use(void *mem);
int wb_header_test_use(void *mem)
{
	struct wb_ring_consumer c;
	uint64_t n;

	if (wb_ring_check(mem, wb_ring_bytes(64)))
		return -1;
	wb_ring_consumer_init(&c, mem);
	n = wb_ring_consumer_available(&c);
	if (n)
		wb_ring_consumer_release(&c, n);
	return (int)wb_ring_consumer_dropped(&c) + WB_BOOK_DEPTH;
}
C
} >"$T/all.c"
tus+=("$T/all.c")

for cc in "${compilers[@]}"; do
	cxx=$(cxx_of "$cc")
	for tu in "${tus[@]}"; do
		for std in c11 c17; do
			runs=$((runs + 1))
			$cc -std=$std -Wall -Wextra -Werror -pedantic -I"$INC" -c "$tu" -o "$T/o.o" \
				2>"$T/err" || { fails=$((fails + 1)); echo "FAIL headers: $cc -std=$std $(basename "$tu")"; head -5 "$T/err"; }
		done
		command -v "$cxx" >/dev/null || continue
		for std in c++11 c++14 c++17 c++20; do
			runs=$((runs + 1))
			$cxx -x c++ -std=$std -Wall -Wextra -Werror -pedantic -I"$INC" -c "$tu" -o "$T/o.o" \
				2>"$T/err" || { fails=$((fails + 1)); echo "FAIL headers: $cxx -std=$std $(basename "$tu")"; head -5 "$T/err"; }
		done
	done
done
[ "${#compilers[@]}" -eq 2 ] || { echo "FAIL headers: need gcc and clang"; fails=$((fails + 1)); }
echo "headers: $runs compiles, $fails failed (compilers: ${compilers[*]})"
[ "$fails" -eq 0 ]
