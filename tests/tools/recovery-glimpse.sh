#!/usr/bin/env bash
# Late join by GLIMPSE snapshot from the command line (make recovery-short):
# wb-recoveryd --service glimpse's usage and refusals, glimpse lines of
# recovery.conf, and wirebookd joining half way through the day against a
# GLIMPSE server that refuses the login (retried, the stream stale, the
# other venue not held up, given up in the end), that drops the session
# half way through the snapshot or falls silent (aborted, retried, the
# books whole in the end).
. "$(dirname "$0")/recovery-lib.sh" glimpse

# serve PCAP [ARGS...]: wb-recoveryd for nasdaq on a free port, sets $port
serve() {
	start_recoveryd --pcap "$1" --venue nasdaq --feeds "$FEEDS" "${@:2}"
}

# run NAME PCAP CONF: wirebookd's books, output in $T/NAME.out
run() {
	timeout 60 "$WBD" --pcap "$2" --feeds "$FEEDS" --shm "wb-rec-gl-$$-$1" --force --no-pin \
		--exit-at-eof --recovery "$3" > "$T/$1.out" 2> "$T/$1.err" ||
		bad "wirebookd $1: exit $?: $(tail -2 "$T/$1.err")"
}
vsum() { sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/$1.out"; }

# ---- usage and refusals
expect_exit "glimpse for a PITCH venue" 2 "--service glimpse serves ITCH only" \
	$SRV --service glimpse --pcap x --venue bzx --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "--snapshot-at without glimpse" 2 "are for --service glimpse" \
	$SRV --pcap x --venue nasdaq --listen 127.0.0.1:0 --snapshot-at 5
expect_exit "--hangup-after and --stall-after" 2 "not both" \
	$SRV --service glimpse --pcap x --venue nasdaq --listen 127.0.0.1:0 --hangup-after 1 --stall-after 1
expect_exit "grp user of 6 characters" 2 "at most 4 characters for grp" \
	$SRV --service grp --pcap x --venue bzx --listen 127.0.0.1:0 --reply-to 127.0.0.1:9 --user WB0001

"$B/wb-gen" -q -n 30000 --symbols 50 -s 3 --ab --venues nasdaq,bzx --feeds $FEEDS -o "$T/day.pcap"
read -r _ open close _ _ _ < <(python3 scripts/itch-pcap.py points "$T/day.pcap")
join=$(((open + close) / 2))
python3 scripts/itch-pcap.py cut "$T/day.pcap" "$T/late.pcap" "$join"
expect_exit "--snapshot-at past the capture" 1 "the capture ends at" \
	$SRV --service glimpse --pcap "$T/day.pcap" --venue nasdaq --listen 127.0.0.1:0 --feeds $FEEDS \
	--snapshot-at 99999999

for c in "bzx glimpse 127.0.0.1:1|which a glimpse service cannot serve" \
	 "nasdaq glimpse 127.0.0.1:1 gap=127.0.0.1:2|only a grp service takes gap=" \
	 "nasdaq glimpse 127.0.0.1:1 max-gap=x|not a number" \
	 "nasdaq glimpse 127.0.0.1:1
nasdaq glimpse 127.0.0.1:2|a second snapshot service"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 2 "${c#*|}" \
		$WBD --pcap "$T/late.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done

"$WBD" --pcap "$T/day.pcap" --feeds "$FEEDS" --shm "wb-rec-gl-$$-whole" --force --no-pin --exit-at-eof \
	> "$T/whole.out" 2> "$T/whole.err" || bad "the whole day's run failed"
serve "$T/day.pcap" || exit 1
mold="nasdaq mold 127.0.0.1:$port"

# ---- the snapshot answered: the venue books of the whole day
serve "$T/day.pcap" --service glimpse --snapshot-at $((join + 100)) --user WB0001 --password gl || exit 1
printf '%s\nnasdaq glimpse 127.0.0.1:%s user=WB0001 password=gl\n' "$mold" "$port" > "$T/good.conf"
run good "$T/late.pcap" "$T/good.conf"
if grep -q '^recovery nasdaq snapshot (glimpse .*; snapshots 1, messages [1-9]' "$T/good.out"; then ok
else bad "no snapshot taken: $(grep '^recovery' "$T/good.out")"; fi
[ -n "$(vsum good)" ] && [ "$(vsum good)" = "$(vsum whole)" ] && ok ||
	bad "late join by snapshot: venue books $(vsum good), the whole day's $(vsum whole)"

# ---- dropped half way, or silent: aborted, retried, whole in the end
for mode in "--hangup-after 500|hangups 1" "--stall-after 500|stalls 1"; do
	serve "$T/day.pcap" --service glimpse --snapshot-at $((join + 100)) ${mode%|*} || exit 1
	printf '%s\nnasdaq glimpse 127.0.0.1:%s timeout=300\n' "$mold" "$port" > "$T/broken.conf"
	run broken "$T/late.pcap" "$T/broken.conf"
	if grep -q "^recovery nasdaq snapshot (.*; snapshots 1, messages [0-9]*, aborted 1,.*${mode#*|}," \
		"$T/broken.out"; then ok
	else bad "${mode%|*}: $(grep '^recovery nasdaq snapshot' "$T/broken.out")"; fi
	[ "$(vsum broken)" = "$(vsum whole)" ] && ok || bad "${mode%|*}: books differ from the whole day's"
done

# ---- a refused login: retried with backoff, Nasdaq alone RECOVERING (BZX
# goes on), the snapshot given up in the end and the day goes on
serve "$T/day.pcap" --service glimpse --user WB0001 --password right || exit 1
printf 'nasdaq glimpse 127.0.0.1:%s user=WB0001 password=wrong retries=6\n' "$port" > "$T/refused.conf"
"$WBD" --pcap "$T/late.pcap" --feeds "$FEEDS" --shm "wb-rec-gl-$$-refused" --force --no-pin \
	--exit-at-eof --recovery "$T/refused.conf" > "$T/refused.out" 2> "$T/refused.err" &
wbd=$!
watch_recovering "wb-rec-gl-$$-refused" "$T/refused.book"
timeout 30 tail --pid=$wbd -f /dev/null
wait $wbd || bad "wirebookd with a refused login: exit $?"
# Nasdaq is venue 1 (enum wb_venue): bit 1 alone.
[ "$state" = "RECOVERING: venues 0x2" ] && ok || bad "refused login: not Nasdaq alone recovering: '$state'"
if grep -q '^recovery nasdaq snapshot (.*; snapshots 0,.* given up 1;.* logins refused [2-9]' "$T/refused.out"; then ok
else bad "refused login: $(grep '^recovery nasdaq snapshot' "$T/refused.out")"; fi
grep -q "refused the login 'WB0001' (reason A)" "$T/refused.err" && ok || bad "refused login not said on stderr"
# BZX decoded its half of the day meanwhile.
awk '$2 == "bzx" && $6 > 0 { found = 1 } END { exit !found }' "$T/refused.out" && ok ||
	bad "BZX decoded nothing while Nasdaq waited: $(grep bzx "$T/refused.out")"

echo "recovery-glimpse-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
