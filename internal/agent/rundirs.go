package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/backend/local"
)

// A run's directory on a cluster node goes once the server recorded the run's end (the run is
// among the heartbeat reply's Forget: its supervisor registered its logs and outputs before it
// reported the end) and KeepRunDirs has passed since. The agent marks the directory when it
// hears so, so that a restarted agent still knows, and removes it at a later sweep.

// DefaultKeepRunDirs is how long an ended run's directory stays on the node by default.
const DefaultKeepRunDirs = 5 * time.Minute

// recordedFile, in a run directory, marks a run whose end the server recorded: its time is
// when the agent heard so.
const recordedFile = "hangar-end-recorded"

// sweepEvery bounds how often the agent looks for run directories to remove.
const sweepEvery = 30 * time.Second

// markRecorded marks the directory of a run whose end the server recorded.
func (r *runs) markRecorded(id string) {
	p := filepath.Join(r.sup.RunDir(id), recordedFile)
	if err := os.WriteFile(p, nil, 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
		r.log.Warn("mark a run whose end the server recorded", "run", id, "err", err)
	}
}

// recordedAt is when the agent heard that the server recorded the run's end (false: it did not).
func (r *runs) recordedAt(id string) (time.Time, bool) {
	fi, err := os.Stat(filepath.Join(r.sup.RunDir(id), recordedFile))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// sweepDirs removes the directories of runs recorded ended keepDirs ago, at most every
// sweepEvery; one whose supervisor still runs (a late cancel) keeps its own until it is gone.
func (r *runs) sweepDirs(ctx context.Context) {
	now := r.now()
	if now.Sub(r.swept) < sweepEvery {
		return
	}
	r.swept = now
	ids, err := r.sup.RunDirs()
	if err != nil {
		r.log.Warn("list run directories", "err", err)
		return
	}
	recorded := map[string]time.Time{}
	for _, id := range ids {
		if at, ok := r.recordedAt(id); ok {
			recorded[id] = at
		}
	}
	for _, id := range dirsToRemove(recorded, r.known, now, r.keepDirs) {
		if err := r.sup.RemoveRunDir(ctx, id); err != nil {
			r.log.Warn("an ended run's directory stays", "run", id, "err", err)
			continue
		}
		// Its earlier attempts' directories, set aside when a later one started here (retire).
		if err := local.RemoveTree(filepath.Join(r.sup.Root, "retired", id)); err != nil {
			r.log.Warn("an ended run's earlier attempts' directories stay", "run", id, "err", err)
		}
		r.log.Info("removed an ended run's directory", "run", id)
	}
}

// dirsToRemove picks the runs whose directories go at now: recorded ended (at the time
// recorded says) keep ago, and no longer among the runs the agent reports.
func dirsToRemove(recorded map[string]time.Time, known map[string]*runEntry, now time.Time, keep time.Duration) []string {
	var out []string
	for id, at := range recorded {
		if _, reported := known[id]; reported || at.Add(keep).After(now) {
			continue
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
