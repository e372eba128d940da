package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Users, their roles and personal tokens (docs/users.md).

var (
	// userName keeps names safe in paths, logs and studio sessions (no '.' or ':').
	userName  = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

const (
	maxTokenDays = 3650
	// tokenTouchEvery is how stale a token's last-used time may get: one write a minute per
	// token, not one per request.
	tokenTouchEvery = time.Minute
)

// routes registers the studio's pages and logins (studio.go, oidcstudio.go), users, roles and
// tokens, and the audit log (audit.go).
func (s *identityRoutes) routes(mux, api routes) {
	s.studioRoutes(mux, api)
	s.oidcRoutes(mux)
	s.userRoutes(api)
	s.auditRoutes(api)
}

func (s *identityRoutes) userRoutes(mux routes) {
	ok, created := http.StatusOK, http.StatusCreated
	mux.handle("GET /api/whoami", readAccess, s.whoami)
	mux.handle("GET /api/users", ownerAccess, answer(s.Server, ok, s.listUsers))
	mux.handle("POST /api/users", ownerAccess, answerBody(s.Server, created, s.createUser))
	mux.handle("PUT /api/users/{name}/role", ownerAccess, answerBody(s.Server, ok, s.setUserRole))
	mux.handle("PUT /api/users/{name}/oidc-subject", ownerAccess, answerBody(s.Server, ok, s.setUserOIDCSubject)) // oidcstudio.go
	mux.handle("DELETE /api/users/{name}", ownerAccess, noContent(s.Server, s.deleteUser))
	// Every user manages their own tokens; owners anyone's (checked by tokenOwner).
	mux.handle("POST /api/tokens", readAccess, answerBody(s.Server, created, s.createToken))
	mux.handle("GET /api/tokens", readAccess, answer(s.Server, ok, s.listTokens))
	mux.handle("DELETE /api/tokens/{name}", readAccess, answer(s.Server, ok, s.revokeToken))
}

var (
	errUnknownToken = &httpError{http.StatusUnauthorized, api.CodeAuth,
		"this personal token is not known to this workspace (it belongs to another workspace, or its user was deleted)"}
)

// personalPrincipal is the user a personal token belongs to, if it is valid now.
func (s *identityRoutes) personalPrincipal(ctx context.Context, tok string) (principal, error) {
	hash := tokens.PersonalHash(tok)
	t, err := s.cfg.Store.Access.UserTokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errUnknownToken
	}
	if err != nil {
		return principal{}, err
	}
	now := time.Now().UTC()
	if !t.RevokedAt.IsZero() {
		return principal{}, &httpError{http.StatusUnauthorized, api.CodeAuth, fmt.Sprintf(
			"personal token %q of %s was revoked at %s", t.Name, t.User, t.RevokedAt.Format(time.RFC3339))}
	}
	if !now.Before(t.ExpiresAt) {
		return principal{}, &httpError{http.StatusUnauthorized, api.CodeAuth, fmt.Sprintf(
			"personal token %q of %s expired at %s: create a new one with `hangar token create`", t.Name, t.User, t.ExpiresAt.Format(time.RFC3339))}
	}
	u, err := s.cfg.Store.Access.GetUser(ctx, t.User)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errUnknownToken
	}
	if err != nil {
		return principal{}, err
	}
	if err := s.cfg.Store.Access.TouchUserToken(ctx, hash, now, now.Add(-tokenTouchEvery)); err != nil {
		s.log.Warn("record personal token use", "err", err) // the request still stands
	}
	return principal{admin: true, user: u.Name, role: u.Role}, nil
}

func (s *identityRoutes) whoami(w http.ResponseWriter, r *http.Request) {
	p := who(r)
	writeJSON(w, http.StatusOK, api.WhoAmI{User: p.user, Role: p.role, Workspace: s.cfg.Workspace})
}

func (s *identityRoutes) listUsers(r *http.Request) ([]api.User, error) {
	us, err := s.cfg.Store.Access.Users(r.Context())
	return views(us, apiUser), err
}

func apiUser(u store.User) api.User {
	return api.User{Name: u.Name, Role: u.Role, CreatedAt: u.CreatedAt, OIDCSubject: u.OIDCSubject}
}

func checkRole(field, role string) error {
	if !slices.Contains(api.Roles, role) {
		return badRequest(fmt.Sprintf("%s: %q is not a role; expected one of %v", field, role, api.Roles))
	}
	return nil
}

func checkDays(field string, days int) error {
	if days < 0 || days > maxTokenDays {
		return badRequest(fmt.Sprintf("%s: %d days; expected 1 to %d (0: %d)", field, days, maxTokenDays, api.DefaultTokenDays))
	}
	return nil
}

func (s *identityRoutes) createUser(r *http.Request, req api.CreateUserRequest) (*api.CreateUserReply, error) {
	err := checkRole("role", req.Role)
	if !userName.MatchString(req.Name) {
		err = badRequest(fmt.Sprintf("name: %q is not a user name; expected a lowercase letter, then up to 31 lowercase letters, digits, '-' or '_'", req.Name))
	}
	if err == nil {
		err = checkDays("expires_days", req.ExpiresDays)
	}
	if err == nil {
		err = checkOIDCSubject("oidc_subject", req.OIDCSubject) // oidcstudio.go
	}
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	u := store.User{Name: req.Name, Role: req.Role, CreatedAt: time.Now().UTC()}
	if err := s.cfg.Store.Access.CreateUserWithOIDC(ctx, u, req.OIDCSubject); err != nil {
		return nil, conflictIfExists(err)
	}
	s.audit(ctx, who(r).user, "user.create", "users/"+u.Name, "role="+u.Role)
	tok, err := s.mintToken(ctx, who(r).user, u.Name, "first", req.ExpiresDays)
	if err != nil {
		return nil, err
	}
	return &api.CreateUserReply{User: apiUser(u), Token: *tok}, nil
}

func conflictIfExists(err error) error {
	if errors.Is(err, store.ErrExists) {
		return &httpError{http.StatusConflict, api.CodeConflict, err.Error()}
	}
	return err
}

// checkNotAdmin refuses to demote or delete the workspace token's user: the workspace must
// keep one owner that no one can lock out.
func checkNotAdmin(name, what string) error {
	if name == api.AdminUser {
		return &httpError{http.StatusConflict, api.CodeConflict,
			fmt.Sprintf("user %s is the workspace token's owner; it cannot be %s", api.AdminUser, what)}
	}
	return nil
}

func (s *identityRoutes) setUserRole(r *http.Request, req api.SetRoleRequest) (api.User, error) {
	name := r.PathValue("name")
	err := checkRole("role", req.Role)
	if err == nil {
		err = checkNotAdmin(name, "given another role")
	}
	if err == nil {
		err = s.cfg.Store.Access.SetUserRole(r.Context(), name, req.Role)
	}
	if err != nil {
		return api.User{}, err
	}
	return s.changedUser(r, name, "user.set-role", "role="+req.Role)
}

// changedUser records a change to user name in the audit log, and answers the user as it is now.
func (s *identityRoutes) changedUser(r *http.Request, name, action, detail string) (api.User, error) {
	s.audit(r.Context(), who(r).user, action, "users/"+name, detail)
	u, err := s.cfg.Store.Access.GetUser(r.Context(), name)
	return viewed(u, err, apiUser)
}

func (s *identityRoutes) deleteUser(r *http.Request) error {
	name := r.PathValue("name")
	err := checkNotAdmin(name, "deleted")
	if err == nil {
		err = s.cfg.Store.Access.DeleteUser(r.Context(), name)
	}
	if err != nil {
		return err
	}
	s.audit(r.Context(), who(r).user, "user.delete", "users/"+name, "")
	return nil
}

// tokenOwner is whose tokens a request is about: the caller's, or (owners only) another's
// ("*" for every user's, which only listing accepts).
func tokenOwner(r *http.Request, user string) (string, error) {
	p := who(r)
	if user == "" || user == p.user {
		return p.user, nil
	}
	if p.role != api.RoleOwner {
		return "", &httpError{http.StatusForbidden, api.CodeNotAllowed,
			fmt.Sprintf("user %s has the role %s; only an owner manages another user's tokens", p.user, p.role)}
	}
	return user, nil
}

// mintToken creates a personal token for user and records it in the audit log as by.
func (s *identityRoutes) mintToken(ctx context.Context, by, user, name string, days int) (*api.TokenCreated, error) {
	if days == 0 {
		days = api.DefaultTokenDays
	}
	tok := tokens.NewPersonal()
	now := time.Now().UTC()
	t := store.UserToken{User: user, Name: name, Hash: tokens.PersonalHash(tok), CreatedAt: now,
		ExpiresAt: now.Add(time.Duration(days) * 24 * time.Hour)}
	if err := s.cfg.Store.Access.CreateUserToken(ctx, t); err != nil {
		return nil, conflictIfExists(err)
	}
	s.audit(ctx, by, "token.create", "users/"+user+"/tokens/"+name, "expires="+t.ExpiresAt.Format(time.RFC3339))
	return &api.TokenCreated{TokenInfo: tokenInfo(t, now), Token: tok}, nil
}

func tokenInfo(t store.UserToken, now time.Time) api.TokenInfo {
	info := api.TokenInfo{User: t.User, Name: t.Name, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, Status: "active"}
	if !t.LastUsedAt.IsZero() {
		info.LastUsedAt = &t.LastUsedAt
	}
	switch {
	case !t.RevokedAt.IsZero():
		info.RevokedAt, info.Status = &t.RevokedAt, "revoked"
	case !now.Before(t.ExpiresAt):
		info.Status = "expired"
	}
	return info
}

func (s *identityRoutes) createToken(r *http.Request, req api.CreateTokenRequest) (*api.TokenCreated, error) {
	user, err := tokenOwner(r, req.User)
	if err == nil && !tokenName.MatchString(req.Name) {
		err = badRequest(fmt.Sprintf("name: %q is not a token name; expected a letter or digit, then up to 63 letters, digits, '.', '-' or '_'", req.Name))
	}
	if err == nil {
		err = checkDays("expires_days", req.ExpiresDays)
	}
	if err == nil {
		_, err = s.cfg.Store.Access.GetUser(r.Context(), user)
	}
	if err != nil {
		return nil, err
	}
	return s.mintToken(r.Context(), who(r).user, user, req.Name, req.ExpiresDays)
}

func (s *identityRoutes) listTokens(r *http.Request) ([]api.TokenInfo, error) {
	user, err := tokenOwner(r, r.URL.Query().Get("user"))
	if user == "*" {
		user = "" // every user's: tokenOwner let only an owner ask
	}
	if err != nil {
		return nil, err
	}
	ts, err := s.cfg.Store.Access.UserTokens(r.Context(), user)
	now := time.Now().UTC()
	return views(ts, func(t store.UserToken) api.TokenInfo { return tokenInfo(t, now) }), err
}

func (s *identityRoutes) revokeToken(r *http.Request) (api.TokenInfo, error) {
	ctx, name := r.Context(), r.PathValue("name")
	user, err := tokenOwner(r, r.URL.Query().Get("user"))
	if err == nil {
		err = s.cfg.Store.Access.RevokeUserToken(ctx, user, name, time.Now().UTC())
	}
	if err != nil {
		return api.TokenInfo{}, err
	}
	s.audit(ctx, who(r).user, "token.revoke", "users/"+user+"/tokens/"+name, "")
	ts, err := s.cfg.Store.Access.UserTokens(ctx, user)
	if err != nil {
		return api.TokenInfo{}, err
	}
	for _, t := range ts {
		if t.Name == name {
			return tokenInfo(t, time.Now().UTC()), nil
		}
	}
	return api.TokenInfo{}, fmt.Errorf("token %s of %s: %w", name, user, store.ErrNotFound)
}

// stampSubmitter records who submits a job in its created_by property, which `job show`
// prints (and `whoami` names), and per-user limits are keyed on: the user the request
// authenticated as, whatever the client claimed. The workspace token is `admin`, as `whoami`
// says: one name for one identity, never the client machine's OS user. The user whose access
// to secrets counts is recorded apart, and always as who called (workspace.PropSubmitter).
func stampSubmitter(p principal, sp *job.Spec) {
	sp.Properties = workspace.StampSubmitter(sp.Properties, p.user)
	if sp.Properties == nil {
		sp.Properties = map[string]string{}
	}
	sp.Properties["created_by"] = p.user
}
