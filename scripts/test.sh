#!/usr/bin/env bash
# The project's test command (README, `make test`, .ci/run). It installs and starts what the
# tests need (idempotently), then runs every test. With CI set, a missing dependency fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup/deps.sh

echo "== go vet"
go vet ./...
echo "== go test"
go test -count=1 -timeout 20m ./...
