package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// target is where one forwarded request goes; it travels in the request's context to the
// ReverseProxy's hooks.
type target struct {
	dep     *depState
	replica *replicaState
	path    string
	// retry lets the error handler leave the answer to forward when the request did not reach
	// the replica (unreached); it then records the error here.
	retry     bool
	unreached error
}

type targetKey struct{}

func (r *Router) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport: r.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			t := pr.In.Context().Value(targetKey{}).(*target)
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", t.replica.addr
			pr.Out.URL.Path, pr.Out.URL.RawPath = t.path, ""
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			pr.Out.Host = t.replica.addr
			// The endpoint's key is the caller's secret, not the model's; the replica's is the
			// router's.
			pr.Out.Header.Del("Authorization")
			t.replica.sign(pr.Out.Header)
			pr.SetXForwarded()
		},
		ModifyResponse: func(resp *http.Response) error {
			t := resp.Request.Context().Value(targetKey{}).(*target)
			if draining(resp.Header) {
				r.takeOut(t.dep, t.replica, "it is draining (its supervisor is gone)")
			}
			resp.Header.Del(scoring.DrainHeader)
			resp.Header.Set(DeploymentHeader, t.dep.name)
			return nil
		},
		ErrorHandler: r.proxyError,
		ErrorLog:     nil,
	}
}

// proxyError answers a request the replica did not answer: 408 when it ran past the
// deployment's request_timeout_ms (as Azure answers), else 502.
func (r *Router) proxyError(w http.ResponseWriter, req *http.Request, err error) {
	t := req.Context().Value(targetKey{}).(*target)
	if t.retry && retryable(err, req.Context().Err()) {
		t.unreached = err
		return
	}
	w.Header().Set(DeploymentHeader, t.dep.name)
	if errors.Is(req.Context().Err(), context.DeadlineExceeded) {
		d := t.dep
		d.mu.Lock()
		l := d.limitsLocked()
		d.mu.Unlock()
		writeError(w, http.StatusRequestTimeout, "RequestTimeout", fmt.Sprintf(
			"deployment %s did not answer within %s (request_settings.request_timeout_ms)", d.name, l.timeout))
		return
	}
	if req.Context().Err() != nil {
		// The caller left; nobody reads this answer.
		w.WriteHeader(499)
		return
	}
	r.log.Warn("replica unreachable", "endpoint", t.dep.endpoint, "deployment", t.dep.name, "replica", t.replica.id, "err", err)
	writeError(w, http.StatusBadGateway, "BadGateway", fmt.Sprintf("replica %s of deployment %s did not answer: %v", t.replica.id, t.dep.name, err))
}

// ServeHTTP serves /endpoints/<name>/score and /endpoints/<name>/<path>.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	name, path, ok := splitPath(req.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "expected /endpoints/<name>/score")
		return
	}
	bearer, found := bearerOf(req)
	if !found {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hangar endpoints"`)
		writeError(w, http.StatusUnauthorized, "Unauthorized", "send the endpoint's key or token as Authorization: Bearer <key>")
		return
	}
	if !r.cfg.Authorize(name, bearer) {
		writeError(w, http.StatusForbidden, "Forbidden", "this key or token does not open endpoint "+name)
		return
	}
	body, ok := r.readBody(w, req)
	if !ok {
		return
	}
	named := req.Header.Get(DeploymentHeader)
	// A deployment removed from the table between the choice and the slot is chosen again
	// from the new table: the request has not reached any replica yet.
	for attempt := 0; ; attempt++ {
		rt := r.lookup(name)
		if rt == nil {
			writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("endpoint %s has no deployment", name))
			return
		}
		dname := named
		if named == "" {
			dname = serving.Choose(rt.traffic, r.cfg.Rand())
		}
		d := rt.deps[dname]
		if d == nil {
			msg := fmt.Sprintf("endpoint %s has no deployment with traffic above 0%%", name)
			if named != "" {
				msg = fmt.Sprintf("endpoint %s has no deployment %s", name, named)
			}
			writeError(w, http.StatusNotFound, "NotFound", msg)
			return
		}
		if named == "" && attempt == 0 {
			r.mirror(req, rt, dname, path, body)
		}
		if !r.forward(w, req, d, path, body, attempt < 3) {
			return
		}
	}
}

// bearerOf is the credential of an `Authorization: Bearer <key>` header (the scheme's case
// does not matter, RFC 9110).
func bearerOf(req *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	cred = strings.TrimSpace(cred)
	return cred, ok && strings.EqualFold(scheme, "Bearer") && cred != ""
}

// splitPath is an endpoint name and the path on the replica ("" for the scoring path).
func splitPath(p string) (name, rest string, ok bool) {
	p, ok = strings.CutPrefix(p, "/endpoints/")
	if !ok {
		return "", "", false
	}
	name, rest, _ = strings.Cut(p, "/")
	if name == "" || rest == "" {
		return "", "", false
	}
	if rest == "score" {
		rest = ""
	} else {
		rest = "/" + rest
	}
	return name, rest, true
}

// readBody reads the whole body (bounded by MaxBody), for the replica and its mirrors alike.
func (r *Router) readBody(w http.ResponseWriter, req *http.Request) ([]byte, bool) {
	tooLarge := func() ([]byte, bool) {
		writeError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", fmt.Sprintf("request body over the limit of %d bytes", r.cfg.MaxBody))
		return nil, false
	}
	if req.ContentLength > r.cfg.MaxBody {
		return tooLarge()
	}
	var buf bytes.Buffer
	if req.ContentLength > 0 {
		buf.Grow(int(req.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, req.Body, r.cfg.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case err != nil:
		writeError(w, http.StatusBadRequest, "BadRequest", "reading the request body: "+err.Error())
		return nil, false
	}
	return buf.Bytes(), true
}

// forward takes a slot on a replica of d and proxies the request to it; a replica the request
// could not reach leaves the rotation and the request goes to another (unreached.go). It
// returns true, having answered nothing, when d left the table before a slot was found and
// retry allows.
func (r *Router) forward(w http.ResponseWriter, req *http.Request, d *depState, path string, body []byte, retry bool) bool {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	for try := 0; ; try++ {
		rs, l, err := r.acquire(req.Context(), d)
		if err != nil {
			if retry && errors.Is(err, errGone) {
				return true
			}
			status := r.slotFailure(w, d, err)
			d.stats.observe(status, time.Since(start))
			return false
		}
		t := &target{dep: d, replica: rs, path: d.path(path), retry: try+1 < maxTries}
		r.send(sw, req, t, l, body)
		if t.unreached == nil {
			d.stats.observe(sw.status, time.Since(start))
			return false
		}
		r.takeOut(d, rs, "unreachable: "+t.unreached.Error())
	}
}

// send proxies one try of the request to t's replica, within the deployment's request timeout,
// and frees the replica's slot (also when the proxy aborts the answer with a panic).
func (r *Router) send(w http.ResponseWriter, req *http.Request, t *target, l limits, body []byte) {
	defer t.dep.release(t.replica)
	ctx, cancel := context.WithTimeout(req.Context(), l.timeout)
	defer cancel()
	out := req.WithContext(context.WithValue(ctx, targetKey{}, t))
	out.Body = io.NopCloser(bytes.NewReader(body))
	// The transport may send it again on a new connection when a kept-alive one turned out
	// closed before any of it was written.
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	r.proxy.ServeHTTP(w, out)
}

// path is where a request for the endpoint's path p goes on a replica: the scoring path for "".
func (d *depState) path(p string) string {
	if p != "" {
		return p
	}
	d.mu.Lock()
	p = d.cfg.ScoringPath
	d.mu.Unlock()
	if p == "" {
		p = DefaultScoringPath
	}
	return p
}

// slotFailure answers a request that got no replica and returns the status sent.
func (r *Router) slotFailure(w http.ResponseWriter, d *depState, err error) int {
	w.Header().Set(DeploymentHeader, d.name)
	status, code := http.StatusServiceUnavailable, "ServiceUnavailable"
	switch {
	case errors.Is(err, errQueueFull):
		status, code = http.StatusTooManyRequests, "TooManyPendingRequests"
	case errors.Is(err, errNoReplica):
		status, code = http.StatusGatewayTimeout, "NoReadyReplica"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 499 // the caller left while waiting
	}
	writeError(w, status, code, err.Error())
	return status
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{errorDetail{code, msg}})
}

// statusWriter records the status a handler sent. Unwrap lets the proxy flush through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
