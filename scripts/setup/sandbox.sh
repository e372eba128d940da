#!/usr/bin/env bash
# Installs bubblewrap (bwrap), with which supervisors hide the workspace's secrets and other runs
# from a run's processes (internal/runbox), idempotently. With CI set, failing to install it fails.
set -euo pipefail

if ! command -v bwrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  elif [[ -n ${CI:-} ]]; then
    echo "sandbox.sh: bubblewrap is missing and cannot be installed here (need root and apt-get)" >&2
    exit 1
  else
    echo "sandbox.sh: bubblewrap is missing; runs will not be sandboxed (install the bubblewrap package)" >&2
    exit 0
  fi
fi
bwrap --dev-bind / / true
echo "sandbox.sh: $(bwrap --version)"

# An unprivileged account for the security tests that run the workspace server as a user other
# than root (HANGAR_E2E_SERVER_USER=hangar-e2e, scripts/test.sh).
if [[ $(id -u) == 0 ]] && ! id hangar-e2e >/dev/null 2>&1; then
  useradd --system --create-home --home-dir /var/lib/hangar-e2e --shell /bin/bash hangar-e2e
fi
if id hangar-e2e >/dev/null 2>&1; then
  echo "sandbox.sh: user hangar-e2e ($(id -u hangar-e2e)) for the unprivileged server's tests"
fi
