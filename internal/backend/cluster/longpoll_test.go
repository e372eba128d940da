package cluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// beatAsync sends a heartbeat that may wait a minute for work, and returns its reply.
func beatAsync(t *testing.T, d *Dispatcher, id string, hb api.AgentHeartbeat) <-chan *api.HeartbeatReply {
	t.Helper()
	out := make(chan *api.HeartbeatReply, 1)
	hb.PollMillis = time.Minute.Milliseconds()
	go func() {
		rep, err := d.Heartbeat(t.Context(), id, hb)
		if err != nil {
			t.Errorf("heartbeat: %v", err)
		}
		out <- rep
	}()
	return out
}

// waitRecorded waits until a heartbeat sent after `after` was recorded on the node: from then on
// the heartbeat waits for work (it takes its wake-up before recording).
func waitRecorded(t *testing.T, d *Dispatcher, id string, after time.Time) {
	t.Helper()
	testwait.Within(t, 30*time.Second, "the heartbeat to be recorded", func() bool {
		n, err := d.Store.Cluster.Node(t.Context(), id)
		return err == nil && n.LastHeartbeat.After(after)
	})
}

// A heartbeat that finds no work waits for it: the run assigned meanwhile comes back in its
// reply, instead of in the next heartbeat an interval later.
func TestHeartbeatWaitsForWork(t *testing.T) {
	d, c := newDispatcher(t)
	id := joined(t, d)
	c.advance(time.Second)
	rep := beatAsync(t, d, id, api.AgentHeartbeat{})
	waitRecorded(t, d, id, c.t.Add(-time.Millisecond))
	if err := d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	got := <-rep
	if got == nil || len(got.Assignments) != 1 || got.Assignments[0].RunID != "r1" {
		t.Fatalf("the waiting heartbeat returned %+v, want the assignment of r1", got)
	}

	// A cancel and a release wake a waiting heartbeat as well.
	c.advance(time.Second)
	rep = beatAsync(t, d, id, api.AgentHeartbeat{Acks: []int64{got.Assignments[0].ID}, Runs: []api.AgentRun{{RunID: "r1", Alive: true}}})
	waitRecorded(t, d, id, c.t.Add(-time.Millisecond))
	if err := d.Cancel(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	if got := <-rep; got == nil || len(got.Cancels) != 1 || len(got.Assignments) != 0 {
		t.Fatalf("the waiting heartbeat returned %+v, want the cancel only", got)
	}
	c.advance(time.Second)
	rep = beatAsync(t, d, id, api.AgentHeartbeat{Runs: []api.AgentRun{{RunID: "r1", Alive: true}}})
	waitRecorded(t, d, id, c.t.Add(-time.Millisecond))
	if err := d.Release(t.Context(), id, "idle for 2m"); err != nil {
		t.Fatal(err)
	}
	if got := <-rep; got == nil || !got.Release || got.Reason != "idle for 2m" {
		t.Fatalf("the waiting heartbeat returned %+v, want the release", got)
	}
}

// Work not yet sent and a release the agent has not heard of are answered at once; with nothing
// new, the heartbeat returns empty when its poll ends.
func TestHeartbeatAnswersNewsAtOnce(t *testing.T) {
	d, _ := newDispatcher(t)
	id := joined(t, d)
	if err := d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	// A minute's poll inside a context of 30 s: waiting would fail the call.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	hb := api.AgentHeartbeat{PollMillis: time.Minute.Milliseconds()}
	rep, err := d.Heartbeat(ctx, id, hb)
	if err != nil || len(rep.Assignments) != 1 {
		t.Fatalf("heartbeat with work waiting = %+v, %v", rep, err)
	}
	if err := d.Release(t.Context(), id, "scale down"); err != nil {
		t.Fatal(err)
	}
	hb.Acks = []int64{rep.Assignments[0].ID}
	if rep, err = d.Heartbeat(ctx, id, hb); err != nil || !rep.Release {
		t.Fatalf("heartbeat of a released node = %+v, %v", rep, err)
	}
	other := joined(t, d)
	rep, err = d.Heartbeat(ctx, other, api.AgentHeartbeat{PollMillis: 5})
	if err != nil || len(rep.Assignments)+len(rep.Cancels) != 0 || rep.Release {
		t.Errorf("a poll with nothing new = %+v, %v", rep, err)
	}
}

// A heartbeat whose agent gave up sends nothing: the work stays unsent for the next one.
func TestHeartbeatCanceledLeavesWorkUnsent(t *testing.T) {
	d, c := newDispatcher(t)
	id := joined(t, d)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	c.advance(time.Second)
	go func() {
		_, err := d.Heartbeat(ctx, id, api.AgentHeartbeat{PollMillis: time.Minute.Milliseconds()})
		errc <- err
	}()
	waitRecorded(t, d, id, c.t.Add(-time.Millisecond))
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a canceled heartbeat answered")
	}
	if err := d.Assign(t.Context(), id, "r1"); err != nil {
		t.Fatal(err)
	}
	pending, _ := d.Store.Cluster.Assignments(t.Context(), id, true)
	if len(pending) != 1 || !pending[0].DeliveredAt.IsZero() {
		t.Errorf("pending work %+v", pending)
	}
}

// Reports that change what placement decides from call Changed (the controller's kick): a
// join, a run that ended, an agent that left. A report that changes nothing does not.
func TestAgentReportsWakeTheController(t *testing.T) {
	d, _ := newDispatcher(t)
	var kicks atomic.Int32
	d.Runs = testRuns{kick: func() { kicks.Add(1) }}
	id := joined(t, d)
	if kicks.Load() != 1 {
		t.Errorf("a join kicked %d times", kicks.Load())
	}
	beat := func(hb api.AgentHeartbeat, want int32, what string) {
		t.Helper()
		before := kicks.Load()
		if _, err := d.Heartbeat(t.Context(), id, hb); err != nil {
			t.Fatal(err)
		}
		if got := kicks.Load() - before; got != want {
			t.Errorf("%s: %d kicks, want %d", what, got, want)
		}
	}
	running := []api.AgentRun{{RunID: "r1", Alive: true}}
	beat(api.AgentHeartbeat{Runs: running}, 0, "a run started (nothing freed)")
	beat(api.AgentHeartbeat{Runs: running}, 0, "the same report again")
	done := []api.AgentRun{{RunID: "r1", Final: &job.Result{State: "Completed"}}}
	beat(api.AgentHeartbeat{Runs: done}, 1, "the run ended")
	beat(api.AgentHeartbeat{Runs: done}, 0, "the ended run again")
	beat(api.AgentHeartbeat{Runs: done, Leaving: true}, 1, "the agent left")
	if n, _ := d.Store.Cluster.Node(t.Context(), id); n.State != compute.NodeUnusable {
		t.Errorf("node %s after its agent left", n.State)
	}
}
