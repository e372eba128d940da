package cluster

import (
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/tokens"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newDispatcher(t *testing.T) (*Dispatcher, *clock) {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: time.Unix(1700000000, 0).UTC()}
	return &Dispatcher{Store: st, Key: []byte("key"), Runs: testRuns{},
		Now: c.now, Log: slog.New(slog.DiscardHandler)}, c
}

var info = api.AgentInfo{
	Capacity: resources.Vector{MilliCPU: 4000, Memory: 16 * resources.Gi, GPU: 1},
	GPUs:     []compute.GPU{{Index: 2, Name: "T4"}},
	Node:     &compute.NodeInfo{Hostname: "box", Cores: 16},
	Labels:   map[string]string{"zone": "a"},
}

func TestCreateAndJoin(t *testing.T) {
	d, c := newDispatcher(t)
	ctx := t.Context()
	n, tok, err := d.CreateNode(ctx, NewNode{Pool: "gpu", Size: sizes.Size{Name: "local-gpu"}, Reason: "scale up",
		Labels: map[string]string{"pool": "gpu"}, JoinTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if n.State != compute.NodeProvisioning || n.JoinDeadline != c.t.Add(time.Minute) {
		t.Fatalf("new node %+v", n)
	}
	c.advance(10 * time.Second)
	rep, err := d.Join(ctx, tok, api.JoinRequest{NodeID: n.ID, AgentInfo: info})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NodeID != n.ID || rep.Pool != "gpu" || d.Authenticate(rep.AgentToken, n.ID) != nil {
		t.Fatalf("join reply %+v", rep)
	}
	got, err := d.Store.Cluster.Node(ctx, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != compute.NodeIdle || got.Capacity != info.Capacity || got.JoinedAt != c.t || got.IdleSince != c.t ||
		!cmp.Equal(got.Labels, map[string]string{"pool": "gpu", "zone": "a"}) || got.Info.Hostname != "box" {
		t.Errorf("joined node %+v", got)
	}
	evs, _ := d.Store.Cluster.NodeEvents(ctx, store.NodeEventFilter{Pool: "gpu"})
	if len(evs) != 2 || evs[0].Reason != "scale up" || evs[1].To != compute.NodeIdle {
		t.Errorf("timeline %+v", evs)
	}
	// A restarted agent joins again with the same token and what it runs.
	if _, err := d.Join(ctx, tok, api.JoinRequest{AgentInfo: info, Runs: []api.AgentRun{{RunID: "r1", Alive: true}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Store.Cluster.Node(ctx, n.ID); got.State != compute.NodeRunning || len(got.Runs) != 1 || !got.IdleSince.IsZero() {
		t.Errorf("re-joined node %+v", got)
	}
}

func TestJoinRefused(t *testing.T) {
	d, c := newDispatcher(t)
	ctx := t.Context()
	n, tok, err := d.CreateNode(ctx, NewNode{Pool: "gpu", JoinTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := d.CreateNode(ctx, NewNode{Pool: "cpu"})
	released, relTok, _ := d.CreateNode(ctx, NewNode{Pool: "gpu"})
	if err := d.Release(ctx, released.ID, "idle 2m"); err != nil {
		t.Fatal(err)
	}
	deleted, delTok, _ := d.CreateNode(ctx, NewNode{Pool: "gpu"})
	if err := d.Delete(ctx, deleted.ID, "never joined"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tok  string
		req  api.JoinRequest
		skew time.Duration
		want error
	}{
		{"expired", tok, api.JoinRequest{AgentInfo: info}, time.Minute, ErrUnauthorized},
		{"another key", tokens.Key([]byte("other")).MintJoin("gpu", n.ID, c.t.Add(time.Hour)), api.JoinRequest{AgentInfo: info}, 0, ErrUnauthorized},
		{"wrong pool", tokens.Key(d.Key).MintJoin("gpu", other.ID, c.t.Add(time.Hour)), api.JoinRequest{AgentInfo: info}, 0, ErrUnauthorized},
		{"other node id", tok, api.JoinRequest{NodeID: other.ID, AgentInfo: info}, 0, ErrUnauthorized},
		{"agent token", tokens.Key(d.Key).Agent(n.ID), api.JoinRequest{AgentInfo: info}, 0, ErrUnauthorized},
		{"no capacity", tok, api.JoinRequest{}, 0, ErrInvalid},
		{"gpus do not add up", tok, api.JoinRequest{AgentInfo: api.AgentInfo{Capacity: info.Capacity}}, 0, ErrInvalid},
		{"released node", relTok, api.JoinRequest{AgentInfo: info}, 0, ErrGone},
		{"deleted node", delTok, api.JoinRequest{AgentInfo: info}, 0, ErrGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d.Now = func() time.Time { return c.t.Add(tt.skew) }
			if _, err := d.Join(ctx, tt.tok, tt.req); !errors.Is(err, tt.want) {
				t.Errorf("Join = %v, want %v", err, tt.want)
			}
		})
	}
	if got, _ := d.Store.Cluster.Node(ctx, n.ID); got.State != compute.NodeProvisioning {
		t.Errorf("a refused join changed the node: %+v", got)
	}
}

func joined(t *testing.T, d *Dispatcher) string {
	t.Helper()
	n, tok, err := d.CreateNode(t.Context(), NewNode{Pool: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Join(t.Context(), tok, api.JoinRequest{AgentInfo: info}); err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func TestHeartbeatDeliversUntilAcked(t *testing.T) {
	d, c := newDispatcher(t)
	ctx := t.Context()
	id := joined(t, d)
	if err := d.Assign(ctx, id, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Assign(ctx, id, "r1"); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second)
	rep, err := d.Heartbeat(ctx, id, api.AgentHeartbeat{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Assignments) != 1 || rep.Assignments[0].RunID != "r1" || rep.Assignments[0].Token != "tok-r1" || rep.Release {
		t.Fatalf("first reply %+v", rep)
	}
	if n, _ := d.Store.Cluster.Node(ctx, id); n.State != compute.NodeRunning {
		t.Errorf("a node with a waiting assignment is %s", n.State)
	}
	// The reply was lost: the same work comes again.
	again, err := d.Heartbeat(ctx, id, api.AgentHeartbeat{})
	if err != nil || len(again.Assignments) != 1 || again.Assignments[0].ID != rep.Assignments[0].ID {
		t.Fatalf("second reply %+v, %v", again, err)
	}
	ack := api.AgentHeartbeat{Runs: []api.AgentRun{{RunID: "r1", PID: 7, Alive: true}}, Acks: []int64{rep.Assignments[0].ID}}
	if rep, err = d.Heartbeat(ctx, id, ack); err != nil || len(rep.Assignments) != 0 {
		t.Fatalf("reply after ack %+v, %v", rep, err)
	}
	if err := d.Cancel(ctx, id, "r1"); err != nil {
		t.Fatal(err)
	}
	rep, err = d.Heartbeat(ctx, id, api.AgentHeartbeat{Runs: ack.Runs})
	if err != nil || len(rep.Cancels) != 1 || rep.Cancels[0].RunID != "r1" {
		t.Fatalf("cancel reply %+v, %v", rep, err)
	}
	c.advance(time.Second)
	done := api.AgentHeartbeat{Runs: []api.AgentRun{{RunID: "r1", Final: &job.Result{State: "Canceled"}}}, Acks: []int64{rep.Cancels[0].ID}}
	if _, err := d.Heartbeat(ctx, id, done); err != nil {
		t.Fatal(err)
	}
	n, _ := d.Store.Cluster.Node(ctx, id)
	if n.State != compute.NodeIdle || n.IdleSince != c.t || n.LastHeartbeat != c.t || n.Runs[0].Final.State != "Canceled" {
		t.Errorf("node after the run ended %+v", n)
	}
	if pending, _ := d.Store.Cluster.Assignments(ctx, id, true); len(pending) != 0 {
		t.Errorf("pending after acks: %+v", pending)
	}
}

func TestHeartbeatReleaseLeaveAndGone(t *testing.T) {
	d, _ := newDispatcher(t)
	ctx := t.Context()
	id := joined(t, d)
	if err := d.Release(ctx, id, "idle for 2m"); err != nil {
		t.Fatal(err)
	}
	if err := d.Assign(ctx, id, "r9"); !errors.Is(err, ErrGone) {
		t.Errorf("Assign to a releasing node = %v, want ErrGone", err)
	}
	rep, err := d.Heartbeat(ctx, id, api.AgentHeartbeat{})
	if err != nil || !rep.Release || rep.Reason != "idle for 2m" {
		t.Fatalf("reply to a releasing node %+v, %v", rep, err)
	}
	if _, err := d.Heartbeat(ctx, id, api.AgentHeartbeat{Leaving: true}); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Store.Cluster.Node(ctx, id); n.State != compute.NodeReleasing {
		t.Errorf("leaving a releasing node made it %s", n.State)
	}
	other := joined(t, d)
	if _, err := d.Heartbeat(ctx, other, api.AgentHeartbeat{Leaving: true}); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Store.Cluster.Node(ctx, other); n.State != compute.NodeUnusable {
		t.Errorf("an agent that left made its node %s", n.State)
	}
	reg := info
	reg.Capacity.MilliCPU = 2000
	if _, err := d.Heartbeat(ctx, other, api.AgentHeartbeat{Register: &reg}); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Store.Cluster.Node(ctx, other); n.State != compute.NodeIdle || n.Capacity.MilliCPU != 2000 {
		t.Errorf("re-registered node %+v", n)
	}
	if err := d.Delete(ctx, other, "released"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Heartbeat(ctx, other, api.AgentHeartbeat{}); !errors.Is(err, ErrGone) {
		t.Errorf("heartbeat of a deleted node = %v, want ErrGone", err)
	}
	if err := d.Cancel(ctx, other, "r1"); !errors.Is(err, ErrGone) {
		t.Errorf("Cancel on a deleted node = %v, want ErrGone", err)
	}
}

func TestAuthenticate(t *testing.T) {
	d, _ := newDispatcher(t)
	tests := []struct {
		name, token, node string
		ok                bool
	}{
		{"own token", tokens.Key(d.Key).Agent("n1"), "n1", true},
		{"another node's token", tokens.Key(d.Key).Agent("n2"), "n1", false},
		{"run token", "n1.deadbeef", "n1", false},
		{"none", "", "n1", false},
	}
	for _, tt := range tests {
		if err := d.Authenticate(tt.token, tt.node); (err == nil) != tt.ok {
			t.Errorf("%s: Authenticate = %v", tt.name, err)
		}
	}
}
