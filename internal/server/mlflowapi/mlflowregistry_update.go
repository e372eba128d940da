package mlflowapi

import (
	"context"
	"net/http"
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
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Registry.SetRegisteredTag(r.Context(), in.Name, in.Key, in.Value)
}

// deleteRegisteredModelTag removes a tag; one that is not there is no error (as MLflow's store).
func (s *registry) deleteRegisteredModelTag(r *http.Request, in *versionTagIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Registry.DeleteRegisteredTag(r.Context(), in.Name, in.Key)
}

type describeIn struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

func (s *registry) updateRegisteredModel(r *http.Request, in *describeIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	if err := s.cfg.Registry.DescribeRegistered(r.Context(), in.Name, in.Description); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"registered_model": m.json()}, nil
}

func (s *registry) updateModelVersion(r *http.Request, in *describeIn) (any, error) {
	return s.editVersion(r, in.Name, in.Version, func(ctx context.Context, name, version string) error {
		_, err := s.cfg.Registry.DescribeVersion(ctx, name, version, in.Description)
		return err
	})
}

type versionTagIn struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Key     string `json:"key"`
	Value   string `json:"value"`
}

func (s *registry) setModelVersionTag(r *http.Request, in *versionTagIn) (any, error) {
	_, err := s.editVersion(r, in.Name, in.Version, func(ctx context.Context, name, version string) error {
		_, err := s.cfg.Registry.SetVersionTag(ctx, name, version, in.Key, in.Value)
		return err
	})
	return empty{}, err
}

// deleteModelVersionTag removes a tag; one that is not there is no error (as MLflow's store).
func (s *registry) deleteModelVersionTag(r *http.Request, in *versionTagIn) (any, error) {
	_, err := s.editVersion(r, in.Name, in.Version, func(ctx context.Context, name, version string) error {
		_, err := s.cfg.Registry.DeleteVersionTag(ctx, name, version, in.Key)
		return err
	})
	return empty{}, err
}

// editVersion checks that MLflow can name the version (an integer that is there), lets edit
// change it through the registry, and answers the version as it is then.
func (s *registry) editVersion(r *http.Request, name, version string, edit func(ctx context.Context, name, version string) error) (any, error) {
	v, err := s.modelVersion(r.Context(), &versionIn{Name: name, Version: version})
	if err != nil {
		return nil, err
	}
	if err := edit(r.Context(), v.Name, v.Version); err != nil {
		return nil, err
	}
	return s.getModelVersion(r, &versionIn{Name: v.Name, Version: v.Version})
}
