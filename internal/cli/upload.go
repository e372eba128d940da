package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/transfer"
)

// uploader sends code snapshots and local inputs, remembering file hashes between submissions.
type uploader struct {
	env   *Env
	c     *api.Client
	cache *snapshot.HashCache
	// done holds what this submission already uploaded, by how and where: a pipeline's steps
	// often read the same folder (the pipeline's own input), which is scanned and sent once.
	done map[string]string
}

func (e *Env) newUploader(c *api.Client) *uploader {
	u := &uploader{env: e, c: c}
	if h, err := home.Default(); err == nil {
		if err := os.MkdirAll(h.CacheDir(), 0o700); err == nil {
			u.cache, _ = snapshot.OpenHashCache(filepath.Join(h.CacheDir(), "file-hashes.json"))
		}
	}
	return u
}

// close saves the hash cache.
func (u *uploader) close() {
	if u.cache != nil {
		_ = u.cache.Save()
	}
}

// code uploads a code snapshot and returns its manifest hash: a code folder (ignore files
// honoured) or a single code file, with a component's additional includes at its root
// (snapshot.ScanCode).
func (u *uploader) code(ctx context.Context, path string, includes ...string) (string, error) {
	return u.once("code\x00"+path+"\x00"+strings.Join(includes, "\x00"), func() (string, error) {
		return u.upload(ctx, "code", path, func(ctx context.Context) (*snapshot.Manifest, map[string]string, snapshot.Stats, error) {
			return snapshot.ScanCode(ctx, path, includes, snapshot.ScanOptions{Cache: u.cache})
		})
	})
}

// data uploads a local input path exactly as it is (no ignore rules).
func (u *uploader) data(ctx context.Context, name, path string, isFile bool) (string, error) {
	opts := snapshot.ScanOptions{IgnoreFiles: []string{}, DefaultIgnores: []string{}, Cache: u.cache}
	return u.once(fmt.Sprintf("data\x00%t\x00%s", isFile, path), func() (string, error) {
		return u.tree(ctx, "input "+name, path, isFile, opts)
	})
}

// once uploads what key names the first time this submission asks, and gives its manifest
// again after that.
func (u *uploader) once(key string, upload func() (string, error)) (string, error) {
	if h, ok := u.done[key]; ok {
		return h, nil
	}
	h, err := upload()
	if err != nil {
		return "", err
	}
	if u.done == nil {
		u.done = map[string]string{}
	}
	u.done[key] = h
	return h, nil
}

func (u *uploader) tree(ctx context.Context, label, path string, isFile bool, opts snapshot.ScanOptions) (string, error) {
	scan := snapshot.Scan
	if isFile {
		scan = snapshot.ScanFile
	}
	return u.upload(ctx, label, path, func(ctx context.Context) (*snapshot.Manifest, map[string]string, snapshot.Stats, error) {
		return scan(ctx, path, opts)
	})
}

// upload scans with scan and uploads what the workspace lacks of the tree; path is what the
// messages name.
func (u *uploader) upload(ctx context.Context, label, path string, scan func(context.Context) (*snapshot.Manifest, map[string]string, snapshot.Stats, error)) (string, error) {
	start := time.Now()
	m, local, st, err := scan(ctx)
	if err != nil {
		return "", scanError(label, path, err)
	}
	data, hash, err := m.Encode()
	if err != nil {
		return "", err
	}
	var items []transfer.Item
	total := int64(len(data))
	for _, e := range m.Files() {
		items = append(items, transfer.FileItem(e.Hash, e.Size, local[e.Hash]))
		total += e.Size
	}
	b := u.env.newBar(ctx, "upload "+label, total)
	ts, err := transfer.UploadTree(ctx, u.c, hash, data, items, b.set)
	b.done()
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", label, err)
	}
	sentFiles := ts.Sent
	if sentFiles > 0 {
		sentFiles-- // the manifest itself
	}
	ignored := ""
	if st.Ignored > 0 {
		ignored = fmt.Sprintf(", %d ignored", st.Ignored)
	}
	fmt.Fprintf(u.env.Stderr, "Uploaded %s: %d files (%s)%s; sent %d new (%s), %d already in the workspace [%s]\n",
		label, st.Files, humanBytes(st.Bytes), ignored, sentFiles, humanBytes(max(ts.SentBytes-int64(len(data)), 0)),
		max(ts.Blobs-1-sentFiles, 0), fmtDuration(time.Since(start)))
	return hash, nil
}

// scanError names a symlink that cannot be sent by its path as the user sees it.
func scanError(label, dir string, err error) error {
	var le *snapshot.LinkError
	if !errors.As(err, &le) {
		return fmt.Errorf("scan %s %s: %w", label, dir, err)
	}
	p := filepath.Join(dir, filepath.FromSlash(le.Path))
	if wd, werr := os.Getwd(); werr == nil && wd != string(filepath.Separator) {
		if rel, rerr := filepath.Rel(wd, p); rerr == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
	}
	hint := ""
	if label == "code" && !le.AbsoluteInside {
		hint = " (list it in .hangarignore to leave it out)"
	}
	return fmt.Errorf("%s: %s -> %s: %s%s", label, p, le.Target, le.Problem(label+" folder"), hint)
}
