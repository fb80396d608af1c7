#!/usr/bin/env bash
# examples/events_tail.c, the event API's example: without the module it
# says so (WB_ENODEV) and exits 1, a device that is not wirebook's is
# refused, and it builds as C11 from an installed prefix with pkg-config.
# (Reading the module's rings is the VM test's: it needs the module.)
. "$(dirname "$0")/../service/lib.sh"

"$B/examples/events_tail" --device "$T/no-such-device" >"$T/none.out" 2>&1
[ $? -eq 1 ] && grep -q 'no wirebook device (is the module loaded' "$T/none.out" &&
	ok "no device: exit 1, WB_ENODEV's words" || bad "no device: $(cat "$T/none.out")"
"$B/examples/events_tail" --device /dev/null >"$T/null.out" 2>&1
[ $? -eq 1 ] && grep -q 'not a wirebook' "$T/null.out" &&
	ok "/dev/null: refused as not a wirebook device" || bad "/dev/null: $(cat "$T/null.out")"

P="$T/prefix"
make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$T/install.out" 2>&1 ||
	{ bad "make install failed"; tail -5 "$T/install.out"; }
check "events.h installed" test -f "$P/include/wirebook/events.h"
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs wirebook)
cp "$P/share/wirebook/examples/events_tail.c" "$T/"
( cd "$T" && cc -std=c11 -Wall -Wextra -Werror -pedantic events_tail.c $flags -Wl,-rpath,"$P/lib" \
	-o events_tail ) 2>"$T/cc.err" && ok "events_tail.c builds from the installed prefix" ||
	{ bad "events_tail.c does not build from the prefix"; head "$T/cc.err"; }
"$T/events_tail" --device "$T/no-such-device" >"$T/inst.out" 2>&1
grep -q 'no wirebook device' "$T/inst.out" &&
	ok "... and runs against the installed libwirebook.so.1" || bad "installed events_tail did not run"
finish
