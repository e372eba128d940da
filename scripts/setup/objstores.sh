#!/usr/bin/env bash
# The object stores of the test bed (issue 31), real servers run by the tests themselves
# (internal/objstore/objtest starts each once per test binary): versitygw (an S3 gateway over a
# folder, SigV4 auth), fake-gcs-server (Google Cloud Storage's JSON and XML APIs) and Azurite (the
# Azure Storage emulator; its blob service). Idempotent: built or installed once into a cache
# directory keyed by their versions, outside the clone. Prints the variables the tests read, one
# `NAME=value` a line (scripts/test.sh exports them).
set -euo pipefail
versitygw=v1.8.0
fakegcs=v1.56.1
azurite=3.37.0
dir=${XDG_CACHE_HOME:-$HOME/.cache}/hangar/objstores-vgw$versitygw-gcs$fakegcs-az$azurite
mkdir -p "$dir/bin"

if [[ ! -x $dir/bin/versitygw ]]; then
  command -v go >/dev/null || { echo "objstores.sh: go is missing" >&2; exit 1; }
  echo "objstores.sh: building versitygw $versitygw (a few minutes)" >&2
  # -mod=mod: go install of a module at a version ignores the clone's vendoring and go.mod.
  GOBIN=$dir/bin GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$versitygw" >&2
fi
if [[ ! -x $dir/bin/fake-gcs-server ]]; then
  echo "objstores.sh: building fake-gcs-server $fakegcs" >&2
  GOBIN=$dir/bin GOFLAGS=-mod=mod go install "github.com/fsouza/fake-gcs-server@$fakegcs" >&2
fi
if [[ ! -f $dir/azurite/node_modules/azurite/package.json ]]; then
  command -v npm >/dev/null || { echo "objstores.sh: npm is missing (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir/azurite"
  npm install --no-audit --no-fund --loglevel=error --prefix "$dir/azurite" "azurite@$azurite" >&2
fi
echo "objstores: versitygw $versitygw, fake-gcs-server $fakegcs, azurite $(node -p "require('$dir/azurite/node_modules/azurite/package.json').version")" >&2
echo "HANGAR_VERSITYGW=$dir/bin/versitygw"
echo "HANGAR_FAKE_GCS=$dir/bin/fake-gcs-server"
echo "HANGAR_AZURITE=$dir/azurite/node_modules/.bin/azurite-blob"
