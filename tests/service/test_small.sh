#!/usr/bin/env bash
# Issue 14.7, the smaller items: docs/tools.md documents --exit-at-eof,
# wb-book --wait-done and nbbo_watch's book name; latency logs from --pcap
# without --speed are warned about; the 'updates' counters are the same on
# every run of one input; SIGINT early leaves no object in /dev/shm;
# 'latency-scripts/summarize | head' ends without a traceback; wirebookd
# --itch-file runs outside the source tree without a feed map; make demo
# installs no qemu or kernels.
. "$(dirname "$0")/lib.sh"

for doc in 'wirebookd.*--exit-at-eof' 'wb-book.*--wait-done' 'nbbo_watch SYMBOL \[BOOK\]'; do
	grep -Eq -- "$doc" "$ROOT/docs/tools.md" && ok "docs/tools.md documents /$doc/" ||
		bad "docs/tools.md lacks /$doc/"
done

cap=$(demo_capture)
"$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin --exit-at-eof \
	--latency-dir "$T" >/dev/null 2>"$T/lat.err"
check "latency logs from --pcap without --speed: warned" \
	grep -q 'warning: --latency-dir with --pcap but no --speed' "$T/lat.err"
"$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin --exit-at-eof \
	--latency-dir "$T" --speed 1000 >/dev/null 2>"$T/lat2.err"
check "... and not with --speed" sh -c "! grep -q 'warning: --latency-dir' '$T/lat2.err'"

# The same input three times, replayed at different paces so the builder
# batches differently: the same per-symbol updates counters.
runs=()
for speed in 0 200 50; do
	sp=(); [ "$speed" = 0 ] || sp=(--speed "$speed")
	bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM-u" --no-pin "${sp[@]}" \
		>/dev/null 2>&1
	p=$!
	runs+=("$("$B/wb-book" --shm "$SHM-u" --wait-done 60 --once AAPL MSFT SPY NVDA 2>&1 |
		grep -o '== [A-Z]* (#[0-9]*).*updates [0-9]*' | sed 's/status.*updates/updates/' | tr '\n' ' ')")
	kill -TERM "$p"; wait "$p" 2>/dev/null
done
[ -n "${runs[0]}" ] && [ "${runs[0]}" = "${runs[1]}" ] && [ "${runs[0]}" = "${runs[2]}" ] &&
	ok "updates counters equal on three runs (${runs[0]})" ||
	bad "updates differ run to run: '${runs[0]}' / '${runs[1]}' / '${runs[2]}'"

# SIGINT while the book is being made, at several moments. A background
# job of a script ignores SIGINT; Ctrl-C in a terminal does not: restore
# the default, as a terminal has it.
left=0 stuck=0
for delay in 0 0 0 0.01 0.05 0.2; do
	env --default-signal=INT "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" \
		--shm "$SHM-int" --no-pin >/dev/null 2>&1 &
	p=$!
	if [ "$delay" = 0 ]; then # the moment the object appears, while it is being made
		for _ in $(seq 1 20000); do [ -e "/dev/shm/$SHM-int" ] && break; done
	else
		sleep "$delay"
	fi
	kill -INT "$p" 2>/dev/null
	for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$p" 2>/dev/null && { stuck=$((stuck + 1)); kill -KILL "$p"; }
	wait "$p" 2>/dev/null
	[ -e "/dev/shm/$SHM-int" ] && { left=$((left + 1)); rm -f "/dev/shm/$SHM-int"; }
done
[ "$left" -eq 0 ] && [ "$stuck" -eq 0 ] && ok "SIGINT early: stopped, no object left in /dev/shm (6 tries)" ||
	bad "SIGINT early: the book left in /dev/shm $left of 6 times, $stuck did not stop"

# summarize | head: no traceback.
mkdir -p "$T/lat"
"$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin --exit-at-eof \
	--speed 1000 --latency-dir "$T/lat" >/dev/null 2>&1
# a reader that has gone before the first write, as head has after one line
python3 "$ROOT/latency-scripts/summarize" "$T/lat" 2>"$T/sum.err" | (exec 0<&-; sleep 1)
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && ! grep -q Traceback "$T/sum.err" && ok "summarize | head: exit 0, no traceback" ||
	{ bad "summarize | head: exit $rc"; head -3 "$T/sum.err"; }

# --itch-file outside the tree, no feed map anywhere near the binary.
mkdir -p "$T/away/bin" "$T/away/run"
cp "$B/wirebookd" "$T/away/bin/"
"$B/wb-gen" -p demo -s 2 -f itch-file -o "$T/day.itch" >/dev/null 2>&1
( cd "$T/away/run" && exec "$T/away/bin/wirebookd" --itch-file "$T/day.itch" --shm "$SHM" --no-pin \
	--exit-at-eof ) >"$T/itch.out" 2>"$T/itch.err"
rc=$?
[ "$rc" -eq 0 ] && grep -Eq '^any +nasdaq +itch +[1-9]' "$T/itch.out" &&
	ok "--itch-file outside the tree without a feed map decodes" ||
	{ bad "--itch-file outside the tree: exit $rc"; head -3 "$T/itch.err"; }
( cd "$T/away/run" && exec "$T/away/bin/wirebookd" --pcap "$cap" --shm "$SHM" --no-pin \
	--exit-at-eof ) >/dev/null 2>"$T/nomap.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'no feed map found (looked in' "$T/nomap.err" &&
	ok "--pcap without a feed map: exit 2 saying where it looked" ||
	{ bad "--pcap without a feed map: exit $rc"; cat "$T/nomap.err"; }

demo=$(bash "$ROOT/scripts/deps.sh" --for demo --list | tr '\n' ' ')
all=$(bash "$ROOT/scripts/deps.sh" --for check --list | tr '\n' ' ')
echo "$demo" | grep -Eq 'qemu|linux-image|linux-headers|busybox' &&
	bad "make demo would install: $demo" || ok "make demo installs no qemu or kernels ($demo)"
echo "$all" | grep -q qemu-system-x86 && echo "$all" | grep -q linux-image-amd64 &&
	ok "make check still installs qemu and kernels" || bad "make check lost the VM packages: $all"
grep -Eq '^demo: deps-demo' "$ROOT/Makefile" && ok "make demo uses the demo package set" ||
	bad "make demo does not use deps --for demo"
finish
