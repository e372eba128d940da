#!/usr/bin/env bash
# Runs a private Kubernetes test cluster on this machine for the kubernetes target's tests,
# idempotently: etcd 3.6, kube-apiserver (RBAC and Node authorization, token auth),
# kube-controller-manager, kube-scheduler and kwok, all built from Go modules by k8s-build.sh.
# Nodes:
#   kwok-node-1, kwok-node-2  fake (kwok): cpu 8, memory 32Gi, pods 110, no GPUs (a GPU request
#                             stays Pending: "Insufficient nvidia.com/gpu"); label
#                             hangar.test/kind=kwok. A pod labelled
#                             pod-container-running-failed.stage.kwok.x-k8s.io: "true" fails.
#   hangar-kubelet            a real kubelet on Debian's containerd and runc; label
#                             hangar.test/kind=real, taint hangar.test/real=true:NoSchedule.
#                             Images are imported, never pulled (imagePullPolicy: Never):
#                             localhost/hangar-python:latest and localhost/hangar-busybox:latest
#                             (from podman, see containers.sh) and the sandbox image.
# Kueue 0.17 (kueue-build.sh; kubernetes/kueue.sh says how it runs): LocalQueue team-a in
# hangar-test, ClusterQueue hangar-test with one CPU and 4Gi on the kwok nodes (flavor kwok).
# Namespace hangar-test exists and has its default service account when this returns.
# Prints on its last line the admin kubeconfig (STATE_DIR/admin.kubeconfig): context hangar-test
# (token user hangar-admin, system:masters) and context hangar-readonly (token user
# hangar-readonly, bound to the built-in view ClusterRole); readonly.kubeconfig holds only the latter.
# Running it again keeps what already runs (~3 s); a changed command line or config restarts
# that daemon. kubernetes/check.sh proves the cluster works as the tests need it.
#
# Usage: kubernetes.sh [STATE_DIR]        (default $HANGAR_TEST_STATE/k8s, else /var/tmp/hangar-test/k8s)
#        kubernetes.sh --stop [STATE_DIR] stop everything started from STATE_DIR, the pods'
#                                         containers too, and unmount what they left
#        kubernetes.sh --import IMAGE [STATE_DIR]  copy a podman image into the running
#                                         cluster's containerd (tests build images there)
# Environment: HANGAR_K8S_ETCD_PORT (default 23790; peer +1), HANGAR_K8S_API_PORT (default 64430;
# controller-manager +1, scheduler +2, kwok +3, kubelet +4, kubelet healthz +5, Kueue's webhook
# +6, health +7, metrics +8), HANGAR_K8S_BUILD=1 to build missing binaries without CI (~11-20
# minutes, once; Kueue's ~10 more).
# A missing dependency (binaries, packages, root) is an error with CI set; without CI it prints
# why and exits 0 with nothing on stdout, so the Kubernetes tests skip.
#
# One real kubelet per machine: a second cluster's kubelet would share the kubepods cgroups.
# Everything lives under STATE_DIR except what the kubelet and containerd 1.6 hard-code:
# symlinks in /var/log/containers, /var/lib/kubelet/device-plugins, /var/lib/cni/results,
# the shim sockets in /run/containerd/s, and Kueue's metrics certificate in /etc/kueue/metrics/certs.
set -euo pipefail

stop=0 import=
if [[ ${1:-} == --stop ]]; then stop=1; shift; fi
if [[ ${1:-} == --import ]]; then import=${2:?--import needs an image}; shift 2; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
here=$(cd "$(dirname "$0")" && pwd)
state=${1:-${HANGAR_TEST_STATE:-/var/tmp/hangar-test}/k8s}
etcd_port=${HANGAR_K8S_ETCD_PORT:-23790}
api_port=${HANGAR_K8S_API_PORT:-64430}
node=hangar-kubelet
fake_nodes=(kwok-node-1 kwok-node-2)
pause_image=localhost/hangar-pause:1
images=(localhost/hangar-python:latest localhost/hangar-busybox:latest)
bridge=hangar-cni0
pod_cidr=10.203.0.0/24

say() { echo "kubernetes.sh: $*" >&2; }
die() { say "$*"; exit 1; }
missing() { # a missing dependency: fatal under CI, a notice otherwise
  say "$*"
  if [[ -n ${CI:-} ]]; then exit 1; fi
  say "(CI is not set: the Kubernetes tests will skip)"
  exit 0
}

# The state path reaches TOML, YAML, JSON and command lines unquoted: allow only plain characters.
[[ $state =~ ^[A-Za-z0-9._/-]+$ ]] || die "state directory '$state': use only letters, digits and . _ / -"
for p in "$etcd_port" "$api_port"; do
  if ! [[ $p =~ ^[1-9][0-9]{0,4}$ ]] || ((p >= 65527)); then
    die "port '$p' (HANGAR_K8S_ETCD_PORT, HANGAR_K8S_API_PORT) is not a number from 1 to 65526"
  fi
done
kcm_port=$((api_port + 1)) sched_port=$((api_port + 2)) kwok_port=$((api_port + 3))
kubelet_port=$((api_port + 4)) kubelet_healthz_port=$((api_port + 5))
mkdir -p "$state"
state=$(cd "$state" && pwd)
run=$state/run
sock=$state/containerd/containerd.sock
export KUBECONFIG=$state/admin.kubeconfig

# --- processes -------------------------------------------------------------------------------

# pid_alive NAME: the daemon recorded in run/NAME.pid runs, and is still the program we started
# (a stale pid file after a reboot may name someone else's process).
pid_alive() {
  local p exe
  [[ -s $run/$1.pid && -s $run/$1.exe ]] || return 1
  p=$(<"$run/$1.pid")
  exe=$(readlink "/proc/$p/exe" 2>/dev/null) || return 1
  [[ ${exe% (deleted)} == "$(<"$run/$1.exe")" ]]
}

# stop_one NAME: SIGTERM, up to 10 s to exit, then SIGKILL.
stop_one() {
  local p
  if pid_alive "$1"; then
    p=$(<"$run/$1.pid")
    kill "$p" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$run/$1.pid"
}

# start NAME FINGERPRINT CMD...: keeps NAME running when it already runs with the same command
# line and fingerprint (a hash of its config files), else (re)starts it in its own session, so
# that a test runner's Ctrl-C or process-group kill leaves the cluster up.
start() {
  local name=$1 want log=$state/log/$1.log
  want="$2 $(printf '%q ' "${@:3}")"
  shift 2
  if pid_alive "$name" && [[ $(<"$run/$name.args") == "$want" ]]; then return 0; fi
  stop_one "$name"
  [[ -f $log ]] && mv -f "$log" "$log.1"
  printf '%s' "$want" >"$run/$name.args"
  readlink -f "$1" >"$run/$name.exe"
  setsid "$@" >"$log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
  say "started $name (pid $!, log $log)"
}

# wait_for WHAT SECONDS CMD...: polls CMD every 0.1 s until it succeeds or the deadline passes.
wait_for() {
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then say "timed out waiting for $what"; return 1; fi
    sleep 0.1
  done
}

ctr_() { ctr --address "$sock" --namespace k8s.io "$@"; }

# --- --stop ----------------------------------------------------------------------------------

# kill_pod_containers: with the kubelet stopped, kills and deletes every task of our containerd
# (which unmounts their root filesystems), then kills whatever is left in the cgroups of our
# pods (named after the pod UIDs the kubelet keeps under its root directory).
kill_pod_containers() {
  local id dir d p
  if pid_alive containerd; then
    for id in $(timeout 20 ctr --address "$sock" --namespace k8s.io tasks ls -q 2>/dev/null); do
      timeout 10 ctr --address "$sock" --namespace k8s.io tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
      timeout 10 ctr --address "$sock" --namespace k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
  for dir in "$state"/kubelet/pods/*/; do
    [[ -d $dir ]] || continue
    dir=${dir%/}
    for d in /sys/fs/cgroup/pids/kubepods{,/burstable,/besteffort}/"pod${dir##*/}"; do
      [[ -d $d ]] || continue
      find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r p; do kill -9 "$p" 2>/dev/null || true; done
    done
  done
}

# kill_shims: the runc shims of our containerd (their command line names our socket).
kill_shims() {
  local f p
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}
    p=${p%/cmdline}
    if [[ $(tr '\0' ' ' <"$f" 2>/dev/null) == *"containerd-shim-runc-v2 "*"-address $sock "* ]]; then
      kill -9 "$p" 2>/dev/null || true
    fi
  done
}

# unmount_state: every mount under the state directory (pod volumes, container root
# filesystems, sandbox /dev/shm, network namespaces), deepest first.
unmount_state() {
  local m
  findmnt -rn -o TARGET | awk -v p="$state/" 'index($0, p) == 1' | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cannot unmount $m"
  done
}

stop_all() {
  stop_one kubelet
  kill_pod_containers
  stop_one containerd
  kill_shims
  unmount_state
  ip link del "$bridge" 2>/dev/null || true
  local d
  for d in kueue kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_one "$d"; done
}

mkdir -p "$run" "$state/log"
if ((stop)); then
  stop_all
  say "stopped the cluster of $state"
  exit 0
fi

# shellcheck source-path=SCRIPTDIR source=kubernetes/steps.sh
source "$here/kubernetes/steps.sh"
# shellcheck source-path=SCRIPTDIR source=kubernetes/kueue.sh
source "$here/kubernetes/kueue.sh"
if [[ -n $import ]]; then
  pid_alive containerd || die "the cluster of $state is not running (run kubernetes.sh first)"
  import_image "$import"
  exit 0
fi

t0=$SECONDS
need_deps
binaries
export PATH=$bin:$PATH
make_pki
make_kubeconfigs
start_control_plane
start_kwok
start_node
wait_cluster
start_kueue
say "cluster up in $((SECONDS - t0)) s: $(kubectl get nodes --no-headers 2>/dev/null | awk '{printf "%s:%s ", $1, $2}')"
echo "$KUBECONFIG"
