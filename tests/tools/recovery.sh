#!/usr/bin/env bash
# Gap recovery from the command line (make recovery-short, part of make
# check): wb-recoveryd's usage and refusals, recovery.conf errors, and
# wirebookd --recovery against a server that answers, one that drops
# requests (retries), one that cannot answer (the range is declared lost,
# the day goes on) and none at all.
set -u
B=${B:-build}
GEN=$B/wb-gen
SRV=$B/wb-recoveryd
WBD=$B/wirebookd
FEEDS=feeds.conf
T=$(mktemp -d /tmp/wb-recovery-cli.XXXXXX)
servers=()
cleanup() {
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_exit DESCRIPTION CODE STDERR-TEXT CMD...
expect_exit() {
	local what=$1 code=$2 text=$3; shift 3
	"$@" > "$T/out" 2> "$T/err"
	local rc=$?
	if [ $rc -ne "$code" ]; then bad "$what: exit $rc, expected $code: $(head -c 300 "$T/err")"; return; fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$T/err"; then
		bad "$what: stderr lacks '$text': $(head -c 300 "$T/err")"; return
	fi
	ok
}

# expect_line DESCRIPTION FILE TEXT
expect_line() {
	if grep -qF -- "$3" "$2"; then ok; else bad "$1: no line with '$3'"; grep '^recovery\|^books:' "$2" | sed 's/^/    /' | head -5; fi
}

# serve PCAP [ARGS...]: start wb-recoveryd for nasdaq on a free port, set $port
serve() {
	local log="$T/srv.$RANDOM"
	"$SRV" --pcap "$1" --venue nasdaq --listen 127.0.0.1:0 --feeds "$FEEDS" "${@:2}" 2> "$log" &
	servers+=($!)
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
		[ -n "$port" ] && return 0
		sleep 0.05
	done
	bad "wb-recoveryd did not start: $(cat "$log")"
	return 1
}

# run NAME PCAP [CONF]: wirebookd's books from PCAP, output in $T/NAME.out
run() {
	local args=(--pcap "$2" --feeds "$FEEDS" --shm "wb-rec-cli-$$-$1" --force --no-pin --exit-at-eof)
	[ -n "${3:-}" ] && args+=(--recovery "$3")
	timeout 60 "$WBD" "${args[@]}" > "$T/$1.out" 2> "$T/$1.err" || bad "wirebookd $1: exit $?: $(tail -2 "$T/$1.err")"
}

sum() { grep '^books: checksum' "$T/$1.out"; }

# ---- usage and refusals
expect_exit "wb-recoveryd --help" 0 "" $SRV --help
expect_exit "wb-recoveryd without arguments" 2 "give --pcap, --venue and --listen" $SRV
expect_exit "wb-recoveryd unknown venue" 2 "unknown venue 'nowhere'" \
	$SRV --pcap x --venue nowhere --listen 127.0.0.1:0
expect_exit "wb-recoveryd bad address" 2 "--listen" $SRV --pcap x --venue nasdaq --listen nowhere
expect_exit "wb-recoveryd for a PITCH venue" 2 "not a MoldUDP64 feed" \
	$SRV --pcap x --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "wb-recoveryd missing capture" 1 "No such file" \
	$SRV --pcap "$T/missing.pcap" --venue nasdaq --listen 127.0.0.1:0 --feeds $FEEDS

$GEN -q -n 30000 --symbols 50 -s 3 --ab -o "$T/whole.pcap"
$GEN -q -n 30000 --symbols 50 -s 3 --ab --loss 2 -o "$T/lossy.pcap"
expect_exit "wb-recoveryd on a capture without the venue" 1 "no MoldUDP64 message of venue uqdf" \
	$SRV --pcap "$T/whole.pcap" --venue uqdf --listen 127.0.0.1:0 --feeds $FEEDS

for c in "nasdaq grp 127.0.0.1:1|not implemented yet" "nasdaq mold nowhere|recovery.conf:1:" \
	 "nasdaq mold 127.0.0.1:1 colour=red|unknown key" "bzx mold 127.0.0.1:1|cannot serve" \
	 "psx mold 127.0.0.1:1|no line of venue psx" "uqdf mold 127.0.0.1:1|give channel=N" \
	 "nasdaq mold 127.0.0.1:1
nasdaq mold 127.0.0.1:2|second service"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 1 "${c#*|}" \
		$WBD --pcap "$T/lossy.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done
expect_exit "--recovery with --kernel" 2 "not yet with --kernel" $WBD --kernel --recovery "$T/recovery.conf"

# ---- recovered: the lossy day's books are the whole day's
run whole "$T/whole.pcap"
run lost "$T/lossy.pcap"
if [ "$(sum lost)" != "$(sum whole)" ]; then ok; else bad "2% loss without recovery left the books as they were (no loss?)"; fi
serve "$T/whole.pcap" || exit 1
echo "nasdaq mold 127.0.0.1:$port  # the whole day" > "$T/good.conf"
run recovered "$T/lossy.pcap" "$T/good.conf"
if [ "$(sum recovered)" = "$(sum whole)" ]; then ok; else bad "recovered books differ: $(sum recovered) vs $(sum whole)"; fi
expect_line "every gap filled" "$T/recovered.out" "unrecoverable 0, messages recovered"
if grep -q '^recovery nasdaq .*: in sequence; gaps [1-9][0-9]*, filled' "$T/recovered.out"; then ok; else bad "no gap counted"; fi

# ---- a server that drops every other request: retries, still whole
serve "$T/whole.pcap" --drop-every 2 || exit 1
echo "nasdaq mold 127.0.0.1:$port timeout=2" > "$T/lossy-server.conf"
run retried "$T/lossy.pcap" "$T/lossy-server.conf"
if [ "$(sum retried)" = "$(sum whole)" ]; then ok; else bad "books differ behind a lossy server"; fi
if grep -q '^recovery nasdaq .* retries [1-9]' "$T/retried.out"; then ok; else bad "no retry counted behind a lossy server"; fi

# ---- a server that cannot answer (it has the lossy day): refused, declared lost, the day goes on
serve "$T/lossy.pcap" || exit 1
echo "nasdaq mold 127.0.0.1:$port timeout=1 retries=2" > "$T/refusing.conf"
run refused "$T/lossy.pcap" "$T/refusing.conf"
if grep -q '^recovery nasdaq .*: in sequence; gaps \([0-9]*\), filled 0, unrecoverable \1,' "$T/refused.out"; then ok
else bad "refused ranges not all unrecoverable: $(grep '^recovery' "$T/refused.out")"; fi
if [ "$(sum refused)" = "$(sum lost)" ]; then ok; else bad "refused recovery: books differ from the plain lossy run's"; fi

# ---- no server at all on the port: the same, never a hang
echo "nasdaq mold 127.0.0.1:9 timeout=1 retries=1" > "$T/nobody.conf"
run nobody "$T/lossy.pcap" "$T/nobody.conf"
if grep -q 'filled 0, unrecoverable [1-9]' "$T/nobody.out"; then ok; else bad "no server: $(grep '^recovery' "$T/nobody.out")"; fi

# ---- while a venue waits for its fill, readers see the book recovering
echo "nasdaq mold 127.0.0.1:9 timeout=1000 retries=5" > "$T/slow.conf"
"$WBD" --pcap "$T/lossy.pcap" --feeds "$FEEDS" --shm "wb-rec-cli-$$-slow" --force --no-pin \
	--recovery "$T/slow.conf" > "$T/slow.out" 2> "$T/slow.err" &
wbd=$!
state=
for _ in $(seq 40); do
	sleep 0.1
	"$B/wb-book" --shm "wb-rec-cli-$$-slow" --once > "$T/slow.book" 2>&1 || continue
	state=$(grep -o 'RECOVERING: venues 0x[0-9a-f]*' "$T/slow.book") && break
done
kill -INT $wbd; wait $wbd
# Nasdaq is venue 1 (enum wb_venue): bit 1.
if [ "$state" = "RECOVERING: venues 0x2" ]; then ok
else bad "no RECOVERING state while waiting for a fill: $(head -3 "$T/slow.book")"; fi
if grep -q '^recovery nasdaq .*STALE, recovering for' "$T/slow.out"; then ok
else bad "the final stats do not say the stream is stale: $(grep '^recovery' "$T/slow.out")"; fi

echo "recovery-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
