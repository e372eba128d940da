package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// The studio's login. Browsers never hold the workspace token: `hangar studio` (with the token)
// asks for a one-time login code and hands the browser a URL carrying it in the fragment (never
// sent to a server, logged or leaked in a Referer). The page posts the code to /studio/login,
// which sets an HttpOnly, SameSite=Strict session cookie. A cookie session belongs to the user
// who asked for the code and has at most that user's role (looked up on every request, so a
// role change or a deletion applies at once), and within it may read runs, computes,
// environments, models, data assets and endpoints, and cancel runs: nothing else (studioAllowed).
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
	"GET /api/jobs/{name}/models":                     true,
	"POST /api/jobs/{name}/cancel":                    true,
	"GET /api/blobs/{hash}":                           true,
	"GET /api/computes":                               true,
	"GET /api/computes/{name}":                        true,
	"GET /api/computes/{name}/nodes":                  true,
	"GET /api/computes/{name}/node-events":            true,
	"GET /api/environments":                           true,
	"GET /api/environments/{name}/versions/{version}": true,
	// Models: versions and their lineage (the run, its code, environment and data; the
	// deployments serving each version).
	"GET /api/models":                                   true,
	"GET /api/models/{name}/lineage":                    true,
	"GET /api/models/{name}/versions/{version}":         true,
	"GET /api/models/{name}/versions/{version}/lineage": true,
	// Data assets: versions and where their bytes live (never a datastore's credentials,
	// which no route answers to a user).
	"GET /api/data": true,
	"GET /api/data/{name}/versions/{version}": true,
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
	codes map[string]loginCode // by the hash of the code
}

// loginCode is a login code waiting to be used: until when, and for which user.
type loginCode struct {
	exp  time.Time
	user string
}

func newStudioAuth(adminToken string, apiMux *http.ServeMux) *studioAuth {
	return &studioAuth{key: tokens.Studio{Key: tokens.Key(adminToken)}, api: apiMux, now: time.Now,
		codes: map[string]loginCode{}}
}

func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// makeRoom makes room for one more entry in m, pending codes (login codes, OpenID Connect
// sign-ins) by their hash: it drops those expired at now and, when max are still there, the one
// that expires first.
func makeRoom[V any](m map[string]V, now time.Time, max int, exp func(V) time.Time) {
	oldest, oldestAt := "", time.Time{}
	for h, v := range m {
		switch e := exp(v); {
		case !now.Before(e):
			delete(m, h)
		case oldest == "" || e.Before(oldestAt):
			oldest, oldestAt = h, e
		}
	}
	if len(m) >= max {
		delete(m, oldest)
	}
}

// newCode mints a one-time login code for user.
func (a *studioAuth) newCode(user string) api.StudioLogin {
	code := rand.Text() + rand.Text() // 2 × 128 bits
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	makeRoom(a.codes, now, maxLoginCodes, func(c loginCode) time.Time { return c.exp })
	exp := now.Add(loginCodeTTL)
	a.codes[hashCode(code)] = loginCode{exp: exp, user: user}
	return api.StudioLogin{Code: code, ExpiresAt: exp.UTC()}
}

// useCode consumes a login code: its user, once, if it was minted and has not expired.
func (a *studioAuth) useCode(code string) (user string, ok bool) {
	h := hashCode(code)
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.codes[h]
	delete(a.codes, h)
	return c.user, ok && a.now().Before(c.exp)
}

// session mints a new session cookie's value for user: "<random>:<user>" (user names have
// neither ':' nor '.').
func (a *studioAuth) session(user string) (string, time.Time) {
	exp := a.now().Add(studioSessionTTL)
	return a.key.Mint(rand.Text()+":"+user, exp), exp
}

var (
	errStudioSession = &httpError{http.StatusUnauthorized, api.CodeAuth,
		"the studio session expired or is not valid: run `hangar studio` for a new login link"}
	errStudioRoute = &httpError{http.StatusForbidden, api.CodeNotAllowed,
		"the studio may only read runs, computes, environments, models, data assets and endpoints, and cancel runs"}
	errStudioCSRF = &httpError{http.StatusForbidden, api.CodeNotAllowed,
		"a studio request that changes something needs the " + StudioCSRFHeader + " header"}
	errCrossSite = &httpError{http.StatusForbidden, api.CodeNotAllowed, "cross-site request refused"}
)

// studioPrincipal admits a request made with the studio's session cookie. ok is false when the
// request has a bearer token or no cookie: the other credentials decide then.
func (s *identityRoutes) studioPrincipal(r *http.Request, bearer string) (p principal, ok bool, err error) {
	a := s.studio
	if a == nil || bearer != "" || s.cfg.AdminToken == "" {
		return principal{}, false, nil
	}
	c, cerr := r.Cookie(studioCookie)
	if cerr != nil {
		return principal{}, false, nil
	}
	session, valid := a.key.Session(c.Value, a.now())
	_, user, _ := strings.Cut(session, ":")
	if !valid || user == "" {
		return principal{}, true, errStudioSession
	}
	if err := checkStudioRequest(r); err != nil {
		return principal{}, true, err
	}
	if _, pattern := a.api.Handler(r); !studioAllowed[pattern] {
		return principal{}, true, errStudioRoute
	}
	u, err := s.cfg.Store.Access.GetUser(r.Context(), user)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, true, errStudioSession
	}
	if err != nil {
		return principal{}, true, err
	}
	return principal{admin: true, user: u.Name, role: u.Role}, true, nil
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
