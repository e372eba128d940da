package store

import (
	"context"
	"encoding/json"
	"fmt"

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

// CreateModel registers a model version (createAsset: an empty Version is the next integer, a
// version that exists is ErrExists). It returns the version as stored.
func (s *Assets) CreateModel(ctx context.Context, v model.Version) (*model.Version, error) {
	spec, err := json.Marshal(modelRow{Type: v.Type, Manifest: v.Manifest, Source: v.Source, Description: v.Description,
		Tags: v.Tags, Properties: v.Properties, Stage: v.Stage, Folder: v.Folder, Files: v.Files, Size: v.Size})
	if err != nil {
		return nil, err
	}
	if v.Version, err = s.createAsset(ctx, "models", "model", v.Name, v.Version, string(spec), v.CreatedAt); err != nil {
		return nil, err
	}
	v.Archived = false
	return &v, nil
}

// Model returns one version; "latest" is the newest created that is not archived.
func (s *Assets) Model(ctx context.Context, name, version string) (*model.Version, error) {
	r, err := s.assetVersion(ctx, "models", "model", name, version)
	if err != nil {
		return nil, err
	}
	return decodeModel(r)
}

// Models lists every version of a model ("" = of every model), by name then version.
func (s *Assets) Models(ctx context.Context, name string) ([]model.Version, error) {
	rows, err := s.assetVersions(ctx, "models", "models", name)
	if err != nil {
		return nil, err
	}
	var out []model.Version
	for _, r := range rows {
		v, err := decodeModel(r)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// SetModelArchived archives or restores one version, or every version of the name when version
// is "". It returns how many versions there were to change; none is ErrNotFound.
func (s *Assets) SetModelArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return s.setAssetArchived(ctx, "models", "model", name, version, archived)
}

func decodeModel(row assetRow) (*model.Version, error) {
	var r modelRow
	if err := json.Unmarshal([]byte(row.Spec), &r); err != nil {
		return nil, fmt.Errorf("decode model %s:%s: %w", row.Name, row.Version, err)
	}
	return &model.Version{Name: row.Name, Version: row.Version, Type: r.Type, Manifest: r.Manifest, Source: r.Source,
		Description: r.Description, Tags: r.Tags, Properties: r.Properties, Stage: r.Stage, Folder: r.Folder,
		Files: r.Files, Size: r.Size, CreatedAt: row.Created, Archived: row.Archived}, nil
}
