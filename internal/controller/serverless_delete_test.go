package controller

import (
	"errors"
	"testing"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Deleting the serverless pool takes its clusters with it: refused while runs are active on
// them (naming the runs), done once they ended, and at once with force (cancelling them).
// Targets that are not the pool's stay.
func TestDeleteServerlessPoolDeletesItsClusters(t *testing.T) {
	for _, force := range []bool{false, true} {
		f := serverlessFixture(t)
		ctx := t.Context()
		if _, err := f.c.Workspace.Computes.Create(ctx, testPool(), false); err != nil {
			t.Fatal(err)
		}
		other := compute.Spec{Name: "pool", Type: compute.TypeCluster, Cluster: &compute.ClusterSpec{Size: "local-quarter", MaxInstances: 1}}
		if _, err := f.c.Workspace.Computes.Create(ctx, other, false); err != nil {
			t.Fatal(err)
		}
		quarter := f.create(t, job.Spec{Compute: "serverless"})
		half := f.create(t, job.Spec{Compute: "serverless", Resources: job.Resources{InstanceType: "local-half"}})
		if !force {
			err := f.c.Workspace.Computes.Delete(ctx, compute.ServerlessName, false)
			wantKind(t, err, Conflict, "the serverless pool's clusters have 2 active runs",
				quarter.ID+" (Queued on serverless_local-quarter)", half.ID+" (Queued on serverless_local-half)", "--force")
			for _, name := range []string{compute.ServerlessName, "serverless_local-quarter", "serverless_local-half"} {
				if _, err := f.c.Store.Cluster.Compute(ctx, name); err != nil {
					t.Errorf("after the refused delete, %s: %v", name, err)
				}
			}
			for _, r := range []*job.Run{quarter, half} {
				if _, err := f.c.Cancel(ctx, r.ID); err != nil {
					t.Fatal(err)
				}
			}
			f.reconcile(t) // the cancels end the runs
		}
		if err := f.c.Workspace.Computes.Delete(ctx, compute.ServerlessName, force); err != nil {
			t.Fatalf("delete (force %v): %v", force, err)
		}
		for _, name := range []string{compute.ServerlessName, "serverless_local-quarter", "serverless_local-half"} {
			if _, err := f.c.Store.Cluster.Compute(ctx, name); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("force %v: %s after the pool's delete: %v", force, name, err)
			}
		}
		f.reconcile(t)
		if _, err := f.c.Store.Cluster.Compute(ctx, "pool"); err != nil {
			t.Errorf("another cluster went with the pool: %v", err)
		}
		for _, r := range []*job.Run{quarter, half} {
			if got := f.run(t, r.ID); !got.Status.Terminal() {
				t.Errorf("force %v: run %s is %s", force, r.ID, got.Status)
			}
		}
	}
}
