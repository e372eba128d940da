package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/sync/errgroup"
)

// DownloadOptions choose how Download reads.
type DownloadOptions struct {
	// File reads Path as one object (a uri_file input); else Path is a folder, every object
	// under Path/ laid out relative to it.
	File bool
	// Cache, when set, keeps each object version on the node; a file reaches the destination
	// as a copy of it (a clone of its extents where the filesystem can).
	Cache *Cache
	// ReadOnly leaves the files (and a new folder's folders) without write permission.
	ReadOnly bool
	// Concurrency is how many objects are read at once (4 when 0).
	Concurrency int
	// Retries is how many times a broken read is taken up again, from where it stopped (5 when 0).
	Retries int
	Log     *slog.Logger
}

func (o *DownloadOptions) defaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// Download copies the Location into dest: a file (File) or a folder. Each object is streamed to
// disk; a read broken off is resumed with a ranged read of the same version, a few times with
// backoff. Nothing half-written is left at dest: the objects land in a folder beside it, moved
// into place once all are whole.
func (b *Bucket) Download(ctx context.Context, dest string, opts DownloadOptions) (Stats, error) {
	opts.defaults()
	var t tally
	objs, err := b.objects(ctx, opts.File, opts.Retries)
	if err != nil {
		return t.stats(), err
	}
	parent, base := filepath.Dir(dest), filepath.Base(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return t.stats(), b.newError("download", "", KindLocal, err)
	}
	stage := filepath.Join(parent, ".hangar-part-"+randomName()+"-"+base)
	defer os.RemoveAll(stage)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, o := range objs {
		target := stage
		if !opts.File {
			target = filepath.Join(stage, filepath.FromSlash(o.rel))
		}
		g.Go(func() error { return b.get(gctx, o, target, &opts, &t) })
	}
	if err := g.Wait(); err != nil {
		return t.stats(), err
	}
	if err := place(stage, dest, opts.File, opts.ReadOnly); err != nil {
		return t.stats(), b.newError("download", "", KindLocal, err)
	}
	s := t.stats()
	opts.Log.Info("downloaded", "location", b.loc.String(), "objects", s.Objects, "bytes", s.Bytes,
		"fetched", s.Fetched, "fetched_bytes", s.FetchedBytes, "cached", s.Cached, "resumed", s.Resumed)
	return s, nil
}

// get brings one object to target, through the cache when there is one.
func (b *Bucket) get(ctx context.Context, o object, target string, opts *DownloadOptions, t *tally) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return b.newError("download", o.key, KindLocal, err)
	}
	entry := opts.Cache.entry(b.loc, o.key, o.version)
	if entry == "" {
		if err := b.fetchFile(ctx, &o, target, opts, t); err != nil {
			return err
		}
		if opts.ReadOnly {
			if err := os.Chmod(target, 0o444); err != nil {
				return b.newError("download", o.key, KindLocal, err)
			}
		}
	} else if src := opts.Cache.open(entry, o.size); src != nil {
		// Copied from the open entry: a pruner removing its name meanwhile takes nothing from us.
		t.add(func(s *Stats) { s.Cached++; s.CachedBytes += o.size })
		err := deliverFrom(src, target, opts.ReadOnly)
		src.Close()
		if err != nil {
			return b.newError("download", o.key, KindLocal, err)
		}
	} else {
		tmp, err := opts.Cache.temp()
		if err != nil {
			return b.newError("download", o.key, KindLocal, err)
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		if err := b.fetchFile(ctx, &o, tmp.Name(), opts, t); err != nil {
			return err
		}
		// Delivered before it is committed: once in the cache a pruner may take it at once.
		if err := deliver(tmp.Name(), target, opts.ReadOnly); err != nil {
			return b.newError("download", o.key, KindLocal, err)
		}
		entry = opts.Cache.entry(b.loc, o.key, o.version) // the version may have changed mid-way
		if err := opts.Cache.commit(tmp.Name(), entry); err != nil {
			return b.newError("download", o.key, KindLocal, err)
		}
	}
	t.add(func(s *Stats) { s.Objects++; s.Bytes += o.size })
	return nil
}

// fetchFile reads o from the store into the file at p (created or truncated), resuming a read
// broken off from where it stopped.
func (b *Bucket) fetchFile(ctx context.Context, o *object, p string, opts *DownloadOptions, t *tally) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return b.newError("download", o.key, KindLocal, err)
	}
	defer f.Close()
	var off int64
	restarts := 0
	for attempt := 0; ; attempt++ {
		n, err := b.readAt(ctx, o, off, f)
		off += n
		t.add(func(s *Stats) { s.FetchedBytes += n })
		if err == nil {
			break
		}
		switch {
		case errors.Is(err, errChanged) && restarts < 2:
			// The object changed under the read: start it over at its new version.
			restarts++
			a, aerr := b.b.Attributes(ctx, o.key)
			if aerr != nil {
				return b.classify("download", o.key, aerr)
			}
			o.size, o.version, off = a.Size, attrsVersion(a), 0
			if err := f.Truncate(0); err != nil {
				return b.newError("download", o.key, KindLocal, err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return b.newError("download", o.key, KindLocal, err)
			}
			continue
		case attempt < opts.Retries && b.retryable(err):
			opts.Log.Warn("read broken off, resuming", "location", b.loc.String(), "object", o.key, "at", off, "error", Redact(err.Error(), b.secrets))
			t.add(func(s *Stats) { s.Resumed++ })
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return b.classify("download", o.key, err)
			}
			continue
		}
		return b.classify("download", o.key, err)
	}
	if off != o.size {
		return b.newError("download", o.key, KindOther, fmt.Errorf("read %d bytes, the store lists %d", off, o.size))
	}
	t.add(func(s *Stats) { s.Fetched++ })
	if err := f.Close(); err != nil {
		return b.newError("download", o.key, KindLocal, err)
	}
	return nil
}

// errChanged: the object is no longer the version being read.
var errChanged = errors.New("the object changed while it was read")

// readAt copies o's bytes from off to the end into w (at its current position), returning how
// many were written.
func (b *Bucket) readAt(ctx context.Context, o *object, off int64, w io.Writer) (int64, error) {
	r, err := b.b.NewRangeReader(ctx, o.key, off, -1, &blob.ReaderOptions{BeforeRead: ifVersion(o.version)})
	if err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return 0, errChanged
		}
		return 0, err
	}
	defer r.Close()
	if r.Size() != o.size {
		return 0, errChanged
	}
	lw := &localWriter{w: w}
	n, err := io.Copy(lw, r)
	if lw.err != nil {
		return n, b.newError("download", o.key, KindLocal, lw.err)
	}
	return n, err
}

// localWriter tells the disk's errors from the network's.
type localWriter struct {
	w   io.Writer
	err error
}

func (l *localWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err != nil {
		l.err = err
	}
	return n, err
}

// retryable says whether a read may be taken up again: a broken connection or a store that is
// briefly unwell, not a refusal.
func (b *Bucket) retryable(err error) bool {
	var oe *Error
	if errors.As(err, &oe) {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	switch b.kindOf(err) {
	case KindNetwork:
		return true
	case KindAccessDenied, KindNoContainer, KindNotFound:
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.Unknown:
		return true
	}
	return false
}

func backoff(attempt int) time.Duration {
	d := 200 * time.Millisecond << attempt
	if d > 5*time.Second {
		d = 5 * time.Second
	}
	return d/2 + rand.N(d/2)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// deliver puts a copy of the cache entry at target: a clone of its extents where the filesystem
// shares them (FICLONE: btrfs, XFS), else a copy of its bytes. Never a hard link: the entry is
// shared by every later run on the node, and a run's command owning a link to it could make it
// writable again (chmod) and change what the next run, perhaps another user's, reads.
func deliver(entry, target string, readOnly bool) error {
	src, err := os.Open(entry)
	if err != nil {
		return err
	}
	defer src.Close()
	return deliverFrom(src, target, readOnly)
}

// deliverFrom is deliver from an entry already open (read from its start).
func deliverFrom(src *os.File, target string, readOnly bool) error {
	mode := fs.FileMode(0o644)
	if readOnly {
		mode = 0o444
	}
	dst, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if cloneFile(dst, src) {
		return dst.Close()
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
