package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// The model routes: created 201, a taken version 409, an unknown model 404, bad input 400, the
// workspace token required, and bodies bounded like every JSON route.
func TestModelRoutes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := api.CreateModelRequest{Spec: model.Spec{Name: "mnist", Path: "/client/model"}, Manifest: manifest}
	v, err := ts.admin.Models.Create(ctx, req)
	if err != nil || v.Version != "1" || v.Source != model.SourceLocal {
		t.Fatalf("create = %+v, %v", v, err)
	}
	if _, err := ts.admin.Models.Create(ctx, req); err != nil {
		t.Fatal(err)
	}
	req.Spec.Version = "2"
	_, err = ts.admin.Models.Create(ctx, req)
	if st, code := apiStatus(t, err); st != http.StatusConflict || code != api.CodeConflict || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a taken version: %d %s %v", st, code, err)
	}
	if got, err := ts.admin.Models.Get(ctx, "mnist", "latest"); err != nil || got.Version != "2" {
		t.Errorf("latest = %+v, %v", got, err)
	}
	_, err = ts.admin.Models.Get(ctx, "ghost", "1")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("unknown model: %v", err)
	}
	vs, err := ts.admin.Models.Archive(ctx, "mnist", "2", true)
	if err != nil || len(vs) != 2 || !vs[0].Archived || vs[1].Archived {
		t.Errorf("archive mnist:2 answered %+v, %v", vs, err)
	}
	list, err := ts.admin.Models.List(ctx, "", false)
	if err != nil || len(list) != 1 || list[0].Version != "1" {
		t.Errorf("list after archiving 2 = %+v, %v", list, err)
	}
	_, err = ts.admin.Models.Archive(ctx, "ghost", "", true)
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("archive unknown model: %v", err)
	}
	for _, tt := range []struct {
		token, method, path, body string
		want                      int
	}{
		{"", http.MethodGet, "/api/models", "", http.StatusUnauthorized},
		{adminToken, http.MethodGet, "/api/models?include_archived=maybe", "", http.StatusBadRequest},
		{adminToken, http.MethodGet, "/api/models/mnist/versions/-two", "", http.StatusBadRequest},
		{adminToken, http.MethodPost, "/api/models", `{"spec": {"name": "m", "path": "/x"}}`, http.StatusBadRequest},
		{adminToken, http.MethodPost, "/api/models", `{"spec": {"name": "` + strings.Repeat("x", 2<<20) + `"}}`, http.StatusRequestEntityTooLarge},
	} {
		if got, eb := ts.raw(t, tt.token, tt.method, tt.path, tt.body); got != tt.want {
			t.Errorf("%s %s: %d %+v, want %d", tt.method, tt.path, got, eb, tt.want)
		}
	}
}
