package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

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

// node), 3 instances in all.
func testPool() compute.Spec {
	return compute.Spec{Name: compute.ServerlessName, Type: compute.TypeServerless, Serverless: &compute.ServerlessSpec{
		Sizes:       []compute.ServerlessSize{{Name: "local-quarter"}, {Name: "local-half", MaxInstances: 1}},
		DefaultSize: "local-quarter", MaxInstances: 3, IdleTimeBeforeScaleDown: 5,
		Provider: compute.Provider{Type: compute.ProviderLocal}, MaxProvisionRetries: 3, ProvisionTimeout: 900,
	}}
}
