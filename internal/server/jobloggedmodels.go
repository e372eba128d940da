package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

// loggedModelsOf lists the MLflow 3 logged models a run produced (job show; job download's
// files under artifacts/models/<model_id>/ when withFiles).
func (s *jobRoutes) loggedModelsOf(ctx context.Context, runID string, withFiles bool) ([]api.LoggedModel, error) {
	ms, err := s.cfg.Store.Tracking.LoggedModels(ctx, store.LoggedModelQuery{RunID: runID})
	if err != nil {
		return nil, err
	}
	var out []api.LoggedModel
	for _, m := range ms {
		files, err := s.cfg.Store.Tracking.LoggedModelArtifactFiles(ctx, m.Info.ModelID, maxUploadedListed)
		if errors.Is(err, store.ErrTooMany) {
			err = &httpError{http.StatusConflict, api.CodeConflict, err.Error() + "; list them with GET /api/2.0/mlflow/logged-models/" +
				m.Info.ModelID + "/artifacts/directories"}
		}
		if err != nil {
			return nil, err
		}
		lm := api.LoggedModel{ID: m.Info.ModelID, Name: m.Info.Name, Status: m.Info.Status, Count: len(files)}
		for _, f := range files {
			lm.Size += f.Size
			if withFiles {
				lm.Files = append(lm.Files, api.UploadedArtifact{Path: f.Path, Hash: f.Hash, Size: f.Size})
			}
		}
		out = append(out, lm)
	}
	return out, nil
}
