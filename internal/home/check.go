package home

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/store"
)

// More paths inside the workspace directory.
func (h Home) SecretKeyFile() string { return filepath.Join(h.Dir, "secret.key") }
func (h Home) SlurmRoot() string     { return filepath.Join(h.Dir, "slurm") }
func (h Home) runsDir() string       { return filepath.Join(h.LocalRoot(), "runs") }

// LostDatabaseError means the workspace database is missing or empty while other files show
// that the workspace had data: it was truncated or deleted, and a new empty database would
// silently replace every job (and mint a new run token key, locking out live supervisors).
type LostDatabaseError struct {
	Dir, DB string
	Empty   bool     // the file is there with 0 bytes (else it is missing)
	Traces  []string // what shows the workspace had data
}

func (e *LostDatabaseError) Error() string {
	state := "is missing"
	if e.Empty {
		state = "is empty (0 bytes)"
	}
	return fmt.Sprintf("workspace database %s %s, but %s holds a workspace's data (%s): "+
		"the server will not start an empty workspace over it; %s",
		e.DB, state, e.Dir, strings.Join(e.Traces, ", "), recoveryHint(e.Dir))
}

// UnusableDatabaseError is a database the server cannot open (not SQLite, cut short, damaged),
// with what to do about it.
type UnusableDatabaseError struct {
	Dir string
	Err error // a *store.DamagedError
}

func (e *UnusableDatabaseError) Error() string {
	return fmt.Sprintf("workspace %s; %s", e.Err, recoveryHint(e.Dir))
}

func (e *UnusableDatabaseError) Unwrap() error { return e.Err }

func recoveryHint(dir string) string {
	return fmt.Sprintf("restore the workspace from a backup (hangar workspace restore BACKUP_DIR --home %s --force), "+
		"or move %s away to start a new workspace", dir, dir)
}

// OpenStore opens the workspace database for the server. It refuses to create a database
// where one was lost, and to open one that is not a whole SQLite database; both errors name
// the file and say how to recover.
func (h Home) OpenStore(ctx context.Context) (*store.Store, error) {
	if h.Database != "" {
		return h.openPostgres(ctx, h.Database)
	}
	if err := h.checkNotPostgres(); err != nil {
		return nil, err
	}
	if err := h.checkNotLost(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, h.DB())
	var d *store.DamagedError
	if errors.As(err, &d) {
		return nil, &UnusableDatabaseError{Dir: h.Dir, Err: d}
	}
	return st, err
}

// checkNotLost fails with a *LostDatabaseError when the database is missing or empty but
// Traces finds data.
func (h Home) checkNotLost() error {
	fi, err := os.Stat(h.DB())
	empty := err == nil && fi.Mode().IsRegular() && fi.Size() == 0
	switch {
	case errors.Is(err, fs.ErrNotExist), empty:
	case err != nil:
		return fmt.Errorf("workspace database: %w", err)
	default:
		return nil // there is something: store.Open judges it
	}
	traces, err := h.Traces()
	if err != nil {
		return err
	}
	if len(traces) == 0 {
		return nil // a new workspace
	}
	return &LostDatabaseError{Dir: h.Dir, DB: h.DB(), Empty: empty, Traces: traces}
}

// Traces lists what in the directory shows that the workspace has had a database: files a
// server writes only after its database was created (secret.key, token, server.json), the
// database's own WAL and shared-memory files, blobs, and run or node directories. server.log
// is not one: the CLI creates it before the first server starts.
func (h Home) Traces() ([]string, error) {
	var out []string
	for _, name := range []string{"secret.key", "token", "server.json", "workspace.db-wal", "workspace.db-shm"} {
		if _, err := os.Lstat(filepath.Join(h.Dir, name)); err == nil {
			out = append(out, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	n, err := countBlobs(h.Blobs())
	if err != nil {
		return nil, err
	}
	if n > 0 {
		out = append(out, "blobs/ with "+count(n, "blob"))
	}
	for _, d := range []struct{ path, what string }{
		{h.runsDir(), "run directory"}, {h.NodesDir(), "node directory"}, {h.SlurmRoot(), "entry"},
	} {
		des, err := os.ReadDir(d.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if len(des) > 0 {
			rel, _ := filepath.Rel(h.Dir, d.path)
			out = append(out, filepath.ToSlash(rel)+"/ with "+count(len(des), d.what))
		}
	}
	return out, nil
}

// count says "1 blob", "2 blobs", "3 run directories".
func count(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if base, ok := strings.CutSuffix(one, "y"); ok {
		return fmt.Sprintf("%d %sies", n, base)
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// countBlobs counts the blobs stored in dir (laid out as <aa>/<hash>; tmp/ is not counted).
func countBlobs(dir string) (int, error) {
	n := 0
	err := walkBlobs(dir, func(string, string) error { n++; return nil })
	return n, err
}

// walkBlobs calls fn with the path and hash of every blob in the store at dir; a missing dir
// holds none.
func walkBlobs(dir string, fn func(path, hash string) error) error {
	shards, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, s := range shards {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, s.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if !f.Type().IsRegular() || !blob.ValidHash(f.Name()) || f.Name()[:2] != s.Name() {
				continue
			}
			if err := fn(filepath.Join(dir, s.Name(), f.Name()), f.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}
