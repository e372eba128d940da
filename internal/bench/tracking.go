package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
)

// TrackingOptions size the MLflow tracking group.
type TrackingOptions struct {
	Writers int // concurrent log-batch writers, each to its own run
	Batches int // log-batch requests per writer
	// Interval is how often each writer logs a batch (a training loop logs every so many
	// steps); zero: back to back, which measures the server at saturation.
	Interval time.Duration
	Runs     int // runs searched over (each with a metric and a param)
	BaseRuns int // runs of the baseline search (the same filter and order)
	Searches int // timed searches per case
}

// mlflowClient speaks the MLflow API of a benchmark's server with its workspace token.
type mlflowClient struct {
	url, token string
	http       *http.Client
}

func (w *Workspace) mlflow() (*mlflowClient, error) {
	si, tok, err := home.Home{Dir: w.Home}.ReadServer()
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	return &mlflowClient{url: si.URL, token: tok, http: &http.Client{Transport: tr}}, nil
}

// call POSTs in to an MLflow path (GET when in is nil) and decodes the answer into out.
func (c *mlflowClient) call(ctx context.Context, path string, in, out any) error {
	method, body := http.MethodGet, io.Reader(nil)
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		method, body = http.MethodPost, bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

const mlflowAPI = "/api/2.0/mlflow/"

func (c *mlflowClient) experiment(ctx context.Context, name string) (string, error) {
	var out struct {
		ID string `json:"experiment_id"`
	}
	return out.ID, c.call(ctx, mlflowAPI+"experiments/create", map[string]any{"name": name}, &out)
}

func (c *mlflowClient) run(ctx context.Context, exp string) (string, error) {
	var out struct {
		Run struct {
			Info struct {
				RunID string `json:"run_id"`
			} `json:"info"`
		} `json:"run"`
	}
	err := c.call(ctx, mlflowAPI+"runs/create", map[string]any{"experiment_id": exp}, &out)
	return out.Run.Info.RunID, err
}

// Tracking measures the MLflow API on a real server: log-batch of 10 metrics at opts.Writers
// concurrent writers (p50, p99) against GET /api/health at the same concurrency (what any request
// costs there), and search_runs with a metric filter and a metric order over opts.Runs runs
// against the same search over opts.BaseRuns runs. All in the same invocation.
func Tracking(ctx context.Context, w *Workspace, opts TrackingOptions) ([]Figure, error) {
	c, err := w.mlflow()
	if err != nil {
		return nil, err
	}
	exp, err := c.experiment(ctx, "bench-writers")
	if err != nil {
		return nil, err
	}
	health, err := concurrently(opts.Writers, opts.Batches, opts.Interval, func(int, int) error { return c.call(ctx, "/api/health", nil, nil) })
	if err != nil {
		return nil, err
	}
	runs := make([]string, opts.Writers)
	for i := range runs {
		if runs[i], err = c.run(ctx, exp); err != nil {
			return nil, err
		}
	}
	logBatch := func(wr, i int) error { return c.call(ctx, mlflowAPI+"runs/log-batch", tenMetrics(runs[wr], i), nil) }
	batches, err := concurrently(opts.Writers, opts.Batches, opts.Interval, logBatch)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	saturated, err := concurrently(opts.Writers, opts.Batches, 0, logBatch)
	if err != nil {
		return nil, err
	}
	rate := float64(len(saturated)) / time.Since(start).Seconds()
	each := fmt.Sprintf("each every %s", opts.Interval)
	hb := Figure{Name: fmt.Sprintf("GET /api/health, %d concurrent clients %s: p50", opts.Writers, each), Value: quantile(health, 0.5), Unit: "ms", Samples: p50p99(health)}
	figs := []Figure{hb,
		against(hb, fmt.Sprintf("log-batch of 10 metrics, %d concurrent writers %s: p50", opts.Writers, each), quantile(batches, 0.5), "ms", p50p99(batches)),
		{Name: fmt.Sprintf("log-batch of 10 metrics, %d concurrent writers %s: p99", opts.Writers, each), Value: quantile(batches, 0.99), Unit: "ms"},
		{Name: fmt.Sprintf("log-batch of 10 metrics, %d writers back to back: p50", opts.Writers), Value: quantile(saturated, 0.5), Unit: "ms", Samples: p50p99(saturated)},
		{Name: fmt.Sprintf("log-batch of 10 metrics, %d writers back to back: throughput", opts.Writers), Value: rate, Unit: "batches/s"},
	}
	search, err := searchFigures(ctx, c, opts)
	return append(figs, search...), err
}

func tenMetrics(run string, step int) map[string]any {
	ms := make([]map[string]any, 10)
	now := time.Now().UnixMilli()
	for i := range ms {
		ms[i] = map[string]any{"key": fmt.Sprintf("m%d", i), "value": float64(step) / 10, "timestamp": now, "step": step}
	}
	return map[string]any{"run_id": run, "metrics": ms}
}

// concurrently runs fn(writer, i) for i < n on k writers at once, each writer's calls every
// interval (their starts spread over one interval; back to back when zero), and returns each
// call's latency in milliseconds.
func concurrently(k, n int, interval time.Duration, fn func(writer, i int) error) ([]float64, error) {
	var mu sync.Mutex
	var lat []float64
	var first error
	var wg sync.WaitGroup
	for wr := 0; wr < k; wr++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now().Add(interval * time.Duration(wr) / time.Duration(k))
			for i := 0; i < n; i++ {
				time.Sleep(time.Until(start.Add(interval * time.Duration(i)))) // the writer's pace, not a wait for the server
				d, err := timeIt(func() error { return fn(wr, i) })
				mu.Lock()
				lat = append(lat, float64(d)/float64(time.Millisecond))
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return lat, first
}

// searchFigures fills an experiment of opts.BaseRuns runs and one of opts.Runs, each run with a
// metric acc and a param, and times the same search in both.
func searchFigures(ctx context.Context, c *mlflowClient, opts TrackingOptions) ([]Figure, error) {
	var lats [2][]float64
	for k, n := range []int{opts.BaseRuns, opts.Runs} {
		exp, err := c.experiment(ctx, fmt.Sprintf("bench-search-%d", n))
		if err != nil {
			return nil, err
		}
		err = parallel(n, 8, func(i int) error {
			id, err := c.run(ctx, exp)
			if err != nil {
				return err
			}
			return c.call(ctx, mlflowAPI+"runs/log-batch", map[string]any{"run_id": id,
				"metrics": []map[string]any{{"key": "acc", "value": float64(i) / float64(n), "timestamp": 1700000000000, "step": 1}},
				"params":  []map[string]any{{"key": "lr", "value": fmt.Sprint(i % 7)}}}, nil)
		})
		if err != nil {
			return nil, err
		}
		q := map[string]any{"experiment_ids": []string{exp}, "filter": "metrics.acc >= 0.5", "order_by": []string{"metrics.acc DESC"}, "max_results": 100}
		var out struct {
			Runs []json.RawMessage `json:"runs"`
		}
		for i := 0; i < opts.Searches; i++ {
			d, err := timeIt(func() error { return c.call(ctx, mlflowAPI+"runs/search", q, &out) })
			if err != nil {
				return nil, err
			}
			if len(out.Runs) != 100 {
				return nil, fmt.Errorf("search over %d runs found %d, want 100", n, len(out.Runs))
			}
			lats[k] = append(lats[k], float64(d)/float64(time.Millisecond))
		}
	}
	name := "runs/search `metrics.acc >= 0.5` order by `metrics.acc DESC` (100 of half the runs), %d runs: median"
	b := Figure{Name: fmt.Sprintf(name, opts.BaseRuns), Value: medianOf(lats[0]), Unit: "ms", Samples: p50p99(lats[0])}
	return []Figure{b, against(b, fmt.Sprintf(name, opts.Runs), medianOf(lats[1]), "ms", p50p99(lats[1]))}, nil
}
