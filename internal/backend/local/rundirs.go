package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/runbox"
)

// ErrRunLive refuses to remove the directory of a run whose supervisor still runs (or runs on
// another machine, where this process cannot tell).
var ErrRunLive = errors.New("its supervisor still runs")

// RunDirs lists the runs whose directories this backend holds (runs/<id>), in name order.
func (b *Backend) RunDirs() ([]string, error) {
	des, err := os.ReadDir(filepath.Join(b.Root, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list run directories: %w", err)
	}
	var ids []string
	for _, de := range des {
		if de.IsDir() && validRunID(de.Name()) {
			ids = append(ids, de.Name())
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// validRunID reports whether id names a run directory of runs/ (not .box, nor a path).
func validRunID(id string) bool {
	return id != "" && !strings.HasPrefix(id, ".") && filepath.Base(id) == id && !strings.ContainsRune(id, filepath.Separator)
}

// RemoveRunDir removes a run's directory and its box record, once its supervisor is gone; a run
// without a directory is no error. Its files are the node's copies: whoever calls this knows
// that the run ended and that what it collected is in the workspace (or that the run is
// deleted). Read-only folders in it (a run's read-only inputs) are made writable first, never
// following a link out of the directory.
func (b *Backend) RemoveRunDir(ctx context.Context, runID string) error {
	if !validRunID(runID) {
		return fmt.Errorf("remove run directory: %q is not a run id", runID)
	}
	dir := b.RunDir(runID)
	if h, ok := b.handleIn(dir); ok && (h.foreign() || !b.gone(ctx, h)) {
		return fmt.Errorf("remove run directory of %s: %w", runID, ErrRunLive)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := RemoveTree(dir); err != nil {
		return fmt.Errorf("remove run directory of %s: %w", runID, err)
	}
	if err := os.Remove(runbox.RecordPath(dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove box record of %s: %w", runID, err)
	}
	return nil
}

// exitWait bounds how long RemoveRunDir waits for a supervisor that wrote its result to exit:
// it reports the run's end, then tidies its config and exits, within moments.
const exitWait = 10 * time.Second

// gone reports whether h's supervisor is gone, waiting up to exitWait for one that wrote its
// result (a job deleted as soon as it ended).
func (b *Backend) gone(ctx context.Context, h handle) bool {
	if !h.Alive() {
		return true
	}
	if res, _ := readResult(h.Dir); res == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, exitWait)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for h.Alive() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// handleIn reads the handle a run directory holds (false when none).
func (b *Backend) handleIn(dir string) (handle, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "handle.json"))
	if err != nil {
		return handle{}, false
	}
	h, err := b.decode(data)
	return h, err == nil
}

// RemoveTree removes dir and everything in it, also what sits in folders without write
// permission (they are made writable first). Every change stays inside dir: a symbolic link in
// it is removed, never followed. A dir that does not exist is no error.
func RemoveTree(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir(): // a link in dir's place is removed, not followed
		return os.Remove(dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() { // before WalkDir reads it: a folder without read permission too
			return root.Chmod(p, 0o700)
		}
		return nil
	})
	if err != nil {
		return err
	}
	des, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	for _, de := range des {
		if err := root.RemoveAll(de.Name()); err != nil {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RunDirsOn lists the run directories of the local target t (this machine's): they are this
// workspace's alone, so a directory of a run the workspace no longer knows is a deleted run's.
func (b *Backend) RunDirsOn(ctx context.Context, t compute.Target) (ids []string, private bool, err error) {
	ids, err = b.RunDirs()
	return ids, true, err
}

// RemoveRunDirOn is RemoveRunDir for the local target t.
func (b *Backend) RemoveRunDirOn(ctx context.Context, t compute.Target, runID string) error {
	return b.RemoveRunDir(ctx, runID)
}
