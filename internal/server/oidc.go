package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// The studio's OpenID Connect login (docs/users.md): the authorization code flow with PKCE,
// state and nonce. /studio/oidc/login sends the browser to the issuer with a fresh state bound
// to the browser by a short-lived cookie; /studio/oidc/callback takes the state (once), trades
// the code for an ID token, verifies it (signature, issuer, audience, expiry, nonce) and signs
// the browser in as the Hangar user linked to the token's subject (`hangar user create NAME
// --oidc-subject SUB`), with the same session cookie a one-time login code gives. An identity
// linked to no user is refused: accounts are never made on the fly.

// OIDC configures the studio's OpenID Connect login; a nil *OIDC in Config turns it off.
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is where the issuer sends the browser back; empty: Config.URL() +
	// "/studio/oidc/callback".
	RedirectURL string
	// HTTPClient reaches the issuer; nil: one with a 30 s timeout.
	HTTPClient *http.Client
}

const (
	oidcStateCookie = "hangar_oidc_state"
	oidcCallback    = "/studio/oidc/callback"
	oidcLoginTTL    = 10 * time.Minute
	// maxOIDCPending bounds the sign-ins started and not finished; the oldest goes first.
	maxOIDCPending = 1024
	// maxIssuerBody bounds every answer read from the issuer (discovery, keys, tokens).
	maxIssuerBody = 1 << 20
)

// oidcFlow holds the issuer's discovered configuration and the sign-ins under way.
type oidcFlow struct {
	cfg    OIDC
	client *http.Client
	now    func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider // nil until discovery succeeds: the server starts while the issuer is down
	pending  map[string]oidcPending
}

// oidcPending is a sign-in started at /studio/oidc/login, by the hash of its state.
type oidcPending struct {
	nonce, verifier string
	exp             time.Time
}

func newOIDCFlow(cfg OIDC) *oidcFlow {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	bounded := *client
	bounded.Transport = boundedTransport{base: base, max: maxIssuerBody}
	return &oidcFlow{cfg: cfg, client: &bounded, now: time.Now, pending: map[string]oidcPending{}}
}

// boundedTransport cuts every response body at max bytes: an issuer (or whatever answers at
// its address) cannot make the server read without end.
type boundedTransport struct {
	base http.RoundTripper
	max  int64
}

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{body: resp.Body, left: t.max}
	return resp, nil
}

// limitedBody reads at most left bytes of body, then fails (not a silent EOF, which would turn
// a cut document into a confusing parse error).
type limitedBody struct {
	body io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if n, _ := b.body.Read(make([]byte, 1)); n > 0 {
			return 0, fmt.Errorf("the issuer's answer is over %d bytes", maxIssuerBody)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

func (f *oidcFlow) context(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, f.client)
}

// discover returns the issuer's provider, fetching its discovery document the first time.
func (f *oidcFlow) discover(ctx context.Context) (*oidc.Provider, error) {
	f.mu.Lock()
	p := f.provider
	f.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := oidc.NewProvider(f.context(ctx), f.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover OpenID Connect issuer %s: %w", f.cfg.Issuer, err)
	}
	f.mu.Lock()
	f.provider = p
	f.mu.Unlock()
	return p, nil
}

func (f *oidcFlow) oauth(p *oidc.Provider, redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: f.cfg.ClientID, ClientSecret: f.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// start records a new sign-in and returns its state.
func (f *oidcFlow) start() (state string, p oidcPending) {
	state = rand.Text()
	now := f.now()
	p = oidcPending{nonce: rand.Text(), verifier: oauth2.GenerateVerifier(), exp: now.Add(oidcLoginTTL)}
	f.mu.Lock()
	defer f.mu.Unlock()
	makeRoom(f.pending, now, maxOIDCPending, func(q oidcPending) time.Time { return q.exp })
	f.pending[hashCode(state)] = p
	return state, p
}

// take consumes the sign-in of state: once, if it was started and has not expired.
func (f *oidcFlow) take(state string) (oidcPending, bool) {
	h := hashCode(state)
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pending[h]
	delete(f.pending, h)
	return p, ok && f.now().Before(p.exp)
}

// oidcRefusal is a sign-in the callback refuses, with what the browser is told: never a token
// or a code.
type oidcRefusal struct {
	status int
	msg    string
	// cause is logged, not shown.
	cause error
}

func (e *oidcRefusal) Error() string { return e.msg }

func refuse(status int, format string, a ...any) error {
	return &oidcRefusal{status: status, msg: fmt.Sprintf(format, a...)}
}

var errOIDCState = &oidcRefusal{status: http.StatusBadRequest,
	msg: "this sign-in was not started in this browser, was finished already or took too long: sign in again from the studio"}

// identity is who the issuer says signed in.
type identity struct {
	subject, email string
}

// finish checks the callback's request and returns the verified identity.
func (f *oidcFlow) finish(ctx context.Context, r *http.Request, redirect string) (identity, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return identity{}, refuse(http.StatusForbidden, "the identity provider refused the sign-in: %s", clip(e, 100))
	}
	state := q.Get("state")
	c, err := r.Cookie(oidcStateCookie)
	if err != nil || state == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		return identity{}, errOIDCState
	}
	pend, ok := f.take(state)
	if !ok {
		return identity{}, errOIDCState
	}
	code := q.Get("code")
	if code == "" {
		return identity{}, refuse(http.StatusBadRequest, "the identity provider sent no authorization code")
	}
	p, err := f.discover(ctx)
	if err != nil {
		// The error may quote the issuer's answer: logged, not shown.
		return identity{}, &oidcRefusal{status: http.StatusBadGateway, msg: "the identity provider could not be reached: try again later", cause: err}
	}
	cctx := f.context(ctx)
	tok, err := f.oauth(p, redirect).Exchange(cctx, code, oauth2.VerifierOption(pend.verifier))
	if err != nil {
		return identity{}, exchangeRefusal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, refuse(http.StatusBadGateway, "the identity provider's token answer has no ID token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: f.cfg.ClientID, Now: f.now}).Verify(cctx, raw)
	if err != nil {
		// go-oidc's messages name the claim at fault, not the token; redact it all the same.
		msg := strings.ReplaceAll(err.Error(), raw, "[token]")
		return identity{}, refuse(http.StatusForbidden, "the ID token is not valid: %s", clip(msg, 300))
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(pend.nonce)) != 1 {
		return identity{}, refuse(http.StatusForbidden, "the ID token is not valid: its nonce is not this sign-in's")
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	_ = idt.Claims(&claims) // the email only makes the refusal of an unknown identity clearer
	if !claims.Verified {
		claims.Email = ""
	}
	return identity{subject: idt.Subject, email: claims.Email}, nil
}

// exchangeRefusal says why the code could not be traded, from the issuer's error code only:
// the error's text carries the token endpoint's whole answer.
func exchangeRefusal(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = "HTTP " + fmt.Sprint(re.Response.StatusCode)
		}
		return refuse(http.StatusForbidden, "the identity provider would not trade the authorization code for a token: %s", clip(code, 100))
	}
	return &oidcRefusal{status: http.StatusBadGateway, msg: "the identity provider's token endpoint could not be reached", cause: err}
}

// clip shortens text from the request or the issuer before it is shown.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// redirectURL is the callback's address, registered with the issuer.
func (s *identityRoutes) oidcRedirectURL() string {
	if s.oidc.cfg.RedirectURL != "" {
		return s.oidc.cfg.RedirectURL
	}
	return strings.TrimSuffix(s.cfg.URL(), "/") + oidcCallback
}

// oidcIssuerName is how the login page names the issuer: its host.
func oidcIssuerName(issuer string) string {
	if u, err := url.Parse(issuer); err == nil && u.Host != "" {
		return u.Host
	}
	return issuer
}

func oidcNonce(nonce string) oauth2.AuthCodeOption { return oidc.Nonce(nonce) }

func oauth2S256(verifier string) oauth2.AuthCodeOption { return oauth2.S256ChallengeOption(verifier) }
