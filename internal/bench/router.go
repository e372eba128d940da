package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
)

// RouterOptions size the router group.
type RouterOptions struct {
	Requests int           // sequential requests per latency round, each side
	Rounds   int           // latency rounds
	Conc     int           // concurrent callers in the throughput case
	Window   time.Duration // how long each throughput case runs
}

// Router measures the endpoint router against calling a no-op replica directly, in the same
// process and run: the latency it adds (sequential calls, direct and routed interleaved so
// both see the same machine) and the requests per second of a no-op deployment through it.
// Callers, router and replica share the machine's cores, so the figures are conservative.
func Router(ctx context.Context, o RouterOptions) ([]Figure, error) {
	replica, err := serveOn(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"result":[0]}`)
	}))
	if err != nil {
		return nil, err
	}
	defer replica.Close()
	rt := router.New(router.Config{Authorize: func(_, bearer string) bool { return bearer == "bench-key" }})
	defer rt.Close()
	rt.Set(router.Table{"bench": {Traffic: map[string]int{"noop": 100}, Deployments: map[string]router.Deployment{
		"noop": {Request: serving.RequestSettings{MaxConcurrentRequestsPerInstance: 1024},
			Replicas: []router.Replica{{ID: "r1", Addr: replica.Addr().String(), Ready: true}}}}}})
	mux := http.NewServeMux()
	mux.Handle("/endpoints/", rt)
	front, err := serveOn(mux)
	if err != nil {
		return nil, err
	}
	defer front.Close()
	direct := "http://" + replica.Addr().String() + "/score"
	routed := "http://" + front.Addr().String() + "/endpoints/bench/score"
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2 * o.Conc}}

	var figs []Figure
	lat, err := routerLatency(ctx, client, direct, routed, o)
	if err != nil {
		return nil, err
	}
	figs = append(figs, lat...)
	base, err := throughput(ctx, client, direct, o)
	if err != nil {
		return nil, err
	}
	through, err := throughput(ctx, client, routed, o)
	if err != nil {
		return nil, err
	}
	bf := Figure{Name: fmt.Sprintf("no-op replica called directly, %d callers", o.Conc), Value: base, Unit: "requests/s"}
	figs = append(figs, bf, against(bf, fmt.Sprintf("through the router, %d callers (goal ≥ 5,000)", o.Conc), through, "requests/s", nil))
	return figs, nil
}

// routerLatency is the overhead at p50 and p99: routed minus direct, each round's figure a sample.
func routerLatency(ctx context.Context, c *http.Client, direct, routed string, o RouterOptions) ([]Figure, error) {
	var d50, d99, r50, r99, o50, o99 []float64
	for range o.Rounds {
		var ds, rs []float64
		for i := range 2 * o.Requests {
			url := direct
			if i%2 == 1 {
				url = routed
			}
			start := time.Now()
			if err := call(ctx, c, url); err != nil {
				return nil, err
			}
			ms := float64(time.Since(start)) / float64(time.Millisecond)
			if i%2 == 1 {
				rs = append(rs, ms)
			} else {
				ds = append(ds, ms)
			}
		}
		d50, d99 = append(d50, quantile(ds, .5)), append(d99, quantile(ds, .99))
		r50, r99 = append(r50, quantile(rs, .5)), append(r99, quantile(rs, .99))
		o50, o99 = append(o50, quantile(rs, .5)-quantile(ds, .5)), append(o99, quantile(rs, .99)-quantile(ds, .99))
	}
	return []Figure{
		{Name: "direct call, p50", Value: medianOf(d50), Unit: "ms", Samples: d50},
		{Name: "through the router, p50", Value: medianOf(r50), Unit: "ms", Samples: r50},
		{Name: "router overhead, p50 (goal ≤ 1 ms)", Value: medianOf(o50), Unit: "ms", Samples: o50},
		{Name: "direct call, p99", Value: medianOf(d99), Unit: "ms", Samples: d99},
		{Name: "through the router, p99", Value: medianOf(r99), Unit: "ms", Samples: r99},
		{Name: "router overhead, p99 (goal ≤ 5 ms)", Value: medianOf(o99), Unit: "ms", Samples: o99},
	}, nil
}

// throughput is the requests per second o.Conc callers complete in o.Window.
func throughput(ctx context.Context, c *http.Client, url string, o RouterOptions) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Window)
	defer cancel()
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range o.Conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := call(ctx, c, url); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { firstErr = err })
						cancel()
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds(), firstErr
}

func call(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"data":[[1,2,3]]}`))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer bench-key")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

// served is an HTTP server on a loopback port of its own.
type served struct {
	ln  net.Listener
	srv *http.Server
}

func serveOn(h http.Handler) (*served, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &served{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *served) Addr() net.Addr { return s.ln.Addr() }
func (s *served) Close()         { _ = s.srv.Close() }
