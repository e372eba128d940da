package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
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

// The sizing decision: which of the pool's clusters a job's resources ask for, and what is refused.
func TestServerlessCluster(t *testing.T) {
	tests := []struct {
		name      string
		res       job.Resources
		cluster   string
		max       int
		wantError string
	}{
		{name: "no instance_type: the default size", cluster: "serverless_local-quarter", max: 3},
		{name: "a size in any case", res: job.Resources{InstanceType: "LOCAL-HALF"}, cluster: "serverless_local-half", max: 1},
		{name: "the whole quota", res: job.Resources{InstanceCount: 3}, cluster: "serverless_local-quarter", max: 3},
		{name: "a size the pool does not offer", res: job.Resources{InstanceType: "Standard_DS3_v2"},
			wantError: "resources.instance_type: size Standard_DS3_v2 is not offered by the serverless pool (offered: local-quarter, local-half)"},
		{name: "more than the quota", res: job.Resources{InstanceCount: 4},
			wantError: "resources.instance_count: the job asks for 4 instances, the serverless pool allows 3 of size local-quarter (max_instances)"},
		{name: "more than the size's bound", res: job.Resources{InstanceType: "local-half", InstanceCount: 2},
			wantError: "resources.instance_count: the job asks for 2 instances, the serverless pool allows 1 of size local-half (max_instances)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serverlessCluster(testPool(), tt.res)
			if tt.wantError != "" {
				if err == nil || err.Error() != tt.wantError {
					t.Fatalf("error %v, want %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := &compute.ClusterSpec{Size: compute.ServerlessSizeOf(tt.cluster), Tier: compute.TierDedicated,
				MaxInstances: tt.max, IdleTimeBeforeScaleDown: 5, EnableNodePublicIP: true,
				Provider: compute.Provider{Type: compute.ProviderLocal}, MaxProvisionRetries: 3, ProvisionTimeout: 900,
				QuotaGroup: "serverless", QuotaGroupInstances: 3}
			if got.Name != tt.cluster || got.Type != compute.TypeCluster {
				t.Errorf("target %s (%s), want %s (cluster)", got.Name, got.Type, tt.cluster)
			}
			if d := cmp.Diff(want, got.Cluster); d != "" {
				t.Errorf("cluster (-want +got):\n%s", d)
			}
		})
	}
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
	tg, err := f.c.Store.Compute(ctx, "serverless_local-quarter")
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
	if _, err := f.c.Store.Compute(ctx, compute.ServerlessName); err == nil {
		t.Error("this machine's pool was stored; it is never stored")
	}

	if err := f.c.Store.SetSetting(ctx, SettingDefaultCompute, "serverless"); err != nil {
		t.Fatal(err)
	}
	if r := f.create(t, job.Spec{}); r.Compute != "serverless_local-quarter" {
		t.Errorf("with default_compute serverless a job with no compute runs on %s", r.Compute)
	}
	target, err := f.c.resolveCompute(ctx, "serverless")
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
	if _, err := f.c.CreateCompute(ctx, pool, false); err != nil {
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
	if _, err := f.c.CreateCompute(ctx, pool, true); err != nil {
		t.Fatal(err)
	}
	tg, err := f.c.Store.Compute(ctx, "serverless_local-quarter")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := compute.Load(*tg)
	if c := st.Spec.Cluster; c.MaxInstances != 5 || c.QuotaGroupInstances != 5 || c.MinInstances != 0 {
		t.Errorf("after the pool's update the cluster is %+v", c)
	}
	if err := f.c.Store.SetSetting(ctx, SettingDefaultCompute, "local"); err != nil {
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
	u := ServerlessUse(r)
	if u == nil || u.Pool != "serverless" || u.Size != "local-quarter" || u.Instances != 2 || len(u.Nodes) != 2 {
		t.Errorf("got %+v", u)
	}
	if u := ServerlessUse(&job.Run{Compute: "pool"}); u != nil {
		t.Errorf("a cluster's run: %+v", u)
	}
}

// A size the pool marks isolated makes its cluster isolated; the others' clusters are not.
func TestServerlessClusterIsolated(t *testing.T) {
	pool := testPool()
	pool.Serverless.Sizes[1].Isolated = true
	for size, want := range map[string]bool{"local-quarter": false, "local-half": true} {
		got, err := serverlessCluster(pool, job.Resources{InstanceType: size})
		if err != nil {
			t.Fatal(err)
		}
		if got.Cluster.Isolated != want {
			t.Errorf("cluster of %s isolated = %v, want %v", size, got.Cluster.Isolated, want)
		}
	}
}
