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
	ok, created := http.StatusOK, http.StatusCreated
	mux.handle("POST /api/batch-endpoints", contributeAccess, answerBody(s.Server, created, s.createBatchEndpoint))
	mux.handle("GET /api/batch-endpoints", readAccess, answer(s.Server, ok, s.listBatchEndpoints))
	mux.handle("GET /api/batch-endpoints/{name}", readAccess, answer(s.Server, ok, s.getBatchEndpoint))
	mux.handle("PUT /api/batch-endpoints/{name}", contributeAccess, answerBody(s.Server, ok, s.updateBatchEndpoint))
	mux.handle("DELETE /api/batch-endpoints/{name}", contributeAccess.audited("batch-endpoint.delete"), noContent(s.Server, s.deleteBatchEndpoint))
	mux.handle("POST /api/batch-endpoints/{name}/invoke", contributeAccess, answerBody(s.Server, created, s.invokeBatch))
	mux.handle("POST /api/batch-endpoints/{name}/deployments", contributeAccess, answerBody(s.Server, created, s.createBatchDeployment))
	mux.handle("GET /api/batch-endpoints/{name}/deployments", readAccess, answer(s.Server, ok, s.listBatchDeployments))
	mux.handle("GET /api/batch-endpoints/{name}/deployments/{dep}", readAccess, answer(s.Server, ok, s.getBatchDeployment))
	mux.handle("PUT /api/batch-endpoints/{name}/deployments/{dep}", contributeAccess, answerBody(s.Server, ok, s.updateBatchDeployment))
	mux.handle("DELETE /api/batch-endpoints/{name}/deployments/{dep}", contributeAccess.audited("batch-deployment.delete"), noContent(s.Server, s.deleteBatchDeployment))
}

func batchEndpointView(e store.BatchEndpointRecord) api.BatchEndpointView {
	return api.BatchEndpointView{BatchEndpoint: e.Spec, ProvisioningState: "Succeeded", CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func batchDeploymentView(d store.BatchDeploymentRecord) api.BatchDeploymentView {
	return api.BatchDeploymentView{BatchDeployment: d.Spec, ProvisioningState: "Succeeded", CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func (s *batchRoutes) createBatchEndpoint(r *http.Request, e serving.BatchEndpoint) (api.BatchEndpointView, error) {
	rec, err := s.cfg.Serving.PutBatchEndpoint(r.Context(), e, true)
	return viewed(rec, err, batchEndpointView)
}

func (s *batchRoutes) updateBatchEndpoint(r *http.Request, e serving.BatchEndpoint) (api.BatchEndpointView, error) {
	e.Name = r.PathValue("name")
	rec, err := s.cfg.Serving.PutBatchEndpoint(r.Context(), e, false)
	return viewed(rec, err, batchEndpointView)
}

func (s *batchRoutes) listBatchEndpoints(r *http.Request) ([]api.BatchEndpointView, error) {
	eps, err := s.cfg.Store.Serving.BatchEndpoints(r.Context())
	return views(eps, batchEndpointView), err
}

func (s *batchRoutes) getBatchEndpoint(r *http.Request) (api.BatchEndpointView, error) {
	rec, err := s.cfg.Serving.BatchEndpoint(r.Context(), r.PathValue("name"))
	return viewed(rec, err, batchEndpointView)
}

func (s *batchRoutes) deleteBatchEndpoint(r *http.Request) error {
	return s.cfg.Serving.DeleteBatchEndpoint(r.Context(), r.PathValue("name"))
}

func (s *batchRoutes) invokeBatch(r *http.Request, req api.BatchInvokeRequest) (*api.RunDetail, error) {
	run, err := s.cfg.Serving.InvokeBatch(r.Context(), r.PathValue("name"), who(r).user, req)
	return s.jobs.detailOf(r, run, err)
}

func (s *batchRoutes) createBatchDeployment(r *http.Request, d serving.BatchDeployment) (api.BatchDeploymentView, error) {
	d.Endpoint = r.PathValue("name")
	return s.putBatchDeployment(r, d, true)
}

func (s *batchRoutes) updateBatchDeployment(r *http.Request, d serving.BatchDeployment) (api.BatchDeploymentView, error) {
	d.Endpoint, d.Name = r.PathValue("name"), r.PathValue("dep")
	return s.putBatchDeployment(r, d, false)
}

func (s *batchRoutes) putBatchDeployment(r *http.Request, d serving.BatchDeployment, create bool) (api.BatchDeploymentView, error) {
	rec, err := s.cfg.Serving.PutBatchDeployment(r.Context(), d, create, r.URL.Query().Get("set_default") == "true")
	return viewed(rec, err, batchDeploymentView)
}

func (s *batchRoutes) listBatchDeployments(r *http.Request) ([]api.BatchDeploymentView, error) {
	ds, err := s.cfg.Serving.BatchDeployments(r.Context(), r.PathValue("name"))
	return views(ds, batchDeploymentView), err
}

func (s *batchRoutes) getBatchDeployment(r *http.Request) (api.BatchDeploymentView, error) {
	rec, err := s.cfg.Serving.BatchDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
	return viewed(rec, err, batchDeploymentView)
}

func (s *batchRoutes) deleteBatchDeployment(r *http.Request) error {
	return s.cfg.Serving.DeleteBatchDeployment(r.Context(), r.PathValue("name"), r.PathValue("dep"))
}
