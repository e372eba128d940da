package server

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// StdLog is the combined stdout/stderr log of a single-process run.
const StdLog = "std_log.txt"

// routes registers jobs as users see them: every role reads them, those who submit create and
// cancel them; and archive, restore and delete (joblist.go).
func (s *jobRoutes) routes(_, api routes) {
	ok := http.StatusOK
	api.handle("POST /api/jobs", contributeAccess, answerBody(s.Server, http.StatusCreated, s.createJob))
	api.handle("GET /api/jobs", readAccess, s.listJobs)
	api.handle("GET /api/jobs/{name}", readAccess, answer(s.Server, ok, s.getJob))
	api.handle("POST /api/jobs/{name}/cancel", contributeAccess, answer(s.Server, ok, s.cancelJob))
	api.handle("GET /api/jobs/{name}/logs", readAccess, s.jobLogs)
	api.handle("GET /api/jobs/{name}/metrics", readAccess, answer(s.Server, ok, s.jobMetrics))
	api.handle("GET /api/jobs/{name}/trials", readAccess, s.jobTrials)
	api.handle("GET /api/jobs/{name}/steps", readAccess, s.jobSteps)
	api.handle("GET /api/jobs/{name}/artifacts", readAccess, answer(s.Server, ok, s.jobArtifacts))
	s.jobListRoutes(api)
}

func (s *jobRoutes) createJob(r *http.Request, req api.CreateJobRequest) (*api.RunDetail, error) {
	stampSubmitter(who(r), &req.Spec) // users.go
	run, err := s.cfg.Controller.Create(r.Context(), req)
	return s.detailOf(r, run, err)
}

func (s *jobRoutes) getJob(r *http.Request) (*api.RunDetail, error) {
	run, err := s.cfg.Store.Runs.Run(r.Context(), r.PathValue("name"))
	return s.detailOf(r, run, err)
}

func (s *jobRoutes) cancelJob(r *http.Request) (*api.RunDetail, error) {
	run, err := s.cfg.Controller.Cancel(r.Context(), r.PathValue("name"))
	return s.detailOf(r, run, err)
}

// detailOf is a run as `job show` shows it (see detail), or the error that came instead of the run.
func (s *jobRoutes) detailOf(r *http.Request, run *job.Run, err error) (*api.RunDetail, error) {
	if err != nil {
		return nil, err
	}
	return s.detail(r.Context(), run)
}

// detail assembles job show: events, last metrics, phase durations, and for a failed run its log tail.
func (s *jobRoutes) detail(ctx context.Context, run *job.Run) (*api.RunDetail, error) {
	d := &api.RunDetail{Run: *run, HasArtifacts: run.ArtifactsHash != "", Serverless: workspace.ServerlessUse(run)}
	if d.Warnings == nil {
		d.Warnings = []string{}
	}
	var err error
	if d.Events, err = s.cfg.Store.Runs.Events(ctx, run.ID); err != nil {
		return nil, err
	}
	if d.Metrics, err = s.cfg.Store.Runs.LastMetrics(ctx, run.ID); err != nil {
		return nil, err
	}
	l, err := s.cfg.Store.Runs.Listing(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	d.BoundCommand, d.Archived = l.BoundCommand, l.Archived
	if d.Params, d.Tags, err = s.cfg.Store.Tracking.RunParamsTags(ctx, run.ID); err != nil {
		return nil, err
	}
	if d.LoggedModels, err = s.loggedModelsOf(ctx, run.ID, false); err != nil {
		return nil, err
	}
	d.CreationContext, d.Services = s.jobContext(run)
	d.Phases = phases(d.Events, time.Now().UTC())
	for k, v := range run.Timings {
		if !api.IsDataTiming(k) { // counts of object-store data: runDataOf
			d.Phases[k] = v
		}
	}
	d.Data = runDataOf(run) // rundata.go
	for name := range run.NamedOutputs {
		d.Outputs = append(d.Outputs, name)
	}
	sort.Strings(d.Outputs)
	if err := s.sweepDetail(ctx, run, d); err != nil {
		return nil, err
	}
	if err := s.pipelineDetail(ctx, run, d); err != nil {
		return nil, err
	}
	if err := s.runs.checkpointDetail(ctx, run, d); err != nil {
		return nil, err
	}
	if run.Status == job.Failed {
		d.Error = run.StatusReason
		tail, err := s.cfg.Store.Runs.LogTail(ctx, run.ID, StdLog, 20)
		if err != nil {
			return nil, err
		}
		for _, l := range tail {
			d.LogTail = append(d.LogTail, l.Text)
		}
	}
	return d, nil
}

// phases sums the time spent in each phase, from the events.
func phases(events []job.Event, now time.Time) map[string]float64 {
	names := map[job.State]string{
		job.Queued: "queued", job.Provisioning: "provisioning", job.Preparing: "preparing",
		job.Starting: "starting", job.Running: "running", job.Finalizing: "finalizing",
	}
	out := map[string]float64{}
	for i, e := range events {
		name, ok := names[e.To]
		if !ok {
			continue
		}
		end := now
		if i+1 < len(events) {
			end = events[i+1].Time
		}
		out[name] += end.Sub(e.Time).Seconds()
	}
	return out
}

// jobLogs returns log lines after ?after=, waiting up to ?wait= seconds for new ones (long poll).
func (s *jobRoutes) jobLogs(w http.ResponseWriter, r *http.Request) {
	ctx, id := r.Context(), r.PathValue("name")
	q := r.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	waitS, _ := strconv.ParseFloat(q.Get("wait"), 64)
	file := q.Get("file")
	if file == "" {
		file = StdLog
	}
	deadline := time.Now().Add(time.Duration(min(waitS, 60) * float64(time.Second)))
	const limit = 2000
	for {
		changed := s.hub.Wait(id)
		// Status first: if it is terminal now, every line was stored before it.
		run, err := s.cfg.Store.Runs.Run(ctx, id)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		lines, err := s.cfg.Store.Runs.Logs(ctx, id, file, after, limit)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		done := run.Status.Terminal() && len(lines) < limit
		if len(lines) > 0 || done || !time.Now().Before(deadline) {
			next := after
			if len(lines) > 0 {
				next = lines[len(lines)-1].Seq
			}
			if lines == nil {
				lines = []job.LogLine{}
			}
			writeJSON(w, http.StatusOK, api.LogsResponse{Lines: lines, Next: next, Status: run.Status, Done: done})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

func (s *jobRoutes) jobMetrics(r *http.Request) (*api.MetricsResponse, error) {
	if _, err := s.cfg.Store.Runs.Run(r.Context(), r.PathValue("name")); err != nil {
		return nil, err
	}
	ms, err := s.cfg.Store.Runs.Metrics(r.Context(), r.PathValue("name"))
	if ms == nil {
		ms = []job.Metric{}
	}
	return &api.MetricsResponse{Metrics: ms}, err
}

// maxUploadedListed bounds the files logged through MLflow that one artifacts answer lists
// (about 15 MB of JSON).
const maxUploadedListed = 100_000

func (s *jobRoutes) jobArtifacts(r *http.Request) (*api.ArtifactsResponse, error) {
	run, err := s.cfg.Store.Runs.Run(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	up, err := s.cfg.Store.Tracking.MLflowArtifactFiles(r.Context(), run.ID, maxUploadedListed)
	if errors.Is(err, store.ErrTooMany) {
		err = &httpError{http.StatusConflict, api.CodeConflict, err.Error() + "; list them with GET /api/2.0/mlflow/artifacts/list"}
	}
	if err != nil {
		return nil, err
	}
	out := &api.ArtifactsResponse{Artifacts: run.ArtifactsHash, NamedOutputs: run.NamedOutputs}
	out.Uploaded, out.Withheld = s.mlflow.Downloadable(run, up) // mlflowapi
	out.LoggedModels, err = s.loggedModelsOf(r.Context(), run.ID, true)
	return out, err
}
