package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

// The audit log: who changed what (docs/users.md). Routes registered with an audited access
// record their answered (2xx) requests here; the users and tokens handlers record their own,
// with what they know (a new user's role). A value (a secret's) is never recorded: the object
// is the route's path, and a create's name is the only thing read from its body.

// maxAuditPeek is how much of a create's body is kept to read its name.
const maxAuditPeek = 64 << 10

func (s *identityRoutes) auditRoutes(mux routes) {
	mux.handle("GET /api/audit", ownerAccess, answer(s.Server, http.StatusOK, s.listAudit))
}

// audit appends an entry; a failure is logged, as the change it records has been made.
func (s *identityRoutes) audit(ctx context.Context, user, action, object, detail string) {
	e := store.AuditEntry{At: time.Now().UTC(), User: user, Action: action, Object: object, Detail: detail}
	if err := s.cfg.Store.Access.AddAudit(ctx, e); err != nil {
		s.log.Error("audit log", "action", action, "object", object, "err", err)
	}
}

// audited records the requests that h answers with a 2xx as action.
func (s *identityRoutes) audited(pattern, action string, h http.HandlerFunc) http.HandlerFunc {
	named := !strings.Contains(pattern, "{")
	return func(w http.ResponseWriter, r *http.Request) {
		var peek *bytes.Buffer
		// A request without a body keeps http.NoBody: a DELETE of MLflow's reads its query then.
		if named && r.Body != nil && r.Body != http.NoBody {
			peek = &bytes.Buffer{}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &limitedWriter{w: peek, n: maxAuditPeek}), r.Body}
		}
		rec := &auditRecorder{ResponseWriter: w, status: http.StatusOK}
		h(rec, r)
		if rec.status/100 != 2 {
			return
		}
		object := auditObject(pattern, r)
		if peek != nil {
			var body struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(peek.Bytes(), &body) == nil && body.Name != "" {
				object += "/" + body.Name
			}
		}
		s.audit(context.WithoutCancel(r.Context()), who(r).user, action, object, r.URL.RawQuery)
	}
}

// auditObject is the pattern's path with its wildcards' values, up to the last wildcard:
// "POST /api/computes/{name}/stop" gives "computes/gpu".
func auditObject(pattern string, r *http.Request) string {
	_, path, _ := strings.Cut(pattern, " ")
	parts := strings.Split(strings.TrimPrefix(path, "/api/"), "/")
	last := len(parts)
	if strings.Contains(path, "{") {
		for i, p := range parts {
			if strings.HasPrefix(p, "{") {
				parts[i], last = r.PathValue(strings.Trim(p, "{}.")), i+1
			}
		}
	}
	return strings.Join(parts[:last], "/")
}

type auditRecorder struct {
	http.ResponseWriter
	status int
}

func (a *auditRecorder) WriteHeader(code int) {
	a.status = code
	a.ResponseWriter.WriteHeader(code)
}

func (a *auditRecorder) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if k := min(len(p), l.n); k > 0 {
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func (s *identityRoutes) listAudit(r *http.Request) ([]api.AuditEntry, error) {
	q := r.URL.Query()
	f := store.AuditFilter{User: q.Get("user")}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("since: %q is not an RFC 3339 time", v))
		}
		f.Since = t
	}
	es, err := s.cfg.Store.Access.Audit(r.Context(), f)
	return views(es, func(e store.AuditEntry) api.AuditEntry {
		return api.AuditEntry{ID: e.ID, At: e.At, User: e.User, Action: e.Action, Object: e.Object, Detail: e.Detail}
	}), err
}
