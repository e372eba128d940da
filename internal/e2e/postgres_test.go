package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/home"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store/pgtest"
)

// A workspace used on SQLite moves to PostgreSQL as a user would do it: stop the server,
// `hangar workspace migrate` with HANGAR_DATABASE_URL, start the server with it. The job run
// before is there with its logs and outputs; a new job runs, survives a kill -9 of the server;
// the server refuses to start on the old SQLite file, and the password never shows.
func TestWorkspaceMigrateToPostgres(t *testing.T) {
	if onPostgres(t) {
		t.Skip("starts on SQLite by design: it moves a SQLite workspace to PostgreSQL")
	}
	dsn := pgtest.NewDatabase(t)
	w := newWS(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"train.py": "import os\nprint('trained on sqlite')\nopen(os.path.join('outputs', 'model.txt'), 'w').write('w=1')\n",
		"job.yml":  "command: python3 train.py\ncode: .\n",
	})
	before := w.create(filepath.Join(dir, "job.yml"))
	if d := w.waitStatus(before, 2*time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("job before the migration: %s (%s)", d.Status, d.StatusReason)
	}
	w.ok("server", "stop")

	w.extraEnv = append(w.extraEnv, home.DatabaseEnv+"="+dsn)
	out := w.ok("workspace", "migrate")
	if !strings.Contains(out.stdout, "Copied ") || !strings.Contains(out.stdout, "now starts on PostgreSQL only") {
		t.Errorf("workspace migrate said:\n%s", out.stdout)
	}
	password := "hangar_test"
	if strings.Contains(out.stdout+out.stderr, ":"+password+"@") {
		t.Errorf("workspace migrate printed the database password:\n%s%s", out.stdout, out.stderr)
	}
	w.startServer()
	if d := w.show(before); d.Status != job.Completed {
		t.Errorf("the job from SQLite on PostgreSQL: %s", d.Status)
	}
	if logs := w.logs(before); !strings.Contains(logs, "trained on sqlite") {
		t.Errorf("its log on PostgreSQL:\n%s", logs)
	}
	dl := t.TempDir()
	w.ok("job", "download", "-n", before, "--all", "--download-path", dl)
	if got := readFile(t, filepath.Join(dl, before, "artifacts", "outputs", "model.txt")); got != "w=1" {
		t.Errorf("its output after the migration: %q", got)
	}

	writeFiles(t, dir, map[string]string{"train.py": "import os, time\nprint('trained on postgres')\n" +
		"print('database url seen by the run:', os.environ.get('HANGAR_DATABASE_URL'), os.environ.get('PGPASSWORD'))\ntime.sleep(2)\n"})
	after := w.create(filepath.Join(dir, "job.yml"))
	w.waitStatus(after, time.Minute, job.Running, job.Completed)
	w.killServer()
	w.startServer()
	if d := w.waitStatus(after, 2*time.Minute, job.Completed, job.Failed); d.Status != job.Completed {
		t.Fatalf("job on PostgreSQL across a kill -9: %s (%s)", d.Status, d.StatusReason)
	}
	if logs := w.logs(after); !strings.Contains(logs, "trained on postgres") || !strings.Contains(logs, "seen by the run: None None") {
		t.Errorf("its log:\n%s", logs)
	}
	list := w.ok("job", "list").stdout
	if !strings.Contains(list, before) || !strings.Contains(list, after) {
		t.Errorf("job list on PostgreSQL lacks a job:\n%s", list)
	}
	w.ok("server", "stop")

	// Without the URL the server does not start a new, empty SQLite workspace over it.
	var env []string
	for _, kv := range w.env() {
		if !strings.HasPrefix(kv, home.DatabaseEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(hangarBin, "server", "--home", w.home)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "keeps its data in PostgreSQL") || !strings.Contains(string(b), home.DatabaseEnv) {
		t.Errorf("server without the URL: %v\n%s", err, b)
	}
	logs := readFile(t, filepath.Join(w.home, "test-server.log"))
	if strings.Contains(logs, ":"+password+"@") {
		t.Error("the server's log holds the database password")
	}
	if !strings.Contains(logs, `database="postgres://`) {
		t.Error("the server's log does not say which database it runs on")
	}
}
