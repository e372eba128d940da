package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/model"
)

// The registry's writes that change several rows at once, each in one transaction: a stage
// transition (with the archive of the stage's other versions), a rename, and the tombstones of
// a version or of a whole registered model (migration 0030).

// ErrInUse is returned when a write is refused because something names what it would change.
var ErrInUse = errors.New("in use")

// versionRow is a models row as the registry's multi-row writes change it.
type versionRow struct {
	version  string
	spec     modelRow
	raw      string
	archived bool
}

// liveVersions reads a model's versions that are not deleted, integers only when integers is
// set (the ones MLflow's registry sees).
func liveVersions(ctx context.Context, tx *sql.Tx, name string, integers bool) ([]versionRow, error) {
	q := `SELECT version, spec, archived FROM models WHERE name = ? AND deleted_at IS NULL`
	if integers {
		q += ` AND number IS NOT NULL`
	}
	return queryAll(ctx, tx, func(sc scanner) (versionRow, error) {
		var r versionRow
		if err := sc.Scan(&r.version, &r.raw, &r.archived); err != nil {
			return r, err
		}
		if err := json.Unmarshal([]byte(r.raw), &r.spec); err != nil {
			return r, fmt.Errorf("decode model %s:%s: %w", name, r.version, err)
		}
		return r, nil
	}, q+` ORDER BY seq`, name)
}

// putVersion writes a changed row back.
func putVersion(ctx context.Context, tx *sql.Tx, name string, r versionRow, deletedAt any) error {
	spec, err := json.Marshal(r.spec)
	if err != nil {
		return err
	}
	return execStmt(ctx, tx, "update model "+name+":"+r.version,
		`UPDATE models SET spec = ?, archived = ?, deleted_at = ? WHERE name = ? AND version = ?`,
		string(spec), r.archived, deletedAt, name, r.version)
}

func (r versionRow) stage() string {
	return model.Version{Archived: r.archived, MLflowStage: r.spec.MLflowStage}.RegistryStage()
}

// inStage puts a row in one of MLflow's stages: Archived archives it, any other restores it
// and keeps the stage (None as "").
func (r *versionRow) inStage(st string) {
	r.archived = st == model.StageArchived
	r.spec.MLflowStage = st
	if st == model.StageNone || st == model.StageArchived {
		r.spec.MLflowStage = ""
	}
}

// TransitionModelStage puts one version (an integer, not deleted) in an MLflow stage (one of
// model.Stages), and with archiveOthers archives the model's other versions in that stage, in
// one transaction. It returns the version as stored.
func (s *Assets) TransitionModelStage(ctx context.Context, name, version, stage string, archiveOthers bool) (*model.Version, error) {
	err := s.withTx(ctx, "transition model "+name+":"+version, func(tx *sql.Tx) error {
		if err := requireVersion(ctx, tx, name, version); err != nil {
			return err
		}
		rows, err := liveVersions(ctx, tx, name, true)
		if err != nil {
			return err
		}
		for _, r := range rows {
			switch {
			case r.version == version:
				r.inStage(stage)
			case archiveOthers && r.stage() == stage:
				r.inStage(model.StageArchived)
			default:
				continue
			}
			if err := putVersion(ctx, tx, name, r, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	return s.Model(ctx, name, version)
}

// DeleteModel deletes one version of a model, or (version "") the registered model: every
// version, its row, tags and aliases. A deleted version is a tombstone: its row stays with
// deleted_at set, so its number is never given again, and its manifest is dropped from it (its
// files stay while something else names them: a deployment's stored model, a job's inputs).
// Deleting a version removes the aliases that name it, and keeps the registered model (as
// MLflow does: a model whose last version went is still registered). Nothing to delete is
// MLflow's not-found error.
func (s *Assets) DeleteModel(ctx context.Context, name, version string, at time.Time) error {
	err := s.withTx(ctx, "delete model "+name, func(tx *sql.Tx) error {
		if version != "" {
			return deleteVersion(ctx, tx, name, version, at)
		}
		if err := requireRegistered(ctx, tx, name); err != nil {
			return err
		}
		rows, err := liveVersions(ctx, tx, name, false)
		if err != nil {
			return err
		}
		for _, r := range rows {
			r.spec.Manifest = ""
			if err := putVersion(ctx, tx, name, r, nanos(at)); err != nil {
				return err
			}
		}
		for _, t := range []string{"registered_models", "registered_model_tags", "model_aliases"} {
			if err := execStmt(ctx, tx, "delete model "+name, `DELETE FROM `+t+` WHERE name = ?`, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

func deleteVersion(ctx context.Context, tx *sql.Tx, name, version string, at time.Time) error {
	if err := requireVersion(ctx, tx, name, version); err != nil {
		return err
	}
	rows, err := liveVersions(ctx, tx, name, false)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.version == version {
			r.spec.Manifest = ""
			if err := putVersion(ctx, tx, name, r, nanos(at)); err != nil {
				return err
			}
		}
	}
	doing := "delete model " + name + ":" + version
	if err := execStmt(ctx, tx, doing, `DELETE FROM model_aliases WHERE name = ? AND version = ?`, name, version); err != nil {
		return err
	}
	// The registered model stays when its last version goes: its row is added if only its
	// versions registered it, created when its first version was.
	return execStmt(ctx, tx, doing, `INSERT INTO registered_models (name, description, created_at)
		SELECT name, '', MIN(created_at) FROM models WHERE name = ? GROUP BY name
		ON CONFLICT (name) DO NOTHING`, name)
}

// RenameModel renames a registered model: its versions (deleted ones too: they keep their
// numbers), its row, tags and aliases move to the new name in one transaction. A new name that
// is a registered model, or has deleted versions, is ErrExists. While a deployment (online or
// batch) names the model by reference (azureml:<name>:<version>, @latest, @<alias>), the
// rename is ErrInUse, its message listing them: their references would name nothing.
func (s *Assets) RenameModel(ctx context.Context, from, to string) error {
	err := s.withTx(ctx, "rename model "+from, func(tx *sql.Tx) error {
		if err := requireRegistered(ctx, tx, from); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM registered_models WHERE name = ?)
			+ (SELECT COUNT(*) FROM models WHERE name = ?)`, to, to).Scan(&n); err != nil {
			return fmt.Errorf("rename model %s: %w", from, err)
		}
		if n > 0 {
			return registeredExists(to)
		}
		users, err := deploymentsNaming(ctx, tx, from)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return fmt.Errorf("Registered Model (name=%s) cannot be renamed while deployments name it by reference: %s; "+
				"point them at another model first (their references would name nothing): %w", from, strings.Join(users, ", "), ErrInUse)
		}
		for _, t := range []string{"models", "registered_models", "registered_model_tags", "model_aliases"} {
			if err := execStmt(ctx, tx, "rename model "+from, `UPDATE `+t+` SET name = ? WHERE name = ?`, to, from); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.sync(ctx)
}

// deploymentsNaming lists the online and batch deployments whose model is a reference to the
// model name ("online deployment blue of endpoint iris-ep").
func deploymentsNaming(ctx context.Context, tx *sql.Tx, name string) ([]string, error) {
	var out []string
	for _, d := range []struct{ table, kind string }{{"deployments", "online"}, {"batch_deployments", "batch"}} {
		err := eachRow(ctx, tx, `SELECT endpoint, name, spec FROM `+d.table+` ORDER BY endpoint, name`, nil, func(sc scanner) error {
			var endpoint, dep, spec string
			if err := sc.Scan(&endpoint, &dep, &spec); err != nil {
				return err
			}
			var sp struct {
				Model struct {
					Ref string `json:"ref"`
				} `json:"model"`
			}
			if err := json.Unmarshal([]byte(spec), &sp); err != nil {
				return fmt.Errorf("decode %s deployment %s of endpoint %s: %w", d.kind, dep, endpoint, err)
			}
			if refName(sp.Model.Ref) == name {
				out = append(out, fmt.Sprintf("%s deployment %s of endpoint %s (%s)", d.kind, dep, endpoint, sp.Model.Ref))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", d.table, err)
		}
	}
	return out, nil
}

// refName is the model name of a reference: name:version, name@label, with or without azureml:.
func refName(ref string) string {
	ref = strings.TrimPrefix(ref, "azureml:")
	if i := strings.IndexAny(ref, ":@"); i >= 0 {
		return ref[:i]
	}
	return ref
}
