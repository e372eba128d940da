#!/usr/bin/env bash
# SKETCH, not tested: a create hook that makes an Azure VM whose cloud-init starts the agent.
# Adapt the resource group, image, network and identity to your subscription. The same shape
# works for any cloud CLI (aws ec2 run-instances, gcloud compute instances create).
# cloud-init takes minutes after `az vm create` returns: give the cluster `join_timeout: 600`
# (seconds from this hook's success to the agent joining; the default is 120).
# Fail loudly: exit non-zero with the reason on stderr whenever the node cannot come up; Hangar
# shows it on `compute show` and on the jobs waiting for the node.
set -euo pipefail

fail() {
	echo "create.sh: $*" >&2
	exit 1
}

command -v az >/dev/null || fail "the Azure CLI (az) is not on PATH ($PATH)"
rg=${RESOURCE_GROUP:?set RESOURCE_GROUP in the provider env}
vm="hangar-$HANGAR_NODE_ID"

# cloud-init: install hangar and run the agent as a service. The join token is short-lived
# (it expires when the node's join deadline passes); the agent keeps its own token afterwards.
cat >"/tmp/$vm.cloud-init" <<INIT
#cloud-config
runcmd:
  - curl -fsSL https://example.invalid/hangar/install.sh | sh   # however you ship the binary
  - mkdir -p /var/lib/hangar
  - command -v hangar || { echo "hangar is not installed" >/var/log/hangar-agent.log; exit 1; }
  - HANGAR_JOIN_TOKEN='$HANGAR_JOIN_TOKEN' nohup hangar agent --server '$HANGAR_JOIN_URL'
      --node-id '$HANGAR_NODE_ID' --work-dir /var/lib/hangar >/var/log/hangar-agent.log 2>&1 &
INIT

# Low-priority nodes: add --priority Spot --eviction-policy Delete.
az vm create --resource-group "$rg" --name "$vm" --size "$HANGAR_SIZE" \
	--image Ubuntu2204 --custom-data "/tmp/$vm.cloud-init" \
	--tags "hangar-pool=$HANGAR_POOL" "hangar-node=$HANGAR_NODE_ID" \
	--output none >&2 || { rm -f "/tmp/$vm.cloud-init"; fail "az vm create $vm failed (see above)"; }
rm -f "/tmp/$vm.cloud-init"

# Wait for cloud-init, then check that the agent runs; its log's end is the reason otherwise.
check='cloud-init status --wait >/dev/null; pgrep -f "hangar agent" >/dev/null && echo AGENT_UP; tail -n 5 /var/log/hangar-agent.log'
out=$(az vm run-command invoke --resource-group "$rg" --name "$vm" --command-id RunShellScript \
	--scripts "$check" --query 'value[0].message' --output tsv 2>&1) || fail "cannot check the agent on $vm: $out"
if [[ $out != *AGENT_UP* ]]; then
	az vm delete --resource-group "$rg" --name "$vm" --yes --output none >&2 || true
	fail "the agent did not start on $vm: $out"
fi

echo "$vm" # the provider id: the VM's name
