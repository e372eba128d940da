package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
	"github.com/hangar-ml/hangar/internal/webhook"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// The MLflow tracking API and the mlflow-artifacts proxy live in mlflowapi; the server mounts
// them behind its authentication and access checks, and lends them its body reading.

// newMLflow returns the MLflow API over the server's store and blobs.
func (s *Server) newMLflow() *mlflowapi.API {
	return mlflowapi.New(mlflowapi.Config{
		Tracking: s.cfg.Store.Tracking, Artifacts: s.cfg.Store.Tracking, Runs: s.cfg.Store.Runs, RunWriter: s.cfg.Controller.Tracking, Blobs: s.cfg.Blobs,
		Models: s.cfg.Store.Assets, Registry: s.cfg.Controller.Workspace.Models,
		Webhooks: &webhook.Service{Store: s.cfg.Store.Webhooks, Sealer: workspaceSealer{s.cfg.Controller.Workspace}, Sender: webhook.NewSender(0)},
		Caller: func(r *http.Request) mlflowapi.Caller {
			p := who(r)
			return mlflowapi.Caller{Admin: p.admin, RunID: p.runID}
		},
		Bodies: mlflowBodies{s}, MetricPoints: s.tel.metricPts, Workspace: s.cfg.Workspace, Log: s.log,
		LoggedModels: s.cfg.Store.Tracking,
	})
}

// mlflowRoutes registers the MLflow API on api, and answers the MLflow UI's /ajax-api/ paths and
// MLflow 1.x's /api/2.0/preview/mlflow/ with the same handlers (authenticated as /api/ is).
func (s *Server) mlflowRoutes(mux, api routes) {
	s.mlflow.Routes(mlflowMux{api})
	// The routes it forwards to check their own access.
	mux.handle("/ajax-api/2.0/mlflow/", forwardAccess, alias(api.mux, "/ajax-api/2.0/mlflow/").ServeHTTP)
	// MLflow 1.x clients call the registry under /api/2.0/preview/mlflow/.
	mux.handle("/api/2.0/preview/mlflow/", forwardAccess, alias(api.mux, "/api/2.0/preview/mlflow/").ServeHTTP)
}

// alias serves <prefix>... as /api/2.0/mlflow/....
func alias(api http.Handler, prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = mlflowapi.Prefix + strings.TrimPrefix(r.URL.Path, prefix)
		r2.URL.RawPath = ""
		api.ServeHTTP(w, r2)
	})
}

// workspaceSealer is the workspace's sealer as it is when a webhook's secret is sealed or
// opened.
type workspaceSealer struct{ ws *workspace.Workspace }

var errNoSealer = errors.New("this workspace has no secret key to seal a webhook's secret with")

func (w workspaceSealer) Encrypt(plaintext []byte) (string, error) {
	if w.ws.Sealer == nil {
		return "", errNoSealer
	}
	return w.ws.Sealer.Encrypt(plaintext)
}

func (w workspaceSealer) Decrypt(ciphertext string) ([]byte, error) {
	if w.ws.Sealer == nil {
		return nil, errNoSealer
	}
	return w.ws.Sealer.Decrypt(ciphertext)
}

// webhookAccess: MLflow's registry webhooks, owners only: the server sends requests to the URLs
// they name (docs/security.md "Outbound requests").
var webhookAccess = access{roles: []string{api.RoleOwner}, purpose: "registry webhooks (the server sends requests to their URLs)"}

// mlflowMux registers the MLflow API's routes with the server's access for each.
type mlflowMux struct{ rt routes }

func (m mlflowMux) Handle(pattern string, a mlflowapi.Access, h http.HandlerFunc) {
	acc := readAccess
	switch {
	case a.Owner:
		acc = webhookAccess
	case a.Contribute && a.Runs:
		acc = contributeOrRunAccess
	case a.Contribute:
		acc = contributeAccess
	case a.Runs:
		acc = readOrRunAccess
	}
	if a.Audit != "" {
		acc = acc.audited(a.Audit)
	}
	m.rt.handle(pattern, acc, h)
}

// mlflowBodies lends the MLflow API the server's body limits and errors (bodies.go, errors.go).
type mlflowBodies struct{ s *Server }

func (b mlflowBodies) ReadJSON(r *http.Request, v any) error { return readJSON(r, v) }

func (b mlflowBodies) MaxBlob() int64 { return b.s.maxBlob() }

func (b mlflowBodies) TooLarge(route string, limit, size int64) error {
	return &tooLargeError{route: route, limit: limit, size: size}
}

func (b mlflowBodies) BodyError(err error) (int, string, bool) {
	st, _, msg, ok := bodyError(err)
	return st, msg, ok
}

func (b mlflowBodies) RequestError(err error) (int, string, bool) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg, true
	}
	return 0, "", false
}
