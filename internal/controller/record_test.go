package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
)

func hashOf(c byte) string { return strings.Repeat(string(c), 64) }

func file(p string, c byte) snapshot.Entry {
	return snapshot.Entry{Path: p, Type: snapshot.TypeFile, Hash: hashOf(c), Size: 1, Mode: 0o644}
}

func dir(p string) snapshot.Entry {
	return snapshot.Entry{Path: p, Type: snapshot.TypeDir, Mode: 0o755}
}

func tree(es ...snapshot.Entry) *snapshot.Manifest { return &snapshot.Manifest{Entries: es} }

func paths(m *snapshot.Manifest) []string {
	var out []string
	for _, e := range m.Entries {
		out = append(out, e.Path+"="+e.Hash[:min(len(e.Hash), 1)])
	}
	return out
}

func TestMergeTrees(t *testing.T) {
	tests := []struct {
		name          string
		trees         []*snapshot.Manifest
		want          []string
		wantConflicts []string
	}{
		{"one node", []*snapshot.Manifest{tree(dir("outputs"), file("outputs/a", 'a'))},
			[]string{"outputs=", "outputs/a=a"}, nil},
		{"disjoint nodes add up",
			[]*snapshot.Manifest{
				tree(dir("user_logs"), file("user_logs/std_log.txt", 'a'), file("user_logs/std_log_process_0.txt", 'b')),
				tree(dir("user_logs"), file("user_logs/std_log_node_1.txt", 'c'), file("user_logs/std_log_process_2.txt", 'd'))},
			[]string{"user_logs=", "user_logs/std_log.txt=a", "user_logs/std_log_node_1.txt=c",
				"user_logs/std_log_process_0.txt=b", "user_logs/std_log_process_2.txt=d"}, nil},
		{"the same file on two nodes is no conflict",
			[]*snapshot.Manifest{tree(file("model", 'a')), tree(file("model", 'a'))},
			[]string{"model=a"}, nil},
		{"node 0 wins a conflict",
			[]*snapshot.Manifest{tree(file("model", 'a')), tree(file("model", 'b')), tree(file("model", 'c'))},
			[]string{"model=a"}, []string{"model"}},
		{"a file where node 0 has a folder",
			[]*snapshot.Manifest{tree(dir("ckpt"), file("ckpt/1", 'a')), tree(file("ckpt", 'b'))},
			[]string{"ckpt=", "ckpt/1=a"}, []string{"ckpt"}},
		{"a folder where node 0 has a file goes with its content",
			[]*snapshot.Manifest{tree(file("ckpt", 'a')), tree(dir("ckpt"), file("ckpt/1", 'b'), dir("ckpt/x"), file("ckpt/x/2", 'c'))},
			[]string{"ckpt=a"}, []string{"ckpt"}},
		{"a missing node", []*snapshot.Manifest{tree(file("a", 'a')), nil, tree(file("b", 'b'))},
			[]string{"a=a", "b=b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflicts := mergeTrees(tt.trees)
			if diff := cmp.Diff(tt.want, paths(got)); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantConflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			if _, _, err := got.Encode(); err != nil {
				t.Errorf("the merged manifest is not valid: %v", err)
			}
		})
	}
}

func TestPlanAssembly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	part := func(node int, at time.Time) store.RunPart {
		return store.RunPart{Node: node, Artifacts: hashOf('a'), RegisteredAt: at}
	}
	failedOnly := store.RunPart{Node: 1, Failure: "node 1: boom"}
	const wait = 10 * time.Minute
	tests := []struct {
		name  string
		parts []store.RunPart
		nodes int
		now   time.Time
		final bool
		want  assemblyPlan
	}{
		{"single node", []store.RunPart{part(0, t0)}, 1, t0, false, assemblyPlan{true, []int{0}, nil}},
		{"nothing yet", nil, 2, t0, false, assemblyPlan{false, nil, []int{0, 1}}},
		{"nothing at the end", nil, 2, t0, true, assemblyPlan{false, nil, []int{0, 1}}},
		{"node 0 waits", []store.RunPart{part(0, t0)}, 2, t0.Add(wait - time.Second), false, assemblyPlan{false, []int{0}, []int{1}}},
		{"a failure is no part", []store.RunPart{part(0, t0), failedOnly}, 2, t0, false, assemblyPlan{false, []int{0}, []int{1}}},
		{"all in", []store.RunPart{part(0, t0), part(1, t0)}, 2, t0, false, assemblyPlan{true, []int{0, 1}, nil}},
		{"a worker first", []store.RunPart{part(1, t0)}, 2, t0.Add(time.Hour), false, assemblyPlan{false, []int{1}, []int{0}}},
		{"the wait is over", []store.RunPart{part(0, t0)}, 3, t0.Add(wait), false, assemblyPlan{true, []int{0}, []int{1, 2}}},
		{"node 0 ends without waiting", []store.RunPart{part(0, t0), part(2, t0)}, 3, t0, true, assemblyPlan{true, []int{0, 2}, []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planAssembly(tt.parts, tt.nodes, tt.now, wait, tt.final)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(assemblyPlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// putTree stores a manifest and returns its hash.
func (f *fixture) putTree(t testing.TB, m *snapshot.Manifest) string {
	t.Helper()
	b, _, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.c.Blobs.PutBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// tree reads a stored manifest's paths.
func (f *fixture) tree(t testing.TB, hash string) []string {
	t.Helper()
	m, err := f.c.readManifest(hash)
	if err != nil {
		t.Fatal(err)
	}
	return paths(m)
}

// placeOnNodes makes a run a multi-node cluster run, as a Placer's placement does: its nodes
// are the run's data, whatever its handle.
func (f *fixture) placeOnNodes(t testing.TB, id string, nodes ...string) {
	t.Helper()
	if err := f.c.Store.Cluster.SetPlacement(t.Context(), id, 1, job.Placement{Nodes: nodes}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestArtifactsAreWriteOnce(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	a := f.putTree(t, tree(dir("outputs"), file("outputs/model", 'a')))
	empty := f.putTree(t, tree())
	rep := api.ArtifactsReport{Artifacts: a, NamedOutputs: map[string]string{"model": a}}
	for i := range 2 { // a retry registers nothing new
		reply, err := f.c.RegisterArtifacts(ctx, r.ID, rep)
		if err != nil || len(reply.WaitingFor) != 0 {
			t.Fatalf("register #%d = %+v, %v", i+1, reply, err)
		}
	}
	_, err := f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: empty})
	wantKind(t, err, Conflict, "run r registered its artifacts already", a)
	_, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: a})
	wantKind(t, err, Conflict, "cannot be replaced") // the named outputs are part of it
	_, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: a, NamedOutputs: rep.NamedOutputs, Node: 1})
	wantKind(t, err, Invalid, "run r has 1 node(s), got 1")

	f.report(t, r.ID, job.Completed)
	if _, err := f.c.RegisterArtifacts(ctx, r.ID, rep); err != nil {
		t.Errorf("a retry after the end: %v", err)
	}
	_, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: empty})
	wantKind(t, err, Conflict, "cannot be replaced")
	if got := f.run(t, r.ID); got.ArtifactsHash != a || got.NamedOutputs["model"] != a {
		t.Errorf("artifacts %q %v, want %q", got.ArtifactsHash, got.NamedOutputs, a)
	}

	// A run that ended without registering anything stays without.
	r2 := f.create(t, job.Spec{Name: "r2"})
	f.report(t, r2.ID, job.Failed)
	_, err = f.c.RegisterArtifacts(ctx, r2.ID, api.ArtifactsReport{Artifacts: empty})
	wantKind(t, err, Conflict, "run r2 ended (Failed)", "its artifacts can no longer change")
}

func TestLogsNeverRewrittenMetricsFreezeAtTheEnd(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	line := func(seq int64, text string) []job.LogLine { return []job.LogLine{{Seq: seq, Text: text}} }
	if acked, err := f.c.AppendLogs(ctx, r.ID, "std_log.txt", line(1, "first")); err != nil || acked != 1 {
		t.Fatalf("AppendLogs = %d, %v", acked, err)
	}
	if acked, err := f.c.AppendLogs(ctx, r.ID, "std_log.txt", line(1, "rewritten")); err != nil || acked != 1 {
		t.Fatalf("AppendLogs (again) = %d, %v", acked, err)
	}
	for _, bad := range []string{"attempt_1/std_log.txt", "../x", "std_log_node_1.txt", "std_log_node_0.txt", "notes.txt"} {
		_, err := f.c.AppendLogs(ctx, r.ID, bad, line(1, "x"))
		wantKind(t, err, Invalid, "file: ")
	}
	if _, err := f.c.AppendMetrics(ctx, r.ID, []job.Metric{{Seq: 1, Name: "accuracy", Value: 0.5}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.AppendMetrics(ctx, r.ID, []job.Metric{{Seq: metricsPerAttempt + 1, Name: "accuracy", Value: 1}})
	wantKind(t, err, Invalid, "metrics[0].seq", "outside attempt 1's range")

	f.report(t, r.ID, job.Completed)
	_, err = f.c.AppendMetrics(ctx, r.ID, []job.Metric{{Seq: 2, Name: "accuracy", Value: 1}})
	wantKind(t, err, Conflict, "run r ended (Completed) at 2025-03-04T10:00:00Z: its metrics can no longer change")
	// A late supervisor's last lines (its token still works during the grace) are added, and
	// still never replace one.
	if acked, err := f.c.AppendLogs(ctx, r.ID, "std_log.txt", append(line(1, "rewritten"), line(2, "got TERM")...)); err != nil || acked != 2 {
		t.Fatalf("AppendLogs after the end = %d, %v", acked, err)
	}
	lines, err := f.c.Store.Runs.Logs(ctx, r.ID, "std_log.txt", 0, 10)
	if err != nil || len(lines) != 2 || lines[0].Text != "first" || lines[1].Text != "got TERM" {
		t.Errorf("log = %+v, %v; want the first line unchanged, then the late one", lines, err)
	}
	last, err := f.c.Store.Runs.LastMetrics(ctx, r.ID)
	if err != nil || last["accuracy"] != 0.5 {
		t.Errorf("metrics = %v, %v; want accuracy 0.5", last, err)
	}
}

// Two nodes: node 0's report waits for node 1's part; the run's artifacts hold both (node 0
// wins a conflict, and the run says so); a part after the assembly is refused.
func TestMultiNodeArtifacts(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	f.placeOnNodes(t, r.ID, "n0", "n1")
	p0 := f.putTree(t, tree(dir("outputs"), file("outputs/common", 'a'), file("outputs/rank_0", 'b'),
		dir("user_logs"), file("user_logs/std_log.txt", 'c'), file("user_logs/std_log_process_0.txt", 'd')))
	p1 := f.putTree(t, tree(dir("outputs"), file("outputs/common", 'e'), file("outputs/rank_1", 'f'),
		dir("user_logs"), file("user_logs/std_log_node_1.txt", '1'), file("user_logs/std_log_process_1.txt", '2')))
	m0, m1 := f.putTree(t, tree(file("model", 'a'))), f.putTree(t, tree(file("extra", 'b')))

	reply, err := f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p0, NamedOutputs: map[string]string{"m": m0}})
	if err != nil || !cmp.Equal(reply.WaitingFor, []int{1}) {
		t.Fatalf("node 0 first = %+v, %v; want waiting for node 1", reply, err)
	}
	if got := f.run(t, r.ID).ArtifactsHash; got != "" {
		t.Fatalf("artifacts set before node 1's part: %s", got)
	}
	if reply, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p1, NamedOutputs: map[string]string{"m": m1}, Node: 1}); err != nil || len(reply.WaitingFor) != 0 {
		t.Fatalf("node 1 = %+v, %v", reply, err)
	}
	if reply, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p0, NamedOutputs: map[string]string{"m": m0}}); err != nil || len(reply.WaitingFor) != 0 {
		t.Fatalf("node 0 again = %+v, %v; want complete", reply, err)
	}
	got := f.run(t, r.ID)
	want := []string{"outputs=", "outputs/common=a", "outputs/rank_0=b", "outputs/rank_1=f", "user_logs=",
		"user_logs/std_log.txt=c", "user_logs/std_log_node_1.txt=1", "user_logs/std_log_process_0.txt=d", "user_logs/std_log_process_1.txt=2"}
	if diff := cmp.Diff(want, f.tree(t, got.ArtifactsHash)); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"extra=b", "model=a"}, f.tree(t, got.NamedOutputs["m"])); diff != "" {
		t.Errorf("named output m (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "artifacts: nodes wrote different files at the same path (outputs/common); the lowest node's are kept") {
		t.Errorf("warnings %q lack the conflict", got.Warnings)
	}
	_, err = f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p0, Node: 1})
	wantKind(t, err, Conflict, "node 1 of run r registered its artifacts already")
}

// A node that never delivers holds the artifacts back for NodeOutputsWait only; the run says
// which node's files are missing, and the late part is refused.
func TestMultiNodeArtifactsWaitIsBounded(t *testing.T) {
	f := newFixture(t)
	f.c.Settings.NodeOutputsWait = 5 * time.Minute
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	f.placeOnNodes(t, r.ID, "n0", "n1")
	p0, p1 := f.putTree(t, tree(file("a", 'a'))), f.putTree(t, tree(file("b", 'b')))
	rep := api.ArtifactsReport{Artifacts: p0}
	if reply, err := f.c.RegisterArtifacts(ctx, r.ID, rep); err != nil || len(reply.WaitingFor) != 1 {
		t.Fatalf("node 0 = %+v, %v", reply, err)
	}
	f.clock.Advance(5*time.Minute - time.Second)
	if reply, err := f.c.RegisterArtifacts(ctx, r.ID, rep); err != nil || len(reply.WaitingFor) != 1 {
		t.Fatalf("node 0 before the wait is over = %+v, %v", reply, err)
	}
	f.clock.Advance(time.Second)
	if reply, err := f.c.RegisterArtifacts(ctx, r.ID, rep); err != nil || len(reply.WaitingFor) != 0 {
		t.Fatalf("node 0 after the wait = %+v, %v", reply, err)
	}
	got := f.run(t, r.ID)
	if got.ArtifactsHash != p0 {
		t.Errorf("artifacts %s, want node 0's part %s", got.ArtifactsHash, p0)
	}
	wantWarning := "node(s) [1] delivered no logs or outputs before the run's artifacts were assembled (waiting up to 5m0s after node 0's)"
	if !strings.Contains(strings.Join(got.Warnings, "\n"), wantWarning) {
		t.Errorf("warnings %q, want %q", got.Warnings, wantWarning)
	}
	_, err := f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p1, Node: 1})
	wantKind(t, err, Conflict, "the artifacts of run r were assembled without node 1 (it delivered after the wait)")
}

// A worker's failure does not end the run: it stops the other nodes through their heartbeats,
// and node 0's end report becomes the run's failure with the worker's reason, once the
// artifacts are assembled.
func TestWorkerFailureEndsTheRunThroughNode0(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	r := f.create(t, job.Spec{Name: "r"})
	f.placeOnNodes(t, r.ID, "n0", "n1")
	f.report(t, r.ID, job.Running)
	p0, p1 := f.putTree(t, tree(file("user_logs/std_log.txt", 'a'))), f.putTree(t, tree(file("user_logs/std_log_process_3.txt", 'b')))
	if _, err := f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p1, Node: 1}); err != nil {
		t.Fatal(err)
	}
	three := 3
	reply, err := f.c.Report(ctx, r.ID, api.StatusReport{State: job.Failed, Node: 1, ExitCode: &three, Time: f.clock.Now(),
		Reason: "node 1: rank 3 exited with code 3 first; the other ranks were stopped"})
	if err != nil || !reply.Cancel {
		t.Fatalf("worker failure reply = %+v, %v", reply, err)
	}
	if got := f.run(t, r.ID).Status; got != job.Running {
		t.Fatalf("status %s after a worker's failure, want Running until node 0 reports", got)
	}
	hb, err := f.c.Heartbeat(ctx, r.ID)
	if err != nil || !hb.Cancel || !strings.Contains(hb.Reason, "rank 3 exited") {
		t.Fatalf("heartbeat = %+v, %v; want a stop naming the failure", hb, err)
	}
	if _, err := f.c.RegisterArtifacts(ctx, r.ID, api.ArtifactsReport{Artifacts: p0}); err != nil {
		t.Fatal(err)
	}
	f.report(t, r.ID, job.Canceled) // node 0's ranks were stopped
	got := f.run(t, r.ID)
	if got.Status != job.Failed || got.StatusReason != "node 1: rank 3 exited with code 3 first; the other ranks were stopped" ||
		got.ExitCode == nil || *got.ExitCode != 3 {
		t.Errorf("run %s %q exit %v, want Failed with node 1's reason and exit code", got.Status, got.StatusReason, got.ExitCode)
	}
	if diff := cmp.Diff([]string{"user_logs/std_log.txt=a", "user_logs/std_log_process_3.txt=b"}, f.tree(t, got.ArtifactsHash)); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
}

// Node 0's processes ending (it reports Finalizing) stops the other nodes' processes, so that
// they deliver their logs and outputs before the run ends; a single-node run is not concerned.
func TestWorkersStopWhenNode0Finalizes(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	single := f.create(t, job.Spec{Name: "single"})
	multi := f.create(t, job.Spec{Name: "multi"})
	f.placeOnNodes(t, multi.ID, "n0", "n1")
	for _, id := range []string{single.ID, multi.ID} {
		f.report(t, id, job.Running)
		if hb, err := f.c.Heartbeat(ctx, id); err != nil || hb.Cancel {
			t.Fatalf("%s running: heartbeat %+v, %v", id, hb, err)
		}
		f.report(t, id, job.Finalizing)
	}
	if hb, err := f.c.Heartbeat(ctx, single.ID); err != nil || hb.Cancel {
		t.Errorf("single-node run finalizing: heartbeat %+v, %v; want no stop", hb, err)
	}
	hb, err := f.c.Heartbeat(ctx, multi.ID)
	if err != nil || !hb.Cancel || hb.Reason != "node 0's processes ended; the run is finalizing" {
		t.Errorf("multi-node run finalizing: heartbeat %+v, %v; want the other nodes stopped", hb, err)
	}
}
