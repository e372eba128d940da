package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
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
	}
	t.reg.MustRegister(t.latency, t.logLines, t.metricPts, t.scrapeFail,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&storeCollector{st: st, log: log, fail: t.scrapeFail})
	return t
}

// handler serves the registry in Prometheus' text (or OpenMetrics) format.
func (t *telemetry) handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{Registry: t.reg})
}

// observe records one request; route is the matched pattern ("" when none matched), so the
// label's values are bounded by the routes, never by paths users choose.
func (t *telemetry) observe(route string, status int, took time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	t.latency.WithLabelValues(route, strconv.Itoa(status)).Observe(took.Seconds())
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
