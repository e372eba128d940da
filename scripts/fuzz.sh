#!/usr/bin/env bash
# Runs every fuzz target of the project for the given time each (default 5s): `make fuzz`, and
# CI briefly. The seed corpora also run in every plain `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-5s}
start=$SECONDS
n=0
# Packages with fuzz targets, found by name rather than by `go test -list` (which builds every
# package's tests first).
for dir in $(grep -rl --include='*_test.go' '^func Fuzz' cmd internal | xargs -n1 dirname | sort -u); do
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
    echo "== ./$dir $f"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "./$dir"
    n=$((n + 1))
  done
done
echo "fuzzed $n targets for $t each in $((SECONDS - start))s"
