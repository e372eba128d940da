package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// hangar model alias's routes: a contributor sets, moves and deletes an alias, a reader lists
// them and is refused the writes; model show NAME@ALIAS answers the version it names.
func TestModelAliasRoutes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	manifest, err := ts.blobs.PutBytes([]byte(`{"entries":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := ts.admin.Models.Create(ctx, api.CreateModelRequest{Spec: model.Spec{Name: "iris", Path: "/m"}, Manifest: manifest}); err != nil {
			t.Fatal(err)
		}
	}
	ann := api.NewClient(ts.url, newUserToken(t, ts, "ann", api.RoleContributor))
	rita := api.NewClient(ts.url, newUserToken(t, ts, "rita", api.RoleReader))
	if v, err := ann.ModelAliases.Set(ctx, "iris", "champion", "1"); err != nil || v.Version != "1" {
		t.Fatalf("set = %+v, %v", v, err)
	}
	if v, err := ann.ModelAliases.Set(ctx, "iris", "champion", "2"); err != nil || v.Version != "2" {
		t.Fatalf("move = %+v, %v", v, err)
	}
	if got, err := rita.Models.Get(ctx, "iris", "@champion"); err != nil || got.Version != "2" {
		t.Errorf("show iris@champion = %+v, %v; want version 2", got, err)
	}
	if as, err := rita.ModelAliases.List(ctx, "iris"); err != nil || len(as) != 1 || as[0] != (api.ModelAlias{Alias: "champion", Version: "2"}) {
		t.Errorf("list = %+v, %v", as, err)
	}
	_, err = rita.ModelAliases.Set(ctx, "iris", "champion", "1")
	if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Errorf("a reader's set: %v, want 403", err)
	}
	if st, _ := apiStatus(t, rita.ModelAliases.Delete(ctx, "iris", "champion")); st != http.StatusForbidden {
		t.Errorf("a reader's delete: want 403")
	}
	for _, tt := range []struct {
		alias, version string
		status         int
		msg            string
	}{
		{"champion", "9", http.StatusNotFound, "no model iris:9"},
		{"latest", "1", http.StatusBadRequest, "reserved"},
		{"a.b", "1", http.StatusBadRequest, "expected letters, digits"},
	} {
		_, err := ann.ModelAliases.Set(ctx, "iris", tt.alias, tt.version)
		if st, _ := apiStatus(t, err); st != tt.status || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("set %s → %s: %v, want %d with %q", tt.alias, tt.version, err, tt.status, tt.msg)
		}
	}
	if err := ann.ModelAliases.Delete(ctx, "iris", "champion"); err != nil {
		t.Fatal(err)
	}
	err = ann.ModelAliases.Delete(ctx, "iris", "champion")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound || !strings.Contains(err.Error(), "model iris has no alias champion") {
		t.Errorf("delete again: %v, want 404", err)
	}
	_, err = rita.Models.Get(ctx, "iris", "@champion")
	if st, _ := apiStatus(t, err); st != http.StatusNotFound {
		t.Errorf("show a deleted alias: %v, want 404", err)
	}
}
