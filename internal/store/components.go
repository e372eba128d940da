package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hangar-ml/hangar/internal/component"
)

// componentRow is the spec column of a components row: everything but the key, archived and
// created_at.
type componentRow struct {
	component.Spec
	Source string `json:"source,omitempty"`
}

// CreateComponent registers a component version (createAsset: an empty Version is the next
// integer, archived ones counted; a version that exists is ErrExists). It returns the version
// as stored.
func (s *Assets) CreateComponent(ctx context.Context, v component.Version) (*component.Version, error) {
	row := componentRow{Spec: v.Spec, Source: v.Source}
	row.Name, row.Version = "", ""
	spec, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	if v.Version, err = s.createAsset(ctx, "components", "component", v.Name, v.Version, string(spec), v.CreatedAt); err != nil {
		return nil, err
	}
	v.Archived = false
	return &v, nil
}

// Component returns one version of a component; "latest" is the newest created that is not archived.
func (s *Assets) Component(ctx context.Context, name, version string) (*component.Version, error) {
	r, err := s.assetVersion(ctx, "components", "component", name, version)
	if err != nil {
		return nil, err
	}
	return decodeComponent(r)
}

// Components lists every version of a component ("" = of every one), by name then version.
func (s *Assets) Components(ctx context.Context, name string) ([]component.Version, error) {
	rows, err := s.assetVersions(ctx, "components", "components", name)
	if err != nil {
		return nil, err
	}
	var out []component.Version
	for _, r := range rows {
		v, err := decodeComponent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// SetComponentArchived archives or restores one version, or every version when version is "".
func (s *Assets) SetComponentArchived(ctx context.Context, name, version string, archived bool) (int64, error) {
	return s.setAssetArchived(ctx, "components", "component", name, version, archived)
}

func decodeComponent(row assetRow) (*component.Version, error) {
	var r componentRow
	if err := json.Unmarshal([]byte(row.Spec), &r); err != nil {
		return nil, fmt.Errorf("decode component %s:%s: %w", row.Name, row.Version, err)
	}
	v := component.Version{Spec: r.Spec, Source: r.Source, CreatedAt: row.Created, Archived: row.Archived}
	v.Name, v.Version = row.Name, row.Version
	return &v, nil
}
