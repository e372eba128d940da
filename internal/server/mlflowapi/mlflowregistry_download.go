package mlflowapi

import (
	"fmt"
	"net/http"
	"strings"
)

// model-versions/get-download-uri: where MLflow's client downloads a version's files from
// (models:/<name>/<version>, models:/<name>/latest, ...). A version registered from a run's
// artifacts (MLflow's model-versions/create, or `hangar model create --path
// azureml://jobs/<run>/outputs/artifacts[/paths/<p>]`) is answered with the mlflow-artifacts URI
// of those files, which the artifact proxy serves (a job's own files read-only, its MLflow
// uploads). A version uploaded from a client, or taken from a named output, has no such URI:
// 501 NOT_IMPLEMENTED, naming `hangar model download` (a code MLflow's client does not retry).

func (s *registry) downloadURIRoutes(mux Mux) {
	mux.Handle("GET "+Prefix+"model-versions/get-download-uri", readOrRunAccess, mlflowHandler(s.api, s.modelVersionDownloadURI))
}

func (s *registry) modelVersionDownloadURI(r *http.Request, in *versionIn) (any, error) {
	v, err := s.modelVersion(r.Context(), in)
	if err != nil {
		return nil, err
	}
	run, sub, ok := runArtifactsSource(v.Source)
	if !ok {
		return nil, &Error{Status: http.StatusNotImplemented, Code: CodeNotImplemented, Message: fmt.Sprintf(
			"model %s version %s was registered from %s, whose files Hangar's mlflow-artifacts routes do not serve; download it with `hangar model download %s:%s`",
			v.Name, v.Version, v.Source, v.Name, v.Version)}
	}
	tr, err := s.cfg.Tracking.TrackingRun(r.Context(), run)
	if err != nil {
		return nil, err
	}
	uri := "mlflow-artifacts:/" + tr.Info.ExperimentID + "/" + run + "/artifacts"
	if sub != "" {
		uri += "/" + sub
	}
	return map[string]string{"artifact_uri": uri}, nil
}

// runArtifactsSource reads a version's source azureml://jobs/<run>/outputs/artifacts[/paths/<p>]
// (also the output's other name, default) as the run and the path in its artifacts.
func runArtifactsSource(src string) (run, sub string, ok bool) {
	rest, ok := strings.CutPrefix(src, "azureml://jobs/")
	if !ok {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[1] != "outputs" || (parts[2] != "artifacts" && parts[2] != "default") {
		return "", "", false
	}
	if len(parts) == 4 {
		if sub, ok = strings.CutPrefix(parts[3], "paths/"); !ok {
			return "", "", false
		}
	}
	return parts[0], strings.Trim(sub, "/"), parts[0] != ""
}
