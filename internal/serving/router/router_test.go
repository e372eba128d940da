package router

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// 10,000 requests split 90/10 land within ±2% of the split, each answer naming its deployment.
func TestTrafficSplit(t *testing.T) {
	blue, green := newReplica(t, "blue"), newReplica(t, "green")
	f := newFixture(t, Config{})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 90, "green": 10},
		Deployments: map[string]Deployment{"blue": deployment(blue), "green": deployment(green)}}})
	const n, workers = 10000, 8
	var counts [2]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for range n / workers {
				a, err := f.try("/endpoints/e/score", `{"data":[1]}`)
				switch {
				case err != nil:
					errs <- err
					return
				case a.status != 200 || a.body != a.deployment:
					errs <- fmt.Errorf("worker %d: %d %q from %q", w, a.status, a.body, a.deployment)
					return
				case a.body == "blue":
					counts[0].Add(1)
				default:
					counts[1].Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	share := float64(counts[1].Load()) / n
	if share < 0.08 || share > 0.12 {
		t.Fatalf("green got %.2f%% of %d requests, want 10%% ± 2%%", share*100, n)
	}
	if got := int64(len(blue.received()) + len(green.received())); got != n {
		t.Fatalf("replicas saw %d requests, want %d", got, n)
	}
}

// The azureml-model-deployment header reaches a deployment at 0% traffic; an unknown one is a 404.
func TestHeaderRouting(t *testing.T) {
	blue, green := newReplica(t, "blue"), newReplica(t, "green")
	f := newFixture(t, Config{})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100, "green": 0},
		Deployments: map[string]Deployment{"blue": deployment(blue), "green": deployment(green)}}})
	for range 20 {
		if a := f.call(t, "/endpoints/e/score", "x", DeploymentHeader, "green"); a.status != 200 || a.body != "green" || a.deployment != "green" {
			t.Fatalf("header green: %+v", a)
		}
	}
	if a := f.call(t, "/endpoints/e/score", "x", DeploymentHeader, "red"); a.status != 404 || !strings.Contains(a.body, "endpoint e has no deployment red") {
		t.Fatalf("header red: %+v", a)
	}
	// No deployment with traffic and no header: Azure's 404.
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 0}, Deployments: map[string]Deployment{"blue": deployment(blue)}}})
	if a := f.call(t, "/endpoints/e/score", "x"); a.status != 404 || !strings.Contains(a.body, "no deployment with traffic above 0%") {
		t.Fatalf("no traffic: %+v", a)
	}
}

// /score goes to the deployment's scoring path; any other subpath and its query go as they are.
func TestPaths(t *testing.T) {
	blue := newReplica(t, "blue")
	f := newFixture(t, Config{})
	d := deployment(blue)
	d.ScoringPath = "/v1/predict"
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": d}}})
	f.call(t, "/endpoints/e/score?verbose=1", "a")
	f.call(t, "/endpoints/e/v2/models/m/infer", "b")
	got := blue.received()
	want := []received{{"POST", "/v1/predict", "verbose=1", "a", ""}, {"POST", "/v2/models/m/infer", "", "b", ""}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replica received %+v, want %+v (and never the endpoint key)", got, want)
	}
}

// A mirrored deployment gets copies; the caller's answers are the live deployment's, unchanged.
// With a shadow that never answers the callers still get every answer, and the copies in
// flight stay within MaxMirrors.
func TestMirror(t *testing.T) {
	blue, shadow := newReplica(t, "blue"), newReplica(t, "shadow")
	f := newFixture(t, Config{MaxMirrors: 4})
	slow := deployment(shadow)
	slow.Request.RequestTimeoutMS = 600000 // a mirror the caller waited for would hang the test
	tbl := Table{"e": {Traffic: map[string]int{"blue": 100}, Mirror: map[string]int{"shadow": 50},
		Deployments: map[string]Deployment{"blue": deployment(blue), "shadow": slow}}}
	f.r.Set(tbl)
	for i := range 200 {
		if a := f.call(t, "/endpoints/e/score", fmt.Sprint(i)); a.status != 200 || a.body != "blue" || a.deployment != "blue" {
			t.Fatalf("request %d: %+v", i, a)
		}
	}
	testwait.Within(t, 20*time.Second, "the shadow's copies arrive", func() bool { return len(shadow.received()) == int(f.r.Snapshot()[1].Mirrored) })
	copies := shadow.received()
	// Drawn at 50%: about 100 of 200, some possibly dropped on a busy machine (MaxMirrors).
	if drawn := len(copies) + int(f.r.Snapshot()[1].MirrorDropped); len(copies) == 0 || drawn < 50 || drawn > 150 {
		t.Fatalf("shadow got %d copies of 200 requests at 50%% (%d drawn)", len(copies), drawn)
	}
	for _, c := range copies {
		if c.path != "/score" || c.auth != "" || c.body == "" {
			t.Fatalf("copy %+v: want the caller's body at /score without its key", c)
		}
	}

	// A shadow that hangs: the callers are not slowed, copies are dropped past MaxMirrors.
	release := make(chan struct{})
	defer close(release)
	var hanging atomic.Int64
	shadow.setHandler(func(w http.ResponseWriter, r *http.Request) {
		hanging.Add(1)
		defer hanging.Add(-1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	for i := range 100 {
		if a := f.call(t, "/endpoints/e/score", "x"); a.status != 200 || a.body != "blue" {
			t.Fatalf("request %d with a hanging shadow: %+v", i, a)
		}
	}
	if n := hanging.Load(); n > 4 {
		t.Fatalf("%d copies in flight, MaxMirrors is 4", n)
	}
	if s := f.r.Snapshot()[1]; s.MirrorDropped == 0 {
		t.Fatalf("no copy dropped with a hanging shadow: %+v", s)
	}
	// Requests naming a deployment are not mirrored.
	before := f.r.Snapshot()[1].Mirrored + f.r.Snapshot()[1].MirrorDropped
	f.call(t, "/endpoints/e/score", "x", DeploymentHeader, "blue")
	if after := f.r.Snapshot()[1].Mirrored + f.r.Snapshot()[1].MirrorDropped; after != before {
		t.Fatalf("a header-routed request was mirrored")
	}
}

// blockingReplica answers only when released, and says when a request arrived.
func blockingReplica(t *testing.T, name string) (rp *replica, arrived chan struct{}, release chan struct{}) {
	rp = newReplica(t, name)
	arrived, release = make(chan struct{}, 16), make(chan struct{})
	rp.setHandler(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
			fmt.Fprint(w, name)
		case <-r.Context().Done():
		}
	})
	return rp, arrived, release
}

// max_concurrent_requests_per_instance: a second request waits for the slot (served once the
// first ends) or, past max_queue_wait_ms, gets 429.
func TestConcurrencyLimit(t *testing.T) {
	blue, arrived, release := blockingReplica(t, "blue")
	f := newFixture(t, Config{})
	set := func(queueMS int) {
		d := deployment(blue)
		d.Request = serving.RequestSettings{MaxConcurrentRequestsPerInstance: 1, MaxQueueWaitMS: queueMS, RequestTimeoutMS: 60000}
		f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": d}}})
	}
	set(60000)
	first, second := make(chan answer, 1), make(chan answer, 1)
	go func() { first <- f.call(t, "/endpoints/e/score", "1") }()
	<-arrived
	go func() { second <- f.call(t, "/endpoints/e/score", "2") }()
	testwait.Within(t, 20*time.Second, "the second request waits for the slot", func() bool { return f.r.Load("e", "blue").Held == 1 })
	if n := len(blue.received()); n != 1 {
		t.Fatalf("replica has %d requests with a limit of 1", n)
	}
	// As many wait as the replicas have slots (Azure's 2 × max_concurrent × instances in
	// all); one more is refused at once rather than queued.
	if a := f.call(t, "/endpoints/e/score", "3"); a.status != 429 {
		t.Fatalf("beyond the queue: %+v", a)
	}
	release <- struct{}{}
	if a := <-first; a.status != 200 {
		t.Fatalf("first: %+v", a)
	}
	<-arrived
	release <- struct{}{}
	if a := <-second; a.status != 200 || a.body != "blue" {
		t.Fatalf("second, after waiting for the slot: %+v", a)
	}

	set(1)
	go func() { first <- f.call(t, "/endpoints/e/score", "3") }()
	<-arrived
	a := f.call(t, "/endpoints/e/score", "4")
	if a.status != 429 || !strings.Contains(a.body, "too many pending requests") || !strings.Contains(a.body, "max_concurrent_requests_per_instance") {
		t.Fatalf("over the limit: %+v", a)
	}
	release <- struct{}{}
	<-first
	if l := f.r.Load("e", "blue"); l.InFlight != 0 || l.Held != 0 || l.Requests != 3 {
		t.Fatalf("load after: %+v", l)
	}
}

// A replica slower than request_timeout_ms: 408, as Azure answers.
func TestRequestTimeout(t *testing.T) {
	blue, _, release := blockingReplica(t, "blue")
	defer close(release)
	f := newFixture(t, Config{})
	d := deployment(blue)
	d.Request.RequestTimeoutMS = 50
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": d}}})
	a := f.call(t, "/endpoints/e/score", "x")
	if a.status != 408 || !strings.Contains(a.body, "did not answer within 50ms (request_settings.request_timeout_ms)") || a.deployment != "blue" {
		t.Fatalf("slow replica: %+v", a)
	}
	if s := f.r.Snapshot()[0]; s.Requests["4xx"] != 1 || s.InFlight != 0 {
		t.Fatalf("stats: %+v", s)
	}
}

// With no ready replica a request is held, Wake is called, and the request is served once Set
// brings a ready replica; past the hold timeout it gets 504.
func TestHeldUntilReady(t *testing.T) {
	blue := newReplica(t, "blue")
	woken := make(chan string, 4)
	f := newFixture(t, Config{Wake: func(e, d string) { woken <- e + "/" + d }, HoldTimeout: time.Minute})
	starting := deployment(blue)
	starting.Replicas[0].Ready = false
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": starting}}})
	done := make(chan answer, 1)
	go func() { done <- f.call(t, "/endpoints/e/score", "x") }()
	if w := <-woken; w != "e/blue" {
		t.Fatalf("woke %s", w)
	}
	if l := f.r.Load("e", "blue"); l.Held != 1 {
		t.Fatalf("load while held: %+v", l)
	}
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": deployment(blue)}}})
	if a := <-done; a.status != 200 || a.body != "blue" {
		t.Fatalf("held request: %+v", a)
	}

	g := newFixture(t, Config{HoldTimeout: 20 * time.Millisecond})
	g.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": starting}}})
	if a := g.call(t, "/endpoints/e/score", "x"); a.status != 504 || !strings.Contains(a.body, "no ready replica") {
		t.Fatalf("past the hold timeout: %+v", a)
	}
}

// Readiness failing takes a replica out of the rotation and passing brings it back; liveness
// failing FailureThreshold times calls Unhealthy.
func TestProbes(t *testing.T) {
	good, bad := newReplica(t, "good"), newReplica(t, "bad")
	var badReady, badLive atomic.Bool
	bad.setHandler(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ready" && badReady.Load(), r.URL.Path == "/live" && badLive.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, "bad")
		}
	})
	unhealthy := make(chan string, 4)
	f := newFixture(t, Config{Unhealthy: func(id, reason string) { unhealthy <- id + ": " + reason }})
	d := deployment(bad, good) // bad first: with equal load it is picked first
	d.Request.MaxConcurrentRequestsPerInstance = 1
	d.Readiness = serving.Probe{Path: "/ready", FailureThreshold: 1, SuccessThreshold: 2}
	d.Liveness = serving.Probe{Path: "/live", FailureThreshold: 2}
	f.r.Set(Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": d}}})
	if a := f.call(t, "/endpoints/e/score", "x"); a.body != "bad" {
		t.Fatalf("before probes: %+v", a)
	}
	badReady.Store(true)
	f.r.ProbeOnce(t.Context())
	for range 10 {
		if a := f.call(t, "/endpoints/e/score", "x"); a.status != 200 || a.body != "good" {
			t.Fatalf("with bad out of rotation: %+v", a)
		}
	}
	badReady.Store(false)
	f.r.ProbeOnce(t.Context())
	if a := f.call(t, "/endpoints/e/score", "x"); a.body != "good" {
		t.Fatalf("after one pass of two: %+v", a)
	}
	f.r.ProbeOnce(t.Context())
	if a := f.call(t, "/endpoints/e/score", "x"); a.body != "bad" {
		t.Fatalf("after two passes: %+v", a)
	}
	badLive.Store(true)
	f.r.ProbeOnce(t.Context())
	select {
	case u := <-unhealthy:
		t.Fatalf("unhealthy after one liveness failure of two: %s", u)
	default:
	}
	f.r.ProbeOnce(t.Context())
	if u := <-unhealthy; !strings.HasPrefix(u, "bad-1: liveness probe failed 2 times in a row") {
		t.Fatalf("unhealthy: %s", u)
	}
}

// Traffic moved from blue to green (and back) under continuous load: no request fails, and
// after each switch new requests go where the table says.
func TestSwitchUnderLoad(t *testing.T) {
	blue, green := newReplica(t, "blue"), newReplica(t, "green")
	f := newFixture(t, Config{})
	deps := map[string]Deployment{"blue": deployment(blue), "green": deployment(green)}
	to := func(live string) Table {
		tr := map[string]int{"blue": 0, "green": 0}
		tr[live] = 100
		return Table{"e": {Traffic: tr, Deployments: deps}}
	}
	f.r.Set(to("blue"))
	ctx, stop := context.WithCancel(t.Context())
	var failed, served atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := f.try("/endpoints/e/score", "x")
				if err != nil || a.status != 200 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%+v %v", a, err))
				}
				served.Add(1)
			}
		})
	}
	for i, live := range []string{"green", "blue", "green", "blue", "green"} {
		at := served.Load()
		testwait.Within(t, 20*time.Second, "requests flow", func() bool { return served.Load() > at+200 })
		f.r.Set(to(live))
		if a := f.call(t, "/endpoints/e/score", "x"); a.body != live {
			t.Fatalf("switch %d: a new request went to %q, want %q", i, a.body, live)
		}
	}
	// The controller removes blue once it left the traffic: still nothing fails.
	at := served.Load()
	testwait.Within(t, 20*time.Second, "requests flow", func() bool { return served.Load() > at+200 })
	f.r.Set(Table{"e": {Traffic: map[string]int{"green": 100}, Deployments: map[string]Deployment{"green": deps["green"]}}})
	at = served.Load()
	testwait.Within(t, 20*time.Second, "requests flow", func() bool { return served.Load() > at+200 })
	stop()
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d requests failed during the switches, first: %v", n, served.Load(), firstErr.Load())
	}
}

func TestBodyLimit(t *testing.T) {
	blue := newReplica(t, "blue")
	f := newFixture(t, Config{MaxBody: 1024})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": deployment(blue)}}})
	if a := f.call(t, "/endpoints/e/score", strings.Repeat("x", 1024)); a.status != 200 {
		t.Fatalf("at the limit: %+v", a)
	}
	if a := f.call(t, "/endpoints/e/score", strings.Repeat("x", 1025)); a.status != 413 || !strings.Contains(a.body, "over the limit of 1024 bytes") {
		t.Fatalf("over the limit: %+v", a)
	}
	// Without a Content-Length (chunked), the limit holds while reading.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/endpoints/e/score", struct{ *strings.Reader }{strings.NewReader(strings.Repeat("y", 5000))})
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || len(blue.received()) != 1 {
		t.Fatalf("chunked over the limit: %d, replica saw %d", resp.StatusCode, len(blue.received()))
	}
}

// Without a key every endpoint, known or not, answers 401 alike; a wrong key 403; only a
// caller holding the endpoint's key learns that it has no deployment (404).
func TestAuth(t *testing.T) {
	blue := newReplica(t, "blue")
	f := newFixture(t, Config{Authorize: func(e, bearer string) bool {
		return (e == "e" && bearer == key) || (e == "empty" && bearer == "k2")
	}})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100}, Deployments: map[string]Deployment{"blue": deployment(blue)}}})
	known := f.call(t, "/endpoints/e/score", "x", "Authorization", "")
	unknown := f.call(t, "/endpoints/nope/score", "x", "Authorization", "")
	if known.status != 401 || known != unknown {
		t.Fatalf("no key: known endpoint %+v, unknown %+v: want the same 401", known, unknown)
	}
	if a := f.call(t, "/endpoints/e/score", "x", "Authorization", "Basic abc"); a.status != 401 {
		t.Fatalf("not a bearer: %+v", a)
	}
	wrong := f.call(t, "/endpoints/e/score", "x", "Authorization", "Bearer wrong")
	wrongUnknown := f.call(t, "/endpoints/nope/score", "x", "Authorization", "Bearer wrong")
	if wrong.status != 403 || wrongUnknown.status != 403 {
		t.Fatalf("wrong key: %+v, unknown endpoint: %+v", wrong, wrongUnknown)
	}
	if a := f.call(t, "/endpoints/empty/score", "x", "Authorization", "Bearer k2"); a.status != 404 {
		t.Fatalf("authorized, no deployment: %+v", a)
	}
	if a := f.call(t, "/endpoints/e/score", "x"); a.status != 200 {
		t.Fatalf("right key: %+v", a)
	}
	if a := f.call(t, "/endpoints/e/score", "x", "Authorization", "bearer "+key); a.status != 200 {
		t.Fatalf("right key, scheme in lower case: %+v", a)
	}
	if n := len(blue.received()); n != 2 {
		t.Fatalf("replica saw %d requests, want only the two authorized ones", n)
	}
}

// A request held for a deployment that then leaves the table is routed again by the new
// table, not failed: it had reached no replica.
func TestRemovedWhileHeld(t *testing.T) {
	green := newReplica(t, "green")
	woken := make(chan string, 1)
	f := newFixture(t, Config{Wake: func(e, d string) { woken <- d }})
	f.r.Set(Table{"e": {Traffic: map[string]int{"blue": 100},
		Deployments: map[string]Deployment{"blue": {Replicas: []Replica{{ID: "b", Addr: "127.0.0.1:1"}}}}}})
	done := make(chan answer, 1)
	go func() { done <- f.call(t, "/endpoints/e/score", "x") }()
	<-woken
	f.r.Set(Table{"e": {Traffic: map[string]int{"green": 100}, Deployments: map[string]Deployment{"green": deployment(green)}}})
	if a := <-done; a.status != 200 || a.body != "green" {
		t.Fatalf("held request after blue left: %+v", a)
	}
}

// RunProber's schedule: nothing before initial_delay, then every period.
func TestProbeSchedule(t *testing.T) {
	rp := newReplica(t, "r")
	var probes atomic.Int64
	rp.setHandler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ready" {
			probes.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	var mu sync.Mutex
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	f := newFixture(t, Config{Now: clock})
	d := deployment(rp)
	d.Readiness = serving.Probe{Path: "/ready", InitialDelay: 10, Period: 5, FailureThreshold: 2}
	d.Liveness = serving.Probe{Path: "/live", InitialDelay: 1000}
	f.r.Set(Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": d}}})
	ready := func() int { return f.r.Snapshot()[0].ReadyReplicas }

	advance(10*time.Second - time.Nanosecond)
	f.r.probeRound(t.Context(), false)
	advance(time.Nanosecond)
	f.r.probeRound(t.Context(), false)
	testwait.Within(t, 20*time.Second, "the first probe", func() bool { return probes.Load() == 1 && !f.r.probing() })
	f.r.probeRound(t.Context(), false) // not due again before the period
	if n := probes.Load(); n != 1 || ready() != 1 {
		t.Fatalf("after one failure of two: %d probes, %d ready", n, ready())
	}
	advance(5 * time.Second)
	f.r.probeRound(t.Context(), false)
	testwait.Within(t, 20*time.Second, "the second failure takes it out", func() bool { return ready() == 0 })
	if n := probes.Load(); n != 2 {
		t.Fatalf("%d probes, want 2", n)
	}
}
