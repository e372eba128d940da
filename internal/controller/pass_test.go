package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A pass looks only at the runs that need something; with a long queue on a full target and
// nothing changing, it looks at none (the work of a pass follows what changed, not the queue).
func TestPass(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 20, 0, 0, 0, time.UTC)
	full := fullReason("one", 1)
	down := targetHealth{Failures: 4, Since: t0.Add(-90 * time.Minute), Until: t0.Add(time.Minute), Err: "connection refused"}
	queued := func(id, target string, age time.Duration, reason string) runView {
		return runView{ID: id, Compute: target, Status: job.Queued, Created: t0.Add(-age), Reason: reason}
	}
	running := func(id, target string, silent time.Duration) runView {
		return runView{ID: id, Compute: target, Status: job.Running, Handled: true, Created: t0.Add(-time.Hour), Heartbeat: t0.Add(-silent)}
	}
	targets := map[string]targetPass{
		"local": {Name: "local"},
		"one":   {Name: "one", Max: 1},
		"two":   {Name: "two", Max: 2},
		"vm":    {Name: "vm", Calls: targetView{health: down}, Unreachable: "host vm unreachable"},
		"probe": {Name: "probe", Calls: targetView{health: targetHealth{Failures: 1, Since: t0.Add(-time.Hour), Until: t0}}, Unreachable: "x"},
		"slurm": {Name: "slurm", Pender: true},
		"pool":  {Name: "pool", Placer: true},
		"kube":  {Name: "kube", Pender: true, Notifies: true},
	}
	many := map[string]runView{"hold": running("hold", "one", time.Second)}
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("q%04d", i)
		many[id] = queued(id, "one", time.Duration(1000-i)*time.Second, full)
	}
	waitingKube := func(id string, silent time.Duration) runView {
		return runView{ID: id, Compute: "kube", Status: job.Queued, Handled: true, Heartbeat: t0.Add(-silent)}
	}
	tests := []struct {
		name   string
		runs   []runView
		busy   []string
		nudged []string
		left   map[string]time.Time
		full   bool
		want   looks
	}{
		{"a long queue on a full target, nothing changing: nothing", nil, nil, nil, nil, false, looks{}},
		{"new runs on a free target: oldest first",
			[]runView{queued("b", "local", time.Second, ""), queued("a", "local", time.Minute, "")}, nil, nil, nil, false,
			looks{Submit: []string{"a", "b"}}},
		{"a call under way: left alone", []runView{queued("a", "local", time.Second, "")}, []string{"a"}, nil, nil, false, looks{}},
		{"max_concurrent_runs: the oldest takes the free slot, the other learns why",
			[]runView{running("r", "two", time.Second), queued("new", "two", time.Second, ""), queued("old", "two", time.Minute, "")}, nil, nil, nil, false,
			looks{Submit: []string{"old"}, Wait: []string{"new"}}},
		{"a submit under way holds its slot",
			[]runView{queued("a", "one", time.Minute, ""), queued("b", "one", time.Second, full)}, []string{"a"}, nil, nil, false, looks{}},
		{"down target: no call, the reason once, and the wait that ran out",
			[]runView{queued("new", "vm", time.Second, ""), queued("shown", "vm", time.Second, "host vm unreachable"),
				queued("old", "vm", 2*time.Hour, "host vm unreachable")}, nil, nil, nil, false,
			looks{Wait: []string{"old", "new"}}},
		{"backoff over: one probe, the oldest",
			[]runView{queued("b", "probe", time.Second, "x"), queued("a", "probe", time.Minute, "x")}, nil, nil, nil, false,
			looks{Submit: []string{"a"}}},
		{"backoff over: a run whose wait ran out is failed, not the probe; the next oldest probes",
			[]runView{queued("b", "probe", time.Second, "x"), queued("a", "probe", time.Minute, "x"), queued("expired", "probe", 2*time.Hour, "x")},
			nil, nil, nil, false,
			looks{Submit: []string{"a"}, Wait: []string{"expired"}}},
		{"silent for StaleAfter: watched; heard recently: not",
			[]runView{running("quiet", "local", time.Minute), running("fresh", "local", time.Second)}, nil, nil, nil, false,
			looks{Watch: []string{"quiet"}}},
		{"in an engine queue: asked every pass",
			[]runView{{ID: "p", Compute: "slurm", Status: job.Queued, Handled: true, Heartbeat: t0}}, nil, nil, nil, false,
			looks{Watch: []string{"p"}}},
		{"cancel: until delivered",
			[]runView{{ID: "c", Compute: "vm", Status: job.CancelRequested, Handled: true, Heartbeat: t0},
				{ID: "sent", Compute: "vm", Status: job.CancelRequested, Handled: true, CancelSent: true, Heartbeat: t0},
				{ID: "sent-silent", Compute: "vm", Status: job.CancelRequested, Handled: true, CancelSent: true}}, nil, nil, nil, false,
			looks{Watch: []string{"sent-silent"}, Cancel: []string{"c"}}},
		{"a Notifier's queue: only the runs it said changed, however long they waited",
			[]runView{waitingKube("told", time.Hour), waitingKube("quiet", time.Hour), waitingKube("new", 0)}, nil,
			[]string{"told", "running-elsewhere"}, nil, false, looks{Watch: []string{"told"}}},
		{"a Notifier's queue on a full pass: every run (the safety net)",
			[]runView{waitingKube("a", time.Hour), waitingKube("b", 0)}, nil, nil, nil, true, looks{Watch: []string{"a", "b"}}},
		{"out of a Notifier's queue: silence counts from when it left",
			[]runView{waitingKube("left-long-ago", time.Hour), waitingKube("just-left", time.Hour)}, nil, nil,
			map[string]time.Time{"left-long-ago": t0.Add(-time.Minute), "just-left": t0.Add(-time.Second)}, false,
			looks{Watch: []string{"left-long-ago"}}},
		{"out of Slurm's queue: no longer asked every pass",
			[]runView{{ID: "p", Compute: "slurm", Status: job.Queued, Handled: true, Heartbeat: t0.Add(-time.Hour)}}, nil, nil,
			map[string]time.Time{"p": t0.Add(-time.Second)}, false, looks{}},
		{"a Notifier's canceled run: asked as soon as told, else once silent",
			[]runView{{ID: "told", Compute: "kube", Status: job.CancelRequested, Handled: true, CancelSent: true, Heartbeat: t0},
				{ID: "quiet", Compute: "kube", Status: job.CancelRequested, Handled: true, CancelSent: true, Heartbeat: t0},
				{ID: "silent", Compute: "kube", Status: job.CancelRequested, Handled: true, CancelSent: true, Heartbeat: t0.Add(-time.Minute)}},
			nil, []string{"told"}, nil, false, looks{Watch: []string{"silent", "told"}}},
		{"a Notifier's running run: silence, not changes",
			[]runView{running("told", "kube", time.Second), running("silent", "kube", time.Minute)}, nil, []string{"told"}, nil, false,
			looks{Watch: []string{"silent"}}},
		{"placed by its backend: not the pass's", []runView{queued("a", "pool", time.Second, "")}, nil, nil, nil, false, looks{}},
		{"target gone: submit fails it", []runView{queued("a", "gone", time.Second, "")}, nil, nil, nil, false, looks{Submit: []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := map[string]runView{}
			if tt.runs == nil {
				runs = many
			}
			for _, r := range tt.runs {
				runs[r.ID] = r
			}
			busy := map[string]bool{}
			for _, id := range tt.busy {
				busy[id] = true
			}
			tp := map[string]targetPass{}
			for k, v := range targets {
				if busy["a"] && k == "one" {
					v.Calls.submits = 1
				}
				tp[k] = v
			}
			nudged := map[string]bool{}
			for _, id := range tt.nudged {
				nudged[id] = true
			}
			got := pass(passInput{Now: t0, StaleAfter: 15 * time.Second, Limit: time.Hour, Runs: runs, Targets: tp, Busy: busy,
				Nudged: nudged, Full: tt.full, Left: tt.left})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pass (-want +got):\n%s", diff)
			}
		})
	}
}
