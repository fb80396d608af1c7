#!/usr/bin/env bash
# Every tool has a man page and --help works: TOOL --help exits 0 and
# prints its usage on stdout; build/man holds TOOL's page, which renders
# with NAME (the tool and a description), SYNOPSIS and every long option
# --help names; make install puts the pages under PREFIX/share/man. The C
# API: after the install, man finds a page for every exported function
# (FUNCS, the version script's list) whose NAME and SYNOPSIS name it, and
# the EXAMPLE of each hand-written page compiles against the headers.
#
#   B=build TOOLS="wirebookd wb-book ..." FUNCS="wb_open ..." tests/api/man.sh
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
	# help2man's stand-in NAME ("manual page for ...") means mk/man.mk lacks desc_TOOL.
	grep -qE "^ +$t - [a-z]" "$T/page" && ! grep -qE "^ +$t - manual page for" "$T/page" &&
	grep -q '^SYNOPSIS' "$T/page" && [ -z "$missing" ] &&
		ok "$t: $(basename "$page"), NAME, SYNOPSIS, all $(grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u | wc -l) options" ||
		bad "$t: $(basename "$page") lacks NAME/SYNOPSIS or options:$missing"
done

make --no-print-directory -s install DESTDIR="$T/stage" PREFIX=/usr >"$T/install.out" 2>&1 ||
	{ bad "make install DESTDIR failed"; tail -5 "$T/install.out"; }
n=0
for t in $TOOLS; do ls "$T"/stage/usr/share/man/man[18]/"$t".[18] >/dev/null 2>&1 && n=$((n + 1)); done
[ "$n" -eq "$(echo $TOOLS | wc -w)" ] && ok "make install: all $n pages under PREFIX/share/man" ||
	bad "make install: $n of $(echo $TOOLS | wc -w) pages installed"
M=$T/stage/usr/share/man
missing= found=0
for f in ${FUNCS:?}; do
	MANWIDTH=200 MANPATH=$M man 3 "$f" >"$T/fpage" 2>/dev/null
	if sed -n '/^NAME/,/^DESCRIPTION/p' "$T/fpage" | grep -q "\b$f\b" &&
	   sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' "$T/fpage" | grep -q "\b$f(" &&
	   [ "$(MANPATH=$M man -w 3 "$f" 2>/dev/null)" != "" ]; then
		found=$((found + 1))
	else
		missing="$missing $f"
	fi
done
[ -z "$missing" ] && ok "man 3 finds all $found API functions, each in its page's NAME and SYNOPSIS" ||
	bad "API functions without a man page naming them:$missing"
# The overviews (section 7): installed, found by name, NAME and SEE ALSO there,
# and every option of wirebookd's or a tool's they name is one it has.
for p in man/*.7; do
	name=$(basename "$p" .7)
	MANWIDTH=200 MANPATH=$M man 7 "$name" >"$T/page7" 2>/dev/null
	unknown=
	for o in $(sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' "$T/page7" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
		"$B/wirebookd" --help 2>&1 | grep -qF -- "$o" || "$B/wb-export" --help 2>&1 | grep -qF -- "$o" ||
			grep -qF -- "\"$o\"" examples/*.c || unknown="$unknown $o"
	done
	grep -qE "^ +$name +- " "$T/page7" && grep -q '^SEE ALSO' "$T/page7" && [ -z "$unknown" ] &&
		ok "man 7 $name: installed, NAME, SEE ALSO, every option of its SYNOPSIS exists" ||
		bad "man 7 $name: missing, no NAME/SEE ALSO, or options nothing has:$unknown"
done
for p in man/*.3; do
	sed -n '/^\.EX/,/^\.EE/p' "$p" | sed -e '1d;$d' -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$T/ex.c"
	if [ -s "$T/ex.c" ] && cc -std=c11 -Wall -Wextra -Werror -Iinclude -c "$T/ex.c" -o "$T/ex.o" 2>"$T/ex.err"; then
		ok "$(basename "$p"): its EXAMPLE compiles"
	else
		bad "$(basename "$p"): EXAMPLE does not compile: $(head -3 "$T/ex.err")"
	fi
done
echo "man: $fails failed"
[ "$fails" -eq 0 ]
