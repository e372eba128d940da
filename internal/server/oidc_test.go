package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/server/oidctest"
	"github.com/hangar-ml/hangar/internal/store"
)

// withOIDC serves ts again with the studio's OpenID Connect login on, against is.
func (ts *testServer) withOIDC(t *testing.T, is *oidctest.Issuer) {
	t.Helper()
	ts.srv.cfg.OIDC = &OIDC{Issuer: is.URL, ClientID: is.ClientID, ClientSecret: is.ClientSecret}
	hs := httptest.NewServer(ts.srv.Handler())
	t.Cleanup(hs.Close)
	ts.url = hs.URL
	ts.admin = api.NewClient(hs.URL, adminToken)
}

// browser is a cookie jar that follows redirects, as a browser signing in does.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: time.Minute}
}

// signIn goes through /studio/oidc/login, the issuer and the callback; it returns the last
// answer and its body.
func signIn(t *testing.T, ts *testServer, b *http.Client) (*http.Response, string) {
	t.Helper()
	resp, err := b.Get(ts.url + "/studio/oidc/login")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func sessionOf(t *testing.T, ts *testServer, b *http.Client) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(ts.url)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == studioCookie {
			return c
		}
	}
	return nil
}

// A user linked to an OpenID Connect subject signs in to the studio through the issuer and
// gets a session with their own role: a reader reads runs and cannot cancel one, a
// contributor can. The sign-in is audited as user.login.
func TestOIDCLoginMapsToUserRole(t *testing.T) {
	ts := newTestServer(t)
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	ctx := t.Context()
	for _, u := range []api.CreateUserRequest{
		{Name: "rita", Role: api.RoleReader, OIDCSubject: "sub-rita"},
		{Name: "carl", Role: api.RoleContributor, OIDCSubject: "sub-carl"},
	} {
		if _, err := ts.admin.Users.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	d := ts.createJob(t, "train")

	is.Set("sub-rita", nil, "")
	b := browser(t)
	resp, body := signIn(t, ts, b)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/studio/" {
		t.Fatalf("sign-in ended at %s with %s: %s", resp.Request.URL, resp.Status, body)
	}
	c := sessionOf(t, ts, b)
	if c == nil {
		t.Fatal("the sign-in set no studio session cookie")
	}
	if r := ts.studioReq(t, c, false, "GET", "/api/jobs/"+d.ID, ""); r.StatusCode != http.StatusOK {
		t.Errorf("reader's session reads a run: %s, want 200", r.Status)
	}
	if r := ts.studioReq(t, c, true, "POST", "/api/jobs/"+d.ID+"/cancel", ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("reader's session cancels a run: %s, want 403", r.Status)
	}
	r := ts.studioReq(t, c, false, "GET", "/api/jobs", "")
	if r.StatusCode != http.StatusOK {
		t.Errorf("reader's session lists runs: %s", r.Status)
	}

	is.Set("sub-carl", nil, "")
	b = browser(t)
	if resp, body := signIn(t, ts, b); resp.StatusCode != http.StatusOK {
		t.Fatalf("carl's sign-in: %s: %s", resp.Status, body)
	}
	if r := ts.studioReq(t, sessionOf(t, ts, b), true, "POST", "/api/jobs/"+d.ID+"/cancel", ""); r.StatusCode != http.StatusOK {
		t.Errorf("contributor's session cancels a run: %s, want 200", r.Status)
	}

	entries, err := ts.store.Access.Audit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var logins []string
	for _, e := range entries {
		if e.Action == "user.login" {
			logins = append(logins, e.User+" "+e.Object+" "+e.Detail)
		}
	}
	want := []string{"rita users/rita oidc subject=sub-rita", "carl users/carl oidc subject=sub-carl"}
	if strings.Join(logins, "; ") != strings.Join(want, "; ") {
		t.Errorf("audit user.login entries %q, want %q", logins, want)
	}
}

// Every spoilt sign-in is refused with a page that says why, sets no session, and shows no
// token: an unknown identity, a state not this browser's, and ID tokens with the wrong nonce,
// audience or issuer, or expired.
func TestOIDCLoginRefusals(t *testing.T) {
	ts := newTestServer(t)
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	if _, err := ts.admin.Users.Create(t.Context(), api.CreateUserRequest{Name: "rita", Role: api.RoleOwner, OIDCSubject: "sub-rita"}); err != nil {
		t.Fatal(err)
	}
	set := func(k string, v any) func(map[string]any) { return func(c map[string]any) { c[k] = v } }
	cases := []struct {
		name    string
		subject string
		claims  func(map[string]any)
		state   string
		status  int
		want    string
	}{
		{"unknown identity", "sub-olga", nil, "", 403, "hangar user create NAME --role ROLE --oidc-subject sub-olga"},
		{"state not this browser's", "sub-rita", nil, "forged-state", 400, "not started in this browser"},
		{"wrong nonce", "sub-rita", set("nonce", "other"), "", 403, "nonce"},
		{"wrong audience", "sub-rita", set("aud", "another-client"), "", 403, "audience"},
		{"wrong issuer", "sub-rita", set("iss", "https://evil.example"), "", 403, "issued by a different provider"},
		{"expired", "sub-rita", set("exp", time.Now().Add(-time.Hour).Unix()), "", 403, "expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is.Set(tc.subject, tc.claims, tc.state)
			b := browser(t)
			resp, body := signIn(t, ts, b)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%s: %s\n%s\nwant %d naming %q", resp.Request.URL.Path, resp.Status, body, tc.status, tc.want)
			}
			if resp.Request.URL.Path != oidcCallback {
				t.Errorf("refused at %s, want the callback", resp.Request.URL)
			}
			if code := resp.Request.URL.Query().Get("code"); code != "" && strings.Contains(body, code) {
				t.Errorf("the refusal page shows the authorization code")
			}
			if strings.Contains(body, "eyJ") {
				t.Errorf("the refusal page shows a token:\n%s", body)
			}
			if c := sessionOf(t, ts, b); c != nil {
				t.Errorf("a refused sign-in set a session cookie")
			}
		})
	}
}

// The callback's state is single use: the same callback again (a replay, or the back button)
// is refused even with the state cookie, and the first sign-in's session stands alone.
func TestOIDCCallbackSingleUse(t *testing.T) {
	ts := newTestServer(t)
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	if _, err := ts.admin.Users.Create(t.Context(), api.CreateUserRequest{Name: "rita", Role: api.RoleReader, OIDCSubject: "sub-rita"}); err != nil {
		t.Fatal(err)
	}
	is.Set("sub-rita", nil, "")
	b := browser(t)
	var callback *url.URL
	var stateCookie *http.Cookie
	b.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == oidcCallback {
			callback = req.URL
			for _, c := range b.Jar.Cookies(req.URL) {
				if c.Name == oidcStateCookie {
					stateCookie = c
				}
			}
		}
		return nil
	}
	if resp, body := signIn(t, ts, b); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %s: %s", resp.Status, body)
	}
	if callback == nil || stateCookie == nil {
		t.Fatalf("the sign-in passed no callback with a state cookie (%v, %v)", callback, stateCookie)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", callback.String(), nil)
	req.AddCookie(stateCookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "finished already") {
		t.Errorf("the callback replayed: %s\n%s\nwant 400", resp.Status, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == studioCookie && c.Value != "" {
			t.Errorf("a replayed callback set a session")
		}
	}
}

// Without --oidc-issuer the routes are not there; with it they are public (the browser has no
// session yet) and the login page learns the issuer's name.
func TestOIDCRoutesOnlyWhenConfigured(t *testing.T) {
	ts := newTestServer(t)
	if r := ts.studioReq(t, nil, false, "GET", "/studio/oidc/login", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("login without an issuer configured: %s, want 404", r.Status)
	}
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	public := map[string]bool{}
	for _, rt := range ts.srv.registered() {
		public[rt.pattern] = rt.access.public
	}
	for _, p := range []string{"GET /studio/oidc", "GET /studio/oidc/login", "GET " + oidcCallback} {
		if !public[p] {
			t.Errorf("%s is not a public route", p)
		}
	}
	r := ts.studioReq(t, nil, false, "GET", "/studio/oidc", "")
	b, _ := io.ReadAll(r.Body)
	u, _ := url.Parse(is.URL)
	if r.StatusCode != http.StatusOK || !strings.Contains(string(b), `"name":"`+u.Host+`"`) {
		t.Errorf("issuer info: %s %s, want the issuer's host %s", r.Status, b, u.Host)
	}
}

// A subject is linked to one user only, and must be printable ASCII.
func TestCreateUserOIDCSubject(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	if _, err := ts.admin.Users.Create(ctx, api.CreateUserRequest{Name: "rita", Role: api.RoleReader, OIDCSubject: "sub-rita"}); err != nil {
		t.Fatal(err)
	}
	var ae *api.Error
	_, err := ts.admin.Users.Create(ctx, api.CreateUserRequest{Name: "rob", Role: api.RoleOwner, OIDCSubject: "sub-rita"})
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		t.Errorf("a second user with rita's subject: %v, want 409", err)
	}
	_, err = ts.admin.Users.Create(ctx, api.CreateUserRequest{Name: "rob", Role: api.RoleOwner, OIDCSubject: "a b"})
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(err.Error(), "oidc_subject") {
		t.Errorf("a subject with a space: %v, want 400 naming oidc_subject", err)
	}
}

// A callback carried to another browser (one without the state cookie, as in a login CSRF that
// signs a victim in as the attacker) is refused, and does not spend the sign-in of the browser
// that started it.
func TestOIDCCallbackBoundToBrowser(t *testing.T) {
	ts := newTestServer(t)
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	if _, err := ts.admin.Users.Create(t.Context(), api.CreateUserRequest{Name: "rita", Role: api.RoleReader, OIDCSubject: "sub-rita"}); err != nil {
		t.Fatal(err)
	}
	is.Set("sub-rita", nil, "")
	a := browser(t)
	a.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == oidcCallback {
			return http.ErrUseLastResponse // stop before the callback
		}
		return nil
	}
	resp, _ := signIn(t, ts, a)
	callback := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.Contains(callback, oidcCallback) {
		t.Fatalf("the issuer answered %s, Location %q; want a redirect to the callback", resp.Status, callback)
	}
	other := browser(t)
	r, err := other.Get(callback)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusBadRequest || sessionOf(t, ts, other) != nil {
		t.Errorf("the callback in another browser: %s %s, want 400 and no session", r.Status, body)
	}
	a.CheckRedirect = nil
	r, err = a.Get(callback)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK || sessionOf(t, ts, a) == nil {
		t.Errorf("the callback in the browser that started it, after the other's: %s, want 200 and a session", r.Status)
	}
}

// Whatever answers at the issuer's address cannot make the server read without end: an
// answer over 1 MiB fails to read, one within it reads whole.
func TestOIDCIssuerAnswersBounded(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := maxIssuerBody
		if r.URL.Path == "/huge" {
			n = 4 * maxIssuerBody
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	t.Cleanup(hs.Close)
	client := newOIDCFlow(OIDC{Issuer: hs.URL}).client
	for path, wantErr := range map[string]bool{"/huge": true, "/fits": false} {
		resp, err := client.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if (err != nil) != wantErr || (!wantErr && len(b) != maxIssuerBody) {
			t.Errorf("%s: read %d bytes, error %v; want an error: %v", path, len(b), err, wantErr)
		}
	}
}

// A user made before OpenID Connect was set up is linked afterwards and signs in as themselves,
// keeping their token; the link is audited; a subject another user holds, the workspace token's
// user, and a subject with a space are refused; unlinked, the identity is refused again.
func TestLinkExistingUserToOIDCSubject(t *testing.T) {
	ts := newTestServer(t)
	is := oidctest.New(t)
	ts.withOIDC(t, is)
	ctx := t.Context()
	created, err := ts.admin.Users.Create(ctx, api.CreateUserRequest{Name: "rita", Role: api.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.admin.Users.Create(ctx, api.CreateUserRequest{Name: "carl", Role: api.RoleReader, OIDCSubject: "sub-carl"}); err != nil {
		t.Fatal(err)
	}
	is.Set("sub-rita", nil, "")
	if resp, body := signIn(t, ts, browser(t)); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "hangar user link-oidc NAME sub-rita") {
		t.Fatalf("an unlinked identity: %s, want 403 naming the link command: %s", resp.Status, body)
	}
	u, err := ts.admin.Users.SetOIDCSubject(ctx, "rita", "sub-rita")
	if err != nil || u.OIDCSubject != "sub-rita" || u.Role != api.RoleReader {
		t.Fatalf("link rita: %+v, %v", u, err)
	}
	b := browser(t)
	if resp, body := signIn(t, ts, b); resp.StatusCode != http.StatusOK {
		t.Fatalf("rita's sign-in once linked: %s: %s", resp.Status, body)
	}
	if who, err := api.NewClient(ts.url, created.Token.Token).Users.WhoAmI(ctx); err != nil || who.User != "rita" {
		t.Errorf("rita's token after linking: %+v, %v", who, err)
	}

	var ae *api.Error
	for _, tc := range []struct {
		name, sub string
		status    int
		says      string
	}{
		{"rita", "sub-carl", http.StatusConflict, "another user's"},
		{api.AdminUser, "sub-admin", http.StatusConflict, "workspace token's owner"},
		{"rita", "a b", http.StatusBadRequest, "subject"},
		{"nobody", "sub-x", http.StatusNotFound, "nobody"},
	} {
		if _, err := ts.admin.Users.SetOIDCSubject(ctx, tc.name, tc.sub); !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("link %s to %q: %v, want %d saying %q", tc.name, tc.sub, err, tc.status, tc.says)
		}
	}

	if _, err := ts.admin.Users.SetOIDCSubject(ctx, "rita", ""); err != nil {
		t.Fatal(err)
	}
	if resp, _ := signIn(t, ts, browser(t)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("rita's sign-in once unlinked: %s, want 403", resp.Status)
	}
	entries, err := ts.store.Access.Audit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "user.") && strings.Contains(e.Action, "link") {
			got = append(got, e.User+" "+e.Action+" "+e.Object+" "+e.Detail)
		}
	}
	want := "admin user.link-oidc users/rita subject=sub-rita; admin user.unlink-oidc users/rita "
	if strings.Join(got, "; ") != want {
		t.Errorf("audit entries %q, want %q", strings.Join(got, "; "), want)
	}
}
