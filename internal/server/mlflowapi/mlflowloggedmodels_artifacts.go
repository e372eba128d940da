package mlflowapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// A logged model's files: `<experiment id>/models/<model id>/artifacts[/<path>]` through the
// artifact proxy (what MLflow 3's log_model uploads to, and models:/m-... downloads from), and
// the listing and download routes of MLflow's UI under logged-models/<id>/artifacts/.

// parseModelArtifactPath reads a path already checked by checkArtifactPath as a logged model's:
// ok is false when it is not one (a run's path has artifacts as its third segment).
func parseModelArtifactPath(p string) (artifactPath, bool) {
	parts := strings.SplitN(p, "/", 5)
	if len(parts) < 4 || parts[1] != "models" || parts[3] != "artifacts" || parts[2] == "artifacts" {
		return artifactPath{}, false
	}
	a := artifactPath{experiment: parts[0], model: parts[2]}
	if len(parts) == 5 {
		a.rel = parts[4]
	}
	return a, true
}

// modelTarget is target for a logged model's path: the model must be live and the caller's to
// reach (a run token reaches its own run's models only).
func (s *API) modelTarget(r *http.Request, a artifactPath) (*artifactTarget, error) {
	m, err := s.loggedModel(r, a.model)
	if err != nil {
		return nil, err
	}
	return &artifactTarget{artifactPath: a, model: m}, nil
}

// owner names whose files the target are, for messages.
func (t *artifactTarget) owner() string {
	if t.model != nil {
		return "logged model " + t.model.Info.ModelID
	}
	return "run " + t.run.ID
}

// uploadOwner is what a multipart upload to the target records: the run whose token may send
// its parts (a logged model's source run), and the logged model ("" for a run's file).
func (t *artifactTarget) uploadOwner() (run, model string) {
	if t.model != nil {
		return t.model.Info.SourceRunID, t.model.Info.ModelID
	}
	return t.run.ID, ""
}

// root is the target's artifact root as a proxy path.
func (t *artifactTarget) root() string {
	if t.model != nil {
		return t.experiment + "/models/" + t.model.Info.ModelID + "/artifacts"
	}
	return t.experiment + "/" + t.run.ID + "/artifacts"
}

func putArtifact(ctx context.Context, s *API, t *artifactTarget, hash string, size int64) error {
	a := store.MLflowArtifact{Path: t.rel, Hash: hash, Size: size, CreatedAt: time.Now().UTC()}
	if t.model != nil {
		return s.cfg.LoggedModels.PutLoggedModelArtifact(ctx, t.model.Info.ModelID, a)
	}
	a.RunID = t.run.ID
	return s.cfg.Artifacts.PutMLflowArtifact(ctx, a)
}

func uploadedArtifact(ctx context.Context, s *API, t *artifactTarget) (*store.MLflowArtifact, error) {
	if t.model != nil {
		return s.cfg.LoggedModels.LoggedModelArtifact(ctx, t.model.Info.ModelID, t.rel)
	}
	return s.cfg.Artifacts.MLflowArtifact(ctx, t.run.ID, t.rel)
}

func uploadedChildren(ctx context.Context, s *API, t *artifactTarget, after string, limit int) ([]store.ArtifactEntry, error) {
	if t.model != nil {
		return s.cfg.LoggedModels.LoggedModelArtifactChildren(ctx, t.model.Info.ModelID, t.rel, after, limit)
	}
	return s.cfg.Artifacts.MLflowArtifactChildren(ctx, t.run.ID, t.rel, after, limit)
}

func deleteArtifacts(ctx context.Context, s *API, t *artifactTarget) (int64, error) {
	if t.model != nil {
		return s.cfg.LoggedModels.DeleteLoggedModelArtifacts(ctx, t.model.Info.ModelID, t.rel)
	}
	return s.cfg.Artifacts.DeleteMLflowArtifacts(ctx, t.run.ID, t.rel)
}

// of says whether the upload is of the target's file.
func (u *mpuUpload) of(t *artifactTarget) bool {
	run, model := t.uploadOwner()
	return u.Run == run && u.Model == model && u.Path == t.rel
}

// loggedModelArtifactTarget is the target of a logged-models/<id>/artifacts/... route: the
// model's root, or rel below it (checked as any artifact path).
func (s *loggedModels) loggedModelArtifactTarget(r *http.Request, rel string) (*artifactTarget, error) {
	m, err := s.api.loggedModel(r, r.PathValue("model_id"))
	if err != nil {
		return nil, err
	}
	p := m.Info.ExperimentID + "/models/" + m.Info.ModelID + "/artifacts"
	if rel != "" {
		p += "/" + rel
	}
	a, err := parseArtifactPath(p)
	if err == nil && a.model != m.Info.ModelID {
		err = mlflowInvalid(fmt.Sprintf("artifact path %q: not below the model's artifacts", rel))
	}
	if err != nil {
		return nil, err
	}
	return &artifactTarget{artifactPath: a, model: m}, nil
}

// listLoggedModelArtifacts answers GET logged-models/<id>/artifacts/directories
// ?artifact_directory_path=&page_token=: root_uri, files (paths relative to the model's root),
// next_page_token, as MLflow REST's ListArtifacts.
func (s *loggedModels) listLoggedModelArtifacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	t, err := s.loggedModelArtifactTarget(r, q.Get("artifact_directory_path"))
	var after string
	if err == nil {
		after, err = decodeArtifactPageToken(q.Get("page_token"))
	}
	var es []store.ArtifactEntry
	var more bool
	if err == nil {
		es, more, err = s.api.children(r.Context(), t, after, ListPageSize)
	}
	if err != nil {
		s.api.writeError(w, s.api.mlflowErr(err))
		return
	}
	out := ArtifactsList{RootURI: t.model.Info.ArtifactURI}
	for _, e := range es {
		out.Files = append(out.Files, fileInfo(path.Join(t.rel, e.Name), e))
	}
	if more {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(es[len(es)-1].Key()))
	}
	writeJSON(w, http.StatusOK, out)
}

// getLoggedModelArtifact answers GET logged-models/<id>/artifacts/files?artifact_file_path=:
// the file, served as the proxy serves it.
func (s *loggedModels) getLoggedModelArtifact(w http.ResponseWriter, r *http.Request) {
	rel := r.URL.Query().Get("artifact_file_path")
	if rel == "" {
		s.api.writeError(w, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest,
			Message: `Request must include the "artifact_file_path" query parameter.`})
		return
	}
	t, err := s.loggedModelArtifactTarget(r, rel)
	if err != nil {
		s.api.writeError(w, s.api.mlflowErr(err))
		return
	}
	s.api.serveTarget(w, r, t)
}

// loggedModel returns a live model the caller may reach: every user, and a run's token for
// the models of its own run.
func (s *API) loggedModel(r *http.Request, id string) (*tracking.LoggedModel, error) {
	if err := required("model_id", id); err != nil {
		return nil, err
	}
	m, err := s.cfg.LoggedModels.LoggedModel(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: fmt.Sprintf("Logged model with ID '%s' not found.", id)}
	}
	if err != nil {
		return nil, err
	}
	if err := s.allowModel(r, m); err != nil {
		return nil, err
	}
	return m, nil
}

// allowModel is allowRun for a logged model: its source run's token may reach it.
func (s *API) allowModel(r *http.Request, m *tracking.LoggedModel) error {
	if s.cfg.Caller(r).Admin {
		return nil
	}
	if m.Info.SourceRunID == "" || s.allowRun(r, m.Info.SourceRunID) != nil {
		return &Error{Status: http.StatusForbidden, Code: CodePermissionDenied,
			Message: fmt.Sprintf("logged model %s is not of this token's run; a run token reaches its own run's logged models only", m.Info.ModelID)}
	}
	return nil
}
