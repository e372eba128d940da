// Package nodecmd holds the node-side verbs of the hangar binary: `supervise`, `agent` (and its
// `sftp-server`), `reap`, `pod-entry` and `mpi-rsh`. They run on a node beside the runs, so they
// import the supervisor and the agent; the thin client (internal/cli) does not, and cmd/hangar
// adds these verbs to its command tree (cli.Deps.Node).
package nodecmd
