package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// The studio's login. Browsers never hold the workspace token: `hangar studio` (with the token)
// asks for a one-time login code and hands the browser a URL carrying it in the fragment (never
// sent to a server, logged or leaked in a Referer). The page posts the code to /studio/login,
// which sets an HttpOnly, SameSite=Strict session cookie. A cookie session may read runs,
// computes and environments, and cancel runs: nothing else (studioAllowed).
const (
	studioCookie = "hangar_studio"
	// StudioCSRFHeader must be on every state-changing request made with the session cookie
	// (and on the login): a page on another site cannot set a custom header without a CORS
	// preflight, which this server never grants.
	StudioCSRFHeader = "X-Hangar-Studio"
	loginCodeTTL     = 2 * time.Minute
	studioSessionTTL = 12 * time.Hour
	// maxLoginCodes bounds the codes waiting to be used; the oldest goes when a new one comes.
	maxLoginCodes = 64
)

// studioAllowed are the API routes a cookie session may call: reads, and cancelling a run.
var studioAllowed = map[string]bool{
	"GET /api/jobs":                                   true,
	"GET /api/jobs/{name}":                            true,
	"GET /api/jobs/{name}/logs":                       true,
	"GET /api/jobs/{name}/metrics":                    true,
	"GET /api/jobs/{name}/trials":                     true,
	"GET /api/jobs/{name}/steps":                      true,
	"GET /api/jobs/{name}/artifacts":                  true,
	"POST /api/jobs/{name}/cancel":                    true,
	"GET /api/blobs/{hash}":                           true,
	"GET /api/computes":                               true,
	"GET /api/computes/{name}":                        true,
	"GET /api/computes/{name}/nodes":                  true,
	"GET /api/computes/{name}/node-events":            true,
	"GET /api/environments":                           true,
	"GET /api/environments/{name}/versions/{version}": true,
	// Online endpoints: definitions, deployments, replicas and the router's figures; never
	// their keys (get-credentials is a POST, not here).
	"GET /api/online-endpoints":                          true,
	"GET /api/online-endpoints/{name}":                   true,
	"GET /api/online-endpoints/{name}/deployments":       true,
	"GET /api/online-endpoints/{name}/deployments/{dep}": true,
	"GET /api/online-endpoints/{name}/stats":             true,
}

// studioAuth holds the login codes not yet used, by their SHA-256 (a memory dump or a timing
// difference does not give a usable code away).
type studioAuth struct {
	key   tokens.Studio
	api   *http.ServeMux // to find the route a cookie request is for
	now   func() time.Time
	mu    sync.Mutex
	codes map[string]time.Time // hash of the code → its expiry
}

func newStudioAuth(adminToken string, apiMux *http.ServeMux) *studioAuth {
	return &studioAuth{key: tokens.Studio{Key: tokens.Key(adminToken)}, api: apiMux, now: time.Now,
		codes: map[string]time.Time{}}
}

func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// newCode mints a one-time login code.
func (a *studioAuth) newCode() api.StudioLogin {
	code := rand.Text() + rand.Text() // 2 × 128 bits
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	oldest, oldestAt := "", time.Time{}
	for h, exp := range a.codes {
		switch {
		case !now.Before(exp):
			delete(a.codes, h)
		case oldest == "" || exp.Before(oldestAt):
			oldest, oldestAt = h, exp
		}
	}
	if len(a.codes) >= maxLoginCodes {
		delete(a.codes, oldest)
	}
	exp := now.Add(loginCodeTTL)
	a.codes[hashCode(code)] = exp
	return api.StudioLogin{Code: code, ExpiresAt: exp.UTC()}
}

// useCode consumes a login code: true once, if it was minted and has not expired.
func (a *studioAuth) useCode(code string) bool {
	h := hashCode(code)
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.codes[h]
	delete(a.codes, h)
	return ok && a.now().Before(exp)
}

// session mints a new session cookie's value.
func (a *studioAuth) session() (string, time.Time) {
	exp := a.now().Add(studioSessionTTL)
	return a.key.Mint(rand.Text(), exp), exp
}

var (
	errStudioSession = &httpError{http.StatusUnauthorized, api.CodeAuth,
		"the studio session expired or is not valid: run `hangar studio` for a new login link"}
	errStudioRoute = &httpError{http.StatusForbidden, api.CodeNotAllowed,
		"the studio may only read runs, computes and environments, and cancel runs"}
	errStudioCSRF = &httpError{http.StatusForbidden, api.CodeNotAllowed,
		"a studio request that changes something needs the " + StudioCSRFHeader + " header"}
	errCrossSite = &httpError{http.StatusForbidden, api.CodeNotAllowed, "cross-site request refused"}
)

// studioPrincipal admits a request made with the studio's session cookie. ok is false when the
// request has a bearer token or no cookie: the other credentials decide then.
func (s *Server) studioPrincipal(r *http.Request, bearer string) (p principal, ok bool, err error) {
	a := s.studio
	if a == nil || bearer != "" || s.cfg.AdminToken == "" {
		return principal{}, false, nil
	}
	c, cerr := r.Cookie(studioCookie)
	if cerr != nil {
		return principal{}, false, nil
	}
	if !a.key.Verify(c.Value, a.now()) {
		return principal{}, true, errStudioSession
	}
	if err := checkStudioRequest(r); err != nil {
		return principal{}, true, err
	}
	if _, pattern := a.api.Handler(r); !studioAllowed[pattern] {
		return principal{}, true, errStudioRoute
	}
	return principal{admin: true}, true, nil
}

// checkStudioRequest refuses what a page on another site could make a browser send: any
// request the browser marks cross-site, and a state change without the custom header.
func checkStudioRequest(r *http.Request) error {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return errCrossSite
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get(StudioCSRFHeader) == "" {
		return errStudioCSRF
	}
	return nil
}
