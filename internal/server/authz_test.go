package server

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// policyRoles is docs/users.md's role table as rules over a route's pattern, written apart
// from the route table so that a route registered with the wrong access fails the matrix.
func policyRoles(pattern string) []string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok { // a pattern for any method (MLflow's ENDPOINT_NOT_FOUND catch-alls): call it with GET
		method, path = http.MethodGet, pattern
	}
	under := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if path == p || strings.HasPrefix(path, p+"/") {
				return true
			}
		}
		return false
	}
	owner := []string{api.RoleOwner}
	switch {
	case path == "/api/runs/{id}/secrets", path == "/api/runs/{id}/datastore-credentials", path == "/api/runs/{id}/connection-credentials":
		return nil // a run's own token only
	case under("/api/runs", "/api/users", "/api/audit", "/api/workspace"):
		return owner // runs' supervisors' routes; users and roles; the audit log; the blob collector
	case under("/api/2.0/mlflow/webhooks"):
		return owner // MLflow's registry webhooks, reads too: the server sends requests to their URLs
	case under("/api/tokens", "/api/whoami", "/api/studio/login-codes"):
		return allRoles // everyone's own
	case method == http.MethodGet || strings.HasSuffix(path, "/search") || strings.HasSuffix(path, "/get-latest-versions"):
		return allRoles
	case under("/api/secrets", "/api/settings"):
		return owner
	case under("/api/computes", "/api/nodes", "/api/sizes"):
		return []string{api.RoleOwner, api.RoleComputeOperator}
	}
	return []string{api.RoleOwner, api.RoleContributor}
}

// caller is one set of credentials of the authorization matrix and what it may do.
type caller struct {
	name, token string
	// allowed says whether the route (pattern, registered with a) lets the caller through.
	allowed func(pattern string, a access) bool
	// unauthenticated callers get 401 everywhere, the others 403 where refused.
	unauthenticated bool
}

// newUserToken creates user with role through the API and returns their first token.
func newUserToken(t *testing.T, ts *testServer, user, role string) string {
	t.Helper()
	rep, err := ts.admin.Users.Create(t.Context(), api.CreateUserRequest{Name: user, Role: role})
	if err != nil {
		t.Fatalf("create user %s: %v", user, err)
	}
	return rep.Token.Token
}

// matrixCallers are every role, a live run's token, and credentials that must get 401.
func matrixCallers(t *testing.T, ts *testServer, runToken string) []caller {
	t.Helper()
	ctx := t.Context()
	var out []caller
	for _, role := range api.Roles {
		out = append(out, caller{name: role, token: newUserToken(t, ts, "u-"+role, role),
			allowed: func(p string, _ access) bool { return slices.Contains(policyRoles(p), role) }})
	}
	out = append(out, caller{name: "workspace token", token: adminToken,
		allowed: func(p string, _ access) bool { return slices.Contains(policyRoles(p), api.RoleOwner) }})
	out = append(out, caller{name: "run token", token: runToken, allowed: func(_ string, a access) bool { return a.runs }})

	never := func(string, access) bool { return false }
	revoked := newUserToken(t, ts, "u-revoked", api.RoleOwner)
	if _, err := ts.admin.Tokens.Revoke(ctx, "u-revoked", "first"); err != nil {
		t.Fatal(err)
	}
	expired := tokens.NewPersonal()
	past := time.Now().UTC().Add(-time.Hour)
	if err := ts.store.Access.CreateUserToken(ctx, store.UserToken{User: "u-owner", Name: "old", Hash: tokens.PersonalHash(expired),
		CreatedAt: past.Add(-time.Hour), ExpiresAt: past}); err != nil {
		t.Fatal(err)
	}
	other := newTestServer(t) // another workspace, with the same kinds of credentials
	otherOwner := newUserToken(t, other, "u-owner", api.RoleOwner)
	for _, c := range []struct{ name, token string }{{"no token", ""}, {"revoked token", revoked},
		{"expired token", expired}, {"another workspace's owner token", otherOwner},
		{"another workspace's run token", other.ctrl.RunToken(other.createJob(t, "elsewhere").ID)}} {
		out = append(out, caller{name: c.name, token: c.token, allowed: never, unauthenticated: true})
	}
	return out
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// matrixRequest is a request for a route's pattern: its wildcards filled, {id} with the run's.
func matrixRequest(t *testing.T, base, pattern, runID, token string) *http.Request {
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	if !ok { // a pattern for any method (MLflow's ENDPOINT_NOT_FOUND catch-alls): call it with GET
		method, path = http.MethodGet, pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		switch w {
		case "{id}":
			return runID
		case "{path...}":
			return "0/artifacts/x"
		}
		return "x"
	})
	body := io.Reader(http.NoBody)
	if method != http.MethodGet && method != http.MethodDelete {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// publicRoutes are the routes outside user authentication, each with what it checks instead
// (docs/routes.md prints it): a new one must be added here on purpose, with a reason.
var publicRoutes = map[string]string{
	"GET /api/health":                 "liveness: no data without a user's token (with one, the workspace directory and pid)",
	"POST /api/agents/join":           "a join token",
	"POST /api/agents/{id}/heartbeat": "the node's agent token",
	"POST /api/replica-claims":        "a deployment's claim token",
	"GET /{$}":                        "the studio's static pages",
	"GET /studio/":                    "the studio's static pages",
	"POST /studio/login":              "a one-time login code",
	"POST /studio/logout":             "none: it clears the session cookie",
	"/instances/{name}/jupyter/":      "its own check: the instance's owner or a workspace owner (jupyter.go)",
	"GET /instances/{name}/ssh":       "its own check: the instance's owner or a workspace owner, by token (ssh.go)",
	"GET /studio/oidc":                "none: whether the studio offers an OpenID Connect sign-in, and the issuer's name",
	"GET /studio/oidc/login":          "none: it sends the browser to the issuer",
	"GET /studio/oidc/callback":       "the issuer's answer: its state cookie, code and signed ID token",
}

// TestAuthorizationMatrix calls every registered route (the server's own table, so a new
// route is in it) as every role (expecting what policyRoles says), a run's token, no token, a revoked, an expired and another
// workspace's token, through the real handler: refused callers get 401 or 403 (a role's 403
// names the role), allowed ones anything else.
func TestAuthorizationMatrix(t *testing.T) {
	ts := newTestServer(t)
	run := ts.createJob(t, "matrix")
	callers := matrixCallers(t, ts, ts.ctrl.RunToken(run.ID))
	table := ts.srv.registered()
	if len(table) < 100 {
		t.Fatalf("the route table has %d routes; Handler registers more", len(table))
	}
	hc := &http.Client{Timeout: time.Minute}
	for _, rt := range table {
		switch {
		case rt.access.public:
			if _, ok := publicRoutes[rt.pattern]; !ok {
				t.Errorf("%s is public but not in publicRoutes", rt.pattern)
			}
			continue
		case rt.access.forward: // /ajax-api/: the /api/ route it forwards to is in the table
			continue
		}
		for _, c := range callers {
			resp, err := hc.Do(matrixRequest(t, ts.url, rt.pattern, run.ID, c.token))
			if err != nil {
				t.Fatalf("%s as %s: %v", rt.pattern, c.name, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			st := resp.StatusCode
			refused := st == http.StatusUnauthorized || st == http.StatusForbidden
			switch want := c.allowed(rt.pattern, rt.access); {
			case want && refused:
				t.Errorf("%s as %s: %d %s, want allowed", rt.pattern, c.name, st, b)
			case !want && c.unauthenticated && st != http.StatusUnauthorized:
				t.Errorf("%s as %s: %d %s, want 401", rt.pattern, c.name, st, b)
			case !want && !refused:
				t.Errorf("%s as %s: %d %s, want 403", rt.pattern, c.name, st, b)
			case !want && slices.Contains(api.Roles, c.name) && !strings.Contains(string(b), "the role "+c.name):
				t.Errorf("%s as %s: %s, want a message naming the role", rt.pattern, c.name, b)
			}
		}
	}
}

// A reader's studio session reads but cannot cancel a run, although cancelling is on the
// studio's allowlist: a session has at most its user's role. A contributor's can.
func TestStudioSessionHasItsUsersRole(t *testing.T) {
	ts := newTestServer(t)
	ts.createJob(t, "j1")
	for _, tc := range []struct {
		role       string
		cancelWant int
	}{{api.RoleReader, http.StatusForbidden}, {api.RoleContributor, http.StatusOK}} {
		user := "s-" + tc.role
		tok := newUserToken(t, ts, user, tc.role)
		c := ts.studioLoginAs(t, api.NewClient(ts.url, tok))
		if resp := ts.studioReq(t, c, false, "GET", "/api/jobs", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET /api/jobs: %s", tc.role, resp.Status)
		}
		if resp := ts.studioReq(t, c, true, "POST", "/api/jobs/j1/cancel", ""); resp.StatusCode != tc.cancelWant {
			t.Errorf("%s: cancel: %s, want %d", tc.role, resp.Status, tc.cancelWant)
		}
		// Deleting the user ends the session at once.
		if err := ts.admin.Users.Delete(t.Context(), user); err != nil {
			t.Fatal(err)
		}
		if resp := ts.studioReq(t, c, false, "GET", "/api/jobs", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: session of a deleted user: %s, want 401", tc.role, resp.Status)
		}
	}
}

// studioLoginAs gets a login code with cl's token and trades it for the session cookie.
func (ts *testServer) studioLoginAs(t *testing.T, cl *api.Client) *http.Cookie {
	t.Helper()
	code, err := cl.Users.StudioLoginCode(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	resp := ts.studioReq(t, nil, true, "POST", "/studio/login", `{"code":"`+code.Code+`"}`)
	for _, c := range resp.Cookies() {
		if c.Name == studioCookie && resp.StatusCode == http.StatusOK {
			return c
		}
	}
	t.Fatalf("login: %s, no session cookie", resp.Status)
	return nil
}

// A user's job records them as its submitter whatever the client claims, so that per-user
// limits (keyed on created_by by the cluster scheduler) count real users; the workspace token
// is admin, as whoami says, whatever OS user the CLI runs as.
func TestSubmitterIsTheRealUser(t *testing.T) {
	ts := newTestServer(t)
	carl := api.NewClient(ts.url, newUserToken(t, ts, "carl", api.RoleContributor))
	for _, tc := range []struct {
		client  *api.Client
		claimed string
		want    string
	}{{carl, "alice", "carl"}, {carl, "", "carl"}, {ts.admin, "root", api.AdminUser}, {ts.admin, "", api.AdminUser}} {
		sp := job.Spec{Command: "echo", Meta: asset.Meta{Properties: map[string]string{}}}
		if tc.claimed != "" {
			sp.Properties["created_by"] = tc.claimed
		}
		d, err := tc.client.Jobs.Create(t.Context(), api.CreateJobRequest{Spec: sp})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := ts.store.Runs.Run(t.Context(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Spec.Properties["created_by"]; got != tc.want {
			t.Errorf("claimed %q: stored created_by %q, want %q", tc.claimed, got, tc.want)
		}
	}
}

// Changes land in the audit log with who made them; a secret's value never does, and a
// refused change is not recorded.
func TestAuditRecordsChangesNotValues(t *testing.T) {
	ts := newSecretServer(t) // secrets a and b set
	rita := api.NewClient(ts.url, newUserToken(t, ts, "rita", api.RoleReader))
	if _, err := ts.admin.Secrets.Set(t.Context(), "hf_token", "s3cret-value"); err != nil {
		t.Fatal(err)
	}
	if _, err := rita.Secrets.Set(t.Context(), "hf_token", "other-value"); err == nil {
		t.Fatal("a reader set a secret")
	}
	if _, err := rita.Tokens.Revoke(t.Context(), "", "first"); err != nil {
		t.Fatal(err)
	}
	es, err := ts.admin.Users.Audit(t.Context(), "", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.User+" "+e.Action+" "+e.Object)
		if strings.Contains(e.Detail+e.Object, "value") { // valueA, valueB, s3cret-value
			t.Errorf("audit entry carries a value: %+v", e)
		}
	}
	want := []string{"admin secret.set secrets/a", "admin secret.set secrets/b", "admin user.create users/rita", "admin token.create users/rita/tokens/first",
		"admin secret.set secrets/hf_token", "rita token.revoke users/rita/tokens/first"}
	slices.Sort(got) // newSecretServer sets a and b in either order
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if es, _ := ts.admin.Users.Audit(t.Context(), "rita", time.Time{}); len(es) != 1 {
		t.Errorf("audit of rita: %+v", es)
	}
}

// Users see and revoke their own tokens only; owners anyone's. A new token is shown once:
// listings never carry it.
func TestTokensAreTheirOwners(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	rita := api.NewClient(ts.url, newUserToken(t, ts, "rita", api.RoleReader))
	newUserToken(t, ts, "carl", api.RoleContributor)
	laptop, err := rita.Tokens.Create(ctx, api.CreateTokenRequest{Name: "laptop", ExpiresDays: 30})
	if err != nil || !strings.HasPrefix(laptop.Token, "hpt_") || laptop.User != "rita" {
		t.Fatalf("create: %+v, %v", laptop, err)
	}
	if d := laptop.ExpiresAt.Sub(laptop.CreatedAt); d != 30*24*time.Hour {
		t.Errorf("a 30-day token lasts %v", d)
	}
	for _, call := range []func() error{
		func() error { _, err := rita.Tokens.List(ctx, "carl"); return err },
		func() error { _, err := rita.Tokens.List(ctx, "*"); return err },
		func() error { _, err := rita.Tokens.Revoke(ctx, "carl", "first"); return err },
		func() error {
			_, err := rita.Tokens.Create(ctx, api.CreateTokenRequest{Name: "x", User: "carl"})
			return err
		},
	} {
		if st, _ := apiStatus(t, call()); st != http.StatusForbidden {
			t.Errorf("a reader on carl's tokens: status %d, want 403", st)
		}
	}
	own, err := rita.Tokens.List(ctx, "")
	if err != nil || len(own) != 2 {
		t.Fatalf("rita's tokens: %+v, %v", own, err)
	}
	all, err := ts.admin.Tokens.List(ctx, "*")
	if err != nil || len(all) != 3 {
		t.Fatalf("every token: %+v, %v", all, err)
	}
	if _, err := ts.admin.Tokens.Revoke(ctx, "rita", "laptop"); err != nil {
		t.Fatal(err)
	}
	if st, _ := apiStatus(t, func() error { _, err := api.NewClient(ts.url, laptop.Token).Users.WhoAmI(ctx); return err }()); st != http.StatusUnauthorized {
		t.Errorf("a revoked token: status %d, want 401", st)
	}
	b, _ := json.Marshal(all)
	if strings.Contains(string(b), laptop.Token) || strings.Contains(string(b), "hpt_") {
		t.Errorf("a listing carries a token: %s", b)
	}
}
