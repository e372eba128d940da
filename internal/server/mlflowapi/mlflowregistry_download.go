package mlflowapi

import (
	"net/http"
)

// model-versions/get-download-uri: where MLflow's client downloads a version's files from
// (models:/<name>/<version>, models:/<name>/latest, models:/<name>/<stage>, models:/<name>@<alias>).
// Every version answers mlflow-artifacts:/registered-models/<name>/<version>, the artifact proxy's
// read-only view of the files the version was registered with (mlflowartifacts_registered.go),
// whatever its source: uploaded by `hangar model create`, a job's named output, a run's
// artifacts. The files are the version's, not the run's as they are now: a file the run logs or
// deletes after the registration changes nothing in the version.

func (s *registry) downloadURIRoutes(mux Mux) {
	mux.Handle("GET "+Prefix+"model-versions/get-download-uri", readOrRunAccess, mlflowHandler(s.api, s.modelVersionDownloadURI))
}

func (s *registry) modelVersionDownloadURI(r *http.Request, in *versionIn) (any, error) {
	v, err := s.modelVersion(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return map[string]string{"artifact_uri": registeredURI(v.Name, v.Version)}, nil
}
