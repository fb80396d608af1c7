#!/usr/bin/env bash
# The SIP-vs-direct comparison against a day whose answer is known (make
# sip-compare-test, part of make check): wb-gen writes direct feeds and
# CQS/UQDF delayed by --sip-lag-us, and with --truth the lags it applied
# and the locked/crossed episodes of the direct NBBO; wb-sipstat --pcap
# must report that lag within 5 % for every venue and find every episode.
set -u
B=${B:-build}
T=$(mktemp -d /tmp/wb-sip-compare.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

expect_exit() {
	local what=$1 code=$2 text=$3; shift 3
	"$@" > "$T/out" 2> "$T/err"
	local rc=$?
	if [ $rc -ne "$code" ]; then bad "$what: exit $rc, expected $code"; return; fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$T/err" "$T/out"; then
		bad "$what: output lacks '$text'"; return
	fi
	ok
}

expect_exit "wb-sipstat --help" 0 "--json" $B/wb-sipstat --help
expect_exit "wb-sipstat bad option" 2 "" $B/wb-sipstat --bogus
expect_exit "wb-sipstat missing capture" 1 "No such file" $B/wb-sipstat --pcap "$T/none.pcap"
expect_exit "wb-sipstat no book" 1 "no book" $B/wb-sipstat --shm "wb-sip-compare-none-$$"
expect_exit "wb-gen bad --sip-lag-us" 2 "--sip-lag-us" $B/wb-gen --sip-lag-us uniform:9:3 -o "$T/x.pcap"
expect_exit "wb-gen bad --sip-lag-us text" 2 "--sip-lag-us" $B/wb-gen --sip-lag-us soon -o "$T/x.pcap"

# check LAG: one generated day, its truth against wb-sipstat --json
check() {
	local lag=$1 name=$2
	if ! $B/wb-gen -q --venues nasdaq,bzx,edgx,cqs,uqdf --sip-lag-us "$lag" --truth "$T/$name.truth" \
		-o "$T/$name.pcap" 2> "$T/gen.err"; then
		bad "$name: wb-gen failed: $(head -c 300 "$T/gen.err")"; return
	fi
	if ! $B/wb-sipstat --pcap "$T/$name.pcap" --feeds feeds.conf --json > "$T/$name.json" 2> "$T/stat.err"; then
		bad "$name: wb-sipstat failed: $(tail -c 300 "$T/stat.err")"; return
	fi
	if python3 - "$T/$name.truth" "$T/$name.json" "$name" <<'PY'
import json, sys
truth, report, name = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
mean = p50 = None
episodes = []
for line in open(truth):
    f = line.split()
    if line.startswith('# sip-lag-applied'):
        mean, p50 = int(f[5]) / 1e3, int(f[7]) / 1e3
    elif f and f[0] == 'lock':
        episodes.append((f[1], int(f[2]), int(f[3]), f[4]))
errors = []
venues = report['venues']
for v in ('NASDAQ', 'BZX', 'EDGX'):
    d = venues.get(v, {}).get('delay', {})
    if not d.get('count'):
        errors.append('%s: no delay measured' % v)
        continue
    for what, want, got in (('mean', mean, d['mean_us']), ('p50', p50, d['p50_us'])):
        if abs(got - want) > 0.05 * want:
            errors.append('%s: %s delay %.1f us, the generator applied %.1f us' % (v, what, got, want))
found = [e for e in report['lock_episodes'] if e['kind'] == 'direct']
if not episodes:
    errors.append('the generator planted no locked/crossed episode')
for sym, start, end, kind in episodes:
    end = end or 2**63
    if not any(e['symbol'] == sym and e['start_exch_ns'] <= end and
               (e['end_exch_ns'] or 2**63) >= start for e in found):
        errors.append('planted %s %s episode at %d not found' % (kind, sym, start))
for e in errors:
    print('    ' + e)
print('    %s: lag applied mean %.1f p50 %.1f us; %d planted episodes, %d found' %
      (name, mean, p50, len(episodes), len(found)))
sys.exit(1 if errors else 0)
PY
	then ok; else bad "$name: the comparison does not match what wb-gen planted"; fi
}

check 1000 fixed
check uniform:500:1500 uniform
check exp:800 exp

# CQS has no retransmission: each of its gaps marks the SIP view of the
# symbols quoted through it stale until their next quote. A day with a CQS
# packet dropped every 50: the SIP view counts as many gaps as the CQS
# lines saw, marks symbols, and a whole day marks none.
cqs_gaps() {
	local name=$1; shift
	if ! $B/wb-gen -q -p day -n 40000 --symbols 40 -s 5 --venues nasdaq,cqs "$@" -o "$T/$name.pcap" \
		2> "$T/gen.err"; then
		bad "$name: wb-gen failed: $(head -c 300 "$T/gen.err")"; return 1
	fi
	if ! $B/wirebookd --pcap "$T/$name.pcap" --feeds feeds.conf --shm "wb-sip-cqs-$$" --force \
		--no-pin --exit-at-eof > "$T/$name.out" 2> "$T/$name.err"; then
		bad "$name: wirebookd failed: $(tail -c 300 "$T/$name.err")"; return 1
	fi
	line_gaps=$(awk '$2 == "cqs" && $3 == "cqs" { g += $8 } END { print g + 0 }' "$T/$name.out")
	view_gaps=$(sed -n 's/.*; CQS gaps \([0-9]*\), .*/\1/p' "$T/$name.out" | tail -1)
	view_stale=$(sed -n 's/.*, symbols marked stale \([0-9]*\) .*/\1/p' "$T/$name.out" | tail -1)
}
if cqs_gaps cqs-gaps --gap-every 50; then
	if [ "${line_gaps:-0}" -gt 0 ] && [ "$view_gaps" = "$line_gaps" ] && [ "${view_stale:-0}" -gt 0 ]; then
		ok
	else
		bad "CQS gaps: the lines saw ${line_gaps:-?} gaps, the SIP view counted ${view_gaps:-none} and marked ${view_stale:-none} symbols stale"
	fi
fi
if cqs_gaps cqs-whole; then
	[ "${line_gaps:-1}" -eq 0 ] && [ "$view_gaps" = 0 ] && [ "$view_stale" = 0 ] && ok ||
		bad "CQS without loss: ${line_gaps:-?} gaps, SIP view ${view_gaps:-none} gaps, ${view_stale:-none} stale"
fi

echo "sip-compare: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
