package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
)

// ModelAliasRows are models' aliases in the store (store.Assets' ModelAliases, SetModelAlias
// and DeleteModelAlias): MLflow's registered model aliases, which references follow.
type ModelAliasRows interface {
	ModelAliases(ctx context.Context, name string) ([]store.ModelAlias, error)
	SetModelAlias(ctx context.Context, a store.ModelAlias) error
	DeleteModelAlias(ctx context.Context, name, alias string) error
}

// Resolve finds the version a reference names: name:version, name@latest (the versions' rule,
// versions.go) or name@<alias>, the version the alias names now. An alias that is not set is
// NotFound, naming the aliases the model has.
func (mv *Models) Resolve(ctx context.Context, ref string) (*model.Version, error) {
	r, err := model.ParseRef(ref, false)
	if err != nil || r.Alias == "" {
		return mv.versions.Resolve(ctx, ref)
	}
	version, err := mv.AliasVersion(ctx, r.Name, r.Alias)
	if err != nil {
		return nil, err
	}
	v, err := mv.rows.Get(ctx, r.Name, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFoundf("model %s: alias %s names version %s, which this workspace no longer has", r.Name, r.Alias, version)
	}
	return v, err
}

// AliasVersion is the version a model's alias names now; an alias not set is NotFound.
func (mv *Models) AliasVersion(ctx context.Context, name, alias string) (string, error) {
	all, err := mv.ws.Store.Aliases.ModelAliases(ctx, name)
	if err != nil {
		return "", err
	}
	var have []string
	for _, a := range all {
		if a.Alias == alias {
			return a.Version, nil
		}
		have = append(have, a.Alias+" → "+a.Version)
	}
	hint := fmt.Sprintf("set it with hangar model alias set %s %s <version>", name, alias)
	if len(have) > 0 {
		hint = "its aliases: " + strings.Join(have, ", ") + "; or " + hint
	}
	return "", NotFoundf("model %s has no alias %s (%s)", name, alias, hint)
}

// SetAlias points a model's alias at one of its versions, moving it if it named another;
// deployments that follow the alias roll to that version.
func (mv *Models) SetAlias(ctx context.Context, name, alias, version string) (*model.Version, error) {
	if err := model.CheckAlias(alias); err != nil {
		return nil, Invalidf("%v", err)
	}
	v, err := mv.versions.Resolve(ctx, name+":"+version)
	if err != nil {
		return nil, err
	}
	if err := mv.ws.Store.Aliases.SetModelAlias(ctx, store.ModelAlias{Name: v.Name, Alias: alias, Version: v.Version}); err != nil {
		return nil, err
	}
	mv.ws.Log.Info("model alias set", "model", v.Name, "alias", alias, "version", v.Version)
	return v, nil
}

// DeleteAlias removes a model's alias; one not set is NotFound. Deployments that follow it keep
// serving the version it named.
func (mv *Models) DeleteAlias(ctx context.Context, name, alias string) error {
	if err := model.CheckName(name); err != nil {
		return Invalidf("%v", err)
	}
	if _, err := mv.AliasVersion(ctx, name, alias); err != nil {
		return err
	}
	if err := mv.ws.Store.Aliases.DeleteModelAlias(ctx, name, alias); err != nil {
		return err
	}
	mv.ws.Log.Info("model alias deleted", "model", name, "alias", alias)
	return nil
}

// ModelAliasVersion is the version a model's alias names now (Models.AliasVersion), for
// resolvers that take the whole Workspace (serving's alias loop).
func (w *Workspace) ModelAliasVersion(ctx context.Context, name, alias string) (string, error) {
	return w.Models.AliasVersion(ctx, name, alias)
}
