package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
)

// ErrExists is returned when creating something that already exists.
var ErrExists = errors.New("already exists")

// EnvironmentVersion is one registered version of an environment.
type EnvironmentVersion struct {
	Name      string          `json:"name"`
	Version   string          `json:"version"`
	Spec      job.Environment `json:"spec"`
	CreatedAt time.Time       `json:"created_at"`
}

// CreateEnvironment registers a version; an empty version becomes the next integer after the
// highest integer version so far. An existing name+version is ErrExists.
func (s *Assets) CreateEnvironment(ctx context.Context, e EnvironmentVersion) (*EnvironmentVersion, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("create environment %s: %w", e.Name, err)
	}
	defer tx.Rollback()
	versions, err := queryAll(ctx, tx, scanValue[string], `SELECT version FROM environments WHERE name = ?`, e.Name)
	if err != nil {
		return nil, fmt.Errorf("create environment %s: %w", e.Name, err)
	}
	next, exists := 1, false
	for _, v := range versions {
		exists = exists || v == e.Version
		if n, err := strconv.Atoi(v); err == nil && n >= next {
			next = n + 1
		}
	}
	if e.Version == "" {
		e.Version = strconv.Itoa(next)
	} else if exists {
		return nil, fmt.Errorf("environment %s version %s: %w", e.Name, e.Version, ErrExists)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM environments`).Scan(&seq); err != nil {
		return nil, err
	}
	e.Spec.Name, e.Spec.Version = e.Name, e.Version
	spec, err := json.Marshal(e.Spec)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO environments (name, version, seq, spec, created_at) VALUES (?, ?, ?, ?, ?)`,
		e.Name, e.Version, seq, string(spec), nanos(e.CreatedAt)); err != nil {
		return nil, fmt.Errorf("create environment %s: %w", e.Name, err)
	}
	return &e, tx.Commit()
}

// Environment returns one version; version "" or "latest" is the most recently created one.
func (s *Assets) Environment(ctx context.Context, name, version string) (*EnvironmentVersion, error) {
	q := `SELECT name, version, spec, created_at FROM environments WHERE name = ? AND version = ?`
	args := []any{name, version}
	if version == "" || version == "latest" {
		q = `SELECT name, version, spec, created_at FROM environments WHERE name = ? ORDER BY seq DESC LIMIT 1`
		args = []any{name}
	}
	e, err := scanEnvironment(s.db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("environment %s version %q: %w", name, version, ErrNotFound)
	}
	return e, err
}

// Environments lists every version, grouped by name, newest first within a name.
func (s *Assets) Environments(ctx context.Context, name string) ([]EnvironmentVersion, error) {
	q := `SELECT name, version, spec, created_at FROM environments`
	var args []any
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	out, err := queryAll(ctx, s.db, values(scanEnvironment), q+` ORDER BY name, seq DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list environments: %w", err)
	}
	return out, nil
}

func scanEnvironment(sc scanner) (*EnvironmentVersion, error) {
	var e EnvironmentVersion
	var spec string
	var created int64
	if err := sc.Scan(&e.Name, &e.Version, &spec, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &e.Spec); err != nil {
		return nil, fmt.Errorf("decode environment %s: %w", e.Name, err)
	}
	e.CreatedAt = fromNanos(created)
	return &e, nil
}
