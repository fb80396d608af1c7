#!/usr/bin/env bash
# Command-line checks of wb-dump and wb-gen (make tools-test, part of make
# check): the real captures print the values of the spec, bad inputs give a
# clear error and a non-zero exit, the generator is deterministic, and its
# pcap, BinaryFILE, gzip and A/B outputs all decode to the same events.
set -u
B=${B:-build}
DUMP=$B/wb-dump
GEN=$B/wb-gen
P=pcaps/itch50
T=$(mktemp -d /tmp/wb-tools-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_line DESCRIPTION FILE TEXT: FILE has a line containing TEXT.
expect_line() {
	if grep -qF -- "$3" "$2"; then ok; else bad "$1: no line with '$3'"; sed 's/^/    /' "$2" | head -5; fi
}

# expect_exit DESCRIPTION CODE STDERR-TEXT CMD...
expect_exit() {
	local what=$1 code=$2 text=$3; shift 3
	"$@" > "$T/out" 2> "$T/err"
	local rc=$?
	if [ $rc -ne "$code" ]; then bad "$what: exit $rc, expected $code"; return; fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$T/err"; then
		bad "$what: stderr lacks '$text': $(head -c 300 "$T/err")"; return
	fi
	ok
}

# ---- help and usage
expect_exit "wb-dump --help" 0 "" $DUMP --help
expect_exit "wb-gen --help" 0 "" $GEN --help
expect_exit "wb-dump without a file" 2 "no capture file" $DUMP
expect_exit "wb-gen without -o" 2 "no output file" $GEN
expect_exit "wb-gen unknown profile" 2 "unknown profile" $GEN -p week -o "$T/x.pcap"
expect_exit "wb-gen packet faults in a BinaryFILE" 2 "need --format pcap" $GEN --gap-every 5 -o "$T/x.itch.gz"

# ---- bad inputs
expect_exit "missing capture" 1 "No such file or directory" $DUMP "$T/missing.pcap"
echo "just text, not a capture at all, long enough for a pcap header" > "$T/text.pcap"
expect_exit "non-pcap capture" 1 "not a readable pcap" $DUMP "$T/text.pcap"
expect_exit "directory as capture" 1 "is a directory" $DUMP "$T"
: > "$T/empty.pcap"
expect_exit "empty capture" 1 "empty.pcap" $DUMP "$T/empty.pcap"
head -c 100 $P/Multiple.Packets.pcap > "$T/cut.pcap"
expect_exit "capture cut inside a record" 1 "cut.pcap" $DUMP "$T/cut.pcap"
expect_exit "missing BinaryFILE" 1 "No such file or directory" $DUMP --itch-file "$T/missing.itch"
chmod 000 "$T/text.pcap"
if [ "$(id -u)" -ne 0 ]; then
	expect_exit "unreadable capture" 1 "Permission denied" $DUMP "$T/text.pcap"
fi
expect_exit "bad --symbols" 2 "not a ticker" $DUMP --symbols 'AAPL,TOOLONGTICKER' $P/OrderExecutedMessage.pcap
# Issue 23.8: a bad feed map is a usage error, named with its line.
printf '233.54.12.111 itch nasdaq A\n' > "$T/bad.conf"
expect_exit "bad feeds.conf" 2 "bad.conf:1:" $DUMP --feeds "$T/bad.conf" $P/OrderExecutedMessage.pcap
expect_exit "wb-gen: bad feeds.conf" 2 "bad.conf:1:" $GEN --feeds "$T/bad.conf" -o "$T/x.pcap"
# Issue 23.5: a capture given as a BinaryFILE is refused, naming the option to use.
expect_exit "pcap to --itch-file" 2 "--pcap" $DUMP --itch-file $P/OrderExecutedMessage.pcap
printf '\x0a\x0d\x0d\x0a\x1c\x00\x00\x00\x4d\x3c\x2b\x1a' > "$T/ng.pcapng"
expect_exit "pcapng to --itch-file" 2 "pcapng capture, not a Nasdaq BinaryFILE" $DUMP --itch-file "$T/ng.pcapng"
# Issue 23.8: an input that gives nothing warns and fails.
: > "$T/empty.itch"
expect_exit "empty BinaryFILE" 1 "holds no message" $DUMP --itch-file "$T/empty.itch"
head -c 24 $P/OrderExecutedMessage.pcap > "$T/header.pcap"
expect_exit "capture of a header alone" 1 "holds no frame" $DUMP "$T/header.pcap"
# Issue 23.9: empty and contradictory values, stray arguments.
expect_exit "empty --symbols" 2 "--symbols ''" $DUMP --symbols '' $P/OrderExecutedMessage.pcap
expect_exit "--symbols of empty items" 2 "an empty item" $DUMP --symbols 'AAPL,,MSFT' $P/OrderExecutedMessage.pcap
expect_exit "a directory as feeds.conf" 2 "is a directory, not a feed map" $DUMP --feeds "$T" $P/OrderExecutedMessage.pcap
expect_exit "a stray argument" 2 "unexpected argument 'extra'" $DUMP $P/OrderExecutedMessage.pcap extra
expect_exit "a stray argument after --itch-file" 2 "unexpected argument 'extra'" $DUMP --itch-file "$T/empty.itch" extra
expect_exit "wb-gen --until before the session" 2 "before the demo session starts (09:29:46)" $GEN --until 03:00:00 -o "$T/x.pcap"
expect_exit "wb-gen --pitch with --venues" 2 "--pitch and --venues nasdaq,cqs: give one" $GEN --pitch --venues nasdaq,cqs -o "$T/x.pcap"
expect_exit "wb-gen --venues with --pitch" 2 "give one" $GEN --venues nasdaq,cqs --pitch -o "$T/x.pcap"
# Issue 23.6: every count is range-checked before memory is taken.
expect_exit "wb-gen -n 99999999999999" 2 "--messages '99999999999999': expected a whole number from 1 to 100000000" $GEN -n 99999999999999 -o "$T/x.pcap"
expect_exit "wb-gen --messages 0" 2 "--messages '0'" $GEN --messages 0 -o "$T/x.pcap"
expect_exit "wb-gen --symbols 65535" 2 "--symbols '65535': expected a whole number from 1 to 65534" $GEN --symbols 65535 -o "$T/x.pcap"
expect_exit "wb-gen --seed -1" 2 "--seed '-1'" $GEN --seed -1 -o "$T/x.pcap"
expect_exit "wb-gen --gap-every 2^32" 2 "--gap-every '4294967296': expected a whole number from 0 to 4294967295" $GEN --gap-every 4294967296 -o "$T/x.pcap"
expect_exit "wb-gen --dup-every 1" 2 "--dup-every must be 0 (never) or 2.." $GEN --dup-every 1 -o "$T/x.pcap"
expect_exit "wb-gen --max-payload 99999" 2 "--max-payload '99999': expected a whole number from 0 to" $GEN --max-payload 99999 -o "$T/x.pcap"

# Issue 23.3: Nasdaq's file names give the BinaryFILE's trading day.
$GEN -q -s 42 -f itch-file -o "$T/01302019.NASDAQ_ITCH50"
expect_exit "BinaryFILE named MMDDYYYY" 0 "trading day 2019-01-30, from the file's name" $DUMP --itch-file "$T/01302019.NASDAQ_ITCH50"
expect_exit "a date of no calendar" 2 "--date '2026-02-30': expected a day of the calendar" $DUMP --date 2026-02-30 --itch-file "$T/01302019.NASDAQ_ITCH50"

# ---- the real captures (pcaps/itch50), values from the spec
$DUMP $P/AddOrderNoMpidAttributionMessage.pcap > "$T/add.txt"
expect_line "AddOrder event" "$T/add.txt" "14757721 09:29:59.999894278 nasdaq/0 i=1 ADD ref=23508286 B 1600 @ 87.39"
expect_line "AddOrder symbol" "$T/add.txt" "SYMBOL IVOO key=5528 lot=100"
$DUMP --raw $P/AddOrderNoMpidAttributionMessage.pcap > "$T/add.raw"
expect_line "AddOrder raw" "$T/add.raw" "14757721 09:29:59.999894278 A locate=5528 track=0 ref=23508286 B 1600 IVOO @ 87.39"
$DUMP --raw $P/OrderExecutedMessage.pcap > "$T/exec.raw"
expect_line "OrderExecuted raw" "$T/exec.raw" "09:29:59.999934561 E locate=2345 track=2 ref=23499418 executed=25 match=255547"
for pair in OrderDeleteMessage:D OrderReplaceMessage:U StockTradingActionMessage:H \
	    NetOrderImbalanceIndicatorMessage:I MarketParticipantPositionMessage:L; do
	f=${pair%%:*} t=${pair##*:}
	$DUMP --raw $P/$f.pcap > "$T/$f.raw"
	expect_line "$f raw" "$T/$f.raw" " $t locate="
done
$DUMP $P/StockTradingActionMessage.pcap > "$T/h.txt"
expect_line "StockTradingAction event" "$T/h.txt" " STATUS "
$DUMP $P/Multiple.Packets.pcap > "$T/multi.txt"
expect_line "Multiple.Packets add" "$T/multi.txt" "19009117 09:30:38.952381153 nasdaq/0 i=1 ADD ref=7942047 B 1 @ 80.52"
expect_line "Multiple.Packets attributed add" "$T/multi.txt" "ADD ref=9752743 B 5 @ 80.11 mpid=UBSS"
expect_line "Multiple.Packets gap" "$T/multi.txt" "GAP first=14764497 count=4244620"
$DUMP --stats -q $P/Multiple.Packets.pcap > "$T/stats.txt"
expect_line "--stats line" "$T/stats.txt" "# line 0 A 233.54.12.111:26477 itch nasdaq"
expect_line "--stats errors" "$T/stats.txt" "errors.unknown_symbol"
expect_line "--stats packets" "$T/stats.txt" "packets                2"
$DUMP --symbols MSFT,IVOO $P/AddOrderNoMpidAttributionMessage.pcap > "$T/sym.txt"
expect_line "--symbols includes IVOO" "$T/sym.txt" "ADD ref=23508286"
$DUMP --symbols MSFT $P/AddOrderNoMpidAttributionMessage.pcap > "$T/sym2.txt"
if grep -q " ADD " "$T/sym2.txt"; then bad "--symbols MSFT printed IVOO's add"; else ok; fi
$DUMP --raw --symbols MSFT $P/AddOrderNoMpidAttributionMessage.pcap > "$T/sym3.txt"
if [ -s "$T/sym3.txt" ]; then bad "--raw --symbols MSFT printed IVOO"; else ok; fi

# ---- the generator
$GEN -q -s 42 -o "$T/a.pcap" && $GEN -q -s 42 -o "$T/b.pcap" && $GEN -q -s 43 -o "$T/c.pcap"
if cmp -s "$T/a.pcap" "$T/b.pcap"; then ok; else bad "same seed, different pcaps"; fi
if cmp -s "$T/a.pcap" "$T/c.pcap"; then bad "different seeds, same pcap"; else ok; fi
$GEN -q -s 42 -o "$T/a.itch.gz" && $GEN -q -s 42 -f itch-file -o "$T/a.itch"
if [ "$(head -c 2 "$T/a.itch.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then ok; else bad ".gz output is not gzip"; fi

$DUMP "$T/a.pcap" > "$T/a.txt"
$DUMP --itch-file "$T/a.itch" > "$T/a-file.txt"
$DUMP --itch-file "$T/a.itch.gz" > "$T/a-gz.txt"
if cmp -s "$T/a.txt" "$T/a-file.txt"; then ok; else bad "pcap and BinaryFILE decode differently"; diff "$T/a.txt" "$T/a-file.txt" | head -5; fi
if cmp -s "$T/a-file.txt" "$T/a-gz.txt"; then ok; else bad "plain and gzip BinaryFILE decode differently"; fi
adds=$(grep -c " ADD " "$T/a.txt")
msgs=$($DUMP --raw --itch-file "$T/a.itch" | wc -l)
want=$($GEN -s 42 -o "$T/d.pcap" 2>&1 | sed -n 's/.*ITCH: \([0-9]*\) messages.*/\1/p')
if [ "$msgs" = "$want" ]; then ok; else bad "--raw printed $msgs messages, wb-gen wrote $want"; fi
raw_adds=$($DUMP --raw "$T/a.pcap" | grep -cE ' [AF] locate=')
if [ "$adds" = "$raw_adds" ] && [ "$adds" -gt 1000 ]; then ok; else bad "$adds ADD events for $raw_adds A/F messages"; fi

$GEN -q -s 42 --ab -o "$T/ab.pcap"
$DUMP "$T/ab.pcap" > "$T/ab.txt"
if cmp -s "$T/a.txt" "$T/ab.txt"; then ok; else bad "A/B copies change the events"; diff "$T/a.txt" "$T/ab.txt" | head -5; fi
$DUMP --stats -q "$T/ab.pcap" > "$T/ab.stats"
expect_line "A/B: line B counted" "$T/ab.stats" "# line 1 B 233.49.196.111:26478 itch nasdaq"

$GEN -s 42 --gap-every 100 --dup-every 30 -o "$T/gap.pcap" 2> "$T/gap.log"
dropped=$(sed -n 's/.* \([0-9]*\) dropped (.*/\1/p' "$T/gap.log")
gaps=$($DUMP "$T/gap.pcap" | grep -c " GAP ")
if [ "$gaps" = "$dropped" ] && [ "$gaps" -gt 0 ]; then ok; else bad "$gaps GAP events for $dropped dropped packets"; fi

# --auto: a capture on groups no feeds.conf knows
printf '239.1.2.3:5000 itch nasdaq A\n' > "$T/other.conf"
$GEN -q -s 42 --feeds "$T/other.conf" -o "$T/other.pcap"
expect_exit "unknown groups give a hint and fail" 1 "try --auto" $DUMP "$T/other.pcap"
# The auto line comes after the lines of feeds.conf: compare all but its index.
$DUMP --auto "$T/other.pcap" | sed 's#^\([^ ]* [^ ]* nasdaq\)/[0-9]*#\1/L#' > "$T/auto.txt"
sed 's#^\([^ ]* [^ ]* nasdaq\)/[0-9]*#\1/L#' "$T/a.txt" > "$T/a-l.txt"
if cmp -s "$T/a-l.txt" "$T/auto.txt"; then ok; else bad "--auto decodes differently"; diff "$T/a-l.txt" "$T/auto.txt" | head -3; fi

# ---- NYSE XDP: the real captures (pcaps/xdp), values read from their bytes
X=pcaps/xdp
$DUMP $X/SymbolIndexMappingMessage.pcap > "$T/xdp-map.txt"
expect_line "XDP mapping event" "$T/xdp-map.txt" "i=1 SYMBOL ABG key=1169 lot=100 mkt=N"
$DUMP --raw $X/SymbolIndexMappingMessage.pcap > "$T/xdp-map.raw"
expect_line "XDP mapping raw" "$T/xdp-map.raw" "2 3 index=1169 ABG reserved=41 market=1 system=7 exchange=N scale=4 type=A lot=100 prev_close=508500"
$DUMP --raw $X/AddOrderMessage.pcap > "$T/xdp-add.raw"
expect_line "XDP add raw" "$T/xdp-add.raw" "1243006 100 ns=726504000 index=2511 symbol_seq=6683 order=1390859 price=488700 volume=61 side=B"
$DUMP --raw $X/SequenceResetMessage.pcap > "$T/xdp-reset.raw"
expect_line "XDP reset raw" "$T/xdp-reset.raw" "1 1 time=14:50:41.000000000 ns=200130690 product=11 channel=1"
$DUMP --stats -q $X/AddOrderMessage.pcap > "$T/xdp-add.stats"
expect_line "XDP add without its mapping: unknown symbol" "$T/xdp-add.stats" "errors.unknown_symbol  1"
$DUMP --stats -q $X/SecurityStatusMessage.pcap > "$T/xdp-status.stats"
expect_line "XDP status on channel 2" "$T/xdp-status.stats" "233.125.89.36:11106 xdp nyse channel=2"
# A packet whose PktSize is longer than its datagram: wb-dump --raw says so.
python3 - "$X/AddOrderMessage.pcap" "$T/xdp-cut.pcap" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[24 + 16 + 42] += 1          # PktSize of the one packet, one byte too long
open(sys.argv[2], 'wb').write(d)
PY
$DUMP --raw "$T/xdp-cut.pcap" > "$T/xdp-cut.raw"
expect_line "XDP PktSize past the datagram" "$T/xdp-cut.raw" "- xdp packet of 55 bytes: truncated"

# ---- NYSE XDP: the generator
$GEN -q -s 42 --xdp -o "$T/x1.pcap" && $GEN -q -s 42 --xdp -o "$T/x2.pcap"
if cmp -s "$T/x1.pcap" "$T/x2.pcap"; then ok; else bad "--xdp: same seed, different pcaps"; fi
$DUMP "$T/x1.pcap" > "$T/x1.txt"
for v in nyse arca; do
	if grep -q " $v/.* ADD " "$T/x1.txt"; then ok; else bad "--xdp: no $v adds"; fi
done
for k in MODIFY REPLACE EXECP DELETE CLEAR; do
	if grep -q " nyse/.* $k" "$T/x1.txt"; then ok; else bad "--xdp: no nyse $k events"; fi
done
$DUMP --stats -q "$T/x1.pcap" > "$T/x1.stats"
if grep -E 'errors\.[a-z_]+ +[1-9]' "$T/x1.stats" | grep -q .; then bad "--xdp: decode errors"; else ok; fi
expect_line "--xdp: channel 3 of nyse" "$T/x1.stats" "233.125.89.48:11148 xdp nyse channel=3"
$GEN -q -s 42 --xdp --ab -o "$T/xab.pcap"
$DUMP "$T/xab.pcap" > "$T/xab.txt"
if cmp -s "$T/x1.txt" "$T/xab.txt"; then ok; else bad "--xdp: A/B copies change the events"; diff "$T/x1.txt" "$T/xab.txt" | head -5; fi
$GEN -s 42 --xdp --gap-every 40 -o "$T/xgap.pcap" 2> "$T/xgap.log"
dropped=$(sed -n 's/.*XDP: .*; \([0-9]*\) dropped,.*/\1/p' "$T/xgap.log" | awk '{ s += $1 } END { print s + 0 }')
gaps=$($DUMP "$T/xgap.pcap" | grep -E ' (nyse|arca)/' | grep -c " GAP ")
# A channel's last packet lost is seen by no later packet (XDP heartbeats carry no sequence).
if [ "$gaps" -gt 0 ] && [ "$gaps" -le "$dropped" ] && [ $((dropped - gaps)) -le 5 ]; then ok
else bad "--xdp: $gaps GAP events for $dropped dropped packets"; fi
# Packets in time order, every venue's together, A and B copies too.
$GEN -q -s 42 --xdp --pitch --ab -o "$T/xall.pcap"
if python3 - "$T/xall.pcap" <<'PY'; then ok; else bad "wb-gen: pcap not in time order"; fi
import struct, sys
d = open(sys.argv[1], 'rb').read(); off = 24; last = 0
while off < len(d):
    s, ns, n, _ = struct.unpack('<IIII', d[off:off + 16]); t = s * 10**9 + ns
    if t < last: sys.exit(1)
    last = t; off += 16 + n
PY
$GEN -q -s 42 --xdp --pitch --until 09:30:05 -o "$T/xuntil.pcap"
$DUMP "$T/xuntil.pcap" > "$T/xuntil.txt"
if grep -q 'STATUS closed' "$T/xuntil.txt"; then bad "--until: the session was closed"; else ok; fi
expect_exit "--until bad time" 2 "not a time" $GEN --until 9:75:00 -o "$T/x.pcap"
# ---- the SIPs: CQS and UQDF (pcaps/cqs, pcaps/uqdf), values from the spec
printf '224.0.203.134:45007 cqs cqs A channel=1\n233.46.176.16:55630 uqdf uqdf A channel=1\n' > "$T/sip.conf"
$DUMP --feeds "$T/sip.conf" pcaps/cqs/Q_L_Long_Quote.pcap > "$T/cqs.txt"
expect_line "CQS Long Quote (A.6)" "$T/cqs.txt" "203 00:27:27.291945405 nyse/0 i=1 QUOTE bid=0 @ 0.00 ask=0 @ 0.00 cond=R sip=01:30:04.485738569 f=sip,bid-ineligible,ask-ineligible"
expect_line "CQS NBBO O" "$T/cqs.txt" "NBBO bid=0 @ 0.00 none ask=0 @ 0.00 none ind=O sides=BA f=sip"
$DUMP --feeds "$T/sip.conf" pcaps/uqdf/QuoteLongFormMessage.pcap > "$T/uqdf.txt"
expect_line "UQDF QF NBBO (B.5)" "$T/uqdf.txt" "19969935 13:28:53.164962647 uqdf/1 i=1 NBBO bid=300 @ 767.25 edgx ask=100 @ 767.26 bzx ind=3 cond=R luld=A sides=BA f=sip"
$DUMP --auto --raw pcaps/uqdf/LimitUpLimitDownPriceBandMessage.pcap > "$T/uqdf.raw"
expect_line "UQDF AP raw, told from ITCH by --auto" "$T/uqdf.raw" "A P mc=E sub=\x20 sip=13:28:34.774117456 ts1=00:00:00.000000000 ANDA band=C at=09:45:00.000930317 down=8.87 up=10.84"
# A bad checksum: the raw view says so, the block is dropped and counted.
python3 -c 'import sys; d=bytearray(open(sys.argv[1],"rb").read()); d[-30]^=1; open(sys.argv[2],"wb").write(d)' \
	pcaps/cqs/Q_L_Long_Quote.pcap "$T/cksum.pcap"
$DUMP --feeds "$T/sip.conf" --raw "$T/cksum.pcap" > "$T/cksum.raw"
expect_line "CQS bad checksum in --raw" "$T/cksum.raw" "- cqs packet of 108 bytes: bad_checksum"
$DUMP --feeds "$T/sip.conf" --stats "$T/cksum.pcap" > "$T/cksum.stats"
expect_line "CQS bad checksum counted" "$T/cksum.stats" "errors.bad_checksum    1"
# A capture of another year (2018, block version 0, lots), as a new user
# reads it: a feed map naming its group, nothing else.
python3 tests/tools/cqs_2018_capture.py "$T/cqs2018.pcap" 224.0.89.1 15701
printf '224.0.89.1:15701 cqs cqs A channel=3\n' > "$T/user.conf"
$DUMP --feeds "$T/user.conf" "$T/cqs2018.pcap" > "$T/cqs2018.txt"
expect_line "CQS 2018 quote in shares" "$T/cqs2018.txt" "1 10:00:00.000001000 arca/0 i=1 QUOTE bid=100 @ 29.45 ask=100 @ 29.47 cond=R"
expect_line "CQS 2018 NBBO U" "$T/cqs2018.txt" "NBBO bid=300 @ 29.46 bzx ask=200 @ 29.47 bzx ind=U cond=R sides=BA f=sip"
# The SIP generators: A/B copies change nothing, no gap, no error (Line
# Integrity once named a block not yet sent: a false gap on line B).
$GEN -q -s 7 --venues nasdaq,bzx,edgx,cqs,uqdf -o "$T/sip1.pcap"
$GEN -q -s 7 --venues nasdaq,bzx,edgx,cqs,uqdf --ab -o "$T/sip2.pcap"
$DUMP "$T/sip1.pcap" > "$T/sip1.txt"
$DUMP "$T/sip2.pcap" > "$T/sip2.txt"
if cmp -s "$T/sip1.txt" "$T/sip2.txt"; then ok; else bad "SIP A/B copies change the events"; diff "$T/sip1.txt" "$T/sip2.txt" | head -5; fi
$DUMP --stats -q "$T/sip2.pcap" > "$T/sip2.stats"
if grep -E "^#   (gaps|errors\.[a-z_]+) +[1-9]" "$T/sip2.stats"; then bad "SIP generator: gaps or errors"; else ok; fi
quotes=$(grep -c " QUOTE " "$T/sip1.txt"); nbbos=$(grep -c " NBBO " "$T/sip1.txt")
if [ "$quotes" -gt 500 ] && [ "$nbbos" -gt 100 ]; then ok; else bad "SIP generator: $quotes quotes, $nbbos NBBOs"; fi

# Issue 23.7: an anonymized MoldUDP64 capture (session of zeros, sequence
# number 0, port 0, a VLAN tag, as the public Nasdaq BX samples are) decodes
# with --proto to the messages of the capture it was made from, each packet
# counted as unsequenced; never a bad_field alone.
python3 tests/tools/anonymized_mold_capture.py $P/Multiple.Packets.pcap "$T/anon.pcap"
norm() { grep -v ' GAP ' | cut -d' ' -f2- | sed 's#nasdaq/[0-9]*#nasdaq#'; }
$DUMP --proto itch $P/Multiple.Packets.pcap | norm > "$T/anon-orig.txt"
$DUMP --proto itch "$T/anon.pcap" | norm > "$T/anon.txt"
if [ -s "$T/anon.txt" ] && cmp -s "$T/anon-orig.txt" "$T/anon.txt"; then ok
else bad "anonymized capture: not the original's events"; diff "$T/anon-orig.txt" "$T/anon.txt" | head -3; fi
$DUMP --proto itch --raw $P/Multiple.Packets.pcap | cut -d' ' -f2- > "$T/anon-orig.raw"
$DUMP --proto itch --raw "$T/anon.pcap" | cut -d' ' -f2- > "$T/anon.raw"
if cmp -s "$T/anon-orig.raw" "$T/anon.raw"; then ok
else bad "anonymized capture --raw: not the original's messages"; head -3 "$T/anon.raw"; fi
$DUMP --proto itch --stats -q "$T/anon.pcap" > "$T/anon.stats"
expect_line "anonymized capture: its packets counted unsequenced" "$T/anon.stats" "#   unsequenced            2"
if grep -qE '^#   errors\.bad_field +[1-9]' "$T/anon.stats"; then bad "anonymized capture: bad_field counted"; else ok; fi

# Issue 23.15: --auto names the real BYX captures' groups BYX, from Cboe's
# group plan (the exchange's dissector, tools/common/cboe_groups.c), and
# keeps every group (a channel per range of units): the events are those of
# a feed map naming the groups (tests/bench/captures.feeds.conf).
for f in AddOrderShortMessage ModifyOrderShortMessage MultipleMessages; do
	$DUMP --auto pcaps/pitch/$f.pcap > "$T/byx-auto.txt" 2> "$T/byx-auto.err"
	$DUMP --feeds tests/bench/captures.feeds.conf pcaps/pitch/$f.pcap > "$T/byx-map.txt"
	if [ -s "$T/byx-auto.txt" ] && ! grep -qv ' byx/' "$T/byx-auto.txt"; then ok
	else bad "--auto $f: not all byx: $(grep -v ' byx/' "$T/byx-auto.txt" | head -2)"; fi
	if [ ! -s "$T/byx-auto.err" ]; then ok; else bad "--auto $f: $(cat "$T/byx-auto.err")"; fi
	if cmp -s <(sed 's#/[0-9]* # #' "$T/byx-auto.txt") <(sed 's#/[0-9]* # #' "$T/byx-map.txt"); then ok
	else bad "--auto $f: not the feed map's events"; fi
done
expect_line "BYX unit 31 add, by --auto" "$T/byx-auto.txt" "35743 09:30:00.000754000 byx/"

echo "tools-test: $pass passed, $fail failed"
[ $fail -eq 0 ]
