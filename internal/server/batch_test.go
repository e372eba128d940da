package server

import (
	"net/http"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/serving"
)

// TestBatchEndpointRoutes: the workspace token opens the batch routes (a run's token and no
// token do not), and the controller's typed errors reach the client as HTTP codes.
func TestBatchEndpointRoutes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	v, err := ts.admin.BatchEndpoints.Create(ctx, serving.BatchEndpoint{Name: "ep1", Meta: asset.Meta{Description: "d"}})
	if err != nil || v.Name != "ep1" || v.AuthMode != serving.AuthAADToken || v.ProvisioningState != "Succeeded" {
		t.Fatalf("create: %+v, %v", v, err)
	}
	if _, err := ts.admin.BatchEndpoints.Create(ctx, serving.BatchEndpoint{Name: "ep1"}); err == nil {
		t.Error("second create succeeded")
	} else if status, _ := apiStatus(t, err); status != http.StatusConflict {
		t.Errorf("second create: status %d, want 409", status)
	}
	if status, _ := ts.raw(t, "", http.MethodGet, "/api/batch-endpoints", ""); status != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", status)
	}
	run := ts.createJob(t, "j1")
	if status, _ := ts.raw(t, ts.ctrl.RunToken(run.ID), http.MethodGet, "/api/batch-endpoints/ep1", ""); status != http.StatusForbidden && status != http.StatusUnauthorized {
		t.Errorf("a run's token: status %d, want 401 or 403", status)
	}
	_, err = ts.admin.BatchEndpoints.Invoke(ctx, "ep1", api.BatchInvokeRequest{})
	if status, _ := apiStatus(t, err); status != http.StatusBadRequest {
		t.Errorf("invoke with no deployment: %v (status %d), want 400", err, status)
	}
	_, err = ts.admin.BatchDeployments.Get(ctx, "ep1", "nope")
	if status, _ := apiStatus(t, err); status != http.StatusNotFound {
		t.Errorf("unknown deployment: %v (status %d), want 404", err, status)
	}
	eps, err := ts.admin.BatchEndpoints.List(ctx)
	if err != nil || len(eps) != 1 {
		t.Fatalf("list: %v, %v", eps, err)
	}
	if err := ts.admin.BatchEndpoints.Delete(ctx, "ep1"); err != nil {
		t.Fatal(err)
	}
	_, err = ts.admin.BatchEndpoints.Get(ctx, "ep1")
	if status, _ := apiStatus(t, err); status != http.StatusNotFound {
		t.Errorf("after delete: %v (status %d), want 404", err, status)
	}
}
