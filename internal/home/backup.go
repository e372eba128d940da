package home

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hangar-ml/hangar/internal/atomicfile"
	"github.com/hangar-ml/hangar/internal/store"
)

// BackupFormat is the version of the backup layout that Backup writes and Restore reads.
const BackupFormat = 1

// backupInfoFile names the backup's description; written last, it marks a complete backup.
const backupInfoFile = "backup.json"

// BackupInfo describes a backup: a directory with workspace.db (a consistent copy), blobs/
// (the content-addressed store, each blob verified), secret.key and token, and this file.
type BackupInfo struct {
	Format        int       `json:"format"`
	Dir           string    `json:"dir"`
	Workspace     string    `json:"workspace"` // the directory backed up
	CreatedAt     time.Time `json:"created_at"`
	SchemaVersion int       `json:"schema_version"`
	DatabaseBytes int64     `json:"database_bytes"`
	Blobs         int       `json:"blobs"`
	BlobBytes     int64     `json:"blob_bytes"`
	Files         []string  `json:"files"` // the workspace's key files copied: secret.key, token
}

// Backup copies the workspace into dest, a new or empty directory, while its server may be
// running and runs are live. The database is copied first, in one read transaction; the blobs
// after it: blobs are never deleted and are stored before anything refers to them, so every blob
// the copied database names is there. Everything written is private to the user (0700, 0600).
func (h Home) Backup(ctx context.Context, dest string, now time.Time) (*BackupInfo, error) {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	if err := h.checkNotPostgres(); err != nil {
		return nil, fmt.Errorf("back up: %w; back up PostgreSQL with its own tools (pg_dump) and the "+
			"directory's blobs/ and secret.key with it", err)
	}
	if err := h.checkBackupSource(); err != nil {
		return nil, err
	}
	if err := prepareEmptyDir(dest); err != nil {
		return nil, fmt.Errorf("back up to %s: %w", dest, err)
	}
	info := &BackupInfo{Format: BackupFormat, Dir: dest, Workspace: h.Dir, CreatedAt: now.UTC()}
	db := filepath.Join(dest, "workspace.db")
	if err := store.Backup(ctx, h.DB(), db); err != nil {
		return nil, err
	}
	if info.SchemaVersion, err = store.FileSchemaVersion(ctx, db); err != nil {
		return nil, err
	}
	info.DatabaseBytes = fileSize(db)
	for _, name := range []string{"secret.key", "token"} {
		ok, err := copyPrivate(filepath.Join(h.Dir, name), filepath.Join(dest, name))
		if err != nil {
			return nil, fmt.Errorf("back up %s: %w", name, err)
		}
		if ok {
			info.Files = append(info.Files, name)
		}
	}
	n, size, err := copyBlobs(ctx, h.Blobs(), filepath.Join(dest, "blobs"))
	if err != nil {
		return nil, fmt.Errorf("back up blobs: %w", err)
	}
	info.Blobs, info.BlobBytes = n, size
	if err := writeInfo(filepath.Join(dest, backupInfoFile), info); err != nil {
		return nil, err
	}
	return info, nil
}

// checkBackupSource refuses to back up a directory that holds no workspace database.
func (h Home) checkBackupSource() error {
	fi, err := os.Stat(h.DB())
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return fmt.Errorf("no workspace database to back up at %s", h.DB())
	}
	return err
}

// prepareEmptyDir makes dir (0700) or checks that it is empty, so a backup never mixes with
// other files or an older backup.
func prepareEmptyDir(dir string) error {
	des, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	case err != nil:
		return err
	case len(des) > 0:
		return errors.New("the directory is not empty (back up into a new directory)")
	}
	return os.Chmod(dir, 0o700)
}

func writeInfo(path string, info *BackupInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncPath(filepath.Dir(path))
}

// ReadBackupInfo reads a backup's description; a directory without one is not a backup (or an
// incomplete one).
func ReadBackupInfo(dir string) (*BackupInfo, error) {
	path := filepath.Join(dir, backupInfoFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a complete Hangar backup: it has no %s", dir, backupInfoFile)
	}
	if err != nil {
		return nil, err
	}
	var info BackupInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if info.Format != BackupFormat {
		return nil, fmt.Errorf("%s: format %d, this hangar reads format %d", path, info.Format, BackupFormat)
	}
	return &info, nil
}

// copyPrivate copies a small file as 0600, durably; a missing source copies nothing.
func copyPrivate(src, dest string) (bool, error) {
	b, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := writeDurable(dest, b, 0o600); err != nil {
		return false, err
	}
	return true, nil
}

// copyBlobs copies every blob of the store at src into the store at dest, checking each
// against its hash on the way, and skipping those dest holds already. It returns how many
// blobs src holds and their size.
func copyBlobs(ctx context.Context, src, dest string) (n int, size int64, err error) {
	tmp := filepath.Join(dest, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return 0, 0, err
	}
	shards := map[string]bool{}
	err = walkBlobs(src, func(path, hash string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		final := filepath.Join(dest, hash[:2], hash)
		if _, err := os.Lstat(final); err != nil {
			if err := copyBlob(path, hash, tmp, final); err != nil {
				return err
			}
			shards[filepath.Dir(final)] = true
		}
		n++
		size += fileSize(final)
		return nil
	})
	if err != nil {
		return n, size, err
	}
	for d := range shards {
		if err := syncPath(d); err != nil {
			return n, size, err
		}
	}
	return n, size, nil
}

// copyBlob copies one blob through a temporary file, verified and synced before it is renamed
// into place, so a visible blob is always whole and correct, as in the blob store itself.
func copyBlob(src, hash, tmpDir, final string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(tmpDir, "copy-*")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	sum := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, sum), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy blob %s: %w", hash, err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != hash {
		return fmt.Errorf("blob %s is damaged: its content hashes to %s", src, got)
	}
	if err := os.Chmod(out.Name(), 0o444); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	return os.Rename(out.Name(), final)
}

// writeDurable writes a file through a temporary one and syncs both the file and its directory.
func writeDurable(path string, b []byte, mode os.FileMode) error {
	if err := atomicfile.WriteFile(path, b, mode); err != nil {
		return err
	}
	return syncPath(filepath.Dir(path))
}

// syncPath makes the entries of a directory (renames, new files) durable.
func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
