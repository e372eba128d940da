package transfer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// Item is one blob that may need uploading.
type Item struct {
	Hash string
	Size int64
	Open func() (io.ReadCloser, error)
}

// FileItem is an Item read from a local file.
func FileItem(hash string, size int64, path string) Item {
	return Item{Hash: hash, Size: size, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// BytesItem is an Item held in memory (a manifest).
func BytesItem(hash string, b []byte) Item {
	return Item{Hash: hash, Size: int64(len(b)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// Stats says what an upload did.
type Stats struct {
	Blobs     int   // blobs considered (distinct)
	Bytes     int64 // their total size
	Sent      int   // blobs the server lacked and received
	SentBytes int64
	Requests  int
}

// Tunables of Upload.
const (
	missingBatch   = 5000     // hashes per "which are missing" question
	bundleMaxBytes = 16 << 20 // a bundle holds small blobs up to this much
	bundleMaxItems = 4000
	smallBlob      = 1 << 20 // blobs below this go into bundles
	parallel       = 4
)

// Upload sends the blobs the server lacks: small ones together in bundles, large ones one by one,
// a few requests at a time. progress, when set, is called with the bytes sent so far.
func Upload(ctx context.Context, c *api.Client, items []Item, progress func(sent int64)) (Stats, error) {
	items = dedupe(items)
	st := Stats{Blobs: len(items)}
	byHash := make(map[string]Item, len(items))
	hashes := make([]string, 0, len(items))
	for _, it := range items {
		st.Bytes += it.Size
		byHash[it.Hash] = it
		hashes = append(hashes, it.Hash)
	}
	var missing []string
	for start := 0; start < len(hashes); start += missingBatch {
		end := min(start+missingBatch, len(hashes))
		m, err := c.Blobs.Missing(ctx, hashes[start:end])
		if err != nil {
			return st, fmt.Errorf("ask which blobs are missing: %w", err)
		}
		st.Requests++
		missing = append(missing, m...)
	}
	var todo []Item
	for _, h := range missing {
		if it, ok := byHash[h]; ok {
			todo = append(todo, it)
		}
	}
	var mu sync.Mutex
	sent := func(n int, b int64) {
		mu.Lock()
		defer mu.Unlock()
		st.Sent += n
		st.SentBytes += b
		st.Requests++
		if progress != nil {
			progress(st.SentBytes) // under the lock: calls never overlap and totals only grow
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, batch := range plan(todo) {
		g.Go(func() error {
			if len(batch) == 1 && batch[0].Size >= smallBlob {
				return putOne(gctx, c, batch[0], sent)
			}
			return putBundle(gctx, c, batch, sent)
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	return st, nil
}

func dedupe(items []Item) []Item {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if !seen[it.Hash] {
			seen[it.Hash] = true
			out = append(out, it)
		}
	}
	return out
}

// plan groups small blobs into bundles and leaves large ones alone, largest first.
func plan(items []Item) [][]Item {
	sort.SliceStable(items, func(i, j int) bool { return items[i].Size > items[j].Size })
	var out [][]Item
	var cur []Item
	var curBytes int64
	for _, it := range items {
		if it.Size >= smallBlob {
			out = append(out, []Item{it})
			continue
		}
		if len(cur) > 0 && (curBytes+it.Size > bundleMaxBytes || len(cur) >= bundleMaxItems) {
			out = append(out, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, it)
		curBytes += it.Size
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func putOne(ctx context.Context, c *api.Client, it Item, sent func(int, int64)) error {
	r, err := it.Open()
	if err != nil {
		return fmt.Errorf("upload %s: %w", it.Hash, err)
	}
	defer r.Close()
	if err := c.Blobs.Put(ctx, it.Hash, r, it.Size); err != nil {
		return fmt.Errorf("upload %s: %w", it.Hash, err)
	}
	sent(1, it.Size)
	return nil
}

func putBundle(ctx context.Context, c *api.Client, items []Item, sent func(int, int64)) error {
	pr, pw := io.Pipe()
	bi := make([]blob.BundleItem, len(items))
	var total int64
	for i, it := range items {
		bi[i] = blob.BundleItem{Hash: it.Hash, Size: it.Size, Open: it.Open}
		total += it.Size
	}
	go func() { pw.CloseWithError(blob.WriteBundle(pw, bi)) }()
	resp, err := c.Blobs.PutBundle(ctx, pr)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return fmt.Errorf("upload bundle of %d blobs: %w", len(items), err)
	}
	if resp.Count != len(items) {
		return fmt.Errorf("upload bundle: server stored %d of %d blobs", resp.Count, len(items))
	}
	sent(len(items), total)
	return nil
}

// ClientSource reads blobs from the server (a snapshot.Source).
type ClientSource struct{ C *api.Client }

// Open streams one blob from the server.
func (s ClientSource) Open(ctx context.Context, hash string) (io.ReadCloser, error) {
	return s.C.Blobs.Open(ctx, hash)
}

// FetchManifest reads and decodes a manifest blob from a source.
func FetchManifest(ctx context.Context, src snapshot.Source, hash string) (*snapshot.Manifest, error) {
	r, err := src.Open(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("fetch manifest %s: %w", hash, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("fetch manifest %s: %w", hash, err)
	}
	if h, _, _ := blob.HashReader(bytes.NewReader(b)); h != hash {
		return nil, fmt.Errorf("fetch manifest %s: content does not match its hash", hash)
	}
	return snapshot.Decode(b)
}

// UploadTree uploads a manifest's files and then the manifest itself. The manifest goes last, so a
// workspace that has a manifest has every file it names (blobs are never removed before the
// manifests that name them); an unchanged tree therefore costs one small question.
func UploadTree(ctx context.Context, c *api.Client, manifestHash string, manifest []byte, files []Item, progress func(int64)) (Stats, error) {
	missing, err := c.Blobs.Missing(ctx, []string{manifestHash})
	if err != nil {
		return Stats{}, fmt.Errorf("ask whether the tree is known: %w", err)
	}
	if len(missing) == 0 {
		st := Stats{Blobs: 1, Bytes: int64(len(manifest)), Requests: 1}
		for _, f := range dedupe(files) {
			st.Blobs++
			st.Bytes += f.Size
		}
		return st, nil
	}
	st, err := Upload(ctx, c, files, progress)
	if err != nil {
		return st, err
	}
	ms, err := Upload(ctx, c, []Item{BytesItem(manifestHash, manifest)}, nil)
	st.Blobs += ms.Blobs
	st.Bytes += ms.Bytes
	st.Sent += ms.Sent
	st.SentBytes += ms.SentBytes
	st.Requests += ms.Requests + 1
	return st, err
}
