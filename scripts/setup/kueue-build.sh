#!/usr/bin/env bash
# Builds Kueue's manager (sigs.k8s.io/kueue/cmd/kueue) from its Go module, once, into a cache
# directory outside the clone keyed on its version, and copies its CRDs (config/components/crd/
# bases in the module) beside it. Prints the directory on its last line: bin/kueue and crds/.
# Used by scripts/setup/kueue.sh.
#
# Kueue v0.17.0 requires k8s.io/* v0.35.3; it is built in its own module with those (a 0.35
# client against the test cluster's 1.36.3 API server is within Kubernetes' version skew), so
# nothing of it reaches Hangar's go.mod.
# A clean build on this kind of machine (2 cores shared with other work, Nov 2026, Go 1.26.8):
# see docs/kubernetes.md ("The test cluster") for the measured time. A cached build returns at once.
#
# Usage: kueue-build.sh          build what is missing
#        kueue-build.sh --check  print the directory if everything is built, else exit 1
# Environment: HANGAR_K8S_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/hangar).
set -euo pipefail
kueue=0.17.0
root=${HANGAR_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangar}/kueue-$kueue
say() { echo "kueue-build.sh: $*" >&2; }

have_all() { [[ -x $root/bin/kueue && -s $root/crds/kueue.x-k8s.io_workloads.yaml ]]; }
if have_all; then echo "$root"; exit 0; fi
if [[ ${1:-} == --check ]]; then say "not built yet: $root"; exit 1; fi

mkdir -p "$root/src" "$root/bin"
cd "$root/src"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off
start=$SECONDS
if [[ ! -f go.mod ]]; then
  say "resolving sigs.k8s.io/kueue v$kueue"
  printf 'module hangar.test/kueuetools\n\ngo 1.26.0\n\nrequire sigs.k8s.io/kueue v%s\n' "$kueue" >go.mod.tmp
  mv go.mod.tmp go.mod
  cat >tools.go <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
GO
  say "go mod tidy (downloads the modules)"
  go mod tidy >&2
fi
if [[ ! -x $root/bin/kueue ]]; then
  say "building kueue ($((SECONDS - start)) s so far)"
  v=sigs.k8s.io/kueue/pkg/version
  go build -trimpath -ldflags="-s -w -X $v.GitVersion=v$kueue -X $v.BuildDate=1970-01-01T00:00:00Z" \
    -o "$root/bin/kueue.tmp" sigs.k8s.io/kueue/cmd/kueue >&2
  mv "$root/bin/kueue.tmp" "$root/bin/kueue"
fi
if [[ ! -s $root/crds/kueue.x-k8s.io_workloads.yaml ]]; then
  kdir=$(go mod download -json "sigs.k8s.io/kueue@v$kueue" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [[ -d $kdir/config/components/crd/bases ]] || { say "no CRDs in $kdir"; exit 1; }
  rm -rf "$root/crds.tmp"
  mkdir -p "$root/crds.tmp"
  cp "$kdir"/config/components/crd/bases/*.yaml "$root/crds.tmp/"
  rm -rf "$root/crds"
  mv "$root/crds.tmp" "$root/crds"
fi
say "built in $((SECONDS - start)) s"
have_all || { say "something is missing in $root"; exit 1; }
echo "$root"
