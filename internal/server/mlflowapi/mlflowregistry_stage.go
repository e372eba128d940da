package mlflowapi

import (
	"fmt"
	"net/http"
)

// model-versions/transition-stage: MLflow's (deprecated) stages over Hangar's archive. Archived
// is Hangar's archive (the version leaves model list and @latest, and still resolves by number);
// Staging and Production are kept on the version; None is neither. Owners and contributors only.

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
	st, err := canonicalStage(in.Stage)
	if err != nil {
		return nil, err
	}
	if in.ArchiveExistingVersions && st != "Staging" && st != "Production" {
		return nil, mlflowInvalid(fmt.Sprintf("Model version transition cannot archive existing model versions because '%s' is not an Active stage. Valid stages are Staging and Production.", st))
	}
	v, err := s.modelVersion(r.Context(), &versionIn{Name: in.Name, Version: in.Version})
	if err != nil {
		return nil, err
	}
	if in.ArchiveExistingVersions {
		m, err := s.registeredModel(r.Context(), in.Name)
		if err != nil {
			return nil, err
		}
		for _, other := range m.versions {
			if other.Version != v.Version && stage(other) == st {
				if err := s.setStage(r, other.Name, other.Version, stageArchived); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := s.setStage(r, v.Name, v.Version, st); err != nil {
		return nil, err
	}
	return s.getModelVersion(r, &versionIn{Name: v.Name, Version: v.Version})
}

// setStage puts a version in a stage: Archived archives it, any other stage restores it and
// keeps the stage (None as "").
func (s *registry) setStage(r *http.Request, name, version, st string) error {
	keep := st
	if st == stageNone || st == stageArchived {
		keep = ""
	}
	if _, err := s.cfg.Models.SetModelMLflowStage(r.Context(), name, version, keep); err != nil {
		return err
	}
	_, err := s.cfg.Models.SetModelArchived(r.Context(), name, version, st == stageArchived)
	return err
}
