#!/usr/bin/env bash
# Create hook of a `command` provider that makes each "node" a `hangar agent` on this machine,
# started in the background. It shows the contract every create hook follows:
#   in:  HANGAR_JOIN_URL HANGAR_JOIN_TOKEN HANGAR_NODE_ID HANGAR_POOL HANGAR_SIZE HANGAR_CORES
#        HANGAR_MEMORY_BYTES HANGAR_GPUS HANGAR_WORK_DIR (+ the provider's env: map)
#   out: the last line on stdout is the provider id, which the delete hook gets back.
#   exit: non-zero, with the reason on stderr, when the node cannot come up: Hangar shows it
#        on `compute show` and on the jobs waiting for the node, and backs off.
# The hook must not leave its stdout/stderr open in what it starts (redirect them), or Hangar
# waits for it a little longer than needed. Set HANGAR_EXE in the provider's env to use a
# hangar binary that is not on PATH, HANGAR_AGENT_ARGS for extra agent flags, and
# HANGAR_AGENT_WAIT for how many seconds to wait for the agent to join (default 10).
set -euo pipefail

fail() {
	echo "create.sh: $*" >&2
	exit 1
}

hangar=${HANGAR_EXE:-hangar}
if [[ $hangar != */* ]]; then
	found=$(command -v -- "$hangar" || true)
	[[ -n $found ]] || fail "cannot find '$hangar' on PATH ($PATH); install hangar there or set HANGAR_EXE in the provider's env"
	hangar=$found
fi
[[ -f $hangar ]] || fail "$hangar does not exist (HANGAR_EXE)"
[[ -x $hangar ]] || fail "$hangar is not executable"

work=${HANGAR_WORK_DIR:-${TMPDIR:-/tmp}/hangar-agents/$HANGAR_NODE_ID}
mkdir -p "$work"
log=$work/agent.log

gpus=all
if [ "${HANGAR_GPUS:-0}" = 0 ]; then gpus=none; fi

# The join token stays in the environment (HANGAR_JOIN_TOKEN), where the agent reads it,
# rather than on a command line that every user of the machine can see.
# shellcheck disable=SC2086 # HANGAR_AGENT_ARGS is a list of flags
setsid nohup "$hangar" agent --server "$HANGAR_JOIN_URL" --work-dir "$work" \
	--node-id "$HANGAR_NODE_ID" --cores "$HANGAR_CORES" --memory "$HANGAR_MEMORY_BYTES" \
	--gpus "$gpus" --kill-runs-on-exit ${HANGAR_AGENT_ARGS:-} \
	>"$log" 2>&1 </dev/null &
pid=$!

# Fail loudly when the agent dies before it joins (bad flags, a refused or expired join token,
# a server that says no): a hook that exits 0 for a dead agent leaves the node waiting for
# nothing until its join timeout.
wait_s=${HANGAR_AGENT_WAIT:-10}
for ((i = 0; i < wait_s * 10; i++)); do
	if grep -qs "agent ready" "$log"; then
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "create.sh: the agent for $HANGAR_NODE_ID exited before it joined; the end of $log:" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
	sleep 0.1
done
if ! grep -qs "agent ready" "$log"; then
	echo "agent for $HANGAR_NODE_ID still joining after ${wait_s}s; last log line: $(tail -n 1 "$log")" >&2
fi

echo "started agent for $HANGAR_NODE_ID in $work" >&2
echo "$pid"
