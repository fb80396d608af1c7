#!/usr/bin/env bash
# Issue 14.5: every option value is checked. A bad value exits 2 with a
# message that names the option (and, for numbers, the accepted range),
# on the command line and from a config file (which is named with its line).
. "$(dirname "$0")/lib.sh"

cap=$(demo_capture)
# expect_bad "what" "text the message must hold" COMMAND...
expect_bad() {
	local what=$1 want=$2 rc; shift 2
	timeout 30 "$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$T/err"; then
		ok "$what: exit 2, '$(head -1 "$T/err" | cut -c1-90)'"
	else
		bad "$what: exit $rc, message '$(head -1 "$T/err")' (wanted exit 2 and '$want')"
	fi
}
W=("$B/wirebookd" --pcap "$cap" --shm "$SHM" --no-pin --exit-at-eof)
expect_bad "wirebookd --expected-orders -5" "--expected-orders '-5': expected a whole number from 1 to" "${W[@]}" --expected-orders -5
expect_bad "wirebookd --expected-orders abc" "--expected-orders 'abc'" "${W[@]}" --expected-orders abc
expect_bad "wirebookd --expected-orders 12x" "--expected-orders '12x'" "${W[@]}" --expected-orders 12x
expect_bad "wirebookd --speed nan" "--speed 'nan': expected a number greater than 0" "${W[@]}" --speed nan
expect_bad "wirebookd --speed inf" "--speed 'inf'" "${W[@]}" --speed inf
expect_bad "wirebookd --speed 0" "--speed '0'" "${W[@]}" --speed 0
expect_bad "wirebookd --cpus 1,1" "--cpus '1,1': the two cpus must differ" "${W[@]}" --cpus 1,1
expect_bad "wirebookd --cpus 0,4096" "--cpus '0,4096'" "${W[@]}" --cpus 0,4096
expect_bad "wirebookd --cpus a" "--cpus 'a'" "${W[@]}" --cpus a
expect_bad "wirebookd --metrics-file without --metrics" "--metrics-file says where --metrics listens" "${W[@]}" --metrics-file "$T/m.json"
expect_bad "wirebookd --path fast" "--path 'fast': expected one of: rtc, pipeline, auto" "${W[@]}" --path fast
expect_bad "wirebookd --rt-priority 0" "--rt-priority '0': expected a whole number from 1 to 99" "${W[@]}" --rt-priority 0
expect_bad "wirebookd --rt-priority 100" "--rt-priority '100'" "${W[@]}" --rt-priority 100
expect_bad "wirebookd --stats -1" "--stats '-1': expected a number of at least 0.01" "${W[@]}" --stats -1
expect_bad "wirebookd --numa-node 9999" "--numa-node '9999'" "${W[@]}" --numa-node 9999
expect_bad "wirebookd --shm a/b" "--shm 'a/b'" "${W[@]}" --shm a/b
expect_bad "wirebookd --metrics 1.2.3:x" "--metrics" "${W[@]}" --metrics 1.2.3:x
expect_bad "wirebookd --bogus" "unknown option '--bogus'" "${W[@]}" --bogus
expect_bad "wirebookd two sources" "exactly one source" "${W[@]}" --itch-file x
printf '1000\n12x\n' >"$T/delays.txt"
expect_bad "wirebookd --lockstep-delay-file, a bad line" "--lockstep-delay-file $T/delays.txt line 2: '12x'" \
	"${W[@]}" --lockstep all --lockstep-delay-file "$T/delays.txt"
: >"$T/delays.txt"
expect_bad "wirebookd --lockstep-delay-file, empty" "no delay in it" "${W[@]}" --lockstep all --lockstep-delay-file "$T/delays.txt"
printf 'pcap %s\nexpected-orders lots\n' "$cap" >"$T/bad.conf"
expect_bad "wirebookd --config with a bad value" "bad.conf:2: --expected-orders 'lots'" \
	"$B/wirebookd" --config "$T/bad.conf" --shm "$SHM"
printf 'pcap %s\nspeling 3\n' "$cap" >"$T/bad2.conf"
expect_bad "wirebookd --config with an unknown option" "bad2.conf:2: unknown option 'speling'" \
	"$B/wirebookd" --config "$T/bad2.conf" --shm "$SHM"
printf 'pcap %s\npath fastest\n' "$cap" >"$T/bad3.conf"
expect_bad "wirebookd --config with a bad path" "bad3.conf:2: --path 'fastest'" \
	"$B/wirebookd" --config "$T/bad3.conf" --shm "$SHM"
expect_bad "wirebookd --config missing" "--config $T/none.conf" "$B/wirebookd" --config "$T/none.conf"

expect_bad "wb-book --depth 0" "--depth '0': expected a whole number from 1 to 10" "$B/wb-book" --depth 0 --once
expect_bad "wb-book --interval abc" "--interval 'abc'" "$B/wb-book" --interval abc
expect_bad "wb-book --top 65" "--top '65'" "$B/wb-book" --top 65
expect_bad "wb-book --wait-done nan" "--wait-done 'nan'" "$B/wb-book" --wait-done nan
expect_bad "wb-subscribe --timeout -1" "--timeout '-1'" "$B/wb-subscribe" --timeout -1 --daemon /nonexistent list
expect_bad "wb-kread --idle-ms abc" "--idle-ms 'abc'" "$B/wb-kread" --idle-ms abc
expect_bad "wb-gen --messages -5" "--messages" "$B/wb-gen" --messages -5 -o "$T/x.pcap"

# Issue 23: usage and configuration errors exit 2 and name the file, line or
# option; empty values and stray arguments are refused.
expect_bad "wirebookd --itch-file given a pcap" "give it as a capture (wirebookd --pcap FILE" \
	"$B/wirebookd" --itch-file "$cap" --shm "$SHM" --no-pin --exit-at-eof
expect_bad "wb-export --itch-file given a pcap" "--pcap" "$B/wb-export" --itch-file "$cap" "$T/out"
printf '233.54.12.111 itch nasdaq A\n' >"$T/feeds-bad.conf"
expect_bad "wirebookd with a bad feeds.conf line" "feeds-bad.conf:1:" "${W[@]}" --feeds "$T/feeds-bad.conf"
expect_bad "wb-export with a bad feeds.conf line" "feeds-bad.conf:1:" "$B/wb-export" --feeds "$T/feeds-bad.conf" "$cap" "$T/out"
printf 'nasdaq mold\n' >"$T/recovery-bad.conf"
expect_bad "wirebookd with a bad recovery.conf line" "recovery-bad.conf:1:" "${W[@]}" --recovery "$T/recovery-bad.conf"
mkdir -p "$T/dir"
expect_bad "wirebookd --feeds DIRECTORY" "is a directory, not a feed map" "${W[@]}" --feeds "$T/dir"
expect_bad "wirebookd --config DIRECTORY" "is a directory, not a config file" "$B/wirebookd" --config "$T/dir"
expect_bad "wirebookd --subscribe ''" "--subscribe ''" "${W[@]}" --subscribe ''
expect_bad "wirebookd --subscribe ','" "--subscribe ','" "${W[@]}" --subscribe ,
expect_bad "wb-export --subscribe ''" "--subscribe ''" "$B/wb-export" --subscribe '' "$cap" "$T/out"
expect_bad "wirebookd with a stray argument" "unexpected argument 'extra'" "${W[@]}" extra
expect_bad "wb-kread with a stray argument" "wb-kread: unexpected argument 'extra'" "$B/wb-kread" extra
expect_bad "wb-tune with a stray argument" "wb-tune: unexpected argument 'extra'" "$B/wb-tune" extra
expect_bad "wb-export with a stray argument" "unexpected argument 'extra'" "$B/wb-export" "$cap" "$T/out" extra
expect_bad "wb-export --deflate 10" "--deflate '10': expected a whole number from 0 to 9" "$B/wb-export" --deflate 10 "$cap" "$T/out"
expect_bad "wb-export --start 9h30" "--start 9h30: want HH:MM" "$B/wb-export" --start 9h30 "$cap" "$T/out"
expect_bad "wb-export --start 09:30 --end 1771511400000000000" "give both as HH:MM[:SS] or both as ns" \
	"$B/wb-export" --start 09:30 --end 1771511400000000000 "$cap" "$T/out"
expect_bad "wb-export --proto with --itch-file" "--proto applies to a capture" "$B/wb-export" --proto itch --itch-file "$cap" "$T/out"
expect_bad "wb-export --proto nope" "nope" "$B/wb-export" --proto nope "$cap" "$T/out"
expect_bad "wb-subscribe add ''" "add '': a symbol has 1 to 8 characters" "$B/wb-subscribe" --daemon "$T/none.sock" add ''
expect_bad "wb-subscribe date 2026-02-30" "date '2026-02-30': expected a day of the calendar as YYYY-MM-DD" \
	"$B/wb-subscribe" --daemon "$T/none.sock" date 2026-02-30
expect_bad "wb-subscribe feeds load with a bad line" "feeds-bad.conf:1:" \
	"$B/wb-subscribe" --daemon "$T/none.sock" feeds load "$T/feeds-bad.conf"

# Issue 23.10: the command line's source replaces the config file's (as any
# option given on both does), rather than adding up to "two sources".
"$B/wb-gen" -q -s 7 -f itch-file -o "$T/g.itch"
printf 'pcap %s/missing.pcap\nshm %s\nno-pin\nexit-at-eof\n' "$T" "$SHM" >"$T/src.conf"
for src in "itch-file $T/g.itch" "pcap $cap"; do
	timeout 60 "$B/wirebookd" --config "$T/src.conf" --${src%% *} "${src#* }" >/dev/null 2>"$T/src.err"
	rc=$?
	[ "$rc" -eq 0 ] && grep -qF "wirebookd: $src -> " "$T/src.err" &&
		ok "--${src%% *} on the command line replaces the config's pcap" ||
		{ bad "--${src%% *} with a config's pcap: exit $rc"; head -3 "$T/src.err"; }
done

# Issue 23.12: --version on every installed tool, one version (the release
# in scripts/wirebook.pc.in, which the man pages and wirebook.pc carry too).
want=$(sed -n 's/^Version: *//p' "$ROOT/scripts/wirebook.pc.in")
for t in wirebookd wb-book wb-dump wb-export wb-gen wb-kread wb-latency-text wb-sipstat wb-tune wb-subscribe; do
	out=$("$B/$t" --version 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] && [ "$out" = "$t (wirebook) $want" ] && ok "$t --version: $out" ||
		bad "$t --version: exit $rc, '$out' (wanted '$t (wirebook) $want')"
done

# and good values still work
timeout 60 "${W[@]}" --expected-orders 0x1000 --speed 1e6 --stats 5 --cpus 0 >/dev/null 2>"$T/err" &&
	ok "wirebookd accepts good values" || { bad "wirebookd refused good values"; cat "$T/err"; }
finish
