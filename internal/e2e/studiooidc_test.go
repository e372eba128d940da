package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/hangar-ml/hangar/internal/server/oidctest"
)

// The studio's OpenID Connect sign-in, in Chromium against the real binary and a local issuer:
// an owner links a reader to a subject with `hangar user create --oidc-subject`, the login page
// offers "Sign in with <issuer>", one click goes through the issuer and back to the jobs list,
// and the session has the reader's role (a cancel is refused). The sign-in is in the audit log.
func TestStudioOIDCSignIn(t *testing.T) {
	ctx := browser(t)
	is := oidctest.New(t)
	secret := filepath.Join(t.TempDir(), "oidc-secret")
	if err := os.WriteFile(secret, []byte(is.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWS(t, "--oidc-issuer", is.URL, "--oidc-client-id", is.ClientID, "--oidc-client-secret-file", secret)
	w.ok("user", "create", "olga", "--role", "reader", "--oidc-subject", "sub-olga")
	is.Set("sub-olga", nil, "")
	link := strings.TrimSpace(w.ok("studio").stdout)
	base, _, ok := strings.Cut(link, "#login=")
	if !ok {
		t.Fatalf("hangar studio printed %q, want a link with #login=", link)
	}
	p := page{t: t, ctx: ctx, base: base, shots: artifactDir(t)}
	p.open("#/jobs") // no session: the login page
	p.wait("the sign-in button", `/^Sign in with 127\.0\.0\.1:\d+$/.test(document.querySelector('#oidc-login')?.textContent)`)
	p.shot("oidc-1-login")
	if err := chromedp.Run(ctx, chromedp.Click(`#oidc-login`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p.wait("the jobs list after the sign-in", `location.pathname === '/studio/' && !!document.querySelector('.page[data-page="jobs"]') && !document.querySelector('.login-needed')`)
	var status int
	p.eval(`fetch('/api/jobs/nope/cancel', {method: 'POST', headers: {'X-Hangar-Studio': '1'}}).then(r => r.status)`, &status,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
	if status != 403 {
		t.Errorf("a cancel with the reader's session: %d, want 403", status)
	}
	if out := w.ok("audit", "list").stdout; !strings.Contains(out, "user.login") || !strings.Contains(out, "olga") {
		t.Errorf("audit list has no user.login by olga:\n%s", out)
	}
}
