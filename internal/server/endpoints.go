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
	api.handle("POST /api/online-endpoints", contributeAccess, s.createEndpoint)
	api.handle("GET /api/online-endpoints", readAccess, s.listEndpoints)
	api.handle("GET /api/online-endpoints/{name}", readAccess, s.getEndpoint)
	api.handle("PUT /api/online-endpoints/{name}", contributeAccess, s.updateEndpoint)
	api.handle("PATCH /api/online-endpoints/{name}/traffic", contributeAccess, s.setTraffic)
	api.handle("DELETE /api/online-endpoints/{name}", contributeAccess.audited("endpoint.delete"), s.deleteEndpoint)
	api.handle("POST /api/online-endpoints/{name}/credentials", contributeAccess, s.endpointCredentials)
	api.handle("POST /api/online-endpoints/{name}/regenerate-keys", contributeAccess.audited("endpoint.regenerate-keys"), s.regenerateKeys)
	api.handle("POST /api/online-endpoints/{name}/deployments", contributeAccess, s.createDeployment)
	api.handle("GET /api/online-endpoints/{name}/deployments", readAccess, s.listDeployments)
	api.handle("GET /api/online-endpoints/{name}/deployments/{dep}", readAccess, s.getDeployment)
	api.handle("PUT /api/online-endpoints/{name}/deployments/{dep}", contributeAccess, s.updateDeployment)
	api.handle("DELETE /api/online-endpoints/{name}/deployments/{dep}", contributeAccess.audited("deployment.delete"), s.deleteDeployment)
	api.handle("GET /api/online-endpoints/{name}/stats", readAccess, s.endpointStats)
	api.handle("POST /api/runs/{id}/serving", runAccess, s.runOnly(s.runServing))
}

func (s *endpointRoutes) endpointView(e store.EndpointRecord) api.EndpointView {
	base := ""
	if s.cfg.URL != nil {
		base = s.cfg.URL()
	}
	return api.EndpointView{Endpoint: e.Spec, ScoringURI: base + "/endpoints/" + e.Spec.Name + "/score",
		ProvisioningState: "Succeeded", CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func (s *endpointRoutes) createEndpoint(w http.ResponseWriter, r *http.Request) {
	var e serving.Endpoint
	if err := readJSON(r, &e); err != nil {
		writeError(w, s.log, err)
		return
	}
	rec, err := s.cfg.Serving.CreateEndpoint(r.Context(), e)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.endpointView(*rec))
}

func (s *endpointRoutes) updateEndpoint(w http.ResponseWriter, r *http.Request) {
	var e serving.Endpoint
	if err := readJSON(r, &e); err != nil {
		writeError(w, s.log, err)
		return
	}
	e.Name = r.PathValue("name")
	rec, err := s.cfg.Serving.UpdateEndpoint(r.Context(), e)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.endpointView(*rec))
}

func (s *endpointRoutes) setTraffic(w http.ResponseWriter, r *http.Request) {
	var u api.TrafficUpdate
	if err := readJSON(r, &u); err != nil {
		writeError(w, s.log, err)
		return
	}
	rec, err := s.cfg.Serving.SetTraffic(r.Context(), r.PathValue("name"), u)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.endpointView(*rec))
}

func (s *endpointRoutes) listEndpoints(w http.ResponseWriter, r *http.Request) {
	eps, err := s.cfg.Store.Serving.Endpoints(r.Context())
	s.respond(w, http.StatusOK, views(eps, s.endpointView), err)
}

func (s *endpointRoutes) getEndpoint(w http.ResponseWriter, r *http.Request) {
	rec, err := s.cfg.Serving.Endpoint(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.endpointView(*rec))
}

func (s *endpointRoutes) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Serving.DeleteEndpoint(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
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

func (s *endpointRoutes) regenerateKeys(w http.ResponseWriter, r *http.Request) {
	var body struct {
		KeyType string `json:"key_type"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, s.log, err)
		return
	}
	if err := s.cfg.Serving.RegenerateKey(r.Context(), r.PathValue("name"), body.KeyType); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *endpointRoutes) createDeployment(w http.ResponseWriter, r *http.Request) {
	var d serving.Deployment
	if err := readJSON(r, &d); err != nil {
		writeError(w, s.log, err)
		return
	}
	d.Endpoint = r.PathValue("name")
	d.Properties = workspace.StampSubmitter(d.Properties, who(r).user) // its replicas' access to secrets
	all, _ := strconv.ParseBool(r.URL.Query().Get("all_traffic"))
	rec, err := s.cfg.Serving.CreateDeployment(r.Context(), d, all)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.deploymentView(r, *rec))
}

func (s *endpointRoutes) updateDeployment(w http.ResponseWriter, r *http.Request) {
	var d serving.Deployment
	if err := readJSON(r, &d); err != nil {
		writeError(w, s.log, err)
		return
	}
	d.Endpoint, d.Name = r.PathValue("name"), r.PathValue("dep")
	d.Properties = workspace.StampSubmitter(d.Properties, who(r).user) // its replicas' access to secrets
	rec, err := s.cfg.Serving.UpdateDeployment(r.Context(), d)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.deploymentView(r, *rec))
}

func (s *endpointRoutes) deploymentView(r *http.Request, d store.DeploymentRecord) api.DeploymentView {
	v := api.DeploymentView{Deployment: d.Spec, Generation: d.Generation, ProvisioningState: d.State, Reason: d.Reason,
		LastFailedReplica: d.LastFailed, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Replicas: []api.ReplicaView{}}
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

func (s *endpointRoutes) listDeployments(w http.ResponseWriter, r *http.Request) {
	if _, err := s.cfg.Serving.Endpoint(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, s.log, err)
		return
	}
	deps, err := s.cfg.Store.Serving.Deployments(r.Context(), r.PathValue("name"))
	s.respond(w, http.StatusOK, views(deps, func(d store.DeploymentRecord) api.DeploymentView { return s.deploymentView(r, d) }), err)
}

func (s *endpointRoutes) getDeployment(w http.ResponseWriter, r *http.Request) {
	d, err := s.cfg.Serving.Deployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.deploymentView(r, *d))
}

func (s *endpointRoutes) deleteDeployment(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Serving.DeleteDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep")); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *endpointRoutes) runServing(w http.ResponseWriter, r *http.Request) {
	var rep api.ServingReport
	if err := readJSON(r, &rep); err != nil {
		writeError(w, s.log, err)
		return
	}
	if err := s.cfg.Serving.ReportServing(r.Context(), r.PathValue("id"), rep.Address); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// endpointStats is what the router counted for an endpoint's deployments since the server
// started (requests by status class, latency, in flight, held, mirrored), for the studio.
func (s *endpointRoutes) endpointStats(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, err := s.cfg.Serving.Endpoint(r.Context(), name); err != nil {
		writeError(w, s.log, err)
		return
	}
	out := []router.DeploymentStats{}
	if s.cfg.Serving != nil {
		for _, st := range s.cfg.Serving.Router.Snapshot() {
			if st.Endpoint == name {
				out = append(out, st)
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}
