package server

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/studio"
)

// oidcRoutes serves the studio's OpenID Connect login when the server has one configured: all
// three routes are public, as the browser has no session yet.
func (s *identityRoutes) oidcRoutes(mux routes) {
	if s.cfg.OIDC == nil {
		return
	}
	if s.oidc == nil || s.oidc.cfg != *s.cfg.OIDC {
		s.oidc = newOIDCFlow(*s.cfg.OIDC)
	}
	mux.handle("GET /studio/oidc", publicAccess, s.oidcInfo)
	mux.handle("GET /studio/oidc/login", publicAccess, s.oidcLogin)
	mux.handle("GET "+oidcCallback, publicAccess, s.oidcCallbackHandler)
}

// OIDCInfo tells the studio's login page which issuer it may offer.
type OIDCInfo struct {
	Issuer string `json:"issuer"`
	Name   string `json:"name"`
}

func (s *identityRoutes) oidcInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, OIDCInfo{Issuer: s.oidc.cfg.Issuer, Name: oidcIssuerName(s.oidc.cfg.Issuer)})
}

// oidcLogin starts a sign-in: a fresh state in a cookie for this browser, and the browser sent
// to the issuer (whose address is configured, never taken from the request).
func (s *identityRoutes) oidcLogin(w http.ResponseWriter, r *http.Request) {
	p, err := s.oidc.discover(r.Context())
	if err != nil {
		s.log.Warn("OpenID Connect login", "err", err)
		s.oidcRefuse(w, &oidcRefusal{status: http.StatusBadGateway, msg: "the identity provider " + s.oidc.cfg.Issuer + " could not be reached: try again later"})
		return
	}
	state, pend := s.oidc.start()
	http.SetCookie(w, &http.Cookie{Name: oidcStateCookie, Value: state, Path: "/studio/oidc/",
		MaxAge: int(oidcLoginTTL.Seconds()), HttpOnly: true, Secure: r.TLS != nil,
		// Lax, not Strict: the issuer's redirect back is a cross-site navigation.
		SameSite: http.SameSiteLaxMode})
	to := s.oidc.oauth(p, s.oidcRedirectURL()).AuthCodeURL(state, oidcNonce(pend.nonce), oauth2S256(pend.verifier))
	http.Redirect(w, r, to, http.StatusFound)
}

// oidcCallbackHandler finishes a sign-in: the session cookie for the linked user, then the
// studio's own page (a fixed path: nothing in the request picks where the browser goes).
func (s *identityRoutes) oidcCallbackHandler(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The state is single use whatever happens next: the cookie goes too.
	http.SetCookie(w, &http.Cookie{Name: oidcStateCookie, Value: "", Path: "/studio/oidc/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	id, err := s.oidc.finish(ctx, r, s.oidcRedirectURL())
	if err != nil {
		s.oidcRefuse(w, err)
		return
	}
	u, err := s.cfg.Store.Access.UserByOIDCSubject(ctx, id.subject)
	if errors.Is(err, store.ErrNotFound) {
		s.log.Info("OpenID Connect login of an unknown identity", "subject", id.subject, "email", id.email)
		s.oidcRefuse(w, unknownIdentity(s.oidc.cfg.Issuer, id))
		return
	}
	if err != nil {
		s.oidcRefuse(w, err)
		return
	}
	value, exp := s.studio.session(u.Name)
	http.SetCookie(w, &http.Cookie{Name: studioCookie, Value: value, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.audit(ctx, u.Name, "user.login", "users/"+u.Name, "oidc subject="+id.subject)
	http.Redirect(w, r, "/studio/#/jobs", http.StatusSeeOther)
}

func unknownIdentity(issuer string, id identity) error {
	who := "subject " + id.subject
	if id.email != "" {
		who += " (" + id.email + ")"
	}
	return &oidcRefusal{status: http.StatusForbidden, msg: "No Hangar user is linked to " + who + " at " + issuer +
		". Ask a workspace owner to create your user with `hangar user create NAME --role ROLE --oidc-subject " +
		id.subject + "`, or to link the user you have with `hangar user link-oidc NAME " + id.subject + "`."}
}

var refusalPage = template.Must(template.New("refusal").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hangar: sign-in refused</title>
<link rel="stylesheet" href="/studio/app.css"></head>
<body><main class="page"><h1>Sign-in refused</h1><p class="error">{{.}}</p>
<p><a href="/studio/">Back to the studio</a></p></main></body></html>
`))

// oidcRefuse answers a refused sign-in with a page that says why; anything else is a 500 whose
// detail is logged, not shown.
func (s *identityRoutes) oidcRefuse(w http.ResponseWriter, err error) {
	status, msg := http.StatusInternalServerError, "internal error"
	var re *oidcRefusal
	if errors.As(err, &re) {
		status, msg = re.status, re.msg
		s.log.Info("OpenID Connect sign-in refused", "status", status, "why", msg, "err", re.cause)
	} else {
		s.log.Error("OpenID Connect login", "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", studio.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := refusalPage.Execute(w, msg); err != nil {
		s.log.Debug("write refusal page", "err", err)
	}
}

// checkOIDCSubject admits what an issuer may use as a subject: up to 255 printable ASCII
// characters (OpenID Connect Core 1.0, 2), shown back in pages and logs.
func checkOIDCSubject(field, sub string) error {
	for _, c := range sub {
		if c <= ' ' || c > '~' {
			return badRequest(fmt.Sprintf("%s: %q has a space or a character outside printable ASCII", field, sub))
		}
	}
	if len(sub) > 255 {
		return badRequest(fmt.Sprintf("%s: %d characters; expected at most 255", field, len(sub)))
	}
	return nil
}

// setUserOIDCSubject links an existing user to the subject they sign in to the studio as, or
// unlinks them (an empty subject): users made before OpenID Connect was set up keep their
// tokens. The workspace token's user is never linked (no sign-in stands for it).
func (s *identityRoutes) setUserOIDCSubject(r *http.Request, req api.SetOIDCSubjectRequest) (api.User, error) {
	name := r.PathValue("name")
	err := checkOIDCSubject("subject", req.Subject)
	if err == nil {
		err = checkNotAdmin(name, "linked to an OpenID Connect subject")
	}
	if err == nil {
		err = conflictIfExists(s.cfg.Store.Access.SetUserOIDCSubject(r.Context(), name, req.Subject))
	}
	if err != nil {
		return api.User{}, err
	}
	if req.Subject == "" {
		return s.changedUser(r, name, "user.unlink-oidc", "")
	}
	return s.changedUser(r, name, "user.link-oidc", "subject="+req.Subject)
}
