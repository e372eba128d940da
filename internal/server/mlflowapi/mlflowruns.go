package mlflowapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow's runs: create (a run that is not a job), get, update, delete/restore (soft),
// search. A run token reaches its own run only, and may neither create nor search runs.

// runRef names a run; MLflow clients send run_id, older ones run_uuid.
type runRef struct {
	RunID   string `json:"run_id"`
	RunUUID string `json:"run_uuid"`
}

// id is the run named, after the caller's right to it is checked.
func (ref runRef) id(s *API, r *http.Request) (string, error) {
	id := ref.RunID
	if id == "" {
		id = ref.RunUUID
	}
	if err := required("run_id", id); err != nil {
		return "", err
	}
	return id, s.allowRun(r, id)
}

type runAnswer struct {
	Run *tracking.Run `json:"run"`
}

func (s *API) mlflowCreateRun(w http.ResponseWriter, r *http.Request) {
	type in struct {
		ExperimentID string        `json:"experiment_id"`
		UserID       string        `json:"user_id"`
		RunName      string        `json:"run_name"`
		StartTime    jsonInt       `json:"start_time"`
		Tags         []tracking.KV `json:"tags"`
	}
	workspaceHandler(s, func(r *http.Request, in *in) (any, error) {
		if in.ExperimentID == "" {
			in.ExperimentID = "0"
		}
		if err := tracking.CheckBatch(0, 0, len(in.Tags)); err != nil {
			return nil, err
		}
		for _, t := range in.Tags {
			if err := tracking.CheckTag(t.Key, t.Value); err != nil {
				return nil, err
			}
			if t.Key == tracking.TagRunName && in.RunName == "" {
				in.RunName = t.Value
			} else if t.Key == tracking.TagRunName && t.Value != in.RunName {
				return nil, mlflowInvalid(fmt.Sprintf("Both 'mlflow.runName' tag and 'run_name' are set, but they are different: 'mlflow.runName=%s', 'run_name=%s'", t.Value, in.RunName))
			}
		}
		run := newTrackingRun(in.RunName, int64(in.StartTime))
		if err := s.cfg.RunWriter.CreateTrackingRun(r.Context(), run, in.ExperimentID, in.UserID, in.Tags); err != nil {
			return nil, err
		}
		got, err := s.cfg.Tracking.TrackingRun(r.Context(), run.ID)
		return runAnswer{Run: got}, err
	})(w, r)
}

// newTrackingRun is a run that is not a job, RUNNING from startMillis (now when 0). Its id is
// 32 hex digits, as MLflow's run ids are; its name defaults to its id.
func newTrackingRun(name string, startMillis int64) *job.Run {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	start := time.Now().UTC()
	if startMillis > 0 {
		start = time.UnixMilli(startMillis).UTC()
	}
	if name == "" {
		name = id
	}
	return &job.Run{ID: id, DisplayName: name, Status: job.Running, CreatedAt: start, StartedAt: &start, Attempt: 1}
}

func (s *API) mlflowGetRun(w http.ResponseWriter, r *http.Request) {
	runHandler(s, func(r *http.Request, id string, in *runRef) (any, error) {
		run, err := s.cfg.Tracking.TrackingRun(r.Context(), id)
		return runAnswer{Run: run}, err
	})(w, r)
}

func (s *API) mlflowUpdateRun(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		Status  *string  `json:"status"`
		EndTime *jsonInt `json:"end_time"`
		RunName *string  `json:"run_name"`
	}
	type out struct {
		RunInfo tracking.RunInfo `json:"run_info"`
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		var u tracking.Update
		if in.Status != nil {
			st, err := tracking.StateOf(*in.Status)
			if err != nil {
				return nil, err
			}
			u.Status = &st
		}
		if in.EndTime != nil {
			t := int64(*in.EndTime)
			u.EndTime = &t
		}
		u.RunName = in.RunName
		if err := s.cfg.RunWriter.UpdateTrackingRun(r.Context(), id, u); err != nil {
			return nil, err
		}
		run, err := s.cfg.Tracking.TrackingRun(r.Context(), id)
		if err != nil {
			return nil, err
		}
		return out{RunInfo: run.Info}, nil
	})(w, r)
}

func (s *API) mlflowRunStage(stage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		runHandler(s, func(r *http.Request, id string, in *runRef) (any, error) {
			return empty{}, s.cfg.RunWriter.SetRunStage(r.Context(), id, stage)
		})(w, r)
	}
}

func (s *API) mlflowSearchRuns(w http.ResponseWriter, r *http.Request) {
	type in struct {
		ExperimentIDs []string `json:"experiment_ids"`
		Filter        string   `json:"filter"`
		RunViewType   viewType `json:"run_view_type"`
		MaxResults    jsonInt  `json:"max_results"`
		OrderBy       []string `json:"order_by"`
		PageToken     string   `json:"page_token"`
	}
	type out struct {
		Runs          []*tracking.Run `json:"runs,omitempty"`
		NextPageToken string          `json:"next_page_token,omitempty"`
	}
	workspaceHandler(s, func(r *http.Request, in *in) (any, error) {
		q, err := runQuery(in.ExperimentIDs, in.Filter, string(in.RunViewType), int(in.MaxResults), in.OrderBy, in.PageToken)
		if err != nil {
			return nil, err
		}
		runs, more, err := s.cfg.Tracking.SearchRuns(r.Context(), q)
		return out{Runs: runs, NextPageToken: nextPage(more, q.Offset, q.Limit)}, err
	})(w, r)
}

func runQuery(expIDs []string, filter, view string, maxResults int, orderBy []string, token string) (store.RunQuery, error) {
	var q store.RunQuery
	if len(expIDs) > tracking.MaxSearchIDs {
		return q, mlflowInvalid("experiment_ids may list at most 1000 experiments")
	}
	for _, id := range expIDs {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return q, mlflowInvalid("Invalid value \"" + id + "\" for parameter 'experiment_ids': experiment ids are integers")
		}
		q.ExperimentIDs = append(q.ExperimentIDs, n)
	}
	var err error
	if q.Limit, q.Offset, q.Stages, err = searchPage(maxResults, tracking.MaxSearchResults, token, view); err != nil {
		return q, err
	}
	f, err := tracking.ParseFilter(filter)
	if err != nil {
		return q, err
	}
	o, err := tracking.ParseOrderBy(orderBy)
	if err != nil {
		return q, err
	}
	q.Order = tracking.OrderSQL(o, f)
	q.Where, q.WhereArgs = f.WhereSQLFor(q.Order)
	return q, nil
}

// searchPage reads what every MLflow search takes besides its filter and order: max_results
// (at most max), page_token, and the view type's lifecycle stages.
func searchPage(maxResults, max int, token, view string) (limit, offset int, stages []string, err error) {
	if limit, err = tracking.CheckMaxResults(maxResults, max); err != nil {
		return 0, 0, nil, err
	}
	if offset, err = tracking.ParseToken(token); err != nil {
		return 0, 0, nil, err
	}
	stages, err = tracking.RunViewType(view)
	return limit, offset, stages, err
}

// nextPage is a search's next_page_token: where the page after this one starts, when more follow.
func nextPage(more bool, offset, limit int) string {
	if !more {
		return ""
	}
	return tracking.PageToken(offset + limit)
}
