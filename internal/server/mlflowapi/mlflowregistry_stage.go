package mlflowapi

import (
	"net/http"
)

// model-versions/transition-stage: MLflow's (deprecated) stages over Hangar's archive. Archived
// is Hangar's archive (the version leaves model list and @latest, and still resolves by number);
// Staging and Production are kept on the version; None is neither. The workspace's registry
// makes the change, with archive_existing_versions, in one write. Owners and contributors only.

func (s *registry) stageRoutes(mux Mux) {
	mux.Handle("POST "+Prefix+"model-versions/transition-stage", contributeAccess, mlflowHandler(s.api, s.transitionStage))
}

type transitionIn struct {
	Name                    string `json:"name"`
	Version                 string `json:"version"`
	Stage                   string `json:"stage"`
	ArchiveExistingVersions bool   `json:"archive_existing_versions"`
}

func (s *registry) transitionStage(r *http.Request, in *transitionIn) (any, error) {
	if err := required("stage", in.Stage); err != nil {
		return nil, err
	}
	if _, err := canonicalStage(in.Stage); err != nil {
		return nil, err
	}
	v, err := s.modelVersion(r.Context(), &versionIn{Name: in.Name, Version: in.Version})
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Registry.TransitionStage(r.Context(), v.Name, v.Version, in.Stage, in.ArchiveExistingVersions); err != nil {
		return nil, err
	}
	return s.getModelVersion(r, &versionIn{Name: v.Name, Version: v.Version})
}
