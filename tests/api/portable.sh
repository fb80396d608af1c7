#!/usr/bin/env bash
# Installed objects are built for the baseline x86-64 ISA: every compile
# unit of the tools and of libwirebook.{so,a} says -march=x86-64 in its
# DWARF producer string, and their code holds no AVX (ymm/zmm) instruction.
# NATIVE=1 builds for this CPU instead (checked on libwirebook.so alone,
# in its own build directory).
#
#   B=build TOOLS="build/wirebookd ..." tests/api/portable.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
fails=0
ok() { echo "PASS portable: $*"; }
bad() { echo "FAIL portable: $*"; fails=$((fails + 1)); }
[ "$(uname -m)" = x86_64 ] || { echo "portable: not x86-64, nothing to check"; exit 0; }

producers() { readelf --debug-dump=info "$1" 2>/dev/null | sed -n 's/.*DW_AT_producer.*: GNU /GNU /p'; }

for f in ${TOOLS:?} "$B/libwirebook.so" "$B/libwirebook.a"; do
	p=$(producers "$f" | grep -v 'GNU AS')
	n=$(echo "$p" | grep -c .)
	other=$(echo "$p" | grep -vc -- '-march=x86-64 ')
	avx=$(objdump -d --no-show-raw-insn "$f" | grep -cE '%[yz]mm[0-9]')
	if [ "$n" -gt 0 ] && [ "$other" -eq 0 ] && [ "$avx" -eq 0 ]; then
		ok "$(basename "$f"): $n compile units, all -march=x86-64, no AVX"
	else
		bad "$(basename "$f"): $n units, $other not -march=x86-64, $avx AVX instructions"
	fi
done

N=$B/native
make --no-print-directory -s O="$N" NATIVE=1 "$N/libwirebook.so" >"/tmp/wb-native-$$.log" 2>&1 ||
	{ bad "make NATIVE=1 failed"; tail -5 "/tmp/wb-native-$$.log"; }
rm -f "/tmp/wb-native-$$.log"
march=$(producers "$N/libwirebook.so" | grep -o -- '-march=[^ ]*' | sort -u)
[ -n "$march" ] && [ "$march" != "-march=x86-64" ] && ok "NATIVE=1 builds for this CPU ($march)" ||
	bad "NATIVE=1 built with '$march'"
echo "portable: $fails failed"
[ "$fails" -eq 0 ]
