#!/usr/bin/env bash
# Builds the Kubernetes test stack from Go modules, once, into a cache directory outside the
# clone keyed on the versions (no prebuilt binaries can be downloaded here): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl and kwok; hangar-pause, the static
# program of the test cluster's sandbox ("pause") image; and kwok-stages.yaml, kwok's pod and node
# stages (kwok v0.8 has none built in) taken from its module. Prints the bin directory on its
# last line. Used by scripts/setup/kubernetes.sh.
#
# A clean build (empty bin directory) on this kind of machine, 2 cores
# shared with other work, Nov 2026, Go 1.26.8: go mod tidy (downloading) 21 s, then etcd 76 s, kube-apiserver
# 324 s, kube-controller-manager 87 s, kube-scheduler 8 s, kubelet 51 s, kubectl 82 s, kwok 21 s:
# 670 s in all (~11 minutes; expect up to ~20 on a busier machine or a cold module cache). The
# bin directory is ~520 MB; GOCACHE grows by a few GB. Changing only -ldflags relinks in ~40 s. A
# cached build returns at once.
#
# Usage: k8s-build.sh          build what is missing
#        k8s-build.sh --check  print the bin directory if everything is built, else exit 1
# Environment: HANGAR_K8S_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/hangar).
set -euo pipefail
# etcd: the server module k8s.io/kubernetes v1.36.3 resolves to (MVS), so `go mod tidy` keeps it.
k8s=1.36.3 staging=0.36.3 etcd=3.6.8 kwok=0.8.0
root=${HANGAR_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangar}/k8s-$k8s-etcd$etcd-kwok$kwok
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kwok hangar-pause)
say() { echo "k8s-build.sh: $*" >&2; }

have_all() {
  local b
  for b in "${bins[@]}"; do [[ -x $root/bin/$b ]] || return 1; done
  [[ -s $root/kwok-stages.yaml ]]
}
if have_all; then echo "$root/bin"; exit 0; fi
if [[ ${1:-} == --check ]]; then say "not built yet: $root"; exit 1; fi

mkdir -p "$root/src" "$root/bin"
cd "$root/src"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off
if [[ ! -f go.mod ]]; then
  say "resolving k8s.io/kubernetes v$k8s, etcd v$etcd, kwok v$kwok"
  kdir=$(go mod download -json "k8s.io/kubernetes@v$k8s" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [[ -n $kdir ]] || { say "cannot download k8s.io/kubernetes@v$k8s"; exit 1; }
  {
    echo "module hangar.test/k8stools"
    echo "go 1.26.0"
    echo "require ("
    echo "  k8s.io/kubernetes v$k8s"
    echo "  go.etcd.io/etcd/server/v3 v$etcd"
    echo "  sigs.k8s.io/kwok v$kwok"
    echo ")"
    echo "replace ("
    grep -E '^\s*k8s.io/.* => ./staging' "$kdir/go.mod" | awk -v v="v$staging" '{print "  " $1 " => " $1 " " v}'
    echo ")"
  } >go.mod.tmp
  mv go.mod.tmp go.mod
  cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
GO
  say "go mod tidy (downloads the modules)"
  go mod tidy >&2
fi

# Without these the binaries call themselves v0.0.0-master+$Format:%H$, and the kubelet reports
# that as the node's kubeletVersion.
kver=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kver+=" -X $p.gitVersion=v$k8s -X $p.gitMajor=${k8s%%.*} -X $p.gitMinor=$(cut -d. -f2 <<<"$k8s")"
  kver+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
start=$SECONDS
for pkg in go.etcd.io/etcd/server/v3:etcd k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler k8s.io/kubernetes/cmd/kubelet:kubelet \
  k8s.io/kubernetes/cmd/kubectl:kubectl sigs.k8s.io/kwok/cmd/kwok:kwok; do
  name=${pkg##*:}
  [[ -x $root/bin/$name ]] && continue
  say "building $name ($((SECONDS - start)) s so far)"
  flags="-s -w"
  [[ $pkg == k8s.io/* ]] && flags+=$kver
  go build -trimpath -ldflags="$flags" -o "$root/bin/$name.tmp" "${pkg%%:*}" >&2
  mv "$root/bin/$name.tmp" "$root/bin/$name"
done

# The sandbox program: holds a pod's namespaces, reaps orphans as PID 1, exits on SIGINT/SIGTERM.
if [[ ! -x $root/bin/hangar-pause ]]; then
  mkdir -p "$root/pause"
  cat >"$root/pause/main.go" <<'GO'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
  printf 'module hangar.test/pause\n\ngo 1.26.0\n' >"$root/pause/go.mod"
  (cd "$root/pause" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$root/bin/hangar-pause.tmp" .)
  mv "$root/bin/hangar-pause.tmp" "$root/bin/hangar-pause"
fi

# kwok's stages: node initialisation and heartbeat, the general pod life cycle (Jobs' pods
# complete), and the chaos stage that fails a pod labelled
# pod-container-running-failed.stage.kwok.x-k8s.io: "true".
if [[ ! -s $root/kwok-stages.yaml ]]; then
  kdir=$(go mod download -json "sigs.k8s.io/kwok@v$kwok" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  st=$kdir/kustomize/stage
  for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
    pod/general/pod-create pod/general/pod-init-container-running pod/general/pod-init-container-completed \
    pod/general/pod-ready pod/general/pod-complete pod/general/pod-delete \
    pod/chaos/pod-container-running-failed; do
    [[ -s $st/$f.yaml ]] || { say "kwok stage $st/$f.yaml is missing"; exit 1; }
    echo "---"
    cat "$st/$f.yaml"
  done >"$root/kwok-stages.yaml.tmp"
  mv "$root/kwok-stages.yaml.tmp" "$root/kwok-stages.yaml"
fi
say "built in $((SECONDS - start)) s"
have_all || { say "some binaries are missing"; exit 1; }
echo "$root/bin"
