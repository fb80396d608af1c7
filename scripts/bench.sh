#!/usr/bin/env bash
# Run each benchmark program; they print their own figures. bench_file
# takes a day file: make bench-file runs it (mk/bench.mk).
set -eu
for b in "$@"; do
	case $(basename "$b") in
	bench_file) continue ;;
	esac
	echo "== $(basename "$b")"
	"$b"
done
