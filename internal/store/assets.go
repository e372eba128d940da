package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Versioned assets (models, data assets) share one table shape: (name, version INTEGER, spec
// JSON, archived, created_at). These helpers are the queries; each asset's file decodes spec.
// table is always a constant of this package, never user text.

// assetRow is one row of a versioned-asset table.
type assetRow struct {
	Name     string
	Version  string
	Spec     string
	Archived bool
	Created  time.Time
}

// createAsset inserts a version. An empty version becomes the next integer after the highest of
// the name, archived ones included (a number is never reused); the number is chosen inside the
// INSERT, so two creates at once cannot both take it. A version that exists is ErrExists. The
// row is synced: it is what jobs and deployments name, and must outlive a power loss.
func (s *Store) createAsset(ctx context.Context, table, noun, name, version, spec string, created time.Time) (string, error) {
	var n int64
	var err error
	if version == "" {
		err = s.db.QueryRowContext(ctx, `INSERT INTO `+table+` (name, version, spec, archived, created_at)
			SELECT ?, COALESCE(MAX(version), 0) + 1, ?, 0, ? FROM `+table+` WHERE name = ? RETURNING version`,
			name, spec, nanos(created), name).Scan(&n)
	} else {
		if n, err = strconv.ParseInt(version, 10, 64); err != nil {
			return "", fmt.Errorf("create %s %s: version %q is not an integer", noun, name, version)
		}
		_, err = s.db.ExecContext(ctx, `INSERT INTO `+table+` (name, version, spec, archived, created_at) VALUES (?, ?, ?, 0, ?)`,
			name, n, spec, nanos(created))
	}
	if isUniqueViolation(err) {
		return "", fmt.Errorf("%s %s version %s: %w", noun, name, version, ErrExists)
	}
	if err != nil {
		return "", fmt.Errorf("create %s %s: %w", noun, name, err)
	}
	if err := s.Sync(ctx); err != nil {
		return "", fmt.Errorf("create %s %s: %w", noun, name, err)
	}
	return strconv.FormatInt(n, 10), nil
}

// assetVersion reads one version; "latest" is the highest version that is not archived.
func (s *Store) assetVersion(ctx context.Context, table, noun, name, version string) (assetRow, error) {
	sel := `SELECT name, version, spec, archived, created_at FROM ` + table
	var row *sql.Row
	if version == "latest" {
		row = s.db.QueryRowContext(ctx, sel+` WHERE name = ? AND archived = 0 ORDER BY version DESC LIMIT 1`, name)
	} else {
		n, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return assetRow{}, fmt.Errorf("%s %s version %q: %w", noun, name, version, ErrNotFound)
		}
		row = s.db.QueryRowContext(ctx, sel+` WHERE name = ? AND version = ?`, name, n)
	}
	r, err := scanAsset(row)
	if errors.Is(err, sql.ErrNoRows) {
		return assetRow{}, fmt.Errorf("%s %s version %s: %w", noun, name, version, ErrNotFound)
	}
	return r, err
}

// assetVersions lists every version of a name ("" = of every name), by name then version.
func (s *Store) assetVersions(ctx context.Context, table, noun, name string) ([]assetRow, error) {
	q, args := `SELECT name, version, spec, archived, created_at FROM `+table, []any{}
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY name, version`, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", noun, err)
	}
	defer rows.Close()
	var out []assetRow
	for rows.Next() {
		r, err := scanAsset(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// setAssetArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Store) setAssetArchived(ctx context.Context, table, noun, name, version string, archived bool) (int64, error) {
	q, args := `UPDATE `+table+` SET archived = ? WHERE name = ?`, []any{archived, name}
	if version != "" {
		n, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %s version %q: %w", noun, name, version, ErrNotFound)
		}
		q += ` AND version = ?`
		args = append(args, n)
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
	var n, created int64
	if err := sc.Scan(&r.Name, &n, &r.Spec, &r.Archived, &created); err != nil {
		return assetRow{}, err
	}
	r.Version = strconv.FormatInt(n, 10)
	r.Created = fromNanos(created)
	return r, nil
}
