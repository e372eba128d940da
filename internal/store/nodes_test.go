package store

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

var t0 = time.Unix(1700000000, 0).UTC()

func newNode(id, pool string, at time.Time) *Node {
	return &Node{ID: id, Pool: pool, State: compute.NodeProvisioning, Size: "Standard_D4s_v3", CreatedAt: at,
		JoinDeadline: at.Add(10 * time.Minute)}
}

func TestNodeRoundTrip(t *testing.T) {
	s, ctx := open(t), t.Context()
	n := newNode("n1", "gpu", t0)
	n.LowPriority, n.ProviderID = true, "vm-1"
	n.Labels = map[string]string{"zone": "a"}
	if err := s.Cluster.CreateNode(ctx, n, "scale up: 1 run waiting"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.CreateNode(ctx, n, ""); !errors.Is(err, ErrExists) {
		t.Errorf("second CreateNode = %v, want ErrExists", err)
	}
	got, err := s.Cluster.Node(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(n, got); diff != "" {
		t.Errorf("node (-want +got):\n%s", diff)
	}
	code := 0
	got, err = s.Cluster.UpdateNode(ctx, "n1", func(n *Node) ([]NodeEvent, error) {
		n.State, n.JoinedAt, n.LastHeartbeat, n.IdleSince = compute.NodeRunning, t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(time.Second)
		n.Capacity = resources.Vector{MilliCPU: 4000, Memory: 16 * resources.Gi, GPU: 1}
		n.Allocated = resources.Vector{MilliCPU: 1000}
		n.GPUs = []compute.GPU{{Index: 0, Name: "T4"}}
		n.Info = &compute.NodeInfo{Hostname: "h", Cores: 4}
		n.Runs = []NodeRun{{RunID: "r1", PID: 42, Alive: false, Final: &job.Result{State: job.Completed, ExitCode: &code, Time: t0}}}
		return []NodeEvent{{Time: t0.Add(time.Second), From: compute.NodeProvisioning, To: compute.NodeRunning, Reason: "joined"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Cluster.Node(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("updated node (-want +got):\n%s", diff)
	}
	boom := errors.New("boom")
	if _, err := s.Cluster.UpdateNode(ctx, "n1", func(n *Node) ([]NodeEvent, error) { n.State = compute.NodeIdle; return nil, boom }); err != boom {
		t.Errorf("UpdateNode with a failing fn = %v", err)
	}
	if n, _ := s.Cluster.Node(ctx, "n1"); n.State != compute.NodeRunning {
		t.Errorf("a failed update wrote state %s", n.State)
	}
	if _, err := s.Cluster.UpdateNode(ctx, "nope", func(*Node) ([]NodeEvent, error) { return nil, nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateNode(nope) = %v, want ErrNotFound", err)
	}
}

func TestNodesFilterAndEvents(t *testing.T) {
	s, ctx := open(t), t.Context()
	for i, id := range []string{"b", "a", "c"} {
		n := newNode(id, "p1", t0.Add(time.Duration(i)*time.Second))
		if id == "c" {
			n.Pool = "p2"
		}
		if err := s.Cluster.CreateNode(ctx, n, "created "+id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Cluster.UpdateNode(ctx, "a", func(n *Node) ([]NodeEvent, error) {
		n.State = compute.NodeIdle
		return []NodeEvent{{Time: t0.Add(time.Minute), From: compute.NodeProvisioning, To: compute.NodeIdle, Reason: "joined"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(f NodeFilter) []string {
		ns, err := s.Cluster.Nodes(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out
	}
	tests := []struct {
		name string
		f    NodeFilter
		want []string
	}{
		{"all, oldest first", NodeFilter{}, []string{"b", "a", "c"}},
		{"pool", NodeFilter{Pool: "p1"}, []string{"b", "a"}},
		{"states", NodeFilter{States: []compute.NodeState{compute.NodeIdle, compute.NodeRunning}}, []string{"a"}},
		{"pool and state", NodeFilter{Pool: "p2", States: []compute.NodeState{compute.NodeProvisioning}}, []string{"c"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(tt.f)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if err := s.Cluster.DeleteNode(ctx, "a", NodeEvent{Time: t0.Add(2 * time.Minute), Reason: "idle 2m"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.DeleteNode(ctx, "a", NodeEvent{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteNode = %v", err)
	}
	evs, err := s.Cluster.NodeEvents(ctx, NodeEventFilter{Pool: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for _, e := range evs {
		got = append(got, [3]string{e.NodeID, string(e.From) + ">" + string(e.To), e.Reason})
	}
	want := [][3]string{{"b", ">provisioning", "created b"}, {"a", ">provisioning", "created a"},
		{"a", "provisioning>idle", "joined"}, {"a", "idle>deleted", "idle 2m"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	last, err := s.Cluster.NodeEvents(ctx, NodeEventFilter{NodeID: "a", Limit: 2})
	if err != nil || len(last) != 2 || last[0].To != compute.NodeIdle || last[1].To != compute.NodeDeleted {
		t.Errorf("NodeEvents(node a, limit 2) = %+v, %v", last, err)
	}
}

func TestAssignments(t *testing.T) {
	s, ctx := open(t), t.Context()
	if err := s.Cluster.CreateNode(ctx, newNode("n1", "p", t0), ""); err != nil {
		t.Fatal(err)
	}
	a1, err := s.Cluster.EnqueueAssignment(ctx, Assignment{NodeID: "n1", RunID: "r1", Kind: AssignRun, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Cluster.EnqueueAssignment(ctx, Assignment{NodeID: "n1", RunID: "r1", Kind: AssignRun, CreatedAt: t0.Add(time.Hour)})
	if err != nil || again != a1 {
		t.Errorf("enqueue again = %d, %v; want %d", again, err, a1)
	}
	c1, err := s.Cluster.EnqueueAssignment(ctx, Assignment{NodeID: "n1", RunID: "r1", Kind: CancelRun, CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cluster.EnqueueAssignment(ctx, Assignment{NodeID: "ghost", RunID: "r1", Kind: AssignRun, CreatedAt: t0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("enqueue on a missing node = %v, want ErrNotFound", err)
	}
	if err := s.Cluster.MarkDelivered(ctx, "n1", []int64{a1, c1}, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.MarkDelivered(ctx, "n1", []int64{a1}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.AckAssignments(ctx, "other", []int64{a1}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.AckAssignments(ctx, "n1", []int64{a1}, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	pending, err := s.Cluster.Assignments(ctx, "n1", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []Assignment{{ID: c1, NodeID: "n1", RunID: "r1", Kind: CancelRun, CreatedAt: t0, DeliveredAt: t0.Add(time.Second)}}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	all, err := s.Cluster.Assignments(ctx, "n1", false)
	if err != nil || len(all) != 2 || all[0].AckedAt != t0.Add(2*time.Second) || all[0].DeliveredAt != t0.Add(time.Second) {
		t.Errorf("all = %+v, %v", all, err)
	}
	if err := s.Cluster.DeleteNode(ctx, "n1", NodeEvent{Time: t0}); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.Cluster.Assignments(ctx, "n1", false); len(left) != 0 {
		t.Errorf("work left after the node was deleted: %+v", left)
	}
}

func TestSizes(t *testing.T) {
	s, ctx := open(t), t.Context()
	z := sizes.Size{Name: "OnPrem-A100", Cores: 32, MemoryBytes: 256 * resources.Gi, GPUs: 8, GPUModel: "A100",
		PricePerHour: 1.5, Family: "onprem"}
	if err := s.Cluster.CreateSize(ctx, z, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.CreateSize(ctx, sizes.Size{Name: "onprem-a100", Cores: 1, MemoryBytes: 1, Family: "x"}, t0); !errors.Is(err, ErrExists) {
		t.Errorf("CreateSize with the same name in another case = %v, want ErrExists", err)
	}
	got, err := s.Cluster.Sizes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	z.Source = sizes.SourceWorkspace
	if diff := cmp.Diff([]sizes.Size{z}, got); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if err := s.Cluster.DeleteSize(ctx, "ONPREM-A100"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.DeleteSize(ctx, "onprem-a100"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteSize = %v", err)
	}
}
