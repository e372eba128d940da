package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// PutDatastore creates or replaces a datastore with its credentials sealed ("" for none: the
// node's ambient identity); a replaced datastore keeps its creation time and last use. The
// credentials go in a column of their own, never in spec, which list and show answer.
func (s *Assets) PutDatastore(ctx context.Context, d datastore.Datastore, sealed string) error {
	d.LastUsedBy, d.LastUsedAt = "", time.Time{}
	spec, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return execStmt(ctx, s.db, "put datastore "+d.Name,
		`INSERT INTO datastores (name, spec, created_at, credentials) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, credentials = excluded.credentials`,
		d.Name, string(spec), nanos(d.CreatedAt), sealed)
}

const datastoreColumns = `name, spec, created_at, last_used_run, last_used_at`

// Datastore returns a created datastore (not the built-in workspaceblobstore), or ErrNotFound.
func (s *Assets) Datastore(ctx context.Context, name string) (*datastore.Datastore, error) {
	d, err := scanDatastore(s.db.QueryRowContext(ctx, `SELECT `+datastoreColumns+` FROM datastores WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("datastore %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read datastore %s: %w", name, err)
	}
	return d, nil
}

// DatastoreCredentials returns a datastore's sealed credentials ("" for none), or ErrNotFound.
func (s *Assets) DatastoreCredentials(ctx context.Context, name string) (string, error) {
	var sealed string
	err := s.db.QueryRowContext(ctx, `SELECT credentials FROM datastores WHERE name = ?`, name).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("datastore %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read datastore %s: %w", name, err)
	}
	return sealed, nil
}

// Datastores lists the created datastores by name.
func (s *Assets) Datastores(ctx context.Context) ([]datastore.Datastore, error) {
	out, err := queryAll(ctx, s.db, values(scanDatastore), `SELECT `+datastoreColumns+` FROM datastores ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list datastores: %w", err)
	}
	return out, nil
}

// DeleteDatastore removes a datastore with its credentials; ErrNotFound when there is none. The
// paths recorded as written in it stay: they name workspaceblobstore's only.
func (s *Assets) DeleteDatastore(ctx context.Context, name string) error {
	return execOne(ctx, s.db, "delete datastore "+name, "datastore "+name, `DELETE FROM datastores WHERE name = ?`, name)
}

// MarkDatastoresUsed records that run fetched the named datastores' credentials at at.
func (s *Assets) MarkDatastoresUsed(ctx context.Context, names []string, run string, at time.Time) error {
	return s.inTx(ctx, "record the use of datastores' credentials", func(tx *sql.Tx) error {
		for _, n := range names {
			if _, err := tx.ExecContext(ctx, `UPDATE datastores SET last_used_run = ?, last_used_at = ? WHERE name = ?`,
				run, nanos(at), n); err != nil {
				return err
			}
		}
		return nil
	})
}

func scanDatastore(sc scanner) (*datastore.Datastore, error) {
	var name, spec, usedBy string
	var created, used int64
	if err := sc.Scan(&name, &spec, &created, &usedBy, &used); err != nil {
		return nil, err
	}
	var d datastore.Datastore
	if err := json.Unmarshal([]byte(spec), &d); err != nil {
		return nil, fmt.Errorf("decode datastore %s: %w", name, err)
	}
	d.Name, d.CreatedAt, d.LastUsedBy = name, fromNanos(created), usedBy
	if used != 0 {
		d.LastUsedAt = fromNanos(used)
	}
	return &d, nil
}

// PutDatastorePath records what was written at a path of a datastore; a later write at the same
// path replaces it (as a blob overwritten on Azure).
func (s *Assets) PutDatastorePath(ctx context.Context, e datastore.Entry) error {
	return execStmt(ctx, s.db, "record datastore path "+e.Datastore+"/"+e.Path,
		`INSERT INTO datastore_paths (datastore, path, manifest, run_id, output, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (datastore, path) DO UPDATE SET manifest = excluded.manifest,
		run_id = excluded.run_id, output = excluded.output, created_at = excluded.created_at`,
		e.Datastore, e.Path, e.Manifest, e.Run, e.Output, nanos(e.CreatedAt))
}

// DatastorePaths returns the entries of a datastore written at any of paths.
func (s *Assets) DatastorePaths(ctx context.Context, ds string, paths []string) ([]datastore.Entry, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	args := []any{ds}
	for _, p := range paths {
		args = append(args, p)
	}
	out, err := queryAll(ctx, s.db, scanDatastoreEntry, `SELECT datastore, path, manifest, run_id, output, created_at FROM datastore_paths
		WHERE datastore = ? AND path IN (?`+strings.Repeat(", ?", len(paths)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read datastore %s paths: %w", ds, err)
	}
	return out, nil
}

func scanDatastoreEntry(sc scanner) (e datastore.Entry, err error) {
	var created int64
	err = sc.Scan(&e.Datastore, &e.Path, &e.Manifest, &e.Run, &e.Output, &created)
	e.CreatedAt = fromNanos(created)
	return e, err
}
