package mlflowapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"path"

	"github.com/hangar-ml/hangar/internal/job"
)

// ListPageSize is how many entries one page of MLflow REST's ListArtifacts holds.
const ListPageSize = 1000

// ArtifactsList is MLflow REST's ListArtifacts response: paths relative to the run's
// artifact root.
type ArtifactsList struct {
	RootURI       string     `json:"root_uri"`
	Files         []FileInfo `json:"files,omitempty"`
	NextPageToken string     `json:"next_page_token,omitempty"`
}

// listRunArtifacts answers GET /api/2.0/mlflow/artifacts/list?run_id=&path=&page_token=, the
// listing older clients (and `mlflow artifacts list --run-id`) use, over the same files as the
// proxy.
func (s *API) listRunArtifacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	runID := q.Get("run_id")
	if runID == "" {
		runID = q.Get("run_uuid") // MLflow's deprecated name, still sent by old clients
	}
	if runID == "" {
		s.writeError(w, mlflowInvalid("missing value for required parameter 'run_id'"))
		return
	}
	after, err := decodeArtifactPageToken(q.Get("page_token"))
	if err != nil {
		s.writeError(w, err)
		return
	}
	// The run id is checked as an artifact path's segment is: it names a run, nothing else.
	p := "0/" + runID + "/artifacts"
	if rel := q.Get("path"); rel != "" {
		p += "/" + rel
	}
	a, err := parseArtifactPath(p)
	if err == nil && a.run != runID {
		err = mlflowInvalid("run_id " + runID + ": not a run id")
	}
	if err == nil {
		err = s.allowRun(r, a.run)
	}
	var t *artifactTarget
	if err == nil {
		t, err = s.runTarget(r.Context(), a)
	}
	if err != nil {
		s.writeError(w, err)
		return
	}
	es, more, err := s.children(r.Context(), t, after, ListPageSize)
	if err != nil {
		s.writeError(w, err)
		return
	}
	out := ArtifactsList{RootURI: mlflowArtifactURI(s.mlflowExperimentOf(r.Context(), t.run), t.run.ID)}
	for _, e := range es {
		out.Files = append(out.Files, fileInfo(path.Join(t.rel, e.Name), e))
	}
	if more {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(es[len(es)-1].Key()))
	}
	writeJSON(w, http.StatusOK, out)
}

func decodeArtifactPageToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) == 0 || len(b) > MaxArtifactPath {
		return "", mlflowInvalid("invalid page_token " + tok)
	}
	return string(b), nil
}

// mlflowExperimentOf is the experiment id of a run, for its root_uri ("0", MLflow's Default
// experiment, if it cannot be read: the proxy stores artifacts by run and does not need it).
func (s *API) mlflowExperimentOf(ctx context.Context, run *job.Run) string {
	tr, err := s.cfg.Tracking.TrackingRun(ctx, run.ID)
	if err != nil || tr.Info.ExperimentID == "" {
		return "0"
	}
	return tr.Info.ExperimentID
}
