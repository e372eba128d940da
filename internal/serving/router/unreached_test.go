package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/scoring"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Which forwarding errors mean the request never reached the replica, and so may go to another.
func TestRetryable(t *testing.T) {
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	for _, tc := range []struct {
		name       string
		err, ctx   error
		want       bool
		wantReason string
	}{
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), nil, true, "its process is gone"},
		{"no route to host", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), nil, true, "its node is gone"},
		{"dial timed out", dial(errors.New("i/o timeout")), nil, true, "nothing was sent"},
		{"wrapped dial error", fmt.Errorf("forward: %w", dial(syscall.ECONNREFUSED)), nil, true, "as the transport may wrap it"},
		{"reset while reading the answer", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, nil, false, "the model may have run it"},
		{"reset while writing", &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}, nil, false, "part of it arrived"},
		{"EOF before the answer", io.ErrUnexpectedEOF, nil, false, "the replica may have died running it"},
		{"server closed the kept-alive connection", errors.New("http: server closed idle connection"), nil, false, "ambiguous for a POST"},
		{"dial error after the caller left", dial(syscall.ECONNREFUSED), context.Canceled, false, "nobody waits"},
		{"dial cut by the request timeout", dial(errors.New("i/o timeout")), context.DeadlineExceeded, false, "408, not another replica"},
		{"no error", nil, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryable(tc.err, tc.ctx); got != tc.want {
				t.Errorf("retryable(%v, %v) = %v, want %v (%s)", tc.err, tc.ctx, got, tc.want, tc.wantReason)
			}
		})
	}
}

// deadAddr is a loopback address where nothing listens (a replica whose process is gone).
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A replica that refuses connections (its supervisor was killed and its process with it) costs
// no request: each goes to the other replica, and the dead one is out of the rotation at the first
// refusal, back once its readiness probe passes again.
func TestUnreachableReplicaIsDroppedAndRequestsGoElsewhere(t *testing.T) {
	alive := newReplica(t, "alive")
	f := newFixture(t, Config{})
	dead := Replica{ID: "dead-1", Addr: deadAddr(t), Ready: true}
	d := Deployment{Request: serving.RequestSettings{MaxConcurrentRequestsPerInstance: 1},
		Readiness: serving.Probe{Path: "/", InitialDelay: 1000}, // no probe runs on its own in the test
		Replicas:  []Replica{dead, alive.ready()}}               // dead first: with equal load it is picked first
	f.r.Set(Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": d}}})
	for i := range 50 {
		if a := f.call(t, "/endpoints/e/score", fmt.Sprint(i)); a.status != 200 || a.body != "alive" {
			t.Fatalf("request %d: %+v, want every answer from the live replica", i, a)
		}
	}
	if n := len(alive.received()); n != 50 {
		t.Fatalf("the live replica got %d requests, want 50", n)
	}
	if s := f.r.Snapshot()[0]; s.ReadyReplicas != 1 || s.Requests["5xx"] != 0 {
		t.Fatalf("after the refusals: %d replicas in rotation, %d answers 5xx; want 1 and 0", s.ReadyReplicas, s.Requests["5xx"])
	}

	// The dead replica's port answers again (a process took it): the probe brings it back.
	l, err := net.Listen("tcp", dead.Addr)
	if err != nil {
		t.Fatalf("the dead replica's port was taken meanwhile: %v", err)
	}
	back := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "back") })}
	go back.Serve(l)
	t.Cleanup(func() { back.Close() })
	f.r.ProbeOnce(t.Context())
	if s := f.r.Snapshot()[0]; s.ReadyReplicas != 2 {
		t.Fatalf("after a passing probe: %d replicas in rotation, want 2", s.ReadyReplicas)
	}
	if a := f.call(t, "/endpoints/e/score", "x"); a.status != 200 || a.body != "back" {
		t.Fatalf("after the probe: %+v, want the replica back in rotation (picked first)", a)
	}
}

// With no other replica the request is held as for a deployment with none ready, and served
// by the replica the table brings next.
func TestUnreachableLastReplicaHoldsTheRequest(t *testing.T) {
	next := newReplica(t, "next")
	woke := make(chan struct{}, 1)
	f := newFixture(t, Config{Wake: func(string, string) {
		select {
		case woke <- struct{}{}:
		default:
		}
	}})
	one := func(reps ...Replica) Table {
		return Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": {
			Readiness: serving.Probe{InitialDelay: 1000}, Replicas: reps}}}}
	}
	f.r.Set(one(Replica{ID: "dead-1", Addr: deadAddr(t), Ready: true}))
	got := make(chan answer, 1)
	go func() { got <- f.call(t, "/endpoints/e/score", "x") }()
	select {
	case <-woke:
	case a := <-got:
		t.Fatalf("answered at once: %+v, want the request held for a ready replica", a)
	}
	f.r.Set(one(Replica{ID: "dead-1", Addr: deadAddr(t), Ready: false}, next.ready()))
	if a := <-got; a.status != 200 || a.body != "next" {
		t.Fatalf("held request: %+v, want the next replica's answer", a)
	}
}

// A request that reached a replica is never sent again, whatever happened after: here the
// replica read it and dropped the connection without answering. The caller gets 502 and the
// other replica never sees it.
func TestRequestThatReachedAReplicaIsNotRetried(t *testing.T) {
	dropper, other := newReplica(t, "dropper"), newReplica(t, "other")
	dropper.setHandler(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	f := newFixture(t, Config{})
	d := deployment(dropper, other)
	d.Request.MaxConcurrentRequestsPerInstance = 1
	f.r.Set(Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": d}}})
	if a := f.call(t, "/endpoints/e/score", "once"); a.status != http.StatusBadGateway {
		t.Fatalf("%+v, want 502", a)
	}
	if n := len(other.received()); n != 0 {
		t.Fatalf("the other replica got %d copies of a request the first one had read", n)
	}
	if n := len(dropper.received()); n != 1 {
		t.Fatalf("the dropping replica got the request %d times, want once", n)
	}
}

// A replica that says it is draining (Hangar's scoring server once its supervisor is gone) has
// its answer passed on, without the header, and gets no request after it; its probes say the
// same, so it stays out.
func TestDrainingReplicaLeavesTheRotation(t *testing.T) {
	leaving, staying := newReplica(t, "leaving"), newReplica(t, "staying")
	leaving.setHandler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(scoring.DrainHeader, "draining")
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		io.WriteString(w, "leaving")
	})
	f := newFixture(t, Config{})
	d := deployment(leaving, staying) // leaving first: with equal load it is picked first
	d.Request.MaxConcurrentRequestsPerInstance = 1
	d.Readiness = serving.Probe{Path: "/", SuccessThreshold: 1, FailureThreshold: 30}
	f.r.Set(Table{"e": {Traffic: map[string]int{"d": 100}, Deployments: map[string]Deployment{"d": d}}})
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/endpoints/e/score", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "leaving" || resp.Header.Get(scoring.DrainHeader) != "" {
		t.Fatalf("the draining replica's answer: %d %q, %s %q; want it passed on without the header", resp.StatusCode, b, scoring.DrainHeader, resp.Header.Get(scoring.DrainHeader))
	}
	f.r.ProbeOnce(t.Context())
	for i := range 20 {
		if a := f.call(t, "/endpoints/e/score", "x"); a.status != 200 || a.body != "staying" {
			t.Fatalf("request %d after the drain: %+v, want the other replica", i, a)
		}
	}
	posts := 0
	for _, got := range leaving.received() {
		if got.method == http.MethodPost {
			posts++
		}
	}
	if posts != 1 {
		t.Fatalf("the draining replica got %d scoring requests, want the one it answered draining", posts)
	}
}

// Every request the router sends a replica carries that replica's secret, the callers' own, their
// mirrored copies and the probes alike; a secret a caller sends is replaced, never passed on.
func TestReplicaSecretOnEveryRequest(t *testing.T) {
	live, shadow := newReplica(t, "live"), newReplica(t, "shadow")
	f := newFixture(t, Config{})
	dl, ds := deployment(live), deployment(shadow)
	dl.Replicas[0].Secret, ds.Replicas[0].Secret = "hrs1.live", "hrs1.shadow"
	f.r.Set(Table{"e": {Traffic: map[string]int{"live": 100}, Mirror: map[string]int{"shadow": 100},
		Deployments: map[string]Deployment{"live": dl, "shadow": ds}}})
	for range 5 {
		if a := f.call(t, "/endpoints/e/score", "x", scoring.SecretHeader, "hrs1.forged"); a.status != 200 || a.body != "live" {
			t.Fatalf("%+v", a)
		}
	}
	testwait.Within(t, 20*time.Second, "the mirrored copies", func() bool { return len(shadow.received()) == 5 })
	f.r.ProbeOnce(t.Context())
	for _, c := range []struct {
		rp   *replica
		want string
	}{{live, "hrs1.live"}, {shadow, "hrs1.shadow"}} {
		got := c.rp.receivedSecrets()
		if len(got) != 7 { // 5 requests (or copies), a readiness and a liveness probe
			t.Fatalf("%s got %d requests, want 7", c.rp.name, len(got))
		}
		for i, s := range got {
			if s != c.want {
				t.Errorf("%s's request %d carried secret %q, want %q", c.rp.name, i, s, c.want)
			}
		}
	}
}
