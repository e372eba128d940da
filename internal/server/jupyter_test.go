package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/controller/instances"
)

func TestJupyterPathOK(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"/instances/dev/jupyter/", true},
		{"/instances/dev/jupyter/tree", true},
		{"/instances/dev/jupyter/api/contents/my%20notes.ipynb", true},
		{"/instances/dev/jupyter/api/kernels/abc/channels", true},
		{"/instances/dev/jupyter/api/%2e%2e/%2E%2E/x", false},
		{"/instances/dev/jupyter/api/contents/a%2F..%2F..%2Fetc", false},
		{"/instances/dev/jupyter/a%5C..%5Cb", false},
		{"/instances/dev/jupyter/./x", false},
		{"/instances/dev/jupyter/bad%zzescape", false},
		{"/instances/other/jupyter/", false},
		{"/instances/dev/jupyterx/", false},
	}
	for _, c := range cases {
		if err := jupyterPathOK("dev", c.path); (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.path, err, c.ok)
		}
	}
}

func TestJupyterAllowed(t *testing.T) {
	cases := []struct {
		name string
		p    principal
		ok   bool
	}{
		{"the instance's owner, a reader", principal{admin: true, user: "opal", role: api.RoleReader}, true},
		{"a workspace owner", principal{admin: true, user: "olga", role: api.RoleOwner}, true},
		{"the workspace token", adminPrincipal, true},
		{"another reader", principal{admin: true, user: "rita", role: api.RoleReader}, false},
		{"a compute operator", principal{admin: true, user: "cora", role: api.RoleComputeOperator}, false},
		{"a run token", principal{runID: "r1"}, false},
		{"no user", principal{}, false},
	}
	for _, c := range cases {
		err := jupyterAllowed(c.p, "dev", "opal")
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "only its owner (opal)") {
			t.Errorf("%s: the refusal does not say who may: %v", c.name, err)
		}
	}
}

// The proxy keeps the caller's credentials and cookies, sends the relay's key, keeps the path
// and the Host (Jupyter's websocket origin check), and drops Jupyter's cookies from the answer.
func TestJupyterReverseHeaders(t *testing.T) {
	var got *http.Request
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		http.SetCookie(w, &http.Cookie{Name: "username-x", Value: "jupyter-login"})
		w.Write([]byte("jupyter page"))
	}))
	defer upstream.Close()
	s := &Server{log: slog.New(slog.DiscardHandler)}
	rp := s.instances.jupyterReverse(&instances.JupyterTarget{Addr: strings.TrimPrefix(upstream.URL, "http://"), Token: "jtok"})
	req := httptest.NewRequest(http.MethodGet, "http://hangar.example:8080/instances/dev/jupyter/tree?x=1", nil)
	req.Header.Set("Authorization", "Bearer hpt_secret")
	req.Header.Set("Cookie", studioCookie+"=session")
	rec := httptest.NewRecorder()
	rp.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "jupyter page" {
		t.Fatalf("answer %d %q", rec.Code, rec.Body)
	}
	if got.URL.Path != "/instances/dev/jupyter/tree" || got.URL.RawQuery != "x=1" || got.Host != "hangar.example:8080" {
		t.Errorf("forwarded %s ?%s Host %s", got.URL.Path, got.URL.RawQuery, got.Host)
	}
	if a := got.Header.Values("Authorization"); len(a) != 1 || a[0] != "token jtok" {
		t.Errorf("forwarded Authorization %q, want Jupyter's token only", a)
	}
	if c := got.Header.Get("Cookie"); c != "" {
		t.Errorf("forwarded the caller's cookies: %q", c)
	}
	if sc := rec.Header().Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("passed Jupyter's cookies on: %q", sc)
	}
}
