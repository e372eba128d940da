package controller

import (
	"context"
	"errors"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

// CommitCheckpoint makes a supervisor's uploaded checkpoint its run's latest (docs/checkpoints.md).
// The manifest is committed last: it must be stored and name only stored files, so a save cut
// short (a node gone mid-upload) never replaces the good one before it. The counts are the
// manifest's, not the supervisor's word. A save from an attempt the run has left is refused.
func (n *Checkpoints) CommitCheckpoint(ctx context.Context, runID string, cp api.CheckpointCommit) error {
	c := n.c
	if !blob.ValidHash(cp.Manifest) {
		return invalidf("manifest: %q is not a blob hash", cp.Manifest)
	}
	if cp.SavedAt.IsZero() {
		return invalidf("saved_at: required")
	}
	m, err := c.Checkpoints.storedManifest(cp.Manifest)
	if err != nil {
		return err
	}
	files := m.Files()
	for _, f := range files {
		if !c.Blobs.Has(f.Hash) {
			return conflictf("checkpoint of run %s: file %s (%s) is not uploaded", runID, f.Path, f.Hash)
		}
	}
	now := c.Now()
	saved := cp.SavedAt.UTC()
	if saved.After(now) { // a node's clock ahead of ours must not make this save win for ever
		saved = now
	}
	err = c.Store.Runs.CommitCheckpoint(ctx, store.Checkpoint{RunID: runID, Attempt: max(cp.Attempt, 1),
		Manifest: cp.Manifest, Files: len(files), Bytes: m.TotalSize(), SavedAt: saved, CommittedAt: now})
	if errors.Is(err, store.ErrStale) {
		return conflictf("run %s is no longer on attempt %d (or ended): its checkpoint is not kept", runID, cp.Attempt)
	}
	if err != nil {
		return mapStoreErr(err)
	}
	c.Log.Debug("checkpoint committed", "run", runID, "attempt", cp.Attempt, "files", len(files), "why", cp.Why)
	return nil
}

// storedManifest reads and decodes an uploaded manifest from the blob store.
func (n *Checkpoints) storedManifest(hash string) (*snapshot.Manifest, error) {
	c := n.c
	if !c.Blobs.Has(hash) {
		return nil, conflictf("manifest %s is not uploaded", hash)
	}
	m, err := c.readManifest(hash)
	var ce *Error
	if err != nil && !errors.As(err, &ce) {
		return nil, invalidf("manifest %s: %v", hash, err)
	}
	return m, err
}

// checkpointRef is a run's latest checkpoint for its spec and job show (nil: none).
func (n *Checkpoints) checkpointRef(ctx context.Context, runID string) *api.CheckpointRef {
	c := n.c
	cp, err := c.Store.Runs.LatestCheckpoint(ctx, runID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			c.Log.Warn("read checkpoint", "run", runID, "err", err)
		}
		return nil
	}
	return &api.CheckpointRef{Attempt: cp.Attempt, Manifest: cp.Manifest, Files: cp.Files, Bytes: cp.Bytes, SavedAt: cp.SavedAt}
}

// LatestCheckpoint is a run's latest saved checkpoint, for the run detail (nil: none).
func (n *Checkpoints) LatestCheckpoint(ctx context.Context, runID string) *api.CheckpointRef {
	c := n.c
	return c.Checkpoints.checkpointRef(ctx, runID)
}

// recordPreemptionLoss notes, as a run leaves an attempt, what the loss of a preempted attempt
// is judged from: when its command started and the checkpoint the next attempt resumes from.
// Any later save of the old attempt is refused (CommitCheckpoint), so the latest checkpoint now
// is the one restored.
func (n *Checkpoints) recordPreemptionLoss(ctx context.Context, old *job.Run) {
	c := n.c
	var saved *time.Time
	if cp, err := c.Store.Runs.LatestCheckpoint(ctx, old.ID); err == nil {
		saved = &cp.SavedAt
	}
	if err := c.Store.Runs.SetPreemptionLoss(ctx, old.ID, max(old.Attempt, 1), old.StartedAt, saved); err != nil {
		c.Log.Warn("record the work a preemption lost", "run", old.ID, "err", err)
	}
}

// Preemptions is what each of a run's preemptions cost, for the run detail.
func (n *Checkpoints) Preemptions(ctx context.Context, runID string, events []job.Event) ([]api.Preemption, error) {
	c := n.c
	ps, err := c.Store.Runs.RunPreemptions(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]api.Preemption, 0, len(ps))
	for _, p := range ps {
		if p.Attempt < 1 {
			continue // recorded as the run was ending: it lost nothing and was not requeued
		}
		out = append(out, PreemptionCost(p, events))
	}
	return out, nil
}

// PreemptionCost judges one preemption (pure): the work lost runs from the later of the
// attempt's start and the checkpoint the next attempt resumed from, to the preemption (none
// when the command never started); the wait runs from the preemption to the next start of the
// command (the first Running event after it; nil while the run has not started again).
func PreemptionCost(p store.Preemption, events []job.Event) api.Preemption {
	out := api.Preemption{Attempt: p.Attempt, Node: p.Node, At: p.At, ResumedFrom: p.CheckpointAt}
	out.LostSeconds = LostWork(p.At, p.StartedAt, p.CheckpointAt).Seconds()
	for _, e := range events {
		if e.To == job.Running && e.Time.After(p.At) {
			w := e.Time.Sub(p.At).Seconds()
			out.WaitSeconds = &w
			break
		}
	}
	return out
}

// LostWork is the work an attempt preempted at `at` lost (pure): nothing when its command never
// started; else from the later of its start and the saved checkpoint to the preemption. A
// checkpoint saved before the attempt started (by an earlier attempt) is where it began, so
// the start counts.
func LostWork(at time.Time, started, checkpoint *time.Time) time.Duration {
	if started == nil {
		return 0
	}
	from := *started
	if checkpoint != nil && checkpoint.After(from) {
		from = *checkpoint
	}
	if !at.After(from) {
		return 0
	}
	return at.Sub(from)
}
