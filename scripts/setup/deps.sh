#!/usr/bin/env bash
# Installs what the test suite needs, idempotently. Safe to run again and again.
set -euo pipefail

need() { command -v "$1" >/dev/null 2>&1; }
missing=()
for tool in go bash python3; do
  need "$tool" || missing+=("$tool")
done
if ((${#missing[@]})); then
  if need apt-get && [[ $(id -u) == 0 ]]; then
    pkgs=()
    for t in "${missing[@]}"; do
      case $t in
        python3) pkgs+=(python3) ;;
        bash) pkgs+=(bash) ;;
        go) echo "Go is required (https://go.dev/dl); it is not installed by this script" >&2; exit 1 ;;
      esac
    done
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"
  else
    echo "missing: ${missing[*]} (install them, or run as root on Debian)" >&2
    exit 1
  fi
fi
echo "deps: go $(go env GOVERSION), $(bash --version | head -1 | cut -d' ' -f4), $(python3 --version)"
