#!/usr/bin/env bash
# The npm package mlflow@2.0.7 (a Node.js MLflow REST client nobody here wrote), for the test in
# which a real MLflow client logs to Hangar (internal/server/mlflowclient_test.go). Idempotent:
# installed once into a cache directory keyed by version, outside the clone. Prints that
# directory on its last line.
set -euo pipefail
version=2.0.7
dir=${XDG_CACHE_HOME:-$HOME/.cache}/hangar/mlflow-js-$version
if [[ ! -f $dir/node_modules/mlflow/package.json ]]; then
  command -v npm >/dev/null || { echo "mlflow-js.sh: npm is missing (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir"
  npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "mlflow@$version" >&2
fi
node -e "console.error('mlflow-js: mlflow ' + require('$dir/node_modules/mlflow/package.json').version)"
echo "$dir"
