package kubernetes

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A Deployment is deleted once it has been empty (no run, no pod) for the whole wait, counted
// from when it was first seen empty; one that gets a run or a pod again starts over; another
// workspace's, or one already being deleted, is never picked.
func TestIdleDeploymentsWaitTheirTurn(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	dep := func(uid, workspace string, replicas, pods int32, runs string) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Generation: 3,
			Labels:      map[string]string{LabelManagedBy: ManagedBy, LabelWorkspace: workspace},
			Annotations: map[string]string{AnnotationReplicaRuns: runs}}}
		d.Spec.Replicas = &replicas
		d.Status.Replicas, d.Status.ObservedGeneration = pods, 3
		return d
	}
	deleting := dep("deleting", "ws", 0, 0, "{}")
	deleting.DeletionTimestamp = &metav1.Time{Time: start}
	stale := dep("stale", "ws", 0, 0, "{}")
	stale.Status.ObservedGeneration = 2 // its controller has not seen replicas 0 yet
	deps := []appsv1.Deployment{
		dep("a", "ws", 0, 0, "{}"),
		dep("b", "ws", 0, 1, "{}"), // its last pod still stops
		dep("c", "ws", 1, 1, `{"run-1":{"seq":1}}`),
		dep("other", "another", 0, 0, "{}"),
		deleting, stale,
	}
	after := 5 * time.Minute
	steps := []struct {
		at     time.Duration
		change func()
		want   []string
	}{
		{at: 0, want: nil},
		{at: 4 * time.Minute, change: func() { deps[1].Status.Replicas = 0 }, want: nil}, // b empty from now
		{at: 5 * time.Minute, want: []string{"a"}},
		{at: 6 * time.Minute, change: func() { deps[0] = dep("a", "ws", 1, 0, `{"run-2":{"seq":2}}`) }, want: nil}, // a got a run
		{at: 7 * time.Minute, change: func() { deps[0] = dep("a", "ws", 0, 0, "{}") }, want: nil},                  // a empty again: starts over
		{at: 9 * time.Minute, want: []string{"b"}},
		{at: 12 * time.Minute, want: []string{"a", "b"}},
	}
	var since map[types.UID]time.Time
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		var due []appsv1.Deployment
		due, since = idleDeployments(deps, "ws", since, start.Add(s.at), after)
		var got []string
		for _, d := range due {
			got = append(got, string(d.UID))
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("at +%s: deleted %v, want %v", s.at, got, s.want)
		}
	}
	if due, _ := idleDeployments(deps, "", nil, start, 0); len(due) != 0 {
		t.Errorf("a backend without a workspace id picked %d Deployments", len(due))
	}
}
