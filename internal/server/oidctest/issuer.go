// Package oidctest is a small OpenID Connect issuer for tests: discovery, its keys, an authorize
// endpoint that signs the chosen subject in at once, and a token endpoint that checks the
// client, the redirect and the PKCE verifier and returns an RS256 ID token.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is a running test issuer. Its knobs (Set) spoil one thing at a time.
type Issuer struct {
	t            testing.TB
	URL          string
	ClientID     string
	ClientSecret string
	key          *rsa.PrivateKey

	mu      sync.Mutex
	subject string
	claims  func(c map[string]any)
	state   string
	codes   map[string]issuedCode
}

type issuedCode struct {
	nonce, challenge, redirect string
}

// New starts an issuer for the test; it stops when the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{t: t, ClientID: "hangar-studio", ClientSecret: "s3cret", key: key, codes: map[string]issuedCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", is.discovery)
	mux.HandleFunc("GET /keys", is.keys)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	is.URL = hs.URL
	return is
}

// Set changes who signs in next; claims, when not nil, changes the ID token's claims before
// they are signed; state, when not empty, replaces the state sent back to the client.
func (is *Issuer) Set(subject string, claims func(map[string]any), state string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.subject, is.claims, is.state = subject, claims, state
}

func (is *Issuer) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": is.URL, "authorization_endpoint": is.URL + "/authorize", "token_endpoint": is.URL + "/token",
		"jwks_uri": is.URL + "/keys", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
	})
}

func (is *Issuer) keys(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &is.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != is.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
		return
	}
	code := rand.Text()
	is.mu.Lock()
	is.codes[code] = issuedCode{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	state := q.Get("state")
	if is.state != "" {
		state = is.state
	}
	is.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	back.RawQuery = url.Values{"code": {code}, "state": {state}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	is.mu.Lock()
	c, known := is.codes[r.PostFormValue("code")]
	delete(is.codes, r.PostFormValue("code"))
	subject, spoil := is.subject, is.claims
	is.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	switch {
	case id != is.ClientID || secret != is.ClientSecret:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	case !known || c.redirect != r.PostFormValue("redirect_uri") ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims := map[string]any{"iss": is.URL, "sub": subject, "aud": is.ClientID, "nonce": c.nonce,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "email": subject + "@example.com", "email_verified": true}
	if spoil != nil {
		spoil(claims)
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + rand.Text(), "token_type": "Bearer",
		"expires_in": 300, "id_token": is.sign(claims)})
}

func (is *Issuer) sign(claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: is.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		is.t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		is.t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		is.t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return raw
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
