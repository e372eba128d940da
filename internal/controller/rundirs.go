package controller

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// runDirKeeper is a backend whose runs' directories the server can list and remove: the local
// target's, on this machine, and attached VMs', over SSH. A cluster node's agent removes its
// own runs' directories (internal/agent); a Kubernetes pod's go with the pod.
type runDirKeeper interface {
	// RunDirsOn lists the runs whose directories target t holds; private says the directories
	// are this workspace's alone (one of a run it does not know is a deleted run's).
	RunDirsOn(ctx context.Context, t compute.Target) (ids []string, private bool, err error)
	// RemoveRunDirOn removes one, refusing while its supervisor runs.
	RemoveRunDirOn(ctx context.Context, t compute.Target, runID string) error
}

// cacheTrimmer is a backend with a node cache on the server's machine that duplicates the
// workspace's store (the local target's): see local.Backend.TrimCache.
type cacheTrimmer interface {
	TrimCache(ctx context.Context, cutoff time.Time) (n int, bytes int64, err error)
}

// runDirTimeout bounds one target's listing or one removal (an attached VM may not answer).
const runDirTimeout = 30 * time.Second

// RunHousekeeping removes the directories of runs that ended Settings.KeepRunDirs ago (and what
// the server machine's node cache holds twice), and
// collects the blobs nothing references every Settings.GCEvery (never when negative), until
// ctx ends. A run's directory is removed only once the run is recorded ended: its supervisor
// registered its logs and outputs before it reported the end, so its files are in the blob
// store.
func (c *Controller) RunHousekeeping(ctx context.Context) {
	j := &janitor{c: c, log: c.Log.With("task", "housekeeping"), told: map[string]string{}}
	every := min(max(c.Settings.KeepRunDirs/4, time.Second), time.Minute)
	dirs := time.NewTicker(every)
	defer dirs.Stop()
	var gc <-chan time.Time
	if c.Settings.GCEvery > 0 {
		t := time.NewTicker(c.Settings.GCEvery)
		defer t.Stop()
		gc = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-dirs.C:
			j.removeRunDirs(ctx)
		case <-gc:
			j.collect(ctx)
		}
	}
}

// janitor is the housekeeping loop's memory: what it last said about each run whose directory
// stays, so that it says it once.
type janitor struct {
	c    *Controller
	log  *slog.Logger
	told map[string]string
}

// removeRunDirs removes, on every target whose backend keeps run directories, those of the runs
// that ended long enough ago (dirsToRemove).
func (j *janitor) removeRunDirs(ctx context.Context) {
	targets, err := j.c.Store.Cluster.Computes(ctx)
	if err != nil {
		j.log.Warn("list targets for their run directories", "err", err)
		return
	}
	for _, t := range targets {
		k, ok := j.c.Backends[t.Type].(runDirKeeper)
		if !ok || ctx.Err() != nil {
			continue
		}
		j.removeOn(ctx, k, t)
	}
	j.trimCaches(ctx)
}

// trimCaches removes from the server machine's node cache what the workspace's store holds
// too, older than the blob grace: a local run's outputs would otherwise stay there twice.
func (j *janitor) trimCaches(ctx context.Context) {
	for typ, b := range j.c.Backends {
		tr, ok := b.(cacheTrimmer)
		if !ok {
			continue
		}
		n, bytes, err := tr.TrimCache(ctx, time.Now().Add(-j.c.Settings.BlobGrace))
		switch {
		case err != nil:
			j.once("cache:"+typ, "the node cache could not be trimmed", err)
		case n > 0:
			j.log.Info("trimmed the node cache of what the workspace's store holds", "blobs", n, "bytes", bytes)
		}
	}
}

func (j *janitor) removeOn(ctx context.Context, k runDirKeeper, t compute.Target) {
	lctx, cancel := context.WithTimeout(ctx, runDirTimeout)
	ids, private, err := k.RunDirsOn(lctx, t)
	cancel()
	if err != nil {
		j.once("target:"+t.Name, "the run directories of a target could not be listed", err, "compute", t.Name)
		return
	}
	j.forget("target:" + t.Name)
	ends, err := j.c.Store.Runs.RunEnds(ctx, ids)
	if err != nil {
		j.log.Warn("read runs for their directories", "compute", t.Name, "err", err)
		return
	}
	for _, id := range dirsToRemove(ids, ends, private, j.c.Now(), j.c.Settings.KeepRunDirs) {
		rctx, cancel := context.WithTimeout(ctx, runDirTimeout)
		err := k.RemoveRunDirOn(rctx, t, id)
		cancel()
		if err != nil {
			j.once(id, "an ended run's directory stays", err, "compute", t.Name)
			continue
		}
		j.forget(id)
		j.log.Info("removed an ended run's directory", "run", id, "compute", t.Name)
	}
}

// once logs what stays, once per subject and reason.
func (j *janitor) once(subject, msg string, err error, args ...any) {
	if j.told[subject] == err.Error() {
		return
	}
	j.told[subject] = err.Error()
	j.log.Warn(msg, append(args, "subject", subject, "err", err)...)
}

func (j *janitor) forget(subject string) { delete(j.told, subject) }

// collect is the periodic collection of the blobs nothing references.
func (j *janitor) collect(ctx context.Context) {
	rep, err := j.c.GC.CollectBlobs(ctx, false, j.c.Settings.BlobGrace)
	if err != nil {
		j.log.Warn("collect blobs", "err", err)
		return
	}
	j.log.Info("collected blobs nothing references", "blobs", rep.Count, "bytes", rep.Bytes, "kept", rep.Kept)
}

// dirsToRemove picks, among the runs whose directories a target holds (ids), those to remove at
// now: ended at least keep ago; on a target private to the workspace, also those it no longer
// knows (deleted: their directory has nothing left to give). A run not ended keeps its own.
func dirsToRemove(ids []string, ends map[string]store.RunEnd, private bool, now time.Time, keep time.Duration) []string {
	var out []string
	for _, id := range ids {
		e, known := ends[id]
		switch {
		case !known:
			if private {
				out = append(out, id)
			}
		case !e.Status.Terminal():
		case e.EndedAt == nil || !e.EndedAt.Add(keep).After(now):
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
