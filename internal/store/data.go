package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hangar-ml/hangar/internal/dataset"
)

// dataRow is the spec column of a data_assets row: everything but the key, archived and created_at.
type dataRow struct {
	Type        string            `json:"type"`
	Manifest    string            `json:"manifest,omitempty"`
	Path        string            `json:"path,omitempty"`
	Source      string            `json:"source"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Files       int               `json:"files"`
	Size        int64             `json:"size"`
}

// CreateData registers a data asset version (createAsset: an empty Version is the next integer,
// archived ones counted; a version that exists is ErrExists). It returns the version as stored.
func (s *Assets) CreateData(ctx context.Context, v dataset.Version) (*dataset.Version, error) {
	spec, err := json.Marshal(dataRow{Type: v.Type, Manifest: v.Manifest, Path: v.Path, Source: v.Source,
		Description: v.Description, Tags: v.Tags, Properties: v.Properties, Files: v.Files, Size: v.Size})
	if err != nil {
		return nil, err
	}
	if v.Version, err = s.createAsset(ctx, "data_assets", "data asset", v.Name, v.Version, string(spec), v.CreatedAt); err != nil {
		return nil, err
	}
	v.Archived = false
	return &v, nil
}

// Data returns one version of a data asset; "latest" is the newest created that is not archived.
func (s *Assets) Data(ctx context.Context, name, version string) (*dataset.Version, error) {
	r, err := s.assetVersion(ctx, "data_assets", "data asset", name, version)
	if err != nil {
		return nil, err
	}
	return decodeData(r)
}

// DataVersions lists every version of a data asset ("" = of every one), by name then version.
func (s *Assets) DataVersions(ctx context.Context, name string) ([]dataset.Version, error) {
	rows, err := s.assetVersions(ctx, "data_assets", "data assets", name)
	if err != nil {
		return nil, err
	}
	var out []dataset.Version
	for _, r := range rows {
		v, err := decodeData(r)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// SetDataArchived archives or restores one version, or every version when version is "".
func (s *Assets) SetDataArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return s.setAssetArchived(ctx, "data_assets", "data asset", name, version, archived)
}

func decodeData(row assetRow) (*dataset.Version, error) {
	var r dataRow
	if err := json.Unmarshal([]byte(row.Spec), &r); err != nil {
		return nil, fmt.Errorf("decode data asset %s:%s: %w", row.Name, row.Version, err)
	}
	return &dataset.Version{Name: row.Name, Version: row.Version, Type: r.Type, Manifest: r.Manifest, Path: r.Path,
		Source: r.Source, Description: r.Description, Tags: r.Tags, Properties: r.Properties, Files: r.Files,
		Size: r.Size, CreatedAt: row.Created, Archived: row.Archived}, nil
}
