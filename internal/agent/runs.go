package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/local"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/proc"
)

// runs are the supervisors of one agent. Each run has its directory under <work dir>/runs/<id>,
// started exactly as the local backend starts one (detached session, supervisor.json 0600,
// handle.json, result.json), so supervisors outlive the agent and a restarted agent adopts them.
type runs struct {
	sup *local.Backend
	// keep is how long a run that ended is still reported; keepDirs how long its directory
	// stays once the server recorded its end (rundirs.go), swept when it was last looked at.
	keep     time.Duration
	keepDirs time.Duration
	swept    time.Time
	log      *slog.Logger
	now      func() time.Time
	// known maps run ids to what the agent knows of them; ended runs are forgotten after keep.
	known map[string]*runEntry
}

type runEntry struct {
	handle backend.Handle
	pid    int
	// failed is set when the agent could not start the supervisor.
	failed *job.Result
	// endedAt is when the run was first seen ended.
	endedAt time.Time
}

// adopt finds the runs already under the work dir (a restarted agent), leaving out those that
// ended longer than keep ago.
func (r *runs) adopt(ctx context.Context) error {
	r.known = map[string]*runEntry{}
	files, err := filepath.Glob(filepath.Join(r.sup.Root, "runs", "*", "handle.json"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, recorded := r.recordedAt(filepath.Base(filepath.Dir(f))); recorded {
			continue // the server has its end: its directory waits for sweepDirs
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("adopt runs: %w", err)
		}
		if st, err := r.sup.Status(ctx, b); err == nil && !st.Alive && r.endedLongAgo(st, f) {
			continue
		}
		r.known[filepath.Base(filepath.Dir(f))] = &runEntry{handle: b, pid: pidOf(b)}
	}
	return nil
}

func (r *runs) endedLongAgo(st backend.Status, handleFile string) bool {
	ended := time.Time{}
	if st.Final != nil {
		ended = st.Final.Time
	} else if fi, err := os.Stat(handleFile); err == nil {
		ended = fi.ModTime()
	}
	return r.now().Sub(ended) > r.keep
}

// start starts a run's supervisor unless the agent had it already (work is delivered again until
// acknowledged, and a run never starts twice). A failure to start is reported as the run's result.
func (r *runs) start(ctx context.Context, runID, token string) (started bool) {
	if r.retire(runID, tokenAttempt(token)) {
		delete(r.known, runID)
	}
	if _, ok := r.known[runID]; ok {
		return false
	}
	if _, err := os.Stat(r.sup.RunDir(runID)); err == nil {
		r.known[runID] = &runEntry{failed: &job.Result{State: job.Failed, Time: r.now(),
			Reason: "the agent found a directory for this run already and did not start it again"}}
		return false
	}
	h, err := r.sup.Submit(ctx, backend.Launch{RunID: runID, Token: token})
	if err != nil {
		r.known[runID] = &runEntry{failed: &job.Result{State: job.Failed, Time: r.now(),
			Reason: "the agent could not start the supervisor: " + err.Error()}}
		return false
	}
	r.known[runID] = &runEntry{handle: h, pid: pidOf(h)}
	if err := os.WriteFile(filepath.Join(r.sup.RunDir(runID), attemptFile), []byte(strconv.Itoa(tokenAttempt(token))), 0o644); err != nil {
		return true // the run started; only a later attempt here would be refused
	}
	return true
}

// cancel sends SIGTERM to a run's supervisor; a run the agent does not run is ignored.
func (r *runs) cancel(ctx context.Context, runID string) error {
	e, ok := r.known[runID]
	if !ok || e.handle == nil {
		return nil
	}
	return r.sup.Cancel(ctx, e.handle)
}

// report is every run alive or ended less than keep ago; older ended runs are forgotten.
func (r *runs) report(ctx context.Context) []api.AgentRun {
	now := r.now()
	out := []api.AgentRun{}
	for id, e := range r.known {
		ar := api.AgentRun{RunID: id, PID: e.pid, Final: e.failed}
		if e.handle != nil {
			st, err := r.sup.Status(ctx, e.handle)
			if err != nil {
				st.Alive = true // unreadable: assume it runs rather than report it lost
			}
			ar.Alive, ar.Reason = st.Alive, st.Reason
			ar.Final = st.Final
		}
		if !ar.Alive && e.endedAt.IsZero() {
			e.endedAt = now
		}
		if !ar.Alive && now.Sub(e.endedAt) > r.keep {
			delete(r.known, id)
			continue
		}
		out = append(out, ar)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out
}

// forget stops reporting ended runs whose end the server has recorded. A run still alive is
// kept whatever the server says (it would be reported again once it ends).
func (r *runs) forget(ids []string) {
	for _, id := range ids {
		if e, ok := r.known[id]; ok && !e.endedAt.IsZero() {
			delete(r.known, id)
			r.markRecorded(id)
		}
	}
}

// watchEvery is how often an agent waiting on the server looks at its runs.
const watchEvery = 100 * time.Millisecond

// aliveHandles are the handles of the runs alive in a report.
func (r *runs) aliveHandles(report []api.AgentRun) []backend.Handle {
	var out []backend.Handle
	for _, ar := range report {
		if e := r.known[ar.RunID]; ar.Alive && e != nil && e.handle != nil {
			out = append(out, e.handle)
		}
	}
	return out
}

// watch reports true as soon as one of the supervisors ends, false once stop closes or ctx ends.
// It only reads the supervisors' state (the report after it does the rest).
func (r *runs) watch(ctx context.Context, stop <-chan struct{}, handles []backend.Handle) bool {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		case <-t.C:
		}
		for _, h := range handles {
			if !procOf(h).Alive() {
				return true
			}
		}
	}
}

// alive counts the supervisors still running, as of the last report.
func alive(rs []api.AgentRun) int {
	n := 0
	for _, r := range rs {
		if r.Alive {
			n++
		}
	}
	return n
}

func pidOf(h backend.Handle) int { return procOf(h).PID }

// procOf is the supervisor's process a local backend's handle names (its pid and start time).
func procOf(h backend.Handle) proc.Proc {
	var v struct{ proc.Proc }
	if err := json.Unmarshal(h, &v); err != nil {
		return proc.Proc{}
	}
	return v.Proc
}
