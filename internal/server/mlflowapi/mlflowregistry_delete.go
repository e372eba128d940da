package mlflowapi

import (
	"net/http"
)

// The registry's renames and deletes, made by the workspace's registry: a rename moves the
// versions, tags and aliases (refused, 409 RESOURCE_CONFLICT, while a deployment names the
// model by reference); a delete is a tombstone (the version leaves MLflow, `hangar model list`,
// references and @latest; its number is never given again). Owners and contributors only: a
// run's token never renames nor deletes.

func (s *registry) deleteRoutes(mux Mux) {
	mux.Handle("POST "+Prefix+"registered-models/rename", contributeAccess.audited("model.rename"), mlflowHandler(s.api, s.renameRegisteredModel))
	mux.Handle("DELETE "+Prefix+"registered-models/delete", contributeAccess.audited("model.delete"), mlflowHandler(s.api, s.deleteRegisteredModel))
	mux.Handle("DELETE "+Prefix+"model-versions/delete", contributeAccess.audited("model.delete"), mlflowHandler(s.api, s.deleteModelVersion))
}

type renameIn struct {
	Name    string `json:"name"`
	NewName string `json:"new_name"`
}

func (s *registry) renameRegisteredModel(r *http.Request, in *renameIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	if err := required("new_name", in.NewName); err != nil {
		return nil, err
	}
	if err := s.cfg.Registry.Rename(r.Context(), in.Name, in.NewName); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.NewName)
	if err != nil {
		return nil, err
	}
	return map[string]any{"registered_model": m.json()}, nil
}

func (s *registry) deleteRegisteredModel(r *http.Request, in *nameIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Registry.Delete(r.Context(), in.Name, "")
}

// deleteModelVersion deletes a version MLflow can name (an integer that is there).
func (s *registry) deleteModelVersion(r *http.Request, in *versionIn) (any, error) {
	v, err := s.modelVersion(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return empty{}, s.cfg.Registry.Delete(r.Context(), v.Name, v.Version)
}
