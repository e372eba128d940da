package mlflowapi

import (
	"fmt"
	"maps"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/store"
)

// The registry's edits of what describes a model: a registered model's description, a
// version's description and tags (the version's own, which `hangar model show` shows too).
// Owners and contributors only: a run's token registers, it does not edit.

func (s *registry) registryUpdateRoutes(mux Mux) {
	mux.Handle("PATCH "+Prefix+"registered-models/update", contributeAccess, mlflowHandler(s.api, s.updateRegisteredModel))
	mux.Handle("PATCH "+Prefix+"model-versions/update", contributeAccess, mlflowHandler(s.api, s.updateModelVersion))
	mux.Handle("POST "+Prefix+"model-versions/set-tag", contributeAccess, mlflowHandler(s.api, s.setModelVersionTag))
	mux.Handle("DELETE "+Prefix+"model-versions/delete-tag", contributeAccess, mlflowHandler(s.api, s.deleteModelVersionTag))
	mux.Handle("POST "+Prefix+"registered-models/set-tag", contributeAccess, mlflowHandler(s.api, s.setRegisteredModelTag))
	mux.Handle("DELETE "+Prefix+"registered-models/delete-tag", contributeAccess, mlflowHandler(s.api, s.deleteRegisteredModelTag))
}

func (s *registry) setRegisteredModelTag(r *http.Request, in *versionTagIn) (any, error) {
	if err := checkRegistryTag(in.Key, in.Value); err != nil {
		return nil, err
	}
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Models.SetRegisteredModelTags(r.Context(), []store.RegisteredModelTag{{Name: in.Name, Key: in.Key, Value: in.Value}})
}

// deleteRegisteredModelTag removes a tag; one that is not there is no error (as MLflow's store).
func (s *registry) deleteRegisteredModelTag(r *http.Request, in *versionTagIn) (any, error) {
	if err := required("key", in.Key); err != nil {
		return nil, err
	}
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Models.DeleteRegisteredModelTag(r.Context(), in.Name, in.Key)
}

type describeIn struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

func (s *registry) updateRegisteredModel(r *http.Request, in *describeIn) (any, error) {
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	if err := s.cfg.Models.SetRegisteredModelDescription(r.Context(), in.Name, in.Description, time.Now().UTC()); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"registered_model": m.json()}, nil
}

func (s *registry) updateModelVersion(r *http.Request, in *describeIn) (any, error) {
	return s.editVersion(r, in.Name, in.Version, func(m *asset.Meta) { m.Description = in.Description })
}

type versionTagIn struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Key     string `json:"key"`
	Value   string `json:"value"`
}

func (s *registry) setModelVersionTag(r *http.Request, in *versionTagIn) (any, error) {
	if err := checkRegistryTag(in.Key, in.Value); err != nil {
		return nil, err
	}
	_, err := s.editVersion(r, in.Name, in.Version, func(m *asset.Meta) {
		m.Tags = maps.Clone(m.Tags)
		if m.Tags == nil {
			m.Tags = map[string]string{}
		}
		m.Tags[in.Key] = in.Value
	})
	return empty{}, err
}

// deleteModelVersionTag removes a tag; one that is not there is no error (as MLflow's store).
func (s *registry) deleteModelVersionTag(r *http.Request, in *versionTagIn) (any, error) {
	if err := required("key", in.Key); err != nil {
		return nil, err
	}
	_, err := s.editVersion(r, in.Name, in.Version, func(m *asset.Meta) {
		m.Tags = maps.Clone(m.Tags)
		delete(m.Tags, in.Key)
		if len(m.Tags) == 0 {
			m.Tags = nil
		}
	})
	return empty{}, err
}

// editVersion checks that MLflow can name the version, then edits its description and tags.
func (s *registry) editVersion(r *http.Request, name, version string, edit func(*asset.Meta)) (any, error) {
	v, err := s.modelVersion(r.Context(), &versionIn{Name: name, Version: version})
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Models.UpdateModelMeta(r.Context(), v.Name, v.Version, edit); err != nil {
		return nil, err
	}
	return s.getModelVersion(r, &versionIn{Name: v.Name, Version: v.Version})
}

// MLflow's limits on registry tags (mlflow/utils/validation.py).
const (
	maxRegistryTagKey   = 250
	maxRegistryTagValue = 100_000
)

var registryTagKey = regexp.MustCompile(`^[/\w.\- :]*$`)

// checkRegistryTag refuses a key MLflow refuses: empty, too long, with other characters, or one
// that normalizes to another path (a/../b).
func checkRegistryTag(key, value string) error {
	if err := required("key", key); err != nil {
		return err
	}
	switch {
	case len(key) > maxRegistryTagKey:
		return mlflowInvalid(fmt.Sprintf("'key' exceeds the maximum length of %d characters", maxRegistryTagKey))
	case len(value) > maxRegistryTagValue:
		return mlflowInvalid(fmt.Sprintf("'value' exceeds the maximum length of %d characters", maxRegistryTagValue))
	case !registryTagKey.MatchString(key) || pathNotUnique(key):
		return mlflowInvalid(fmt.Sprintf("Invalid value \"%s\" for parameter 'key' supplied: Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), colon(:) and slashes (/).", key))
	}
	return nil
}

// pathNotUnique is MLflow's path_not_unique: a name that normalizes to another, or leaves its
// root.
func pathNotUnique(name string) bool {
	n := path.Clean(name)
	return n != name || n == "." || strings.HasPrefix(n, "..") || strings.HasPrefix(n, "/")
}
