package router

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hangar-ml/hangar/internal/testwait"
)

// /metrics shows requests by class, latency, in flight and mirrors per deployment; the studio's
// snapshot says the same in JSON; Load carries the injected clock's time of the last request.
func TestMetricsAndSnapshot(t *testing.T) {
	blue, shadow := newReplica(t, "blue"), newReplica(t, "shadow")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, Config{Now: func() time.Time { return now }, Rand: func() float64 { return 0 }})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Mirror: map[string]int{"shadow": 10},
		Deployments: map[string]Deployment{"blue": deployment(blue), "shadow": deployment(shadow)}}})
	for range 3 {
		f.call(t, "/endpoints/e/score", "x")
	}
	f.call(t, "/endpoints/e/score", "x", DeploymentHeader, "nope")
	testwait.Within(t, 20*time.Second, "copies arrive", func() bool { return len(shadow.received()) == 3 })

	reg := prometheus.NewRegistry()
	reg.MustRegister(f.r)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`hangar_endpoint_requests_total{class="2xx",deployment="blue",endpoint="e"} 3`,
		`hangar_endpoint_request_duration_seconds_count{deployment="blue",endpoint="e"} 3`,
		`hangar_endpoint_requests_in_flight{deployment="blue",endpoint="e"} 0`,
		`hangar_endpoint_mirrored_requests_total{deployment="shadow",endpoint="e",result="sent"} 3`,
		`hangar_endpoint_replicas_ready{deployment="blue",endpoint="e"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}

	b, err := json.Marshal(f.r.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var snap []DeploymentStats
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap) != 2 || snap[0].Deployment != "blue" || snap[0].Requests["2xx"] != 3 || snap[1].Mirrored != 3 ||
		snap[0].LatencyP99MS <= 0 || !snap[0].LastRequest.Equal(now) {
		t.Fatalf("snapshot: %s", b)
	}
	if l := f.r.Load("e", "blue"); l.Requests != 3 || !l.LastRequest.Equal(now) {
		t.Fatalf("load: %+v", l)
	}
	if l := f.r.Load("e", "gone"); l != (Load{}) {
		t.Fatalf("load of an unknown deployment: %+v", l)
	}
}
