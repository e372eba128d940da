package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// PutDatastore creates or replaces a datastore.
func (s *Assets) PutDatastore(ctx context.Context, d datastore.Datastore) error {
	spec, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return execStmt(ctx, s.db, "put datastore "+d.Name,
		`INSERT INTO datastores (name, spec, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET spec = excluded.spec`, d.Name, string(spec), nanos(d.CreatedAt))
}

// Datastore returns a created datastore (not the built-in workspaceblobstore), or ErrNotFound.
func (s *Assets) Datastore(ctx context.Context, name string) (*datastore.Datastore, error) {
	var spec string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT spec, created_at FROM datastores WHERE name = ?`, name).Scan(&spec, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("datastore %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read datastore %s: %w", name, err)
	}
	return decodeDatastore(name, spec, created)
}

// Datastores lists the created datastores by name.
func (s *Assets) Datastores(ctx context.Context) ([]datastore.Datastore, error) {
	out, err := queryAll(ctx, s.db, values(func(sc scanner) (*datastore.Datastore, error) {
		var name, spec string
		var created int64
		if err := sc.Scan(&name, &spec, &created); err != nil {
			return nil, err
		}
		return decodeDatastore(name, spec, created)
	}), `SELECT name, spec, created_at FROM datastores ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list datastores: %w", err)
	}
	return out, nil
}

func decodeDatastore(name, spec string, created int64) (*datastore.Datastore, error) {
	var d datastore.Datastore
	if err := json.Unmarshal([]byte(spec), &d); err != nil {
		return nil, fmt.Errorf("decode datastore %s: %w", name, err)
	}
	d.Name, d.CreatedAt = name, fromNanos(created)
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
