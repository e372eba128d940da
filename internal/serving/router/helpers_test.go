package router

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

const key = "k-secret"

// replica is a real HTTP server on loopback standing in for a deployment's replica: it answers
// with its name and records what it received.
type replica struct {
	name string
	srv  *httptest.Server
	mu   sync.Mutex
	got  []received
	// secrets are the replica secrets the requests carried, in order.
	secrets []string
	// handle, when set, answers instead.
	handle func(w http.ResponseWriter, r *http.Request)
}

type received struct {
	method, path, query, body, auth string
}

func newReplica(t testing.TB, name string) *replica {
	t.Helper()
	rp := &replica{name: name}
	rp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rp.mu.Lock()
		rp.got = append(rp.got, received{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Get("Authorization")})
		rp.secrets = append(rp.secrets, r.Header.Get(scoring.SecretHeader))
		h := rp.handle
		rp.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		io.WriteString(w, name)
	}))
	t.Cleanup(rp.srv.Close)
	return rp
}

func (rp *replica) setHandler(h func(w http.ResponseWriter, r *http.Request)) {
	rp.mu.Lock()
	rp.handle = h
	rp.mu.Unlock()
}

func (rp *replica) received() []received {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]received(nil), rp.got...)
}

func (rp *replica) receivedSecrets() []string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]string(nil), rp.secrets...)
}

func (rp *replica) addr() string { return strings.TrimPrefix(rp.srv.URL, "http://") }

func (rp *replica) ready() Replica { return Replica{ID: rp.name + "-1", Addr: rp.addr(), Ready: true} }

// fixture is a router behind a real HTTP server, as the server mounts it.
type fixture struct {
	r   *Router
	srv *httptest.Server
	c   *http.Client
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	if cfg.Authorize == nil {
		cfg.Authorize = func(_, bearer string) bool { return bearer == key }
	}
	r := New(cfg)
	mux := http.NewServeMux()
	mux.Handle("/endpoints/", r)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); r.Close() })
	// The client's timeout only keeps a broken router from hanging the test; no assertion
	// depends on it.
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return &fixture{r: r, srv: srv, c: c}
}

type answer struct {
	status     int
	body       string
	deployment string
}

func (f *fixture) call(t testing.TB, path, body string, hdr ...string) answer {
	t.Helper()
	a, err := f.try(path, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) try(path, body string, hdr ...string) (answer, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := f.c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), resp.Header.Get(DeploymentHeader)}, err
}

func deployment(reps ...*replica) Deployment {
	d := Deployment{Request: serving.RequestSettings{MaxConcurrentRequestsPerInstance: 64}}
	for _, rp := range reps {
		d.Replicas = append(d.Replicas, rp.ready())
	}
	return d
}

// probing says whether any probe is under way (for tests).
func (r *Router) probing() bool {
	for _, d := range r.allDeps() {
		d.mu.Lock()
		for _, rs := range d.replicas {
			if rs.probe.busy {
				d.mu.Unlock()
				return true
			}
		}
		d.mu.Unlock()
	}
	return false
}
