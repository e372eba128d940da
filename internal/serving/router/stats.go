package router

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets span a no-op model (under a millisecond through the router) to a request
// held while a replica starts (a minute or two).
var latencyBuckets = [...]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// classes are the status classes requests are counted by; 499 (the caller left) is its own.
var classes = []string{"1xx", "2xx", "3xx", "4xx", "5xx", "client_gone"}

// stats are one deployment's counters, updated without locks as requests pass.
type stats struct {
	byClass                               [6]atomic.Int64
	buckets                               [len(latencyBuckets) + 1]atomic.Int64 // the last: over the largest bound
	sumNanos                              atomic.Int64
	mirrored, mirrorDropped, mirrorFailed atomic.Int64
}

func classOf(status int) int {
	if status == 499 {
		return 5
	}
	if status < 100 || status > 599 {
		return 4
	}
	return status/100 - 1
}

func (s *stats) observe(status int, took time.Duration) {
	s.byClass[classOf(status)].Add(1)
	sec := took.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets[:], sec)
	s.buckets[i].Add(1)
	s.sumNanos.Add(int64(took))
}

// DeploymentStats is one deployment's figures for the studio.
type DeploymentStats struct {
	Endpoint      string           `json:"endpoint"`
	Deployment    string           `json:"deployment"`
	Requests      map[string]int64 `json:"requests"` // by status class: 2xx, 4xx, 5xx, ...
	InFlight      int              `json:"in_flight"`
	Held          int              `json:"held"`
	Replicas      int              `json:"replicas"`
	ReadyReplicas int              `json:"ready_replicas"`
	Mirrored      int64            `json:"mirrored"`
	MirrorDropped int64            `json:"mirror_dropped"`
	MirrorFailed  int64            `json:"mirror_failed"`
	// LatencyP50MS and LatencyP99MS are upper bounds: the histogram bucket each falls in.
	LatencyP50MS float64   `json:"latency_p50_ms"`
	LatencyP99MS float64   `json:"latency_p99_ms"`
	LastRequest  time.Time `json:"last_request,omitzero"`
}

// Snapshot is every deployment's figures, by endpoint and deployment name.
func (r *Router) Snapshot() []DeploymentStats {
	var out []DeploymentStats
	for _, d := range r.allDeps() {
		out = append(out, d.snapshot())
	}
	slices.SortFunc(out, func(a, b DeploymentStats) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Deployment, b.Deployment))
	})
	return out
}

func (d *depState) snapshot() DeploymentStats {
	s := DeploymentStats{Endpoint: d.endpoint, Deployment: d.name, Requests: map[string]int64{},
		Mirrored: d.stats.mirrored.Load(), MirrorDropped: d.stats.mirrorDropped.Load(), MirrorFailed: d.stats.mirrorFailed.Load()}
	for i, c := range classes {
		if n := d.stats.byClass[i].Load(); n > 0 {
			s.Requests[c] = n
		}
	}
	counts, total := d.stats.counts()
	s.LatencyP50MS, s.LatencyP99MS = quantileMS(counts, total, 0.5), quantileMS(counts, total, 0.99)
	d.mu.Lock()
	s.InFlight, s.Held, s.LastRequest = d.inFlight, d.waiting+d.held, d.last
	s.Replicas, s.ReadyReplicas = len(d.replicas), d.readyLocked()
	d.mu.Unlock()
	return s
}

func (s *stats) counts() ([]int64, int64) {
	out := make([]int64, len(s.buckets))
	var total int64
	for i := range s.buckets {
		out[i] = s.buckets[i].Load()
		total += out[i]
	}
	return out, total
}

// quantileMS is the upper bound (ms) of the bucket the q-quantile falls in; 0 with no request.
func quantileMS(counts []int64, total int64, q float64) float64 {
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.5)
	var seen int64
	for i, n := range counts {
		seen += n
		if seen >= rank && i < len(latencyBuckets) {
			return latencyBuckets[i] * 1000
		} else if seen >= rank {
			break
		}
	}
	return latencyBuckets[len(latencyBuckets)-1] * 1000
}

var (
	labels       = []string{"endpoint", "deployment"}
	requestsDesc = prometheus.NewDesc("hangar_endpoint_requests_total", "Scoring requests by deployment and status class (client_gone: the caller left before the answer).", append(labels, "class"), nil)
	latencyDesc  = prometheus.NewDesc("hangar_endpoint_request_duration_seconds", "Scoring request latency through the router, waits for a slot or a replica included.", labels, nil)
	inFlightDesc = prometheus.NewDesc("hangar_endpoint_requests_in_flight", "Requests being served by a replica.", labels, nil)
	heldDesc     = prometheus.NewDesc("hangar_endpoint_requests_held", "Requests waiting for a free slot or for a replica to be ready.", labels, nil)
	mirroredDesc = prometheus.NewDesc("hangar_endpoint_mirrored_requests_total", "Copies of requests for a mirrored deployment: sent, dropped (no free slot, or too many copies in flight), failed.", append(labels, "result"), nil)
	replicasDesc = prometheus.NewDesc("hangar_endpoint_replicas_ready", "Replicas in the rotation (ready, and passing their readiness probe).", labels, nil)
	metricsDescs = []*prometheus.Desc{requestsDesc, latencyDesc, inFlightDesc, heldDesc, mirroredDesc, replicasDesc}
)

// Describe implements prometheus.Collector: the router's series per endpoint and deployment.
func (r *Router) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metricsDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The labels are names of deployments in the table,
// never paths or headers callers choose.
func (r *Router) Collect(ch chan<- prometheus.Metric) {
	for _, d := range r.allDeps() {
		lv := []string{d.endpoint, d.name}
		for i, c := range classes {
			ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(d.stats.byClass[i].Load()), d.endpoint, d.name, c)
		}
		counts, total := d.stats.counts()
		cum := map[float64]uint64{}
		var run int64
		for i, b := range latencyBuckets {
			run += counts[i]
			cum[b] = uint64(run)
		}
		ch <- prometheus.MustNewConstHistogram(latencyDesc, uint64(total), time.Duration(d.stats.sumNanos.Load()).Seconds(), cum, lv...)
		snap := d.snapshot()
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(snap.InFlight), lv...)
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(snap.Held), lv...)
		ch <- prometheus.MustNewConstMetric(replicasDesc, prometheus.GaugeValue, float64(snap.ReadyReplicas), lv...)
		for _, m := range []struct {
			result string
			n      int64
		}{{"sent", snap.Mirrored}, {"dropped", snap.MirrorDropped}, {"failed", snap.MirrorFailed}} {
			ch <- prometheus.MustNewConstMetric(mirroredDesc, prometheus.CounterValue, float64(m.n), d.endpoint, d.name, m.result)
		}
	}
}
