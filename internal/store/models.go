package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hangar-ml/hangar/internal/model"
)

// modelRow is the spec column of a models row: everything but the key, archived and created_at.
type modelRow struct {
	Type        string            `json:"type"`
	Manifest    string            `json:"manifest"`
	Source      string            `json:"source"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Stage       string            `json:"stage,omitempty"`
	Folder      string            `json:"folder,omitempty"`
	Files       int               `json:"files"`
	Size        int64             `json:"size"`
}

// CreateModel registers a model version. An empty Version becomes the next integer after the
// highest version of the name, archived ones included (a number is never reused); the number is
// chosen inside the INSERT, so two creates at once cannot both take it. A version that exists is
// ErrExists. It returns the version as stored.
func (s *Store) CreateModel(ctx context.Context, v model.Version) (*model.Version, error) {
	spec, err := json.Marshal(modelRow{Type: v.Type, Manifest: v.Manifest, Source: v.Source, Description: v.Description,
		Tags: v.Tags, Properties: v.Properties, Stage: v.Stage, Folder: v.Folder, Files: v.Files, Size: v.Size})
	if err != nil {
		return nil, err
	}
	var n int64
	if v.Version == "" {
		err = s.db.QueryRowContext(ctx, `INSERT INTO models (name, version, spec, archived, created_at)
			SELECT ?, COALESCE(MAX(version), 0) + 1, ?, 0, ? FROM models WHERE name = ? RETURNING version`,
			v.Name, string(spec), nanos(v.CreatedAt), v.Name).Scan(&n)
	} else {
		if n, err = strconv.ParseInt(v.Version, 10, 64); err != nil {
			return nil, fmt.Errorf("create model %s: version %q is not an integer", v.Name, v.Version)
		}
		_, err = s.db.ExecContext(ctx, `INSERT INTO models (name, version, spec, archived, created_at) VALUES (?, ?, ?, 0, ?)`,
			v.Name, n, string(spec), nanos(v.CreatedAt))
	}
	if isUniqueViolation(err) {
		return nil, fmt.Errorf("model %s version %s: %w", v.Name, v.Version, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("create model %s: %w", v.Name, err)
	}
	// A registered model is what deployments name: it must outlive a power loss like a run does.
	if err := s.Sync(ctx); err != nil {
		return nil, fmt.Errorf("create model %s: %w", v.Name, err)
	}
	v.Version = strconv.FormatInt(n, 10)
	v.Archived = false
	return &v, nil
}

const modelSelect = `SELECT name, version, spec, archived, created_at FROM models`

// Model returns one version; "latest" is the highest version that is not archived.
func (s *Store) Model(ctx context.Context, name, version string) (*model.Version, error) {
	var row *sql.Row
	if version == "latest" {
		row = s.db.QueryRowContext(ctx, modelSelect+` WHERE name = ? AND archived = 0 ORDER BY version DESC LIMIT 1`, name)
	} else {
		n, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("model %s version %q: %w", name, version, ErrNotFound)
		}
		row = s.db.QueryRowContext(ctx, modelSelect+` WHERE name = ? AND version = ?`, name, n)
	}
	v, err := scanModel(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("model %s version %s: %w", name, version, ErrNotFound)
	}
	return v, err
}

// Models lists every version of a model ("" = of every model), by name then version.
func (s *Store) Models(ctx context.Context, name string) ([]model.Version, error) {
	q, args := modelSelect, []any{}
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY name, version`, args...)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	defer rows.Close()
	var out []model.Version
	for rows.Next() {
		v, err := scanModel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// SetModelArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Store) SetModelArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	q, args := `UPDATE models SET archived = ? WHERE name = ?`, []any{archived, name}
	if version != "" {
		n, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("model %s version %q: %w", name, version, ErrNotFound)
		}
		q += ` AND version = ?`
		args = append(args, n)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("archive model %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = fmt.Errorf("model %s version %q: %w", name, version, ErrNotFound)
	}
	return n, err
}

func scanModel(sc scanner) (*model.Version, error) {
	var v model.Version
	var n, created int64
	var spec string
	if err := sc.Scan(&v.Name, &n, &spec, &v.Archived, &created); err != nil {
		return nil, err
	}
	var r modelRow
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		return nil, fmt.Errorf("decode model %s:%d: %w", v.Name, n, err)
	}
	v.Version = strconv.FormatInt(n, 10)
	v.Type, v.Manifest, v.Source, v.Description = r.Type, r.Manifest, r.Source, r.Description
	v.Tags, v.Properties, v.Stage, v.Folder, v.Files, v.Size = r.Tags, r.Properties, r.Stage, r.Folder, r.Files, r.Size
	v.CreatedAt = fromNanos(created)
	return &v, nil
}
