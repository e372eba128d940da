package controller

import (
	"context"
	"fmt"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// DeleteRun deletes an ended run (store.ErrNotEnded otherwise): its records, its directory on
// the node where its backend keeps one the server can remove (the local target, attached VMs;
// a cluster node's agent removes its own once the run's end is recorded), and the blobs only it
// referenced that are older than the grace (younger ones go at a later collection). The
// directory and the blobs are freed on a best effort: the run is deleted whatever becomes of
// them, and what stays is said in the server's log.
func (c *Controller) DeleteRun(ctx context.Context, id string) error {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return mapStoreErr(err)
	}
	refs := map[string]bool{}
	if err := c.Store.RunBlobRefs(ctx, id, func(text string) { hashesIn(text, func(h string) { refs[h] = true }) }); err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	hashesIn(r.ArtifactsHash, func(h string) { refs[h] = true })
	if err := c.Store.RunWrites.DeleteRun(ctx, id); err != nil {
		return mapStoreErr(err)
	}
	log := c.Log.With("run", id)
	if err := c.removeRunDir(ctx, r); err != nil {
		log.Warn("the deleted run's directory stays on its node", "err", err)
	}
	if rep, err := c.freeRunBlobs(ctx, refs); err != nil {
		log.Warn("the deleted run's blobs stay until the next collection", "err", err)
	} else {
		log.Info("freed the blobs only the deleted run referenced", "blobs", rep.Count, "bytes", rep.Bytes,
			"kept", rep.Kept)
	}
	return nil
}

// freeRunBlobs collects, among the blobs a deleted run referenced (and the files of its
// manifests), those nothing else references.
func (c *Controller) freeRunBlobs(ctx context.Context, refs map[string]bool) (*api.GCReport, error) {
	only, err := c.GC.withManifestFiles(ctx, refs)
	if err != nil {
		return nil, err
	}
	return c.GC.collectBlobs(ctx, only, false, c.Settings.BlobGrace)
}

// removeRunDir removes an ended run's directory where its backend can (see runDirKeeper).
func (c *Controller) removeRunDir(ctx context.Context, r *job.Run) error {
	if r.Handle == nil {
		return nil // never handed to a backend
	}
	b, t, err := c.backendFor(ctx, r)
	if err != nil {
		return err
	}
	k, ok := b.(runDirKeeper)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, runDirTimeout)
	defer cancel()
	return k.RemoveRunDirOn(ctx, *t, r.ID)
}
