package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// telemetry is what the server exports at /metrics for Prometheus. Counters and histograms are
// kept as requests pass; runs and nodes by state are read from the store at scrape time (two
// GROUP BY queries over indexed columns), so they are never out of step with the database.
// Each server has its own registry: two servers in one test process do not share series.
type telemetry struct {
	reg        *prometheus.Registry
	latency    *prometheus.HistogramVec
	logLines   prometheus.Counter
	metricPts  prometheus.Counter
	scrapeFail prometheus.Counter
	// received and sent count body bytes by route: what a client or a run's supervisor sent the
	// server, and what the server answered (blobs, artifacts, logs). They show where data
	// travels: a run that reads and writes an object store directly moves none of its objects
	// through them.
	received *prometheus.CounterVec
	sent     *prometheus.CounterVec
}

func newTelemetry(st *store.Store, log *slog.Logger) *telemetry {
	t := &telemetry{
		reg: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hangar_http_request_duration_seconds",
			Help: "API request latency by route pattern, method and status code (log waits long-poll for up to a minute).",
			// From a cached read (sub-millisecond) to a long-polled log wait (a minute).
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 30, 60},
		}, []string{"route", "code"}),
		logLines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_log_lines_ingested_total", Help: "Log lines received from supervisors (a batch retried after a lost answer counts again)."}),
		metricPts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_metric_points_ingested_total", Help: "Metric points received (a batch retried after a lost answer counts again)."}),
		scrapeFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_metrics_store_errors_total", Help: "Scrapes whose store reads (runs or nodes by state) failed."}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_http_received_bytes_total", Help: "Request body bytes the server read, by route pattern (uploads of blobs, bundles, artifacts, logs)."}, []string{"route"}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_http_sent_bytes_total", Help: "Response body bytes the server wrote, by route pattern (downloads of blobs, artifacts, logs)."}, []string{"route"}),
	}
	t.reg.MustRegister(t.latency, t.logLines, t.metricPts, t.scrapeFail, t.received, t.sent,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&storeCollector{st: st, log: log, fail: t.scrapeFail})
	return t
}

// handler serves the registry in Prometheus' text (or OpenMetrics) format.
func (t *telemetry) handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})
}

// observe records one request: its status, how long it took, and the body bytes it read and
// wrote; route is the matched pattern ("" when none matched), so the label's values are bounded
// by the routes, never by paths users choose.
func (t *telemetry) observe(route string, status int, took time.Duration, read, written int64) {
	if route == "" {
		route = "unmatched"
	}
	t.latency.WithLabelValues(route, strconv.Itoa(status)).Observe(took.Seconds())
	if read > 0 {
		t.received.WithLabelValues(route).Add(float64(read))
	}
	if written > 0 {
		t.sent.WithLabelValues(route).Add(float64(written))
	}
}

// countingBody counts the bytes a handler reads of a request's body.
type countingBody struct {
	io.ReadCloser
	n atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

var (
	runsDesc  = prometheus.NewDesc("hangar_runs", "Runs by status (a run that is not a job included).", []string{"status"}, nil)
	queueDesc = prometheus.NewDesc("hangar_queue_length", "Runs waiting for capacity: status Queued or NotStarted.", nil, nil)
	nodesDesc = prometheus.NewDesc("hangar_nodes", "Managed cluster nodes by cluster and state.", []string{"compute", "state"}, nil)
)

// storeCollector reads runs and nodes by state when Prometheus scrapes.
type storeCollector struct {
	st   *store.Store
	log  *slog.Logger
	fail prometheus.Counter
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runsDesc
	ch <- queueDesc
	ch <- nodesDesc
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	runs, err := c.st.Runs.RunCounts(ctx)
	if err != nil {
		c.log.Warn("metrics: count runs", "err", err)
		c.fail.Inc()
	}
	queued := 0
	for _, s := range job.States {
		n := runs[string(s)]
		ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.GaugeValue, float64(n), string(s))
		if s == job.Queued || s == job.NotStarted {
			queued += n
		}
	}
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(queued))
	nodes, err := c.st.Cluster.NodeCounts(ctx)
	if err != nil {
		c.log.Warn("metrics: count nodes", "err", err)
		c.fail.Inc()
	}
	for _, n := range nodes {
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(n.N), n.Pool, n.State)
	}
}
