package server

import (
	"net/http"
	"strconv"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/serving/router"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// routes are the online endpoints' management routes (the workspace token) and the
// replicas' address report (the run token). Requests to endpoints go to the router (serving.go).
func (s *endpointRoutes) routes(mux, api routes) {
	s.replicaClaimRoutes(mux)
	ok, created := http.StatusOK, http.StatusCreated
	api.handle("POST /api/online-endpoints", contributeAccess, answerBody(s.Server, created, s.createEndpoint))
	api.handle("GET /api/online-endpoints", readAccess, answer(s.Server, ok, s.listEndpoints))
	api.handle("GET /api/online-endpoints/{name}", readAccess, answer(s.Server, ok, s.getEndpoint))
	api.handle("PUT /api/online-endpoints/{name}", contributeAccess, answerBody(s.Server, ok, s.updateEndpoint))
	api.handle("PATCH /api/online-endpoints/{name}/traffic", contributeAccess, answerBody(s.Server, ok, s.setTraffic))
	api.handle("DELETE /api/online-endpoints/{name}", contributeAccess.audited("endpoint.delete"), noContent(s.Server, s.deleteEndpoint))
	api.handle("POST /api/online-endpoints/{name}/credentials", contributeAccess, s.endpointCredentials)
	api.handle("POST /api/online-endpoints/{name}/regenerate-keys", contributeAccess.audited("endpoint.regenerate-keys"), noContentBody(s.Server, s.regenerateKeys))
	api.handle("POST /api/online-endpoints/{name}/deployments", contributeAccess, answerBody(s.Server, created, s.createDeployment))
	api.handle("GET /api/online-endpoints/{name}/deployments", readAccess, answer(s.Server, ok, s.listDeployments))
	api.handle("GET /api/online-endpoints/{name}/deployments/{dep}", readAccess, answer(s.Server, ok, s.getDeployment))
	api.handle("PUT /api/online-endpoints/{name}/deployments/{dep}", contributeAccess, answerBody(s.Server, ok, s.updateDeployment))
	api.handle("DELETE /api/online-endpoints/{name}/deployments/{dep}", contributeAccess.audited("deployment.delete"), noContent(s.Server, s.deleteDeployment))
	api.handle("GET /api/online-endpoints/{name}/stats", readAccess, answer(s.Server, ok, s.endpointStats))
	api.handle("POST /api/runs/{id}/serving", runAccess, s.runOnly(noContentBody(s.Server, s.runServing)))
}

func (s *endpointRoutes) endpointView(e store.EndpointRecord) api.EndpointView {
	base := ""
	if s.cfg.URL != nil {
		base = s.cfg.URL()
	}
	return api.EndpointView{Endpoint: e.Spec, ScoringURI: base + "/endpoints/" + e.Spec.Name + "/score",
		ProvisioningState: "Succeeded", CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func (s *endpointRoutes) createEndpoint(r *http.Request, e serving.Endpoint) (api.EndpointView, error) {
	rec, err := s.cfg.Serving.CreateEndpoint(r.Context(), e)
	return viewed(rec, err, s.endpointView)
}

func (s *endpointRoutes) updateEndpoint(r *http.Request, e serving.Endpoint) (api.EndpointView, error) {
	e.Name = r.PathValue("name")
	rec, err := s.cfg.Serving.UpdateEndpoint(r.Context(), e)
	return viewed(rec, err, s.endpointView)
}

func (s *endpointRoutes) setTraffic(r *http.Request, u api.TrafficUpdate) (api.EndpointView, error) {
	rec, err := s.cfg.Serving.SetTraffic(r.Context(), r.PathValue("name"), u)
	return viewed(rec, err, s.endpointView)
}

func (s *endpointRoutes) listEndpoints(r *http.Request) ([]api.EndpointView, error) {
	eps, err := s.cfg.Store.Serving.Endpoints(r.Context())
	return views(eps, s.endpointView), err
}

func (s *endpointRoutes) getEndpoint(r *http.Request) (api.EndpointView, error) {
	rec, err := s.cfg.Serving.Endpoint(r.Context(), r.PathValue("name"))
	return viewed(rec, err, s.endpointView)
}

func (s *endpointRoutes) deleteEndpoint(r *http.Request) error {
	return s.cfg.Serving.DeleteEndpoint(r.Context(), r.PathValue("name"))
}

func (s *endpointRoutes) endpointCredentials(w http.ResponseWriter, r *http.Request) {
	k, err := s.cfg.Serving.EndpointCredentials(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, k)
}

// regenerateKeysBody names the key to regenerate. It stays an unnamed struct type (this is an
// alias): a malformed body's error names the type it was read into.
type regenerateKeysBody = struct {
	KeyType string `json:"key_type"`
}

func (s *endpointRoutes) regenerateKeys(r *http.Request, body regenerateKeysBody) error {
	return s.cfg.Serving.RegenerateKey(r.Context(), r.PathValue("name"), body.KeyType)
}

func (s *endpointRoutes) createDeployment(r *http.Request, d serving.Deployment) (api.DeploymentView, error) {
	d.Endpoint = r.PathValue("name")
	d.Properties = workspace.StampSubmitter(d.Properties, who(r).user) // its replicas' access to secrets
	all, _ := strconv.ParseBool(r.URL.Query().Get("all_traffic"))
	rec, err := s.cfg.Serving.CreateDeployment(r.Context(), d, all)
	return viewed(rec, err, s.deploymentViews(r))
}

func (s *endpointRoutes) updateDeployment(r *http.Request, d serving.Deployment) (api.DeploymentView, error) {
	d.Endpoint, d.Name = r.PathValue("name"), r.PathValue("dep")
	d.Properties = workspace.StampSubmitter(d.Properties, who(r).user) // its replicas' access to secrets
	rec, err := s.cfg.Serving.UpdateDeployment(r.Context(), d)
	return viewed(rec, err, s.deploymentViews(r))
}

// deploymentViews is deploymentView for a request's deployments.
func (s *endpointRoutes) deploymentViews(r *http.Request) func(store.DeploymentRecord) api.DeploymentView {
	return func(d store.DeploymentRecord) api.DeploymentView { return s.deploymentView(r, d) }
}

func (s *endpointRoutes) deploymentView(r *http.Request, d store.DeploymentRecord) api.DeploymentView {
	v := api.DeploymentView{Deployment: d.Spec, Generation: d.Generation, ProvisioningState: d.State, Reason: d.Reason,
		LastFailedReplica: d.LastFailed, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Replicas: []api.ReplicaView{},
		ModelAlias: s.cfg.Serving.FollowedAlias(r.Context(), d.Spec)}
	reps, runs, err := s.cfg.Serving.ReplicaRuns(r.Context(), d.Spec.Endpoint, d.Spec.Name)
	if err != nil {
		s.log.Warn("deployment replicas", "err", err)
	}
	for i, rep := range reps {
		v.Replicas = append(v.Replicas, api.ReplicaView{Run: rep.RunID, Status: string(runs[i].Status), Reason: runs[i].StatusReason,
			Address: rep.Address, Generation: rep.Generation})
	}
	return v
}

func (s *endpointRoutes) listDeployments(r *http.Request) ([]api.DeploymentView, error) {
	if _, err := s.cfg.Serving.Endpoint(r.Context(), r.PathValue("name")); err != nil {
		return nil, err
	}
	deps, err := s.cfg.Store.Serving.Deployments(r.Context(), r.PathValue("name"))
	return views(deps, s.deploymentViews(r)), err
}

func (s *endpointRoutes) getDeployment(r *http.Request) (api.DeploymentView, error) {
	d, err := s.cfg.Serving.Deployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
	return viewed(d, err, s.deploymentViews(r))
}

func (s *endpointRoutes) deleteDeployment(r *http.Request) error {
	return s.cfg.Serving.DeleteDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
}

func (s *endpointRoutes) runServing(r *http.Request, rep api.ServingReport) error {
	return s.cfg.Serving.ReportServing(r.Context(), r.PathValue("id"), rep.Address)
}

// endpointStats is what the router counted for an endpoint's deployments since the server
// started (requests by status class, latency, in flight, held, mirrored), for the studio.
func (s *endpointRoutes) endpointStats(r *http.Request) ([]router.DeploymentStats, error) {
	name := r.PathValue("name")
	if _, err := s.cfg.Serving.Endpoint(r.Context(), name); err != nil {
		return nil, err
	}
	out := []router.DeploymentStats{}
	if s.cfg.Serving != nil {
		for _, st := range s.cfg.Serving.Router.Snapshot() {
			if st.Endpoint == name {
				out = append(out, st)
			}
		}
	}
	return out, nil
}
