package snapshot

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/blob"
)

// Source yields blob content by hash.
type Source interface {
	Open(ctx context.Context, hash string) (io.ReadCloser, error)
}

// StoreSource is a Source over a local blob.Store.
type StoreSource struct{ Store *blob.Store }

// Open opens the blob from the store.
func (s StoreSource) Open(ctx context.Context, hash string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Store.Open(hash)
}

// MaterializeOptions control Materialize.
type MaterializeOptions struct {
	ReadOnly bool // files get their write bits cleared (0444, 0555)
	Parallel int  // files written at once; GOMAXPROCS when <= 0
}

const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Materialize writes the tree described by m under dest, creating dest if
// needed: directories, files (content from src, verified against its hash
// while copying, mode applied) and symlinks. Existing entries at the same
// paths are replaced; other content of dest is left alone. The manifest is
// validated first and nothing is written if it is unsafe: paths that leave
// dest, entries below a file or symlink, duplicates, or symlinks whose
// target, followed through the tree's other symlinks, leaves dest. All
// writes go through an os.Root, so symlinks already in dest cannot redirect
// them outside either.
func Materialize(ctx context.Context, m *Manifest, src Source, dest string, opts MaterializeOptions) error {
	es := slices.Clone(m.Entries)
	sortEntries(es)
	if err := checkForMaterialize(es); err != nil {
		return fmt.Errorf("materialize: %w", err)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("materialize: %w", err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("materialize: %w", err)
	}
	defer root.Close()
	if err := makeDirs(root, es); err != nil {
		return fmt.Errorf("materialize %s: %w", dest, err)
	}
	if err := writeFiles(ctx, root, es, src, opts); err != nil {
		return fmt.Errorf("materialize %s: %w", dest, err)
	}
	for _, e := range es {
		if e.Type == TypeSymlink {
			if err := placeSymlink(root, e); err != nil {
				return fmt.Errorf("materialize %s: %w", dest, err)
			}
		}
	}
	// Directory modes last, deepest first, so read-only directories are
	// filled before they are closed.
	for _, e := range slices.Backward(es) {
		if e.Type == TypeDir {
			if err := root.Chmod(osPath(e.Path), fs.FileMode(e.Mode)); err != nil {
				return fmt.Errorf("materialize %s: %w", dest, err)
			}
		}
	}
	return nil
}

func checkForMaterialize(es []Entry) error {
	if err := (&Manifest{Entries: es}).validate(); err != nil {
		return err
	}
	for _, e := range es {
		if !osLocal(e.Path) {
			return fmt.Errorf("%w: path %q is not local on %s", ErrInvalid, e.Path, runtime.GOOS)
		}
	}
	return checkSymlinks(es)
}

// osLocal reports whether a validated slash path is also a plain local
// path on this OS (no volume names, reserved names or backslashes).
func osLocal(p string) bool {
	if runtime.GOOS == "windows" && strings.ContainsAny(p, `\:`) {
		return false
	}
	return filepath.IsLocal(filepath.FromSlash(p))
}

func osPath(p string) string { return filepath.FromSlash(p) }

// makeDirs creates the directories of the manifest and every ancestor of
// every entry, replacing files and symlinks in their way.
func makeDirs(root *os.Root, es []Entry) error {
	done := map[string]bool{".": true}
	for _, e := range es {
		p := e.Path
		if e.Type != TypeDir {
			p = path.Dir(p)
		}
		for i := 0; i <= len(p); i++ {
			if i < len(p) && p[i] != '/' {
				continue
			}
			if d := p[:i]; !done[d] {
				done[d] = true
				if err := makeDir(root, d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func makeDir(root *os.Root, d string) error {
	fi, err := root.Lstat(osPath(d))
	switch {
	case err == nil && fi.IsDir():
		if fi.Mode().Perm()&0o700 == 0o700 {
			return nil
		}
		// Writable while we fill it; the final mode comes last.
		return root.Chmod(osPath(d), fi.Mode().Perm()|0o700)
	case err == nil:
		if err := root.Remove(osPath(d)); err != nil {
			return err
		}
		return root.Mkdir(osPath(d), 0o755)
	case errors.Is(err, fs.ErrNotExist):
		return root.Mkdir(osPath(d), 0o755)
	}
	return err
}

func writeFiles(ctx context.Context, root *os.Root, es []Entry, src Source, opts MaterializeOptions) error {
	n := opts.Parallel
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	var files []Entry
	for _, e := range es {
		if e.Type == TypeFile {
			files = append(files, e)
		}
	}
	return each(ctx, n, files, func(ctx context.Context, e Entry) error {
		return writeFile(ctx, root, e, src, opts.ReadOnly)
	})
}

// writeFile writes e's content to a temp file next to it, verifies it and
// renames it into place.
func writeFile(ctx context.Context, root *os.Root, e Entry, src Source, readOnly bool) error {
	mode := fs.FileMode(e.Mode)
	if readOnly {
		mode &^= 0o222
	}
	err := place(root, e.Path, func(tmp string) error {
		f, err := root.OpenFile(osPath(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		err = fill(ctx, f, e, src)
		if err == nil {
			err = f.Chmod(mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", e.Path, err)
	}
	return nil
}

func fill(ctx context.Context, w io.Writer, e Entry, src Source) error {
	if e.Size == 0 && e.Hash == emptyHash {
		return nil
	}
	rc, err := src.Open(ctx, e.Hash)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	// One byte past the size is enough to tell the content is too long.
	n, err := io.Copy(io.MultiWriter(w, h), ctxReader{ctx, io.LimitReader(rc, e.Size+1)})
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != e.Size || got != e.Hash {
		return fmt.Errorf("content of blob %s (%d bytes, want %d): %w", e.Hash, n, e.Size, blob.ErrHashMismatch)
	}
	return nil
}

func placeSymlink(root *os.Root, e Entry) error {
	err := place(root, e.Path, func(tmp string) error { return root.Symlink(e.Target, osPath(tmp)) })
	if err != nil {
		return fmt.Errorf("symlink %s: %w", e.Path, err)
	}
	return nil
}

// place makes p through a temporary name beside it: create makes tmp, which then replaces p.
// On failure tmp is removed and p is as it was.
func place(root *os.Root, p string, create func(tmp string) error) error {
	tmp := tempName(p)
	err := create(tmp)
	if err == nil {
		err = replace(root, tmp, p)
	}
	if err != nil {
		root.Remove(osPath(tmp))
	}
	return err
}

// replace renames tmp over p, removing a directory that is in the way.
func replace(root *os.Root, tmp, p string) error {
	if fi, err := root.Lstat(osPath(p)); err == nil && fi.IsDir() {
		if err := root.RemoveAll(osPath(p)); err != nil {
			return err
		}
	}
	return root.Rename(osPath(tmp), osPath(p))
}

func tempName(p string) string {
	return path.Join(path.Dir(p), ".hangar-tmp-"+rand.Text())
}
