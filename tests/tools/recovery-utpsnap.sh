#!/usr/bin/env bash
# Late join by the UTP Snap-Shot from the command line (make recovery-short):
# wb-recoveryd --service utpsnap's refusals, utpsnap lines of recovery.conf,
# and wirebookd joining a UQDF channel half way through the day against a
# Snap-Shot server that refuses the login (retried, given up in the end,
# the day goes on, Nasdaq beside it not held up) or drops the session half
# way through the snapshot (aborted, retried, the SIP view whole in the end).
. "$(dirname "$0")/recovery-lib.sh" utpsnap

# serve SERVICE PCAP [ARGS...]: wb-recoveryd for uqdf on a free port, sets $port
serve() {
	start_recoveryd --service "$1" --pcap "$2" --venue uqdf --channel 1 --feeds "$FEEDS" "${@:3}"
}

# run NAME PCAP CONF: wirebookd's books, output in $T/NAME.out
run() {
	timeout 60 "$WBD" --pcap "$2" --feeds "$FEEDS" --shm "wb-rec-utp-$$-$1" --force --no-pin \
		--exit-at-eof ${3:+--recovery "$3"} > "$T/$1.out" 2> "$T/$1.err" ||
		bad "wirebookd $1: exit $?: $(tail -2 "$T/$1.err")"
}
sip_state() { sed -n 's/^books: checksum sip-view [0-9a-f]*, sip-view state \([0-9a-f]*\)$/\1/p' "$T/$1.out"; }

# ---- usage and refusals
expect_exit "utpsnap for an ITCH venue" 2 "--service utpsnap serves UQDF only" \
	$SRV --service utpsnap --pcap x --venue nasdaq --listen 127.0.0.1:0 --feeds $FEEDS
expect_exit "utpsnap user of 7 characters" 2 "at most 6 characters" \
	$SRV --service utpsnap --pcap x --venue uqdf --listen 127.0.0.1:0 --user WB00001
"$SRV" --help | grep -q -- "--service utpsnap" && ok || bad "--help does not name --service utpsnap"

"$B/wb-gen" -q -n 20000 --symbols 50 -s 5 --ab --venues nasdaq,uqdf --feeds $FEEDS -o "$T/day.pcap"
uqdf_port=$(awk '$2 == "uqdf" && $3 == "uqdf" { sub(".*:", "", $1); print $1; exit }' "$FEEDS")
join=$(($(python3 scripts/itch-pcap.py last "$T/day.pcap" "$uqdf_port") / 2))
python3 scripts/itch-pcap.py cut "$T/day.pcap" "$T/late.pcap" "$join" "$uqdf_port"

for c in "nasdaq utpsnap 127.0.0.1:1|which a utpsnap service cannot serve" \
	 "uqdf utpsnap 127.0.0.1:1 channel=1 user=TOOLONG|at most 6" \
	 "uqdf utpsnap 127.0.0.1:1 channel=1
uqdf glimpse 127.0.0.1:2 channel=1|a second snapshot service"; do
	printf '%s\n' "${c%|*}" > "$T/recovery.conf"
	expect_exit "recovery.conf: ${c%|*}" 2 "${c#*|}" \
		$WBD --pcap "$T/late.pcap" --feeds $FEEDS --recovery "$T/recovery.conf" --no-pin --exit-at-eof
done

run whole "$T/day.pcap"

# ---- a refused login: retried with backoff, given up in the end, the day
# goes on; Nasdaq (no recovery here) decodes its half meanwhile
serve utpsnap "$T/day.pcap" --snapshot-at $((join + 64)) --user WB0001 --password right -v || exit 1
printf 'uqdf utpsnap 127.0.0.1:%s channel=1 user=WB0001 password=wrong retries=3\n' "$port" \
	> "$T/refused.conf"
run refused "$T/late.pcap" "$T/refused.conf"
if grep -q '^recovery uqdf/1 snapshot (utpsnap .*; snapshots 0,.* given up 1;.* logins refused [2-9]' \
	"$T/refused.out"; then ok
else bad "refused login: $(grep '^recovery uqdf/1 snapshot' "$T/refused.out")"; fi
grep -q "utpsnap 127.0.0.1:$port refused the login 'WB0001' (reason A)" "$T/refused.err" && ok ||
	bad "refused login not said on stderr: $(head -3 "$T/refused.err")"
awk '$2 == "nasdaq" && $6 > 0 { found = 1 } END { exit !found }' "$T/refused.out" && ok ||
	bad "Nasdaq decoded nothing while UQDF waited: $(grep nasdaq "$T/refused.out")"

# ---- dropped half way: aborted, retried, the SIP view whole in the end (the
# hole the second snapshot leaves behind the real time decoded after the
# abort is the gap fill's, as for glimpse)
serve mold "$T/day.pcap" || exit 1
echo "uqdf mold 127.0.0.1:$port channel=1" > "$T/broken.conf"
serve utpsnap "$T/day.pcap" --snapshot-at $((join + 64)) --hangup-after 40 || exit 1
printf 'uqdf utpsnap 127.0.0.1:%s channel=1 timeout=300\n' "$port" >> "$T/broken.conf"
run broken "$T/late.pcap" "$T/broken.conf"
if grep -q '^recovery uqdf/1 snapshot (.*; snapshots 1, messages [0-9]*, aborted 1,.*hangups 1,' \
	"$T/broken.out"; then ok
else bad "--hangup-after: $(grep '^recovery uqdf/1 snapshot' "$T/broken.out")"; fi
[ -n "$(sip_state broken)" ] && [ "$(sip_state broken)" = "$(sip_state whole)" ] && ok ||
	bad "--hangup-after: SIP view state $(sip_state broken), the whole day's $(sip_state whole)"

echo "recovery-utpsnap-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
