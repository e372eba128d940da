package home

import (
	"context"
	"fmt"
	"os"

	"github.com/hangar-ml/hangar/internal/store"
)

// MigrateInfo is what MigrateTo copied.
type MigrateInfo struct {
	Workspace string
	From      string // the SQLite file, kept as it was
	To        string // the PostgreSQL URL without its password
	Tables    []store.TableCount
}

// Rows is the number of rows copied.
func (m MigrateInfo) Rows() int64 {
	var n int64
	for _, t := range m.Tables {
		n += t.Rows
	}
	return n
}

// MigrateTo copies the workspace's SQLite database into the new PostgreSQL database at dsn
// (`hangar workspace migrate`) with the server stopped, then records that the workspace's
// database is PostgreSQL: from then on its server starts only with the URL (--database or
// HANGAR_DATABASE_URL). The SQLite file is left as it was; blobs, secret.key and the token stay
// in the directory, which the server keeps using.
func (h Home) MigrateTo(ctx context.Context, dsn string, progress func(table string, rows int64)) (*MigrateInfo, error) {
	if !store.IsPostgresURL(dsn) {
		return nil, fmt.Errorf("migrate: %q is not a postgres:// or postgresql:// URL", RedactURL(dsn))
	}
	if rec, err := h.RecordedDatabase(); err != nil || rec != "" {
		if err == nil {
			err = fmt.Errorf("the workspace %s already keeps its data in PostgreSQL (%s)", h.Dir, rec)
		}
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if fi, err := os.Stat(h.DB()); err != nil || fi.Size() == 0 {
		return nil, fmt.Errorf("migrate: no workspace database at %s to copy", h.DB())
	}
	release, err := h.lockStopped("migrate")
	if err != nil {
		return nil, err
	}
	defer release()
	src, err := store.Open(ctx, h.DB())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", h.DB(), err)
	}
	defer src.Close()
	dst, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", RedactURL(dsn), err)
	}
	defer dst.Close()
	rep, err := store.CopyAll(ctx, src, dst, func(tc store.TableCount) {
		if progress != nil {
			progress(tc.Table, tc.Rows)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("migrate to %s: %w (nothing was committed there)", RedactURL(dsn), err)
	}
	if err := writeAtomic(h.databaseFile(), []byte(RedactURL(dsn)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("migrate: the copy is done, but recording it failed: %w", err)
	}
	return &MigrateInfo{Workspace: h.Dir, From: h.DB(), To: RedactURL(dsn), Tables: rep.Tables}, nil
}
