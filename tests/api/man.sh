#!/usr/bin/env bash
# Every tool has a man page and --help works: TOOL --help exits 0 and
# prints its usage on stdout; build/man holds TOOL's page, which renders
# with NAME (the tool and a description), SYNOPSIS and every long option
# --help names; make install puts the pages under PREFIX/share/man.
#
#   B=build TOOLS="wirebookd wb-book ..." tests/api/man.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
T=$(mktemp -d /tmp/wb-man-$$.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "PASS man: $*"; }
bad() { echo "FAIL man: $*"; fails=$((fails + 1)); }
render() { MANWIDTH=200 man -l "$1" 2>/dev/null || groff -man -Tutf8 -P-cbou "$1"; }

for t in ${TOOLS:?}; do
	"$B/$t" --help >"$T/help" 2>"$T/help.err"
	rc=$?
	[ "$rc" -eq 0 ] && grep -q "^usage: $t " "$T/help" && [ ! -s "$T/help.err" ] &&
		ok "$t --help: exit 0, usage on stdout" || bad "$t --help: exit $rc, $(head -1 "$T/help") $(head -1 "$T/help.err")"
	page=$(ls "$B"/man/man[18]/"$t".[18] 2>/dev/null | head -1)
	[ -n "$page" ] || { bad "$t has no man page in $B/man"; continue; }
	render "$page" >"$T/page"
	missing=
	for o in $(grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u); do
		grep -qF -- "$o" "$T/page" || missing="$missing $o"
	done
	grep -qE "^ +$t - [a-z]" "$T/page" && grep -q '^SYNOPSIS' "$T/page" && [ -z "$missing" ] &&
		ok "$t: $(basename "$page"), NAME, SYNOPSIS, all $(grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u | wc -l) options" ||
		bad "$t: $(basename "$page") lacks NAME/SYNOPSIS or options:$missing"
done

make --no-print-directory -s install DESTDIR="$T/stage" PREFIX=/usr >"$T/install.out" 2>&1 ||
	{ bad "make install DESTDIR failed"; tail -5 "$T/install.out"; }
n=0
for t in $TOOLS; do ls "$T"/stage/usr/share/man/man[18]/"$t".[18] >/dev/null 2>&1 && n=$((n + 1)); done
[ "$n" -eq "$(echo $TOOLS | wc -w)" ] && ok "make install: all $n pages under PREFIX/share/man" ||
	bad "make install: $n of $(echo $TOOLS | wc -w) pages installed"
echo "man: $fails failed"
[ "$fails" -eq 0 ]
