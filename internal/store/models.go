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

// Model returns one version; "latest" is the newest created that is not archived.
func (s *Assets) Model(ctx context.Context, name, version string) (*model.Version, error) {
	return modelTable.get(ctx, s, name, version)
}

// Models lists every version of a model ("" = of every model), by name then version.
func (s *Assets) Models(ctx context.Context, name string) ([]model.Version, error) {
	return modelTable.list(ctx, s, name)
}

// SetModelArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Assets) SetModelArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return modelTable.setArchived(ctx, s, name, version, archived)
}
