package server

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Search over runs as MLflow's SQL store answers: filters on latest metrics, params, tags and
// attributes; order by any of them (missing values last), ties by start_time DESC then run id;
// pages.
func TestMLflowSearchRuns(t *testing.T) {
	ts := newTestServer(t)
	post := http.MethodPost
	exp := at(ts.ok(t, post, "experiments/create", map[string]any{"name": "s"}), "experiment_id").(string)
	type spec struct {
		name  string
		start int64
		acc   any // nil: not logged
		lr    string
		team  string
	}
	specs := []spec{
		{"a", 1000, 0.9, "0.1", "vision"},
		{"b", 2000, 0.5, "0.01", "Vision"},
		{"c", 3000, 0.7, "0.01", "nlp"},
		{"d", 4000, nil, "0.001", "vision"},
		{"e", 3000, 0.7, "0.1", "vision"},
	}
	ids := map[string]string{}
	for _, s := range specs {
		id := at(ts.ok(t, post, "runs/create", map[string]any{"experiment_id": exp, "run_name": s.name, "start_time": s.start}), "run.info.run_id").(string)
		ids[s.name] = id
		b := map[string]any{"run_id": id, "params": []map[string]string{{"key": "lr", "value": s.lr}},
			"tags": []map[string]string{{"key": "team", "value": s.team}}}
		if s.acc != nil {
			// An older point at a lower step does not replace the latest (MLflow's rule).
			b["metrics"] = []map[string]any{{"key": "acc", "value": s.acc, "timestamp": 10, "step": 5}, {"key": "acc", "value": 0.99, "timestamp": 20, "step": 1}}
		}
		ts.ok(t, post, "runs/log-batch", b)
	}
	ts.ok(t, post, "runs/update", map[string]any{"run_id": ids["a"], "status": "FINISHED"})
	names := func(filter string, order []string) []string {
		t.Helper()
		out := ts.ok(t, post, "runs/search", map[string]any{"experiment_ids": []string{exp}, "filter": filter, "order_by": order})
		var n []string
		for _, r := range asList(out["runs"]) {
			n = append(n, at(r, "info.run_name").(string))
		}
		return n
	}
	// c and e tie on start_time and acc: the run id decides, as in MLflow.
	first, second := "c", "e"
	if ids["e"] < ids["c"] {
		first, second = "e", "c"
	}
	tie := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = map[string]string{"1": first, "2": second}[n]
			if out[i] == "" {
				out[i] = n
			}
		}
		return out
	}
	tests := []struct {
		filter string
		order  []string
		want   []string
	}{
		{"", nil, tie("d", "1", "2", "b", "a")}, // start_time DESC, then run id for c and e
		{"metrics.acc > 0.6", []string{"metrics.acc DESC"}, tie("a", "1", "2")},
		{"metrics.acc >= 0.5", []string{"metrics.acc ASC"}, tie("b", "1", "2", "a")},
		{"", []string{"metrics.acc ASC"}, tie("b", "1", "2", "a", "d")}, // missing last
		{"", []string{"metrics.acc DESC"}, tie("a", "1", "2", "b", "d")},
		{"params.lr = '0.01'", []string{"attributes.start_time ASC"}, []string{"b", "c"}},
		{"params.lr != '0.01'", []string{"params.lr ASC", "start_time DESC"}, []string{"d", "e", "a"}},
		{"tags.team LIKE 'vis%'", []string{"attributes.run_name"}, []string{"a", "d", "e"}},
		{"tags.team ILIKE 'vis%'", []string{"attributes.run_name"}, []string{"a", "b", "d", "e"}},
		{"attributes.status = 'FINISHED'", nil, []string{"a"}},
		{"attributes.status != 'FINISHED' AND attributes.start_time > 2500", nil, tie("d", "1", "2")},
		{"attributes.run_name IN ('a', 'b')", nil, []string{"b", "a"}},
		{"attributes.run_id NOT IN ('" + ids["a"] + "', '" + ids["b"] + "')", []string{"tags.`team` DESC", "run_name"}, []string{"d", "e", "c"}},
		{"metrics.`acc` = 0.7 AND params.\"lr\" = '0.1'", nil, []string{"e"}},
		{"metrics.missing > 0", nil, nil},
		// The run's name and description are columns, searched as MLflow's tags.
		{"tags.\"mlflow.runName\" LIKE '%'", []string{"tags.mlflow.runName DESC"}, []string{"e", "d", "c", "b", "a"}},
		{"tags.`mlflow.runName` = 'c'", nil, []string{"c"}},
	}
	for _, tt := range tests {
		if got := names(tt.filter, tt.order); !cmp.Equal(got, tt.want) {
			t.Errorf("filter %q order %v = %v, want %v", tt.filter, tt.order, got, tt.want)
		}
	}
	// Pages of two: the tokens walk the same order without repeats.
	var all []string
	tok := ""
	for range 5 {
		out := ts.ok(t, post, "runs/search", map[string]any{"experiment_ids": []string{exp}, "max_results": 2, "page_token": tok, "order_by": []string{"metrics.acc DESC"}})
		for _, r := range asList(out["runs"]) {
			all = append(all, at(r, "info.run_name").(string))
		}
		next, _ := out["next_page_token"].(string)
		if next == "" {
			break
		}
		tok = next
	}
	if want := tie("a", "1", "2", "b", "d"); !cmp.Equal(all, want) {
		t.Errorf("pages = %v, want %v", all, want)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
