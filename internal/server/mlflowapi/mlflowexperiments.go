package mlflowapi

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// MLflow's experiments: create, get, get-by-name, search (and 1.x list), update (rename),
// delete/restore (soft), set-experiment-tag. A run token may read an experiment (a job's
// script calls set_experiment), never change or list them.

type experimentRef struct {
	ExperimentID string `json:"experiment_id"`
}

func (s *API) mlflowCreateExperiment(w http.ResponseWriter, r *http.Request) {
	type in struct {
		Name             string        `json:"name"`
		ArtifactLocation string        `json:"artifact_location"`
		Tags             []tracking.KV `json:"tags"`
	}
	// A run token may create an experiment: mlflow.set_experiment("x") in a job's script looks
	// it up and creates it when missing, and scripts do that routinely. Changing or deleting
	// one needs the workspace token.
	mlflowHandler(s, func(r *http.Request, in *in) (any, error) {
		if err := required("name", in.Name); err != nil {
			return nil, err
		}
		if err := tracking.CheckExperimentName(in.Name); err != nil {
			return nil, err
		}
		if len(in.Tags) > tracking.MaxParamsTagsPerBatch {
			return nil, mlflowInvalid("an experiment is created with at most 100 tags")
		}
		for _, t := range in.Tags {
			if err := tracking.CheckExperimentTag(t.Key, t.Value); err != nil {
				return nil, err
			}
		}
		id, err := s.cfg.Tracking.CreateExperiment(r.Context(), in.Name, in.ArtifactLocation, in.Tags)
		return experimentRef{ExperimentID: id}, err
	})(w, r)
}

type experimentAnswer struct {
	Experiment *tracking.Experiment `json:"experiment"`
}

func (s *API) mlflowGetExperiment(w http.ResponseWriter, r *http.Request) {
	mlflowHandler(s, func(r *http.Request, in *experimentRef) (any, error) {
		return experimentBy(r, "experiment_id", in.ExperimentID, s.cfg.Tracking.Experiment)
	})(w, r)
}

func (s *API) mlflowGetExperimentByName(w http.ResponseWriter, r *http.Request) {
	type in struct {
		Name string `json:"experiment_name"`
	}
	mlflowHandler(s, func(r *http.Request, in *in) (any, error) {
		return experimentBy(r, "experiment_name", in.Name, s.cfg.Tracking.ExperimentByName)
	})(w, r)
}

// experimentBy answers the experiment get finds by key, which the request's field gives.
func experimentBy(r *http.Request, field, key string, get func(ctx context.Context, key string) (*tracking.Experiment, error)) (any, error) {
	if err := required(field, key); err != nil {
		return nil, err
	}
	e, err := get(r.Context(), key)
	return experimentAnswer{Experiment: e}, err
}

func (s *API) mlflowSearchExperiments(w http.ResponseWriter, r *http.Request) {
	type in struct {
		MaxResults jsonInt  `json:"max_results"`
		PageToken  string   `json:"page_token"`
		Filter     string   `json:"filter"`
		OrderBy    []string `json:"order_by"`
		ViewType   viewType `json:"view_type"`
	}
	type out struct {
		Experiments   []*tracking.Experiment `json:"experiments"`
		NextPageToken string                 `json:"next_page_token,omitempty"`
	}
	workspaceHandler(s, func(r *http.Request, in *in) (any, error) {
		q, err := experimentQuery(in.MaxResults, in.PageToken, in.Filter, in.OrderBy, string(in.ViewType))
		if err != nil {
			return nil, err
		}
		es, more, err := s.cfg.Tracking.SearchExperiments(r.Context(), q)
		o := out{Experiments: es, NextPageToken: nextPage(more, q.Offset, q.Limit)}
		if o.Experiments == nil {
			o.Experiments = []*tracking.Experiment{}
		}
		return o, err
	})(w, r)
}

func experimentQuery(maxResults jsonInt, token, filter string, orderBy []string, view string) (store.ExperimentQuery, error) {
	var q store.ExperimentQuery
	var err error
	if q.Limit, q.Offset, q.Stages, err = searchPage(int(maxResults), tracking.MaxSearchExperiments, token, view); err != nil {
		return q, err
	}
	f, err := tracking.ParseExperimentFilter(filter)
	if err != nil {
		return q, err
	}
	q.Where, q.Args = f.ExperimentSQL()
	o, err := tracking.ParseExperimentOrder(orderBy)
	q.Order = o
	return q, err
}

func (s *API) mlflowUpdateExperiment(w http.ResponseWriter, r *http.Request) {
	type in struct {
		ExperimentID string `json:"experiment_id"`
		NewName      string `json:"new_name"`
	}
	workspaceHandler(s, func(r *http.Request, in *in) (any, error) {
		if err := required("experiment_id", in.ExperimentID); err != nil {
			return nil, err
		}
		if in.NewName == "" {
			return empty{}, nil // MLflow changes nothing without a new name
		}
		if err := tracking.CheckExperimentName(in.NewName); err != nil {
			return nil, err
		}
		return empty{}, s.cfg.Tracking.RenameExperiment(r.Context(), in.ExperimentID, in.NewName)
	})(w, r)
}

func (s *API) mlflowExperimentStage(stage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		workspaceHandler(s, func(r *http.Request, in *experimentRef) (any, error) {
			if err := required("experiment_id", in.ExperimentID); err != nil {
				return nil, err
			}
			if in.ExperimentID == "0" && stage == "deleted" {
				return nil, mlflowInvalid("Cannot delete the default experiment '0'. This is an internally reserved experiment.")
			}
			return empty{}, s.cfg.Tracking.SetExperimentStage(r.Context(), in.ExperimentID, stage)
		})(w, r)
	}
}

func (s *API) mlflowSetExperimentTag(w http.ResponseWriter, r *http.Request) {
	type in struct {
		ExperimentID string `json:"experiment_id"`
		Key          string `json:"key"`
		Value        string `json:"value"`
	}
	workspaceHandler(s, func(r *http.Request, in *in) (any, error) {
		if err := required("experiment_id", in.ExperimentID); err != nil {
			return nil, err
		}
		if err := tracking.CheckExperimentTag(in.Key, in.Value); err != nil {
			return nil, err
		}
		return empty{}, s.cfg.Tracking.SetExperimentTag(r.Context(), in.ExperimentID, tracking.KV{Key: in.Key, Value: in.Value})
	})(w, r)
}
