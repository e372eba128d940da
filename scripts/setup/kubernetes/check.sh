#!/usr/bin/env bash
# Proves that the test cluster of scripts/setup/kubernetes.sh does what the kubernetes target's
# tests rely on, the way a user would see it (kubectl output, pod status). On hangar-kubelet:
# a pod runs python3 and fetches from a server on this machine's 127.0.0.1 (hostNetwork) and its
# output shows in kubectl logs; an Indexed Job with 2 completions completes; a binary in a
# read-only hostPath volume runs and the volume refuses writes; a terminationMessagePath file
# shows in the container's terminated state. On the kwok nodes: a GPU request stays Pending with
# "Insufficient nvidia.com/gpu", a Job completes, a pod labelled for the chaos stage fails.
# The read-only user may list pods and may not create them.
# Prints "N passed, N failed" last and exits non-zero when a check failed.
#
# Usage: check.sh [KUBECONFIG]   (default: $KUBECONFIG, else /var/tmp/hangar-test/k8s/admin.kubeconfig)
set -euo pipefail
export KUBECONFIG=${1:-${KUBECONFIG:-${HANGAR_TEST_STATE:-/var/tmp/hangar-test}/k8s/admin.kubeconfig}}
[[ -s $KUBECONFIG ]] || { echo "check.sh: no kubeconfig at $KUBECONFIG" >&2; exit 1; }
bin=$(bash "$(dirname "$0")/../k8s-build.sh" --check) || { echo "check.sh: kubectl is not built (k8s-build.sh)" >&2; exit 1; }
export PATH=$bin:$PATH
command -v jq >/dev/null || { echo "check.sh: needs jq (apt-get install jq)" >&2; exit 1; }
ns=hangar-test
k() { kubectl --context hangar-test -n "$ns" "$@"; }
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null
  k delete pod,job -l hangar.test/check=1 --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
k delete pod,job -l hangar.test/check=1 --ignore-not-found --wait=true >/dev/null 2>&1 || true

# wait_jsonpath OBJECT JSONPATH WANT SECONDS: polls until the field equals WANT.
wait_jsonpath() {
  local deadline=$((SECONDS + $4))
  while ((SECONDS < deadline)); do
    [[ $(k get "$1" -o "jsonpath=$2" 2>/dev/null) == "$3" ]] && return 0
    sleep 0.2
  done
  return 1
}

# real_pod NAME IMAGE SCRIPT [HOSTPATH_DIR]: a pod on hangar-kubelet running sh -c SCRIPT, with
# HOSTPATH_DIR mounted read-only at /opt/hangar/bin when given (JSON by jq: any script is safe).
real_pod() {
  jq -n --arg name "$1" --arg image "$2" --arg script "$3" --arg dir "${4:-}" '{
    apiVersion: "v1", kind: "Pod",
    metadata: {name: $name, labels: {"hangar.test/check": "1"}},
    spec: {
      restartPolicy: "Never", hostNetwork: true,
      nodeSelector: {"hangar.test/kind": "real"},
      tolerations: [{key: "hangar.test/real", operator: "Exists", effect: "NoSchedule"}],
      containers: [{name: "main", image: $image, imagePullPolicy: "Never", command: ["sh", "-c", $script]}]
    }
  } | if $dir == "" then . else
      .spec.containers[0].volumeMounts = [{name: "bin", mountPath: "/opt/hangar/bin", readOnly: true}]
      | .spec.volumes = [{name: "bin", hostPath: {path: $dir, type: "Directory"}}] end'
}

# 1. python3 and a server on the host's loopback, output in kubectl logs.
mkdir -p "$work/www"
echo "hello from the host" >"$work/www/hello.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" "$port" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/hello.txt" >/dev/null 2>&1 && break; sleep 0.1; done
real_pod hangar-check-python localhost/hangar-python:latest "python3 -c 'print(42)'
python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://127.0.0.1:$port/hello.txt\").read().decode().strip())'" |
  k apply -f - >/dev/null
if wait_jsonpath pod/hangar-check-python '{.status.phase}' Succeeded 120; then
  logs=$(k logs hangar-check-python)
  if grep -qx 42 <<<"$logs" && grep -qx "hello from the host" <<<"$logs"; then
    ok "pod on hangar-kubelet: python3 ran, fetched from 127.0.0.1:$port, kubectl logs shows it"
  else bad "pod logs: $logs"; fi
else bad "pod hangar-check-python: $(k get pod hangar-check-python -o jsonpath='{.status}' 2>&1)"; fi

# 2. An Indexed Job with 2 completions on the real node.
cat <<'EOF' | k apply -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: hangar-check-indexed, labels: {hangar.test/check: "1"}}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata: {labels: {hangar.test/check: "1"}}
    spec:
      restartPolicy: Never
      hostNetwork: true
      nodeSelector: {hangar.test/kind: real}
      tolerations: [{key: hangar.test/real, operator: Exists, effect: NoSchedule}]
      containers:
      - name: main
        image: localhost/hangar-busybox:latest
        imagePullPolicy: Never
        command: [sh, -c, 'echo "rank $JOB_COMPLETION_INDEX"']
EOF
if wait_jsonpath job/hangar-check-indexed '{.status.succeeded}' 2 120; then
  logs=$(k logs -l job-name=hangar-check-indexed --prefix=false | sort)
  if [[ $logs == $'rank 0\nrank 1' ]]; then ok "Indexed Job, 2 completions on hangar-kubelet: $(tr '\n' ' ' <<<"$logs")"
  else bad "Indexed Job logs: $logs"; fi
else bad "Indexed Job: $(k get job hangar-check-indexed -o jsonpath='{.status}' 2>&1)"; fi

# 3. A binary from a read-only hostPath volume runs (the supervisor is mounted like that).
mkdir -p "$work/bin"
cp "$(command -v busybox)" "$work/bin/busybox"
real_pod hangar-check-hostpath localhost/hangar-python:latest \
  '/opt/hangar/bin/busybox echo hostpath-ran; touch /opt/hangar/bin/x 2>/dev/null && echo writable || echo read-only' \
  "$work/bin" | k apply -f - >/dev/null
if wait_jsonpath pod/hangar-check-hostpath '{.status.phase}' Succeeded 120 &&
  [[ $(k logs hangar-check-hostpath) == $'hostpath-ran\nread-only' ]]; then
  ok "a binary in a read-only hostPath volume runs, and the volume refuses writes"
else bad "hostPath pod: $(k logs hangar-check-hostpath 2>&1) $(k get pod hangar-check-hostpath -o jsonpath='{.status.phase}' 2>&1)"; fi

# 4. terminationMessagePath reaches the container's terminated state.
real_pod hangar-check-termination localhost/hangar-busybox:latest \
  'echo "supervisor: exit 3 (oom)" > /dev/termination-log; exit 3' | k apply -f - >/dev/null
want='3 supervisor: exit 3 (oom)'
if wait_jsonpath pod/hangar-check-termination '{.status.phase}' Failed 120 &&
  wait_jsonpath pod/hangar-check-termination \
    '{.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.message}' "$want" 10; then
  ok "terminationMessagePath content in .state.terminated.message, exit code 3"
else bad "termination message: $(k get pod hangar-check-termination -o jsonpath='{.status.containerStatuses}' 2>&1)"; fi

# 5. kwok: no GPUs, Jobs complete, the chaos stage fails a pod.
kwok_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {hangar.test/check: "1" $2}}
spec:
  restartPolicy: Never
  nodeSelector: {hangar.test/kind: kwok}
  containers:
  - name: main
    image: localhost/hangar-busybox:latest
    resources: {limits: {$3}}
EOF
}
kwok_pod hangar-check-gpu '' 'nvidia.com/gpu: 1' | k apply -f - >/dev/null
if wait_jsonpath pod/hangar-check-gpu '{.status.conditions[?(@.type=="PodScheduled")].reason}' Unschedulable 60 &&
  [[ $(k get pod hangar-check-gpu -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}') == *"Insufficient nvidia.com/gpu"* ]]; then
  ok "a GPU pod is Pending: $(k get pod hangar-check-gpu -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
else bad "GPU pod: $(k get pod hangar-check-gpu -o jsonpath='{.status}' 2>&1)"; fi
kwok_pod hangar-check-chaos ', pod-container-running-failed.stage.kwok.x-k8s.io: "true"' 'cpu: 100m' |
  k apply -f - >/dev/null
if wait_jsonpath pod/hangar-check-chaos '{.status.phase}' Failed 60; then ok "a kwok pod with the chaos label fails"
else bad "chaos pod: $(k get pod hangar-check-chaos -o jsonpath='{.status.phase}' 2>&1)"; fi
k create job hangar-check-kwok --image localhost/hangar-busybox:latest -- true >/dev/null
k patch job hangar-check-kwok --type merge -p '{"metadata":{"labels":{"hangar.test/check":"1"}}}' >/dev/null
if wait_jsonpath job/hangar-check-kwok '{.status.succeeded}' 1 60; then ok "a Job on the kwok nodes completes"
else bad "kwok Job: $(k get job hangar-check-kwok -o jsonpath='{.status}' 2>&1)"; fi

# 6. The read-only user.
if kubectl --context hangar-readonly -n "$ns" get pods >/dev/null 2>&1 &&
  ! out=$(kubectl --context hangar-readonly -n "$ns" create configmap hangar-check-ro 2>&1) &&
  [[ $out == *forbidden* ]]; then
  ok "hangar-readonly may list pods and may not create: $(head -c 120 <<<"$out")"
else bad "read-only user: $out"; fi

echo "$passed passed, $failed failed"
((failed == 0))
