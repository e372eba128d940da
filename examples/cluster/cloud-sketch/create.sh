#!/usr/bin/env bash
# SKETCH, not tested: a create hook that makes an Azure VM whose cloud-init starts the agent.
# Adapt the resource group, image, network and identity to your subscription. The same shape
# works for any cloud CLI (aws ec2 run-instances, gcloud compute instances create).
set -euo pipefail

rg=${RESOURCE_GROUP:?set RESOURCE_GROUP in the provider env}
vm="hangar-$HANGAR_NODE_ID"

# cloud-init: install hangar and run the agent as a service. The join token is short-lived
# (it expires when the node's join deadline passes); the agent keeps its own token afterwards.
cat >"/tmp/$vm.cloud-init" <<INIT
#cloud-config
runcmd:
  - curl -fsSL https://example.invalid/hangar/install.sh | sh   # however you ship the binary
  - mkdir -p /var/lib/hangar
  - HANGAR_JOIN_TOKEN='$HANGAR_JOIN_TOKEN' nohup hangar agent --server '$HANGAR_JOIN_URL'
      --node-id '$HANGAR_NODE_ID' --work-dir /var/lib/hangar >/var/log/hangar-agent.log 2>&1 &
INIT

# Low-priority nodes: add --priority Spot --eviction-policy Delete.
az vm create --resource-group "$rg" --name "$vm" --size "$HANGAR_SIZE" \
	--image Ubuntu2204 --custom-data "/tmp/$vm.cloud-init" \
	--tags "hangar-pool=$HANGAR_POOL" "hangar-node=$HANGAR_NODE_ID" \
	--output none >&2
rm -f "/tmp/$vm.cloud-init"

echo "$vm" # the provider id: the VM's name
