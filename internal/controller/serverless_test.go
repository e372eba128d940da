package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// pool is a serverless pool offering local-quarter (the default) and local-half (at most 1
// node), 3 instances in all.
func testPool() compute.Spec {
	return compute.Spec{Name: compute.ServerlessName, Type: compute.TypeServerless, Serverless: &compute.ServerlessSpec{
		Sizes:       []compute.ServerlessSize{{Name: "local-quarter"}, {Name: "local-half", MaxInstances: 1}},
		DefaultSize: "local-quarter", MaxInstances: 3, IdleTimeBeforeScaleDown: 5,
		Provider: compute.Provider{Type: compute.ProviderLocal}, MaxProvisionRetries: 3, ProvisionTimeout: 900,
	}}
}

// attachFake is a cluster backend whose catalog knows four sizes, spelled as below.
type attachFake struct{ *backendtest.Fake }

func (attachFake) Attach(_ context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	for _, known := range []string{"local-quarter", "local-half", "local-full", "Standard_E4s_v3"} {
		if strings.EqualFold(known, s.Cluster.Size) {
			s.Cluster.Size = known
			return nil, nil
		}
	}
	return nil, fmt.Errorf("size: unknown size %q", s.Cluster.Size)
}

func serverlessFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.c.Backends[compute.TypeCluster] = attachFake{backendtest.New()}
	return f
}

// Without a configured pool, serverless compute is this machine's: a job on it runs on a
// local-provider cluster of its size (local-quarter, or a size of the catalog it names, in the
// catalog's spelling); a size the catalog lacks is refused naming the field; a job that names
// no compute stays on the local target unless default_compute says serverless; a pipeline that
// runs its steps on serverless shows the pool as its compute.
func TestServerlessMachinePool(t *testing.T) {
	f := serverlessFixture(t)
	ctx := t.Context()
	for _, tc := range []struct {
		spec job.Spec
		want string
	}{
		{job.Spec{Compute: "serverless"}, "serverless_local-quarter"},
		{job.Spec{Compute: "serverless", Resources: job.Resources{InstanceType: "LOCAL-FULL"}}, "serverless_local-full"},
		{job.Spec{Compute: "serverless", Resources: job.Resources{InstanceType: "standard_e4s_v3", InstanceCount: 2}}, "serverless_Standard_E4s_v3"},
		{job.Spec{}, compute.LocalName},
	} {
		if r := f.create(t, tc.spec); r.Compute != tc.want {
			t.Errorf("%+v runs on %s, want %s", tc.spec, r.Compute, tc.want)
		}
	}
	tg, err := f.c.Store.Cluster.Compute(ctx, "serverless_local-quarter")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := compute.Load(*tg)
	if c := st.Spec.Cluster; c.Provider.Type != compute.ProviderLocal || c.MinInstances != 0 ||
		c.MaxInstances != compute.DefaultServerlessMaxInstances || c.QuotaGroup != compute.ServerlessName {
		t.Errorf("this machine's cluster: %+v", c)
	}
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "echo", Compute: "serverless",
		Resources: job.Resources{InstanceType: "Standard_Z99"}}})
	wantKind(t, err, Invalid, `resources.instance_type: size: unknown size "Standard_Z99"`)
	_, err = f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "echo", Compute: "serverless",
		Resources: job.Resources{InstanceCount: 5}}})
	wantKind(t, err, Invalid, "the serverless pool allows 4")
	if _, err := f.c.Store.Cluster.Compute(ctx, compute.ServerlessName); err == nil {
		t.Error("this machine's pool was stored; it is never stored")
	}

	if err := f.c.Store.SetSetting(ctx, workspace.SettingDefaultCompute, "serverless"); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, job.Spec{}); r.Compute != "serverless_local-quarter" {
		t.Errorf("with default_compute serverless a job with no compute runs on %s", r.Compute)
	}
	target, err := f.c.Workspace.ResolveCompute(ctx, "serverless")
	if err != nil || target.Name != compute.ServerlessName || target.Description != compute.MachinePoolDescription {
		t.Errorf("the pool as a pipeline's compute: %+v, %v", target, err)
	}
}

// With a pool, serverless jobs and jobs that name no compute run on the pool's cluster of their
// size, created on first use; default_compute still wins; a pool update reaches its clusters.
func TestServerlessWithPool(t *testing.T) {
	f := serverlessFixture(t)
	ctx := t.Context()
	pool := testPool()
	pool.Serverless.Sizes[1].Name = "Local-Half" // the catalog's spelling is kept
	if _, err := f.c.Workspace.Computes.Create(ctx, pool, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec job.Spec
		want string
	}{
		{job.Spec{}, "serverless_local-quarter"},
		{job.Spec{Compute: "serverless"}, "serverless_local-quarter"},
		{job.Spec{Compute: "serverless", Resources: job.Resources{InstanceType: "local-half"}}, "serverless_local-half"},
		{job.Spec{Compute: "local"}, "local"},
	} {
		if r := f.create(t, tc.spec); r.Compute != tc.want {
			t.Errorf("%+v runs on %s, want %s", tc.spec, r.Compute, tc.want)
		}
	}
	if _, err := f.c.Create(ctx, api.CreateJobRequest{Spec: job.Spec{Command: "echo", Compute: "serverless", Resources: job.Resources{InstanceCount: 9}}}); err == nil ||
		!strings.Contains(err.Error(), "the serverless pool allows 3") {
		t.Errorf("9 instances: %v", err)
	}
	pool.Serverless.MaxInstances = 5
	if _, err := f.c.Workspace.Computes.Create(ctx, pool, true); err != nil {
		t.Fatal(err)
	}
	tg, err := f.c.Store.Cluster.Compute(ctx, "serverless_local-quarter")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := compute.Load(*tg)
	if c := st.Spec.Cluster; c.MaxInstances != 5 || c.QuotaGroupInstances != 5 || c.MinInstances != 0 {
		t.Errorf("after the pool's update the cluster is %+v", c)
	}
	if err := f.c.Store.SetSetting(ctx, workspace.SettingDefaultCompute, "local"); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, job.Spec{}); r.Compute != "local" {
		t.Errorf("with default_compute local a job with no compute runs on %s", r.Compute)
	}
}

// job show's serverless line comes from the run's target and placement.
func TestServerlessUse(t *testing.T) {
	r := &job.Run{Compute: "serverless_local-quarter", Spec: job.Spec{Resources: job.Resources{InstanceCount: 2}},
		Placement: &job.Placement{Nodes: []string{"n1", "n2"}}}
	u := workspace.ServerlessUse(r)
	if u == nil || u.Pool != "serverless" || u.Size != "local-quarter" || u.Instances != 2 || len(u.Nodes) != 2 {
		t.Errorf("got %+v", u)
	}
	if u := workspace.ServerlessUse(&job.Run{Compute: "pool"}); u != nil {
		t.Errorf("a cluster's run: %+v", u)
	}
}
