# Late join by GLIMPSE snapshot (sourced by scripts/recovery.sh, which
# gives it $B, $T, $FEEDS, the ITCH day $T/itch-whole.pcap with its books
# $T/itch-whole.out, the Mold server's line in $T/itch.conf, and
# start_server, books and report).
#
# wirebookd starts at a join point of the day (the capture cut there, as a
# process started then sees it), with a gap-fill service (mold) and a
# snapshot service (glimpse) for Nasdaq. The first packet is past sequence
# 1, so the client takes a snapshot: wb-recoveryd --service glimpse serves
# the book after message S = join + 64, so the real-time packets buffered
# meanwhile below S are dropped and those after it applied. The venue books
# must end equal to the whole day's (the super-book's last trade and volume
# are not in a GLIMPSE snapshot, so it is not compared). Join points:
#
#   late-join-before-open  halfway between the start of system hours and
#                          the open (directory, states, pre-market orders)
#   late-join-mid-day      halfway between the open and the close
#   late-join-after-halt   wb-gen's days have no halt: one symbol is halted
#                          at 40 % of the day and resumed at 60 %
#                          (scripts/itch-pcap.py halt); the join is at 50 %,
#                          while it is halted
SNAPSHOT_LEAD=${SNAPSHOT_LEAD:-64}

# late_join NAME WHOLE-PCAP WHOLE-RUN JOIN-SEQ MOLD-CONF-LINE
late_join() {
	local name=$1 whole=$2 whole_run=$3 join=$4 mold_line=$5 at snap want got
	at=$((join + SNAPSHOT_LEAD))
	python3 scripts/itch-pcap.py cut "$whole" "$T/itch-$name.pcap" "$join" || return 1
	start_server nasdaq "" "$whole" --service glimpse --snapshot-at "$at" \
		--user WB0001 --password glimpse || return 1
	{ echo "$mold_line"; echo "nasdaq glimpse 127.0.0.1:$port user=WB0001 password=glimpse"; } \
		> "$T/itch-$name.conf"
	books "itch-$name" "$T/itch-$name.pcap" "$T/itch-$name.conf" || return 1
	snap=$(grep '^recovery nasdaq snapshot (' "$T/itch-$name.out" | tail -1)
	# The venue books only (see above).
	want=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/$whole_run.out")
	got=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/itch-$name.out")
	line=$(grep '^recovery nasdaq (' "$T/itch-$name.out" | tail -1)
	local gaps filled unrec snaps verdict
	gaps=$(sed -n 's/.*; gaps \([0-9]*\),.*/\1/p' <<< "$line")
	filled=$(sed -n 's/.*, filled \([0-9]*\),.*/\1/p' <<< "$line")
	unrec=$(sed -n 's/.*, unrecoverable \([0-9]*\),.*/\1/p' <<< "$line")
	snaps=$(sed -n 's/.*; snapshots \([0-9]*\),.*/\1/p' <<< "$snap")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then verdict=identical; else verdict=DIFFERENT; failed=1; fi
	echo "recovery itch $name gaps=$gaps filled=$filled unrecoverable=$unrec books=$verdict"
	echo "  joined at $join, snapshot after $at: snapshots ${snaps:-0}, $(sed -n 's/.*; snapshots [0-9]*, \(messages [0-9]*\).*snapshot time \(.*\)$/\1, snapshot time \2/p' <<< "$snap")"
	if [ "${snaps:-0}" -ne 1 ] || [ "${gaps:-0}" -eq 0 ] || [ "$gaps" != "$filled" ] ||
	   [ "${unrec:-1}" -ne 0 ]; then
		failed=1
	fi
}

read -r sys_s open close _ _ last < <(python3 scripts/itch-pcap.py points "$T/itch-whole.pcap")
mold_line=$(head -1 "$T/itch.conf")
late_join late-join-before-open "$T/itch-whole.pcap" itch-whole $(((sys_s + open) / 2)) "$mold_line" ||
	exit 1
late_join late-join-mid-day "$T/itch-whole.pcap" itch-whole $(((open + close) / 2)) "$mold_line" ||
	exit 1
python3 scripts/itch-pcap.py halt "$T/itch-whole.pcap" "$T/itch-halted.pcap" $((last * 4 / 10)) \
	$((last * 6 / 10)) || exit 1
read -r _ _ _ halt resume _ < <(python3 scripts/itch-pcap.py points "$T/itch-halted.pcap")
books itch-halted-whole "$T/itch-halted.pcap" || exit 1
start_server nasdaq "" "$T/itch-halted.pcap" || exit 1
late_join late-join-after-halt "$T/itch-halted.pcap" itch-halted-whole $(((halt + resume) / 2)) \
	"nasdaq mold 127.0.0.1:$port" || exit 1

# ---- UQDF: late join by the UTP Snap-Shot (utpsnap) ----------------------
# Called by scripts/recovery.sh's UQDF part, which gives the day
# $T/uqdf-whole.pcap, its whole run $T/uqdf-whole.out, the Mold servers' lines in
# $T/uqdf.conf (Nasdaq's, then UQDF's) and $uqdf_channel. wirebookd starts
# half way through the UQDF channel's day (the capture cut at its first
# packet from there; Nasdaq's ITCH is cut at the same moment and re-requested
# from its first sequence); UQDF is taken by snapshot: wb-recoveryd
# --service utpsnap serves the SIP state after UQDF message join + 64. The
# venue books, the super-book and the SIP view's state (its checksum
# without the update counts, which a snapshot does not restore) must end
# equal to the whole day's.
late_join_uqdf() {
	local name=late-join-mid-day uqdf_port last join at line snap gaps filled unrec snaps verdict
	local stream="uqdf${uqdf_channel:+/$uqdf_channel}"
	uqdf_port=$(awk '$2 == "uqdf" && $3 == "uqdf" { sub(".*:", "", $1); print $1; exit }' "$FEEDS")
	last=$(python3 scripts/itch-pcap.py last "$T/uqdf-whole.pcap" "$uqdf_port") || return 1
	join=$((last / 2))
	at=$((join + SNAPSHOT_LEAD))
	python3 scripts/itch-pcap.py cut "$T/uqdf-whole.pcap" "$T/uqdf-$name.pcap" "$join" \
		"$uqdf_port" || return 1
	start_server uqdf "$uqdf_channel" "$T/uqdf-whole.pcap" --service utpsnap --snapshot-at "$at" \
		--user WB0001 --password utpsnap || return 1
	{ cat "$T/uqdf.conf"
	  echo "uqdf utpsnap 127.0.0.1:$port${uqdf_channel:+ channel=$uqdf_channel} user=WB0001 password=utpsnap"
	} > "$T/uqdf-$name.conf"
	books "uqdf-$name" "$T/uqdf-$name.pcap" "$T/uqdf-$name.conf" || return 1
	line=$(grep "^recovery $stream (" "$T/uqdf-$name.out" | tail -1)
	snap=$(grep "^recovery $stream snapshot (" "$T/uqdf-$name.out" | tail -1)
	gaps=$(sed -n 's/.*; gaps \([0-9]*\),.*/\1/p' <<< "$line")
	filled=$(sed -n 's/.*, filled \([0-9]*\),.*/\1/p' <<< "$line")
	unrec=$(sed -n 's/.*, unrecoverable \([0-9]*\),.*/\1/p' <<< "$line")
	snaps=$(sed -n 's/.*; snapshots \([0-9]*\),.*/\1/p' <<< "$snap")
	uqdf_sums() {
		sed -n -e 's/^books: checksum venue books \([0-9a-f]*\), super-book \([0-9a-f]*\)$/\1 \2/p' \
			-e 's/^books: checksum sip-view [0-9a-f]*, sip-view state \([0-9a-f]*\)$/\1/p' "$1" |
			paste -sd' '
	}
	if [ -n "$(uqdf_sums "$T/uqdf-whole.out")" ] &&
	   [ "$(uqdf_sums "$T/uqdf-whole.out")" = "$(uqdf_sums "$T/uqdf-$name.out")" ]; then
		verdict=identical
	else
		verdict=DIFFERENT; failed=1
	fi
	echo "recovery uqdf $name gaps=$gaps filled=$filled unrecoverable=$unrec books=$verdict"
	echo "  joined at $join, snapshot after $at: snapshots ${snaps:-0}, $(sed -n 's/.*; snapshots [0-9]*, \(messages [0-9]*\).*snapshot time \(.*\)$/\1, snapshot time \2/p' <<< "$snap")"
	if [ "${snaps:-0}" -ne 1 ] || [ "${gaps:-0}" -eq 0 ] || [ "$gaps" != "$filled" ] ||
	   [ "${unrec:-1}" -ne 0 ]; then
		failed=1
	fi
}

# ---- Cboe PITCH: late join by Spin ---------------------------------------
# pitch_late_join NAME: wirebookd starts halfway between the open and the
# close of the PITCH day $T/pitch-whole.pcap (books in $T/pitch-whole.out),
# with the GRP line of $T/pitch.conf for gap fill and a Spin server for
# the unit, whose image is the book after S = join + 64 (so buffered
# packets below S are dropped and those after it applied). Called by
# scripts/recovery.sh while its GRP server runs.
pitch_late_join() {
	local name=$1 join at snap want got line gaps filled unrec snaps verdict unit
	read -r unit join < <(python3 scripts/pitch-cut.py "$T/pitch-whole.pcap" "$T/pitch-$name.pcap")
	[ -n "$join" ] || return 1
	at=$((join + SNAPSHOT_LEAD))
	start_server bzx "" "$T/pitch-whole.pcap" --service spin --unit "$unit" --snapshot-at "$at" \
		--user WB01 --password spin || return 1
	{ head -1 "$T/pitch.conf"; echo "bzx spin 127.0.0.1:$port unit=$unit user=WB01 password=spin"; } \
		> "$T/pitch-$name.conf"
	books "pitch-$name" "$T/pitch-$name.pcap" "$T/pitch-$name.conf" || return 1
	snap=$(grep "^recovery bzx unit $unit snapshot (" "$T/pitch-$name.out" | tail -1)
	want=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/pitch-whole.out")
	got=$(sed -n 's/^books: checksum venue books \([0-9a-f]*\),.*/\1/p' "$T/pitch-$name.out")
	line=$(grep '^recovery bzx (' "$T/pitch-$name.out" | tail -1)
	gaps=$(sed -n 's/.*; gaps \([0-9]*\),.*/\1/p' <<< "$line")
	filled=$(sed -n 's/.*, filled \([0-9]*\),.*/\1/p' <<< "$line")
	unrec=$(sed -n 's/.*, unrecoverable \([0-9]*\),.*/\1/p' <<< "$line")
	snaps=$(sed -n 's/.*; snapshots \([0-9]*\),.*/\1/p' <<< "$snap")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then verdict=identical; else verdict=DIFFERENT; failed=1; fi
	echo "recovery pitch $name gaps=$gaps filled=$filled unrecoverable=$unrec books=$verdict"
	echo "  joined unit $unit at $join, spin after $at: snapshots ${snaps:-0}, $(sed -n 's/.*; snapshots [0-9]*, \(messages [0-9]*, orders announced [0-9]*\).*snapshot time \(.*\)$/\1, snapshot time \2/p' <<< "$snap")"
	if [ "${snaps:-0}" -ne 1 ] || [ "${gaps:-0}" -eq 0 ] || [ "$gaps" != "$filled" ] ||
	   [ "${unrec:-1}" -ne 0 ]; then
		failed=1
	fi
}
