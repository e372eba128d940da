package mlflowapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// What MLflow clients log to a run: metrics, params, tags, batches of them, dataset inputs,
// logged models; and the metric history they read back.

type metricIn struct {
	Key       string    `json:"key"`
	Value     jsonFloat `json:"value"`
	Timestamp jsonInt   `json:"timestamp"`
	Step      jsonInt   `json:"step"`
	// A point linked to a logged model (mlflowloggedmodels_metrics.go).
	ModelID       string `json:"model_id"`
	DatasetName   string `json:"dataset_name"`
	DatasetDigest string `json:"dataset_digest"`
}

// point validates a metric as MLflow does. NaN and infinities are refused: JSON cannot carry
// them back (docs/mlflow.md).
func (m metricIn) point() (tracking.MetricPoint, error) {
	v := float64(m.Value)
	if err := tracking.CheckMetric(m.Key, v, int64(m.Timestamp)); err != nil {
		return tracking.MetricPoint{}, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return tracking.MetricPoint{}, mlflowInvalid(fmt.Sprintf("Got invalid value %v for metric '%s': Hangar stores finite values only", v, m.Key))
	}
	ts := int64(m.Timestamp)
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	return tracking.MetricPoint{Key: m.Key, Value: v, Timestamp: ts, Step: int64(m.Step)}, nil
}

func (s *API) mlflowLogMetric(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		metricIn
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		p, err := in.point()
		if err != nil {
			return nil, err
		}
		return empty{}, s.logLinkedMetrics(r, id, store.Batch{Metrics: []tracking.MetricPoint{p}}, []metricIn{in.metricIn})
	})(w, r)
}

type kvIn struct {
	runRef
	Key   string `json:"key"`
	Value string `json:"value"`
}

// logMetrics stores a batch that may carry metric points, counting the points for /metrics.
func (s *API) logMetrics(ctx context.Context, id string, b store.Batch) error {
	if err := s.cfg.RunWriter.LogBatch(ctx, id, b); err != nil {
		return err
	}
	s.cfg.MetricPoints.Add(float64(len(b.Metrics)))
	return nil
}

func (s *API) mlflowLogParam(w http.ResponseWriter, r *http.Request) {
	s.logKV(tracking.CheckParam, func(kv tracking.KV) store.Batch { return store.Batch{Params: []tracking.KV{kv}} })(w, r)
}

func (s *API) mlflowSetTag(w http.ResponseWriter, r *http.Request) {
	s.logKV(tracking.CheckTag, func(kv tracking.KV) store.Batch { return store.Batch{Tags: []tracking.KV{kv}} })(w, r)
}

// logKV is a handler that stores one param or tag: check validates it as MLflow does, and batch
// puts it in its place in a batch.
func (s *API) logKV(check func(key, value string) error, batch func(tracking.KV) store.Batch) http.HandlerFunc {
	return runHandler(s, func(r *http.Request, id string, in *kvIn) (any, error) {
		if err := check(in.Key, in.Value); err != nil {
			return nil, err
		}
		return empty{}, s.cfg.RunWriter.LogBatch(r.Context(), id, batch(tracking.KV{Key: in.Key, Value: in.Value}))
	})
}

func (s *API) mlflowDeleteTag(w http.ResponseWriter, r *http.Request) {
	runHandler(s, func(r *http.Request, id string, in *kvIn) (any, error) {
		if err := required("key", in.Key); err != nil {
			return nil, err
		}
		return empty{}, s.cfg.RunWriter.DeleteRunTag(r.Context(), id, in.Key)
	})(w, r)
}

func (s *API) mlflowLogBatch(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		Metrics []metricIn    `json:"metrics"`
		Params  []tracking.KV `json:"params"`
		Tags    []tracking.KV `json:"tags"`
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		b, err := batchOf(in.Metrics, in.Params, in.Tags)
		if err != nil {
			return nil, err
		}
		return empty{}, s.logLinkedMetrics(r, id, b, in.Metrics)
	})(w, r)
}

// batchOf validates a log-batch: MLflow's limits, then each entry. The same param twice in
// one batch with two values is refused, as MLflow refuses it.
func batchOf(metrics []metricIn, params, tags []tracking.KV) (store.Batch, error) {
	var b store.Batch
	if err := tracking.CheckBatch(len(metrics), len(params), len(tags)); err != nil {
		return b, err
	}
	for _, m := range metrics {
		p, err := m.point()
		if err != nil {
			return b, err
		}
		b.Metrics = append(b.Metrics, p)
	}
	seen := map[string]string{}
	for _, p := range params {
		if err := tracking.CheckParam(p.Key, p.Value); err != nil {
			return b, err
		}
		if v, ok := seen[p.Key]; ok && v != p.Value {
			return b, mlflowInvalid(fmt.Sprintf("Duplicate parameter keys have been submitted: ['%s']. Please ensure the request contains only one param value per param key.", p.Key))
		} else if ok {
			continue
		}
		seen[p.Key] = p.Value
		b.Params = append(b.Params, p)
	}
	for _, t := range tags {
		if err := tracking.CheckTag(t.Key, t.Value); err != nil {
			return b, err
		}
	}
	b.Tags = tags
	return b, nil
}

func (s *API) mlflowLogInputs(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		Datasets []tracking.DatasetInput `json:"datasets"`
		// Models are logged models the run used (they must exist).
		Models []tracking.ModelIO `json:"models"`
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		if len(in.Datasets) > tracking.MaxDatasetsPerInputs {
			return nil, mlflowInvalid(fmt.Sprintf("A request may log at most %d datasets, got %d", tracking.MaxDatasetsPerInputs, len(in.Datasets)))
		}
		for i, d := range in.Datasets {
			if err := tracking.CheckDataset(d); err != nil {
				return nil, mlflowInvalid(fmt.Sprintf("datasets[%d]: %v", i, err))
			}
		}
		if err := s.cfg.Tracking.LogInputs(r.Context(), id, in.Datasets); err != nil {
			return nil, err
		}
		return empty{}, s.logModelInputs(r.Context(), id, in.Models)
	})(w, r)
}

// mlflowLogModel records a logged model as MLflow's SQL store does: appended to the run's
// mlflow.log-model.history tag, a JSON list.
func (s *API) mlflowLogModel(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		ModelJSON string `json:"model_json"`
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		var model map[string]any
		if err := json.Unmarshal([]byte(in.ModelJSON), &model); err != nil {
			return nil, mlflowInvalid("Malformed model info. model_json is not a JSON object: " + err.Error())
		}
		run, err := s.cfg.Tracking.TrackingRun(r.Context(), id)
		if err != nil {
			return nil, err
		}
		var history []any
		for _, t := range run.Data.Tags {
			if t.Key == tracking.TagLoggedModel {
				_ = json.Unmarshal([]byte(t.Value), &history) // a damaged history starts anew
			}
		}
		b, err := json.Marshal(append(history, model))
		if err != nil {
			return nil, err
		}
		if err := tracking.CheckTag(tracking.TagLoggedModel, string(b)); err != nil {
			return nil, err
		}
		return empty{}, s.cfg.RunWriter.LogBatch(r.Context(), id, store.Batch{Tags: []tracking.KV{{Key: tracking.TagLoggedModel, Value: string(b)}}})
	})(w, r)
}

func (s *API) mlflowMetricHistory(w http.ResponseWriter, r *http.Request) {
	type in struct {
		runRef
		MetricKey  string  `json:"metric_key"`
		PageToken  string  `json:"page_token"`
		MaxResults jsonInt `json:"max_results"`
	}
	type out struct {
		Metrics       []tracking.MetricPoint `json:"metrics"`
		NextPageToken string                 `json:"next_page_token,omitempty"`
	}
	runHandler(s, func(r *http.Request, id string, in *in) (any, error) {
		if err := required("metric_key", in.MetricKey); err != nil {
			return nil, err
		}
		limit := tracking.MaxHistoryPage
		if in.MaxResults != 0 {
			var err error
			if limit, err = tracking.CheckMaxResults(int(in.MaxResults), tracking.MaxHistoryPage); err != nil {
				return nil, err
			}
		}
		offset, err := tracking.ParseToken(in.PageToken)
		if err != nil {
			return nil, err
		}
		ms, more, err := s.cfg.Tracking.MetricHistory(r.Context(), id, in.MetricKey, offset, limit)
		o := out{Metrics: ms}
		if o.Metrics == nil {
			o.Metrics = []tracking.MetricPoint{}
		}
		if more {
			o.NextPageToken = tracking.PageToken(offset + limit)
		}
		return o, err
	})(w, r)
}
