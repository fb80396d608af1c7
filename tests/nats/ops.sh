#!/usr/bin/env bash
# The stream for research and operations (make nats-test; issue 26):
#   1. wb-export nats://... reads a published day back: its order-level
#      table (events.csv) equals the capture's own export but for
#      last_in_packet (below), its DBN files are the same bytes; a time
#      range and a symbol filter give the capture export's rows of them;
#      a stream-sequence range gives that range's batches;
#   2. the publisher's and the source's counters reach readers through
#      libwirebook (wb_nats_stats, here by the Python package), non-zero
#      after a published day.
# last_in_packet cannot be equal: the stream carries events, not packets;
# wb-export ends a "packet" where the line or the receive time changes, so
# two packets of one line received in the same nanosecond (the generated
# capture has them) are one. recv_ts is equal here because the origin
# replays the capture unpaced (its receive time is the capture's); from a
# live origin it is the NIC's time, a capture taken elsewhere has its own.
# Skipped (exit 0, said) without nats-server or a wirebookd built with NATS.
set -u
B=${B:-build}
MESSAGES=${NATS_TEST_MESSAGES:-20000}

command -v nats-server >/dev/null || { echo "nats-ops: SKIPPED: no nats-server"; exit 0; }
if "$B/wirebookd" --pcap /dev/null --publish nats://127.0.0.1:1 2>&1 | grep -q 'built without NATS'; then
	echo "nats-ops: SKIPPED: $B/wirebookd was built without NATS"
	exit 0
fi
T=$(mktemp -d /tmp/wb-nats-ops.XXXXXX)
server_pid= pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	rm -f /dev/shm/wbnatsops-$$-*
	[ -n "${NATS_TEST_KEEP:-}" ] && echo "nats-ops: kept $T" || rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$T/server.conf" <<EOC
listen: 127.0.0.1:$port
jetstream { store_dir: "$T/store" }
authorization { users = [ { user: wb, password: s3cret } ] }
EOC
nats-server -c "$T/server.conf" > "$T/server.log" 2>&1 &
server_pid=$!
for i in $(seq 100); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
	sleep 0.1
done
creds=(--nats-user wb --nats-password s3cret)
url=nats://127.0.0.1:$port

"$B/wb-gen" -q -p day -n "$MESSAGES" --venues nasdaq,bzx,byx,edgx,edga,nyse,arca,cqs,uqdf \
	-o "$T/day.pcap" || { echo "nats-ops: FAIL: wb-gen"; exit 1; }
"$B/wirebookd" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnatsops-$$-o" --no-pin --exit-at-eof \
	--publish "$url" --nats-instance ops "${creds[@]}" > "$T/origin.out" 2> "$T/origin.err" ||
	{ echo "nats-ops: FAIL: the origin: $(tail -3 "$T/origin.err")"; exit 1; }
stream=$(sed -n 's/.*stream \(WIREBOOK_ops_[0-9]*\).*/\1/p' "$T/origin.err" "$T/origin.out" | head -1)

# 1. wb-export from the stream and from the capture.
body() { tail -n +2 "$1"; }	# without the '# wirebook export' line (it names the source)
# without_column FILE NAME: the CSV without that column
without_column() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
i = rows[0].index(sys.argv[2])
w = csv.writer(sys.stdout, lineterminator="\n")
for r in rows:
    w.writerow(r[:i] + r[i + 1:])
PY
}
export_both() {	# TAG [wb-export options]: $T/n-TAG from the stream, $T/p-TAG from the capture
	local tag=$1; shift
	"$B/wb-export" -q "$url" "$T/n-$tag" --nats-instance ops "${creds[@]}" "$@" 2> "$T/n-$tag.err" ||
		bad "$tag: wb-export from the stream: exit $?: $(tail -2 "$T/n-$tag.err")"
	"$B/wb-export" -q --feeds feeds.conf "$T/day.pcap" "$T/p-$tag" "$@" 2> "$T/p-$tag.err" ||
		bad "$tag: wb-export from the capture: exit $?: $(tail -2 "$T/p-$tag.err")"
}
same_tables() {	# TAG WHAT
	local tag=$1 what=$2 t diff=
	for t in "$T/p-$tag"/*.csv; do
		t=$(basename "$t")
		cmp -s <(without_column "$T/p-$tag/$t" last_in_packet) \
			<(without_column "$T/n-$tag/$t" last_in_packet) || diff="$diff $t"
	done
	local rows=$(($(wc -l < "$T/p-$tag/events.csv") - 2))
	if [ -z "$diff" ] && [ "$rows" -gt 0 ]; then
		ok "$what: every table equal to the capture's ($rows order-level rows; last_in_packet aside)"
	else
		bad "$what: tables differ:$diff (rows $rows)"
	fi
}
export_both all
same_tables all "wb-export from the stream"
# How many rows last_in_packet tells apart (not a failure: said).
echo "nats-ops: last_in_packet differs on $(diff <(body "$T/p-all/events.csv") <(body "$T/n-all/events.csv") | grep -c '^<') of $(($(wc -l < "$T/p-all/events.csv") - 2)) order-level rows (packets of one line in the same ns)"

export_both window --start 11:00 --end 12:30 --subscribe AMZN,ADBE
same_tables window "--start 11:00 --end 12:30 --subscribe AMZN,ADBE"
# ... and they are the full export's rows of those symbols and times.
python3 - "$T/p-all/events.csv" "$T/n-window/events.csv" <<'PY' && ok "the window is the full export's subset" || bad "the window is not the full export's subset"
import csv, sys, datetime, zoneinfo
def rows(p):
    f = open(p); next(f); return list(csv.DictReader(f))
tz = zoneinfo.ZoneInfo("America/New_York")
def inside(r):
    t = int(r["exch_ts"]) if int(r["exch_ts"]) >= 86400 * 10**9 else int(r["recv_ts"])
    d = datetime.datetime.fromtimestamp(t / 1e9, tz)
    s = (d - d.replace(hour=0, minute=0, second=0, microsecond=0)).total_seconds()
    return r["symbol"] in ("AMZN", "ADBE") and 11 * 3600 <= s < 12.5 * 3600
drop = ("last_in_packet", "event_no")
key = lambda r: {k: v for k, v in r.items() if k not in drop}
want = [key(r) for r in rows(sys.argv[1]) if inside(r)]
got = [key(r) for r in rows(sys.argv[2])]
print(f"nats-ops: window: {len(got)} rows, the full export has {len(want)} of them")
sys.exit(0 if want == got and got else 1)
PY

export_both dbn --format dbn
if cmp -s "$T/p-dbn/mbo.dbn.zst" "$T/n-dbn/mbo.dbn.zst" && cmp -s "$T/p-dbn/mbp-10.dbn.zst" "$T/n-dbn/mbp-10.dbn.zst" &&
   cmp -s "$T/p-dbn/trades.dbn.zst" "$T/n-dbn/trades.dbn.zst"; then
	ok "--format dbn from the stream: the capture's bytes"
else
	bad "--format dbn from the stream differs from the capture's"
fi

"$B/wb-export" "nats://127.0.0.1:$port/$stream" "$T/n-seq" "${creds[@]}" --first-seq 5 --last-seq 9 \
	> /dev/null 2> "$T/n-seq.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "sequences 5-9: 5 batches" "$T/n-seq.err"; then
	ok "--first-seq 5 --last-seq 9 of stream $stream: $(grep -o '[0-9]* events (' "$T/n-seq.err" | tr -d '(')"
else
	bad "--first-seq/--last-seq: exit $rc: $(tail -2 "$T/n-seq.err")"
fi
"$B/wb-export" "$url" "$T/n-bad" --nats-instance ops --nats-user wb --nats-password wrong > /dev/null 2> "$T/n-bad.err"
rc=$?
[ $rc -eq 1 ] && grep -qi authorization "$T/n-bad.err" && ok "wb-export: wrong credentials refused" ||
	bad "wb-export with wrong credentials: exit $rc: $(head -c 200 "$T/n-bad.err")"
"$B/wb-export" "$T/day.pcap" "$T/n-usage" --nats-user wb > /dev/null 2>&1
[ $? -eq 2 ] && ok "wb-export: --nats-user without a nats:// input refused" || bad "--nats-user with a capture not refused"

# 2. The counters through libwirebook: an origin and a source that stay up
#    after the day (no --exit-at-eof), read by the Python package (ctypes on
#    build/libwirebook.so: wb_nats_stats) once all of it went through.
export WIREBOOK_LIB=$PWD/$B/libwirebook.so PYTHONPATH=$PWD/python
"$B/wirebookd" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnatsops-$$-olive" --no-pin \
	--publish "$url" --nats-instance live "${creds[@]}" --publish-books 5 --publish-books-interval 20 \
	> "$T/olive.out" 2> "$T/olive.err" &
pids+=($!)
"$B/wirebookd" --source "$url" --nats-instance live "${creds[@]}" --shm "wbnatsops-$$-slive" \
	--no-pin > "$T/slive.out" 2> "$T/slive.err" &
pids+=($!)
# counters NAME: the book's wb_nats_stats as KEY=VALUE lines
counters() {
	python3 -c "
import wirebook
with wirebook.Book('$1') as b:
    for k, v in b.nats_stats().items():
        print(f'{k}={v}')" 2>/dev/null
}
for i in $(seq 600); do
	counters "wbnatsops-$$-olive" > "$T/c-origin" && counters "wbnatsops-$$-slive" > "$T/c-source" &&
		grep -q '^pub_end_sent=1' "$T/c-origin" && grep -q '^pub_in_flight=0' "$T/c-origin" &&
		grep -q '^src_end_seen=1' "$T/c-source" && ! grep -q '^pub_book_messages=0$' "$T/c-origin" &&
		[ "$(sed -n 's/^pub_events=//p' "$T/c-origin")" = "$(sed -n 's/^src_events=//p' "$T/c-source")" ] &&
		break
	sleep 0.1
done
val() { sed -n "s/^$2=//p" "$T/c-$1"; }
if [ "$(val origin roles)" = "['publish']" ] && [ "$(val origin pub_events)" -gt 0 ] 2>/dev/null &&
   [ "$(val origin pub_batches)" -gt 0 ] && [ "$(val origin pub_bytes)" -gt 0 ] &&
   [ "$(val origin pub_acked)" -ge "$(val origin pub_batches)" ] && [ "$(val origin pub_connected)" = 1 ] &&
   [ "$(val origin pub_lost)" = 0 ] && [ "$(val origin pub_end_sent)" = 1 ] && [ "$(val origin updated_ns)" -gt 0 ] &&
   [ "$(val origin pub_book_messages)" -gt 0 ] && [ "$(val origin pub_book_bytes)" -gt "$(val origin pub_book_messages)" ] &&
   [ "$(val origin pub_book_failed)" = 0 ] && [ "$(val origin pub_snapshots)" = 0 ] &&
   [ "$(val origin pub_snapshot_bytes)" = 0 ] && [ "$(val origin pub_snapshot_failures)" = 0 ]; then
	ok "wb_nats_stats of the origin: $(val origin pub_events) events in $(val origin pub_batches) batches, $(val origin pub_bytes) bytes, all acknowledged, END sent; $(val origin pub_book_messages) book messages, no snapshot asked: none"
else
	bad "wb_nats_stats of the origin: $(tr '\n' ' ' < "$T/c-origin")"
fi
if [ "$(val source roles)" = "['source']" ] && [ "$(val source src_events)" = "$(val origin pub_events)" ] 2>/dev/null &&
   [ "$(val source src_messages)" -gt 0 ] && [ "$(val source src_batches)" -gt 0 ] &&
   [ "$(val source src_bytes)" -gt 0 ] && [ "$(val source src_connected)" = 1 ] &&
   [ "$(val source src_lost)" = 0 ] && [ "$(val source src_lag_messages)" = 0 ] &&
   [ "$(val source src_snapshot_global)" = 0 ]; then
	ok "wb_nats_stats of the source: $(val source src_events) events from $(val source src_messages) messages, lag 0 messages, $(val source src_lag_ns) ns behind the last stored"
else
	bad "wb_nats_stats of the source: $(tr '\n' ' ' < "$T/c-source")"
fi
# A book without NATS: roles 0, no error.
"$B/wirebookd" --pcap "$T/day.pcap" --feeds feeds.conf --shm "wbnatsops-$$-plain" --no-pin > /dev/null 2>&1 &
pids+=($!)
for i in $(seq 100); do counters "wbnatsops-$$-plain" > "$T/c-plain" && break; sleep 0.1; done
[ "$(val plain roles)" = "[]" ] && [ "$(val plain pub_events)" = 0 ] && [ "$(val plain pub_book_messages)" = 0 ] && ok "wb_nats_stats without NATS: roles none, zeros" ||
	bad "wb_nats_stats without NATS: $(tr '\n' ' ' < "$T/c-plain")"

echo "nats-ops: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
