package mlflowapi

import (
	"fmt"
	"net/http"
	"strings"
)

// A model version registered from an MLflow 3 logged model: model-versions/create with source
// models:/m-<id> (what mlflow.register_model sends after log_model, with model_id). The
// workspace's model create makes it from the model's files (no bytes copied). A run's token
// registers its own run's models only.

// loggedModelSource reads models:/m-<id>; ok is false for any other source (models:/<name>/<v>
// included).
func loggedModelSource(src string) (string, bool) {
	id, ok := strings.CutPrefix(src, "models:/")
	if !ok || !strings.HasPrefix(id, "m-") || strings.ContainsAny(id, "/@") {
		return "", false
	}
	return id, true
}

func (s *registry) createFromLoggedModel(r *http.Request, in *createVersionIn, id string) (any, error) {
	if in.ModelID != "" && in.ModelID != id {
		return nil, mlflowInvalid(fmt.Sprintf("model_id %s is not the model of source '%s'", in.ModelID, in.Source))
	}
	m, err := s.api.loggedModel(r, id)
	if err != nil {
		return nil, err
	}
	if in.RunID != "" && in.RunID != m.Info.SourceRunID {
		return nil, mlflowInvalid(fmt.Sprintf("run_id %s is not the source run of logged model %s (%s)", in.RunID, id, m.Info.SourceRunID))
	}
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	return s.registerVersion(r, in, "models:/"+id)
}
