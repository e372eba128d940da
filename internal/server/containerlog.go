package server

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
)

// maxContainerLogFollow bounds one follow of a container's log; the supervisor asks again from
// the last line it got.
const maxContainerLogFollow = 60 * time.Second

// runContainerLog streams, to the run's own supervisor, the output of the run's serving
// container where only its backend can read it (backend.ContainerLogger: the image of a replica
// on Kubernetes, beside its supervisor's sidecar). The supervisor relays it into the run's log.
func (s *runRoutes) runContainerLog(w http.ResponseWriter, r *http.Request) {
	ctx, id, q := r.Context(), r.PathValue("id"), r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, s.log, badRequest("since: "+strconv.Quote(v)+" is not an RFC 3339 time"))
			return
		}
		since = t
	}
	followS, _ := strconv.ParseFloat(q.Get("follow"), 64)
	follow := min(time.Duration(max(followS, 0)*float64(time.Second)), maxContainerLogFollow)
	run, err := s.cfg.Store.Runs.Run(ctx, id)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	t, err := s.cfg.Store.Cluster.Compute(ctx, run.Compute)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	cl, ok := s.cfg.Backends[t.Type].(backend.ContainerLogger)
	if !ok || len(run.Handle) == 0 {
		writeError(w, s.log, &httpError{http.StatusNotFound, api.CodeNotFound,
			"run " + id + " has no container log apart from its own (compute " + t.Name + ", type " + t.Type + ")"})
		return
	}
	rc, err := cl.ContainerLog(ctx, run.Handle, since, follow)
	if err != nil {
		writeError(w, s.log, &httpError{http.StatusBadGateway, api.CodeInternal, err.Error()})
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			if err != io.EOF {
				s.log.Debug("container log", "run", id, "err", err)
			}
			return
		}
	}
}
