package store

import (
	"context"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// dataRow is the spec column of a data_assets row: everything but the key, archived and created_at.
type dataRow struct {
	Type     string `json:"type"`
	Manifest string `json:"manifest,omitempty"`
	Path     string `json:"path,omitempty"`
	Source   string `json:"source"`
	// Location is where a version in an object store lies (issue 31).
	Location *datastore.Location `json:"location,omitempty"`
	asset.Meta
	Files  int               `json:"files"`
	Size   int64             `json:"size"`
	Import *dataset.Imported `json:"import,omitempty"`
}

var dataTable = assetTable[dataset.Version, dataRow]{table: "data_assets", noun: "data asset", nouns: "data assets",
	row: func(v dataset.Version) dataRow {
		return dataRow{Type: v.Type, Manifest: v.Manifest, Path: v.Path, Source: v.Source, Location: v.Location,
			Meta: v.Meta, Files: v.Files, Size: v.Size, Import: v.Import}
	},
	version: func(k asset.Key, r dataRow) dataset.Version {
		return dataset.Version{Name: k.Name, Version: k.Version, Type: r.Type, Manifest: r.Manifest, Path: r.Path,
			Source: r.Source, Location: r.Location, Meta: r.Meta, Files: r.Files, Size: r.Size, CreatedAt: k.Created, Archived: k.Archived,
			Import: r.Import}
	},
}

// CreateData registers a data asset version (createAsset: an empty Version is the next integer,
// archived ones counted; a version that exists is ErrExists). It returns the version as stored.
func (s *Assets) CreateData(ctx context.Context, v dataset.Version) (*dataset.Version, error) {
	return dataTable.create(ctx, s, v)
}

// Data returns one version of a data asset; "latest" is the newest created that is not archived.
func (s *Assets) Data(ctx context.Context, name, version string) (*dataset.Version, error) {
	return dataTable.get(ctx, s, name, version)
}

// DataVersions lists every version of a data asset ("" = of every one), by name then version.
func (s *Assets) DataVersions(ctx context.Context, name string) ([]dataset.Version, error) {
	return dataTable.list(ctx, s, name)
}

// SetDataArchived archives or restores one version, or every version when version is "".
func (s *Assets) SetDataArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return dataTable.setArchived(ctx, s, name, version, archived)
}
