package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A code snapshot may be more than one folder: a component's `code` (a folder, or a single file)
// and its `additional_includes`, each file or folder added at the snapshot's root under its own
// name, as Azure ML builds it (issue 28).

// ErrNameTaken is wrapped by ScanCode's error when two parts of a snapshot want one name at
// its root.
var ErrNameTaken = errors.New("already in the snapshot")

// ScanCode scans a code snapshot: code (a folder with its ignore files honoured, a single file
// put at the root under its name, or "" for none) with each of includes added at the root under
// its base name (a folder with its own ignore files honoured, a file as it is). A name that two
// of them want is refused (ErrNameTaken), as Azure refuses it. The results are Scan's.
func ScanCode(ctx context.Context, code string, includes []string, opts ScanOptions) (*Manifest, map[string]string, Stats, error) {
	m, local, st := &Manifest{}, map[string]string{}, Stats{}
	if code != "" {
		cm, cl, cs, err := scanPath(ctx, code, opts)
		if err != nil {
			return nil, nil, st, err
		}
		m, local, st = cm, cl, cs
	}
	for _, inc := range includes {
		im, il, is, err := scanPath(ctx, inc, opts)
		if err != nil { // %v: a LinkError's path is the include's, not the code's
			return nil, nil, st, fmt.Errorf("additional include %s: %v", inc, err)
		}
		name := filepath.Base(filepath.Clean(inc))
		if err := graft(m, name, im, dirMode(inc)); err != nil {
			return nil, nil, st, fmt.Errorf("add %s: %w", inc, err)
		}
		for h, p := range il {
			if _, ok := local[h]; !ok {
				local[h] = p
			}
		}
		st = addStats(st, is)
		if dirMode(inc) != 0 {
			st.Dirs++
		}
	}
	sortEntries(m.Entries)
	return m, local, st, nil
}

// scanPath scans a folder (Scan) or a single file (ScanFile).
func scanPath(ctx context.Context, p string, opts ScanOptions) (*Manifest, map[string]string, Stats, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, nil, Stats{}, fmt.Errorf("scan: %w", err)
	}
	if info.IsDir() {
		return Scan(ctx, p, opts)
	}
	return ScanFile(ctx, p, opts)
}

// dirMode is the permission bits of the folder p, or 0 when p is not a folder.
func dirMode(p string) uint32 {
	if info, err := os.Stat(p); err == nil && info.IsDir() {
		if m := uint32(info.Mode().Perm()); m != 0 {
			return m
		}
		return 0o700
	}
	return 0
}

// graft adds part to m: a folder's entries under name, name itself a folder of mode dir (not 0),
// or a single file's entry (dir 0, already named). A name m has already is refused.
func graft(m *Manifest, name string, part *Manifest, dir uint32) error {
	if err := validPath(name); err != nil || strings.Contains(name, "/") {
		return fmt.Errorf("%q cannot be a name at the root of a snapshot", name)
	}
	for _, e := range m.Entries {
		if e.Path == name || strings.HasPrefix(e.Path, name+"/") {
			return fmt.Errorf("%s: %w (the code or another include has it)", name, ErrNameTaken)
		}
	}
	if dir == 0 {
		m.Entries = append(m.Entries, part.Entries...)
		return nil
	}
	m.Entries = append(m.Entries, Entry{Path: name, Type: TypeDir, Mode: dir})
	for _, e := range part.Entries {
		e.Path = name + "/" + e.Path
		m.Entries = append(m.Entries, e)
	}
	return nil
}

func addStats(a, b Stats) Stats {
	a.Files += b.Files
	a.Dirs += b.Dirs
	a.Symlinks += b.Symlinks
	a.Bytes += b.Bytes
	a.Ignored += b.Ignored
	a.Hashed += b.Hashed
	return a
}
