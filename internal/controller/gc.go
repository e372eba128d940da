package controller

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// The blob collector (docs/data.md#disk-space): a blob is kept while anything the store holds
// names it (a run, a model, an environment, a data asset, a component, a datastore path, a
// pipeline step, a deployment...), or a kept manifest lists it, or it is younger than the grace
// (an upload whose job is not created yet; a blob the server just told a client it has, see
// blob.Store.Has). One collection runs at a time, in the leading server only.

// CollectBlobs frees the workspace's blobs nothing references that are older than grace, or
// in a dry run says which it would free.
func (n *GC) CollectBlobs(ctx context.Context, dryRun bool, grace time.Duration) (*api.GCReport, error) {
	c := n.c
	return c.GC.collectBlobs(ctx, nil, dryRun, grace)
}

// collectBlobs is CollectBlobs; a non-nil only limits what may be freed to those blobs (what a
// deleted run referenced).
func (n *GC) collectBlobs(ctx context.Context, only map[string]bool, dryRun bool, grace time.Duration) (*api.GCReport, error) {
	c := n.c
	c.gc.Lock()
	defer c.gc.Unlock()
	// Blobs' times are the file system's: the cutoff is on the wall clock, not c.Now.
	cutoff := time.Now().Add(-grace)
	var blobs []blob.Info
	if err := c.Blobs.Walk(func(i blob.Info) error { blobs = append(blobs, i); return ctx.Err() }); err != nil {
		return nil, fmt.Errorf("collect blobs: %w", err)
	}
	live, err := c.GC.liveBlobs(ctx, blobs, cutoff)
	if err != nil {
		return nil, fmt.Errorf("collect blobs: %w", err)
	}
	plan := planGC(blobs, live, only, cutoff)
	rep := &api.GCReport{DryRun: dryRun, Grace: grace.String(), Blobs: []api.GCBlob{}, Kept: plan.kept, KeptBytes: plan.keptBytes}
	for _, b := range plan.free {
		if dryRun {
			addFreed(rep, b.Hash, b.Size)
			continue
		}
		removed, size, err := c.Blobs.RemoveIfOlder(b.Hash, cutoff)
		if err != nil {
			return rep, fmt.Errorf("collect blobs: %w", err)
		}
		if !removed {
			rep.Kept, rep.KeptBytes = rep.Kept+1, rep.KeptBytes+b.Size
			continue
		}
		addFreed(rep, b.Hash, size)
	}
	return rep, nil
}

// gcPlan is what a collection frees (largest first) and how much it keeps.
type gcPlan struct {
	free      []blob.Info
	kept      int
	keptBytes int64
}

// planGC picks the blobs to free: not live, not younger than cutoff, and among only when only is
// set (the others are not counted).
func planGC(blobs []blob.Info, live, only map[string]bool, cutoff time.Time) gcPlan {
	var p gcPlan
	for _, b := range blobs {
		switch {
		case only != nil && !only[b.Hash]:
		case live[b.Hash] || b.ModTime.After(cutoff):
			p.kept, p.keptBytes = p.kept+1, p.keptBytes+b.Size
		default:
			p.free = append(p.free, b)
		}
	}
	slices.SortFunc(p.free, func(a, b blob.Info) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.Hash, b.Hash))
	})
	return p
}

// liveBlobs are the blobs to keep whatever their age: those the store names, those younger than
// cutoff, and the files of every manifest among them.
func (n *GC) liveBlobs(ctx context.Context, blobs []blob.Info, cutoff time.Time) (map[string]bool, error) {
	c := n.c
	roots := map[string]bool{}
	err := c.Store.BlobRefs(ctx, func(text string) { hashesIn(text, func(h string) { roots[h] = true }) })
	if err != nil {
		return nil, err
	}
	for _, b := range blobs {
		if b.ModTime.After(cutoff) {
			roots[b.Hash] = true
		}
	}
	return c.GC.withManifestFiles(ctx, roots)
}

// withManifestFiles adds to hashes the files of every stored manifest among them (manifests
// list files only, so one level is the whole closure).
func (n *GC) withManifestFiles(ctx context.Context, hashes map[string]bool) (map[string]bool, error) {
	c := n.c
	live := make(map[string]bool, len(hashes))
	for h := range hashes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		live[h] = true
		m, err := c.GC.manifestOf(h)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		for _, e := range m.Files() {
			live[e.Hash] = true
		}
	}
	return live, nil
}

// manifestHead is how every manifest's canonical encoding (snapshot.Manifest.Encode) begins.
var manifestHead = []byte(`{"entries":[`)

// manifestOf reads the blob h when it is a manifest (nil when it is not stored, or not one).
// It reads the store's files directly: asking Has would refresh the blob's time.
func (n *GC) manifestOf(h string) (*snapshot.Manifest, error) {
	c := n.c
	f, err := c.Blobs.Open(h)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, len(manifestHead))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, manifestHead) {
		return nil, nil // shorter than a manifest's start, or another kind of file
	}
	b, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), f), maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	if len(b) > maxManifestBytes {
		// Its files cannot be told: nothing is collected rather than a file it lists.
		return nil, fmt.Errorf("blob %s looks like a manifest of over %d MiB, which the collector does not read", h, maxManifestBytes>>20)
	}
	m, err := snapshot.Decode(b)
	if err != nil {
		return nil, nil // it only looks like one: it names no files
	}
	return m, nil
}

// hashesIn calls fn with every run of exactly 64 lowercase hex digits in text: a blob's hash
// wherever a table keeps it (a column of its own, or inside a spec's JSON).
func hashesIn(text string, fn func(string)) {
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && (text[i] >= '0' && text[i] <= '9' || text[i] >= 'a' && text[i] <= 'f') {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start == 64 {
			fn(text[start:i])
		}
		start = -1
	}
}

// addFreed counts a freed blob in the report.
func addFreed(r *api.GCReport, hash string, size int64) {
	r.Blobs = append(r.Blobs, api.GCBlob{Hash: hash, Size: size})
	r.Count, r.Bytes = r.Count+1, r.Bytes+size
}
