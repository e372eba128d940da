package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
)

// RegisteredModel is a model name registered through MLflow's registered-models/create, which
// may have no version yet (a name with versions is registered whether or not it has one).
type RegisteredModel struct {
	Name        string
	Description string
	Created     time.Time
}

// CreateRegisteredModel registers a model name with no version, with its tags, in one
// transaction. A name that has a row, or a version that is not deleted, is ErrExists; a name
// whose versions were all deleted is registered again (its numbers go on from the deleted ones).
func (s *Assets) CreateRegisteredModel(ctx context.Context, m RegisteredModel, tags []RegisteredModelTag) error {
	err := s.withTx(ctx, "create registered model "+m.Name, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO registered_models (name, description, created_at)
			SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM models WHERE name = ? AND deleted_at IS NULL)`,
			m.Name, m.Description, nanos(m.Created), m.Name)
		if isUniqueViolation(err) {
			return registeredExists(m.Name)
		}
		if err != nil {
			return fmt.Errorf("create registered model %s: %w", m.Name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return registeredExists(m.Name)
		}
		// A name registered again starts without the tags and aliases of its deleted past.
		for _, q := range []string{`DELETE FROM registered_model_tags WHERE name = ?`, `DELETE FROM model_aliases WHERE name = ?`} {
			if err := execStmt(ctx, tx, "create registered model "+m.Name, q, m.Name); err != nil {
				return err
			}
		}
		if err := setRegisteredModelTags(ctx, tx, tags); err != nil {
			return err
		}
		tagMap := map[string]string{}
		for _, t := range tags {
			tagMap[t.Key] = t.Value
		}
		return appendEvent(ctx, tx, EventRegisteredModelCreated, registeredModelCreated{Name: m.Name, Tags: tagMap,
			Description: orNull(m.Description)}, eventNow())
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

func registeredExists(name string) error {
	return fmt.Errorf("Registered Model (name=%s) already exists.: %w", name, ErrExists)
}

// registeredNotFound is MLflow's error for a name that is not a registered model.
func registeredNotFound(name string) error {
	return fmt.Errorf("Registered Model with name=%s not found: %w", name, ErrNotFound)
}

// requireRegistered is registeredNotFound unless name is a registered model: a row of
// registered_models, or a version that is not deleted.
func requireRegistered(ctx context.Context, q querier, name string) error {
	var n int
	err := q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM registered_models WHERE name = ?)
		+ (SELECT COUNT(*) FROM models WHERE name = ? AND deleted_at IS NULL)`, name, name).Scan(&n)
	if err != nil {
		return fmt.Errorf("read registered model %s: %w", name, err)
	}
	if n == 0 {
		return registeredNotFound(name)
	}
	return nil
}

// requireVersion is MLflow's not-found error unless the model has the version, not deleted.
func requireVersion(ctx context.Context, q querier, name, version string) error {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM models WHERE name = ? AND version = ? AND deleted_at IS NULL`, name, version).Scan(&n)
	if err != nil {
		return fmt.Errorf("read model %s version %s: %w", name, version, err)
	}
	if n == 0 {
		return fmt.Errorf("Model Version (name=%s, version=%s) not found: %w", name, version, ErrNotFound)
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

// SetRegisteredModelDescription sets a registered model's description, adding its row when the
// name was registered by its versions only. A name that is not registered is ErrNotFound.
func (s *Assets) SetRegisteredModelDescription(ctx context.Context, name, description string, now time.Time) error {
	err := s.withTx(ctx, "describe registered model "+name, func(tx *sql.Tx) error {
		if err := requireRegistered(ctx, tx, name); err != nil {
			return err
		}
		return execStmt(ctx, tx, "describe registered model "+name, `INSERT INTO registered_models (name, description, created_at)
			VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET description = excluded.description`, name, description, nanos(now))
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

// UpdateModelMeta changes one version's description and tags (edit changes them in place) and
// returns the version as stored. The spec is swapped only if no other write changed it since it
// was read (a few tries, then an error).
func (s *Assets) UpdateModelMeta(ctx context.Context, name, version string, edit func(m *asset.Meta)) (*model.Version, error) {
	return s.editModel(ctx, name, version, func(r *modelRow) { edit(&r.Meta) })
}

// editModel changes one version's spec column (edit changes it in place) and returns the version
// as stored, swapping the spec only if no other write changed it since it was read.
func (s *Assets) editModel(ctx context.Context, name, version string, edit func(r *modelRow)) (*model.Version, error) {
	for range 5 {
		row, err := s.assetVersion(ctx, modelTable.table, modelTable.noun, name, version)
		if err != nil {
			return nil, err
		}
		var r modelRow
		if err := json.Unmarshal([]byte(row.Spec), &r); err != nil {
			return nil, fmt.Errorf("decode model %s:%s: %w", name, version, err)
		}
		before := r.Meta
		before.Tags = maps.Clone(r.Tags)
		edit(&r)
		spec, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		swapped := false
		err = s.withTx(ctx, "update model "+name+":"+version, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE models SET spec = ? WHERE name = ? AND version = ? AND spec = ? AND deleted_at IS NULL`,
				string(spec), name, version, row.Spec)
			if err != nil {
				return fmt.Errorf("update model %s:%s: %w", name, version, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return err
			}
			swapped = true
			return tagEvents(ctx, tx, row.Name, row.Version, before, r.Meta)
		})
		if err != nil {
			return nil, err
		}
		if swapped {
			if err := s.sync(ctx); err != nil {
				return nil, err
			}
			v := modelTable.version(asset.Key{Name: row.Name, Version: row.Version, Archived: row.Archived, Created: row.Created}, r)
			return &v, nil
		}
	}
	return nil, fmt.Errorf("update model %s:%s: it kept changing under this write", name, version)
}

// ModelAlias names one version of a model (MLflow's registered model alias).
type ModelAlias struct {
	Name, Alias, Version string
}

// SetModelAlias points an alias at a version (not deleted), moving it if it pointed elsewhere.
func (s *Assets) SetModelAlias(ctx context.Context, a ModelAlias) error {
	err := s.withTx(ctx, "set alias "+a.Name+"@"+a.Alias, func(tx *sql.Tx) error {
		if err := requireVersion(ctx, tx, a.Name, a.Version); err != nil {
			return err
		}
		if err := execStmt(ctx, tx, "set alias "+a.Name+"@"+a.Alias, `INSERT INTO model_aliases (name, alias, version) VALUES (?, ?, ?)
			ON CONFLICT (name, alias) DO UPDATE SET version = excluded.version`, a.Name, a.Alias, a.Version); err != nil {
			return err
		}
		return appendEvent(ctx, tx, EventModelVersionAliasCreated, modelVersionAliasCreated(a), eventNow())
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

// DeleteModelAlias removes an alias of a registered model; one that is not there is no error (and
// no event).
func (s *Assets) DeleteModelAlias(ctx context.Context, name, alias string) error {
	err := s.withTx(ctx, "delete alias "+name+"@"+alias, func(tx *sql.Tx) error {
		if err := requireRegistered(ctx, tx, name); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM model_aliases WHERE name = ? AND alias = ?`, name, alias)
		if err != nil {
			return fmt.Errorf("delete alias %s@%s: %w", name, alias, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return appendEvent(ctx, tx, EventModelVersionAliasDeleted, modelVersionAliasDeleted{Name: name, Alias: alias}, eventNow())
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

// ModelAliases lists a model's aliases ("" every model's), by name then alias.
func (s *Assets) ModelAliases(ctx context.Context, name string) ([]ModelAlias, error) {
	q, args := `SELECT name, alias, version FROM model_aliases`, []any{}
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	out, err := queryAll(ctx, s.db, func(sc scanner) (ModelAlias, error) {
		var a ModelAlias
		return a, sc.Scan(&a.Name, &a.Alias, &a.Version)
	}, q+` ORDER BY name, alias`, args...)
	if err != nil {
		return nil, fmt.Errorf("list model aliases: %w", err)
	}
	return out, nil
}

// RegisteredModelTag is a tag of a registered model (a model name), not of one version.
type RegisteredModelTag struct {
	Name, Key, Value string
}

// SetRegisteredModelTag sets a tag of a registered model, replacing the key's value.
func (s *Assets) SetRegisteredModelTag(ctx context.Context, t RegisteredModelTag) error {
	err := s.withTx(ctx, "set tag "+t.Key+" of registered model "+t.Name, func(tx *sql.Tx) error {
		if err := requireRegistered(ctx, tx, t.Name); err != nil {
			return err
		}
		return setRegisteredModelTags(ctx, tx, []RegisteredModelTag{t})
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

func setRegisteredModelTags(ctx context.Context, tx *sql.Tx, tags []RegisteredModelTag) error {
	for _, t := range tags {
		if _, err := tx.ExecContext(ctx, `INSERT INTO registered_model_tags (name, key, value) VALUES (?, ?, ?)
			ON CONFLICT (name, key) DO UPDATE SET value = excluded.value`, t.Name, t.Key, t.Value); err != nil {
			return fmt.Errorf("set tag %s of registered model %s: %w", t.Key, t.Name, err)
		}
	}
	return nil
}

// DeleteRegisteredModelTag removes a tag of a registered model; one that is not there is no
// error.
func (s *Assets) DeleteRegisteredModelTag(ctx context.Context, name, key string) error {
	err := s.withTx(ctx, "delete tag "+key+" of registered model "+name, func(tx *sql.Tx) error {
		if err := requireRegistered(ctx, tx, name); err != nil {
			return err
		}
		return execStmt(ctx, tx, "delete tag "+key+" of registered model "+name,
			`DELETE FROM registered_model_tags WHERE name = ? AND key = ?`, name, key)
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

// RegisteredModelTags lists the tags of a registered model ("" every one's), by name then key.
func (s *Assets) RegisteredModelTags(ctx context.Context, name string) ([]RegisteredModelTag, error) {
	q, args := `SELECT name, key, value FROM registered_model_tags`, []any{}
	if name != "" {
		q += ` WHERE name = ?`
		args = append(args, name)
	}
	out, err := queryAll(ctx, s.db, func(sc scanner) (RegisteredModelTag, error) {
		var t RegisteredModelTag
		return t, sc.Scan(&t.Name, &t.Key, &t.Value)
	}, q+` ORDER BY name, key`, args...)
	if err != nil {
		return nil, fmt.Errorf("list registered model tags: %w", err)
	}
	return out, nil
}
