package store

import (
	"context"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/component"
)

// componentRow is the spec column of a components row: everything but the key, archived and
// created_at (the Spec's name and version are written empty).
type componentRow struct {
	component.Spec
	Source string `json:"source,omitempty"`
}

var componentTable = assetTable[component.Version, componentRow]{table: "components", noun: "component", nouns: "components",
	row: func(v component.Version) componentRow {
		row := componentRow{Spec: v.Spec, Source: v.Source}
		row.Name, row.Version = "", ""
		return row
	},
	version: func(k asset.Key, r componentRow) component.Version {
		v := component.Version{Spec: r.Spec, Source: r.Source, CreatedAt: k.Created, Archived: k.Archived}
		v.Name, v.Version = k.Name, k.Version
		return v
	},
}

// CreateComponent registers a component version (createAsset: an empty Version is the next
// integer, archived ones counted; a version that exists is ErrExists). It returns the version
// as stored.
func (s *Assets) CreateComponent(ctx context.Context, v component.Version) (*component.Version, error) {
	return componentTable.create(ctx, s, v)
}

// Component returns one version of a component; "latest" is the newest created that is not archived.
func (s *Assets) Component(ctx context.Context, name, version string) (*component.Version, error) {
	return componentTable.get(ctx, s, name, version)
}

// Components lists every version of a component ("" = of every one), by name then version.
func (s *Assets) Components(ctx context.Context, name string) ([]component.Version, error) {
	return componentTable.list(ctx, s, name)
}

// SetComponentArchived archives or restores one version, or every version when version is "".
func (s *Assets) SetComponentArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return componentTable.setArchived(ctx, s, name, version, archived)
}
