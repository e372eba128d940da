package mlflowapi

import (
	"fmt"
	"net/http"
	"regexp"
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

// MLflow's alias rules (mlflow/utils/validation.py).
var (
	aliasName     = regexp.MustCompile(`^[\w\-]*$`)
	versionAlias  = regexp.MustCompile(`^[vV]\d+$`)
	maxAliasChars = 255
)

func checkAlias(alias string) error {
	switch {
	case alias == "":
		return mlflowInvalid("Registered model alias name cannot be empty.")
	case len(alias) > maxAliasChars || !aliasName.MatchString(alias):
		return mlflowInvalid(fmt.Sprintf("Invalid alias name: '%s'. Names may only contain alphanumerics, underscores (_), and dashes (-).", alias))
	}
	return nil
}

func (s *registry) setAlias(r *http.Request, in *aliasIn) (any, error) {
	if err := checkAlias(in.Alias); err != nil {
		return nil, err
	}
	switch {
	case strings.EqualFold(in.Alias, "latest"):
		return nil, mlflowInvalid("'latest' alias name (case insensitive) is reserved.")
	case versionAlias.MatchString(in.Alias):
		return nil, mlflowInvalid(fmt.Sprintf("Version alias name '%s' is reserved.", in.Alias))
	}
	v, err := s.modelVersion(r.Context(), &versionIn{Name: in.Name, Version: in.Version})
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Models.SetModelAlias(r.Context(), store.ModelAlias{Name: v.Name, Alias: in.Alias, Version: v.Version})
}

func (s *registry) deleteAlias(r *http.Request, in *aliasIn) (any, error) {
	if err := checkAlias(in.Alias); err != nil {
		return nil, err
	}
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Models.DeleteModelAlias(r.Context(), in.Name, in.Alias)
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
