#!/usr/bin/env bash
# Create hook of a `command` provider that makes each "node" a `hangar agent` on this machine,
# started in the background. It shows the contract every create hook follows:
#   in:  HANGAR_JOIN_URL HANGAR_JOIN_TOKEN HANGAR_NODE_ID HANGAR_POOL HANGAR_SIZE HANGAR_CORES
#        HANGAR_MEMORY_BYTES HANGAR_GPUS HANGAR_WORK_DIR (+ the provider's env: map)
#   out: the last line on stdout is the provider id, which the delete hook gets back.
# The hook must not leave its stdout/stderr open in what it starts (redirect them), or Hangar
# waits for it a little longer than needed. Set HANGAR_EXE in the provider's env to use a
# hangar binary that is not on PATH, and HANGAR_AGENT_ARGS for extra agent flags.
set -euo pipefail

hangar=${HANGAR_EXE:-hangar}
work=${HANGAR_WORK_DIR:-${TMPDIR:-/tmp}/hangar-agents/$HANGAR_NODE_ID}
mkdir -p "$work"

gpus=all
if [ "${HANGAR_GPUS:-0}" = 0 ]; then gpus=none; fi

# The join token stays in the environment (HANGAR_JOIN_TOKEN), where the agent reads it,
# rather than on a command line that every user of the machine can see.
# shellcheck disable=SC2086 # HANGAR_AGENT_ARGS is a list of flags
setsid nohup "$hangar" agent --server "$HANGAR_JOIN_URL" --work-dir "$work" \
	--node-id "$HANGAR_NODE_ID" --cores "$HANGAR_CORES" --memory "$HANGAR_MEMORY_BYTES" \
	--gpus "$gpus" --kill-runs-on-exit ${HANGAR_AGENT_ARGS:-} \
	>"$work/agent.log" 2>&1 </dev/null &

echo "started agent for $HANGAR_NODE_ID in $work" >&2
echo "$!"
