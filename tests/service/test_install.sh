#!/usr/bin/env bash
# Issue 14.2: make install outside /usr/local. wirebook.pc names the real
# prefix (and follows a change of PREFIX), DESTDIR stages without changing
# what the files say, an installed wirebookd finds the feed map of its own
# prefix from anywhere, and examples/nbbo_watch.c built with pkg-config
# against the installed library reads a running wirebookd's book. The
# systemd unit is installed with the prefix's paths and its ExecStart runs.
. "$(dirname "$0")/lib.sh"

P="$T/prefix"
make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$T/install.out" 2>&1 ||
	{ bad "make install PREFIX=$P failed"; tail -5 "$T/install.out"; finish; }
pc=$P/lib/pkgconfig/wirebook.pc
check "wirebook.pc says prefix=$P" grep -qx "prefix=$P" "$pc"
flags=$(echo $(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs wirebook))
[ "$flags" = "-I$P/include -L$P/lib -lwirebook" ] && ok "pkg-config gives the prefix's paths" ||
	bad "pkg-config --cflags --libs wirebook: '$flags'"

# Built with pkg-config only, as a user would, outside the source tree.
cp "$P/share/wirebook/examples/nbbo_watch.c" "$T/"
( cd "$T" && cc -std=c11 -Wall -Werror nbbo_watch.c $flags -Wl,-rpath,"$P/lib" -o nbbo_watch ) \
	2>"$T/cc.err" && ok "nbbo_watch.c compiles against the installed library" ||
	{ bad "nbbo_watch.c does not compile with pkg-config"; cat "$T/cc.err"; }
check "nbbo_watch uses the installed libwirebook.so" \
	sh -c "ldd '$T/nbbo_watch' | grep -q '$P/lib/libwirebook.so'"

# The installed daemon, run from elsewhere with no --feeds, finds its
# prefix's feed map.
cap=$(demo_capture)
mkdir -p "$T/elsewhere"
( cd "$T/elsewhere" && exec "$P/bin/wirebookd" --pcap "$cap" --shm "$SHM" --no-pin ) \
	>"$T/wbd.out" 2>"$T/wbd.err" &
PIDS+=($!)
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" && ok "installed wirebookd found its feed map" ||
	{ bad "installed wirebookd did not run"; cat "$T/wbd.err"; }
timeout 10 "$T/nbbo_watch" AAPL "$SHM" >"$T/watch.out" 2>&1
check "the pkg-config-built nbbo_watch reads the running book" grep -q '^AAPL [0-9]' "$T/watch.out"
kill -TERM "$wbd"; wait "$wbd" 2>/dev/null

# PREFIX changed: wirebook.pc follows (it used to keep /usr/local).
make -C "$ROOT" --no-print-directory -s PREFIX="$T/other" build/wirebook.pc >/dev/null 2>&1
check "build/wirebook.pc follows a new PREFIX" grep -qx "prefix=$T/other" "$ROOT/build/wirebook.pc"

# DESTDIR stages under the real prefix's paths.
make -C "$ROOT" --no-print-directory -s install DESTDIR="$T/stage" PREFIX=/opt/wb \
	>"$T/stage.out" 2>&1 || bad "make install DESTDIR=... PREFIX=/opt/wb failed"
check "DESTDIR: files staged under DESTDIR/opt/wb" test -x "$T/stage/opt/wb/bin/wirebookd"
check "DESTDIR: wirebook.pc names /opt/wb, not the stage" \
	grep -qx "prefix=/opt/wb" "$T/stage/opt/wb/lib/pkgconfig/wirebook.pc"
check "DESTDIR: the unit runs /opt/wb/bin/wirebookd --config /opt/wb/etc/wirebook/..." \
	grep -qx 'ExecStart=/opt/wb/bin/wirebookd --config /opt/wb/etc/wirebook/wirebookd-%i.conf' \
	"$T/stage/opt/wb/lib/systemd/system/wirebookd@.service"
check "DESTDIR: nothing written outside the stage" test ! -e /opt/wb/bin/wirebookd

# The unit: required settings, and its ExecStart with a config runs and
# stops cleanly on SIGTERM (what systemctl stop sends), retiring the book.
unit=$P/lib/systemd/system/wirebookd@.service
for key in "Restart=on-failure" "KillSignal=SIGTERM" "User=wirebook" "Group=wirebook" \
	"RuntimeDirectory=wirebook/%i" "StateDirectory=wirebook/%i" "ProtectSystem=strict" \
	"ProtectHome=yes" "ReadWritePaths=/dev/shm" "Environment=WIREBOOK_INSTANCE=%i"; do
	check "unit has $key" grep -qx "$key" "$unit"
done
mkdir -p "$P/etc/wirebook"
printf 'pcap %s\nshm %s\nno-pin\ncontrol %s\n' "$cap" "$SHM-unit" "$T/unit.sock" \
	>"$P/etc/wirebook/wirebookd-test.conf"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed 's/%i/test/g')
( cd / && exec $exec_start ) >"$T/unit.out" 2>"$T/unit.err" &
PIDS+=($!)
u=$!
wait_for 30 test -e "/dev/shm/$SHM-unit" && wait_for 30 grep -q 'source ended' "$T/unit.err" &&
	ok "the unit's ExecStart runs with the installed config" ||
	{ bad "the unit's ExecStart failed"; cat "$T/unit.err"; }
kill -TERM "$u"; wait "$u"; rc=$?
[ "$rc" -eq 0 ] && [ ! -e "/dev/shm/$SHM-unit" ] && ok "SIGTERM: exit 0 and the book retired" ||
	bad "SIGTERM: exit $rc, book left: $(ls /dev/shm/$SHM-unit 2>&1)"
# Issue 23.14: the installed sample config serves two instances at once,
# as the unit runs them (WIREBOOK_INSTANCE from the unit, RUNTIME_DIRECTORY
# from systemd): their books and control sockets do not clash.
sample=$P/share/wirebook/wirebookd.conf.sample
for i in one two; do
	inst=$SHM-$i
	mkdir -p "$T/run/$inst"
	sed -e "s|^iface .*|pcap $cap|" -e "s|^feeds .*|feeds $ROOT/feeds.conf|" "$sample" \
		>"$P/etc/wirebook/wirebookd-$inst.conf"
	echo no-pin >>"$P/etc/wirebook/wirebookd-$inst.conf"
	cmd=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s/%i/$inst/g")
	( cd / && WIREBOOK_INSTANCE=$inst RUNTIME_DIRECTORY=$T/run/$inst exec $cmd ) \
		>"$T/$i.out" 2>"$T/$i.err" &
	PIDS+=($!)
	eval "pid_$i=$!"
done
for i in one two; do
	inst=$SHM-$i
	wait_for 30 grep -q 'source ended' "$T/$i.err" && [ -e "/dev/shm/$inst" ] &&
		timeout 30 "$B/wb-subscribe" --daemon "$T/run/$inst/control.sock" list >/dev/null 2>&1 &&
		ok "instance $i of the sample config: book /dev/shm/$inst, its own control socket" ||
		{ bad "instance $i of the sample config"; cat "$T/$i.err"; }
done
# Their metrics too (issue 23.14): each on a port of its own, said in its
# runtime directory as a Prometheus file_sd target list, and answering.
targets=()
for i in one two; do
	inst=$SHM-$i
	json=$T/run/$inst/metrics.json
	target=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); print(t[0]["targets"][0] if t[0]["labels"]["book"] == sys.argv[2] else "")' "$json" "$inst" 2>/dev/null)
	targets+=("$target")
	[ -n "$target" ] && python3 -c 'import sys, urllib.request; sys.exit(b"wirebook_up 1" not in urllib.request.urlopen(sys.argv[1], timeout=10).read())' "http://$target/metrics" &&
		ok "instance $i's metrics: $target, in its metrics.json, answer" ||
		{ bad "instance $i's metrics (metrics.json: $(cat "$json" 2>&1))"; grep metrics "$T/$i.err"; }
done
[ -n "${targets[0]}" ] && [ "${targets[0]}" != "${targets[1]}" ] && ok "the two instances' metrics do not clash" ||
	bad "metrics targets: '${targets[0]}' '${targets[1]}'"
kill -TERM "$pid_one" "$pid_two"
wait "$pid_one"; rc1=$?
wait "$pid_two"; rc2=$?
[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && ok "both instances stop cleanly" || bad "instances exit $rc1, $rc2"
[ ! -e "$T/run/$SHM-one/metrics.json" ] && ok "metrics.json removed at exit" || bad "metrics.json left behind"
unset_ok=0
env -u WIREBOOK_INSTANCE "$B/wirebookd" --config "$sample" >/dev/null 2>"$T/unset.err" && unset_ok=1
[ "$unset_ok" -eq 0 ] && grep -q 'WIREBOOK_INSTANCE} is not set' "$T/unset.err" &&
	ok "the sample outside the unit names the variable it lacks" || bad "unset variable: $(cat "$T/unset.err")"

command -v systemd-analyze >/dev/null &&
	{ systemd-analyze verify "$unit" >"$T/verify" 2>&1 && ok "systemd-analyze verify" ||
	  bad "systemd-analyze verify: $(head -3 "$T/verify")"; }
finish
