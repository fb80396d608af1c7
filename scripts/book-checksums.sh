#!/usr/bin/env bash
# The books' checksums (bench_file) on every real capture in pcaps/, on a
# generated ITCH day and on a generated five-venue (ITCH + PITCH) day: run
# before and after a change to the book code; equal output means equal
# books, and equal level updates event for event. Timings are left out.
#   scripts/book-checksums.sh [BUILD_DIR] [GENERATED_MESSAGES]
set -eu
build=${1:-build}
messages=${2:-200000}
here=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/bench/bench_file
tmp=$(mktemp -d /tmp/wb-book-checksums.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# name, then bench_file's arguments
sums() {
	local name=$1 out
	shift
	out=$("$bench" --runs 1 --rows books,superbook,pipeline "$@")
	printf '%s: %s %s %s\n' "$name" \
		"$(echo "$out" | grep '^decode + venue books  ' | sed 's/.*\(live orders.*\)  (.*/\1/')" \
		"$(echo "$out" | grep '^pipeline' | sed 's/.*\(super-book [0-9a-f]*\).*/\1/')" \
		"$(echo "$out" | grep -q '^books equal across rows: yes' && echo rows-equal || echo ROWS-DIFFER)"
}

for pcap in "$here"/pcaps/*/*.pcap; do
	sums "$(basename "$(dirname "$pcap")")/$(basename "$pcap")" \
		--feeds "$here/tests/bench/captures.feeds.conf" "$pcap"
done
sums "generated itch $messages" --generate "$messages"
"$build/wb-gen" -q -p day -n "$messages" --pitch -o "$tmp/five.pcap"
sums "generated five venues $messages" --feeds "$here/feeds.conf" "$tmp/five.pcap"
