package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// The data and datastore routes: created 201, a taken version 409, unknown names 404, bad input
// 400 (an Azure datastore type included), the workspace token required, bodies bounded.
func TestDataRoutes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := api.CreateDataRequest{Spec: dataset.Spec{Name: "iris", Path: "/client/iris"}, Manifest: manifest}
	v, err := ts.admin.Data.Create(ctx, req)
	if err != nil || v.Version != "1" || v.Source != dataset.SourceLocal || v.Type != dataset.URIFolder {
		t.Fatalf("create = %+v, %v", v, err)
	}
	req.Spec.Version = "1"
	_, err = ts.admin.Data.Create(ctx, req)
	if st, code := apiStatus(t, err); st != http.StatusConflict || code != api.CodeConflict {
		t.Errorf("a taken version: %d %s %v", st, code, err)
	}
	if got, err := ts.admin.Data.Get(ctx, "iris", "latest"); err != nil || got.Version != "1" {
		t.Errorf("latest = %+v, %v", got, err)
	}
	_, err = ts.admin.Data.Get(ctx, "ghost", "1")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("unknown data asset: %v", err)
	}
	if vs, err := ts.admin.Data.Archive(ctx, "iris", "1", true); err != nil || len(vs) != 1 || !vs[0].Archived {
		t.Errorf("archive iris:1 answered %+v, %v", vs, err)
	}
	if list, err := ts.admin.Data.List(ctx, "", false); err != nil || len(list) != 0 {
		t.Errorf("list after archiving = %+v, %v", list, err)
	}
	if d, err := ts.admin.Datastores.Create(ctx, datastore.Datastore{Name: "nfs", Type: datastore.TypeLocalFolder, Path: "/shared"}, nil); err != nil || d.Path != "/shared" {
		t.Errorf("create datastore = %+v, %v", d, err)
	}
	_, err = ts.admin.Datastores.Create(ctx, datastore.Datastore{Name: "files", Type: "azure_file"}, nil)
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest || !strings.Contains(err.Error(), "Hangar's datastores are of type local_folder, azure_blob") {
		t.Errorf("azure_file datastore: %v", err)
	}
	if all, err := ts.admin.Datastores.List(ctx); err != nil || len(all) != 2 || all[0].Name != datastore.WorkspaceBlobStore {
		t.Errorf("datastores = %+v, %v", all, err)
	}
	_, err = ts.admin.Datastores.Get(ctx, "ghost")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("unknown datastore: %v", err)
	}
	for _, tt := range []struct {
		token, method, path, body string
		want                      int
	}{
		{"", http.MethodGet, "/api/data", "", http.StatusUnauthorized},
		{"", http.MethodGet, "/api/datastores", "", http.StatusUnauthorized},
		{adminToken, http.MethodGet, "/api/data?include_archived=maybe", "", http.StatusBadRequest},
		{adminToken, http.MethodGet, "/api/data/iris/versions/-two", "", http.StatusBadRequest},
		{adminToken, http.MethodPost, "/api/data", `{"spec": {"name": "d", "path": "/x"}}`, http.StatusBadRequest},
		{adminToken, http.MethodPut, "/api/datastores/a", `{"name": "b", "type": "local_folder", "path": "/x"}`, http.StatusBadRequest},
		{adminToken, http.MethodPost, "/api/data", `{"spec": {"name": "` + strings.Repeat("x", 2<<20) + `"}}`, http.StatusRequestEntityTooLarge},
	} {
		if got, eb := ts.raw(t, tt.token, tt.method, tt.path, tt.body); got != tt.want {
			t.Errorf("%s %s: %d %+v, want %d", tt.method, tt.path, got, eb, tt.want)
		}
	}
}
