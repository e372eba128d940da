package serving

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPlanReplicas(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	blue, green := Key{"ep", "blue"}, Key{"ep", "green"}
	rep := func(id string, k Key, gen int, age time.Duration, ready bool) ReplicaView {
		return ReplicaView{RunID: id, Key: k, Generation: gen, Created: t0.Add(-age), Ready: ready}
	}
	tests := []struct {
		name  string
		wants []Want
		reps  []ReplicaView
		want  ReplicaPlan
	}{
		{"a new deployment: its count started", []Want{{Key: blue, Generation: 1, Replicas: 2}}, nil,
			ReplicaPlan{Start: map[Key]int{blue: 2}}},
		{"enough replicas: nothing", []Want{{Key: blue, Generation: 1, Replicas: 1}},
			[]ReplicaView{rep("a", blue, 1, time.Minute, false)}, ReplicaPlan{Start: map[Key]int{}}},
		{"a replica ended: forgotten and replaced",
			[]Want{{Key: blue, Generation: 1, Replicas: 1}},
			[]ReplicaView{{RunID: "dead", Key: blue, Generation: 1, Ended: true}},
			ReplicaPlan{Start: map[Key]int{blue: 1}, Forget: []string{"dead"}}},
		{"failing again and again: the next one waits for its backoff",
			[]Want{{Key: blue, Generation: 1, Replicas: 1, Failures: 4, LastFailure: t0.Add(-3 * time.Second)}}, nil,
			ReplicaPlan{Start: map[Key]int{}, Wake: t0.Add(5 * time.Second)}},
		{"backoff over: started",
			[]Want{{Key: blue, Generation: 1, Replicas: 1, Failures: 4, LastFailure: t0.Add(-9 * time.Second)}}, nil,
			ReplicaPlan{Start: map[Key]int{blue: 1}}},
		{"the backoff stops growing at five minutes",
			[]Want{{Key: blue, Generation: 1, Replicas: 1, Failures: 40, LastFailure: t0.Add(-301 * time.Second)}}, nil,
			ReplicaPlan{Start: map[Key]int{blue: 1}}},
		{"updated: the old generation stays until the new one is ready",
			[]Want{{Key: blue, Generation: 2, Replicas: 1}},
			[]ReplicaView{rep("old", blue, 1, time.Hour, true), rep("new", blue, 2, time.Second, false)},
			ReplicaPlan{Start: map[Key]int{}}},
		{"updated and ready: the old generation stops",
			[]Want{{Key: blue, Generation: 2, Replicas: 1}},
			[]ReplicaView{rep("old", blue, 1, time.Hour, true), rep("new", blue, 2, time.Second, true)},
			ReplicaPlan{Start: map[Key]int{}, Stop: []Stop{{"old", "replaced by generation 2 of deployment ep/blue"}}}},
		{"scaled in: the newest not-ready one first",
			[]Want{{Key: blue, Generation: 1, Replicas: 1}},
			[]ReplicaView{rep("old-ready", blue, 1, time.Hour, true), rep("new-ready", blue, 1, time.Minute, true),
				rep("starting", blue, 1, time.Second*30, false)},
			ReplicaPlan{Start: map[Key]int{}, Stop: []Stop{{"starting", "scaled in to 1 replica(s)"}, {"new-ready", "scaled in to 1 replica(s)"}}}},
		{"scaled to zero: every replica stops",
			[]Want{{Key: blue, Generation: 1, Replicas: 0}},
			[]ReplicaView{rep("a", blue, 1, time.Hour, true)},
			ReplicaPlan{Start: map[Key]int{}, Stop: []Stop{{"a", "scaled in to 0 replica(s)"}}}},
		{"a deployment deleted: its replicas stop, once",
			[]Want{{Key: green, Generation: 1, Replicas: 1}},
			[]ReplicaView{rep("g", green, 1, time.Hour, true), rep("b1", blue, 1, time.Hour, true),
				{RunID: "b2", Key: blue, Generation: 1, Stopping: true}},
			ReplicaPlan{Start: map[Key]int{}, Stop: []Stop{{"b1", "deployment ep/blue was deleted"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanReplicas(tt.wants, tt.reps, t0)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
