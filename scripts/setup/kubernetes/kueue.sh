# shellcheck shell=bash disable=SC2154 # the variables come from kubernetes.sh
# Kueue in the test cluster, sourced by scripts/setup/kubernetes.sh (it uses its variables and
# helpers: state, run, here, api_port, say, die, start, wait_for, cert, render, fingerprint,
# write_if_changed). Not to be run alone.
#
# Kueue's manager (built by kueue-build.sh) runs as a process on this machine against the API
# server, as the cluster's other daemons do: Kueue's CRDs applied, leader election off, the
# batch/job integration only, internal certificate management off. Its webhook server serves
# with a certificate of the test CA, and NO webhook configuration is registered: Hangar creates
# its Jobs suspended and labelled already, which is what Kueue's Job webhook would do. The
# visibility API (an aggregated API server) is off: the API server has no aggregation layer.
# Kueue hard-codes where its metrics certificate is when it does not make its own:
# /etc/kueue/metrics/certs (the only path outside STATE_DIR).

kueue_metrics_certs=/etc/kueue/metrics/certs

# kueue_binaries: sets kueue_root to the directory kueue-build.sh built (bin/kueue, crds/), or
# to "" when it is not built and may not be (without CI and HANGAR_K8S_BUILD=1: Kueue's tests
# skip, the rest of the cluster still starts).
kueue_binaries() {
  kueue_root=$(bash "$here/kueue-build.sh" --check 2>/dev/null | tail -1) || kueue_root=
  [[ -n $kueue_root ]] && return 0
  if [[ -z ${CI:-} && ${HANGAR_K8S_BUILD:-} != 1 ]]; then
    say "Kueue is not built: run scripts/setup/kueue-build.sh (~10 minutes, once) or set HANGAR_K8S_BUILD=1; its tests will skip"
    return 0
  fi
  say "building Kueue's manager (~10 minutes, once)"
  kueue_root=$(bash "$here/kueue-build.sh" | tail -1)
  [[ -n $kueue_root ]] || die "kueue-build.sh printed no directory"
}

# start_kueue: CRDs, certificates, config, the manager, and the queues of kueue.yaml.
start_kueue() {
  kueue_binaries
  [[ -n $kueue_root ]] || return 0
  local d=$state/kueue certs=$state/pki/kueue webhook_port=$((api_port + 6)) health_port=$((api_port + 7)) metrics_port=$((api_port + 8))
  mkdir -p "$d" "$certs" "$kueue_metrics_certs"
  # Server-side: the Workload CRD is too large for the annotation client-side apply writes.
  # Applied again only when they changed (applying 1.6 MB of CRDs takes seconds).
  local crds
  crds=$(fingerprint "$kueue_root"/crds/*.yaml)
  if [[ $(cat "$d/crds.applied" 2>/dev/null) != "$crds" ]] || ! kubectl get crd workloads.kueue.x-k8s.io >/dev/null 2>&1; then
    kubectl apply --server-side --force-conflicts -f "$kueue_root/crds" >/dev/null
    kubectl wait --for condition=established --timeout 60s -f "$kueue_root/crds" >/dev/null ||
      die "Kueue's CRDs are not established"
    echo "$crds" >"$d/crds.applied"
  fi
  # In a directory of its own: the API server's fingerprint covers pki/*.crt.
  cert kueue/tls /CN=kueue-webhook 'keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n'
  local f
  for f in crt key; do
    cmp -s "$certs/tls.$f" "$kueue_metrics_certs/tls.$f" || cp "$certs/tls.$f" "$kueue_metrics_certs/tls.$f"
  done
  write_if_changed "$d/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:$health_port"}
metrics: {bindAddress: "127.0.0.1:$metrics_port"}
webhook: {host: 127.0.0.1, port: $webhook_port, certDir: "$certs"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
integrations: {frameworks: [batch/job]}
featureGates: {VisibilityOnDemand: false}
YAML
  start kueue "$(fingerprint "$d/config.yaml" "$run/system.kubeconfig" "$certs/tls.crt")" "$kueue_root/bin/kueue" \
    --config "$d/config.yaml" --kubeconfig "$run/system.kubeconfig" --zap-log-level info
  wait_for kueue 90 curl -fsS "http://127.0.0.1:$health_port/readyz" ||
    die "Kueue's manager is not ready on 127.0.0.1:$health_port; see $state/log/kueue.log"
  kubectl apply -f "$here/kubernetes/kueue.yaml" >/dev/null
  wait_for "LocalQueue team-a" 60 kueue_queue_active ||
    die "Kueue has not made LocalQueue team-a active: $(kubectl -n hangar-test get localqueue team-a -o jsonpath='{.status.conditions}' 2>&1); see $state/log/kueue.log"
}

kueue_queue_active() {
  [[ $(kubectl -n hangar-test get localqueue team-a -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null) == True ]]
}
