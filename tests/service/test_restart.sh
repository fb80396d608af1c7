#!/usr/bin/env bash
# Issue 14.3: readers survive wirebookd restarts. nbbo_watch and wb-book
# started against one run keep going through a restart (no "invalid
# argument", no exit on WB_ENOSHM) and end showing the new run's NBBO; after
# kill -9 without a restart they say the book is stale.
. "$(dirname "$0")/lib.sh"

"$B/wb-gen" -p demo -s 7 --pitch -o "$T/day1.pcap" >/dev/null 2>&1
"$B/wb-gen" -p demo -s 8 --pitch -o "$T/day2.pcap" >/dev/null 2>&1
start_wbd() { # CAPTURE LOG
	bg "$B/wirebookd" --pcap "$1" --feeds "$ROOT/feeds.conf" --shm "$SHM" --no-pin >/dev/null 2>"$2"
	wbd=$!
	wait_for 30 grep -q 'source ended' "$2" || bad "wirebookd did not finish $1"
}

# The watcher starts before any book exists: it must wait, not exit.
bg "$B/examples/nbbo_watch" AAPL "$SHM" >"$T/watch.out" 2>"$T/watch.err"
watch=$!
bg "$B/wb-book" --shm "$SHM" --wait-done 30 --interval 50 AAPL >"$T/book.out" 2>"$T/book.err"
book=$!
sleep 0.3
start_wbd "$T/day1.pcap" "$T/wbd1.err"
check "nbbo_watch shows the first run's NBBO" wait_for 10 grep -q '^AAPL [0-9]' "$T/watch.out"

kill -TERM "$wbd"; wait "$wbd" 2>/dev/null
sleep 0.3
start_wbd "$T/day2.pcap" "$T/wbd2.err"
sleep 0.5
check "nbbo_watch is still running after the restart" kill -0 "$watch"
check "wb-book is still running after the restart" kill -0 "$book"

# The watcher's last line is the new run's NBBO, as wb-book --once sees it.
nbbo=$("$B/wb-book" --shm "$SHM" --once AAPL | awk '/^NBBO/ { print $5, $3, $8, $10 }')
want="AAPL $(echo "$nbbo" | awk '{ print $1 " x " $2 " / " $3 " x " $4 }')"
got=$(grep '^AAPL [0-9]' "$T/watch.out" | tail -1)
[ -n "$nbbo" ] && [ "$got" = "$want" ] && ok "nbbo_watch followed the restart ($got)" ||
	bad "nbbo_watch shows '$got', the new book '$want'"
grep -q 'invalid argument' "$T/book.out" "$T/book.err" && bad "wb-book printed 'invalid argument'" ||
	ok "wb-book never printed 'invalid argument'"
check "wb-book shows the new book live" sh -c "tail -60 '$T/book.out' | grep -q 'wirebook.*: live\|: live'"
grep -q 'restarts followed [1-9]' "$T/book.out" && ok "wb-book says it followed a restart" ||
	bad "wb-book does not say it followed a restart"

# kill -9, no restart: no heartbeat any more, so the readers say stale.
kill -KILL "$wbd"; wait "$wbd" 2>/dev/null
check "nbbo_watch reports the book stale" wait_for 10 grep -q 'AAPL book stale' "$T/watch.out"
check "wb-book flags the book STALE" wait_for 10 grep -q 'STALE: no heartbeat' "$T/book.out"
"$B/wb-book" --shm "$SHM" --once AAPL >"$T/once.out" 2>&1
check "wb-book --once says stale" grep -q ': stale' "$T/once.out"
finish
