package server

import (
	"net/http"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// routes are the batch endpoints' routes. Azure opens them with a Microsoft Entra token
// (aad_token); a workspace has none, so the workspace token opens them, like the rest of /api.
// A batch endpoint's jobs are listed by GET /api/jobs?tag=hangar.batch_endpoint=NAME.
func (s *batchRoutes) routes(_, mux routes) {
	mux.handle("POST /api/batch-endpoints", contributeAccess, s.createBatchEndpoint)
	mux.handle("GET /api/batch-endpoints", readAccess, s.listBatchEndpoints)
	mux.handle("GET /api/batch-endpoints/{name}", readAccess, s.getBatchEndpoint)
	mux.handle("PUT /api/batch-endpoints/{name}", contributeAccess, s.updateBatchEndpoint)
	mux.handle("DELETE /api/batch-endpoints/{name}", contributeAccess.audited("batch-endpoint.delete"), s.deleteBatchEndpoint)
	mux.handle("POST /api/batch-endpoints/{name}/invoke", contributeAccess, s.invokeBatch)
	mux.handle("POST /api/batch-endpoints/{name}/deployments", contributeAccess, s.putBatchDeployment)
	mux.handle("GET /api/batch-endpoints/{name}/deployments", readAccess, s.listBatchDeployments)
	mux.handle("GET /api/batch-endpoints/{name}/deployments/{dep}", readAccess, s.getBatchDeployment)
	mux.handle("PUT /api/batch-endpoints/{name}/deployments/{dep}", contributeAccess, s.putBatchDeployment)
	mux.handle("DELETE /api/batch-endpoints/{name}/deployments/{dep}", contributeAccess.audited("batch-deployment.delete"), s.deleteBatchDeployment)
}

func batchEndpointView(e store.BatchEndpointRecord) api.BatchEndpointView {
	return api.BatchEndpointView{BatchEndpoint: e.Spec, ProvisioningState: "Succeeded", CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func batchDeploymentView(d store.BatchDeploymentRecord) api.BatchDeploymentView {
	return api.BatchDeploymentView{BatchDeployment: d.Spec, ProvisioningState: "Succeeded", CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func (s *batchRoutes) createBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	s.putBatchEndpoint(w, r, true)
}

func (s *batchRoutes) updateBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	s.putBatchEndpoint(w, r, false)
}

func (s *batchRoutes) putBatchEndpoint(w http.ResponseWriter, r *http.Request, create bool) {
	var e serving.BatchEndpoint
	if err := readJSON(r, &e); err != nil {
		writeError(w, s.log, err)
		return
	}
	status := http.StatusCreated
	if !create {
		e.Name, status = r.PathValue("name"), http.StatusOK
	}
	rec, err := s.cfg.Serving.PutBatchEndpoint(r.Context(), e, create)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, status, batchEndpointView(*rec))
}

func (s *batchRoutes) listBatchEndpoints(w http.ResponseWriter, r *http.Request) {
	eps, err := s.cfg.Store.Serving.BatchEndpoints(r.Context())
	s.respond(w, http.StatusOK, views(eps, batchEndpointView), err)
}

func (s *batchRoutes) getBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	rec, err := s.cfg.Serving.BatchEndpoint(r.Context(), r.PathValue("name"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, batchEndpointView(*rec))
}

func (s *batchRoutes) deleteBatchEndpoint(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Serving.DeleteBatchEndpoint(r.Context(), r.PathValue("name")); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *batchRoutes) invokeBatch(w http.ResponseWriter, r *http.Request) {
	var req api.BatchInvokeRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, s.log, err)
		return
	}
	run, err := s.cfg.Serving.InvokeBatch(r.Context(), r.PathValue("name"), who(r).user, req)
	s.jobs.respondDetail(w, r, http.StatusCreated, run, err)
}

// putBatchDeployment is POST .../deployments (create) and PUT .../deployments/{dep} (update).
func (s *batchRoutes) putBatchDeployment(w http.ResponseWriter, r *http.Request) {
	var d serving.BatchDeployment
	if err := readJSON(r, &d); err != nil {
		writeError(w, s.log, err)
		return
	}
	create := r.Method == http.MethodPost
	d.Endpoint = r.PathValue("name")
	status := http.StatusCreated
	if !create {
		d.Name, status = r.PathValue("dep"), http.StatusOK
	}
	rec, err := s.cfg.Serving.PutBatchDeployment(r.Context(), d, create, r.URL.Query().Get("set_default") == "true")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, status, batchDeploymentView(*rec))
}

func (s *batchRoutes) listBatchDeployments(w http.ResponseWriter, r *http.Request) {
	ds, err := s.cfg.Serving.BatchDeployments(r.Context(), r.PathValue("name"))
	s.respond(w, http.StatusOK, views(ds, batchDeploymentView), err)
}

func (s *batchRoutes) getBatchDeployment(w http.ResponseWriter, r *http.Request) {
	rec, err := s.cfg.Serving.BatchDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, batchDeploymentView(*rec))
}

func (s *batchRoutes) deleteBatchDeployment(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Serving.DeleteBatchDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep")); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
