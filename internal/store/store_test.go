package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrateIsIdempotent(t *testing.T) {
	path := testDSN(t)
	for i := 0; i < 2; i++ {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		v, err := s.SchemaVersion(t.Context())
		if err != nil || v < 1 {
			t.Fatalf("SchemaVersion = %d, %v", v, err)
		}
		s.Close()
	}
}

func TestRunRoundTrip(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Unix(1700000000, 123).UTC()
	code := 3
	r := &job.Run{ID: "r1", DisplayName: "d", Compute: "local", Status: job.Queued, CreatedAt: now,
		ExitCode: &code, Tags: map[string]string{"a": "b"}, Warnings: []string{"w"},
		Spec: job.Spec{Type: "command", Command: "echo hi"}, NamedOutputs: map[string]string{"m": "h"},
		Timings: map[string]float64{"environment": 1.5}, Attempt: 1}
	ev := job.Event{Time: now, From: job.NotStarted, To: job.Queued, Reason: "created"}
	if err := s.RunWrites.CreateRun(ctx, r, ev); err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("run mismatch (-want +got):\n%s", diff)
	}
	_, err = s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) {
		r.Status = job.Running
		return []job.Event{{Time: now, From: job.Queued, To: job.Running}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Runs.Events(ctx, "r1")
	if err != nil || len(evs) != 2 || evs[1].To != job.Running {
		t.Fatalf("events = %+v, %v", evs, err)
	}
	sentinel := errors.New("no")
	if _, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) { r.Status = job.Failed; return nil, sentinel }); !errors.Is(err, sentinel) {
		t.Fatalf("UpdateRun error = %v", err)
	}
	if got, _ := s.Runs.Run(ctx, "r1"); got.Status != job.Running {
		t.Errorf("failed update was written: %s", got.Status)
	}
	if _, err := s.Runs.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run error = %v", err)
	}
	active, _ := s.Runs.List(ctx, RunFilter{Active: true})
	if len(active) != 1 {
		t.Errorf("active runs = %d", len(active))
	}
}

func TestAppendLogsIsIdempotentAndGapFree(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	lines := func(from, to int64) []job.LogLine {
		var out []job.LogLine
		for i := from; i <= to; i++ {
			out = append(out, job.LogLine{Seq: i, Text: "l"})
		}
		return out
	}
	tests := []struct {
		name  string
		batch []job.LogLine
		want  int64
	}{
		{"first", lines(1, 3), 3},
		{"retry", lines(1, 3), 3},
		{"overlap", lines(2, 5), 5},
		{"gap", lines(7, 8), 5},
		{"fill", lines(6, 8), 8},
	}
	for _, tt := range tests {
		got, err := s.Runs.AppendLogs(ctx, "r", "std_log.txt", tt.batch)
		if err != nil || got != tt.want {
			t.Errorf("%s: acked = %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	all, _ := s.Runs.Logs(ctx, "r", "std_log.txt", 0, 100)
	if len(all) != 8 {
		t.Errorf("stored %d lines, want 8", len(all))
	}
	tail, _ := s.Runs.LogTail(ctx, "r", "std_log.txt", 2)
	if len(tail) != 2 || tail[0].Seq != 7 {
		t.Errorf("tail = %+v", tail)
	}
}

func TestMetricsLastValue(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	ms := []job.Metric{{Seq: 1, Name: "loss", Value: 1}, {Seq: 2, Name: "acc", Value: 0.5}, {Seq: 3, Name: "loss", Value: 0.2}}
	if n, err := s.Runs.AppendMetrics(ctx, "r", ms); err != nil || n != 3 {
		t.Fatalf("AppendMetrics = %d, %v", n, err)
	}
	last, err := s.Runs.LastMetrics(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"loss": 0.2, "acc": 0.5}, last); diff != "" {
		t.Error(diff)
	}
}

func TestComputes(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	for _, c := range compute.Builtin(time.Unix(0, 0)) {
		if err := s.Cluster.EnsureCompute(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := s.Cluster.Computes(ctx)
	if err != nil || len(cs) != 1 || cs[0].Name != "local" {
		t.Fatalf("computes = %+v, %v", cs, err)
	}
	if _, err := s.Cluster.Compute(ctx, "gpu"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing compute error = %v", err)
	}
}

func TestEnvironmentVersions(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	mk := func(name, version string) (*EnvironmentVersion, error) {
		return s.Assets.CreateEnvironment(ctx, EnvironmentVersion{Name: name, Version: version, Spec: job.Environment{Image: "img"}})
	}
	tests := []struct {
		name, version, want string
		wantErr             error
	}{
		{"torch", "", "1", nil},
		{"torch", "", "2", nil},
		{"torch", "7", "7", nil},
		{"torch", "", "8", nil},
		{"torch", "7", "", ErrExists},
		{"torch", "beta", "beta", nil},
		{"sk", "", "1", nil},
	}
	for _, tt := range tests {
		got, err := mk(tt.name, tt.version)
		if !errors.Is(err, tt.wantErr) || (err == nil && got.Version != tt.want) {
			t.Errorf("create %s:%s = %+v, %v; want version %q, err %v", tt.name, tt.version, got, err, tt.want, tt.wantErr)
		}
	}
	latest, err := s.Assets.Environment(ctx, "torch", "latest")
	if err != nil || latest.Version != "beta" || latest.Spec.Name != "torch" || latest.Spec.Version != "beta" {
		t.Errorf("latest = %+v, %v; want the most recently created (beta)", latest, err)
	}
	if _, err := s.Assets.Environment(ctx, "torch", "99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing version error = %v", err)
	}
	all, _ := s.Assets.Environments(ctx, "")
	if len(all) != 6 {
		t.Errorf("listed %d versions, want 6", len(all))
	}
}

// RunLife reads what a token's admission needs, the same values Run reads.
func TestRunLife(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	now := time.Unix(1700000000, 0).UTC()
	r := &job.Run{ID: "r1", Compute: "local", Status: job.Queued, CreatedAt: now, Attempt: 2,
		Spec: job.Spec{Type: "command", Command: "echo hi"}}
	if err := s.RunWrites.CreateRun(ctx, r, job.Event{Time: now, From: job.NotStarted, To: job.Queued}); err != nil {
		t.Fatal(err)
	}
	end := now.Add(time.Minute)
	if _, err := s.RunWrites.UpdateRun(ctx, "r1", func(r *job.Run) ([]job.Event, error) {
		r.Status, r.EndedAt = job.Failed, &end
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Runs.RunLife(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "r1" || got.Status != job.Failed || got.Attempt != 2 || got.EndedAt == nil || !got.EndedAt.Equal(end) {
		t.Errorf("RunLife = %+v (ended %v), want r1 Failed attempt 2 ended %s", got, got.EndedAt, end)
	}
	if _, err := s.Runs.RunLife(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RunLife of a missing run: %v, want ErrNotFound", err)
	}
}
