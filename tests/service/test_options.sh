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
expect_bad "wirebookd --path fast" "--path 'fast': expected one of: rtc, pipeline, auto" "${W[@]}" --path fast
expect_bad "wirebookd --stats -1" "--stats '-1': expected a number of at least 0.01" "${W[@]}" --stats -1
expect_bad "wirebookd --numa-node 9999" "--numa-node '9999'" "${W[@]}" --numa-node 9999
expect_bad "wirebookd --shm a/b" "--shm 'a/b'" "${W[@]}" --shm a/b
expect_bad "wirebookd --metrics 1.2.3:x" "--metrics" "${W[@]}" --metrics 1.2.3:x
expect_bad "wirebookd --bogus" "unknown option '--bogus'" "${W[@]}" --bogus
expect_bad "wirebookd two sources" "exactly one source" "${W[@]}" --itch-file x
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

# and good values still work
timeout 60 "${W[@]}" --expected-orders 0x1000 --speed 1e6 --stats 5 --cpus 0 >/dev/null 2>"$T/err" &&
	ok "wirebookd accepts good values" || { bad "wirebookd refused good values"; cat "$T/err"; }
finish
