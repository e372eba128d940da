#!/usr/bin/env bash
# Runs the sample training job (examples/iris) on the local target of the local workspace,
# then shows its status and metrics and downloads its outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
hangar=bin/hangar
name="iris-$(date +%Y%m%d-%H%M%S)"

$hangar job create -f examples/iris/job.yml --name "$name" --stream
echo
$hangar job show -n "$name"
echo
$hangar job download -n "$name" --all --download-path quickstart-out
echo
echo "The trained model: quickstart-out/$name/named-outputs/model/model.json"
echo "The full log:      quickstart-out/$name/artifacts/user_logs/std_log.txt"
