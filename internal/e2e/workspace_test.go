package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// A backup taken while the server runs and a job is live survives the loss of the database:
// after a restore, job show, job stream and job download give back the same logs, metrics and
// artifacts, and the live job's supervisor (whose run token derives from a key in the backup)
// goes on reporting to the restored server and completes with its whole log.
func TestWorkspaceBackupDestroyRestore(t *testing.T) {
	if onPostgres(t) {
		t.Skip("workspace backup and restore are for SQLite workspaces; a PostgreSQL one is backed up with pg_dump (TestDatabaseChoiceIsKept checks the refusal)")
	}
	w := newWS(t)
	dir := t.TempDir()
	release := filepath.Join(runsSee(t), "release")
	writeFiles(t, dir, map[string]string{
		"src/train.py": "print('hello')\n",
		"done.yml": `command: >-
  echo first line; echo second line;
  for s in 1 2 3; do echo "{\"name\": \"loss\", \"value\": 0.$s, \"step\": $s}" >> "$HANGAR_METRICS_FILE"; done;
  mkdir -p outputs/sub; echo weights > outputs/sub/model.bin; echo third line
code: src
`,
		"live.yml": `command: >-
  i=0; while [ ! -e "$RELEASE" ]; do i=$((i+1)); echo "tick $i";
  echo "{\"name\": \"tick\", \"value\": $i, \"step\": $i}" >> "$HANGAR_METRICS_FILE"; sleep 0.2; done;
  echo "released after $i ticks"; mkdir -p outputs; echo live > outputs/live.txt
code: src
environment_variables: {RELEASE: ` + release + `}
`,
	})
	done := w.create(filepath.Join(dir, "done.yml"))
	w.waitStatus(done, time.Minute, job.Completed)
	live := w.create(filepath.Join(dir, "live.yml"))
	testwait.Within(t, time.Minute, "the live job to tick", func() bool { return logHas(w, live, "tick 3\n") })

	before := snapshotJob(t, w, done)
	backup := filepath.Join(t.TempDir(), "backup")
	var info home.BackupInfo
	if err := json.Unmarshal([]byte(w.ok("workspace", "backup", backup, "-o", "json").stdout), &info); err != nil {
		t.Fatal(err)
	}
	if info.Blobs == 0 || info.Dir != backup || !cmp.Equal(info.Files, []string{"secret.key", "token"}) {
		t.Errorf("backup info %+v", info)
	}
	ticksAtBackup := strings.Count(w.logs(live), "tick ")
	// Lines the live job ships after the backup are not in it: the restored server lacks them.
	testwait.Within(t, time.Minute, "ticks after the backup", func() bool {
		return strings.Count(w.logs(live), "tick ") >= ticksAtBackup+3
	})

	r := w.run("workspace", "restore", backup, "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "already running") || !strings.Contains(r.stderr, "hangar server stop") {
		t.Errorf("restore into a running workspace: exit %d, stderr %q; want 1 and a hint to stop the server", r.code, r.stderr)
	}

	// The database is lost: truncated to nothing while the server is down.
	w.killServer()
	h := home.Home{Dir: w.home}
	if err := os.Truncate(h.DB(), 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{h.DB() + "-wal", h.DB() + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	r = w.run("job", "list")
	if r.code != 1 || !strings.Contains(r.stderr, h.DB()+" is empty") || !strings.Contains(r.stderr, "hangar workspace restore") {
		t.Fatalf("job list over a truncated database: exit %d, stderr %q; want 1, naming %s and the restore", r.code, r.stderr, h.DB())
	}

	r = w.ok("workspace", "restore", backup)
	if !strings.Contains(r.stdout, "Restored "+backup+" into "+w.home) {
		t.Errorf("restore said %q", r.stdout)
	}
	w.startServer()

	if diff := cmp.Diff(before, snapshotJob(t, w, done)); diff != "" {
		t.Errorf("the finished job after the restore (-before +after):\n%s", diff)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := w.waitStatus(live, time.Minute, job.Completed, job.Failed, job.Canceled)
	if d.Status != job.Completed {
		t.Fatalf("the live job ended %s (%s) after the restore, want Completed", d.Status, d.StatusReason)
	}
	stream := w.ok("job", "stream", "-n", live).stdout
	var n int
	if _, err := fmt.Sscanf(stream[strings.LastIndex(stream, "released after "):], "released after %d ticks", &n); err != nil {
		t.Fatalf("no end line in the live job's log:\n%s", stream)
	}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "tick %d\n", i)
	}
	fmt.Fprintf(&want, "released after %d ticks\n", n)
	if stream != want.String() {
		t.Errorf("the live job's log has gaps or repeats after the restore:\n%s", stream)
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", live, "--download-path", out)
	if got := readFile(t, filepath.Join(out, live, "artifacts", "outputs", "live.txt")); got != "live\n" {
		t.Errorf("the live job's output = %q", got)
	}
}

// jobSnapshot is what a user gets back about a finished job.
type jobSnapshot struct {
	Status  job.State
	Metrics map[string]float64
	History []string
	Log     string
	Files   map[string]string // downloaded artifacts and outputs: path → content
}

func snapshotJob(t *testing.T, w *ws, name string) jobSnapshot {
	t.Helper()
	d := w.show(name)
	s := jobSnapshot{Status: d.Status, Metrics: d.Metrics, Log: w.ok("job", "stream", "-n", name).stdout, Files: map[string]string{}}
	ms, err := w.client().Jobs.Metrics(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms.Metrics {
		s.History = append(s.History, fmt.Sprintf("%s=%g@%d", m.Name, m.Value, m.Step))
	}
	out := t.TempDir()
	w.ok("job", "download", "-n", name, "--all", "--download-path", out)
	err = filepath.WalkDir(out, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		s.Files[rel] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) == 0 || len(s.History) != 3 || !strings.Contains(s.Log, "third line") {
		t.Fatalf("the finished job is not whole: %+v", s)
	}
	return s
}

// A server that cannot start (its database garbage, or lost while the workspace has data, or
// its lock held by a process that does not answer) makes the CLI fail at once with the
// server's own error, naming the file.
func TestCLIReportsWhyTheServerCannotStart(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, h home.Home)
		want string
	}{
		{"garbage database", func(t *testing.T, h home.Home) {
			writeFiles(t, h.Dir, map[string]string{"workspace.db": strings.Repeat("definitely not SQLite ", 50)})
		}, " is not a SQLite database"},
		{"truncated database with data beside it", func(t *testing.T, h home.Home) {
			writeFiles(t, h.Dir, map[string]string{"workspace.db": "", "secret.key": "k", "local/runs/r1/handle.json": "{}"})
		}, " is empty (0 bytes)"},
		{"server lock held by a process that does not answer", func(t *testing.T, h home.Home) {
			f, err := os.OpenFile(filepath.Join(h.Dir, "server.lock"), os.O_CREATE|os.O_RDWR, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &ws{t: t, home: t.TempDir()}
			t.Cleanup(w.cleanup)
			h := home.Home{Dir: w.home}
			tt.make(t, h)
			r := w.run("job", "list")
			if r.code != 1 {
				t.Fatalf("job list exit %d, want 1; stderr %q", r.code, r.stderr)
			}
			wants := []string{"the local server stopped at start", h.DB() + tt.want, "hangar workspace restore", h.LogFile()}
			if tt.want == "" {
				wants = []string{"the local server stopped at start", "a server is already running for " + h.Dir, h.LogFile()}
			}
			for _, want := range wants {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr %q does not say %q", r.stderr, want)
				}
			}
			if _, err := h.Running(context.Background()); err == nil {
				t.Error("a server runs over the workspace")
			}
		})
	}
}
