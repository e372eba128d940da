package mlflowapi

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// The registry's creates: a registered model (a name, perhaps without versions yet) and a model
// version from a run's artifacts, made by the workspace's model create as `hangar model create
// --path azureml://jobs/<run>/outputs/artifacts/paths/<path>` makes it: the run's files, no bytes
// copied. A run's token may create both (mlflow.register_model from inside a job), a version
// only from its own run.

func (s *registry) registryCreateRoutes(mux Mux) {
	mux.Handle("POST "+Prefix+"registered-models/create", contributeOrRunAccess, mlflowHandler(s.api, s.createRegisteredModel))
	mux.Handle("POST "+Prefix+"model-versions/create", contributeOrRunAccess, mlflowHandler(s.api, s.createModelVersion))
}

type createRegisteredIn struct {
	Name        string        `json:"name"`
	Tags        []tracking.KV `json:"tags"`
	Description string        `json:"description"`
}

// createRegisteredModel registers the name with its description and tags, in one write.
func (s *registry) createRegisteredModel(r *http.Request, in *createRegisteredIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	var tags map[string]string
	for _, t := range in.Tags {
		if tags == nil {
			tags = map[string]string{}
		}
		tags[t.Key] = t.Value
	}
	if err := s.cfg.Registry.CreateRegistered(r.Context(), in.Name, in.Description, tags); err != nil {
		return nil, err
	}
	m, err := s.registeredModel(r.Context(), in.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"registered_model": m.json()}, nil
}

type createVersionIn struct {
	Name        string        `json:"name"`
	Source      string        `json:"source"`
	RunID       string        `json:"run_id"`
	RunLink     string        `json:"run_link"`
	Tags        []tracking.KV `json:"tags"`
	Description string        `json:"description"`
	ModelID     string        `json:"model_id"`
}

func (s *registry) createModelVersion(r *http.Request, in *createVersionIn) (any, error) {
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	if err := required("source", in.Source); err != nil {
		return nil, err
	}
	if id, ok := loggedModelSource(in.Source); ok {
		return s.createFromLoggedModel(r, in, id) // mlflowloggedmodels_register.go
	}
	run, sub, err := runSource(in.Source)
	if err != nil {
		return nil, err
	}
	if in.RunID != "" && in.RunID != run {
		return nil, mlflowInvalid(fmt.Sprintf("run_id %s is not the run of source '%s' (%s)", in.RunID, in.Source, run))
	}
	if err := s.api.allowRun(r, run); err != nil {
		return nil, err
	}
	if _, err := s.registeredModel(r.Context(), in.Name); err != nil {
		return nil, err
	}
	p := "azureml://jobs/" + run + "/outputs/artifacts"
	if sub != "" {
		p += "/paths/" + sub
	}
	return s.registerVersion(r, in, p)
}

// registerVersion registers the files at path (a job's output, a logged model) as the next
// version of in.Name, with in's description and tags, through the workspace's models (what
// `hangar model create` calls), and answers it as MLflow shows it.
func (s *registry) registerVersion(r *http.Request, in *createVersionIn, path string) (any, error) {
	sp := model.Spec{Name: in.Name, Type: model.MLflowModel, Path: path, Meta: asset.Meta{Description: in.Description}}
	for _, t := range in.Tags {
		if sp.Tags == nil {
			sp.Tags = map[string]string{}
		}
		sp.Tags[t.Key] = t.Value
	}
	v, err := s.cfg.Registry.Create(r.Context(), api.CreateModelRequest{Spec: sp})
	if err != nil {
		return nil, err
	}
	return s.getModelVersion(r, &versionIn{Name: v.Name, Version: v.Version})
}

// runSource reads a version's source as a run and a path in its artifacts: runs:/<run>/<path>
// or mlflow-artifacts:/<experiment>/<run>/artifacts/<path>. A logged model's models:/m-<id> is
// read before (loggedModelSource); any other source (a local path, s3://, ...) is refused:
// Hangar registers what its runs hold.
func runSource(src string) (run, sub string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", mlflowInvalid(fmt.Sprintf("Invalid model version source: '%s'. %s", src, why))
	}
	var rest string
	switch {
	case strings.HasPrefix(src, "runs:/"):
		rest = strings.TrimLeft(strings.TrimPrefix(src, "runs:/"), "/")
		run, sub, _ = strings.Cut(rest, "/")
	case strings.HasPrefix(src, "mlflow-artifacts:/"):
		rest = strings.TrimLeft(strings.TrimPrefix(src, "mlflow-artifacts:/"), "/")
		parts := strings.SplitN(rest, "/", 4)
		if len(parts) < 3 || parts[2] != "artifacts" {
			return bad("Expected mlflow-artifacts:/<experiment_id>/<run_id>/artifacts/<path>.")
		}
		run = parts[1]
		if len(parts) == 4 {
			sub = parts[3]
		}
	default:
		return bad("Hangar registers a run's artifacts: give runs:/<run_id>/<path>, mlflow-artifacts:/<experiment_id>/<run_id>/artifacts/<path> or a logged model's models:/m-<id>.")
	}
	if u, uerr := url.PathUnescape(sub); uerr != nil || u != sub {
		return bad("The path may not hold percent-escapes.")
	}
	sub = strings.Trim(sub, "/")
	if run == "" || strings.ContainsAny(run, "\\\x00") || (sub != "" && (path.Clean(sub) != sub || sub == ".." || strings.HasPrefix(sub, "../") || strings.ContainsRune(sub, 0))) {
		return bad("An absolute path must be provided without relative path references present.")
	}
	return run, sub, nil
}
