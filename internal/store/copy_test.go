package store

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

// A SQLite workspace copied into another store (PostgreSQL when the package runs on it) reads
// back the same through the store's own methods: runs with their events, logs, users, audit
// entries, settings; ids handed out after the copy continue after the copied ones; the copy
// refuses a destination that already holds rows.
func TestCopyAllToAnotherStore(t *testing.T) {
	ctx := t.Context()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	now := time.Unix(1700000000, 123).UTC()
	code := 0
	r := &job.Run{ID: "r1", DisplayName: "train", Compute: "local", Status: job.Completed, CreatedAt: now, ExitCode: &code,
		Tags: map[string]string{"team": "vision"}, Spec: job.Spec{Type: "command", Command: "python train.py"}, Attempt: 1,
		NamedOutputs: map[string]string{"model": "h1"}}
	if err := src.RunWrites.CreateRun(ctx, r, job.Event{Time: now, From: job.NotStarted, To: job.Queued, Reason: "created"}); err != nil {
		t.Fatal(err)
	}
	var lines []job.LogLine
	for i := 1; i <= 2*copyBatch+7; i++ { // more than one INSERT's worth
		lines = append(lines, job.LogLine{Seq: int64(i), Time: now.Add(time.Duration(i)), Text: strings.Repeat("x", i%50) + " it's 'quoted' ?"})
	}
	if _, err := src.Runs.AppendLogs(ctx, "r1", "std_log.txt", lines); err != nil {
		t.Fatal(err)
	}
	if err := src.Access.CreateUser(ctx, User{Name: "ada", Role: "contributor", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"compute.create", "secret.set"} {
		if err := src.Access.AddAudit(ctx, AuditEntry{At: now, User: "ada", Action: a, Object: "gpu"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.SetSetting(ctx, "workspace.id", "ws-1"); err != nil {
		t.Fatal(err)
	}

	dst := open(t) // PostgreSQL under HANGAR_TEST_STORE=postgres
	var told []string
	rep, err := CopyAll(ctx, src, dst, func(tc TableCount) { told = append(told, tc.Table) })
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != len(rep.Tables) || len(rep.Tables) < 30 {
		t.Errorf("progress told %d tables, report has %d", len(told), len(rep.Tables))
	}
	for _, pair := range [][2]string{{"runs", "run_events"}, {"runs", "run_params"}, {"users", "user_tokens"}, {"experiments", "runs"}} {
		if i, j := indexOf(told, pair[0]), indexOf(told, pair[1]); i < 0 || j >= 0 && j < i {
			t.Errorf("table %s copied at %d, %s at %d: parents first", pair[0], i, pair[1], j)
		}
	}

	got, err := dst.Runs.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := src.Runs.Run(ctx, "r1")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run after the copy (-want +got):\n%s", diff)
	}
	if evs, err := dst.Runs.Events(ctx, "r1"); err != nil || len(evs) != 1 || evs[0].Reason != "created" {
		t.Errorf("events after the copy: %+v, %v", evs, err)
	}
	gotLines, err := dst.Runs.Logs(ctx, "r1", "std_log.txt", 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(lines, gotLines); diff != "" {
		t.Errorf("log lines after the copy (-want +got):\n%s", diff)
	}
	if v, ok, err := dst.Setting(ctx, "workspace.id"); err != nil || !ok || v != "ws-1" {
		t.Errorf("setting after the copy: %q %v %v", v, ok, err)
	}
	if us, err := dst.Access.Users(ctx); err != nil || len(us) != 2 || !slices.ContainsFunc(us, func(u User) bool { return u.Name == "ada" && u.Role == "contributor" }) {
		t.Errorf("users after the copy: %+v, %v", us, err)
	}
	// The next audit entry gets an id after the copied ones (an identity continued).
	if err := dst.Access.AddAudit(ctx, AuditEntry{At: now.Add(time.Second), User: "ada", Action: "compute.delete", Object: "gpu"}); err != nil {
		t.Fatalf("an audit entry after the copy: %v", err)
	}
	es, err := dst.Access.Audit(ctx, AuditFilter{})
	if err != nil || len(es) != 3 || es[2].ID <= es[1].ID || es[2].Action != "compute.delete" {
		t.Errorf("audit after the copy: %+v, %v", es, err)
	}

	if _, err := CopyAll(ctx, src, dst, nil); err == nil {
		t.Error("a second copy into a destination with rows was not refused")
	}
	if _, err := CopyAll(ctx, dst, src, nil); onPostgres(t) && (err == nil || !strings.Contains(err.Error(), "must be a SQLite")) {
		t.Errorf("a copy from PostgreSQL: %v", err)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestTopoOrder(t *testing.T) {
	got, err := topoOrder([]string{"a_child", "b", "parent"}, map[string][]string{"a_child": {"parent", "b"}, "b": {"b"}})
	if err != nil || !cmp.Equal(got, []string{"b", "parent", "a_child"}) {
		t.Errorf("topoOrder = %v, %v", got, err)
	}
	if _, err := topoOrder([]string{"x", "y"}, map[string][]string{"x": {"y"}, "y": {"x"}}); err == nil {
		t.Error("a cycle was not refused")
	}
}
