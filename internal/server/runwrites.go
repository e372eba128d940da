package server

import (
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/job"
)

// One terminal check for what a run's token writes. A run token keeps authenticating for a
// grace after its run ended (controller.Admit), so that the supervisor's last words arrive: a
// retry of its final report, a heartbeat that learns the end, a retry of its artifact
// registration. Every other write of a run token to an ended run is refused here, before the
// request is routed: native routes, MLflow's tracking and artifact routes (under /api/ and
// /ajax-api/), blobs, and any route added later, which cannot forget it. The refusal is the
// controller's (controller.Ended): 409, "run <id> ended (<state>) at <time>: its record can no
// longer change", in MLflow's error shape on MLflow's paths.

// endedRecord is what a refused write would have changed.
const endedRecord = "its record"

// finalWords are the writes a run's supervisor may still make once its run ended, within the
// grace, each to its own run's path (/api/runs/<id>/<what>). Their handlers take only a repeat of
// what was done (the same end report; the artifacts registered, unchanged). Everything else is
// refused, but late log lines (lateLog).
var finalWords = []string{"status", "heartbeat", "artifacts"}

// lateLog says whether an ended run may still get log lines (new lines after the stored ones;
// the store never rewrites a stored line): when the server ended it (Failed or Canceled while
// its supervisor was away: an orphan on a host that was unreachable, stopped once it is back,
// still tells how its command ended). A run that Completed was ended by its own supervisor,
// which ships its whole log before it reports the end: nothing is late, and a leaked token adds
// nothing to it.
func lateLog(p principal, r *http.Request) bool {
	return p.run.Status != job.Completed && r.Method == http.MethodPost && r.URL.Path == "/api/runs/"+p.runID+"/logs"
}

// endedRunWrite refuses a write of run token p once its run has ended (nil for anything else: a
// read, a user's token, a live run's token, a supervisor's last words).
func endedRunWrite(p principal, r *http.Request) error {
	if p.run == nil || !p.run.Status.Terminal() || isRead(r) || isFinalWord(r, p.runID) || lateLog(p, r) {
		return nil
	}
	return controller.Ended(p.run, endedRecord)
}

// isRead reports whether r only reads: a GET or HEAD, or the POST that asks which blobs are
// missing (a query with a body).
func isRead(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return r.Method == http.MethodPost && r.URL.Path == "/api/blobs/missing"
}

func isFinalWord(r *http.Request, runID string) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/runs/"+runID+"/")
	if !ok || r.Method != http.MethodPost {
		return false
	}
	for _, w := range finalWords {
		if rest == w {
			return true
		}
	}
	return false
}

// isMLflowPath reports whether a path is MLflow's (tracking or artifacts, the API's or the UI's),
// whose errors take MLflow's shape.
func isMLflowPath(path string) bool {
	return strings.HasPrefix(path, "/api/2.0/mlflow") || strings.HasPrefix(path, "/ajax-api/2.0/mlflow") ||
		strings.HasPrefix(path, "/api/2.0/preview/mlflow") || strings.HasPrefix(path, "/api/3.0/mlflow/")
}

// writeRunError answers a refused run token's request: in MLflow's shape on MLflow's paths (a
// conflict is RESOURCE_CONFLICT, which MLflow answers with 409), else in Hangar's.
func (s *Server) writeRunError(w http.ResponseWriter, r *http.Request, err error) {
	if isMLflowPath(r.URL.Path) {
		s.mlflow.WriteError(w, err)
		return
	}
	writeError(w, s.log, err)
}
