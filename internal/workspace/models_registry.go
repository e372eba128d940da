package workspace

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
)

// The model registry's writes (docs/mlflow.md "Model registry", docs/models.md): a registered
// model (a name, perhaps without versions yet) with its description and tags, versions'
// descriptions and tags, aliases (modelalias.go), MLflow's stages, renames and deletes. Models is their one
// writer, whoever asks (MLflow's clients through mlflowapi, the CLI through the server): each is
// checked here against MLflow's rules (model.CheckRegistryTag, CanonicalStage; aliases: modelalias.go)
// and Hangar's names, and is one transaction of the store. Errors carry MLflow's words:
// Invalid, NotFound, a Conflict wrapping store.ErrExists for a taken name, a Conflict for a
// rename refused while deployments name the model.

// CreateRegistered registers a model name without versions, with its description and tags, in
// one write. A registered name (one with a version, or created before) is a Conflict wrapping
// store.ErrExists; a name whose versions were all deleted may be registered again, and its
// numbers go on from theirs.
func (mv *Models) CreateRegistered(ctx context.Context, name, description string, tags map[string]string) error {
	if err := checkRegistryName(name); err != nil {
		return err
	}
	rows := make([]store.RegisteredModelTag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if err := model.CheckRegistryTag(k, tags[k]); err != nil {
			return Invalidf("%v", err)
		}
		rows = append(rows, store.RegisteredModelTag{Name: name, Key: k, Value: tags[k]})
	}
	err := mv.ws.Store.Registry.CreateRegisteredModel(ctx, store.RegisteredModel{Name: name, Description: description, Created: mv.ws.Now()}, rows)
	if err != nil {
		return registryErr(err)
	}
	mv.ws.Log.Info("registered model created", "model", name)
	return nil
}

// checkRegistryName refuses a name MLflow would take and Hangar cannot.
func checkRegistryName(name string) error {
	if err := model.CheckName(name); err != nil {
		return Invalidf("Invalid model name '%s': %v", name, err)
	}
	return nil
}

// DescribeRegistered sets a registered model's description.
func (mv *Models) DescribeRegistered(ctx context.Context, name, description string) error {
	return registryErr(mv.ws.Store.Registry.SetRegisteredModelDescription(ctx, name, description, mv.ws.Now()))
}

// SetRegisteredTag sets a registered model's own tag (not a version's).
func (mv *Models) SetRegisteredTag(ctx context.Context, name, key, value string) error {
	if err := model.CheckRegistryTag(key, value); err != nil {
		return Invalidf("%v", err)
	}
	return registryErr(mv.ws.Store.Registry.SetRegisteredModelTag(ctx, store.RegisteredModelTag{Name: name, Key: key, Value: value}))
}

// DeleteRegisteredTag removes a registered model's tag; one that is not there is no error.
func (mv *Models) DeleteRegisteredTag(ctx context.Context, name, key string) error {
	if key == "" {
		return Invalidf("Missing value for required parameter 'key'. See the API docs for more information about request parameters.")
	}
	return registryErr(mv.ws.Store.Registry.DeleteRegisteredModelTag(ctx, name, key))
}

// DescribeVersion sets a version's description.
func (mv *Models) DescribeVersion(ctx context.Context, name, version, description string) (*model.Version, error) {
	return mv.editMeta(ctx, name, version, func(m *asset.Meta) { m.Description = description })
}

// SetVersionTag sets a version's tag (what `hangar model show` lists under Tags).
func (mv *Models) SetVersionTag(ctx context.Context, name, version, key, value string) (*model.Version, error) {
	if err := model.CheckRegistryTag(key, value); err != nil {
		return nil, Invalidf("%v", err)
	}
	return mv.editMeta(ctx, name, version, func(m *asset.Meta) {
		m.Tags = maps.Clone(m.Tags)
		if m.Tags == nil {
			m.Tags = map[string]string{}
		}
		m.Tags[key] = value
	})
}

// DeleteVersionTag removes a version's tag; one that is not there is no error.
func (mv *Models) DeleteVersionTag(ctx context.Context, name, version, key string) (*model.Version, error) {
	if key == "" {
		return nil, Invalidf("Missing value for required parameter 'key'. See the API docs for more information about request parameters.")
	}
	return mv.editMeta(ctx, name, version, func(m *asset.Meta) {
		m.Tags = maps.Clone(m.Tags)
		delete(m.Tags, key)
		if len(m.Tags) == 0 {
			m.Tags = nil
		}
	})
}

func (mv *Models) editMeta(ctx context.Context, name, version string, edit func(*asset.Meta)) (*model.Version, error) {
	v, err := mv.ws.Store.Registry.UpdateModelMeta(ctx, name, version, edit)
	if errors.Is(err, store.ErrNotFound) {
		return nil, versionNotFound(name, version)
	}
	return v, err
}

func versionNotFound(name, version string) error {
	return NotFoundf("Model Version (name=%s, version=%s) not found", name, version)
}

// TransitionStage puts a version in one of MLflow's stages (any case): Archived is Hangar's
// archive, leaving it restores the version; with archiveOthers the other versions in the
// target stage are archived in the same write (only for Staging and Production, as MLflow).
func (mv *Models) TransitionStage(ctx context.Context, name, version, stage string, archiveOthers bool) (*model.Version, error) {
	st, err := model.CanonicalStage(stage)
	if err != nil {
		return nil, Invalidf("%v", err)
	}
	if archiveOthers && st != model.StageStaging && st != model.StageProduction {
		return nil, Invalidf("Model version transition cannot archive existing model versions because '%s' is not an Active stage. Valid stages are Staging and Production.", st)
	}
	v, err := mv.ws.Store.Registry.TransitionModelStage(ctx, name, version, st, archiveOthers)
	return v, registryErr(err)
}

// Rename gives a registered model a new name: its versions (with their numbers, deleted ones
// included), tags and aliases move. A taken new name is a Conflict wrapping store.ErrExists;
// while an online or batch deployment names the model by reference the rename is a Conflict
// listing them.
func (mv *Models) Rename(ctx context.Context, from, to string) error {
	if err := checkRegistryName(to); err != nil {
		return err
	}
	if err := mv.ws.Store.Registry.RenameModel(ctx, from, to); err != nil {
		return registryErr(err)
	}
	mv.ws.Log.Info("model renamed", "model", from, "to", to)
	return nil
}

// Delete deletes one version of a model, or every version of it and the registered model when
// version is "" (docs/models.md "Deleting a model"): the version leaves every listing, reference
// and @latest, its number is never given again, and the aliases naming it go. Deployments that
// use it keep serving the files they were given.
func (mv *Models) Delete(ctx context.Context, name, version string) error {
	if version != "" {
		v, err := model.ParseVersion(version)
		if err != nil {
			return Invalidf("%v", err)
		}
		version = v
	}
	if err := mv.ws.Store.Registry.DeleteModel(ctx, name, version, mv.ws.Now()); err != nil {
		return registryErr(err)
	}
	mv.ws.Log.Info("model deleted", "model", name, "version", version)
	return nil
}

// registryErr types the store's registry errors, keeping their MLflow words.
func registryErr(err error) error {
	msg := func(sentinel error) string { return strings.TrimSuffix(err.Error(), ": "+sentinel.Error()) }
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return &Error{Kind: NotFound, Msg: msg(store.ErrNotFound), Err: store.ErrNotFound}
	case errors.Is(err, store.ErrExists):
		return &Error{Kind: Conflict, Msg: msg(store.ErrExists), Err: store.ErrExists}
	case errors.Is(err, store.ErrInUse):
		return &Error{Kind: Conflict, Msg: msg(store.ErrInUse), Err: store.ErrInUse}
	}
	return err
}
