#!/usr/bin/env bash
# A dead recovery server (issue 23.2; make recovery-dead-test, part of make
# check): recovery.conf names a closed port, or a server that takes the
# requests and never answers, or a snapshot service on a closed port. wirebookd names it on stderr before the
# source ends, the replay ends (never a crawl of one full retry schedule per
# gap), every gap is counted unrecoverable, and the wait costs no core: the
# CPU time stays far below what a busy loop over the run would burn. No
# time is asserted but a generous timeout and a loose CPU bound.
. "$(dirname "$0")/recovery-lib.sh" dead

# run NAME CONF: wirebookd --pcap lossy.pcap --recovery CONF, its stats in
# $T/NAME.out, stderr in $T/NAME.err, its CPU seconds in $T/NAME.cpu
run() {
	/usr/bin/time -f '%U %S' -o "$T/$1.time" timeout 120 "$WBD" --pcap "$T/lossy.pcap" \
		--feeds "$FEEDS" --shm "wb-rec-dead-$$-$1" --force --no-pin --exit-at-eof \
		--recovery "$2" > "$T/$1.out" 2> "$T/$1.err"
	local rc=$?
	[ $rc -eq 0 ] || bad "$1: wirebookd exit $rc (124: still waiting after 120 s): $(tail -3 "$T/$1.err")"
	tail -1 "$T/$1.time" | awk '{ printf "%d\n", $1 + $2 }' > "$T/$1.cpu"
}

# check NAME ADDR: the server named before the source ended, all gaps lost, little CPU
check() {
	local named ended
	named=$(grep -n "recovery nasdaq: mold $2 did not answer" "$T/$1.err" | head -1 | cut -d: -f1)
	ended=$(grep -n 'source ended' "$T/$1.err" | head -1 | cut -d: -f1)
	if [ -n "$named" ] && [ -n "$ended" ] && [ "$named" -lt "$ended" ]; then ok
	else bad "$1: $2 not named on stderr before the end: $(cat "$T/$1.err")"; fi
	if grep -q '^recovery nasdaq .*: in sequence; gaps \([1-9][0-9]*\), filled 0, unrecoverable \1,' "$T/$1.out"; then ok
	else bad "$1: gaps not all unrecoverable: $(grep '^recovery' "$T/$1.out")"; fi
	# A busy loop over the old schedule (a retry schedule per gap) burned
	# both cores for minutes; the whole run here takes a few seconds.
	if [ "$(cat "$T/$1.cpu")" -lt 10 ]; then ok
	else bad "$1: $(cat "$T/$1.cpu") s of CPU waiting on a dead server"; fi
}

$GEN -q -n 100000 --symbols 50 -s 5 --ab --loss 1 -o "$T/lossy.pcap"

# ---- nothing listens (the port refuses: ECONNREFUSED on the socket)
echo "nasdaq mold 127.0.0.1:1" > "$T/closed.conf"
run closed "$T/closed.conf"
check closed 127.0.0.1:1
if grep -q 'Connection refused' "$T/closed.err"; then ok; else bad "closed port: the refusal is not said: $(cat "$T/closed.err")"; fi

# ---- a server that takes every request and never answers
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(300)
' > "$T/silent.port" &
servers+=($!)
for _ in $(seq 100); do [ -s "$T/silent.port" ] && break; sleep 0.05; done
port=$(cat "$T/silent.port")
echo "nasdaq mold 127.0.0.1:$port" > "$T/silent.conf"
run silent "$T/silent.conf"
check silent "127.0.0.1:$port"

# ---- a snapshot service alone on the stream (glimpse: its holes are its) on a closed port
echo "nasdaq glimpse 127.0.0.1:1 user=WB0001 password=x" > "$T/snapshot.conf"
run snapshot "$T/snapshot.conf"
named=$(grep -n "recovery nasdaq: glimpse 127.0.0.1:1 did not answer" "$T/snapshot.err" | head -1 | cut -d: -f1)
ended=$(grep -n 'source ended' "$T/snapshot.err" | head -1 | cut -d: -f1)
if [ -n "$named" ] && [ -n "$ended" ] && [ "$named" -lt "$ended" ]; then ok
else bad "snapshot: the server not named before the end: $(cat "$T/snapshot.err")"; fi
if grep -q '^recovery nasdaq .*: in sequence; gaps \([1-9][0-9]*\), filled 0, unrecoverable \1,' "$T/snapshot.out"; then ok
else bad "snapshot: gaps not all unrecoverable: $(grep '^recovery' "$T/snapshot.out")"; fi
if [ "$(cat "$T/snapshot.cpu")" -lt 10 ]; then ok; else bad "snapshot: $(cat "$T/snapshot.cpu") s of CPU"; fi

echo "recovery-dead: $pass passed, $fail failed"
[ $fail -eq 0 ]
