package mlflowapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// The registered-models namespace of the artifact proxy: registered-models/<name>/<version>[/<path>]
// is a model version's files, read from the manifest it was registered with (the blobs `hangar
// model download` and a deployment's replica get), whatever made it: `hangar model create` from
// a client's folder, a job's named output or its artifacts, or MLflow's model-versions/create.
// model-versions/get-download-uri answers mlflow-artifacts:/registered-models/<name>/<version>,
// so that MLflow's client loads every version through models:/ (docs/mlflow.md). Experiment ids
// are integers, so the first segment never names a run's artifacts.
//
// It is read-only: a version's files never change (a new version is registered instead). Every
// role reads it, and a run's token too: a run's token reads the registry already, and a job may
// take any version as an input (azureml:<name>:<version>); loading models:/<name>/<v> in a job's
// script is that input by MLflow's way (docs/security.md).

const registeredModelsDir = "registered-models"

// isRegisteredPath says whether an artifact path is in the registered-models namespace.
func isRegisteredPath(p string) bool {
	return p == registeredModelsDir || strings.HasPrefix(p, registeredModelsDir+"/")
}

// registeredURI is the mlflow-artifacts URI of a version's files.
func registeredURI(name, version string) string {
	return "mlflow-artifacts:/" + registeredModelsDir + "/" + name + "/" + version
}

// registeredReadOnly is the answer to a write (an upload, a delete, a multipart upload) in the
// namespace.
func registeredReadOnly(p string) error {
	return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied, Message: fmt.Sprintf(
		"%s: the files of a registered model version are read-only; log the files to a run and register a new version", p)}
}

// registeredTarget is a version's files and the path asked for in them.
type registeredTarget struct {
	name, version, rel string
	files              jobTree
}

func (t *registeredTarget) where() string {
	s := fmt.Sprintf("model %s version %s", t.name, t.version)
	if t.rel != "" {
		s += " has no file " + t.rel
	}
	return s
}

// registeredTarget checks a path of the namespace and reads the version's manifest. The version
// is one MLflow sees (an integer version, as model-versions/get finds it).
func (s *API) registeredTarget(ctx context.Context, p string) (*registeredTarget, error) {
	if err := checkArtifactPath(p); err != nil {
		return nil, err
	}
	parts := strings.SplitN(p, "/", 4)
	if len(parts) < 3 {
		return nil, mlflowInvalid(fmt.Sprintf("artifact path %q: want %s/<name>/<version>[/<path>]", p, registeredModelsDir))
	}
	t := &registeredTarget{name: parts[1], version: parts[2]}
	if len(parts) == 4 {
		t.rel = parts[3]
	}
	v, err := s.mlflowVersion(ctx, t.name, t.version)
	if err != nil {
		return nil, err
	}
	m, err := s.jobManifest(v.Manifest, "hangar model download "+v.Name+":"+v.Version)
	if err != nil {
		return nil, fmt.Errorf("files of model %s version %s: %w", v.Name, v.Version, err)
	}
	t.files = jobTree{m: m}
	return t, nil
}

// mlflowVersion is the version of name that MLflow calls version (an integer), or MLflow's
// not-found error.
func (s *API) mlflowVersion(ctx context.Context, name, version string) (*model.Version, error) {
	notFound := &Error{Status: http.StatusNotFound, Code: CodeNotFound,
		Message: fmt.Sprintf("Model Version (name=%s, version=%s) not found", name, version)}
	n := model.Number(version)
	if n <= 0 && version != "0" {
		return nil, notFound
	}
	vs, err := s.cfg.Models.Models(ctx, name)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].Name == name && integerVersion(vs[i]) && model.Number(vs[i].Version) == n {
			return &vs[i], nil
		}
	}
	return nil, notFound
}

// getRegisteredFile answers GET artifacts/registered-models/<name>/<version>/<path>: one file of
// the version, as the proxy serves a run's files.
func (s *API) getRegisteredFile(w http.ResponseWriter, r *http.Request, p string) {
	t, err := s.registeredTarget(r.Context(), p)
	if err != nil {
		s.writeError(w, s.mlflowErr(err))
		return
	}
	e, ok := t.files.entry(t.rel)
	if t.rel == "" || !ok || e.Type != snapshot.TypeFile {
		if t.rel == "" {
			t.rel = "at its root (list it with GET artifacts?path=" + p + ")"
		}
		s.writeError(w, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: t.where()})
		return
	}
	s.serveArtifact(w, r, e.Hash, t.rel, "of model "+t.name+" version "+t.version)
}

// listRegistered answers GET artifacts?path=registered-models/<name>/<version>[/<dir>]: the
// directory's children (a file lists as nothing, a missing directory too, as for a run).
func (s *API) listRegistered(w http.ResponseWriter, r *http.Request, p string) {
	t, err := s.registeredTarget(r.Context(), p)
	if err != nil {
		s.writeError(w, s.mlflowErr(err))
		return
	}
	var out struct {
		Files []FileInfo `json:"files,omitempty"`
	}
	if e, ok := t.files.entry(t.rel); !ok || e.Type == snapshot.TypeDir {
		es := t.files.children(t.rel)
		if len(es) > maxListEntries {
			s.writeError(w, mlflowInvalid(fmt.Sprintf("%s holds more than %d entries: list its subdirectories, or download the version with `hangar model download %s:%s`",
				p, maxListEntries, t.name, t.version)))
			return
		}
		for _, e := range es {
			out.Files = append(out.Files, fileInfo(e.Name, e))
		}
	}
	writeJSON(w, http.StatusOK, out)
}
