#!/usr/bin/env bash
# Run each benchmark program; they print their own figures.
set -eu
for b in "$@"; do
	echo "== $(basename "$b")"
	"$b"
done
