package mlflowapi

import (
	"context"
	"net/http"

	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tracking"
)

// Metrics linked to a logged model: runs/log-metric and each metric of runs/log-batch may carry
// model_id (with dataset_name and dataset_digest). Such a point is kept twice, as MLflow keeps
// it: in its run's history, and in the model's metrics. log_model re-logs the run's points of
// its step with the new model's id; a point the run's history holds already (same key, value,
// timestamp and step) is not appended to it again.

// logLinkedMetrics stores a batch of run id, whose metrics were decoded from ms, and links the
// points that name a model to it. The models are checked first (live, the caller's), so a
// refused link writes nothing.
func (s *API) logLinkedMetrics(r *http.Request, id string, b store.Batch, ms []metricIn) error {
	var linked []tracking.ModelMetric
	checked := map[string]bool{}
	for i, m := range ms {
		if m.ModelID == "" {
			continue
		}
		if !checked[m.ModelID] {
			if _, err := s.loggedModel(r, m.ModelID); err != nil {
				return err
			}
			checked[m.ModelID] = true
		}
		p := b.Metrics[i]
		linked = append(linked, tracking.ModelMetric{Key: p.Key, Value: p.Value, Timestamp: p.Timestamp, Step: p.Step,
			ModelID: m.ModelID, RunID: id, DatasetName: m.DatasetName, DatasetDigest: m.DatasetDigest})
	}
	if len(linked) > 0 {
		var err error
		if b.Metrics, err = newPoints(r.Context(), s, id, b.Metrics, ms); err != nil {
			return err
		}
	}
	if len(b.Metrics) > 0 || len(b.Params) > 0 || len(b.Tags) > 0 || len(linked) == 0 {
		if err := s.logMetrics(r.Context(), id, b); err != nil {
			return err
		}
	}
	return s.cfg.LoggedModels.LogLoggedModelMetrics(r.Context(), linked)
}

// newPoints leaves out of points those linked to a model that the run's history holds already.
func newPoints(ctx context.Context, s *API, id string, points []tracking.MetricPoint, ms []metricIn) ([]tracking.MetricPoint, error) {
	history := map[string]map[tracking.MetricPoint]bool{}
	var out []tracking.MetricPoint
	for i, p := range points {
		if ms[i].ModelID == "" {
			out = append(out, p)
			continue
		}
		h, ok := history[p.Key]
		if !ok {
			var err error
			if h, err = historyOf(ctx, s, id, p.Key); err != nil {
				return nil, err
			}
			history[p.Key] = h
		}
		if !h[p] {
			h[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// historyOf is the run's every point of key.
func historyOf(ctx context.Context, s *API, id, key string) (map[tracking.MetricPoint]bool, error) {
	out := map[tracking.MetricPoint]bool{}
	for offset := 0; ; offset += tracking.MaxHistoryPage {
		ps, more, err := s.cfg.Tracking.MetricHistory(ctx, id, key, offset, tracking.MaxHistoryPage)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out[p] = true
		}
		if !more {
			return out, nil
		}
	}
}

// logModelInputs records the logged models a run used (runs/log-inputs models): any live
// model may be named, whoever's it is (the name says nothing of its contents).
func (s *API) logModelInputs(ctx context.Context, id string, models []tracking.ModelIO) error {
	for i := range models {
		if err := required("model_id", models[i].ModelID); err != nil {
			return err
		}
		models[i].Step = nil
	}
	return s.cfg.LoggedModels.LogRunModels(ctx, id, store.ModelInput, models)
}
