package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/tick"
	"github.com/hangar-ml/hangar/internal/transfer"
)

// The resume contract (docs/checkpoints.md): every run has HANGAR_CHECKPOINT_DIR, a folder of
// its run directory. What the command keeps there is saved to the workspace every
// CheckpointIntervalVar seconds, at once on the node's shutdown notice (SIGUSR1, from the
// agent), and when an attempt ends without completing; a later attempt finds the latest save
// restored there before its command starts.
const (
	// CheckpointDirName is the folder of the run directory given as HANGAR_CHECKPOINT_DIR.
	CheckpointDirName = "checkpoint"
	// CheckpointDirVar names the folder in the command's environment.
	CheckpointDirVar = "HANGAR_CHECKPOINT_DIR"
	// CheckpointIntervalVar, in a job's environment_variables, sets how often the folder is
	// saved while the command runs (seconds; 0: only at a notice and at the end).
	CheckpointIntervalVar = "HANGAR_CHECKPOINT_INTERVAL_SECONDS"
	// DefaultCheckpointInterval is the period without CheckpointIntervalVar.
	DefaultCheckpointInterval = 60 * time.Second
)

// checkpointTimeout bounds one save (upload and commit): a save that cannot finish in time is
// left for the next one.
const checkpointTimeout = 2 * time.Minute

// checkpointer saves one attempt's HANGAR_CHECKPOINT_DIR; one save at a time.
type checkpointer struct {
	s     *Supervisor
	dir   string
	every time.Duration
	// save serializes saves; last is the manifest last committed (an unchanged folder is not
	// committed again: its save time must stay the time its contents were written).
	save sync.Mutex
	last string
}

// dir is the run's HANGAR_CHECKPOINT_DIR on this node.
func (s *checkpointing) dir() string { return filepath.Join(s.cfg.Dir, CheckpointDirName) }

// prepare creates HANGAR_CHECKPOINT_DIR and restores the run's latest checkpoint
// into it, saying so in the run's log.
func (s *checkpointing) prepare(ctx context.Context, src snapshot.Source, log io.Writer, env map[string]string) error {
	dir := s.dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint folder: %w", err)
	}
	env[CheckpointDirVar] = dir
	cp := s.spec.Checkpoint
	if cp == nil {
		return nil
	}
	m, err := transfer.FetchManifest(ctx, src, cp.Manifest)
	if err != nil {
		return fmt.Errorf("restore checkpoint of %s: %w", cp.SavedAt.Format(time.RFC3339), err)
	}
	if err := snapshot.Materialize(ctx, m, src, dir, snapshot.MaterializeOptions{}); err != nil {
		return fmt.Errorf("restore checkpoint of %s: %w", cp.SavedAt.Format(time.RFC3339), err)
	}
	fmt.Fprintf(log, "hangar: %s\n", RestoredLine(cp))
	return nil
}

// RestoredLine is what the run's log says of a restored checkpoint.
func RestoredLine(cp *api.CheckpointRef) string {
	return fmt.Sprintf("restored checkpoint of %s (%d files, saved by attempt %d)",
		cp.SavedAt.UTC().Format("2006-01-02 15:04:05 UTC"), cp.Files, cp.Attempt)
}

// checkpointInterval is the job's period between saves (CheckpointIntervalVar), and a warning
// when its value is not a number of seconds.
func checkpointInterval(vars map[string]string) (time.Duration, string) {
	v, ok := vars[CheckpointIntervalVar]
	if !ok {
		return DefaultCheckpointInterval, ""
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return DefaultCheckpointInterval, fmt.Sprintf("environment_variables.%s: %q is not a number of seconds; saving checkpoints every %s",
			CheckpointIntervalVar, v, DefaultCheckpointInterval)
	}
	return time.Duration(n) * time.Second, ""
}

// notices routes the node's shutdown notices (api.NoticeSignal) for the supervisor's whole life:
// to the attempt's checkpointer while the command runs, else straight to the acknowledgement
// (before the command there is nothing to save; after it, the end save is under way).
type notices struct {
	mu     sync.Mutex
	active *checkpointer
}

// listenNotices takes api.NoticeSignal from now on; stop ends that.
func (s *checkpointing) listenNotices() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, api.NoticeSignal)
	dir := filepath.Join(s.cfg.Dir, "hangar")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, api.NoticeReadyFile), nil, 0o644)
		if err != nil {
			s.log.Warn("mark the supervisor ready for notices", "err", err)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				s.notice()
			}
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

func (s *checkpointing) notice() {
	s.notes.mu.Lock()
	c := s.notes.active
	s.notes.mu.Unlock()
	if c == nil {
		s.log.Info("shutdown notice: no command running, nothing to save now")
		ackNotice(s.Supervisor)
		return
	}
	s.log.Info("shutdown notice: saving the checkpoint now")
	if !s.worker() {
		c.saveNow(context.Background(), "notice")
	}
	ackNotice(s.Supervisor)
}

// start saves the folder periodically and on notices while the command runs. The
// returned stop ends that and, for an attempt that did not complete, saves one last time.
// Only node 0 of a multi-node run saves (its ranks hold the state, as rank 0 does in
// PyTorch's convention); every node gets the folder restored.
func (s *checkpointing) start(ctx context.Context) (stop func(job.Result)) {
	every, warning := checkpointInterval(s.spec.Spec.EnvironmentVariables)
	if warning != "" {
		s.warn(warning)
	}
	c := &checkpointer{s: s.Supervisor, dir: s.dir(), every: every}
	s.notes.mu.Lock()
	s.notes.active = c
	s.notes.mu.Unlock()
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if every > 0 && !s.worker() {
		wg.Go(func() { c.loop(lctx) })
	}
	return func(res job.Result) {
		cancel()
		wg.Wait()
		if res.State != job.Completed && !s.worker() {
			c.saveNow(context.WithoutCancel(ctx), "end")
		}
		s.notes.mu.Lock()
		s.notes.active = nil
		s.notes.mu.Unlock()
	}
}

func (c *checkpointer) loop(ctx context.Context) {
	tick.Every(ctx.Done(), c.every, func() { c.saveNow(ctx, "periodic") })
}

// saveNow saves the folder if it changed since the last commit; failures are logged (the next
// save tries again), a refusal because the run left this attempt ends nothing either.
func (c *checkpointer) saveNow(ctx context.Context, why string) {
	c.save.Lock()
	defer c.save.Unlock()
	ctx, cancel := context.WithTimeout(ctx, checkpointTimeout)
	defer cancel()
	saved, err := c.saveOnce(ctx, why)
	switch {
	case err != nil:
		c.s.log.Warn("checkpoint not saved", "why", why, "err", err)
	case saved > 0:
		c.s.log.Info("checkpoint saved", "why", why, "files", saved)
	}
}

// saveOnce uploads the folder's files, then its manifest, then commits the manifest: the
// server keeps the previous checkpoint until this commit. It returns how many files the
// committed checkpoint holds (0: nothing committed, the folder is empty or unchanged).
func (c *checkpointer) saveOnce(ctx context.Context, why string) (int, error) {
	at := time.Now().UTC()
	m, err := c.s.outputs.fromDir(ctx, c.dir)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", c.dir, err)
	}
	files := m.Files()
	h, manifest, err := c.s.outputs.putManifest(m)
	if err != nil {
		return 0, err
	}
	if h == c.last || (len(files) == 0 && c.last == "") {
		return 0, nil
	}
	if err := c.s.outputs.upload(ctx, c.s.outputs.fileItems(m), []transfer.Item{manifest}); err != nil {
		return 0, err
	}
	cp := api.CheckpointCommit{Attempt: c.s.spec.Attempt, Manifest: h, Files: len(files), Bytes: m.TotalSize(), SavedAt: at, Why: why}
	err = c.s.conn.retry(ctx, "commit checkpoint", func(ctx context.Context) error {
		return c.s.conn.c.Runs.CommitCheckpoint(ctx, c.s.cfg.RunID, cp)
	})
	if err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	c.last = h
	return len(files), nil
}

// ackNotice tells the agent waiting on a notice that this supervisor is done with it.
func ackNotice(s *Supervisor) {
	path := filepath.Join(s.cfg.Dir, "hangar", api.NoticeAckFile)
	if err := os.WriteFile(path, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		s.log.Warn("acknowledge the notice", "err", err)
	}
}
