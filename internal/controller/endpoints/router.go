package endpoints

import (
	"cmp"
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/store"
)

// The router's side of serving: each pass publishes the router's table (endpoints, their
// deployments and ready replicas) and the endpoints' auth, which the router's key checks read;
// the router counts the load the autoscaler reads, and a replica failing its liveness probe is
// stopped (the loop replaces it).

// sampleWindow is how far back the autoscaler's load samples reach.
const sampleWindow = 10 * time.Minute

// endpointAuth is what opens an endpoint: its auth mode, and its keys (unsealed, in memory only).
type endpointAuth struct {
	mode string
	keys []string
}

// table is what the router gets from a pass: endpoints, their deployments and ready replicas
// (not those draining), and each endpoint's auth.
func (s *Serving) table(ctx context.Context, deps []store.DeploymentRecord, reps []store.Replica, runs map[string]*job.Run,
	stopping map[string]bool) (router.Table, map[string]endpointAuth, error) {
	eps, err := s.store.Serving.Endpoints(ctx)
	if err != nil {
		return nil, nil, err
	}
	t := router.Table{}
	auth := make(map[string]endpointAuth, len(eps))
	for _, e := range eps {
		a := endpointAuth{mode: e.Spec.AuthMode}
		if e.Spec.AuthMode == serving.AuthKey {
			k, err := s.unsealKeys(e.Keys)
			if err != nil {
				s.log.Error("endpoint keys", "endpoint", e.Spec.Name, "err", err)
			} else {
				a.keys = []string{k.Primary, k.Secondary}
			}
		}
		auth[e.Spec.Name] = a
		re := router.Endpoint{Traffic: e.Spec.Traffic, Mirror: e.Spec.MirrorTraffic, Deployments: map[string]router.Deployment{}}
		for _, d := range deps {
			if d.Spec.Endpoint != e.Spec.Name {
				continue
			}
			rd := routerDeployment(d.Spec)
			for _, r := range reps {
				if r.Endpoint == e.Spec.Name && r.Deployment == d.Spec.Name && r.Address != "" && runs[r.RunID].Status == job.Running &&
					!stopping[r.RunID] {
					rd.Replicas = append(rd.Replicas, router.Replica{ID: r.RunID, Addr: r.Address, Ready: true,
						Secret: s.replicaSecrets().Secret(r.RunID, runs[r.RunID].Attempt)})
				}
			}
			re.Deployments[d.Spec.Name] = rd
		}
		t[e.Spec.Name] = re
	}
	return t, auth, nil
}

// routerDeployment is a deployment's settings as the router reads them (no replicas yet).
func routerDeployment(d serving.Deployment) router.Deployment {
	rd := router.Deployment{Request: d.Request, Liveness: d.Liveness, Readiness: d.Readiness}
	if in := d.Inference; in != nil {
		rd.ScoringPath = in.ScoringPath
		rd.Liveness.Path = cmp.Or(in.LivenessPath, rd.Liveness.Path)
		rd.Readiness.Path = cmp.Or(in.ReadinessPath, rd.Readiness.Path)
	}
	return rd
}

// authorize says whether bearer opens endpoint (one of its keys, or an aml_token minted for it
// and not expired): the router's key check.
func (s *Serving) authorize(endpoint, bearer string) bool {
	a, ok := (*s.auth.Load())[endpoint]
	if !ok {
		return false
	}
	if a.mode == serving.AuthAMLToken {
		return s.endpointTokens().Verify(bearer, endpoint, s.now())
	}
	open := false
	for _, k := range a.keys {
		open = open || (k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(bearer)) == 1)
	}
	return open
}

// unhealthy stops a replica that failed its liveness probe (the loop replaces it).
func (s *Serving) unhealthy(run, reason string) {
	s.log.Warn("replica failed its liveness probe; replacing it", "run", run, "why", reason)
	if _, err := s.runs.Cancel(context.Background(), run); err != nil {
		s.log.Warn("stop an unhealthy replica", "run", run, "err", err)
	}
}

// load samples a deployment's load for the autoscaler (once a pass), keeping sampleWindow.
func (s *Serving) load(k serving.Key, now time.Time) ([]serving.LoadSample, time.Time) {
	l := s.Router.Load(k.Endpoint, k.Deployment)
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	h := append(s.samples[k], serving.LoadSample{At: now, InFlight: l.InFlight, Held: l.Held})
	for len(h) > 0 && now.Sub(h[0].At) > sampleWindow {
		h = h[1:]
	}
	s.samples[k] = h
	return h, l.LastRequest
}

// ServeHTTP sends requests to /endpoints/ to the router.
func (s *Serving) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.Router.ServeHTTP(w, r) }
