#!/usr/bin/env bash
# Gap recovery from the command line (make recovery-short, part of make
# check): wb-recoveryd's usage and refusals, recovery.conf errors, and
# wirebookd --recovery against a server that answers, one that drops
# requests (retries), one that cannot answer (the range is declared lost,
# the day goes on) and none at all; the Cboe Gap Request Proxy answering,
# refusing the login, out of quota, and hanging up (reconnects, the stream
# stale, the other venue unaffected); the NYSE XDP Request Server answering,
# refusing a SourceID, out of its daily limit, hanging up, keeping an
# idle session with heartbeats, and a late join by Refresh, served and
# refused.
. "$(dirname "$0")/recovery-lib.sh" cli

# expect_line DESCRIPTION FILE TEXT
expect_line() {
	if grep -qF -- "$3" "$2"; then ok; else bad "$1: no line with '$3'"; grep '^recovery\|^books:' "$2" | sed 's/^/    /' | head -5; fi
}

# serve PCAP [ARGS...]: start wb-recoveryd for nasdaq on a free port, set $port
serve() {
	start_recoveryd --pcap "$1" --venue nasdaq --feeds "$FEEDS" "${@:2}"
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
expect_exit "wb-recoveryd for a PITCH venue" 2 "which --service mold cannot serve (its service: grp)" \
	$SRV --pcap x --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "wb-recoveryd grp without --reply-to" 2 "needs --reply-to" \
	$SRV --service grp --pcap x --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "wb-recoveryd grp for an ITCH venue" 2 "which --service grp cannot serve (its service: mold)" \
	$SRV --service grp --pcap x --venue nasdaq --listen 127.0.0.1:0 --reply-to 127.0.0.1:9 --feeds $FEEDS
expect_exit "wb-recoveryd unknown service" 2 "unknown service 'bogus'" \
	$SRV --service bogus --pcap x --venue bzx --listen 127.0.0.1:0
expect_exit "wb-recoveryd missing capture" 1 "No such file" \
	$SRV --pcap "$T/missing.pcap" --venue nasdaq --listen 127.0.0.1:0 --feeds $FEEDS

$GEN -q -n 30000 --symbols 50 -s 3 --ab -o "$T/whole.pcap"
$GEN -q -n 30000 --symbols 50 -s 3 --ab --loss 2 -o "$T/lossy.pcap"
expect_exit "wb-recoveryd on a capture without the venue" 1 "no MoldUDP64 message of venue uqdf" \
	$SRV --pcap "$T/whole.pcap" --venue uqdf --listen 127.0.0.1:0 --feeds $FEEDS

for c in "nasdaq bogus 127.0.0.1:1|unknown service" "nasdaq mold nowhere|recovery.conf:1:" \
	 "bzx grp 127.0.0.1:1|needs gap=ADDR:PORT" "nasdaq mold 127.0.0.1:1 user=WB01|only a grp service" \
	 "nasdaq grp 127.0.0.1:1 gap=127.0.0.1:2|which a grp service cannot serve" \
	 "bzx grp 127.0.0.1:1 gap=127.0.0.1:2 user=TOOLONG|at most 4 characters" \
	 "nasdaq mold 127.0.0.1:1 colour=red|unknown key" "bzx mold 127.0.0.1:1|cannot serve" \
	 "psx mold 127.0.0.1:1|no line of venue psx" "uqdf mold 127.0.0.1:1|give channel=N" \
	 "nasdaq mold 127.0.0.1:1
nasdaq mold 127.0.0.1:2|second service"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 2 "${c#*|}" \
		$WBD --pcap "$T/lossy.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done
# --kernel recovers the module's streams (tests/vm: the recovery scenario); without the
# device it says which and stops.
echo "nasdaq mold 127.0.0.1:9" > "$T/kernel.conf"
expect_exit "--recovery with --kernel, no device" 1 "$T/no-such-device: No such file" \
	$WBD --kernel="$T/no-such-device" --recovery "$T/kernel.conf"

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
watch_recovering "wb-rec-cli-$$-slow" "$T/slow.book"
kill -INT $wbd; wait $wbd
# Nasdaq is venue 1 (enum wb_venue): bit 1.
if [ "$state" = "RECOVERING: venues 0x2" ]; then ok
else bad "no RECOVERING state while waiting for a fill: $(head -3 "$T/slow.book")"; fi
if grep -q '^recovery nasdaq .*STALE, recovering for' "$T/slow.out"; then ok
else bad "the final stats do not say the stream is stale: $(grep '^recovery' "$T/slow.out")"; fi

# ---- Cboe PITCH: the Gap Request Proxy (TCP), its refusals and a server that hangs up
free_udp_port() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# serve_grp PCAP GAP-PORT [ARGS...]: wb-recoveryd --service grp for bzx, user WB01, sets $port
serve_grp() {
	start_recoveryd --service grp --pcap "$1" --venue bzx --feeds "$FEEDS" \
		--reply-to "127.0.0.1:$2" --user WB01 --password secret "${@:3}"
}
$GEN -q -n 30000 --symbols 50 -s 3 --ab --venues nasdaq,bzx -o "$T/two.pcap"
$GEN -q -n 30000 --symbols 50 -s 3 --ab --venues nasdaq,bzx --loss 2 -o "$T/two-lossy.pcap"
run two "$T/two.pcap"
run two-lost "$T/two-lossy.pcap"

# answered: both venues whole again, one through Mold, one through GRP
gp=$(free_udp_port)
serve_grp "$T/two.pcap" "$gp" || exit 1
grp_port=$port
serve "$T/two.pcap" || exit 1
printf 'nasdaq mold 127.0.0.1:%s\nbzx grp 127.0.0.1:%s gap=127.0.0.1:%s user=WB01 password=secret\n' \
	"$port" "$grp_port" "$gp" > "$T/grp.conf"
run grp "$T/two-lossy.pcap" "$T/grp.conf"
# The venue books only: the super-book's last trade across two venues is
# whichever venue's came last, and recovered trades come later.
vsum() { sum "$1" | sed 's/, super-book.*//'; }
if [ "$(vsum grp)" = "$(vsum two)" ]; then ok; else bad "grp: recovered books differ: $(vsum grp) vs $(vsum two)"; fi
if grep -q '^recovery bzx (grp .*: in sequence; gaps \([1-9][0-9]*\), filled \1, unrecoverable 0,' "$T/grp.out"; then ok
else bad "grp: not every gap filled: $(grep '^recovery bzx' "$T/grp.out")"; fi

# a refused login: every range unrecoverable, the login retried, the day goes on
gp=$(free_udp_port)
serve_grp "$T/two.pcap" "$gp" || exit 1
echo "bzx grp 127.0.0.1:$port gap=127.0.0.1:$gp user=WB01 password=wrong timeout=1 retries=2" > "$T/badlogin.conf"
run badlogin "$T/two-lossy.pcap" "$T/badlogin.conf"
if grep -q '^recovery bzx .*: in sequence; gaps \([1-9][0-9]*\), filled 0, unrecoverable \1,.* logins refused [1-9]' "$T/badlogin.out"; then ok
else bad "refused login: $(grep '^recovery bzx' "$T/badlogin.out")"; fi
if grep -q "refused the login 'WB01' (status N)" "$T/badlogin.err"; then ok; else bad "refused login not said on stderr"; fi
if [ "$(vsum badlogin)" = "$(vsum two-lost)" ]; then ok; else bad "refused login: books differ from the plain lossy run's"; fi

# the quota exhausted after 3 ranges: those filled, the rest refused ('D') and unrecoverable
gp=$(free_udp_port)
serve_grp "$T/two.pcap" "$gp" --quota 3 || exit 1
echo "bzx grp 127.0.0.1:$port gap=127.0.0.1:$gp user=WB01 password=secret" > "$T/quota.conf"
run quota "$T/two-lossy.pcap" "$T/quota.conf"
if grep -q '^recovery bzx .*: in sequence; gaps [1-9][0-9]*, filled 3, unrecoverable [1-9][0-9]*,.*; refused [1-9]' "$T/quota.out"; then ok
else bad "quota: $(grep '^recovery bzx' "$T/quota.out")"; fi

# a second quota of 25 requests (the 65 gaps come within 2 s): the rest are deferred ('S'), asked again, all filled
gp=$(free_udp_port)
serve_grp "$T/two.pcap" "$gp" --quota-per-second 25 || exit 1
echo "bzx grp 127.0.0.1:$port gap=127.0.0.1:$gp user=WB01 password=secret timeout=50 retries=8" > "$T/persec.conf"
run persec "$T/two-lossy.pcap" "$T/persec.conf"
if grep -q '^recovery bzx .*: in sequence; gaps \([1-9][0-9]*\), filled \1, unrecoverable 0,.*; refused 0, deferred [1-9]' "$T/persec.out"; then ok
else bad "second quota: $(grep '^recovery bzx' "$T/persec.out")"; fi

# a server that drops the session after 2 requests, and every session after:
# wirebookd reconnects with backoff, says the stream is stale, Nasdaq is unaffected
gp=$(free_udp_port)
serve_grp "$T/two.pcap" "$gp" --hangup-after 2 || exit 1
grp_port=$port
serve "$T/two.pcap" || exit 1
printf 'nasdaq mold 127.0.0.1:%s\nbzx grp 127.0.0.1:%s gap=127.0.0.1:%s user=WB01 password=secret timeout=50 retries=100\n' \
	"$port" "$grp_port" "$gp" > "$T/hangup.conf"
"$WBD" --pcap "$T/two-lossy.pcap" --feeds "$FEEDS" --shm "wb-rec-cli-$$-hangup" --force --no-pin \
	--recovery "$T/hangup.conf" > "$T/hangup.out" 2> "$T/hangup.err" &
wbd=$!
watch_recovering "wb-rec-cli-$$-hangup" "$T/hangup.book" 0x4
sleep 1.5	# several reconnects
kill -INT $wbd; wait $wbd
# BZX is venue 2: bit 2 alone, Nasdaq (bit 1) is not held up.
if [ "$state" = "RECOVERING: venues 0x4" ]; then ok
else bad "hangup: not BZX alone recovering: $state $(head -3 "$T/hangup.book")"; fi
# At least one reconnect (connects >= 2), whether the kill found the session up or down:
# how many fit in the time depends on the machine's load.
if grep -q '^recovery bzx .*STALE, recovering for.*session \(up\|down\), connects \([2-9]\|[1-9][0-9]\)' "$T/hangup.out"; then ok
else bad "hangup: no stale stream with reconnects: $(grep '^recovery bzx' "$T/hangup.out")"; fi
if grep -q '^recovery nasdaq .*: in sequence; gaps [1-9][0-9]*,.* unrecoverable 0,' "$T/hangup.out"; then ok
else bad "hangup: the Nasdaq stream was held up: $(grep '^recovery nasdaq' "$T/hangup.out")"; fi

# ---- NYSE XDP: the Request Server (TCP) of channel 1, retransmissions over UDP
expect_exit "wb-recoveryd xdp without --reply-to" 2 "needs --reply-to" \
	$SRV --service xdp --pcap x --venue nyse --channel 1 --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "wb-recoveryd xdp without --channel" 2 "give --channel" \
	$SRV --service xdp --pcap x --venue nyse --listen 127.0.0.1:0 --reply-to 127.0.0.1:9 --feeds $FEEDS
expect_exit "wb-recoveryd xdp for an ITCH venue" 2 "which --service xdp cannot serve (its service: mold)" \
	$SRV --service xdp --pcap x --venue nasdaq --listen 127.0.0.1:0 --reply-to 127.0.0.1:9 --feeds $FEEDS
expect_exit "wb-recoveryd --snapshot-at without --refresh-to" 2 "go together" \
	$SRV --service xdp --snapshot-at 5 --pcap x --venue nyse --channel 1 --listen 127.0.0.1:0 --reply-to 127.0.0.1:9
expect_exit "wb-recoveryd --refresh-to for grp" 2 "go together" \
	$SRV --service grp --snapshot-at 5 --refresh-to 127.0.0.1:9 --pcap x --venue bzx --listen 127.0.0.1:0 --reply-to 127.0.0.1:9
expect_exit "wb-recoveryd xdp source id too long" 2 "--source-id: at most 10" \
	$SRV --service xdp --source-id ELEVENCHARS --pcap x --venue nyse --channel 1 --listen 127.0.0.1:0
for c in "nyse xdp 127.0.0.1:1 channel=1 user=WB|needs retrans=ADDR:PORT" \
	 "nyse xdp 127.0.0.1:1 channel=1 retrans=127.0.0.1:2|and user=SOURCEID" \
	 "nyse xdp 127.0.0.1:1 channel=1 retrans=127.0.0.1:2 user=ELEVENCHARS|1 to 10 characters" \
	 "nyse xdp 127.0.0.1:1 channel=1 retrans=nowhere user=WB|retrans= wants ADDR:PORT" \
	 "nyse xdp 127.0.0.1:1 channel=1 retrans=127.0.0.1:2 refresh=127.0.0.1 user=WB|refresh= wants ADDR:PORT" \
	 "nyse mold 127.0.0.1:1 channel=1 refresh=127.0.0.1:2|unknown key" \
	 "nyse xdp 127.0.0.1:1 retrans=127.0.0.1:2 user=WB|give channel=N" \
	 "nasdaq xdp 127.0.0.1:1 retrans=127.0.0.1:2 user=WB|which a xdp service cannot serve"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 2 "${c#*|}" \
		$WBD --pcap "$T/lossy.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done

# serve_xdp PCAP RETRANS-PORT [ARGS...]: wb-recoveryd --service xdp for nyse channel 1, sets $port
serve_xdp() {
	start_recoveryd --service xdp --pcap "$1" --venue nyse --channel 1 --feeds "$FEEDS" \
		--reply-to "127.0.0.1:$2" --source-id WIREBOOK "${@:3}" || return 1
	xdp_log=$recoveryd_log
}
$GEN -q -n 30000 --symbols 50 -s 3 --ab --venues nasdaq,nyse -o "$T/nyse.pcap"
$GEN -q -n 30000 --symbols 50 -s 3 --ab --venues nasdaq,nyse --loss 2 -o "$T/nyse-lossy.pcap"
xdp1='^recovery nyse/1 (xdp '

# answered: every gap of channel 1 filled (the other channels have no service: plain GAPs)
rp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp user=WIREBOOK" > "$T/xdp.conf"
run xdp "$T/nyse-lossy.pcap" "$T/xdp.conf"
if grep -q "$xdp1.*: in sequence; gaps \([1-9][0-9]*\), filled \1, unrecoverable 0,.*refused 0, unavailable 0; session up, connects 1," "$T/xdp.out"; then ok
else bad "xdp: not every gap filled: $(grep '^recovery nyse' "$T/xdp.out")"; fi

# a SourceID the server does not know: every request refused (status 1), unrecoverable, the day goes on
rp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp user=INTRUDER" > "$T/xdp-source.conf"
run xdp-source "$T/nyse-lossy.pcap" "$T/xdp-source.conf"
if grep -q "$xdp1.*: in sequence; gaps \([1-9][0-9]*\), filled 0, unrecoverable \1,.*; refused \([1-9][0-9]*\) (status 1: \2)" "$T/xdp-source.out"; then ok
else bad "xdp bad source id: $(grep '^recovery nyse' "$T/xdp-source.out")"; fi
if grep -q "refused .*: status 1 (invalid source id)" "$T/xdp-source.err"; then ok; else bad "xdp refusal not said on stderr"; fi
if grep -q '^books: checksum' "$T/xdp-source.out"; then ok; else bad "xdp bad source id: the day did not go on"; fi

# the daily limit after 3 requests: those filled, the rest refused (status 4) and unrecoverable
rp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" --quota 3 || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp user=WIREBOOK" > "$T/xdp-quota.conf"
run xdp-quota "$T/nyse-lossy.pcap" "$T/xdp-quota.conf"
if grep -q "$xdp1.*: in sequence; gaps [1-9][0-9]*, filled 3, unrecoverable [1-9][0-9]*,.*; refused [1-9][0-9]* (status 4: [1-9]" "$T/xdp-quota.out"; then ok
else bad "xdp quota: $(grep '^recovery nyse' "$T/xdp-quota.out")"; fi

# a server whose retransmissions go astray: the session stays up, the client answers
# the server's heartbeats (every 100 ms), the stream is stale
astray=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$astray" --heartbeat-interval 100 || exit 1
hb_log=$xdp_log
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$(free_udp_port) user=WIREBOOK timeout=1000 retries=10" > "$T/xdp-astray.conf"
"$WBD" --pcap "$T/nyse-lossy.pcap" --feeds "$FEEDS" --shm "wb-rec-cli-$$-astray" --force --no-pin \
	--recovery "$T/xdp-astray.conf" > "$T/xdp-astray.out" 2> "$T/xdp-astray.err" &
wbd=$!
sleep 1.5
kill -INT $wbd; wait $wbd
kill "${servers[-1]}"; wait "${servers[-1]}"
if grep -q "$xdp1.*STALE, recovering for.*session up, connects 1, disconnects 0, heartbeats answered \([5-9]\|[1-9][0-9]\)" "$T/xdp-astray.out"; then ok
else bad "xdp astray: $(grep '^recovery nyse' "$T/xdp-astray.out")"; fi
if grep -q " heartbeats, [1-9][0-9]* answered, 0 sessions dropped unanswered" "$hb_log"; then ok
else bad "xdp heartbeats: $(tail -1 "$hb_log")"; fi

# a server that drops the session after 2 requests, and every session after:
# wirebookd reconnects with backoff, says the stream is stale, Nasdaq is unaffected
rp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" --hangup-after 2 || exit 1
xdp_port=$port
serve "$T/nyse.pcap" || exit 1
printf 'nasdaq mold 127.0.0.1:%s\nnyse xdp 127.0.0.1:%s channel=1 retrans=127.0.0.1:%s user=WIREBOOK timeout=50 retries=100\n' \
	"$port" "$xdp_port" "$rp" > "$T/xdp-hangup.conf"
"$WBD" --pcap "$T/nyse-lossy.pcap" --feeds "$FEEDS" --shm "wb-rec-cli-$$-xhangup" --force --no-pin \
	--recovery "$T/xdp-hangup.conf" > "$T/xdp-hangup.out" 2> "$T/xdp-hangup.err" &
wbd=$!
watch_recovering "wb-rec-cli-$$-xhangup" "$T/xdp-hangup.book" 0x40
sleep 1.5	# several reconnects
kill -INT $wbd; wait $wbd
# NYSE is venue 6 (enum wb_venue): bit 6 alone, Nasdaq (bit 1) is not held up.
if [ "$state" = "RECOVERING: venues 0x40" ]; then ok
else bad "xdp hangup: not NYSE alone recovering: $state $(head -3 "$T/xdp-hangup.book")"; fi
if grep -q "$xdp1.*STALE, recovering for.*session \(up\|down\), connects \([2-9]\|[1-9][0-9]\)" "$T/xdp-hangup.out"; then ok
else bad "xdp hangup: no stale stream with reconnects: $(grep '^recovery nyse' "$T/xdp-hangup.out")"; fi
if grep -q '^recovery nasdaq .*: in sequence; gaps [1-9][0-9]*,.* unrecoverable 0,' "$T/xdp-hangup.out"; then ok
else bad "xdp hangup: the Nasdaq stream was held up: $(grep '^recovery nasdaq' "$T/xdp-hangup.out")"; fi

# ---- XDP late join by Refresh: channel 1 joined at mid-day (the second half of
# the capture), its book as of the sequence before its first packet there
python3 - "$T/nyse.pcap" "$T/nyse-late.pcap" <<'PY' > "$T/nyse-late.first"
import struct, sys
src = open(sys.argv[1], "rb").read()
recs, off = [], 24
while off + 16 <= len(src):
    n = struct.unpack_from("<I", src, off + 8)[0]
    recs.append((off, 16 + n))
    off += 16 + n
first = None
with open(sys.argv[2], "wb") as out:
    out.write(src[:24])
    for o, n in recs[len(recs) // 2:]:
        out.write(src[o:o + n])
        frame = src[o + 16:o + n]
        if first is None and len(frame) >= 58 and struct.unpack(">H", frame[36:38])[0] == 11064 and frame[45]:
            first = struct.unpack_from("<I", frame, 46)[0]
print(first)
PY
late_first=$(cat "$T/nyse-late.first")
rp=$(free_udp_port); fp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" --snapshot-at "$((late_first - 1))" --refresh-to "127.0.0.1:$fp" || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp refresh=127.0.0.1:$fp user=WIREBOOK" > "$T/xdp-late.conf"
run xdp-late "$T/nyse-late.pcap" "$T/xdp-late.conf"
if grep -q "$xdp1.*: in sequence; gaps 1, filled 1, unrecoverable 0,.*; requests 0,.*; refreshes 1 ([1-9][0-9]* packets, 0 begun again)" "$T/xdp-late.out"; then ok
else bad "xdp late join: $(grep '^recovery nyse' "$T/xdp-late.out")"; fi
# the refresh 30 messages before the first packet the late client sees: the rest comes by retransmission
rp=$(free_udp_port); fp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" --snapshot-at "$((late_first - 31))" --refresh-to "127.0.0.1:$fp" || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp refresh=127.0.0.1:$fp user=WIREBOOK" > "$T/xdp-late-early.conf"
run xdp-late-early "$T/nyse-late.pcap" "$T/xdp-late-early.conf"
if grep -q "$xdp1.*: in sequence; gaps \([1-9]\), filled \1, unrecoverable 0, messages recovered [1-9][0-9]*,.*; requests [1-9][0-9]*,.*; refreshes 1 (" "$T/xdp-late-early.out"; then ok
else bad "xdp late join, refresh before the first packet: $(grep '^recovery nyse' "$T/xdp-late-early.out")"; fi
# a server that serves no refresh (no --snapshot-at): status 9, the late join's range lost, the day goes on
rp=$(free_udp_port); fp=$(free_udp_port)
serve_xdp "$T/nyse.pcap" "$rp" || exit 1
echo "nyse xdp 127.0.0.1:$port channel=1 retrans=127.0.0.1:$rp refresh=127.0.0.1:$fp user=WIREBOOK" > "$T/xdp-norefresh.conf"
run xdp-norefresh "$T/nyse-late.pcap" "$T/xdp-norefresh.conf"
if grep -q "$xdp1.*: in sequence; gaps [1-9][0-9]*, filled [0-9]*, unrecoverable [1-9][0-9]*,.*; refused 1 (status 9: 1).*; refreshes 0" "$T/xdp-norefresh.out"; then ok
else bad "xdp refresh refused: $(grep '^recovery nyse' "$T/xdp-norefresh.out")"; fi
if grep -q '^books: checksum' "$T/xdp-norefresh.out"; then ok; else bad "xdp refresh refused: the day did not go on"; fi

echo "recovery-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
