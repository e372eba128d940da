package home

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
)

// RestoreInfo says what Restore did.
type RestoreInfo struct {
	From            string    `json:"from"`
	Workspace       string    `json:"workspace"`
	BackupCreatedAt time.Time `json:"backup_created_at"`
	Blobs           int       `json:"blobs"`        // blobs in the backup
	BlobsCopied     int       `json:"blobs_copied"` // those the workspace lacked
	Files           []string  `json:"files"`        // workspace.db, and secret.key and token when the backup has them
	MovedAside      []string  `json:"moved_aside,omitempty"`
}

// Restore puts the backup in from into the workspace. No server may run for it: Restore holds
// the server lock throughout, so none starts meanwhile either. A workspace database already
// there (one with any content) is replaced only with force; whatever Restore replaces (database,
// its WAL and shared-memory files, a different secret.key or token) is renamed, never deleted.
// Blobs are added to the ones there; run directories are left as they are.
func (h Home) Restore(ctx context.Context, from string, force bool, now time.Time) (*RestoreInfo, error) {
	from, err := filepath.Abs(from)
	if err != nil {
		return nil, err
	}
	bk, err := checkBackup(ctx, from)
	if err != nil {
		return nil, err
	}
	if err := h.checkNotPostgres(); err != nil {
		return nil, fmt.Errorf("restore: %w; a backup is a SQLite workspace: restore it into a new directory", err)
	}
	if err := h.Ensure(); err != nil {
		return nil, err
	}
	release, err := h.lockStopped("restore into")
	if err != nil {
		return nil, err
	}
	defer release()
	suffix := ".before-restore-" + now.UTC().Format("20060102T150405Z")
	if fi, err := os.Stat(h.DB()); err == nil && fi.Size() > 0 && !force {
		return nil, fmt.Errorf("%s already holds a workspace database (%d bytes): restore with --force to replace it "+
			"(it is kept as workspace.db%s)", h.Dir, fi.Size(), suffix)
	}
	info := &RestoreInfo{From: from, Workspace: h.Dir, BackupCreatedAt: bk.CreatedAt}
	// Blobs first: when the database appears, everything it names is there.
	info.Blobs, info.BlobsCopied, err = restoreBlobs(ctx, filepath.Join(from, "blobs"), h.Blobs())
	if err != nil {
		return nil, fmt.Errorf("restore blobs: %w", err)
	}
	for _, name := range bk.Files {
		moved, err := restoreKeyFile(filepath.Join(from, name), filepath.Join(h.Dir, name), suffix)
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", name, err)
		}
		info.Files = append(info.Files, name)
		info.MovedAside = append(info.MovedAside, moved...)
	}
	moved, err := h.restoreDB(filepath.Join(from, "workspace.db"), suffix)
	info.MovedAside = append(info.MovedAside, moved...)
	if err != nil {
		return info, err
	}
	info.Files = append([]string{"workspace.db"}, info.Files...)
	return info, nil
}

// checkBackup reads a backup's description and checks its database page by page, and that this
// binary knows its schema.
func checkBackup(ctx context.Context, dir string) (*BackupInfo, error) {
	bk, err := ReadBackupInfo(dir)
	if err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "workspace.db")
	if err := store.Verify(ctx, db); err != nil {
		return nil, fmt.Errorf("the backup's database: %w", err)
	}
	v, err := store.FileSchemaVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	if latest := store.LatestSchema(); v > latest {
		return nil, fmt.Errorf("the backup in %s has database schema %d, newer than this hangar knows (%d): restore it with the hangar that made it",
			dir, v, latest)
	}
	return bk, nil
}

func restoreBlobs(ctx context.Context, src, dest string) (total, copied int, err error) {
	before, err := countBlobs(dest)
	if err != nil {
		return 0, 0, err
	}
	total, _, err = copyBlobs(ctx, src, dest)
	if err != nil {
		return total, 0, err
	}
	after, err := countBlobs(dest)
	return total, after - before, err
}

// restoreKeyFile copies a backup's key file into the workspace; a different file in the way is
// renamed with suffix (a key that sealed secrets must not vanish).
func restoreKeyFile(src, dest, suffix string) (moved []string, err error) {
	want, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	have, err := os.ReadFile(dest)
	switch {
	case err == nil && bytes.Equal(have, want):
		return nil, nil
	case err == nil:
		if err := os.Rename(dest, dest+suffix); err != nil {
			return nil, err
		}
		moved = append(moved, filepath.Base(dest+suffix))
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return moved, writeDurable(dest, want, 0o600)
}

// restoreDB renames the database files in the way (a WAL left next to the restored database
// would be replayed into it), then puts the backup's database in place through a temporary file.
func (h Home) restoreDB(src, suffix string) (moved []string, err error) {
	tmp := h.DB() + ".restore.tmp"
	if err := copyFileDurable(src, tmp, 0o600); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("restore workspace.db: %w", err)
	}
	for _, p := range []string{h.DB(), h.DB() + "-wal", h.DB() + "-shm"} {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(p, p+suffix); err != nil {
			os.Remove(tmp)
			return moved, fmt.Errorf("move %s aside: %w", p, err)
		}
		moved = append(moved, filepath.Base(p+suffix))
	}
	if err := os.Rename(tmp, h.DB()); err != nil {
		return moved, fmt.Errorf("restore workspace.db: %w", err)
	}
	return moved, syncPath(h.Dir)
}

// copyFileDurable copies a file of any size and syncs it.
func copyFileDurable(src, dest string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
