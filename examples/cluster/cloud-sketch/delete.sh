#!/usr/bin/env bash
# SKETCH, not tested: the delete hook matching create.sh. Deleting a VM that is gone succeeds.
set -euo pipefail
rg=${RESOURCE_GROUP:?set RESOURCE_GROUP in the provider env}
az vm delete --resource-group "$rg" --name "$HANGAR_PROVIDER_ID" --yes --force-deletion true --output none 2>&1 \
	| grep -v ResourceNotFound >&2 || true
