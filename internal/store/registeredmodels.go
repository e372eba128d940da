package store

import (
	"context"
	"fmt"
	"time"
)

// RegisteredModel is a model name registered through MLflow's registered-models/create, which
// may have no version yet (a name with versions is registered whether or not it has one).
type RegisteredModel struct {
	Name        string
	Description string
	Created     time.Time
}

// CreateRegisteredModel registers a model name with no version. A name that has a row, or any
// version, is ErrExists.
func (s *Assets) CreateRegisteredModel(ctx context.Context, m RegisteredModel) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO registered_models (name, description, created_at)
		SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM models WHERE name = ?)`, m.Name, m.Description, nanos(m.Created), m.Name)
	if isUniqueViolation(err) {
		return fmt.Errorf("Registered Model (name=%s) already exists.: %w", m.Name, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create registered model %s: %w", m.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("Registered Model (name=%s) already exists.: %w", m.Name, ErrExists)
	}
	if err := s.sync(ctx); err != nil {
		return fmt.Errorf("create registered model %s: %w", m.Name, err)
	}
	return nil
}

// RegisteredModels lists the names registered through MLflow ("" every one; else the one
// named, if any), by name.
func (s *Assets) RegisteredModels(ctx context.Context, name string) ([]RegisteredModel, error) {
	q, args := `SELECT name, description, created_at FROM registered_models`, []any{}
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	out, err := queryAll(ctx, s.db, scanRegisteredModel, q+` ORDER BY name`, args...)
	if err != nil {
		return nil, fmt.Errorf("list registered models: %w", err)
	}
	return out, nil
}

func scanRegisteredModel(sc scanner) (RegisteredModel, error) {
	var m RegisteredModel
	var created int64
	if err := sc.Scan(&m.Name, &m.Description, &created); err != nil {
		return RegisteredModel{}, err
	}
	m.Created = fromNanos(created)
	return m, nil
}
