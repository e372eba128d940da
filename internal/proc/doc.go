// Package proc is how Hangar starts a process that must outlive its parent and later judges
// whether it still runs: a Proc names a process by pid and start time (so a reused pid is never
// mistaken for it), StartDetached starts one in a session of its own, and Escalate is the one
// TERM → grace → KILL sequence (supervisors stopping a run's process groups, the local provider
// stopping an agent). The remote package judges processes on other hosts with the same Proc.
package proc
