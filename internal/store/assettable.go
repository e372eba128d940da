package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/hangar-ml/hangar/internal/asset"
)

// assetTable is one versioned-asset table (assets.go) read and written as its version type V.
// R is what the row's spec column holds of a version: all of it but the key (name, version),
// archived and created_at, which are the row's own columns. row and version convert between
// the two: models.go, data.go and components.go each give one.
type assetTable[V asset.Versioned, R any] struct {
	table string
	// noun names one version in messages ("data asset"), nouns several ("data assets").
	noun, nouns string
	// row is what the spec column keeps of v.
	row func(v V) R
	// version is the version a row's key and spec column make.
	version func(k asset.Key, r R) V
	// created, when not nil, runs in the transaction that inserts a version, with the version
	// as stored (models append MLflow's model_version.created there).
	created func(ctx context.Context, tx *sql.Tx, v V) error
}

// create registers v (createAsset: an empty version is the next integer, archived ones
// counted; a version that exists is ErrExists) and returns it as stored: with its version, not
// archived.
func (t assetTable[V, R]) create(ctx context.Context, s *Assets, v V) (*V, error) {
	r := t.row(v)
	spec, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	k := v.AssetKey()
	var then func(tx *sql.Tx, version string) error
	if t.created != nil {
		then = func(tx *sql.Tx, version string) error {
			k := k
			k.Version, k.Archived = version, false
			return t.created(ctx, tx, t.version(k, r))
		}
	}
	if k.Version, err = s.createAsset(ctx, t.table, t.noun, k.Name, k.Version, string(spec), k.Created, then); err != nil {
		return nil, err
	}
	k.Archived = false
	stored := t.version(k, r)
	return &stored, nil
}

// get returns one version; "latest" is the newest created that is not archived.
func (t assetTable[V, R]) get(ctx context.Context, s *Assets, name, version string) (*V, error) {
	row, err := s.assetVersion(ctx, t.table, t.noun, name, version)
	if err != nil {
		return nil, err
	}
	return t.decode(row)
}

// list returns every version of a name ("" = of every name), by name then creation.
func (t assetTable[V, R]) list(ctx context.Context, s *Assets, name string) ([]V, error) {
	rows, err := s.assetVersions(ctx, t.table, t.nouns, name)
	if err != nil {
		return nil, err
	}
	var out []V
	for _, row := range rows {
		v, err := t.decode(row)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// setArchived archives or restores one version, or every version of the name when version is
// "". It returns how many versions there were to change; none is ErrNotFound.
func (t assetTable[V, R]) setArchived(ctx context.Context, s *Assets, name, version string, archived bool) (int64, error) {
	return s.setAssetArchived(ctx, t.table, t.noun, name, version, archived)
}

func (t assetTable[V, R]) decode(row assetRow) (*V, error) {
	var r R
	if err := json.Unmarshal([]byte(row.Spec), &r); err != nil {
		return nil, fmt.Errorf("decode %s %s:%s: %w", t.noun, row.Name, row.Version, err)
	}
	v := t.version(asset.Key{Name: row.Name, Version: row.Version, Archived: row.Archived, Created: row.Created}, r)
	return &v, nil
}
