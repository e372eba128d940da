package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
)

// A workspace whose owner configured no serverless pool lists and shows one all the same: this
// machine's; default_compute may name it. Once an owner configures a pool, that one is shown,
// configured.
func TestServerlessPoolView(t *testing.T) {
	ts := newTestServer(t)
	ts.ctrl.Backends[compute.TypeCluster] = ts.fake // the same map as the server's
	ctx := t.Context()
	pool := func(c *api.Compute) *api.Compute {
		t.Helper()
		if c == nil || c.Type != compute.TypeServerless {
			t.Fatalf("the serverless pool's entry: %+v", c)
		}
		return c
	}
	listed := func() *api.Compute {
		t.Helper()
		cs, err := ts.admin.Computes.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cs {
			if cs[i].Name == compute.ServerlessName {
				return &cs[i]
			}
		}
		return nil
	}
	machine := &api.ServerlessPool{Configured: false, Capacity: "this machine; no pool configured"}
	for what, c := range map[string]*api.Compute{"list": listed(), "show": must(ts.admin.Computes.Get(ctx, "serverless"))} {
		c = pool(c)
		if strings.HasPrefix(c.State, "unsupported") || c.Default || c.Description != compute.MachinePoolDescription {
			t.Errorf("%s: state %q, default %v, description %q", what, c.State, c.Default, c.Description)
		}
		if diff := cmp.Diff(machine, c.ServerlessPool); diff != "" {
			t.Errorf("%s: serverless_pool (-want +got):\n%s", what, diff)
		}
	}
	if err := ts.admin.Workspace.SetSetting(ctx, "default_compute", "serverless"); err != nil {
		t.Fatalf("default_compute serverless without a pool: %v", err)
	}
	if c := pool(listed()); !c.Default {
		t.Error("with default_compute serverless the pool is not the default")
	}

	configured := compute.MachinePool()
	configured.Description = "the lab's pool"
	props, err := json.Marshal(compute.Stored{Spec: configured})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.store.Cluster.PutCompute(ctx, compute.Target{Name: configured.Name, Type: configured.Type,
		Description: configured.Description, Properties: props}); err != nil {
		t.Fatal(err)
	}
	c := pool(must(ts.admin.Computes.Get(ctx, "serverless")))
	want := &api.ServerlessPool{Configured: true, Capacity: "local provider: agents on this machine"}
	if diff := cmp.Diff(want, c.ServerlessPool); diff != "" || c.Description != "the lab's pool" {
		t.Errorf("configured pool %q: serverless_pool (-want +got):\n%s", c.Description, diff)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
