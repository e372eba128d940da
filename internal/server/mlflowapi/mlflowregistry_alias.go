package mlflowapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/store"
)

// Registered model aliases (models:/iris@champion): one path, three methods. Setting and
// deleting take an owner or contributor; reading, every role and a run's token.

func (s *registry) aliasRoutes(mux Mux) {
	const p = Prefix + "registered-models/alias"
	mux.Handle("POST "+p, contributeAccess, mlflowHandler(s.api, s.setAlias))
	mux.Handle("DELETE "+p, contributeAccess, mlflowHandler(s.api, s.deleteAlias))
	mux.Handle("GET "+p, readOrRunAccess, mlflowHandler(s.api, s.getByAlias))
}

type aliasIn struct {
	Name    string `json:"name"`
	Alias   string `json:"alias"`
	Version string `json:"version"`
}

func checkAlias(alias string) error {
	if err := model.CheckAliasName(alias); err != nil {
		return mlflowInvalid(err.Error())
	}
	return nil
}

func (s *registry) setAlias(r *http.Request, in *aliasIn) (any, error) {
	if err := model.CheckNewAlias(in.Alias); err != nil {
		return nil, mlflowInvalid(err.Error())
	}
	v, err := s.modelVersion(r.Context(), &versionIn{Name: in.Name, Version: in.Version})
	if err != nil {
		return nil, err
	}
	_, err = s.cfg.Registry.SetAlias(r.Context(), v.Name, in.Alias, v.Version)
	return empty{}, err
}

// deleteAlias removes an alias; one that is not there is no error, as in MLflow (the
// workspace's DeleteAlias, which `hangar model alias delete` calls too, says NotFound).
func (s *registry) deleteAlias(r *http.Request, in *aliasIn) (any, error) {
	if err := checkAlias(in.Alias); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(m.aliases, func(a store.ModelAlias) bool { return a.Alias == in.Alias }) {
		return empty{}, nil
	}
	return empty{}, s.cfg.Registry.DeleteAlias(r.Context(), in.Name, in.Alias)
}

// getByAlias answers the version an alias names; "latest" (any case) is the highest version.
// An unknown alias is 400 INVALID_PARAMETER_VALUE, as MLflow answers it.
func (s *registry) getByAlias(r *http.Request, in *aliasIn) (any, error) {
	if err := checkAlias(in.Alias); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(in.Alias, "latest") {
		var top *model.Version
		for i, v := range m.versions {
			if top == nil || model.Number(v.Version) > model.Number(top.Version) {
				top = &m.versions[i]
			}
		}
		if top == nil {
			return nil, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: fmt.Sprintf("Latest version not found for model %s.", in.Name)}
		}
		return map[string]any{"model_version": m.versionJSON(*top)}, nil
	}
	for _, a := range m.aliases {
		if a.Alias == in.Alias {
			return s.getModelVersion(r, &versionIn{Name: in.Name, Version: a.Version})
		}
	}
	return nil, mlflowInvalid(fmt.Sprintf("Registered model alias %s not found.", in.Alias))
}
