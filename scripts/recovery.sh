#!/usr/bin/env bash
# Gap recovery end to end (make recovery; the short form in make check).
#
# For each feed and loss rate: wb-gen writes a day twice from one seed, once
# whole and once with --loss PCT on both lines (bursts included); wb-recoveryd
# replays the whole day on loopback; wirebookd builds the books from the
# lossy day with --recovery and from the whole day without, and the books'
# checksums are compared. One line per feed and rate:
#
#   recovery itch loss=1% gaps=204 filled=204 unrecoverable=0 books=identical
#
# then the fill times. ITCH and UQDF use the MoldUDP64 re-request, PITCH
# the Cboe Gap Request Proxy, XDP the NYSE Request Server (Retransmission
# Requests); ITCH late joins also a GLIMPSE snapshot, UQDF a UTP Snap-Shot
# (scripts/recovery-late-join.sh). Feeds whose recovery is not built yet say so.
# Fails when a recovered day's books differ, a gap stayed unrecovered, or
# the loss made no gap at all (nothing was tested).
#
#   scripts/recovery.sh [--short]      B=build by default
set -u
B=${B:-build}
FEEDS=${FEEDS:-feeds.conf}
short=0
[ "${1:-}" = "--short" ] && short=1
if [ $short -eq 1 ]; then
	RATES=${RATES:-1}
	MESSAGES=${MESSAGES:-100000}
else
	RATES=${RATES:-"0.1 1 5"}
	MESSAGES=${MESSAGES:-400000}
fi
SYMBOLS=${SYMBOLS:-500}
SEED=${SEED:-11}
T=$(mktemp -d /tmp/wb-recovery.XXXXXX)
servers=()
cleanup() {
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
failed=0

for f in wb-gen wb-recoveryd wirebookd wb-dump; do
	[ -x "$B/$f" ] || { echo "recovery: $B/$f is missing (make all)" >&2; exit 1; }
done

# free_udp_port: a UDP port free on loopback now (for the gap responses).
free_udp_port() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server VENUE CHANNEL PCAP [ARGS...]: starts wb-recoveryd, sets $port.
start_server() {
	local venue=$1 channel=$2 pcap=$3 log="$T/server.$1.$$.$RANDOM"
	local args=(--pcap "$pcap" --venue "$venue" --listen 127.0.0.1:0 --feeds "$FEEDS" "${@:4}")
	[ -n "$channel" ] && args+=(--channel "$channel")
	"$B/wb-recoveryd" "${args[@]}" 2> "$log" &
	servers+=($!)
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*serving .* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
		[ -n "$port" ] && return 0
		kill -0 "${servers[-1]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "recovery: wb-recoveryd did not start: $(cat "$log")" >&2
	return 1
}

stop_servers() {
	for p in "${servers[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	servers=()
}

# books RUN-NAME PCAP [RECOVERY-CONF]: wirebookd's final output in $T/RUN-NAME.out
books() {
	local name=$1 pcap=$2 conf=${3:-}
	local args=(--pcap "$pcap" --feeds "$FEEDS" --shm "wb-recovery-$$-$name" --force --no-pin
		    --exit-at-eof)
	[ -n "$conf" ] && args+=(--recovery "$conf")
	nice "$B/wirebookd" "${args[@]}" > "$T/$name.out" 2> "$T/$name.err" ||
		{ echo "recovery: wirebookd failed: $(tail -3 "$T/$name.err")" >&2; return 1; }
}

checksum() { grep '^books: checksum' "$T/$1.out"; }

venue_checksum() { grep '^books: checksum venue books' "$T/$1.out" | sed 's/, super-book.*//'; }

# cut_second_half SRC DST: the second half of a capture's records, as a
# process started at noon sees the day. Prints the first sequence of each
# destination port in it that looks like an XDP packet (PORT:SEQ ...).
cut_second_half() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
recs, off = [], 24
while off + 16 <= len(src):
    n = struct.unpack_from("<I", src, off + 8)[0]
    recs.append((off, 16 + n))
    off += 16 + n
first = {}
with open(sys.argv[2], "wb") as out:
    out.write(src[:24])
    for o, n in recs[len(recs) // 2:]:
        out.write(src[o:o + n])
        frame = src[o + 16:o + n]
        if len(frame) >= 58:
            port, p = struct.unpack(">H", frame[36:38])[0], frame[42:]
            if p[3] and port not in first:
                first[port] = struct.unpack_from("<I", p, 4)[0]
print(" ".join("%d:%d" % kv for kv in first.items()))
PY
}

# report FEED RATE RUN STREAM-PREFIX COMPARE(yes|venue): the books (every 'books:
# checksum' line: venue books, Super-Book, SIP view) against RUN-whole's;
# venue: the venue books' alone
report() {
	local feed=$1 rate=$2 run=$3 prefix=$4 compare=$5 line gaps filled unrec verdict what
	line=$(grep "^recovery $prefix (" "$T/$run.out" | tail -1)
	if [ -z "$line" ]; then
		echo "recovery $feed loss=$rate% no recovery line from wirebookd"; failed=1; return
	fi
	gaps=$(sed -n 's/.*; gaps \([0-9]*\),.*/\1/p' <<< "$line")
	filled=$(sed -n 's/.*, filled \([0-9]*\),.*/\1/p' <<< "$line")
	unrec=$(sed -n 's/.*, unrecoverable \([0-9]*\),.*/\1/p' <<< "$line")
	if [ "$compare" = venue ]; then
		if [ "$(venue_checksum "$run")" = "$(venue_checksum "$run-whole")" ]; then
			verdict="identical (venue books)"
		else
			verdict=DIFFERENT; failed=1
		fi
	elif [ "$(checksum "$run")" = "$(checksum "$run-whole")" ]; then
		verdict=identical
	else
		verdict=DIFFERENT; failed=1
	fi
	case $rate in
	*[!0-9.]*) what=$rate ;;	# a scenario, not a loss rate
	*) what="loss=$rate%" ;;
	esac
	echo "recovery $feed $what gaps=$gaps filled=$filled unrecoverable=$unrec books=$verdict"
	echo "  fill time: $(sed -n 's/.*fill time \(.*\)$/\1/p' <<< "$line"); $(sed -n 's/.*\(requests [0-9]*, retries [0-9]*\).*/\1/p' <<< "$line")"
	if [ "${gaps:-0}" -eq 0 ] || [ "$gaps" != "$filled" ] || [ "${unrec:-1}" -ne 0 ]; then
		failed=1
	fi
}

# ITCH (Nasdaq TotalView over MoldUDP64): MoldUDP64 re-request.
gen=(-q -p day -n "$MESSAGES" --symbols "$SYMBOLS" -s "$SEED" --ab --feeds "$FEEDS")
"$B/wb-gen" "${gen[@]}" --venues nasdaq -o "$T/itch-whole.pcap" || exit 1
books itch-whole "$T/itch-whole.pcap" || exit 1
start_server nasdaq "" "$T/itch-whole.pcap" || exit 1
echo "nasdaq mold 127.0.0.1:$port" > "$T/itch.conf"
for rate in $RATES; do
	"$B/wb-gen" "${gen[@]}" --venues nasdaq --loss "$rate" -o "$T/itch-$rate.pcap" || exit 1
	books "itch-$rate" "$T/itch-$rate.pcap" "$T/itch.conf" || exit 1
	cp "$T/itch-whole.out" "$T/itch-$rate-whole.out"
	report itch "$rate" "itch-$rate" nasdaq yes
done

# Late join: wirebookd starts at the middle of the day (the capture's first
# half cut off, as a process started at noon sees it): the stream's first
# packet is far past sequence 1, and the re-request fetches the morning.
cut_second_half "$T/itch-whole.pcap" "$T/itch-late.pcap" > /dev/null
books itch-late "$T/itch-late.pcap" "$T/itch.conf" || exit 1
cp "$T/itch-whole.out" "$T/itch-late-whole.out"
report itch late-join-at-half itch-late nasdaq yes
# Late join by GLIMPSE snapshot at three points of the day.
. scripts/recovery-late-join.sh
stop_servers

# Cboe PITCH (BZX): the Gap Request Proxy, a TCP session with a login; the
# gap responses come over UDP to the port the client binds.
gen=(-q -p day -n "$MESSAGES" --symbols "$SYMBOLS" -s "$SEED" --ab --feeds "$FEEDS")
"$B/wb-gen" "${gen[@]}" --venues bzx -o "$T/pitch-whole.pcap" || exit 1
books pitch-whole "$T/pitch-whole.pcap" || exit 1
gap_port=$(free_udp_port)
start_server bzx "" "$T/pitch-whole.pcap" --service grp --reply-to "127.0.0.1:$gap_port" \
	--user WB01 --password recovery || exit 1
echo "bzx grp 127.0.0.1:$port gap=127.0.0.1:$gap_port user=WB01 password=recovery" > "$T/pitch.conf"
for rate in $RATES; do
	"$B/wb-gen" "${gen[@]}" --venues bzx --loss "$rate" -o "$T/pitch-$rate.pcap" || exit 1
	books "pitch-$rate" "$T/pitch-$rate.pcap" "$T/pitch.conf" || exit 1
	cp "$T/pitch-whole.out" "$T/pitch-$rate-whole.out"
	report pitch "$rate" "pitch-$rate" bzx yes
done
# Late join by Spin (scripts/recovery-late-join.sh).
pitch_late_join late-join-mid-day || exit 1
stop_servers

# NYSE XDP: a Request Server per channel (TCP, Retransmission Requests)
# whose retransmissions come over UDP to the port the client binds. NYSE
# has three channels in the feed map, the last with a mid-day failover (its
# sequence starts over). A recovered channel's first messages come later
# than its neighbours', so its symbols get other instrument ids than in the
# whole run: the checksums hash by ticker, not id (lib/book/checksum.h).
gen=(-q -p day -n "$MESSAGES" --symbols "$SYMBOLS" -s "$SEED" --ab --feeds "$FEEDS")
"$B/wb-gen" "${gen[@]}" --venues nyse -o "$T/xdp-whole.pcap" || exit 1
books xdp-whole "$T/xdp-whole.pcap" || exit 1
: > "$T/xdp.conf"
xdp_channels=$(awk '$2 == "xdp" && $3 == "nyse" { for (i = 5; i <= NF; i++) if ($i ~ /^channel=/) { sub("channel=", "", $i); print $i } }' "$FEEDS" | sort -un)
for ch in $xdp_channels; do
	retrans_port=$(free_udp_port)
	start_server nyse "$ch" "$T/xdp-whole.pcap" --service xdp --reply-to "127.0.0.1:$retrans_port" \
		--source-id WIREBOOK || exit 1
	echo "nyse xdp 127.0.0.1:$port channel=$ch retrans=127.0.0.1:$retrans_port user=WIREBOOK" >> "$T/xdp.conf"
done
for rate in $RATES; do
	"$B/wb-gen" "${gen[@]}" --venues nyse --loss "$rate" -o "$T/xdp-$rate.pcap" || exit 1
	books "xdp-$rate" "$T/xdp-$rate.pcap" "$T/xdp.conf" || exit 1
	cp "$T/xdp-whole.out" "$T/xdp-$rate-whole.out"
	# One line for the venue: the channels' counts summed.
	grep "^recovery nyse/" "$T/xdp-$rate.out" | awk '
		{ for (i = 1; i <= NF; i++) {
			if ($i == "gaps") g += $(i + 1); if ($i == "filled") f += $(i + 1)
			if ($i == "unrecoverable") u += $(i + 1); if ($i == "requests") r += $(i + 1)
			if ($i == "retries") t += $(i + 1) } }
		END { printf "recovery nyse (xdp, all channels): in sequence; gaps %d, filled %d, unrecoverable %d, messages; requests %d, retries %d; fill time see the channels\n", g, f, u, r, t }' \
		>> "$T/xdp-$rate.out"
	report xdp "$rate" "xdp-$rate" nyse yes
	sed -n 's/^recovery \(nyse\/[0-9]*\) .*\(fill time .*\)$/    \1 \2/p' "$T/xdp-$rate.out"
done
stop_servers

# Late join at mid-day by Refresh: wirebookd starts on the second half of the
# day; each channel's server refreshes its book as of the sequence before
# the channel's first packet there (where a live server would be when asked).
# The venue books must equal the whole day's; the trades of the morning (last
# trade, volume) are in no refresh, so the super-book is not compared.
: > "$T/xdp-late.conf"
xdp_first=$(cut_second_half "$T/xdp-whole.pcap" "$T/xdp-late.pcap")
for ch in $xdp_channels; do
	ch_port=$(awk -v ch="channel=$ch" '$2 == "xdp" && $3 == "nyse" && $4 == "A" && $5 == ch { split($1, a, ":"); print a[2] }' "$FEEDS")
	first=$(tr ' ' '\n' <<< "$xdp_first" | sed -n "s/^$ch_port://p")
	retrans_port=$(free_udp_port)
	refresh_port=$(free_udp_port)
	start_server nyse "$ch" "$T/xdp-whole.pcap" --service xdp --reply-to "127.0.0.1:$retrans_port" \
		--source-id WIREBOOK --snapshot-at "$((first - 1))" --refresh-to "127.0.0.1:$refresh_port" || exit 1
	echo "nyse xdp 127.0.0.1:$port channel=$ch retrans=127.0.0.1:$retrans_port refresh=127.0.0.1:$refresh_port user=WIREBOOK" >> "$T/xdp-late.conf"
done
books xdp-late "$T/xdp-late.pcap" "$T/xdp-late.conf" || exit 1
cp "$T/xdp-whole.out" "$T/xdp-late-whole.out"
grep "^recovery nyse/" "$T/xdp-late.out" | awk '
	{ for (i = 1; i <= NF; i++) {
		if ($i == "gaps") g += $(i + 1); if ($i == "filled") f += $(i + 1)
		if ($i == "unrecoverable") u += $(i + 1); if ($i == "requests") r += $(i + 1)
		if ($i == "retries") t += $(i + 1); if ($i == "refreshes") s += $(i + 1) } }
	END { printf "recovery nyse (xdp, all channels): in sequence; gaps %d, filled %d, unrecoverable %d, messages; requests %d, retries %d; fill time see the channels (%d refreshes)\n", g, f, u, r, t, s }' \
	>> "$T/xdp-late.out"
report xdp late-join-at-half xdp-late nyse venue
sed -n 's/^recovery \(nyse\/[0-9]*\) .*\(refreshes .*\)$/    \1 \2/p' "$T/xdp-late.out"
if ! grep -q '^recovery nyse .*(3 refreshes)' "$T/xdp-late.out"; then
	echo "recovery xdp late-join-at-half: not every channel joined by its refresh"
	failed=1
fi
stop_servers

# UQDF (MoldUDP64): the same re-request. Nasdaq trades, UQDF quotes it; both
# lose packets and both are recovered, and the books, the SIP view's
# included (its checksum), must equal the whole day's. With two streams a
# symbol's instrument id follows which stream named it first, which
# recovery reorders; the checksums hash by ticker, not id.
gen=(-q -p day -n "$((MESSAGES / 2))" --symbols "$SYMBOLS" -s "$SEED" --ab --feeds "$FEEDS")
"$B/wb-gen" "${gen[@]}" --venues nasdaq,uqdf -o "$T/uqdf-whole.pcap" || exit 1
books uqdf-whole "$T/uqdf-whole.pcap" || exit 1
start_server nasdaq "" "$T/uqdf-whole.pcap" || exit 1
echo "nasdaq mold 127.0.0.1:$port" > "$T/uqdf.conf"
uqdf_channel=$(awk '$2 == "uqdf" && $3 == "uqdf" { for (i = 5; i <= NF; i++) if ($i ~ /^channel=/) { sub("channel=", "", $i); print $i; exit } }' "$FEEDS")
start_server uqdf "$uqdf_channel" "$T/uqdf-whole.pcap" || exit 1
echo "uqdf mold 127.0.0.1:$port${uqdf_channel:+ channel=$uqdf_channel}" >> "$T/uqdf.conf"
for rate in $RATES; do
	"$B/wb-gen" "${gen[@]}" --venues nasdaq,uqdf --loss "$rate" -o "$T/uqdf-$rate.pcap" || exit 1
	books "uqdf-$rate" "$T/uqdf-$rate.pcap" "$T/uqdf.conf" || exit 1
	cp "$T/uqdf-whole.out" "$T/uqdf-$rate-whole.out"
	report uqdf "$rate" "uqdf-$rate" "uqdf${uqdf_channel:+/$uqdf_channel}" yes
	# The Nasdaq stream beside it must have come back whole too.
	if ! grep -q "^recovery nasdaq .* unrecoverable 0," "$T/uqdf-$rate.out"; then
		echo "recovery uqdf loss=$rate%: the Nasdaq stream beside it was not recovered"
		failed=1
	fi
done
late_join_uqdf || exit 1	# scripts/recovery-late-join.sh
stop_servers

[ $failed -eq 0 ] || { echo "recovery: FAILED" >&2; exit 1; }
