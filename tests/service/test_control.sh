#!/usr/bin/env bash
# Issue 14.1: wirebookd's control socket answers for the whole life of the
# daemon (also after a file source ended and the books stay published), and
# wb-subscribe never hangs: a stopped daemon gives a timed-out error naming
# what was tried, however many clients are already queued.
. "$(dirname "$0")/lib.sh"

cap=$(demo_capture)
sock="$T/ctl.sock"
bg "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin \
	--control "$sock" >"$T/wbd.out" 2>"$T/wbd.err"
wbd=$!
wait_for 30 grep -q 'source ended' "$T/wbd.err" || bad "wirebookd did not finish the capture"

n=0
for i in $(seq 1 20); do
	timeout 30 "$B/wb-subscribe" --daemon "$sock" list >/dev/null 2>>"$T/sub.err" && n=$((n + 1))
done
[ "$n" -eq 20 ] && ok "20 requests answered after the source ended" ||
	{ bad "only $n of 20 requests answered after the source ended"; cat "$T/sub.err"; }

timeout 30 "$B/wb-subscribe" --daemon "$sock" add NVDA >/dev/null 2>&1
check "a symbol added after the source ended is listed" \
	sh -c "timeout 30 '$B/wb-subscribe' --daemon '$sock' list | grep -q NVDA"

# A stopped daemon: every client gives up with a message, none hangs (the
# old client blocked forever once the accept queue was full).
kill -STOP "$wbd"
hung=0 msg=0
for i in $(seq 1 12); do
	timeout 60 "$B/wb-subscribe" --timeout 0.5 --daemon "$sock" list >/dev/null 2>"$T/stopped.err"
	rc=$?
	[ "$rc" -eq 124 ] && hung=$((hung + 1))
	grep -q "$sock" "$T/stopped.err" && grep -Eq 'no reply|timed out' "$T/stopped.err" &&
		msg=$((msg + 1))
done
[ "$hung" -eq 0 ] && ok "no client hangs on a stopped daemon" || bad "$hung of 12 clients hung"
[ "$msg" -eq 12 ] && ok "each says which socket and that it timed out" ||
	{ bad "only $msg of 12 messages name the socket and the timeout"; cat "$T/stopped.err"; }
kill -CONT "$wbd"
check "the daemon answers again once continued" \
	wait_for 10 timeout 30 "$B/wb-subscribe" --daemon "$sock" list

# Issue 23.4: a second wirebookd refuses a control socket another one
# answers on (exit 2, naming it) and leaves it alone; so it does a file
# that is no socket. A socket nobody answers on (a crash's) is replaced,
# and removed at the exit.
second() { timeout 60 "$B/wirebookd" --pcap "$cap" --feeds "$ROOT/feeds.conf" --shm "$SHM-2" \
	--no-pin --exit-at-eof --control "$1" >/dev/null 2>"$T/second.err"; }
second "$sock"
rc=$?
[ "$rc" -eq 2 ] && grep -qF "$sock is in use" "$T/second.err" &&
	ok "a second wirebookd on a socket in use: exit 2 naming it" ||
	{ bad "a second wirebookd on a socket in use: exit $rc"; cat "$T/second.err"; }
check "the first daemon still answers after the second one's exit" sh -c \
	"timeout 30 '$B/wb-subscribe' --daemon '$sock' list >/dev/null"
: >"$T/plain"
second "$T/plain"
rc=$?
[ "$rc" -eq 2 ] && [ -f "$T/plain" ] && grep -q 'not a socket' "$T/second.err" &&
	ok "a file that is no socket: exit 2, the file kept" || { bad "plain file as socket: exit $rc"; cat "$T/second.err"; }
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/stale.sock"
second "$T/stale.sock"
rc=$?
[ "$rc" -eq 0 ] && [ ! -e "$T/stale.sock" ] && ok "a stale socket is taken over and removed at the exit" ||
	{ bad "stale socket: exit $rc, $(ls -l "$T/stale.sock" 2>&1)"; cat "$T/second.err"; }

timeout 30 "$B/wb-subscribe" --daemon "$T/nothing.sock" list 2>"$T/none.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "$T/nothing.sock" "$T/none.err" && grep -q 'no such socket' "$T/none.err" &&
	ok "a missing socket: exit 1 naming the path" || { bad "missing socket (rc $rc)"; cat "$T/none.err"; }

timeout 30 "$B/wb-subscribe" --timeout abc --daemon "$sock" list 2>"$T/badopt.err"
[ $? -eq 2 ] && grep -q -- '--timeout' "$T/badopt.err" && ok "--timeout abc: exit 2" ||
	bad "--timeout abc accepted"
finish
