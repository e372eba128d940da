package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
)

// Versioned assets (models, data assets, components) share one table shape: (name, version
// TEXT, spec JSON, archived, created_at, number, seq). A version is a string, as Azure's are
// (0.0.1, v2, 1); number is its integer value when it is one, and seq orders the versions by
// creation: @latest is the newest created that is not archived (migration 0026). A deleted
// version is a tombstone (deleted_at set, migration 0030): it keeps its number, and no read sees
// it. These helpers are the queries; each asset's file decodes spec. table is always a constant
// of this package, never user text.

// assetRow is one row of a versioned-asset table.
type assetRow struct {
	Name     string
	Version  string
	Spec     string
	Archived bool
	Created  time.Time
}

// createAsset inserts a version. An empty version becomes the next integer after the highest
// integer version of the name, archived and deleted ones included (a number is never reused); the number is
// chosen inside the INSERT, so two creates at once cannot both take it. A version that exists is
// ErrExists. then, when not nil, runs in the INSERT's transaction with the version it took (a
// model's registry event). The row is synced: it is what jobs and deployments name, and must
// outlive a power loss.
func (s *Assets) createAsset(ctx context.Context, table, noun, name, version, spec string, created time.Time,
	then func(tx *sql.Tx, version string) error) (string, error) {
	nextSeq := `(SELECT COALESCE(MAX(seq), 0) + 1 FROM ` + table + `)`
	err := s.withTx(ctx, "create "+noun+" "+name, func(tx *sql.Tx) error {
		var err error
		if version == "" {
			err = tx.QueryRowContext(ctx, `INSERT INTO `+table+` (name, version, spec, archived, created_at, number, seq)
				SELECT ?, CAST(COALESCE(MAX(number), 0) + 1 AS TEXT), ?, 0, ?, COALESCE(MAX(number), 0) + 1, `+nextSeq+`
				FROM `+table+` WHERE name = ? RETURNING version`,
				name, spec, nanos(created), name).Scan(&version)
		} else {
			var number any
			if n := asset.Number(version); n > 0 || version == "0" {
				number = n
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO `+table+` (name, version, spec, archived, created_at, number, seq)
				VALUES (?, ?, ?, 0, ?, ?, `+nextSeq+`)`, name, version, spec, nanos(created), number)
		}
		if isUniqueViolation(err) {
			return fmt.Errorf("%s %s version %s: %w", noun, name, version, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("create %s %s: %w", noun, name, err)
		}
		if then != nil {
			return then(tx, version)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if err := s.sync(ctx); err != nil {
		return "", fmt.Errorf("create %s %s: %w", noun, name, err)
	}
	return version, nil
}

// assetVersion reads one version; "latest" is the newest created that is not archived.
func (s *Assets) assetVersion(ctx context.Context, table, noun, name, version string) (assetRow, error) {
	sel := `SELECT name, version, spec, archived, created_at FROM ` + table
	var row *sql.Row
	if version == "latest" {
		row = s.db.QueryRowContext(ctx, sel+` WHERE name = ? AND archived = 0 AND deleted_at IS NULL ORDER BY seq DESC LIMIT 1`, name)
	} else {
		row = s.db.QueryRowContext(ctx, sel+` WHERE name = ? AND version = ? AND deleted_at IS NULL`, name, version)
	}
	r, err := scanAsset(row)
	if errors.Is(err, sql.ErrNoRows) {
		return assetRow{}, fmt.Errorf("%s %s version %s: %w", noun, name, version, ErrNotFound)
	}
	return r, err
}

// assetVersions lists every version of a name ("" = of every name), by name then creation.
func (s *Assets) assetVersions(ctx context.Context, table, noun, name string) ([]assetRow, error) {
	q, args := `SELECT name, version, spec, archived, created_at FROM `+table+` WHERE deleted_at IS NULL`, []any{}
	if name != "" {
		q += ` AND name = ?`
		args = append(args, name)
	}
	out, err := queryAll(ctx, s.db, scanAsset, q+` ORDER BY name, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", noun, err)
	}
	return out, nil
}

// setAssetArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Assets) setAssetArchived(ctx context.Context, table, noun, name, version string, archived bool) (int64, error) {
	q, args := `UPDATE `+table+` SET archived = ? WHERE name = ? AND deleted_at IS NULL`, []any{archived, name}
	if version != "" {
		q += ` AND version = ?`
		args = append(args, version)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("archive %s %s: %w", noun, name, err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = fmt.Errorf("%s %s version %q: %w", noun, name, version, ErrNotFound)
	}
	return n, err
}

func scanAsset(sc scanner) (assetRow, error) {
	var r assetRow
	var created int64
	if err := sc.Scan(&r.Name, &r.Version, &r.Spec, &r.Archived, &created); err != nil {
		return assetRow{}, err
	}
	r.Created = fromNanos(created)
	return r, nil
}
