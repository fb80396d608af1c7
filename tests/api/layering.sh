#!/usr/bin/env bash
# The layers' includes point down DESIGN.md's table only: each room below
# may include the rooms it lists and nothing else of wirebook's. The
# Makefile's per-layer include paths (INC_*) already make most violations
# a build error; this reads the includes themselves, so it also catches
# what an include path cannot (lib/feed including lib/book through -Ilib,
# the module including user-only feed code, a "../" path around a rule),
# and that lib/wire and lib/feed need no libc header.
#
#   tests/api/layering.sh        prints each violation; exit 1 if any
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# room: the wirebook folders its files may include (by their -I name:
# wirebook = include/wirebook, feed = lib/feed, common = tools/common, ...).
# A room not listed here (tools, subscribe, tests) may include everything.
declare -A may=(
	[include/wirebook]=""
	[lib/wire]="wire"
	[lib/feed]="wirebook wire feed"
	[lib/feedtext]="wirebook wire feed feedtext"
	[lib/book]="wirebook wire feed book shm"
	[lib/shm]="wirebook shm"
	[lib/recovery]="wirebook wire feed feedtext book shm recovery"
	[kmod]="wirebook wire feed"
	[examples]="wirebook"
)
# Every folder an include can name; anything else (sys/, linux/, asm/) is
# the system's.
rooms="wirebook wire feed feedtext book shm recovery common input gen export recoveryd sim"

fails=0
for room in "${!may[@]}"; do
	[ -d "$room" ] || continue
	while IFS=: read -r file line text; do
		target=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\([^">]*\)[">].*/\1/p' <<<"$text")
		[ -n "$target" ] || continue
		case "$target" in
		*../*)
			echo "$file:$line: includes $target: a path around the layers" >&2
			fails=$((fails + 1))
			continue ;;
		*/*) ;;
		*) continue ;;	# the file's own folder, or a system header
		esac
		top=${target%%/*}
		case " $rooms " in *" $top "*) ;; *) continue ;; esac
		case " ${may[$room]} " in
		*" $top "*) ;;
		*)
			echo "$file:$line: $room may not include $target (may: ${may[$room]:-nothing})" >&2
			fails=$((fails + 1)) ;;
		esac
	done < <(grep -rn --include='*.[ch]' --include='*.cpp' -E '^[[:space:]]*#[[:space:]]*include' "$room")
done
# lib/wire and lib/feed are freestanding: each compiles with the compiler's
# own headers only (stdint.h, stddef.h, stdbool.h), no libc. feed_ioc.c is
# the bridge to the control ABI (ioctl.h's _IOW, errno values) and may use
# those two.
cc=${CC:-cc}
gcc_include=$($cc -print-file-name=include)
for src in lib/wire/*.h lib/feed/*.c; do
	[ -e "$src" ] || continue
	case "$src" in lib/feed/feed_ioc.c) continue ;; esac
	if ! $cc -x c -std=c11 -fsyntax-only -ffreestanding -nostdinc -isystem "$gcc_include" \
		-Iinclude -Ilib "$src" 2>"${TMPDIR:-/tmp}/layering.$$"; then
		echo "$src: not freestanding (it needs more than the compiler's headers):" >&2
		head -3 "${TMPDIR:-/tmp}/layering.$$" >&2
		fails=$((fails + 1))
	fi
done
rm -f "${TMPDIR:-/tmp}/layering.$$"

if [ "$fails" -gt 0 ]; then
	echo "layering: $fails violation(s) of DESIGN.md's table" >&2
	exit 1
fi
echo "layering: every include points down the table; lib/wire and lib/feed are freestanding"
