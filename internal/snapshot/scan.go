package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ScanOptions control Scan. A nil slice means the default; an empty,
// non-nil slice means none.
type ScanOptions struct {
	// IgnoreFiles are the per-directory ignore files in precedence order:
	// in each directory only the first one present is read. Default
	// DefaultIgnoreFiles.
	IgnoreFiles []string
	// DefaultIgnores are gitignore patterns that always apply and cannot be
	// negated. Default DefaultIgnorePatterns.
	DefaultIgnores []string
	// Cache, if set, skips reading files that have not changed.
	Cache *HashCache

	now func() time.Time // for tests; time.Now when nil
}

// Stats describe a scan.
type Stats struct {
	Files, Dirs, Symlinks int
	Bytes                 int64 // total size of the files
	Ignored               int   // entries left out: ignored (a directory counts once), special files, vanished files
	Hashed                int   // files whose content was read (the rest came from the cache)
}

// fileJob is a regular file found by the walk, to hash.
type fileJob struct {
	idx  int // into walker.entries
	abs  string
	info fs.FileInfo
}

type walker struct {
	ctx     context.Context
	ig      *ignorer
	entries []Entry
	jobs    []fileJob
	stats   Stats
}

// Scan walks root and returns the manifest of what to send, a map from
// each content hash to one local file holding it (for upload), and stats.
// Symlinks are recorded, not followed; one whose target leaves root (or a loop) fails the scan
// with a *LinkError. Special files are left out.
func Scan(ctx context.Context, root string, opts ScanOptions) (*Manifest, map[string]string, Stats, error) {
	w := &walker{ctx: ctx, ig: newIgnorer(opts)}
	abs, err := scanRoot(root)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	if err := w.walk(abs, nil, nil); err != nil {
		return nil, nil, w.stats, fmt.Errorf("scan %s: %w", root, err)
	}
	m, local, err := w.finish(hashLocal(opts))
	if err != nil {
		return nil, nil, w.stats, fmt.Errorf("scan %s: %w", root, err)
	}
	// Refused here, where the user can fix it, rather than when a run materializes the tree.
	if le := badLink(m.Entries); le != nil {
		le.AbsoluteInside = !le.Loop && absTarget(le.Target) && (within(abs, le.Target) || within(realPath(abs), le.Target))
		return nil, nil, w.stats, fmt.Errorf("scan %s: %w", root, le)
	}
	return m, local, w.stats, nil
}

// within reports whether the absolute path p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is p with its symlinks resolved, or p when that fails.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func scanRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("scan %s: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("scan: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("scan %s: not a directory", root)
	}
	return abs, nil
}

// ScanFile makes a one-entry manifest for the single file at path, named by
// its base name. Ignore rules do not apply; opts.Cache does. A symlink is
// followed.
func ScanFile(ctx context.Context, path string, opts ScanOptions) (*Manifest, map[string]string, Stats, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, Stats{}, fmt.Errorf("scan file %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, nil, Stats{}, fmt.Errorf("scan file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, Stats{}, fmt.Errorf("scan file %s: not a regular file", path)
	}
	name := filepath.Base(abs)
	if err := validPath(name); err != nil {
		return nil, nil, Stats{}, fmt.Errorf("scan file %s: %w", path, err)
	}
	w := &walker{ctx: ctx}
	w.addFile(name, abs, fi)
	m, local, err := w.finish(hashLocal(opts))
	if err != nil {
		return nil, nil, w.stats, fmt.Errorf("scan file %s: %w", path, err)
	}
	return m, local, w.stats, nil
}

// walk records the directory at abs (tree path parts) under the ignore
// patterns inherited from its parents.
func (w *walker) walk(abs string, parts []string, ps []gitignore.Pattern) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return err
	}
	names := make(map[string]fs.DirEntry, len(des))
	for _, de := range des {
		names[de.Name()] = de
	}
	if w.ig != nil {
		if ps, err = w.ig.dirPatterns(abs, parts, ps, names); err != nil {
			return err
		}
	}
	for _, de := range des {
		child := append(parts[:len(parts):len(parts)], de.Name())
		if w.ig != nil && w.ig.ignored(child, de.IsDir(), ps) {
			w.stats.Ignored++
			continue
		}
		if err := w.add(abs, child, de, ps); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) add(dir string, parts []string, de fs.DirEntry, ps []gitignore.Pattern) error {
	abs := filepath.Join(dir, de.Name())
	rel := strings.Join(parts, "/")
	if !utf8.ValidString(rel) {
		return fmt.Errorf("%q: file name is not valid UTF-8", abs)
	}
	fi, err := de.Info()
	if errors.Is(err, fs.ErrNotExist) {
		w.stats.Ignored++ // removed while we were scanning
		return nil
	}
	if err != nil {
		return err
	}
	mode := uint32(fi.Mode().Perm())
	switch t := fi.Mode().Type(); {
	case t == fs.ModeDir:
		w.entries = append(w.entries, Entry{Path: rel, Type: TypeDir, Mode: mode})
		w.stats.Dirs++
		return w.walk(abs, parts, ps)
	case t == fs.ModeSymlink:
		target, err := os.Readlink(abs)
		if err != nil {
			return err
		}
		w.entries = append(w.entries, Entry{Path: rel, Type: TypeSymlink, Mode: mode, Target: target})
		w.stats.Symlinks++
	case t.IsRegular():
		w.addFile(rel, abs, fi)
	default:
		w.stats.Ignored++ // sockets, devices, fifos
	}
	return nil
}

func (w *walker) addFile(rel, abs string, fi fs.FileInfo) {
	w.jobs = append(w.jobs, fileJob{idx: len(w.entries), abs: abs, info: fi})
	w.entries = append(w.entries, Entry{Path: rel, Type: TypeFile, Mode: uint32(fi.Mode().Perm())})
}

// finish hashes the files with fn and builds the manifest and the map from
// hash to a local path. Files that vanished before hashing are dropped.
func (w *walker) finish(fn hashFunc) (*Manifest, map[string]string, error) {
	if err := hashAll(w.ctx, w.entries, w.jobs, fn, &w.stats); err != nil {
		return nil, nil, err
	}
	best := make(map[string]fileJob, len(w.jobs))
	for _, j := range w.jobs {
		e := w.entries[j.idx]
		if e.Hash == "" {
			continue
		}
		w.stats.Files++
		w.stats.Bytes += e.Size
		if b, ok := best[e.Hash]; !ok || e.Path < w.entries[b.idx].Path {
			best[e.Hash] = j
		}
	}
	local := make(map[string]string, len(best))
	for h, j := range best {
		local[h] = j.abs
	}
	kept := w.entries[:0]
	for _, e := range w.entries {
		if e.Type != TypeFile || e.Hash != "" {
			kept = append(kept, e)
		}
	}
	sortEntries(kept)
	return &Manifest{Entries: kept}, local, nil
}
