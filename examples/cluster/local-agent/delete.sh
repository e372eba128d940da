#!/usr/bin/env bash
# Delete hook matching create.sh: HANGAR_PROVIDER_ID is the agent's pid. SIGTERM makes the
# agent cancel its runs (--kill-runs-on-exit) and exit; SIGKILL after 30 s. A pid that is gone
# (or, after a reboot, reused by something that is not an agent) is left alone.
set -euo pipefail

pid=$HANGAR_PROVIDER_ID
if ! grep -qs "agent" "/proc/$pid/cmdline"; then
	exit 0
fi
kill -TERM "$pid" 2>/dev/null || exit 0
for _ in $(seq 1 150); do
	kill -0 "$pid" 2>/dev/null || exit 0
	sleep 0.2
done
kill -KILL "$pid" 2>/dev/null || true
