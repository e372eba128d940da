package server

import (
	"net/http"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// Owners map curated names through the API; every role reads the mappings, with what each runs
// in; a contributor's change is refused with 403.
func TestCuratedEnvironmentRoutes(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	list := func(c *api.Client) map[string]api.CuratedEnvironment {
		t.Helper()
		ms, err := c.Environments.Curated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]api.CuratedEnvironment{}
		for _, m := range ms {
			out[m.Name] = m
		}
		return out
	}
	reader := api.NewClient(ts.url, newUserToken(t, ts, "rita", api.RoleReader))
	if m := list(reader)["sklearn-*"]; !m.Builtin || m.RunsIn != "interpreter /usr/bin/python3" {
		t.Errorf("the default sklearn-* as a reader reads it: %+v", m)
	}
	set := api.CuratedEnvironment{Name: "sklearn-1.5", Environment: job.Environment{Image: "sk:1.5"}, Description: "the lab's"}
	if m, err := ts.admin.Environments.SetCurated(ctx, set); err != nil || m.RunsIn != "image sk:1.5" || m.Builtin {
		t.Fatalf("set: %+v, %v", m, err)
	}
	if m := list(reader)["sklearn-1.5"]; m.Description != "the lab's" || m.Environment.Image != "sk:1.5" {
		t.Errorf("listed after set: %+v", m)
	}
	contributor := api.NewClient(ts.url, newUserToken(t, ts, "carl", api.RoleContributor))
	_, err := contributor.Environments.SetCurated(ctx, api.CuratedEnvironment{Name: "sklearn-1.5", Environment: job.Environment{Image: "mine"}})
	if st, _ := apiStatus(t, err); st != http.StatusForbidden {
		t.Errorf("a contributor's set: %d (%v), want 403", st, err)
	}
	if _, err := contributor.Environments.RemoveCurated(ctx, "sklearn-*"); err == nil {
		t.Error("a contributor removed a default")
	}
	if m, err := ts.admin.Environments.RemoveCurated(ctx, "sklearn-1.5"); err != nil || !m.Removed {
		t.Errorf("remove: %+v, %v", m, err)
	}
	if _, ok := list(reader)["sklearn-1.5"]; ok {
		t.Error("a removed mapping is still listed")
	}
	_, err = ts.admin.Environments.SetCurated(ctx, api.CuratedEnvironment{Name: "bad:1", Environment: job.Environment{Image: "x"}})
	if st, _ := apiStatus(t, err); st != http.StatusBadRequest {
		t.Errorf("a name with a version: %d (%v), want 400", st, err)
	}
}
