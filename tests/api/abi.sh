#!/usr/bin/env bash
# libwirebook.so's ABI: the SONAME says WB_SOVERSION; the library exports
# exactly the functions declared in include/wirebook/book.h (no other
# symbol, every one in lib/shm/libwirebook.map); libabigail's abidiff finds
# no change against the stored baseline abi/libwirebook.abi; and abidiff
# does see a change when one is made (a copy of the library built with a
# grown struct wb_top), so the check can fail.
#
#   B=build SOVERSION=1 tests/api/abi.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
SO=$B/libwirebook.so
BASE=abi/libwirebook.abi
T=$(mktemp -d /tmp/wb-abi-$$.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "PASS abi: $*"; }
bad() { echo "FAIL abi: $*"; fails=$((fails + 1)); }

soname=$(readelf -d "$SO" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libwirebook.so.${SOVERSION:?}" ] && ok "SONAME $soname" ||
	bad "SONAME '$soname', expected libwirebook.so.$SOVERSION"
grep -q "soname='$soname'" "$BASE" && ok "the baseline is of $soname" ||
	bad "the baseline is of $(grep -o "soname='[^']*'" "$BASE"): regenerate it (make abi-baseline)"

# Defined dynamic symbols, without their version (the node itself is an A symbol).
nm -D --defined-only "$SO" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort >"$T/exported"
grep -v '^wb_' "$T/exported" >"$T/foreign"
[ ! -s "$T/foreign" ] && ok "every exported symbol is wb_* ($(wc -l <"$T/exported") of them)" ||
	bad "exported symbols outside wb_: $(tr '\n' ' ' <"$T/foreign")"
# The static library too: a program linking libwirebook.a gets no other global name.
nm -g --defined-only "$B/libwirebook.a" | awk 'NF == 3 && $3 !~ /^wb_/ { print $3 }' >"$T/foreign.a"
[ ! -s "$T/foreign.a" ] && ok "libwirebook.a defines only wb_* globals" ||
	bad "libwirebook.a defines: $(tr '\n' ' ' <"$T/foreign.a")"
# Non-inline functions the public headers declare.
grep -ho '^[a-z].*\bwb_[a-z0-9_]*(' include/wirebook/*.h | grep -v 'static inline' |
	grep -o 'wb_[a-z0-9_]*($' | tr -d '(' | sort >"$T/declared"
diff "$T/declared" "$T/exported" >"$T/diff" && ok "exported = declared in the public headers" ||
	{ bad "exported and declared differ (< declared only, > exported only):"; cat "$T/diff"; }
sed -n 's/^[[:space:]]*\(wb_[a-z0-9_]*\);/\1/p' lib/shm/libwirebook.map | sort >"$T/map"
diff "$T/declared" "$T/map" >/dev/null && ok "the version script lists exactly those" ||
	bad "lib/shm/libwirebook.map and book.h differ: $(diff "$T/declared" "$T/map" | grep '^[<>]' | tr '\n' ' ')"

abidiff --headers-dir2 include/wirebook "$BASE" "$SO" >"$T/abidiff" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "abidiff: no change against $BASE"
else
	# abidiff's status: bit 4 some ABI change, bit 8 an incompatible one.
	if [ $((rc & 8)) -ne 0 ]; then
		bad "abidiff: INCOMPATIBLE change (status $rc): bump WB_SOVERSION in the Makefile, then make abi-baseline"
	else
		bad "abidiff: ABI change (status $rc): if deliberate and compatible, make abi-baseline and commit it"
	fi
	sed -n '1,40p' "$T/abidiff"
fi

# The check can fail: the same library with a field added to struct wb_top.
mkdir -p "$T/inc/wirebook"
cp include/wirebook/*.h "$T/inc/wirebook/"
sed -i '/^struct wb_top {/a\	uint64_t added_by_the_abi_test;' "$T/inc/wirebook/book.h"
if ${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -fPIC -I"$T/inc" -Ilib -c lib/shm/reader.c -o "$T/r.o" &&
   ${CC:-cc} -shared -Wl,-soname,"$soname" -Wl,--version-script,lib/shm/libwirebook.map \
	-o "$T/libwirebook.so" "$T/r.o" -lrt; then
	abidiff --headers-dir2 "$T/inc/wirebook" "$BASE" "$T/libwirebook.so" >"$T/abidiff2" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] && grep -q 'wb_top' "$T/abidiff2" &&
		ok "abidiff sees a grown struct wb_top (status $rc)" ||
		{ bad "abidiff missed a grown struct wb_top (status $rc)"; head -20 "$T/abidiff2"; }
else
	bad "could not build the altered library"
fi
echo "abi: $fails failed"
[ "$fails" -eq 0 ]
