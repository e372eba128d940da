package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/store"
)

// versions is what the versioned assets (models, data, components) share: storing a new
// version, resolving a reference, the hint when it names nothing, archiving. Only their kind
// and store calls differ.
type versions[V asset.Versioned] struct {
	kind asset.Kind
	rows VersionRows[V]
}

// VersionRows are one versioned asset kind's rows in the store: a new version added, one read,
// a name's versions listed, archived or restored (store.Assets' CreateModel, Model, Models and
// SetModelArchived, and their data and component twins).
type VersionRows[V asset.Versioned] struct {
	Add         func(ctx context.Context, v V) (*V, error)
	Get         func(ctx context.Context, name, version string) (*V, error)
	List        func(ctx context.Context, name string) ([]V, error)
	SetArchived func(ctx context.Context, name, version string, archived bool) (int64, error)
}

// create stores a new version; one of the same name and version is a Conflict.
func (a versions[V]) create(ctx context.Context, v V) (*V, error) {
	created, err := a.rows.Add(ctx, v)
	if errors.Is(err, store.ErrExists) {
		k := v.AssetKey()
		return nil, Conflictf("%s %s version %s already exists; omit the version to create the next one", a.kind.Noun, k.Name, k.Version)
	}
	return created, err
}

// Resolve finds the version a reference names: name:version or name@latest, with or without
// azureml:. An archived version still resolves by its number (what uses it keeps working);
// @latest is the newest version that is not archived.
func (a versions[V]) Resolve(ctx context.Context, ref string) (*V, error) {
	r, err := a.kind.ParseRef(ref, false)
	if err != nil {
		return nil, Invalidf("%v", err)
	}
	v, err := a.rows.Get(ctx, r.Name, r.StoreVersion())
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("no %s %s in this workspace%s", a.kind.Noun, r, a.hint(ctx, r.Name))
	}
	return v, err
}

// hint says what the workspace has instead of the asset a reference named.
func (a versions[V]) hint(ctx context.Context, name string) string {
	vs, err := a.rows.List(ctx, name)
	if err != nil || len(vs) == 0 {
		return " (see hangar " + a.kind.Command + " list)"
	}
	if latest, ok := asset.Latest(vs); ok {
		return fmt.Sprintf(" (its latest version is %s)", latest.AssetKey().Version)
	}
	return " (every version of it is archived: hangar " + a.kind.Command + " restore)"
}

// SetArchived archives or restores a version, or every version of a name when version is "".
func (a versions[V]) SetArchived(ctx context.Context, name, version string, archived bool) error {
	if version != "" {
		v, err := a.kind.ParseVersion(version)
		if err != nil {
			return Invalidf("%v", err)
		}
		version = v
	}
	_, err := a.rows.SetArchived(ctx, name, version, archived)
	if errors.Is(err, store.ErrNotFound) {
		if version == "" {
			return NotFoundf("no %s %s in this workspace", a.kind.Noun, name)
		}
		return NotFoundf("no %s %s version %s in this workspace", a.kind.Noun, name, version)
	}
	return err
}
