package agent

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// DefaultNoticeGrace bounds how long a shutdown notice waits for the supervisors' checkpoint
// saves: well inside the notice clouds give (Azure's Scheduled Events 30 s, AWS 2 min).
const DefaultNoticeGrace = 20 * time.Second

// takeNotice acts on the machine's shutdown notice (api.NoticeSignal sent to the agent, by
// whatever watches the cloud's notice: a spot watcher, a shutdown script). Each supervisor
// saves its run's checkpoint now (the agent waits for their acknowledgements up to
// NoticeGrace); from then on the agent's heartbeats say Notice, so the server treats the node
// as preempted: it requeues the runs (each resumes from what it just saved), cancels their old
// attempts here and deletes the node. The agent does not stop by itself: the machine may
// still be taken back by the cloud, or deleted by the server, whichever comes first.
func (a *Agent) takeNotice(ctx context.Context) {
	report := a.runs.report(ctx)
	grace := orDefault(a.cfg.NoticeGrace, DefaultNoticeGrace)
	a.log.Info("shutdown notice: runs save their checkpoints", "running", alive(report), "grace", grace)
	waiting := a.runs.notify(report, a.log.Warn)
	deadline := time.Now().Add(grace)
	for len(waiting) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(watchEvery):
		}
		waiting = a.runs.unacknowledged(waiting)
	}
	if len(waiting) > 0 {
		a.log.Warn("shutdown notice: checkpoints not saved in time", "runs", strings.Join(slices.Sorted(maps.Keys(waiting)), ","))
	}
	a.noticed = true
	a.log.Info("shutdown notice: telling the server the node is being taken back", "node", a.id.NodeID)
}

// notice is one supervisor told of the shutdown notice.
type notice struct {
	hangarDir string
	sent      time.Time
}

// notify sends the notice to every live supervisor ready for it, and returns those it told.
func (r *runs) notify(report []api.AgentRun, warn func(string, ...any)) map[string]notice {
	out := map[string]notice{}
	for _, ar := range report {
		e := r.known[ar.RunID]
		if !ar.Alive || e == nil || e.handle == nil {
			continue
		}
		dir := filepath.Join(r.sup.RunDir(ar.RunID), "hangar")
		if _, err := os.Stat(filepath.Join(dir, api.NoticeReadyFile)); err != nil {
			continue // not listening yet: the signal would end it; it has no command running either
		}
		sent := time.Now()
		if err := procOf(e.handle).Signal(api.NoticeSignal); err != nil {
			warn("shutdown notice not delivered", "run", ar.RunID, "err", err)
			continue
		}
		out[ar.RunID] = notice{hangarDir: dir, sent: sent}
	}
	return out
}

// unacknowledged is the notices whose supervisor is alive and has not acknowledged yet.
func (r *runs) unacknowledged(waiting map[string]notice) map[string]notice {
	out := map[string]notice{}
	for id, n := range waiting {
		e := r.known[id]
		if e == nil || e.handle == nil || !procOf(e.handle).Alive() {
			continue
		}
		if acked(filepath.Join(n.hangarDir, api.NoticeAckFile), n.sent) {
			continue
		}
		out[id] = n
	}
	return out
}

// acked reports whether an acknowledgement file holds a time no earlier than sent.
func acked(path string, sent time.Time) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return err == nil && !t.Before(sent.Add(-time.Millisecond))
}

// tokenAttempt is the attempt a run token was minted for ("<run>.<attempt>.<expiry>.<mac>"),
// read without checking it (the server does); 0 when the token says none.
func tokenAttempt(token string) int {
	parts := strings.Split(token, ".")
	if len(parts) != 4 {
		return 0
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0
	}
	return n
}

// attemptFile, in a run directory, is the attempt the agent started there.
const attemptFile = "hangar-attempt"

// stopping reports whether an earlier attempt of a run is still running here while a later
// one is assigned (its cancel is on its way or under way).
func (r *runs) stopping(runID string, attempt int) bool {
	e := r.known[runID]
	if e == nil || e.handle == nil || !procOf(e.handle).Alive() {
		return false
	}
	b, err := os.ReadFile(filepath.Join(r.sup.RunDir(runID), attemptFile))
	prev, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && perr == nil && prev < attempt
}

// retire moves aside the directory of an earlier attempt of a run, ended, when a later attempt
// of it is assigned here (a multi-node run requeued onto its surviving node), so that the
// new attempt starts in a fresh directory; the old one is kept under retired/<run>/attempt_<n>.
// It reports whether it did: the agent then forgets the old attempt.
func (r *runs) retire(runID string, attempt int) bool {
	dir := r.sup.RunDir(runID)
	b, err := os.ReadFile(filepath.Join(dir, attemptFile))
	if err != nil || attempt < 2 {
		return false
	}
	prev, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || prev >= attempt {
		return false
	}
	if e := r.known[runID]; e != nil && e.handle != nil && procOf(e.handle).Alive() {
		return false // still stopping: the assignment is refused like a second start
	}
	dest := filepath.Join(r.sup.Root, "retired", runID, "attempt_"+strconv.Itoa(prev))
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return false
	}
	return os.Rename(dir, dest) == nil
}
