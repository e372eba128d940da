package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/studio"
)

// studioRoutes serves the web studio's pages at / and its login: the code route is the
// workspace token's (the CLI's), the login and logout routes are the browser's.
func (s *identityRoutes) studioRoutes(mux, apiMux routes) {
	s.studio = newStudioAuth(s.cfg.AdminToken, apiMux.mux)
	pages := studio.Handler()
	mux.handle("GET /{$}", publicAccess, pages.ServeHTTP)
	mux.handle("GET /studio/", publicAccess, pages.ServeHTTP)
	mux.handle("POST /studio/login", publicAccess, s.studioLogin)
	mux.handle("POST /studio/logout", publicAccess, s.studioLogout)
	apiMux.handle("POST /api/studio/login-codes", readAccess, s.studioLoginCode)
}

func (s *identityRoutes) studioLoginCode(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.studio.newCode(who(r).user))
}

// studioLogin trades a login code for a session cookie.
func (s *identityRoutes) studioLogin(w http.ResponseWriter, r *http.Request) {
	if err := checkStudioRequest(r); err != nil {
		writeError(w, s.log, err)
		return
	}
	decoded(s.Server, s.tradeCode)(w, r)
}

// tradeCode sets the session cookie of the login code in, if it is one the studio gave.
func (s *identityRoutes) tradeCode(w http.ResponseWriter, r *http.Request, in api.StudioLogin) {
	user, ok := s.studio.useCode(in.Code)
	if in.Code == "" || !ok {
		writeError(w, s.log, &httpError{http.StatusUnauthorized, api.CodeAuth,
			"this login link was used already or expired: run `hangar studio` for a new one"})
		return
	}
	value, exp := s.studio.session(user)
	http.SetCookie(w, &http.Cookie{Name: studioCookie, Value: value, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	writeJSON(w, http.StatusOK, api.StudioLogin{ExpiresAt: exp.UTC()})
}

func (s *identityRoutes) studioLogout(w http.ResponseWriter, r *http.Request) {
	if err := checkStudioRequest(r); err != nil {
		writeError(w, s.log, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: studioCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	w.WriteHeader(http.StatusNoContent)
}
