package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// studioReq sends a request as a browser would: the session cookie, and the studio's header
// when csrf is set.
func (ts *testServer) studioReq(t *testing.T, cookie *http.Cookie, csrf bool, method, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if csrf {
		req.Header.Set(StudioCSRFHeader, "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// studioLogin gets a login code with the workspace token and trades it for the session cookie.
func (ts *testServer) studioLogin(t *testing.T) *http.Cookie {
	t.Helper()
	code, err := ts.admin.Users.StudioLoginCode(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	resp := ts.studioReq(t, nil, true, "POST", "/studio/login", `{"code":"`+code.Code+`"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %s", resp.Status)
	}
	for _, c := range resp.Cookies() {
		if c.Name == studioCookie {
			return c
		}
	}
	t.Fatal("login set no session cookie")
	return nil
}

func TestStudioLoginCode(t *testing.T) {
	ts := newTestServer(t)
	code, err := ts.admin.Users.StudioLoginCode(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"code":"` + code.Code + `"}`
	if resp := ts.studioReq(t, nil, false, "POST", "/studio/login", body); resp.StatusCode != http.StatusForbidden {
		t.Errorf("login without the studio header: %s, want 403 (a form on another site could post it)", resp.Status)
	}
	if resp := ts.studioReq(t, nil, true, "POST", "/studio/login", `{"code":"WRONG"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with a code never minted: %s, want 401", resp.Status)
	}
	resp := ts.studioReq(t, nil, true, "POST", "/studio/login", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %s", resp.Status)
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == studioCookie {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Expires.IsZero() {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/ and an expiry", c)
	}
	if strings.Contains(c.Value, adminToken) || strings.Contains(c.Value, code.Code) {
		t.Errorf("cookie %q carries the workspace token or the login code", c.Value)
	}
	if resp := ts.studioReq(t, nil, true, "POST", "/studio/login", body); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of a login code: %s, want 401", resp.Status)
	}
	// A run token cannot mint login codes: a job's script must not open a browser session.
	d := ts.createJob(t, "j1")
	if st, _ := ts.raw(t, ts.ctrl.RunToken(d.ID), "POST", "/api/studio/login-codes", ""); st != http.StatusForbidden {
		t.Errorf("login code with a run token: %d, want 403", st)
	}
	if st, _ := ts.raw(t, "", "POST", "/api/studio/login-codes", ""); st != http.StatusUnauthorized {
		t.Errorf("login code without a token: %d, want 401", st)
	}
}

func TestStudioLoginCodeExpires(t *testing.T) {
	ts := newTestServer(t)
	now := time.Now()
	ts.srv.studio.now = func() time.Time { return now }
	code := ts.srv.studio.newCode(api.AdminUser)
	now = now.Add(loginCodeTTL)
	if resp := ts.studioReq(t, nil, true, "POST", "/studio/login", `{"code":"`+code.Code+`"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with an expired code: %s, want 401", resp.Status)
	}
	for range maxLoginCodes + 10 {
		ts.srv.studio.newCode(api.AdminUser)
	}
	if n := len(ts.srv.studio.codes); n > maxLoginCodes {
		t.Errorf("%d login codes kept, want at most %d", n, maxLoginCodes)
	}
}

// A session reads runs and computes and may cancel a run (with the header); nothing else.
func TestStudioSessionScope(t *testing.T) {
	ts := newTestServer(t)
	d := ts.createJob(t, "j1")
	c := ts.studioLogin(t)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		csrf   bool
		want   int
	}{
		{"list jobs", "GET", "/api/jobs", "", false, 200},
		{"one job", "GET", "/api/jobs/" + d.ID, "", false, 200},
		{"metrics", "GET", "/api/jobs/" + d.ID + "/metrics", "", false, 200},
		{"computes", "GET", "/api/computes", "", false, 200},
		{"environments", "GET", "/api/environments", "", false, 200},
		{"settings are not the studio's", "GET", "/api/settings", "", false, 403},
		{"a run's spec is not the studio's", "GET", "/api/runs/" + d.ID + "/spec", "", false, 403},
		{"create a job", "POST", "/api/jobs", `{"spec":{"command":"id"}}`, true, 403},
		{"delete a compute", "DELETE", "/api/computes/local", "", true, 403},
		{"mint login codes", "POST", "/api/studio/login-codes", "", true, 403},
		{"cancel without the header", "POST", "/api/jobs/" + d.ID + "/cancel", "", false, 403},
		{"cancel", "POST", "/api/jobs/" + d.ID + "/cancel", "", true, 200},
	}
	for _, tt := range tests {
		if resp := ts.studioReq(t, c, tt.csrf, tt.method, tt.path, tt.body); resp.StatusCode != tt.want {
			t.Errorf("%s: %s %s: %s, want %d", tt.name, tt.method, tt.path, resp.Status, tt.want)
		}
	}
	run, err := ts.admin.Jobs.Get(t.Context(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "Canceled" && run.Status != "CancelRequested" {
		t.Errorf("after the studio's cancel the run is %s", run.Status)
	}
}

func TestStudioSessionRefused(t *testing.T) {
	ts := newTestServer(t)
	c := ts.studioLogin(t)
	forged := *c
	forged.Value = c.Value[:len(c.Value)-1] + "0"
	if forged.Value == c.Value {
		forged.Value = c.Value[:len(c.Value)-1] + "1"
	}
	if resp := ts.studioReq(t, &forged, false, "GET", "/api/jobs", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged cookie: %s, want 401", resp.Status)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.url+"/api/jobs", nil)
	req.AddCookie(c)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site request with the cookie: %s, want 403", resp.Status)
	}
	ts.srv.studio.now = func() time.Time { return time.Now().Add(studioSessionTTL) }
	if resp := ts.studioReq(t, c, false, "GET", "/api/jobs", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired session: %s, want 401", resp.Status)
	}
	// A session from a workspace whose token was replaced is not valid.
	other := newStudioAuth("another token", nil)
	if other.key.Verify(c.Value, time.Now()) {
		t.Error("a session verified under another workspace token")
	}
	// Logging out clears the cookie.
	out := ts.studioReq(t, c, true, "POST", "/studio/logout", "")
	if out.StatusCode != http.StatusNoContent || len(out.Cookies()) != 1 || out.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %s, cookies %+v", out.Status, out.Cookies())
	}
}

// The pages come with a strict Content-Security-Policy and load no inline script.
func TestStudioPages(t *testing.T) {
	ts := newTestServer(t)
	resp := ts.studioReq(t, nil, false, "GET", "/", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %s", resp.Status)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "default-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q allows unsafe sources", csp)
	}
	var page strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		page.WriteString(string(buf[:n]))
		if err != nil {
			break
		}
	}
	html := page.String()
	if !strings.Contains(html, `src="/studio/core.js"`) {
		t.Errorf("index.html does not load core.js:\n%s", html)
	}
	for _, tag := range strings.Split(html, "<script")[1:] {
		if !strings.HasPrefix(strings.TrimSpace(tag), "src=") || !strings.Contains(tag, "></script>") {
			t.Errorf("inline or malformed script: <script%s", tag[:min(len(tag), 80)])
		}
	}
	for path, ctype := range map[string]string{"/studio/core.js": "javascript", "/studio/app.css": "text/css",
		"/studio/uPlot.iife.min.js": "javascript"} {
		r := ts.studioReq(t, nil, false, "GET", path, "")
		if r.StatusCode != http.StatusOK || !strings.Contains(r.Header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: %s %s", path, r.Status, r.Header.Get("Content-Type"))
		}
	}
	if r := ts.studioReq(t, nil, false, "GET", "/studio/../server.go", ""); r.StatusCode == http.StatusOK {
		t.Errorf("GET outside the assets: %s", r.Status)
	}
	var health api.Health
	r := ts.studioReq(t, nil, false, "GET", "/api/health", "")
	if err := json.NewDecoder(r.Body).Decode(&health); err != nil || !health.OK {
		t.Errorf("health beside the studio: %v %+v", err, health)
	}
}
