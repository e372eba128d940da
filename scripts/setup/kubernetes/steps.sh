# shellcheck shell=bash disable=SC2154 # the variables come from kubernetes.sh
# The start steps of scripts/setup/kubernetes.sh, sourced by it (they use its variables and
# helpers: state, run, bin, the ports, say, die, missing, start, wait_for). Not to be run alone.

# need_deps: root, Debian's containerd, runc, the CNI plugins, openssl, curl; the podman images.
need_deps() {
  [[ $(id -u) == 0 ]] || missing "the test cluster's kubelet and containerd run as root; run this as root"
  local pkgs=()
  command -v containerd >/dev/null || pkgs+=(containerd)
  command -v runc >/dev/null || pkgs+=(runc)
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] || pkgs+=(containernetworking-plugins)
  command -v openssl >/dev/null || pkgs+=(openssl)
  command -v curl >/dev/null || pkgs+=(curl)
  command -v ip >/dev/null || pkgs+=(iproute2)
  if ((${#pkgs[@]})); then
    command -v apt-get >/dev/null || missing "${pkgs[*]} missing and there is no apt-get"
    say "installing ${pkgs[*]}"
    apt-get update -qq
    # policy-rc.d keeps apt from starting the system containerd; there is no systemd either.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
  fi
  local img
  for img in "${images[@]}"; do
    if ! podman image exists "$img" 2>/dev/null; then
      say "podman image $img is missing: running containers.sh"
      bash "$here/containers.sh" >/dev/null || die "containers.sh failed"
      break
    fi
  done
}

# binaries: sets bin to the directory of the binaries built by k8s-build.sh. A build takes ~11-20
# minutes, so without CI it runs only when asked (HANGAR_K8S_BUILD=1).
binaries() {
  bin=$(bash "$here/k8s-build.sh" --check 2>/dev/null | tail -1) || bin=
  [[ -n $bin ]] && return 0
  if [[ -z ${CI:-} && ${HANGAR_K8S_BUILD:-} != 1 ]]; then
    missing "the Kubernetes binaries are not built: run scripts/setup/k8s-build.sh (~11-20 minutes, once) or set HANGAR_K8S_BUILD=1"
  fi
  say "building the Kubernetes binaries (~11-20 minutes, once)"
  bin=$(bash "$here/k8s-build.sh" | tail -1)
  [[ -n $bin ]] || die "k8s-build.sh printed no bin directory"
}

# cert NAME SUBJECT EXTENSIONS: an EC key and a certificate signed by our CA, made once.
cert() {
  local d=$state/pki
  [[ -s $d/$1.crt && -s $d/$1.key ]] && return 0
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/$1.key" 2>/dev/null
  openssl req -new -key "$d/$1.key" -subj "$2" 2>/dev/null |
    openssl x509 -req -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
      -extfile <(printf '%b' "$3") -out "$d/$1.crt.tmp" 2>/dev/null
  mv "$d/$1.crt.tmp" "$d/$1.crt"
}

# make_pki: a CA, the serving certificates of the apiserver and the kubelet, the apiserver's
# client certificate for the kubelet, the service account key and the token file; made once
# and kept, so that kubeconfigs handed out earlier stay valid.
make_pki() {
  local d=$state/pki
  mkdir -p "$d"
  chmod 700 "$d"
  if [[ ! -s $d/ca.crt ]]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$d/ca.key" -subj /CN=hangar-test-ca -days 3650 \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
      -out "$d/ca.crt.tmp" 2>/dev/null
    mv "$d/ca.crt.tmp" "$d/ca.crt"
  fi
  local server='keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n'
  cert apiserver /CN=kube-apiserver "${server}subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
  cert kubelet "/CN=$node" "${server}subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:$node\n"
  cert apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client \
    'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n'
  if [[ ! -s $d/sa.pub ]]; then
    openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
    openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  fi
  if [[ ! -s $state/tokens.csv ]]; then
    # token,user,uid,groups: the admin, the read-only user (RBAC: view) and the kubelet (Node
    # authorizer: system:node:NAME in system:nodes).
    {
      echo "$(openssl rand -hex 24),hangar-admin,hangar-admin,system:masters"
      echo "$(openssl rand -hex 24),hangar-readonly,hangar-readonly"
      echo "$(openssl rand -hex 24),system:node:$node,kubelet-$node,system:nodes"
    } >"$state/tokens.csv.tmp"
    chmod 600 "$state/tokens.csv.tmp"
    mv "$state/tokens.csv.tmp" "$state/tokens.csv"
  fi
}

token_of() { awk -F, -v u="$1" '$2 == u {print $1}' "$state/tokens.csv"; }

# write_if_changed FILE: stdin to FILE, replaced atomically and only when it differs, so that
# readers never see half a file and fingerprints stay put.
write_if_changed() {
  cat >"$1.tmp"
  if [[ -f $1 ]] && cmp -s "$1" "$1.tmp"; then rm -f "$1.tmp"; else mv "$1.tmp" "$1"; fi
}

# kubeconfig USER...: a kubeconfig with one context per user (named hangar-test for
# hangar-admin, else after the user); the first one is current.
kubeconfig() {
  local ca u ctx
  ca=$(base64 -w0 <"$state/pki/ca.crt")
  echo "apiVersion: v1"
  echo "kind: Config"
  echo "clusters:"
  echo "- name: hangar-test"
  echo "  cluster: {server: 'https://127.0.0.1:$api_port', certificate-authority-data: $ca}"
  echo "users:"
  for u in "$@"; do echo "- {name: '$u', user: {token: $(token_of "$u")}}"; done
  echo "contexts:"
  for u in "$@"; do
    ctx=$u
    [[ $u == hangar-admin ]] && ctx=hangar-test
    [[ $u == system:node:* ]] && ctx=kubelet
    echo "- {name: $ctx, context: {cluster: hangar-test, user: '$u', namespace: hangar-test}}"
  done
  ctx=$1
  [[ $1 == hangar-admin ]] && ctx=hangar-test
  [[ $1 == system:node:* ]] && ctx=kubelet
  echo "current-context: $ctx"
}

make_kubeconfigs() {
  umask 077
  kubeconfig hangar-admin hangar-readonly | write_if_changed "$state/admin.kubeconfig"
  kubeconfig hangar-readonly | write_if_changed "$state/readonly.kubeconfig"
  # The daemons' own copy, out of reach of tests that edit admin.kubeconfig.
  kubeconfig hangar-admin | write_if_changed "$run/system.kubeconfig"
  kubeconfig "system:node:$node" | write_if_changed "$run/kubelet.kubeconfig"
  umask 022
}

fingerprint() { cat "$@" | sha256sum | cut -c1-16; }

start_control_plane() {
  local peer=$((etcd_port + 1)) pki=$state/pki sys=$run/system.kubeconfig
  # No fsync: a test cluster is thrown away rather than recovered, and fsync on a shared
  # 2-core machine's disk slows every write the tests wait on.
  start etcd - "$bin/etcd" --name hangar --data-dir "$state/etcd" --log-level warn \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "hangar=http://127.0.0.1:$peer" --unsafe-no-fsync
  wait_for etcd 30 curl -fsS "http://127.0.0.1:$etcd_port/health" ||
    die "etcd does not answer on 127.0.0.1:$etcd_port; see $state/log/etcd.log"
  # --endpoint-reconciler-type=none: the kubernetes service cannot point at a loopback address,
  # and there is no kube-proxy to use it anyway.
  start kube-apiserver "$(fingerprint "$state/tokens.csv" "$pki"/*.crt)" "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$api_port" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$state/tokens.csv" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" --kubelet-certificate-authority "$pki/ca.crt" \
    --kubelet-preferred-address-types InternalIP --endpoint-reconciler-type none --profiling=false
  wait_for kube-apiserver 60 kubectl get --raw /readyz ||
    die "kube-apiserver is not ready on 127.0.0.1:$api_port; see $state/log/kube-apiserver.log"
  kubectl apply -f "$here/kubernetes/cluster.yaml" >/dev/null
  local common=(--kubeconfig "$sys" --authentication-kubeconfig "$sys" --authorization-kubeconfig "$sys"
    --leader-elect=false --bind-address 127.0.0.1 --profiling=false --authentication-skip-lookup)
  start kube-controller-manager "$(fingerprint "$sys" "$pki/sa.key")" "$bin/kube-controller-manager" \
    "${common[@]}" --secure-port "$kcm_port" --service-account-private-key-file "$pki/sa.key" \
    --root-ca-file "$pki/ca.crt" --use-service-account-credentials=false --controllers '*' \
    --flex-volume-plugin-dir "$state/volume-plugins"
  start kube-scheduler "$(fingerprint "$sys")" "$bin/kube-scheduler" "${common[@]}" --secure-port "$sched_port"
}

# start_kwok: kwok plays the kubelet of the nodes annotated kwok.x-k8s.io/node=fake only (never
# of hangar-kubelet). Fake nodes get 127.0.0.1 as their address so that a request meant for
# their kubelet (kubectl logs) stays on this machine.
start_kwok() {
  local stages=$bin/../kwok-stages.yaml
  [[ -s $stages ]] || die "$stages is missing (k8s-build.sh writes it)"
  start kwok "$(fingerprint "$run/system.kubeconfig" "$stages")" "$bin/kwok" \
    --kubeconfig "$run/system.kubeconfig" --config "$stages" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-ip 127.0.0.1 \
    --node-port "$kwok_port" --cidr 10.201.0.0/16 --server-address "127.0.0.1:$kwok_port"
  local n
  for n in "${fake_nodes[@]}"; do
    kubectl get node "$n" >/dev/null 2>&1 && continue
    render "$here/kubernetes/kwok-node.yaml" NAME "$n" | kubectl create -f - >/dev/null
  done
}

# render FILE KEY VALUE...: FILE with each @KEY@ replaced by its VALUE.
render() {
  local text
  text=$(<"$1")
  shift
  while (($#)); do
    text=${text//@$1@/"$2"}
    shift 2
  done
  printf '%s\n' "$text"
}

# pause_image: the sandbox image, made from the static hangar-pause program k8s-build.sh builds.
pause_image() {
  podman image exists "$pause_image" 2>/dev/null && return 0
  local d
  d=$(mktemp -d)
  cp "$bin/hangar-pause" "$d/pause"
  tar -C "$d" -cf - pause | podman import -q --change 'ENTRYPOINT ["/pause"]' - "$pause_image" >/dev/null
  rm -rf "$d"
}

# import_image IMAGE: copies a podman image into containerd's k8s.io namespace unless the same
# image (same config digest, which is podman's image ID) is there already.
import_image() {
  local id have tar=$state/containerd/import.tar
  id=$(podman image inspect --format '{{.Id}}' "$1")
  have=$(ctr_ images ls -q)
  if grep -qx "sha256:$id" <<<"$have" && grep -qxF "$1" <<<"$have"; then return 0; fi
  podman save -q --format oci-archive -o "$tar" "$1"
  ctr_ images import "$tar" >/dev/null
  rm -f "$tar"
  # Labelled pinned: a containerd that reads the label (1.7 and later) reports the image as
  # pinned to the kubelet, whose image GC then never removes it.
  ctr_ images label "$1" io.cri-containerd.pinned=pinned >/dev/null
  say "imported $1 into containerd"
}

# start_node: containerd (with a CNI network so the runtime reports its network ready), the
# images, and the real kubelet.
start_node() {
  mkdir -p "$state/containerd" "$state/cni/net.d" "$state/kubelet" "$state/pod-logs"
  render "$here/kubernetes/cni.conflist" STATE "$state" BRIDGE "$bridge" POD_CIDR "$pod_cidr" |
    write_if_changed "$state/cni/net.d/10-hangar.conflist"
  render "$here/kubernetes/containerd.toml" STATE "$state" PAUSE_IMAGE "$pause_image" \
    RUNC "$(command -v runc)" CNI_BIN /usr/lib/cni | write_if_changed "$state/containerd/config.toml"
  start containerd "$(fingerprint "$state/containerd/config.toml")" "$(command -v containerd)" \
    --config "$state/containerd/config.toml"
  wait_for containerd 30 ctr_ version || die "containerd does not answer on $sock; see $state/log/containerd.log"
  pause_image
  local img
  for img in "$pause_image" "${images[@]}"; do import_image "$img"; done
  pod_gateway
  render "$here/kubernetes/kubelet.yaml" STATE "$state" KUBELET_PORT "$kubelet_port" \
    KUBELET_HEALTHZ_PORT "$kubelet_healthz_port" | write_if_changed "$state/kubelet/config.yaml"
  start kubelet "$(fingerprint "$state/kubelet/config.yaml" "$run/kubelet.kubeconfig" "$state/pki/kubelet.crt")" \
    "$bin/kubelet" --config "$state/kubelet/config.yaml" --kubeconfig "$run/kubelet.kubeconfig" \
    --root-dir "$state/kubelet" --hostname-override "$node" --cloud-provider external \
    --node-labels hangar.test/kind=real
}

# pod_gateway: the pod network's first address on the host's end of its bridge, so that pods
# off the host network (an online deployment's Deployment, whose pods share one port) reach a
# server listening there, and the server reaches them. The CNI config keeps isGateway false (no
# default route into the pods); host-local never hands out the first address.
pod_gateway() {
  ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
  ip addr replace "${pod_cidr%.0/24}.1/24" dev "$bridge"
  ip link set "$bridge" up
}

# init_node: plays the cloud controller for hangar-kubelet. The kubelet refuses a loopback node
# IP, but the apiserver must reach the kubelet (logs, exec) on 127.0.0.1, where it listens. With
# --cloud-provider=external the kubelet registers the node with only its hostname, keeps
# addresses set by someone else, and taints the node until that someone says it is initialised.
init_node() {
  wait_for "node $node" 60 kubectl get node "$node" ||
    die "the kubelet did not register node $node; see $state/log/kubelet.log"
  local addrs='[{"address":"127.0.0.1","type":"InternalIP"},{"address":"'$node'","type":"Hostname"}]'
  if [[ $(kubectl get node "$node" -o jsonpath='{.status.addresses}') != "$addrs" ]]; then
    kubectl patch node "$node" --subresource status --type merge -p "{\"status\":{\"addresses\":$addrs}}" >/dev/null
  fi
  if [[ " $(kubectl get node "$node" -o jsonpath='{.spec.taints[*].key}') " == *" node.cloudprovider.kubernetes.io/uninitialized "* ]]; then
    kubectl taint node "$node" node.cloudprovider.kubernetes.io/uninitialized- >/dev/null
  fi
}

node_ready() {
  [[ $(kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# wait_cluster: every node Ready, and the namespace ready for pods (its default service
# account, without which a pod is refused, and the root CA config map its token volume needs).
wait_cluster() {
  local n
  init_node
  for n in "${fake_nodes[@]}" "$node"; do
    wait_for "node $n" 90 node_ready "$n" ||
      die "node $n is not Ready: $(kubectl get node "$n" -o jsonpath='{.status.conditions}' 2>&1); see $state/log"
  done
  wait_for "service account" 60 kubectl -n hangar-test get serviceaccount default ||
    die "namespace hangar-test has no default service account; see $state/log/kube-controller-manager.log"
  wait_for "root CA" 60 kubectl -n hangar-test get configmap kube-root-ca.crt ||
    die "namespace hangar-test has no kube-root-ca.crt; see $state/log/kube-controller-manager.log"
}
