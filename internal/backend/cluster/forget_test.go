package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

// An agent reports the runs that ended on its node until the workspace has recorded their end:
// then the reply tells it to forget them, so that a busy node's heartbeats (and its row, and
// every placement pass that reads it) do not grow with every run it ran. Runs whose end the
// workspace has not recorded, or that it does not know, stay reported. A run the agent took and
// no longer reports is not alive; one still on its way to the agent is.
func TestEndedRunsAreForgottenOnceRecorded(t *testing.T) {
	b, _ := newBackend(t)
	ctx := t.Context()
	node := joined(t, b.Agents)
	target := compute.Target{Name: "p", Type: compute.TypeCluster, Properties: []byte(`{"spec":{"name":"p","type":"amlcompute"}}`)}
	if err := b.Store.Cluster.PutCompute(ctx, target); err != nil {
		t.Fatal(err)
	}
	for id, st := range map[string]job.State{"done": job.Completed, "going": job.Running} {
		if err := b.Store.RunWrites.CreateRun(ctx, &job.Run{ID: id, Compute: "p", Status: st, Spec: job.Spec{Compute: "p"}}); err != nil {
			t.Fatal(err)
		}
	}
	var handles = map[string]backend.Handle{}
	for _, id := range []string{"done", "going", "unknown", "new"} {
		h, err := b.Submit(ctx, backend.Launch{RunID: id, Target: target, Attempt: 1, Placement: &job.Placement{Nodes: []string{node}}})
		if err != nil {
			t.Fatal(err)
		}
		handles[id] = h
	}
	work, err := b.Agents.Heartbeat(ctx, node, api.AgentHeartbeat{})
	if err != nil {
		t.Fatal(err)
	}
	var acks []int64
	for _, a := range work.Assignments {
		if a.RunID != "new" {
			acks = append(acks, a.ID)
		}
	}
	ended := &job.Result{State: job.Completed}
	report := []api.AgentRun{{RunID: "done", Final: ended}, {RunID: "going", Final: ended}, {RunID: "unknown", Final: ended}}
	rep, err := b.Agents.Heartbeat(ctx, node, api.AgentHeartbeat{Runs: report, Acks: acks})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Forget, []string{"done"}) {
		t.Errorf("forget %q, want only the run whose end is recorded", rep.Forget)
	}
	// The agent forgets "done"; it reports the others as before.
	if _, err := b.Agents.Heartbeat(ctx, node, api.AgentHeartbeat{Runs: report[1:]}); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Status(ctx, handles["done"]); err != nil || st.Alive || !strings.Contains(st.Reason, "no longer reports") {
		t.Errorf("status of the forgotten run = %+v, %v; want not alive, no longer reported", st, err)
	}
	if st, err := b.Status(ctx, handles["unknown"]); err != nil || st.Alive || st.Final == nil {
		t.Errorf("status of a reported ended run = %+v, %v; want its result", st, err)
	}
	if st, err := b.Status(ctx, handles["new"]); err != nil || !st.Alive {
		t.Errorf("status of a run not yet acknowledged = %+v, %v; want alive (on its way)", st, err)
	}
}
