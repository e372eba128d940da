package objstore

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"
)

// uploadConcurrency is how many files Upload writes at once; each is itself written in parts by
// the store's SDK.
const uploadConcurrency = 4

// Upload writes src to the Location: a file as the object at Path, a folder's regular files as
// the objects under Path/ (relative paths kept). Each file is streamed (the SDKs write large ones
// in parts); symbolic links and other special files are left out, each named in Stats.Warnings.
// A write broken off starts that file over, a few times with backoff.
func (b *Bucket) Upload(ctx context.Context, src string) (Stats, error) {
	var t tally
	fi, err := os.Stat(src)
	if err != nil {
		return t.stats(), b.newError("upload", "", KindLocal, err)
	}
	type file struct{ path, key string }
	var files []file
	if fi.Mode().IsRegular() {
		key := strings.Trim(b.loc.Path, "/")
		if key == "" {
			key = filepath.Base(src)
		}
		files = append(files, file{src, key})
	} else {
		prefix := b.prefix()
		err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if !d.Type().IsRegular() {
				what := "special file"
				if d.Type()&fs.ModeSymlink != 0 {
					what = "symbolic link"
				}
				t.add(func(s *Stats) { s.Warnings = append(s.Warnings, fmt.Sprintf("%s %s left out", what, rel)) })
				return nil
			}
			files = append(files, file{p, prefix + rel})
			return nil
		})
		if err != nil {
			return t.stats(), b.newError("upload", "", KindLocal, err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploadConcurrency)
	for _, f := range files {
		g.Go(func() error { return b.put(gctx, f.path, f.key, &t) })
	}
	err = g.Wait()
	return t.stats(), err
}

// put writes one file as key, again from the start after a broken write.
func (b *Bucket) put(ctx context.Context, p, key string, t *tally) error {
	for attempt := 0; ; attempt++ {
		n, err := b.putOnce(ctx, p, key)
		if err == nil {
			t.add(func(s *Stats) { s.Objects++; s.Bytes += n })
			return nil
		}
		if attempt >= 4 || !b.retryable(err) {
			return b.classify("upload", key, err)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return b.classify("upload", key, err)
		}
	}
}

func (b *Bucket) putOnce(ctx context.Context, p, key string) (int64, error) {
	// Not through a link: the walk left links out, and a link put in a file's place since
	// (by what wrote the folder) is refused rather than followed to a file of the node's.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0, b.newError("upload", key, KindLocal, err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ct := mime.TypeByExtension(path.Ext(key))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w, err := b.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: ct})
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, f)
	if err != nil {
		cancel() // abandons the object rather than writing a part of it
		w.Close()
		return n, err
	}
	return n, w.Close()
}
