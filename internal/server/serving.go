package server

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangar-ml/hangar/internal/controller"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
)

// Serving joins the controller's serving loop and the endpoints' router: the loop publishes the
// endpoints, keys and ready replicas (the router's table and its key checks), the router
// counts the load the loop's autoscaler reads, and a replica failing its liveness probe is
// stopped (the loop replaces it).
type Serving struct {
	ctrl   *controller.Controller
	Router *router.Router
	state  atomic.Pointer[map[string]controller.EndpointState]

	mu      sync.Mutex
	samples map[serving.Key][]serving.LoadSample
}

// sampleWindow is how far back the autoscaler's load samples reach.
const sampleWindow = 10 * time.Minute

// NewServing makes the router for a controller's endpoints (cfg's callbacks are set here).
func NewServing(ctrl *controller.Controller, cfg router.Config) *Serving {
	s := &Serving{ctrl: ctrl, samples: map[serving.Key][]serving.LoadSample{}}
	empty := map[string]controller.EndpointState{}
	s.state.Store(&empty)
	cfg.Authorize = s.authorize
	cfg.Wake = func(string, string) { ctrl.ServingChanged() }
	cfg.Unhealthy = func(run, reason string) {
		ctrl.Log.Warn("replica failed its liveness probe; replacing it", "run", run, "why", reason)
		if _, err := ctrl.Cancel(context.Background(), run); err != nil {
			ctrl.Log.Warn("stop an unhealthy replica", "run", run, "err", err)
		}
	}
	s.Router = router.New(cfg)
	return s
}

// Run runs the serving loop and the router's prober until ctx ends.
func (s *Serving) Run(ctx context.Context) {
	go s.Router.RunProber(ctx)
	s.ctrl.RunServing(ctx, controller.Serving{Load: s.load, Publish: s.publish})
}

func (s *Serving) authorize(endpoint, bearer string) bool {
	e, ok := (*s.state.Load())[endpoint]
	return ok && s.ctrl.AuthorizeEndpoint(e, bearer)
}

// publish turns the loop's state into the router's table.
func (s *Serving) publish(st controller.ServingState) {
	byName := make(map[string]controller.EndpointState, len(st.Endpoints))
	t := router.Table{}
	for _, e := range st.Endpoints {
		byName[e.Spec.Name] = e
		re := router.Endpoint{Traffic: e.Spec.Traffic, Mirror: e.Spec.MirrorTraffic, Deployments: map[string]router.Deployment{}}
		for _, d := range e.Deployments {
			rd := router.Deployment{Request: d.Spec.Request, Liveness: d.Spec.Liveness, Readiness: d.Spec.Readiness}
			if in := d.Spec.Inference; in != nil {
				rd.ScoringPath = in.ScoringPath
				rd.Liveness.Path = cmp.Or(in.LivenessPath, rd.Liveness.Path)
				rd.Readiness.Path = cmp.Or(in.ReadinessPath, rd.Readiness.Path)
			}
			for _, r := range d.Replicas {
				rd.Replicas = append(rd.Replicas, router.Replica{ID: r.RunID, Addr: r.Address, Ready: true, Secret: r.Secret})
			}
			re.Deployments[d.Spec.Name] = rd
		}
		t[e.Spec.Name] = re
	}
	s.state.Store(&byName)
	s.Router.Set(t)
}

// load samples a deployment's load for the autoscaler (once a pass), keeping sampleWindow.
func (s *Serving) load(k serving.Key, now time.Time) ([]serving.LoadSample, time.Time) {
	l := s.Router.Load(k.Endpoint, k.Deployment)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := append(s.samples[k], serving.LoadSample{At: now, InFlight: l.InFlight, Held: l.Held})
	for len(h) > 0 && now.Sub(h[0].At) > sampleWindow {
		h = h[1:]
	}
	s.samples[k] = h
	return h, l.LastRequest
}

// ServeHTTP sends requests to /endpoints/ to the router.
func (s *Serving) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.Router.ServeHTTP(w, r) }
