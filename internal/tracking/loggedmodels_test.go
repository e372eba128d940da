package tracking

import (
	"strings"
	"testing"
)

// search_logged_models' filter: MLflow's entities (attributes, metrics, params, tags; a bare
// name an attribute, *_time the *_timestamp), numbers for metrics and times, and MLflow's
// messages for what it refuses.
func TestParseLoggedModelFilter(t *testing.T) {
	m := &LoggedModel{
		Info: LoggedModelInfo{ModelID: "m-1", Name: "clf", Status: "LOGGED_MODEL_READY", SourceRunID: "r", CreationTimestampMs: 100,
			Tags: []KV{{Key: "team", Value: "vision"}}},
		Data: LoggedModelData{Params: []KV{{Key: "lr", Value: "0.1"}}, Metrics: []ModelMetric{
			{Key: "acc", Value: 0.5, Step: 1, DatasetName: "train"}, {Key: "acc", Value: 0.9, Step: 2, DatasetName: "test"}}},
	}
	for _, c := range []struct {
		filter   string
		datasets []DatasetRef
		match    bool
		err      string
	}{
		{filter: "", match: true},
		{filter: "name = 'clf' AND attributes.source_run_id = 'r'", match: true},
		{filter: "status = 'READY' AND status != 'LOGGED_MODEL_PENDING'", match: true},
		{filter: "creation_time > 50 AND creation_timestamp <= 100", match: true},
		{filter: "metrics.acc > 0.8", match: true},
		{filter: "metrics.acc > 0.8", datasets: []DatasetRef{{Name: "train"}}, match: false},
		{filter: "params.lr = '0.1' AND tags.team LIKE 'vis%'", match: true},
		{filter: "tags.missing = 'x'", match: false},
		{filter: "name IN ('a', 'clf') AND model_id NOT IN ('m-2')", match: true},
		{filter: "run.name = 'x'", err: "Invalid entity type: 'run'"},
		{filter: "nope = 'x'", err: "Invalid attribute key 'nope'"},
		{filter: "metrics.acc > 'high'", err: "Expected numeric value type for metric"},
		{filter: "name = 'a' OR name = 'b'", err: "Clauses are joined by AND"},
	} {
		f, err := ParseLoggedModelFilter(c.filter)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.filter, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.filter, err)
			continue
		}
		if got := f.MatchLoggedModel(m, c.datasets); got != c.match {
			t.Errorf("%q over %v matches = %v, want %v", c.filter, c.datasets, got, c.match)
		}
	}
}
