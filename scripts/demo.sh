#!/usr/bin/env bash
# make demo: generate a capture, build the books from it with wirebookd,
# print the Super-Book of a few symbols and the per-feed stats.
# Run from the top of the tree after `make all`.
set -euo pipefail

B=${BUILD:-build}
tmp=$(mktemp -d /tmp/wirebook-demo.XXXXXX)
shm="wirebook-demo-$$"
pid=

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	rm -f "/dev/shm/$shm"
}
trap cleanup EXIT

if [ -x "$B/wb-gen" ]; then
	capture="$tmp/demo.pcap"
	# Nasdaq ITCH, the four Cboe venues over PITCH and NYSE and Arca over
	# XDP when wb-gen can: then the Super-Book consolidates seven venues.
	# The session is cut just before its close: at their close the XDP
	# venues cancel every order (Security Status X), so a book of the whole
	# day would show NYSE and Arca empty.
	multi=()
	help=$("$B/wb-gen" --help 2>&1)
	grep -q -- '--pitch' <<<"$help" && multi=(--pitch)
	grep -q -- '--xdp' <<<"$help" && multi+=(--xdp)
	grep -q -- '--until' <<<"$help" && multi+=(--until 09:30:09)
	echo "== generating a demo session: $B/wb-gen --profile demo ${multi[*]}"
	"$B/wb-gen" --profile demo --seed 7 "${multi[@]}" -o "$capture"
	symbols=(AAPL MSFT SPY)
else
	capture=pcaps/itch50/Multiple.Packets.pcap
	echo "== $B/wb-gen not built: using the real sample $capture"
	symbols=()
fi

echo "== building the books: $B/wirebookd --pcap $capture --shm $shm"
"$B/wirebookd" --pcap "$capture" --feeds feeds.conf --shm "$shm" --no-pin \
	>"$tmp/wirebookd.out" 2>&1 &
pid=$!

# The book appears when wirebookd is up; --wait-done waits for the end of the file.
for _ in $(seq 1 200); do
	[ -e "/dev/shm/$shm" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/wirebookd.out"; exit 1; }
	sleep 0.05
done

echo "== the Super-Book (wb-book --once)"
echo
"$B/wb-book" --shm "$shm" --once --wait-done 30 --depth 5 --top 3 "${symbols[@]}"

echo "== stopping wirebookd (SIGINT): its final per-feed stats"
kill -INT "$pid"
wait "$pid"
pid=
cat "$tmp/wirebookd.out"
echo "== demo done"
