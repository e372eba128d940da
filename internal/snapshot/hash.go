package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/blob"
)

// hashFunc returns a file's hash and size, and whether its content was
// read. A file that no longer exists gives fs.ErrNotExist.
type hashFunc func(ctx context.Context, j fileJob) (hash string, size int64, read bool, err error)

// hashAll runs fn over jobs on GOMAXPROCS workers and fills in the entries'
// hashes and sizes. Files that vanished keep an empty hash.
func hashAll(ctx context.Context, entries []Entry, jobs []fileJob, fn hashFunc, st *Stats) error {
	var read, vanished atomic.Int64
	err := each(ctx, min(runtime.GOMAXPROCS(0), len(jobs)), jobs, func(ctx context.Context, j fileJob) error {
		h, n, r, err := fn(ctx, j)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			vanished.Add(1)
		case err != nil:
			return err
		default:
			entries[j.idx].Hash, entries[j.idx].Size = h, n
			if r {
				read.Add(1)
			}
		}
		return nil
	})
	st.Hashed += int(read.Load())
	st.Ignored += int(vanished.Load())
	return err
}

// each calls do on every item, on n workers, until ctx ends or a call fails; then the items not
// begun are skipped, and the failure (or why ctx ended) is returned.
func each[T any](ctx context.Context, n int, items []T, do func(ctx context.Context, item T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan T)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for it := range ch {
				if err := do(ctx, it); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, it := range items {
		select {
		case ch <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	return context.Cause(ctx)
}

// hashLocal hashes files in place, through opts.Cache when set.
func hashLocal(opts ScanOptions) hashFunc {
	now := opts.now
	if now == nil {
		now = time.Now
	}
	return func(ctx context.Context, j fileJob) (string, int64, bool, error) {
		before := fileKeyOf(j.info)
		if h, ok := opts.Cache.lookup(j.abs, before); ok {
			return h, before.Size, false, nil
		}
		start := now()
		f, err := os.Open(j.abs)
		if err != nil {
			return "", 0, false, err
		}
		defer f.Close()
		h, n, err := blob.HashReader(ctxReader{ctx, f})
		if err != nil {
			return "", 0, false, fmt.Errorf("hash %s: %w", j.abs, err)
		}
		if fi, err := f.Stat(); err == nil {
			// Cache only if the file did not change while we read it and
			// could not change later without its key changing.
			if after := fileKeyOf(fi); after == before && after.Size == n && !racy(after, start) {
				opts.Cache.store(j.abs, after, h)
			}
		}
		return h, n, true, nil
	}
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
