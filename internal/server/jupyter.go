package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/controller/instances"
	"github.com/hangar-ml/hangar/internal/store"
)

// jupyterMaxBody bounds a request's body through the Jupyter proxy (notebook saves and the
// contents API's upload chunks; websockets are not bodies).
const jupyterMaxBody = 64 << 20

// jupyterProxy proxies /instances/{name}/jupyter/... (HTTP and websockets) to the instance's
// Jupyter, which serves under that same base URL, through its agent's relay, with the relay's
// key added. The route is
// public in the access table because it checks its own credentials: a studio session's cookie
// or a user's token, for the instance's owner or a workspace owner. Jupyter's browser pages
// make their own requests (POSTs without the studio's CSRF header), so the studio's cookie rules
// (studioAllowed) do not fit; SameSite=Strict and the cross-site check still apply.
func (s *instanceRoutes) jupyterProxy(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := jupyterPathOK(name, r.URL.EscapedPath()); err != nil {
		writeError(w, s.log, err)
		return
	}
	p, err := s.jupyterPrincipal(r)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	t, err := s.cfg.Instances.JupyterEndpoint(r.Context(), name)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if err := jupyterAllowed(p, name, t.Owner); err != nil {
		writeError(w, s.log, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, jupyterMaxBody)
	s.jupyterReverse(t).ServeHTTP(w, r)
}

// jupyterReverse forwards to t, the relay the instance's agent runs before its Jupyter
// (agent/jupyter_relay.go): the caller's credentials stay here, the relay's key goes, and never
// comes back to the caller (jupyterhide.go).
func (s *instanceRoutes) jupyterReverse(t *instances.JupyterTarget) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", t.Addr
			pr.Out.Host = pr.In.Host // Jupyter checks a websocket's Origin against the Host
			for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Accept-Encoding"} {
				pr.Out.Header.Del(h) // Accept-Encoding: the transport asks for gzip and decompresses, to be filtered
			}
			pr.Out.Header.Set("Authorization", "token "+t.Token)
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("Set-Cookie") // Jupyter's login cookie would be a credential of its own
			return hideSecret(resp, t.Token)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, s.log, &httpError{http.StatusRequestEntityTooLarge, api.CodeTooLarge,
					fmt.Sprintf("a request to Jupyter carries at most %d bytes", jupyterMaxBody)})
				return
			}
			s.log.Warn("jupyter proxy", "path", r.URL.Path, "err", err)
			writeError(w, s.log, &httpError{http.StatusBadGateway, api.CodeBusy, "the instance's Jupyter did not answer: " + err.Error()})
		},
	}
}

// jupyterPathOK refuses a path that is not under the instance's Jupyter path once Jupyter
// decodes it: a "." or ".." segment, or one hiding a slash.
func jupyterPathOK(name, escaped string) error {
	prefix := instances.JupyterPath(name)
	rest, ok := strings.CutPrefix(escaped, prefix)
	if !ok {
		return &httpError{http.StatusBadRequest, api.CodeInvalid, "the path is not under " + prefix}
	}
	for _, seg := range strings.Split(rest, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil || dec == "." || dec == ".." || strings.ContainsAny(dec, "/\\") {
			return &httpError{http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("path segment %q is not allowed under %s", seg, prefix)}
		}
	}
	return nil
}

// jupyterAllowed lets the instance's owner and workspace owners open its Jupyter.
func jupyterAllowed(p principal, name, owner string) error {
	return instanceOwnerAllowed(p, name, owner, "open", "Jupyter")
}

// jupyterPrincipal is who calls: a bearer (or Basic) token, else a studio session's cookie.
// Jupyter's own pages may send "Authorization: token ...": that is not ours, and not used.
func (s *instanceRoutes) jupyterPrincipal(r *http.Request) (principal, error) {
	tok := ""
	if _, pass, ok := r.BasicAuth(); ok {
		tok = pass
	} else if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		tok = b
	}
	if tok != "" || s.studio == nil || s.cfg.AdminToken == "" {
		return s.tokenPrincipal(r, tok)
	}
	c, err := r.Cookie(studioCookie)
	if err != nil {
		return principal{}, errNoToken
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return principal{}, errCrossSite
	}
	session, valid := s.studio.key.Session(c.Value, s.studio.now())
	_, user, _ := strings.Cut(session, ":")
	if !valid || user == "" {
		return principal{}, errStudioSession
	}
	u, err := s.cfg.Store.Access.GetUser(r.Context(), user)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errStudioSession
	}
	if err != nil {
		return principal{}, err
	}
	return principal{admin: true, user: u.Name, role: u.Role}, nil
}
