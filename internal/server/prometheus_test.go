package server

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// /metrics is read the way Prometheus reads it: its own text parser over the scraped page.
func TestPrometheusMetrics(t *testing.T) {
	ts := newTestServer(t)
	a := ts.createJob(t, "scraped")
	ts.createJob(t, "waiting")
	ts.shipLines(t, a.ID, 1, 7)

	ts.report(t, a.ID, job.Running, nil)
	if _, err := ts.runClient(a.ID).Runs.ShipMetrics(t.Context(), a.ID, api.MetricBatch{Metrics: []job.Metric{
		{Seq: 1, Name: "loss", Value: 1, Time: time.Now()}, {Seq: 2, Name: "loss", Value: 0.5, Time: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	if st, body := ts.mlflowCall(t, adminToken, http.MethodPost, "/runs/log-batch", map[string]any{"run_id": a.ID,
		"metrics": []map[string]any{{"key": "acc", "value": 0.9, "timestamp": 1, "step": 1}}}); st != http.StatusOK {
		t.Fatalf("log-batch: %d %v", st, body)
	}
	fams := scrape(t, ts, adminToken, http.StatusOK)
	if got := fams["hangar_metric_points_ingested_total"].GetMetric()[0].GetCounter().GetValue(); got != 3 {
		t.Errorf("metric points ingested = %v, want 3 (2 from the metrics file, 1 through MLflow)", got)
	}
	if got := gauge(t, fams, "hangar_runs", map[string]string{"status": "Queued"}); got != 1 {
		t.Errorf("hangar_runs{status=Queued} = %v, want 1", got)
	}
	if got := gauge(t, fams, "hangar_runs", map[string]string{"status": "Completed"}); got != 0 {
		t.Errorf("hangar_runs{status=Completed} = %v, want 0 (every state is exported, zeros included)", got)
	}
	if got := gauge(t, fams, "hangar_queue_length", nil); got != 1 {
		t.Errorf("hangar_queue_length = %v, want 1", got)
	}
	if got := fams["hangar_log_lines_ingested_total"].GetMetric()[0].GetCounter().GetValue(); got != 7 {
		t.Errorf("log lines ingested = %v, want 7", got)
	}
	var latency *dto.Metric
	for _, m := range fams["hangar_http_request_duration_seconds"].GetMetric() {
		if labels(m)["route"] == "POST /api/runs/{id}/logs" && labels(m)["code"] == "200" {
			latency = m
		}
	}
	if latency == nil || latency.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("no latency histogram with one sample for the log route: %v", latency)
	}
	for _, m := range fams["hangar_http_request_duration_seconds"].GetMetric() {
		if r := labels(m)["route"]; r == "GET /api/jobs/scraped" {
			t.Errorf("a route label holds a concrete path (%q): label values must be bounded by the routes", r)
		}
	}

	scrape(t, ts, "", http.StatusUnauthorized)
	scrape(t, ts, ts.ctrl.RunToken(a.ID), http.StatusForbidden)
}

func scrape(t *testing.T, ts *testServer, token string, want int) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET /metrics with token %q: %d, want %d", token, resp.StatusCode, want)
	}
	if want != http.StatusOK {
		return nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func gauge(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		l, match := labels(m), true
		for k, v := range want {
			match = match && l[k] == v
		}
		if match {
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s with labels %v", name, want)
	return 0
}

// The bytes a blob's upload and download carry show in the received and sent counters of their
// routes: how a test sees that data did (or did not) pass through the server.
func TestPrometheusBodyBytes(t *testing.T) {
	ts := newTestServer(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	h, _, err := blob.HashReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	call := func(method string, body []byte, want int) []byte {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, ts.url+"/api/blobs/"+h, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s /api/blobs/%s: %d %s", method, h, resp.StatusCode, got)
		}
		return got
	}
	call(http.MethodPut, data, http.StatusCreated)
	for range 2 {
		if got := call(http.MethodGet, nil, http.StatusOK); len(got) != len(data) {
			t.Fatalf("GET gave %d bytes, want %d", len(got), len(data))
		}
	}
	fams := scrape(t, ts, adminToken, http.StatusOK)
	counter := func(name, route string) float64 {
		for _, m := range fams[name].GetMetric() {
			if labels(m)["route"] == route {
				return m.GetCounter().GetValue()
			}
		}
		return 0
	}
	for _, c := range []struct {
		name, route string
		want        float64
	}{
		{"hangar_http_received_bytes_total", "PUT /api/blobs/{hash}", float64(len(data))},
		{"hangar_http_sent_bytes_total", "GET /api/blobs/{hash}", float64(2 * len(data))},
		{"hangar_http_received_bytes_total", "GET /api/blobs/{hash}", 0},
	} {
		if got := counter(c.name, c.route); got != c.want {
			t.Errorf("%s{route=%q} = %v, want %v", c.name, c.route, got, c.want)
		}
	}
}
