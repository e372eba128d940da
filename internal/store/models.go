package store

import (
	"context"
	"database/sql"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelRow is the spec column of a models row: everything but the key, archived and created_at.
type modelRow struct {
	Type     string `json:"type"`
	Manifest string `json:"manifest"`
	Source   string `json:"source"`
	asset.Meta
	Stage       string `json:"stage,omitempty"`
	MLflowStage string `json:"mlflow_stage,omitempty"`
	Folder      string `json:"folder,omitempty"`
	Files       int    `json:"files"`
	Size        int64  `json:"size"`
}

var modelTable = assetTable[model.Version, modelRow]{table: "models", noun: "model", nouns: "models",
	row: func(v model.Version) modelRow {
		return modelRow{Type: v.Type, Manifest: v.Manifest, Source: v.Source, Meta: v.Meta,
			Stage: v.Stage, MLflowStage: v.MLflowStage, Folder: v.Folder, Files: v.Files, Size: v.Size}
	},
	version: func(k asset.Key, r modelRow) model.Version {
		return model.Version{Name: k.Name, Version: k.Version, Type: r.Type, Manifest: r.Manifest, Source: r.Source,
			Meta: r.Meta, Stage: r.Stage, MLflowStage: r.MLflowStage, Folder: r.Folder, Files: r.Files, Size: r.Size, CreatedAt: k.Created,
			Archived: k.Archived}
	},
	created: func(ctx context.Context, tx *sql.Tx, v model.Version) error {
		return modelVersionCreatedEvent(ctx, tx, v)
	},
}

// CreateModel registers a model version (createAsset: an empty Version is the next integer, a
// version that exists is ErrExists). It returns the version as stored.
func (s *Assets) CreateModel(ctx context.Context, v model.Version) (*model.Version, error) {
	return modelTable.create(ctx, s, v)
}

// Model returns one version, with its aliases; "latest" is the newest created that is not
// archived. A deleted version is not found.
func (s *Assets) Model(ctx context.Context, name, version string) (*model.Version, error) {
	v, err := modelTable.get(ctx, s, name, version)
	if err != nil {
		return nil, err
	}
	vs, err := s.withAliases(ctx, name, []model.Version{*v})
	if err != nil {
		return nil, err
	}
	return &vs[0], nil
}

// Models lists every version of a model ("" = of every model) but deleted ones, by name then
// creation, with their aliases.
func (s *Assets) Models(ctx context.Context, name string) ([]model.Version, error) {
	vs, err := modelTable.list(ctx, s, name)
	if err != nil {
		return nil, err
	}
	return s.withAliases(ctx, name, vs)
}

// withAliases sets the aliases of versions of name ("" every name).
func (s *Assets) withAliases(ctx context.Context, name string, vs []model.Version) ([]model.Version, error) {
	as, err := s.ModelAliases(ctx, name)
	if err != nil || len(as) == 0 {
		return vs, err
	}
	at := map[[2]string][]string{}
	for _, a := range as {
		k := [2]string{a.Name, a.Version}
		at[k] = append(at[k], a.Alias)
	}
	for i := range vs {
		vs[i].Aliases = at[[2]string{vs[i].Name, vs[i].Version}]
	}
	return vs, nil
}

// SetModelArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Assets) SetModelArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return modelTable.setArchived(ctx, s, name, version, archived)
}
