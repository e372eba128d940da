package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hangar-ml/hangar/internal/proc"
)

// Agent is an agent this provider started that still runs: what `hangar server stop` reports
// as left running after the server stopped (and ends with --all).
type Agent struct {
	NodeID string
	Dir    string // the node's directory: provider.json and agent.log
	proc.Proc
}

// Running lists the agents started under root (a Provider's Root) that still run, by node id.
// The pid and start time of each come from its provider.json, so a reused pid is never taken
// for an agent.
func Running(root string) ([]Agent, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", RecordFile))
	if err != nil {
		return nil, err
	}
	var out []Agent
	for _, f := range files {
		rec, err := readRecord(filepath.Dir(f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		if rec.Alive() {
			out = append(out, Agent{NodeID: rec.NodeID, Dir: filepath.Dir(f), Proc: rec.Proc})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeID < out[j].NodeID })
	return out, nil
}

// StopAgent stops an agent as Delete does, without a server: SIGTERM (it cancels its runs and
// waits for them up to its exit grace, DefaultStopGrace as this provider starts it), then
// SIGKILL. Its node stays in the workspace; a server started later finds it silent.
func StopAgent(ctx context.Context, a Agent) error {
	if err := proc.Stop(ctx, a.Proc, DefaultStopGrace+5*time.Second); err != nil {
		return fmt.Errorf("stop the agent of node %s (pid %d): %w", a.NodeID, a.PID, err)
	}
	return nil
}
